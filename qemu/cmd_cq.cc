// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// CQ commands (sections 10.10-10.12).
#include "cmd_util.h"
#include "ring_slot.h"
#include "shared_word.h"

#include <algorithm>
#include <vector>

namespace vrnic {

namespace {

uint32_t check_cq_ring(const DeviceState& d, uint64_t ring, uint32_t log_depth) {
    if (log_depth < VRNIC_CQ_LOG_DEPTH_MIN || log_depth > log2_floor(d.params.max_cqe))
        return VRNIC_CMD_STATUS_BAD_PARAM;
    return check_ring(d, ring, uint64_t(VRNIC_CQE_SIZE) << log_depth);
}

} // namespace

CmdResult cmd_create_cq(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out) {
    const vrnic_cmd_create_cq& c = in.create_cq;
    if (c.flags)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "CQ flags != 0");
    Uctx* u = d.find_uctx(c.uctx);
    if (!u)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "no such context");
    Eq* eq = d.obj->eqs.find(c.eqn);
    if (!eq)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "no such completion EQ");
    if (uint32_t st = check_cq_ring(d, c.ring_addr, c.log_depth))
        CMD_FAIL(st, "CQ ring");
    uint32_t slot = u->alloc_slot();
    if (!slot)
        CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "doorbell page full");
    auto cq = std::make_unique<Cq>();
    Cq* q = cq.get();
    q->uctx = u;
    q->eq = eq;
    q->ring = c.ring_addr;
    q->log_depth = c.log_depth;
    q->db_slot = slot;
    q->cqn = d.obj->cqs.insert(std::move(cq));
    if (!q->cqn) {
        u->free_slot(slot);
        CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "max_cq reached");
    }
    store_release(&d.bar2.slot(u->db_page, slot)->raw, uint64_t(0));
    u->refs++;
    eq->refs++;
    out.create_cq_resp.cqn = q->cqn;
    out.create_cq_resp.db_slot = slot;
    return cmd_ok();
}

CmdResult cmd_destroy_cq(DeviceState& d, const vrnic_cmd& in, vrnic_cmd&) {
    uint32_t st = 0;
    Cq* q = named_object(d.obj->cqs, in, st);
    if (!q)
        CMD_FAIL(st, "bad CQ handle");
    if (q->refs)
        CMD_FAIL(VRNIC_CMD_STATUS_BUSY, "CQ in use by a QP");
    auto& dirty = d.obj->dirty_cqs;
    dirty.erase(std::remove(dirty.begin(), dirty.end(), q), dirty.end());
    q->uctx->free_slot(q->db_slot);
    store_release(&d.bar2.slot(q->uctx->db_page, q->db_slot)->raw, uint64_t(0));
    q->uctx->refs--;
    q->eq->refs--;
    d.obj->cqs.remove(in.handle.handle);
    return cmd_ok();
}

CmdResult cmd_resize_cq(DeviceState& d, const vrnic_cmd& in, vrnic_cmd&) {
    const vrnic_cmd_resize_cq& c = in.resize_cq;
    Cq* q = d.obj->cqs.find(c.cqn);
    if (!q)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "no such CQ");
    if (uint32_t st = check_cq_ring(d, c.ring_addr, c.log_depth))
        CMD_FAIL(st, "CQ ring");
    const uint32_t old_depth = 1u << q->log_depth, new_depth = 1u << c.log_depth;
    const uint32_t ci = load_acquire(&d.bar2.slot(q->uctx->db_page, q->db_slot)->cq.ci);
    const uint32_t outstanding = ring_used(q->pi, ci);
    if (outstanding > old_depth)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "invalid CQ consumer index");
    if (outstanding > new_depth)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "outstanding CQEs do not fit the new depth");
    // Copy the outstanding CQEs first: the rings may overlap.
    std::vector<vrnic_cqe> keep(outstanding);
    for (uint32_t k = 0; k < outstanding; k++) {
        uint32_t j = ci + k;
        d.mem.read(ring_slot(q->ring, q->log_depth, VRNIC_CQE_SIZE, j), &keep[k], VRNIC_CQE_SIZE);
    }
    for (uint32_t k = 0; k < new_depth; k++) {
        uint32_t j = ci + k;
        vrnic_cqe e = k < outstanding ? keep[k] : vrnic_cqe{};
        uint8_t phase = VRNIC_PHASE(j, c.log_depth);
        e.owner = k < outstanding ? phase : uint8_t(phase ^ 1);
        d.mem.write(ring_slot(c.ring_addr, c.log_depth, VRNIC_CQE_SIZE, j), &e, VRNIC_CQE_SIZE);
    }
    q->ring = c.ring_addr;
    q->log_depth = c.log_depth;
    return cmd_ok();
}

} // namespace vrnic
