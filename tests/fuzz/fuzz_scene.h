// The objects the data-path targets (vrnic_fuzz_wqe, vrnic_fuzz_doorbell)
// start from: two user contexts and the kernel's, MRs with every access mix
// and page layout (scattered 4 KiB pages, a 2 MiB page, a two-level page
// list, a physical MR), five RC QPs: a connected pair with different WQE
// strides and limits, and three loopback QPs, one per context; a connected
// UC pair; two UD QPs (a user and a kernel one) and AHs for them (to the
// device's GID, to a GID it does not have, of another PD); an SRQ (limit
// armed) that a second connected pair of RC QPs receives from; and an XRC
// initiator connected to a target of the kernel's XRC domain, whose
// messages land in that domain's XRC SRQ of another context.
#pragma once

#include "fuzz_world.h"

#include <vector>

namespace vrnic::fuzz {

// A QP and the path it is connected along; sq_pi and rq_pi are the
// producer indices last published.
struct QpRef : QpInfo {
    Path path = fuzz_path();
};

class Scene {
  public:
    static constexpr unsigned kQps = 9, kCqs = 4;
    static constexpr uint32_t kQkey = 0x1234;
    // The SRQ's QPs come after the nine: qp(kQps), qp(kQps + 1); then the
    // XRC initiator, qp(kXrcIni). The XRC target has no rings to post to.
    static constexpr unsigned kSrqQps = 2, kXrcIni = kQps + kSrqQps, kAllQps = kXrcIni + 1;

    // Builds everything on a freshly reset World.
    void build(World& w) {
        w_ = &w;
        pbl_ = Arena{kPbl, kPbl + 16 * 4096};
        phys_named = false;
        mrs.clear();
        must(w.set_gid(0));
        must(w.create_eq(ring(3), 6, VRNIC_IRQ_COMP_BASE, &eqn, &eq_slot));
        uint32_t u1 = 0, u2 = 0;
        must(w.alloc_uctx(&u1, nullptr));
        must(w.alloc_uctx(&u2, nullptr));
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
        MrInfo& pm = mrs.emplace_back();
        must(w.reg_mr(phys, &pm));
        pm.iova = kData;
        pm.len = kDataSize;
        reg(pdk, VRNIC_ACCESS_ALL, kData + 0x30000, 8 << 10, 12,
            contiguous(kData + 0x30000, 2, 12));
        reg(pdc, VRNIC_ACCESS_ALL, kData + 0x40000, 8 << 10, 12, contiguous(kData + 0x40000, 2, 12),
            VRNIC_PBL_INDIRECT);

        const uint32_t uctx_of[kCqs] = {u1, u1, 0, u2};
        for (uint32_t i = 0; i < kCqs; i++)
            must(w.create_cq(uctx_of[i], eqn, ring(i == 3 ? 4 : i), 6, &cqs[i]));

        specs_[0] = {u1, pda, 0, 1, 0x10, {6, 9, 6, 8, 16, 15, 256}};
        specs_[1] = {u1, pda, 1, 1, 0x1c, {5, 6, 5, 5, 1, 1, 8}};
        specs_[2] = {u1, pda, 1, 1, 0x1e, {4, 7, 4, 6, 5, 3, 64}};
        specs_[3] = {0, pdk, 2, 2, 0x20, {4, 7, 4, 6, 5, 3, 64}};
        specs_[4] = {u2, pdc, 3, 3, 0x22, {4, 7, 4, 6, 5, 3, 64}};
        specs_[5] = {u1, pda, 1, 1, 0x24, {4, 7, 4, 6, 5, 3, 64, 0, VRNIC_QPT_UC}};
        specs_[6] = {u1, pda, 0, 0, 0x26, {4, 7, 4, 6, 5, 3, 64, 0, VRNIC_QPT_UC}};
        specs_[7] = {u1, pda, 0, 1, 0x28, {4, 7, 4, 6, 5, 3, 64, 0, VRNIC_QPT_UD}};
        specs_[8] = {0, pdk, 2, 2, 0x2a, {4, 7, 4, 6, 5, 3, 64, 0, VRNIC_QPT_UD}};
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
        // q5 <-> q6 over UC; q5 allows no remote access.
        for (uint32_t i = 5; i < kQps; i++)
            qps[i].path.qp_type = specs_[i].opts.qp_type;
        qps[5].path.dest_qpn = qps[6].qpn;
        qps[6].path.dest_qpn = qps[5].qpn;
        qps[5].path.access = 0;
        qps[7].path.qkey = qps[8].path.qkey = kQkey;
        for (QpRef& q : qps)
            w.connect(q.qpn, q.path);
        uint8_t far[16];
        memcpy(far, kGid, sizeof(far));
        far[15] ^= 0x55;
        ahs[0] = ah(pda, kGid);
        ahs[1] = ah(pda, far);
        ahs[2] = ah(pdk, kGid);
        ahs[3] = ah(pdb, kGid);

        vrnic_cmd_create_srq c = srq_req(u1, pda, 0x2c);
        c.srq_limit = 4;
        must(w.create_srq(c, &srq));
        for (uint32_t i = 0; i < kSrqQps; i++) {
            const QpOpts o{
                .sq_log = 4, .sq_shift = 7, .max_send_sge = 5, .max_inline = 64, .srqn = srq.srqn};
            srq_qps[i] = QpRef{};
            must(w.create_qp(u1, pda, cqs[1], cqs[i], o, ring(0x2d + i), 0, &srq_qps[i]));
        }
        srq_qps[0].path.dest_qpn = srq_qps[1].qpn;
        srq_qps[1].path.dest_qpn = srq_qps[0].qpn;
        srq_qps[1].path.rnr_retry = 3;
        for (QpRef& q : srq_qps)
            w.connect(q.qpn, q.path);
        build_xrc(u2, pdc, pda);
    }

    // QP i of all kAllQps.
    QpRef& qp(unsigned i) { return i < kQps ? qps[i] : i < kXrcIni ? srq_qps[i - kQps] : xrc_ini; }
    const QpRef& qp(unsigned i) const { return const_cast<Scene*>(this)->qp(i); }

    // Destroys QP i and creates it again: a new QPN in the same doorbell
    // slot, its peer now pointing at a QPN that is gone.
    void recreate_qp(uint32_t i) {
        vrnic_cmd_handle h{qps[i].qpn, 0};
        w_->cmd(VRNIC_CMD_DESTROY_QP, &h, sizeof(h));
        const Path p = qps[i].path;
        create_qp(i);
        qps[i].path = p;
        w_->connect(qps[i].qpn, p);
    }

    // Moves a QP between the states the data path behaves differently in:
    // ERR, SQD (with SQ_DRAINED), back to RTS, RESET and connected again,
    // or left in RTR (a responder only).
    void change_state(Input& in) {
        QpRef& q = qp(in.below(kAllQps));
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
            w_->connect(q.qpn, q.path, last);
            return;
        }
        }
        w_->cmd(VRNIC_CMD_MODIFY_QP, &m, sizeof(m));
    }

    // A provider's notify request: the next completion, or the next
    // solicited one.
    void arm_cq(const CqInfo& c, bool solicited) const {
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
            const uint8_t* p = w.host(a.from, a.to - a.from);
            if (p[0] || memcmp(p, p + 1, a.to - a.from - 1))
                return false;
        }
        return true;
    }
    // Called with every WQE written to QP `qp`'s rings.
    void note_wqe(unsigned qp, const uint8_t* wqe, uint32_t len) {
        const uint32_t key = mrs[kPhysMr].lkey;
        for (uint32_t i = 0; qp == kPhysQp && i + 4 <= len; i += 4)
            phys_named |= !memcmp(wqe + i, &key, 4);
    }
    bool phys_named = false;

    // A guest-RAM ring page (4 KiB units from kRings).
    static uint64_t ring(uint64_t page4k) { return kRings + page4k * 4096; }

    vrnic_db_qp* qp_db(const QpInfo& q) const { return &w_->slot(q.db_page, q.db_slot)->qp; }
    vrnic_db_srq* srq_db(const SrqInfo& q) const { return &w_->slot(q.db_page, q.db_slot)->srq; }
    vrnic_db_cq* cq_db(const CqInfo& c) const { return &w_->slot(c.db_page, c.db_slot)->cq; }

    static constexpr unsigned kAhs = 4;
    uint32_t ahs[kAhs] = {};
    uint32_t eqn = 0, eq_slot = 0;
    std::vector<MrInfo> mrs; // the ranges inputs aim at
    CqInfo cqs[kCqs] = {};
    QpRef qps[kQps] = {};
    SrqInfo srq;
    QpRef srq_qps[kSrqQps] = {};
    SrqInfo xsrq; // the XRC SRQ
    QpRef xrc_ini, xrc_tgt;

  private:
    // A QP's context, PD, CQs, first ring page (its RQ on the page after
    // its SQ) and layout.
    struct Spec {
        uint32_t uctx, pd, send_cq, recv_cq, at;
        QpOpts opts;
    };

    // An SRQ of 16 WQEs of up to 3 SGEs, its ring at ring page `page`.
    static vrnic_cmd_create_srq srq_req(uint32_t uctx, uint32_t pd, uint64_t page) {
        vrnic_cmd_create_srq c{};
        c.uctx = uctx;
        c.pd = pd;
        c.ring_addr = ring(page);
        c.log_depth = 4;
        c.wqe_shift = 6;
        c.max_sge = 3;
        return c;
    }

    // The kernel's XRC domain; its XRC SRQ, of context `srq_uctx` (PD
    // `srq_pd`), completing on cqs[3]; a target in it, and an initiator of
    // the first context (PD `ini_pd`) connected to the target.
    void build_xrc(uint32_t srq_uctx, uint32_t srq_pd, uint32_t ini_pd) {
        vrnic_cmd_alloc_xrcd x{};
        vrnic_cmd r;
        must(w_->cmd(VRNIC_CMD_ALLOC_XRCD, &x, sizeof(x), &r));
        const uint32_t xrcd = r.alloc_xrcd_resp.xrcd;
        vrnic_cmd_create_srq c = srq_req(srq_uctx, srq_pd, 0x30);
        c.xrcd = xrcd;
        c.cqn = cqs[3].cqn;
        must(w_->create_srq(c, &xsrq));

        vrnic_cmd_create_qp q{};
        q.qp_type = VRNIC_QPT_XRC_TGT;
        q.xrcd = xrcd;
        must(w_->cmd(VRNIC_CMD_CREATE_QP, &q, sizeof(q), &r));
        xrc_tgt = QpRef{};
        xrc_tgt.qpn = r.create_qp_resp.qpn;

        q = vrnic_cmd_create_qp{};
        q.uctx = qps[0].uctx;
        q.pd = ini_pd;
        q.qp_type = VRNIC_QPT_XRC_INI;
        q.send_cqn = cqs[1].cqn;
        q.sq_addr = ring(0x2f);
        q.sq_log_depth = 4;
        q.sq_wqe_shift = 7;
        q.max_send_sge = 5;
        q.max_inline = 64;
        must(w_->cmd(VRNIC_CMD_CREATE_QP, &q, sizeof(q), &r));
        xrc_ini = QpRef{};
        xrc_ini.qpn = r.create_qp_resp.qpn;
        xrc_ini.db_slot = r.create_qp_resp.db_slot;
        xrc_ini.uctx = q.uctx;
        xrc_ini.db_page = qps[0].db_page;
        xrc_ini.pd = ini_pd;
        xrc_ini.sq = q.sq_addr;
        xrc_ini.sq_log = q.sq_log_depth;
        xrc_ini.sq_shift = q.sq_wqe_shift;
        xrc_ini.max_send_sge = q.max_send_sge;
        xrc_ini.max_inline = q.max_inline;

        xrc_ini.path.qp_type = VRNIC_QPT_XRC_INI;
        xrc_ini.path.dest_qpn = xrc_tgt.qpn;
        xrc_tgt.path.qp_type = VRNIC_QPT_XRC_TGT;
        xrc_tgt.path.dest_qpn = xrc_ini.qpn;
        must(w_->connect(xrc_tgt.qpn, xrc_tgt.path));
        must(w_->connect(xrc_ini.qpn, xrc_ini.path));
    }

    void create_qp(uint32_t i) {
        const Spec& s = specs_[i];
        const uint64_t sq = ring(s.at);
        const uint64_t sq_bytes = uint64_t(1) << (s.opts.sq_log + s.opts.sq_shift);
        const uint64_t rq = sq + ((sq_bytes + 4095) & ~uint64_t(4095));
        qps[i] = QpRef{};
        must(w_->create_qp(s.uctx, s.pd, cqs[s.send_cq], cqs[s.recv_cq], s.opts, sq, rq, &qps[i]));
    }

    // Every command the scene sends is valid: a refusal makes every input
    // meaningless.
    static void must(uint32_t status) {
        if (status != VRNIC_CMD_STATUS_OK)
            abort();
    }
    uint32_t ah(uint32_t pd, const uint8_t (&dgid)[16]) {
        vrnic_av av{};
        memcpy(av.dgid, dgid, sizeof(av.dgid));
        av.hop_limit = 1;
        av.vlan_id = VRNIC_VLAN_NONE;
        uint32_t h = 0;
        must(w_->create_ah(pd, av, &h));
        return h;
    }
    uint32_t pd(uint32_t uctx) {
        uint32_t h = 0;
        must(w_->create_pd(uctx, &h));
        return h;
    }
    static std::vector<uint64_t> contiguous(uint64_t gpa, unsigned n, unsigned shift) {
        std::vector<uint64_t> v;
        for (unsigned i = 0; i < n; i++)
            v.push_back(gpa + (uint64_t(i) << shift));
        return v;
    }
    // Registers an MR from an explicit page list, kept in the page-list area.
    void reg(uint32_t pd, uint32_t access, uint64_t iova, uint64_t len, uint8_t shift,
             const std::vector<uint64_t>& pages, uint8_t level = VRNIC_PBL_DIRECT) {
        must(w_->reg_mr_pages(pd, iova, len, shift, pages, access, &mrs.emplace_back(), level,
                              &pbl_));
    }

    World* w_ = nullptr;
    Arena pbl_;
    Spec specs_[kQps] = {};
};

} // namespace vrnic::fuzz
