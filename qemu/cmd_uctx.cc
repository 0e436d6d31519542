// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// User contexts and their doorbell pages (sections 10.4, 10.5).
#include "cmd_util.h"
#include "events.h"

#include <vector>

namespace vrnic {

CmdResult cmd_alloc_uctx(DeviceState& d, const vrnic_cmd&, vrnic_cmd& out) {
    auto& owner = d.obj->page_owner;
    uint32_t page = 0;
    for (uint32_t p = VRNIC_FIRST_UCTX_DB_PAGE; p < owner.size(); p++)
        if (!owner[p]) {
            page = p;
            break;
        }
    if (!page)
        CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "no free doorbell page");
    auto u = std::make_unique<Uctx>();
    Uctx* up = u.get();
    up->db_page = page;
    up->handle = d.obj->uctxs.insert(std::move(u));
    if (!up->handle)
        CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "max_uctx reached");
    owner[page] = up;
    d.obj->live_pages.push_back(page);
    d.bar2.zero_page(page);
    d.bar2.set_page_status(page, page_status(d));
    out.alloc_uctx_resp.uctx = up->handle;
    out.alloc_uctx_resp.db_page = page;
    return cmd_ok();
}

CmdResult cmd_dealloc_uctx(DeviceState& d, const vrnic_cmd& in, vrnic_cmd&) {
    uint32_t st = 0;
    Uctx* u = named_object(d.obj->uctxs, in, st);
    if (!u)
        CMD_FAIL(st, "bad user context handle");
    if (u->refs)
        CMD_FAIL(VRNIC_CMD_STATUS_BUSY, "context still owns objects");
    d.bar2.zero_page(u->db_page);
    d.obj->page_owner[u->db_page] = nullptr;
    std::erase(d.obj->live_pages, u->db_page);
    d.obj->uctxs.remove(in.handle.handle);
    return cmd_ok();
}

} // namespace vrnic
