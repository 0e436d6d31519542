// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "roce_packet.h"

#include "grh.h"

#include <cstring>
#include <iterator>

namespace vrnic::roce {

namespace {

constexpr uint16_t kEtherIpv4 = 0x0800, kEtherIpv6 = 0x86dd, kEtherVlan = 0x8100;
constexpr uint32_t kEthBytes = 14, kVlanBytes = 4, kIpv4Bytes = 20, kIpv6Bytes = 40;
constexpr uint8_t kIpProtoUdp = 17;

uint16_t get16(const uint8_t* p) {
    return static_cast<uint16_t>(p[0] << 8 | p[1]);
}
uint32_t get24(const uint8_t* p) {
    return uint32_t(p[0]) << 16 | uint32_t(p[1]) << 8 | p[2];
}
uint32_t get32(const uint8_t* p) {
    return uint32_t(get16(p)) << 16 | get16(p + 2);
}
uint64_t get64(const uint8_t* p) {
    return uint64_t(get32(p)) << 32 | get32(p + 4);
}
void put16(uint8_t* p, uint32_t v) {
    p[0] = static_cast<uint8_t>(v >> 8);
    p[1] = static_cast<uint8_t>(v);
}
void put24(uint8_t* p, uint32_t v) {
    p[0] = static_cast<uint8_t>(v >> 16);
    put16(p + 1, v);
}
void put32(uint8_t* p, uint32_t v) {
    put16(p, v >> 16);
    put16(p + 2, v);
}
void put64(uint8_t* p, uint64_t v) {
    put32(p, static_cast<uint32_t>(v >> 32));
    put32(p + 4, static_cast<uint32_t>(v));
}

// The EtherType after at most one 802.1Q tag, and where what it names
// starts; false when the frame is too short to say.
bool ether_payload(const uint8_t* f, uint32_t len, uint16_t* type, uint32_t* off) {
    if (len < kEthBytes)
        return false;
    uint32_t at = 12;
    if (get16(f + at) == kEtherVlan) {
        if (len < kEthBytes + kVlanBytes)
            return false;
        at += kVlanBytes;
    }
    *type = get16(f + at);
    *off = at + 2;
    return true;
}

// CRC-32 as Ethernet computes it (reflected, polynomial 0x04c11db7).
struct CrcTable {
    uint32_t t[256];
    constexpr CrcTable() : t() {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++)
                c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
            t[i] = c;
        }
    }
};
constexpr CrcTable kCrc;

uint32_t crc32(uint32_t crc, const uint8_t* p, size_t n) {
    for (size_t i = 0; i < n; i++)
        crc = kCrc.t[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return crc;
}

// The ICRC over the IP header, UDP header and transport packet at `ip`
// (`ip_bytes` + `transport_bytes`, without the ICRC): the LRH that RoCE v2
// lacks counts as 8 bytes of ones, and the fields a router may change are
// masked to ones: IPv4's TOS, TTL and checksum, IPv6's traffic class, flow
// label and hop limit, UDP's checksum and the BTH's reserved byte.
uint32_t icrc(const uint8_t* ip, uint32_t ip_bytes, bool ipv6, uint32_t transport_bytes) {
    uint8_t masked[kIpv6Bytes + kUdpBytes + kBthBytes];
    const uint32_t head = ip_bytes + kUdpBytes + kBthBytes;
    memcpy(masked, ip, head);
    if (ipv6) {
        masked[0] |= 0x0f;
        masked[1] = masked[2] = masked[3] = 0xff;
        masked[7] = 0xff;
    } else {
        masked[1] = 0xff;
        masked[8] = 0xff;
        masked[10] = masked[11] = 0xff;
    }
    masked[ip_bytes + 6] = masked[ip_bytes + 7] = 0xff;
    masked[ip_bytes + kUdpBytes + 4] = 0xff;
    static constexpr uint8_t kLrh[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    uint32_t crc = crc32(0xffffffffu, kLrh, sizeof(kLrh));
    crc = crc32(crc, masked, head);
    crc = crc32(crc, ip + head, ip_bytes + kUdpBytes + transport_bytes - head);
    return ~crc;
}

constexpr uint8_t kWrite = kPayload | kReth;

// The RC SEND and WRITE opcodes' headers, which UC shares.
constexpr uint8_t send_write_exts(uint8_t op) {
    switch (op) {
    case kRcSendFirst:
    case kRcSendMiddle:
    case kRcSendLast:
    case kRcSendOnly:
    case kRcWriteMiddle:
    case kRcWriteLast:
        return kPayload;
    case kRcSendLastImm:
    case kRcSendOnlyImm:
    case kRcWriteLastImm:
        return kPayload | kImm;
    case kRcWriteFirst:
    case kRcWriteOnly:
        return kWrite;
    case kRcWriteOnlyImm:
        return kWrite | kImm;
    default:
        return 0;
    }
}

} // namespace

bool gid_is_v4_mapped(const uint8_t* gid) {
    static constexpr uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return !memcmp(gid, kPrefix, sizeof(kPrefix));
}

uint8_t opcode_exts(uint8_t op) {
    if (op <= kRcWriteOnlyImm)
        return send_write_exts(op);
    if (op >= kUcBase && op <= (kUcBase | kRcWriteOnlyImm))
        return send_write_exts(op & 0x1f);
    switch (op) {
    case kRcReadRequest:
        return kReth;
    case kRcReadResponseFirst:
    case kRcReadResponseLast:
    case kRcReadResponseOnly:
        return kAeth | kPayload;
    case kRcReadResponseMiddle:
        return kPayload;
    case kRcAck:
        return kAeth;
    case kRcAtomicAck:
        return kAeth | kAtomicAck;
    case kRcCompareSwap:
    case kRcFetchAdd:
        return kAtomicEth;
    case kRcSendLastInv:
    case kRcSendOnlyInv:
        return kIeth | kPayload;
    case kUdSendOnly:
        return kDeth | kPayload;
    case kUdSendOnlyImm:
        return kDeth | kImm | kPayload;
    default:
        return 0;
    }
}

bool opcode_known(uint8_t op) {
    return op == kCnp || opcode_exts(op) != 0;
}

uint32_t opcode_ext_bytes(uint8_t op) {
    if (op == kCnp)
        return 16;
    const uint8_t e = opcode_exts(op);
    return (e & kReth ? kRethBytes : 0) + (e & kAeth ? kAethBytes : 0) +
           (e & kDeth ? kDethBytes : 0) + (e & kImm ? kImmBytes : 0) +
           (e & kIeth ? kIethBytes : 0) + (e & kAtomicEth ? kAtomicEthBytes : 0) +
           (e & kAtomicAck ? kAtomicAckBytes : 0);
}

const char* drop_name(Drop d) {
    static constexpr const char* kNames[] = {"none",        "truncated", "not_ip",   "ip_header",
                                             "ip_checksum", "ip_length", "not_roce", "udp_length",
                                             "bth",         "opcode",    "payload",  "icrc"};
    static_assert(std::size(kNames) == size_t(Drop::count));
    return d < Drop::count ? kNames[size_t(d)] : "?";
}

Drop parse(const uint8_t* f, uint32_t len, Packet* p) {
    *p = Packet{}; // the headers a packet lacks read as zero
    uint16_t type;
    uint32_t off;
    if (!ether_payload(f, len, &type, &off))
        return Drop::truncated;
    memcpy(p->dst_mac.data(), f, 6);
    memcpy(p->src_mac.data(), f + 6, 6);
    p->vlan = off > kEthBytes;
    if (p->vlan)
        p->vlan_tci = get16(f + 14);
    if (type != kEtherIpv4 && type != kEtherIpv6)
        return Drop::not_ip;
    p->ipv6 = type == kEtherIpv6;
    const uint8_t* ip = f + off;
    const uint32_t ip_bytes = p->ipv6 ? kIpv6Bytes : kIpv4Bytes;
    if (len - off < ip_bytes)
        return Drop::truncated;
    uint32_t ip_total; // the IP packet: header and UDP datagram
    if (p->ipv6) {
        if (ip[0] >> 4 != 6 || ip[6] != kIpProtoUdp)
            return Drop::ip_header; // extension headers are not RoCE's
        p->traffic_class = static_cast<uint8_t>((ip[0] & 0x0f) << 4 | ip[1] >> 4);
        p->flow_label = get24(ip + 1) & 0xfffff;
        p->hop_limit = ip[7];
        memcpy(p->sgid.data(), ip + 8, 16);
        memcpy(p->dgid.data(), ip + 24, 16);
        ip_total = kIpv6Bytes + get16(ip + 4);
    } else {
        // No options, no fragments (DF alone may be set).
        if (ip[0] != 0x45 || (get16(ip + 6) & 0xbfff) || ip[9] != kIpProtoUdp)
            return Drop::ip_header;
        if (ipv4_checksum(ip, kIpv4Bytes) != 0)
            return Drop::ip_checksum;
        p->traffic_class = ip[1];
        p->ip_id = get16(ip + 4);
        p->hop_limit = ip[8];
        p->sgid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        p->dgid = p->sgid;
        memcpy(p->sgid.data() + 12, ip + 12, 4);
        memcpy(p->dgid.data() + 12, ip + 16, 4);
        ip_total = get16(ip + 2);
        if (ip_total < kIpv4Bytes)
            return Drop::ip_length;
    }
    // Ethernet may pad a short frame: IP's length must fit, not fill it.
    if (ip_total > len - off)
        return Drop::ip_length;
    const uint8_t* udp = ip + ip_bytes;
    if (ip_total < ip_bytes + kUdpBytes)
        return Drop::truncated;
    if (get16(udp + 2) != kUdpPort)
        return Drop::not_roce;
    p->src_port = get16(udp);
    const uint32_t udp_len = get16(udp + 4);
    if (udp_len != ip_total - ip_bytes)
        return Drop::ip_length;
    if (udp_len < kUdpBytes + kBthBytes + kIcrcBytes)
        return Drop::udp_length;
    const uint8_t* bth = udp + kUdpBytes;
    const uint32_t transport = udp_len - kUdpBytes - kIcrcBytes; // BTH to the pad

    Bth& b = p->bth;
    b.opcode = bth[0];
    b.solicited = bth[1] & 0x80;
    b.migreq = bth[1] & 0x40;
    b.pad = (bth[1] >> 4) & 3;
    if (bth[1] & 0x0f) // transport version 0 only
        return Drop::bth;
    b.pkey = get16(bth + 2);
    b.fecn = bth[4] & 0x80;
    b.becn = bth[4] & 0x40;
    b.dest_qp = get24(bth + 5);
    b.ack_req = bth[8] & 0x80;
    b.psn = get24(bth + 9);
    if (!opcode_known(b.opcode))
        return Drop::opcode;
    const uint32_t ext = opcode_ext_bytes(b.opcode);
    if (transport < kBthBytes + ext)
        return Drop::truncated;
    const uint8_t e = opcode_exts(b.opcode);
    const uint8_t* h = bth + kBthBytes;
    if (e & kReth) {
        p->va = get64(h);
        p->rkey = get32(h + 8);
        p->dma_len = get32(h + 12);
        h += kRethBytes;
    }
    if (e & kAtomicEth) {
        p->va = get64(h);
        p->rkey = get32(h + 8);
        p->swap_add = get64(h + 12);
        p->compare = get64(h + 20);
        h += kAtomicEthBytes;
    }
    if (e & kAeth) {
        p->syndrome = h[0];
        p->msn = get24(h + 1);
        h += kAethBytes;
    }
    if (e & kAtomicAck) {
        p->orig = get64(h);
        h += kAtomicAckBytes;
    }
    if (e & kDeth) {
        p->qkey = get32(h);
        p->src_qp = get24(h + 5);
        h += kDethBytes;
    }
    if (e & kImm) {
        memcpy(&p->imm, h, 4);
        h += kImmBytes;
    }
    if (e & kIeth) {
        p->inv_rkey = get32(h);
        h += kIethBytes;
    }
    const uint32_t data = transport - kBthBytes - ext; // payload and pad
    if (data && !(e & kPayload))
        return Drop::payload;
    if (b.pad > data)
        return Drop::bth;
    p->payload = bth + kBthBytes + ext;
    p->payload_len = data - b.pad;
    const uint8_t* sent = bth + transport; // little-endian, as Ethernet's FCS
    const uint32_t want = sent[0] | sent[1] << 8 | sent[2] << 16 | uint32_t(sent[3]) << 24;
    if (want != icrc(ip, ip_bytes, p->ipv6, transport))
        return Drop::icrc;
    return Drop::none;
}

uint32_t write_ip_header(uint8_t* ip, bool ipv6, const uint8_t* sgid, const uint8_t* dgid,
                         uint8_t traffic_class, uint8_t hop_limit, uint32_t flow_label,
                         uint16_t ip_id, uint32_t udp_len) {
    if (ipv6) {
        put32(ip, 6u << 28 | uint32_t(traffic_class) << 20 | (flow_label & 0xfffff));
        put16(ip + 4, udp_len);
        ip[6] = kIpProtoUdp;
        ip[7] = hop_limit;
        memcpy(ip + 8, sgid, 16);
        memcpy(ip + 24, dgid, 16);
        return kIpv6Bytes;
    }
    ip[0] = 0x45; // version 4, 5 words
    ip[1] = traffic_class;
    put16(ip + 2, kIpv4Bytes + udp_len);
    put16(ip + 4, ip_id);
    put16(ip + 6, 0x4000); // DF
    ip[8] = hop_limit;
    ip[9] = kIpProtoUdp;
    put16(ip + 10, 0);
    memcpy(ip + 12, sgid + 12, 4);
    memcpy(ip + 16, dgid + 12, 4);
    put16(ip + 10, ipv4_checksum(ip, kIpv4Bytes));
    return kIpv4Bytes;
}

bool is_roce_frame(const uint8_t* f, uint32_t len) {
    uint16_t type;
    uint32_t off, udp;
    if (!ether_payload(f, len, &type, &off))
        return false;
    if (type == kEtherIpv4 && len >= off + kIpv4Bytes && f[off + 9] == kIpProtoUdp)
        udp = off + (f[off] & 0x0f) * 4u;
    else if (type == kEtherIpv6 && len >= off + kIpv6Bytes && f[off + 6] == kIpProtoUdp)
        udp = off + kIpv6Bytes;
    else
        return false;
    return len >= udp + 4 && get16(f + udp + 2) == kUdpPort;
}

bool reseal(uint8_t* f, uint32_t len) {
    uint16_t type;
    uint32_t off;
    if (!ether_payload(f, len, &type, &off))
        return false;
    const bool ipv6 = type == kEtherIpv6;
    const uint32_t ip_bytes = ipv6 ? kIpv6Bytes : kIpv4Bytes;
    if ((!ipv6 && type != kEtherIpv4) || len - off < ip_bytes + kUdpBytes)
        return false;
    uint8_t* ip = f + off;
    const uint32_t udp_len = get16(ip + ip_bytes + 4);
    if (udp_len < kUdpBytes + kBthBytes + kIcrcBytes || udp_len > len - off - ip_bytes)
        return false;
    if (!ipv6) {
        put16(ip + 10, 0);
        put16(ip + 10, ipv4_checksum(ip, kIpv4Bytes));
    }
    const uint32_t transport = udp_len - kUdpBytes - kIcrcBytes;
    const uint32_t c = icrc(ip, ip_bytes, ipv6, transport);
    uint8_t* at = ip + ip_bytes + kUdpBytes + transport;
    for (int i = 0; i < 4; i++)
        at[i] = static_cast<uint8_t>(c >> (8 * i));
    return true;
}

uint32_t frame_bytes(const Packet& p) {
    return kEthBytes + (p.vlan ? kVlanBytes : 0) + (p.ipv6 ? kIpv6Bytes : kIpv4Bytes) + kUdpBytes +
           kBthBytes + opcode_ext_bytes(p.bth.opcode) + p.payload_len + p.bth.pad + kIcrcBytes;
}

uint32_t build(const Packet& p, uint8_t* f) {
    const uint32_t total = frame_bytes(p);
    memcpy(f, p.dst_mac.data(), 6);
    memcpy(f + 6, p.src_mac.data(), 6);
    uint32_t off = 12;
    if (p.vlan) {
        put16(f + off, kEtherVlan);
        put16(f + off + 2, p.vlan_tci);
        off += kVlanBytes;
    }
    put16(f + off, p.ipv6 ? kEtherIpv6 : kEtherIpv4);
    off += 2;
    uint8_t* ip = f + off;
    const uint32_t ip_bytes = p.ipv6 ? kIpv6Bytes : kIpv4Bytes;
    const uint32_t transport =
        kBthBytes + opcode_ext_bytes(p.bth.opcode) + p.payload_len + p.bth.pad;
    const uint32_t udp_len = kUdpBytes + transport + kIcrcBytes;
    write_ip_header(ip, p.ipv6, p.sgid.data(), p.dgid.data(), p.traffic_class, p.hop_limit,
                    p.flow_label, p.ip_id, udp_len);
    uint8_t* udp = ip + ip_bytes;
    put16(udp, p.src_port);
    put16(udp + 2, kUdpPort);
    put16(udp + 4, udp_len);
    put16(udp + 6, 0);
    uint8_t* bth = udp + kUdpBytes;
    const Bth& b = p.bth;
    bth[0] = b.opcode;
    bth[1] =
        static_cast<uint8_t>((b.solicited ? 0x80 : 0) | (b.migreq ? 0x40 : 0) | (b.pad & 3) << 4);
    put16(bth + 2, b.pkey);
    bth[4] = static_cast<uint8_t>((b.fecn ? 0x80 : 0) | (b.becn ? 0x40 : 0));
    put24(bth + 5, b.dest_qp);
    bth[8] = b.ack_req ? 0x80 : 0;
    put24(bth + 9, b.psn);
    uint8_t* h = bth + kBthBytes;
    const uint8_t e = opcode_exts(b.opcode);
    if (b.opcode == kCnp)
        memset(h, 0, 16);
    if (e & kReth) {
        put64(h, p.va);
        put32(h + 8, p.rkey);
        put32(h + 12, p.dma_len);
        h += kRethBytes;
    }
    if (e & kAtomicEth) {
        put64(h, p.va);
        put32(h + 8, p.rkey);
        put64(h + 12, p.swap_add);
        put64(h + 20, p.compare);
        h += kAtomicEthBytes;
    }
    if (e & kAeth) {
        h[0] = p.syndrome;
        put24(h + 1, p.msn);
        h += kAethBytes;
    }
    if (e & kAtomicAck) {
        put64(h, p.orig);
        h += kAtomicAckBytes;
    }
    if (e & kDeth) {
        put32(h, p.qkey);
        h[4] = 0;
        put24(h + 5, p.src_qp);
        h += kDethBytes;
    }
    if (e & kImm) {
        memcpy(h, &p.imm, 4);
        h += kImmBytes;
    }
    if (e & kIeth) {
        put32(h, p.inv_rkey);
        h += kIethBytes;
    }
    if (b.opcode == kCnp)
        h += 16;
    if (p.payload_len)
        memcpy(h, p.payload, p.payload_len);
    memset(h + p.payload_len, 0, b.pad);
    const uint32_t c = icrc(ip, ip_bytes, p.ipv6, transport);
    for (int i = 0; i < 4; i++)
        bth[transport + i] = static_cast<uint8_t>(c >> (8 * i));
    return total;
}

} // namespace vrnic::roce
