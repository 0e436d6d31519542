// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "guest_memory.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>

namespace vrnic {

namespace {
// Beyond 3.5 GiB QEMU's pc machine splits RAM around the PCI hole and a guest
// address is no longer the file offset.
constexpr uint64_t kMaxLinearRam = 0xe0000000ull;
constexpr uint64_t kGuard = 4096;
} // namespace

std::unique_ptr<GuestMemory> GuestMemory::map_fd(int fd, uint64_t size, std::string* err) {
    if (size == 0) {
        *err = "guest memory size is 0";
        return nullptr;
    }
    if (size >= kMaxLinearRam) {
        *err = "guest memory size " + std::to_string(size) +
               " is too large: only RAM below 3.5 GiB maps linearly (guest physical == offset)";
        return nullptr;
    }
    struct stat st {};
    if (fstat(fd, &st) < 0) {
        *err = std::string("fstat: ") + strerror(errno);
        return nullptr;
    }
    if (static_cast<uint64_t>(st.st_size) < size) {
        *err = "guest memory file is " + std::to_string(st.st_size) + " bytes, smaller than " +
               std::to_string(size);
        return nullptr;
    }
    // Inaccessible guard pages on both sides: a bug that ever got past at()
    // faults at once instead of touching some other mapping.
    void* r = mmap(nullptr, size + 2 * kGuard, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED) {
        *err = std::string("mmap guest memory: ") + strerror(errno);
        return nullptr;
    }
    Mapping reservation(r, size + 2 * kGuard);
    void* p = mmap(static_cast<uint8_t*>(r) + kGuard, size, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_FIXED, fd, 0);
    if (p == MAP_FAILED) {
        *err = std::string("mmap guest memory: ") + strerror(errno);
        return nullptr;
    }
    return std::unique_ptr<GuestMemory>(new GuestMemory(std::move(reservation), size));
}

std::unique_ptr<GuestMemory> GuestMemory::open_file(const std::string& path, uint64_t size,
                                                    std::string* err) {
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
    if (!fd) {
        *err = "open " + path + ": " + strerror(errno);
        return nullptr;
    }
    auto gm = map_fd(fd.get(), size, err);
    if (!gm)
        *err = path + ": " + *err;
    return gm; // the mapping keeps the file alive; the fd is not needed
}

} // namespace vrnic
