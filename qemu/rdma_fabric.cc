// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "rdma_fabric.h"

#include "destination.h"
#include "device.h"

#include <bit>
#include <cstring>

namespace vrnic {

RdmaFabric::RdmaFabric(uint32_t ports) : gids_(ports), mcast_(ports) {
    for (uint32_t i = 0; i < ports; i++)
        slots_.push_back(std::make_unique<Slot>());
}

void RdmaFabric::join(uint32_t port, Device* dev) {
    std::lock_guard<FifoLock> g(slots_[port]->mu);
    slots_[port]->dev = dev;
}

void RdmaFabric::leave(uint32_t port) {
    publish_gids(port, {});
    publish_mcast(port, McastTable(0, 0));
    std::lock_guard<FifoLock> g(slots_[port]->mu);
    slots_[port]->dev = nullptr;
}

void RdmaFabric::publish_gids(uint32_t port, const std::vector<GidEntry>& gids) {
    std::vector<std::array<uint8_t, 16>> valid;
    for (const GidEntry& e : gids) {
        if (!e.valid)
            continue;
        std::array<uint8_t, 16> g;
        memcpy(g.data(), e.gid, g.size());
        valid.push_back(g);
    }
    std::lock_guard<std::mutex> g(dir_mu_);
    gids_[port] = std::move(valid);
}

namespace {

// The ports other than `self` whose entry of a per-port directory table
// holds `gid`, a bit each (ports < RdmaFabric::kMaxPorts); under dir_mu_.
uint64_t holders(const std::vector<std::vector<std::array<uint8_t, 16>>>& table,
                 const uint8_t (&gid)[16], uint32_t self) {
    uint64_t ports = 0;
    for (uint32_t p = 0; p < table.size(); p++) {
        if (p == self)
            continue;
        for (const auto& e : table[p])
            if (!memcmp(e.data(), gid, e.size()))
                ports |= uint64_t(1) << p;
    }
    return ports;
}

} // namespace

int RdmaFabric::port_of(const uint8_t (&gid)[16], uint32_t self) const {
    std::lock_guard<std::mutex> g(dir_mu_);
    const uint64_t ports = holders(gids_, gid, self);
    return ports ? std::countr_zero(ports) : -1;
}

bool RdmaFabric::claim_gid(uint32_t port, const uint8_t (&gid)[16]) {
    std::lock_guard<std::mutex> l(dir_mu_);
    if (holders(gids_, gid, port))
        return false;
    std::array<uint8_t, 16>& g = gids_[port].emplace_back();
    memcpy(g.data(), gid, g.size());
    return true;
}

void RdmaFabric::publish_mcast(uint32_t port, const McastTable& groups) {
    std::vector<std::array<uint8_t, 16>> gids = groups.gids();
    std::lock_guard<std::mutex> g(dir_mu_);
    mcast_[port] = std::move(gids);
}

uint64_t RdmaFabric::mcast_ports(const uint8_t (&gid)[16], uint32_t self) const {
    std::lock_guard<std::mutex> g(dir_mu_);
    return holders(mcast_, gid, self);
}

PassLocks::PassLocks(DeviceState& d) : d_(d) {
    if (!d.fabric)
        return;
    const uint32_t self = d.fabric_port;
    // Locks are taken in port order while waiting, so no two threads wait
    // for each other: the lower one a message found busy comes first.
    if (d.want_peer >= 0 && uint32_t(d.want_peer) < self) {
        lower_ = std::unique_lock<FifoLock>(d.fabric->lock(uint32_t(d.want_peer)));
        d.held_peer = d.want_peer;
        d.held_peer_used = false;
    } else {
        d.want_peer = -1;
    }
    own_ = std::unique_lock<FifoLock>(d.fabric->lock(self));
}

PassLocks::~PassLocks() {
    // A pass that sent nothing there lets the next one go without it.
    if (d_.held_peer >= 0 && !d_.held_peer_used)
        d_.want_peer = -1;
    d_.held_peer = -1;
}

PeerDevice PeerDevice::find(DeviceState& d, const uint8_t (&gid)[16]) {
    PeerDevice p;
    if (gid_is_local(d, gid)) {
        p.status_ = Status::ok;
        p.state_ = &d;
        return p;
    }
    if (!d.fabric)
        return p;
    const int port = d.fabric->port_of(gid, d.fabric_port);
    if (port < 0)
        return p;
    PeerDevice q = acquire(d, uint32_t(port), true);
    // Its table may have changed since the directory was read.
    if (q.status_ == Status::ok && !gid_is_local(*q.state_, gid))
        q.status_ = Status::none;
    return q;
}

PeerDevice PeerDevice::at(DeviceState& d, int port) {
    if (port < 0 || !d.fabric) {
        PeerDevice p;
        p.status_ = Status::ok;
        p.state_ = &d;
        return p;
    }
    return acquire(d, uint32_t(port), false);
}

PeerDevice PeerDevice::of_port(DeviceState& d, uint32_t port) {
    return acquire(d, port, true);
}

PeerDevice PeerDevice::acquire(DeviceState& d, uint32_t port, bool may_wait) {
    PeerDevice p;
    RdmaFabric& f = *d.fabric;
    p.port_ = static_cast<int>(port);
    if (static_cast<int>(port) == d.held_peer) {
        d.held_peer_used = true;
    } else {
        std::unique_lock<FifoLock> l(f.lock(port), std::try_to_lock);
        if (!l.owns_lock() && may_wait && port > d.fabric_port) {
            l.lock(); // waiting only for a higher port than any held keeps the order
        } else if (!l.owns_lock()) {
            if (may_wait)
                d.want_peer = static_cast<int>(port);
            p.status_ = Status::busy;
            return p;
        }
        p.lock_ = std::move(l);
    }
    p.dev_ = f.device(port);
    p.fabric_ = &f;
    if (!p.dev_)
        return p; // no VM there now
    p.state_ = &p.dev_->state();
    p.status_ = Status::ok;
    return p;
}

PeerDevice::PeerDevice(PeerDevice&& o) noexcept
    : status_(o.status_), state_(o.state_), dev_(o.dev_), fabric_(o.fabric_), port_(o.port_),
      lock_(std::move(o.lock_)) {
    o.dev_ = nullptr;
}

PeerDevice::~PeerDevice() {
    // What the message completed there is signalled now: that device's
    // thread may be asleep.
    if (dev_)
        dev_->signal_completions();
}

} // namespace vrnic
