// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The frames the fabric's switch has for one VM: a bounded queue that any
// port thread fills and only the owning port thread drains into its VM's
// RX ring. The owner sleeps in epoll on wake_fd(), which becomes readable
// when a frame arrives in an empty inbox.
#pragma once

#include "unique_fd.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace vrnic {

class FrameInbox {
  public:
    // Frames the inbox holds at most: a VM that does not take its frames
    // loses the newest ones (counted), never blocks the sender.
    static constexpr size_t kDepth = 256;

    FrameInbox();

    // Accepts frames only while a VM is attached to the owning port.
    void open();
    // Detaches: drops what is queued and refuses more.
    void close();

    // Any thread: copies in the frame that port `from` of the switch sent.
    // False when closed or full.
    bool push(const uint8_t* frame, uint32_t len, uint32_t from);

    // The owner: true when frames may be waiting (a relaxed hint).
    bool pending() const { return count_.load(std::memory_order_relaxed) != 0; }
    // The owner: hands each queued frame, with the port it came from, to
    // `deliver`, outside the lock. Returns the number of frames taken.
    using Deliver = std::function<void(const uint8_t* frame, uint32_t len, uint32_t from)>;
    size_t drain(const Deliver& deliver);

    // The owner's wake-up: readable once a frame arrived in an empty inbox.
    int wake_fd() const { return wake_.get(); }
    // The owner, after a wake-up: resets wake_fd().
    void clear_wake();

    uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

  private:
    struct Frame {
        std::vector<uint8_t> bytes;
        uint32_t from;
    };
    std::mutex mu_;
    bool open_ = false;                       // under mu_
    std::vector<Frame> q_;                    // under mu_
    std::vector<std::vector<uint8_t>> spare_; // under mu_: buffers to reuse
    std::atomic<size_t> count_{0};
    std::atomic<uint64_t> dropped_{0};
    UniqueFd wake_;
};

} // namespace vrnic
