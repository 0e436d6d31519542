// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A table of device objects addressed by 32-bit handles that carry a
// generation ("key") byte in the low 8 bits: a handle that named a destroyed
// object fails lookup instead of finding its successor in the same slot.
//
//   handle = (index << 8) | generation
//
// Index 0 is never used so that a zeroed handle is always invalid.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace vrnic {

template <typename T> class HandleTable {
  public:
    explicit HandleTable(uint32_t capacity) : slots_(capacity + 1) {}

    uint32_t capacity() const { return static_cast<uint32_t>(slots_.size() - 1); }
    uint32_t count() const { return count_; }

    // Takes obj and returns its handle; when the table is full returns 0 and
    // leaves obj with the caller.
    uint32_t insert(std::unique_ptr<T>&& obj) {
        for (uint32_t n = 0; n < capacity(); n++) {
            uint32_t i = next_ + n;
            if (i > capacity())
                i -= capacity();
            Slot& s = slots_[i];
            if (s.obj)
                continue;
            // Generation 0 is skipped: a handle is never (index << 8) | 0.
            s.gen = static_cast<uint8_t>(s.gen == 0xff ? 1 : s.gen + 1);
            s.obj = std::move(obj);
            next_ = i % capacity() + 1; // round-robin delays slot reuse
            count_++;
            return (i << 8) | s.gen;
        }
        return 0;
    }

    T* find(uint32_t handle) const {
        uint32_t i = handle >> 8;
        if (i == 0 || i > capacity())
            return nullptr;
        const Slot& s = slots_[i];
        if (!s.obj || s.gen != (handle & 0xff))
            return nullptr;
        return s.obj.get();
    }

    std::unique_ptr<T> remove(uint32_t handle) {
        if (!find(handle))
            return nullptr;
        count_--;
        return std::move(slots_[handle >> 8].obj);
    }

  private:
    struct Slot {
        std::unique_ptr<T> obj;
        uint8_t gen = 0;
    };
    std::vector<Slot> slots_;
    uint32_t next_ = 1;
    uint32_t count_ = 0;
};

} // namespace vrnic
