// RoCE v2 packets (qemu/roce_packet.h) against what Soft-RoCE puts on the
// wire: data/rxe.pcap, captured from two rxe guests by data/capture-rxe,
// holds RC, UD, IPv4 and IPv6 frames and rdma_cm's MADs, each with the
// ICRC rxe computed. Every one must parse and be rebuilt byte for byte;
// then every bit of a frame is flipped, every length cut, and every field
// the parser checks is broken on its own.
#include "grh.h"
#include "roce_packet.h"

#include <cstdio>
#include <gtest/gtest.h>
#include <set>
#include <vector>

namespace vrnic::test {
namespace {

using namespace vrnic::roce;
using Frame = std::vector<uint8_t>;

// The Ethernet frames of a pcap file (link type 1).
std::vector<Frame> read_pcap(const char* path) {
    std::vector<Frame> frames;
    FILE* f = fopen(path, "rb");
    if (!f)
        return frames;
    uint8_t hdr[24];
    if (fread(hdr, 1, sizeof(hdr), f) == sizeof(hdr) && hdr[0] == 0xd4 && hdr[20] == 1) {
        uint8_t rec[16];
        while (fread(rec, 1, sizeof(rec), f) == sizeof(rec)) {
            const uint32_t n = rec[8] | rec[9] << 8 | rec[10] << 16 | uint32_t(rec[11]) << 24;
            Frame fr(n);
            if (n > 65536 || fread(fr.data(), 1, n, f) != n)
                break;
            frames.push_back(std::move(fr));
        }
    }
    fclose(f);
    return frames;
}

const std::vector<Frame>& rxe_frames() {
    static const std::vector<Frame> frames = read_pcap(VRNIC_TEST_DATA "/rxe.pcap");
    return frames;
}

Drop parse_frame(const Frame& f, Packet* p) {
    return parse(f.data(), static_cast<uint32_t>(f.size()), p);
}

Frame build_frame(const Packet& p) {
    Frame f(frame_bytes(p));
    EXPECT_EQ(f.size(), build(p, f.data()));
    return f;
}

// The first captured frame that `pred` picks.
template <typename Pred> Frame rxe_frame(Pred pred) {
    for (const Frame& f : rxe_frames()) {
        Packet p;
        if (parse_frame(f, &p) == Drop::none && pred(p))
            return f;
    }
    ADD_FAILURE() << "no such frame in rxe.pcap";
    return {};
}

TEST(RocePacket, EveryRxeFrameParsesAndIsRebuiltByteForByte) {
    const auto& frames = rxe_frames();
    ASSERT_GE(frames.size(), 100u) << "data/rxe.pcap missing or short";
    std::set<uint8_t> opcodes;
    size_t v6 = 0, mads = 0;
    for (size_t i = 0; i < frames.size(); i++) {
        Packet p;
        ASSERT_EQ(Drop::none, parse_frame(frames[i], &p))
            << "frame " << i << ": " << drop_name(parse_frame(frames[i], &p));
        opcodes.insert(p.bth.opcode);
        v6 += p.ipv6;
        mads += p.bth.opcode == kUdSendOnly && p.bth.dest_qp == 1;
        const Frame rebuilt = build_frame(p);
        ASSERT_LE(rebuilt.size(), frames[i].size());
        EXPECT_TRUE(std::equal(rebuilt.begin(), rebuilt.end(), frames[i].begin())) << "frame " << i;
    }
    // What the capture must cover for this to mean anything.
    for (uint8_t op :
         {kRcSendFirst, kRcSendMiddle, kRcSendLast, kRcSendOnly, kRcWriteFirst, kRcWriteMiddle,
          kRcWriteLast, kRcWriteOnly, kRcReadRequest, kRcReadResponseFirst, kRcReadResponseMiddle,
          kRcReadResponseLast, kRcReadResponseOnly, kRcAck, kRcAtomicAck, kRcFetchAdd, kUdSendOnly})
        EXPECT_TRUE(opcodes.count(op)) << "opcode " << int(op) << " not captured";
    EXPECT_GT(v6, 0u);
    EXPECT_GT(mads, 0u);
}

TEST(RocePacket, FieldsOfCapturedFramesAreRead) {
    const Frame f = rxe_frame([](const Packet& p) { return p.bth.opcode == kRcWriteFirst; });
    Packet p;
    ASSERT_EQ(Drop::none, parse_frame(f, &p));
    EXPECT_EQ(1024u, p.payload_len); // -m 1024
    EXPECT_EQ(2500u, p.dma_len);     // -s 2500
    EXPECT_NE(0u, p.rkey);
    EXPECT_EQ(0xffff, p.bth.pkey);
    const uint8_t v4[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 77, 2};
    EXPECT_TRUE(std::equal(std::begin(v4), std::end(v4), p.sgid.begin()));

    const Frame ud = rxe_frame([](const Packet& q) { return q.bth.opcode == kUdSendOnly; });
    ASSERT_EQ(Drop::none, parse_frame(ud, &p));
    EXPECT_NE(0u, p.src_qp);
    EXPECT_NE(0u, p.qkey);

    const Frame v6 = rxe_frame([](const Packet& q) { return q.ipv6; });
    ASSERT_EQ(Drop::none, parse_frame(v6, &p));
    EXPECT_EQ(0xfe, p.sgid[0]);
    EXPECT_EQ(0x80, p.sgid[1]);
}

// Where a flipped bit may go unnoticed: the MACs (the switch's business),
// UDP's checksum and the BTH's FECN/BECN byte (masked from the ICRC and
// unchecked), and IPv6's traffic class, flow label and hop limit (masked;
// IPv4's TOS and TTL are in its header checksum).
bool may_pass(const Packet& p, size_t byte) {
    const size_t ip = 14 + (p.vlan ? 4 : 0), ip_bytes = p.ipv6 ? 40 : 20, udp = ip + ip_bytes;
    if (byte < 12 || byte == udp + 6 || byte == udp + 7 || byte == udp + 8 + 4)
        return true;
    return p.ipv6 && (byte == ip || (byte > ip && byte <= ip + 3) || byte == ip + 7);
}

TEST(RocePacket, EveryFlippedBitIsRefusedUnlessTheFieldIsMasked) {
    for (auto pick : {+[](const Packet& p) { return p.bth.opcode == kRcSendOnly && !p.ipv6; },
                      +[](const Packet& p) { return p.bth.opcode == kRcSendOnly && p.ipv6; },
                      +[](const Packet& p) { return p.bth.opcode == kUdSendOnly; },
                      +[](const Packet& p) { return p.bth.opcode == kRcAtomicAck; }}) {
        const Frame good = rxe_frame(pick);
        Packet p;
        ASSERT_EQ(Drop::none, parse_frame(good, &p));
        for (size_t byte = 0; byte < good.size(); byte++) {
            for (int bit = 0; bit < 8; bit++) {
                Frame bad = good;
                bad[byte] ^= static_cast<uint8_t>(1 << bit);
                // IPv6's version nibble is checked, the rest of byte 0 is not.
                const bool masked = may_pass(p, byte) && !(p.ipv6 && byte == 14 && bit >= 4);
                Packet q;
                const Drop d = parse_frame(bad, &q);
                if (masked)
                    EXPECT_EQ(Drop::none, d) << "byte " << byte << " bit " << bit;
                else
                    EXPECT_NE(Drop::none, d) << "byte " << byte << " bit " << bit;
            }
        }
    }
}

TEST(RocePacket, EveryTruncationIsRefusedAndPaddingIsNot) {
    for (const Frame& good :
         {rxe_frame([](const Packet& p) { return p.bth.opcode == kRcAck; }),
          rxe_frame([](const Packet& p) { return p.ipv6; }),
          rxe_frame([](const Packet& p) { return p.bth.opcode == kRcFetchAdd; })}) {
        Packet p;
        for (uint32_t len = 0; len < good.size(); len++)
            EXPECT_NE(Drop::none, parse(good.data(), len, &p)) << len;
        Frame padded = good;
        padded.resize(good.size() + 20, 0);
        EXPECT_EQ(Drop::none, parse_frame(padded, &p));
    }
}

// A packet of `op` with `payload` bytes, built then read back.
Packet sample(uint8_t op, bool ipv6, bool vlan, const Frame& payload) {
    Packet p;
    p.dst_mac = {0x52, 0x54, 0x00, 0x56, 0x52, 0x01};
    p.src_mac = {0x52, 0x54, 0x00, 0x77, 0x00, 0x02};
    p.vlan = vlan;
    p.vlan_tci = vlan ? 0x2007 : 0;
    p.ipv6 = ipv6;
    for (int i = 0; i < 16; i++) {
        p.sgid[i] = static_cast<uint8_t>(0xa0 + i);
        p.dgid[i] = static_cast<uint8_t>(0xb0 + i);
    }
    if (!ipv6) {
        p.sgid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 77, 1};
        p.dgid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 77, 2};
    }
    p.traffic_class = 0x68;
    p.hop_limit = 63;
    p.flow_label = ipv6 ? 0x12345 : 0;
    p.ip_id = ipv6 ? 0 : 0x4321;
    p.src_port = 0xc123;
    p.bth = {op,     true,    false, static_cast<uint8_t>((4 - payload.size() % 4) % 4),
             0x8001, false,   true,  0x123456,
             true,   0xfedcba};
    p.va = 0x1122334455667788ull;
    p.rkey = 0xdeadbeef;
    p.dma_len = 70000;
    p.syndrome = 0x1f;
    p.msn = 0xabcdef;
    p.qkey = 0x11111111;
    p.src_qp = 0x654321;
    p.imm = 0x04030201;
    p.inv_rkey = 0x0badf00d;
    p.swap_add = 0x0102030405060708ull;
    p.compare = 0x8070605040302010ull;
    p.orig = 0x5555aaaa5555aaaaull;
    p.payload = payload.data();
    p.payload_len = static_cast<uint32_t>(payload.size());
    return p;
}

TEST(RocePacket, EveryOpcodeRoundTripsOverIpv4AndIpv6) {
    Frame data(333);
    for (size_t i = 0; i < data.size(); i++)
        data[i] = static_cast<uint8_t>(i * 13);
    int known = 0;
    for (int op = 0; op < 256; op++) {
        if (!opcode_known(static_cast<uint8_t>(op)))
            continue;
        known++;
        const bool has_data = opcode_exts(static_cast<uint8_t>(op)) & kPayload;
        for (bool ipv6 : {false, true}) {
            for (bool vlan : {false, true}) {
                const Frame payload = has_data ? data : Frame{};
                Packet want = sample(static_cast<uint8_t>(op), ipv6, vlan, payload);
                const Frame f = build_frame(want);
                Packet got;
                ASSERT_EQ(Drop::none, parse_frame(f, &got))
                    << op << " " << drop_name(parse_frame(f, &got));
                EXPECT_EQ(f, build_frame(got)) << op;
                ASSERT_EQ(payload.size(), got.payload_len) << op;
                EXPECT_TRUE(std::equal(payload.begin(), payload.end(), got.payload)) << op;
                EXPECT_EQ(want.bth.psn, got.bth.psn);
                EXPECT_EQ(want.bth.dest_qp, got.bth.dest_qp);
                EXPECT_EQ(want.sgid, got.sgid);
                EXPECT_EQ(want.dgid, got.dgid);
                EXPECT_EQ(want.vlan_tci, got.vlan_tci);
                const uint8_t e = opcode_exts(static_cast<uint8_t>(op));
                const bool addr = e & (kReth | kAtomicEth);
                EXPECT_EQ(addr ? want.va : 0, got.va) << op;
                EXPECT_EQ(addr ? want.rkey : 0, got.rkey) << op;
                EXPECT_EQ(e & kAtomicEth ? want.compare : 0, got.compare) << op;
                EXPECT_EQ(e & kAeth ? want.msn : 0, got.msn) << op;
                EXPECT_EQ(e & kAtomicAck ? want.orig : 0, got.orig) << op;
                EXPECT_EQ(e & kDeth ? want.src_qp : 0, got.src_qp) << op;
                EXPECT_EQ(e & kImm ? want.imm : 0, got.imm) << op;
                EXPECT_EQ(e & kIeth ? want.inv_rkey : 0, got.inv_rkey) << op;
            }
        }
    }
    EXPECT_EQ(23 + 12 + 2 + 1, known); // RC (0x00..0x14, 0x16, 0x17), UC, UD, CNP
}

TEST(RocePacket, EachCheckedFieldRefusesOnItsOwn) {
    Frame data(64, 0x5a);
    const Packet base = sample(kRcSendOnly, false, false, data);
    ASSERT_EQ(Drop::none, [&] {
        Packet p;
        return parse_frame(build_frame(base), &p);
    }());
    auto drop_of = [](const Frame& f) {
        Packet p;
        return parse_frame(f, &p);
    };
    // Opcodes vrnic does not speak, built with a valid ICRC.
    for (uint8_t op : {0x15, 0x18, 0x1f, 0x2c, 0x40, 0x63, 0x66, 0x80, 0x82, 0xff}) {
        Packet p = base;
        p.bth.opcode = op;
        EXPECT_EQ(Drop::opcode, drop_of(build_frame(p))) << int(op);
    }
    {
        Packet p = sample(kRcAck, false, false, {});
        Frame f = build_frame(p);
        p.payload = data.data(); // data on an ACK: build() takes it, parse() must not
        p.payload_len = 4;
        p.bth.pad = 0;
        EXPECT_EQ(Drop::payload, drop_of(build_frame(p)));
        EXPECT_EQ(Drop::none, drop_of(f));
    }
    {
        Packet p = base;
        p.payload_len = 2;
        p.bth.pad = 3;
        Frame f = build_frame(p);
        EXPECT_EQ(Drop::none, drop_of(f));
        p.payload_len = 0;
        p.bth.pad = 0;
        f = build_frame(p);
        f[34 + 8 + 1] |= 0x30; // a pad longer than the data
        EXPECT_EQ(Drop::bth, drop_of(f));
    }
    // Header fields written over a good frame (ICRC and checksums then
    // stale: each must be refused for its own reason first).
    auto with = [&](size_t at, uint8_t v) {
        Frame f = build_frame(base);
        f[at] = v;
        return drop_of(f);
    };
    EXPECT_EQ(Drop::not_ip, with(12, 0x88));        // EtherType
    EXPECT_EQ(Drop::ip_header, with(14, 0x46));     // IHL 6: options
    EXPECT_EQ(Drop::ip_header, with(14 + 6, 0x60)); // MF
    EXPECT_EQ(Drop::ip_header, with(14 + 9, 6));    // TCP
    EXPECT_EQ(Drop::ip_checksum, with(14 + 8, 1));  // TTL under the checksum
    EXPECT_EQ(Drop::not_roce, with(34 + 3, 0xb8));  // UDP port 4792
    EXPECT_EQ(Drop::icrc, with(34 + 8 + 12 + 5, 0xee));
    Frame bad_ver = build_frame(base);
    bad_ver[34 + 8 + 1] |= 1; // transport version 1
    EXPECT_EQ(Drop::bth, drop_of(bad_ver));
    // Lengths: IP's beyond the frame, UDP's not IP's, both too short.
    Frame f = build_frame(base);
    f[14 + 3] += 4; // IP's length past the frame, its checksum right
    f[14 + 10] = f[14 + 11] = 0;
    const uint16_t sum = ipv4_checksum(&f[14], 20);
    f[14 + 10] = static_cast<uint8_t>(sum >> 8);
    f[14 + 11] = static_cast<uint8_t>(sum);
    EXPECT_EQ(Drop::ip_length, drop_of(f));
    EXPECT_EQ(Drop::ip_length, with(34 + 5, 0x10)); // UDP length
    Frame tiny = build_frame(sample(kRcAck, true, false, {}));
    tiny[14 + 4] = 0;
    tiny[14 + 5] = 8 + 12; // IPv6 and UDP agree on a datagram with no room for the ICRC
    tiny[54 + 4] = 0;
    tiny[54 + 5] = 8 + 12;
    EXPECT_EQ(Drop::udp_length, drop_of(tiny));
}

TEST(RocePacket, ResealMakesAChangedFrameReachItsFieldsCheck) {
    const Frame good = rxe_frame([](const Packet& p) { return p.bth.opcode == kRcSendOnly; });
    Frame f = good;
    Packet p;
    f[14 + 8] = 1;    // TTL: the IPv4 checksum fails ...
    f[34 + 8] = 0x15; // ... before the opcode is looked at
    EXPECT_EQ(Drop::ip_checksum, parse_frame(f, &p));
    ASSERT_TRUE(reseal(f.data(), static_cast<uint32_t>(f.size())));
    EXPECT_EQ(Drop::opcode, parse_frame(f, &p));
    f = good;
    f[34 + 8 + 12] ^= 0xff; // the payload: only the ICRC notices
    EXPECT_EQ(Drop::icrc, parse_frame(f, &p));
    ASSERT_TRUE(reseal(f.data(), static_cast<uint32_t>(f.size())));
    EXPECT_EQ(Drop::none, parse_frame(f, &p));
    EXPECT_FALSE(reseal(f.data(), 40)); // its UDP length past the end
}

} // namespace
} // namespace vrnic::test
