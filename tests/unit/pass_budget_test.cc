// Bounded work per engine pass (device-interface.md 14.5): however many QPs
// and however large the messages, one pass moves at most the pass budget,
// large messages arrive intact across slices, other QPs are served between
// the slices, and every slice is checked against the objects as they are.
#include "fake_driver.h"
#include "requester.h"

#include <cstring>

namespace vrnic::test {
namespace {

constexpr uint64_t kMiB = 1 << 20;
constexpr DeviceParams kParams{};

class PassBudgetTest : public ::testing::Test {
  protected:
    PassBudgetTest() : drv(DeviceParams{}, 160 * kMiB) {}

    void SetUp() override {
        drv.bring_up();
        pd = drv.create_pd(0);
    }

  public:
    // A QP connected to itself, with its own CQ.
    QpInfo self_qp(CqInfo* cq) {
        *cq = drv.create_cq(0, 8);
        QpOpts o;
        o.sq_shift = 9;
        o.max_send_sge = 16;
        QpInfo q = drv.create_qp(0, pd, *cq, *cq, o);
        drv.connect(q, q.qpn);
        return q;
    }

  protected:
    uint64_t pass() {
        drv.dev().poll_once();
        return drv.dev().state().pass.used();
    }

    FakeDriver drv;
    uint32_t pd = 0;
};

// The review's flood: QPs each posting SENDs of 16 x 4 MiB SGEs, all on one
// 8 MiB MR, into 64 MiB receives.
struct Flood {
    static constexpr unsigned kQps = 48, kSends = 8;
    std::vector<QpInfo> qps;
    std::vector<CqInfo> cqs;

    void start(PassBudgetTest* t, FakeDriver& drv, uint32_t pd) {
        const uint64_t src = drv.alloc(8 * kMiB), dst = drv.alloc(64 * kMiB);
        MrInfo s = drv.reg_mr(pd, src, 8 * kMiB, VRNIC_ACCESS_LOCAL_WRITE);
        MrInfo d = drv.reg_mr(pd, dst, 64 * kMiB, VRNIC_ACCESS_LOCAL_WRITE);
        cqs.resize(kQps);
        for (unsigned i = 0; i < kQps; i++)
            qps.push_back(t->self_qp(&cqs[i]));
        // Posted after the commands, each of which runs a pass.
        for (unsigned i = 0; i < kQps; i++) {
            for (unsigned r = 0; r < kSends; r++)
                drv.post_recv(qps[i], r, {{d.iova, uint32_t(64 * kMiB), d.lkey}});
            SendWr w;
            for (unsigned g = 0; g < 16; g++)
                w.sge.push_back({s.iova + (g % 2) * 4 * kMiB, uint32_t(4 * kMiB), s.lkey});
            for (unsigned r = 0; r < kSends; r++)
                drv.post_send(qps[i], w);
        }
    }
};

TEST_F(PassBudgetTest, OnePassIsBoundedHoweverLargeTheFlood) {
    Flood f;
    f.start(this, drv, pd);
    uint64_t total = 0;
    for (int i = 0; i < 64; i++) {
        const uint64_t used = pass();
        EXPECT_LE(used, kParams.pass_bytes) << "pass " << i;
        total += used;
    }
    // Passes do work: the flood is being served, only in slices.
    EXPECT_GE(total, 32 * kParams.pass_bytes);
}

TEST_F(PassBudgetTest, FloodDoesNotStarveAnotherQp) {
    CqInfo vcq;
    QpInfo v = self_qp(&vcq);
    const uint64_t vbuf = drv.alloc(8192);
    drv.fill(vbuf, 64, 0x5a);
    MrInfo m = drv.reg_mr(pd, vbuf, 8192, VRNIC_ACCESS_ALL);
    Flood f;
    f.start(this, drv, pd);
    drv.post_recv(v, 7, {{m.iova + 4096, 64, m.lkey}});
    SendWr w;
    w.sge = {{m.iova, 64, m.lkey}};
    drv.post_send(v, w);
    // Every QP gets a slice within one round of the pass budget.
    const uint64_t round = (Flood::kQps + 1) * kParams.qp_pass_bytes;
    uint64_t moved = 0;
    std::vector<vrnic_cqe> got;
    while (got.size() < 2 && moved <= 2 * round) {
        moved += pass();
        for (const vrnic_cqe& c : drv.poll_cq(vcq))
            got.push_back(c);
    }
    ASSERT_EQ(2u, got.size());
    EXPECT_LE(moved, 2 * round) << "bytes of flood moved before the victim's message";
    for (const vrnic_cqe& c : got)
        EXPECT_EQ(VRNIC_WC_SUCCESS, c.status);
    EXPECT_EQ(0, memcmp(drv.host(vbuf, 64), drv.host(vbuf + 4096, 64), 64));
}

TEST_F(PassBudgetTest, HeartbeatAdvancesInsideALongPass) {
    Flood f;
    f.start(this, drv, pd);
    // A clock that moves a heartbeat period at every reading.
    uint64_t t = drv.clock();
    drv.dev().state().now = [&t] { return t += DeviceState::kHeartbeatPeriodNs; };
    const uint64_t before = load_acquire(&drv.regs()->heartbeat);
    drv.dev().poll_once();
    EXPECT_GE(load_acquire(&drv.regs()->heartbeat), before + 2);
}

// Large messages are moved across passes and arrive intact, whatever the
// SGE boundaries on either side.
class SlicedMessage : public PassBudgetTest {
  protected:
    static constexpr uint64_t kLen = 6 * kParams.qp_pass_bytes + 12345;

    void SetUp() override {
        PassBudgetTest::SetUp();
        q = self_qp(&cq);
        src_gpa = drv.alloc(kLen);
        dst_gpa = drv.alloc(kLen + 4096);
        drv.fill(src_gpa, kLen, 0x33);
        memset(drv.host(dst_gpa, kLen + 4096), 0xee, kLen + 4096);
        src = drv.reg_mr(pd, src_gpa, kLen, VRNIC_ACCESS_ALL);
        dst = drv.reg_mr(pd, dst_gpa, kLen + 4096, VRNIC_ACCESS_ALL);
    }
    // Runs until the CQ has `n` CQEs; returns them and counts the passes.
    std::vector<vrnic_cqe> run_until(size_t n, unsigned* passes) {
        std::vector<vrnic_cqe> got;
        for (*passes = 0; got.size() < n && *passes < 1000; ++*passes) {
            pass();
            for (const vrnic_cqe& c : drv.poll_cq(cq))
                got.push_back(c);
        }
        return got;
    }
    bool arrived() const {
        return !memcmp(drv.host(src_gpa, kLen), drv.host(dst_gpa, kLen), kLen) &&
               drv.host(dst_gpa + kLen)[0] == 0xee;
    }

    CqInfo cq;
    QpInfo q;
    uint64_t src_gpa = 0, dst_gpa = 0;
    MrInfo src, dst;
};

TEST_F(SlicedMessage, SendAcrossSgeBoundaries) {
    const uint32_t a = 1000001, b = 2345678;
    drv.post_recv(q, 9,
                  {{dst.iova, a, dst.lkey},
                   {dst.iova + a, b, dst.lkey},
                   {dst.iova + a + b, uint32_t(kLen - a - b + 4096), dst.lkey}});
    SendWr w;
    w.opcode = VRNIC_WR_SEND_WITH_IMM;
    w.imm_be = 0x12345678;
    const uint32_t s1 = 777777, s2 = 3 * 1000000;
    w.sge = {{src.iova, s1, src.lkey},
             {src.iova + s1, s2, src.lkey},
             {src.iova + s1 + s2, uint32_t(kLen - s1 - s2), src.lkey}};
    drv.post_send(q, w);
    unsigned passes = 0;
    auto got = run_until(2, &passes);
    ASSERT_EQ(2u, got.size());
    EXPECT_GT(passes, kLen / kParams.qp_pass_bytes);
    for (const vrnic_cqe& c : got) {
        EXPECT_EQ(VRNIC_WC_SUCCESS, c.status);
        EXPECT_EQ(kLen, c.byte_len);
    }
    EXPECT_TRUE(arrived());
}

TEST_F(SlicedMessage, WriteAndReadAcrossPasses) {
    drv.post_send(q, rdma_write(src, 0, kLen, dst));
    unsigned passes = 0;
    auto got = run_until(1, &passes);
    ASSERT_EQ(1u, got.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, got[0].status);
    EXPECT_GT(passes, kLen / kParams.qp_pass_bytes);
    EXPECT_TRUE(arrived());

    // And back: READ the destination into a fresh buffer.
    memset(drv.host(src_gpa, kLen), 0, kLen);
    SendWr r;
    r.opcode = VRNIC_WR_RDMA_READ;
    r.remote_addr = dst.iova;
    r.rkey = dst.rkey;
    r.sge = {{src.iova, uint32_t(kLen), src.lkey}};
    drv.post_send(q, r);
    got = run_until(1, &passes);
    ASSERT_EQ(1u, got.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, got[0].status);
    EXPECT_GT(passes, kLen / kParams.qp_pass_bytes);
    EXPECT_TRUE(drv.check_pattern(src_gpa, kLen, 0x33));
}

// An MR deregistered while a message into it is under way ends the message:
// nothing after that reaches its pages.
TEST_F(SlicedMessage, DeregisterBetweenSlicesStopsTheMessage) {
    drv.post_send(q, rdma_write(src, 0, kLen, dst));
    pass();
    ASSERT_TRUE(drv.poll_cq(cq).empty()) << "the message took one pass";
    vrnic_cmd_handle h{};
    h.handle = dst.handle;
    ASSERT_EQ(0u, drv.cmd(VRNIC_CMD_DEREG_MR, &h, sizeof(h)));
    memset(drv.host(dst_gpa, kLen), 0xee, kLen);
    unsigned passes = 0;
    auto got = run_until(1, &passes);
    ASSERT_EQ(1u, got.size());
    EXPECT_EQ(VRNIC_WC_REM_ACCESS_ERR, got[0].status);
    const uint8_t* p = drv.host(dst_gpa, kLen);
    for (uint64_t i = 0; i < kLen; i += 4096)
        ASSERT_EQ(0xee, p[i]) << "byte " << i << " written after DEREG_MR";
}

// A reset request stops the engine at the next QP boundary, and the reset
// that follows forgets the message: its remaining bytes never move.
TEST_F(SlicedMessage, ResetRequestStopsBetweenSlices) {
    std::vector<QpInfo> more;
    std::vector<CqInfo> cqs(4);
    for (CqInfo& c : cqs)
        more.push_back(self_qp(&c));
    drv.post_send(q, rdma_write(src, 0, kLen, dst));
    for (QpInfo& m : more)
        drv.post_send(m, rdma_write(src, 0, kLen, dst));
    pass();
    ASSERT_TRUE(drv.poll_cq(cq).empty()) << "the message took one pass";
    memset(drv.host(dst_gpa, kLen), 0xee, kLen);
    vrnic_regs* r = drv.regs();
    store_release(&r->driver_ctrl, 0u);
    store_release(&r->reset_req, load_acquire(&r->reset_req) + 1);
    DeviceState& d = drv.dev().state();
    engine_poll(d);
    EXPECT_LE(d.pass.used(), kParams.qp_pass_bytes) << "more than one QP after the request";
    drv.dev().poll_once();
    ASSERT_EQ(load_acquire(&r->reset_req), load_acquire(&r->reset_ack));
    for (int i = 0; i < 8; i++)
        drv.dev().poll_once();
    const uint8_t* p = drv.host(dst_gpa, kLen);
    uint64_t written = 0;
    for (uint64_t i = 0; i < kLen; i++)
        written += p[i] != 0xee;
    EXPECT_LE(written, kParams.qp_pass_bytes);
}

// A datagram is never split: one that does not fit what the visit has left
// waits for the next visit, and the budget never goes below zero.
TEST(UdPassBudget, DatagramThatDoesNotFitWaitsForTheNextVisit) {
    DeviceParams p;
    p.qp_pass_bytes = 6000;
    FakeDriver drv(p, 16 * kMiB);
    drv.bring_up();
    const uint32_t pd = drv.create_pd(0);
    CqInfo cq = drv.create_cq(0, 8);
    QpOpts o;
    o.qp_type = VRNIC_QPT_UD;
    QpInfo a = drv.create_qp(0, pd, cq, cq, o), b = drv.create_qp(0, pd, cq, cq, o);
    for (const QpInfo& q : {a, b})
        drv.activate(q, Path{.qp_type = VRNIC_QPT_UD, .qkey = 7});
    vrnic_av av{};
    memcpy(av.dgid, kGid, sizeof(av.dgid));
    av.vlan_id = VRNIC_VLAN_NONE;
    const uint32_t ah = drv.create_ah(pd, av);
    const uint64_t src = drv.alloc(4096), dst = drv.alloc(4 * 8192);
    drv.fill(src, 4096, 0x3c);
    MrInfo s = drv.reg_mr(pd, src, 4096, VRNIC_ACCESS_LOCAL_WRITE);
    MrInfo d = drv.reg_mr(pd, dst, 4 * 8192, VRNIC_ACCESS_LOCAL_WRITE);
    for (uint32_t i = 0; i < 4; i++)
        drv.post_recv(b, i, {{d.iova + i * 8192, 8192, d.lkey}});
    for (uint32_t i = 0; i < 4; i++)
        drv.post_send(a, ud_send(ah, b.qpn, 7, {{s.iova, 4096, s.lkey}}));
    unsigned passes = 0;
    std::vector<vrnic_cqe> done;
    while (done.size() < 8 && passes < 20) {
        drv.dev().poll_once();
        passes++;
        EXPECT_LE(drv.dev().state().pass.used(), p.qp_pass_bytes) << "pass " << passes;
        for (const vrnic_cqe& c : drv.poll_cq(cq))
            done.push_back(c);
    }
    ASSERT_EQ(8u, done.size());
    EXPECT_GE(passes, 4u);
    for (const vrnic_cqe& c : done)
        EXPECT_EQ(VRNIC_WC_SUCCESS, c.status);
    for (uint32_t i = 0; i < 4; i++)
        EXPECT_EQ(0, memcmp(drv.host(src, 4096), drv.host(dst + i * 8192 + VRNIC_GRH_SIZE, 4096),
                            4096))
            << "datagram " << i;
}

} // namespace
} // namespace vrnic::test
