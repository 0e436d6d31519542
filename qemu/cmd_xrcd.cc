// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// XRC domain commands (section 10.25).
#include "cmd_util.h"

namespace vrnic {

CmdResult cmd_alloc_xrcd(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out) {
    const vrnic_cmd_alloc_xrcd& c = in.alloc_xrcd;
    if (c.reserved)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "reserved field");
    Uctx* u = d.find_uctx(c.uctx);
    if (!u)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "no such context");
    auto x = std::make_unique<Xrcd>();
    Xrcd* p = x.get();
    p->uctx = u;
    p->handle = d.obj->xrcds.insert(std::move(x));
    if (!p->handle)
        CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "max_xrcd reached");
    u->refs++;
    out.alloc_xrcd_resp.xrcd = p->handle;
    return cmd_ok();
}

CmdResult cmd_dealloc_xrcd(DeviceState& d, const vrnic_cmd& in, vrnic_cmd&) {
    uint32_t st = 0;
    Xrcd* x = named_object(d.obj->xrcds, in, st);
    if (!x)
        CMD_FAIL(st, "bad XRCD handle");
    if (x->refs)
        CMD_FAIL(VRNIC_CMD_STATUS_BUSY, "XRCD in use by an SRQ or QP");
    x->uctx->refs--;
    d.obj->xrcds.remove(in.handle.handle);
    return cmd_ok();
}

} // namespace vrnic
