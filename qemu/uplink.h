// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The fabric's uplink: a port of the Ethernet switch whose far end is not a
// VM of this model but a peer on a UNIX socket speaking QEMU's stream netdev
// protocol (each frame preceded by its length, 4 bytes big-endian). Another
// QEMU's ordinary NIC joins the fabric's L2 segment with
//   -netdev stream,id=n,server=off,addr.type=unix,addr.path=PATH
// One peer at a time; a second is refused until the first goes. The peer is
// trusted no more than a guest: a length the stream cannot hold ends the
// connection, frames the switch refuses are dropped and counted there, and
// a peer that does not read loses frames (counted) instead of stalling the
// VMs that send to it.
#pragma once

#include "eth_switch.h"
#include "ivshmem_transport.h"
#include "link_faults.h"
#include "unique_fd.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace vrnic {

struct UplinkCounters {
    uint64_t connects = 0;                  // peers accepted
    uint64_t refused = 0;                   // peers refused: another one was connected
    uint64_t rx_frames = 0;                 // frames from the peer handed to the switch
    uint64_t tx_frames = 0;                 // frames written to the peer
    uint64_t tx_dropped = 0;                // frames for the peer with its socket full
    uint64_t bad_length = 0;                // connections ended by an impossible length
    LinkFaultCounters rx_faults, tx_faults; // --uplink-faults, each way
};

class Uplink {
  public:
    // Frames longer than this cannot be in the stream (QEMU's own limit is
    // below it); the switch then applies the fabric's MTU.
    static constexpr uint32_t kMaxStreamFrame = 65536;
    // Bytes waiting for a peer that does not read, at most.
    static constexpr size_t kMaxPending = 1 << 20;

    // Before any port thread starts: listens on `path` and adds the uplink
    // port to `sw`. `faults`: what the link does to frames each way.
    static std::unique_ptr<Uplink> create(const std::string& path, EthSwitch* sw,
                                          const LinkFaultRates& faults, std::string* err);

    // The thread body: returns when `stop` is set (stop_fd becomes readable
    // then too); false on an unrecoverable error.
    bool run(const std::atomic<bool>& stop, int stop_fd);

    UplinkCounters counters() const;
    uint32_t port() const { return port_; }

  private:
    Uplink(std::unique_ptr<IvshmemListener> l, EthSwitch* sw, uint32_t port,
           const LinkFaultRates& faults)
        : listener_(std::move(l)), sw_(sw), port_(port), rx_faults_(faults, 0),
          tx_faults_(faults, 1) {}
    // Reads what the peer sent and forwards each whole frame; false when the
    // connection is over.
    bool receive();
    // Frames the switch has for the peer, framed into out_ while they fit.
    void take_inbox();
    // Writes what out_ holds as far as the socket takes it; false when the
    // connection is over.
    bool flush();
    // Takes a pending connection as the peer, or refuses it while there is
    // one; `writing`: whether EPOLLOUT is watched on the peer's socket.
    void accept_peer(int ep, bool* writing);
    void disconnect();

    std::unique_ptr<IvshmemListener> listener_;
    EthSwitch* sw_;
    uint32_t port_;
    UniqueFd conn_;
    std::vector<uint8_t> in_;  // bytes read, not yet a whole frame
    std::vector<uint8_t> out_; // framed bytes not yet written
    LinkFaults rx_faults_, tx_faults_;
    std::atomic<uint64_t> connects_{0}, refused_{0}, rx_frames_{0}, tx_frames_{0}, tx_dropped_{0},
        bad_length_{0};
};

} // namespace vrnic
