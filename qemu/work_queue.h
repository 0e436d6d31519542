// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// One work queue in guest memory: a QP's SQ or RQ. A ring of
// 2^log_depth WQEs of 2^wqe_shift bytes, the producer index the guest
// publishes in its doorbell slot, and the device's free-running consumer
// index. All values were validated when the queue was created.
#pragma once

#include "ring_slot.h"
#include "shared_word.h"

#include <cstdint>

namespace vrnic {

struct WorkQueue {
    uint64_t ring = 0;
    uint32_t log_depth = 0;
    uint32_t wqe_shift = 0;
    uint32_t max_sge = 0;
    const uint32_t* pi_word = nullptr; // in the doorbell slot, guest-written
    uint32_t ci = 0;

    uint32_t depth() const { return 1u << log_depth; }
    uint32_t wqe_bytes() const { return 1u << wqe_shift; }
    // The producer index the guest published.
    uint32_t pi() const { return load_acquire(pi_word); }
    // A producer index at most one ring ahead of ci.
    bool index_ok(uint32_t pi) const { return ring_index_ok(pi, ci, depth()); }
    // The guest address of WQE `idx` (free-running).
    uint64_t slot(uint32_t idx) const { return ring_slot(ring, log_depth, wqe_bytes(), idx); }
};

} // namespace vrnic
