// The QP state machine (device-interface.md section 15): the pure tables of
// RC, UC and UD, and MODIFY_QP/QUERY_QP through the command queue.
#include "fake_driver.h"
#include "qp_state_machine.h"

namespace vrnic::test {
namespace {

constexpr uint32_t S = VRNIC_QP_ATTR_STATE;
constexpr uint32_t kInitReq =
    VRNIC_QP_ATTR_PKEY_INDEX | VRNIC_QP_ATTR_PORT | VRNIC_QP_ATTR_ACCESS_FLAGS;
constexpr uint32_t kRtrReq = VRNIC_QP_ATTR_AV | VRNIC_QP_ATTR_PATH_MTU | VRNIC_QP_ATTR_DEST_QPN |
                             VRNIC_QP_ATTR_RQ_PSN | VRNIC_QP_ATTR_MAX_DEST_RD_ATOMIC |
                             VRNIC_QP_ATTR_MIN_RNR_TIMER;
constexpr uint32_t kRtsReq = VRNIC_QP_ATTR_TIMEOUT | VRNIC_QP_ATTR_RETRY_CNT |
                             VRNIC_QP_ATTR_RNR_RETRY | VRNIC_QP_ATTR_SQ_PSN |
                             VRNIC_QP_ATTR_MAX_QP_RD_ATOMIC;

vrnic_qp_attr to(vrnic_qp_state s) {
    vrnic_qp_attr a{};
    a.qp_state = s;
    return a;
}

uint32_t check(vrnic_qp_state from, vrnic_qp_state target, uint32_t mask) {
    return check_qp_transition(QpType::rc, from, mask | S, to(target)).status;
}

TEST(QpStateTable, LegalTransitionsWithRequiredAttributes) {
    EXPECT_EQ(0u, check(VRNIC_QPS_RESET, VRNIC_QPS_RESET, 0));
    EXPECT_EQ(0u, check(VRNIC_QPS_RESET, VRNIC_QPS_INIT, kInitReq));
    EXPECT_EQ(0u, check(VRNIC_QPS_INIT, VRNIC_QPS_INIT, 0));
    EXPECT_EQ(0u, check(VRNIC_QPS_INIT, VRNIC_QPS_RTR, kRtrReq | VRNIC_QP_ATTR_ACCESS_FLAGS));
    EXPECT_EQ(0u, check(VRNIC_QPS_RTR, VRNIC_QPS_RTS, kRtsReq | VRNIC_QP_ATTR_MIN_RNR_TIMER));
    EXPECT_EQ(0u, check(VRNIC_QPS_RTS, VRNIC_QPS_RTS, VRNIC_QP_ATTR_ACCESS_FLAGS));
    EXPECT_EQ(0u, check(VRNIC_QPS_RTS, VRNIC_QPS_SQD, VRNIC_QP_ATTR_EN_SQD_ASYNC_NOTIFY));
    EXPECT_EQ(0u, check(VRNIC_QPS_SQD, VRNIC_QPS_RTS, 0));
    EXPECT_EQ(0u, check(VRNIC_QPS_SQD, VRNIC_QPS_SQD, VRNIC_QP_ATTR_TIMEOUT));
    for (auto s : {VRNIC_QPS_INIT, VRNIC_QPS_RTR, VRNIC_QPS_RTS, VRNIC_QPS_SQD, VRNIC_QPS_SQE,
                   VRNIC_QPS_ERR}) {
        EXPECT_EQ(0u, check(s, VRNIC_QPS_RESET, 0)) << s;
        EXPECT_EQ(0u, check(s, VRNIC_QPS_ERR, 0)) << s;
    }
    // Without STATE the target is the current state.
    auto t = check_qp_transition(QpType::rc, VRNIC_QPS_RTS, VRNIC_QP_ATTR_MIN_RNR_TIMER,
                                 vrnic_qp_attr{});
    EXPECT_EQ(0u, t.status);
    EXPECT_EQ(VRNIC_QPS_RTS, t.target);
}

TEST(QpStateTable, IllegalTransitionsAreBadState) {
    constexpr uint32_t BAD = VRNIC_CMD_STATUS_BAD_STATE;
    EXPECT_EQ(BAD, check(VRNIC_QPS_RESET, VRNIC_QPS_ERR, 0));
    EXPECT_EQ(BAD, check(VRNIC_QPS_RESET, VRNIC_QPS_RTR, kRtrReq));
    EXPECT_EQ(BAD, check(VRNIC_QPS_RESET, VRNIC_QPS_RTS, kRtsReq));
    EXPECT_EQ(BAD, check(VRNIC_QPS_INIT, VRNIC_QPS_RTS, kRtsReq));
    EXPECT_EQ(BAD, check(VRNIC_QPS_RTR, VRNIC_QPS_INIT, 0));
    EXPECT_EQ(BAD, check(VRNIC_QPS_RTR, VRNIC_QPS_SQD, 0));
    EXPECT_EQ(BAD, check(VRNIC_QPS_RTS, VRNIC_QPS_RTR, 0));
    EXPECT_EQ(BAD, check(VRNIC_QPS_ERR, VRNIC_QPS_RTS, 0));
    EXPECT_EQ(BAD, check(VRNIC_QPS_SQE, VRNIC_QPS_RTS, 0)); // UC/UD only
    EXPECT_EQ(BAD, check(VRNIC_QPS_ERR, VRNIC_QPS_INIT, kInitReq));
    // CUR_STATE must match.
    vrnic_qp_attr a = to(VRNIC_QPS_RTS);
    a.cur_qp_state = VRNIC_QPS_RTR;
    EXPECT_EQ(
        BAD, check_qp_transition(QpType::rc, VRNIC_QPS_RTS, S | VRNIC_QP_ATTR_CUR_STATE, a).status);
}

TEST(QpStateTable, AttributeMaskErrors) {
    constexpr uint32_t P = VRNIC_CMD_STATUS_BAD_PARAM, U = VRNIC_CMD_STATUS_UNSUPPORTED;
    // Missing any one required attribute.
    for (uint32_t bit = 1; bit < (1u << 21); bit <<= 1) {
        if (kRtrReq & bit) {
            EXPECT_EQ(P, check(VRNIC_QPS_INIT, VRNIC_QPS_RTR, kRtrReq & ~bit)) << bit;
        }
        if (kRtsReq & bit) {
            EXPECT_EQ(P, check(VRNIC_QPS_RTR, VRNIC_QPS_RTS, kRtsReq & ~bit)) << bit;
        }
        if (kInitReq & bit) {
            EXPECT_EQ(P, check(VRNIC_QPS_RESET, VRNIC_QPS_INIT, kInitReq & ~bit)) << bit;
        }
    }
    EXPECT_EQ(P, check(VRNIC_QPS_RESET, VRNIC_QPS_INIT, kInitReq | VRNIC_QP_ATTR_QKEY));
    EXPECT_EQ(P, check(VRNIC_QPS_RTS, VRNIC_QPS_RTS, VRNIC_QP_ATTR_DEST_QPN));
    EXPECT_EQ(P, check(VRNIC_QPS_RTS, VRNIC_QPS_ERR, VRNIC_QP_ATTR_TIMEOUT));
    EXPECT_EQ(P, check(VRNIC_QPS_RESET, VRNIC_QPS_INIT, kInitReq | (1u << 21)));
    vrnic_qp_attr cur = to(VRNIC_QPS_INIT);
    cur.cur_qp_state = VRNIC_QPS_INIT; // matches, but INIT->INIT does not allow it
    EXPECT_EQ(
        P,
        check_qp_transition(QpType::rc, VRNIC_QPS_INIT, S | VRNIC_QP_ATTR_CUR_STATE, cur).status);
    EXPECT_EQ(U, check(VRNIC_QPS_INIT, VRNIC_QPS_RTR, kRtrReq | VRNIC_QP_ATTR_ALT_PATH));
    EXPECT_EQ(U, check(VRNIC_QPS_RTR, VRNIC_QPS_RTS, kRtsReq | VRNIC_QP_ATTR_PATH_MIG_STATE));
    EXPECT_EQ(U, check(VRNIC_QPS_RTS, VRNIC_QPS_RTS, VRNIC_QP_ATTR_CAP));
    vrnic_qp_attr bad = to(static_cast<vrnic_qp_state>(7));
    EXPECT_EQ(P, check_qp_transition(QpType::rc, VRNIC_QPS_RESET, S, bad).status);
}

uint32_t check_type(QpType t, vrnic_qp_state from, vrnic_qp_state target, uint32_t mask) {
    return check_qp_transition(t, from, mask | S, to(target)).status;
}

TEST(QpStateTable, UdTakesQkeyAndTheMtuButNoPath) {
    constexpr uint32_t P = VRNIC_CMD_STATUS_BAD_PARAM, BAD = VRNIC_CMD_STATUS_BAD_STATE;
    constexpr QpType T = QpType::ud;
    constexpr uint32_t kUdInit = VRNIC_QP_ATTR_PKEY_INDEX | VRNIC_QP_ATTR_PORT | VRNIC_QP_ATTR_QKEY;
    constexpr uint32_t Q = VRNIC_QP_ATTR_QKEY, C = VRNIC_QP_ATTR_CUR_STATE;
    EXPECT_EQ(0u, check_type(T, VRNIC_QPS_RESET, VRNIC_QPS_INIT, kUdInit));
    for (uint32_t bit = 1; bit < (1u << 21); bit <<= 1)
        if (kUdInit & bit) {
            EXPECT_EQ(P, check_type(T, VRNIC_QPS_RESET, VRNIC_QPS_INIT, kUdInit & ~bit)) << bit;
        }
    EXPECT_EQ(P, check_type(T, VRNIC_QPS_RESET, VRNIC_QPS_INIT, kInitReq)); // access flags
    EXPECT_EQ(0u, check_type(T, VRNIC_QPS_INIT, VRNIC_QPS_INIT, kUdInit));
    EXPECT_EQ(0u, check_type(T, VRNIC_QPS_INIT, VRNIC_QPS_RTR, 0));
    EXPECT_EQ(0u, check_type(T, VRNIC_QPS_INIT, VRNIC_QPS_RTR, Q | VRNIC_QP_ATTR_PKEY_INDEX));
    // The driver's port MTU, not a path: the datagram limit.
    EXPECT_EQ(0u, check_type(T, VRNIC_QPS_INIT, VRNIC_QPS_RTR, VRNIC_QP_ATTR_PATH_MTU));
    for (uint32_t path : {uint32_t(VRNIC_QP_ATTR_AV), uint32_t(VRNIC_QP_ATTR_DEST_QPN),
                          uint32_t(VRNIC_QP_ATTR_RQ_PSN)})
        EXPECT_EQ(P, check_type(T, VRNIC_QPS_INIT, VRNIC_QPS_RTR, path)) << path;
    EXPECT_EQ(P, check_type(T, VRNIC_QPS_RTR, VRNIC_QPS_RTS, 0));
    EXPECT_EQ(0u, check_type(T, VRNIC_QPS_RTR, VRNIC_QPS_RTS, VRNIC_QP_ATTR_SQ_PSN | Q));
    EXPECT_EQ(P, check_type(T, VRNIC_QPS_RTR, VRNIC_QPS_RTS,
                            VRNIC_QP_ATTR_SQ_PSN | VRNIC_QP_ATTR_TIMEOUT));
    EXPECT_EQ(0u, check_type(T, VRNIC_QPS_RTS, VRNIC_QPS_RTS, Q));
    EXPECT_EQ(P, check_type(T, VRNIC_QPS_RTS, VRNIC_QPS_RTS, VRNIC_QP_ATTR_ACCESS_FLAGS));
    EXPECT_EQ(0u, check_type(T, VRNIC_QPS_RTS, VRNIC_QPS_SQD, VRNIC_QP_ATTR_EN_SQD_ASYNC_NOTIFY));
    EXPECT_EQ(0u, check_type(T, VRNIC_QPS_SQD, VRNIC_QPS_RTS, Q));
    EXPECT_EQ(0u, check_type(T, VRNIC_QPS_SQD, VRNIC_QPS_SQD, Q | VRNIC_QP_ATTR_PKEY_INDEX));
    EXPECT_EQ(P, check_type(T, VRNIC_QPS_SQD, VRNIC_QPS_SQD, VRNIC_QP_ATTR_AV));
    EXPECT_EQ(0u, check_type(T, VRNIC_QPS_SQE, VRNIC_QPS_RTS, Q));
    vrnic_qp_attr a = to(VRNIC_QPS_RTS);
    a.cur_qp_state = VRNIC_QPS_SQE;
    EXPECT_EQ(0u, check_qp_transition(T, VRNIC_QPS_SQE, S | C | Q, a).status);
    EXPECT_EQ(BAD, check_type(T, VRNIC_QPS_RESET, VRNIC_QPS_RTR, 0));
    EXPECT_EQ(BAD, check_type(T, VRNIC_QPS_INIT, VRNIC_QPS_RTS, VRNIC_QP_ATTR_SQ_PSN));
    EXPECT_EQ(0u, check_type(T, VRNIC_QPS_RTS, VRNIC_QPS_ERR, 0));
    EXPECT_EQ(0u, check_type(T, VRNIC_QPS_ERR, VRNIC_QPS_RESET, 0));
}

TEST(QpStateTable, UcTakesAPathWithoutTheRcOnlyAttributes) {
    constexpr uint32_t P = VRNIC_CMD_STATUS_BAD_PARAM, U = VRNIC_CMD_STATUS_UNSUPPORTED;
    constexpr QpType T = QpType::uc;
    constexpr uint32_t kUcRtr =
        VRNIC_QP_ATTR_AV | VRNIC_QP_ATTR_PATH_MTU | VRNIC_QP_ATTR_DEST_QPN | VRNIC_QP_ATTR_RQ_PSN;
    EXPECT_EQ(0u, check_type(T, VRNIC_QPS_RESET, VRNIC_QPS_INIT, kInitReq));
    EXPECT_EQ(P, check_type(T, VRNIC_QPS_RESET, VRNIC_QPS_INIT, kInitReq | VRNIC_QP_ATTR_QKEY));
    EXPECT_EQ(0u, check_type(T, VRNIC_QPS_INIT, VRNIC_QPS_INIT, VRNIC_QP_ATTR_ACCESS_FLAGS));
    EXPECT_EQ(0u, check_type(T, VRNIC_QPS_INIT, VRNIC_QPS_RTR, kUcRtr));
    for (uint32_t bit = 1; bit < (1u << 21); bit <<= 1)
        if (kUcRtr & bit) {
            EXPECT_EQ(P, check_type(T, VRNIC_QPS_INIT, VRNIC_QPS_RTR, kUcRtr & ~bit)) << bit;
        }
    EXPECT_EQ(0u, check_type(T, VRNIC_QPS_INIT, VRNIC_QPS_RTR,
                             kUcRtr | VRNIC_QP_ATTR_ACCESS_FLAGS | VRNIC_QP_ATTR_PKEY_INDEX));
    EXPECT_EQ(P, check_type(T, VRNIC_QPS_INIT, VRNIC_QPS_RTR, kRtrReq)); // RD atomic, RNR timer
    EXPECT_EQ(U, check_type(T, VRNIC_QPS_INIT, VRNIC_QPS_RTR, kUcRtr | VRNIC_QP_ATTR_ALT_PATH));
    EXPECT_EQ(0u, check_type(T, VRNIC_QPS_RTR, VRNIC_QPS_RTS, VRNIC_QP_ATTR_SQ_PSN));
    EXPECT_EQ(P, check_type(T, VRNIC_QPS_RTR, VRNIC_QPS_RTS, kRtsReq)); // timeout, retries
    EXPECT_EQ(P, check_type(T, VRNIC_QPS_RTR, VRNIC_QPS_RTS,
                            VRNIC_QP_ATTR_SQ_PSN | VRNIC_QP_ATTR_MIN_RNR_TIMER));
    EXPECT_EQ(0u, check_type(T, VRNIC_QPS_RTS, VRNIC_QPS_RTS, VRNIC_QP_ATTR_ACCESS_FLAGS));
    EXPECT_EQ(U, check_type(T, VRNIC_QPS_RTS, VRNIC_QPS_RTS, VRNIC_QP_ATTR_PATH_MIG_STATE));
    EXPECT_EQ(0u, check_type(T, VRNIC_QPS_RTS, VRNIC_QPS_SQD, VRNIC_QP_ATTR_EN_SQD_ASYNC_NOTIFY));
    EXPECT_EQ(0u, check_type(T, VRNIC_QPS_SQD, VRNIC_QPS_RTS, VRNIC_QP_ATTR_ACCESS_FLAGS));
    EXPECT_EQ(0u, check_type(T, VRNIC_QPS_SQD, VRNIC_QPS_SQD, VRNIC_QP_ATTR_AV));
    EXPECT_EQ(P, check_type(T, VRNIC_QPS_SQD, VRNIC_QPS_SQD, VRNIC_QP_ATTR_TIMEOUT));
    EXPECT_EQ(0u, check_type(T, VRNIC_QPS_SQE, VRNIC_QPS_RTS, VRNIC_QP_ATTR_ACCESS_FLAGS));
    EXPECT_EQ(P, check_type(T, VRNIC_QPS_SQE, VRNIC_QPS_RTS, VRNIC_QP_ATTR_AV));
}

TEST(QpStateTable, CreateQpAcceptsUcAndUd) {
    FakeDriver drv;
    drv.bring_up();
    const uint32_t pd = drv.create_pd(0);
    CqInfo cq = drv.create_cq(0, 6);
    for (uint8_t t : {VRNIC_QPT_UC, VRNIC_QPT_UD}) {
        QpOpts o;
        o.qp_type = t;
        QpInfo q = drv.create_qp(0, pd, cq, cq, o);
        drv.activate(q, Path{.qp_type = t, .qkey = 0x42u, .dest_qpn = 77});
        const vrnic_qp_attr a = drv.query_qp(q);
        EXPECT_EQ(VRNIC_QPS_RTS, a.qp_state) << int(t);
        EXPECT_EQ(t == VRNIC_QPT_UD ? 0x42u : 0u, a.qkey) << int(t);
        EXPECT_EQ(t == VRNIC_QPT_UD ? 0u : 77u, a.dest_qpn) << int(t);
    }
}

class QpModify : public ::testing::Test {
  protected:
    void SetUp() override {
        drv.bring_up();
        pd = drv.create_pd(0);
        cq = drv.create_cq(0, 6);
        qp = drv.create_qp(0, pd, cq, cq);
    }
    FakeDriver drv;
    uint32_t pd = 0;
    CqInfo cq;
    QpInfo qp;
};

TEST_F(QpModify, FullBringUpAndQuery) {
    drv.connect(qp, 0x1234, 5, 12, VRNIC_ACCESS_ALL, 0x123, 0x456);
    vrnic_qp_attr a = drv.query_qp(qp);
    EXPECT_EQ(VRNIC_QPS_RTS, a.qp_state);
    EXPECT_EQ(VRNIC_QPS_RTS, a.cur_qp_state);
    EXPECT_EQ(0x1234u, a.dest_qpn);
    EXPECT_EQ(5, a.rnr_retry);
    EXPECT_EQ(12, a.min_rnr_timer);
    EXPECT_EQ(0x123u, a.rq_psn);
    EXPECT_EQ(0x456u, a.sq_psn);
    EXPECT_EQ(VRNIC_MTU_4096, a.path_mtu);
    EXPECT_EQ(0, memcmp(a.av.dgid, kGid, 16));
}

TEST_F(QpModify, ValueRangesAreChecked) {
    drv.connect(qp, 7);
    struct Case {
        const char* what;
        uint32_t mask;
        void (*set)(vrnic_qp_attr&);
    } cases[] = {
        {"access bits", VRNIC_QP_ATTR_ACCESS_FLAGS, [](auto& a) { a.qp_access_flags = 0x100; }},
        {"min_rnr_timer 32", VRNIC_QP_ATTR_MIN_RNR_TIMER, [](auto& a) { a.min_rnr_timer = 32; }},
        {"reserved", VRNIC_QP_ATTR_MIN_RNR_TIMER, [](auto& a) { a.reserved[2] = 1; }},
    };
    for (auto& c : cases) {
        vrnic_qp_attr a{};
        c.set(a);
        EXPECT_EQ(uint32_t(VRNIC_CMD_STATUS_BAD_PARAM), drv.modify_qp(qp, c.mask, a)) << c.what;
    }
    // Ranges checked on the RTR step of a second QP.
    QpInfo q2 = drv.create_qp(0, pd, cq, cq);
    vrnic_qp_attr init{};
    init.qp_state = VRNIC_QPS_INIT;
    init.port_num = 1;
    ASSERT_EQ(0u, drv.modify_qp(q2, S | kInitReq, init));
    auto rtr = [&](void (*set)(vrnic_qp_attr&)) {
        vrnic_qp_attr a{};
        a.qp_state = VRNIC_QPS_RTR;
        a.path_mtu = VRNIC_MTU_1024;
        a.av.vlan_id = VRNIC_VLAN_NONE;
        set(a);
        return drv.modify_qp(q2, S | kRtrReq, a);
    };
    constexpr uint32_t P = VRNIC_CMD_STATUS_BAD_PARAM;
    EXPECT_EQ(P, rtr([](auto& a) { a.path_mtu = 6; }));
    EXPECT_EQ(P, rtr([](auto& a) { a.path_mtu = 0; }));
    EXPECT_EQ(P, rtr([](auto& a) { a.dest_qpn = 1u << 24; }));
    EXPECT_EQ(P, rtr([](auto& a) { a.rq_psn = 1u << 24; }));
    EXPECT_EQ(P, rtr([](auto& a) { a.max_dest_rd_atomic = 17; }));
    EXPECT_EQ(P, rtr([](auto& a) { a.av.sgid_index = 1; })); // no GID there
    EXPECT_EQ(P, rtr([](auto& a) { a.av.sgid_index = 16; }));
    EXPECT_EQ(P, rtr([](auto& a) { a.av.flow_label = 1u << 20; }));
    EXPECT_EQ(P, rtr([](auto& a) { a.av.sl = 16; }));
    EXPECT_EQ(P, rtr([](auto& a) { a.av.vlan_id = 4096; }));
    EXPECT_EQ(0u, rtr([](auto&) {}));
    EXPECT_EQ(VRNIC_QPS_RTR, drv.query_qp(q2).qp_state);
}

TEST_F(QpModify, FailedModifyChangesNothing) {
    vrnic_qp_attr a{};
    a.qp_state = VRNIC_QPS_INIT;
    a.port_num = 1;
    a.qp_access_flags = VRNIC_ACCESS_REMOTE_WRITE;
    EXPECT_EQ(uint32_t(VRNIC_CMD_STATUS_BAD_PARAM),
              drv.modify_qp(qp, S | VRNIC_QP_ATTR_PORT | VRNIC_QP_ATTR_ACCESS_FLAGS, a));
    vrnic_qp_attr q = drv.query_qp(qp);
    EXPECT_EQ(VRNIC_QPS_RESET, q.qp_state);
    EXPECT_EQ(0u, q.qp_access_flags);
}

TEST_F(QpModify, ResetClearsAttributesAndErrIsAlwaysReachable) {
    drv.connect(qp, 9);
    EXPECT_EQ(0u, drv.modify_qp(qp, S, to(VRNIC_QPS_ERR)));
    EXPECT_EQ(VRNIC_QPS_ERR, drv.query_qp(qp).qp_state);
    EXPECT_EQ(0u, drv.modify_qp(qp, S, to(VRNIC_QPS_RESET)));
    vrnic_qp_attr q = drv.query_qp(qp);
    EXPECT_EQ(VRNIC_QPS_RESET, q.qp_state);
    EXPECT_EQ(0u, q.dest_qpn);
    EXPECT_EQ(0, q.rnr_retry);
    drv.connect(qp, 10); // and it can be connected again
    EXPECT_EQ(10u, drv.query_qp(qp).dest_qpn);
}

TEST_F(QpModify, SqdPostsSqDrained) {
    drv.connect(qp, qp.qpn);
    drv.take_async_events();
    vrnic_qp_attr a = to(VRNIC_QPS_SQD);
    a.en_sqd_async_notify = 1;
    ASSERT_EQ(0u, drv.modify_qp(qp, S | VRNIC_QP_ATTR_EN_SQD_ASYNC_NOTIFY, a));
    auto ev = drv.take_async_events();
    ASSERT_EQ(1u, ev.size());
    EXPECT_EQ(VRNIC_EQE_SQ_DRAINED, ev[0].type);
    EXPECT_EQ(qp.qpn, ev[0].obj);
    EXPECT_EQ(0u, drv.modify_qp(qp, S, to(VRNIC_QPS_RTS)));
}

TEST_F(QpModify, UnknownQpIsBadHandle) {
    vrnic_cmd_modify_qp m{};
    m.qpn = qp.qpn + 1;
    m.attr_mask = S;
    EXPECT_EQ(uint32_t(VRNIC_CMD_STATUS_BAD_HANDLE), drv.cmd(VRNIC_CMD_MODIFY_QP, &m, sizeof(m)));
}

} // namespace
} // namespace vrnic::test
