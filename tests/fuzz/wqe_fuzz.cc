// libFuzzer target vrnic_fuzz_wqe: what a guest writes into SQ and RQ
// rings. Send WQEs of every opcode (and invalid ones), with SGE lists or
// inline data, keys and addresses aimed at the scene's MRs (inside, at the
// edges, past the end, the wrong PD, stale keys) or raw; receive WQEs
// likewise, into RQs and the SRQs (with their limit re-armed and their
// producer index sometimes past the ring); between connected pairs of QPs
// (one pair on the SRQ) and on loopback QPs (RC), a UC pair, UD QPs (the
// AH, remote QPN and qkey of each datagram aimed at the scene's or raw) and
// an XRC initiator (the XRC SRQ each message names: the scene's, the
// ordinary SRQ, or raw), with
// CQ consumption and arming, RNR timer steps and QP state changes in
// between.
#include "fuzz_scene.h"

#include <algorithm>

using namespace vrnic;
using namespace vrnic::fuzz;

namespace {

// An address range and key aimed at one of the scene's MRs.
struct Aim {
    uint64_t addr;
    uint32_t len;
    uint32_t key;
};

Aim aim(Input& in, const Scene& s) {
    const uint8_t m = in.u8();
    Aim a{};
    if (m >= 0xf8) { // raw
        a.addr = in.u64();
        a.len = in.u32();
        a.key = in.u32();
        return a;
    }
    const MrInfo& r = s.mrs[(m & 7) % s.mrs.size()]; // bits 3-7: how to aim
    uint64_t off = 0;
    switch ((m >> 3) & 3) {
    case 0:
        off = in.u16() % r.len;
        break;
    case 1: // near the start
        off = in.u8();
        break;
    case 2: // near the end, possibly across it
        off = r.len - in.u8();
        break;
    default: // anywhere, before the MR included
        off = uint64_t(int64_t(int32_t(in.u32())));
        break;
    }
    a.addr = r.iova + off;
    switch ((m >> 5) & 3) {
    case 0:
        a.len = in.u8();
        break;
    case 1:
        a.len = in.u16() % 8192;
        break;
    case 2:
        a.len = 8; // atomics
        break;
    default:
        a.len = in.u32();
        break;
    }
    a.key = r.lkey;
    if (m & 0x80) // a stale generation or another slot
        a.key ^= 1u << in.below(16);
    return a;
}

vrnic_sge sge(Input& in, const Scene& s) {
    Aim a = aim(in, s);
    return {a.addr, a.len, a.key};
}

// A datagram's address: mostly SENDs through the scene's AHs to its QPs
// with the right qkey, else another AH, QP 0/1, a raw QPN, a wrong qkey or
// the QP's own.
void ud_fields(Input& in, const Scene& s, vrnic_send_wqe_hdr* h) {
    const uint8_t m = in.u8();
    if (m & 1)
        h->opcode = uint8_t(VRNIC_WR_SEND + (m >> 1 & 1));
    h->ud.ah = m >= 0xf0 ? in.u32() : s.ahs[in.below(Scene::kAhs)];
    const uint32_t q = in.below(Scene::kQps + 3);
    h->ud.remote_qpn = q < Scene::kQps ? s.qps[q].qpn : q == Scene::kQps ? in.u32() : q & 1;
    switch (m >> 2 & 3) {
    case 0:
    case 1:
        h->ud.remote_qkey = Scene::kQkey;
        break;
    case 2:
        h->ud.remote_qkey = VRNIC_QKEY_USE_QP | in.u8();
        break;
    default:
        h->ud.remote_qkey = in.u32();
        break;
    }
}

void post_send(World& w, Scene& s, Input& in) {
    const unsigned qi = in.below(Scene::kAllQps);
    QpRef& q = s.qp(qi);
    const unsigned n = 1 + in.below(4);
    const uint32_t stride = 1u << q.sq_shift;
    for (unsigned k = 0; k < n; k++) {
        alignas(8) uint8_t buf[1u << VRNIC_SQ_WQE_SHIFT_MAX] = {};
        const uint8_t mode = in.u8();
        if (mode < 8) {
            in.take(buf, stride); // a WQE of raw bytes
        } else {
            auto* h = reinterpret_cast<vrnic_send_wqe_hdr*>(buf);
            h->wr_id = q.sq_pi;
            h->opcode = uint8_t(in.below(8)); // 7: invalid
            const uint8_t f = in.u8();
            h->flags = f >= 0xf0 ? f : (f & VRNIC_WQE_F_ALL);
            h->imm_data = in.u32();
            if (h->opcode == VRNIC_WR_ATOMIC_CMP_AND_SWP ||
                h->opcode == VRNIC_WR_ATOMIC_FETCH_AND_ADD) {
                Aim r = aim(in, s);
                h->atomic.remote_addr = (mode & 1) ? r.addr : r.addr & ~7ull;
                h->atomic.rkey = r.key;
                h->atomic.compare_add = in.u8();
                h->atomic.swap = in.u64();
            } else if (q.path.qp_type == VRNIC_QPT_UD && !(mode & 4)) {
                ud_fields(in, s, h);
            } else {
                Aim r = aim(in, s);
                h->rdma.remote_addr = r.addr;
                h->rdma.rkey = r.key;
            }
            if (q.path.qp_type == VRNIC_QPT_XRC_INI) { // atomic.xrc_srqn is the same word
                const uint8_t x = in.u8();
                h->rdma.xrc_srqn = x < 0xc0 ? s.xsrq.srqn : x < 0xf0 ? s.srq.srqn : in.u32();
            }
            uint8_t* body = buf + VRNIC_SEND_WQE_HDR_SIZE;
            if (h->flags & VRNIC_WQE_F_INLINE) {
                auto* ih = reinterpret_cast<vrnic_inline_hdr*>(body);
                ih->length = in.below(q.max_inline + 9);
                if (mode & 2)
                    h->num_sge = 1; // inline with SGEs: refused
                const uint32_t room = stride - VRNIC_SEND_WQE_HDR_SIZE - VRNIC_INLINE_HDR_SIZE;
                in.take(body + VRNIC_INLINE_HDR_SIZE, std::min({ih->length, room, 64u}));
            } else {
                h->num_sge = uint8_t(in.below(q.max_send_sge + 2));
                const unsigned fit = (stride - VRNIC_SEND_WQE_HDR_SIZE) / VRNIC_SGE_SIZE;
                auto* g = reinterpret_cast<vrnic_sge*>(body);
                for (unsigned i = 0; i < h->num_sge && i < fit; i++)
                    g[i] = sge(in, s);
            }
        }
        w.put(ring_slot(q.sq, q.sq_log, stride, q.sq_pi), buf, stride);
        s.note_wqe(qi, buf, stride);
        q.sq_pi++;
    }
    store_release(&s.qp_db(q)->sq_pi, q.sq_pi);
}

// A receive WQE of up to max_sge + 1 SGEs aimed by the input.
void recv_wqe(Input& in, const Scene& s, uint8_t* buf, uint32_t stride, uint64_t wr_id,
              uint32_t max_sge) {
    auto* h = reinterpret_cast<vrnic_recv_wqe_hdr*>(buf);
    h->wr_id = wr_id;
    h->num_sge = uint8_t(in.below(max_sge + 2));
    const unsigned fit = (stride - VRNIC_RECV_WQE_HDR_SIZE) / VRNIC_SGE_SIZE;
    auto* g = reinterpret_cast<vrnic_sge*>(buf + VRNIC_RECV_WQE_HDR_SIZE);
    for (unsigned i = 0; i < h->num_sge && i < fit; i++)
        g[i] = sge(in, s);
}

// Receives into SRQ q, as a provider posts them (only into free slots by
// the ci the device publishes), sometimes re-arming the limit, and now and
// then a producer index past the ring.
void post_srq(World& w, Scene& s, SrqInfo& q, Input& in) {
    vrnic_db_srq* db = s.srq_db(q);
    const uint8_t m = in.u8();
    if (m >= 0xfc) {
        q.pi = load_acquire(&db->ci) + (1u << q.log_depth) + 1 + in.u8();
        store_release(&db->pi, q.pi);
        return;
    }
    if (m & 0x80)
        w.modify_srq(q.srqn, VRNIC_SRQ_ATTR_LIMIT, m % (1u << q.log_depth));
    const uint32_t ci = load_acquire(&db->ci);
    if (ring_used(q.pi, ci) > (1u << q.log_depth))
        q.pi = ci; // after an invalid index: start again from the device's
    const uint32_t stride = 1u << q.wqe_shift;
    const unsigned n = 1 + in.below(4);
    for (unsigned k = 0; k < n && ring_used(q.pi, ci) < (1u << q.log_depth); k++) {
        alignas(8) uint8_t buf[1u << VRNIC_RQ_WQE_SHIFT_MAX] = {};
        recv_wqe(in, s, buf, stride, q.pi, q.max_sge);
        w.put(ring_slot(q.ring, q.log_depth, stride, q.pi), buf, stride);
        q.pi++;
    }
    store_release(&db->pi, q.pi);
}

void post_recv(World& w, Scene& s, Input& in) {
    const unsigned qi = in.below(Scene::kQps + 2);
    if (qi >= Scene::kQps) {
        post_srq(w, s, qi == Scene::kQps ? s.srq : s.xsrq, in);
        return;
    }
    QpRef& q = s.qps[qi];
    const unsigned n = 1 + in.below(4);
    const uint32_t stride = 1u << q.rq_shift;
    for (unsigned k = 0; k < n; k++) {
        alignas(8) uint8_t buf[1u << VRNIC_RQ_WQE_SHIFT_MAX] = {};
        recv_wqe(in, s, buf, stride, q.rq_pi, q.max_recv_sge);
        w.put(ring_slot(q.rq, q.rq_log, stride, q.rq_pi), buf, stride);
        s.note_wqe(qi, buf, stride);
        q.rq_pi++;
    }
    store_release(&s.qp_db(q)->rq_pi, q.rq_pi);
}

// Consumes or arms a CQ as a provider would: ci never passes the device's pi.
void poll_cq(World& w, Scene& s, Input& in) {
    const CqInfo& c = s.cqs[in.below(Scene::kCqs)];
    const Cq* cq = w.objects().cqs.find(c.cqn);
    vrnic_db_cq* db = s.cq_db(c);
    const uint8_t m = in.u8();
    switch (m & 3) {
    case 0:
        store_release(&db->ci, cq->pi);
        break;
    case 1: {
        const uint32_t ci = load_relaxed(&db->ci);
        store_release(&db->ci, ci + std::min<uint32_t>(m >> 2, cq->pi - ci));
        break;
    }
    default:
        s.arm_cq(c, m & 1);
        break;
    }
}

// The model never writes a CQE the guest has not made room for.
void check_cqs(World& w, const Scene& s) {
    for (const CqInfo& c : s.cqs) {
        const Cq* cq = w.objects().cqs.find(c.cqn);
        const uint32_t ci = load_relaxed(&s.cq_db(c)->ci);
        if (ring_used(cq->pi, ci) > (1u << cq->log_depth))
            abort();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static World w;
    static Scene s;
    w.bring_up();
    s.build(w);
    Input in(data, size);
    while (!in.empty()) {
        switch (in.below(8)) {
        case 0:
        case 1:
            post_send(w, s, in);
            break;
        case 2:
            post_recv(w, s, in);
            break;
        case 3:
            poll_cq(w, s, in);
            break;
        case 4:
            w.step_clock(in);
            break;
        case 5:
            s.change_state(in);
            break;
        case 6: // async events consumed
            store_release(&w.regs()->aeq_ci, load_acquire(&w.regs()->aeq_pi));
            break;
        default: { // data changes under the device (atomic targets, payloads)
            uint64_t v = in.u64();
            w.put(kData + in.below(kDataSize / 8) * 8, &v, 8);
            break;
        }
        }
        w.poll();
        check_cqs(w, s);
    }
    w.settle();
    check_cqs(w, s);
    if (!s.phys_named && !s.untouched(w))
        abort(); // the model wrote outside every MR and ring
    return 0;
}
