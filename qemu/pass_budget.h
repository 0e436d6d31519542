// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The work one engine pass may do (device-interface.md 14.5): bytes moved,
// device-wide and per QP visit, so that no guest input makes a pass long
// enough to silence the heartbeat or starve other QPs. A large message is
// moved in slices across passes, as a NIC interleaves the packets of
// several QPs.
#pragma once

#include <algorithm>
#include <cstdint>

namespace vrnic {

class PassBudget {
  public:
    // What a WQE costs beyond its payload (a flushed or zero-length WQE
    // included), so that the WQE count of a pass is bounded too.
    static constexpr uint64_t kWqeCost = 64;

    // `pass_bytes`: what all QPs together may move in one pass;
    // `qp_bytes`: what one QP may move per visit (DeviceParams).
    void start_pass(uint64_t pass_bytes, uint64_t qp_bytes) {
        pass_left_ = std::max(pass_bytes, kWqeCost);
        qp_bytes_ = std::max(qp_bytes, kWqeCost);
        used_ = 0;
    }
    void start_qp() {
        qp_left_ = std::min(qp_bytes_, pass_left_);
        charged_ = false;
    }

    // A WQE step starts only while one more costs no more than what is left,
    // so a grant is never below kWqeCost (an atomic is never split).
    bool pass_exhausted() const { return pass_left_ < kWqeCost; }
    bool qp_exhausted() const { return qp_left_ < kWqeCost; }

    // Whether a step that cannot be split, costing `cost`, may run now: it
    // fits what the visit has left, or the visit has moved nothing yet (so
    // that a step larger than a whole visit still runs, alone).
    bool fits(uint64_t cost) const { return cost <= qp_left_ || !charged_; }

    // How many of `want` payload bytes the current QP may move now.
    uint64_t grant(uint64_t want) const { return std::min(want, qp_left_); }

    // Charges one WQE step that moved `bytes` (at most its grant; more
    // only empties what is left, it never wraps).
    void charge(uint64_t bytes) {
        const uint64_t c = std::max(bytes, kWqeCost);
        qp_left_ -= std::min(c, qp_left_);
        pass_left_ -= std::min(c, pass_left_);
        used_ += c;
        charged_ = true;
    }

    // Charged so far in this pass (tests, fuzzers).
    uint64_t used() const { return used_; }

  private:
    uint64_t pass_left_ = 0;
    uint64_t qp_bytes_ = 0;
    uint64_t qp_left_ = 0;
    uint64_t used_ = 0;
    bool charged_ = false; // in this QP visit
};

} // namespace vrnic
