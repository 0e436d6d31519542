// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// RDMA between two VMs of one fabric (rdma_fabric.h): two devices, each
// with its own guest RAM and driver, ports 0 and 1. A message from a QP of
// one reaches a QP of the other by the other's GID, is checked against the
// responder's own state, and moves between the two memories; a VM that
// leaves is a destination that no longer answers.
#include "completion.h"
#include "mcast.h"
#include "test_device.h"

#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

namespace vrnic::test {
namespace {

// One VM, each with its own GID (a GID names one VM), and its QPs.
struct Vm : TestDevice {
    Vm(RdmaFabric& f, uint32_t port, const uint8_t* gid) : TestDevice(gid, &f, port) {}
    QpInfo qp(uint8_t type = VRNIC_QPT_RC) {
        QpOpts o;
        o.qp_type = type;
        return drv.create_qp(0, pd, cq, cq, o);
    }
};

class CrossVm : public ::testing::Test {
  protected:
    void SetUp() override {
        a = std::make_unique<Vm>(fabric, 0, kGid);
        b = std::make_unique<Vm>(fabric, 1, kGid2);
        qa = a->qp();
        qb = b->qp();
        connect(VRNIC_QPT_RC);
    }
    void connect(uint8_t type) {
        a->drv.activate(qa, Path{.qp_type = type, .dest_qpn = qb.qpn, .dgid = kGid2});
        b->drv.activate(qb, Path{.qp_type = type, .dest_qpn = qa.qpn, .dgid = kGid});
    }
    // Runs a's device (which executes a's messages into b) and returns a's
    // completions.
    std::vector<vrnic_cqe> run_a() {
        a->drv.run();
        return a->drv.poll_cq(a->cq);
    }

    RdmaFabric fabric{2};
    std::unique_ptr<Vm> a, b;
    QpInfo qa, qb;
};

TEST_F(CrossVm, WriteLandsInTheOtherVmsMemory) {
    MrInfo src = a->buffer(8192, VRNIC_ACCESS_LOCAL_WRITE, 0x31);
    uint64_t dst_gpa;
    MrInfo dst = b->buffer(8192, kRemoteAll, 0, &dst_gpa);
    a->drv.post_send(qa, rdma_wr(VRNIC_WR_RDMA_WRITE, src, 8192, dst));
    auto c = run_a();
    ASSERT_EQ(1u, c.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, c[0].status);
    EXPECT_TRUE(b->drv.check_pattern(dst_gpa, 8192, 0x31));
}

TEST_F(CrossVm, SendCompletesAtTheOtherVmsReceive) {
    MrInfo src = a->buffer(3000, VRNIC_ACCESS_LOCAL_WRITE, 0x42);
    uint64_t dst_gpa;
    MrInfo dst = b->buffer(4096, VRNIC_ACCESS_LOCAL_WRITE, 0, &dst_gpa);
    b->drv.post_recv(qb, 0xb1, {sge(dst, 0, 4096)});
    SendWr s;
    s.opcode = VRNIC_WR_SEND_WITH_IMM;
    s.imm_be = 0x11223344;
    s.sge = {sge(src, 0, 3000)};
    a->drv.post_send(qa, s);
    ASSERT_EQ(VRNIC_WC_SUCCESS, run_a().at(0).status);
    auto r = b->drv.poll_cq(b->cq); // written by a's thread, b never ran
    ASSERT_EQ(1u, r.size());
    EXPECT_EQ(0xb1u, r[0].wr_id);
    EXPECT_EQ(VRNIC_WC_SUCCESS, r[0].status);
    EXPECT_EQ(3000u, r[0].byte_len);
    EXPECT_EQ(qa.qpn, r[0].src_qp);
    EXPECT_EQ(0x11223344u, r[0].imm_data);
    EXPECT_TRUE(b->drv.check_pattern(dst_gpa, 3000, 0x42));
}

TEST_F(CrossVm, ReadAndAtomicsComeBackFromTheOtherVm) {
    uint64_t rgpa;
    MrInfo remote = b->buffer(4096, kRemoteAll, 0x55, &rgpa);
    uint64_t lgpa;
    MrInfo local = a->buffer(4096, VRNIC_ACCESS_LOCAL_WRITE, 0, &lgpa);
    a->drv.post_send(qa, rdma_wr(VRNIC_WR_RDMA_READ, local, 2048, remote));
    ASSERT_EQ(VRNIC_WC_SUCCESS, run_a().at(0).status);
    EXPECT_TRUE(a->drv.check_pattern(lgpa, 2048, 0x55));

    uint64_t v = 40;
    memcpy(b->drv.host(rgpa + 8, 8), &v, 8);
    SendWr fa = rdma_wr(VRNIC_WR_ATOMIC_FETCH_AND_ADD, local, 8, remote, 8);
    fa.compare_add = 2;
    a->drv.post_send(qa, fa);
    ASSERT_EQ(VRNIC_WC_SUCCESS, run_a().at(0).status);
    SendWr cs = rdma_wr(VRNIC_WR_ATOMIC_CMP_AND_SWP, local, 8, remote, 8);
    cs.sge = {sge(local, 8, 8)};
    cs.compare_add = 42;
    cs.swap = 7;
    a->drv.post_send(qa, cs);
    ASSERT_EQ(VRNIC_WC_SUCCESS, run_a().at(0).status);
    uint64_t got[2], now;
    memcpy(got, a->drv.host(lgpa, 16), 16);
    memcpy(&now, b->drv.host(rgpa + 8, 8), 8);
    EXPECT_EQ(40u, got[0]);
    EXPECT_EQ(42u, got[1]);
    EXPECT_EQ(7u, now);
}

// Every responder check is made against the responder VM's own state: an
// rkey of the requester's VM, or of the other PD, or without the right, or
// out of bounds, fails as on one VM, and the responder's QP goes to ERR.
TEST_F(CrossVm, ResponderChecksAreTheResponderVms) {
    MrInfo src = a->buffer(4096, VRNIC_ACCESS_LOCAL_WRITE | VRNIC_ACCESS_REMOTE_WRITE, 0x66);
    const uint32_t other_pd = b->drv.create_pd(0);
    struct Case {
        const char* what;
        MrInfo dst;
        uint64_t off;
        uint32_t vendor;
    };
    const Case cases[] = {
        {"the requester VM's own rkey", src, 0, kVeBadRkey},
        {"another PD's MR", b->drv.buffer(other_pd, 4096, kRemoteAll), 0, kVeBadRkey},
        {"no REMOTE_WRITE", b->buffer(4096, VRNIC_ACCESS_REMOTE_READ), 0, kVeRemoteRights},
        {"past the end", b->buffer(4096, kRemoteAll), 4096 - 32, kVeRemoteBounds},
    };
    for (const Case& k : cases) {
        SCOPED_TRACE(k.what);
        qa = a->qp();
        qb = b->qp();
        connect(VRNIC_QPT_RC);
        a->drv.post_send(qa, rdma_wr(VRNIC_WR_RDMA_WRITE, src, 64, k.dst, k.off));
        auto c = run_a();
        ASSERT_EQ(1u, c.size());
        EXPECT_EQ(VRNIC_WC_REM_ACCESS_ERR, c[0].status);
        EXPECT_EQ(k.vendor, c[0].vendor_err);
        EXPECT_EQ(VRNIC_QPS_ERR, b->drv.query_qp(qb).qp_state);
        b->drv.run();
        b->drv.poll_cq(b->cq);
    }
}

// A QP of the other VM whose path leads to a third GID is not this QP's
// responder, though its QPN and dest_qpn match: the request goes unanswered.
TEST_F(CrossVm, ResponderMustPointBackAtTheRequestersVm) {
    constexpr uint8_t kGid3[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8};
    vrnic_cmd_modify_qp m = modify_to(qb.qpn, VRNIC_QPS_RESET, Path{});
    ASSERT_EQ(0u, b->drv.cmd(VRNIC_CMD_MODIFY_QP, &m, sizeof(m)));
    b->drv.activate(qb, Path{.dest_qpn = qa.qpn, .dgid = kGid3});
    MrInfo src = a->buffer(64, VRNIC_ACCESS_LOCAL_WRITE, 0x11);
    uint64_t dst_gpa;
    MrInfo dst = b->buffer(64, kRemoteAll, 0, &dst_gpa);
    a->drv.post_send(qa, rdma_wr(VRNIC_WR_RDMA_WRITE, src, 64, dst));
    EXPECT_TRUE(run_a().empty()); // waiting for an answer
    for (int i = 0; i < 8; i++) {
        a->drv.clock() += 1'000'000'000;
        a->drv.run();
    }
    auto c = a->drv.poll_cq(a->cq);
    ASSERT_EQ(1u, c.size());
    EXPECT_EQ(VRNIC_WC_RETRY_EXC_ERR, c[0].status);
    EXPECT_FALSE(b->drv.check_pattern(dst_gpa, 64, 0x11));
}

// A VM that leaves (its QEMU dies) stops answering: its peers retry for
// timeout * retry_cnt, then complete in RETRY_EXC_ERR; never at once.
TEST_F(CrossVm, PeerThatLeftIsRetriedThenRetryExceeded) {
    MrInfo src = a->buffer(64, VRNIC_ACCESS_LOCAL_WRITE, 0x22);
    MrInfo dst = b->buffer(64, kRemoteAll);
    b.reset();
    a->drv.post_send(qa, rdma_wr(VRNIC_WR_RDMA_WRITE, src, 64, dst));
    EXPECT_TRUE(run_a().empty());
    // Path's timeout 14 is 67 ms per try, retry_cnt 7 retries after the first.
    unsigned tries = 1;
    std::vector<vrnic_cqe> c;
    while (c.empty() && tries < 20) {
        a->drv.clock() += 70'000'000;
        a->drv.run();
        c = a->drv.poll_cq(a->cq);
        tries++;
    }
    ASSERT_EQ(1u, c.size());
    EXPECT_EQ(VRNIC_WC_RETRY_EXC_ERR, c[0].status);
    EXPECT_EQ(kVeNoResponder, c[0].vendor_err);
    EXPECT_EQ(9u, tries); // the first try and 7 retries, completed at the 8th timeout
    EXPECT_EQ(7u, a->counter64(&vrnic_regs::retries));
    EXPECT_EQ(0u, a->counter64(&vrnic_regs::rdma_tx_msgs));
}

TEST_F(CrossVm, UdDatagramCarriesTheSendersAddresses) {
    QpInfo ua = a->qp(VRNIC_QPT_UD), ub = b->qp(VRNIC_QPT_UD);
    a->drv.activate(ua, Path{.qp_type = VRNIC_QPT_UD, .qkey = 0x77});
    b->drv.activate(ub, Path{.qp_type = VRNIC_QPT_UD, .qkey = 0x77});
    vrnic_av av{};
    memcpy(av.dgid, kGid2, 16);
    av.hop_limit = 64;
    av.vlan_id = VRNIC_VLAN_NONE;
    const uint32_t ah = a->drv.create_ah(a->pd, av);
    MrInfo src = a->buffer(512, VRNIC_ACCESS_LOCAL_WRITE, 0x3c);
    uint64_t dst_gpa;
    MrInfo dst = b->buffer(4096, VRNIC_ACCESS_LOCAL_WRITE, 0, &dst_gpa);
    b->drv.post_recv(ub, 9, {sge(dst, 0, 4096)});
    a->drv.post_send(ua, ud_send(ah, ub.qpn, 0x77, {sge(src, 0, 512)}));
    ASSERT_EQ(VRNIC_WC_SUCCESS, run_a().at(0).status);
    auto r = b->drv.poll_cq(b->cq);
    ASSERT_EQ(1u, r.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, r[0].status);
    EXPECT_EQ(ua.qpn, r[0].src_qp);
    EXPECT_EQ(0, memcmp(r[0].smac, a->drv.dev().state().params.mac, 6));
    const uint8_t* g = b->drv.host(dst_gpa, VRNIC_GRH_SIZE);
    EXPECT_EQ(0, memcmp(g + 8, kGid, 16));   // the source: a's GID
    EXPECT_EQ(0, memcmp(g + 24, kGid2, 16)); // the destination: b's
    EXPECT_TRUE(b->drv.check_pattern(dst_gpa + VRNIC_GRH_SIZE, 512, 0x3c));

    // To a VM that left: dropped, counted at the sender.
    b.reset();
    a->drv.post_send(ua, ud_send(ah, ub.qpn, 0x77, {sge(src, 0, 512)}));
    ASSERT_EQ(VRNIC_WC_SUCCESS, run_a().at(0).status);
    EXPECT_EQ(1u, a->counter(&vrnic_regs::ud_no_dest_drops));
}

// A message to a lower port whose lock another thread holds is not lost:
// the WQE stays, and the next pass takes that lock before its own.
TEST_F(CrossVm, BusyLowerPortIsTakenFirstByTheNextPass) {
    MrInfo src = b->buffer(64, VRNIC_ACCESS_LOCAL_WRITE, 0x5e);
    uint64_t dst_gpa;
    MrInfo dst = a->buffer(64, kRemoteAll, 0, &dst_gpa);
    b->drv.post_send(qb, rdma_wr(VRNIC_WR_RDMA_WRITE, src, 64, dst));
    {
        std::lock_guard<FifoLock> other(fabric.lock(0)); // port 0 is a
        EXPECT_TRUE(b->drv.dev().poll_once());           // busy: not idle
        EXPECT_EQ(0, b->drv.dev().state().want_peer);
    }
    EXPECT_TRUE(b->drv.poll_cq(b->cq).empty());
    EXPECT_FALSE(a->drv.check_pattern(dst_gpa, 64, 0x5e));
    b->drv.run();
    auto c = b->drv.poll_cq(b->cq);
    ASSERT_EQ(1u, c.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, c[0].status);
    EXPECT_TRUE(a->drv.check_pattern(dst_gpa, 64, 0x5e));
}

// While another thread waits for the responder VM, a large message moves
// to it in shared slices, one per lock hold: a VM sending 1 MiB messages
// cannot keep one sending 64 KiB ones out for 16 times as long.
TEST_F(CrossVm, ContendedPeerTakesLargeMessagesInSlices) {
    constexpr uint32_t kMiB = 1 << 20;
    MrInfo src = a->buffer(kMiB, VRNIC_ACCESS_LOCAL_WRITE, 0x17);
    uint64_t dst_gpa;
    MrInfo dst = b->buffer(kMiB, kRemoteAll, 0, &dst_gpa);
    a->drv.post_send(qa, rdma_wr(VRNIC_WR_RDMA_WRITE, src, kMiB, dst));
    FifoLock& lb = fabric.lock(1);
    lb.lock();
    std::thread pass([&] { a->drv.dev().poll_once(); }); // waits for b
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::thread other([&] { std::lock_guard<FifoLock> g(lb); }); // waits behind it
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    lb.unlock();
    pass.join();
    other.join();
    const uint64_t slice = PeerDevice::kSharedSliceBytes;
    EXPECT_TRUE(b->drv.check_pattern(dst_gpa, slice, 0x17));
    EXPECT_EQ(0, *b->drv.host(dst_gpa + slice)); // the rest waits for later passes
    auto c = run_a();
    ASSERT_EQ(1u, c.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, c[0].status);
    EXPECT_TRUE(b->drv.check_pattern(dst_gpa, kMiB, 0x17));
}

// A GID names one VM: another VM's device cannot take it (it would receive
// what is sent to it and send with it as its source) until it is given up.
TEST_F(CrossVm, GidOfAnotherVmIsRefused) {
    EXPECT_EQ(uint32_t(VRNIC_CMD_STATUS_BUSY), b->drv.set_gid(1, kGid));
    EXPECT_EQ(0u, b->drv.set_gid(1, kGid2)); // its own, at another index
    // What a sends to kGid2 reaches b as before.
    MrInfo src = a->buffer(64, VRNIC_ACCESS_LOCAL_WRITE, 0x5a);
    uint64_t dst_gpa;
    MrInfo dst = b->buffer(64, kRemoteAll, 0, &dst_gpa);
    a->drv.post_send(qa, rdma_wr(VRNIC_WR_RDMA_WRITE, src, 64, dst));
    ASSERT_EQ(VRNIC_WC_SUCCESS, run_a().at(0).status);
    EXPECT_TRUE(b->drv.check_pattern(dst_gpa, 64, 0x5a));

    vrnic_cmd_set_gid del{}; // a deletes its GID: now b may take it
    EXPECT_EQ(0u, a->drv.cmd(VRNIC_CMD_SET_GID, &del, sizeof(del)));
    EXPECT_EQ(0u, b->drv.set_gid(2, kGid));
    EXPECT_EQ(uint32_t(VRNIC_CMD_STATUS_BUSY), a->drv.set_gid(0, kGid));
    b.reset(); // and a VM that leaves gives up its GIDs
    EXPECT_EQ(0u, a->drv.set_gid(0, kGid));
}

// UD multicast across the fabric (14.6): a datagram to a group reaches the
// members on every VM, each once, and what a VM detaches or takes away with
// it no longer receives.
class CrossVmMcast : public CrossVm {
  protected:
    static constexpr uint32_t kQkey = 0x77;
    static constexpr uint8_t kGroup[16] = {0xff, 0x0e, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x4d, 1};

    void SetUp() override {
        CrossVm::SetUp();
        ua = ud_member(*a);
        for (auto& q : ub)
            q = ud_member(*b);
        vrnic_av av{};
        memcpy(av.dgid, kGroup, 16);
        av.hop_limit = 64;
        av.vlan_id = VRNIC_VLAN_NONE;
        ah_a = a->drv.create_ah(a->pd, av);
        ah_b = b->drv.create_ah(b->pd, av);
    }
    struct Member {
        QpInfo qp;
        CqInfo cq;
        uint64_t gpa = 0;
        MrInfo mr;
    };
    // A UD QP with its own CQ and a 4 KiB receive buffer, in RTS.
    static Member ud_member(Vm& vm) {
        Member m;
        m.cq = vm.drv.create_cq(0, 8);
        QpOpts o;
        o.qp_type = VRNIC_QPT_UD;
        m.qp = vm.drv.create_qp(0, vm.pd, m.cq, m.cq, o);
        vm.drv.activate(m.qp, Path{.qp_type = VRNIC_QPT_UD, .qkey = kQkey});
        m.mr = vm.buffer(4096, VRNIC_ACCESS_LOCAL_WRITE, 0, &m.gpa);
        return m;
    }
    static uint32_t mcast(Vm& vm, uint16_t op, const Member& m) {
        vrnic_cmd_mcast c{};
        c.qpn = m.qp.qpn;
        memcpy(c.gid, kGroup, 16);
        return vm.drv.cmd(op, &c, sizeof(c));
    }
    static void post(Vm& vm, Member& m, uint64_t wr_id) {
        vm.drv.post_recv(m.qp, wr_id, {sge(m.mr, 0, 4096)});
    }
    // Posts a datagram of `len` bytes of `seed` from `from` to the group.
    static void send(Vm& vm, Member& from, uint32_t ah, uint32_t len, uint8_t seed) {
        MrInfo src = vm.buffer(len, VRNIC_ACCESS_LOCAL_WRITE, seed);
        vm.drv.post_send(from.qp, ud_send(ah, kMcastQpn, kQkey, {sge(src, 0, len)}));
    }
    // What m received: one completion of `len` bytes of `seed` from `src_qpn`
    // behind the GRH, or nothing when len is 0.
    static void expect_received(Vm& vm, Member& m, uint32_t len, uint8_t seed, uint32_t src_qpn) {
        auto c = vm.drv.poll_cq(m.cq);
        if (!len) {
            EXPECT_TRUE(c.empty());
            return;
        }
        ASSERT_EQ(1u, c.size());
        EXPECT_EQ(VRNIC_WC_SUCCESS, c[0].status);
        EXPECT_EQ(VRNIC_GRH_SIZE + len, c[0].byte_len);
        EXPECT_EQ(src_qpn, c[0].src_qp);
        EXPECT_EQ(0, memcmp(vm.drv.host(m.gpa + 24, 16), kGroup, 16));
        EXPECT_TRUE(vm.drv.check_pattern(m.gpa + VRNIC_GRH_SIZE, len, seed));
    }

    Member ua, ub[2];
    uint32_t ah_a = 0, ah_b = 0;
};

TEST_F(CrossVmMcast, DatagramReachesTheMembersOfEveryVm) {
    Member sender = ud_member(*a); // not a member
    ASSERT_EQ(0u, mcast(*a, VRNIC_CMD_ATTACH_MCAST, ua));
    for (auto& q : ub)
        ASSERT_EQ(0u, mcast(*b, VRNIC_CMD_ATTACH_MCAST, q));
    post(*a, ua, 1);
    for (auto& q : ub)
        post(*b, q, 2);
    send(*a, sender, ah_a, 900, 0x61);
    a->drv.run();
    auto sc = a->drv.poll_cq(sender.cq);
    ASSERT_EQ(1u, sc.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, sc[0].status);
    expect_received(*a, ua, 900, 0x61, sender.qp.qpn);
    for (auto& q : ub)
        expect_received(*b, q, 900, 0x61, sender.qp.qpn);
    EXPECT_EQ(0u, a->counter(&vrnic_regs::ud_no_dest_drops));

    // A member b detaches takes nothing more; the one it keeps does.
    ASSERT_EQ(0u, mcast(*b, VRNIC_CMD_DETACH_MCAST, ub[0]));
    post(*a, ua, 3);
    for (auto& q : ub)
        post(*b, q, 4);
    send(*a, sender, ah_a, 300, 0x62);
    a->drv.run();
    ASSERT_EQ(VRNIC_WC_SUCCESS, a->drv.poll_cq(sender.cq).at(0).status);
    expect_received(*a, ua, 300, 0x62, sender.qp.qpn);
    expect_received(*b, ub[0], 0, 0, 0);
    expect_received(*b, ub[1], 300, 0x62, sender.qp.qpn);

    // A VM that left takes its members with it; the sender's own still
    // receive, and with none left the datagram is a counted drop.
    b.reset();
    post(*a, ua, 5);
    send(*a, sender, ah_a, 200, 0x63);
    a->drv.run();
    ASSERT_EQ(VRNIC_WC_SUCCESS, a->drv.poll_cq(sender.cq).at(0).status);
    expect_received(*a, ua, 200, 0x63, sender.qp.qpn);
    ASSERT_EQ(0u, mcast(*a, VRNIC_CMD_DETACH_MCAST, ua));
    send(*a, sender, ah_a, 200, 0x64);
    a->drv.run();
    ASSERT_EQ(VRNIC_WC_SUCCESS, a->drv.poll_cq(sender.cq).at(0).status);
    EXPECT_EQ(1u, a->counter(&vrnic_regs::ud_no_dest_drops));
}

// A pass that finds a member's lower port busy ends there; the next one
// takes that port first and sends there, never twice to the members it
// reached already.
TEST_F(CrossVmMcast, BusyLowerPortGetsItsCopyOnceLater) {
    ASSERT_EQ(0u, mcast(*a, VRNIC_CMD_ATTACH_MCAST, ua));
    ASSERT_EQ(0u, mcast(*b, VRNIC_CMD_ATTACH_MCAST, ub[1]));
    post(*a, ua, 1);
    post(*b, ub[1], 2);
    post(*b, ub[1], 3); // a second copy would land here
    send(*b, ub[0], ah_b, 500, 0x71);
    {
        std::lock_guard<FifoLock> other(fabric.lock(0)); // port 0 is a
        EXPECT_TRUE(b->drv.dev().poll_once());
        EXPECT_EQ(0, b->drv.dev().state().want_peer);
    }
    EXPECT_TRUE(b->drv.poll_cq(ub[0].cq).empty()); // not complete yet
    expect_received(*b, ub[1], 500, 0x71, ub[0].qp.qpn);
    expect_received(*a, ua, 0, 0, 0);
    b->drv.run();
    auto sc = b->drv.poll_cq(ub[0].cq);
    ASSERT_EQ(1u, sc.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, sc[0].status);
    expect_received(*a, ua, 500, 0x71, ub[0].qp.qpn);
    expect_received(*b, ub[1], 0, 0, 0);
}

} // namespace
} // namespace vrnic::test
