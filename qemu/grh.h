// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The 40-byte area a UD receive gets before the payload (device-interface.md
// 14.6), filled as RoCE v2 fills it: the IP header the datagram would have
// carried. A v4-mapped source GID means IPv4: 20 zero bytes, then the IPv4
// header; any other GID an IPv6 header.
#pragma once

#include <vrnic_dev.h>

#include <cstdint>

namespace vrnic {

// Fills `out` for a datagram of `payload_len` bytes from `sgid` to av.dgid,
// `imm` when it carries ImmDt (which the IP length counts); returns the
// network header type (VRNIC_NET_IPV4 or VRNIC_NET_IPV6).
uint8_t build_grh(uint8_t (&out)[VRNIC_GRH_SIZE], const uint8_t (&sgid)[16], const vrnic_av& av,
                  uint32_t payload_len, bool imm);

// The IPv4 header checksum (RFC 791) of `len` bytes, checksum field included.
uint16_t ipv4_checksum(const uint8_t* hdr, unsigned len);

} // namespace vrnic
