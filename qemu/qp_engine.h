// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The QP engine (data path): polls the producer indices of active QPs,
// executes SQ WQEs against the responder QP of the same device and writes
// completions (device-interface.md sections 13, 14).
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
};

// One pass over every active QP; true when any WQE made progress.
bool engine_poll(DeviceState& d);

// The earliest RNR retry deadline (ns on d.now), or UINT64_MAX.
uint64_t engine_next_deadline(const DeviceState& d);

// The IB RNR timer encoding (0..31) in nanoseconds.
uint64_t rnr_timer_ns(uint8_t encoding);

} // namespace vrnic
