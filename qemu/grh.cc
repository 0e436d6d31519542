// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "grh.h"

#include "roce_packet.h"

#include <cstring>

namespace vrnic {

uint16_t ipv4_checksum(const uint8_t* hdr, unsigned len) {
    uint32_t sum = 0;
    for (unsigned i = 0; i + 1 < len; i += 2)
        sum += uint32_t(hdr[i]) << 8 | hdr[i + 1];
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return uint16_t(~sum);
}

uint8_t build_grh(uint8_t (&out)[VRNIC_GRH_SIZE], const uint8_t (&sgid)[16], const vrnic_av& av,
                  uint32_t payload_len, bool imm) {
    using namespace roce;
    memset(out, 0, sizeof(out));
    // What follows the IP header of a RoCE v2 UD packet: UDP, BTH, DETH,
    // ImmDt if any, and the ICRC after the payload.
    const uint32_t udp_len =
        kUdpBytes + kBthBytes + kDethBytes + (imm ? kImmBytes : 0) + payload_len + kIcrcBytes;
    const bool ipv6 = !gid_is_v4_mapped(sgid);
    uint8_t* ip = ipv6 ? out : out + VRNIC_GRH_SIZE - 20;
    write_ip_header(ip, ipv6, sgid, av.dgid, av.traffic_class, av.hop_limit, av.flow_label, 0,
                    udp_len);
    return ipv6 ? VRNIC_NET_IPV6 : VRNIC_NET_IPV4;
}

} // namespace vrnic
