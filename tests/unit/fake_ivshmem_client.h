// The QEMU side of the ivshmem protocol, enough to test the model's server:
// receives the handshake and keeps the fds it was given.
#pragma once

#include "unique_fd.h"

#include <cstdint>
#include <cstring>
#include <endian.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <vector>

namespace vrnic::test {

// One message: value, plus fd (-1 when none). False on EOF/error.
inline bool recv_ivshmem_msg(int sock, int64_t* value, UniqueFd* fd) {
    uint64_t le = 0;
    iovec iov{&le, sizeof(le)};
    alignas(cmsghdr) char ctrl[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = ctrl;
    msg.msg_controllen = sizeof(ctrl);
    pollfd p{sock, POLLIN, 0};
    if (poll(&p, 1, 5000) != 1)
        return false;
    ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    if (n != sizeof(le))
        return false;
    *value = static_cast<int64_t>(le64toh(le));
    fd->reset();
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            int f;
            memcpy(&f, CMSG_DATA(c), sizeof(f));
            fd->reset(f);
        }
    }
    return true;
}

inline UniqueFd connect_unix(const char* path) {
    UniqueFd s(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    strncpy(a.sun_path, path, sizeof(a.sun_path) - 1);
    if (connect(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) < 0)
        s.reset();
    return s;
}

// Polls cond() every 100 us until it holds, for at most `ms` ms.
template <typename F> bool wait_for(F cond, int ms = 2000) {
    for (int i = 0; i < ms * 10; i++) {
        if (cond())
            return true;
        usleep(100);
    }
    return cond();
}

// What QEMU keeps after the handshake.
struct FakeIvshmemClient {
    UniqueFd sock;
    int64_t version = -2;
    int64_t id = -2;
    UniqueFd shm;
    std::vector<UniqueFd> peer0; // kick the model: QEMU writes here on BAR0 Doorbell
    std::vector<UniqueFd> own;   // the model writes these; QEMU raises MSI-X

    // Receives the whole handshake for `vectors` vectors; false on any
    // deviation from the protocol.
    bool handshake(unsigned vectors) {
        UniqueFd fd;
        if (!recv_ivshmem_msg(sock.get(), &version, &fd) || fd.valid())
            return false;
        if (!recv_ivshmem_msg(sock.get(), &id, &fd) || fd.valid())
            return false;
        int64_t v;
        if (!recv_ivshmem_msg(sock.get(), &v, &shm) || v != -1 || !shm.valid())
            return false;
        for (unsigned i = 0; i < vectors; i++) {
            if (!recv_ivshmem_msg(sock.get(), &v, &fd) || v != 0 || !fd.valid())
                return false;
            peer0.push_back(std::move(fd));
        }
        for (unsigned i = 0; i < vectors; i++) {
            if (!recv_ivshmem_msg(sock.get(), &v, &fd) || v != id || !fd.valid())
                return false;
            own.push_back(std::move(fd));
        }
        return true;
    }

    void kick(unsigned v) const {
        uint64_t one = 1;
        (void)!write(peer0[v].get(), &one, sizeof(one));
    }
    // Interrupts pending on vector v (reads and clears the eventfd).
    uint64_t take_irqs(unsigned v) const {
        uint64_t n = 0;
        pollfd p{own[v].get(), POLLIN, 0};
        if (poll(&p, 1, 0) == 1 && read(own[v].get(), &n, sizeof(n)) != sizeof(n))
            n = 0;
        return n;
    }
};

} // namespace vrnic::test
