// UD between two QPs of one device (device-interface.md 14.6): the sender's
// checks, the GRH area and payload that arrive, the receive completion, and
// the drops the register page counts.
#include "grh.h"
#include "ud_fixture.h"

#include <arpa/inet.h>

namespace vrnic::test {
namespace {

using Ud = UdPair;

constexpr uint8_t kV4Gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 2, 3};

uint16_t be16(const uint8_t* p) {
    return uint16_t(p[0] << 8 | p[1]);
}

TEST_F(Ud, SendArrivesAfterAnIpv6Grh) {
    uint64_t dst_gpa;
    MrInfo dst = buffer(4096, 0, &dst_gpa);
    drv.post_recv(b, 9, {sge(dst, 0, 4096)});
    auto sc = send(1000);
    ASSERT_EQ(1u, sc.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, sc[0].status);
    EXPECT_EQ(VRNIC_CQE_OP_SEND, sc[0].opcode);
    EXPECT_EQ(1000u, sc[0].byte_len);
    auto rc = drv.poll_cq(b_cq);
    ASSERT_EQ(1u, rc.size());
    EXPECT_EQ(9u, rc[0].wr_id);
    EXPECT_EQ(VRNIC_WC_SUCCESS, rc[0].status);
    EXPECT_EQ(VRNIC_CQE_OP_RECV, rc[0].opcode);
    EXPECT_EQ(b.qpn, rc[0].qpn);
    EXPECT_EQ(VRNIC_GRH_SIZE + 1000u, rc[0].byte_len);
    EXPECT_EQ(a.qpn, rc[0].src_qp);
    EXPECT_EQ(VRNIC_CQE_F_GRH, rc[0].flags);
    EXPECT_EQ(VRNIC_NET_IPV6, rc[0].network_hdr_type);
    EXPECT_EQ(0, memcmp(rc[0].smac, drv.regs()->mac, 6));
    EXPECT_EQ(0u, rc[0].pkey_index);
    EXPECT_EQ(5, rc[0].sl); // the AH's
    const uint8_t* g = drv.host(dst_gpa, 4096);
    EXPECT_EQ(6u << 28 | 0x28u << 20 | 0x12345u,
              uint32_t(g[0]) << 24 | uint32_t(g[1]) << 16 | uint32_t(g[2]) << 8 | g[3]);
    EXPECT_EQ(8 + 12 + 8 + 1000 + 4, be16(g + 4)); // UDP, BTH, DETH, payload, ICRC
    EXPECT_EQ(17, g[6]);
    EXPECT_EQ(64, g[7]);
    EXPECT_EQ(0, memcmp(g + 8, kGid, 16));  // sgid: entry 0
    EXPECT_EQ(0, memcmp(g + 24, kGid, 16)); // dgid: the AH's
    EXPECT_TRUE(drv.check_pattern(dst_gpa + VRNIC_GRH_SIZE, 1000, 0x5a));
    EXPECT_EQ(0, g[VRNIC_GRH_SIZE + 1000]);
}

TEST_F(Ud, Ipv4GidGivesAnIpv4HeaderWithItsChecksum) {
    vrnic_cmd_set_gid e = gid_entry(1);
    memcpy(e.gid, kV4Gid, 16);
    ASSERT_EQ(0u, drv.cmd(VRNIC_CMD_SET_GID, &e, sizeof(e)));
    ah = drv.create_ah(pd, av_to(kV4Gid, 1));
    uint64_t dst_gpa;
    MrInfo dst = buffer(4096, 0, &dst_gpa);
    drv.fill(dst_gpa, VRNIC_GRH_SIZE, 0xee); // the zero bytes are written
    drv.post_recv(b, 1, {sge(dst, 0, 4096)});
    ASSERT_EQ(VRNIC_WC_SUCCESS, send(300).at(0).status);
    auto rc = drv.poll_cq(b_cq);
    ASSERT_EQ(1u, rc.size());
    EXPECT_EQ(VRNIC_NET_IPV4, rc[0].network_hdr_type);
    const uint8_t* g = drv.host(dst_gpa, 4096);
    for (int i = 0; i < 20; i++)
        EXPECT_EQ(0, g[i]) << i;
    const uint8_t* ip = g + 20;
    EXPECT_EQ(0x45, ip[0]);
    EXPECT_EQ(0x28, ip[1]);                             // tos: traffic_class
    EXPECT_EQ(20 + 8 + 12 + 8 + 300 + 4, be16(ip + 2)); // total length
    EXPECT_EQ(0x4000, be16(ip + 6));                    // DF
    EXPECT_EQ(64, ip[8]);
    EXPECT_EQ(17, ip[9]);
    EXPECT_EQ(0, memcmp(ip + 12, kV4Gid + 12, 4));
    EXPECT_EQ(0, memcmp(ip + 16, kV4Gid + 12, 4));
    // The one's-complement sum over a valid header is 0xffff.
    uint32_t sum = 0;
    for (int i = 0; i < 20; i += 2)
        sum += be16(ip + i);
    sum = (sum & 0xffff) + (sum >> 16);
    EXPECT_EQ(0xffffu, sum);
    EXPECT_NE(0, be16(ip + 10));
    EXPECT_TRUE(drv.check_pattern(dst_gpa + VRNIC_GRH_SIZE, 300, 0x5a));
}

TEST(Grh, Ipv4ChecksumOfAKnownHeader) {
    // RFC 1071's example header: 4500 0073 0000 4000 4011 xxxx c0a8 0001 c0a8 00c7.
    uint8_t h[20] = {0x45, 0, 0x00, 0x73, 0, 0, 0x40, 0,    0x40, 0x11,
                     0,    0, 0xc0, 0xa8, 0, 1, 0xc0, 0xa8, 0,    0xc7};
    EXPECT_EQ(0xb861, ipv4_checksum(h, 20));
}

TEST_F(Ud, SendWithImmCarriesIt) {
    uint64_t dst_gpa;
    MrInfo dst = buffer(4096, 0, &dst_gpa);
    drv.post_recv(b, 3, {sge(dst, 0, 4096)});
    MrInfo src = buffer(16, 0x33);
    SendWr wr = ud_send(ah, b.qpn, kQkey, {sge(src, 0, 16)});
    wr.opcode = VRNIC_WR_SEND_WITH_IMM;
    wr.imm_be = htonl(0xfeed);
    drv.post_send(a, wr);
    drv.run();
    auto rc = drv.poll_cq(b_cq);
    ASSERT_EQ(1u, rc.size());
    EXPECT_EQ(VRNIC_CQE_F_GRH | VRNIC_CQE_F_WITH_IMM, rc[0].flags);
    EXPECT_EQ(htonl(0xfeed), rc[0].imm_data);
    EXPECT_EQ(VRNIC_GRH_SIZE + 16u, rc[0].byte_len);
    // The packet's length counts its ImmDt: UDP, BTH, DETH, ImmDt, payload, ICRC.
    EXPECT_EQ(8 + 12 + 8 + 4 + 16 + 4, be16(drv.host(dst_gpa, 4096) + 4));
}

TEST_F(Ud, QkeyMismatchIsDroppedAndCounted) {
    MrInfo dst = buffer(4096);
    drv.post_recv(b, 1, {sge(dst, 0, 4096)});
    auto sc = send(100, kQkey + 1);
    ASSERT_EQ(1u, sc.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, sc[0].status); // the sender never knows
    EXPECT_TRUE(drv.poll_cq(b_cq).empty());
    EXPECT_EQ(1u, counter(&vrnic_regs::ud_qkey_drops));
    EXPECT_EQ(VRNIC_QPS_RTS, state(a));
    EXPECT_EQ(VRNIC_QPS_RTS, state(b));
    // The receive is still there for the right qkey.
    EXPECT_EQ(VRNIC_WC_SUCCESS, send(100).at(0).status);
    EXPECT_EQ(1u, drv.poll_cq(b_cq).size());
    EXPECT_EQ(1u, counter(&vrnic_regs::ud_qkey_drops));
}

TEST_F(Ud, UseQpBitTakesTheSendersQkey) {
    MrInfo dst = buffer(4096);
    drv.post_recv(b, 1, {sge(dst, 0, 4096)});
    // The low bits are not the qkey; the QP's own (== b's) is used.
    send(100, VRNIC_QKEY_USE_QP | 0x777);
    EXPECT_EQ(1u, drv.poll_cq(b_cq).size());
    EXPECT_EQ(0u, counter(&vrnic_regs::ud_qkey_drops));
    // A sender with another qkey: the bit makes it mismatch.
    vrnic_qp_attr at{};
    at.qkey = 0x999;
    ASSERT_EQ(0u, drv.modify_qp(a, VRNIC_QP_ATTR_QKEY, at));
    EXPECT_EQ(0x999u, drv.query_qp(a).qkey);
    drv.post_recv(b, 2, {sge(dst, 0, 4096)});
    send(100, VRNIC_QKEY_USE_QP | kQkey);
    EXPECT_TRUE(drv.poll_cq(b_cq).empty());
    EXPECT_EQ(1u, counter(&vrnic_regs::ud_qkey_drops));
}

TEST_F(Ud, LongerThanTheMtuIsLocLenErr) {
    MrInfo dst = buffer(8192);
    drv.post_recv(b, 1, {sge(dst, 0, 8192)});
    auto sc = send(4097);
    ASSERT_EQ(1u, sc.size());
    EXPECT_EQ(VRNIC_WC_LOC_LEN_ERR, sc[0].status);
    EXPECT_EQ(kVeMsgTooLong, sc[0].vendor_err);
    EXPECT_EQ(VRNIC_QPS_ERR, state(a));
    EXPECT_TRUE(drv.poll_cq(b_cq).empty());
}

TEST_F(Ud, ExactlyTheMtuArrives) {
    MrInfo dst = buffer(8192);
    drv.post_recv(b, 1, {sge(dst, 0, 8192)});
    EXPECT_EQ(VRNIC_WC_SUCCESS, send(4096).at(0).status);
    EXPECT_EQ(VRNIC_GRH_SIZE + 4096u, drv.poll_cq(b_cq).at(0).byte_len);
}

// The driver passes its port MTU at RTR (the netdev's, below the device's).
TEST_F(Ud, PathMtuFromRtrBoundsTheDatagram) {
    QpOpts o;
    o.qp_type = VRNIC_QPT_UD;
    a = drv.create_qp(0, pd, a_cq, a_cq, o);
    drv.activate(a, Path{.qp_type = VRNIC_QPT_UD, .qkey = kQkey, .mtu = VRNIC_MTU_1024});
    MrInfo dst = buffer(8192);
    drv.post_recv(b, 1, {sge(dst, 0, 8192)});
    EXPECT_EQ(VRNIC_WC_SUCCESS, send(1024).at(0).status);
    EXPECT_EQ(VRNIC_GRH_SIZE + 1024u, drv.poll_cq(b_cq).at(0).byte_len);
    auto sc = send(1025);
    ASSERT_EQ(1u, sc.size());
    EXPECT_EQ(VRNIC_WC_LOC_LEN_ERR, sc[0].status);
    EXPECT_EQ(kVeMsgTooLong, sc[0].vendor_err);
}

TEST_F(Ud, NoReceiveIsDroppedAndCounted) {
    auto sc = send(64);
    ASSERT_EQ(1u, sc.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, sc[0].status);
    EXPECT_EQ(1u, counter(&vrnic_regs::ud_no_recv_drops));
    EXPECT_EQ(VRNIC_QPS_RTS, state(a));
    EXPECT_EQ(VRNIC_QPS_RTS, state(b));
    // No RNR wait: a receive posted later gets only the next datagram.
    MrInfo dst = buffer(4096);
    drv.post_recv(b, 1, {sge(dst, 0, 4096)});
    drv.run();
    EXPECT_TRUE(drv.poll_cq(b_cq).empty());
}

TEST_F(Ud, NoDestinationIsDroppedAndCounted) {
    MrInfo src = buffer(64, 1);
    // A QPN nobody has, an RC QP, a UD QP still in INIT, an unknown GID.
    QpInfo rc = drv.create_qp(0, pd, b_cq, b_cq);
    QpOpts o;
    o.qp_type = VRNIC_QPT_UD;
    QpInfo init = drv.create_qp(0, pd, b_cq, b_cq, o);
    vrnic_cmd_modify_qp m =
        modify_to(init.qpn, VRNIC_QPS_INIT, Path{.qp_type = VRNIC_QPT_UD, .qkey = kQkey});
    ASSERT_EQ(0u, drv.cmd(VRNIC_CMD_MODIFY_QP, &m, sizeof(m)));
    uint8_t other[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8};
    const uint32_t far = drv.create_ah(pd, av_to(other, 0));
    drv.post_send(a, ud_send(ah, b.qpn ^ 0x800000, kQkey, {sge(src, 0, 64)}));
    drv.post_send(a, ud_send(ah, rc.qpn, kQkey, {sge(src, 0, 64)}));
    drv.post_send(a, ud_send(ah, init.qpn, kQkey, {sge(src, 0, 64)}));
    drv.post_send(a, ud_send(far, b.qpn, kQkey, {sge(src, 0, 64)}));
    drv.run();
    auto sc = drv.poll_cq(a_cq);
    ASSERT_EQ(4u, sc.size());
    for (auto& c : sc)
        EXPECT_EQ(VRNIC_WC_SUCCESS, c.status);
    EXPECT_EQ(4u, counter(&vrnic_regs::ud_no_dest_drops));
    EXPECT_EQ(0u, counter(&vrnic_regs::ud_no_recv_drops));
}

TEST_F(Ud, AhOfAnotherPdIsRefused) {
    const uint32_t pd2 = drv.create_pd(0);
    const uint32_t ah2 = drv.create_ah(pd2, av_to(kGid, 0));
    MrInfo src = buffer(64, 1);
    drv.post_send(a, ud_send(ah2, b.qpn, kQkey, {sge(src, 0, 64)}));
    drv.run();
    auto sc = drv.poll_cq(a_cq);
    ASSERT_EQ(1u, sc.size());
    EXPECT_EQ(VRNIC_WC_LOC_QP_OP_ERR, sc[0].status);
    EXPECT_EQ(kVeBadAh, sc[0].vendor_err);
    EXPECT_EQ(VRNIC_QPS_ERR, state(a));
}

TEST_F(Ud, UnknownAhIsRefused) {
    MrInfo src = buffer(64, 1);
    drv.post_send(a, ud_send(ah + 1, b.qpn, kQkey, {sge(src, 0, 64)}));
    drv.run();
    auto sc = drv.poll_cq(a_cq);
    ASSERT_EQ(1u, sc.size());
    EXPECT_EQ(VRNIC_WC_LOC_QP_OP_ERR, sc[0].status);
    EXPECT_EQ(kVeBadAh, sc[0].vendor_err);
}

TEST_F(Ud, UserQpCannotNameQp0Or1) {
    for (uint32_t qpn : {0u, 1u, 1u << 24}) {
        const uint32_t u = drv.alloc_uctx();
        const uint32_t upd = drv.create_pd(u);
        CqInfo ucq = drv.create_cq(u, 6);
        QpInfo uq = make_qp(u, upd, ucq);
        const uint32_t uah = drv.create_ah(upd, av_to(kGid, 0));
        const uint64_t g = drv.alloc(4096);
        MrInfo src = drv.reg_mr(upd, g, 4096, VRNIC_ACCESS_LOCAL_WRITE);
        drv.post_send(uq, ud_send(uah, qpn, kQkey, {sge(src, 0, 64)}));
        drv.run();
        auto sc = drv.poll_cq(ucq);
        ASSERT_EQ(1u, sc.size()) << qpn;
        EXPECT_EQ(VRNIC_WC_LOC_QP_OP_ERR, sc[0].status) << qpn;
        EXPECT_EQ(kVeBadRemoteQpn, sc[0].vendor_err) << qpn;
    }
    // A kernel QP may: QP 1 does not exist here, so it is no destination.
    MrInfo src = buffer(64, 1);
    drv.post_send(a, ud_send(ah, 1, kQkey, {sge(src, 0, 64)}));
    drv.run();
    EXPECT_EQ(VRNIC_WC_SUCCESS, drv.poll_cq(a_cq).at(0).status);
    EXPECT_EQ(1u, counter(&vrnic_regs::ud_no_dest_drops));
}

TEST_F(Ud, WriteAndReadAreNotUdOpcodes) {
    for (uint8_t op : {VRNIC_WR_RDMA_WRITE, VRNIC_WR_RDMA_READ, VRNIC_WR_ATOMIC_FETCH_AND_ADD}) {
        SetUp();
        MrInfo src = buffer(64, 1);
        SendWr wr = ud_send(ah, b.qpn, kQkey, {sge(src, 0, 8)});
        wr.opcode = op;
        drv.post_send(a, wr);
        drv.run();
        auto sc = drv.poll_cq(a_cq);
        ASSERT_EQ(1u, sc.size()) << int(op);
        EXPECT_EQ(VRNIC_WC_LOC_QP_OP_ERR, sc[0].status) << int(op);
        EXPECT_EQ(kVeBadOpcode, sc[0].vendor_err) << int(op);
        EXPECT_EQ(VRNIC_QPS_ERR, state(a));
    }
}

TEST_F(Ud, ReceiveTooShortForGrhAndPayloadFailsTheReceiver) {
    MrInfo dst = buffer(4096);
    drv.post_recv(b, 4, {sge(dst, 0, VRNIC_GRH_SIZE + 99)});
    auto sc = send(100);
    ASSERT_EQ(1u, sc.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, sc[0].status);
    auto rc = drv.poll_cq(b_cq);
    ASSERT_EQ(1u, rc.size());
    EXPECT_EQ(4u, rc[0].wr_id);
    EXPECT_EQ(VRNIC_WC_LOC_LEN_ERR, rc[0].status);
    EXPECT_EQ(VRNIC_QPS_ERR, state(b));
    EXPECT_EQ(VRNIC_QPS_RTS, state(a));
}

TEST_F(Ud, GrhAndPayloadSpanReceiveSges) {
    uint64_t g1, g2;
    MrInfo d1 = buffer(4096, 0, &g1), d2 = buffer(4096, 0, &g2);
    // 30 bytes: most of the GRH; the rest, then the payload, in the second.
    drv.post_recv(b, 1, {sge(d1, 0, 30), sge(d2, 0, 2000)});
    send(500, kQkey, 0x44);
    ASSERT_EQ(VRNIC_GRH_SIZE + 500u, drv.poll_cq(b_cq).at(0).byte_len);
    EXPECT_EQ(0x60, drv.host(g1)[0] & 0xf0);
    EXPECT_EQ(0, memcmp(drv.host(g2, 10), kGid + 6, 10)); // the dgid's last 10 bytes
    EXPECT_TRUE(drv.check_pattern(g2 + 10, 500, 0x44));
}

TEST_F(Ud, InlineDatagramArrives) {
    uint64_t dst_gpa;
    MrInfo dst = buffer(4096, 0, &dst_gpa);
    drv.post_recv(b, 1, {sge(dst, 0, 4096)});
    SendWr wr = ud_send(ah, b.qpn, kQkey, {});
    wr.flags |= VRNIC_WQE_F_INLINE;
    wr.inline_data = {'d', 'g', 'r', 'a', 'm'};
    drv.post_send(a, wr);
    drv.run();
    ASSERT_EQ(VRNIC_WC_SUCCESS, drv.poll_cq(a_cq).at(0).status);
    EXPECT_EQ(VRNIC_GRH_SIZE + 5u, drv.poll_cq(b_cq).at(0).byte_len);
    EXPECT_EQ(0, memcmp(drv.host(dst_gpa + VRNIC_GRH_SIZE, 5), "dgram", 5));
}

TEST_F(Ud, BadReceiveSgeFailsTheReceiver) {
    MrInfo dst = buffer(4096);
    vrnic_sge bad = sge(dst, 0, 4096);
    bad.lkey ^= 0x100;
    drv.post_recv(b, 2, {bad});
    EXPECT_EQ(VRNIC_WC_SUCCESS, send(64).at(0).status);
    auto rc = drv.poll_cq(b_cq);
    ASSERT_EQ(1u, rc.size());
    EXPECT_EQ(VRNIC_WC_LOC_PROT_ERR, rc[0].status);
    EXPECT_EQ(VRNIC_QPS_ERR, state(b));
}

TEST_F(Ud, ReceiverInSqdStillReceives) {
    vrnic_cmd_modify_qp m = modify_to(b.qpn, VRNIC_QPS_SQD, Path{.qp_type = VRNIC_QPT_UD});
    ASSERT_EQ(0u, drv.cmd(VRNIC_CMD_MODIFY_QP, &m, sizeof(m)));
    MrInfo dst = buffer(4096);
    drv.post_recv(b, 1, {sge(dst, 0, 4096)});
    send(64);
    EXPECT_EQ(VRNIC_WC_SUCCESS, drv.poll_cq(b_cq).at(0).status);
}

TEST_F(Ud, ErrFlushesTheSq) {
    vrnic_cmd_modify_qp m = modify_to(a.qpn, VRNIC_QPS_ERR, Path{.qp_type = VRNIC_QPT_UD});
    ASSERT_EQ(0u, drv.cmd(VRNIC_CMD_MODIFY_QP, &m, sizeof(m)));
    MrInfo src = buffer(64, 1);
    for (int i = 0; i < 3; i++)
        drv.post_send(a, ud_send(ah, b.qpn, kQkey, {sge(src, 0, 64)}));
    drv.run();
    auto sc = drv.poll_cq(a_cq);
    ASSERT_EQ(3u, sc.size());
    for (auto& c : sc)
        EXPECT_EQ(VRNIC_WC_WR_FLUSH_ERR, c.status);
    EXPECT_EQ(0u, counter(&vrnic_regs::ud_no_recv_drops)); // nothing was sent
}

} // namespace
} // namespace vrnic::test
