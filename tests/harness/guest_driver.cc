// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "guest_driver.h"

#include "shared_word.h"
#include "unique_fd.h"

#include <algorithm>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

namespace vrnic::test {

GuestDriver::GuestDriver(const DeviceParams& p, uint64_t ram_bytes)
    : heap_{1 << 20, ram_bytes}, irqs_(64, 0) {
    UniqueFd fd(memfd_create("vrnic-guest-ram", MFD_CLOEXEC));
    if (!fd.valid() || ftruncate(fd.get(), static_cast<off_t>(ram_bytes)) < 0) {
        err_ = "cannot make the guest RAM file";
        return;
    }
    mem_ = GuestMemory::map_fd(fd.get(), ram_bytes, &err_);
    if (!mem_)
        return;
    bar2_ = SharedRegion::create("vrnic-guest-bar2", p.bar2_size, &err_);
    if (!bar2_)
        return;
    dev_ = std::make_unique<Device>(
        *mem_, bar2_->data(), p,
        [this](uint32_t v) {
            if (v < irqs_.size())
                irqs_[v]++;
        },
        [this] { return now_; });
}

uint64_t GuestDriver::alloc_in(Arena& a, uint64_t bytes, uint64_t align) {
    const uint64_t gpa = a.take(bytes, align);
    if (gpa && bytes)
        memset(host(gpa, bytes), 0, bytes);
    return gpa;
}

bool GuestDriver::put(uint64_t gpa, const void* src, uint64_t len) const {
    return !len || mem_->write(gpa, src, len);
}

void GuestDriver::clear_ram() const {
    memset(host(0, ram_size()), 0, ram_size());
}

void GuestDriver::fill(uint64_t gpa, uint64_t len, uint8_t seed) {
    uint8_t* p = host(gpa, len);
    for (uint64_t i = 0; i < len; i++)
        p[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 8));
}

bool GuestDriver::check_pattern(uint64_t gpa, uint64_t len, uint8_t seed) const {
    const uint8_t* p = host(gpa, len);
    for (uint64_t i = 0; i < len; i++)
        if (p[i] != static_cast<uint8_t>(seed + i * 7 + (i >> 8)))
            return false;
    return true;
}

uint32_t GuestDriver::take_irqs(uint32_t v) {
    return std::exchange(irqs_[v], 0);
}

bool GuestDriver::poll() {
    const bool progress = dev_->poll_once();
    if (on_pass_)
        on_pass_();
    return progress;
}

bool GuestDriver::run(unsigned max_passes) {
    for (unsigned i = 0; i < max_passes; i++)
        if (!poll())
            return true;
    return false;
}

bool GuestDriver::reset() {
    store_release(&regs()->driver_ctrl, 0u);
    const uint32_t req = load_acquire(&regs()->reset_req) + 1;
    store_release(&regs()->reset_req, req);
    poll();
    return load_acquire(&regs()->reset_ack) == req;
}

bool GuestDriver::driver_ok(const RingSetup& s) {
    vrnic_regs* r = regs();
    cmdq_ = s.cmdq_base;
    cmdq_log_ = s.cmdq_log;
    aeq_ = s.aeq_base;
    aeq_log_ = s.aeq_log;
    cmd_pi_ = 0;
    aeq_ci_ = 0;
    uctx_page_.clear();
    uctx_page_[VRNIC_UCTX_KERNEL] = VRNIC_KERNEL_DB_PAGE;
    r->cmdq_base = s.cmdq_base;
    r->cmdq_log_depth = s.cmdq_log;
    r->aeq_base = s.aeq_base;
    r->aeq_log_depth = s.aeq_log;
    if (s.eth) {
        r->tx_base = s.tx_base;
        r->tx_log_depth = s.tx_log;
        r->rx_base = s.rx_base;
        r->rx_log_depth = s.rx_log;
    }
    r->cmdq_pi = r->aeq_ci = r->tx_pi = r->rx_pi = 0;
    store_release(&r->driver_ctrl, uint32_t(VRNIC_DRV_CTRL_DRIVER_OK));
    poll();
    return !(r->device_status & VRNIC_DEV_STATUS_FATAL);
}

uint32_t GuestDriver::write_cmd(const vrnic_cmd& c) {
    const uint32_t idx = cmd_pi_++;
    put(ring_slot(cmdq_, cmdq_log_, VRNIC_CMD_SIZE, idx), &c, VRNIC_CMD_SIZE);
    return idx;
}

void GuestDriver::publish_cmds() {
    store_release(&regs()->cmdq_pi, cmd_pi_);
    poll();
}

vrnic_cmd GuestDriver::response(uint32_t idx) const {
    vrnic_cmd c{};
    if (const uint8_t* p = host(ring_slot(cmdq_, cmdq_log_, VRNIC_CMD_SIZE, idx), VRNIC_CMD_SIZE))
        memcpy(&c, p, VRNIC_CMD_SIZE);
    return c;
}

uint32_t GuestDriver::cmd(vrnic_cmd& c) {
    c.hdr.seq = ++cmd_seq_;
    c.hdr.status = 0;
    c.hdr.syndrome = 0;
    const uint32_t idx = write_cmd(c);
    publish_cmds();
    c = response(idx);
    if (load_acquire(&regs()->cmdq_ci) != cmd_pi_ || c.hdr.seq != cmd_seq_)
        return kCmdLost;
    return c.hdr.status;
}

uint32_t GuestDriver::cmd(uint16_t opcode, const void* req, size_t len, vrnic_cmd* resp) {
    vrnic_cmd c{};
    c.hdr.opcode = opcode;
    if (len)
        memcpy(c.payload, req, len);
    const uint32_t st = cmd(c);
    if (resp)
        *resp = c;
    return st;
}

std::vector<vrnic_eqe> GuestDriver::take_async_events() {
    std::vector<vrnic_eqe> out;
    for (;;) {
        auto* e = reinterpret_cast<vrnic_eqe*>(
            host(ring_slot(aeq_, aeq_log_, VRNIC_EQE_SIZE, aeq_ci_), VRNIC_EQE_SIZE));
        if ((load_acquire(&e->owner) & 1) != VRNIC_PHASE(aeq_ci_, aeq_log_))
            break;
        out.push_back(*e);
        aeq_ci_++;
    }
    store_release(&regs()->aeq_ci, aeq_ci_);
    return out;
}

vrnic_cmd_set_gid gid_entry(uint32_t index, const uint8_t* gid) {
    vrnic_cmd_set_gid g{};
    g.index = index;
    g.gid_type = VRNIC_GID_TYPE_ROCE_V2;
    g.flags = VRNIC_GID_F_VALID;
    g.vlan_id = VRNIC_VLAN_NONE;
    memcpy(g.gid, gid, sizeof(g.gid));
    return g;
}

uint32_t GuestDriver::set_gid(uint32_t index, const uint8_t* gid) {
    const vrnic_cmd_set_gid g = gid_entry(index, gid);
    return cmd(VRNIC_CMD_SET_GID, &g, sizeof(g));
}

uint32_t GuestDriver::alloc_uctx(uint32_t* uctx, uint32_t* db_page) {
    vrnic_cmd r;
    const uint32_t st = cmd(VRNIC_CMD_ALLOC_UCTX, nullptr, 0, &r);
    if (st == VRNIC_CMD_STATUS_OK)
        uctx_page_[r.alloc_uctx_resp.uctx] = r.alloc_uctx_resp.db_page;
    *uctx = r.alloc_uctx_resp.uctx;
    if (db_page)
        *db_page = r.alloc_uctx_resp.db_page;
    return st;
}

uint32_t GuestDriver::create_pd(uint32_t uctx, uint32_t* pd) {
    vrnic_cmd_create_pd p{};
    p.uctx = uctx;
    vrnic_cmd r;
    const uint32_t st = cmd(VRNIC_CMD_CREATE_PD, &p, sizeof(p), &r);
    *pd = r.create_pd_resp.pd;
    return st;
}

uint32_t GuestDriver::create_eq(uint64_t ring, uint32_t log_depth, uint32_t vector, uint32_t* eqn,
                                uint32_t* db_slot) {
    vrnic_cmd_create_eq e{};
    e.ring_addr = ring;
    e.log_depth = log_depth;
    e.vector = vector;
    vrnic_cmd r;
    const uint32_t st = cmd(VRNIC_CMD_CREATE_EQ, &e, sizeof(e), &r);
    *eqn = r.create_eq_resp.eqn;
    if (db_slot)
        *db_slot = r.create_eq_resp.db_slot;
    return st;
}

uint32_t GuestDriver::reg_mr(const vrnic_cmd_reg_mr& m, MrInfo* out) {
    vrnic_cmd r;
    const uint32_t st = cmd(VRNIC_CMD_REG_MR, &m, sizeof(m), &r);
    if (out) {
        out->handle = r.reg_mr_resp.mr;
        out->lkey = r.reg_mr_resp.lkey;
        out->rkey = r.reg_mr_resp.rkey;
        out->iova = m.iova;
        out->len = m.length;
    }
    return st;
}

uint32_t GuestDriver::reg_mr_pages(uint32_t pd, uint64_t iova, uint64_t len, uint32_t shift,
                                   const std::vector<uint64_t>& pages, uint32_t access, MrInfo* out,
                                   uint8_t level, Arena* pbl) {
    Arena& at = pbl ? *pbl : heap_;
    vrnic_cmd_reg_mr m{};
    m.pd = pd;
    m.access = access;
    m.iova = iova;
    m.length = len;
    m.page_shift = static_cast<uint8_t>(shift);
    m.npages = static_cast<uint32_t>(pages.size());
    if (level == 0)
        level = pages.size() <= VRNIC_PBL_ENTRIES_PER_PAGE ? VRNIC_PBL_DIRECT : VRNIC_PBL_INDIRECT;
    m.pbl_level = level;
    if (level == VRNIC_PBL_DIRECT) {
        m.pbl_addr = alloc_in(at, pages.size() * 8 + 8, 8);
        put(m.pbl_addr, pages.data(), pages.size() * 8);
    } else {
        const size_t per = VRNIC_PBL_ENTRIES_PER_PAGE;
        const size_t leaves = (pages.size() + per - 1) / per;
        m.pbl_addr = alloc_in(at, leaves * 8, VRNIC_PAGE_SIZE);
        for (size_t k = 0; k < leaves; k++) {
            const uint64_t leaf = alloc_in(at, VRNIC_PAGE_SIZE, VRNIC_PAGE_SIZE);
            const size_t cnt = std::min(per, pages.size() - k * per);
            put(leaf, pages.data() + k * per, cnt * 8);
            put(m.pbl_addr + k * 8, &leaf, 8);
        }
    }
    return reg_mr(m, out);
}

uint32_t GuestDriver::create_cq(uint32_t uctx, uint32_t eqn, uint64_t ring, uint32_t log_depth,
                                CqInfo* out) {
    vrnic_cmd_create_cq c{};
    c.uctx = uctx;
    c.eqn = eqn;
    c.ring_addr = ring;
    c.log_depth = log_depth;
    vrnic_cmd r;
    const uint32_t st = cmd(VRNIC_CMD_CREATE_CQ, &c, sizeof(c), &r);
    *out = CqInfo{.cqn = r.create_cq_resp.cqn,
                  .db_slot = r.create_cq_resp.db_slot,
                  .uctx = uctx,
                  .db_page = uctx_page_[uctx],
                  .ring = ring,
                  .log_depth = log_depth};
    return st;
}

uint32_t GuestDriver::create_qp(uint32_t uctx, uint32_t pd, const CqInfo& scq, const CqInfo& rcq,
                                const QpOpts& o, uint64_t sq_addr, uint64_t rq_addr, QpInfo* out) {
    vrnic_cmd_create_qp c{};
    c.uctx = uctx;
    c.pd = pd;
    c.qp_type = o.qp_type;
    c.flags = o.flags;
    c.send_cqn = scq.cqn;
    c.recv_cqn = rcq.cqn;
    c.sq_addr = sq_addr;
    c.rq_addr = rq_addr;
    c.sq_log_depth = static_cast<uint8_t>(o.sq_log);
    c.sq_wqe_shift = static_cast<uint8_t>(o.sq_shift);
    c.rq_log_depth = static_cast<uint8_t>(o.rq_log);
    c.rq_wqe_shift = static_cast<uint8_t>(o.rq_shift);
    c.max_send_sge = o.max_send_sge;
    c.max_recv_sge = o.max_recv_sge;
    c.max_inline = o.max_inline;
    c.srqn = o.srqn;
    if (o.srqn != VRNIC_HANDLE_NONE) {
        c.rq_addr = 0;
        c.rq_log_depth = c.rq_wqe_shift = 0;
        c.max_recv_sge = 0;
    }
    vrnic_cmd r;
    const uint32_t st = cmd(VRNIC_CMD_CREATE_QP, &c, sizeof(c), &r);
    *out = QpInfo{.qpn = r.create_qp_resp.qpn,
                  .db_slot = r.create_qp_resp.db_slot,
                  .uctx = uctx,
                  .db_page = uctx_page_[uctx],
                  .pd = pd,
                  .sq = sq_addr,
                  .rq = rq_addr,
                  .sq_log = o.sq_log,
                  .sq_shift = o.sq_shift,
                  .rq_log = c.rq_log_depth,
                  .rq_shift = c.rq_wqe_shift,
                  .max_send_sge = o.max_send_sge,
                  .max_recv_sge = c.max_recv_sge,
                  .max_inline = o.max_inline};
    return st;
}

uint32_t GuestDriver::modify_qp(uint32_t qpn, uint32_t mask, const vrnic_qp_attr& a) {
    vrnic_cmd_modify_qp m{};
    m.qpn = qpn;
    m.attr_mask = mask;
    m.attr = a;
    return cmd(VRNIC_CMD_MODIFY_QP, &m, sizeof(m));
}

uint32_t GuestDriver::create_srq(const vrnic_cmd_create_srq& c, SrqInfo* out) {
    vrnic_cmd r;
    const uint32_t st = cmd(VRNIC_CMD_CREATE_SRQ, &c, sizeof(c), &r);
    *out = SrqInfo{.srqn = r.create_srq_resp.srqn,
                   .db_slot = r.create_srq_resp.db_slot,
                   .uctx = c.uctx,
                   .db_page = uctx_page_[c.uctx],
                   .ring = c.ring_addr,
                   .log_depth = c.log_depth,
                   .wqe_shift = c.wqe_shift,
                   .max_sge = c.max_sge};
    return st;
}

uint32_t GuestDriver::modify_srq(uint32_t srqn, uint32_t mask, uint32_t srq_limit,
                                 uint32_t max_wr) {
    vrnic_cmd_modify_srq m{};
    m.srqn = srqn;
    m.attr_mask = mask;
    m.max_wr = max_wr;
    m.srq_limit = srq_limit;
    return cmd(VRNIC_CMD_MODIFY_SRQ, &m, sizeof(m));
}

uint32_t GuestDriver::resize_srq(SrqInfo& srq, uint32_t log_depth, uint64_t ring) {
    vrnic_cmd_modify_srq m{};
    m.srqn = srq.srqn;
    m.attr_mask = VRNIC_SRQ_ATTR_MAX_WR;
    m.log_depth = uint8_t(log_depth);
    m.ring_addr = ring ? ring : alloc(uint64_t(1) << (log_depth + srq.wqe_shift));
    const uint32_t st = cmd(VRNIC_CMD_MODIFY_SRQ, &m, sizeof(m));
    if (st == VRNIC_CMD_STATUS_OK) {
        srq.ring = m.ring_addr;
        srq.log_depth = log_depth;
    }
    return st;
}

vrnic_cmd_modify_qp modify_to(uint32_t qpn, uint8_t state, const Path& p) {
    vrnic_cmd_modify_qp m{};
    m.qpn = qpn;
    m.attr.qp_state = state;
    if (p.qp_type == VRNIC_QPT_UD || p.qp_type == VRNIC_QPT_GSI) {
        m.attr_mask = VRNIC_QP_ATTR_STATE;
        if (state == VRNIC_QPS_INIT) {
            m.attr_mask |= VRNIC_QP_ATTR_PKEY_INDEX | VRNIC_QP_ATTR_PORT | VRNIC_QP_ATTR_QKEY;
            m.attr.port_num = 1;
            m.attr.qkey = p.qkey;
        } else if (state == VRNIC_QPS_RTR) {
            m.attr_mask |= VRNIC_QP_ATTR_PATH_MTU;
            m.attr.path_mtu = p.mtu;
        } else if (state == VRNIC_QPS_RTS) {
            m.attr_mask |= VRNIC_QP_ATTR_SQ_PSN;
            m.attr.sq_psn = p.sq_psn;
        }
        return m;
    }
    switch (state) {
    case VRNIC_QPS_INIT:
        m.attr_mask = VRNIC_QP_ATTR_STATE | VRNIC_QP_ATTR_PKEY_INDEX | VRNIC_QP_ATTR_PORT |
                      VRNIC_QP_ATTR_ACCESS_FLAGS;
        m.attr.port_num = 1;
        m.attr.qp_access_flags = p.access;
        break;
    case VRNIC_QPS_RTR:
        m.attr_mask = VRNIC_QP_ATTR_STATE | VRNIC_QP_ATTR_AV | VRNIC_QP_ATTR_PATH_MTU |
                      VRNIC_QP_ATTR_DEST_QPN | VRNIC_QP_ATTR_RQ_PSN |
                      VRNIC_QP_ATTR_MAX_DEST_RD_ATOMIC | VRNIC_QP_ATTR_MIN_RNR_TIMER;
        m.attr.path_mtu = p.mtu;
        m.attr.dest_qpn = p.dest_qpn;
        m.attr.rq_psn = p.rq_psn;
        m.attr.max_dest_rd_atomic = p.max_dest_rd_atomic;
        m.attr.min_rnr_timer = p.min_rnr_timer;
        memcpy(m.attr.av.dgid, p.dgid, sizeof(m.attr.av.dgid));
        m.attr.av.vlan_id = VRNIC_VLAN_NONE;
        m.attr.av.hop_limit = p.hop_limit;
        if (p.qp_type == VRNIC_QPT_UC || p.qp_type == VRNIC_QPT_XRC_INI)
            m.attr_mask &=
                ~uint32_t(VRNIC_QP_ATTR_MAX_DEST_RD_ATOMIC | VRNIC_QP_ATTR_MIN_RNR_TIMER);
        break;
    case VRNIC_QPS_RTS:
        m.attr_mask = VRNIC_QP_ATTR_STATE | VRNIC_QP_ATTR_TIMEOUT | VRNIC_QP_ATTR_RETRY_CNT |
                      VRNIC_QP_ATTR_RNR_RETRY | VRNIC_QP_ATTR_SQ_PSN |
                      VRNIC_QP_ATTR_MAX_QP_RD_ATOMIC;
        m.attr.timeout = p.timeout;
        m.attr.retry_cnt = p.retry_cnt;
        m.attr.rnr_retry = p.rnr_retry;
        m.attr.sq_psn = p.sq_psn;
        m.attr.max_rd_atomic = p.max_rd_atomic;
        if (p.qp_type == VRNIC_QPT_UC)
            m.attr_mask = VRNIC_QP_ATTR_STATE | VRNIC_QP_ATTR_SQ_PSN;
        if (p.qp_type == VRNIC_QPT_XRC_TGT)
            m.attr_mask = VRNIC_QP_ATTR_STATE | VRNIC_QP_ATTR_TIMEOUT | VRNIC_QP_ATTR_SQ_PSN;
        break;
    default: // RESET, ERR, SQD: the state alone
        m.attr_mask = VRNIC_QP_ATTR_STATE;
        break;
    }
    return m;
}

uint32_t GuestDriver::connect(uint32_t qpn, const Path& p, uint8_t last) {
    uint32_t first = VRNIC_CMD_STATUS_OK;
    for (uint8_t s = VRNIC_QPS_INIT; s <= last; s++) {
        const vrnic_cmd_modify_qp m = modify_to(qpn, s, p);
        const uint32_t st = cmd(VRNIC_CMD_MODIFY_QP, &m, sizeof(m));
        if (first == VRNIC_CMD_STATUS_OK)
            first = st;
    }
    return first;
}

uint32_t GuestDriver::create_ah(uint32_t pd, const vrnic_av& av, uint32_t* ah) {
    vrnic_cmd_create_ah c{};
    c.pd = pd;
    c.av = av;
    vrnic_cmd r;
    const uint32_t st = cmd(VRNIC_CMD_CREATE_AH, &c, sizeof(c), &r);
    *ah = r.create_ah_resp.ah;
    return st;
}

uint32_t GuestDriver::query_qp(uint32_t qpn, vrnic_qp_attr* out) {
    vrnic_cmd_handle h{qpn, 0};
    vrnic_cmd r;
    const uint32_t st = cmd(VRNIC_CMD_QUERY_QP, &h, sizeof(h), &r);
    *out = r.query_qp_resp.attr;
    return st;
}

} // namespace vrnic::test
