// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// A table of device objects whose handles travel between guests' QPs and so
// must not be guessable: QPNs and memory keys (device-interface.md 9.4).
//
//   handle = P(gen * slots + index) << low_bits | low
//
// P is a keyed permutation of 24-bit values (one secret per table, drawn at
// every device reset), index the object's slot, gen the slot's generation
// and low, for memory keys, the key byte (random here). A lookup inverts P:
// O(1). Freed slots queue behind every other free slot, and the table has
// at least `quarantine` slots more than objects may live, so a slot is reused only
// after at least `quarantine` other allocations, each time with the next
// generation: a handle comes back only after quarantine * (generations - 1)
// allocations.
#pragma once

#include "key_gen.h"

#include <vrnic_dev.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <vector>

namespace vrnic {

struct KeyedLayout {
    uint32_t quarantine = 65536;
    unsigned low_bits = 0;
    uint32_t min_handle = 1, max_handle = Permutation24::kMask;

    // QPNs: 24 bits, never 0 or 1 (SMI, GSI) nor 0xffffff (multicast).
    static KeyedLayout qpns(uint32_t quarantine) {
        return {quarantine, 0, VRNIC_QPN_MIN, VRNIC_QPN_MASK - 1};
    }
    // Memory keys: 24 bits of P above the key byte; never 0.
    static KeyedLayout mr_keys(uint32_t quarantine) { return {quarantine, 8, 1, UINT32_MAX}; }
};

template <typename T> class KeyedTable {
  public:
    KeyedTable(uint32_t capacity, const KeyedLayout& l, KeyGen& g)
        : layout_(l), capacity_(capacity), gen_src_(g), perm_(g) {
        // A power of two of slots, so that the slot is the low bits of
        // P's input; at least 16 generations per slot.
        constexpr uint32_t kSpace = Permutation24::kMask + 1;
        const uint64_t want = uint64_t(capacity) + l.quarantine;
        nslots_ = static_cast<uint32_t>(std::bit_ceil(std::min<uint64_t>(want, kSpace / 16)));
        gens_ = kSpace / nslots_;
        slots_.resize(nslots_);
        free_.resize(nslots_);
        for (uint32_t i = 0; i < nslots_; i++)
            free_[i] = i;
        free_count_ = nslots_;
    }

    uint32_t capacity() const { return capacity_; }
    uint32_t count() const { return count_; }
    // Allocations a handle stays unused after its object is removed, at least.
    uint64_t reuse_distance() const { return uint64_t(nslots_ - capacity_) * (gens_ - 4); }

    // Takes obj and returns its handle; when the table is full returns 0 and
    // leaves obj with the caller.
    uint32_t insert(std::unique_ptr<T>&& obj) {
        if (count_ >= capacity_ || !free_count_)
            return 0;
        const uint32_t i = free_[free_head_];
        free_head_ = (free_head_ + 1) & (nslots_ - 1);
        free_count_--;
        Slot& s = slots_[i];
        uint32_t h;
        do { // skips the few reserved values (at most 3 of gens_ >= 16)
            s.gen = (s.gen + 1) % gens_;
            const uint32_t low =
                layout_.low_bits ? static_cast<uint32_t>(gen_src_.next()) & low_mask() : 0;
            h = perm_.forward(s.gen * nslots_ + i) << layout_.low_bits | low;
        } while (h < layout_.min_handle || h > layout_.max_handle);
        s.handle = h;
        s.obj = std::move(obj);
        count_++;
        return h;
    }

    T* find(uint32_t handle) const {
        if (handle < layout_.min_handle || handle > layout_.max_handle)
            return nullptr;
        const uint32_t x = perm_.inverse((handle >> layout_.low_bits) & Permutation24::kMask);
        const Slot& s = slots_[x & (nslots_ - 1)];
        return s.obj && s.handle == handle ? s.obj.get() : nullptr;
    }

    // The object whose handle equals `handle` but for the low bits (a fast-
    // registration MR named by a key whose key byte may have changed).
    T* find_any_low(uint32_t handle) const {
        const uint32_t x = perm_.inverse((handle >> layout_.low_bits) & Permutation24::kMask);
        const Slot& s = slots_[x & (nslots_ - 1)];
        return s.obj && (s.handle ^ handle) >> layout_.low_bits == 0 ? s.obj.get() : nullptr;
    }

    // Gives the object at `handle` new low bits; the old handle then names
    // nothing. False if `handle` names nothing or the new one is reserved.
    bool set_low(uint32_t handle, uint32_t low) {
        const uint32_t nh = (handle & ~low_mask()) | (low & low_mask());
        if (!find(handle) || nh < layout_.min_handle || nh > layout_.max_handle)
            return false;
        const uint32_t x = perm_.inverse((handle >> layout_.low_bits) & Permutation24::kMask);
        slots_[x & (nslots_ - 1)].handle = nh;
        return true;
    }

    std::unique_ptr<T> remove(uint32_t handle) {
        if (!find(handle))
            return nullptr;
        const uint32_t x = perm_.inverse((handle >> layout_.low_bits) & Permutation24::kMask);
        const uint32_t i = x & (nslots_ - 1);
        free_[(free_head_ + free_count_) & (nslots_ - 1)] = i;
        free_count_++;
        count_--;
        slots_[i].handle = 0;
        return std::move(slots_[i].obj);
    }

    template <typename F> void for_each(F&& f) const {
        for (const Slot& s : slots_)
            if (s.obj)
                f(s.handle, *s.obj);
    }

  private:
    struct Slot {
        std::unique_ptr<T> obj;
        uint32_t handle = 0;
        uint32_t gen = 0;
    };
    uint32_t low_mask() const { return (1u << layout_.low_bits) - 1; }

    KeyedLayout layout_;
    uint32_t capacity_;
    KeyGen& gen_src_;
    Permutation24 perm_;
    uint32_t nslots_ = 0, gens_ = 0;
    std::vector<Slot> slots_;
    std::vector<uint32_t> free_; // FIFO ring of free slots
    uint32_t free_head_ = 0, free_count_ = 0;
    uint32_t count_ = 0;
};

} // namespace vrnic
