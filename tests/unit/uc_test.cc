// UC between two QPs of one device (device-interface.md 14.7): SEND and
// WRITE with the bytes that arrived, and the unreliable rules: what the
// responder cannot take is dropped and counted, the sender completes with
// SUCCESS, neither QP changes state, nothing waits or retries.
#include "completion.h"
#include "qp_pair_fixture.h"
#include "shared_word.h"

#include <arpa/inet.h>

namespace vrnic::test {
namespace {

constexpr uint32_t kRw = VRNIC_ACCESS_LOCAL_WRITE | VRNIC_ACCESS_REMOTE_WRITE;

class Uc : public QpPairBase {
  protected:
    void SetUp() override {
        bring_up_with_cqs();
        QpOpts o;
        o.qp_type = VRNIC_QPT_UC;
        a = drv.create_qp(0, pd, a_cq, a_cq, o);
        b = drv.create_qp(0, pd, b_cq, b_cq, o);
        drv.activate(a, Path{.qp_type = VRNIC_QPT_UC, .dest_qpn = b.qpn});
        drv.activate(b, Path{.qp_type = VRNIC_QPT_UC, .dest_qpn = a.qpn});
        drv.take_async_events();
    }
    uint32_t drops() { return load_acquire(&drv.regs()->uc_drops); }
    void expect_both_rts() {
        EXPECT_EQ(VRNIC_QPS_RTS, state(a));
        EXPECT_EQ(VRNIC_QPS_RTS, state(b));
    }
};

TEST_F(Uc, SendLandsInPostedReceive) {
    uint64_t dst_gpa;
    MrInfo src = buffer(8192, VRNIC_ACCESS_LOCAL_WRITE, 0x21);
    MrInfo dst = buffer(8192, VRNIC_ACCESS_LOCAL_WRITE, 0, &dst_gpa);
    drv.post_recv(b, 8, {sge(dst, 0, 8192)});
    SendWr wr;
    wr.wr_id = 1;
    wr.sge = {sge(src, 0, 6000)};
    drv.post_send(a, wr);
    auto sc = step(a_cq);
    ASSERT_EQ(1u, sc.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, sc[0].status);
    EXPECT_EQ(6000u, sc[0].byte_len);
    auto rc = drv.poll_cq(b_cq);
    ASSERT_EQ(1u, rc.size());
    EXPECT_EQ(8u, rc[0].wr_id);
    EXPECT_EQ(VRNIC_CQE_OP_RECV, rc[0].opcode);
    EXPECT_EQ(6000u, rc[0].byte_len);
    EXPECT_EQ(a.qpn, rc[0].src_qp);
    EXPECT_EQ(0, rc[0].flags); // no GRH on a connected QP
    EXPECT_TRUE(drv.check_pattern(dst_gpa, 6000, 0x21));
    EXPECT_EQ(0, drv.host(dst_gpa)[6000]);
    EXPECT_EQ(0u, drops());
}

TEST_F(Uc, WriteAndWriteWithImm) {
    uint64_t dst_gpa;
    MrInfo src = buffer(8192, VRNIC_ACCESS_LOCAL_WRITE, 0x31);
    MrInfo dst = buffer(8192, kRw, 0, &dst_gpa);
    drv.post_send(a, rdma_write(src, 0, 3000, dst, 10));
    auto sc = step(a_cq);
    ASSERT_EQ(1u, sc.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, sc[0].status);
    EXPECT_EQ(VRNIC_CQE_OP_RDMA_WRITE, sc[0].opcode);
    EXPECT_TRUE(drv.check_pattern(dst_gpa + 10, 3000, 0x31));
    EXPECT_EQ(0, drv.host(dst_gpa)[9]);
    EXPECT_TRUE(drv.poll_cq(b_cq).empty());

    MrInfo rbuf = buffer(64, VRNIC_ACCESS_LOCAL_WRITE);
    drv.post_recv(b, 5, {sge(rbuf, 0, 64)});
    SendWr wi = rdma_write(src, 0, 100, dst, 5000);
    wi.opcode = VRNIC_WR_RDMA_WRITE_WITH_IMM;
    wi.imm_be = htonl(0xabcd);
    drv.post_send(a, wi);
    ASSERT_EQ(VRNIC_WC_SUCCESS, step(a_cq).at(0).status);
    auto rc = drv.poll_cq(b_cq);
    ASSERT_EQ(1u, rc.size());
    EXPECT_EQ(VRNIC_CQE_OP_RECV_RDMA_WITH_IMM, rc[0].opcode);
    EXPECT_EQ(htonl(0xabcd), rc[0].imm_data);
    EXPECT_EQ(100u, rc[0].byte_len);
    EXPECT_TRUE(drv.check_pattern(dst_gpa + 5000, 100, 0x31));
}

TEST_F(Uc, NoReceiveIsDroppedWithoutWaiting) {
    MrInfo src = buffer(4096, VRNIC_ACCESS_LOCAL_WRITE, 0x41);
    SendWr wr;
    wr.sge = {sge(src, 0, 100)};
    drv.post_send(a, wr);
    auto sc = step(a_cq);
    ASSERT_EQ(1u, sc.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, sc[0].status);
    EXPECT_EQ(1u, drops());
    expect_both_rts();
    // The dropped message is gone: a later receive gets only the next one.
    uint64_t dst_gpa;
    MrInfo dst = buffer(4096, VRNIC_ACCESS_LOCAL_WRITE, 0, &dst_gpa);
    drv.post_recv(b, 1, {sge(dst, 0, 4096)});
    drv.run();
    EXPECT_TRUE(drv.poll_cq(b_cq).empty());
    wr.sge = {sge(src, 0, 200)};
    drv.post_send(a, wr);
    EXPECT_EQ(VRNIC_WC_SUCCESS, step(a_cq).at(0).status);
    EXPECT_EQ(200u, drv.poll_cq(b_cq).at(0).byte_len);
    // WRITE_WITH_IMM needs a receive too.
    MrInfo wdst = buffer(4096, kRw);
    SendWr wi = rdma_write(src, 0, 10, wdst);
    wi.opcode = VRNIC_WR_RDMA_WRITE_WITH_IMM;
    drv.post_send(a, wi);
    EXPECT_EQ(VRNIC_WC_SUCCESS, step(a_cq).at(0).status);
    EXPECT_EQ(2u, drops());
    expect_both_rts();
}

TEST_F(Uc, ReadAndAtomicsAreRefused) {
    for (uint8_t op :
         {VRNIC_WR_RDMA_READ, VRNIC_WR_ATOMIC_CMP_AND_SWP, VRNIC_WR_ATOMIC_FETCH_AND_ADD}) {
        SetUp();
        MrInfo buf = buffer(4096, kRw);
        SendWr wr = rdma_write(buf, 0, 8, buf);
        wr.opcode = op;
        drv.post_send(a, wr);
        auto sc = step(a_cq);
        ASSERT_EQ(1u, sc.size()) << int(op);
        EXPECT_EQ(VRNIC_WC_LOC_QP_OP_ERR, sc[0].status) << int(op);
        EXPECT_EQ(kVeBadOpcode, sc[0].vendor_err) << int(op);
        EXPECT_EQ(VRNIC_QPS_ERR, state(a));
        EXPECT_EQ(VRNIC_QPS_RTS, state(b));
    }
}

TEST_F(Uc, RemoteAccessErrorsAreDropped) {
    uint64_t dst_gpa;
    MrInfo src = buffer(4096, VRNIC_ACCESS_LOCAL_WRITE, 0x51);
    MrInfo dst = buffer(4096, kRw, 0, &dst_gpa);
    MrInfo ro = buffer(4096, VRNIC_ACCESS_LOCAL_WRITE);
    const uint32_t other_pd = drv.create_pd(0);
    uint64_t og = drv.alloc(4096);
    MrInfo foreign = drv.reg_mr(other_pd, og, 4096, kRw);
    SendWr bad_key = rdma_write(src, 0, 100, dst);
    bad_key.rkey ^= 0x100;
    drv.post_send(a, bad_key);
    drv.post_send(a, rdma_write(src, 0, 100, dst, 4090)); // bounds
    drv.post_send(a, rdma_write(src, 0, 100, ro));        // rights
    drv.post_send(a, rdma_write(src, 0, 100, foreign));   // PD
    auto sc = step(a_cq);
    ASSERT_EQ(4u, sc.size());
    for (auto& c : sc)
        EXPECT_EQ(VRNIC_WC_SUCCESS, c.status);
    EXPECT_EQ(4u, drops());
    expect_both_rts();
    EXPECT_TRUE(drv.take_async_events().empty()); // no QP_ACCESS_ERR
    for (uint64_t i = 0; i < 4096; i++)
        ASSERT_EQ(0, drv.host(dst_gpa)[i]) << i;
    // And the pair still works.
    drv.post_send(a, rdma_write(src, 0, 100, dst));
    EXPECT_EQ(VRNIC_WC_SUCCESS, step(a_cq).at(0).status);
    EXPECT_TRUE(drv.check_pattern(dst_gpa, 100, 0x51));
}

TEST_F(Uc, NoResponderIsDropped) {
    MrInfo src = buffer(4096, VRNIC_ACCESS_LOCAL_WRITE, 1);
    MrInfo dst = buffer(4096, kRw);
    vrnic_cmd_modify_qp m = modify_to(b.qpn, VRNIC_QPS_ERR, Path{});
    ASSERT_EQ(0u, drv.cmd(VRNIC_CMD_MODIFY_QP, &m, sizeof(m)));
    drv.post_send(a, rdma_write(src, 0, 100, dst));
    auto sc = step(a_cq);
    ASSERT_EQ(1u, sc.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, sc[0].status);
    EXPECT_EQ(1u, drops());
    EXPECT_EQ(VRNIC_QPS_RTS, state(a));
}

TEST_F(Uc, ReceiveTooShortFailsTheResponderOnly) {
    MrInfo src = buffer(4096, VRNIC_ACCESS_LOCAL_WRITE, 1);
    MrInfo dst = buffer(4096, VRNIC_ACCESS_LOCAL_WRITE);
    drv.post_recv(b, 6, {sge(dst, 0, 50)});
    SendWr wr;
    wr.sge = {sge(src, 0, 100)};
    drv.post_send(a, wr);
    auto sc = step(a_cq);
    ASSERT_EQ(1u, sc.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, sc[0].status);
    auto rc = drv.poll_cq(b_cq);
    ASSERT_EQ(1u, rc.size());
    EXPECT_EQ(VRNIC_WC_LOC_LEN_ERR, rc[0].status);
    EXPECT_EQ(VRNIC_QPS_ERR, state(b));
    EXPECT_EQ(VRNIC_QPS_RTS, state(a));
}

TEST_F(Uc, LargeSendMovesInSlices) {
    constexpr uint32_t kLen = 3u << 20; // three QP visits at least
    uint64_t dst_gpa;
    MrInfo src = buffer(kLen, VRNIC_ACCESS_LOCAL_WRITE, 0x61);
    MrInfo dst = buffer(kLen, VRNIC_ACCESS_LOCAL_WRITE, 0, &dst_gpa);
    drv.post_recv(b, 1, {sge(dst, 0, kLen)});
    SendWr wr;
    wr.sge = {sge(src, 0, kLen)};
    drv.post_send(a, wr);
    drv.poll();
    EXPECT_TRUE(drv.poll_cq(a_cq).empty()); // not finished in one pass
    auto sc = step(a_cq);
    ASSERT_EQ(1u, sc.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, sc[0].status);
    EXPECT_EQ(kLen, drv.poll_cq(b_cq).at(0).byte_len);
    EXPECT_TRUE(drv.check_pattern(dst_gpa, kLen, 0x61));
    EXPECT_EQ(0u, drops());
}

TEST_F(Uc, ReceiveGoneBetweenSlicesDropsTheMessage) {
    constexpr uint32_t kLen = 3u << 20;
    MrInfo src = buffer(kLen, VRNIC_ACCESS_LOCAL_WRITE, 0x61);
    MrInfo dst = buffer(kLen, VRNIC_ACCESS_LOCAL_WRITE);
    drv.post_recv(b, 1, {sge(dst, 0, kLen)});
    SendWr wr;
    wr.sge = {sge(src, 0, kLen)};
    drv.post_send(a, wr);
    drv.poll(); // the first slice took the receive
    // RESET discards b's receives; b is back in RTS before the next slice
    // (the commands of one pass run before its engine pass).
    const Path p{.qp_type = VRNIC_QPT_UC, .dest_qpn = a.qpn};
    std::vector<uint32_t> idx;
    for (uint8_t st : {VRNIC_QPS_RESET, VRNIC_QPS_INIT, VRNIC_QPS_RTR, VRNIC_QPS_RTS}) {
        vrnic_cmd c{};
        c.hdr.opcode = VRNIC_CMD_MODIFY_QP;
        const vrnic_cmd_modify_qp m = modify_to(b.qpn, st, p);
        memcpy(c.payload, &m, sizeof(m));
        idx.push_back(drv.write_cmd(c));
    }
    drv.publish_cmds();
    for (uint32_t i : idx)
        ASSERT_EQ(0u, drv.response(i).hdr.status);
    EXPECT_EQ(VRNIC_QPS_RTS, state(b));
    auto sc = step(a_cq);
    ASSERT_EQ(1u, sc.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, sc[0].status);
    EXPECT_EQ(1u, drops());
    EXPECT_TRUE(drv.poll_cq(b_cq).empty());
    expect_both_rts();
}

TEST_F(Uc, UcDoesNotTalkToRc) {
    QpInfo rc = drv.create_qp(0, pd, b_cq, b_cq);
    drv.connect(rc, a.qpn);
    vrnic_cmd_modify_qp m = modify_to(a.qpn, VRNIC_QPS_RESET, Path{});
    ASSERT_EQ(0u, drv.cmd(VRNIC_CMD_MODIFY_QP, &m, sizeof(m)));
    drv.activate(a, Path{.qp_type = VRNIC_QPT_UC, .dest_qpn = rc.qpn});
    MrInfo src = buffer(4096, VRNIC_ACCESS_LOCAL_WRITE, 1);
    uint64_t dst_gpa;
    MrInfo dst = buffer(4096, kRw, 0, &dst_gpa);
    drv.post_send(a, rdma_write(src, 0, 100, dst));
    EXPECT_EQ(VRNIC_WC_SUCCESS, step(a_cq).at(0).status);
    EXPECT_EQ(1u, drops());
    EXPECT_EQ(0, drv.host(dst_gpa)[0]);
}

TEST_F(Uc, RcDoesNotTalkToUc) {
    QpInfo rc = drv.create_qp(0, pd, b_cq, b_cq);
    drv.connect(rc, a.qpn);
    vrnic_cmd_modify_qp m = modify_to(a.qpn, VRNIC_QPS_RESET, Path{});
    ASSERT_EQ(0u, drv.cmd(VRNIC_CMD_MODIFY_QP, &m, sizeof(m)));
    drv.activate(a, Path{.qp_type = VRNIC_QPT_UC, .dest_qpn = rc.qpn});
    MrInfo src = buffer(4096, VRNIC_ACCESS_LOCAL_WRITE, 1);
    MrInfo dst = buffer(4096, kRw);
    drv.post_send(rc, rdma_write(src, 0, 100, dst));
    auto c = step(b_cq);
    ASSERT_EQ(1u, c.size());
    EXPECT_EQ(VRNIC_WC_RETRY_EXC_ERR, c[0].status); // RC as before: no responder
    EXPECT_EQ(0u, drops());
}

} // namespace
} // namespace vrnic::test
