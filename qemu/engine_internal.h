// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Shared between the requester (qp_engine.cc) and responder (responder.cc)
// halves of the QP engine.
#pragma once

#include "device_state.h"
#include "sg.h"
#include "wqe_copy.h"

#include <cstdint>

namespace vrnic {

// The requester's side of one message after the local checks: the data
// source (SEND/WRITE) or destination (READ/atomic result).
struct LocalMsg {
    bool is_inline = false;
    uint8_t* inline_data = nullptr;
    uint64_t len = 0;
    SgEntry sge[kMaxWqeSge];
    unsigned nsge = 0;

    SgCursor cursor(const GuestMemory& mem) {
        return is_inline ? SgCursor(inline_data, len) : SgCursor(mem, sge, nsge);
    }
};

// What the responder answered.
struct Delivery {
    uint8_t status = VRNIC_WC_SUCCESS; // the requester's completion status
    uint32_t vendor = 0;
    bool rnr = false;     // no receive WQE: the requester retries later
    bool partial = false; // the slice ended before the message: nothing completed
};

// The part of a message one respond() call moves (14.5).
struct Slice {
    uint64_t offset = 0;       // bytes moved by earlier slices
    uint64_t max = UINT64_MAX; // bytes this call may move
    uint64_t moved = 0;        // out: bytes this call moved
    RecvWqe* recv = nullptr;   // SEND: where the taken receive WQE is kept
    bool recv_held = false;    // in/out: *recv is already the RQ head
};

// Runs the responder side of one slice of a message from `req` to `resp`
// (both RC, the destination checks already done): rkey/receive checks, data
// movement and, on the last slice, the responder's completion and state
// changes.
Delivery respond(DeviceState& d, Qp& req, Qp& resp, const vrnic_send_wqe_hdr& h, LocalMsg& msg,
                 Slice& s);

// Completion helpers: write the CQE (moving the QP to ERR with QP_FATAL when
// the CQ cannot take it).
void complete_recv(DeviceState& d, Qp& qp, uint64_t wr_id, uint32_t idx, uint8_t status,
                   uint8_t opcode, uint32_t byte_len, uint32_t imm_be, bool with_imm,
                   uint32_t src_qp, bool solicited, uint32_t vendor);
void write_cqe_or_fail_qp(DeviceState& d, Qp& qp, Cq& cq, const vrnic_cqe& cqe, bool trigger);

} // namespace vrnic
