// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// What a guest can learn from the QPNs and memory keys it is given: they must
// not form a sequence it can extrapolate to another process's QP or MR, and a
// destroyed QP's number must not come back soon enough for a stranger to take
// over its connection (the ReDMArk attacks on RNICs).
#include "fake_driver.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace vrnic::test {
namespace {

// Fails if `v` (values of `bits` bits) shows a simple pattern: a repeat, a
// dominant difference between neighbours, unbalanced bits or an unused top
// byte.
void expect_no_pattern(const std::vector<uint32_t>& v, unsigned bits, const char* what) {
    SCOPED_TRACE(what);
    const uint32_t mask = bits == 32 ? ~0u : (1u << bits) - 1;
    std::set<uint32_t> seen(v.begin(), v.end());
    EXPECT_EQ(v.size(), seen.size()) << "repeated values";
    std::map<uint32_t, unsigned> diffs;
    for (size_t i = 1; i < v.size(); i++)
        diffs[(v[i] - v[i - 1]) & mask]++;
    unsigned top = 0;
    for (const auto& [diff, n] : diffs)
        top = std::max(top, n);
    EXPECT_LT(top, v.size() / 100) << "one difference between neighbours dominates";
    std::string unbalanced;
    for (unsigned b = 0; b < bits; b++) {
        size_t ones = std::count_if(v.begin(), v.end(), [b](uint32_t x) { return x >> b & 1; });
        if (ones < v.size() * 4 / 10 || ones > v.size() * 6 / 10)
            unbalanced += " " + std::to_string(b);
    }
    EXPECT_EQ("", unbalanced) << "bits set in fewer than 40 % or more than 60 % of values";
    std::set<uint32_t> high;
    for (uint32_t x : v)
        high.insert(x >> (bits - 8) & 0xff);
    EXPECT_GT(high.size(), 250u) << "top byte";
}

constexpr unsigned kSamples = 10000;

class HandleGuess : public ::testing::Test {
  protected:
    void SetUp() override {
        drv.bring_up();
        pd = drv.create_pd(0);
        cq = drv.create_cq(0);
        like = drv.create_qp(0, pd, cq, cq);
    }
    // CREATE_QP on the rings of `like` (the model does not need fresh ones):
    // the QPN, or 0 when the command fails.
    uint32_t create_qp() {
        vrnic_cmd_create_qp c{};
        c.uctx = 0;
        c.pd = pd;
        c.qp_type = VRNIC_QPT_RC;
        c.send_cqn = c.recv_cqn = cq.cqn;
        c.sq_addr = like.sq;
        c.rq_addr = like.rq;
        c.sq_log_depth = static_cast<uint8_t>(like.sq_log);
        c.sq_wqe_shift = static_cast<uint8_t>(like.sq_shift);
        c.rq_log_depth = static_cast<uint8_t>(like.rq_log);
        c.rq_wqe_shift = static_cast<uint8_t>(like.rq_shift);
        c.max_send_sge = 1;
        c.max_recv_sge = 1;
        vrnic_cmd r;
        return drv.cmd(VRNIC_CMD_CREATE_QP, &c, sizeof(c), &r) ? 0 : r.create_qp_resp.qpn;
    }
    void destroy(uint16_t op, uint32_t h) {
        vrnic_cmd_handle c{h, 0};
        ASSERT_EQ(0u, drv.cmd(op, &c, sizeof(c)));
    }

    FakeDriver drv;
    uint32_t pd = 0;
    CqInfo cq;
    QpInfo like;
};

TEST_F(HandleGuess, QpnsShowNoPattern) {
    std::vector<uint32_t> qpns;
    // Live QPs side by side, then create/destroy pairs on one slot's worth.
    std::vector<uint32_t> live;
    for (unsigned i = 0; i < 400; i++)
        live.push_back(create_qp());
    qpns = live;
    while (qpns.size() < kSamples) {
        uint32_t q = create_qp();
        qpns.push_back(q);
        destroy(VRNIC_CMD_DESTROY_QP, q);
    }
    for (uint32_t q : qpns) {
        ASSERT_GE(q, uint32_t(VRNIC_QPN_MIN));
        ASSERT_LT(q, VRNIC_QPN_MASK); // 0xffffff is the multicast QPN
    }
    expect_no_pattern(qpns, 24, "QPNs");
}

TEST_F(HandleGuess, KeysShowNoPattern) {
    const uint64_t g = drv.alloc(4096);
    std::vector<uint32_t> keys;
    for (unsigned i = 0; i < kSamples / 2; i++) // live
        keys.push_back(drv.reg_mr(pd, g, 4096, VRNIC_ACCESS_ALL).rkey);
    while (keys.size() < kSamples) { // registered and deregistered
        MrInfo m = drv.reg_mr(pd, g, 4096, VRNIC_ACCESS_ALL);
        ASSERT_EQ(m.lkey, m.rkey);
        keys.push_back(m.rkey);
        destroy(VRNIC_CMD_DEREG_MR, m.handle);
    }
    for (uint32_t k : keys)
        ASSERT_NE(0u, k);
    expect_no_pattern(keys, 32, "keys");
    // The key byte (bits 0-7) varies too.
    std::vector<uint32_t> low;
    for (uint32_t k : keys)
        low.push_back(k & 0xff);
    EXPECT_GT(std::set<uint32_t>(low.begin(), low.end()).size(), 250u);
}

// A key must not come back soon after DEREG_MR, even on a device with a
// small MR table, so that a stale rkey does not reach a new MR.
TEST(HandleStale, KeyDoesNotComeBack) {
    DeviceParams p;
    p.max_mr = 16;
    FakeDriver drv(p);
    drv.bring_up();
    const uint32_t pd = drv.create_pd(0);
    const uint64_t g = drv.alloc(4096);
    MrInfo m = drv.reg_mr(pd, g, 4096, VRNIC_ACCESS_ALL);
    vrnic_cmd_handle h{m.handle, 0};
    ASSERT_EQ(0u, drv.cmd(VRNIC_CMD_DEREG_MR, &h, sizeof(h)));
    for (unsigned i = 0; i < kSamples; i++) {
        MrInfo n = drv.reg_mr(pd, g, 4096, VRNIC_ACCESS_ALL);
        ASSERT_NE(m.rkey, n.rkey) << "after " << i + 1 << " registrations";
        h.handle = n.handle;
        ASSERT_EQ(0u, drv.cmd(VRNIC_CMD_DEREG_MR, &h, sizeof(h)));
    }
}

// A victim QP A stays in RTS connected to B; B is destroyed; an attacker who
// owns every other QP of a small device creates and destroys QPs to get B's
// QPN and, with it, A's connection.
TEST(HandleTakeover, DestroyedPeerQpnDoesNotComeBack) {
    DeviceParams p;
    p.max_qp = 64;
    FakeDriver drv(p);
    drv.bring_up();
    const uint32_t pd = drv.create_pd(0);
    CqInfo a_cq = drv.create_cq(0), x_cq = drv.create_cq(0);
    QpInfo a = drv.create_qp(0, pd, a_cq, a_cq);
    QpInfo b = drv.create_qp(0, pd, x_cq, x_cq);
    drv.connect_pair(a, b);
    // The attacker holds the rest of the table.
    std::vector<QpInfo> held;
    while (held.size() + 3 < p.max_qp)
        held.push_back(drv.create_qp(0, pd, x_cq, x_cq));
    QpInfo tmpl = held.back();
    vrnic_cmd_handle h{b.qpn, 0};
    ASSERT_EQ(0u, drv.cmd(VRNIC_CMD_DESTROY_QP, &h, sizeof(h)));

    vrnic_cmd_create_qp c{};
    c.pd = pd;
    c.qp_type = VRNIC_QPT_RC;
    c.send_cqn = c.recv_cqn = x_cq.cqn;
    c.sq_addr = tmpl.sq;
    c.rq_addr = tmpl.rq;
    c.sq_log_depth = static_cast<uint8_t>(tmpl.sq_log);
    c.sq_wqe_shift = static_cast<uint8_t>(tmpl.sq_shift);
    c.rq_log_depth = static_cast<uint8_t>(tmpl.rq_log);
    c.rq_wqe_shift = static_cast<uint8_t>(tmpl.rq_shift);
    constexpr unsigned kAttempts = 100000;
    unsigned got = 0;
    for (unsigned i = 0; i < kAttempts && !got; i++) {
        vrnic_cmd r;
        ASSERT_EQ(0u, drv.cmd(VRNIC_CMD_CREATE_QP, &c, sizeof(c), &r));
        const uint32_t qpn = r.create_qp_resp.qpn;
        if (qpn == b.qpn)
            got = i + 1;
        h.handle = qpn;
        ASSERT_EQ(0u, drv.cmd(VRNIC_CMD_DESTROY_QP, &h, sizeof(h)));
    }
    EXPECT_EQ(0u, got) << "B's QPN came back after " << got << " create/destroy pairs";
    EXPECT_EQ(uint32_t(VRNIC_QPS_RTS), drv.query_qp(a).qp_state);
}

} // namespace
} // namespace vrnic::test
