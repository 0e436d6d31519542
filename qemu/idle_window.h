// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// How long the device thread busy-polls before it sleeps (section 8).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>

namespace vrnic {

// The long window (spin) unless this thread was preempted lately, i.e.
// another thread (a vCPU) wanted its core; then the short one (idle) for a
// back-off period that doubles while preemptions keep coming. That period
// is also when the thread hands a kicker its CPU back early (port.cc).
class IdleWindow {
  public:
    // Counts the thread's involuntary context switches (ru_nivcsw).
    using PreemptionCount = std::function<long()>;

    IdleWindow(uint64_t short_ns, uint64_t long_ns, PreemptionCount count = thread_preemptions)
        : short_(short_ns), long_(long_ns), count_(std::move(count)), seen_(count_()) {}

    uint64_t ns() const { return now_short_ ? short_ : long_; }
    // Another thread wanted this one's CPU lately.
    bool contended() const { return now_short_; }

    // At each decision to sleep, with the time (ns). The count is a
    // system call: read it at most every kCheckNs.
    void update(uint64_t now) {
        if (now - checked_ >= kCheckNs) {
            checked_ = now;
            const long c = count_();
            if (c != seen_) {
                backoff_ = now < short_until_ + backoff_ ? std::min(backoff_ * 2, kMaxBackoff)
                                                         : kMinBackoff;
                short_until_ = now + backoff_;
            }
            seen_ = c;
        }
        now_short_ = now < short_until_;
    }

    static constexpr uint64_t kMinBackoff = 100'000'000, kMaxBackoff = 5'000'000'000;
    static constexpr uint64_t kCheckNs = 1'000'000;

    // getrusage(RUSAGE_THREAD).ru_nivcsw of the calling thread.
    static long thread_preemptions();

  private:
    uint64_t short_, long_;
    PreemptionCount count_;
    long seen_;
    uint64_t short_until_ = 0, backoff_ = kMinBackoff, checked_ = 0;
    bool now_short_ = false;
};

} // namespace vrnic
