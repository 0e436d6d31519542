// CQ arming (device-interface.md 12.3): next-completion and solicited
// requests, the COMP EQE on the CQ's completion EQ and its MSI-X vector.
#include "rc_fixture.h"

#include "shared_word.h"

namespace vrnic::test {
namespace {

class Arm : public RcPair {
  protected:
    void SetUp() override {
        RcPair::SetUp();
        src = buffer(256, VRNIC_ACCESS_LOCAL_WRITE, 0x21);
        dst = buffer(4096, VRNIC_ACCESS_ALL);
        drv.take_irqs(VRNIC_IRQ_COMP_BASE);
    }

    void send(bool solicited) {
        drv.post_recv(b, 1, {sge(dst, 0, 256)});
        SendWr s;
        s.opcode = VRNIC_WR_SEND;
        s.flags = VRNIC_WQE_F_SIGNALED | (solicited ? VRNIC_WQE_F_SOLICITED : 0);
        s.sge = {sge(src, 0, 16)};
        drv.post_send(a, s);
        drv.run();
    }
    uint32_t irqs() { return drv.take_irqs(VRNIC_IRQ_COMP_BASE); }

    MrInfo src, dst;
};

TEST_F(Arm, UnarmedCqRaisesNothing) {
    send(true);
    EXPECT_EQ(0u, irqs());
    EXPECT_EQ(1u, drv.poll_cq(b_cq).size());
}

TEST_F(Arm, NextCompletionFiresOnceThenNeedsRearm) {
    drv.arm_cq(b_cq, false);
    send(false);
    EXPECT_EQ(1u, irqs());
    send(false);
    EXPECT_EQ(0u, irqs()); // one request, one event
    drv.arm_cq(b_cq, false);
    send(false);
    EXPECT_EQ(1u, irqs());
    EXPECT_EQ(3u, drv.poll_cq(b_cq).size());
}

TEST_F(Arm, SolicitedOnlyWaitsForSolicitedOrError) {
    drv.arm_cq(b_cq, true);
    send(false);
    EXPECT_EQ(0u, irqs());
    send(true);
    EXPECT_EQ(1u, irqs());
    // An error completion also satisfies a solicited request.
    drv.arm_cq(a_cq, true);
    SendWr bad;
    bad.opcode = VRNIC_WR_RDMA_WRITE;
    bad.rkey = 0xdead0001;
    bad.remote_addr = 0;
    bad.sge = {sge(src, 0, 8)};
    bad.flags = 0;
    drv.post_send(a, bad);
    drv.run();
    EXPECT_EQ(1u, irqs());
}

TEST_F(Arm, RequestMadeBeforeCqesExistIsHonouredLater) {
    // Counters, not flags: NEXT after SOLICITED survives.
    drv.arm_cq(b_cq, true);
    drv.arm_cq(b_cq, false);
    send(false);
    EXPECT_EQ(1u, irqs());
}

TEST(ArmEq, CompEqeCarriesCqnOnTheEqsVector) {
    FakeDriver drv;
    drv.bring_up();
    // A dedicated EQ on vector 5 so the EQE can be read back.
    vrnic_cmd_create_eq e{};
    e.ring_addr = drv.alloc(16 << 4);
    e.log_depth = 4;
    e.vector = 5;
    vrnic_cmd r;
    ASSERT_EQ(0u, drv.cmd(VRNIC_CMD_CREATE_EQ, &e, sizeof(e), &r));
    uint32_t eqn = r.create_eq_resp.eqn, eq_slot = r.create_eq_resp.db_slot;
    vrnic_cmd_create_cq c{};
    c.uctx = 0;
    c.eqn = eqn;
    c.ring_addr = drv.alloc(64 << 4);
    c.log_depth = 4;
    ASSERT_EQ(0u, drv.cmd(VRNIC_CMD_CREATE_CQ, &c, sizeof(c), &r));
    CqInfo cq;
    cq.cqn = r.create_cq_resp.cqn;
    cq.db_slot = r.create_cq_resp.db_slot;
    cq.db_page = 1;
    cq.ring = c.ring_addr;
    cq.log_depth = 4;
    uint32_t pd = drv.create_pd(0);
    QpInfo q = drv.create_qp(0, pd, cq, cq);
    drv.connect(q, q.qpn);
    drv.take_irqs(5);
    uint32_t eq_ci = 0;
    for (int round = 0; round < 40; round++) { // wraps the 16-entry EQ
        drv.arm_cq(cq, false);
        SendWr w;
        w.opcode = VRNIC_WR_RDMA_WRITE; // zero length, signaled
        drv.post_send(q, w);
        drv.run();
        ASSERT_EQ(1u, drv.poll_cq(cq).size());
        ASSERT_EQ(1u, drv.take_irqs(5)) << round;
        auto* eqe = reinterpret_cast<vrnic_eqe*>(drv.host(e.ring_addr + (eq_ci & 15) * 16, 16));
        ASSERT_EQ(VRNIC_PHASE(eq_ci, 4), eqe->owner & 1) << round;
        EXPECT_EQ(VRNIC_EQE_COMP, eqe->type);
        EXPECT_EQ(cq.cqn, eqe->obj);
        eq_ci++;
        store_release(&drv.slot(1, eq_slot)->eq.ci, eq_ci);
    }
    // Without consuming, the EQ fills up and further events are counted.
    for (int i = 0; i < 20; i++) {
        drv.arm_cq(cq, false);
        SendWr w;
        w.opcode = VRNIC_WR_RDMA_WRITE;
        drv.post_send(q, w);
        drv.run();
        ASSERT_EQ(1u, drv.poll_cq(cq).size());
    }
    EXPECT_EQ(4u, drv.regs()->eq_overflow);
}

// A CQ with its own 16-entry completion EQ on vector 5 and a QP that
// writes to itself, so each zero-length WRITE is one CQE.
class FullEq : public ::testing::Test {
  protected:
    void SetUp() override {
        drv.bring_up();
        vrnic_cmd_create_eq e{};
        e.ring_addr = drv.alloc(16 << 4);
        e.log_depth = 4;
        e.vector = 5;
        vrnic_cmd r;
        ASSERT_EQ(0u, drv.cmd(VRNIC_CMD_CREATE_EQ, &e, sizeof(e), &r));
        eq_slot = r.create_eq_resp.db_slot;
        vrnic_cmd_create_cq c{};
        c.eqn = r.create_eq_resp.eqn;
        c.ring_addr = drv.alloc(64 << 6);
        c.log_depth = 6;
        ASSERT_EQ(0u, drv.cmd(VRNIC_CMD_CREATE_CQ, &c, sizeof(c), &r));
        cq.cqn = r.create_cq_resp.cqn;
        cq.db_slot = r.create_cq_resp.db_slot;
        cq.db_page = 1;
        cq.ring = c.ring_addr;
        cq.log_depth = 6;
        q = drv.create_qp(0, drv.create_pd(0), cq, cq);
        drv.connect(q, q.qpn);
        drv.take_irqs(5);
    }
    void complete_one() {
        SendWr w;
        w.opcode = VRNIC_WR_RDMA_WRITE;
        drv.post_send(q, w);
        drv.run();
        ASSERT_EQ(1u, drv.poll_cq(cq).size());
    }
    // A zero-length solicited SEND to itself: a send and a receive CQE.
    void solicited_send() {
        drv.post_recv(q, 1, {});
        SendWr w;
        w.flags = VRNIC_WQE_F_SIGNALED | VRNIC_WQE_F_SOLICITED;
        drv.post_send(q, w);
        drv.run();
        ASSERT_EQ(2u, drv.poll_cq(cq).size());
    }
    // Fills the EQ with 16 events nobody consumes.
    void fill_eq() {
        for (int i = 0; i < 16; i++) {
            drv.arm_cq(cq, false);
            complete_one();
        }
        ASSERT_EQ(16u, drv.take_irqs(5));
        ASSERT_EQ(0u, drv.regs()->eq_overflow);
    }
    void consume_eq(uint32_t ci) { store_release(&drv.slot(1, eq_slot)->eq.ci, ci); }

    FakeDriver drv;
    uint32_t eq_slot = 0;
    CqInfo cq;
    QpInfo q;
};

// The event a full EQ dropped is not lost: the CQ stays armed, and once the
// driver has made room the next completion notifies without a new request.
TEST_F(FullEq, CqStaysArmedWhenItsEventIsDropped) {
    fill_eq();
    drv.arm_cq(cq, false);
    complete_one(); // EQ full: dropped and counted
    EXPECT_EQ(1u, drv.regs()->eq_overflow);
    EXPECT_EQ(0u, drv.take_irqs(5));
    consume_eq(16);
    complete_one(); // no arm_cq() in between
    EXPECT_EQ(1u, drv.take_irqs(5));
    complete_one(); // that request is now used up
    EXPECT_EQ(0u, drv.take_irqs(5));
}

// A solicited request whose event was dropped is owed: the next completion
// of any kind delivers it.
TEST_F(FullEq, DroppedSolicitedEventIsDeliveredByTheNextBatch) {
    fill_eq();
    drv.arm_cq(cq, true);
    solicited_send();
    EXPECT_EQ(1u, drv.regs()->eq_overflow);
    consume_eq(16);
    complete_one(); // not solicited
    EXPECT_EQ(1u, drv.take_irqs(5));
}

TEST(ArmEq, CqePhaseFlipsOnEveryPass) {
    FakeDriver drv;
    drv.bring_up();
    uint32_t pd = drv.create_pd(0);
    CqInfo cq = drv.create_cq(0, 2);
    QpInfo q = drv.create_qp(0, pd, cq, cq);
    drv.connect(q, q.qpn);
    for (uint32_t i = 0; i < 12; i++) {
        SendWr w;
        w.wr_id = i;
        w.opcode = VRNIC_WR_RDMA_WRITE;
        drv.post_send(q, w);
        drv.run();
        auto* e = reinterpret_cast<vrnic_cqe*>(drv.host(cq.ring + (i & 3) * 64, 64));
        EXPECT_EQ(((i >> 2) & 1) ^ 1, e->owner) << i;
        ASSERT_EQ(i, drv.poll_cq(cq).at(0).wr_id);
    }
}

} // namespace
} // namespace vrnic::test
