// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The provider's ring logic against fake rings in plain memory: WQE layout
// for every opcode, inline packing, SGE limits, full queues, wrap-around,
// the wake-up handshake, CQE parsing, polling and the arm word.

#include <arpa/inet.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "fake_device.h"
#include "ring.h"

namespace vrnic::prov::test {
namespace {

int count_kicks(void* arg) {
    ++*static_cast<int*>(arg);
    return 0;
}

// A send queue on a fake ring with its own doorbell page.
struct SqFixture : ::testing::Test {
    static constexpr uint32_t kSlot = 3;
    FakeDbPage dbp;
    Doorbell db;
    int kicks = 0;
    std::unique_ptr<Buffer> ring;
    SendQueue sq;

    void make(uint32_t log_depth, uint32_t shift, uint32_t max_sge, uint32_t max_inline,
              bool sig_all = false, uint64_t send_ops = qp_send_ops(IBV_QPT_RC)) {
        db.init(dbp.page(), count_kicks, &kicks);
        ring = std::make_unique<Buffer>(size_t{1} << (log_depth + shift));
        SqLimits lim;
        lim.max_sge = max_sge;
        lim.max_inline = max_inline;
        lim.sig_all = sig_all;
        lim.send_ops = send_ops;
        sq.init(ring->data(), log_depth, shift, lim);
    }
    void SetUp() override { make(4, 8, VRNIC_SQ_MAX_SGE(8), VRNIC_SQ_MAX_INLINE(8)); }
    const unsigned char* wqe(uint32_t idx) const { return sq.slot(idx); }
    uint32_t* pi_word() { return db.word(kSlot, VRNIC_DB_QP_SQ_PI); }
};

ibv_send_wr make_wr(ibv_wr_opcode op, ibv_sge* sg, int n, unsigned flags = IBV_SEND_SIGNALED) {
    ibv_send_wr wr{};
    wr.wr_id = 0x1122334455667788ULL;
    wr.opcode = op;
    wr.sg_list = sg;
    wr.num_sge = n;
    wr.send_flags = flags;
    return wr;
}

TEST_F(SqFixture, RdmaWriteLayout) {
    std::memset(ring->data(), 0xff, ring->size()); // reserved bytes must be rewritten
    ibv_sge sg[2] = {{0x1000, 100, 0xaa}, {0x2000, 200, 0xbb}};
    auto wr = make_wr(IBV_WR_RDMA_WRITE, sg, 2);
    wr.wr.rdma.remote_addr = 0xdeadbeef000ULL;
    wr.wr.rdma.rkey = 0x1234;
    ASSERT_EQ(0, sq.post(wr));
    EXPECT_EQ(1u, sq.pi());
    const unsigned char* w = wqe(0);
    EXPECT_EQ(0x1122334455667788ULL, rd<uint64_t>(w, 0x00));
    EXPECT_EQ(VRNIC_WR_RDMA_WRITE, rd<uint8_t>(w, 0x08));
    EXPECT_EQ(VRNIC_WQE_F_SIGNALED, rd<uint8_t>(w, 0x09));
    EXPECT_EQ(2, rd<uint8_t>(w, 0x0a));
    EXPECT_EQ(0, rd<uint8_t>(w, 0x0b));
    EXPECT_EQ(0u, rd<uint32_t>(w, 0x0c));
    EXPECT_EQ(0xdeadbeef000ULL, rd<uint64_t>(w, 0x10));
    EXPECT_EQ(0x1234u, rd<uint32_t>(w, 0x18));
    EXPECT_EQ(0u, rd<uint32_t>(w, 0x1c));
    EXPECT_EQ(0u, rd<uint64_t>(w, 0x20));
    EXPECT_EQ(0u, rd<uint64_t>(w, 0x28));
    EXPECT_EQ(0x1000u, rd<uint64_t>(w, 0x30));
    EXPECT_EQ(100u, rd<uint32_t>(w, 0x38));
    EXPECT_EQ(0xaau, rd<uint32_t>(w, 0x3c));
    EXPECT_EQ(0x2000u, rd<uint64_t>(w, 0x40));
    EXPECT_EQ(200u, rd<uint32_t>(w, 0x48));
    EXPECT_EQ(0xbbu, rd<uint32_t>(w, 0x4c));
}

TEST_F(SqFixture, WriteWithImmCarriesImmediateInNetworkOrder) {
    ibv_sge sg{0x1000, 8, 1};
    auto wr = make_wr(IBV_WR_RDMA_WRITE_WITH_IMM, &sg, 1, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
    wr.imm_data = htonl(0xcafe0001);
    wr.wr.rdma.remote_addr = 0x5000;
    wr.wr.rdma.rkey = 7;
    ASSERT_EQ(0, sq.post(wr));
    const unsigned char* w = wqe(0);
    EXPECT_EQ(VRNIC_WR_RDMA_WRITE_WITH_IMM, rd<uint8_t>(w, 0x08));
    EXPECT_EQ(VRNIC_WQE_F_SIGNALED | VRNIC_WQE_F_SOLICITED, rd<uint8_t>(w, 0x09));
    EXPECT_EQ(htonl(0xcafe0001), rd<uint32_t>(w, 0x0c));
    EXPECT_EQ(0x5000u, rd<uint64_t>(w, 0x10));
    EXPECT_EQ(7u, rd<uint32_t>(w, 0x18));
}

TEST_F(SqFixture, SendAndSendImmLeaveUnionZero) {
    std::memset(ring->data(), 0xff, ring->size());
    ibv_sge sg{0x1000, 64, 1};
    auto wr = make_wr(IBV_WR_SEND, &sg, 1, 0);
    wr.imm_data = htonl(5);        // ignored for SEND
    wr.wr.rdma.remote_addr = 0x99; // ignored for SEND
    ASSERT_EQ(0, sq.post(wr));
    wr.opcode = IBV_WR_SEND_WITH_IMM;
    ASSERT_EQ(0, sq.post(wr));
    const unsigned char* w0 = wqe(0);
    EXPECT_EQ(VRNIC_WR_SEND, rd<uint8_t>(w0, 0x08));
    EXPECT_EQ(0, rd<uint8_t>(w0, 0x09)); // unsignaled
    EXPECT_EQ(0u, rd<uint32_t>(w0, 0x0c));
    for (size_t off = 0x10; off < 0x30; off += 8)
        EXPECT_EQ(0u, rd<uint64_t>(w0, off)) << off;
    const unsigned char* w1 = wqe(1);
    EXPECT_EQ(VRNIC_WR_SEND_WITH_IMM, rd<uint8_t>(w1, 0x08));
    EXPECT_EQ(htonl(5), rd<uint32_t>(w1, 0x0c));
    EXPECT_EQ(1, rd<uint8_t>(w1, 0x0a));
}

TEST_F(SqFixture, RdmaReadLayout) {
    ibv_sge sg{0x3000, 4096, 9};
    auto wr = make_wr(IBV_WR_RDMA_READ, &sg, 1, IBV_SEND_SIGNALED | IBV_SEND_FENCE);
    wr.wr.rdma.remote_addr = 0x7000;
    wr.wr.rdma.rkey = 0x55;
    ASSERT_EQ(0, sq.post(wr));
    const unsigned char* w = wqe(0);
    EXPECT_EQ(VRNIC_WR_RDMA_READ, rd<uint8_t>(w, 0x08));
    EXPECT_EQ(VRNIC_WQE_F_SIGNALED | VRNIC_WQE_F_FENCE, rd<uint8_t>(w, 0x09));
    EXPECT_EQ(0x7000u, rd<uint64_t>(w, 0x10));
    EXPECT_EQ(0x55u, rd<uint32_t>(w, 0x18));
    EXPECT_EQ(4096u, rd<uint32_t>(w, 0x38));
}

TEST_F(SqFixture, AtomicLayouts) {
    ibv_sge sg{0x4000, 8, 3};
    auto wr = make_wr(IBV_WR_ATOMIC_CMP_AND_SWP, &sg, 1);
    wr.wr.atomic.remote_addr = 0x8008;
    wr.wr.atomic.rkey = 0x77;
    wr.wr.atomic.compare_add = 0x1111;
    wr.wr.atomic.swap = 0x2222;
    ASSERT_EQ(0, sq.post(wr));
    wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
    wr.wr.atomic.compare_add = 5;
    wr.wr.atomic.swap = 0;
    ASSERT_EQ(0, sq.post(wr));
    const unsigned char* w = wqe(0);
    EXPECT_EQ(VRNIC_WR_ATOMIC_CMP_AND_SWP, rd<uint8_t>(w, 0x08));
    EXPECT_EQ(0x8008u, rd<uint64_t>(w, 0x10));
    EXPECT_EQ(0x77u, rd<uint32_t>(w, 0x18));
    EXPECT_EQ(0x1111u, rd<uint64_t>(w, 0x20));
    EXPECT_EQ(0x2222u, rd<uint64_t>(w, 0x28));
    EXPECT_EQ(1, rd<uint8_t>(w, 0x0a));
    EXPECT_EQ(8u, rd<uint32_t>(w, 0x38));
    const unsigned char* w1 = wqe(1);
    EXPECT_EQ(VRNIC_WR_ATOMIC_FETCH_AND_ADD, rd<uint8_t>(w1, 0x08));
    EXPECT_EQ(5u, rd<uint64_t>(w1, 0x20));
}

TEST_F(SqFixture, AtomicNeedsOneEightByteSge) {
    ibv_sge sg[2] = {{0x4000, 4, 3}, {0x5000, 4, 3}};
    auto wr = make_wr(IBV_WR_ATOMIC_FETCH_AND_ADD, sg, 1);
    EXPECT_EQ(EINVAL, sq.post(wr));
    wr.num_sge = 2;
    sg[0].length = 8;
    EXPECT_EQ(EINVAL, sq.post(wr));
    wr.num_sge = 0;
    EXPECT_EQ(EINVAL, sq.post(wr));
    // INLINE does not apply to atomics: still needs its SGE.
    wr.num_sge = 1;
    wr.send_flags |= IBV_SEND_INLINE;
    EXPECT_EQ(0, sq.post(wr));
    EXPECT_EQ(0, rd<uint8_t>(wqe(0), 0x09) & VRNIC_WQE_F_INLINE);
    EXPECT_EQ(1u, sq.pi());
}

TEST_F(SqFixture, UnsupportedOpcodesAreRejected) {
    ibv_sge sg{0x1000, 8, 1};
    for (auto op :
         {IBV_WR_LOCAL_INV, IBV_WR_BIND_MW, IBV_WR_SEND_WITH_INV, IBV_WR_TSO, IBV_WR_DRIVER1}) {
        auto wr = make_wr(op, &sg, 1);
        EXPECT_EQ(EINVAL, sq.post(wr)) << op;
    }
    EXPECT_EQ(0u, sq.pi());
}

TEST(QpType, EachTypeTakesItsOpcodes) {
    const uint64_t rc = qp_send_ops(IBV_QPT_RC);
    for (unsigned op = VRNIC_WR_RDMA_WRITE; op <= VRNIC_WR_ATOMIC_FETCH_AND_ADD; op++)
        EXPECT_TRUE(rc >> op & 1) << op;
    EXPECT_EQ(0u, rc >> (VRNIC_WR_ATOMIC_FETCH_AND_ADD + 1));
    // UC: sends and writes; nothing that needs a response.
    EXPECT_EQ(uint64_t{1} << VRNIC_WR_RDMA_WRITE | uint64_t{1} << VRNIC_WR_RDMA_WRITE_WITH_IMM |
                  uint64_t{1} << VRNIC_WR_SEND | uint64_t{1} << VRNIC_WR_SEND_WITH_IMM,
              qp_send_ops(IBV_QPT_UC));
    EXPECT_EQ(uint64_t{1} << VRNIC_WR_SEND | uint64_t{1} << VRNIC_WR_SEND_WITH_IMM,
              qp_send_ops(IBV_QPT_UD));
    // An XRC initiator sends what RC sends; a target has no SQ.
    EXPECT_EQ(rc, qp_send_ops(IBV_QPT_XRC_SEND));
    for (auto t : {IBV_QPT_RAW_PACKET, IBV_QPT_XRC_RECV, IBV_QPT_DRIVER})
        EXPECT_EQ(0u, qp_send_ops(t)) << t;
}

// An XRC initiator's WQEs name the remote XRC SRQ at 0x1c, in the SEND/RDMA
// layout and in the atomic one.
TEST_F(SqFixture, XrcNamesTheRemoteSrqInEveryWqe) {
    SqLimits lim;
    lim.max_sge = 4;
    lim.send_ops = qp_send_ops(IBV_QPT_XRC_SEND);
    lim.xrc = true;
    sq.init(ring->data(), 4, 8, lim);
    ibv_sge sg = {0x1000, 8, 0xaa};
    auto wr = make_wr(IBV_WR_SEND, &sg, 1);
    wr.qp_type.xrc.remote_srqn = 0x12345;
    ASSERT_EQ(0, sq.post(wr));
    EXPECT_EQ(0x12345u, rd<uint32_t>(wqe(0), 0x1c));
    auto a = make_wr(IBV_WR_ATOMIC_FETCH_AND_ADD, &sg, 1);
    a.wr.atomic.remote_addr = 0x8000;
    a.wr.atomic.rkey = 7;
    a.wr.atomic.compare_add = 5;
    a.qp_type.xrc.remote_srqn = 0x777;
    ASSERT_EQ(0, sq.post(a));
    EXPECT_EQ(0x8000u, rd<uint64_t>(wqe(1), 0x10));
    EXPECT_EQ(7u, rd<uint32_t>(wqe(1), 0x18));
    EXPECT_EQ(0x777u, rd<uint32_t>(wqe(1), 0x1c));
    EXPECT_EQ(5u, rd<uint64_t>(wqe(1), 0x20));
}

// UC refuses READ and atomics at post time, on both posting paths.
TEST_F(SqFixture, UcRefusesReadAndAtomics) {
    make(4, 8, VRNIC_SQ_MAX_SGE(8), VRNIC_SQ_MAX_INLINE(8), false, qp_send_ops(IBV_QPT_UC));
    ibv_sge sg{0x1000, 8, 1};
    for (auto op : {IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD}) {
        auto wr = make_wr(op, &sg, 1);
        EXPECT_EQ(EINVAL, sq.post(wr)) << op;
        WrBuilder b;
        b.start(sq);
        b.open(1, 0, static_cast<uint8_t>(op));
        EXPECT_EQ(EINVAL, b.complete(db, pi_word())) << op;
    }
    EXPECT_EQ(0u, sq.pi());
    for (auto op :
         {IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_SEND, IBV_WR_SEND_WITH_IMM}) {
        auto wr = make_wr(op, &sg, 1);
        EXPECT_EQ(0, sq.post(wr)) << op;
    }
    EXPECT_EQ(4u, sq.pi());
}

// A UD send names its destination in the union: the AH's device handle, the
// remote QPN and qkey (spec 13.1), whatever the rdma fields hold.
TEST_F(SqFixture, UdSendLayout) {
    SqLimits lim;
    lim.max_sge = VRNIC_SQ_MAX_SGE(8);
    lim.max_inline = VRNIC_SQ_MAX_INLINE(8);
    lim.send_ops = qp_send_ops(IBV_QPT_UD);
    lim.ud = true;
    sq.init(ring->data(), 4, 8, lim);
    std::memset(ring->data(), 0xff, ring->size());
    Ah ah{};
    ah.handle = 0x51;
    ibv_sge sg{0x1000, 64, 1};
    auto wr = make_wr(IBV_WR_SEND_WITH_IMM, &sg, 1);
    wr.imm_data = htonl(0x0a0b0c0d);
    wr.wr.ud.ah = &ah.ah;
    wr.wr.ud.remote_qpn = 0x123456;
    wr.wr.ud.remote_qkey = 0x11111111;
    ASSERT_EQ(0, sq.post(wr));
    const unsigned char* w = wqe(0);
    EXPECT_EQ(VRNIC_WR_SEND_WITH_IMM, rd<uint8_t>(w, 0x08));
    EXPECT_EQ(htonl(0x0a0b0c0d), rd<uint32_t>(w, 0x0c));
    EXPECT_EQ(0x51u, rd<uint32_t>(w, 0x10));
    EXPECT_EQ(0x123456u, rd<uint32_t>(w, 0x14));
    EXPECT_EQ(0x11111111u, rd<uint32_t>(w, 0x18));
    for (size_t off = 0x1c; off < 0x30; off += 4)
        EXPECT_EQ(0u, rd<uint32_t>(w, off)) << off;
    EXPECT_EQ(0x1000u, rd<uint64_t>(w, 0x30));

    // The QP's own qkey is asked for with the high bit, passed on as is.
    wr.opcode = IBV_WR_SEND;
    wr.wr.ud.remote_qkey = VRNIC_QKEY_USE_QP;
    ASSERT_EQ(0, sq.post(wr));
    EXPECT_EQ(VRNIC_QKEY_USE_QP, rd<uint32_t>(wqe(1), 0x18));

    // Only sends, and only with an AH.
    wr.opcode = IBV_WR_RDMA_WRITE;
    EXPECT_EQ(EINVAL, sq.post(wr));
    wr.opcode = IBV_WR_SEND;
    wr.wr.ud.ah = nullptr;
    EXPECT_EQ(EINVAL, sq.post(wr));
    EXPECT_EQ(2u, sq.pi());

    // The ibv_wr_* session fills the same fields.
    WrBuilder b;
    b.start(sq);
    b.open(7, 0, VRNIC_WR_SEND);
    b.ud(&ah.ah, 0x42, 0x77);
    b.sge(1, 0x2000, 8);
    ASSERT_EQ(0, b.complete(db, pi_word()));
    EXPECT_EQ(0x51u, rd<uint32_t>(wqe(2), 0x10));
    EXPECT_EQ(0x42u, rd<uint32_t>(wqe(2), 0x14));
    EXPECT_EQ(0x77u, rd<uint32_t>(wqe(2), 0x18));
    b.start(sq);
    b.open(8, 0, VRNIC_WR_SEND);
    b.ud(nullptr, 0x42, 0x77);
    EXPECT_EQ(EINVAL, b.complete(db, pi_word()));
    b.start(sq);
    b.open(8, 0, VRNIC_WR_RDMA_WRITE);
    EXPECT_EQ(EINVAL, b.complete(db, pi_word()));
    EXPECT_EQ(3u, sq.pi());
}

// A UD WQE built in a session needs its destination; only UD QPs take one.
TEST_F(SqFixture, WrSessionUdAddressRules) {
    SqLimits lim;
    lim.max_sge = VRNIC_SQ_MAX_SGE(8);
    lim.max_inline = VRNIC_SQ_MAX_INLINE(8);
    lim.send_ops = qp_send_ops(IBV_QPT_UD);
    lim.ud = true;
    sq.init(ring->data(), 4, 8, lim);
    Ah ah{};
    ah.handle = 0x51;
    WrBuilder b;
    b.start(sq);
    b.open(1, 0, VRNIC_WR_SEND); // no address: the next open fails it
    b.sge(1, 0x2000, 8);
    b.open(2, 0, VRNIC_WR_SEND);
    b.ud(&ah.ah, 0x42, 0x77);
    EXPECT_EQ(EINVAL, b.complete(db, pi_word()));
    b.start(sq);
    b.open(3, 0, VRNIC_WR_SEND); // the last WQE without one: complete fails
    b.sge(1, 0x2000, 8);
    EXPECT_EQ(EINVAL, b.complete(db, pi_word()));
    EXPECT_EQ(0u, sq.pi());
    b.start(sq);
    b.open(4, 0, VRNIC_WR_SEND);
    b.ud(&ah.ah, 0x42, 0x77);
    b.open(5, 0, VRNIC_WR_SEND_WITH_IMM, htonl(9));
    b.ud(&ah.ah, 0x43, 0x78);
    ASSERT_EQ(0, b.complete(db, pi_word()));
    EXPECT_EQ(2u, sq.pi());
    EXPECT_EQ(0x43u, rd<uint32_t>(wqe(1), 0x14));

    // An RC QP's WQEs have no datagram address.
    make(4, 8, VRNIC_SQ_MAX_SGE(8), VRNIC_SQ_MAX_INLINE(8));
    b.start(sq);
    b.open(6, 0, VRNIC_WR_SEND);
    b.ud(&ah.ah, 0x42, 0x77);
    EXPECT_EQ(EINVAL, b.complete(db, pi_word()));
    EXPECT_EQ(0u, sq.pi());
}

// A queue whose user serializes its calls (thread domain) takes no lock.
TEST(QueueLock, SingleThreadedSkipsTheLock) {
    QueueLock l;
    l.lock();
    EXPECT_FALSE(l.try_lock());
    l.unlock();
    QueueLock st;
    st.set_single_threaded();
    EXPECT_TRUE(st.single_threaded());
    st.lock();
    EXPECT_TRUE(st.try_lock()); // no lock was taken
    st.unlock();
    st.unlock();
}

TEST(Cqe, UnknownStatusIsAGeneralError) {
    vrnic_cqe c{};
    c.status = VRNIC_WC_GENERAL_ERR + 1;
    EXPECT_EQ(IBV_WC_GENERAL_ERR, cqe_status(c));
    c.status = VRNIC_WC_REM_ACCESS_ERR;
    EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, cqe_status(c));
    ibv_wc wc{};
    c.status = 200;
    cqe_to_wc(c, &wc);
    EXPECT_EQ(IBV_WC_GENERAL_ERR, wc.status);
}

// A type's opcode set bounds both ibv_post_send and the ibv_wr_* session.
TEST_F(SqFixture, OpcodesOutsideTheTypesSetAreRejected) {
    make(4, 8, VRNIC_SQ_MAX_SGE(8), VRNIC_SQ_MAX_INLINE(8), false,
         IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM);
    ibv_sge sg{0x1000, 8, 1};
    auto write = make_wr(IBV_WR_RDMA_WRITE, &sg, 1);
    EXPECT_EQ(EINVAL, sq.post(write));
    auto send = make_wr(IBV_WR_SEND, &sg, 1);
    EXPECT_EQ(0, sq.post(send));
    EXPECT_EQ(1u, sq.pi());

    WrBuilder b;
    b.start(sq);
    b.open(1, 0, VRNIC_WR_SEND);
    b.sge(1, 0x1000, 8);
    b.open(2, 0, VRNIC_WR_RDMA_READ);
    b.rdma(0x10, 0x9000);
    b.sge(1, 0x1000, 8);
    EXPECT_EQ(EINVAL, b.complete(db, pi_word()));
    EXPECT_EQ(1u, sq.pi());
}

TEST_F(SqFixture, SgeLimit) {
    const uint32_t max = sq.limits().max_sge; // 13 for a 256-byte stride
    ASSERT_EQ(13u, max);
    std::vector<ibv_sge> sg(max + 1, ibv_sge{0x1000, 1, 1});
    auto wr = make_wr(IBV_WR_SEND, sg.data(), static_cast<int>(max));
    EXPECT_EQ(0, sq.post(wr));
    wr.num_sge = static_cast<int>(max + 1);
    EXPECT_EQ(EINVAL, sq.post(wr));
    wr.num_sge = -1;
    EXPECT_EQ(EINVAL, sq.post(wr));
    EXPECT_EQ(1u, sq.pi());
    EXPECT_EQ(max, rd<uint8_t>(wqe(0), 0x0a));
}

TEST_F(SqFixture, InlinePacksSgesBackToBack) {
    std::memset(ring->data(), 0xff, ring->size());
    char a[] = "hello, ";
    char b[] = "inline ";
    char c[] = "world";
    ibv_sge sg[3] = {{reinterpret_cast<uintptr_t>(a), 7, 0},
                     {reinterpret_cast<uintptr_t>(b), 7, 0xdead}, // lkey ignored
                     {reinterpret_cast<uintptr_t>(c), 5, 0}};
    auto wr = make_wr(IBV_WR_SEND, sg, 3, IBV_SEND_INLINE | IBV_SEND_SIGNALED);
    ASSERT_EQ(0, sq.post(wr));
    const unsigned char* w = wqe(0);
    EXPECT_EQ(VRNIC_WQE_F_INLINE | VRNIC_WQE_F_SIGNALED, rd<uint8_t>(w, 0x09));
    EXPECT_EQ(0, rd<uint8_t>(w, 0x0a));
    EXPECT_EQ(19u, rd<uint32_t>(w, 0x30));
    EXPECT_EQ(0u, rd<uint32_t>(w, 0x34));
    EXPECT_EQ(0, std::memcmp(w + 0x38, "hello, inline world", 19));
}

TEST_F(SqFixture, InlineLimitAndZeroLength) {
    const uint32_t max = sq.limits().max_inline; // 200 for 256 bytes
    ASSERT_EQ(200u, max);
    std::vector<char> data(max + 1, 'x');
    ibv_sge sg{reinterpret_cast<uintptr_t>(data.data()), max, 0};
    auto wr = make_wr(IBV_WR_RDMA_WRITE, &sg, 1, IBV_SEND_INLINE);
    EXPECT_EQ(0, sq.post(wr));
    EXPECT_EQ(max, rd<uint32_t>(wqe(0), 0x30));
    sg.length = max + 1;
    EXPECT_EQ(EINVAL, sq.post(wr));
    // Two pieces adding up to one byte too many.
    ibv_sge two[2] = {{reinterpret_cast<uintptr_t>(data.data()), max, 0},
                      {reinterpret_cast<uintptr_t>(data.data()), 1, 0}};
    wr.sg_list = two;
    wr.num_sge = 2;
    EXPECT_EQ(EINVAL, sq.post(wr));
    // Zero bytes inline is fine.
    wr.num_sge = 0;
    EXPECT_EQ(0, sq.post(wr));
    EXPECT_EQ(0u, rd<uint32_t>(wqe(1), 0x30));
    EXPECT_EQ(2u, sq.pi());
}

TEST_F(SqFixture, InlineFlagIgnoredForRead) {
    ibv_sge sg{0x1000, 300, 4};
    auto wr = make_wr(IBV_WR_RDMA_READ, &sg, 1, IBV_SEND_INLINE);
    ASSERT_EQ(0, sq.post(wr));
    EXPECT_EQ(0, rd<uint8_t>(wqe(0), 0x09) & VRNIC_WQE_F_INLINE);
    EXPECT_EQ(1, rd<uint8_t>(wqe(0), 0x0a));
}

TEST_F(SqFixture, SigAllSignalsEverything) {
    make(2, 6, 1, 8, /*sig_all=*/true);
    ibv_sge sg{0x1000, 8, 1};
    auto wr = make_wr(IBV_WR_SEND, &sg, 1, 0);
    ASSERT_EQ(0, sq.post(wr));
    EXPECT_EQ(VRNIC_WQE_F_SIGNALED, rd<uint8_t>(wqe(0), 0x09));
}

TEST_F(SqFixture, SmallestStrideHoldsOneSgeOrEightInlineBytes) {
    make(2, 6, VRNIC_SQ_MAX_SGE(6), VRNIC_SQ_MAX_INLINE(6));
    EXPECT_EQ(1u, sq.limits().max_sge);
    EXPECT_EQ(8u, sq.limits().max_inline);
    uint64_t v = 0x0102030405060708ULL;
    ibv_sge sg{reinterpret_cast<uintptr_t>(&v), 8, 0};
    auto wr = make_wr(IBV_WR_SEND, &sg, 1, IBV_SEND_INLINE);
    ASSERT_EQ(0, sq.post(wr));
    EXPECT_EQ(v, rd<uint64_t>(wqe(0), 0x38)); // last 8 bytes of the 64-byte slot
}

TEST_F(SqFixture, FullQueueFailsWithEnomemUntilRetired) {
    make(2, 6, 1, 8); // depth 4
    ibv_sge sg{0x1000, 8, 1};
    auto wr = make_wr(IBV_WR_SEND, &sg, 1);
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(0, sq.post(wr)) << i;
    EXPECT_TRUE(sq.full());
    EXPECT_EQ(ENOMEM, sq.post(wr));
    sq.publish(db, pi_word(), VRNIC_DB_STATUS_NEED_WAKEUP);
    EXPECT_TRUE(sq.retire(1)); // WQEs 0 and 1 done
    EXPECT_EQ(2u, sq.ci());
    EXPECT_EQ(0, sq.post(wr));
    EXPECT_EQ(0, sq.post(wr));
    EXPECT_EQ(ENOMEM, sq.post(wr));
}

TEST_F(SqFixture, RetireRejectsIndicesThatAreNotOutstanding) {
    ibv_sge sg{0x1000, 8, 1};
    auto wr = make_wr(IBV_WR_SEND, &sg, 1);
    ASSERT_EQ(0, sq.post(wr));
    ASSERT_EQ(0, sq.post(wr));
    EXPECT_FALSE(sq.retire(0)); // built but not published yet
    sq.publish(db, pi_word(), VRNIC_DB_STATUS_NEED_WAKEUP);
    EXPECT_FALSE(sq.retire(2)); // beyond pi
    EXPECT_FALSE(sq.retire(0xffffffff));
    EXPECT_TRUE(sq.retire(0));
    EXPECT_FALSE(sq.retire(0)); // already retired
    EXPECT_TRUE(sq.retire(1));
    EXPECT_EQ(2u, sq.ci());
}

TEST_F(SqFixture, WrapAroundUsesSlotModuloDepth) {
    make(2, 6, 1, 8); // depth 4, 64-byte slots
    ibv_sge sg{0x1000, 8, 1};
    for (uint64_t i = 0; i < 11; i++) {
        auto wr = make_wr(IBV_WR_SEND, &sg, 1);
        wr.wr_id = i;
        ASSERT_EQ(0, sq.post(wr));
        sq.publish(db, pi_word(), VRNIC_DB_STATUS_NEED_WAKEUP);
        EXPECT_EQ(i, rd<uint64_t>(ring->data(), (i % 4) * 64)) << i;
        ASSERT_TRUE(sq.retire(static_cast<uint32_t>(i)));
    }
    EXPECT_EQ(11u, dbp.word(kSlot, VRNIC_DB_QP_SQ_PI));
}

TEST_F(SqFixture, FreeRunningIndicesWrapAt32Bits) {
    make(2, 6, 1, 8);
    // Start just below 2^32 by rewinding the builder's view of the indices.
    ibv_sge sg{0x1000, 8, 1};
    auto wr = make_wr(IBV_WR_SEND, &sg, 1);
    for (uint32_t i = 0; i < 6; i++) {
        sq.rewind(0xfffffffdU + i);
        sq.discard_outstanding();
        ASSERT_EQ(0, sq.post(wr));
    }
    EXPECT_EQ(0xfffffffdU + 6, sq.pi()); // wrapped to 3
    EXPECT_EQ(1u, sq.outstanding());
}

TEST_F(SqFixture, PublishWakesTheDeviceOnlyWhenAsked) {
    ibv_sge sg{0x1000, 8, 1};
    auto wr = make_wr(IBV_WR_SEND, &sg, 1);
    ASSERT_EQ(0, sq.post(wr));
    sq.publish(db, pi_word(), VRNIC_DB_STATUS_NEED_WAKEUP);
    EXPECT_EQ(1u, dbp.word(kSlot, VRNIC_DB_QP_SQ_PI));
    EXPECT_EQ(0, kicks);
    dbp.set_status(VRNIC_DB_STATUS_NEED_WAKEUP);
    ASSERT_EQ(0, sq.post(wr));
    ASSERT_EQ(0, sq.post(wr));
    sq.publish(db, pi_word(), VRNIC_DB_STATUS_NEED_WAKEUP);
    EXPECT_EQ(3u, dbp.word(kSlot, VRNIC_DB_QP_SQ_PI));
    EXPECT_EQ(1, kicks);                                    // one kick for the batch
    sq.publish(db, pi_word(), VRNIC_DB_STATUS_NEED_WAKEUP); // nothing new: no store, no kick
    EXPECT_EQ(1, kicks);
    EXPECT_EQ(1u, db.kicks());
    // The RQ word of the same slot is untouched.
    EXPECT_EQ(0u, dbp.word(kSlot, VRNIC_DB_QP_RQ_PI));
}

TEST_F(SqFixture, FatalBitIsVisible) {
    EXPECT_FALSE(db.fatal());
    dbp.set_status(VRNIC_DB_STATUS_FATAL);
    EXPECT_TRUE(db.fatal());
}

TEST(Doorbell, ObjectSlotRange) {
    EXPECT_FALSE(Doorbell::valid_slot(0));
    EXPECT_TRUE(Doorbell::valid_slot(1));
    EXPECT_TRUE(Doorbell::valid_slot(511));
    EXPECT_FALSE(Doorbell::valid_slot(512));
}

// ---------------------------------------------------------------------------
// Receive queue
// ---------------------------------------------------------------------------

TEST(RecvQueue, LayoutLimitsAndWrap) {
    Buffer ring(4 * 64);
    std::memset(ring.data(), 0xff, ring.size());
    RecvQueue rq;
    rq.init(ring.data(), 2, 6, VRNIC_RQ_MAX_SGE(6)); // 3 SGEs per 64-byte slot
    ibv_sge sg[4] = {{0x1000, 10, 1}, {0x2000, 20, 2}, {0x3000, 30, 3}, {0x4000, 40, 4}};
    ibv_recv_wr wr{};
    wr.wr_id = 42;
    wr.sg_list = sg;
    wr.num_sge = 3;
    ASSERT_EQ(0, rq.post(wr));
    const unsigned char* w = ring.data();
    EXPECT_EQ(42u, rd<uint64_t>(w, 0));
    EXPECT_EQ(3, rd<uint8_t>(w, 8));
    for (size_t i = 9; i < 16; i++)
        EXPECT_EQ(0, w[i]) << i;
    EXPECT_EQ(0x1000u, rd<uint64_t>(w, 16));
    EXPECT_EQ(10u, rd<uint32_t>(w, 24));
    EXPECT_EQ(1u, rd<uint32_t>(w, 28));
    EXPECT_EQ(0x3000u, rd<uint64_t>(w, 48));
    wr.num_sge = 4;
    EXPECT_EQ(EINVAL, rq.post(wr));
    wr.num_sge = 0;
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(0, rq.post(wr));
    EXPECT_EQ(ENOMEM, rq.post(wr));

    FakeDbPage dbp;
    Doorbell db;
    db.init(dbp.page(), nullptr, nullptr);
    rq.publish(db, db.word(5, VRNIC_DB_QP_RQ_PI), VRNIC_DB_STATUS_RQ_WAKEUP);
    EXPECT_EQ(4u, dbp.word(5, VRNIC_DB_QP_RQ_PI));
    EXPECT_TRUE(rq.retire(0));
    wr.wr_id = 99;
    ASSERT_EQ(0, rq.post(wr)); // index 4 -> slot 0
    EXPECT_EQ(99u, rd<uint64_t>(w, 0));
    EXPECT_EQ(0, rd<uint8_t>(w, 8));
}

// An SRQ's free space comes from the consumer index the device writes, not
// from completions; an index beyond what was posted is not believed.
// An SRQ of 4 WQEs of 32 bytes on doorbell slot 6 of a fake page.
struct SrqOnSlot6 {
    SrqOnSlot6() {
        db.init(dbp.page(), nullptr, nullptr);
        ci = db.word(6, VRNIC_DB_SRQ_CI);
        pi = db.word(6, VRNIC_DB_SRQ_PI);
        srq.init(ring.data(), 2, 5, VRNIC_RQ_MAX_SGE(5), ci);
    }
    Buffer ring{4 * 32};
    FakeDbPage dbp;
    Doorbell db;
    uint32_t* ci = nullptr;
    uint32_t* pi = nullptr;
    RecvQueue srq;
};

TEST(RecvQueue, SharedQueueFollowsTheDeviceConsumerIndex) {
    SrqOnSlot6 f;
    Buffer& ring = f.ring;
    FakeDbPage& dbp = f.dbp;
    Doorbell& db = f.db;
    uint32_t *ci = f.ci, *pi = f.pi;
    RecvQueue& srq = f.srq;
    ibv_sge sg{0x1000, 8, 1};
    ibv_recv_wr wr{};
    wr.sg_list = &sg;
    wr.num_sge = 1;
    for (int i = 0; i < 4; i++) {
        wr.wr_id = i;
        ASSERT_EQ(0, srq.post(wr));
    }
    EXPECT_EQ(ENOMEM, srq.post(wr));
    srq.publish(db, pi, VRNIC_DB_STATUS_RQ_WAKEUP);
    EXPECT_EQ(4u, dbp.word(6, VRNIC_DB_SRQ_PI));

    *ci = 7; // beyond pi: a device bug or a hostile write
    EXPECT_EQ(ENOMEM, srq.post(wr));
    *ci = 2; // the device took two
    wr.wr_id = 100;
    ASSERT_EQ(0, srq.post(wr));
    ASSERT_EQ(0, srq.post(wr));
    EXPECT_EQ(ENOMEM, srq.post(wr));
    EXPECT_EQ(100u, rd<uint64_t>(ring.data(), 0)); // index 4 -> slot 0
    EXPECT_EQ(2u, rd<uint64_t>(ring.data(), 64));  // slot 2 not reused
    *ci = 1;                                       // backwards
    EXPECT_EQ(ENOMEM, srq.post(wr));
    EXPECT_EQ(2u, srq.ci());
}

// After an SRQ resize the queue keeps its indices and posts into the new,
// deeper ring at index modulo the new depth.
TEST(RecvQueue, MovedRingKeepsIndicesAndGrows) {
    SrqOnSlot6 f;
    Buffer& old_ring = f.ring;
    Buffer new_ring(16 * 32);
    FakeDbPage& dbp = f.dbp;
    Doorbell& db = f.db;
    uint32_t *ci = f.ci, *pi = f.pi;
    RecvQueue& srq = f.srq;
    ibv_recv_wr wr{};
    for (int i = 0; i < 4; i++) {
        wr.wr_id = i;
        ASSERT_EQ(0, srq.post(wr));
    }
    srq.publish(db, pi, VRNIC_DB_STATUS_RQ_WAKEUP);
    *ci = 3; // the device took three
    wr.wr_id = 4;
    ASSERT_EQ(0, srq.post(wr)); // index 4 -> old slot 0
    srq.publish(db, pi, VRNIC_DB_STATUS_RQ_WAKEUP);
    EXPECT_EQ(4u, rd<uint64_t>(old_ring.data(), 0));

    srq.move_ring(new_ring.data(), 4);
    EXPECT_EQ(16u, srq.depth());
    EXPECT_EQ(5u, srq.pi());
    for (uint64_t i = 5; i < 19; i++) { // 2 outstanding + 14 new = 16
        wr.wr_id = i;
        ASSERT_EQ(0, srq.post(wr)) << i;
    }
    EXPECT_EQ(ENOMEM, srq.post(wr));
    srq.publish(db, pi, VRNIC_DB_STATUS_RQ_WAKEUP);
    EXPECT_EQ(19u, dbp.word(6, VRNIC_DB_SRQ_PI));
    EXPECT_EQ(5u, rd<uint64_t>(new_ring.data(), 5 * 32));
    EXPECT_EQ(15u, rd<uint64_t>(new_ring.data(), 15 * 32));
    EXPECT_EQ(16u, rd<uint64_t>(new_ring.data(), 0)); // index 16 -> slot 0
    EXPECT_EQ(18u, rd<uint64_t>(new_ring.data(), 2 * 32));
    EXPECT_EQ(4u, rd<uint64_t>(old_ring.data(), 0)); // the old ring untouched
    EXPECT_EQ(1u, rd<uint64_t>(old_ring.data(), 32));
}

TEST(WorkQueue, RetireToStaysWithinThePublishedRange) {
    Buffer ring(4 * 32);
    RecvQueue q;
    q.init(ring.data(), 2, 5, 1);
    ibv_recv_wr wr{};
    FakeDbPage dbp;
    Doorbell db;
    db.init(dbp.page(), nullptr, nullptr);
    ASSERT_EQ(0, q.post(wr));
    ASSERT_EQ(0, q.post(wr));
    EXPECT_FALSE(q.retire_to(1)); // built, not published
    q.publish(db, db.word(2, 0), VRNIC_DB_STATUS_RQ_WAKEUP);
    EXPECT_TRUE(q.retire_to(0)); // no progress is fine
    EXPECT_TRUE(q.retire_to(1));
    EXPECT_FALSE(q.retire_to(3));
    EXPECT_FALSE(q.retire(0)); // already retired
    EXPECT_TRUE(q.retire(1));
    EXPECT_EQ(2u, q.ci());
}

// A sleeping device reads RQ indices only when a message arrives, so receives
// kick only while it says a requester waits on an RNR retry (RQ_WAKEUP).
TEST(RecvQueue, PublishKicksOnlyForRqWakeup) {
    Buffer ring(4 * 64);
    RecvQueue rq;
    rq.init(ring.data(), 2, 6, VRNIC_RQ_MAX_SGE(6));
    FakeDbPage dbp;
    Doorbell db;
    int kicks = 0;
    db.init(dbp.page(), count_kicks, &kicks);
    uint32_t* word = db.word(5, VRNIC_DB_QP_RQ_PI);
    ibv_recv_wr wr{};
    dbp.set_status(VRNIC_DB_STATUS_NEED_WAKEUP);
    ASSERT_EQ(0, rq.post(wr));
    rq.publish(db, word, VRNIC_DB_STATUS_RQ_WAKEUP);
    EXPECT_EQ(1u, dbp.word(5, VRNIC_DB_QP_RQ_PI));
    EXPECT_EQ(0, kicks);
    dbp.set_status(VRNIC_DB_STATUS_NEED_WAKEUP | VRNIC_DB_STATUS_RQ_WAKEUP);
    ASSERT_EQ(0, rq.post(wr));
    rq.publish(db, word, VRNIC_DB_STATUS_RQ_WAKEUP);
    EXPECT_EQ(2u, dbp.word(5, VRNIC_DB_QP_RQ_PI));
    EXPECT_EQ(1, kicks);
}

// ---------------------------------------------------------------------------
// ibv_wr_* sessions
// ---------------------------------------------------------------------------

TEST_F(SqFixture, WrSessionPublishesAllOrNothing) {
    WrBuilder b;
    uint64_t v = 7;
    b.start(sq);
    b.open(1, IBV_SEND_SIGNALED, VRNIC_WR_RDMA_WRITE);
    b.rdma(0x10, 0x9000);
    b.sge(0x20, 0x1000, 64);
    b.open(2, 0, VRNIC_WR_SEND_WITH_IMM, htonl(3));
    b.inline_data(&v, sizeof(v));
    b.open(3, IBV_SEND_SIGNALED, VRNIC_WR_ATOMIC_FETCH_AND_ADD);
    b.atomic(0x30, 0xa000, 1, 0);
    b.sge(0x40, 0x2000, 8);
    ASSERT_EQ(0, b.complete(db, pi_word()));
    EXPECT_EQ(3u, dbp.word(kSlot, VRNIC_DB_QP_SQ_PI));
    EXPECT_EQ(VRNIC_WR_RDMA_WRITE, rd<uint8_t>(wqe(0), 0x08));
    EXPECT_EQ(0x9000u, rd<uint64_t>(wqe(0), 0x10));
    EXPECT_EQ(0x10u, rd<uint32_t>(wqe(0), 0x18));
    EXPECT_EQ(64u, rd<uint32_t>(wqe(0), 0x38));
    EXPECT_EQ(VRNIC_WQE_F_INLINE, rd<uint8_t>(wqe(1), 0x09));
    EXPECT_EQ(htonl(3), rd<uint32_t>(wqe(1), 0x0c));
    EXPECT_EQ(7u, rd<uint64_t>(wqe(1), 0x38));
    EXPECT_EQ(1u, rd<uint64_t>(wqe(2), 0x20));

    // A bad WR anywhere drops the whole session.
    b.start(sq);
    b.open(4, 0, VRNIC_WR_SEND);
    b.sge(1, 0x1000, 8);
    b.open(5, 0, VRNIC_WR_SEND);
    std::vector<ibv_sge> many(20, ibv_sge{0x1000, 1, 1});
    b.sge_list(many.size(), many.data());
    b.open(6, 0, VRNIC_WR_SEND);
    EXPECT_EQ(EINVAL, b.complete(db, pi_word()));
    EXPECT_EQ(3u, sq.pi());
    EXPECT_EQ(3u, dbp.word(kSlot, VRNIC_DB_QP_SQ_PI));
}

TEST_F(SqFixture, WrSessionErrors) {
    WrBuilder b;
    char big[512] = {};
    b.start(sq);
    b.open(1, 0, VRNIC_WR_RDMA_WRITE);
    b.inline_data(big, sizeof(big)); // > 200
    EXPECT_EQ(EINVAL, b.complete(db, pi_word()));

    b.start(sq);
    b.open(1, 0, VRNIC_WR_RDMA_READ);
    b.inline_data(big, 8); // READ cannot be inline
    EXPECT_EQ(EINVAL, b.complete(db, pi_word()));

    b.start(sq);
    b.sge(1, 0x1000, 8); // no WR opened
    EXPECT_EQ(EINVAL, b.complete(db, pi_word()));

    b.start(sq);
    b.open(1, 0, VRNIC_WR_ATOMIC_CMP_AND_SWP);
    b.sge(1, 0x1000, 4);
    EXPECT_EQ(EINVAL, b.complete(db, pi_word()));

    // The queue filling up in a session: ENOMEM, nothing posted.
    b.start(sq);
    for (int i = 0; i < 17; i++) {
        b.open(i, 0, VRNIC_WR_SEND);
        b.sge(1, 0x1000, 8);
    }
    EXPECT_EQ(ENOMEM, b.complete(db, pi_word()));
    EXPECT_EQ(0u, sq.pi());

    // abort forgets everything.
    b.start(sq);
    b.open(1, 0, VRNIC_WR_SEND);
    b.sge(1, 0x1000, 8);
    b.abort();
    EXPECT_EQ(0u, sq.pi());
    EXPECT_EQ(0u, dbp.word(kSlot, VRNIC_DB_QP_SQ_PI));
    EXPECT_EQ(0, kicks);

    // Inline data list gathers.
    char x[] = "ab", y[] = "cde";
    ibv_data_buf bufs[2] = {{x, 2}, {y, 3}};
    b.start(sq);
    b.open(9, 0, VRNIC_WR_SEND);
    b.inline_list(2, bufs);
    ASSERT_EQ(0, b.complete(db, pi_word()));
    EXPECT_EQ(5u, rd<uint32_t>(wqe(0), 0x30));
    EXPECT_EQ(0, std::memcmp(wqe(0) + 0x38, "abcde", 5));
}

// ---------------------------------------------------------------------------
// CQE parsing
// ---------------------------------------------------------------------------

TEST(Cqe, ToWorkCompletion) {
    vrnic_cqe c{};
    c.wr_id = 0xabcdef;
    c.qpn = 77;
    c.byte_len = 4096;
    c.imm_data = htonl(0x01020304);
    c.src_qp = 78;
    c.opcode = VRNIC_CQE_OP_RECV;
    c.status = VRNIC_WC_SUCCESS;
    c.flags = VRNIC_CQE_F_WITH_IMM;
    c.vendor_err = 0;
    c.pkey_index = 0;
    c.sl = 3;
    c.dlid_path_bits = 1;
    ibv_wc wc;
    std::memset(&wc, 0xee, sizeof(wc));
    cqe_to_wc(c, &wc);
    EXPECT_EQ(0xabcdefu, wc.wr_id);
    EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
    EXPECT_EQ(IBV_WC_RECV, wc.opcode);
    EXPECT_EQ(4096u, wc.byte_len);
    EXPECT_EQ(htonl(0x01020304), wc.imm_data);
    EXPECT_EQ(77u, wc.qp_num);
    EXPECT_EQ(78u, wc.src_qp);
    EXPECT_EQ(unsigned{IBV_WC_WITH_IMM}, wc.wc_flags);
    EXPECT_EQ(0, wc.pkey_index);
    EXPECT_EQ(0, wc.slid);
    EXPECT_EQ(3, wc.sl);
    EXPECT_EQ(1, wc.dlid_path_bits);
    EXPECT_EQ(0u, wc.vendor_err);

    c.opcode = VRNIC_CQE_OP_RECV_RDMA_WITH_IMM;
    cqe_to_wc(c, &wc);
    EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, wc.opcode);

    c.flags = VRNIC_CQE_F_GRH;
    cqe_to_wc(c, &wc);
    EXPECT_EQ(unsigned{IBV_WC_GRH}, wc.wc_flags);

    // A UD receive reports the RoCE packet type as its SL (mlx5's encoding).
    EXPECT_EQ(3, wc.sl); // no network type: the device's SL
    c.network_hdr_type = VRNIC_NET_IPV4;
    cqe_to_wc(c, &wc);
    EXPECT_EQ(0xa, wc.sl);
    EXPECT_EQ(0xa, cqe_sl(c));
    c.network_hdr_type = VRNIC_NET_IPV6;
    cqe_to_wc(c, &wc);
    EXPECT_EQ(0x9, wc.sl);
    c.flags = 0; // not a UD receive: the type is ignored
    cqe_to_wc(c, &wc);
    EXPECT_EQ(3, wc.sl);
    c.flags = VRNIC_CQE_F_GRH;
    c.network_hdr_type = 0;

    c.src_qp = 0xff000042; // a QPN is 24 bits
    cqe_to_wc(c, &wc);
    EXPECT_EQ(0x42u, wc.src_qp);
    EXPECT_EQ(0x42u, cqe_src_qp(c));
    c.src_qp = 78;

    c.flags = 0;
    c.opcode = VRNIC_CQE_OP_RDMA_READ;
    c.status = VRNIC_WC_REM_ACCESS_ERR;
    c.vendor_err = 0x42;
    cqe_to_wc(c, &wc);
    EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, wc.status);
    EXPECT_EQ(IBV_WC_RDMA_READ, wc.opcode);
    EXPECT_EQ(0x42u, wc.vendor_err);
    EXPECT_EQ(0u, wc.wc_flags);

    c.status = 200; // nonsense from the device
    cqe_to_wc(c, &wc);
    EXPECT_EQ(IBV_WC_GENERAL_ERR, wc.status);

    for (int s = VRNIC_WC_SUCCESS; s <= VRNIC_WC_GENERAL_ERR; s++) {
        c.status = static_cast<uint8_t>(s);
        cqe_to_wc(c, &wc);
        EXPECT_EQ(s, static_cast<int>(wc.status));
    }
}

// ---------------------------------------------------------------------------
// CQ polling
// ---------------------------------------------------------------------------

struct CqFixture : ::testing::Test {
    static constexpr uint32_t kLog = 2; // depth 4
    static constexpr uint32_t kSlot = 9;
    FakeDbPage dbp;
    Doorbell db;
    Buffer ring{VRNIC_CQE_SIZE << kLog};
    QpTable qps;
    CqPoller cq;
    FakeCqProducer dev{ring.data(), kLog};

    void SetUp() override {
        db.init(dbp.page(), nullptr, nullptr);
        cq.init(ring.data(), kLog, db.word(kSlot, VRNIC_DB_CQ_CI), db.word(kSlot, VRNIC_DB_CQ_ARM),
                &qps);
    }
    uint32_t ci_word() const { return dbp.word(kSlot, VRNIC_DB_CQ_CI); }
    uint32_t arm_word() const { return dbp.word(kSlot, VRNIC_DB_CQ_ARM); }
};

TEST_F(CqFixture, EmptyPollTouchesNothing) {
    ibv_wc wc[4];
    EXPECT_EQ(0, cq.poll(4, wc));
    EXPECT_EQ(0u, cq.ring().ci());
    EXPECT_EQ(0u, ci_word());
    EXPECT_EQ(-EINVAL, cq.poll(-1, wc));
}

TEST_F(CqFixture, PollFollowsThePhaseAcrossWraps) {
    ibv_wc wc[8];
    for (uint64_t i = 0; i < 3; i++)
        dev.produce(make_cqe(5, i, VRNIC_CQE_OP_SEND, 0));
    ASSERT_EQ(2, cq.poll(2, wc));
    EXPECT_EQ(0u, wc[0].wr_id);
    EXPECT_EQ(1u, wc[1].wr_id);
    EXPECT_EQ(2u, ci_word());
    ASSERT_EQ(1, cq.poll(8, wc));
    EXPECT_EQ(2u, wc[0].wr_id);
    // Second pass: owner phase 0 now means valid; old entries (phase 1) not.
    for (uint64_t i = 3; i < 7; i++)
        dev.produce(make_cqe(5, i, VRNIC_CQE_OP_SEND, 0));
    ASSERT_EQ(4, cq.poll(8, wc));
    for (int i = 0; i < 4; i++)
        EXPECT_EQ(uint64_t(3 + i), wc[i].wr_id);
    EXPECT_EQ(0, cq.poll(8, wc));
    EXPECT_EQ(7u, ci_word());
    // Many more passes.
    for (uint64_t i = 7; i < 1000; i++) {
        dev.produce(make_cqe(5, i, VRNIC_CQE_OP_SEND, 0));
        ASSERT_EQ(1, cq.poll(8, wc));
        ASSERT_EQ(i, wc[0].wr_id);
    }
    EXPECT_EQ(1000u, ci_word());
}

TEST_F(CqFixture, ZeroedRingIsNotCompletionsOnPhaseZeroPasses) {
    ibv_wc wc[8];
    for (uint64_t i = 0; i < 4; i++)
        dev.produce(make_cqe(5, i, VRNIC_CQE_OP_SEND, 0));
    ASSERT_EQ(4, cq.poll(8, wc));
    // Second pass expects owner phase 0: what a zero page has everywhere.
    std::memset(ring.data(), 0, ring.size());
    EXPECT_EQ(0, cq.poll(8, wc));
    EXPECT_EQ(4u, cq.ring().ci());
    EXPECT_EQ(ENOENT, cq.start_poll());
}

TEST_F(CqFixture, CompletionsRetireWorkRequests) {
    Buffer sqbuf(8 * 64), rqbuf(8 * 32);
    QpRings qp;
    qp.qpn = 0x123456;
    qp.sq.init(sqbuf.data(), 3, 6, SqLimits{1, 8, false, qp_send_ops(IBV_QPT_RC)});
    qp.rq.emplace().init(rqbuf.data(), 3, 5, 1);
    ASSERT_EQ(0, qps.insert(qp.qpn, &qp));
    ibv_sge sg{0x1000, 8, 1};
    ibv_send_wr swr = make_wr(IBV_WR_SEND, &sg, 1, 0);
    ibv_recv_wr rwr{};
    rwr.sg_list = &sg;
    rwr.num_sge = 1;
    for (int i = 0; i < 5; i++) {
        ASSERT_EQ(0, qp.sq.post(swr));
        ASSERT_EQ(0, qp.rq->post(rwr));
    }
    qp.sq.publish(db, db.word(1, 0), VRNIC_DB_STATUS_NEED_WAKEUP);
    qp.rq->publish(db, db.word(1, 4), VRNIC_DB_STATUS_RQ_WAKEUP);
    // A signaled WQE 3 completes 0..3 (the unsignaled ones before it).
    dev.produce(make_cqe(qp.qpn, 3, VRNIC_CQE_OP_RDMA_WRITE, 3));
    dev.produce(make_cqe(qp.qpn, 0, VRNIC_CQE_OP_RECV, 0));
    dev.produce(make_cqe(qp.qpn, 1, VRNIC_CQE_OP_RECV, 1, VRNIC_WC_LOC_LEN_ERR));
    ibv_wc wc[4];
    ASSERT_EQ(3, cq.poll(4, wc));
    EXPECT_EQ(4u, qp.sq.ci());
    EXPECT_EQ(2u, qp.rq->ci());
    EXPECT_EQ(IBV_WC_LOC_LEN_ERR, wc[2].status);
    // A CQE naming a WQE that is not outstanding retires nothing.
    dev.produce(make_cqe(qp.qpn, 9, VRNIC_CQE_OP_SEND, 100));
    ASSERT_EQ(1, cq.poll(4, wc));
    EXPECT_EQ(4u, qp.sq.ci());
    qps.erase(qp.qpn);
}

// Receives of a QP without its own receive queue are not its to retire: the
// send queue's indices stay where its own completions put them.
TEST_F(CqFixture, QpWithoutItsOwnRqRetiresSendsOnly) {
    Buffer sqbuf(8 * 64);
    QpRings qp;
    qp.qpn = 0x2345;
    qp.sq.init(sqbuf.data(), 3, 6, SqLimits{1, 8, false, qp_send_ops(IBV_QPT_RC)});
    ASSERT_EQ(0, qps.insert(qp.qpn, &qp));
    ibv_sge sg{0x1000, 8, 1};
    ibv_send_wr swr = make_wr(IBV_WR_SEND, &sg, 1);
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(0, qp.sq.post(swr));
    qp.sq.publish(db, db.word(1, 0), VRNIC_DB_STATUS_NEED_WAKEUP);
    dev.produce(make_cqe(qp.qpn, 0, VRNIC_CQE_OP_RECV, 2));
    dev.produce(make_cqe(qp.qpn, 1, VRNIC_CQE_OP_SEND, 0));
    ibv_wc wc[4];
    ASSERT_EQ(2, cq.poll(4, wc));
    EXPECT_EQ(IBV_WC_RECV, wc[0].opcode);
    EXPECT_EQ(1u, qp.sq.ci());
    qps.erase(qp.qpn);
}

TEST_F(CqFixture, ForgottenQpCqesAreSkipped) {
    dev.produce(make_cqe(5, 1, VRNIC_CQE_OP_SEND, 0));
    dev.produce(make_cqe(6, 2, VRNIC_CQE_OP_SEND, 0));
    dev.produce(make_cqe(5, 3, VRNIC_CQE_OP_SEND, 1));
    ASSERT_EQ(0, cq.forget_qp(5));
    ASSERT_EQ(0, cq.forget_qp(8));                     // no CQEs: nothing to do
    dev.produce(make_cqe(5, 4, VRNIC_CQE_OP_SEND, 0)); // QPN reused after the forget
    ibv_wc wc[8];
    ASSERT_EQ(2, cq.poll(8, wc));
    EXPECT_EQ(2u, wc[0].wr_id);
    EXPECT_EQ(4u, wc[1].wr_id);
    EXPECT_EQ(4u, ci_word()); // skipped entries were consumed too
}

TEST_F(CqFixture, ExtendedPollingKeepsTheLockUntilEnd) {
    EXPECT_EQ(ENOENT, cq.start_poll());
    EXPECT_TRUE(cq.lock().try_lock()); // released on ENOENT
    cq.lock().unlock();
    vrnic_cqe c = make_cqe(5, 10, VRNIC_CQE_OP_RECV_RDMA_WITH_IMM, 0);
    c.flags = VRNIC_CQE_F_WITH_IMM;
    c.imm_data = htonl(9);
    c.byte_len = 33;
    dev.produce(c);
    dev.produce(make_cqe(5, 11, VRNIC_CQE_OP_SEND, 0, VRNIC_WC_WR_FLUSH_ERR));
    ASSERT_EQ(0, cq.start_poll());
    EXPECT_FALSE(cq.lock().try_lock());
    EXPECT_EQ(10u, cq.current().wr_id);
    EXPECT_EQ(33u, cq.current().byte_len);
    EXPECT_EQ(unsigned{IBV_WC_WITH_IMM}, cqe_wc_flags(cq.current()));
    ASSERT_EQ(0, cq.next_poll());
    EXPECT_EQ(11u, cq.current().wr_id);
    EXPECT_EQ(VRNIC_WC_WR_FLUSH_ERR, cq.current().status);
    EXPECT_EQ(ENOENT, cq.next_poll());
    EXPECT_EQ(0u, ci_word()); // published at end_poll
    cq.end_poll();
    EXPECT_EQ(2u, ci_word());
    EXPECT_TRUE(cq.lock().try_lock());
    cq.lock().unlock();
}

TEST_F(CqFixture, ArmWordCountsRequests) {
    EXPECT_EQ(0u, arm_word());
    cq.ring().arm(false);
    EXPECT_EQ(VRNIC_CQ_ARM_WORD(1, 0), arm_word());
    cq.ring().arm(true);
    EXPECT_EQ(VRNIC_CQ_ARM_WORD(1, 1), arm_word());
    cq.ring().arm(false);
    EXPECT_EQ(0x00010002u, arm_word()); // sol_sn in the high half
    // The counters are 16 bits and wrap independently.
    for (int i = 0; i < 0xfffe; i++)
        cq.ring().arm(false);
    EXPECT_EQ(VRNIC_CQ_ARM_WORD(0, 1), arm_word());
    EXPECT_EQ(0, cq.ring().next_sn());
    for (int i = 0; i < 0xffff; i++)
        cq.ring().arm(true);
    EXPECT_EQ(VRNIC_CQ_ARM_WORD(0, 0), arm_word());
    // Arming never moves ci.
    EXPECT_EQ(0u, ci_word());
}

TEST(QpTable, InsertFindErase) {
    QpTable t;
    QpRings a, b;
    EXPECT_EQ(nullptr, t.find(2));
    EXPECT_EQ(0, t.insert(2, &a));
    EXPECT_EQ(EINVAL, t.insert(2, &b));
    EXPECT_EQ(0, t.insert(VRNIC_QPN_MASK, &b));
    EXPECT_EQ(EINVAL, t.insert(VRNIC_QPN_MASK + 1, &b));
    EXPECT_EQ(&a, t.find(2));
    EXPECT_EQ(&b, t.find(VRNIC_QPN_MASK));
    EXPECT_EQ(nullptr, t.find(3));
    EXPECT_EQ(nullptr, t.find(0xffffffff));
    t.erase(2);
    EXPECT_EQ(nullptr, t.find(2));
    EXPECT_EQ(0, t.insert(2, &b));
    EXPECT_EQ(&b, t.find(2));
}

// The device's QPNs are spread over the whole 24-bit space (spec 9.4).
TEST(QpTable, SparseQpns) {
    QpTable t;
    std::vector<QpRings> qps(4096);
    std::vector<uint32_t> qpns;
    uint32_t x = 12345;
    for (size_t i = 0; i < qps.size(); i++) {
        x = x * 1103515245 + 12345;
        const uint32_t qpn = (x >> 4) & VRNIC_QPN_MASK;
        if (t.find(qpn))
            continue;
        ASSERT_EQ(0, t.insert(qpn, &qps[i]));
        qpns.push_back(qpn);
    }
    for (size_t i = 0; i < qpns.size(); i++)
        EXPECT_NE(nullptr, t.find(qpns[i]));
    for (uint32_t q : qpns)
        t.erase(q);
    for (uint32_t q : qpns)
        EXPECT_EQ(nullptr, t.find(q));
}

// ---------------------------------------------------------------------------
// The whole loop against a device running in another thread: it consumes
// the SQ by the doorbell word and completes every WQE; the provider posts
// through a small queue, retiring by completions only.
// ---------------------------------------------------------------------------

TEST(Loop, PostAndPollAgainstAConcurrentDevice) {
    constexpr uint32_t kSqLog = 3, kCqLog = 4, kSlotQp = 1, kSlotCq = 2;
    constexpr uint32_t kTotal = 40000;
    FakeDbPage dbp;
    Doorbell db;
    db.init(dbp.page(), nullptr, nullptr);
    Buffer sqbuf(64 << kSqLog), cqbuf(VRNIC_CQE_SIZE << kCqLog);
    QpTable qps;
    QpRings qp;
    qp.qpn = 10;
    qp.sq.init(sqbuf.data(), kSqLog, 6, SqLimits{1, 8, false, qp_send_ops(IBV_QPT_RC)});
    ASSERT_EQ(0, qps.insert(10, &qp));
    CqPoller cq;
    cq.init(cqbuf.data(), kCqLog, db.word(kSlotCq, VRNIC_DB_CQ_CI),
            db.word(kSlotCq, VRNIC_DB_CQ_ARM), &qps);
    uint32_t* pi_word = db.word(kSlotQp, VRNIC_DB_QP_SQ_PI);
    uint32_t* ci_word = db.word(kSlotCq, VRNIC_DB_CQ_CI);

    std::atomic<bool> stop{false};
    std::atomic<uint64_t> bad{0};
    std::thread device([&] {
        FakeCqProducer prod(cqbuf.data(), kCqLog);
        uint32_t sq_ci = 0;
        while (!stop.load(std::memory_order_relaxed)) {
            uint32_t pi = load_acquire(pi_word);
            if (pi == sq_ci) {
                std::this_thread::yield();
                continue;
            }
            // Read the WQE once, then complete it if the CQ has room.
            vrnic_send_wqe_hdr h;
            std::memcpy(&h, sqbuf.data() + ((sq_ci & 7) << 6), sizeof(h));
            if (h.wr_id != sq_ci || h.opcode != VRNIC_WR_SEND)
                bad++;
            if (h.flags & VRNIC_WQE_F_SIGNALED) {
                while (prod.pi() - load_acquire(ci_word) >= (1U << kCqLog))
                    std::this_thread::yield();
                prod.produce(make_cqe(10, h.wr_id, VRNIC_CQE_OP_SEND, sq_ci));
            }
            sq_ci++;
        }
    });

    uint64_t posted = 0, completed = 0, enomem = 0;
    ibv_sge sg{0x1000, 8, 1};
    ibv_wc wc[4];
    while (completed < kTotal / 4) {
        if (posted < kTotal) {
            // Signal every 4th WQE: completions retire the unsignaled ones.
            auto wr = make_wr(IBV_WR_SEND, &sg, 1, (posted % 4 == 3) ? IBV_SEND_SIGNALED : 0);
            wr.wr_id = posted;
            std::lock_guard<QueueLock> g(qp.sq_lock);
            int err = qp.sq.post(wr);
            if (err == 0) {
                posted++;
                qp.sq.publish(db, pi_word, VRNIC_DB_STATUS_NEED_WAKEUP);
            } else {
                ASSERT_EQ(ENOMEM, err);
                enomem++;
            }
        }
        int n = cq.poll(4, wc);
        for (int i = 0; i < n; i++) {
            ASSERT_EQ(IBV_WC_SUCCESS, wc[i].status);
            ASSERT_EQ(completed * 4 + 3, wc[i].wr_id);
            completed++;
        }
    }
    stop = true;
    device.join();
    EXPECT_EQ(0u, bad.load());
    EXPECT_EQ(uint64_t{kTotal}, posted);
    EXPECT_EQ(kTotal, qp.sq.ci());
    EXPECT_GT(enomem, 0u); // the 8-deep queue did fill up
}

} // namespace
} // namespace vrnic::prov::test
