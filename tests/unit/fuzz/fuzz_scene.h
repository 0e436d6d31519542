// The objects the data-path targets (vrnic_fuzz_wqe, vrnic_fuzz_doorbell)
// start from: two user contexts and the kernel's, MRs with every access mix
// and page layout (scattered 4 KiB pages, a 2 MiB page, a two-level page
// list, a physical MR), and five RC QPs: a connected pair with different WQE
// strides and limits, and three loopback QPs, one per context.
#pragma once

#include "fuzz_world.h"

#include <vector>

namespace vrnic::fuzz {

struct MrRef {
    uint32_t key;
    uint64_t iova, len; // the range inputs aim at
};

struct CqRef {
    uint32_t cqn, page, slot, log;
};

struct QpRef {
    uint32_t qpn, page, slot, cq;
    uint64_t sq, rq;
    uint32_t sq_log, sq_shift, rq_log, rq_shift;
    uint32_t max_sge, max_rsge, max_inline;
    Path path;
    uint32_t sq_pi = 0, rq_pi = 0; // the producer indices last published
};

class Scene {
  public:
    static constexpr unsigned kQps = 5, kCqs = 4;

    // Builds everything on a freshly reset World; aborts if the model refuses
    // a valid command (that would make every input meaningless).
    void build(World& w) {
        w_ = &w;
        n_pbl_ = 0;
        phys_named = false;
        mrs.clear();
        vrnic_cmd_set_gid g = gid_entry(0);
        must(VRNIC_CMD_SET_GID, &g, sizeof(g));
        vrnic_cmd_create_eq e{ring(3), 6, VRNIC_IRQ_COMP_BASE};
        const vrnic_cmd& er = must(VRNIC_CMD_CREATE_EQ, &e, sizeof(e));
        eqn = er.create_eq_resp.eqn;
        eq_slot = er.create_eq_resp.db_slot;
        vrnic_cmd_alloc_uctx_resp a = must(VRNIC_CMD_ALLOC_UCTX, nullptr, 0).alloc_uctx_resp;
        const uint32_t u1 = a.uctx;
        page[1] = a.db_page;
        a = must(VRNIC_CMD_ALLOC_UCTX, nullptr, 0).alloc_uctx_resp;
        const uint32_t u2 = a.uctx;
        page[2] = a.db_page;
        page[0] = VRNIC_KERNEL_DB_PAGE;
        const uint32_t pdk = pd(0), pda = pd(u1), pdb = pd(u1), pdc = pd(u2);

        std::vector<uint64_t> scattered;
        for (uint64_t i : {0, 1, 2, 3, 8, 9, 5, 4, 15, 14, 13, 12, 6, 7, 10, 11})
            scattered.push_back(kData + i * 4096);
        reg(pda, VRNIC_ACCESS_ALL, 0x10000800, 60 << 10, 12, scattered);
        reg(pda, VRNIC_ACCESS_REMOTE_READ, kData + 0x10000, 16 << 10, 12,
            contiguous(kData + 0x10000, 4, 12));
        // One 2 MiB page (all of guest RAM); the MR is its upper half.
        reg(pda, VRNIC_ACCESS_LOCAL_WRITE | VRNIC_ACCESS_REMOTE_WRITE, 0x40100000, 1 << 20, 21,
            {0});
        reg(pdb, VRNIC_ACCESS_ALL, kData + 0x20000, 8 << 10, 12,
            contiguous(kData + 0x20000, 2, 12));
        vrnic_cmd_reg_mr phys{};
        phys.pd = pdk;
        phys.access = VRNIC_ACCESS_LOCAL_WRITE;
        phys.flags = VRNIC_MR_F_PHYS;
        mrs.push_back(
            {must(VRNIC_CMD_REG_MR, &phys, sizeof(phys)).reg_mr_resp.lkey, kData, kDataSize});
        reg(pdk, VRNIC_ACCESS_ALL, kData + 0x30000, 8 << 10, 12,
            contiguous(kData + 0x30000, 2, 12));
        reg(pdc, VRNIC_ACCESS_ALL, kData + 0x40000, 8 << 10, 12, contiguous(kData + 0x40000, 2, 12),
            VRNIC_PBL_INDIRECT);

        const uint32_t uctx_of[kCqs] = {u1, u1, 0, u2};
        const uint32_t page_of[kCqs] = {page[1], page[1], page[0], page[2]};
        for (uint32_t i = 0; i < kCqs; i++) {
            vrnic_cmd_create_cq c{uctx_of[i], eqn, ring(i == 3 ? 4 : i), 6, 0};
            const vrnic_cmd& r = must(VRNIC_CMD_CREATE_CQ, &c, sizeof(c));
            cqs[i] = {r.create_cq_resp.cqn, page_of[i], r.create_cq_resp.db_slot, 6};
        }

        specs_[0] = {u1, pda, 0, 1, 1, 0x10, 6, 9, 6, 8, 16, 15, 256};
        specs_[1] = {u1, pda, 1, 1, 1, 0x1c, 5, 6, 5, 5, 1, 1, 8};
        specs_[2] = {u1, pda, 1, 1, 1, 0x1e, 4, 7, 4, 6, 5, 3, 64};
        specs_[3] = {0, pdk, 2, 2, 0, 0x20, 4, 7, 4, 6, 5, 3, 64};
        specs_[4] = {u2, pdc, 3, 3, 2, 0x22, 4, 7, 4, 6, 5, 3, 64};
        for (uint32_t i = 0; i < kQps; i++)
            create_qp(i);
        // q0 <-> q1; q1 takes no READ/atomic and only REMOTE_WRITE, and gives
        // up after two RNR retries; q2..q4 talk to themselves.
        qps[0].path.dest_qpn = qps[1].qpn;
        qps[1].path.dest_qpn = qps[0].qpn;
        qps[1].path.access = VRNIC_ACCESS_REMOTE_WRITE;
        qps[1].path.max_dest_rd_atomic = 0;
        qps[1].path.rnr_retry = 2;
        qps[1].path.min_rnr_timer = 3;
        for (uint32_t i = 2; i < kQps; i++)
            qps[i].path.dest_qpn = qps[i].qpn;
        qps[2].path.rnr_retry = 1;
        for (QpRef& q : qps)
            connect_qp(w, q.qpn, q.path);
    }

    // Destroys QP i and creates it again: a new QPN in the same doorbell
    // slot, its peer now pointing at a QPN that is gone.
    void recreate_qp(uint32_t i) {
        vrnic_cmd_handle h{qps[i].qpn, 0};
        w_->cmd(VRNIC_CMD_DESTROY_QP, &h, sizeof(h));
        const Path p = qps[i].path;
        create_qp(i);
        qps[i].path = p;
        connect_qp(*w_, qps[i].qpn, p);
    }

    // Moves a QP between the states the data path behaves differently in:
    // ERR, SQD (with SQ_DRAINED), back to RTS, RESET and connected again,
    // or left in RTR (a responder only).
    void change_state(Input& in) {
        QpRef& q = qps[in.below(kQps)];
        const Qp* qp = w_->objects().qps.find(q.qpn);
        vrnic_cmd_modify_qp m{};
        const uint32_t op = in.below(5);
        switch (op) {
        case 0:
            m = modify_to(q.qpn, VRNIC_QPS_ERR, q.path);
            break;
        case 1:
            m = modify_to(q.qpn, VRNIC_QPS_SQD, q.path);
            m.attr_mask |= VRNIC_QP_ATTR_EN_SQD_ASYNC_NOTIFY;
            m.attr.en_sqd_async_notify = 1;
            if (qp && qp->state == VRNIC_QPS_SQD)
                m.attr_mask = VRNIC_QP_ATTR_STATE;
            break;
        case 2:
            m = modify_to(q.qpn, VRNIC_QPS_RTS, q.path);
            m.attr_mask = VRNIC_QP_ATTR_STATE;
            break;
        default: { // the indices carry on from where they were
            const uint8_t last = op == 3 ? VRNIC_QPS_RTS : VRNIC_QPS_RTR;
            m = modify_to(q.qpn, VRNIC_QPS_RESET, q.path);
            w_->cmd(VRNIC_CMD_MODIFY_QP, &m, sizeof(m));
            connect_qp(*w_, q.qpn, q.path, last);
            return;
        }
        }
        w_->cmd(VRNIC_CMD_MODIFY_QP, &m, sizeof(m));
    }

    // A provider's notify request: the next completion, or the next
    // solicited one.
    void arm_cq(const CqRef& c, bool solicited) const {
        vrnic_db_cq* db = cq_db(c);
        const uint32_t a = load_relaxed(&db->arm);
        const uint32_t next = VRNIC_CQ_ARM_NEXT_SN(a) + !solicited;
        const uint32_t sol = VRNIC_CQ_ARM_SOL_SN(a) + solicited;
        store_release(&db->arm, VRNIC_CQ_ARM_WORD(next, sol));
    }

    // Guest RAM no MR, ring or page list covers: the model must never write
    // there. Only the kernel's physical MR (Scene::mrs[kPhysMr], usable by
    // QP 3 alone) reaches it, so a WQE on QP 3 naming that key lifts the
    // check for the input (see note_wqe()).
    static constexpr unsigned kPhysMr = 4, kPhysQp = 3;
    bool untouched(const World& w) const {
        const struct { uint64_t from, to; } areas[] = {{0, kCmdq}, {kPbl + 16 * 4096, kData}};
        for (const auto& a : areas) {
            // All zero iff the first byte is and every byte equals the next
            // (one memcmp: a byte loop under ASan costs more than the input).
            const uint8_t* p = w.ram(a.from, a.to - a.from);
            if (p[0] || memcmp(p, p + 1, a.to - a.from - 1))
                return false;
        }
        return true;
    }
    // Called with every WQE written to QP `qp`'s rings.
    void note_wqe(unsigned qp, const uint8_t* wqe, uint32_t len) {
        const uint32_t key = mrs[kPhysMr].key;
        for (uint32_t i = 0; qp == kPhysQp && i + 4 <= len; i += 4)
            phys_named |= !memcmp(wqe + i, &key, 4);
    }
    bool phys_named = false;

    // A guest-RAM ring page (4 KiB units from kRings).
    static uint64_t ring(uint64_t page4k) { return kRings + page4k * 4096; }

    vrnic_db_qp* qp_db(const QpRef& q) const { return &w_->slot(q.page, q.slot)->qp; }
    vrnic_db_cq* cq_db(const CqRef& c) const { return &w_->slot(c.page, c.slot)->cq; }

    uint32_t eqn = 0, eq_slot = 0;
    uint32_t page[3] = {}; // doorbell pages: kernel, user context 1, 2
    std::vector<MrRef> mrs;
    CqRef cqs[kCqs] = {};
    QpRef qps[kQps] = {};

  private:
    struct Spec {
        uint32_t uctx, pd, send_cq, recv_cq, page_idx, at, sq_log, sq_shift, rq_log, rq_shift, sge,
            rsge, inl;
    };

    void create_qp(uint32_t i) {
        const Spec& s = specs_[i];
        vrnic_cmd_create_qp q{};
        q.uctx = s.uctx;
        q.pd = s.pd;
        q.qp_type = VRNIC_QPT_RC;
        q.send_cqn = cqs[s.send_cq].cqn;
        q.recv_cqn = cqs[s.recv_cq].cqn;
        q.sq_addr = ring(s.at);
        q.sq_log_depth = uint8_t(s.sq_log);
        q.sq_wqe_shift = uint8_t(s.sq_shift);
        const uint64_t sq_bytes = uint64_t(1) << (s.sq_log + s.sq_shift);
        q.rq_addr = q.sq_addr + ((sq_bytes + 4095) & ~uint64_t(4095));
        q.rq_log_depth = uint8_t(s.rq_log);
        q.rq_wqe_shift = uint8_t(s.rq_shift);
        q.max_send_sge = uint16_t(s.sge);
        q.max_recv_sge = uint16_t(s.rsge);
        q.max_inline = s.inl;
        const vrnic_cmd& r = must(VRNIC_CMD_CREATE_QP, &q, sizeof(q));
        QpRef& ref = qps[i];
        ref = QpRef{};
        ref.qpn = r.create_qp_resp.qpn;
        ref.slot = r.create_qp_resp.db_slot;
        ref.page = page[s.page_idx];
        ref.cq = s.send_cq;
        ref.sq = q.sq_addr;
        ref.rq = q.rq_addr;
        ref.sq_log = s.sq_log;
        ref.sq_shift = s.sq_shift;
        ref.rq_log = s.rq_log;
        ref.rq_shift = s.rq_shift;
        ref.max_sge = s.sge;
        ref.max_rsge = s.rsge;
        ref.max_inline = s.inl;
    }

    const vrnic_cmd& must(uint16_t op, const void* req, size_t len) {
        const vrnic_cmd& r = w_->cmd(op, req, len);
        if (r.hdr.status != VRNIC_CMD_STATUS_OK)
            abort();
        return r;
    }
    uint32_t pd(uint32_t uctx) {
        vrnic_cmd_create_pd p{uctx, 0};
        return must(VRNIC_CMD_CREATE_PD, &p, sizeof(p)).create_pd_resp.pd;
    }
    static std::vector<uint64_t> contiguous(uint64_t gpa, unsigned n, unsigned shift) {
        std::vector<uint64_t> v;
        for (unsigned i = 0; i < n; i++)
            v.push_back(gpa + (uint64_t(i) << shift));
        return v;
    }
    // Registers an MR from an explicit page list (direct, or one leaf
    // behind a top-level page).
    void reg(uint32_t pd, uint32_t access, uint64_t iova, uint64_t len, uint8_t shift,
             const std::vector<uint64_t>& pages, uint8_t level = VRNIC_PBL_DIRECT) {
        uint64_t leaf = kPbl + uint64_t(n_pbl_++) * 4096;
        w_->put(leaf, pages.data(), pages.size() * 8);
        vrnic_cmd_reg_mr m{};
        m.pd = pd;
        m.access = access;
        m.iova = iova;
        m.length = len;
        m.page_shift = shift;
        m.npages = uint32_t(pages.size());
        m.pbl_level = level;
        m.pbl_addr = leaf;
        if (level == VRNIC_PBL_INDIRECT) {
            m.pbl_addr = kPbl + uint64_t(n_pbl_++) * 4096;
            w_->put(m.pbl_addr, &leaf, 8);
        }
        mrs.push_back({must(VRNIC_CMD_REG_MR, &m, sizeof(m)).reg_mr_resp.lkey, iova, len});
    }

    World* w_ = nullptr;
    unsigned n_pbl_ = 0;
    Spec specs_[kQps] = {};
};

} // namespace vrnic::fuzz
