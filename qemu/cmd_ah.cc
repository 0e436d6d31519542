// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Address handles (section 10.18): a validated address vector owned by a PD,
// for the QP types that name the destination in each work request (UD); an
// RC QP keeps its path in the QP. Checked as strictly as a QP's path.
#include "cmd_util.h"

namespace vrnic {

const char* bad_av(const DeviceState& d, const vrnic_av& av) {
    if (av.sgid_index >= d.params.gid_tbl_len || !d.obj->gids[av.sgid_index].valid)
        return "sgid_index";
    if (av.flow_label >> 20 || av.sl > 15 || (av.vlan_id != VRNIC_VLAN_NONE && av.vlan_id > 4095))
        return "address vector";
    return nullptr;
}

CmdResult cmd_create_ah(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out) {
    const vrnic_cmd_create_ah& c = in.create_ah;
    if (c.reserved)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "reserved field");
    Pd* pd = d.obj->pds.find(c.pd);
    if (!pd)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "no such PD");
    if (const char* bad = bad_av(d, c.av))
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, bad);
    auto ah = std::make_unique<Ah>();
    Ah* a = ah.get();
    a->pd = pd;
    a->av = c.av;
    a->handle = d.obj->ahs.insert(std::move(ah));
    if (!a->handle)
        CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "max_ah reached");
    pd->refs++;
    out.create_ah_resp.ah = a->handle;
    return cmd_ok();
}

CmdResult cmd_destroy_ah(DeviceState& d, const vrnic_cmd& in, vrnic_cmd&) {
    uint32_t st = 0;
    Ah* a = named_object(d.obj->ahs, in, st);
    if (!a)
        CMD_FAIL(st, "bad AH handle");
    a->pd->refs--;
    d.obj->ahs.remove(in.handle.handle);
    return cmd_ok();
}

} // namespace vrnic
