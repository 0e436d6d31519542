// RNR: a SEND (or WRITE_WITH_IMM) that finds no receive WQE stalls its SQ,
// retries when the responder posts or every RNR timer period, and fails with
// RNR_RETRY_EXC_ERR after rnr_retry retries (7: forever).
#include "rc_fixture.h"

#include "completion.h"
#include "requester.h"
#include "rnr_backoff.h"

#include <algorithm>
#include <cstdio>

namespace vrnic::test {
namespace {

template <uint8_t kRetry> class Rnr : public RcPair {
  protected:
    uint8_t rnr_retry() override { return kRetry; }
    void SetUp() override {
        RcPair::SetUp();
        src = buffer(256, VRNIC_ACCESS_LOCAL_WRITE, 0x3d);
        dst = buffer(256, VRNIC_ACCESS_ALL, 0, &dst_gpa);
    }
    SendWr send(uint64_t id) {
        SendWr s;
        s.wr_id = id;
        s.opcode = VRNIC_WR_SEND;
        s.sge = {sge(src, 0, 100)};
        return s;
    }
    // The responder's min_rnr_timer is 1 (10 us) in RcPair.
    void advance(uint64_t ns) {
        drv.clock() += ns;
        drv.run();
    }
    MrInfo src, dst;
    uint64_t dst_gpa = 0;
};

using RnrInfinite = Rnr<7>;
using RnrTwo = Rnr<2>;
using RnrZero = Rnr<0>;

TEST_F(RnrInfinite, StallsUntilReceivePostedAndKeepsOrder) {
    drv.post_send(a, send(1));
    SendWr w; // a WRITE behind the stalled SEND must wait too
    w.wr_id = 2;
    w.opcode = VRNIC_WR_RDMA_WRITE;
    w.remote_addr = dst.iova + 128;
    w.rkey = dst.rkey;
    w.sge = {sge(src, 0, 8)};
    drv.post_send(a, w);
    for (int i = 0; i < 100; i++)
        advance(1'000'000); // 100 ms of RNR retries
    EXPECT_TRUE(drv.poll_cq(a_cq).empty());
    EXPECT_EQ(0, drv.host(dst_gpa + 128)[0]);
    EXPECT_LE(drv.dev().next_deadline(), drv.clock() + kRnrBackoffCapNs);
    drv.post_recv(b, 50, {sge(dst, 0, 128)});
    drv.run(); // the RQ producer moved: retry now, no timer needed
    auto c = drv.poll_cq(a_cq);
    ASSERT_EQ(2u, c.size());
    EXPECT_EQ(1u, c[0].wr_id);
    EXPECT_EQ(VRNIC_WC_SUCCESS, c[0].status);
    EXPECT_EQ(2u, c[1].wr_id);
    EXPECT_TRUE(drv.check_pattern(dst_gpa, 100, 0x3d));
    EXPECT_TRUE(drv.check_pattern(dst_gpa + 128, 8, 0x3d));
}

// Sleeping with a requester in an RNR wait, the device asks for RQ kicks too
// (section 8): receives are what it waits for.
TEST_F(RnrInfinite, SleepingDuringAnRnrWaitAsksForRqKicks) {
    const uint32_t need = VRNIC_DB_STATUS_NEED_WAKEUP;
    const uint32_t rq = VRNIC_DB_STATUS_RQ_WAKEUP;
    drv.dev().set_need_wakeup(true);
    EXPECT_EQ(need, drv.regs()->need_wakeup);
    EXPECT_EQ(need, drv.slot(b.db_page, 0)->st.status);
    drv.dev().set_need_wakeup(false);
    drv.post_send(a, send(1));
    drv.run();
    drv.dev().set_need_wakeup(true);
    EXPECT_EQ(need | rq, drv.regs()->need_wakeup);
    EXPECT_EQ(need | rq, drv.slot(b.db_page, 0)->st.status);
    EXPECT_EQ(need | rq, drv.slot(VRNIC_KERNEL_DB_PAGE, 0)->st.status);
    drv.dev().set_need_wakeup(false);
    EXPECT_EQ(0u, drv.slot(b.db_page, 0)->st.status);
    drv.post_recv(b, 50, {sge(dst, 0, 128)});
    drv.run();
    ASSERT_EQ(1u, drv.poll_cq(a_cq).size());
    drv.dev().set_need_wakeup(true); // the wait is over
    EXPECT_EQ(need, drv.regs()->need_wakeup);
}

// An endless RNR wait (rnr_retry 7, a 10 us timer, no receive ever posted)
// must not keep a host core busy: the retry deadlines back off, so over one
// second the device wakes for the wait a few dozen times, not 100000; the
// receive posted at the end still completes the SEND at once (the RQ
// producer moved, which every pass looks at and RQ_WAKEUP kicks for).
TEST_F(RnrInfinite, EndlessWaitBacksOffAndStillResumesAtOnce) {
    drv.post_send(a, send(1));
    drv.run();
    const uint64_t start = drv.clock();
    unsigned wakeups = 0;
    for (;;) {
        const uint64_t t = engine_next_deadline(drv.dev().state());
        ASSERT_NE(UINT64_MAX, t);
        if (t > start + 1'000'000'000 || wakeups > 200'000)
            break;
        drv.clock() = std::max(t, drv.clock());
        drv.dev().poll_once();
        wakeups++;
    }
    printf("RNR wake-ups in 1 s of waiting: %u\n", wakeups);
    EXPECT_LT(wakeups, 50u);
    // Never longer than the cap between two retries.
    EXPECT_LE(engine_next_deadline(drv.dev().state()), drv.clock() + kRnrBackoffCapNs);
    EXPECT_TRUE(drv.poll_cq(a_cq).empty());
    drv.post_recv(b, 50, {sge(dst, 0, 128)});
    drv.dev().poll_once(); // same instant: no timer involved
    auto c = drv.poll_cq(a_cq);
    ASSERT_EQ(1u, c.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, c[0].status);
    EXPECT_TRUE(drv.check_pattern(dst_gpa, 100, 0x3d));
    EXPECT_EQ(UINT64_MAX, engine_next_deadline(drv.dev().state()));
}

TEST(RnrBackoff, FiniteRetriesKeepTheTimer) {
    for (uint8_t retry = 1; retry < 7; retry++)
        for (uint32_t n = 0; n < 7; n++)
            EXPECT_EQ(rnr_timer_ns(1), rnr_retry_delay_ns(1, retry, n));
    EXPECT_EQ(rnr_timer_ns(0), rnr_retry_delay_ns(0, 6, 5));
}

TEST(RnrBackoff, InfiniteRetriesDoubleAfterTheFirstFewUpToTheCap) {
    for (uint32_t n = 0; n < kRnrFullRateRetries; n++)
        EXPECT_EQ(rnr_timer_ns(1), rnr_retry_delay_ns(1, 7, n));
    uint64_t prev = rnr_timer_ns(1);
    for (uint32_t n = kRnrFullRateRetries; n < 100; n++) {
        const uint64_t t = rnr_retry_delay_ns(1, 7, n);
        EXPECT_EQ(std::min(2 * prev, kRnrBackoffCapNs), t) << n;
        prev = t;
    }
    EXPECT_EQ(kRnrBackoffCapNs, rnr_retry_delay_ns(1, 7, ~0u));
    // A timer longer than the cap is kept as it is.
    EXPECT_EQ(rnr_timer_ns(0), rnr_retry_delay_ns(0, 7, 1000));
    EXPECT_EQ(rnr_timer_ns(31), rnr_retry_delay_ns(31, 7, 1000));
}

TEST_F(RnrTwo, ExhaustsRetriesThenRnrRetryExcErr) {
    drv.post_send(a, send(1));
    drv.post_send(a, send(2));
    drv.run();
    EXPECT_TRUE(drv.poll_cq(a_cq).empty());
    advance(rnr_timer_ns(1) - 1); // not yet
    EXPECT_TRUE(drv.poll_cq(a_cq).empty());
    advance(1); // retry 1
    EXPECT_TRUE(drv.poll_cq(a_cq).empty());
    advance(rnr_timer_ns(1)); // retry 2: exhausted
    auto c = drv.poll_cq(a_cq);
    ASSERT_EQ(2u, c.size());
    EXPECT_EQ(1u, c[0].wr_id);
    EXPECT_EQ(VRNIC_WC_RNR_RETRY_EXC_ERR, c[0].status);
    EXPECT_EQ(kVeRnrExceeded, c[0].vendor_err);
    EXPECT_EQ(2u, c[1].wr_id);
    EXPECT_EQ(VRNIC_WC_WR_FLUSH_ERR, c[1].status);
    EXPECT_EQ(VRNIC_QPS_ERR, drv.query_qp(a).qp_state);
    EXPECT_EQ(VRNIC_QPS_RTS, drv.query_qp(b).qp_state); // the responder is fine
    // Three RNR NAKs (the try and two retries), one error CQE (the flush
    // is not counted).
    EXPECT_EQ(3u, load_acquire(&drv.regs()->rnr_naks));
    EXPECT_EQ(1u, load_acquire(&drv.regs()->completion_errors));
}

TEST_F(RnrTwo, ReceivePostedDuringRetriesSucceeds) {
    drv.post_send(a, send(1));
    drv.run();
    advance(rnr_timer_ns(1)); // retry 1 fails
    drv.post_recv(b, 7, {sge(dst, 0, 128)});
    drv.run();
    auto c = drv.poll_cq(a_cq);
    ASSERT_EQ(1u, c.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, c[0].status);
}

TEST_F(RnrZero, FailsAtOnce) {
    drv.post_send(a, send(1));
    drv.run();
    auto c = drv.poll_cq(a_cq);
    ASSERT_EQ(1u, c.size());
    EXPECT_EQ(VRNIC_WC_RNR_RETRY_EXC_ERR, c[0].status);
}

TEST_F(RnrZero, WriteWithImmNeedsAReceiveToo) {
    SendWr w;
    w.opcode = VRNIC_WR_RDMA_WRITE_WITH_IMM;
    w.remote_addr = dst.iova;
    w.rkey = dst.rkey;
    w.sge = {sge(src, 0, 16)};
    drv.post_send(a, w);
    drv.run();
    EXPECT_EQ(VRNIC_WC_RNR_RETRY_EXC_ERR, drv.poll_cq(a_cq).at(0).status);
    EXPECT_EQ(0, drv.host(dst_gpa)[0]); // no data moved on RNR
}

TEST_F(RnrInfinite, SqdWaitsForTheStalledWqe) {
    drv.post_send(a, send(1));
    drv.run();
    drv.take_async_events();
    vrnic_qp_attr x{};
    x.qp_state = VRNIC_QPS_SQD;
    x.en_sqd_async_notify = 1;
    ASSERT_EQ(0u, drv.modify_qp(a, VRNIC_QP_ATTR_STATE | VRNIC_QP_ATTR_EN_SQD_ASYNC_NOTIFY, x));
    EXPECT_EQ(1, drv.query_qp(a).sq_draining);
    EXPECT_TRUE(drv.take_async_events().empty());
    drv.post_send(a, send(2)); // behind the drain point: must not start
    drv.post_recv(b, 1, {sge(dst, 0, 128)});
    drv.post_recv(b, 2, {sge(dst, 128, 128)});
    drv.run();
    auto c = drv.poll_cq(a_cq);
    ASSERT_EQ(1u, c.size());
    EXPECT_EQ(1u, c[0].wr_id);
    auto ev = drv.take_async_events();
    ASSERT_EQ(1u, ev.size());
    EXPECT_EQ(VRNIC_EQE_SQ_DRAINED, ev[0].type);
    EXPECT_EQ(0, drv.query_qp(a).sq_draining);
    x = {};
    x.qp_state = VRNIC_QPS_RTS;
    ASSERT_EQ(0u, drv.modify_qp(a, VRNIC_QP_ATTR_STATE, x));
    drv.run();
    EXPECT_EQ(2u, drv.poll_cq(a_cq).at(0).wr_id);
}

TEST(RnrTimer, IbEncoding) {
    EXPECT_EQ(655'360'000u, rnr_timer_ns(0));
    EXPECT_EQ(10'000u, rnr_timer_ns(1));
    EXPECT_EQ(60'000u, rnr_timer_ns(5));
    EXPECT_EQ(491'520'000u, rnr_timer_ns(31));
}

} // namespace
} // namespace vrnic::test
