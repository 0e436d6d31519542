// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The receiving side of UD (device-interface.md 14.6): a datagram that
// passed the sender's checks is delivered or dropped and counted.
#pragma once

#include "device_state.h"
#include "rdma_fabric.h"
#include "responder.h"

#include <cstdint>

namespace vrnic {

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
