// Shared receive queues (device-interface.md 10.17, 11.2, 14.3): the
// commands and their checks, several RC QPs receiving from one SRQ, the
// device-written consumer index, the limit event, QP_LAST_WQE_REACHED, RNR
// waits on an empty SRQ and an invalid SRQ producer index.
#include "command_fixture.h"

#include "requester.h"
#include "shared_word.h"

#include <algorithm>
#include <utility>

namespace vrnic::test {
namespace {

DeviceParams small_srq_params() {
    DeviceParams p;
    p.max_srq = 3;
    p.max_srq_wr = 256;
    p.max_srq_sge = 8;
    p.qp_pass_bytes = 4096; // messages above this move in slices
    return p;
}

class SrqTest : public CommandTest {
  protected:
    void SetUp() override {
        CommandTest::SetUp();
        pd = drv.create_pd(0);
        cq = drv.create_cq(0, 8);
    }
    uint32_t num_srq() { return counts().num_srq; }
    // A valid CREATE_SRQ of the kernel context: 16 WQEs of 64 bytes.
    vrnic_cmd_create_srq srq_req() {
        vrnic_cmd_create_srq c{};
        c.uctx = 0;
        c.pd = pd;
        c.ring_addr = drv.alloc(16 * 64);
        c.log_depth = 4;
        c.wqe_shift = 6;
        c.max_sge = 3;
        return c;
    }
    uint32_t create(const vrnic_cmd_create_srq& c, SrqInfo* s = nullptr) {
        SrqInfo tmp;
        return drv.create_srq(c, s ? s : &tmp);
    }
    // CREATE_QP with an SRQ; the status.
    uint32_t create_qp(uint32_t uctx, uint32_t qp_pd, const CqInfo& c, uint32_t srqn, QpInfo* out,
                       void (*tweak)(vrnic_cmd_create_qp&) = nullptr) {
        QpOpts o;
        o.srqn = srqn;
        vrnic_cmd_create_qp q{};
        q.uctx = uctx;
        q.pd = qp_pd;
        q.qp_type = VRNIC_QPT_RC;
        q.send_cqn = q.recv_cqn = c.cqn;
        q.srqn = srqn;
        q.sq_addr = drv.alloc(uint64_t(1) << (o.sq_log + o.sq_shift));
        q.sq_log_depth = uint8_t(o.sq_log);
        q.sq_wqe_shift = uint8_t(o.sq_shift);
        q.max_send_sge = o.max_send_sge;
        q.max_inline = o.max_inline;
        if (tweak)
            tweak(q);
        vrnic_cmd r;
        const uint32_t st = drv.cmd(VRNIC_CMD_CREATE_QP, &q, sizeof(q), &r);
        if (out)
            *out = QpInfo{.qpn = r.create_qp_resp.qpn,
                          .db_slot = r.create_qp_resp.db_slot,
                          .uctx = uctx,
                          .db_page = c.db_page,
                          .pd = qp_pd,
                          .sq = q.sq_addr,
                          .sq_log = o.sq_log,
                          .sq_shift = o.sq_shift,
                          .max_send_sge = o.max_send_sge,
                          .max_inline = o.max_inline};
        return st;
    }

    uint32_t to_state(const QpInfo& q, uint8_t state) {
        vrnic_qp_attr a{};
        a.qp_state = state;
        return drv.modify_qp(q, VRNIC_QP_ATTR_STATE, a);
    }

    uint32_t pd = 0;
    CqInfo cq;
};

TEST_F(SrqTest, CreateChecksEveryField) {
    const auto good = srq_req();
    struct Case {
        const char* what;
        uint32_t status;
        void (*edit)(vrnic_cmd_create_srq&);
    };
    const Case cases[] = {
        {"no such context", BAD_HANDLE, [](auto& c) { c.uctx = 0x1234; }},
        {"no such PD", BAD_HANDLE, [](auto& c) { c.pd = 0x1234; }},
        {"ring 0", BAD_ADDR, [](auto& c) { c.ring_addr = 0; }},
        {"ring unaligned", BAD_ADDR, [](auto& c) { c.ring_addr += 64; }},
        {"ring outside RAM", BAD_ADDR, [](auto& c) { c.ring_addr = 1ull << 40; }},
        {"log_depth 0", BAD_PARAM, [](auto& c) { c.log_depth = 0; }},
        {"log_depth > max_srq_wr", BAD_PARAM, [](auto& c) { c.log_depth = 15; }},
        {"wqe_shift 4", BAD_PARAM, [](auto& c) { c.wqe_shift = 4; }},
        {"wqe_shift 12", BAD_PARAM, [](auto& c) { c.wqe_shift = 12; }},
        {"max_sge > stride", BAD_PARAM, [](auto& c) { c.max_sge = 4; }},
        {"max_sge > max_srq_sge", BAD_PARAM,
         [](auto& c) {
             c.wqe_shift = 11;
             c.log_depth = 1;
             c.max_sge = 17;
         }},
        {"srq_limit = depth", BAD_PARAM, [](auto& c) { c.srq_limit = 16; }},
        {"ring > 4 MiB", BAD_PARAM,
         [](auto& c) {
             c.log_depth = 14;
             c.wqe_shift = 11;
         }},
    };
    for (const Case& k : cases) {
        auto c = good;
        k.edit(c);
        EXPECT_EQ(k.status, create(c)) << k.what;
    }
    EXPECT_EQ(0u, num_srq());
    // Bytes after the request are reserved.
    vrnic_cmd raw{};
    raw.hdr.opcode = VRNIC_CMD_CREATE_SRQ;
    raw.create_srq = good;
    raw.payload[sizeof(good)] = 1;
    EXPECT_EQ(BAD_PARAM, drv.cmd(raw));

    // A PD of another context.
    const uint32_t u = drv.alloc_uctx();
    auto c = good;
    c.pd = drv.create_pd(u);
    EXPECT_EQ(BAD_HANDLE, create(c));

    SrqInfo s;
    ASSERT_EQ(OK, create(good, &s));
    EXPECT_NE(0u, s.srqn);
    EXPECT_GE(s.db_slot, uint32_t(VRNIC_DB_FIRST_OBJ_SLOT));
    EXPECT_EQ(1u, num_srq());
    EXPECT_EQ(0u, drv.srq_ci(s));
    EXPECT_EQ(BUSY, destroy(VRNIC_CMD_DESTROY_PD, pd)); // the SRQ holds its PD
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DESTROY_SRQ, s.srqn));
    EXPECT_EQ(BAD_HANDLE, destroy(VRNIC_CMD_DESTROY_SRQ, s.srqn));
    EXPECT_EQ(0u, num_srq());
}

TEST_F(SrqTest, UserSrqHoldsItsContextAndSlot) {
    uint32_t page = 0;
    const uint32_t u = drv.alloc_uctx(&page);
    const uint32_t upd = drv.create_pd(u);
    SrqInfo s = drv.create_srq(u, upd);
    EXPECT_EQ(page, s.db_page);
    drv.slot(page, s.db_slot)->raw = ~0ull;
    EXPECT_EQ(BUSY, destroy(VRNIC_CMD_DEALLOC_UCTX, u));
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DESTROY_SRQ, s.srqn));
    EXPECT_EQ(0u, drv.slot(page, s.db_slot)->raw); // the slot is free and zero
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DESTROY_PD, upd));
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DEALLOC_UCTX, u));
}

TEST(SrqLimits, MaxSrqAndResetFreesThem) {
    FakeDriver drv(small_srq_params());
    drv.bring_up();
    EXPECT_EQ(3u, drv.regs()->max_srq);
    EXPECT_EQ(256u, drv.regs()->max_srq_wr);
    EXPECT_EQ(8u, drv.regs()->max_srq_sge);
    const uint32_t pd = drv.create_pd(0);
    for (int i = 0; i < 3; i++)
        drv.create_srq(0, pd);
    vrnic_cmd_create_srq c{};
    c.pd = pd;
    c.ring_addr = drv.alloc(4096);
    c.log_depth = 4;
    c.wqe_shift = 6;
    SrqInfo s;
    EXPECT_EQ(NO_RESOURCE, drv.create_srq(c, &s));
    c.log_depth = 9; // > max_srq_wr 256
    EXPECT_EQ(BAD_PARAM, drv.create_srq(c, &s));
    // A reset forgets every SRQ.
    drv.bring_up();
    vrnic_cmd r;
    ASSERT_EQ(OK, drv.cmd(VRNIC_CMD_QUERY_DEVICE, nullptr, 0, &r));
    EXPECT_EQ(0u, r.query_device_resp.num_srq);
    const uint32_t pd2 = drv.create_pd(0);
    for (int i = 0; i < 3; i++)
        drv.create_srq(0, pd2);
}

TEST_F(SrqTest, ModifyArmsTheLimit) {
    SrqInfo s = drv.create_srq(0, pd);
    EXPECT_EQ(BAD_HANDLE, drv.modify_srq(s.srqn + 1, VRNIC_SRQ_ATTR_LIMIT, 1));
    EXPECT_EQ(BAD_PARAM, drv.modify_srq(s.srqn, VRNIC_SRQ_ATTR_MAX_WR, 0, 32)); // max_wr reserved
    EXPECT_EQ(BAD_PARAM, drv.modify_srq(s.srqn, 1u << 2, 0));
    EXPECT_EQ(BAD_PARAM, drv.modify_srq(s.srqn, VRNIC_SRQ_ATTR_LIMIT, 16)); // = depth
    EXPECT_EQ(BAD_PARAM, drv.modify_srq(s.srqn, 0, 3));                     // not in the mask
    EXPECT_EQ(BAD_PARAM, drv.modify_srq(s.srqn, VRNIC_SRQ_ATTR_LIMIT, 3, 1));
    EXPECT_EQ(OK, drv.modify_srq(s.srqn, VRNIC_SRQ_ATTR_LIMIT, 15));
    EXPECT_EQ(OK, drv.modify_srq(s.srqn, VRNIC_SRQ_ATTR_LIMIT, 0));
    EXPECT_EQ(OK, drv.modify_srq(s.srqn, 0, 0));
}

TEST_F(SrqTest, ResizeChecksEveryField) {
    SrqInfo s = drv.create_srq(0, pd); // 16 WQEs of 64 bytes
    auto req = [&] {
        vrnic_cmd_modify_srq m{};
        m.srqn = s.srqn;
        m.attr_mask = VRNIC_SRQ_ATTR_MAX_WR;
        m.log_depth = 5;
        m.ring_addr = drv.alloc(32 * 64);
        return m;
    };
    auto run = [&](void (*tweak)(vrnic_cmd_modify_srq&)) {
        vrnic_cmd_modify_srq m = req();
        tweak(m);
        return drv.cmd(VRNIC_CMD_MODIFY_SRQ, &m, sizeof(m));
    };
    EXPECT_EQ(BAD_PARAM, run([](auto& m) { m.log_depth = 4; })); // not larger
    EXPECT_EQ(BAD_PARAM, run([](auto& m) { m.log_depth = 3; }));
    EXPECT_EQ(BAD_PARAM, run([](auto& m) { m.log_depth = 15; })); // > max_srq_wr 16384
    EXPECT_EQ(BAD_PARAM, run([](auto& m) { m.log_depth = 40; }));
    EXPECT_EQ(BAD_ADDR, run([](auto& m) { m.ring_addr += 64; }));
    EXPECT_EQ(BAD_ADDR, run([](auto& m) { m.ring_addr = 0; }));
    EXPECT_EQ(BAD_ADDR, run([](auto& m) { m.ring_addr = 1ull << 40; }));
    EXPECT_EQ(BAD_PARAM, run([](auto& m) { m.reserved[6] = 1; }));
    EXPECT_EQ(BAD_PARAM, run([](auto& m) { m.max_wr = 32; }));
    EXPECT_EQ(BAD_PARAM, run([](auto& m) { m.attr_mask = VRNIC_SRQ_ATTR_LIMIT; }));
    EXPECT_EQ(BAD_PARAM, run([](auto& m) {
                  m.attr_mask |= VRNIC_SRQ_ATTR_LIMIT;
                  m.srq_limit = 32; // = the new depth
              }));
    // A producer index more than a ring ahead.
    s.pi = 17;
    drv.publish(s);
    EXPECT_EQ(BAD_PARAM, run([](auto&) {}));
    s.pi = 0;
    drv.publish(s);
    // A limit between the old and the new depth is valid with the resize.
    EXPECT_EQ(OK, run([](auto& m) {
                  m.attr_mask |= VRNIC_SRQ_ATTR_LIMIT;
                  m.srq_limit = 20;
              }));
    EXPECT_EQ(OK, drv.modify_srq(s.srqn, VRNIC_SRQ_ATTR_LIMIT, 31));
    EXPECT_EQ(BAD_PARAM, drv.modify_srq(s.srqn, VRNIC_SRQ_ATTR_LIMIT, 32));
}

TEST_F(SrqTest, CreateQpChecksTheSrq) {
    SrqInfo s = drv.create_srq(0, pd);
    QpInfo q;
    EXPECT_EQ(BAD_HANDLE, create_qp(0, pd, cq, s.srqn + 1, &q));
    // The QP asks for an RQ besides.
    EXPECT_EQ(BAD_PARAM, create_qp(0, pd, cq, s.srqn, &q, [](auto& c) { c.rq_addr = 1ull << 20; }));
    EXPECT_EQ(BAD_PARAM, create_qp(0, pd, cq, s.srqn, &q, [](auto& c) { c.rq_log_depth = 4; }));
    EXPECT_EQ(BAD_PARAM, create_qp(0, pd, cq, s.srqn, &q, [](auto& c) { c.rq_wqe_shift = 6; }));
    EXPECT_EQ(BAD_PARAM, create_qp(0, pd, cq, s.srqn, &q, [](auto& c) { c.max_recv_sge = 1; }));
    // Another PD of the same context.
    const uint32_t pd2 = drv.create_pd(0);
    EXPECT_EQ(BAD_PARAM, create_qp(0, pd2, cq, s.srqn, &q));
    // Another context: its own PD and CQ, the kernel's SRQ.
    const uint32_t u = drv.alloc_uctx();
    const uint32_t upd = drv.create_pd(u);
    CqInfo ucq = drv.create_cq(u, 4);
    EXPECT_EQ(BAD_HANDLE, create_qp(u, upd, ucq, s.srqn, &q));
    vrnic_cmd r;
    ASSERT_EQ(OK, drv.cmd(VRNIC_CMD_QUERY_DEVICE, nullptr, 0, &r));
    EXPECT_EQ(0u, r.query_device_resp.num_qp);

    ASSERT_EQ(OK, create_qp(0, pd, cq, s.srqn, &q));
    QpInfo q2;
    ASSERT_EQ(OK, create_qp(0, pd, cq, s.srqn, &q2));
    EXPECT_EQ(BUSY, destroy(VRNIC_CMD_DESTROY_SRQ, s.srqn));
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DESTROY_QP, q.qpn));
    EXPECT_EQ(BUSY, destroy(VRNIC_CMD_DESTROY_SRQ, s.srqn));
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DESTROY_QP, q2.qpn));
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DESTROY_SRQ, s.srqn));
}

// Senders a[i] connected to receivers b[i]; every b[i] on one SRQ.
class SrqShared : public SrqTest {
  protected:
    static constexpr int kPairs = 3;
    static constexpr uint32_t kBuf = 256;
    void SetUp() override {
        SrqTest::SetUp();
        send_cq = drv.create_cq(0, 8);
        srq = drv.create_srq(0, pd, 4, 6, 3);
        for (int i = 0; i < kPairs; i++) {
            a[i] = drv.create_qp(0, pd, send_cq, send_cq);
            QpOpts o;
            o.srqn = srq.srqn;
            b[i] = drv.create_qp(0, pd, cq, cq, o);
            drv.connect(a[i], b[i].qpn, rnr_retry(), 1);
            drv.connect(b[i], a[i].qpn, 7, 1);
        }
        src_gpa = drv.alloc(4096);
        drv.fill(src_gpa, 4096, 0x5a);
        src = drv.reg_mr(pd, src_gpa, 4096, VRNIC_ACCESS_LOCAL_WRITE);
        dst_gpa = drv.alloc(16 * kBuf);
        dst = drv.reg_mr(pd, dst_gpa, 16 * kBuf, VRNIC_ACCESS_ALL);
        drv.take_async_events();
    }
    virtual uint8_t rnr_retry() { return 7; }
    // Posts SRQ WQE wr_id 100 + n into buffer n.
    void post(uint32_t n) {
        drv.post_srq_recv(srq, 100 + n, {{dst.iova + n * kBuf, kBuf, dst.lkey}});
    }
    // A SEND of len bytes from src at offset off.
    void send(int i, uint64_t wr_id, uint32_t off, uint32_t len = 64) {
        SendWr w;
        w.wr_id = wr_id;
        w.sge = {{src.iova + off, len, src.lkey}};
        drv.post_send(a[i], w);
    }

    CqInfo send_cq;
    SrqInfo srq;
    QpInfo a[kPairs], b[kPairs];
    uint64_t src_gpa = 0, dst_gpa = 0;
    MrInfo src, dst;
};

TEST_F(SrqShared, SeveralQpsTakeWqesInOrder) {
    for (uint32_t n = 0; n < 6; n++)
        post(n);
    // QP i sends with data from offset 64 * k, k the order of the SEND.
    const int order[6] = {1, 0, 2, 2, 1, 0};
    for (uint32_t k = 0; k < 6; k++) {
        send(order[k], k, 64 * k);
        drv.run();
        EXPECT_EQ(k + 1, drv.srq_ci(srq)); // the device-written ci advances
    }
    auto s = drv.poll_cq(send_cq);
    ASSERT_EQ(6u, s.size());
    for (const auto& c : s)
        EXPECT_EQ(VRNIC_WC_SUCCESS, c.status);
    auto r = drv.poll_cq(cq);
    ASSERT_EQ(6u, r.size());
    for (uint32_t k = 0; k < 6; k++) {
        EXPECT_EQ(VRNIC_WC_SUCCESS, r[k].status);
        EXPECT_EQ(VRNIC_CQE_OP_RECV, r[k].opcode);
        EXPECT_EQ(b[order[k]].qpn, r[k].qpn) << k;
        EXPECT_EQ(a[order[k]].qpn, r[k].src_qp) << k;
        EXPECT_EQ(k, r[k].wqe_idx) << k; // the SRQ index
        EXPECT_EQ(100 + k, r[k].wr_id);
        EXPECT_EQ(64u, r[k].byte_len);
        // Buffer k got the bytes of SEND k.
        EXPECT_EQ(0, memcmp(drv.host(dst_gpa + k * kBuf, 64), drv.host(src_gpa + 64 * k, 64), 64))
            << k;
        EXPECT_EQ(0, drv.host(dst_gpa + k * kBuf + 64)[0]);
    }
    EXPECT_TRUE(drv.take_async_events().empty());
}

// WQEs posted before the resize, wrapped in the old ring, complete in order
// after it, followed by WQEs posted into the new ring beyond the old depth.
TEST_F(SrqShared, ResizeKeepsPostedWqesInOrder) {
    constexpr uint32_t kN = 28;
    const uint64_t big_gpa = drv.alloc(kN * kBuf);
    MrInfo big = drv.reg_mr(pd, big_gpa, kN * kBuf, VRNIC_ACCESS_ALL);
    auto post_big = [&](uint32_t n) {
        drv.post_srq_recv(srq, 100 + n, {{big.iova + n * kBuf, kBuf, big.lkey}});
    };
    for (uint32_t n = 0; n < 10; n++)
        post_big(n);
    for (uint32_t k = 0; k < 8; k++) {
        send(k % kPairs, k, 64 * k);
        drv.run();
    }
    EXPECT_EQ(8u, drv.srq_ci(srq));
    for (uint32_t n = 10; n < 20; n++) // slots 10..15, then 0..3 of the old ring
        post_big(n);
    const uint64_t old_ring = srq.ring;
    ASSERT_EQ(OK, drv.resize_srq(srq, 5));
    drv.fill(old_ring, 16 * 64, 0xee); // the device no longer reads it
    for (uint32_t n = 20; n < kN; n++) // 20 outstanding: above the old depth
        post_big(n);
    EXPECT_EQ(20u, srq.pi - drv.srq_ci(srq));
    for (uint32_t k = 8; k < kN; k++) {
        send(k % kPairs, k, 64 * (k % 64));
        drv.run();
    }
    EXPECT_EQ(kN, drv.srq_ci(srq));
    auto r = drv.poll_cq(cq, 64);
    ASSERT_EQ(kN, r.size());
    for (uint32_t k = 0; k < kN; k++) {
        EXPECT_EQ(VRNIC_WC_SUCCESS, r[k].status) << k;
        EXPECT_EQ(k, r[k].wqe_idx) << k;
        EXPECT_EQ(100 + k, r[k].wr_id) << k;
        EXPECT_EQ(b[k % kPairs].qpn, r[k].qpn) << k;
        EXPECT_EQ(
            0, memcmp(drv.host(big_gpa + k * kBuf, 64), drv.host(src_gpa + 64 * (k % 64), 64), 64))
            << k;
    }
    EXPECT_EQ(kN, drv.poll_cq(send_cq, 64).size());
    EXPECT_TRUE(drv.take_async_events().empty());
}

TEST_F(SrqShared, WriteWithImmConsumesAnSrqWqe) {
    post(0);
    SendWr w = rdma_write(src, 0, 32, dst, 8 * kBuf);
    w.opcode = VRNIC_WR_RDMA_WRITE_WITH_IMM;
    w.imm_be = 0x01020304;
    drv.post_send(a[2], w);
    drv.run();
    auto r = drv.poll_cq(cq);
    ASSERT_EQ(1u, r.size());
    EXPECT_EQ(VRNIC_CQE_OP_RECV_RDMA_WITH_IMM, r[0].opcode);
    EXPECT_EQ(b[2].qpn, r[0].qpn);
    EXPECT_EQ(0u, r[0].wqe_idx);
    EXPECT_EQ(0x01020304u, r[0].imm_data);
    EXPECT_EQ(1u, drv.srq_ci(srq));
    EXPECT_TRUE(drv.check_pattern(dst_gpa + 8 * kBuf, 32, 0x5a));
}

TEST_F(SrqShared, LimitFiresOnceThenDisarms) {
    for (uint32_t n = 0; n < 6; n++)
        post(n);
    ASSERT_EQ(OK, drv.modify_srq(srq.srqn, VRNIC_SRQ_ATTR_LIMIT, 3));
    for (uint32_t k = 0; k < 3; k++) { // 5, 4, 3 left: not below 3
        send(0, k, 0);
        drv.run();
    }
    EXPECT_EQ(0u, count_events(drv.take_async_events(), VRNIC_EQE_SRQ_LIMIT, srq.srqn));
    send(1, 3, 0); // 2 left
    drv.run();
    auto ev = drv.take_async_events();
    ASSERT_EQ(1u, ev.size());
    EXPECT_EQ(VRNIC_EQE_SRQ_LIMIT, ev[0].type);
    EXPECT_EQ(srq.srqn, ev[0].obj);
    send(2, 4, 0); // 1 left: disarmed, no second event
    drv.run();
    EXPECT_TRUE(drv.take_async_events().empty());
    // Armed again below the current level: the next consumption fires.
    ASSERT_EQ(OK, drv.modify_srq(srq.srqn, VRNIC_SRQ_ATTR_LIMIT, 2));
    EXPECT_TRUE(drv.take_async_events().empty()); // arming alone fires nothing
    send(0, 5, 0);
    drv.run();
    EXPECT_EQ(1u, count_events(drv.take_async_events(), VRNIC_EQE_SRQ_LIMIT, srq.srqn));
    EXPECT_EQ(6u, drv.poll_cq(cq).size());
}

TEST_F(SrqShared, LimitArmedAtCreate) {
    vrnic_cmd_create_srq c = srq_req();
    c.srq_limit = 2;
    SrqInfo s2;
    ASSERT_EQ(OK, create(c, &s2));
    QpOpts o;
    o.srqn = s2.srqn;
    QpInfo x = drv.create_qp(0, pd, send_cq, send_cq), y = drv.create_qp(0, pd, cq, cq, o);
    drv.connect_pair(x, y);
    drv.take_async_events();
    for (uint32_t n = 0; n < 3; n++)
        drv.post_srq_recv(s2, n, {{dst.iova, kBuf, dst.lkey}});
    SendWr w;
    w.sge = {{src.iova, 8, src.lkey}};
    drv.post_send(x, w);
    drv.run();
    EXPECT_TRUE(drv.take_async_events().empty()); // 2 left
    drv.post_send(x, w);
    drv.run();
    EXPECT_EQ(1u, count_events(drv.take_async_events(), VRNIC_EQE_SRQ_LIMIT, s2.srqn));
}

TEST_F(SrqShared, ErrPostsLastWqeReachedAndLeavesTheSrq) {
    for (uint32_t n = 0; n < 4; n++)
        post(n);
    send(0, 1, 0);
    drv.run();
    ASSERT_EQ(1u, drv.poll_cq(cq).size());
    drv.poll_cq(send_cq);
    drv.take_async_events();
    // The QP has no RQ: a value in its slot's rq_pi word means nothing.
    store_release(&drv.slot(b[0].db_page, b[0].db_slot)->qp.rq_pi, 1u);
    ASSERT_EQ(OK, to_state(b[0], VRNIC_QPS_ERR));
    drv.run();
    auto ev = drv.take_async_events();
    ASSERT_EQ(1u, ev.size());
    EXPECT_EQ(VRNIC_EQE_QP_LAST_WQE_REACHED, ev[0].type);
    EXPECT_EQ(b[0].qpn, ev[0].obj);
    EXPECT_TRUE(drv.poll_cq(cq).empty()); // nothing of the SRQ flushed
    EXPECT_EQ(1u, drv.srq_ci(srq));
    // Its SQ is flushed: a WQE posted in ERR completes with WR_FLUSH_ERR.
    SendWr w;
    w.wr_id = 77;
    drv.post_send(b[0], w);
    drv.run();
    auto f = drv.poll_cq(cq);
    ASSERT_EQ(1u, f.size());
    EXPECT_EQ(77u, f[0].wr_id);
    EXPECT_EQ(VRNIC_WC_WR_FLUSH_ERR, f[0].status);
    EXPECT_EQ(1u, drv.srq_ci(srq));
    // ERR again: no second event. RESET: the SRQ is not touched.
    ASSERT_EQ(OK, to_state(b[0], VRNIC_QPS_ERR));
    ASSERT_EQ(OK, to_state(b[0], VRNIC_QPS_RESET));
    drv.run();
    EXPECT_TRUE(drv.take_async_events().empty());
    EXPECT_EQ(1u, drv.srq_ci(srq));
    // The other QPs still receive the remaining WQEs, in order.
    send(1, 2, 64);
    send(2, 3, 128);
    drv.run();
    auto r = drv.poll_cq(cq);
    ASSERT_EQ(2u, r.size());
    EXPECT_EQ(1u, r[0].wqe_idx);
    EXPECT_EQ(b[1].qpn, r[0].qpn);
    EXPECT_EQ(2u, r[1].wqe_idx);
    EXPECT_EQ(b[2].qpn, r[1].qpn);
    EXPECT_EQ(0, memcmp(drv.host(dst_gpa + 2 * kBuf, 64), drv.host(src_gpa + 128, 64), 64));
}

TEST_F(SrqShared, ResponderErrorPostsLastWqeReachedOnce) {
    post(0);
    post(1);
    // WRITE_WITH_IMM with a bad rkey: b[1] takes the SRQ WQE first (the
    // receive is checked before the rkey), then goes to ERR: that WQE is
    // flushed on b[1]'s CQ, then QP_LAST_WQE_REACHED.
    SendWr w = rdma_write(src, 0, 32, dst);
    w.opcode = VRNIC_WR_RDMA_WRITE_WITH_IMM;
    w.rkey ^= 0x100;
    drv.post_send(a[1], w);
    drv.run();
    auto s = drv.poll_cq(send_cq);
    ASSERT_EQ(1u, s.size());
    EXPECT_EQ(VRNIC_WC_REM_ACCESS_ERR, s[0].status);
    auto r = drv.poll_cq(cq);
    ASSERT_EQ(1u, r.size());
    EXPECT_EQ(VRNIC_WC_WR_FLUSH_ERR, r[0].status);
    EXPECT_EQ(b[1].qpn, r[0].qpn);
    EXPECT_EQ(0u, r[0].wqe_idx);
    EXPECT_EQ(100u, r[0].wr_id);
    auto ev = drv.take_async_events();
    EXPECT_EQ(1u, count_events(ev, VRNIC_EQE_QP_ACCESS_ERR, b[1].qpn));
    EXPECT_EQ(1u, count_events(ev, VRNIC_EQE_QP_LAST_WQE_REACHED, b[1].qpn));
    EXPECT_EQ(1u, drv.srq_ci(srq));
    send(2, 9, 0); // the next WQE is still there for another QP
    drv.run();
    r = drv.poll_cq(cq);
    ASSERT_EQ(1u, r.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, r[0].status);
    EXPECT_EQ(1u, r[0].wqe_idx);
}

TEST_F(SrqShared, EmptySrqRnrWaitsThenAPostResumes) {
    send(0, 1, 0);
    drv.run();
    EXPECT_TRUE(drv.poll_cq(send_cq).empty());
    EXPECT_NE(UINT64_MAX, engine_next_deadline(drv.dev().state()));
    // Sleeping now asks for RQ kicks: SRQ posts kick like RQ posts.
    drv.dev().set_need_wakeup(true);
    EXPECT_EQ(uint32_t(VRNIC_DB_STATUS_NEED_WAKEUP | VRNIC_DB_STATUS_RQ_WAKEUP),
              drv.slot(VRNIC_KERNEL_DB_PAGE, 0)->st.status);
    drv.dev().set_need_wakeup(false);
    for (int i = 0; i < 20; i++) { // long past any RNR timer: still waiting
        drv.clock() += 1'000'000;
        drv.run();
    }
    EXPECT_TRUE(drv.poll_cq(send_cq).empty());
    post(0);
    drv.dev().poll_once(); // same instant: the SRQ producer moved
    auto s = drv.poll_cq(send_cq);
    ASSERT_EQ(1u, s.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, s[0].status);
    auto r = drv.poll_cq(cq);
    ASSERT_EQ(1u, r.size());
    EXPECT_EQ(b[0].qpn, r[0].qpn);
    EXPECT_TRUE(drv.check_pattern(dst_gpa, 64, 0x5a));
    EXPECT_EQ(UINT64_MAX, engine_next_deadline(drv.dev().state()));
}

class SrqSharedRnrTwo : public SrqShared {
    uint8_t rnr_retry() override { return 2; }
};

TEST_F(SrqSharedRnrTwo, EmptySrqExhaustsRnrRetries) {
    send(0, 1, 0);
    for (int i = 0; i < 10; i++) {
        drv.clock() += 1'000'000;
        drv.run();
    }
    auto s = drv.poll_cq(send_cq);
    ASSERT_EQ(1u, s.size());
    EXPECT_EQ(VRNIC_WC_RNR_RETRY_EXC_ERR, s[0].status);
    EXPECT_EQ(0u, drv.srq_ci(srq));
}

// An invalid SRQ pi fails the QP that fetches (QP_FATAL; the requester gets
// RETRY_EXC_ERR at once: nobody waits on it) and posts SRQ_ERR once; other
// contexts run on; a valid pi makes the SRQ serve again.
TEST_F(SrqShared, InvalidProducerIndexFailsTheFetchingQpOnly) {
    // Another context's pair, in RNR-free traffic throughout.
    const uint32_t u = drv.alloc_uctx();
    const uint32_t upd = drv.create_pd(u);
    CqInfo ucq = drv.create_cq(u, 6);
    QpInfo ux = drv.create_qp(u, upd, ucq, ucq), uy = drv.create_qp(u, upd, ucq, ucq);
    drv.connect_pair(ux, uy);
    const uint64_t ubuf = drv.alloc(4096);
    MrInfo umr = drv.reg_mr(upd, ubuf, 4096, VRNIC_ACCESS_ALL);
    drv.take_async_events();

    store_release(&drv.slot(srq.db_page, srq.db_slot)->srq.pi, 17u); // > ci + depth
    send(0, 1, 0);
    drv.post_recv(uy, 5, {{umr.iova, 64, umr.lkey}});
    SendWr w;
    w.wr_id = 6;
    w.sge = {{umr.iova + 1024, 64, umr.lkey}};
    drv.post_send(ux, w);
    drv.run();
    auto s = drv.poll_cq(send_cq);
    ASSERT_EQ(1u, s.size());
    EXPECT_EQ(VRNIC_WC_RETRY_EXC_ERR, s[0].status);
    auto ev = drv.take_async_events();
    EXPECT_EQ(1u, count_events(ev, VRNIC_EQE_SRQ_ERR, srq.srqn));
    EXPECT_EQ(1u, count_events(ev, VRNIC_EQE_QP_FATAL, b[0].qpn));
    EXPECT_EQ(1u, count_events(ev, VRNIC_EQE_QP_LAST_WQE_REACHED, b[0].qpn));
    EXPECT_EQ(VRNIC_QPS_ERR, drv.query_qp(b[0]).qp_state);
    EXPECT_EQ(2u, drv.poll_cq(ucq).size()); // the other context went on
    // Still invalid: the next QP to fetch fails too, SRQ_ERR is not repeated.
    send(1, 2, 0);
    drv.run();
    ev = drv.take_async_events();
    EXPECT_EQ(0u, count_events(ev, VRNIC_EQE_SRQ_ERR, srq.srqn));
    EXPECT_EQ(1u, count_events(ev, VRNIC_EQE_QP_FATAL, b[1].qpn));
    EXPECT_EQ(VRNIC_QPS_RTS, drv.query_qp(b[2]).qp_state); // never fetched
    // Valid again: the SRQ serves b[2].
    post(0);
    send(2, 3, 0);
    drv.run();
    auto r = drv.poll_cq(cq);
    ASSERT_EQ(1u, r.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, r[0].status);
    EXPECT_EQ(b[2].qpn, r[0].qpn);
    EXPECT_EQ(1u, drv.srq_ci(srq));
}

// 64 KiB messages, which move in slices, to receivers that take from one SRQ.
class SrqSlices : public ::testing::Test {
  protected:
    static constexpr uint32_t kBig = 64 * 1024;
    void SetUp() override {
        drv.bring_up();
        pd = drv.create_pd(0);
        scq = drv.create_cq(0, 6);
        rcq = drv.create_cq(0, 6);
        srq = drv.create_srq(0, pd, 4, 6, 3);
        on_srq.srqn = srq.srqn;
        sg = drv.alloc(kBig);
        dg = drv.alloc(2 * kBig);
        smr = drv.reg_mr(pd, sg, kBig, VRNIC_ACCESS_LOCAL_WRITE);
        dmr = drv.reg_mr(pd, dg, 2 * kBig, VRNIC_ACCESS_ALL);
    }
    // A connected sender and a receiver on the SRQ.
    std::pair<QpInfo, QpInfo> pair() {
        QpInfo a = drv.create_qp(0, pd, scq, scq), b = drv.create_qp(0, pd, rcq, rcq, on_srq);
        drv.connect_pair(a, b);
        return {a, b};
    }
    // Posts SRQ WQEs 10 and 11 (the two halves of dg), then lets the first
    // slice of a kBig SEND from sg on a take WQE 0.
    void start_big_send(QpInfo& a) {
        drv.post_srq_recv(srq, 10, {{dmr.iova, kBig, dmr.lkey}});
        drv.post_srq_recv(srq, 11, {{dmr.iova + kBig, kBig, dmr.lkey}});
        SendWr big;
        big.wr_id = 1;
        big.sge = {{smr.iova, kBig, smr.lkey}};
        drv.post_send(a, big);
        drv.poll();
    }

    // Moves the receiver b to `state` while a's big SEND holds SRQ WQE 0:
    // that WQE comes back flushed on b, with the async events cleared first.
    void move_while_held(QpInfo& a, const QpInfo& b, uint8_t state) {
        start_big_send(a);
        drv.take_async_events();
        vrnic_qp_attr attr{};
        attr.qp_state = state;
        ASSERT_EQ(VRNIC_CMD_STATUS_OK, drv.modify_qp(b, VRNIC_QP_ATTR_STATE, attr));
        drv.run();
        auto r = drv.poll_cq(rcq);
        ASSERT_EQ(1u, r.size());
        EXPECT_EQ(VRNIC_WC_WR_FLUSH_ERR, r[0].status);
        EXPECT_EQ(10u, r[0].wr_id);
        EXPECT_EQ(0u, r[0].wqe_idx);
        EXPECT_EQ(b.qpn, r[0].qpn);
    }

    // One big SEND holds SRQ WQE 0 while a small one from another pair
    // takes WQE 1 (after growing the SRQ if `resize`); both land intact.
    void held_wqe_then_small(uint8_t seed, bool resize) {
        auto [a0, b0] = pair();
        auto [a1, b1] = pair();
        drv.fill(sg, kBig, seed);
        start_big_send(a0); // the first slice takes WQE 0
        ASSERT_EQ(1u, drv.srq_ci(srq));
        if (resize) {
            const uint64_t old_ring = srq.ring;
            ASSERT_EQ(VRNIC_CMD_STATUS_OK, drv.resize_srq(srq, 6));
            drv.fill(old_ring, 16 * 64, 0xee); // the device no longer reads it
        }
        SendWr small;
        small.wr_id = 2;
        small.sge = {{smr.iova + 100, 50, smr.lkey}};
        drv.post_send(a1, small);
        drv.run();
        auto r = drv.poll_cq(rcq);
        ASSERT_EQ(2u, r.size());
        std::sort(r.begin(), r.end(), [](auto& x, auto& y) { return x.wqe_idx < y.wqe_idx; });
        for (const auto& c : r)
            EXPECT_EQ(VRNIC_WC_SUCCESS, c.status);
        EXPECT_EQ(b0.qpn, r[0].qpn);
        EXPECT_EQ(10u, r[0].wr_id);
        EXPECT_EQ(kBig, r[0].byte_len);
        EXPECT_EQ(b1.qpn, r[1].qpn);
        EXPECT_EQ(11u, r[1].wr_id);
        EXPECT_EQ(1u, r[1].wqe_idx);
        EXPECT_EQ(50u, r[1].byte_len);
        EXPECT_TRUE(drv.check_pattern(dg, kBig, seed));
        EXPECT_EQ(0, memcmp(drv.host(dg + kBig, 50), drv.host(sg + 100, 50), 50));
        EXPECT_EQ(2u, drv.srq_ci(srq));
    }

    FakeDriver drv{small_srq_params()};
    uint32_t pd = 0;
    CqInfo scq, rcq;
    SrqInfo srq;
    QpOpts on_srq;
    uint64_t sg = 0, dg = 0;
    MrInfo smr, dmr;
};

// A message moved in slices keeps its SRQ WQE: another QP that receives in
// between takes the next one.
TEST_F(SrqSlices, HeldWqeIsNotTakenByAnotherQp) {
    held_wqe_then_small(0x21, false);
}

// A resize while a QP holds a WQE it took (a message in slices): that WQE
// completes from the QP's copy, the next from the new ring.
TEST_F(SrqSlices, ResizeKeepsTheHeldWqe) {
    held_wqe_then_small(0x33, true);
}

// The requester fails while its message holds the responder's SRQ WQE: the
// responder keeps the WQE and its next message lands in it.
TEST_F(SrqSlices, AbortedMessageLeavesItsWqeToTheNext) {
    auto [a, b] = pair();
    drv.fill(sg, kBig, 0x44);
    start_big_send(a);
    EXPECT_EQ(1u, drv.srq_ci(srq));
    vrnic_qp_attr st{};
    st.qp_state = VRNIC_QPS_RESET; // the message is abandoned
    ASSERT_EQ(OK, drv.modify_qp(a, VRNIC_QP_ATTR_STATE, st));
    drv.connect(a, b.qpn);
    SendWr small;
    small.wr_id = 2;
    small.sge = {{smr.iova, 40, smr.lkey}};
    drv.post_send(a, small);
    drv.run();
    auto r = drv.poll_cq(rcq);
    ASSERT_EQ(1u, r.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, r[0].status);
    EXPECT_EQ(10u, r[0].wr_id);
    EXPECT_EQ(0u, r[0].wqe_idx);
    EXPECT_EQ(40u, r[0].byte_len);
    EXPECT_TRUE(drv.check_pattern(dg, 40, 0x44));
    EXPECT_EQ(1u, drv.srq_ci(srq));
}

// The responder goes to ERR while a message holds its SRQ WQE: the WQE is
// flushed on that QP, then QP_LAST_WQE_REACHED.
TEST_F(SrqSlices, ErrFlushesTheHeldWqeFirst) {
    auto [a, b] = pair();
    move_while_held(a, b, VRNIC_QPS_ERR);
    auto ev = drv.take_async_events();
    ASSERT_EQ(1u, ev.size());
    EXPECT_EQ(VRNIC_EQE_QP_LAST_WQE_REACHED, ev[0].type);
    EXPECT_EQ(1u, drv.srq_ci(srq)); // WQE 1 stays in the SRQ
    auto s = drv.poll_cq(scq);
    ASSERT_EQ(1u, s.size());
    EXPECT_EQ(VRNIC_WC_RETRY_EXC_ERR, s[0].status);
}

// The responder is reset while a message holds its SRQ WQE: the WQE is
// flushed, so that the SRQ's owner gets its buffer back, with no event.
TEST_F(SrqSlices, ResetFlushesTheHeldWqe) {
    auto [a, b] = pair();
    move_while_held(a, b, VRNIC_QPS_RESET);
    EXPECT_TRUE(drv.take_async_events().empty());
    EXPECT_EQ(1u, drv.srq_ci(srq)); // WQE 1 stays in the SRQ
}

} // namespace
} // namespace vrnic::test
