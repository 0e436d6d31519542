#include "fake_driver.h"

#include "log.h"
#include "shared_word.h"

#include <sys/mman.h>
#include <unistd.h>

namespace vrnic::test {

namespace {
// Keep test output to what matters: warnings and errors.
const bool quiet_logs = [] {
    g_log_level = LogLevel::warn;
    return true;
}();
} // namespace

FakeDriver::FakeDriver(DeviceParams p, uint64_t ram) : ram_size_(ram), irqs_(64, 0) {
    UniqueFd fd(memfd_create("vrnic-test-ram", MFD_CLOEXEC));
    EXPECT_TRUE(fd.valid());
    EXPECT_EQ(0, ftruncate(fd.get(), static_cast<off_t>(ram)));
    std::string err;
    mem_ = GuestMemory::map_fd(fd.get(), ram, &err);
    EXPECT_TRUE(mem_) << err;
    bar2_ = SharedRegion::create("vrnic-test-bar2", p.bar2_size, &err);
    EXPECT_TRUE(bar2_) << err;
    dev_ = std::make_unique<Device>(
        *mem_, bar2_->data(), p, [this](uint32_t v) { irqs_[v]++; }, [this] { return now_; });
}

uint64_t FakeDriver::alloc(uint64_t bytes, uint64_t align) {
    brk_ = (brk_ + align - 1) & ~(align - 1);
    uint64_t a = brk_;
    brk_ += bytes;
    EXPECT_LE(brk_, ram_size_) << "fake guest RAM exhausted";
    memset(host(a, bytes), 0, bytes);
    return a;
}

void FakeDriver::fill(uint64_t gpa, uint64_t len, uint8_t seed) {
    uint8_t* p = host(gpa, len);
    for (uint64_t i = 0; i < len; i++)
        p[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 8));
}

bool FakeDriver::check_pattern(uint64_t gpa, uint64_t len, uint8_t seed) const {
    const uint8_t* p = host(gpa, len);
    for (uint64_t i = 0; i < len; i++)
        if (p[i] != static_cast<uint8_t>(seed + i * 7 + (i >> 8)))
            return false;
    return true;
}

uint32_t FakeDriver::take_irqs(uint32_t v) {
    return std::exchange(irqs_[v], 0);
}

void FakeDriver::run(unsigned max_passes) {
    for (unsigned i = 0; i < max_passes; i++)
        if (!dev_->poll_once())
            return;
    ADD_FAILURE() << "device still busy after " << max_passes << " passes";
}

void FakeDriver::reset() {
    store_release(&regs()->driver_ctrl, 0u);
    uint32_t req = load_acquire(&regs()->reset_req) + 1;
    store_release(&regs()->reset_req, req);
    dev_->poll_once();
    ASSERT_EQ(req, load_acquire(&regs()->reset_ack));
}

void FakeDriver::bring_up(uint32_t cmdq_log, uint32_t aeq_log, bool eth) {
    ASSERT_EQ(VRNIC_SIGNATURE, regs()->signature);
    ASSERT_TRUE(regs()->device_status & VRNIC_DEV_STATUS_READY);
    reset();
    cmdq_log_ = cmdq_log;
    aeq_log_ = aeq_log;
    cmdq_ = alloc(uint64_t(VRNIC_CMD_SIZE) << cmdq_log);
    aeq_ = alloc(uint64_t(VRNIC_EQE_SIZE) << aeq_log);
    aeq_ci_ = 0;
    comp_eqn_ = 0;
    uctx_page_.clear();
    uctx_page_[VRNIC_UCTX_KERNEL] = VRNIC_KERNEL_DB_PAGE;
    vrnic_regs* r = regs();
    r->cmdq_base = cmdq_;
    r->cmdq_log_depth = cmdq_log;
    r->aeq_base = aeq_;
    r->aeq_log_depth = aeq_log;
    if (eth) {
        r->tx_base = alloc(16 << 6);
        r->tx_log_depth = 6;
        r->rx_base = alloc(16 << 6);
        r->rx_log_depth = 6;
    }
    r->cmdq_pi = r->aeq_ci = r->tx_pi = r->rx_pi = 0;
    store_release(&r->driver_ctrl, uint32_t(VRNIC_DRV_CTRL_DRIVER_OK));
    dev_->poll_once();
    ASSERT_FALSE(r->device_status & VRNIC_DEV_STATUS_FATAL);
    // The RDMA core adds the port's GID before any QP connects.
    vrnic_cmd_set_gid g{};
    g.index = 0;
    g.gid_type = VRNIC_GID_TYPE_ROCE_V2;
    g.flags = VRNIC_GID_F_VALID;
    g.vlan_id = VRNIC_VLAN_NONE;
    memcpy(g.gid, gid, 16);
    ASSERT_EQ(0u, cmd(VRNIC_CMD_SET_GID, &g, sizeof(g)));
}

uint32_t FakeDriver::cmd(vrnic_cmd& c) {
    vrnic_regs* r = regs();
    uint32_t pi = load_acquire(&r->cmdq_pi);
    uint64_t gpa = cmdq_ + uint64_t(pi & ((1u << cmdq_log_) - 1)) * VRNIC_CMD_SIZE;
    c.hdr.seq = ++cmd_seq_;
    c.hdr.status = 0;
    c.hdr.syndrome = 0;
    memcpy(host(gpa, VRNIC_CMD_SIZE), &c, VRNIC_CMD_SIZE);
    store_release(&r->cmdq_pi, pi + 1);
    dev_->poll_once();
    EXPECT_EQ(pi + 1, load_acquire(&r->cmdq_ci)) << "command not completed";
    memcpy(&c, host(gpa, VRNIC_CMD_SIZE), VRNIC_CMD_SIZE);
    EXPECT_EQ(cmd_seq_, c.hdr.seq) << "device changed hdr.seq";
    return c.hdr.status;
}

uint32_t FakeDriver::cmd(uint16_t opcode, const void* req, size_t len, vrnic_cmd* resp) {
    vrnic_cmd c{};
    c.hdr.opcode = opcode;
    if (req)
        memcpy(c.payload, req, len);
    uint32_t st = cmd(c);
    if (resp)
        *resp = c;
    return st;
}

std::vector<vrnic_eqe> FakeDriver::take_async_events() {
    std::vector<vrnic_eqe> out;
    for (;;) {
        auto* e = reinterpret_cast<vrnic_eqe*>(
            host(aeq_ + uint64_t(aeq_ci_ & ((1u << aeq_log_) - 1)) * VRNIC_EQE_SIZE, 16));
        if ((load_acquire(&e->owner) & 1) != VRNIC_PHASE(aeq_ci_, aeq_log_))
            break;
        out.push_back(*e);
        aeq_ci_++;
    }
    store_release(&regs()->aeq_ci, aeq_ci_);
    return out;
}

uint32_t FakeDriver::alloc_uctx(uint32_t* db_page) {
    vrnic_cmd r;
    EXPECT_EQ(0u, cmd(VRNIC_CMD_ALLOC_UCTX, nullptr, 0, &r));
    uctx_page_[r.alloc_uctx_resp.uctx] = r.alloc_uctx_resp.db_page;
    if (db_page)
        *db_page = r.alloc_uctx_resp.db_page;
    return r.alloc_uctx_resp.uctx;
}

uint32_t FakeDriver::create_pd(uint32_t uctx) {
    vrnic_cmd_create_pd p{};
    p.uctx = uctx;
    vrnic_cmd r;
    EXPECT_EQ(0u, cmd(VRNIC_CMD_CREATE_PD, &p, sizeof(p), &r));
    return r.create_pd_resp.pd;
}

uint32_t FakeDriver::create_eq(uint32_t log_depth, uint32_t vector) {
    vrnic_cmd_create_eq e{};
    e.ring_addr = alloc(uint64_t(VRNIC_EQE_SIZE) << log_depth);
    e.log_depth = log_depth;
    e.vector = vector;
    vrnic_cmd r;
    EXPECT_EQ(0u, cmd(VRNIC_CMD_CREATE_EQ, &e, sizeof(e), &r));
    return r.create_eq_resp.eqn;
}

uint32_t FakeDriver::reg_mr_pages(uint32_t pd, uint64_t iova, uint64_t len, uint32_t shift,
                                  const std::vector<uint64_t>& pages, uint32_t access, MrInfo* out,
                                  uint8_t level) {
    vrnic_cmd_reg_mr m{};
    m.pd = pd;
    m.access = access;
    m.iova = iova;
    m.length = len;
    m.page_shift = static_cast<uint8_t>(shift);
    m.npages = static_cast<uint32_t>(pages.size());
    if (level == 0)
        level = pages.size() <= 512 ? VRNIC_PBL_DIRECT : VRNIC_PBL_INDIRECT;
    m.pbl_level = level;
    if (level == VRNIC_PBL_DIRECT) {
        m.pbl_addr = alloc(pages.size() * 8 + 8, 8);
        memcpy(host(m.pbl_addr, pages.size() * 8), pages.data(), pages.size() * 8);
    } else {
        size_t leaves = (pages.size() + 511) / 512;
        m.pbl_addr = alloc(leaves * 8, 4096);
        for (size_t k = 0; k < leaves; k++) {
            uint64_t leaf = alloc(4096);
            size_t cnt = std::min<size_t>(512, pages.size() - k * 512);
            memcpy(host(leaf, cnt * 8), pages.data() + k * 512, cnt * 8);
            memcpy(host(m.pbl_addr + k * 8, 8), &leaf, 8);
        }
    }
    vrnic_cmd r;
    uint32_t st = cmd(VRNIC_CMD_REG_MR, &m, sizeof(m), &r);
    if (out) {
        out->handle = r.reg_mr_resp.mr;
        out->lkey = r.reg_mr_resp.lkey;
        out->rkey = r.reg_mr_resp.rkey;
        out->iova = iova;
        out->len = len;
    }
    return st;
}

MrInfo FakeDriver::reg_mr(uint32_t pd, uint64_t gpa, uint64_t len, uint32_t access, uint64_t iova) {
    if (!iova)
        iova = gpa;
    // Pages covering [gpa, gpa + len); iova shares gpa's offset in the page.
    EXPECT_EQ(gpa & 4095, iova & 4095);
    std::vector<uint64_t> pages;
    for (uint64_t a = gpa & ~4095ull; a < gpa + len; a += 4096)
        pages.push_back(a);
    MrInfo mr;
    EXPECT_EQ(0u, reg_mr_pages(pd, iova, len, 12, pages, access, &mr));
    return mr;
}

CqInfo FakeDriver::create_cq(uint32_t uctx, uint32_t log_depth) {
    vrnic_cmd_create_cq c{};
    c.uctx = uctx;
    // One completion EQ per harness is enough; create it lazily.
    if (!comp_eqn_)
        comp_eqn_ = create_eq(8);
    c.eqn = comp_eqn_;
    c.ring_addr = alloc(uint64_t(VRNIC_CQE_SIZE) << log_depth);
    c.log_depth = log_depth;
    vrnic_cmd r;
    EXPECT_EQ(0u, cmd(VRNIC_CMD_CREATE_CQ, &c, sizeof(c), &r));
    CqInfo cq;
    cq.cqn = r.create_cq_resp.cqn;
    cq.db_slot = r.create_cq_resp.db_slot;
    cq.uctx = uctx;
    cq.ring = c.ring_addr;
    cq.log_depth = log_depth;
    cq.db_page = uctx_page_[uctx];
    return cq;
}

QpInfo FakeDriver::create_qp(uint32_t uctx, uint32_t pd, const CqInfo& scq, const CqInfo& rcq,
                             const QpOpts& o) {
    vrnic_cmd_create_qp c{};
    c.uctx = uctx;
    c.pd = pd;
    c.qp_type = VRNIC_QPT_RC;
    c.flags = o.flags;
    c.send_cqn = scq.cqn;
    c.recv_cqn = rcq.cqn;
    c.sq_addr = alloc(uint64_t(1) << (o.sq_log + o.sq_shift));
    c.rq_addr = alloc(uint64_t(1) << (o.rq_log + o.rq_shift));
    c.sq_log_depth = static_cast<uint8_t>(o.sq_log);
    c.sq_wqe_shift = static_cast<uint8_t>(o.sq_shift);
    c.rq_log_depth = static_cast<uint8_t>(o.rq_log);
    c.rq_wqe_shift = static_cast<uint8_t>(o.rq_shift);
    c.max_send_sge = o.max_send_sge;
    c.max_recv_sge = o.max_recv_sge;
    c.max_inline = o.max_inline;
    vrnic_cmd r;
    EXPECT_EQ(0u, cmd(VRNIC_CMD_CREATE_QP, &c, sizeof(c), &r));
    QpInfo q;
    q.qpn = r.create_qp_resp.qpn;
    q.db_slot = r.create_qp_resp.db_slot;
    q.uctx = uctx;
    q.db_page = uctx_page_[uctx];
    q.pd = pd;
    q.sq = c.sq_addr;
    q.rq = c.rq_addr;
    q.sq_log = o.sq_log;
    q.sq_shift = o.sq_shift;
    q.rq_log = o.rq_log;
    q.rq_shift = o.rq_shift;
    return q;
}

uint32_t FakeDriver::modify_qp(const QpInfo& qp, uint32_t mask, const vrnic_qp_attr& a) {
    vrnic_cmd_modify_qp m{};
    m.qpn = qp.qpn;
    m.attr_mask = mask;
    m.attr = a;
    return cmd(VRNIC_CMD_MODIFY_QP, &m, sizeof(m));
}

void FakeDriver::connect(const QpInfo& qp, uint32_t dest_qpn, uint8_t rnr_retry,
                         uint8_t min_rnr_timer, uint32_t access, uint32_t rq_psn, uint32_t sq_psn) {
    vrnic_qp_attr a{};
    a.qp_state = VRNIC_QPS_INIT;
    a.port_num = 1;
    a.qp_access_flags = access;
    ASSERT_EQ(0u, modify_qp(qp,
                            VRNIC_QP_ATTR_STATE | VRNIC_QP_ATTR_PKEY_INDEX | VRNIC_QP_ATTR_PORT |
                                VRNIC_QP_ATTR_ACCESS_FLAGS,
                            a));
    a = {};
    a.qp_state = VRNIC_QPS_RTR;
    a.path_mtu = VRNIC_MTU_4096;
    a.dest_qpn = dest_qpn;
    a.rq_psn = rq_psn;
    a.max_dest_rd_atomic = 4;
    a.min_rnr_timer = min_rnr_timer;
    memcpy(a.av.dgid, gid, 16);
    a.av.vlan_id = VRNIC_VLAN_NONE;
    a.av.hop_limit = 64;
    ASSERT_EQ(0u, modify_qp(qp,
                            VRNIC_QP_ATTR_STATE | VRNIC_QP_ATTR_AV | VRNIC_QP_ATTR_PATH_MTU |
                                VRNIC_QP_ATTR_DEST_QPN | VRNIC_QP_ATTR_RQ_PSN |
                                VRNIC_QP_ATTR_MAX_DEST_RD_ATOMIC | VRNIC_QP_ATTR_MIN_RNR_TIMER,
                            a));
    a = {};
    a.qp_state = VRNIC_QPS_RTS;
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = rnr_retry;
    a.sq_psn = sq_psn;
    a.max_rd_atomic = 4;
    ASSERT_EQ(0u, modify_qp(qp,
                            VRNIC_QP_ATTR_STATE | VRNIC_QP_ATTR_TIMEOUT | VRNIC_QP_ATTR_RETRY_CNT |
                                VRNIC_QP_ATTR_RNR_RETRY | VRNIC_QP_ATTR_SQ_PSN |
                                VRNIC_QP_ATTR_MAX_QP_RD_ATOMIC,
                            a));
}

void FakeDriver::connect_pair(const QpInfo& a, const QpInfo& b) {
    connect(a, b.qpn);
    connect(b, a.qpn);
}

vrnic_qp_attr FakeDriver::query_qp(const QpInfo& qp) {
    vrnic_cmd_handle h{qp.qpn, 0};
    vrnic_cmd r;
    EXPECT_EQ(0u, cmd(VRNIC_CMD_QUERY_QP, &h, sizeof(h), &r));
    return r.query_qp_resp.attr;
}

void FakeDriver::post_send(QpInfo& qp, const SendWr& wr, bool pub) {
    const uint32_t stride = 1u << qp.sq_shift;
    uint8_t* w = host(qp.sq + uint64_t(qp.sq_pi & ((1u << qp.sq_log) - 1)) * stride, stride);
    memset(w, 0, stride);
    auto* h = reinterpret_cast<vrnic_send_wqe_hdr*>(w);
    h->wr_id = wr.wr_id;
    h->opcode = wr.opcode;
    h->flags = wr.flags;
    h->imm_data = wr.imm_be;
    if (wr.opcode == VRNIC_WR_ATOMIC_CMP_AND_SWP || wr.opcode == VRNIC_WR_ATOMIC_FETCH_AND_ADD) {
        h->atomic.remote_addr = wr.remote_addr;
        h->atomic.rkey = wr.rkey;
        h->atomic.compare_add = wr.compare_add;
        h->atomic.swap = wr.swap;
    } else {
        h->rdma.remote_addr = wr.remote_addr;
        h->rdma.rkey = wr.rkey;
    }
    if (wr.flags & VRNIC_WQE_F_INLINE) {
        auto* ih = reinterpret_cast<vrnic_inline_hdr*>(w + VRNIC_SEND_WQE_HDR_SIZE);
        ih->length = static_cast<uint32_t>(wr.inline_data.size());
        size_t room = stride - VRNIC_SEND_WQE_HDR_SIZE - VRNIC_INLINE_HDR_SIZE;
        if (!wr.inline_data.empty())
            memcpy(w + VRNIC_SEND_WQE_HDR_SIZE + VRNIC_INLINE_HDR_SIZE, wr.inline_data.data(),
                   std::min(room, wr.inline_data.size()));
    } else {
        h->num_sge = static_cast<uint8_t>(wr.sge.size());
        size_t room = (stride - VRNIC_SEND_WQE_HDR_SIZE) / VRNIC_SGE_SIZE;
        if (!wr.sge.empty())
            memcpy(w + VRNIC_SEND_WQE_HDR_SIZE, wr.sge.data(),
                   std::min(room, wr.sge.size()) * VRNIC_SGE_SIZE);
    }
    qp.sq_pi++;
    if (pub)
        publish(qp);
}

void FakeDriver::post_recv(QpInfo& qp, uint64_t wr_id, const std::vector<vrnic_sge>& sge,
                           bool pub) {
    const uint32_t stride = 1u << qp.rq_shift;
    uint8_t* w = host(qp.rq + uint64_t(qp.rq_pi & ((1u << qp.rq_log) - 1)) * stride, stride);
    memset(w, 0, stride);
    auto* h = reinterpret_cast<vrnic_recv_wqe_hdr*>(w);
    h->wr_id = wr_id;
    h->num_sge = static_cast<uint8_t>(sge.size());
    size_t room = (stride - VRNIC_RECV_WQE_HDR_SIZE) / VRNIC_SGE_SIZE;
    if (!sge.empty())
        memcpy(w + VRNIC_RECV_WQE_HDR_SIZE, sge.data(),
               std::min(room, sge.size()) * VRNIC_SGE_SIZE);
    qp.rq_pi++;
    if (pub)
        publish(qp);
}

void FakeDriver::publish(const QpInfo& qp) {
    vrnic_db_slot* s = slot(qp.db_page, qp.db_slot);
    store_release(&s->qp.sq_pi, qp.sq_pi);
    store_release(&s->qp.rq_pi, qp.rq_pi);
}

std::vector<vrnic_cqe> FakeDriver::poll_cq(CqInfo& cq, unsigned max) {
    std::vector<vrnic_cqe> out;
    const uint32_t mask = (1u << cq.log_depth) - 1;
    while (out.size() < max) {
        auto* e = reinterpret_cast<vrnic_cqe*>(host(cq.ring + uint64_t(cq.ci & mask) * 64, 64));
        if ((load_acquire(&e->owner) & 1) != VRNIC_PHASE(cq.ci, cq.log_depth))
            break;
        out.push_back(*e);
        cq.ci++;
    }
    store_release(&slot(cq.db_page, cq.db_slot)->cq.ci, cq.ci);
    return out;
}

void FakeDriver::arm_cq(CqInfo& cq, bool solicited_only) {
    if (solicited_only)
        cq.sol_sn++;
    else
        cq.next_sn++;
    store_release(&slot(cq.db_page, cq.db_slot)->cq.arm, VRNIC_CQ_ARM_WORD(cq.next_sn, cq.sol_sn));
    full_fence();
}

} // namespace vrnic::test
