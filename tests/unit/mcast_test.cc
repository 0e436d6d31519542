// UD multicast (device-interface.md 10.23, 10.24, 14.6): ATTACH_MCAST and
// DETACH_MCAST validation and limits, a datagram to a group reaching every
// attached QP on its own, and what detaches a QP.
#include "mcast.h"
#include "ud_fixture.h"

namespace vrnic::test {
namespace {

constexpr uint8_t kGroup6[16] = {0xff, 0x0e, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34};
constexpr uint8_t kGroup4[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 239, 1, 2, 3};
constexpr uint8_t kV4Gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 2, 3};

class Mcast : public UdPair {
  protected:
    void SetUp() override {
        UdPair::SetUp();
        for (int i = 0; i < 3; i++) {
            cqs[i] = drv.create_cq(0, 8);
            qps[i] = make_qp(0, pd, cqs[i]);
        }
        group_ah = drv.create_ah(pd, av_to(kGroup6, 0));
    }
    uint32_t mcast(uint16_t op, uint32_t qpn, const uint8_t (&gid)[16], uint32_t reserved = 0) {
        vrnic_cmd_mcast c{};
        c.qpn = qpn;
        c.reserved = reserved;
        memcpy(c.gid, gid, 16);
        return drv.cmd(op, &c, sizeof(c));
    }
    uint32_t attach(const QpInfo& q, const uint8_t (&gid)[16] = kGroup6) {
        return mcast(VRNIC_CMD_ATTACH_MCAST, q.qpn, gid);
    }
    uint32_t detach(const QpInfo& q, const uint8_t (&gid)[16] = kGroup6) {
        return mcast(VRNIC_CMD_DETACH_MCAST, q.qpn, gid);
    }
    // Sends len bytes of pattern `seed` from a through `via` to `qpn`;
    // returns a's completions.
    std::vector<vrnic_cqe> send_to(uint32_t via, uint32_t len, uint8_t seed,
                                   uint32_t qpn = kMcastQpn) {
        MrInfo src = buffer(len, seed);
        drv.post_send(a, ud_send(via, qpn, kQkey, {sge(src, 0, len)}));
        drv.run();
        return drv.poll_cq(a_cq);
    }
    // A receive of 4 KiB on q; its GPA.
    uint64_t post_buffer(QpInfo& q, uint64_t wr_id) {
        uint64_t gpa;
        MrInfo m = buffer(4096, 0, &gpa);
        drv.post_recv(q, wr_id, {sge(m, 0, 4096)});
        return gpa;
    }
    uint32_t destroy(const QpInfo& q) {
        vrnic_cmd_handle h{q.qpn, 0};
        return drv.cmd(VRNIC_CMD_DESTROY_QP, &h, sizeof(h));
    }

    CqInfo cqs[3];
    QpInfo qps[3];
    uint32_t group_ah = 0;
};

TEST(McastGid, MulticastGidsAreFf00AndIpv4ClassD) {
    EXPECT_TRUE(gid_is_mcast(kGroup6));
    EXPECT_TRUE(gid_is_mcast(kGroup4));
    uint8_t g[16];
    memcpy(g, kGroup4, 16);
    g[12] = 224;
    EXPECT_TRUE(gid_is_mcast(g));
    g[12] = 223;
    EXPECT_FALSE(gid_is_mcast(g));
    g[12] = 240;
    EXPECT_FALSE(gid_is_mcast(g));
    EXPECT_FALSE(gid_is_mcast(kV4Gid));
    EXPECT_FALSE(gid_is_mcast(kGid));
    memcpy(g, kGroup4, 16);
    g[10] = 0; // ::e001:0203 is not v4-mapped
    EXPECT_FALSE(gid_is_mcast(g));
}

TEST_F(Mcast, AttachChecksTheQpAndTheGid) {
    EXPECT_EQ(VRNIC_CMD_STATUS_BAD_PARAM, attach(b, kGid));
    EXPECT_EQ(VRNIC_CMD_STATUS_BAD_PARAM, attach(b, kV4Gid));
    EXPECT_EQ(VRNIC_CMD_STATUS_BAD_HANDLE, mcast(VRNIC_CMD_ATTACH_MCAST, b.qpn ^ 1, kGroup6));
    EXPECT_EQ(VRNIC_CMD_STATUS_BAD_HANDLE, mcast(VRNIC_CMD_ATTACH_MCAST, kMcastQpn, kGroup6));
    EXPECT_EQ(VRNIC_CMD_STATUS_BAD_PARAM, mcast(VRNIC_CMD_ATTACH_MCAST, b.qpn, kGroup6, 1));
    QpInfo rc = drv.create_qp(0, pd, b_cq, b_cq);
    EXPECT_EQ(VRNIC_CMD_STATUS_BAD_PARAM, attach(rc));
    QpOpts o;
    o.qp_type = VRNIC_QPT_UC;
    QpInfo uc = drv.create_qp(0, pd, b_cq, b_cq, o);
    EXPECT_EQ(VRNIC_CMD_STATUS_BAD_PARAM, attach(uc));
    EXPECT_EQ(0u, attach(b));
    EXPECT_EQ(0u, attach(b)); // already attached: nothing changes
    EXPECT_EQ(0u, attach(b, kGroup4));
    EXPECT_EQ(0u, detach(b));
    EXPECT_EQ(VRNIC_CMD_STATUS_BAD_PARAM, detach(b)); // once attached, once detached
    EXPECT_EQ(VRNIC_CMD_STATUS_BAD_PARAM, detach(qps[0], kGroup4));
    EXPECT_EQ(VRNIC_CMD_STATUS_BAD_PARAM, detach(b, kGid));
    EXPECT_EQ(VRNIC_CMD_STATUS_BAD_HANDLE, mcast(VRNIC_CMD_DETACH_MCAST, b.qpn ^ 1, kGroup4));
    EXPECT_EQ(0u, detach(b, kGroup4));
}

TEST_F(Mcast, RegisterPageAdvertisesTheLimits) {
    EXPECT_EQ(DeviceParams{}.max_mcast_grp, drv.regs()->max_mcast_grp);
    EXPECT_EQ(DeviceParams{}.max_mcast_qp_attach, drv.regs()->max_mcast_qp_attach);
    EXPECT_NE(0u, drv.regs()->max_mcast_grp);
    EXPECT_NE(0u, drv.regs()->max_mcast_qp_attach);
}

TEST_F(Mcast, SendReachesEveryAttachedQp) {
    uint64_t gpa[3];
    for (int i = 0; i < 3; i++) {
        ASSERT_EQ(0u, attach(qps[i]));
        gpa[i] = post_buffer(qps[i], 100 + i);
    }
    uint64_t b_gpa = post_buffer(b, 7); // not attached
    auto sc = send_to(group_ah, 777, 0x3c);
    ASSERT_EQ(1u, sc.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, sc[0].status);
    EXPECT_EQ(777u, sc[0].byte_len);
    for (int i = 0; i < 3; i++) {
        auto rc = drv.poll_cq(cqs[i]);
        ASSERT_EQ(1u, rc.size()) << i;
        EXPECT_EQ(VRNIC_WC_SUCCESS, rc[0].status);
        EXPECT_EQ(100u + i, rc[0].wr_id);
        EXPECT_EQ(qps[i].qpn, rc[0].qpn);
        EXPECT_EQ(a.qpn, rc[0].src_qp);
        EXPECT_EQ(VRNIC_GRH_SIZE + 777u, rc[0].byte_len);
        EXPECT_EQ(VRNIC_CQE_F_GRH, rc[0].flags);
        EXPECT_EQ(VRNIC_NET_IPV6, rc[0].network_hdr_type);
        const uint8_t* g = drv.host(gpa[i], 4096);
        EXPECT_EQ(0, memcmp(g + 8, kGid, 16));     // sgid: the sender's entry 0
        EXPECT_EQ(0, memcmp(g + 24, kGroup6, 16)); // dgid: the group
        EXPECT_TRUE(drv.check_pattern(gpa[i] + VRNIC_GRH_SIZE, 777, 0x3c)) << i;
        EXPECT_EQ(0, g[VRNIC_GRH_SIZE + 777]);
    }
    EXPECT_TRUE(drv.poll_cq(b_cq).empty());
    EXPECT_EQ(0, drv.host(b_gpa)[0]);
    EXPECT_EQ(0u, counter(&vrnic_regs::ud_no_dest_drops));
}

TEST_F(Mcast, Ipv4GroupGetsAnIpv4HeaderToTheGroup) {
    vrnic_cmd_set_gid e = gid_entry(1);
    memcpy(e.gid, kV4Gid, 16);
    ASSERT_EQ(0u, drv.cmd(VRNIC_CMD_SET_GID, &e, sizeof(e)));
    uint32_t ah4 = drv.create_ah(pd, av_to(kGroup4, 1));
    ASSERT_EQ(0u, attach(qps[0], kGroup4));
    ASSERT_EQ(0u, attach(qps[1], kGroup4));
    uint64_t g0 = post_buffer(qps[0], 1), g1 = post_buffer(qps[1], 2);
    ASSERT_EQ(VRNIC_WC_SUCCESS, send_to(ah4, 64, 0x71).at(0).status);
    for (uint64_t gpa : {g0, g1}) {
        const uint8_t* ip = drv.host(gpa + 20, 20);
        EXPECT_EQ(0x45, ip[0]);
        EXPECT_EQ(0, memcmp(ip + 12, kV4Gid + 12, 4));  // saddr
        EXPECT_EQ(0, memcmp(ip + 16, kGroup4 + 12, 4)); // daddr: 239.1.2.3
        EXPECT_TRUE(drv.check_pattern(gpa + VRNIC_GRH_SIZE, 64, 0x71));
    }
    EXPECT_EQ(VRNIC_NET_IPV4, drv.poll_cq(cqs[0]).at(0).network_hdr_type);
    EXPECT_EQ(VRNIC_NET_IPV4, drv.poll_cq(cqs[1]).at(0).network_hdr_type);
}

TEST_F(Mcast, EachMemberDropsOnItsOwn) {
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(0u, attach(qps[i]));
    // qps[0] takes it, qps[1] has no receive, qps[2] another qkey.
    uint64_t g0 = post_buffer(qps[0], 1);
    post_buffer(qps[2], 3);
    vrnic_qp_attr at{};
    at.qkey = kQkey + 1;
    ASSERT_EQ(0u, drv.modify_qp(qps[2], VRNIC_QP_ATTR_QKEY, at));
    ASSERT_EQ(VRNIC_WC_SUCCESS, send_to(group_ah, 200, 0x44).at(0).status);
    EXPECT_EQ(1u, drv.poll_cq(cqs[0]).size());
    EXPECT_TRUE(drv.check_pattern(g0 + VRNIC_GRH_SIZE, 200, 0x44));
    EXPECT_TRUE(drv.poll_cq(cqs[1]).empty());
    EXPECT_TRUE(drv.poll_cq(cqs[2]).empty());
    EXPECT_EQ(1u, counter(&vrnic_regs::ud_no_recv_drops));
    EXPECT_EQ(1u, counter(&vrnic_regs::ud_qkey_drops));
    EXPECT_EQ(VRNIC_QPS_RTS, state(a));
}

TEST_F(Mcast, GroupNeedsTheMulticastQpnAndTheQpnNeedsAGroup) {
    ASSERT_EQ(0u, attach(qps[0]));
    post_buffer(qps[0], 1);
    post_buffer(b, 2);
    // A group's members by their own QPN: not multicast, no one.
    ASSERT_EQ(VRNIC_WC_SUCCESS, send_to(group_ah, 10, 1, qps[0].qpn).at(0).status);
    EXPECT_EQ(1u, counter(&vrnic_regs::ud_no_dest_drops));
    // The multicast QPN to a unicast GID.
    ASSERT_EQ(VRNIC_WC_SUCCESS, send_to(ah, 10, 1).at(0).status);
    EXPECT_EQ(2u, counter(&vrnic_regs::ud_no_dest_drops));
    // A group no one joined.
    uint8_t other[16];
    memcpy(other, kGroup6, 16);
    other[15] ^= 1;
    ASSERT_EQ(VRNIC_WC_SUCCESS, send_to(drv.create_ah(pd, av_to(other, 0)), 10, 1).at(0).status);
    EXPECT_EQ(3u, counter(&vrnic_regs::ud_no_dest_drops));
    EXPECT_TRUE(drv.poll_cq(cqs[0]).empty());
    EXPECT_TRUE(drv.poll_cq(b_cq).empty());
}

TEST_F(Mcast, DetachedQpNoLongerReceives) {
    ASSERT_EQ(0u, attach(qps[0]));
    ASSERT_EQ(0u, attach(qps[1]));
    post_buffer(qps[0], 1);
    post_buffer(qps[1], 2);
    ASSERT_EQ(0u, detach(qps[1]));
    ASSERT_EQ(VRNIC_WC_SUCCESS, send_to(group_ah, 10, 1).at(0).status);
    EXPECT_EQ(1u, drv.poll_cq(cqs[0]).size());
    EXPECT_TRUE(drv.poll_cq(cqs[1]).empty());
    ASSERT_EQ(0u, detach(qps[0])); // the group is empty now
    ASSERT_EQ(VRNIC_WC_SUCCESS, send_to(group_ah, 10, 1).at(0).status);
    EXPECT_TRUE(drv.poll_cq(cqs[1]).empty());
    EXPECT_EQ(1u, counter(&vrnic_regs::ud_no_dest_drops));
}

TEST_F(Mcast, QpsPerGroupAreLimited) {
    const uint32_t max = drv.regs()->max_mcast_qp_attach;
    std::vector<QpInfo> q;
    for (uint32_t i = 0; i <= max; i++)
        q.push_back(make_qp(0, pd, b_cq));
    for (uint32_t i = 0; i < max; i++)
        ASSERT_EQ(0u, attach(q[i])) << i;
    EXPECT_EQ(VRNIC_CMD_STATUS_NO_RESOURCE, attach(q[max]));
    EXPECT_EQ(0u, attach(q[0])); // a member again: no new entry
    EXPECT_EQ(0u, attach(q[max], kGroup4));
    ASSERT_EQ(0u, detach(q[1]));
    EXPECT_EQ(0u, attach(q[max]));
}

TEST_F(Mcast, GroupsAreLimitedAndAnEmptyGroupIsFreed) {
    const uint32_t max = drv.regs()->max_mcast_grp;
    uint8_t g[16];
    memcpy(g, kGroup6, 16);
    for (uint32_t i = 0; i < max; i++) {
        g[13] = uint8_t(i);
        ASSERT_EQ(0u, attach(b, g)) << i;
    }
    EXPECT_EQ(VRNIC_CMD_STATUS_NO_RESOURCE, attach(b, kGroup4));
    g[13] = 0;
    EXPECT_EQ(0u, attach(qps[0], g)); // an existing group still takes QPs
    ASSERT_EQ(0u, detach(b, g));
    EXPECT_EQ(VRNIC_CMD_STATUS_NO_RESOURCE, attach(b, kGroup4)); // qps[0] holds it
    ASSERT_EQ(0u, detach(qps[0], g));
    EXPECT_EQ(0u, attach(b, kGroup4));
}

TEST_F(Mcast, DestroyDetachesEverywhere) {
    const uint32_t max = drv.regs()->max_mcast_grp;
    uint8_t g[16];
    memcpy(g, kGroup6, 16);
    for (uint32_t i = 0; i < max; i++) {
        g[13] = uint8_t(i);
        ASSERT_EQ(0u, attach(qps[0], g)) << i;
    }
    ASSERT_EQ(0u, attach(qps[1], g));
    ASSERT_EQ(0u, destroy(qps[0]));
    // Only the group qps[1] is in is left: max - 1 new ones fit.
    for (uint32_t i = 0; i < max - 1; i++) {
        g[13] = uint8_t(i);
        ASSERT_EQ(0u, attach(b, g)) << i;
    }
    EXPECT_EQ(VRNIC_CMD_STATUS_NO_RESOURCE, attach(b, kGroup4));
    post_buffer(qps[1], 1);
    post_buffer(b, 2);
    g[13] = uint8_t(max - 1);
    ASSERT_EQ(VRNIC_WC_SUCCESS, send_to(drv.create_ah(pd, av_to(g, 0)), 10, 1).at(0).status);
    EXPECT_EQ(1u, drv.poll_cq(cqs[1]).size());
    EXPECT_TRUE(drv.poll_cq(b_cq).empty());
}

// As in verbs, attachments belong to the QP until it detaches or is
// destroyed: a QP in RESET receives nothing, and again once it is back.
TEST_F(Mcast, ResetKeepsTheAttachments) {
    ASSERT_EQ(0u, attach(qps[0]));
    vrnic_cmd_modify_qp m = modify_to(qps[0].qpn, VRNIC_QPS_RESET, Path{});
    ASSERT_EQ(0u, drv.cmd(VRNIC_CMD_MODIFY_QP, &m, sizeof(m)));
    ASSERT_EQ(VRNIC_WC_SUCCESS, send_to(group_ah, 10, 1).at(0).status);
    EXPECT_EQ(1u, counter(&vrnic_regs::ud_no_dest_drops));
    drv.activate(qps[0], Path{.qp_type = VRNIC_QPT_UD, .qkey = kQkey});
    const uint64_t gpa = post_buffer(qps[0], 1);
    ASSERT_EQ(VRNIC_WC_SUCCESS, send_to(group_ah, 10, 2).at(0).status);
    ASSERT_EQ(1u, drv.poll_cq(cqs[0]).size());
    EXPECT_TRUE(drv.check_pattern(gpa + VRNIC_GRH_SIZE, 10, 2));
    EXPECT_EQ(0u, detach(qps[0]));
}

// Every copy counts against the pass budget (14.5), not the datagram once.
TEST_F(Mcast, EveryCopyIsChargedToThePass) {
    for (int i = 0; i < 3; i++) {
        ASSERT_EQ(0u, attach(qps[i]));
        post_buffer(qps[i], i);
    }
    MrInfo src = buffer(4000, 9);
    drv.post_send(a, ud_send(group_ah, kMcastQpn, kQkey, {sge(src, 0, 4000)}));
    drv.dev().poll_once();
    EXPECT_EQ(3u * 4000, drv.dev().state().pass.used());
    for (int i = 0; i < 3; i++)
        EXPECT_EQ(1u, drv.poll_cq(cqs[i]).size()) << i;
}

TEST_F(Mcast, DeviceResetForgetsTheGroups) {
    ASSERT_EQ(0u, attach(qps[0]));
    drv.bring_up(); // resets the device first
    pd = drv.create_pd(0);
    CqInfo cq = drv.create_cq(0, 8);
    QpInfo q = make_qp(0, pd, cq);
    EXPECT_EQ(VRNIC_CMD_STATUS_BAD_PARAM, detach(q));
    EXPECT_EQ(0u, attach(q));
}

} // namespace
} // namespace vrnic::test
