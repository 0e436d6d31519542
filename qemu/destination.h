// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Where a message goes (device-interface.md 14.1 "Destination"): a GID of
// this device, then a QP of it. Today every destination is local
// (loopback); a fabric extends gid_is_local()'s callers here, nowhere else.
#pragma once

#include "device_state.h"

#include <cstdint>

namespace vrnic {

// Whether `gid` is one of the device's valid GID entries.
bool gid_is_local(const DeviceState& d, const uint8_t (&gid)[16]);

// The UD QP `qpn` behind `dgid` that can receive (RTR, RTS, SQD), or
// nullptr.
Qp* find_ud_destination(DeviceState& d, const uint8_t (&dgid)[16], uint32_t qpn);

} // namespace vrnic
