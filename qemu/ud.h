// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The receiving side of UD (device-interface.md 14.6): a datagram that
// passed the sender's checks is delivered or dropped and counted.
#pragma once

#include "device_state.h"
#include "rdma_fabric.h"
#include "responder.h"
#include "sg.h"

#include <cstdint>

namespace vrnic {

// Who sent a datagram, as its receiver sees it: from a QP of the fabric or
// from the wire (wire.h).
struct UdOrigin {
    uint32_t src_qpn = 0;
    const uint8_t* smac = nullptr; // 6 bytes
    uint8_t grh[VRNIC_GRH_SIZE] = {};
    uint8_t net_type = 0; // VRNIC_NET_IPV4 or VRNIC_NET_IPV6
    uint8_t sl = 0;
    bool has_imm = false, solicited = false;
    uint32_t imm = 0;
};

// Delivers a datagram of `len` bytes (at most the MTU) from `payload` to UD
// QP `dst` of device `rd`: the qkey, a receive, the GRH area, the data and
// the completion. What it cannot take it counts or fails at the receiver;
// false then.
bool ud_receive(DeviceState& rd, Qp& dst, const UdOrigin& o, uint32_t qkey, SgCursor& payload,
                uint32_t len);

// How many receivers a datagram to `av` and `dest_qpn` is copied to, at
// most: one, or the members of its multicast group on this device and one
// per other VM with members, less those `sender` has reached already.
uint64_t ud_copies(const DeviceState& d, const Qp& sender, const vrnic_av& av, uint32_t dest_qpn);

// Delivers the datagram `msg` of WQE `h` from `sender` of device `d`,
// addressed by `av` (an AH's or, 1.4, the WQE's own) to a unicast GID, to
// QP `dest_qpn` of `to` (the device av's dgid names, found and held by the
// caller), with `qkey` (the sender's choice already applied). Never fails
// the sender: what the receiver cannot take is dropped (a counter in the
// register page) or completes in error at the receiver.
void ud_deliver(DeviceState& d, const PeerDevice& to, const Qp& sender, const vrnic_av& av,
                uint32_t dest_qpn, uint32_t qkey, const vrnic_send_wqe_hdr& h, LocalMsg& msg);

// The same to every QP attached to the multicast group av's dgid names, on
// this device and on the other VMs of its fabric. False when a VM's device
// was busy: the pass ends and the next one goes on from there
// (sender.mcast_sent).
bool ud_deliver_mcast(DeviceState& d, Qp& sender, const vrnic_av& av, uint32_t dest_qpn,
                      uint32_t qkey, const vrnic_send_wqe_hdr& h, LocalMsg& msg);

} // namespace vrnic
