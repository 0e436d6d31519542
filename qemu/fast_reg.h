// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Fast registration (device-interface.md 10.27, 14.10): the local
// operations REG_MR and LOCAL_INV a kernel QP's SQ executes on MRs of
// ALLOC_MR (and BIND_MW, mw.h, and LOCAL_INV of type 2 windows), and the
// invalidation a SEND_WITH_INV asks of its responder.
#pragma once

#include "device_state.h"
#include "requester_steps.h"
#include "wqe_copy.h"

#include <cstdint>

namespace vrnic {

// Executes the REG_MR, LOCAL_INV or BIND_MW WQE `w` at sq.ci and completes it; it
// needs no responder and always finishes in one go.
Outcome execute_local_op(DeviceState& d, Qp& qp, const SendWqeCopy& w);

// A SEND_WITH_INV's invalidation at `resp`: `rkey` must be the current key
// of a fast-registration MR of resp's PD, which goes to the free state, or
// of a type 2 window bound to resp, which becomes unbound.
// Returns 0, or the vendor error that refuses it.
uint32_t remote_invalidate(DeviceState& d, const Qp& resp, uint32_t rkey);

} // namespace vrnic
