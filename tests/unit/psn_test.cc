// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// PSNs (device-interface.md 14.1): a responder executes only the message
// whose PSN is the one it expects; both sides advance by the packets a
// message takes at the requester's path MTU; QUERY_QP reports the next PSNs.
#include "rc_fixture.h"

#include "completion.h"

namespace vrnic::test {
namespace {

constexpr uint32_t kLw = VRNIC_ACCESS_LOCAL_WRITE;

// A requester and a responder, each on its own CQ, with the PSNs given.
class Psn : public ::testing::Test {
  protected:
    void SetUp() override {
        drv.bring_up();
        pd = drv.create_pd(0);
        a_cq = drv.create_cq(0);
        c_cq = drv.create_cq(0);
        a = drv.create_qp(0, pd, a_cq, a_cq);
        c = drv.create_qp(0, pd, c_cq, c_cq);
        dst_gpa = drv.alloc(65536);
        dst = drv.reg_mr(pd, dst_gpa, 65536, VRNIC_ACCESS_ALL);
        src_gpa = drv.alloc(65536);
        drv.fill(src_gpa, 65536, 0x5a);
        src = drv.reg_mr(pd, src_gpa, 65536, kLw);
    }
    // a expects `a_rq_psn` from c, c sends from `c_sq_psn`; the other
    // direction agrees.
    void connect(uint32_t a_rq_psn, uint32_t c_sq_psn) {
        drv.connect(a, c.qpn, 7, 1, VRNIC_ACCESS_ALL, a_rq_psn, 0x777);
        drv.connect(c, a.qpn, 7, 1, VRNIC_ACCESS_ALL, 0x777, c_sq_psn);
        drv.take_async_events();
    }
    SendWr send(uint32_t len) {
        SendWr w;
        w.sge = {{src.iova, len, src.lkey}};
        return w;
    }

    FakeDriver drv;
    uint32_t pd = 0;
    CqInfo a_cq, c_cq;
    QpInfo a, c;
    uint64_t dst_gpa = 0, src_gpa = 0;
    MrInfo dst, src;
};

TEST_F(Psn, StrangerWithWrongPsnCannotDeliver) {
    // c names a and a names c, as if c had taken over a's peer's QPN, but c
    // does not know where a's PSN stream is.
    connect(0x10000, 0x20000);
    drv.post_recv(a, 7, {{dst.iova, 4096, dst.lkey}});
    drv.post_send(c, send(64));
    SendWr w = rdma_write(src, 0, 64, dst, 8192);
    drv.post_send(c, w);
    drv.run();
    EXPECT_TRUE(drv.poll_cq(a_cq).empty());
    EXPECT_EQ(0, drv.host(dst_gpa)[0]);
    EXPECT_EQ(0, drv.host(dst_gpa + 8192)[0]);
    auto e = drv.poll_cq(c_cq);
    ASSERT_EQ(2u, e.size());
    EXPECT_EQ(VRNIC_WC_RETRY_EXC_ERR, e[0].status);
    EXPECT_EQ(kVePsnSequence, e[0].vendor_err);
    EXPECT_EQ(VRNIC_WC_WR_FLUSH_ERR, e[1].status);
    // The victim is untouched and still expects the same PSN.
    vrnic_qp_attr q = drv.query_qp(a);
    EXPECT_EQ(uint32_t(VRNIC_QPS_RTS), q.qp_state);
    EXPECT_EQ(0x10000u, q.rq_psn);
    EXPECT_TRUE(drv.take_async_events().empty());
}

TEST_F(Psn, MatchingPsnDelivers) {
    connect(0x10000, 0x10000);
    drv.post_recv(a, 7, {{dst.iova, 4096, dst.lkey}});
    drv.post_send(c, send(64));
    drv.run();
    ASSERT_EQ(1u, drv.poll_cq(a_cq).size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, drv.poll_cq(c_cq).at(0).status);
    EXPECT_TRUE(drv.check_pattern(dst_gpa, 64, 0x5a));
}

TEST_F(Psn, BothSidesAdvanceByPacketsAtTheRequesterMtu) {
    const uint32_t start = 0xfffff0; // wraps past 2^24
    connect(start, start);
    // FakeDriver::connect sets path_mtu 4096.
    struct Msg {
        uint8_t op;
        uint32_t len;
        uint32_t packets;
    } msgs[] = {
        {VRNIC_WR_SEND, 0, 1},          {VRNIC_WR_SEND, 1, 1},
        {VRNIC_WR_SEND, 4096, 1},       {VRNIC_WR_SEND, 4097, 2},
        {VRNIC_WR_RDMA_WRITE, 0, 1},    {VRNIC_WR_RDMA_WRITE, 65536, 16},
        {VRNIC_WR_RDMA_READ, 12289, 4}, {VRNIC_WR_ATOMIC_FETCH_AND_ADD, 8, 1},
    };
    uint32_t expect = start;
    for (const Msg& m : msgs) {
        SCOPED_TRACE(testing::Message() << "op " << int(m.op) << " len " << m.len);
        SendWr w = send(m.len);
        w.opcode = m.op;
        if (m.op != VRNIC_WR_SEND) {
            w.remote_addr = dst.iova;
            w.rkey = dst.rkey;
        }
        if (m.op == VRNIC_WR_RDMA_READ || m.op == VRNIC_WR_ATOMIC_FETCH_AND_ADD)
            w.sge = {{dst.iova + 32768, m.len, dst.lkey}};
        if (m.op == VRNIC_WR_SEND)
            drv.post_recv(a, 1, {{dst.iova, 65536, dst.lkey}});
        drv.post_send(c, w);
        drv.run();
        ASSERT_EQ(VRNIC_WC_SUCCESS, drv.poll_cq(c_cq).at(0).status);
        drv.poll_cq(a_cq);
        expect = (expect + m.packets) & VRNIC_PSN_MASK;
        EXPECT_EQ(expect, drv.query_qp(c).sq_psn);
        EXPECT_EQ(expect, drv.query_qp(a).rq_psn);
    }
    // The other direction did not move.
    EXPECT_EQ(0x777u, drv.query_qp(a).sq_psn);
    EXPECT_EQ(0x777u, drv.query_qp(c).rq_psn);
}

TEST_F(Psn, RnrRetryKeepsThePsn) {
    connect(0x42, 0x42);
    drv.post_send(c, send(64));
    drv.run(); // no receive: RNR wait
    EXPECT_TRUE(drv.poll_cq(c_cq).empty());
    EXPECT_EQ(0x42u, drv.query_qp(c).sq_psn);
    drv.post_recv(a, 7, {{dst.iova, 4096, dst.lkey}});
    drv.run();
    EXPECT_EQ(VRNIC_WC_SUCCESS, drv.poll_cq(c_cq).at(0).status);
    EXPECT_EQ(0x43u, drv.query_qp(c).sq_psn);
    EXPECT_EQ(0x43u, drv.query_qp(a).rq_psn);
}

TEST_F(Psn, ResetAndReconnectStartsAgain) {
    connect(5, 5);
    drv.post_recv(a, 7, {{dst.iova, 4096, dst.lkey}});
    drv.post_send(c, send(64));
    drv.run();
    ASSERT_EQ(VRNIC_WC_SUCCESS, drv.poll_cq(c_cq).at(0).status);
    drv.poll_cq(a_cq);
    vrnic_qp_attr r{};
    r.qp_state = VRNIC_QPS_RESET;
    ASSERT_EQ(0u, drv.modify_qp(a, VRNIC_QP_ATTR_STATE, r));
    ASSERT_EQ(0u, drv.modify_qp(c, VRNIC_QP_ATTR_STATE, r));
    connect(100, 100);
    drv.post_recv(a, 8, {{dst.iova, 4096, dst.lkey}});
    drv.post_send(c, send(64));
    drv.run();
    EXPECT_EQ(VRNIC_WC_SUCCESS, drv.poll_cq(c_cq).at(0).status);
    EXPECT_EQ(101u, drv.query_qp(a).rq_psn);
}

} // namespace
} // namespace vrnic::test
