// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "ivshmem_transport.h"

#include "log.h"

#include <cerrno>
#include <cstring>
#include <endian.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace vrnic {

std::unique_ptr<IvshmemListener> IvshmemListener::listen(const std::string& path,
                                                         std::string* err) {
    sockaddr_un addr{};
    if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
        *err = "socket path '" + path + "' is empty or longer than " +
               std::to_string(sizeof(addr.sun_path) - 1) + " bytes";
        return nullptr;
    }
    addr.sun_family = AF_UNIX;
    memcpy(addr.sun_path, path.c_str(), path.size() + 1);

    UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) {
        *err = std::string("socket: ") + strerror(errno);
        return nullptr;
    }
    // A socket left by a killed model would make bind fail; only remove sockets.
    struct stat st {};
    if (lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode))
        unlink(path.c_str());
    if (bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) < 0) {
        *err = "bind " + path + ": " + strerror(errno);
        return nullptr;
    }
    if (::listen(fd.get(), 4) < 0) {
        *err = "listen " + path + ": " + strerror(errno);
        unlink(path.c_str());
        return nullptr;
    }
    return std::unique_ptr<IvshmemListener>(new IvshmemListener(std::move(fd), path));
}

IvshmemListener::~IvshmemListener() {
    if (fd_)
        unlink(path_.c_str());
}

UniqueFd IvshmemListener::accept() const {
    return UniqueFd(accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
}

bool ivshmem_send_msg(int sock, int64_t value, int fd) {
    uint64_t le = htole64(static_cast<uint64_t>(value));
    iovec iov{&le, sizeof(le)};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char ctrl[CMSG_SPACE(sizeof(int))] = {};
    if (fd >= 0) {
        msg.msg_control = ctrl;
        msg.msg_controllen = sizeof(ctrl);
        cmsghdr* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    for (;;) {
        ssize_t n = sendmsg(sock, &msg, MSG_NOSIGNAL);
        if (n == static_cast<ssize_t>(sizeof(le)))
            return true;
        if (n < 0 && errno == EINTR)
            continue;
        // Eight bytes on a fresh stream socket never go out partially.
        return false;
    }
}

void ivshmem_refuse(UniqueFd conn) {
    (void)ivshmem_send_msg(conn.get(), kRefusedVersion, -1);
}

std::unique_ptr<IvshmemLink> IvshmemLink::establish(UniqueFd conn, int shm_fd, unsigned vectors,
                                                    int64_t client_id, std::string* err) {
    std::unique_ptr<IvshmemLink> link(new IvshmemLink());
    for (unsigned v = 0; v < vectors; v++) {
        link->doorbell_.emplace_back(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
        link->irq_.emplace_back(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
        if (!link->doorbell_.back() || !link->irq_.back()) {
            *err = std::string("eventfd: ") + strerror(errno);
            return nullptr;
        }
    }
    int s = conn.get();
    bool ok = ivshmem_send_msg(s, kProtocolVersion, -1) && ivshmem_send_msg(s, client_id, -1) &&
              ivshmem_send_msg(s, -1, shm_fd);
    // Step 4: the model is the one other peer; QEMU uses these to kick it.
    for (unsigned v = 0; ok && v < vectors; v++)
        ok = ivshmem_send_msg(s, kModelPeerId, link->doorbell_[v].get());
    // Step 5: the client's own vectors; writing them raises MSI-X in the guest.
    for (unsigned v = 0; ok && v < vectors; v++)
        ok = ivshmem_send_msg(s, client_id, link->irq_[v].get());
    if (!ok) {
        *err = std::string("ivshmem handshake: ") + strerror(errno);
        return nullptr;
    }
    int flags = fcntl(s, F_GETFL);
    if (flags >= 0)
        fcntl(s, F_SETFL, flags | O_NONBLOCK);
    link->conn_ = std::move(conn);
    return link;
}

bool IvshmemLink::drain_doorbell(unsigned v) const {
    uint64_t cnt;
    return v < doorbell_.size() && read(doorbell_[v].get(), &cnt, sizeof(cnt)) == sizeof(cnt);
}

void IvshmemLink::raise_irq(unsigned v) const {
    if (v >= irq_.size())
        return;
    uint64_t one = 1;
    // Only fails when the counter would overflow, i.e. the guest already has
    // ~2^64 pending: nothing to add.
    if (write(irq_[v].get(), &one, sizeof(one)) < 0 && errno != EAGAIN)
        LOG_WARN("raising vector %u: %s", v, strerror(errno));
}

bool IvshmemLink::peer_closed() const {
    char buf[64];
    for (;;) {
        ssize_t n = recv(conn_.get(), buf, sizeof(buf), MSG_DONTWAIT);
        if (n > 0)
            continue; // the protocol is one-way; ignore anything QEMU sends
        if (n == 0)
            return true;
        if (errno == EINTR)
            continue;
        return errno != EAGAIN && errno != EWOULDBLOCK;
    }
}

} // namespace vrnic
