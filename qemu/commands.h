// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The command processor: consumes the command queue the driver fills in
// guest memory (device-interface.md sections 9, 10).
#pragma once

#include "device_state.h"

#include <cstdint>

namespace vrnic {

struct CmdResult {
    uint32_t status;   // enum vrnic_cmd_status
    uint32_t syndrome; // where it failed, for logs (source line of the check)
};

// Executes one command. `in` is the private copy of the guest's entry; the
// response goes to out.payload (zeroed by the caller).
CmdResult execute_command(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);

// Processes every posted command in order; true when there were any.
bool process_cmdq(DeviceState& d);

} // namespace vrnic
