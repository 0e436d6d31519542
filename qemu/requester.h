// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The QP engine's requester (data path): polls the producer indices of
// active QPs, executes SQ WQEs against the responder QP of the same device,
// writes send completions and flushes QPs in ERR (device-interface.md
// sections 13, 14).
#pragma once

#include "device_state.h"

#include <cstdint>

namespace vrnic {

// One pass over every active QP; true when any WQE made progress.
bool engine_poll(DeviceState& d);

// The earliest RNR retry deadline (ns on d.now), or UINT64_MAX.
uint64_t engine_next_deadline(const DeviceState& d);

// The IB RNR timer encoding (0..31) in nanoseconds.
uint64_t rnr_timer_ns(uint8_t encoding);

} // namespace vrnic
