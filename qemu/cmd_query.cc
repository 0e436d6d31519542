// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// QUERY_DEVICE, QUERY_PORT and QUERY_CLOCK (sections 10.2, 10.3).
#include "cmd_util.h"

namespace vrnic {

CmdResult cmd_query_device(DeviceState& d, const vrnic_cmd&, vrnic_cmd& out) {
    auto& r = out.query_device_resp;
    const Objects& o = *d.obj;
    r.num_uctx = o.uctxs.count();
    r.num_pd = o.pds.count();
    r.num_mr = o.mrs.count();
    r.num_cq = o.cqs.count();
    r.num_qp = o.qps.count();
    r.num_srq = o.srqs.count();
    r.num_ah = o.ahs.count();
    r.num_eq = o.eqs.count();
    return cmd_ok();
}

CmdResult cmd_query_port(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out) {
    if (in.query_port.port_num != 1)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "port_num != 1");
    if (!all_zero(in.query_port.reserved))
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "reserved field");
    auto& r = out.query_port_resp;
    r.state = VRNIC_PORT_ACTIVE;
    r.phys_state = VRNIC_PORT_PHYS_LINK_UP;
    r.max_mtu = static_cast<uint8_t>(d.params.max_mtu);
    r.active_mtu = static_cast<uint8_t>(d.params.max_mtu);
    r.gid_tbl_len = d.params.gid_tbl_len;
    r.pkey_tbl_len = 1;
    r.active_speed = 32; // IB_SPEED_EDR
    r.active_width = 2;  // IB_WIDTH_4X
    r.max_msg_sz = d.params.max_msg_sz;
    return cmd_ok();
}

CmdResult cmd_query_clock(DeviceState& d, const vrnic_cmd&, vrnic_cmd& out) {
    out.query_clock_resp.now_ns = d.wall();
    return cmd_ok();
}

} // namespace vrnic
