// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The responder half of the QP engine, and what the requester hands it:
// the message after its local checks, the slice to move, and the answer.
#pragma once

#include "device_state.h"
#include "sg.h"
#include "wqe_copy.h"

#include <cstdint>

namespace vrnic {

// The requester's side of one message after the local checks: the data
// source (SEND/WRITE) or destination (READ/atomic result), in the
// requester's guest memory (another VM's than the responder's in a fabric).
struct LocalMsg {
    const GuestMemory* mem = nullptr;
    bool is_inline = false;
    uint8_t* inline_data = nullptr;
    uint64_t len = 0;
    SgEntry sge[kMaxWqeSge];
    unsigned nsge = 0;

    SgCursor cursor() { return is_inline ? SgCursor(inline_data, len) : SgCursor(*mem, sge, nsge); }
};

// What the responder answered.
struct Delivery {
    uint8_t status = VRNIC_WC_SUCCESS; // the requester's completion status
    uint32_t vendor = 0;
    bool rnr = false;     // no receive WQE: the requester retries later
    bool partial = false; // the slice ended before the message: nothing completed
    bool dropped = false; // UC: the responder could not take the message (14.7)
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
// of device `d` (both RC or both UC, the destination checks already done):
// rkey/receive checks against d's state, data movement and, on the last
// slice, the responder's completion and state changes.
Delivery respond(DeviceState& d, Qp& req, Qp& resp, const vrnic_send_wqe_hdr& h, LocalMsg& msg,
                 Slice& s);

// Resolves an rkey access of `len` bytes at `addr` for `right` at the
// responder `resp` (14.1 "Responder"): 0 and the MR in *out, or the
// violation.
uint32_t check_remote(DeviceState& d, const Qp& resp, uint32_t rkey, uint64_t addr, uint64_t len,
                      uint32_t right, const Mr** out);

// Executes an 8-byte atomic (compare-and-swap if `cas`, else fetch-and-add)
// at the 8-aligned `addr` of `rkey` for `resp`: 0 and the original value in
// *orig, or the violation.
uint32_t execute_atomic(DeviceState& d, const Qp& resp, bool cas, uint64_t addr, uint32_t rkey,
                        uint64_t compare_add, uint64_t swap, uint64_t* orig);

// The receive SGEs of `w` at `resp` as validated entries (lkey of its PD,
// bounds, LOCAL_WRITE) in dst[*n], their total in *room; false when one
// fails.
bool resolve_recv_sges(DeviceState& d, const Qp& resp, const RecvWqe& w, SgEntry* dst, unsigned* n,
                       uint64_t* room);

// The fetched receive `w` completes with `status` (from src_qpn) and `resp`
// goes to ERR.
void fail_recv(DeviceState& d, Qp& resp, const RecvWqe& w, uint8_t status, uint32_t src_qpn,
               uint32_t vendor);

} // namespace vrnic
