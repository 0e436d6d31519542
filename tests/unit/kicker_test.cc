// The kicker: after a kick wake-up the device thread runs on the kicking
// vCPU's CPU, and Device::kicker_reached() tells the poll loop when a
// message has reached the context that kicked, so it can sleep and give that
// CPU back.
#include "fake_driver.h"
#include "rc_fixture.h"

#include <gtest/gtest.h>

namespace vrnic::test {
namespace {

// Two processes (user contexts) with one connected QP each, like the two
// sides of a perftest latency run.
class KickerPair : public ::testing::Test {
  protected:
    void SetUp() override {
        drv.bring_up();
        const uint32_t u1 = drv.alloc_uctx(), u2 = drv.alloc_uctx();
        const uint32_t pd1 = drv.create_pd(u1), pd2 = drv.create_pd(u2);
        cq1 = drv.create_cq(u1);
        cq2 = drv.create_cq(u2);
        q1 = drv.create_qp(u1, pd1, cq1, cq1);
        q2 = drv.create_qp(u2, pd2, cq2, cq2);
        drv.connect_pair(q1, q2);
        const uint64_t g1 = drv.alloc(4096), g2 = drv.alloc(4096);
        m1 = drv.reg_mr(pd1, g1, 4096, VRNIC_ACCESS_ALL);
        m2 = drv.reg_mr(pd2, g2, 4096, VRNIC_ACCESS_ALL);
    }
    // An 8-byte RDMA WRITE from one side's buffer into the other's.
    void write(QpInfo& from, const MrInfo& src, const MrInfo& dst) {
        drv.post_send(from, rdma_write(src, 64, 8, dst));
        drv.run();
    }
    void send(QpInfo& from, const MrInfo& src) {
        SendWr w;
        w.sge = {{src.iova + 64, 8, src.lkey}};
        drv.post_send(from, w);
        drv.run();
    }

    FakeDriver drv;
    CqInfo cq1, cq2;
    QpInfo q1, q2;
    MrInfo m1, m2;
};

TEST_F(KickerPair, ReachedWhenTheAnswerArrives) {
    drv.dev().note_kick_wakeup();
    write(q1, m1, m2); // q1's process kicked: its request goes out
    EXPECT_FALSE(drv.dev().kicker_reached());
    write(q2, m2, m1); // the answer lands in the kicker's buffer
    EXPECT_TRUE(drv.dev().kicker_reached());
}

TEST_F(KickerPair, NoKickNoKicker) {
    write(q1, m1, m2);
    write(q2, m2, m1);
    EXPECT_FALSE(drv.dev().kicker_reached());
}

TEST_F(KickerPair, SleepingForgetsTheKicker) {
    drv.dev().note_kick_wakeup();
    write(q1, m1, m2);
    drv.dev().set_need_wakeup(true);
    drv.dev().set_need_wakeup(false);
    write(q2, m2, m1);
    EXPECT_FALSE(drv.dev().kicker_reached());
}

TEST_F(KickerPair, TheFirstPosterIsTheKicker) {
    drv.dev().note_kick_wakeup();
    write(q2, m2, m1); // q2's process kicked this time
    EXPECT_FALSE(drv.dev().kicker_reached());
    write(q1, m1, m2);
    EXPECT_TRUE(drv.dev().kicker_reached());
}

TEST_F(KickerPair, AnRnrWaitReachesNoOne) {
    drv.dev().note_kick_wakeup();
    write(q1, m1, m2);
    send(q2, m2); // no receive posted at q1 yet
    EXPECT_FALSE(drv.dev().kicker_reached());
    drv.post_recv(q1, 7, {{m1.iova, 64, m1.lkey}});
    drv.run();
    EXPECT_TRUE(drv.dev().kicker_reached());
    const auto c = drv.poll_cq(cq1); // q1's WRITE, then the receive
    ASSERT_EQ(2u, c.size());
    EXPECT_EQ(7u, c[1].wr_id);
    EXPECT_EQ(VRNIC_CQE_OP_RECV, c[1].opcode);
}

// Kernel QPs of every vCPU share one context: they never name a kicker.
class KickerKernel : public RcPair {};

TEST_F(KickerKernel, KernelQpsAreNoKicker) {
    const MrInfo m = buffer(4096, VRNIC_ACCESS_ALL, 1);
    const SendWr w = rdma_write(m, 64, 8, m);
    drv.dev().note_kick_wakeup();
    drv.post_send(a, w);
    drv.run();
    drv.post_send(b, w);
    drv.run();
    EXPECT_EQ(2u, drv.poll_cq(a_cq).size() + drv.poll_cq(b_cq).size());
    EXPECT_FALSE(drv.dev().kicker_reached());
}

} // namespace
} // namespace vrnic::test
