// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Words shared with the guest (BAR2 and guest RAM). The guest runs
// concurrently, so every shared word is read or written with the accesses of
// vrnic_ordering.h, which the provider uses too; the free-running indices the
// guest writes are checked here before use.
#pragma once

#include <cstdint>

#include <vrnic_ordering.h>

namespace vrnic {

// Producer/consumer validation of free-running indices (section 6).
inline uint32_t ring_used(uint32_t pi, uint32_t ci) {
    return pi - ci;
}
inline bool ring_index_ok(uint32_t pi, uint32_t ci, uint32_t depth) {
    return ring_used(pi, ci) <= depth;
}

// Counts one event in a counter of the register page (eq_overflow, the
// drop counters): only the device writes it, the driver reads it any time.
inline void count_in_reg(uint32_t* reg) {
    store_release(reg, load_relaxed(reg) + 1);
}
// Adds to a counter of the register page (4.5; the 32-bit ones wrap).
// Only the thread that holds the device's lock writes its counters.
template <typename T> inline void add_in_reg(T* reg, uint64_t n) {
    static_assert(sizeof(T) == 8 || sizeof(T) == 4);
    store_release(reg, load_relaxed(reg) + n);
}

} // namespace vrnic
