// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// How the device model and the provider access words they share with the
// other side (doorbell pages, rings, BAR2): one aligned atomic access of the
// word's width, with the orderings of docs/device-interface.md section 1.
// C++ only; the kernel spells these READ_ONCE/WRITE_ONCE, dma_*mb and mb.

#ifndef VRNIC_ORDERING_H
#define VRNIC_ORDERING_H

#include <atomic>

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

} // namespace vrnic

#endif // VRNIC_ORDERING_H
