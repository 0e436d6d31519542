// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// ALLOC_MW and DEALLOC_MW (sections 10.28, 10.29). Windows live in the MR
// table: their rkeys and MRs' keys are one name space.
#include "cmd_util.h"

#include <memory>

namespace vrnic {

CmdResult cmd_alloc_mw(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out) {
    const vrnic_cmd_alloc_mw& r = in.alloc_mw;
    if (!all_zero(r.reserved))
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "reserved field set");
    if (r.type != VRNIC_MW_TYPE_1 && r.type != VRNIC_MW_TYPE_2)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "unknown window type");
    Pd* pd = d.obj->pds.find(r.pd);
    if (!pd)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "no such PD");
    auto mw = std::make_unique<Mr>();
    mw->pd = pd;
    mw->mw_type = r.type;
    mw->valid = false;
    Mr* m = mw.get();
    m->key = d.obj->mrs.insert(std::move(mw));
    if (!m->key)
        CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "max_mr reached");
    pd->refs++;
    out.alloc_mw_resp.mw = m->key;
    out.alloc_mw_resp.rkey = m->key;
    return cmd_ok();
}

// Named by its ALLOC_MW handle, whatever key byte binds gave it since.
CmdResult cmd_dealloc_mw(DeviceState& d, const vrnic_cmd& in, vrnic_cmd&) {
    if (in.handle.reserved)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "reserved field set");
    Mr* m = d.obj->mrs.find_any_low(in.handle.handle);
    if (!m || !m->mw_type)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "bad window handle");
    m->pd->refs--;
    d.obj->mrs.remove(m->key);
    return cmd_ok();
}

} // namespace vrnic
