// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "events.h"

#include "log.h"
#include "ring_slot.h"
#include "shared_word.h"

#include <cstring>

namespace vrnic {

namespace {

uint32_t eq_consumer(DeviceState& d, const Eq& eq) {
    if (eq.db_slot == 0)
        return load_acquire(&d.regs()->aeq_ci);
    return load_acquire(&d.bar2.slot(VRNIC_KERNEL_DB_PAGE, eq.db_slot)->eq.ci);
}

} // namespace

bool post_eqe(DeviceState& d, Eq& eq, uint8_t type, uint32_t obj, uint64_t aux) {
    uint32_t depth = 1u << eq.log_depth;
    uint32_t ci = eq_consumer(d, eq);
    // Full or an out-of-range ci: never overwrite what the guest may not
    // have consumed (11.4).
    if (ring_used(eq.pi, ci) >= depth) {
        vrnic_regs* r = d.regs();
        count_in_reg(&r->eq_overflow);
        // Once per EQ: a guest that never consumes must not flood the log.
        if (!eq.overflow_logged)
            LOG_WARN("EQ %u full: dropping events (counted in eq_overflow)", eq.eqn);
        eq.overflow_logged = true;
        return false;
    }
    auto* e = ring_entry<vrnic_eqe>(d.mem, eq.ring, eq.log_depth, eq.pi);
    if (!e) // validated at creation; cannot happen
        return false;
    store_relaxed(&e->type, type);
    store_relaxed(&e->reserved, uint16_t(0));
    store_relaxed(&e->obj, obj);
    store_relaxed(&e->aux, aux);
    store_release(&e->owner, VRNIC_PHASE(eq.pi, eq.log_depth));
    eq.pi++;
    if (eq.db_slot == 0)
        store_release(&d.regs()->aeq_pi, eq.pi);
    d.raise(eq.vector);
    return true;
}

void post_async_event(DeviceState& d, uint8_t type, uint32_t obj, uint64_t aux) {
    LOG_DBG("async event type %u obj %u aux %llu", type, obj, (unsigned long long)aux);
    if (d.aeq_enabled)
        post_eqe(d, d.aeq, type, obj, aux);
}

bool post_cqe(DeviceState& d, Cq& cq, const vrnic_cqe& cqe, bool triggers_solicited) {
    if (cq.error)
        return false;
    uint32_t depth = 1u << cq.log_depth;
    uint32_t ci = load_acquire(&d.bar2.slot(cq.uctx->db_page, cq.db_slot)->cq.ci);
    uint32_t used = ring_used(cq.pi, ci);
    if (used >= depth) {
        // == depth: overflow; > depth: the guest wrote an impossible ci.
        cq.error = true;
        LOG_INFO("CQ %u %s (pi %u ci %u depth %u): CQ error", cq.cqn,
                 used == depth ? "overflow" : "invalid consumer index", cq.pi, ci, depth);
        post_async_event(d, VRNIC_EQE_CQ_ERROR, cq.cqn);
        return false;
    }
    auto* dst =
        reinterpret_cast<uint8_t*>(ring_entry<vrnic_cqe>(d.mem, cq.ring, cq.log_depth, cq.pi));
    if (!dst)
        return false;
    // Every CQE is stamped here, the one place CQEs are written.
    vrnic_cqe stamped = cqe;
    stamped.timestamp = d.wall();
    // Everything but the owner byte, then the owner byte with release.
    constexpr size_t owner_off = offsetof(vrnic_cqe, owner);
    memcpy(dst, &stamped, owner_off);
    memcpy(dst + owner_off + 1, reinterpret_cast<const uint8_t*>(&stamped) + owner_off + 1,
           VRNIC_CQE_SIZE - owner_off - 1);
    store_release(dst + owner_off, VRNIC_PHASE(cq.pi, cq.log_depth));
    cq.pi++;
    if (!cq.batch_pending) {
        cq.batch_pending = true;
        d.obj->dirty_cqs.push_back(&cq);
    }
    cq.batch_solicited_or_error |= triggers_solicited;
    return true;
}

void finish_cq_batches(DeviceState& d) {
    auto& dirty = d.obj->dirty_cqs;
    if (dirty.empty())
        return;
    // Pairs with the guest's arm store -> fence -> poll (12.3).
    full_fence();
    for (Cq* cq : dirty) {
        uint32_t arm = load_acquire(&d.bar2.slot(cq->uctx->db_page, cq->db_slot)->cq.arm);
        uint16_t next = static_cast<uint16_t>(VRNIC_CQ_ARM_NEXT_SN(arm));
        uint16_t sol = static_cast<uint16_t>(VRNIC_CQ_ARM_SOL_SN(arm));
        if (next != cq->last_next)
            cq->armed = CqArm::next;
        if (sol != cq->last_sol && cq->armed == CqArm::none)
            cq->armed = CqArm::solicited;
        cq->last_next = next;
        cq->last_sol = sol;
        if (cq->armed == CqArm::next ||
            (cq->armed == CqArm::solicited && cq->batch_solicited_or_error)) {
            // A full EQ drops the event, not the request: the CQ stays
            // armed and the next batch on it notifies (12.3). The event
            // owed is then due whatever that batch holds.
            if (post_eqe(d, *cq->eq, VRNIC_EQE_COMP, cq->cqn))
                cq->armed = CqArm::none;
            else
                cq->armed = CqArm::next;
        }
        cq->batch_pending = false;
        cq->batch_solicited_or_error = false;
    }
    dirty.clear();
}

uint32_t page_status(const DeviceState& d) {
    return load_relaxed(&d.regs()->need_wakeup) | (d.fatal ? VRNIC_DB_STATUS_FATAL : 0);
}

void publish_page_status(DeviceState& d) {
    const uint32_t bits = page_status(d);
    d.bar2.set_page_status(VRNIC_KERNEL_DB_PAGE, bits);
    if (d.fatal) {
        for (uint32_t p = VRNIC_FIRST_UCTX_DB_PAGE; p < d.obj->page_owner.size(); p++)
            d.bar2.set_page_status(p, bits);
        return;
    }
    for (uint32_t p : d.obj->live_pages)
        d.bar2.set_page_status(p, bits);
}

void enter_fatal(DeviceState& d, vrnic_fatal_code code) {
    if (d.fatal)
        return;
    LOG_ERR("device fatal error, code %u", code);
    d.fatal = true;
    vrnic_regs* r = d.regs();
    store_release(&r->fatal_code, uint32_t(code));
    store_release(&r->device_status, load_relaxed(&r->device_status) | VRNIC_DEV_STATUS_FATAL);
    publish_page_status(d);
    post_async_event(d, VRNIC_EQE_DEVICE_FATAL, code);
    d.raise(VRNIC_IRQ_ADMIN);
}

} // namespace vrnic
