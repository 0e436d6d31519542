// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Protection domains (sections 10.6, 10.7).
#include "cmd_util.h"

namespace vrnic {

CmdResult cmd_create_pd(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out) {
    if (in.create_pd.reserved)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "reserved field");
    Uctx* u = d.find_uctx(in.create_pd.uctx);
    if (!u)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "no such context");
    auto pd = std::make_unique<Pd>();
    Pd* p = pd.get();
    p->uctx = u;
    p->handle = d.obj->pds.insert(std::move(pd));
    if (!p->handle)
        CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "max_pd reached");
    u->refs++;
    out.create_pd_resp.pd = p->handle;
    return cmd_ok();
}

CmdResult cmd_destroy_pd(DeviceState& d, const vrnic_cmd& in, vrnic_cmd&) {
    uint32_t st = 0;
    Pd* p = named_object(d.obj->pds, in, st);
    if (!p)
        CMD_FAIL(st, "bad PD handle");
    if (p->refs)
        CMD_FAIL(VRNIC_CMD_STATUS_BUSY, "PD in use");
    p->uctx->refs--;
    d.obj->pds.remove(in.handle.handle);
    return cmd_ok();
}

} // namespace vrnic
