// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "mr.h"

namespace vrnic {

bool mr_contains(const GuestMemory& mem, const Mr& mr, uint64_t addr, uint64_t len) {
    if (len == 0 || !mr.valid)
        return false;
    if (mr.phys)
        return mem.at(addr, len) != nullptr;
    if (addr < mr.iova)
        return false;
    uint64_t off = addr - mr.iova;
    return off < mr.length && len <= mr.length - off;
}

std::span<uint8_t> mr_run(const GuestMemory& mem, const Mr& mr, uint64_t addr, uint64_t max) {
    if (mr.phys) {
        uint8_t* p = mem.at(addr, max);
        return p ? std::span<uint8_t>(p, max) : std::span<uint8_t>();
    }
    const uint64_t psize = 1ull << mr.page_shift;
    const uint64_t off = (mr.iova & (psize - 1)) + (addr - mr.iova);
    uint64_t page = off >> mr.page_shift;
    const uint64_t start = mr.pages[page] + (off & (psize - 1));
    uint64_t run = psize - (off & (psize - 1));
    // Merge physically consecutive pages into one copy.
    while (run < max && page + 1 < mr.pages.size() &&
           mr.pages[page + 1] == mr.pages[page] + psize) {
        page++;
        run += psize;
    }
    if (run > max)
        run = max;
    uint8_t* p = mem.at(start, run);
    return p ? std::span<uint8_t>(p, run) : std::span<uint8_t>();
}

} // namespace vrnic
