// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "shared_region.h"

#include <cerrno>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

namespace vrnic {

std::unique_ptr<SharedRegion> SharedRegion::create(const char* name, uint64_t size,
                                                   std::string* err) {
    if (size < 4096 || (size & (size - 1)) != 0) {
        *err = "BAR2 size " + std::to_string(size) + " is not a power of two >= 4096";
        return nullptr;
    }
    UniqueFd fd(memfd_create(name, MFD_CLOEXEC));
    if (!fd) {
        *err = std::string("memfd_create: ") + strerror(errno);
        return nullptr;
    }
    if (ftruncate(fd.get(), static_cast<off_t>(size)) < 0) {
        *err = std::string("ftruncate BAR2: ") + strerror(errno);
        return nullptr;
    }
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    if (p == MAP_FAILED) {
        *err = std::string("mmap BAR2: ") + strerror(errno);
        return nullptr;
    }
    return std::unique_ptr<SharedRegion>(new SharedRegion(std::move(fd), Mapping(p, size)));
}

} // namespace vrnic
