// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "qp_state_machine.h"

#include <array>
#include <iterator>

namespace vrnic {

namespace {

struct Rule {
    bool valid = false;
    uint32_t required = 0;
    uint32_t optional = 0;
};

constexpr size_t kQpStates = VRNIC_QPS_ERR + 1;

// [cur][next], for the transitions other than to RESET and ERR, which are
// the same for every type.
using StateTable = std::array<std::array<Rule, kQpStates>, kQpStates>;

constexpr uint32_t kUnsupportedAttrs = VRNIC_QP_ATTR_ALT_PATH | VRNIC_QP_ATTR_PATH_MIG_STATE;

constexpr StateTable rc_table() {
    constexpr uint32_t kAltMig = VRNIC_QP_ATTR_ALT_PATH | VRNIC_QP_ATTR_PATH_MIG_STATE;
    constexpr uint32_t kRtsOpt = VRNIC_QP_ATTR_CUR_STATE | VRNIC_QP_ATTR_ACCESS_FLAGS |
                                 VRNIC_QP_ATTR_MIN_RNR_TIMER | kAltMig;
    StateTable t{};
    t[VRNIC_QPS_RESET][VRNIC_QPS_INIT] = {
        true, VRNIC_QP_ATTR_PKEY_INDEX | VRNIC_QP_ATTR_PORT | VRNIC_QP_ATTR_ACCESS_FLAGS, 0};
    t[VRNIC_QPS_INIT][VRNIC_QPS_INIT] = {
        true, 0, VRNIC_QP_ATTR_PKEY_INDEX | VRNIC_QP_ATTR_PORT | VRNIC_QP_ATTR_ACCESS_FLAGS};
    t[VRNIC_QPS_INIT][VRNIC_QPS_RTR] = {
        true,
        VRNIC_QP_ATTR_AV | VRNIC_QP_ATTR_PATH_MTU | VRNIC_QP_ATTR_DEST_QPN | VRNIC_QP_ATTR_RQ_PSN |
            VRNIC_QP_ATTR_MAX_DEST_RD_ATOMIC | VRNIC_QP_ATTR_MIN_RNR_TIMER,
        VRNIC_QP_ATTR_ALT_PATH | VRNIC_QP_ATTR_ACCESS_FLAGS | VRNIC_QP_ATTR_PKEY_INDEX};
    t[VRNIC_QPS_RTR][VRNIC_QPS_RTS] = {true,
                                       VRNIC_QP_ATTR_TIMEOUT | VRNIC_QP_ATTR_RETRY_CNT |
                                           VRNIC_QP_ATTR_RNR_RETRY | VRNIC_QP_ATTR_SQ_PSN |
                                           VRNIC_QP_ATTR_MAX_QP_RD_ATOMIC,
                                       kRtsOpt};
    t[VRNIC_QPS_RTS][VRNIC_QPS_RTS] = {true, 0, kRtsOpt};
    t[VRNIC_QPS_RTS][VRNIC_QPS_SQD] = {true, 0, VRNIC_QP_ATTR_EN_SQD_ASYNC_NOTIFY};
    t[VRNIC_QPS_SQD][VRNIC_QPS_RTS] = {true, 0, kRtsOpt};
    t[VRNIC_QPS_SQD][VRNIC_QPS_SQD] = {
        true, 0,
        VRNIC_QP_ATTR_PORT | VRNIC_QP_ATTR_AV | VRNIC_QP_ATTR_TIMEOUT | VRNIC_QP_ATTR_RETRY_CNT |
            VRNIC_QP_ATTR_RNR_RETRY | VRNIC_QP_ATTR_MAX_QP_RD_ATOMIC |
            VRNIC_QP_ATTR_MAX_DEST_RD_ATOMIC | VRNIC_QP_ATTR_ACCESS_FLAGS |
            VRNIC_QP_ATTR_PKEY_INDEX | VRNIC_QP_ATTR_MIN_RNR_TIMER | kAltMig};
    return t;
}

constexpr StateTable uc_table() {
    constexpr uint32_t kAltMig = VRNIC_QP_ATTR_ALT_PATH | VRNIC_QP_ATTR_PATH_MIG_STATE;
    constexpr uint32_t kInit =
        VRNIC_QP_ATTR_PKEY_INDEX | VRNIC_QP_ATTR_PORT | VRNIC_QP_ATTR_ACCESS_FLAGS;
    constexpr uint32_t kRtsOpt = VRNIC_QP_ATTR_CUR_STATE | VRNIC_QP_ATTR_ACCESS_FLAGS | kAltMig;
    StateTable t{};
    t[VRNIC_QPS_RESET][VRNIC_QPS_INIT] = {true, kInit, 0};
    t[VRNIC_QPS_INIT][VRNIC_QPS_INIT] = {true, 0, kInit};
    t[VRNIC_QPS_INIT][VRNIC_QPS_RTR] = {
        true,
        VRNIC_QP_ATTR_AV | VRNIC_QP_ATTR_PATH_MTU | VRNIC_QP_ATTR_DEST_QPN | VRNIC_QP_ATTR_RQ_PSN,
        VRNIC_QP_ATTR_ALT_PATH | VRNIC_QP_ATTR_ACCESS_FLAGS | VRNIC_QP_ATTR_PKEY_INDEX};
    t[VRNIC_QPS_RTR][VRNIC_QPS_RTS] = {true, VRNIC_QP_ATTR_SQ_PSN, kRtsOpt};
    t[VRNIC_QPS_RTS][VRNIC_QPS_RTS] = {true, 0, kRtsOpt};
    t[VRNIC_QPS_RTS][VRNIC_QPS_SQD] = {true, 0, VRNIC_QP_ATTR_EN_SQD_ASYNC_NOTIFY};
    t[VRNIC_QPS_SQD][VRNIC_QPS_RTS] = {true, 0, kRtsOpt};
    t[VRNIC_QPS_SQD][VRNIC_QPS_SQD] = {true, 0,
                                       VRNIC_QP_ATTR_AV | VRNIC_QP_ATTR_ACCESS_FLAGS |
                                           VRNIC_QP_ATTR_PKEY_INDEX | kAltMig};
    t[VRNIC_QPS_SQE][VRNIC_QPS_RTS] = {true, 0,
                                       VRNIC_QP_ATTR_CUR_STATE | VRNIC_QP_ATTR_ACCESS_FLAGS};
    return t;
}

constexpr StateTable ud_table() {
    constexpr uint32_t kRtsOpt = VRNIC_QP_ATTR_CUR_STATE | VRNIC_QP_ATTR_QKEY;
    StateTable t{};
    t[VRNIC_QPS_RESET][VRNIC_QPS_INIT] = {
        true, VRNIC_QP_ATTR_PKEY_INDEX | VRNIC_QP_ATTR_PORT | VRNIC_QP_ATTR_QKEY, 0};
    t[VRNIC_QPS_INIT][VRNIC_QPS_INIT] = {
        true, 0, VRNIC_QP_ATTR_PKEY_INDEX | VRNIC_QP_ATTR_PORT | VRNIC_QP_ATTR_QKEY};
    // PATH_MTU: the driver's port MTU, the largest datagram the QP sends.
    t[VRNIC_QPS_INIT][VRNIC_QPS_RTR] = {
        true, 0, VRNIC_QP_ATTR_PKEY_INDEX | VRNIC_QP_ATTR_QKEY | VRNIC_QP_ATTR_PATH_MTU};
    t[VRNIC_QPS_RTR][VRNIC_QPS_RTS] = {true, VRNIC_QP_ATTR_SQ_PSN, kRtsOpt};
    t[VRNIC_QPS_RTS][VRNIC_QPS_RTS] = {true, 0, kRtsOpt};
    t[VRNIC_QPS_RTS][VRNIC_QPS_SQD] = {true, 0, VRNIC_QP_ATTR_EN_SQD_ASYNC_NOTIFY};
    t[VRNIC_QPS_SQD][VRNIC_QPS_RTS] = {true, 0, kRtsOpt};
    t[VRNIC_QPS_SQD][VRNIC_QPS_SQD] = {true, 0, VRNIC_QP_ATTR_PKEY_INDEX | VRNIC_QP_ATTR_QKEY};
    t[VRNIC_QPS_SQE][VRNIC_QPS_RTS] = {true, 0, kRtsOpt};
    return t;
}

// RC's table without the attributes of one side: an XRC initiator is an RC
// requester, an XRC target an RC responder.
constexpr StateTable rc_without(uint32_t attrs) {
    StateTable t = rc_table();
    for (auto& row : t)
        for (Rule& r : row) {
            r.required &= ~attrs;
            r.optional &= ~attrs;
        }
    return t;
}

constexpr uint32_t kResponderAttrs = VRNIC_QP_ATTR_MAX_DEST_RD_ATOMIC | VRNIC_QP_ATTR_MIN_RNR_TIMER;
constexpr uint32_t kRequesterAttrs =
    VRNIC_QP_ATTR_RETRY_CNT | VRNIC_QP_ATTR_RNR_RETRY | VRNIC_QP_ATTR_MAX_QP_RD_ATOMIC;

// Indexed by QpType.
constexpr StateTable kTables[] = {rc_table(), uc_table(), ud_table(), rc_without(kResponderAttrs),
                                  rc_without(kRequesterAttrs)};
static_assert(std::size(kTables) == kQpTypeCount, "a state table for every QP type");

Rule rule(QpType type, vrnic_qp_state from, vrnic_qp_state to) {
    if (to == VRNIC_QPS_RESET)
        return {true, 0, 0};
    if (to == VRNIC_QPS_ERR)
        return {from != VRNIC_QPS_RESET, 0, 0};
    return kTables[size_t(type)][from][to];
}

} // namespace

TransitionCheck check_qp_transition(QpType type, vrnic_qp_state cur, uint32_t mask,
                                    const vrnic_qp_attr& attr) {
    if (mask & ~VRNIC_QP_ATTR_ALL)
        return {VRNIC_CMD_STATUS_BAD_PARAM, cur};
    if (mask & VRNIC_QP_ATTR_CAP)
        return {VRNIC_CMD_STATUS_UNSUPPORTED, cur};
    if ((mask & VRNIC_QP_ATTR_CUR_STATE) && attr.cur_qp_state != cur)
        return {VRNIC_CMD_STATUS_BAD_STATE, cur};
    vrnic_qp_state target = cur;
    if (mask & VRNIC_QP_ATTR_STATE) {
        if (attr.qp_state > VRNIC_QPS_ERR)
            return {VRNIC_CMD_STATUS_BAD_PARAM, cur};
        target = static_cast<vrnic_qp_state>(attr.qp_state);
    }
    Rule r = rule(type, cur, target);
    if (!r.valid)
        return {VRNIC_CMD_STATUS_BAD_STATE, cur};
    uint32_t attrs = mask & ~uint32_t(VRNIC_QP_ATTR_STATE);
    if ((attrs & r.required) != r.required)
        return {VRNIC_CMD_STATUS_BAD_PARAM, cur};
    if (attrs & ~(r.required | r.optional))
        return {VRNIC_CMD_STATUS_BAD_PARAM, cur};
    if (attrs & kUnsupportedAttrs)
        return {VRNIC_CMD_STATUS_UNSUPPORTED, cur};
    return {VRNIC_CMD_STATUS_OK, target};
}

} // namespace vrnic
