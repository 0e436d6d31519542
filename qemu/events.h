// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The event/interrupt path: CQE and EQE writing with the phase protocol, the
// CQ arm protocol, CQ overflow detection and fatal errors
// (device-interface.md sections 5.5, 6, 11, 12).
#pragma once

#include "device_state.h"

namespace vrnic {

// Posts an EQE unless the EQ is full (then counts it in eq_overflow). Raises
// the EQ's vector at the end of the pass.
bool post_eqe(DeviceState& d, Eq& eq, uint8_t type, uint32_t obj, uint64_t aux = 0);
// An event on the async EQ (vector 0); dropped when the AEQ is not configured.
void post_async_event(DeviceState& d, uint8_t type, uint32_t obj, uint64_t aux = 0);

// Writes a CQE at the CQ's producer index, owner byte last. False when the
// CQE could not be written: the CQ is (now) in error and CQ_ERROR was posted
// the first time; the caller moves its QP to ERR with QP_FATAL.
// `triggers_solicited`: a solicited receive or an error completion.
bool post_cqe(DeviceState& d, Cq& cq, const vrnic_cqe& cqe, bool triggers_solicited);

// Runs the arm protocol (12.3) for every CQ that got CQEs since the last
// call: one full fence, then one arm-word load per CQ.
void finish_cq_batches(DeviceState& d);

// Slot-0 status word of a doorbell page: the need_wakeup bits and FATAL.
uint32_t page_status(const DeviceState& d);
// Writes page_status() into every doorbell page in use.
void publish_page_status(DeviceState& d);

// Stops the device (5.5).
void enter_fatal(DeviceState& d, vrnic_fatal_code code);

} // namespace vrnic
