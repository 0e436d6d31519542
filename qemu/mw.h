// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Memory windows (device-interface.md 10.28, 10.29, 14.11): the BIND_MW
// local operation, and what a window's rkey reaches at a responder.
#pragma once

#include "device_state.h"

#include <cstdint>

namespace vrnic {

// Binds (or, type 1 with length 0, unbinds) the window BIND_MW WQE `h`
// names for `qp`: VRNIC_WC_SUCCESS, or the WC status with *ve set.
uint8_t bind_mw(DeviceState& d, const Qp& qp, const vrnic_send_wqe_hdr& h, uint32_t* ve);

// Whether window `mw` (of resp's PD) answers at responder `resp`: bound,
// and for type 2 bound to resp. Its bounds and rights are then checked as
// an MR's (mr.h).
bool mw_serves(const Mr& mw, const Qp& resp);

// The MR holding the bytes of [addr, addr + len) of window `mw`, which
// passed those checks, or nullptr: an access through it fails as through
// an unknown rkey.
const Mr* mw_target(const DeviceState& d, const Mr& mw, uint64_t addr, uint64_t len);

} // namespace vrnic
