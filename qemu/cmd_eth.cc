// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// SET_ETH: the Ethernet function's mode (section 10.22, since 1.1).
#include "cmd_util.h"

namespace vrnic {

CmdResult cmd_set_eth(DeviceState& d, const vrnic_cmd& in, vrnic_cmd&) {
    const vrnic_cmd_set_eth& c = in.set_eth;
    if (c.flags & ~uint32_t(VRNIC_ETH_F_LOOPBACK))
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "unknown SET_ETH flags");
    if (c.reserved)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "reserved field");
    const bool on = c.flags & VRNIC_ETH_F_LOOPBACK;
    if (on != d.eth_loopback)
        LOG_INFO("eth: MAC loopback %s", on ? "on" : "off");
    d.eth_loopback = on;
    return cmd_ok();
}

} // namespace vrnic
