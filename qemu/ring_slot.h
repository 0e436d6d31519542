// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Slot `idx` (a free-running index) of a ring of 2^log_depth entries of
// `entry_bytes` each at guest address `base`. Every ring was checked to lie
// wholly in guest RAM when it was set up, so the sum cannot overflow.
#pragma once

#include "guest_memory.h"

#include <cstdint>

namespace vrnic {

inline uint64_t ring_slot(uint64_t base, uint32_t log_depth, uint64_t entry_bytes, uint32_t idx) {
    return base + uint64_t(idx & ((1u << log_depth) - 1)) * entry_bytes;
}

// The entry itself, through the bounds-checked accessor (nullptr outside RAM).
template <typename T>
T* ring_entry(const GuestMemory& mem, uint64_t base, uint32_t log_depth, uint32_t idx) {
    return reinterpret_cast<T*>(mem.at(ring_slot(base, log_depth, sizeof(T), idx), sizeof(T)));
}

} // namespace vrnic
