// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A lock that is granted in the order it was asked for. A device's own
// thread takes its lock for every pass, back to back; with a plain mutex it
// would take it again before another VM's thread, woken by the unlock, gets
// to run, and that thread could wait for as long as the device is busy.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace vrnic {

class FifoLock {
  public:
    void lock() {
        wanting_.fetch_add(1, std::memory_order_relaxed);
        take();
        wanting_.fetch_sub(1, std::memory_order_relaxed);
    }
    // Only when nobody holds it or waits for it.
    bool try_lock() {
        std::lock_guard<std::mutex> g(mu_);
        if (serving_ != next_)
            return false;
        next_++;
        return true;
    }
    void unlock() {
        {
            std::lock_guard<std::mutex> g(mu_);
            serving_++;
        }
        cv_.notify_all();
    }

    // Whether another thread is waiting for it (the holder then keeps it
    // short).
    bool wanted() const { return wanting_.load(std::memory_order_relaxed) > 0; }

  private:
    void take() {
        // Holders keep it for a pass or one message: microseconds, less
        // than a sleep and a wake-up in the queue would take.
        for (unsigned i = 0; i < kSpins; i++) {
            if (serving_.load(std::memory_order_relaxed) == next_.load(std::memory_order_relaxed) &&
                try_lock())
                return;
            __builtin_ia32_pause();
        }
        std::unique_lock<std::mutex> g(mu_);
        const uint64_t ticket = next_++;
        cv_.wait(g, [&] { return serving_ == ticket; });
    }

    static constexpr unsigned kSpins = 2000;
    std::atomic<int> wanting_{0};
    std::mutex mu_;
    std::condition_variable cv_;
    // Changed under mu_; read without it only to see when to try.
    std::atomic<uint64_t> next_{0}, serving_{0}; // free when equal
};

} // namespace vrnic
