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
    kVeNoXrcSrq = 24,  // an XRC message names no XRC SRQ
    kVeXrcDomain = 25, // an XRC message names an SRQ of another XRC domain
    kVeForeignWqe = 26, // a SEND with a destination (UD format) on RC or UC
};

// Completes a receive WQE of `qp` on its receive CQ.
void complete_recv(DeviceState& d, Qp& qp, uint64_t wr_id, uint32_t idx, uint8_t status,
                   uint8_t opcode, uint32_t byte_len, uint32_t imm_be, bool with_imm,
                   uint32_t src_qp, bool solicited, uint32_t vendor);
// Writes the CQE, moving the QP to ERR with QP_FATAL when the CQ cannot
// take it.
void write_cqe_or_fail_qp(DeviceState& d, Qp& qp, Cq& cq, const vrnic_cqe& cqe, bool trigger);

} // namespace vrnic
