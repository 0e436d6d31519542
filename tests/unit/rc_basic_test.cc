// Every RC opcode between two QPs of one device, with byte-exact checks of
// the data that arrived and of the completions.
#include "rc_fixture.h"

#include <arpa/inet.h>

namespace vrnic::test {
namespace {

using RcBasic = RcPair;

TEST_F(RcBasic, RdmaWriteMovesBytesAndCompletes) {
    uint64_t src_gpa, dst_gpa;
    MrInfo src = buffer(8192, VRNIC_ACCESS_LOCAL_WRITE, 0x11, &src_gpa);
    MrInfo dst = buffer(8192, kRemoteAll, 0, &dst_gpa);
    SendWr wr;
    wr.wr_id = 0xabc;
    wr.opcode = VRNIC_WR_RDMA_WRITE;
    wr.remote_addr = dst.iova + 100;
    wr.rkey = dst.rkey;
    wr.sge = {sge(src, 0, 5000)};
    drv.post_send(a, wr);
    auto c = step(a_cq);
    ASSERT_EQ(1u, c.size());
    EXPECT_EQ(0xabcu, c[0].wr_id);
    EXPECT_EQ(VRNIC_WC_SUCCESS, c[0].status);
    EXPECT_EQ(VRNIC_CQE_OP_RDMA_WRITE, c[0].opcode);
    EXPECT_EQ(5000u, c[0].byte_len);
    EXPECT_EQ(a.qpn, c[0].qpn);
    EXPECT_EQ(0u, c[0].wqe_idx);
    EXPECT_TRUE(drv.check_pattern(dst_gpa + 100, 5000, 0x11));
    EXPECT_EQ(0, drv.host(dst_gpa)[99]);         // nothing before
    EXPECT_EQ(0, drv.host(dst_gpa)[100 + 5000]); // nothing after
    EXPECT_TRUE(drv.poll_cq(b_cq).empty());      // plain WRITE: no responder CQE
}

TEST_F(RcBasic, SendLandsInPostedReceive) {
    uint64_t src_gpa, dst_gpa;
    MrInfo src = buffer(4096, VRNIC_ACCESS_LOCAL_WRITE, 0x22, &src_gpa);
    MrInfo dst = buffer(4096, VRNIC_ACCESS_LOCAL_WRITE, 0, &dst_gpa);
    drv.post_recv(b, 77, {sge(dst, 0, 4096)});
    SendWr wr;
    wr.wr_id = 5;
    wr.opcode = VRNIC_WR_SEND;
    wr.sge = {sge(src, 0, 1500)};
    drv.post_send(a, wr);
    auto sc = step(a_cq);
    ASSERT_EQ(1u, sc.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, sc[0].status);
    EXPECT_EQ(VRNIC_CQE_OP_SEND, sc[0].opcode);
    EXPECT_EQ(1500u, sc[0].byte_len);
    auto rc = drv.poll_cq(b_cq);
    ASSERT_EQ(1u, rc.size());
    EXPECT_EQ(77u, rc[0].wr_id);
    EXPECT_EQ(VRNIC_WC_SUCCESS, rc[0].status);
    EXPECT_EQ(VRNIC_CQE_OP_RECV, rc[0].opcode);
    EXPECT_EQ(1500u, rc[0].byte_len);
    EXPECT_EQ(a.qpn, rc[0].src_qp);
    EXPECT_EQ(b.qpn, rc[0].qpn);
    EXPECT_EQ(0, rc[0].flags);
    EXPECT_TRUE(drv.check_pattern(dst_gpa, 1500, 0x22));
    EXPECT_EQ(0, drv.host(dst_gpa)[1500]);
}

TEST_F(RcBasic, SendWithImmCarriesImmediate) {
    MrInfo src = buffer(64, VRNIC_ACCESS_LOCAL_WRITE, 0x33);
    uint64_t dst_gpa;
    MrInfo dst = buffer(64, VRNIC_ACCESS_LOCAL_WRITE, 0, &dst_gpa);
    drv.post_recv(b, 1, {sge(dst, 0, 64)});
    SendWr wr;
    wr.opcode = VRNIC_WR_SEND_WITH_IMM;
    wr.imm_be = htonl(0xdeadbeef);
    wr.sge = {sge(src, 0, 64)};
    drv.post_send(a, wr);
    step(a_cq);
    auto rc = drv.poll_cq(b_cq);
    ASSERT_EQ(1u, rc.size());
    EXPECT_EQ(VRNIC_CQE_OP_RECV, rc[0].opcode);
    EXPECT_EQ(VRNIC_CQE_F_WITH_IMM, rc[0].flags);
    EXPECT_EQ(htonl(0xdeadbeef), rc[0].imm_data);
    EXPECT_TRUE(drv.check_pattern(dst_gpa, 64, 0x33));
}

TEST_F(RcBasic, WriteWithImmConsumesReceive) {
    uint64_t dst_gpa;
    MrInfo src = buffer(300, VRNIC_ACCESS_LOCAL_WRITE, 0x44);
    MrInfo dst = buffer(300, kRemoteAll, 0, &dst_gpa);
    MrInfo unused = buffer(16, VRNIC_ACCESS_LOCAL_WRITE);
    drv.post_recv(b, 9, {sge(unused, 0, 16)});
    SendWr wr;
    wr.opcode = VRNIC_WR_RDMA_WRITE_WITH_IMM;
    wr.imm_be = htonl(42);
    wr.remote_addr = dst.iova;
    wr.rkey = dst.rkey;
    wr.sge = {sge(src, 0, 300)};
    drv.post_send(a, wr);
    auto sc = step(a_cq);
    ASSERT_EQ(1u, sc.size());
    EXPECT_EQ(VRNIC_CQE_OP_RDMA_WRITE, sc[0].opcode);
    auto rc = drv.poll_cq(b_cq);
    ASSERT_EQ(1u, rc.size());
    EXPECT_EQ(9u, rc[0].wr_id);
    EXPECT_EQ(VRNIC_CQE_OP_RECV_RDMA_WITH_IMM, rc[0].opcode);
    EXPECT_EQ(300u, rc[0].byte_len);
    EXPECT_EQ(htonl(42), rc[0].imm_data);
    EXPECT_TRUE(drv.check_pattern(dst_gpa, 300, 0x44));
}

TEST_F(RcBasic, RdmaReadFetchesRemoteBytes) {
    uint64_t local_gpa;
    MrInfo remote = buffer(4096 * 3, kRemoteAll, 0x55);
    MrInfo local = buffer(4096 * 3, VRNIC_ACCESS_LOCAL_WRITE, 0, &local_gpa);
    SendWr wr;
    wr.opcode = VRNIC_WR_RDMA_READ;
    wr.remote_addr = remote.iova;
    wr.rkey = remote.rkey;
    wr.sge = {sge(local, 10, 9000)};
    drv.post_send(a, wr);
    auto c = step(a_cq);
    ASSERT_EQ(1u, c.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, c[0].status);
    EXPECT_EQ(VRNIC_CQE_OP_RDMA_READ, c[0].opcode);
    EXPECT_EQ(9000u, c[0].byte_len);
    EXPECT_TRUE(drv.check_pattern(local_gpa + 10, 9000, 0x55));
}

TEST_F(RcBasic, AtomicsOperateOnRemoteWord) {
    uint64_t target_gpa, result_gpa;
    MrInfo target = buffer(64, kRemoteAll, 0, &target_gpa);
    MrInfo result = buffer(64, VRNIC_ACCESS_LOCAL_WRITE, 0, &result_gpa);
    uint64_t v = 1000;
    memcpy(drv.host(target_gpa + 8, 8), &v, 8);

    SendWr fa;
    fa.opcode = VRNIC_WR_ATOMIC_FETCH_AND_ADD;
    fa.remote_addr = target.iova + 8;
    fa.rkey = target.rkey;
    fa.compare_add = 5;
    fa.sge = {sge(result, 0, 8)};
    drv.post_send(a, fa);
    SendWr cs;
    cs.opcode = VRNIC_WR_ATOMIC_CMP_AND_SWP;
    cs.remote_addr = target.iova + 8;
    cs.rkey = target.rkey;
    cs.compare_add = 1005;
    cs.swap = 0x1122334455667788ull;
    cs.sge = {sge(result, 8, 8)};
    drv.post_send(a, cs);
    SendWr miss = cs; // compare fails: value unchanged, original returned
    miss.compare_add = 1;
    miss.swap = 2;
    miss.sge = {sge(result, 16, 8)};
    drv.post_send(a, miss);

    auto c = step(a_cq);
    ASSERT_EQ(3u, c.size());
    EXPECT_EQ(VRNIC_CQE_OP_FETCH_ADD, c[0].opcode);
    EXPECT_EQ(VRNIC_CQE_OP_COMP_SWAP, c[1].opcode);
    for (auto& e : c) {
        EXPECT_EQ(VRNIC_WC_SUCCESS, e.status);
        EXPECT_EQ(8u, e.byte_len);
    }
    uint64_t r[3], t;
    memcpy(r, drv.host(result_gpa, 24), 24);
    memcpy(&t, drv.host(target_gpa + 8, 8), 8);
    EXPECT_EQ(1000u, r[0]);
    EXPECT_EQ(1005u, r[1]);
    EXPECT_EQ(0x1122334455667788ull, r[2]);
    EXPECT_EQ(0x1122334455667788ull, t);
}

// The traffic counters of the register page (device-interface.md 4.5):
// every request once at the requester and once at the responder, with
// its bytes; an error CQE counted, and nothing for local operations.
TEST_F(RcBasic, TrafficCountersCountEveryRequestAndItsBytes) {
    auto reg = [&](__le64 vrnic_regs::*c) { return uint64_t(load_acquire(&(drv.regs()->*c))); };
    MrInfo src = buffer(8192, VRNIC_ACCESS_LOCAL_WRITE, 0x11);
    MrInfo dst = buffer(8192, kRemoteAll);
    drv.post_recv(b, 1, {sge(dst, 0, 4096)});
    SendWr wr;
    wr.opcode = VRNIC_WR_RDMA_WRITE;
    wr.remote_addr = dst.iova;
    wr.rkey = dst.rkey;
    wr.sge = {sge(src, 0, 5000)};
    drv.post_send(a, wr);
    wr.opcode = VRNIC_WR_RDMA_READ;
    wr.sge = {sge(src, 0, 256)};
    drv.post_send(a, wr);
    wr.opcode = VRNIC_WR_ATOMIC_FETCH_AND_ADD;
    wr.sge = {sge(src, 0, 8)};
    drv.post_send(a, wr);
    SendWr snd;
    snd.opcode = VRNIC_WR_SEND;
    snd.sge = {sge(src, 0, 1500)};
    drv.post_send(a, snd);
    auto done = step(a_cq);
    ASSERT_EQ(4u, done.size());
    for (const auto& e : done)
        EXPECT_EQ(VRNIC_WC_SUCCESS, e.status) << int(e.opcode) << " vendor " << e.vendor_err;
    const uint64_t bytes = 5000 + 256 + 8 + 1500;
    EXPECT_EQ(4u, reg(&vrnic_regs::rdma_tx_msgs));
    EXPECT_EQ(bytes, reg(&vrnic_regs::rdma_tx_bytes));
    EXPECT_EQ(4u, reg(&vrnic_regs::rdma_rx_msgs));
    EXPECT_EQ(bytes, reg(&vrnic_regs::rdma_rx_bytes));
    EXPECT_EQ(0u, reg(&vrnic_regs::completion_errors));

    wr.opcode = VRNIC_WR_RDMA_WRITE;
    wr.rkey = dst.rkey ^ 0x100; // no such key: REM_ACCESS_ERR
    drv.post_send(a, wr);
    auto c = step(a_cq);
    ASSERT_EQ(1u, c.size());
    EXPECT_EQ(VRNIC_WC_REM_ACCESS_ERR, c[0].status);
    EXPECT_EQ(4u, reg(&vrnic_regs::rdma_tx_msgs));
    EXPECT_EQ(4u, reg(&vrnic_regs::rdma_rx_msgs));
    EXPECT_EQ(1u, reg(&vrnic_regs::completion_errors));
    EXPECT_EQ(0u, reg(&vrnic_regs::rnr_naks));
    EXPECT_EQ(0u, reg(&vrnic_regs::retries));
}

TEST_F(RcBasic, MultiSgeGatherAndScatter) {
    uint64_t s_gpa, d_gpa;
    MrInfo src = buffer(4096, VRNIC_ACCESS_LOCAL_WRITE, 0x61, &s_gpa);
    MrInfo dst = buffer(4096, VRNIC_ACCESS_LOCAL_WRITE, 0, &d_gpa);
    // Receive: 10 + 0 (skipped) + 50 + 1000 bytes at scattered offsets.
    drv.post_recv(b, 1, {sge(dst, 100, 10), sge(dst, 3000, 50), sge(dst, 1000, 1000)});
    SendWr wr;
    wr.opcode = VRNIC_WR_SEND;
    // Gather: three pieces, one of them empty, 7 + 0 + 53 bytes.
    wr.sge = {sge(src, 0, 7), {0, 0, 0xdead}, sge(src, 500, 53)};
    drv.post_send(a, wr);
    auto sc = step(a_cq);
    ASSERT_EQ(1u, sc.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, sc[0].status);
    EXPECT_EQ(60u, sc[0].byte_len);
    auto rc = drv.poll_cq(b_cq);
    ASSERT_EQ(1u, rc.size());
    EXPECT_EQ(60u, rc[0].byte_len);
    // The 60-byte message stream: src[0..7) then src[500..553).
    std::vector<uint8_t> msg(drv.host(s_gpa), drv.host(s_gpa) + 7);
    msg.insert(msg.end(), drv.host(s_gpa + 500), drv.host(s_gpa + 553));
    EXPECT_EQ(0, memcmp(drv.host(d_gpa + 100), msg.data(), 10));
    EXPECT_EQ(0, memcmp(drv.host(d_gpa + 3000), msg.data() + 10, 50));
    EXPECT_EQ(0, drv.host(d_gpa + 1000)[0]); // third receive SGE not needed
}

TEST_F(RcBasic, InlineSendAndWrite) {
    uint64_t d_gpa;
    MrInfo dst = buffer(4096, VRNIC_ACCESS_ALL, 0, &d_gpa);
    std::vector<uint8_t> data(128);
    for (size_t i = 0; i < data.size(); i++)
        data[i] = static_cast<uint8_t>(i * 3 + 1);
    drv.post_recv(b, 1, {sge(dst, 0, 200)});
    SendWr s;
    s.opcode = VRNIC_WR_SEND;
    s.flags = VRNIC_WQE_F_SIGNALED | VRNIC_WQE_F_INLINE;
    s.inline_data = data;
    drv.post_send(a, s);
    SendWr w = s;
    w.opcode = VRNIC_WR_RDMA_WRITE;
    w.remote_addr = dst.iova + 1024;
    w.rkey = dst.rkey;
    w.inline_data.resize(33);
    drv.post_send(a, w);
    auto sc = step(a_cq);
    ASSERT_EQ(2u, sc.size());
    EXPECT_EQ(128u, sc[0].byte_len);
    EXPECT_EQ(33u, sc[1].byte_len);
    EXPECT_EQ(0, memcmp(drv.host(d_gpa), data.data(), 128));
    EXPECT_EQ(0, memcmp(drv.host(d_gpa + 1024), data.data(), 33));
    EXPECT_EQ(0, drv.host(d_gpa + 1024)[33]);
}

TEST_F(RcBasic, UnsignaledWqesProduceNoCqeButAdvance) {
    MrInfo src = buffer(64, VRNIC_ACCESS_LOCAL_WRITE, 0x70);
    uint64_t d_gpa;
    MrInfo dst = buffer(64 * 10, VRNIC_ACCESS_ALL, 0, &d_gpa);
    for (int i = 0; i < 10; i++) {
        SendWr w;
        w.wr_id = i;
        w.opcode = VRNIC_WR_RDMA_WRITE;
        w.flags = i == 9 ? VRNIC_WQE_F_SIGNALED : 0;
        w.remote_addr = dst.iova + 64 * i;
        w.rkey = dst.rkey;
        w.sge = {sge(src, 0, 64)};
        drv.post_send(a, w);
    }
    auto c = step(a_cq);
    ASSERT_EQ(1u, c.size());
    EXPECT_EQ(9u, c[0].wr_id);
    EXPECT_EQ(9u, c[0].wqe_idx); // retires all ten
    for (int i = 0; i < 10; i++)
        EXPECT_TRUE(drv.check_pattern(d_gpa + 64 * i, 64, 0x70)) << i;
}

class RcSigAll : public RcPair {
    QpOpts opts() override {
        QpOpts o;
        o.flags = VRNIC_QP_F_SQ_SIG_ALL;
        return o;
    }
};

TEST_F(RcSigAll, EveryWqeSignaled) {
    MrInfo src = buffer(64, VRNIC_ACCESS_LOCAL_WRITE, 1);
    MrInfo dst = buffer(64, VRNIC_ACCESS_ALL);
    for (int i = 0; i < 3; i++) {
        SendWr w;
        w.opcode = VRNIC_WR_RDMA_WRITE;
        w.flags = 0;
        w.remote_addr = dst.iova;
        w.rkey = dst.rkey;
        w.sge = {sge(src, 0, 64)};
        drv.post_send(a, w);
    }
    EXPECT_EQ(3u, step(a_cq).size());
}

TEST_F(RcBasic, ZeroLengthOperations) {
    MrInfo dst = buffer(64, VRNIC_ACCESS_LOCAL_WRITE);
    drv.post_recv(b, 1, {sge(dst, 0, 64)});
    SendWr s;
    s.opcode = VRNIC_WR_SEND; // no SGEs at all
    drv.post_send(a, s);
    SendWr w;
    w.opcode = VRNIC_WR_RDMA_WRITE; // zero-length: rkey not checked
    w.rkey = 0xbad;
    w.remote_addr = 0x1234;
    drv.post_send(a, w);
    SendWr r = w;
    r.opcode = VRNIC_WR_RDMA_READ;
    drv.post_send(a, r);
    auto c = step(a_cq);
    ASSERT_EQ(3u, c.size());
    for (auto& e : c) {
        EXPECT_EQ(VRNIC_WC_SUCCESS, e.status);
        EXPECT_EQ(0u, e.byte_len);
    }
    auto rc = drv.poll_cq(b_cq);
    ASSERT_EQ(1u, rc.size());
    EXPECT_EQ(0u, rc[0].byte_len);
}

TEST_F(RcBasic, ScatteredPagesAndForeignIova) {
    // An MR whose pages are out of order and whose iova has nothing to do
    // with the guest physical addresses, as for a user buffer.
    std::vector<uint64_t> pages;
    uint64_t base = drv.alloc(8 * 4096);
    for (int i : {5, 2, 7, 0, 1, 6, 3, 4})
        pages.push_back(base + uint64_t(i) * 4096);
    const uint64_t iova = 0x7fff12345000ull + 0x123;
    MrInfo dst;
    ASSERT_EQ(0u, drv.reg_mr_pages(pd, iova, 7 * 4096, 12, pages, VRNIC_ACCESS_ALL, &dst));
    uint64_t s_gpa;
    MrInfo src = buffer(7 * 4096, VRNIC_ACCESS_LOCAL_WRITE, 0x81, &s_gpa);
    SendWr w;
    w.opcode = VRNIC_WR_RDMA_WRITE;
    w.remote_addr = iova + 10;
    w.rkey = dst.rkey;
    w.sge = {sge(src, 0, 6 * 4096)};
    drv.post_send(a, w);
    auto c = step(a_cq);
    ASSERT_EQ(1u, c.size());
    ASSERT_EQ(VRNIC_WC_SUCCESS, c[0].status);
    // Byte k of the message is at MR offset 10 + k: page list entry
    // (0x123 + 10 + k) >> 12, offset (0x123 + 10 + k) & 4095.
    const uint8_t* src_p = drv.host(s_gpa);
    for (uint64_t k = 0; k < 6 * 4096; k += 97) {
        uint64_t off = 0x123 + 10 + k;
        ASSERT_EQ(src_p[k], *drv.host(pages[off >> 12] + (off & 4095))) << k;
    }
    // And back with an RDMA READ into a fresh buffer.
    uint64_t r_gpa;
    MrInfo back = buffer(6 * 4096, VRNIC_ACCESS_LOCAL_WRITE, 0, &r_gpa);
    SendWr r;
    r.opcode = VRNIC_WR_RDMA_READ;
    r.remote_addr = iova + 10;
    r.rkey = dst.rkey;
    r.sge = {sge(back, 0, 6 * 4096)};
    drv.post_send(a, r);
    ASSERT_EQ(VRNIC_WC_SUCCESS, step(a_cq).at(0).status);
    EXPECT_EQ(0, memcmp(drv.host(r_gpa), src_p, 6 * 4096));
}

TEST_F(RcBasic, OneMegabyteWriteThroughIndirectPageList) {
    constexpr uint64_t kLen = 1 << 20;
    uint64_t s_gpa, d_gpa = drv.alloc(kLen + 4096);
    MrInfo src = buffer(kLen, VRNIC_ACCESS_LOCAL_WRITE, 0x91, &s_gpa);
    std::vector<uint64_t> pages;
    for (uint64_t p = 0; p < kLen / 4096; p++)
        pages.push_back(d_gpa + p * 4096);
    MrInfo dst;
    ASSERT_EQ(0u, drv.reg_mr_pages(pd, 0x10000000, kLen, 12, pages, VRNIC_ACCESS_ALL, &dst,
                                   VRNIC_PBL_INDIRECT));
    SendWr w;
    w.opcode = VRNIC_WR_RDMA_WRITE;
    w.remote_addr = 0x10000000;
    w.rkey = dst.rkey;
    w.sge = {sge(src, 0, kLen)};
    drv.post_send(a, w);
    auto c = step(a_cq);
    ASSERT_EQ(1u, c.size());
    EXPECT_EQ(kLen, c[0].byte_len);
    EXPECT_TRUE(drv.check_pattern(d_gpa, kLen, 0x91));
}

TEST_F(RcBasic, PhysicalMrUsesGuestAddresses) {
    vrnic_cmd_reg_mr m{};
    m.pd = pd;
    m.access = VRNIC_ACCESS_LOCAL_WRITE;
    m.flags = VRNIC_MR_F_PHYS;
    vrnic_cmd r;
    ASSERT_EQ(0u, drv.cmd(VRNIC_CMD_REG_MR, &m, sizeof(m), &r));
    uint32_t dma_lkey = r.reg_mr_resp.lkey;
    uint64_t s_gpa = drv.alloc(256), d_gpa;
    drv.fill(s_gpa, 256, 0xa1);
    MrInfo dst = buffer(256, VRNIC_ACCESS_ALL, 0, &d_gpa);
    SendWr w;
    w.opcode = VRNIC_WR_RDMA_WRITE;
    w.remote_addr = dst.iova;
    w.rkey = dst.rkey;
    w.sge = {{s_gpa, 256, dma_lkey}};
    drv.post_send(a, w);
    EXPECT_EQ(VRNIC_WC_SUCCESS, step(a_cq).at(0).status);
    EXPECT_TRUE(drv.check_pattern(d_gpa, 256, 0xa1));
    // Past guest RAM through the physical MR: a local protection error.
    w.sge = {{FakeDriver::kRamSize - 16, 256, dma_lkey}};
    drv.post_send(a, w);
    EXPECT_EQ(VRNIC_WC_LOC_PROT_ERR, step(a_cq).at(0).status);
}

class RcWrap : public RcPair {
    QpOpts opts() override {
        QpOpts o;
        o.sq_log = 3; // 8 SQ slots
        o.rq_log = 2; // 4 RQ slots
        return o;
    }
};

TEST_F(RcWrap, ThousandsOfWqesWrapTheRings) {
    uint64_t d_gpa;
    MrInfo src = buffer(4096, VRNIC_ACCESS_LOCAL_WRITE, 0x13);
    MrInfo dst = buffer(4096, VRNIC_ACCESS_ALL, 0, &d_gpa);
    uint32_t sends = 0, recvs = 0;
    for (uint32_t i = 0; i < 5000; i++) {
        if (i % 2 == 0) {
            drv.post_recv(b, 1000000 + i, {sge(dst, (i % 64) * 64, 64)});
            SendWr s;
            s.wr_id = i;
            s.opcode = VRNIC_WR_SEND_WITH_IMM;
            s.imm_be = i;
            s.sge = {sge(src, i % 64, 64)};
            drv.post_send(a, s);
        } else {
            SendWr w;
            w.wr_id = i;
            w.opcode = VRNIC_WR_RDMA_WRITE;
            w.remote_addr = dst.iova + (i % 64) * 64;
            w.rkey = dst.rkey;
            w.sge = {sge(src, 0, 64)};
            drv.post_send(a, w);
        }
        drv.run();
        for (auto& c : drv.poll_cq(a_cq)) {
            ASSERT_EQ(VRNIC_WC_SUCCESS, c.status) << i;
            ASSERT_EQ(sends, c.wr_id);
            ASSERT_EQ(sends, c.wqe_idx);
            sends++;
        }
        for (auto& c : drv.poll_cq(b_cq)) {
            ASSERT_EQ(VRNIC_WC_SUCCESS, c.status);
            ASSERT_EQ(1000000u + 2 * recvs, c.wr_id);
            ASSERT_EQ(2 * recvs, c.imm_data);
            ASSERT_EQ(recvs, c.wqe_idx);
            recvs++;
        }
    }
    EXPECT_EQ(5000u, sends);
    EXPECT_EQ(2500u, recvs);
    EXPECT_TRUE(drv.check_pattern(d_gpa + 63 * 64, 64, 0x13));
}

// WQEs published before MODIFY_QP(SQD) run even if the device had not
// fetched them when it executed the command; later ones wait for RTS.
TEST_F(RcBasic, SqdRunsWhatWasPostedBeforeItOnly) {
    uint64_t dst_gpa;
    MrInfo src = buffer(4096, VRNIC_ACCESS_LOCAL_WRITE, 0x5a);
    MrInfo dst = buffer(4096, kRemoteAll, 0, &dst_gpa);
    auto write = [&](uint64_t id) {
        SendWr w;
        w.wr_id = id;
        w.opcode = VRNIC_WR_RDMA_WRITE;
        w.remote_addr = dst.iova + id * 256;
        w.rkey = dst.rkey;
        w.sge = {sge(src, 0, 256)};
        drv.post_send(a, w);
    };
    write(1);
    write(2); // not fetched yet: the command below is handled first
    drv.take_async_events();
    vrnic_qp_attr x{};
    x.qp_state = VRNIC_QPS_SQD;
    x.en_sqd_async_notify = 1;
    ASSERT_EQ(0u, drv.modify_qp(a, VRNIC_QP_ATTR_STATE | VRNIC_QP_ATTR_EN_SQD_ASYNC_NOTIFY, x));
    write(3);
    drv.run();
    auto c = drv.poll_cq(a_cq);
    ASSERT_EQ(2u, c.size());
    EXPECT_EQ(1u, c[0].wr_id);
    EXPECT_EQ(2u, c[1].wr_id);
    auto ev = drv.take_async_events();
    ASSERT_EQ(1u, ev.size());
    EXPECT_EQ(VRNIC_EQE_SQ_DRAINED, ev[0].type);
    EXPECT_EQ(0, drv.query_qp(a).sq_draining);
    EXPECT_TRUE(drv.check_pattern(dst_gpa + 512, 256, 0x5a));
    EXPECT_EQ(0, drv.host(dst_gpa + 768)[0]); // WQE 3 held
    x = {};
    x.qp_state = VRNIC_QPS_RTS;
    ASSERT_EQ(0u, drv.modify_qp(a, VRNIC_QP_ATTR_STATE, x));
    drv.run();
    c = drv.poll_cq(a_cq);
    ASSERT_EQ(1u, c.size());
    EXPECT_EQ(3u, c[0].wr_id);
    EXPECT_TRUE(drv.check_pattern(dst_gpa + 768, 256, 0x5a));
}

} // namespace
} // namespace vrnic::test
