// RoCE v2 on the wire (qemu/wire.h), UD: a datagram to a GID that no VM of
// the fabric holds leaves as one packet that the codec reads back field by
// field; a packet that arrives is delivered with its own IP header in the
// GRH area, or dropped and counted.
#include "roce_packet.h"
#include "ud_fixture.h"
#include "wire.h"

#include <arpa/inet.h>
#include <vector>

namespace vrnic::test {
namespace {

using Frame = std::vector<uint8_t>;

// A station beyond the uplink, and the device's IPv4 GID (entry 1).
constexpr uint8_t kFarGid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 77, 9};
constexpr uint8_t kOwnV4[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 77, 1};
constexpr uint8_t kFarMac[6] = {0x52, 0x54, 0x00, 0x77, 0x00, 0x09};

class WireUd : public UdPair {
  protected:
    void SetUp() override {
        UdPair::SetUp();
        vrnic_cmd_set_gid e = gid_entry(1);
        memcpy(e.gid, kOwnV4, 16);
        ASSERT_EQ(0u, drv.cmd(VRNIC_CMD_SET_GID, &e, sizeof(e)));
        drv.dev().set_wire([this](const uint8_t* f, uint32_t n) {
            sent.emplace_back(f, f + n);
            return true;
        });
    }
    uint32_t far_ah() {
        vrnic_av av = av_to(kFarGid, 1);
        memcpy(av.dmac, kFarMac, 6);
        return drv.create_ah(pd, av);
    }
    // A datagram from the far station to `qpn`, as its NIC sends it.
    Frame from_far(uint32_t qpn, uint32_t qkey, const Frame& data,
                   uint8_t opcode = roce::kUdSendOnly) {
        roce::Packet p;
        memcpy(p.dst_mac.data(), drv.regs()->mac, 6);
        memcpy(p.src_mac.data(), kFarMac, 6);
        memcpy(p.sgid.data(), kFarGid, 16);
        memcpy(p.dgid.data(), kOwnV4, 16);
        p.ip_id = 0x1234;
        p.bth.opcode = opcode;
        p.bth.dest_qp = qpn;
        p.bth.psn = 77;
        p.qkey = qkey;
        p.src_qp = 0x4321;
        p.imm = htonl(0xc0ffee);
        p.payload = data.data();
        p.payload_len = static_cast<uint32_t>(data.size());
        p.bth.pad = static_cast<uint8_t>(-data.size() & 3);
        Frame f(roce::frame_bytes(p));
        roce::build(p, f.data());
        return f;
    }
    void arrive(const Frame& f) {
        drv.dev().deliver_frame(f.data(), static_cast<uint32_t>(f.size()), true);
        drv.run();
    }
    std::vector<Frame> sent;
};

TEST_F(WireUd, ADatagramToAGidNoVmHoldsLeavesAsOnePacket) {
    uint64_t src_gpa;
    MrInfo src = buffer(301, 0x21, &src_gpa);
    SendWr wr = ud_send(far_ah(), 0x123, kQkey, {sge(src, 0, 301)});
    wr.opcode = VRNIC_WR_SEND_WITH_IMM;
    wr.imm_be = htonl(0xabcd);
    drv.post_send(a, wr);
    drv.run();
    auto sc = drv.poll_cq(a_cq);
    ASSERT_EQ(1u, sc.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, sc[0].status);
    ASSERT_EQ(1u, sent.size());
    roce::Packet p;
    ASSERT_EQ(roce::Drop::none, roce::parse(sent[0].data(), uint32_t(sent[0].size()), &p));
    EXPECT_EQ(roce::kUdSendOnlyImm, p.bth.opcode);
    EXPECT_EQ(0x123u, p.bth.dest_qp);
    EXPECT_EQ(kQkey, p.qkey);
    EXPECT_EQ(a.qpn, p.src_qp);
    EXPECT_EQ(htonl(0xabcd), p.imm);
    EXPECT_EQ(0, memcmp(p.dst_mac.data(), kFarMac, 6));
    EXPECT_EQ(0, memcmp(p.src_mac.data(), drv.regs()->mac, 6));
    EXPECT_FALSE(p.ipv6);
    EXPECT_EQ(0, memcmp(p.sgid.data(), kOwnV4, 16));
    EXPECT_EQ(0, memcmp(p.dgid.data(), kFarGid, 16));
    EXPECT_EQ(0x28, p.traffic_class); // the AH's
    ASSERT_EQ(301u, p.payload_len);
    EXPECT_EQ(3, p.bth.pad);
    EXPECT_EQ(0, memcmp(p.payload, drv.host(src_gpa, 301), 301));
    EXPECT_EQ(1u, counter(&vrnic_regs::wire_tx_pkts));
    EXPECT_EQ(0u, counter(&vrnic_regs::ud_no_dest_drops));

    // The next one takes the next PSN.
    drv.post_send(a, ud_send(far_ah(), 0x123, kQkey, {sge(src, 0, 8)}));
    drv.run();
    ASSERT_EQ(2u, sent.size());
    roce::Packet q;
    ASSERT_EQ(roce::Drop::none, roce::parse(sent[1].data(), uint32_t(sent[1].size()), &q));
    EXPECT_EQ((p.bth.psn + 1) & VRNIC_PSN_MASK, q.bth.psn);
}

TEST_F(WireUd, APacketTheSwitchRefusesIsCountedAsUndeliverable) {
    drv.dev().set_wire([](const uint8_t*, uint32_t) { return false; });
    MrInfo src = buffer(64, 0x21);
    drv.post_send(a, ud_send(far_ah(), 0x123, kQkey, {sge(src, 0, 64)}));
    drv.run();
    EXPECT_EQ(VRNIC_WC_SUCCESS, drv.poll_cq(a_cq).at(0).status);
    EXPECT_EQ(0u, counter(&vrnic_regs::wire_tx_pkts));
    EXPECT_EQ(0u, counter(&vrnic_regs::wire_rx_drops));
    EXPECT_EQ(1u, counter(&vrnic_regs::ud_no_dest_drops));
}

TEST_F(WireUd, WithoutAnUplinkSuchADatagramIsCountedAsUndeliverable) {
    drv.dev().set_wire({});
    MrInfo src = buffer(64, 0x21);
    drv.post_send(a, ud_send(far_ah(), 0x123, kQkey, {sge(src, 0, 64)}));
    drv.run();
    EXPECT_EQ(VRNIC_WC_SUCCESS, drv.poll_cq(a_cq).at(0).status);
    EXPECT_TRUE(sent.empty());
    EXPECT_EQ(1u, counter(&vrnic_regs::ud_no_dest_drops));
}

TEST_F(WireUd, ADatagramFromTheWireArrivesWithItsIpHeader) {
    uint64_t dst_gpa;
    MrInfo dst = buffer(4096, 0, &dst_gpa);
    drv.fill(dst_gpa, VRNIC_GRH_SIZE, 0xee);
    drv.post_recv(b, 7, {sge(dst, 0, 4096)});
    Frame data(999);
    for (size_t i = 0; i < data.size(); i++)
        data[i] = static_cast<uint8_t>(i * 7 + 1);
    const Frame f = from_far(b.qpn, kQkey, data, roce::kUdSendOnlyImm);
    arrive(f);
    auto rc = drv.poll_cq(b_cq);
    ASSERT_EQ(1u, rc.size());
    EXPECT_EQ(7u, rc[0].wr_id);
    EXPECT_EQ(VRNIC_WC_SUCCESS, rc[0].status);
    EXPECT_EQ(VRNIC_GRH_SIZE + 999u, rc[0].byte_len);
    EXPECT_EQ(0x4321u, rc[0].src_qp);
    EXPECT_EQ(VRNIC_CQE_F_GRH | VRNIC_CQE_F_WITH_IMM, rc[0].flags);
    EXPECT_EQ(htonl(0xc0ffee), rc[0].imm_data);
    EXPECT_EQ(VRNIC_NET_IPV4, rc[0].network_hdr_type);
    EXPECT_EQ(0, memcmp(rc[0].smac, kFarMac, 6));
    const uint8_t* g = drv.host(dst_gpa, 4096);
    for (int i = 0; i < 20; i++)
        EXPECT_EQ(0, g[i]) << i;
    EXPECT_EQ(0, memcmp(g + 20, f.data() + 14, 20)); // the packet's own IPv4 header
    EXPECT_EQ(0, memcmp(g + VRNIC_GRH_SIZE, data.data(), data.size()));
    EXPECT_EQ(1u, counter(&vrnic_regs::wire_rx_pkts));
    EXPECT_EQ(0u, counter(&vrnic_regs::wire_rx_drops));
}

TEST_F(WireUd, WhatTheEngineDoesNotTakeIsDroppedAndCounted) {
    uint64_t dst_gpa;
    MrInfo dst = buffer(4096, 0, &dst_gpa);
    drv.post_recv(b, 1, {sge(dst, 0, 4096)});
    const Frame data(64, 0x42);
    Frame bad_icrc = from_far(b.qpn, kQkey, data);
    bad_icrc[bad_icrc.size() - 1] ^= 1;
    arrive(bad_icrc);
    arrive(from_far(b.qpn, kQkey, data, roce::kRcSendOnly)); // RC to a UD QP
    Frame other_gid = from_far(b.qpn, kQkey, data);
    other_gid[14 + 19] = 200; // 192.168.77.200
    ASSERT_TRUE(roce::reseal(other_gid.data(), uint32_t(other_gid.size())));
    arrive(other_gid);
    EXPECT_EQ(3u, counter(&vrnic_regs::wire_rx_drops));
    arrive(from_far(b.qpn, kQkey + 1, data));
    EXPECT_EQ(1u, counter(&vrnic_regs::ud_qkey_drops));
    arrive(from_far(0xfffff0, kQkey, data));
    EXPECT_EQ(1u, counter(&vrnic_regs::ud_no_dest_drops));
    EXPECT_EQ(3u, counter(&vrnic_regs::wire_rx_pkts)); // the RC one reached its transport
    EXPECT_TRUE(drv.poll_cq(b_cq).empty());
    // The receive is still there for one that is right.
    arrive(from_far(b.qpn, kQkey, data));
    ASSERT_EQ(1u, drv.poll_cq(b_cq).size());
}

TEST_F(WireUd, RoceFramesFromAnotherVmAreNotTheEnginesToTake) {
    // A VM's netdev can send any UDP 4791 frame, claiming any GID and QPN;
    // only frames through the uplink reach the RDMA engine.
    uint64_t dst_gpa;
    MrInfo dst = buffer(4096, 0, &dst_gpa);
    drv.post_recv(b, 1, {sge(dst, 0, 4096)});
    const Frame f = from_far(b.qpn, kQkey, Frame(64, 0x42));
    drv.dev().deliver_frame(f.data(), static_cast<uint32_t>(f.size()), false);
    drv.run();
    EXPECT_TRUE(drv.poll_cq(b_cq).empty());
    EXPECT_EQ(0u, counter(&vrnic_regs::wire_rx_pkts));
    EXPECT_EQ(0u, counter(&vrnic_regs::wire_rx_drops));
    arrive(f); // the same through the uplink
    EXPECT_EQ(1u, drv.poll_cq(b_cq).size());
}

TEST(WireFrames, RoceIsUdpToPort4791OverIpv4OrIpv6) {
    roce::Packet p;
    p.bth.opcode = roce::kUdSendOnly;
    for (bool v6 : {false, true}) {
        for (bool vlan : {false, true}) {
            p.ipv6 = v6;
            p.vlan = vlan;
            Frame f(roce::frame_bytes(p));
            roce::build(p, f.data());
            EXPECT_TRUE(roce::is_roce_frame(f.data(), uint32_t(f.size())));
            const uint32_t port = 14 + (vlan ? 4 : 0) + (v6 ? 40 : 20) + 3;
            f[port] ^= 1; // 4790
            EXPECT_FALSE(roce::is_roce_frame(f.data(), uint32_t(f.size())));
            EXPECT_FALSE(roce::is_roce_frame(f.data(), port)); // cut before the port
        }
    }
    const uint8_t arp[42] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0x08, 0x06};
    EXPECT_FALSE(roce::is_roce_frame(arp, sizeof(arp)));
}

} // namespace
} // namespace vrnic::test
