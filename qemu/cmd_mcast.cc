// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Multicast attach and detach (sections 10.23, 10.24): a UD QP joins or
// leaves a multicast GID's group in the device's table.
#include "cmd_util.h"
#include "destination.h"
#include "mcast.h"

namespace vrnic {

namespace {

// The UD QP a multicast command names with a multicast GID, or nullptr with
// the status that refuses the command.
Qp* mcast_qp(DeviceState& d, const vrnic_cmd_mcast& c, uint32_t& st) {
    st = VRNIC_CMD_STATUS_BAD_PARAM;
    if (c.reserved || !gid_is_mcast(c.gid))
        return nullptr;
    Qp* q = d.obj->qps.find(c.qpn);
    if (!q)
        st = VRNIC_CMD_STATUS_BAD_HANDLE;
    else if (q->type != QpType::ud)
        q = nullptr;
    return q;
}

} // namespace

CmdResult cmd_attach_mcast(DeviceState& d, const vrnic_cmd& in, vrnic_cmd&) {
    uint32_t st = 0;
    Qp* q = mcast_qp(d, in.mcast, st);
    if (!q)
        CMD_FAIL(st, "not a UD QP and a multicast GID");
    switch (d.obj->mcast.attach(in.mcast.gid, q->qpn)) {
    case McastTable::Attach::ok:
        publish_mcast_groups(d);
        return cmd_ok();
    case McastTable::Attach::no_group:
        CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "max_mcast_grp reached");
    case McastTable::Attach::group_full:
        CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "max_mcast_qp_attach reached");
    }
    CMD_FAIL(VRNIC_CMD_STATUS_INTERNAL, "attach");
}

CmdResult cmd_detach_mcast(DeviceState& d, const vrnic_cmd& in, vrnic_cmd&) {
    uint32_t st = 0;
    Qp* q = mcast_qp(d, in.mcast, st);
    if (!q)
        CMD_FAIL(st, "not a UD QP and a multicast GID");
    if (!d.obj->mcast.detach(in.mcast.gid, q->qpn))
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "QP not attached to the group");
    publish_mcast_groups(d);
    return cmd_ok();
}

} // namespace vrnic
