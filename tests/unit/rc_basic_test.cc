// Every RC opcode between two QPs of one device, with byte-exact checks of
// the data that arrived and of the completions.
#include "rc_fixture.h"

#include <arpa/inet.h>

namespace vrnic::test {
namespace {

constexpr uint32_t kRw = VRNIC_ACCESS_LOCAL_WRITE | VRNIC_ACCESS_REMOTE_WRITE |
                         VRNIC_ACCESS_REMOTE_READ | VRNIC_ACCESS_REMOTE_ATOMIC;

using RcBasic = RcPair;

TEST_F(RcBasic, RdmaWriteMovesBytesAndCompletes) {
    uint64_t src_gpa, dst_gpa;
    MrInfo src = buffer(8192, VRNIC_ACCESS_LOCAL_WRITE, 0x11, &src_gpa);
    MrInfo dst = buffer(8192, kRw, 0, &dst_gpa);
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
    MrInfo dst = buffer(300, kRw, 0, &dst_gpa);
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
    MrInfo remote = buffer(4096 * 3, kRw, 0x55);
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
    MrInfo target = buffer(64, kRw, 0, &target_gpa);
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

} // namespace
} // namespace vrnic::test
