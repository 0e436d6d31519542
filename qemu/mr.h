// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Memory regions on the data path: bounds, rights and address translation
// (device-interface.md 10.8). Every host pointer comes from GuestMemory::at().
#pragma once

#include "guest_memory.h"
#include "objects.h"

#include <cstdint>
#include <span>

namespace vrnic {

// True when [addr, addr + len) lies inside the MR (len > 0; overflow-safe).
// For a physical MR the range must lie inside guest RAM; a free
// fast-registration MR contains nothing.
bool mr_contains(const GuestMemory& mem, const Mr& mr, uint64_t addr, uint64_t len);

// The longest host run starting at MR address `addr`, at most `max` bytes,
// that is contiguous in guest physical memory. Precondition:
// mr_contains(addr, max). Empty only if the MR's pages left guest RAM, which
// registration rules out.
std::span<uint8_t> mr_run(const GuestMemory& mem, const Mr& mr, uint64_t addr, uint64_t max);

} // namespace vrnic
