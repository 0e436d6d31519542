// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Scatter/gather lists over validated MR ranges, and the copy loop that moves
// a whole message between two of them (message-level transport: memmove of
// contiguous runs, no packetizing).
#pragma once

#include "guest_memory.h"
#include "objects.h"

#include <cstdint>
#include <span>

namespace vrnic {

// One validated piece of a message: an address range inside `mr`.
struct SgEntry {
    const Mr* mr;
    uint64_t addr;
    uint64_t len;
};

class SgCursor {
  public:
    // Over entries that already passed mr_contains().
    SgCursor(const GuestMemory& mem, const SgEntry* e, unsigned n) : mem_(&mem), e_(e), n_(n) {}
    // Over a private host buffer (inline data, atomic results).
    SgCursor(uint8_t* buf, uint64_t len) : buf_(buf), buf_len_(len) {}
    // Over a read-only buffer, as the source of sg_copy (which never writes
    // its source).
    static SgCursor reading(const uint8_t* buf, uint64_t len) {
        return SgCursor(const_cast<uint8_t*>(buf), len);
    }

    // The next contiguous run, at most `max` bytes, without consuming it.
    // Empty at the end of the list.
    std::span<uint8_t> peek(uint64_t max);
    void advance(uint64_t n);
    // Moves past `n` bytes, across entries (a slice resuming a message).
    void skip(uint64_t n);

  private:
    const GuestMemory* mem_ = nullptr;
    const SgEntry* e_ = nullptr;
    unsigned n_ = 0;
    unsigned i_ = 0;
    uint64_t off_ = 0; // within entry i_ or buf_
    uint8_t* buf_ = nullptr;
    uint64_t buf_len_ = 0;
};

// Copies `len` bytes from src to dst; returns the bytes copied (less only if
// a list ends early, which callers rule out by checking lengths first).
uint64_t sg_copy(SgCursor& dst, SgCursor& src, uint64_t len);

} // namespace vrnic
