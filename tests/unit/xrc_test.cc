// XRC (device-interface.md 10.13, 10.17, 10.25, 14.9): XRC domains, XRC
// SRQs and the two XRC QP types, every field of their commands, and the
// data path: a message to a target QP lands in the XRC SRQ it names, of
// another context, completing on that SRQ's CQ with the target's QPN; its
// rkeys are checked against the SRQ's PD; a message naming no XRC SRQ or
// one of another domain fails and moves the target to ERR.
#include "command_fixture.h"

#include "completion.h"

#include <algorithm>

namespace vrnic::test {
namespace {

class XrcTest : public CommandTest {
  protected:
    void SetUp() override {
        CommandTest::SetUp();
        u1 = drv.alloc_uctx(&page1);
        pd1 = drv.create_pd(u1);
        cq1 = drv.create_cq(u1, 8);
        kpd = drv.create_pd(0);
        kcq = drv.create_cq(0, 8);
        xrcd = alloc_xrcd(0);
    }
    uint32_t alloc_xrcd(uint32_t uctx, uint32_t* st = nullptr) {
        vrnic_cmd_alloc_xrcd c{};
        c.uctx = uctx;
        vrnic_cmd r;
        const uint32_t s = drv.cmd(VRNIC_CMD_ALLOC_XRCD, &c, sizeof(c), &r);
        if (st)
            *st = s;
        else
            EXPECT_EQ(OK, s);
        return r.alloc_xrcd_resp.xrcd;
    }
    vrnic_cmd_create_srq xsrq_req(uint32_t uctx, uint32_t pd, uint32_t x, uint32_t cqn) {
        vrnic_cmd_create_srq c{};
        c.uctx = uctx;
        c.pd = pd;
        c.ring_addr = drv.alloc(16 * 64);
        c.log_depth = 4;
        c.wqe_shift = 6;
        c.max_sge = 3;
        c.xrcd = x;
        c.cqn = cqn;
        return c;
    }
    SrqInfo xsrq(uint32_t uctx, uint32_t pd, uint32_t x, uint32_t cqn) {
        SrqInfo s;
        EXPECT_EQ(OK, drv.create_srq(xsrq_req(uctx, pd, x, cqn), &s));
        return s;
    }
    vrnic_cmd_create_qp ini_req(uint32_t uctx, uint32_t pd, const CqInfo& scq) {
        vrnic_cmd_create_qp q{};
        q.uctx = uctx;
        q.pd = pd;
        q.qp_type = VRNIC_QPT_XRC_INI;
        q.send_cqn = scq.cqn;
        q.sq_addr = drv.alloc(64 * 256);
        q.sq_log_depth = 6;
        q.sq_wqe_shift = 8;
        q.max_send_sge = 4;
        q.max_inline = 128;
        return q;
    }
    vrnic_cmd_create_qp tgt_req(uint32_t x) {
        vrnic_cmd_create_qp q{};
        q.uctx = 0;
        q.qp_type = VRNIC_QPT_XRC_TGT;
        q.xrcd = x;
        return q;
    }
    uint32_t create_qp(const vrnic_cmd_create_qp& q, QpInfo* out = nullptr) {
        vrnic_cmd r;
        const uint32_t st = drv.cmd(VRNIC_CMD_CREATE_QP, &q, sizeof(q), &r);
        if (out)
            *out = QpInfo{.qpn = r.create_qp_resp.qpn,
                          .db_slot = r.create_qp_resp.db_slot,
                          .uctx = q.uctx,
                          .db_page = q.uctx ? page1 : uint32_t(VRNIC_KERNEL_DB_PAGE),
                          .pd = q.pd,
                          .sq = q.sq_addr,
                          .sq_log = q.sq_log_depth,
                          .sq_shift = q.sq_wqe_shift,
                          .max_send_sge = q.max_send_sge,
                          .max_inline = q.max_inline};
        return st;
    }
    uint8_t state(const QpInfo& q) { return drv.query_qp(q).qp_state; }

    uint32_t u1 = 0, page1 = 0, pd1 = 0, kpd = 0, xrcd = 0;
    CqInfo cq1, kcq;
};

TEST_F(XrcTest, XrcdCommands) {
    EXPECT_EQ(1024u, drv.regs()->max_xrcd);
    uint32_t st = 0;
    alloc_xrcd(0x1234, &st);
    EXPECT_EQ(BAD_HANDLE, st);
    vrnic_cmd_alloc_xrcd c{};
    c.reserved = 1;
    EXPECT_EQ(BAD_PARAM, drv.cmd(VRNIC_CMD_ALLOC_XRCD, &c, sizeof(c)));
    const uint32_t ux = alloc_xrcd(u1);
    EXPECT_NE(0u, ux);
    EXPECT_EQ(BUSY, destroy(VRNIC_CMD_DEALLOC_UCTX, u1)); // the XRCD holds its context
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DEALLOC_XRCD, ux));
    EXPECT_EQ(BAD_HANDLE, destroy(VRNIC_CMD_DEALLOC_XRCD, ux));
    vrnic_cmd_handle h{xrcd, 1};
    EXPECT_EQ(BAD_PARAM, drv.cmd(VRNIC_CMD_DEALLOC_XRCD, &h, sizeof(h)));
}

TEST_F(XrcTest, CreateSrqChecksDomainAndCq) {
    struct Case {
        const char* what;
        uint32_t status;
        void (*edit)(vrnic_cmd_create_srq&, uint32_t other);
    };
    const Case cases[] = {
        {"XRCD without CQ", BAD_PARAM, [](auto& c, uint32_t) { c.cqn = 0; }},
        {"CQ without XRCD", BAD_PARAM, [](auto& c, uint32_t) { c.xrcd = 0; }},
        {"no such XRCD", BAD_HANDLE, [](auto& c, uint32_t) { c.xrcd = 0x1234; }},
        {"no such CQ", BAD_HANDLE, [](auto& c, uint32_t) { c.cqn = 0x1234; }},
        {"XRCD of another context", BAD_HANDLE, [](auto& c, uint32_t o) { c.xrcd = o; }},
    };
    const uint32_t u2 = drv.alloc_uctx();
    const uint32_t other = alloc_xrcd(u2);
    for (const Case& k : cases) {
        auto c = xsrq_req(u1, pd1, xrcd, cq1.cqn);
        k.edit(c, other);
        SrqInfo s;
        EXPECT_EQ(k.status, drv.create_srq(c, &s)) << k.what;
    }
    SrqInfo s;
    EXPECT_EQ(BAD_HANDLE, drv.create_srq(xsrq_req(u1, pd1, xrcd, kcq.cqn), &s)) << "kernel CQ";
    EXPECT_EQ(0u, counts().num_srq);
    // The kernel's XRCD is shared; one of the SRQ's own context too.
    s = xsrq(u1, pd1, xrcd, cq1.cqn);
    SrqInfo s2 = xsrq(u1, pd1, alloc_xrcd(u1), cq1.cqn);
    EXPECT_EQ(BUSY, destroy(VRNIC_CMD_DEALLOC_XRCD, xrcd));
    EXPECT_EQ(BUSY, destroy(VRNIC_CMD_DESTROY_CQ, cq1.cqn));
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DESTROY_SRQ, s.srqn));
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DEALLOC_XRCD, xrcd));
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DESTROY_SRQ, s2.srqn));
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DESTROY_CQ, cq1.cqn));
}

TEST_F(XrcTest, CreateTargetTakesOnlyADomain) {
    struct Case {
        const char* what;
        void (*edit)(vrnic_cmd_create_qp&);
    };
    const Case cases[] = {
        {"pd", [](auto& c) { c.pd = 1; }},
        {"send_cqn", [](auto& c) { c.send_cqn = 1; }},
        {"recv_cqn", [](auto& c) { c.recv_cqn = 1; }},
        {"srqn", [](auto& c) { c.srqn = 1; }},
        {"flags", [](auto& c) { c.flags = VRNIC_QP_F_SQ_SIG_ALL; }},
        {"sq_addr", [](auto& c) { c.sq_addr = 1ull << 20; }},
        {"rq_addr", [](auto& c) { c.rq_addr = 1ull << 20; }},
        {"sq_log_depth", [](auto& c) { c.sq_log_depth = 4; }},
        {"sq_wqe_shift", [](auto& c) { c.sq_wqe_shift = 6; }},
        {"rq_log_depth", [](auto& c) { c.rq_log_depth = 4; }},
        {"rq_wqe_shift", [](auto& c) { c.rq_wqe_shift = 6; }},
        {"max_send_sge", [](auto& c) { c.max_send_sge = 1; }},
        {"max_recv_sge", [](auto& c) { c.max_recv_sge = 1; }},
        {"max_inline", [](auto& c) { c.max_inline = 1; }},
    };
    for (const Case& k : cases) {
        auto c = tgt_req(xrcd);
        k.edit(c);
        EXPECT_EQ(BAD_PARAM, create_qp(c)) << k.what;
    }
    EXPECT_EQ(BAD_HANDLE, create_qp(tgt_req(0))) << "no XRCD";
    EXPECT_EQ(BAD_HANDLE, create_qp(tgt_req(0x1234))) << "no such XRCD";
    auto c = tgt_req(alloc_xrcd(u1));
    EXPECT_EQ(BAD_HANDLE, create_qp(c)) << "XRCD of another context";
    EXPECT_EQ(0u, counts().num_qp);
    QpInfo t;
    ASSERT_EQ(OK, create_qp(tgt_req(xrcd), &t));
    EXPECT_EQ(0u, t.db_slot); // no queues, no doorbell
    EXPECT_EQ(BUSY, destroy(VRNIC_CMD_DEALLOC_XRCD, xrcd));
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DESTROY_QP, t.qpn));
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DEALLOC_XRCD, xrcd));
}

TEST_F(XrcTest, CreateInitiatorHasNoReceiveSide) {
    SrqInfo srq = drv.create_srq(0, kpd);
    struct Case {
        const char* what;
        uint32_t status;
        void (*edit)(vrnic_cmd_create_qp&, uint32_t srqn);
    };
    const Case cases[] = {
        {"recv_cqn", BAD_PARAM, [](auto& c, uint32_t) { c.recv_cqn = c.send_cqn; }},
        {"srqn", BAD_PARAM, [](auto& c, uint32_t s) { c.srqn = s; }},
        {"rq_addr", BAD_PARAM, [](auto& c, uint32_t) { c.rq_addr = 1ull << 20; }},
        {"rq_log_depth", BAD_PARAM, [](auto& c, uint32_t) { c.rq_log_depth = 4; }},
        {"rq_wqe_shift", BAD_PARAM, [](auto& c, uint32_t) { c.rq_wqe_shift = 6; }},
        {"max_recv_sge", BAD_PARAM, [](auto& c, uint32_t) { c.max_recv_sge = 1; }},
        {"xrcd", BAD_PARAM, [](auto& c, uint32_t) { c.xrcd = 1; }},
        {"no PD", BAD_HANDLE, [](auto& c, uint32_t) { c.pd = 0; }},
        {"no send CQ", BAD_HANDLE, [](auto& c, uint32_t) { c.send_cqn = 0; }},
        {"no SQ", BAD_ADDR, [](auto& c, uint32_t) { c.sq_addr = 0; }},
    };
    for (const Case& k : cases) {
        auto c = ini_req(0, kpd, kcq);
        k.edit(c, srq.srqn);
        EXPECT_EQ(k.status, create_qp(c)) << k.what;
    }
    EXPECT_EQ(BAD_HANDLE, create_qp(ini_req(0, pd1, kcq))) << "PD of another context";
    EXPECT_EQ(0u, counts().num_qp);
    QpInfo i;
    ASSERT_EQ(OK, create_qp(ini_req(0, kpd, kcq), &i));
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DESTROY_QP, i.qpn));
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DESTROY_CQ, kcq.cqn)); // no reference left
}

TEST_F(XrcTest, OrdinaryQpsRefuseXrcFields) {
    SrqInfo s = xsrq(0, kpd, xrcd, kcq.cqn);
    QpOpts o;
    vrnic_cmd_create_qp q{};
    q.uctx = 0;
    q.pd = kpd;
    q.qp_type = VRNIC_QPT_RC;
    q.send_cqn = q.recv_cqn = kcq.cqn;
    q.srqn = s.srqn;
    q.sq_addr = drv.alloc(uint64_t(1) << (o.sq_log + o.sq_shift));
    q.sq_log_depth = uint8_t(o.sq_log);
    q.sq_wqe_shift = uint8_t(o.sq_shift);
    EXPECT_EQ(BAD_PARAM, create_qp(q)) << "RC QP on an XRC SRQ";
    q.srqn = drv.create_srq(0, kpd).srqn;
    q.xrcd = xrcd;
    EXPECT_EQ(BAD_PARAM, create_qp(q)) << "RC QP with an XRCD";
    q.xrcd = 0;
    EXPECT_EQ(OK, create_qp(q));
}

// Initiator `ini` (kernel context) connected to target `tgt` (domain
// xrcd); XRC SRQ `srq` of context u1 in that domain, completing on cq1.
class XrcPath : public XrcTest {
  protected:
    static constexpr uint32_t kBuf = 256;
    void SetUp() override {
        XrcTest::SetUp();
        ASSERT_EQ(OK, create_qp(ini_req(0, kpd, kcq), &ini));
        ASSERT_EQ(OK, create_qp(tgt_req(xrcd), &tgt));
        Path p{.qp_type = VRNIC_QPT_XRC_INI, .dest_qpn = tgt.qpn};
        drv.activate(ini, p);
        p.qp_type = VRNIC_QPT_XRC_TGT;
        p.dest_qpn = ini.qpn;
        drv.activate(tgt, p);
        srq = xsrq(u1, pd1, xrcd, cq1.cqn);
        src_gpa = drv.alloc(4096);
        drv.fill(src_gpa, 4096, 0x3c);
        src = drv.reg_mr(kpd, src_gpa, 4096, VRNIC_ACCESS_LOCAL_WRITE);
        dst_gpa = drv.alloc(16 * kBuf);
        dst = drv.reg_mr(pd1, dst_gpa, 16 * kBuf, VRNIC_ACCESS_ALL);
        drv.take_async_events();
    }
    void post(uint32_t n, SrqInfo* s = nullptr) {
        drv.post_srq_recv(s ? *s : srq, 100 + n, {{dst.iova + n * kBuf, kBuf, dst.lkey}});
    }
    SendWr send(uint32_t srqn, uint32_t off, uint32_t len = 64) {
        SendWr w;
        w.wr_id = 7;
        w.xrc_srqn = srqn;
        w.sge = {{src.iova + off, len, src.lkey}};
        return w;
    }
    // The one send completion's status.
    uint8_t send_status() {
        auto s = drv.poll_cq(kcq);
        EXPECT_EQ(1u, s.size());
        return s.empty() ? 0xff : s[0].status;
    }

    QpInfo ini, tgt;
    SrqInfo srq;
    uint64_t src_gpa = 0, dst_gpa = 0;
    MrInfo src, dst;
};

TEST_F(XrcPath, SendLandsInTheNamedSrqOfAnotherContext) {
    post(0);
    post(1);
    drv.post_send(ini, send(srq.srqn, 64, 100));
    drv.run();
    EXPECT_EQ(VRNIC_WC_SUCCESS, send_status());
    auto r = drv.poll_cq(cq1);
    ASSERT_EQ(1u, r.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, r[0].status);
    EXPECT_EQ(VRNIC_CQE_OP_RECV, r[0].opcode);
    EXPECT_EQ(tgt.qpn, r[0].qpn); // the target QP's number
    EXPECT_EQ(ini.qpn, r[0].src_qp);
    EXPECT_EQ(100u, r[0].wr_id);
    EXPECT_EQ(0u, r[0].wqe_idx);
    EXPECT_EQ(100u, r[0].byte_len);
    EXPECT_EQ(0, memcmp(drv.host(dst_gpa, 100), drv.host(src_gpa + 64, 100), 100));
    EXPECT_EQ(0, drv.host(dst_gpa + 100)[0]);
    EXPECT_EQ(1u, drv.srq_ci(srq));
    EXPECT_EQ(VRNIC_QPS_RTS, state(tgt));
    // A second SRQ of the domain: the next message names it.
    SrqInfo s2 = xsrq(u1, pd1, xrcd, cq1.cqn);
    post(2, &s2);
    drv.post_send(ini, send(s2.srqn, 0, 8));
    drv.run();
    EXPECT_EQ(VRNIC_WC_SUCCESS, send_status());
    r = drv.poll_cq(cq1);
    ASSERT_EQ(1u, r.size());
    EXPECT_EQ(102u, r[0].wr_id);
    EXPECT_EQ(1u, drv.srq_ci(s2));
    EXPECT_EQ(1u, drv.srq_ci(srq));
    EXPECT_TRUE(drv.take_async_events().empty());
}

TEST_F(XrcPath, RdmaWriteChecksTheRkeyAgainstTheSrqPd) {
    SendWr w = rdma_write(src, 0, 32, dst, 3 * kBuf);
    w.xrc_srqn = srq.srqn;
    drv.post_send(ini, w);
    drv.run();
    EXPECT_EQ(VRNIC_WC_SUCCESS, send_status());
    EXPECT_TRUE(drv.check_pattern(dst_gpa + 3 * kBuf, 32, 0x3c));
    // An rkey of the initiator's PD (not the SRQ's): refused at the target.
    const uint64_t kgpa = drv.alloc(4096);
    MrInfo kmr = drv.reg_mr(kpd, kgpa, 4096, VRNIC_ACCESS_ALL);
    w = rdma_write(src, 0, 32, kmr, 0);
    w.xrc_srqn = srq.srqn;
    drv.post_send(ini, w);
    drv.run();
    EXPECT_EQ(VRNIC_WC_REM_ACCESS_ERR, send_status());
    EXPECT_EQ(0, drv.host(kgpa)[0]);
    EXPECT_EQ(VRNIC_QPS_ERR, state(tgt));
    auto ev = drv.take_async_events();
    EXPECT_EQ(1u, count_events(ev, VRNIC_EQE_QP_ACCESS_ERR, tgt.qpn));
    EXPECT_EQ(1u, count_events(ev, VRNIC_EQE_QP_LAST_WQE_REACHED, tgt.qpn));
}

TEST_F(XrcPath, NoXrcSrqIsAnInvalidRequest) {
    post(0);
    const uint32_t plain = drv.create_srq(u1, pd1).srqn; // an SRQ, but not XRC
    for (uint32_t srqn : {0u, 0x1234u, plain}) {
        SCOPED_TRACE(srqn);
        drv.post_send(ini, send(srqn, 0));
        drv.run();
        EXPECT_EQ(VRNIC_WC_REM_INV_REQ_ERR, send_status());
        EXPECT_EQ(VRNIC_QPS_ERR, state(tgt));
        auto ev = drv.take_async_events();
        EXPECT_EQ(1u, count_events(ev, VRNIC_EQE_QP_REQ_ERR, tgt.qpn));
        EXPECT_EQ(1u, count_events(ev, VRNIC_EQE_QP_LAST_WQE_REACHED, tgt.qpn));
        EXPECT_TRUE(drv.poll_cq(cq1).empty());
        EXPECT_EQ(0u, drv.srq_ci(srq)); // nothing taken
        // Both sides back to RTS for the next case.
        Path p{.qp_type = VRNIC_QPT_XRC_INI, .dest_qpn = tgt.qpn};
        vrnic_qp_attr a{};
        a.qp_state = VRNIC_QPS_RESET;
        ASSERT_EQ(OK, drv.modify_qp(ini, VRNIC_QP_ATTR_STATE, a));
        ASSERT_EQ(OK, drv.modify_qp(tgt, VRNIC_QP_ATTR_STATE, a));
        drv.run();
        drv.poll_cq(kcq);
        drv.activate(ini, p);
        p.qp_type = VRNIC_QPT_XRC_TGT;
        p.dest_qpn = ini.qpn;
        drv.activate(tgt, p);
        drv.take_async_events();
    }
}

TEST_F(XrcPath, SrqOfAnotherDomainIsAnAccessError) {
    const uint32_t other = alloc_xrcd(0);
    SrqInfo s2 = xsrq(u1, pd1, other, cq1.cqn);
    post(0, &s2);
    drv.post_send(ini, send(s2.srqn, 0));
    drv.run();
    EXPECT_EQ(VRNIC_WC_REM_ACCESS_ERR, send_status());
    EXPECT_EQ(VRNIC_QPS_ERR, state(tgt));
    EXPECT_TRUE(drv.poll_cq(cq1).empty());
    EXPECT_EQ(0u, drv.srq_ci(s2));
    auto ev = drv.take_async_events();
    EXPECT_EQ(1u, count_events(ev, VRNIC_EQE_QP_ACCESS_ERR, tgt.qpn));
    EXPECT_EQ(1u, count_events(ev, VRNIC_EQE_QP_LAST_WQE_REACHED, tgt.qpn));
}

TEST_F(XrcPath, EmptySrqIsAnRnrWait) {
    drv.post_send(ini, send(srq.srqn, 0, 16));
    drv.run();
    EXPECT_TRUE(drv.poll_cq(kcq).empty()); // waits: rnr_retry 7
    post(5);
    drv.run();
    EXPECT_EQ(VRNIC_WC_SUCCESS, send_status());
    auto r = drv.poll_cq(cq1);
    ASSERT_EQ(1u, r.size());
    EXPECT_EQ(105u, r[0].wr_id);
    EXPECT_EQ(0, memcmp(drv.host(dst_gpa + 5 * kBuf, 16), drv.host(src_gpa, 16), 16));
}

TEST_F(XrcPath, DestroyingTheBoundSrqUnbindsTheTarget) {
    post(0);
    drv.post_send(ini, send(srq.srqn, 0));
    drv.run();
    EXPECT_EQ(VRNIC_WC_SUCCESS, send_status());
    drv.poll_cq(cq1);
    // The target does not hold the SRQ it received into last.
    ASSERT_EQ(OK, destroy(VRNIC_CMD_DESTROY_SRQ, srq.srqn));
    drv.post_send(ini, send(srq.srqn, 0));
    drv.run();
    EXPECT_EQ(VRNIC_WC_REM_INV_REQ_ERR, send_status());
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DESTROY_QP, tgt.qpn));
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DEALLOC_XRCD, xrcd));
}

// A target not connected yet drops the request unanswered, as IB does: the
// initiator sends it again after its ack timeout, retry_cnt times (what a
// server needs whose client is still connecting its target).
TEST_F(XrcTest, TargetNotReadyYetIsRetried) {
    SrqInfo s = xsrq(u1, pd1, xrcd, cq1.cqn);
    const uint64_t dst_gpa = drv.alloc(4096);
    MrInfo dst = drv.reg_mr(pd1, dst_gpa, 4096, VRNIC_ACCESS_LOCAL_WRITE);
    const uint64_t src_gpa = drv.alloc(4096);
    drv.fill(src_gpa, 4096, 0x77);
    MrInfo src = drv.reg_mr(kpd, src_gpa, 4096, VRNIC_ACCESS_LOCAL_WRITE);
    drv.post_srq_recv(s, 9, {{dst.iova, 64, dst.lkey}});
    for (bool connect_late : {true, false}) {
        SCOPED_TRACE(connect_late);
        const uint64_t retries = load_acquire(&drv.regs()->retries);
        QpInfo ini, tgt;
        ASSERT_EQ(OK, create_qp(ini_req(0, kpd, kcq), &ini));
        ASSERT_EQ(OK, create_qp(tgt_req(xrcd), &tgt));
        Path p{.qp_type = VRNIC_QPT_XRC_INI, .dest_qpn = tgt.qpn, .retry_cnt = 3};
        drv.activate(ini, p);
        SendWr w;
        w.xrc_srqn = s.srqn;
        w.sge = {{src.iova, 64, src.lkey}};
        drv.post_send(ini, w);
        drv.run();
        EXPECT_TRUE(drv.poll_cq(kcq).empty()); // the target is in RESET: lost
        for (int i = 0; i < 3; i++) {
            drv.clock() += 100'000'000; // past the ack timeout (14: 67 ms)
            drv.run();
            EXPECT_TRUE(drv.poll_cq(kcq).empty()) << "retry " << i;
        }
        if (connect_late) {
            p.qp_type = VRNIC_QPT_XRC_TGT;
            p.dest_qpn = ini.qpn;
            drv.activate(tgt, p);
        }
        drv.clock() += 100'000'000;
        drv.run();
        auto c = drv.poll_cq(kcq);
        ASSERT_EQ(1u, c.size());
        if (connect_late) {
            EXPECT_EQ(VRNIC_WC_SUCCESS, c[0].status);
            auto r = drv.poll_cq(cq1);
            ASSERT_EQ(1u, r.size());
            EXPECT_EQ(tgt.qpn, r[0].qpn);
            EXPECT_TRUE(drv.check_pattern(dst_gpa, 64, 0x77));
            // Three retries lost and the fourth answered.
            EXPECT_EQ(retries + 4, load_acquire(&drv.regs()->retries));
        } else {
            EXPECT_EQ(VRNIC_WC_RETRY_EXC_ERR, c[0].status); // after 3 retries
            EXPECT_EQ(kVeNoResponder, c[0].vendor_err);
            EXPECT_EQ(retries + 3, load_acquire(&drv.regs()->retries));
        }
    }
}

} // namespace
} // namespace vrnic::test
