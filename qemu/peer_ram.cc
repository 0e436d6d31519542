// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "peer_ram.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
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
// bytes long.
bool shared_mappings(int pid, uint64_t size, std::vector<FileId>* ids, std::string* err) {
    const std::string path = "/proc/" + std::to_string(pid) + "/maps";
    FILE* f = fopen(path.c_str(), "re");
    if (!f) {
        *err = "open " + path + ": " + strerror(errno);
        return false;
    }
    char line[4096];
    while (fgets(line, sizeof(line), f)) {
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
    fclose(f);
    return true;
}

// Whether `pid` opened its descriptor `fd` for reading and writing: the
// model, which reopens it as root, must get no more than the peer has.
bool opened_rdwr(const std::string& pid_dir, const char* fd) {
    FILE* f = fopen((pid_dir + "/fdinfo/" + fd).c_str(), "re");
    if (!f)
        return false;
    char line[256];
    unsigned flags = 0;
    bool found = false;
    while (!found && fgets(line, sizeof(line), f))
        found = sscanf(line, "flags: %o", &flags) == 1;
    fclose(f);
    return found && (flags & O_ACCMODE) == O_RDWR;
}

bool peer_gone(int conn) {
    pollfd p{conn, POLLRDHUP, 0};
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

} // namespace

PeerRam find_peer_ram(int pid, uint64_t size, int exclude_fd, UniqueFd* out, std::string* err) {
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
    const std::string pid_dir = "/proc/" + std::to_string(pid);
    DIR* d = opendir((pid_dir + "/fd").c_str());
    if (!d) {
        *err = "open " + pid_dir + "/fd: " + strerror(errno);
        return PeerRam::error;
    }
    std::string why = "process " + std::to_string(pid) +
                      " maps its guest RAM but holds no read-write descriptor of it";
    while (dirent* e = readdir(d)) {
        const std::string fd_path = pid_dir + "/fd/" + e->d_name;
        if (e->d_name[0] == '.' || stat(fd_path.c_str(), &st) < 0 ||
            !(FileId{st.st_dev, st.st_ino} == ids[0]) || !opened_rdwr(pid_dir, e->d_name))
            continue;
        out->reset(open(fd_path.c_str(), O_RDWR | O_CLOEXEC));
        if (!*out)
            why = "open " + fd_path + ": " + strerror(errno);
        break;
    }
    closedir(d);
    if (*out)
        return PeerRam::found;
    *err = why;
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
    for (int waited = 0;; waited += 10) {
        UniqueFd fd;
        switch (find_peer_ram(cred.pid, size, exclude_fd, &fd, err)) {
        case PeerRam::error:
            return {};
        case PeerRam::found: {
            // The pid was the peer's when it connected; while the peer still
            // holds its end, no other process has that pid.
            if (peer_gone(conn)) {
                *err = "QEMU went away while the model looked for its guest RAM";
                return {};
            }
            return fd;
        }
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
