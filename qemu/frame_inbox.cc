// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "frame_inbox.h"

#include <cstring>
#include <sys/eventfd.h>
#include <unistd.h>

namespace vrnic {

FrameInbox::FrameInbox() : wake_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

void FrameInbox::open() {
    std::lock_guard<std::mutex> g(mu_);
    open_ = true;
}

void FrameInbox::close() {
    std::lock_guard<std::mutex> g(mu_);
    open_ = false;
    for (auto& f : q_)
        spare_.push_back(std::move(f.bytes));
    q_.clear();
    count_.store(0, std::memory_order_relaxed);
}

bool FrameInbox::push(const uint8_t* frame, uint32_t len, uint32_t from) {
    bool was_empty;
    {
        std::lock_guard<std::mutex> g(mu_);
        if (!open_ || q_.size() >= kDepth) {
            dropped_.fetch_add(1, std::memory_order_relaxed);
            return false;
        }
        std::vector<uint8_t> buf;
        if (!spare_.empty()) {
            buf = std::move(spare_.back());
            spare_.pop_back();
        }
        buf.assign(frame, frame + len);
        was_empty = q_.empty();
        q_.push_back({std::move(buf), from});
        count_.store(q_.size(), std::memory_order_relaxed);
    }
    // Only the first frame wakes the owner: it drains the inbox before it
    // sleeps again, and a frame into an inbox it emptied meanwhile finds
    // it empty and wakes it once more.
    if (was_empty) {
        uint64_t one = 1;
        (void)!write(wake_.get(), &one, sizeof(one));
    }
    return true;
}

size_t FrameInbox::drain(const Deliver& deliver) {
    std::vector<Frame> taken;
    {
        std::lock_guard<std::mutex> g(mu_);
        taken.swap(q_);
        count_.store(0, std::memory_order_relaxed);
    }
    for (const auto& f : taken)
        deliver(f.bytes.data(), static_cast<uint32_t>(f.bytes.size()), f.from);
    const size_t n = taken.size();
    std::lock_guard<std::mutex> g(mu_);
    for (auto& f : taken)
        if (spare_.size() < kDepth)
            spare_.push_back(std::move(f.bytes));
    if (q_.capacity() < kDepth) // keep the swapped-in vector's storage
        q_.reserve(kDepth);
    return n;
}

void FrameInbox::clear_wake() {
    uint64_t v;
    (void)!read(wake_.get(), &v, sizeof(v));
}

} // namespace vrnic
