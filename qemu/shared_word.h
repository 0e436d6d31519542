// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Accesses to words shared with the guest (BAR2 and guest RAM). The guest
// runs concurrently, so every shared word is read or written with one aligned
// atomic access of its width (device-interface.md section 1).
#pragma once

#include <atomic>
#include <cstdint>

namespace vrnic {

template <typename T> inline T load_acquire(const T* p) {
    return std::atomic_ref<T>(*const_cast<T*>(p)).load(std::memory_order_acquire);
}
template <typename T> inline T load_relaxed(const T* p) {
    return std::atomic_ref<T>(*const_cast<T*>(p)).load(std::memory_order_relaxed);
}
// The value converts to the word's type (__u64 and uint64_t differ in C++).
template <typename T, typename V> inline void store_release(T* p, V v) {
    std::atomic_ref<T>(*p).store(static_cast<T>(v), std::memory_order_release);
}
template <typename T, typename V> inline void store_relaxed(T* p, V v) {
    std::atomic_ref<T>(*p).store(static_cast<T>(v), std::memory_order_relaxed);
}
inline void full_fence() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

// Producer/consumer validation of free-running indices (section 6).
inline uint32_t ring_used(uint32_t pi, uint32_t ci) {
    return pi - ci;
}
inline bool ring_index_ok(uint32_t pi, uint32_t ci, uint32_t depth) {
    return ring_used(pi, ci) <= depth;
}

} // namespace vrnic
