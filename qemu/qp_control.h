// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// QP state changes with their side effects, shared by MODIFY_QP and the
// engine (device-interface.md sections 14.3, 15).
#pragma once

#include "device_state.h"

namespace vrnic {

// Adds/removes the QP from the list the engine polls (QPs not in RESET).
void qp_set_active(DeviceState& d, Qp& qp, bool active);

// Enters ERR: outstanding and later WQEs are flushed by the engine. Posts
// `async_event` (an EQE type, 0 for none) for the QP.
void qp_enter_error(DeviceState& d, Qp& qp, uint8_t async_event = 0);

// Enters RESET: outstanding WQEs are discarded; the consumer indices jump to
// the producer indices in the slot; attributes return to 0.
void qp_enter_reset(DeviceState& d, Qp& qp);

} // namespace vrnic
