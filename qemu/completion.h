// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Work completions of the QP engine, written by the requester and the
// responder alike (device-interface.md 13).
#pragma once

#include "device_state.h"

#include <cstdint>

namespace vrnic {

// Device-specific detail in vrnic_cqe.vendor_err for error completions.
enum VendorErr : uint32_t {
    kVeNone = 0,
    kVeBadOpcode = 1,
    kVeBadFlags = 2,
    kVeTooManySge = 3,
    kVeBadInline = 4,
    kVeBadAtomicSge = 5,
    kVeMsgTooLong = 6,
    kVeBadLkey = 7,
    kVeLocalBounds = 8,
    kVeNoLocalWrite = 9,
    kVeNoResponder = 10,
    kVeRnrExceeded = 11,
    kVeBadRkey = 12,
    kVeRemoteBounds = 13,
    kVeRemoteRights = 14,
    kVeMisalignedAtomic = 15,
    kVeNoRdAtomic = 16,
    kVeRecvTooShort = 17,
    kVeBadRecvSge = 18,
    kVeBadRecvWqe = 19,
    kVeReadFault = 20,
    kVePsnSequence = 21,
    kVeBadAh = 22,
    kVeBadRemoteQpn = 23,
    kVeNoXrcSrq = 24,   // an XRC message names no XRC SRQ
    kVeXrcDomain = 25,  // an XRC message names an SRQ of another XRC domain
    kVeForeignWqe = 26, // a SEND with a destination (UD format) on RC or UC
    // Fast registration (fast_reg.h).
    kVeBadFrmrWqe = 27,       // a REG_MR or LOCAL_INV WQE with data or reserved bits
    kVeFrmrUserQp = 28,       // REG_MR on a QP of a user context
    kVeFrmrBadKey = 29,       // the key names no MR (a stale key byte included)
    kVeFrmrPd = 30,           // the MR is of another PD
    kVeFrmrValid = 31,        // REG_MR of an MR not in the free state
    kVeFrmrAccess = 32,       // unknown access bits, or remote write without local
    kVeFrmrRange = 33,        // bad length, wrap or page size
    kVeFrmrTooManyPages = 34, // more pages than ALLOC_MR's max_pages
    kVeFrmrPageList = 35,     // the page list or a page outside guest RAM
    kVeFrmrNotFast = 36,      // invalidation of an MR that is not ALLOC_MR's
    // Memory windows (mw.h).
    kVeMwBadKey = 37,   // a bind names no window
    kVeMwPd = 38,       // a window of another PD
    kVeMwBound = 39,    // a bind of a type 2 window that is bound
    kVeMwMr = 40,       // no usable MR of the QP's PD to bind to
    kVeMwNoBind = 41,   // the MR lacks MW_BIND
    kVeMwAccess = 42,   // bad window rights, or writes without the MR's LOCAL_WRITE
    kVeMwRange = 43,    // the window is not inside the MR, or empty for type 2
    kVeMwType1Inv = 44, // invalidation of a type 1 window
    kVeWireNak = 45,    // a responder beyond the uplink answered with a NAK
};

// Completes a receive WQE of `qp` on its receive CQ.
void complete_recv(DeviceState& d, Qp& qp, uint64_t wr_id, uint32_t idx, uint8_t status,
                   uint8_t opcode, uint32_t byte_len, uint32_t imm_be, bool with_imm,
                   uint32_t src_qp, bool solicited, uint32_t vendor, uint32_t invalidated_rkey = 0);
// Writes the CQE, moving the QP to ERR with QP_FATAL when the CQ cannot
// take it.
void write_cqe_or_fail_qp(DeviceState& d, Qp& qp, Cq& cq, const vrnic_cqe& cqe, bool trigger);

} // namespace vrnic
