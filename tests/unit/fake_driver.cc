#include "fake_driver.h"

#include "log.h"

namespace vrnic::test {

namespace {
// Keep test output to what matters: warnings and errors.
const bool quiet_logs = [] {
    g_log_level = LogLevel::warn;
    return true;
}();
} // namespace

FakeDriver::FakeDriver(DeviceParams p, uint64_t ram) : GuestDriver(p, ram) {
    EXPECT_TRUE(ok()) << error();
}

uint64_t FakeDriver::alloc(uint64_t bytes, uint64_t align) {
    const uint64_t a = GuestDriver::alloc(bytes, align);
    EXPECT_NE(0u, a) << "fake guest RAM exhausted";
    return a;
}

void FakeDriver::run(unsigned max_passes) {
    if (!GuestDriver::run(max_passes))
        ADD_FAILURE() << "device still busy after " << max_passes << " passes";
}

void FakeDriver::reset() {
    ASSERT_TRUE(GuestDriver::reset()) << "reset not acked";
}

void FakeDriver::bring_up(uint32_t cmdq_log, uint32_t aeq_log, bool eth, const uint8_t* gid) {
    ASSERT_EQ(VRNIC_SIGNATURE, regs()->signature);
    ASSERT_TRUE(regs()->device_status & VRNIC_DEV_STATUS_READY);
    reset();
    RingSetup r;
    r.cmdq_log = cmdq_log;
    r.aeq_log = aeq_log;
    r.cmdq_base = alloc(uint64_t(VRNIC_CMD_SIZE) << cmdq_log);
    r.aeq_base = alloc(uint64_t(VRNIC_EQE_SIZE) << aeq_log);
    r.eth = eth;
    if (eth) {
        r.tx_base = alloc(16 << 6);
        r.tx_log = 6;
        r.rx_base = alloc(16 << 6);
        r.rx_log = 6;
    }
    comp_eqn_ = 0;
    ASSERT_TRUE(driver_ok(r)) << "device refused the rings";
    ASSERT_EQ(0u, set_gid(0, gid));
}

uint32_t FakeDriver::cmd(vrnic_cmd& c) {
    const uint32_t st = GuestDriver::cmd(c);
    EXPECT_NE(kCmdLost, st) << "command not completed, or hdr.seq changed";
    return st;
}

uint32_t FakeDriver::cmd(uint16_t opcode, const void* req, size_t len, vrnic_cmd* resp) {
    const uint32_t st = GuestDriver::cmd(opcode, req, len, resp);
    EXPECT_NE(kCmdLost, st) << "command not completed, or hdr.seq changed";
    return st;
}

uint32_t FakeDriver::alloc_uctx(uint32_t* db_page) {
    uint32_t uctx = 0;
    EXPECT_EQ(0u, GuestDriver::alloc_uctx(&uctx, db_page));
    return uctx;
}

uint32_t FakeDriver::create_pd(uint32_t uctx) {
    uint32_t pd = 0;
    EXPECT_EQ(0u, GuestDriver::create_pd(uctx, &pd));
    return pd;
}

uint32_t FakeDriver::create_eq(uint32_t log_depth, uint32_t vector) {
    uint32_t eqn = 0;
    const uint64_t ring = alloc(uint64_t(VRNIC_EQE_SIZE) << log_depth);
    EXPECT_EQ(0u, GuestDriver::create_eq(ring, log_depth, vector, &eqn));
    return eqn;
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

MrInfo FakeDriver::buffer(uint32_t pd, uint64_t len, uint32_t access, uint8_t seed, uint64_t* gpa) {
    const uint64_t g = alloc(len);
    if (seed)
        fill(g, len, seed);
    if (gpa)
        *gpa = g;
    return reg_mr(pd, g, len, access);
}

CqInfo FakeDriver::create_cq(uint32_t uctx, uint32_t log_depth) {
    if (!comp_eqn_)
        comp_eqn_ = create_eq(8);
    CqInfo cq;
    const uint64_t ring = alloc(uint64_t(VRNIC_CQE_SIZE) << log_depth);
    EXPECT_EQ(0u, GuestDriver::create_cq(uctx, comp_eqn_, ring, log_depth, &cq));
    return cq;
}

QpInfo FakeDriver::create_qp(uint32_t uctx, uint32_t pd, const CqInfo& scq, const CqInfo& rcq,
                             const QpOpts& o) {
    const uint64_t sq = alloc(uint64_t(1) << (o.sq_log + o.sq_shift));
    const uint64_t rq = o.srqn ? 0 : alloc(uint64_t(1) << (o.rq_log + o.rq_shift));
    QpInfo q;
    EXPECT_EQ(0u, GuestDriver::create_qp(uctx, pd, scq, rcq, o, sq, rq, &q));
    return q;
}

SrqInfo FakeDriver::create_srq(uint32_t uctx, uint32_t pd, uint32_t log_depth, uint32_t wqe_shift,
                               uint32_t max_sge, uint32_t srq_limit) {
    vrnic_cmd_create_srq c{};
    c.uctx = uctx;
    c.pd = pd;
    c.ring_addr = alloc(uint64_t(1) << (log_depth + wqe_shift));
    c.log_depth = static_cast<uint8_t>(log_depth);
    c.wqe_shift = static_cast<uint8_t>(wqe_shift);
    c.max_sge = static_cast<uint16_t>(max_sge);
    c.srq_limit = srq_limit;
    SrqInfo s;
    EXPECT_EQ(0u, GuestDriver::create_srq(c, &s));
    return s;
}

uint32_t FakeDriver::modify_qp(const QpInfo& qp, uint32_t mask, const vrnic_qp_attr& a) {
    return GuestDriver::modify_qp(qp.qpn, mask, a);
}

void FakeDriver::connect(const QpInfo& qp, uint32_t dest_qpn, uint8_t rnr_retry,
                         uint8_t min_rnr_timer, uint32_t access, uint32_t rq_psn, uint32_t sq_psn) {
    const Path p{.dest_qpn = dest_qpn,
                 .access = access,
                 .rnr_retry = rnr_retry,
                 .min_rnr_timer = min_rnr_timer,
                 .rq_psn = rq_psn,
                 .sq_psn = sq_psn};
    ASSERT_EQ(0u, GuestDriver::connect(qp.qpn, p));
}

void FakeDriver::connect_pair(const QpInfo& a, const QpInfo& b) {
    connect(a, b.qpn);
    connect(b, a.qpn);
}

void FakeDriver::activate(const QpInfo& qp, const Path& p, uint8_t last) {
    ASSERT_EQ(0u, GuestDriver::connect(qp.qpn, p, last));
}

uint32_t FakeDriver::create_ah(uint32_t pd, const vrnic_av& av) {
    uint32_t ah = 0;
    EXPECT_EQ(0u, GuestDriver::create_ah(pd, av, &ah));
    return ah;
}

vrnic_qp_attr FakeDriver::query_qp(const QpInfo& qp) {
    vrnic_qp_attr a{};
    EXPECT_EQ(0u, GuestDriver::query_qp(qp.qpn, &a));
    return a;
}

} // namespace vrnic::test
