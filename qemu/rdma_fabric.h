// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// RDMA between the VMs of one fabric: which VM owns a GID, and the lock of
// each VM's device. A requester's thread executes a message to another VM
// itself, against that VM's own state under that VM's lock, copying once
// between the two guests' memories; qemu/README.md "RDMA between VMs" says
// why this is safe and deadlock-free.
#pragma once

#include "device_state.h"
#include "fifo_lock.h"
#include "mcast.h"

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace vrnic {

class Device;

class RdmaFabric {
  public:
    // A port is a bit of mcast_ports().
    static constexpr uint32_t kMaxPorts = 64;
    explicit RdmaFabric(uint32_t ports);
    uint32_t ports() const { return static_cast<uint32_t>(slots_.size()); }

    // A VM's device joins when its VM connects and leaves before it is
    // freed; leave() waits for a message another thread is moving to it.
    void join(uint32_t port, Device* dev);
    void leave(uint32_t port);

    // The device's GID table changed (SET_GID, reset): what port_of() finds.
    void publish_gids(uint32_t port, const std::vector<GidEntry>& gids);
    // The port other than `self` whose device has `gid`, or -1.
    int port_of(const uint8_t (&gid)[16], uint32_t self) const;
    // Takes `gid` for `port` at once, unless another port's device has it:
    // a GID names one VM, as an address does one host.
    bool claim_gid(uint32_t port, const uint8_t (&gid)[16]);
    // The device's multicast groups changed (attach, detach, QP destroy,
    // reset): what mcast_ports() finds.
    void publish_mcast(uint32_t port, const McastTable& groups);
    // The ports other than `self` with a QP attached to group `gid`, a bit
    // each; the receiver checks its own table again under its lock.
    uint64_t mcast_ports(const uint8_t (&gid)[16], uint32_t self) const;

    // The port's lock: held by its own thread while it touches its device,
    // and by another port's thread while that moves a message to it.
    FifoLock& lock(uint32_t port) { return slots_[port]->mu; }
    // Under lock(port): the device, or nullptr while no VM is attached.
    Device* device(uint32_t port) const { return slots_[port]->dev; }

  private:
    struct Slot {
        FifoLock mu;
        Device* dev = nullptr;
    };
    std::vector<std::unique_ptr<Slot>> slots_; // fixed once threads run
    mutable std::mutex dir_mu_;                // a leaf lock: nothing is taken under it
    std::vector<std::vector<std::array<uint8_t, 16>>> gids_;  // per port, under dir_mu_
    std::vector<std::vector<std::array<uint8_t, 16>>> mcast_; // per port, under dir_mu_
};

// The locks one pass of a device's thread holds: a lower port that a
// message found busy (DeviceState::want_peer) first, then its own. Passes
// take that lower port for as long as their messages go to it.
class PassLocks {
  public:
    explicit PassLocks(DeviceState& d);
    ~PassLocks();
    PassLocks(const PassLocks&) = delete;
    PassLocks& operator=(const PassLocks&) = delete;

  private:
    DeviceState& d_;
    std::unique_lock<FifoLock> lower_, own_;
};

// The device a message goes to, held for the message: the sender's own, or
// another VM's under its lock (raising its interrupts when released).
class PeerDevice {
  public:
    enum class Status { none, busy, ok };

    // The device whose GID table has `gid`: busy when it is a lower port
    // whose lock another thread holds (the next pass takes it first).
    static PeerDevice find(DeviceState& d, const uint8_t (&gid)[16]);
    // The device of port `port` (-1: d's own), for a look that may fail:
    // never waits.
    static PeerDevice at(DeviceState& d, int port);
    // The device of another port `port`, waited for as find() waits.
    static PeerDevice of_port(DeviceState& d, uint32_t port);

    PeerDevice(PeerDevice&& o) noexcept;
    PeerDevice& operator=(PeerDevice&&) = delete;
    ~PeerDevice();

    Status status() const { return status_; }
    // The responder's device state; valid when status() is ok.
    DeviceState& state() const { return *state_; }
    bool remote() const { return dev_ != nullptr; }
    // Port of the device (-1: the sender's own).
    int port() const { return port_; }
    // Another VM's, which another thread waits for: a message moves to it
    // in slices of at most kSharedSliceBytes, so that a VM sending large
    // messages there cannot take more than its share of it.
    bool contended() const { return dev_ && fabric_->lock(uint32_t(port_)).wanted(); }
    static constexpr uint64_t kSharedSliceBytes = 64 << 10;

  private:
    PeerDevice() = default;
    static PeerDevice acquire(DeviceState& d, uint32_t port, bool may_wait);

    Status status_ = Status::none;
    DeviceState* state_ = nullptr;
    Device* dev_ = nullptr;
    RdmaFabric* fabric_ = nullptr;
    int port_ = -1;
    std::unique_lock<FifoLock> lock_;
};

} // namespace vrnic
