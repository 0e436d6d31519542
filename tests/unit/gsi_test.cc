// The GSI QP (device-interface.md 14.8, since 1.4): QPN 1, the kernel's
// only, one at a time, with the GSI qkey; privileged qkeys; kernel UD WQEs
// that carry their address vector.
#include "ud_fixture.h"

namespace vrnic::test {
namespace {

class Gsi : public UdPair {
  protected:
    uint32_t try_create(uint32_t uctx, uint32_t qp_pd, const CqInfo& cq, QpInfo* q,
                        uint8_t type = VRNIC_QPT_GSI) {
        QpOpts o;
        o.qp_type = type;
        const uint64_t sq = drv.alloc(uint64_t(1) << (o.sq_log + o.sq_shift));
        const uint64_t rq = drv.alloc(uint64_t(1) << (o.rq_log + o.rq_shift));
        return drv.GuestDriver::create_qp(uctx, qp_pd, cq, cq, o, sq, rq, q);
    }
    QpInfo gsi() {
        QpInfo g;
        EXPECT_EQ(0u, try_create(0, pd, b_cq, &g));
        drv.activate(g, Path{.qp_type = VRNIC_QPT_GSI, .qkey = VRNIC_GSI_QKEY});
        return g;
    }
    static SendWr av_send(uint32_t remote_qpn, uint32_t qkey, std::vector<vrnic_sge> sge) {
        SendWr w = ud_send(0, remote_qpn, qkey, std::move(sge));
        w.with_av = true;
        w.av = av_to(kGid, 0);
        return w;
    }
    uint32_t destroy(const QpInfo& q) {
        vrnic_cmd_handle c{q.qpn, 0};
        return drv.cmd(VRNIC_CMD_DESTROY_QP, &c, sizeof(c));
    }
    uint32_t modify_qkey(const QpInfo& q, uint32_t qkey) {
        vrnic_qp_attr at{};
        at.qkey = qkey;
        return drv.GuestDriver::modify_qp(q.qpn, VRNIC_QP_ATTR_QKEY, at);
    }
};

TEST_F(Gsi, IsQpn1AndThereIsOnlyOne) {
    QpInfo g = gsi();
    EXPECT_EQ(uint32_t(VRNIC_QPN_GSI), g.qpn);
    QpInfo again;
    EXPECT_EQ(uint32_t(VRNIC_CMD_STATUS_BUSY), try_create(0, pd, b_cq, &again));
    EXPECT_EQ(VRNIC_GSI_QKEY, drv.query_qp(g).qkey);
    EXPECT_EQ(0u, destroy(g));
    QpInfo next;
    EXPECT_EQ(0u, try_create(0, pd, b_cq, &next));
    EXPECT_EQ(uint32_t(VRNIC_QPN_GSI), next.qpn);
}

TEST_F(Gsi, UserContextCannotCreateIt) {
    const uint32_t u = drv.alloc_uctx();
    const uint32_t upd = drv.create_pd(u);
    CqInfo ucq = drv.create_cq(u, 6);
    QpInfo q;
    EXPECT_EQ(uint32_t(VRNIC_CMD_STATUS_BAD_PARAM), try_create(u, upd, ucq, &q));
}

TEST_F(Gsi, NoOtherQpGetsQpn1) {
    gsi();
    for (int i = 0; i < 300; i++) {
        QpInfo q;
        ASSERT_EQ(0u, try_create(0, pd, a_cq, &q, VRNIC_QPT_UD));
        EXPECT_GE(q.qpn, uint32_t(VRNIC_QPN_MIN));
        ASSERT_EQ(0u, destroy(q));
    }
}

TEST_F(Gsi, KeepsTheGsiQkey) {
    QpInfo g = gsi();
    EXPECT_EQ(uint32_t(VRNIC_CMD_STATUS_BAD_PARAM), modify_qkey(g, kQkey));
    EXPECT_EQ(0u, modify_qkey(g, VRNIC_GSI_QKEY));
    EXPECT_EQ(VRNIC_GSI_QKEY, drv.query_qp(g).qkey);
}

TEST_F(Gsi, PrivilegedQkeyIsTheKernels) {
    const uint32_t u = drv.alloc_uctx();
    const uint32_t upd = drv.create_pd(u);
    CqInfo ucq = drv.create_cq(u, 6);
    QpInfo uq = make_qp(u, upd, ucq);
    EXPECT_EQ(uint32_t(VRNIC_CMD_STATUS_BAD_PARAM), modify_qkey(uq, 0x80000001));
    EXPECT_EQ(0u, modify_qkey(a, 0x80000001));
}

// The MAD layer's loopback: QP 1 sends with the "QP's own qkey" bit, so
// the GSI qkey, to QP 1 of the port's GID.
TEST_F(Gsi, ReachedThroughQpn1WithTheGrh) {
    QpInfo g = gsi();
    uint64_t dst_gpa;
    MrInfo dst = buffer(4096, 0, &dst_gpa);
    drv.post_recv(g, 7, {sge(dst, 0, 4096)});
    MrInfo src = buffer(256, 0x3c);
    drv.post_send(g, av_send(VRNIC_QPN_GSI, VRNIC_QKEY_USE_QP, {sge(src, 0, 256)}));
    drv.run();
    auto c = drv.poll_cq(b_cq);
    ASSERT_EQ(2u, c.size());
    const vrnic_cqe& sc = c[0].opcode == VRNIC_CQE_OP_SEND ? c[0] : c[1];
    const vrnic_cqe& rc = c[0].opcode == VRNIC_CQE_OP_SEND ? c[1] : c[0];
    EXPECT_EQ(VRNIC_WC_SUCCESS, sc.status);
    EXPECT_EQ(VRNIC_WC_SUCCESS, rc.status);
    EXPECT_EQ(VRNIC_CQE_OP_RECV, rc.opcode);
    EXPECT_EQ(7u, rc.wr_id);
    EXPECT_EQ(uint32_t(VRNIC_QPN_GSI), rc.qpn);
    EXPECT_EQ(uint32_t(VRNIC_QPN_GSI), rc.src_qp);
    EXPECT_EQ(VRNIC_GRH_SIZE + 256u, rc.byte_len);
    EXPECT_EQ(VRNIC_CQE_F_GRH, rc.flags);
    const uint8_t* grh = drv.host(dst_gpa, 4096);
    EXPECT_EQ(0, memcmp(grh + 24, kGid, 16));
    EXPECT_TRUE(drv.check_pattern(dst_gpa + VRNIC_GRH_SIZE, 256, 0x3c));
}

// Another kernel QP's datagram with its own qkey, or with the GSI qkey in
// the WQE (which has the high bit, so it means the sender's own qkey), is
// dropped: only a QP holding the GSI qkey gets a datagram into QP 1.
TEST_F(Gsi, OnlyTheGsiQkeyGetsIn) {
    QpInfo g = gsi();
    MrInfo dst = buffer(4096);
    drv.post_recv(g, 7, {sge(dst, 0, 4096)});
    MrInfo src = buffer(64, 1);
    uint32_t drops = 0;
    for (uint32_t qkey : {VRNIC_GSI_QKEY, kQkey}) {
        drv.post_send(a, av_send(VRNIC_QPN_GSI, qkey, {sge(src, 0, 64)}));
        drv.run();
        EXPECT_EQ(VRNIC_WC_SUCCESS, drv.poll_cq(a_cq).at(0).status) << qkey;
        EXPECT_TRUE(drv.poll_cq(b_cq).empty()) << qkey;
        EXPECT_EQ(++drops, counter(&vrnic_regs::ud_qkey_drops)) << qkey;
    }
}

TEST_F(Gsi, UserQpCannotCarryAnAv) {
    const uint32_t u = drv.alloc_uctx();
    const uint32_t upd = drv.create_pd(u);
    CqInfo ucq = drv.create_cq(u, 6);
    QpInfo uq = make_qp(u, upd, ucq);
    const uint64_t gpa = drv.alloc(4096);
    MrInfo src = drv.reg_mr(upd, gpa, 4096, VRNIC_ACCESS_LOCAL_WRITE);
    drv.post_send(uq, av_send(b.qpn, kQkey, {sge(src, 0, 64)}));
    drv.run();
    auto sc = drv.poll_cq(ucq);
    ASSERT_EQ(1u, sc.size());
    EXPECT_EQ(VRNIC_WC_LOC_QP_OP_ERR, sc[0].status);
    EXPECT_EQ(kVeBadAh, sc[0].vendor_err);
}

TEST_F(Gsi, WqeAvIsCheckedLikeAnAhs) {
    MrInfo src = buffer(64, 1);
    SendWr w = av_send(b.qpn, kQkey, {sge(src, 0, 64)});
    w.av.sgid_index = 200; // no such GID entry
    drv.post_send(a, w);
    drv.run();
    auto sc = drv.poll_cq(a_cq);
    ASSERT_EQ(1u, sc.size());
    EXPECT_EQ(VRNIC_WC_LOC_QP_OP_ERR, sc[0].status);
    EXPECT_EQ(kVeBadAh, sc[0].vendor_err);
}

TEST_F(Gsi, WqeAvAndSgesMustFitTheSlot) {
    QpOpts o;
    o.qp_type = VRNIC_QPT_UD;
    o.sq_shift = 7; // 128 bytes: room for 3 SGEs after the AV, 4 without
    o.max_send_sge = 4;
    o.max_inline = 0;
    QpInfo q = drv.create_qp(0, pd, a_cq, a_cq, o);
    drv.activate(q, Path{.qp_type = VRNIC_QPT_UD, .qkey = kQkey});
    MrInfo src = buffer(64, 1);
    drv.post_send(q, av_send(b.qpn, kQkey,
                             {sge(src, 0, 8), sge(src, 8, 8), sge(src, 16, 8), sge(src, 24, 8)}));
    drv.run();
    auto sc = drv.poll_cq(a_cq);
    ASSERT_EQ(1u, sc.size());
    EXPECT_EQ(VRNIC_WC_LOC_QP_OP_ERR, sc[0].status);
    EXPECT_EQ(kVeBadAh, sc[0].vendor_err);
}

TEST_F(Gsi, WqeAvWithThreeSgesArrives) {
    uint64_t dst_gpa;
    MrInfo dst = buffer(4096, 0, &dst_gpa);
    drv.post_recv(b, 3, {sge(dst, 0, 4096)});
    MrInfo src = buffer(64, 0x77);
    drv.post_send(a, av_send(b.qpn, kQkey, {sge(src, 0, 8), sge(src, 8, 8), sge(src, 16, 8)}));
    drv.run();
    EXPECT_EQ(VRNIC_WC_SUCCESS, drv.poll_cq(a_cq).at(0).status);
    auto rc = drv.poll_cq(b_cq);
    ASSERT_EQ(1u, rc.size());
    EXPECT_EQ(VRNIC_GRH_SIZE + 24u, rc[0].byte_len);
    EXPECT_TRUE(drv.check_pattern(dst_gpa + VRNIC_GRH_SIZE, 24, 0x77));
}

TEST_F(Gsi, AvFlagOnAnRcQpIsBadFlags) {
    QpInfo rc = drv.create_qp(0, pd, a_cq, a_cq);
    drv.connect(rc, rc.qpn);
    MrInfo src = buffer(64, 1);
    SendWr w;
    w.sge = {sge(src, 0, 8)};
    w.with_av = true;
    w.av = av_to(kGid, 0);
    drv.post_send(rc, w);
    drv.run();
    auto sc = drv.poll_cq(a_cq);
    ASSERT_EQ(1u, sc.size());
    EXPECT_EQ(VRNIC_WC_LOC_QP_OP_ERR, sc[0].status);
    EXPECT_EQ(kVeBadFlags, sc[0].vendor_err);
}

} // namespace
} // namespace vrnic::test
