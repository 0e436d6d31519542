// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "peer_ram.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <vector>

namespace vrnic {

namespace {

struct FileId {
    dev_t dev;
    ino_t ino;
    bool operator==(const FileId&) const = default;
};

// The files that `pid` maps shared and writable, from offset 0, `size`
// bytes long. getline(): a line is never split, whatever its path holds.
bool shared_mappings(int pid, uint64_t size, std::vector<FileId>* ids, std::string* err) {
    const std::string path = "/proc/" + std::to_string(pid) + "/maps";
    FILE* f = fopen(path.c_str(), "re");
    if (!f) {
        *err = "open " + path + ": " + strerror(errno);
        return false;
    }
    char* line = nullptr;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        uint64_t start, end, offset, ino;
        unsigned maj, min;
        char perms[8];
        if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64, &start, &end,
                   perms, &offset, &maj, &min, &ino) != 7)
            continue;
        if (strncmp(perms, "rw", 2) || perms[3] != 's' || offset != 0 || end - start != size ||
            ino == 0)
            continue;
        const FileId id{makedev(maj, min), static_cast<ino_t>(ino)};
        bool seen = false;
        for (const FileId& i : *ids)
            seen = seen || i == id;
        if (!seen)
            ids->push_back(id);
    }
    free(line);
    fclose(f);
    return true;
}

// A copy of the peer's descriptor `fd` that may be guest RAM: its own open
// file (the model gains no access the peer does not have), read-write, of
// a file that cannot shrink under the model (a memfd sealed with
// F_SEAL_SHRINK: QEMU's memfd backend seals by default), and the mapped
// file `want`. Nothing here opens a file or waits on one.
UniqueFd take_ram_fd(int pidfd, int fd, const FileId& want) {
    UniqueFd f(static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, fd, 0)));
    if (!f)
        return {};
    const int seals = fcntl(f.get(), F_GET_SEALS);
    const int fl = fcntl(f.get(), F_GETFL);
    struct stat st {};
    if (seals < 0 || !(seals & F_SEAL_SHRINK) || fl < 0 || (fl & O_ACCMODE) != O_RDWR ||
        fstat(f.get(), &st) < 0 || !(FileId{st.st_dev, st.st_ino} == want))
        return {};
    return f;
}

bool peer_gone(int conn) {
    pollfd p{conn, POLLRDHUP, 0};
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

} // namespace

UniqueFd pin_process(int pid) {
    return UniqueFd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
}

PeerRam find_peer_ram(int pidfd, int pid, uint64_t size, int exclude_fd, UniqueFd* out,
                      std::string* err) {
    struct stat st {};
    if (fstat(exclude_fd, &st) < 0) {
        *err = std::string("fstat: ") + strerror(errno);
        return PeerRam::error;
    }
    const FileId exclude{st.st_dev, st.st_ino};
    std::vector<FileId> ids;
    if (!shared_mappings(pid, size, &ids, err))
        return PeerRam::error;
    std::erase(ids, exclude);
    if (ids.empty())
        return PeerRam::not_yet;
    if (ids.size() > 1) {
        *err = "process " + std::to_string(pid) + " maps " + std::to_string(ids.size()) +
               " shared files of " + std::to_string(size) + " bytes: which is guest RAM?";
        return PeerRam::error;
    }
    const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
    DIR* d = opendir(dir.c_str());
    if (!d) {
        *err = "open " + dir + ": " + strerror(errno);
        return PeerRam::error;
    }
    while (dirent* e = readdir(d)) {
        char* end = nullptr;
        const long fd = strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end || fd < 0)
            continue;
        *out = take_ram_fd(pidfd, static_cast<int>(fd), ids[0]);
        if (*out)
            break;
    }
    closedir(d);
    if (*out)
        return PeerRam::found;
    *err = "process " + std::to_string(pid) +
           " maps its guest RAM but holds no read-write descriptor of it sealed against "
           "shrinking (use a memory-backend-memfd, as libvirt's memfd <memoryBacking> is)";
    return PeerRam::error;
}

UniqueFd wait_peer_ram(int conn, uint64_t size, int exclude_fd, const std::atomic<bool>& stop,
                       int timeout_ms, std::string* err) {
    ucred cred{};
    socklen_t len = sizeof(cred);
    if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.pid <= 0) {
        *err = std::string("SO_PEERCRED: ") + strerror(errno);
        return {};
    }
    // Pinned at once: the process the pidfd names can exit but never be
    // replaced by another that reuses its pid.
    UniqueFd pidfd = pin_process(cred.pid);
    if (!pidfd) {
        *err = "pidfd_open " + std::to_string(cred.pid) + ": " + strerror(errno);
        return {};
    }
    for (int waited = 0;; waited += 10) {
        UniqueFd fd;
        switch (find_peer_ram(pidfd.get(), cred.pid, size, exclude_fd, &fd, err)) {
        case PeerRam::error:
            return {};
        case PeerRam::found:
            return fd;
        case PeerRam::not_yet:
            break;
        }
        if (waited >= timeout_ms || stop.load()) {
            *err = "QEMU (pid " + std::to_string(cred.pid) + ") maps no shared guest RAM of " +
                   std::to_string(size) + " bytes (share=on, the size the model was given)";
            return {};
        }
        if (peer_gone(conn)) {
            *err = "QEMU went away before it allocated its guest RAM";
            return {};
        }
        usleep(10'000);
    }
}

} // namespace vrnic
