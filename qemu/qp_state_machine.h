// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The RC QP state machine of device-interface.md section 15 (the kernel's
// ib_modify_qp_is_ok() table for RC), as a pure function.
#pragma once

#include <vrnic_dev.h>

#include <cstdint>

namespace vrnic {

struct TransitionCheck {
    uint32_t status;       // enum vrnic_cmd_status
    vrnic_qp_state target; // valid when status == OK
};

// Checks the transition from `cur` requested by attr_mask/attr: unknown mask
// bits, CUR_STATE mismatch, legal transition, required and allowed
// attributes. Attribute values are not range-checked here.
TransitionCheck check_qp_transition(vrnic_qp_state cur, uint32_t attr_mask,
                                    const vrnic_qp_attr& attr);

} // namespace vrnic
