// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Guest RAM as the model sees it: the memory-backend-file QEMU uses, mapped
// shared. With -machine pc and <= 2 GiB of RAM a guest physical address is the
// file offset, so the mapping is one linear range.
//
// at() is the ONE way the model turns a guest address into a host pointer; it
// is overflow-safe and rejects anything not wholly inside guest RAM. The guest
// may change its memory at any time: callers copy what they validate.
#pragma once

#include "mapping.h"
#include "unique_fd.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

namespace vrnic {

class GuestMemory {
  public:
    // Maps `size` bytes of `fd` from offset 0. The file must be at least that
    // long: touching a page past EOF would SIGBUS the model.
    static std::unique_ptr<GuestMemory> map_fd(int fd, uint64_t size, std::string* err);
    static std::unique_ptr<GuestMemory> open_file(const std::string& path, uint64_t size,
                                                  std::string* err);

    // Host pointer for [gpa, gpa + len), or nullptr when len is 0 or any byte
    // of the range lies outside guest RAM (including when gpa + len wraps).
    uint8_t* at(uint64_t gpa, uint64_t len) const {
        if (len == 0 || gpa >= size_ || len > size_ - gpa)
            return nullptr;
        return base_ + gpa;
    }

    bool read(uint64_t gpa, void* dst, uint64_t len) const {
        const uint8_t* p = at(gpa, len);
        if (!p)
            return false;
        std::memcpy(dst, p, len);
        return true;
    }
    bool write(uint64_t gpa, const void* src, uint64_t len) const {
        uint8_t* p = at(gpa, len);
        if (!p)
            return false;
        std::memcpy(p, src, len);
        return true;
    }

    uint64_t size() const { return size_; }

  private:
    // `m` is the whole reservation: a guard page, RAM, a guard page.
    GuestMemory(Mapping m, uint64_t size)
        : map_(std::move(m)), base_(map_.data() + 4096), size_(size) {}

    Mapping map_;
    uint8_t* base_;
    uint64_t size_;
};

} // namespace vrnic
