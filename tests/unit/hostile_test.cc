// A hostile guest: doorbells of other contexts, impossible indices, garbage
// WQEs and commands, CQ overflow. The model must answer with error
// completions, error QPs or failed commands, never crash, and never touch
// memory outside what was registered.
#include "rc_fixture.h"

#include "completion.h"
#include "qp_type.h"
#include "shared_word.h"

#include <cstring>
#include <random>

namespace vrnic::test {
namespace {

TEST(Hostile, DoorbellOfAnotherContextMovesNothing) {
    FakeDriver drv;
    drv.bring_up();
    uint32_t p1, p2;
    uint32_t u1 = drv.alloc_uctx(&p1);
    uint32_t u2 = drv.alloc_uctx(&p2);
    uint32_t pd1 = drv.create_pd(u1);
    CqInfo cq1 = drv.create_cq(u1);
    QpInfo q1 = drv.create_qp(u1, pd1, cq1, cq1);
    drv.connect(q1, q1.qpn); // loopback
    uint32_t pd2 = drv.create_pd(u2);
    CqInfo cq2 = drv.create_cq(u2);
    QpInfo q2 = drv.create_qp(u2, pd2, cq2, cq2);
    drv.connect(q2, q2.qpn);
    // Same slot numbers in two pages: u1 and u2 got slot 1 and 2 each.
    ASSERT_EQ(q1.db_slot, q2.db_slot);
    uint64_t g = drv.alloc(4096);
    MrInfo m1 = drv.reg_mr(pd1, g, 4096, VRNIC_ACCESS_ALL);
    SendWr w;
    w.opcode = VRNIC_WR_RDMA_WRITE;
    w.remote_addr = m1.iova + 64;
    w.rkey = m1.rkey;
    w.sge = {{m1.iova, 64, m1.lkey}};
    // u2's process writes q1's WQE and bumps *its own* slot with q1's number.
    QpInfo forged = q1;
    forged.db_page = p2;
    drv.post_send(forged, w);
    drv.run();
    EXPECT_TRUE(drv.poll_cq(cq1).empty()); // q1 never saw it
    EXPECT_EQ(0, drv.host(g + 64)[0]);
    // (q2 consumed one all-zero WQE of its own ring: an unsignaled empty
    // WRITE to itself, harmless.)
    EXPECT_TRUE(drv.poll_cq(cq2).empty());
    // And u2's QP cannot use u1's keys even when it names them.
    QpInfo q3 = drv.create_qp(u2, pd2, cq2, cq2);
    drv.connect(q3, q3.qpn);
    drv.post_send(q3, w);
    drv.run();
    auto c3 = drv.poll_cq(cq2);
    ASSERT_EQ(1u, c3.size());
    EXPECT_EQ(VRNIC_WC_LOC_PROT_ERR, c3[0].status);
    EXPECT_EQ(0, drv.host(g + 64)[0]);
}

TEST(Hostile, TwoProcessesTalkOnlyThroughRkeys) {
    FakeDriver drv;
    drv.bring_up();
    uint32_t u1 = drv.alloc_uctx(), u2 = drv.alloc_uctx();
    uint32_t pd1 = drv.create_pd(u1), pd2 = drv.create_pd(u2);
    CqInfo cq1 = drv.create_cq(u1), cq2 = drv.create_cq(u2);
    QpInfo q1 = drv.create_qp(u1, pd1, cq1, cq1), q2 = drv.create_qp(u2, pd2, cq2, cq2);
    drv.connect_pair(q1, q2);
    uint64_t g1 = drv.alloc(4096), g2 = drv.alloc(4096);
    drv.fill(g1, 4096, 0x42);
    MrInfo m1 = drv.reg_mr(pd1, g1, 4096, VRNIC_ACCESS_LOCAL_WRITE);
    MrInfo m2 = drv.reg_mr(pd2, g2, 4096, VRNIC_ACCESS_ALL);
    SendWr w;
    w.opcode = VRNIC_WR_RDMA_WRITE;
    w.remote_addr = m2.iova;
    w.rkey = m2.rkey;
    w.sge = {{m1.iova, 4096, m1.lkey}};
    drv.post_send(q1, w);
    drv.run();
    EXPECT_EQ(VRNIC_WC_SUCCESS, drv.poll_cq(cq1).at(0).status);
    EXPECT_TRUE(drv.check_pattern(g2, 4096, 0x42));
    // The other process's MR as a *local* buffer is refused.
    w.sge = {{m2.iova, 64, m2.lkey}};
    drv.post_send(q1, w);
    drv.run();
    EXPECT_EQ(VRNIC_WC_LOC_PROT_ERR, drv.poll_cq(cq1).at(0).status);
}

class HostileIdx : public RcPair {};

TEST_F(HostileIdx, SqProducerOutOfRangeIsQpFatal) {
    uint64_t g;
    MrInfo m = buffer(4096, VRNIC_ACCESS_ALL, 1, &g);
    SendWr w = rdma_write(m, 2048, 8, m);
    drv.post_send(a, w);
    drv.run();
    ASSERT_EQ(1u, drv.poll_cq(a_cq).size());
    drv.take_async_events();
    // pi - ci = 65 > depth 64.
    store_release(&drv.slot(a.db_page, a.db_slot)->qp.sq_pi, a.sq_pi + 65);
    drv.run();
    EXPECT_TRUE(drv.poll_cq(a_cq).empty()); // nothing executed, nothing flushed
    EXPECT_EQ(VRNIC_QPS_ERR, drv.query_qp(a).qp_state);
    auto ev = drv.take_async_events();
    ASSERT_EQ(1u, ev.size());
    EXPECT_EQ(VRNIC_EQE_QP_FATAL, ev[0].type);
    EXPECT_EQ(a.qpn, ev[0].obj);
    // Once the index is valid again, [ci, pi) is flushed.
    a.sq_pi += 3;
    drv.publish(a);
    drv.run();
    auto c = drv.poll_cq(a_cq);
    ASSERT_EQ(3u, c.size());
    for (auto& e : c)
        EXPECT_EQ(VRNIC_WC_WR_FLUSH_ERR, e.status);
}

TEST_F(HostileIdx, RqProducerOutOfRangeIsResponderFatal) {
    MrInfo m = buffer(4096, VRNIC_ACCESS_ALL, 1);
    store_release(&drv.slot(b.db_page, b.db_slot)->qp.rq_pi, 0x80000000u);
    drv.take_async_events();
    SendWr s;
    s.opcode = VRNIC_WR_SEND;
    s.sge = {{m.iova, 8, m.lkey}};
    drv.post_send(a, s);
    drv.run();
    auto c = drv.poll_cq(a_cq);
    ASSERT_EQ(1u, c.size());
    EXPECT_EQ(VRNIC_WC_RETRY_EXC_ERR, c[0].status); // the responder died: no answer
    EXPECT_EQ(VRNIC_QPS_ERR, drv.query_qp(b).qp_state);
    bool fatal = false;
    for (auto& e : drv.take_async_events())
        fatal |= e.type == VRNIC_EQE_QP_FATAL && e.obj == b.qpn;
    EXPECT_TRUE(fatal);
}

TEST_F(HostileIdx, CqOverflowIsCqErrorAndQpFatal) {
    // A 4-entry CQ that nobody polls.
    CqInfo tiny = drv.create_cq(0, 2);
    QpInfo c = drv.create_qp(0, pd, tiny, tiny);
    drv.connect(c, c.qpn);
    MrInfo m = buffer(4096, VRNIC_ACCESS_ALL, 1);
    drv.take_async_events();
    for (int i = 0; i < 6; i++) {
        SendWr w;
        w.wr_id = i;
        w.opcode = VRNIC_WR_RDMA_WRITE;
        w.remote_addr = m.iova;
        w.rkey = m.rkey;
        w.sge = {{m.iova + 64, 8, m.lkey}};
        drv.post_send(c, w);
    }
    drv.run();
    auto ev = drv.take_async_events();
    ASSERT_EQ(2u, ev.size());
    EXPECT_EQ(VRNIC_EQE_CQ_ERROR, ev[0].type);
    EXPECT_EQ(tiny.cqn, ev[0].obj);
    EXPECT_EQ(VRNIC_EQE_QP_FATAL, ev[1].type);
    EXPECT_EQ(c.qpn, ev[1].obj);
    EXPECT_EQ(VRNIC_QPS_ERR, drv.query_qp(c).qp_state);
    // The four CQEs that fit are intact and in order; nothing overwrote them.
    auto cqes = drv.poll_cq(tiny);
    ASSERT_EQ(4u, cqes.size());
    for (int i = 0; i < 4; i++)
        EXPECT_EQ(uint64_t(i), cqes[i].wr_id);
    // The CQ stays in error even after it was drained.
    drv.post_send(c, SendWr{});
    drv.run();
    EXPECT_TRUE(drv.poll_cq(tiny).empty());
}

TEST_F(HostileIdx, ImpossibleCqConsumerIndexIsCqError) {
    store_release(&drv.slot(a_cq.db_page, a_cq.db_slot)->cq.ci, 1000u); // ahead of pi
    drv.take_async_events();
    MrInfo m = buffer(64, VRNIC_ACCESS_ALL);
    SendWr w;
    w.opcode = VRNIC_WR_RDMA_WRITE;
    w.remote_addr = m.iova;
    w.rkey = m.rkey;
    drv.post_send(a, w);
    drv.run();
    auto ev = drv.take_async_events();
    ASSERT_GE(ev.size(), 1u);
    EXPECT_EQ(VRNIC_EQE_CQ_ERROR, ev[0].type);
}

TEST(Hostile, AsyncEqOverflowIsCountedNotOverwritten) {
    FakeDriver drv;
    drv.bring_up(4, 4); // 16-entry async EQ
    uint32_t pd = drv.create_pd(0);
    CqInfo cq = drv.create_cq(0, 6);
    std::vector<QpInfo> qps;
    for (int i = 0; i < 20; i++) {
        qps.push_back(drv.create_qp(0, pd, cq, cq));
        drv.connect(qps.back(), qps.back().qpn);
    }
    // 20 QP_FATAL events, nobody consumes the EQ.
    for (auto& q : qps)
        store_release(&drv.slot(1, q.db_slot)->qp.sq_pi, 1000u);
    drv.run();
    EXPECT_EQ(4u, drv.regs()->eq_overflow);
    auto ev = drv.take_async_events();
    ASSERT_EQ(16u, ev.size());
    for (int i = 0; i < 16; i++)
        EXPECT_EQ(qps[i].qpn, ev[i].obj);
}

// Random but structurally plausible WQEs: keys drawn from real and bogus
// ones, addresses near real buffers. Checks that nothing outside the MRs
// changes and that every WQE completes exactly once or is flushed.
TEST(Hostile, GarbageWqesNeverEscapeTheirMrs) {
    std::mt19937_64 rng(12345);
    for (int round = 0; round < 20; round++) {
        FakeDriver drv;
        drv.bring_up();
        uint32_t pd = drv.create_pd(0);
        CqInfo cq = drv.create_cq(0, 12);
        QpOpts o;
        o.sq_shift = 9; // room for up to 29 SGEs of garbage
        QpInfo a = drv.create_qp(0, pd, cq, cq, o);
        QpInfo b = drv.create_qp(0, pd, cq, cq, o);
        drv.connect_pair(a, b);
        // Canary pages around two MRs.
        const uint64_t base = drv.alloc(6 * 4096);
        drv.fill(base, 6 * 4096, 0xee);
        const uint32_t acc[2] = {VRNIC_ACCESS_ALL, VRNIC_ACCESS_LOCAL_WRITE};
        MrInfo m[2] = {drv.reg_mr(pd, base + 4096 + 100, 3000, acc[0]),
                       drv.reg_mr(pd, base + 3 * 4096 + 7, 5000, acc[1])};
        std::vector<uint8_t> before(drv.host(base), drv.host(base) + 6 * 4096);
        auto pick_key = [&] {
            switch (rng() % 4) {
            case 0:
                return m[0].lkey;
            case 1:
                return m[1].lkey;
            case 2:
                return uint32_t(rng());
            default:
                return uint32_t(0);
            }
        };
        auto pick_addr = [&](const MrInfo& mr) { return mr.iova + (rng() % 6000) - 500; };
        for (int n = 0; n < 60; n++) {
            const uint32_t stride = 1u << a.sq_shift;
            uint8_t* w = drv.host(a.sq + uint64_t(a.sq_pi & 63) * stride, stride);
            for (uint32_t i = 0; i < stride; i++)
                w[i] = static_cast<uint8_t>(rng());
            if (rng() % 4) { // mostly plausible headers
                auto* h = reinterpret_cast<vrnic_send_wqe_hdr*>(w);
                h->opcode = rng() % 8;
                h->flags = rng() % 16;
                h->num_sge = rng() % 6;
                h->rdma.rkey = pick_key();
                h->rdma.remote_addr = pick_addr(m[rng() % 2]);
                auto* s = reinterpret_cast<vrnic_sge*>(w + 48);
                for (int i = 0; i < 6; i++) {
                    s[i].lkey = pick_key();
                    s[i].addr = pick_addr(m[rng() % 2]);
                    s[i].length = rng() % 3 ? uint32_t(rng() % 3000) : uint32_t(rng());
                }
            }
            a.sq_pi++;
            // Receives of garbage for SENDs to land in (or not).
            uint8_t* r = drv.host(b.rq + uint64_t(b.rq_pi & 63) * 64, 64);
            for (int i = 0; i < 64; i++)
                r[i] = static_cast<uint8_t>(rng());
            r[8] = rng() % 4;
            auto* rs = reinterpret_cast<vrnic_sge*>(r + 16);
            for (int i = 0; i < 3; i++) {
                rs[i].lkey = pick_key();
                rs[i].addr = pick_addr(m[rng() % 2]);
                rs[i].length = rng() % 4000;
            }
            b.rq_pi++;
            drv.publish(a);
            drv.publish(b);
            drv.clock() += 1'000'000'000; // let RNR waits expire
            drv.run();
            drv.poll_cq(cq);
            if (drv.query_qp(a).qp_state == VRNIC_QPS_ERR) {
                // Start over, as an application would after an error.
                vrnic_qp_attr x{};
                x.qp_state = VRNIC_QPS_RESET;
                drv.modify_qp(a, VRNIC_QP_ATTR_STATE, x);
                drv.modify_qp(b, VRNIC_QP_ATTR_STATE, x);
                drv.connect_pair(a, b);
            }
        }
        // Outside the two MRs, not one byte changed.
        const uint8_t* now = drv.host(base);
        for (uint64_t off = 0; off < 6 * 4096; off++) {
            uint64_t gpa = base + off;
            bool in0 = gpa >= m[0].iova && gpa < m[0].iova + m[0].len;
            bool in1 = gpa >= m[1].iova && gpa < m[1].iova + m[1].len;
            if (!in0 && !in1) {
                ASSERT_EQ(before[off], now[off]) << "round " << round << " offset " << off;
            }
            // The local-write-only MR is never a remote target, and nothing
            // but receives and READ/atomic results may land in it.
        }
    }
}

TEST(Hostile, RandomBytesInTheWholeSqRing) {
    std::mt19937_64 rng(999);
    FakeDriver drv;
    drv.bring_up();
    uint32_t pd = drv.create_pd(0);
    CqInfo cq = drv.create_cq(0, 12);
    QpOpts o;
    o.sq_shift = 11;
    o.rq_shift = 11;
    o.max_send_sge = 16;
    o.max_recv_sge = 16;
    o.max_inline = 256;
    QpInfo a = drv.create_qp(0, pd, cq, cq, o);
    drv.connect(a, a.qpn);
    uint64_t g = drv.alloc(1 << 16);
    drv.reg_mr(pd, g, 1 << 16, VRNIC_ACCESS_ALL);
    for (int round = 0; round < 50; round++) {
        uint8_t* ring = drv.host(a.sq, uint64_t(64) << 11);
        for (size_t i = 0; i < (size_t(64) << 11); i++)
            ring[i] = static_cast<uint8_t>(rng());
        uint8_t* rq = drv.host(a.rq, uint64_t(64) << 11);
        for (size_t i = 0; i < (size_t(64) << 11); i++)
            rq[i] = static_cast<uint8_t>(rng());
        a.sq_pi += rng() % 65;
        a.rq_pi += rng() % 65;
        drv.publish(a);
        drv.clock() += 1'000'000'000;
        drv.run();
        drv.poll_cq(cq);
        vrnic_qp_attr x{};
        x.qp_state = VRNIC_QPS_RESET;
        ASSERT_EQ(0u, drv.modify_qp(a, VRNIC_QP_ATTR_STATE, x));
        drv.connect(a, a.qpn);
    }
}

// Two processes in one guest: a bystander's connected pair that sends and
// writes checked bytes, and a hostile one's pair and SRQ in another
// context.
struct TwoProcesses : ::testing::Test {
    void SetUp() override {
        drv.bring_up();
        bad_u = drv.alloc_uctx(&bad_page);
        good_u = drv.alloc_uctx(&good_page);
        bad_pd = drv.create_pd(bad_u);
        good_pd = drv.create_pd(good_u);
        bad_cq = drv.create_cq(bad_u, 8);
        good_cq = drv.create_cq(good_u, 8);
        bad_srq = drv.create_srq(bad_u, bad_pd, 4, 6, 3);
        bad_a = drv.create_qp(bad_u, bad_pd, bad_cq, bad_cq);
        bad_b = drv.create_qp(bad_u, bad_pd, bad_cq, bad_cq);
        QpOpts on_srq;
        on_srq.srqn = bad_srq.srqn;
        bad_c = drv.create_qp(bad_u, bad_pd, bad_cq, bad_cq, on_srq);
        drv.connect_pair(bad_a, bad_b);
        drv.connect(bad_c, bad_c.qpn);
        good_a = drv.create_qp(good_u, good_pd, good_cq, good_cq);
        good_b = drv.create_qp(good_u, good_pd, good_cq, good_cq);
        drv.connect_pair(good_a, good_b);
        bad_gpa = drv.alloc(8192);
        bad_mr = drv.reg_mr(bad_pd, bad_gpa, 8192, VRNIC_ACCESS_ALL);
        good_gpa = drv.alloc(3 * 4096);
        good_mr = drv.reg_mr(good_pd, good_gpa, 3 * 4096, VRNIC_ACCESS_ALL);
    }
    // One SEND and one WRITE of the bystander, pattern `seed`; every byte
    // and completion checked.
    void bystander_round(uint8_t seed) {
        drv.fill(good_gpa, 4096, seed);
        std::memset(drv.host(good_gpa + 4096, 8192), 0, 8192);
        drv.post_recv(good_b, seed, {{good_mr.iova + 4096, 4096, good_mr.lkey}});
        SendWr s;
        s.wr_id = 1000 + seed;
        s.sge = {{good_mr.iova, 1000u + seed, good_mr.lkey}};
        drv.post_send(good_a, s);
        SendWr w = rdma_write(good_mr, 0, 4096, good_mr, 8192);
        w.wr_id = 2000 + seed;
        drv.post_send(good_a, w);
        drv.run();
        auto c = drv.poll_cq(good_cq);
        ASSERT_EQ(3u, c.size()) << int(seed);
        for (const auto& e : c)
            ASSERT_EQ(VRNIC_WC_SUCCESS, e.status) << int(seed);
        ASSERT_EQ(0, memcmp(drv.host(good_gpa + 4096, 1000 + seed), drv.host(good_gpa), 1000 + seed));
        ASSERT_EQ(0, drv.host(good_gpa + 4096 + 1000 + seed)[0]);
        ASSERT_TRUE(drv.check_pattern(good_gpa + 8192, 4096, seed)) << int(seed);
        ASSERT_EQ(VRNIC_QPS_RTS, drv.query_qp(good_a).qp_state);
        ASSERT_EQ(VRNIC_QPS_RTS, drv.query_qp(good_b).qp_state);
    }
    void reset_bad() {
        vrnic_qp_attr x{};
        x.qp_state = VRNIC_QPS_RESET;
        for (QpInfo* q : {&bad_a, &bad_b, &bad_c})
            ASSERT_EQ(0u, drv.modify_qp(*q, VRNIC_QP_ATTR_STATE, x));
        drv.connect_pair(bad_a, bad_b);
        drv.connect(bad_c, bad_c.qpn);
        drv.poll_cq(bad_cq, 256);
    }

    FakeDriver drv;
    uint32_t bad_u = 0, good_u = 0, bad_page = 0, good_page = 0, bad_pd = 0, good_pd = 0;
    CqInfo bad_cq, good_cq;
    SrqInfo bad_srq;
    QpInfo bad_a, bad_b, bad_c, good_a, good_b;
    uint64_t bad_gpa = 0, good_gpa = 0;
    MrInfo bad_mr, good_mr;
};

// A UD-format SEND (an AH, a remote QPN, a qkey) on an RC QP fails there;
// it is neither sent to the QP's peer nor to the QPN it names.
TEST_F(TwoProcesses, UdFormatWqeOnRcFailsOnlyItsQp) {
    drv.post_recv(bad_b, 7, {{bad_mr.iova, 4096, bad_mr.lkey}});
    drv.post_recv(good_b, 8, {{good_mr.iova, 4096, good_mr.lkey}});
    std::memset(drv.host(good_gpa, 4096), 0x11, 4096);
    SendWr w = ud_send(1, good_b.qpn, 0x11111111, {{bad_mr.iova + 4096, 64, bad_mr.lkey}});
    drv.fill(bad_gpa + 4096, 64, 3);
    drv.post_send(bad_a, w);
    drv.run();
    auto c = drv.poll_cq(bad_cq);
    ASSERT_EQ(1u, c.size()); // the send in error; bad_b's receive stays posted
    EXPECT_EQ(bad_a.qpn, c[0].qpn);
    EXPECT_EQ(VRNIC_WC_LOC_QP_OP_ERR, c[0].status);
    EXPECT_EQ(kVeForeignWqe, c[0].vendor_err);
    EXPECT_EQ(VRNIC_QPS_ERR, drv.query_qp(bad_a).qp_state);
    EXPECT_TRUE(drv.poll_cq(good_cq).empty()); // nothing arrived at the bystander
    EXPECT_EQ(0x11, drv.host(good_gpa)[0]);
    EXPECT_EQ(0, drv.host(bad_gpa)[0]); // nor at the QP's own peer
    // The bystander's receive is still posted: it takes the next message.
    SendWr s;
    s.sge = {{good_mr.iova + 4096, 100, good_mr.lkey}};
    drv.fill(good_gpa + 4096, 100, 9);
    drv.post_send(good_a, s);
    drv.run();
    auto g = drv.poll_cq(good_cq);
    ASSERT_EQ(2u, g.size());
    for (const auto& e : g)
        EXPECT_EQ(VRNIC_WC_SUCCESS, e.status);
    EXPECT_TRUE(drv.check_pattern(good_gpa, 100, 9));
    bystander_round(1);
}

// The hostile process writes garbage into every ring and doorbell word it
// has mapped (SQ, RQ and SRQ WQEs and producer indices, its CQ's consumer
// index and arm word) between the bystander's rounds: only its own QPs,
// SRQ and CQ fail; the bystander's data arrives intact every round.
TEST_F(TwoProcesses, GarbageInOwnRingsBreaksOnlyOwnQps) {
    std::mt19937_64 rng(777);
    bystander_round(0);
    for (int round = 1; round <= 200; round++) {
        // A plausible WQE at the head, naming the bystander's keys and
        // buffers (local or remote) as often as its own.
        const std::vector<uint8_t> snap(drv.host(good_gpa), drv.host(good_gpa) + 3 * 4096);
        auto* h = reinterpret_cast<vrnic_send_wqe_hdr*>(drv.host(
            bad_a.sq + (uint64_t(bad_a.sq_pi & ((1u << bad_a.sq_log) - 1)) << bad_a.sq_shift), 64));
        std::memset(h, 0, 64);
        h->opcode = uint8_t(rng() % 7);
        h->flags = VRNIC_WQE_F_SIGNALED;
        h->num_sge = 1;
        auto* sg = reinterpret_cast<vrnic_sge*>(reinterpret_cast<uint8_t*>(h) + 48);
        const bool local_good = rng() % 2, remote_good = rng() % 2;
        sg->lkey = local_good ? good_mr.lkey : bad_mr.lkey;
        sg->addr = (local_good ? good_mr.iova : bad_mr.iova) + rng() % 2048;
        sg->length = h->opcode >= VRNIC_WR_ATOMIC_CMP_AND_SWP ? 8 : uint32_t(rng() % 2048);
        if (h->opcode >= VRNIC_WR_ATOMIC_CMP_AND_SWP)
            sg->addr &= ~uint64_t(7);
        if (!is_send_opcode(h->opcode)) {
            h->rdma.rkey = remote_good ? good_mr.rkey : bad_mr.rkey;
            h->rdma.remote_addr = ((remote_good ? good_mr.iova : bad_mr.iova) + rng() % 2048) &
                                  ~uint64_t(7);
        }
        drv.post_recv(bad_b, 1, {{bad_mr.iova + 4096, 4096, bad_mr.lkey}});
        bad_a.sq_pi++;
        drv.publish(bad_a);
        drv.run();
        ASSERT_EQ(0, memcmp(snap.data(), drv.host(good_gpa), snap.size())) << "round " << round;
        // Then garbage everywhere.
        for (const QpInfo* q : {&bad_a, &bad_b, &bad_c}) {
            uint8_t* sq = drv.host(q->sq, uint64_t(1) << (q->sq_log + q->sq_shift));
            for (size_t i = 0; i < (size_t(1) << (q->sq_log + q->sq_shift)); i++)
                sq[i] = static_cast<uint8_t>(rng());
            if (q->rq) {
                uint8_t* rq = drv.host(q->rq, uint64_t(1) << (q->rq_log + q->rq_shift));
                for (size_t i = 0; i < (size_t(1) << (q->rq_log + q->rq_shift)); i++)
                    rq[i] = static_cast<uint8_t>(rng());
            }
        }
        uint8_t* srq = drv.host(bad_srq.ring, 16 * 64);
        for (int i = 0; i < 16 * 64; i++)
            srq[i] = static_cast<uint8_t>(rng());
        // Doorbell words: random indices, then the words themselves.
        vrnic_db_slot* sa = drv.slot(bad_page, bad_a.db_slot);
        store_release(&sa->qp.sq_pi, uint32_t(bad_a.sq_pi + rng() % 80));
        store_release(&sa->qp.rq_pi, uint32_t(rng()));
        vrnic_db_slot* sb = drv.slot(bad_page, bad_b.db_slot);
        store_release(&sb->qp.rq_pi, uint32_t(bad_b.rq_pi + rng() % 20));
        store_release(&drv.slot(bad_page, bad_c.db_slot)->raw, uint64_t(rng()));
        store_release(&drv.slot(bad_page, bad_srq.db_slot)->srq.pi,
                      uint32_t(rng() % 2 ? rng() : rng() % 20));
        store_release(&drv.slot(bad_page, bad_cq.db_slot)->raw, uint64_t(rng()));
        const std::vector<uint8_t> before(drv.host(good_gpa), drv.host(good_gpa) + 3 * 4096);
        drv.clock() += 1'000'000'000; // let RNR waits expire
        drv.run();
        ASSERT_EQ(0, memcmp(before.data(), drv.host(good_gpa), before.size())) << round;
        bystander_round(uint8_t(round));
        // The hostile process starts over, as an application would.
        bad_a.sq_pi = load_acquire(&sa->qp.sq_pi);
        reset_bad();
    }
    // The bystander's buffers were never touched by the hostile QPs.
    bystander_round(99);
}

TEST(Hostile, RandomCommandsAlwaysComplete) {
    std::mt19937_64 rng(4242);
    FakeDriver drv;
    drv.bring_up();
    for (int i = 0; i < 2000; i++) {
        vrnic_cmd c{};
        c.hdr.opcode = static_cast<uint16_t>(rng() % 0x1a);
        if (rng() % 8 == 0)
            c.hdr.flags = static_cast<uint16_t>(rng());
        size_t n = rng() % 113;
        for (size_t k = 0; k < n; k++)
            c.payload[k] = rng() % 3 ? uint8_t(rng() % 4) : uint8_t(rng());
        uint32_t st = drv.cmd(c); // asserts that the command completed
        EXPECT_LE(st, uint32_t(VRNIC_CMD_STATUS_INTERNAL));
    }
    EXPECT_FALSE(drv.regs()->device_status & VRNIC_DEV_STATUS_FATAL);
}

} // namespace
} // namespace vrnic::test
