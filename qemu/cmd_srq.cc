// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// SRQ commands (section 10.17).
#include "cmd_util.h"
#include "shared_word.h"
#include "xrc.h"

#include <vector>

namespace vrnic {

CmdResult cmd_create_srq(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out) {
    const vrnic_cmd_create_srq& c = in.create_srq;
    const DeviceParams& p = d.params; // never BAR2's copies: the guest can write those
    Uctx* u = d.find_uctx(c.uctx);
    Pd* pd = d.obj->pds.find(c.pd);
    if (!u || !pd)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "no such context or PD");
    if (pd->uctx != u)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "PD of another context");
    Xrcd* x = nullptr;
    Cq* cq = nullptr;
    if (c.xrcd || c.cqn) {
        // An XRC SRQ: a domain and the CQ of its receives, both or neither.
        if (!c.xrcd || !c.cqn)
            CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "XRC SRQ without XRCD or CQ");
        x = d.obj->xrcds.find(c.xrcd);
        cq = d.obj->cqs.find(c.cqn);
        if (!x || !cq)
            CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "no such XRCD or CQ");
        if (!xrcd_usable(*x, *u) || cq->uctx != u)
            CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "XRCD or CQ of another context");
    }
    if (c.log_depth < VRNIC_WQ_LOG_DEPTH_MIN || c.log_depth > log2_floor(p.max_srq_wr))
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "log_depth");
    if (c.wqe_shift < VRNIC_RQ_WQE_SHIFT_MIN || c.wqe_shift > VRNIC_SQ_WQE_SHIFT_MAX)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "wqe_shift");
    if (c.max_sge > p.max_srq_sge || c.max_sge > VRNIC_RQ_MAX_SGE(c.wqe_shift))
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "max_sge");
    if (c.srq_limit >= (1u << c.log_depth))
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "srq_limit");
    if (uint32_t st = check_ring(d, c.ring_addr, uint64_t(1) << (c.log_depth + c.wqe_shift)))
        CMD_FAIL(st, "SRQ ring");

    uint32_t slot = u->alloc_slot();
    if (!slot)
        CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "doorbell page full");
    auto srq = std::make_unique<Srq>();
    Srq* s = srq.get();
    s->uctx = u;
    s->pd = pd;
    s->xrcd = x;
    s->cq = cq;
    vrnic_db_srq& db = d.bar2.slot(u->db_page, slot)->srq;
    s->wq = {.ring = c.ring_addr,
             .log_depth = c.log_depth,
             .wqe_shift = c.wqe_shift,
             .max_sge = c.max_sge,
             .pi_word = &db.pi};
    s->ci_word = &db.ci;
    s->db_slot = slot;
    s->limit = c.srq_limit;
    s->srqn = d.obj->srqs.insert(std::move(srq));
    if (!s->srqn) {
        u->free_slot(slot);
        CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "max_srq reached");
    }
    store_release(&d.bar2.slot(u->db_page, slot)->raw, uint64_t(0));
    u->refs++;
    pd->refs++;
    if (x) {
        x->refs++;
        cq->refs++;
    }
    out.create_srq_resp.srqn = s->srqn;
    out.create_srq_resp.db_slot = slot;
    return cmd_ok();
}

// Resize (since 1.6): the WQEs posted and not taken yet, [ci, pi) with the
// pi the guest published when the command runs, move to the same
// free-running indices in the new ring, and the device reads only the new
// ring from then on. The engine does not run during a command, so no WQE is
// taken half-way. A producer must not post into the old ring while the
// command runs (the provider holds its SRQ lock, the kernel writes its
// posts into both rings): a WQE published there later is lost, which harms
// only the SRQ's own context.
static uint32_t resize_srq(DeviceState& d, Srq& s, uint64_t ring, uint32_t log_depth) {
    const DeviceParams& p = d.params;
    if (log_depth <= s.wq.log_depth || log_depth > log2_floor(p.max_srq_wr))
        return VRNIC_CMD_STATUS_BAD_PARAM;
    if (uint32_t st = check_ring(d, ring, uint64_t(1) << (log_depth + s.wq.wqe_shift)))
        return st;
    const uint32_t pi = s.wq.pi();
    if (!s.wq.index_ok(pi))
        return VRNIC_CMD_STATUS_BAD_PARAM;
    // Read everything first: a guest may pass a ring that overlaps the old.
    const uint32_t n = pi - s.wq.ci, bytes = s.wq.wqe_bytes();
    std::vector<uint8_t> keep(size_t(n) * bytes);
    for (uint32_t k = 0; k < n; k++)
        if (!d.mem.read(s.wq.slot(s.wq.ci + k), &keep[size_t(k) * bytes], bytes))
            return VRNIC_CMD_STATUS_BAD_ADDR;
    WorkQueue next = s.wq;
    next.ring = ring;
    next.log_depth = log_depth;
    for (uint32_t k = 0; k < n; k++)
        if (!d.mem.write(next.slot(s.wq.ci + k), &keep[size_t(k) * bytes], bytes))
            return VRNIC_CMD_STATUS_BAD_ADDR;
    s.wq = next;
    return VRNIC_CMD_STATUS_OK;
}

CmdResult cmd_modify_srq(DeviceState& d, const vrnic_cmd& in, vrnic_cmd&) {
    const vrnic_cmd_modify_srq& m = in.modify_srq;
    Srq* s = d.obj->srqs.find(m.srqn);
    if (!s)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "no such SRQ");
    if (m.attr_mask & ~uint32_t(VRNIC_SRQ_ATTR_MAX_WR | VRNIC_SRQ_ATTR_LIMIT))
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "unknown SRQ attribute");
    const bool resize = m.attr_mask & VRNIC_SRQ_ATTR_MAX_WR;
    // A value outside the mask is reserved: 0.
    if (m.max_wr || (!(m.attr_mask & VRNIC_SRQ_ATTR_LIMIT) && m.srq_limit) ||
        (!resize && (m.ring_addr || m.log_depth)))
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "value of an attribute not in the mask");
    if (!all_zero(m.reserved))
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "reserved");
    const uint32_t depth = resize && m.log_depth < 32 ? 1u << m.log_depth : s->wq.depth();
    if (m.srq_limit >= depth)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "srq_limit");
    if (resize)
        if (uint32_t st = resize_srq(d, *s, m.ring_addr, m.log_depth))
            CMD_FAIL(st, "SRQ resize");
    if (m.attr_mask & VRNIC_SRQ_ATTR_LIMIT)
        s->limit = m.srq_limit;
    return cmd_ok();
}

CmdResult cmd_destroy_srq(DeviceState& d, const vrnic_cmd& in, vrnic_cmd&) {
    uint32_t st = 0;
    Srq* s = named_object(d.obj->srqs, in, st);
    if (!s)
        CMD_FAIL(st, "bad SRQ handle");
    if (s->refs)
        CMD_FAIL(VRNIC_CMD_STATUS_BUSY, "SRQ in use by a QP");
    if (s->xrcd) {
        xrc_srq_gone(d, *s);
        s->xrcd->refs--;
        s->cq->refs--;
    }
    s->uctx->free_slot(s->db_slot);
    store_release(&d.bar2.slot(s->uctx->db_page, s->db_slot)->raw, uint64_t(0));
    s->uctx->refs--;
    s->pd->refs--;
    d.obj->srqs.remove(in.handle.handle);
    return cmd_ok();
}

} // namespace vrnic
