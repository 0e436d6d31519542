// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "uplink.h"

#include "log.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <sys/epoll.h>
#include <sys/socket.h>

namespace vrnic {

namespace {

enum Tag : uint64_t { kListen, kStop, kInbox, kConn };

constexpr size_t kReadChunk = 65536;

bool watch(int ep, int op, int fd, uint32_t events, Tag tag) {
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = tag;
    return epoll_ctl(ep, op, fd, &ev) == 0;
}

} // namespace

std::unique_ptr<Uplink> Uplink::create(const std::string& path, EthSwitch* sw,
                                       const LinkFaultRates& faults, std::string* err) {
    auto l = IvshmemListener::listen(path, err);
    if (!l) {
        *err = "uplink: " + *err;
        return nullptr;
    }
    return std::unique_ptr<Uplink>(new Uplink(std::move(l), sw, sw->add_uplink(), faults));
}

bool Uplink::receive() {
    const size_t had = in_.size();
    in_.resize(had + kReadChunk);
    ssize_t n = recv(conn_.get(), in_.data() + had, kReadChunk, MSG_DONTWAIT);
    in_.resize(had + static_cast<size_t>(n > 0 ? n : 0));
    if (n == 0)
        return false;
    if (n < 0)
        return errno == EAGAIN || errno == EINTR;
    const LinkFaults::Emit forward = [this](const uint8_t* f, uint32_t len) {
        sw_->forward(port_, f, len); // the switch counts what it drops
        rx_frames_.fetch_add(1, std::memory_order_relaxed);
    };
    size_t off = 0;
    while (in_.size() - off >= 4) {
        uint32_t be;
        memcpy(&be, &in_[off], 4);
        const uint32_t len = ntohl(be);
        if (len > kMaxStreamFrame) {
            bad_length_.fetch_add(1, std::memory_order_relaxed);
            LOG_WARN("uplink: the peer sent a frame length of %u: disconnecting", len);
            return false;
        }
        if (in_.size() - off - 4 < len)
            break;
        rx_faults_.pass(&in_[off + 4], len, forward);
        off += 4 + size_t(len);
    }
    rx_faults_.release(forward);
    in_.erase(in_.begin(), in_.begin() + static_cast<ptrdiff_t>(off));
    return true;
}

void Uplink::take_inbox() {
    const LinkFaults::Emit frame = [this](const uint8_t* f, uint32_t len) {
        if (out_.size() + 4 + len > kMaxPending) {
            tx_dropped_.fetch_add(1, std::memory_order_relaxed);
            return;
        }
        const uint32_t be = htonl(len);
        const auto* b = reinterpret_cast<const uint8_t*>(&be);
        out_.insert(out_.end(), b, b + 4);
        out_.insert(out_.end(), f, f + len);
        tx_frames_.fetch_add(1, std::memory_order_relaxed);
    };
    sw_->inbox(port_).drain(
        [&](const uint8_t* f, uint32_t len, uint32_t) { tx_faults_.pass(f, len, frame); });
    tx_faults_.release(frame);
}

bool Uplink::flush() {
    size_t done = 0;
    while (done < out_.size()) {
        ssize_t n =
            send(conn_.get(), out_.data() + done, out_.size() - done, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN)
                return false;
            break;
        }
        done += static_cast<size_t>(n);
    }
    out_.erase(out_.begin(), out_.begin() + static_cast<ptrdiff_t>(done));
    return true;
}

void Uplink::accept_peer(int ep, bool* writing) {
    UniqueFd c = listener_->accept();
    if (!c)
        return;
    if (conn_) {
        refused_.fetch_add(1, std::memory_order_relaxed);
        LOG_WARN("uplink: refused a second peer");
        return;
    }
    if (!watch(ep, EPOLL_CTL_ADD, c.get(), EPOLLIN, kConn)) {
        LOG_ERR("uplink: epoll: %s", strerror(errno));
        return;
    }
    conn_ = std::move(c);
    *writing = false;
    sw_->inbox(port_).open();
    connects_.fetch_add(1, std::memory_order_relaxed);
    LOG_INFO("uplink: a peer connected");
}

void Uplink::disconnect() {
    conn_.reset();
    in_.clear();
    out_.clear();
    sw_->inbox(port_).close();
    sw_->port_down(port_);
}

bool Uplink::run(const std::atomic<bool>& stop, int stop_fd) {
    UniqueFd ep(epoll_create1(EPOLL_CLOEXEC));
    FrameInbox& inbox = sw_->inbox(port_);
    if (!ep || !watch(ep.get(), EPOLL_CTL_ADD, listener_->fd(), EPOLLIN, kListen) ||
        !watch(ep.get(), EPOLL_CTL_ADD, stop_fd, EPOLLIN, kStop) ||
        !watch(ep.get(), EPOLL_CTL_ADD, inbox.wake_fd(), EPOLLIN, kInbox)) {
        LOG_ERR("uplink: epoll: %s", strerror(errno));
        return false;
    }
    LOG_INFO("uplink: listening on %s (port %u of the switch)", listener_->path().c_str(), port_);
    bool writing = false; // EPOLLOUT is watched: out_ was not written whole
    while (!stop.load()) {
        epoll_event evs[4];
        const int n = epoll_wait(ep.get(), evs, static_cast<int>(std::size(evs)), -1);
        if (n < 0 && errno != EINTR) {
            LOG_ERR("uplink: epoll: %s", strerror(errno));
            return false;
        }
        // The peer's bytes first: a peer that went away frees the uplink
        // before a new one is accepted.
        bool alive = true, accept = false;
        for (int i = 0; i < n; i++) {
            const Tag tag = static_cast<Tag>(evs[i].data.u64);
            if (tag == kConn && evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
                alive = receive();
            else if (tag == kInbox)
                inbox.clear_wake(); // drained below
            accept |= tag == kListen;
        }
        if (conn_) {
            take_inbox();
            if (alive)
                alive = flush();
            if (!alive) {
                epoll_ctl(ep.get(), EPOLL_CTL_DEL, conn_.get(), nullptr);
                disconnect();
                LOG_INFO("uplink: the peer went away");
            } else if (writing != !out_.empty()) {
                writing = !out_.empty();
                watch(ep.get(), EPOLL_CTL_MOD, conn_.get(), EPOLLIN | (writing ? EPOLLOUT : 0u),
                      kConn);
            }
        }
        if (accept)
            accept_peer(ep.get(), &writing);
    }
    if (conn_)
        disconnect();
    return true;
}

UplinkCounters Uplink::counters() const {
    auto r = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
    return {r(connects_),   r(refused_),    r(rx_frames_),         r(tx_frames_),
            r(tx_dropped_), r(bad_length_), rx_faults_.counters(), tx_faults_.counters()};
}

} // namespace vrnic
