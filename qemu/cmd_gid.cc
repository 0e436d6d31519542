// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// SET_GID: the port's GID table (section 10.19).
#include "cmd_util.h"
#include "rdma_fabric.h"

namespace vrnic {

namespace {

// Other VMs find this device by its GIDs from now on.
CmdResult gids_changed(DeviceState& d) {
    if (d.fabric)
        d.fabric->publish_gids(d.fabric_port, d.obj->gids);
    return cmd_ok();
}

} // namespace

CmdResult cmd_set_gid(DeviceState& d, const vrnic_cmd& in, vrnic_cmd&) {
    const vrnic_cmd_set_gid& g = in.set_gid;
    if (g.index >= d.params.gid_tbl_len)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "GID index out of range");
    if (g.flags & ~uint8_t(VRNIC_GID_F_VALID) || g.reserved)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "unknown flags or reserved field");
    GidEntry& e = d.obj->gids[g.index];
    if (!(g.flags & VRNIC_GID_F_VALID)) {
        if (g.gid_type || g.vlan_id || !all_zero(g.gid) || !all_zero(g.mac))
            CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "delete with non-zero fields");
        e = GidEntry{};
        return gids_changed(d);
    }
    if (g.gid_type > VRNIC_GID_TYPE_ROCE_V2)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "unknown GID type");
    if (g.gid_type != VRNIC_GID_TYPE_ROCE_V2)
        CMD_FAIL(VRNIC_CMD_STATUS_UNSUPPORTED, "only RoCE v2 GIDs");
    if (g.vlan_id != VRNIC_VLAN_NONE && g.vlan_id > 4095)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "bad vlan_id");
    // Else a VM could receive what is sent to another one's GID, and send
    // with it as its source.
    if (d.fabric && !d.fabric->claim_gid(d.fabric_port, g.gid))
        CMD_FAIL(VRNIC_CMD_STATUS_BUSY, "GID of another VM's device");
    e.valid = true;
    memcpy(e.gid, g.gid, sizeof(e.gid));
    return gids_changed(d);
}

} // namespace vrnic
