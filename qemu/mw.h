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

// An access through window `mw` (a window of resp's PD) at responder
// `resp`: the MR holding the bytes in *out, or the vendor error of an
// unknown rkey, bounds or rights.
uint32_t mw_resolve(DeviceState& d, const Qp& resp, const Mr& mw, uint64_t addr, uint64_t len,
                    uint32_t right, const Mr** out);

} // namespace vrnic
