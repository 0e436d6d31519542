// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The transport service of a QP. The state table, the command handlers and
// the engine dispatch on it; each type has its own entry in each.
#pragma once

#include <vrnic_dev.h>

#include <cstddef>
#include <cstdint>

namespace vrnic {

enum class QpType : uint8_t {
    rc,
    uc,
    ud,
    xrc_ini, // XRC initiator: an SQ only; each message names a remote XRC SRQ
    xrc_tgt, // XRC target: no queues; receives into the XRC SRQ a message names
};
constexpr size_t kQpTypeCount = size_t(QpType::xrc_tgt) + 1;

// The type of the QP an RC-like requester of type `t` talks to.
inline QpType responder_type(QpType t) {
    return t == QpType::xrc_ini ? QpType::xrc_tgt : t;
}

// CREATE_QP's qp_type field: VRNIC_CMD_STATUS_OK with *out set (the GSI QP
// is a UD QP, *gsi set), UNSUPPORTED for a type the interface names but this
// device does not implement, or BAD_PARAM.
inline uint32_t qp_type_from_dev(uint8_t dev_type, QpType* out, bool* gsi) {
    *gsi = false;
    switch (dev_type) {
    case VRNIC_QPT_RC:
        *out = QpType::rc;
        return VRNIC_CMD_STATUS_OK;
    case VRNIC_QPT_UC:
        *out = QpType::uc;
        return VRNIC_CMD_STATUS_OK;
    case VRNIC_QPT_UD:
        *out = QpType::ud;
        return VRNIC_CMD_STATUS_OK;
    case VRNIC_QPT_XRC_INI:
        *out = QpType::xrc_ini;
        return VRNIC_CMD_STATUS_OK;
    case VRNIC_QPT_XRC_TGT:
        *out = QpType::xrc_tgt;
        return VRNIC_CMD_STATUS_OK;
    case VRNIC_QPT_GSI:
        *out = QpType::ud;
        *gsi = true;
        return VRNIC_CMD_STATUS_OK;
    default:
        return VRNIC_CMD_STATUS_BAD_PARAM;
    }
}

inline bool is_send_opcode(uint8_t op) {
    return op == VRNIC_WR_SEND || op == VRNIC_WR_SEND_WITH_IMM;
}

inline bool is_atomic_opcode(uint8_t op) {
    return op == VRNIC_WR_ATOMIC_CMP_AND_SWP || op == VRNIC_WR_ATOMIC_FETCH_AND_ADD;
}

// The operations that complete at the requester (fast_reg.h, mw.h).
inline bool is_local_op(uint8_t op) {
    return op == VRNIC_WR_REG_MR || op == VRNIC_WR_LOCAL_INV || op == VRNIC_WR_BIND_MW;
}

// The messages that take a receive WQE at an RC or UC responder.
inline bool is_send_like(uint8_t op) {
    return is_send_opcode(op) || op == VRNIC_WR_SEND_WITH_INV;
}

// Fast registration's and memory windows' opcodes, which RC and UC carry.
inline bool is_fast_reg_opcode(uint8_t op) {
    return is_local_op(op) || op == VRNIC_WR_SEND_WITH_INV;
}

// Whether a send WQE of this opcode is a request the type carries (14.1):
// RC and XRC initiators all up to the atomics, RC and UC the fast
// registration ones, UC neither READ nor atomics, UD only SEND, an XRC
// target (which has no SQ) none.
inline bool qp_type_allows_opcode(QpType t, uint8_t op) {
    switch (t) {
    case QpType::rc:
        return op <= VRNIC_WR_ATOMIC_FETCH_AND_ADD || is_fast_reg_opcode(op);
    case QpType::xrc_ini:
        return op <= VRNIC_WR_ATOMIC_FETCH_AND_ADD;
    case QpType::xrc_tgt:
        return false;
    case QpType::uc:
        return op <= VRNIC_WR_SEND_WITH_IMM || is_fast_reg_opcode(op);
    case QpType::ud:
        return is_send_opcode(op);
    }
    return false;
}

} // namespace vrnic
