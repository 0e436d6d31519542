// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The BAR2 memory: an anonymous memfd the model creates and hands to QEMU,
// which maps it as the ivshmem device's BAR2. ivshmem requires a power-of-two
// size.
#pragma once

#include "mapping.h"
#include "unique_fd.h"

#include <cstdint>
#include <memory>
#include <string>

namespace vrnic {

class SharedRegion {
  public:
    static std::unique_ptr<SharedRegion> create(const char* name, uint64_t size, std::string* err);

    int fd() const { return fd_.get(); }
    uint8_t* data() const { return map_.data(); }
    uint64_t size() const { return map_.size(); }

  private:
    SharedRegion(UniqueFd fd, Mapping m) : fd_(std::move(fd)), map_(std::move(m)) {}
    UniqueFd fd_;
    Mapping map_;
};

} // namespace vrnic
