// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The memory invariant of the fuzz targets: whatever a guest does, the host
// memory the model holds for it is bounded by the device's parameters and
// the guest's RAM. The page lists of all MRs together stay within twice the
// guest's 4 KiB pages (device-interface.md 10.8), and everything else grows
// only with the object tables, whose sizes are fixed; the budget's account
// matches the lists the MRs hold. A breach aborts, which the fuzzer reports
// as a crash.
#pragma once

#include "device_state.h"

#include <cstdio>
#include <cstdlib>

namespace vrnic::fuzz {

struct ModelMemory {
    uint64_t list_entries = 0; // page-list entries held by all MRs
    uint64_t charged = 0;      // what their charges on the budget say
    uint64_t bytes = 0;        // objects, page lists and the engine's lists
};

inline ModelMemory model_memory(const DeviceState& d) {
    ModelMemory m;
    const Objects& o = *d.obj;
    o.mrs.for_each([&](uint32_t, const Mr& mr) {
        m.list_entries += mr.pages.capacity();
        m.charged += mr.pages_charge.entries();
        m.bytes += sizeof(Mr) + mr.pages.capacity() * sizeof(uint64_t);
    });
    o.qps.for_each([&](uint32_t, const Qp& qp) {
        if (qp.inflight)
            m.bytes += sizeof(MsgInFlight);
        if (qp.srq_taken)
            m.bytes += sizeof(RecvWqe);
    });
    m.bytes += o.uctxs.count() * sizeof(Uctx) + o.pds.count() * sizeof(Pd) +
               o.cqs.count() * sizeof(Cq) + o.qps.count() * sizeof(Qp) +
               o.srqs.count() * sizeof(Srq) + o.ahs.count() * sizeof(Ah) +
               o.eqs.count() * sizeof(Eq);
    m.bytes += (o.page_owner.capacity() + o.active_qps.capacity() + o.dirty_cqs.capacity()) *
                   sizeof(void*) +
               o.live_pages.capacity() * sizeof(uint32_t);
    return m;
}

// The bound, from the parameters and guest RAM alone.
inline uint64_t model_memory_bound(const DeviceParams& p, uint64_t ram_bytes,
                                   uint64_t* max_list_entries) {
    *max_list_entries = 2 * (ram_bytes / VRNIC_PAGE_SIZE);
    const uint64_t tables = p.max_uctx() * sizeof(Uctx) + p.max_pd * sizeof(Pd) +
                            p.max_mr * sizeof(Mr) + p.max_cq * sizeof(Cq) + p.max_qp * sizeof(Qp) +
                            p.max_srq * sizeof(Srq) + p.max_ah * sizeof(Ah) +
                            p.max_comp_eqs() * sizeof(Eq) +
                            p.max_qp * sizeof(MsgInFlight) + // one message in flight per QP
                            p.max_qp * sizeof(RecvWqe);      // one SRQ WQE taken per QP
    // Vectors may hold twice what they need after growing.
    const uint64_t lists = 2 * ((p.db_page_count() + 1 + p.max_qp + p.max_cq) * sizeof(void*) +
                                p.db_page_count() * sizeof(uint32_t));
    return tables + *max_list_entries * sizeof(uint64_t) + lists;
}

inline void check_model_memory(const DeviceState& d) {
    uint64_t max_entries = 0;
    const uint64_t bound = model_memory_bound(d.params, d.mem.size(), &max_entries);
    const ModelMemory m = model_memory(d);
    const PageBudget& budget = d.obj->mr_pages;
    if (m.list_entries > max_entries || m.bytes > bound || m.charged != m.list_entries ||
        budget.used() != m.charged || budget.used() > budget.limit()) {
        fprintf(stderr,
                "model memory invariant: %llu page-list entries (at most %llu), %llu charged, "
                "budget %llu of %llu, %llu bytes (at most %llu)\n",
                (unsigned long long)m.list_entries, (unsigned long long)max_entries,
                (unsigned long long)m.charged, (unsigned long long)budget.used(),
                (unsigned long long)budget.limit(), (unsigned long long)m.bytes,
                (unsigned long long)bound);
        abort();
    }
}

} // namespace vrnic::fuzz
