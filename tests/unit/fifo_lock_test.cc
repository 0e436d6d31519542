// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// FifoLock: granted in the order asked for, and never to a try_lock() while
// someone waits, so a thread that takes it again at once cannot overtake.
#include "fifo_lock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace vrnic {
namespace {

using namespace std::chrono_literals;

TEST(FifoLock, WaitersGetItInTheOrderTheyAsked) {
    FifoLock l;
    l.lock();
    std::vector<int> order;
    std::atomic<bool> release{false};
    auto waiter = [&](int id) {
        l.lock();
        order.push_back(id);
        while (!release.load())
            std::this_thread::yield();
        l.unlock();
    };
    std::thread t1(waiter, 1);
    std::this_thread::sleep_for(50ms); // past its spin: queued
    std::thread t2(waiter, 2);
    std::this_thread::sleep_for(50ms);
    l.unlock();
    // Taken back at once, it is not free: t1 is next.
    EXPECT_FALSE(l.try_lock());
    release = true;
    t1.join();
    t2.join();
    EXPECT_EQ((std::vector<int>{1, 2}), order);
    EXPECT_TRUE(l.try_lock());
    l.unlock();
}

} // namespace
} // namespace vrnic
