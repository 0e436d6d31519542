// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The QP state machine of device-interface.md section 15 as a pure function:
// per QP type, the legal transitions with their required and optional
// attributes (the kernel's ib_modify_qp_is_ok() table).
#pragma once

#include "qp_type.h"

#include <vrnic_dev.h>

#include <cstdint>

namespace vrnic {

struct TransitionCheck {
    uint32_t status;       // enum vrnic_cmd_status
    vrnic_qp_state target; // valid when status == OK
};

// Checks the transition of a QP of `type` from `cur` requested by
// attr_mask/attr: unknown mask bits, CUR_STATE mismatch, legal transition,
// required and allowed attributes. Attribute values are not range-checked
// here.
TransitionCheck check_qp_transition(QpType type, vrnic_qp_state cur, uint32_t attr_mask,
                                    const vrnic_qp_attr& attr);

} // namespace vrnic
