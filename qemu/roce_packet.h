// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// RoCE v2 packets (IBTA Annex A17) as they cross the fabric's uplink:
// Ethernet (one optional 802.1Q tag), IPv4 or IPv6, UDP to port 4791, the
// BTH, the extended transport headers its opcode calls for, the payload
// with its pad, and the ICRC. parse() is the strict reader of what a peer
// sends: every field is checked and a frame that is truncated, oversized,
// inconsistent or of an opcode vrnic does not speak is refused with the
// reason; build() writes what parse() reads, byte for byte.
#pragma once

#include <array>
#include <cstdint>

namespace vrnic::roce {

constexpr uint16_t kUdpPort = 4791;
constexpr uint32_t kUdpBytes = 8, kBthBytes = 12, kRethBytes = 16, kAethBytes = 4, kDethBytes = 8,
                   kImmBytes = 4, kIethBytes = 4, kAtomicEthBytes = 28, kAtomicAckBytes = 8,
                   kIcrcBytes = 4;

// BTH opcodes (the transport in the top three bits).
enum Opcode : uint8_t {
    kRcSendFirst = 0x00,
    kRcSendMiddle = 0x01,
    kRcSendLast = 0x02,
    kRcSendLastImm = 0x03,
    kRcSendOnly = 0x04,
    kRcSendOnlyImm = 0x05,
    kRcWriteFirst = 0x06,
    kRcWriteMiddle = 0x07,
    kRcWriteLast = 0x08,
    kRcWriteLastImm = 0x09,
    kRcWriteOnly = 0x0a,
    kRcWriteOnlyImm = 0x0b,
    kRcReadRequest = 0x0c,
    kRcReadResponseFirst = 0x0d,
    kRcReadResponseMiddle = 0x0e,
    kRcReadResponseLast = 0x0f,
    kRcReadResponseOnly = 0x10,
    kRcAck = 0x11,
    kRcAtomicAck = 0x12,
    kRcCompareSwap = 0x13,
    kRcFetchAdd = 0x14,
    kRcSendLastInv = 0x16,
    kRcSendOnlyInv = 0x17,
    kUcBase = 0x20, // UC: the RC SEND and WRITE opcodes (0x00..0x0b) | 0x20
    kUdSendOnly = 0x64,
    kUdSendOnlyImm = 0x65,
    kCnp = 0x81, // congestion notification: 16 reserved bytes, no payload
};

// The extended transport headers an opcode carries (bits).
enum Ext : uint8_t {
    kReth = 1 << 0,
    kAeth = 1 << 1,
    kDeth = 1 << 2,
    kImm = 1 << 3,
    kIeth = 1 << 4,
    kAtomicEth = 1 << 5,
    kAtomicAck = 1 << 6,
    kPayload = 1 << 7, // may carry data
};

// Whether a GID is an IPv4 address (::ffff:a.b.c.d), carried over IPv4.
bool gid_is_v4_mapped(const uint8_t* gid);

// The headers of `opcode`, and whether vrnic speaks it.
bool opcode_known(uint8_t opcode);
uint8_t opcode_exts(uint8_t opcode);
// The bytes after the BTH before the payload (CNP: its 16 reserved bytes).
uint32_t opcode_ext_bytes(uint8_t opcode);

struct Bth {
    uint8_t opcode = 0;
    bool solicited = false, migreq = false;
    uint8_t pad = 0; // 0..3 bytes after the payload
    uint16_t pkey = 0xffff;
    bool fecn = false, becn = false;
    uint32_t dest_qp = 0; // 24 bits
    bool ack_req = false;
    uint32_t psn = 0; // 24 bits
};

struct Packet {
    std::array<uint8_t, 6> dst_mac{}, src_mac{};
    bool vlan = false;
    uint16_t vlan_tci = 0;
    bool ipv6 = false;
    // GIDs as RoCE v2 forms them: an IPv4 address is ::ffff:a.b.c.d.
    std::array<uint8_t, 16> sgid{}, dgid{};
    uint8_t traffic_class = 0; // IPv4: TOS (DSCP and ECN)
    uint8_t hop_limit = 64;    // IPv4: TTL
    uint32_t flow_label = 0;   // IPv6 only, 20 bits
    uint16_t ip_id = 0;        // IPv4 only
    uint16_t src_port = 0xc000;
    Bth bth;
    // The extended headers present are opcode_exts(bth.opcode)'s.
    uint64_t va = 0; // RETH or AtomicETH
    uint32_t rkey = 0;
    uint32_t dma_len = 0;               // RETH
    uint8_t syndrome = 0;               // AETH
    uint32_t msn = 0;                   // AETH, 24 bits
    uint32_t qkey = 0, src_qp = 0;      // DETH (src_qp 24 bits)
    uint32_t imm = 0;                   // ImmDt, in network byte order as sent
    uint32_t inv_rkey = 0;              // IETH
    uint64_t swap_add = 0, compare = 0; // AtomicETH
    uint64_t orig = 0;                  // AtomicAckETH
    const uint8_t* payload = nullptr;   // parse(): into the frame
    uint32_t payload_len = 0;           // without the pad
};

// Why parse() refused a frame; each is a counter of the uplink.
enum class Drop : uint8_t {
    none,
    truncated,   // shorter than its headers say
    not_ip,      // an EtherType other than IPv4 or IPv6 (after one tag)
    ip_header,   // version, IHL, options, extension headers, fragments
    ip_checksum, // IPv4 header checksum
    ip_length,   // IP's length beyond the frame or not UDP's
    not_roce,    // not UDP to port 4791
    udp_length,  // UDP's length under the smallest RoCE packet
    bth,         // transport version, or a pad the payload cannot hold
    opcode,      // an opcode vrnic does not speak
    payload,     // data on an opcode that carries none
    icrc,        // the invariant CRC does not match
    count
};
const char* drop_name(Drop d);

// Whether a frame is RoCE v2 (UDP to port 4791 over IPv4 or IPv6), by
// its headers alone: parse() then says whether it is a good one.
bool is_roce_frame(const uint8_t* frame, uint32_t len);

// Reads a frame. On Drop::none, *p holds every field (those of headers the
// packet lacks are zero), p->payload points into `frame`.
Drop parse(const uint8_t* frame, uint32_t len, Packet* p);

// Writes the IPv4 (20 bytes; GIDs v4-mapped) or IPv6 (40 bytes) header of a
// RoCE v2 packet whose UDP datagram is `udp_len` bytes; returns its length.
// The IPv4 header checksum is computed.
uint32_t write_ip_header(uint8_t* out, bool ipv6, const uint8_t* sgid, const uint8_t* dgid,
                         uint8_t traffic_class, uint8_t hop_limit, uint32_t flow_label,
                         uint16_t ip_id, uint32_t udp_len);

// The frame's length for `p` (with its payload and pad).
uint32_t frame_bytes(const Packet& p);
// Writes `p` with p.payload (p.payload_len bytes, then p.bth.pad zero
// bytes) and its ICRC into `out` (frame_bytes(p) of room); returns the
// length. UDP's checksum is 0, as RoCE v2 senders leave it.
uint32_t build(const Packet& p, uint8_t* out);

// Recomputes, in place, the IPv4 header checksum and the ICRC of a frame
// whose headers say where they are (EtherType, IP and UDP lengths); false
// when they do not fit `len`. For tests and the fuzzer: a frame with one
// field changed, sealed again, reaches the check of that field.
bool reseal(uint8_t* frame, uint32_t len);

} // namespace vrnic::roce
