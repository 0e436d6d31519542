// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The Ethernet function's TX and RX descriptor rings (device-interface.md
// section 17). TX hands each valid frame to a sink (with none, frames
// complete DONE and are discarded), or in MAC loopback to the device's own
// RX path, and RX takes frames from whoever delivers them.
#pragma once

#include "device_state.h"

#include <cstdint>
#include <functional>

namespace vrnic {

// Completes every posted TX descriptor; true when there were any.
bool eth_poll_tx(DeviceState& d, const FrameSink& sink);

// Places one frame into the next posted RX buffer. False when dropped (RX
// disabled or stopped, no buffer posted, buffer too small, bad buffer).
bool eth_deliver_rx(DeviceState& d, const uint8_t* frame, uint32_t len);

} // namespace vrnic
