// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Where a message goes (device-interface.md 14.1 "Destination"): a GID of
// this device or, in a fabric, of another VM's (rdma_fabric.h: PeerDevice),
// then a QP of that device, or a multicast group of this device's QPs.
#pragma once

#include "device_state.h"

#include <cstdint>
#include <vector>

namespace vrnic {

// Whether `gid` is one of the device's valid GID entries.
bool gid_is_local(const DeviceState& d, const uint8_t (&gid)[16]);

// Tells the fabric the device's multicast groups changed, for the other
// VMs' senders (RdmaFabric::mcast_ports); nothing outside a fabric.
void publish_mcast_groups(const DeviceState& d);

// The UD QP `qpn` that can receive (RTR, RTS, SQD), or nullptr.
Qp* ud_receiver(DeviceState& d, uint32_t qpn);

// The QPNs of the QPs a datagram to multicast `dgid` and `qpn` goes to (14.6):
// those attached to the group, when `qpn` is the multicast QPN.
std::vector<uint32_t> find_mcast_destinations(const DeviceState& d, const uint8_t (&dgid)[16],
                                              uint32_t qpn);

} // namespace vrnic
