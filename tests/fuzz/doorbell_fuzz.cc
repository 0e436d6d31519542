// libFuzzer target vrnic_fuzz_doorbell: the doorbell pages. Every SQ, RQ
// and SRQ slot of the scene's QPs holds a valid WQE (the XRC initiator's
// naming the XRC SRQ), so a producer index is all the input moves: SQ/RQ/SRQ producer indices
// (next, a ring ahead, a ring and more, behind, stale after a QP was recreated, raw), CQ consumer
// indices and arm words, completion-EQ and async-EQ consumer indices, and words in any slot of any
// doorbell page, including other contexts' objects, free slots, the status slot and pages no
// context owns.
#include "fuzz_scene.h"

using namespace vrnic;
using namespace vrnic::fuzz;

namespace {

// The MR each QP's prefilled WQEs use (Scene::mrs): its own PD's.
constexpr unsigned kHomeMr[Scene::kAllQps] = {0, 0, 0, 5, 6, 0, 0, 0, 5, 0, 0, 0};
// The MR of the XRC SRQ's PD, which the initiator's messages aim at.
constexpr unsigned kXrcSrqMr = 6;
// The AH a UD QP's prefilled datagrams go through (Scene::ahs): its PD's.
constexpr unsigned kHomeAh[Scene::kAllQps] = {0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0};

// A one-SGE receive into `mr`.
struct OneSgeRecv {
    vrnic_recv_wqe_hdr h;
    vrnic_sge g;
};
OneSgeRecv one_sge_recv(uint64_t wr_id, const MrInfo& mr) {
    OneSgeRecv r{};
    r.h.wr_id = wr_id;
    r.h.num_sge = 1;
    r.g = {mr.iova + 4096, 2048, mr.lkey};
    return r;
}

// Fills every SQ slot with a valid WQE (the opcode cycles through all
// seven; on a UD QP datagrams to both UD QPs, every eighth a WRITE) and
// every RQ and SRQ slot with a one-SGE receive.
void prefill(World& w, const Scene& s) {
    for (const SrqInfo* q : {&s.srq, &s.xsrq}) {
        const MrInfo& mr = s.mrs[q == &s.srq ? 0 : kXrcSrqMr]; // of the SRQ's PD
        for (uint32_t k = 0; k < (1u << q->log_depth); k++) {
            const OneSgeRecv r = one_sge_recv(2000 + k, mr);
            w.put(q->ring + (uint64_t(k) << q->wqe_shift), &r, sizeof(r));
        }
    }
    for (unsigned i = 0; i < Scene::kAllQps; i++) {
        const QpRef& q = s.qp(i);
        const MrInfo& mr = s.mrs[kHomeMr[i]];
        const uint32_t sq_depth = 1u << q.sq_log, rq_depth = 1u << q.rq_log;
        for (uint32_t k = 0; k < sq_depth; k++) {
            alignas(8) uint8_t buf[1u << VRNIC_SQ_WQE_SHIFT_MAX] = {};
            auto* h = reinterpret_cast<vrnic_send_wqe_hdr*>(buf);
            auto* g = reinterpret_cast<vrnic_sge*>(buf + VRNIC_SEND_WQE_HDR_SIZE);
            h->wr_id = k;
            h->opcode = uint8_t(k % 7);
            h->flags = VRNIC_WQE_F_SIGNALED | (k % 5 == 0 ? VRNIC_WQE_F_SOLICITED : 0);
            h->num_sge = 1;
            *g = {mr.iova + 64 * k, 64, mr.lkey};
            if (h->opcode >= VRNIC_WR_ATOMIC_CMP_AND_SWP) {
                g->length = 8;
                h->atomic.remote_addr = mr.iova + 2048 + 8 * k;
                h->atomic.rkey = mr.lkey;
                h->atomic.compare_add = 1;
            } else {
                h->rdma.remote_addr = mr.iova + 4096 + 64 * k;
                h->rdma.rkey = mr.lkey;
            }
            if (q.path.qp_type == VRNIC_QPT_UD) {
                h->opcode = k % 8 == 7 ? VRNIC_WR_RDMA_WRITE : uint8_t(VRNIC_WR_SEND + k % 2);
                h->ud = {s.ahs[kHomeAh[i]], s.qps[7 + k % 2].qpn, Scene::kQkey, 0};
            }
            if (q.path.qp_type == VRNIC_QPT_XRC_INI) {
                // The responder's MR: one of the XRC SRQ's PD.
                const MrInfo& far = s.mrs[kXrcSrqMr];
                h->rdma.rkey = far.lkey; // atomic.rkey and .xrc_srqn are the same words
                h->rdma.remote_addr += far.iova - mr.iova;
                h->rdma.xrc_srqn = s.xsrq.srqn;
            }
            w.put(q.sq + (uint64_t(k) << q.sq_shift), buf, 1u << q.sq_shift);
        }
        for (uint32_t k = 0; q.rq && k < rq_depth; k++) {
            const OneSgeRecv r = one_sge_recv(1000 + k, mr);
            w.put(q.rq + (uint64_t(k) << q.rq_shift), &r, sizeof(r));
        }
    }
}

// A new index relative to the device's own: next ones, a whole ring ahead
// and more (out of range), behind, or raw.
uint32_t index_near(Input& in, uint32_t base, uint32_t depth) {
    const uint8_t m = in.u8();
    switch (m & 3) {
    case 0:
        return base + in.below(depth + 3);
    case 1:
        return base - 1 - (m >> 2);
    case 2:
        return base + (m >> 2);
    default:
        return in.u32();
    }
}

void qp_index(World& w, Scene& s, Input& in, bool sq) {
    if (!sq && in.below(Scene::kQps + 1) == Scene::kQps) { // the SRQ's
        const Srq* srq = w.objects().srqs.find(s.srq.srqn);
        store_release(&s.srq_db(s.srq)->pi, index_near(in, srq->wq.ci, 1u << s.srq.log_depth));
        return;
    }
    const QpRef& q = sq ? s.qp(in.below(Scene::kAllQps)) : s.qps[in.below(Scene::kQps)];
    const Qp* qp = w.objects().qps.find(q.qpn);
    if (!qp)
        return;
    vrnic_db_qp* db = s.qp_db(q);
    if (sq)
        store_release(&db->sq_pi, index_near(in, qp->sq.ci, 1u << q.sq_log));
    else
        store_release(&db->rq_pi, index_near(in, qp->rq.ci, 1u << q.rq_log));
}

void cq_word(World& w, Scene& s, Input& in) {
    const CqInfo& c = s.cqs[in.below(Scene::kCqs)];
    const Cq* cq = w.objects().cqs.find(c.cqn);
    const uint8_t m = in.u8();
    if (m & 1)
        store_release(&s.cq_db(c)->ci, index_near(in, cq->pi, 1u << c.log_depth));
    else if (m & 2)
        s.arm_cq(c, m & 4);
    else
        store_release(&s.cq_db(c)->arm, in.u32());
}

void eq_index(World& w, Scene& s, Input& in) {
    if (in.u8() & 1) {
        const Eq* eq = w.objects().eqs.find(s.eqn);
        store_release(&w.slot(VRNIC_KERNEL_DB_PAGE, s.eq_slot)->eq.ci,
                      index_near(in, eq->pi, 1u << eq->log_depth));
    } else {
        store_release(&w.regs()->aeq_ci,
                      index_near(in, load_acquire(&w.regs()->aeq_pi), 1u << kAeqLog));
    }
}

// Any word of any doorbell page: another context's objects, free slots,
// the device-written status slot, unowned pages.
void any_slot(World& w, Scene& s, Input& in) {
    const uint32_t page = 1 + in.below(w.bar2_pages() - 1);
    const uint32_t slot = in.below(VRNIC_DB_SLOTS_PER_PAGE);
    const uint8_t m = in.u8();
    auto* words = reinterpret_cast<uint32_t*>(w.slot(page, slot));
    // A value that means something to some object, or raw.
    const QpRef& q = s.qps[m % Scene::kQps];
    const Qp* qp = w.objects().qps.find(q.qpn);
    const uint32_t v = (m & 0x80) || !qp ? in.u32() : index_near(in, qp->sq.ci, 1u << q.sq_log);
    store_release(&words[(m >> 3) & 1], v);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static World w;
    static Scene s;
    w.bring_up();
    s.build(w);
    prefill(w, s);
    Input in(data, size);
    while (!in.empty()) {
        switch (in.below(10)) {
        case 0:
        case 1:
            qp_index(w, s, in, true);
            break;
        case 2:
            qp_index(w, s, in, false);
            break;
        case 3:
            cq_word(w, s, in);
            break;
        case 4:
            eq_index(w, s, in);
            break;
        case 5:
            any_slot(w, s, in);
            break;
        case 6:
            w.step_clock(in);
            break;
        case 7: // the model going to sleep or waking up
            w.dev().set_need_wakeup(in.u8() & 1);
            break;
        case 8:
            s.change_state(in);
            break;
        default: // the old QPN's doorbell values are stale for the new QP
            s.recreate_qp(in.below(Scene::kQps));
            break;
        }
        w.poll();
    }
    w.settle();
    if (!s.untouched(w)) // the prefilled WQEs name no physical MR
        abort();
    return 0;
}
