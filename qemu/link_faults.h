// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Faults of a lossy link, for tests of what crosses the uplink: each frame
// is dropped, duplicated or held back behind the next one with the given
// percentages, drawn from a seeded generator so that a run can be repeated.
// A frame held back goes out after the next frame of the same burst, or
// when the burst ends (release()): nothing waits for a timer.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace vrnic {

struct LinkFaultRates {
    unsigned drop = 0, dup = 0, reorder = 0; // percent of frames, 0..50 each
    uint64_t seed = 1;
    bool any() const { return drop || dup || reorder; }
};

// "drop=P,dup=P,reorder=P,seed=N", any subset in any order.
bool parse_link_faults(const std::string& spec, LinkFaultRates* out, std::string* err);

struct LinkFaultCounters {
    uint64_t dropped = 0, duplicated = 0, reordered = 0;
};

class LinkFaults {
  public:
    using Emit = std::function<void(const uint8_t*, uint32_t)>;

    // `stream`: which of the link's directions, so that they differ.
    LinkFaults(const LinkFaultRates& r, unsigned stream) : rates_(r), rng_(r.seed * 2 + stream) {}
    // Hands the frame to `emit` zero, one or two times, now or after the
    // next one.
    void pass(const uint8_t* f, uint32_t len, const Emit& emit);
    // The end of a burst: a frame held back goes now.
    void release(const Emit& emit);
    // From any thread.
    LinkFaultCounters counters() const;

  private:
    bool chance(unsigned pct) { return pct && rng_() % 100 < pct; }
    static void count(std::atomic<uint64_t>& c) { c.fetch_add(1, std::memory_order_relaxed); }

    LinkFaultRates rates_;
    std::mt19937_64 rng_;
    std::vector<uint8_t> held_;
    bool holding_ = false;
    std::atomic<uint64_t> dropped_{0}, duplicated_{0}, reordered_{0};
};

} // namespace vrnic
