// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The fabric's Ethernet switch: joins the Ethernet functions of the VMs one
// vrnic-model serves. Each VM is a port with the MAC the model gave it;
// frames are switched by destination MAC (learned from the source of what
// each port sends), broadcast, multicast and unknown unicast are flooded to
// every other port, and a frame longer than the MTU or sent with a source
// MAC other than the port's own is dropped: a VM cannot pose as another.
// The uplink (uplink.h) is a port for the stations beyond the fabric: its
// frames may carry any unicast source MAC but a VM's, and it learns at most
// kMaxUplinkStations of them, so that a peer inventing addresses cannot
// grow the table without bound.
// Any port thread may call forward() at once; what it delivers goes into
// the receiving port's FrameInbox, which only that port's thread drains.
#pragma once

#include "frame_inbox.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace vrnic {

using Mac = std::array<uint8_t, 6>;

struct SwitchCounters {
    uint64_t forwarded = 0; // unicast to a learned port
    uint64_t flooded = 0;   // broadcast, multicast or unknown unicast
    uint64_t spoofed = 0;   // dropped: source MAC not the port's (uplink: a VM's or a group's)
    uint64_t bad_len = 0;   // dropped: shorter than a header or over the MTU
    uint64_t to_self = 0;   // dropped: destination learned on the sender's port
};

class EthSwitch {
  public:
    // `mtu`: the largest payload (an Ethernet frame is at most mtu + 18 bytes).
    explicit EthSwitch(uint32_t mtu) : mtu_(mtu) {}

    // Before any port thread starts: adds a port with its MAC; returns its
    // index.
    uint32_t add_port(const Mac& mac);
    // Before any port thread starts, after the VMs' ports: adds the uplink
    // port; returns its index.
    uint32_t add_uplink();
    static constexpr size_t kMaxUplinkStations = 256;
    uint32_t ports() const { return static_cast<uint32_t>(ports_.size()); }
    FrameInbox& inbox(uint32_t port) { return ports_[port]->inbox; }
    const Mac& mac(uint32_t port) const { return ports_[port]->mac; }
    bool is_uplink(uint32_t port) const { return port < ports() && ports_[port]->uplink; }

    // Port `from`'s VM sent `frame`. False when the switch dropped it (the
    // sender's TX then completes DROPPED); a frame that reaches a port
    // whose inbox is full or closed counts as sent, as on a wire.
    bool forward(uint32_t from, const uint8_t* frame, uint32_t len);

    // Port `port`'s VM left: forget what was learned on it.
    void port_down(uint32_t port);

    SwitchCounters counters() const;

  private:
    struct PortEntry {
        Mac mac;
        bool uplink = false;
        FrameInbox inbox;
    };
    struct Learned {
        Mac mac;
        uint32_t port;
    };
    void flood(uint32_t from, const uint8_t* frame, uint32_t len);
    // Whether port `from` may send with source MAC `src`.
    bool source_allowed(const PortEntry& from, const Mac& src) const;
    // Under mu_: the port `mac` was learned on, or -1.
    int64_t lookup(const Mac& mac) const;

    const uint32_t mtu_;
    std::vector<std::unique_ptr<PortEntry>> ports_; // fixed once threads run
    mutable std::mutex mu_;
    std::vector<Learned> table_; // under mu_; one entry per source seen
    size_t uplink_learned_ = 0;  // under mu_: entries of table_ on the uplink
    std::atomic<uint64_t> forwarded_{0}, flooded_{0}, spoofed_{0}, bad_len_{0}, to_self_{0};
};

} // namespace vrnic
