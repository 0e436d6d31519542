// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "qp_state_machine.h"

namespace vrnic {

namespace {

struct Rule {
    bool valid;
    uint32_t required;
    uint32_t optional;
};

constexpr uint32_t kUnsupportedAttrs = VRNIC_QP_ATTR_ALT_PATH | VRNIC_QP_ATTR_PATH_MIG_STATE;

Rule rule(vrnic_qp_state from, vrnic_qp_state to) {
    using S = vrnic_qp_state;
    constexpr uint32_t kAltMig = VRNIC_QP_ATTR_ALT_PATH | VRNIC_QP_ATTR_PATH_MIG_STATE;
    if (to == VRNIC_QPS_RESET)
        return {true, 0, 0};
    if (to == VRNIC_QPS_ERR)
        return {from != VRNIC_QPS_RESET, 0, 0};
    switch (from) {
    case S::VRNIC_QPS_RESET:
        if (to == VRNIC_QPS_INIT)
            return {true,
                    VRNIC_QP_ATTR_PKEY_INDEX | VRNIC_QP_ATTR_PORT | VRNIC_QP_ATTR_ACCESS_FLAGS, 0};
        break;
    case S::VRNIC_QPS_INIT:
        if (to == VRNIC_QPS_INIT)
            return {true, 0,
                    VRNIC_QP_ATTR_PKEY_INDEX | VRNIC_QP_ATTR_PORT | VRNIC_QP_ATTR_ACCESS_FLAGS};
        if (to == VRNIC_QPS_RTR)
            return {true,
                    VRNIC_QP_ATTR_AV | VRNIC_QP_ATTR_PATH_MTU | VRNIC_QP_ATTR_DEST_QPN |
                        VRNIC_QP_ATTR_RQ_PSN | VRNIC_QP_ATTR_MAX_DEST_RD_ATOMIC |
                        VRNIC_QP_ATTR_MIN_RNR_TIMER,
                    VRNIC_QP_ATTR_ALT_PATH | VRNIC_QP_ATTR_ACCESS_FLAGS | VRNIC_QP_ATTR_PKEY_INDEX};
        break;
    case S::VRNIC_QPS_RTR:
        if (to == VRNIC_QPS_RTS)
            return {true,
                    VRNIC_QP_ATTR_TIMEOUT | VRNIC_QP_ATTR_RETRY_CNT | VRNIC_QP_ATTR_RNR_RETRY |
                        VRNIC_QP_ATTR_SQ_PSN | VRNIC_QP_ATTR_MAX_QP_RD_ATOMIC,
                    VRNIC_QP_ATTR_CUR_STATE | VRNIC_QP_ATTR_ACCESS_FLAGS |
                        VRNIC_QP_ATTR_MIN_RNR_TIMER | kAltMig};
        break;
    case S::VRNIC_QPS_RTS:
        if (to == VRNIC_QPS_RTS)
            return {true, 0,
                    VRNIC_QP_ATTR_CUR_STATE | VRNIC_QP_ATTR_ACCESS_FLAGS |
                        VRNIC_QP_ATTR_MIN_RNR_TIMER | kAltMig};
        if (to == VRNIC_QPS_SQD)
            return {true, 0, VRNIC_QP_ATTR_EN_SQD_ASYNC_NOTIFY};
        break;
    case S::VRNIC_QPS_SQD:
        if (to == VRNIC_QPS_RTS)
            return {true, 0,
                    VRNIC_QP_ATTR_CUR_STATE | VRNIC_QP_ATTR_ACCESS_FLAGS |
                        VRNIC_QP_ATTR_MIN_RNR_TIMER | kAltMig};
        if (to == VRNIC_QPS_SQD)
            return {true, 0,
                    VRNIC_QP_ATTR_PORT | VRNIC_QP_ATTR_AV | VRNIC_QP_ATTR_TIMEOUT |
                        VRNIC_QP_ATTR_RETRY_CNT | VRNIC_QP_ATTR_RNR_RETRY |
                        VRNIC_QP_ATTR_MAX_QP_RD_ATOMIC | VRNIC_QP_ATTR_MAX_DEST_RD_ATOMIC |
                        VRNIC_QP_ATTR_ACCESS_FLAGS | VRNIC_QP_ATTR_PKEY_INDEX |
                        VRNIC_QP_ATTR_MIN_RNR_TIMER | kAltMig};
        break;
    default:
        break;
    }
    return {false, 0, 0};
}

} // namespace

TransitionCheck check_qp_transition(vrnic_qp_state cur, uint32_t mask, const vrnic_qp_attr& attr) {
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
    Rule r = rule(cur, target);
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
