// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Capabilities (device-interface.md 4.2): the register page advertises the
// model's DeviceParams, and the model enforces DeviceParams. A guest that
// rewrites the capability words in BAR2 lifts none of its limits.
#include "fake_driver.h"

#include "completion.h"

namespace vrnic::test {
namespace {

DeviceParams narrow_params() {
    DeviceParams p;
    p.max_rd_atom = 2;
    p.max_mtu = VRNIC_MTU_1024;
    p.atomic_cap = VRNIC_ATOMIC_NONE;
    return p;
}

// Every capability word a guest might raise, raised.
void scribble(vrnic_regs* r) {
    r->max_qp_rd_atom = 255;
    r->max_qp_init_rd_atom = 255;
    r->max_mtu = VRNIC_MTU_4096;
    r->active_mtu = VRNIC_MTU_4096;
    r->atomic_cap = VRNIC_ATOMIC_GLOB;
    r->max_msg_sz = ~0u;
    r->max_sge = 255;
    r->max_inline = ~0u;
    r->max_qp_wr = ~0u;
    r->max_cqe = ~0u;
    r->max_mr_size = ~0ull;
    r->page_size_cap = ~0ull;
    r->gid_tbl_len = 255;
}

TEST(Capabilities, RegisterPageAdvertisesTheParams) {
    FakeDriver drv(narrow_params());
    drv.bring_up();
    const vrnic_regs* r = drv.regs();
    EXPECT_EQ(2u, r->max_qp_rd_atom);
    EXPECT_EQ(2u, r->max_qp_init_rd_atom);
    EXPECT_EQ(uint32_t(VRNIC_MTU_1024), r->max_mtu);
    EXPECT_EQ(uint32_t(VRNIC_MTU_1024), r->active_mtu);
    EXPECT_EQ(uint32_t(VRNIC_ATOMIC_NONE), r->atomic_cap);
    vrnic_cmd_query_port q{};
    q.port_num = 1;
    vrnic_cmd resp;
    ASSERT_EQ(0u, drv.cmd(VRNIC_CMD_QUERY_PORT, &q, sizeof(q), &resp));
    EXPECT_EQ(VRNIC_MTU_1024, resp.query_port_resp.max_mtu);
}

TEST(Capabilities, ScribbledLimitsDoNotWidenModifyQp) {
    FakeDriver drv(narrow_params());
    drv.bring_up();
    scribble(drv.regs());
    uint32_t pd = drv.create_pd(0);
    CqInfo cq = drv.create_cq(0);
    QpInfo q = drv.create_qp(0, pd, cq, cq);
    vrnic_qp_attr a{};
    a.qp_state = VRNIC_QPS_INIT;
    a.port_num = 1;
    ASSERT_EQ(0u, drv.modify_qp(q,
                                VRNIC_QP_ATTR_STATE | VRNIC_QP_ATTR_PKEY_INDEX |
                                    VRNIC_QP_ATTR_PORT | VRNIC_QP_ATTR_ACCESS_FLAGS,
                                a));
    auto rtr = [&](uint8_t mtu, uint8_t dest_rd_atomic) {
        vrnic_qp_attr r{};
        r.qp_state = VRNIC_QPS_RTR;
        r.path_mtu = mtu;
        r.dest_qpn = q.qpn;
        r.max_dest_rd_atomic = dest_rd_atomic;
        r.min_rnr_timer = 1;
        memcpy(r.av.dgid, kGid, 16);
        r.av.vlan_id = VRNIC_VLAN_NONE;
        r.av.hop_limit = 64;
        return drv.modify_qp(q,
                             VRNIC_QP_ATTR_STATE | VRNIC_QP_ATTR_AV | VRNIC_QP_ATTR_PATH_MTU |
                                 VRNIC_QP_ATTR_DEST_QPN | VRNIC_QP_ATTR_RQ_PSN |
                                 VRNIC_QP_ATTR_MAX_DEST_RD_ATOMIC | VRNIC_QP_ATTR_MIN_RNR_TIMER,
                             r);
    };
    EXPECT_EQ(uint32_t(VRNIC_CMD_STATUS_BAD_PARAM), rtr(VRNIC_MTU_4096, 2)) << "path_mtu";
    EXPECT_EQ(uint32_t(VRNIC_CMD_STATUS_BAD_PARAM), rtr(VRNIC_MTU_1024, 3)) << "dest_rd_atomic";
    ASSERT_EQ(0u, rtr(VRNIC_MTU_1024, 2));
    auto rts = [&](uint8_t rd_atomic) {
        vrnic_qp_attr r{};
        r.qp_state = VRNIC_QPS_RTS;
        r.timeout = 14;
        r.retry_cnt = 7;
        r.rnr_retry = 7;
        r.max_rd_atomic = rd_atomic;
        return drv.modify_qp(q,
                             VRNIC_QP_ATTR_STATE | VRNIC_QP_ATTR_TIMEOUT | VRNIC_QP_ATTR_RETRY_CNT |
                                 VRNIC_QP_ATTR_RNR_RETRY | VRNIC_QP_ATTR_SQ_PSN |
                                 VRNIC_QP_ATTR_MAX_QP_RD_ATOMIC,
                             r);
    };
    EXPECT_EQ(uint32_t(VRNIC_CMD_STATUS_BAD_PARAM), rts(3)) << "rd_atomic";
    EXPECT_EQ(0u, rts(2));
}

TEST(Capabilities, ScribbledAtomicCapDoesNotEnableAtomics) {
    DeviceParams p;
    p.atomic_cap = VRNIC_ATOMIC_NONE;
    FakeDriver drv(p);
    drv.bring_up();
    scribble(drv.regs());
    uint32_t pd = drv.create_pd(0);
    CqInfo cq = drv.create_cq(0);
    uint64_t g = drv.alloc(4096);
    MrInfo mr = drv.reg_mr(pd, g, 4096, VRNIC_ACCESS_ALL);
    for (uint8_t op : {VRNIC_WR_ATOMIC_FETCH_AND_ADD, VRNIC_WR_ATOMIC_CMP_AND_SWP}) {
        QpInfo q = drv.create_qp(0, pd, cq, cq); // loopback; the error ends it
        drv.connect(q, q.qpn);
        SendWr w;
        w.opcode = op;
        w.remote_addr = mr.iova;
        w.rkey = mr.rkey;
        w.compare_add = 0; // CMP_AND_SWP would succeed: 0 == 0
        w.swap = 0x1111;
        w.sge = {{mr.iova + 64, 8, mr.lkey}};
        *reinterpret_cast<uint64_t*>(drv.host(g)) = 0;
        drv.post_send(q, w);
        drv.run();
        auto c = drv.poll_cq(cq);
        ASSERT_EQ(1u, c.size());
        EXPECT_EQ(VRNIC_WC_LOC_QP_OP_ERR, c[0].status);
        EXPECT_EQ(kVeBadAtomicSge, c[0].vendor_err);
        EXPECT_EQ(0u, *reinterpret_cast<uint64_t*>(drv.host(g)));
    }
}

} // namespace
} // namespace vrnic::test
