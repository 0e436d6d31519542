// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Event queues (sections 10.20, 10.21).
#include "cmd_util.h"
#include "shared_word.h"

#include <algorithm>

namespace vrnic {

CmdResult cmd_create_eq(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out) {
    const vrnic_cmd_create_eq& c = in.create_eq;
    uint32_t max_log = std::min<uint32_t>(VRNIC_EQ_LOG_DEPTH_MAX, log2_floor(d.params.max_eqe));
    if (c.log_depth < VRNIC_EQ_LOG_DEPTH_MIN || c.log_depth > max_log)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "EQ log_depth out of range");
    if (c.vector < VRNIC_IRQ_COMP_BASE || c.vector >= d.params.num_vectors)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "EQ vector out of range");
    if (uint32_t st = check_ring(d, c.ring_addr, uint64_t(VRNIC_EQE_SIZE) << c.log_depth))
        CMD_FAIL(st, "EQ ring");
    Uctx& k = d.obj->kernel_uctx;
    uint32_t slot = k.alloc_slot();
    if (!slot)
        CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "kernel doorbell page full");
    auto eq = std::make_unique<Eq>();
    Eq* e = eq.get();
    e->ring = c.ring_addr;
    e->log_depth = c.log_depth;
    e->vector = c.vector;
    e->db_slot = slot;
    e->eqn = d.obj->eqs.insert(std::move(eq));
    if (!e->eqn) {
        k.free_slot(slot);
        CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "max_comp_eqs reached");
    }
    store_release(&d.bar2.slot(VRNIC_KERNEL_DB_PAGE, slot)->raw, uint64_t(0));
    out.create_eq_resp.eqn = e->eqn;
    out.create_eq_resp.db_slot = slot;
    return cmd_ok();
}

CmdResult cmd_destroy_eq(DeviceState& d, const vrnic_cmd& in, vrnic_cmd&) {
    uint32_t st = 0;
    Eq* e = named_object(d.obj->eqs, in, st);
    if (!e)
        CMD_FAIL(st, "bad EQ handle");
    if (e->refs)
        CMD_FAIL(VRNIC_CMD_STATUS_BUSY, "EQ in use by a CQ");
    d.obj->kernel_uctx.free_slot(e->db_slot);
    store_release(&d.bar2.slot(VRNIC_KERNEL_DB_PAGE, e->db_slot)->raw, uint64_t(0));
    d.obj->eqs.remove(in.handle.handle);
    return cmd_ok();
}

} // namespace vrnic
