// RC and UC over the wire (qemu/wire_requester.cc, wire_responder.cc): two
// devices with no fabric between them, each the other's station beyond the
// uplink. The test carries their RoCE v2 frames, and can lose, repeat or
// reorder them; the bytes that arrive are checked.
#include "requester.h"
#include "roce_packet.h"
#include "test_device.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <random>
#include <vector>

namespace vrnic::test {
namespace {

using Frame = std::vector<uint8_t>;

// One host: a device whose uplink's frames the test carries.
struct Station : TestDevice {
    explicit Station(const uint8_t* gid) : TestDevice(gid) {
        drv.dev().set_wire([this](const uint8_t* f, uint32_t n) {
            out.emplace_back(f, f + n);
            return true;
        });
    }
    std::deque<Frame> out;
};

roce::Packet parsed(const Frame& f) {
    roce::Packet p;
    EXPECT_EQ(roce::Drop::none, roce::parse(f.data(), uint32_t(f.size()), &p));
    return p;
}

// What happens to a frame on its way: delivered, dropped, or delivered
// twice; a held frame goes after the next one.
enum class Fate { pass, drop, dup, hold };
using Link = std::function<Fate(const Frame&)>;

class WireRc : public ::testing::Test {
  protected:
    void SetUp() override { connect(VRNIC_QPT_RC); }
    void connect(uint8_t type, Path pa = {}, Path pb = {}) {
        qa = a.drv.create_qp(0, a.pd, a.cq, a.cq, opts(type));
        qb = b.drv.create_qp(0, b.pd, b.cq, b.cq, opts(type));
        pa.qp_type = pb.qp_type = type;
        pa.mtu = pb.mtu = VRNIC_MTU_1024;
        pa.dest_qpn = qb.qpn;
        pa.dgid = kGid2;
        pb.dest_qpn = qa.qpn;
        pb.dgid = kGid;
        a.drv.activate(qa, pa);
        b.drv.activate(qb, pb);
    }
    static QpOpts opts(uint8_t type) {
        QpOpts o;
        o.qp_type = type;
        return o;
    }
    // Carries frames between the two until both are quiet, moving both
    // clocks to the next timer when only timers are left.
    void pump(const Link& link = {}, unsigned rounds = 20000) {
        for (unsigned i = 0; i < rounds; i++) {
            a.drv.run();
            b.drv.run();
            if (a.out.empty() && b.out.empty() && held_.empty()) {
                const uint64_t t = std::min(engine_next_deadline(a.drv.dev().state()),
                                            engine_next_deadline(b.drv.dev().state()));
                if (t == UINT64_MAX)
                    return;
                a.drv.clock() = std::max(a.drv.clock(), t);
                b.drv.clock() = std::max(b.drv.clock(), t);
                continue;
            }
            carry(a, b, link);
            carry(b, a, link);
            if (a.out.empty() && b.out.empty()) // a frame held at a burst's end
                release_held();
        }
        FAIL() << "the stations never went quiet";
    }
    void carry(Station& from, Station& to, const Link& link) {
        while (!from.out.empty()) {
            Frame f = std::move(from.out.front());
            from.out.pop_front();
            switch (link ? link(f) : Fate::pass) {
            case Fate::drop:
                continue;
            case Fate::dup:
                arrive(to, f);
                break;
            case Fate::hold:
                held_.push_back({&to, std::move(f)});
                continue;
            case Fate::pass:
                break;
            }
            arrive(to, f);
            release_held();
        }
    }
    void release_held() {
        auto held = std::move(held_);
        held_.clear();
        for (auto& [to, f] : held)
            arrive(*to, f);
    }
    static void arrive(Station& to, const Frame& f) {
        to.drv.dev().deliver_frame(f.data(), uint32_t(f.size()), true);
    }
    static void arrive(Station& to, const roce::Packet& p) {
        Frame f(roce::frame_bytes(p));
        roce::build(p, f.data());
        arrive(to, f);
    }
    // a's first request for the WQE it was given, taken off its way to b.
    roce::Packet first_request() {
        a.drv.run();
        EXPECT_FALSE(a.out.empty());
        roce::Packet p = parsed(a.out.front());
        a.out.clear();
        return p;
    }
    // 64 KiB in one `op`, a WRITE from a or a READ that b answers, while
    // the station sending the data may move 4096 bytes per visit: its
    // first pass sends 4 packets, the rest follows pass by pass, and the
    // bytes arrive with no retry.
    void data_over_passes(uint8_t op) {
        const bool read = op == VRNIC_WR_RDMA_READ;
        Station& from = read ? b : a;
        from.drv.dev().state().params.qp_pass_bytes = 4096;
        uint64_t lgpa, rgpa;
        MrInfo local = a.buffer(65536, VRNIC_ACCESS_LOCAL_WRITE, read ? 0 : 0x47, &lgpa);
        MrInfo remote = b.buffer(65536, kRemoteAll, read ? 0x47 : 0, &rgpa);
        a.drv.post_send(qa, rdma_wr(op, local, 65536, remote));
        if (read)
            arrive(b, first_request());
        from.drv.dev().poll_once();
        EXPECT_EQ(4u, from.out.size());
        pump();
        EXPECT_EQ(VRNIC_WC_SUCCESS, a.drv.poll_cq(a.cq).at(0).status);
        EXPECT_TRUE(read ? a.drv.check_pattern(lgpa, 65536, 0x47)
                         : b.drv.check_pattern(rgpa, 65536, 0x47));
        EXPECT_EQ(0u, a.counter64(&vrnic_regs::retries));
    }
    // Request `p` again, `n` PSNs after its own.
    static roce::Packet at_psn(roce::Packet p, uint32_t n) {
        p.bth.psn = (p.bth.psn + n) & VRNIC_PSN_MASK;
        return p;
    }
    // The `n` PSNs from `first` on.
    static std::vector<uint32_t> psn_run(uint32_t first, uint32_t n) {
        std::vector<uint32_t> psns;
        for (uint32_t i = 0; i < n; i++)
            psns.push_back((first + i) & VRNIC_PSN_MASK);
        return psns;
    }
    // The PSNs of what b sent, in order; b's frames are taken.
    std::vector<uint32_t> b_psns() {
        std::vector<uint32_t> psns;
        for (const Frame& f : b.out)
            psns.push_back(parsed(f).bth.psn);
        b.out.clear();
        return psns;
    }
    // Records the opcodes b sends (its ACKs and responses).
    Link count_b_opcodes(std::vector<uint8_t>* ops) {
        return [this, ops](const Frame& f) {
            roce::Packet p = parsed(f);
            if (!memcmp(p.sgid.data(), kGid2, 16))
                ops->push_back(p.bth.opcode);
            return Fate::pass;
        };
    }

    Station a{kGid}, b{kGid2};
    QpInfo qa, qb;
    std::vector<std::pair<Station*, Frame>> held_;
};

TEST_F(WireRc, ASendOfManyPacketsArrivesWithOneAckPerSixteen) {
    MrInfo src = a.buffer(20000, VRNIC_ACCESS_LOCAL_WRITE, 0x42);
    uint64_t dst_gpa;
    MrInfo dst = b.buffer(32768, VRNIC_ACCESS_LOCAL_WRITE, 0, &dst_gpa);
    b.drv.post_recv(qb, 0xb1, {sge(dst, 0, 32768)});
    SendWr s;
    s.opcode = VRNIC_WR_SEND_WITH_IMM;
    s.imm_be = 0x11223344;
    s.sge = {sge(src, 0, 20000)};
    a.drv.post_send(qa, s);
    std::vector<uint8_t> ops;
    pump(count_b_opcodes(&ops));
    auto c = a.drv.poll_cq(a.cq);
    ASSERT_EQ(1u, c.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, c[0].status);
    auto r = b.drv.poll_cq(b.cq);
    ASSERT_EQ(1u, r.size());
    EXPECT_EQ(0xb1u, r[0].wr_id);
    EXPECT_EQ(VRNIC_WC_SUCCESS, r[0].status);
    EXPECT_EQ(20000u, r[0].byte_len);
    EXPECT_EQ(qa.qpn, r[0].src_qp);
    EXPECT_EQ(0x11223344u, r[0].imm_data);
    EXPECT_TRUE(b.drv.check_pattern(dst_gpa, 20000, 0x42));
    // 20 packets of 1 KiB: an ACK after the 16th and one for the last.
    EXPECT_EQ(std::vector<uint8_t>({roce::kRcAck, roce::kRcAck}), ops);
    EXPECT_EQ(20u, a.counter(&vrnic_regs::wire_tx_pkts));
    EXPECT_EQ(0u, a.counter(&vrnic_regs::wire_resent_pkts));
}

TEST_F(WireRc, WriteReadAndAtomicsCrossBothWays) {
    uint64_t rgpa, lgpa;
    MrInfo remote = b.buffer(65536, kRemoteAll, 0, &rgpa);
    MrInfo local = a.buffer(65536, VRNIC_ACCESS_LOCAL_WRITE, 0x17, &lgpa);
    a.drv.post_send(qa, rdma_wr(VRNIC_WR_RDMA_WRITE, local, 40000, remote));
    pump();
    ASSERT_EQ(VRNIC_WC_SUCCESS, a.drv.poll_cq(a.cq).at(0).status);
    EXPECT_TRUE(b.drv.check_pattern(rgpa, 40000, 0x17));

    b.drv.fill(rgpa, 65536, 0x5a);
    a.drv.fill(lgpa, 65536, 0);
    a.drv.post_send(qa, rdma_wr(VRNIC_WR_RDMA_READ, local, 50001, remote, 3));
    pump();
    auto c = a.drv.poll_cq(a.cq);
    ASSERT_EQ(1u, c.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, c[0].status);
    EXPECT_EQ(VRNIC_CQE_OP_RDMA_READ, c[0].opcode);
    EXPECT_EQ(0, memcmp(a.drv.host(lgpa, 50001), b.drv.host(rgpa + 3, 50001), 50001));

    uint64_t v = 40;
    memcpy(b.drv.host(rgpa + 8, 8), &v, 8);
    SendWr fa = rdma_wr(VRNIC_WR_ATOMIC_FETCH_AND_ADD, local, 8, remote, 8);
    fa.compare_add = 2;
    a.drv.post_send(qa, fa);
    SendWr cs = rdma_wr(VRNIC_WR_ATOMIC_CMP_AND_SWP, local, 8, remote, 8);
    cs.sge = {sge(local, 8, 8)};
    cs.compare_add = 42;
    cs.swap = 7;
    a.drv.post_send(qa, cs);
    pump();
    auto ac = a.drv.poll_cq(a.cq);
    ASSERT_EQ(2u, ac.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, ac[0].status);
    EXPECT_EQ(VRNIC_WC_SUCCESS, ac[1].status);
    uint64_t got[2], now;
    memcpy(got, a.drv.host(lgpa, 16), 16);
    memcpy(&now, b.drv.host(rgpa + 8, 8), 8);
    EXPECT_EQ(40u, got[0]);
    EXPECT_EQ(42u, got[1]);
    EXPECT_EQ(7u, now);

    // And from b to a: a WRITE with immediate completes a's receive.
    uint64_t agpa;
    MrInfo at_a = a.buffer(8192, kRemoteAll, 0, &agpa);
    MrInfo from_b = b.buffer(8192, VRNIC_ACCESS_LOCAL_WRITE, 0x3c);
    MrInfo rbuf = a.buffer(64, VRNIC_ACCESS_LOCAL_WRITE);
    a.drv.post_recv(qa, 0xa1, {sge(rbuf, 0, 64)});
    SendWr wi = rdma_wr(VRNIC_WR_RDMA_WRITE_WITH_IMM, from_b, 5000, at_a);
    wi.imm_be = 0xfeed;
    b.drv.post_send(qb, wi);
    pump();
    ASSERT_EQ(VRNIC_WC_SUCCESS, b.drv.poll_cq(b.cq).at(0).status);
    auto ar = a.drv.poll_cq(a.cq);
    ASSERT_EQ(1u, ar.size());
    EXPECT_EQ(VRNIC_CQE_OP_RECV_RDMA_WITH_IMM, ar[0].opcode);
    EXPECT_EQ(5000u, ar[0].byte_len);
    EXPECT_EQ(0xfeedu, ar[0].imm_data);
    EXPECT_TRUE(a.drv.check_pattern(agpa, 5000, 0x3c));
}

// The loss test: each way drops, repeats and reorders a few percent of the
// frames; every message still arrives exactly once with its bytes, and the
// counters show the recovery.
TEST_F(WireRc, ALossyLinkStillDeliversExactData) {
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> pct(0, 99);
    const Link lossy = [&](const Frame&) {
        const int x = pct(rng);
        return x < 5 ? Fate::drop : x < 8 ? Fate::dup : x < 11 ? Fate::hold : Fate::pass;
    };
    constexpr uint32_t kLen = 70000, kCounter = kLen - 8; // past every message
    uint64_t rgpa, sgpa, rcv_gpa;
    MrInfo remote = b.buffer(kLen, kRemoteAll, 0, &rgpa);
    MrInfo local = a.buffer(kLen, VRNIC_ACCESS_LOCAL_WRITE, 0, &sgpa);
    MrInfo rcv = b.buffer(kLen, VRNIC_ACCESS_LOCAL_WRITE, 0, &rcv_gpa);
    for (int round = 0; round < 12; round++) {
        SCOPED_TRACE(round);
        const uint8_t seed = uint8_t(round * 13 + 1);
        const uint32_t len = 1000 + uint32_t(round) * 5555;
        a.drv.fill(sgpa, kLen, seed);
        b.drv.post_recv(qb, round, {sge(rcv, 0, kLen)});
        SendWr s;
        s.sge = {sge(local, 0, len)};
        a.drv.post_send(qa, s);
        a.drv.post_send(qa, rdma_wr(VRNIC_WR_RDMA_WRITE, local, len, remote));
        pump(lossy);
        auto c = a.drv.poll_cq(a.cq);
        ASSERT_EQ(2u, c.size());
        EXPECT_EQ(VRNIC_WC_SUCCESS, c[0].status);
        EXPECT_EQ(VRNIC_WC_SUCCESS, c[1].status);
        auto r = b.drv.poll_cq(b.cq);
        ASSERT_EQ(1u, r.size());
        EXPECT_EQ(len, r[0].byte_len);
        EXPECT_TRUE(b.drv.check_pattern(rcv_gpa, len, seed));
        EXPECT_TRUE(b.drv.check_pattern(rgpa, len, seed));
        // A READ of it back, then an atomic that must count once.
        a.drv.fill(sgpa, kLen, 0);
        const uint64_t counter_v = uint64_t(round) * 1000;
        memcpy(b.drv.host(rgpa + kCounter, 8), &counter_v, 8);
        a.drv.post_send(qa, rdma_wr(VRNIC_WR_RDMA_READ, local, len, remote));
        SendWr add = rdma_wr(VRNIC_WR_ATOMIC_FETCH_AND_ADD, local, 8, remote, kCounter);
        add.sge = {sge(local, 65536, 8)};
        add.compare_add = 1;
        a.drv.post_send(qa, add);
        pump(lossy);
        auto rc = a.drv.poll_cq(a.cq);
        ASSERT_EQ(2u, rc.size());
        EXPECT_EQ(VRNIC_WC_SUCCESS, rc[0].status);
        EXPECT_EQ(VRNIC_WC_SUCCESS, rc[1].status);
        EXPECT_EQ(0, memcmp(a.drv.host(sgpa, len), b.drv.host(rgpa, len), len));
        uint64_t after = 0;
        memcpy(&after, b.drv.host(rgpa + kCounter, 8), 8);
        EXPECT_EQ(counter_v + 1, after);
    }
    EXPECT_GT(a.counter(&vrnic_regs::wire_resent_pkts), 0u);
    EXPECT_GT(b.counter(&vrnic_regs::wire_seq_naks), 0u);
    EXPECT_GT(b.counter(&vrnic_regs::wire_dup_reqs), 0u);
}

// A lost packet is answered by one sequence NAK, and the requester sends
// again from it at once, not after its ack timeout.
TEST_F(WireRc, AGapIsNakedAndFilledWithoutWaitingForTheTimeout) {
    MrInfo src = a.buffer(10240, VRNIC_ACCESS_LOCAL_WRITE, 0x29);
    uint64_t dst_gpa;
    MrInfo dst = b.buffer(10240, kRemoteAll, 0, &dst_gpa);
    a.drv.post_send(qa, rdma_wr(VRNIC_WR_RDMA_WRITE, src, 10240, dst));
    unsigned n = 0;
    pump([&](const Frame& f) {
        const bool from_a = !memcmp(parsed(f).sgid.data(), kGid, 16);
        return from_a && ++n == 3 ? Fate::drop : Fate::pass;
    });
    EXPECT_EQ(VRNIC_WC_SUCCESS, a.drv.poll_cq(a.cq).at(0).status);
    EXPECT_TRUE(b.drv.check_pattern(dst_gpa, 10240, 0x29));
    EXPECT_EQ(1u, b.counter(&vrnic_regs::wire_seq_naks));
    EXPECT_EQ(8u, a.counter(&vrnic_regs::wire_resent_pkts)); // packets 3..10
    EXPECT_EQ(0u, a.counter64(&vrnic_regs::retries));
}

// An atomic whose answer is lost is asked again: the responder answers
// with the original value it kept and does not add twice.
TEST_F(WireRc, ARepeatedAtomicIsExecutedOnce) {
    uint64_t rgpa, lgpa;
    MrInfo remote = b.buffer(64, kRemoteAll, 0, &rgpa);
    MrInfo local = a.buffer(64, VRNIC_ACCESS_LOCAL_WRITE, 0, &lgpa);
    const uint64_t v = 1000;
    memcpy(b.drv.host(rgpa, 8), &v, 8);
    SendWr fa = rdma_wr(VRNIC_WR_ATOMIC_FETCH_AND_ADD, local, 8, remote);
    fa.compare_add = 5;
    a.drv.post_send(qa, fa);
    unsigned acks = 0;
    pump([&](const Frame& f) { // both answers to the first try are lost
        if (parsed(f).bth.opcode == roce::kRcFetchAdd)
            return Fate::dup;
        if (parsed(f).bth.opcode == roce::kRcAtomicAck && ++acks <= 2)
            return Fate::drop;
        return Fate::pass;
    });
    EXPECT_EQ(VRNIC_WC_SUCCESS, a.drv.poll_cq(a.cq).at(0).status);
    uint64_t orig, now;
    memcpy(&orig, a.drv.host(lgpa, 8), 8);
    memcpy(&now, b.drv.host(rgpa, 8), 8);
    EXPECT_EQ(1000u, orig);
    EXPECT_EQ(1005u, now);
    EXPECT_EQ(1u, a.counter64(&vrnic_regs::retries));
    EXPECT_EQ(3u, b.counter(&vrnic_regs::wire_dup_reqs)); // its copy, the retry and its copy
}

// A requester may have as many atomics outstanding as the responder's
// resources (max_qp_rd_atom) and lose all their answers: the oldest, asked
// again, is still answered from its kept value, not dropped.
TEST_F(WireRc, EveryOutstandingAtomicCanBeAskedAgain) {
    uint64_t rgpa;
    MrInfo remote = b.buffer(64, kRemoteAll, 0, &rgpa);
    MrInfo local = a.buffer(64, VRNIC_ACCESS_LOCAL_WRITE);
    const uint64_t v = 1000;
    memcpy(b.drv.host(rgpa, 8), &v, 8);
    SendWr fa = rdma_wr(VRNIC_WR_ATOMIC_FETCH_AND_ADD, local, 8, remote);
    fa.compare_add = 5;
    a.drv.post_send(qa, fa);
    const roce::Packet req = first_request();
    const uint32_t n = b.drv.dev().state().params.max_rd_atom;
    auto ask = [&](uint32_t i) {
        arrive(b, at_psn(req, i));
        b.drv.run();
    };
    for (uint32_t i = 0; i < n; i++) // every answer lost on its way
        ask(i);
    ASSERT_EQ(n, b.out.size());
    b.out.clear();
    uint64_t now;
    memcpy(&now, b.drv.host(rgpa, 8), 8);
    EXPECT_EQ(v + 5 * n, now);
    for (uint32_t i = 0; i < n; i++) {
        ask(i);
        ASSERT_EQ(1u, b.out.size()) << "atomic " << i << " asked again";
        roce::Packet ack = parsed(b.out.front());
        b.out.clear();
        EXPECT_EQ(roce::kRcAtomicAck, ack.bth.opcode);
        EXPECT_EQ((req.bth.psn + i) & VRNIC_PSN_MASK, ack.bth.psn);
        EXPECT_EQ(v + 5 * i, ack.orig);
    }
    memcpy(&now, b.drv.host(rgpa, 8), 8);
    EXPECT_EQ(v + 5 * n, now);
    EXPECT_EQ(n, b.counter(&vrnic_regs::wire_dup_reqs));
}

// A window larger than what one QP may move in a visit goes out over
// several passes, each sending on without waiting for the ack timeout.
TEST_F(WireRc, AWindowBeyondTheVisitBudgetGoesOutOverPasses) {
    data_over_passes(VRNIC_WR_RDMA_WRITE);
}

// A READ's response goes out over the responder's passes, each within
// what one visit may move, and arrives whole.
TEST_F(WireRc, AReadResponseTakesOneVisitBudgetAtATime) {
    data_over_passes(VRNIC_WR_RDMA_READ);
}

// Answers keep PSN order: the ACK of a SEND that came after a READ waits
// until the READ's last response packet is out.
TEST_F(WireRc, AnAckWaitsForTheReadResponseBeforeIt) {
    b.drv.dev().state().params.qp_pass_bytes = 4096;
    MrInfo remote = b.buffer(16384, kRemoteAll, 0x21);
    MrInfo local = a.buffer(16384, VRNIC_ACCESS_LOCAL_WRITE);
    uint64_t rgpa;
    MrInfo rbuf = b.buffer(64, VRNIC_ACCESS_LOCAL_WRITE, 0, &rgpa);
    b.drv.post_recv(qb, 0xb1, {sge(rbuf, 0, 64)});
    a.drv.post_send(qa, rdma_wr(VRNIC_WR_RDMA_READ, local, 16384, remote));
    const roce::Packet read = first_request();
    arrive(b, read);
    roce::Packet send = read;
    send.bth.opcode = roce::kRcSendOnly;
    send.bth.psn = (read.bth.psn + 16) & VRNIC_PSN_MASK;
    send.bth.ack_req = true;
    uint8_t payload[64];
    memset(payload, 0x33, sizeof(payload));
    send.payload = payload;
    send.payload_len = sizeof(payload);
    arrive(b, send);
    b.drv.run();
    std::vector<uint8_t> ops;
    for (const Frame& f : b.out)
        ops.push_back(parsed(f).bth.opcode);
    ASSERT_EQ(17u, ops.size()); // 16 response packets, then the ACK
    EXPECT_EQ(roce::kRcReadResponseLast, ops[15]);
    EXPECT_EQ(roce::kRcAck, ops[16]);
    EXPECT_EQ(send.bth.psn, parsed(b.out.back()).bth.psn);
    auto c = b.drv.poll_cq(b.cq);
    ASSERT_EQ(1u, c.size());
    EXPECT_EQ(64u, c[0].byte_len);
    EXPECT_EQ(0x33, *b.drv.host(rgpa, 1));
}

// READs beyond the responder's resources (max_dest_rd_atomic, 4 here)
// outstanding: an invalid request, NAKed after the responses before it
// (IB answers in order), and then the responder's QP goes to ERR.
TEST_F(WireRc, AReadBeyondTheResponderResourcesIsAnInvalidRequest) {
    MrInfo remote = b.buffer(4096, kRemoteAll);
    MrInfo local = a.buffer(4096, VRNIC_ACCESS_LOCAL_WRITE);
    a.drv.post_send(qa, rdma_wr(VRNIC_WR_RDMA_READ, local, 4096, remote));
    const roce::Packet read = first_request();
    for (uint32_t i = 0; i <= 4; i++) // four PSNs each
        arrive(b, at_psn(read, 4 * i));
    EXPECT_TRUE(b.out.empty());
    EXPECT_EQ(VRNIC_QPS_RTS, b.drv.dev().state().obj->qps.find(qb.qpn)->state);
    b.drv.run();
    ASSERT_EQ(17u, b.out.size());
    const roce::Packet n = parsed(b.out.back());
    EXPECT_EQ(roce::kRcReadResponseLast, parsed(b.out[15]).bth.opcode);
    EXPECT_EQ(roce::kRcAck, n.bth.opcode);
    EXPECT_EQ(0x61, n.syndrome); // NAK: invalid request
    EXPECT_EQ((read.bth.psn + 16) & VRNIC_PSN_MASK, n.bth.psn);
    EXPECT_EQ(VRNIC_QPS_ERR, b.drv.dev().state().obj->qps.find(qb.qpn)->state);
}

// A READ asked again after its response went out holds no resource: the
// requester may have as many new READs outstanding as before.
TEST_F(WireRc, AReadAskedAgainHoldsNoResponderResource) {
    MrInfo remote = b.buffer(4096, kRemoteAll);
    MrInfo local = a.buffer(4096, VRNIC_ACCESS_LOCAL_WRITE);
    a.drv.post_send(qa, rdma_wr(VRNIC_WR_RDMA_READ, local, 4096, remote));
    const roce::Packet read = first_request();
    arrive(b, read);
    b.drv.run();
    EXPECT_EQ(4u, b_psns().size());
    arrive(b, read); // late: its response is out already
    for (uint32_t i = 1; i <= 4; i++)
        arrive(b, at_psn(read, 4 * i));
    b.drv.run();
    EXPECT_EQ(psn_run(read.bth.psn, 20), b_psns());
    EXPECT_EQ(VRNIC_QPS_RTS, b.drv.dev().state().obj->qps.find(qb.qpn)->state);
}

// An MR deregistered while its READ's response is going out: the next
// packet is a remote access NAK at the PSN the requester waits for, and
// the QP goes to ERR, as for a WRITE to an MR gone.
TEST_F(WireRc, AReadWhoseMrGoesMidResponseEndsInAnAccessNak) {
    b.drv.dev().state().params.qp_pass_bytes = 4096;
    MrInfo remote = b.buffer(16384, kRemoteAll);
    MrInfo local = a.buffer(16384, VRNIC_ACCESS_LOCAL_WRITE);
    a.drv.post_send(qa, rdma_wr(VRNIC_WR_RDMA_READ, local, 16384, remote));
    const roce::Packet read = first_request();
    arrive(b, read);
    b.drv.dev().poll_once();
    EXPECT_EQ(4u, b_psns().size());
    ASSERT_EQ(0u, b.drv.destroy(VRNIC_CMD_DEREG_MR, remote.handle));
    b.drv.run();
    ASSERT_EQ(1u, b.out.size());
    const roce::Packet n = parsed(b.out.front());
    EXPECT_EQ(roce::kRcAck, n.bth.opcode);
    EXPECT_EQ(0x62, n.syndrome); // NAK: remote access error
    EXPECT_EQ((read.bth.psn + 4) & VRNIC_PSN_MASK, n.bth.psn);
    EXPECT_EQ(VRNIC_QPS_ERR, b.drv.dev().state().obj->qps.find(qb.qpn)->state);
}

// A receive CQ that overflows moves the responder's QP to ERR, which
// frees its wire state: the responder stops there. (Under ASan this
// failed: the SEND's end and its ACK wrote into the freed state.)
TEST_F(WireRc, AReceiveCqOverflowEndsTheResponderThere) {
    CqInfo tiny = b.drv.create_cq(0, 1);
    QpInfo sa = a.drv.create_qp(0, a.pd, a.cq, a.cq, opts(VRNIC_QPT_RC));
    QpInfo sb = b.drv.create_qp(0, b.pd, b.cq, tiny, opts(VRNIC_QPT_RC));
    a.drv.activate(sa, Path{.dest_qpn = sb.qpn, .mtu = VRNIC_MTU_1024, .dgid = kGid2});
    b.drv.activate(sb, Path{.dest_qpn = sa.qpn, .mtu = VRNIC_MTU_1024, .dgid = kGid});
    MrInfo msg = a.buffer(64, VRNIC_ACCESS_LOCAL_WRITE, 0x3d);
    MrInfo rbuf = b.buffer(4096, VRNIC_ACCESS_LOCAL_WRITE);
    const uint32_t depth = 1u << 1;
    for (uint32_t i = 0; i <= depth; i++) {
        b.drv.post_recv(sb, i, {sge(rbuf, 64 * i, 64)});
        SendWr w;
        w.sge = {sge(msg, 0, 64)};
        a.drv.post_send(sa, w);
    }
    pump();
    EXPECT_EQ(VRNIC_QPS_ERR, b.drv.dev().state().obj->qps.find(sb.qpn)->state);
    EXPECT_EQ(depth, b.drv.poll_cq(tiny).size());
}

// A READ asked again means the requester went back to it: what is queued
// from its PSN on gives way to its response, and the requester asks for
// the rest again.
TEST_F(WireRc, ARepeatedReadReplacesTheAnswersQueuedFromItsPsn) {
    MrInfo remote = b.buffer(4096, kRemoteAll);
    MrInfo local = a.buffer(4096, VRNIC_ACCESS_LOCAL_WRITE);
    a.drv.post_send(qa, rdma_wr(VRNIC_WR_RDMA_READ, local, 4096, remote));
    const roce::Packet r1 = first_request(), r2 = at_psn(r1, 4);
    arrive(b, r1);
    arrive(b, r2);
    arrive(b, r1);
    b.drv.run();
    EXPECT_EQ(psn_run(r1.bth.psn, 4), b_psns());
    arrive(b, r2);
    b.drv.run();
    EXPECT_EQ(psn_run(r2.bth.psn, 4), b_psns());
    EXPECT_EQ(2u, b.counter(&vrnic_regs::wire_dup_reqs));
}

TEST_F(WireRc, ARequestTheResponderNeverAnswersExhaustsTheRetries) {
    MrInfo src = a.buffer(4096, VRNIC_ACCESS_LOCAL_WRITE, 0x11);
    MrInfo dst = b.buffer(4096, kRemoteAll);
    a.drv.post_send(qa, rdma_wr(VRNIC_WR_RDMA_WRITE, src, 4096, dst));
    unsigned sent = 0;
    pump([&](const Frame&) {
        sent++;
        return Fate::drop;
    });
    auto c = a.drv.poll_cq(a.cq);
    ASSERT_EQ(1u, c.size());
    EXPECT_EQ(VRNIC_WC_RETRY_EXC_ERR, c[0].status);
    // The first try and retry_cnt (7) more, four packets each.
    EXPECT_EQ(32u, sent);
    EXPECT_EQ(7u, a.counter64(&vrnic_regs::retries));
    EXPECT_EQ(VRNIC_QPS_ERR, a.drv.query_qp(qa).qp_state);
}

TEST_F(WireRc, ASendWithoutAReceiveWaitsOnRnrNaksUntilOneIsPosted) {
    MrInfo src = a.buffer(3000, VRNIC_ACCESS_LOCAL_WRITE, 0x61);
    uint64_t dst_gpa;
    MrInfo dst = b.buffer(4096, VRNIC_ACCESS_LOCAL_WRITE, 0, &dst_gpa);
    SendWr s;
    s.sge = {sge(src, 0, 3000)};
    a.drv.post_send(qa, s);
    unsigned rnr_seen = 0;
    const Link watch = [&](const Frame& f) {
        roce::Packet p = parsed(f);
        if (p.bth.opcode == roce::kRcAck && (p.syndrome >> 5) == 1 && ++rnr_seen == 3)
            b.drv.post_recv(qb, 9, {sge(dst, 0, 4096)});
        return Fate::pass;
    };
    pump(watch);
    EXPECT_EQ(3u, rnr_seen);
    ASSERT_EQ(VRNIC_WC_SUCCESS, a.drv.poll_cq(a.cq).at(0).status);
    auto r = b.drv.poll_cq(b.cq);
    ASSERT_EQ(1u, r.size());
    EXPECT_EQ(3000u, r[0].byte_len);
    EXPECT_TRUE(b.drv.check_pattern(dst_gpa, 3000, 0x61));
    EXPECT_EQ(3u, b.counter64(&vrnic_regs::rnr_naks));
}

TEST_F(WireRc, RnrRetriesRunOutAtTheQpsCount) {
    connect(VRNIC_QPT_RC, Path{.rnr_retry = 2}); // a new pair
    MrInfo src = a.buffer(64, VRNIC_ACCESS_LOCAL_WRITE, 0x61);
    SendWr s;
    s.sge = {sge(src, 0, 64)};
    a.drv.post_send(qa, s);
    pump();
    auto c = a.drv.poll_cq(a.cq);
    ASSERT_EQ(1u, c.size());
    EXPECT_EQ(VRNIC_WC_RNR_RETRY_EXC_ERR, c[0].status);
    EXPECT_EQ(3u, b.counter64(&vrnic_regs::rnr_naks)); // the first try and two retries
}

// A responder's check fails as on one device: the requester completes
// with the NAK's status, the responder's QP goes to ERR.
TEST_F(WireRc, AResponderViolationNaksAndBothQpsFail) {
    MrInfo src = a.buffer(4096, VRNIC_ACCESS_LOCAL_WRITE, 0x66);
    MrInfo ro = b.buffer(4096, VRNIC_ACCESS_REMOTE_READ);
    a.drv.post_send(qa, rdma_wr(VRNIC_WR_RDMA_WRITE, src, 2000, ro));
    pump();
    auto c = a.drv.poll_cq(a.cq);
    ASSERT_EQ(1u, c.size());
    EXPECT_EQ(VRNIC_WC_REM_ACCESS_ERR, c[0].status);
    EXPECT_EQ(VRNIC_QPS_ERR, a.drv.query_qp(qa).qp_state);
    EXPECT_EQ(VRNIC_QPS_ERR, b.drv.query_qp(qb).qp_state);
}

TEST_F(WireRc, ASendLongerThanTheReceiveIsAnInvalidRequest) {
    MrInfo src = a.buffer(4096, VRNIC_ACCESS_LOCAL_WRITE, 0x66);
    MrInfo dst = b.buffer(4096, VRNIC_ACCESS_LOCAL_WRITE);
    b.drv.post_recv(qb, 5, {sge(dst, 0, 1500)});
    SendWr s;
    s.sge = {sge(src, 0, 4096)};
    a.drv.post_send(qa, s);
    pump();
    EXPECT_EQ(VRNIC_WC_REM_INV_REQ_ERR, a.drv.poll_cq(a.cq).at(0).status);
    auto r = b.drv.poll_cq(b.cq);
    ASSERT_FALSE(r.empty());
    EXPECT_EQ(VRNIC_WC_LOC_LEN_ERR, r[0].status);
}

// Only the QP's peer reaches it: the same packets from another GID are
// dropped and counted.
TEST_F(WireRc, PacketsFromAnotherGidAreDropped) {
    MrInfo src = a.buffer(512, VRNIC_ACCESS_LOCAL_WRITE, 0x21);
    uint64_t dst_gpa;
    MrInfo dst = b.buffer(512, kRemoteAll, 0, &dst_gpa);
    a.drv.post_send(qa, rdma_wr(VRNIC_WR_RDMA_WRITE, src, 512, dst));
    a.drv.run();
    ASSERT_EQ(1u, a.out.size());
    Frame f = a.out.front();
    a.out.clear();
    roce::Packet p = parsed(f);
    p.sgid[15] ^= 1;
    arrive(b, p);
    b.drv.run();
    EXPECT_TRUE(b.out.empty());
    EXPECT_EQ(1u, b.counter(&vrnic_regs::wire_rx_drops));
    const uint8_t* got = b.drv.host(dst_gpa, 512);
    EXPECT_TRUE(std::all_of(got, got + 512, [](uint8_t x) { return x == 0; }));
}

// An answer that comes after its WQE completed, as the answers to a resent
// request and its original both do, is the peer's and only late: it counts
// as stale; the same answer from another GID is a drop.
TEST_F(WireRc, ALateAnswerIsStaleAndAForeignOneADrop) {
    MrInfo src = a.buffer(512, VRNIC_ACCESS_LOCAL_WRITE, 0x21);
    MrInfo dst = b.buffer(512, kRemoteAll);
    a.drv.post_send(qa, rdma_wr(VRNIC_WR_RDMA_WRITE, src, 512, dst));
    std::vector<Frame> acks;
    pump([&acks](const Frame& f) {
        if (parsed(f).bth.opcode == roce::kRcAck)
            acks.push_back(f);
        return Fate::pass;
    });
    ASSERT_EQ(VRNIC_WC_SUCCESS, a.drv.poll_cq(a.cq).at(0).status);
    ASSERT_EQ(1u, acks.size());
    arrive(a, acks[0]);
    a.drv.run();
    EXPECT_EQ(1u, a.counter(&vrnic_regs::wire_stale_pkts));
    EXPECT_EQ(0u, a.counter(&vrnic_regs::wire_rx_drops));
    roce::Packet p = parsed(acks[0]);
    p.sgid[15] ^= 1;
    arrive(a, p);
    a.drv.run();
    EXPECT_EQ(1u, a.counter(&vrnic_regs::wire_stale_pkts));
    EXPECT_EQ(1u, a.counter(&vrnic_regs::wire_rx_drops));
    EXPECT_TRUE(a.drv.poll_cq(a.cq).empty());
    EXPECT_TRUE(a.out.empty());
}

class WireUc : public WireRc {
  protected:
    void SetUp() override { connect(VRNIC_QPT_UC); }
};

// UC: nothing answers; a message missing a packet is dropped and counted,
// and the next one arrives into the same receive.
TEST_F(WireUc, AMessageMissingAPacketIsDroppedAndTheNextArrives) {
    uint64_t src_gpa, dst_gpa;
    MrInfo src = a.buffer(8192, VRNIC_ACCESS_LOCAL_WRITE, 0x44, &src_gpa);
    MrInfo dst = b.buffer(8192, VRNIC_ACCESS_LOCAL_WRITE, 0, &dst_gpa);
    b.drv.post_recv(qb, 1, {sge(dst, 0, 8192)});
    SendWr s;
    s.sge = {sge(src, 0, 5000)};
    a.drv.post_send(qa, s);
    unsigned n = 0;
    pump([&](const Frame&) { return ++n == 2 ? Fate::drop : Fate::pass; });
    EXPECT_EQ(VRNIC_WC_SUCCESS, a.drv.poll_cq(a.cq).at(0).status);
    EXPECT_TRUE(b.drv.poll_cq(b.cq).empty());
    EXPECT_EQ(1u, b.counter(&vrnic_regs::uc_drops));
    EXPECT_TRUE(b.out.empty());

    s.sge = {sge(src, 100, 3000)};
    a.drv.post_send(qa, s);
    pump();
    EXPECT_EQ(VRNIC_WC_SUCCESS, a.drv.poll_cq(a.cq).at(0).status);
    auto r = b.drv.poll_cq(b.cq);
    ASSERT_EQ(1u, r.size());
    EXPECT_EQ(1u, r[0].wr_id);
    EXPECT_EQ(3000u, r[0].byte_len);
    EXPECT_EQ(0, memcmp(b.drv.host(dst_gpa, 3000), a.drv.host(src_gpa + 100, 3000), 3000));
}

// Of more packets than an RC window: UC has no ACK to open the next one.
TEST_F(WireUc, AWriteArrivesWithoutAnAck) {
    constexpr uint32_t kLen = 70000; // 69 packets of 1 KiB
    MrInfo src = a.buffer(kLen, VRNIC_ACCESS_LOCAL_WRITE, 0x45);
    uint64_t dst_gpa;
    MrInfo dst = b.buffer(kLen, kRemoteAll, 0, &dst_gpa);
    a.drv.post_send(qa, rdma_wr(VRNIC_WR_RDMA_WRITE, src, kLen, dst));
    std::vector<uint8_t> ops;
    pump(count_b_opcodes(&ops));
    EXPECT_EQ(VRNIC_WC_SUCCESS, a.drv.poll_cq(a.cq).at(0).status);
    EXPECT_TRUE(b.drv.check_pattern(dst_gpa, kLen, 0x45));
    EXPECT_TRUE(ops.empty());
}

// A message longer than what one QP may move in a pass goes out over
// several passes, as on the message path: a flood over the uplink leaves
// the other QPs their turn.
TEST_F(WireUc, ALongMessageTakesOnePassBudgetAtATime) {
    const uint64_t budget = a.drv.dev().state().params.qp_pass_bytes;
    const uint64_t len = 3 * budget + 1000;
    MrInfo src = a.buffer(len, VRNIC_ACCESS_LOCAL_WRITE, 0x46);
    uint64_t dst_gpa;
    MrInfo dst = b.buffer(len, kRemoteAll, 0, &dst_gpa);
    a.drv.post_send(qa, rdma_wr(VRNIC_WR_RDMA_WRITE, src, uint32_t(len), dst));
    a.drv.dev().poll_once();
    EXPECT_GT(a.out.size(), 0u);
    EXPECT_LE(a.out.size(), budget / 1024);
    pump();
    EXPECT_EQ(VRNIC_WC_SUCCESS, a.drv.poll_cq(a.cq).at(0).status);
    EXPECT_TRUE(b.drv.check_pattern(dst_gpa, len, 0x46));
}

} // namespace
} // namespace vrnic::test
