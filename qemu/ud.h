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
// most: the members of its multicast group, else one.
uint64_t ud_copies(const DeviceState& d, const vrnic_av& av, uint32_t dest_qpn);

// Delivers the datagram `msg` of WQE `h` from `sender` of device `d`,
// addressed by `av` (an AH's or, 1.4, the WQE's own), to QP `dest_qpn` of
// `to` (the device av's unicast dgid names, found and held by the caller),
// or to every QP of the multicast group av's dgid names, with `qkey` (the
// sender's choice already applied). Never fails the sender: what the
// receiver cannot take is dropped (a counter in the register page) or
// completes in error at the receiver.
void ud_deliver(DeviceState& d, const PeerDevice& to, const Qp& sender, const vrnic_av& av,
                uint32_t dest_qpn, uint32_t qkey, const vrnic_send_wqe_hdr& h, LocalMsg& msg);

} // namespace vrnic
