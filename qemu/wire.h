// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// RoCE v2 on the wire (IBTA Annex A17): the RDMA traffic between a VM of
// the fabric and a station beyond its uplink, as packets (roce_packet.h)
// through the fabric's switch. Within the fabric, messages keep moving
// between guest memories directly; only a GID that no VM of the fabric
// holds goes to the wire. UD is carried here; RC and UC, which need a
// transport (PSNs, ACKs, retries), by wire_requester.cc and
// wire_responder.cc. A packet of any other kind is dropped and counted
// (wire_rx_drops).
#pragma once

#include "device_state.h"
#include "responder.h"
#include "roce_packet.h"

#include <cstdint>

namespace vrnic {

// Whether the device has a wire (the model's uplink): d.wire is set.
inline bool has_wire(const DeviceState& d) {
    return static_cast<bool>(d.wire);
}

// The headers of a packet from QP `qpn` along `av` (its destination GID
// and MAC, the device's source GID `av.sgid_index`): the transport fields
// are the caller's.
roce::Packet wire_packet(const DeviceState& d, const vrnic_av& av, uint32_t qpn);

// Sends `p` (with its payload, padded here); false when the switch refused
// it (longer than the fabric's MTU).
bool wire_emit(DeviceState& d, roce::Packet& p);

// Sends the datagram `msg` of WQE `h` from UD QP `qp` to `dest_qpn` at
// av's (unicast) GID as one RoCE v2 packet, from the device's MAC to
// av.dmac. The datagram fits the path MTU (the caller checked); a packet
// the switch refuses (over the fabric's Ethernet MTU) counts as a datagram
// that found no destination.
void wire_send_ud(DeviceState& d, Qp& qp, const vrnic_av& av, uint32_t dest_qpn, uint32_t qkey,
                  const vrnic_send_wqe_hdr& h, LocalMsg& msg);

// Receives a RoCE v2 frame to one of the device's GIDs: UD to a ready QP,
// delivered with the GRH area holding the packet's own IP header, RC and
// UC to their transport. Anything else is dropped and counted.
void wire_receive(DeviceState& d, const uint8_t* frame, uint32_t len);

// The transport's halves (wire_requester.cc, wire_responder.cc): a packet
// of an RC or UC opcode, checked to be to one of the device's GIDs.
void wire_requester_receive(DeviceState& d, const roce::Packet& p);
void wire_responder_receive(DeviceState& d, const roce::Packet& p);

// The engine's visit to QP `qp`: sends the answers its responder has
// queued (READ responses and what waits behind them) as far as the visit's
// budget goes. True while it has answers.
bool wire_send_answers(DeviceState& d, Qp& qp);

} // namespace vrnic
