// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// RAII owner of an mmap()ed range.
#pragma once

#include <cstddef>
#include <cstdint>
#include <sys/mman.h>
#include <utility>

namespace vrnic {

class Mapping {
  public:
    Mapping() = default;
    Mapping(void* base, size_t size) : base_(static_cast<uint8_t*>(base)), size_(size) {}
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    Mapping(Mapping&& o) noexcept
        : base_(std::exchange(o.base_, nullptr)), size_(std::exchange(o.size_, 0)) {}
    Mapping& operator=(Mapping&& o) noexcept {
        if (this != &o) {
            unmap();
            base_ = std::exchange(o.base_, nullptr);
            size_ = std::exchange(o.size_, 0);
        }
        return *this;
    }
    ~Mapping() { unmap(); }

    uint8_t* data() const { return base_; }
    size_t size() const { return size_; }
    bool valid() const { return base_ != nullptr; }

  private:
    void unmap() {
        if (base_)
            ::munmap(base_, size_);
        base_ = nullptr;
        size_ = 0;
    }
    uint8_t* base_ = nullptr;
    size_t size_ = 0;
};

} // namespace vrnic
