// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "grh.h"

#include <cstring>

namespace vrnic {

namespace {

// What follows the IP header of a RoCE v2 UD packet: UDP, BTH, DETH, ImmDt
// if any, and the ICRC after the payload.
constexpr uint32_t kUdpBytes = 8, kBthBytes = 12, kDethBytes = 8, kImmDtBytes = 4, kIcrcBytes = 4;
constexpr uint32_t kIpv4HdrBytes = 20;
constexpr uint8_t kIpProtoUdp = 17;

bool v4_mapped(const uint8_t (&gid)[16]) {
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return !memcmp(gid, prefix, sizeof(prefix));
}

void put_be16(uint8_t* p, uint32_t v) {
    p[0] = uint8_t(v >> 8);
    p[1] = uint8_t(v);
}

void put_be32(uint8_t* p, uint32_t v) {
    put_be16(p, v >> 16);
    put_be16(p + 2, v);
}

} // namespace

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
    memset(out, 0, sizeof(out));
    const uint32_t l4 =
        kUdpBytes + kBthBytes + kDethBytes + (imm ? kImmDtBytes : 0) + payload_len + kIcrcBytes;
    if (v4_mapped(sgid)) {
        uint8_t* ip = out + VRNIC_GRH_SIZE - kIpv4HdrBytes;
        ip[0] = 0x45; // version 4, 5 words
        ip[1] = av.traffic_class;
        put_be16(ip + 2, kIpv4HdrBytes + l4);
        put_be16(ip + 6, 0x4000); // DF
        ip[8] = av.hop_limit;
        ip[9] = kIpProtoUdp;
        memcpy(ip + 12, sgid + 12, 4);
        memcpy(ip + 16, av.dgid + 12, 4);
        put_be16(ip + 10, ipv4_checksum(ip, kIpv4HdrBytes));
        return VRNIC_NET_IPV4;
    }
    put_be32(out, 6u << 28 | uint32_t(av.traffic_class) << 20 | (av.flow_label & 0xfffff));
    put_be16(out + 4, l4);
    out[6] = kIpProtoUdp;
    out[7] = av.hop_limit;
    memcpy(out + 8, sgid, 16);
    memcpy(out + 24, av.dgid, 16);
    return VRNIC_NET_IPV6;
}

} // namespace vrnic
