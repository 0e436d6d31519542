// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "wire.h"

#include "destination.h"
#include "roce_packet.h"
#include "ud.h"

#include <cstring>
#include <vector>

namespace vrnic {

namespace {

constexpr uint16_t kDefaultPkey = 0xffff;

// UDP's source port spreads a device's flows over ECMP paths, as RoCE v2
// NICs do: from the QPN, in the range 0xc000.. that A17 suggests.
uint16_t flow_port(uint32_t qpn) {
    return static_cast<uint16_t>(0xc000 | (qpn & 0x3fff));
}

} // namespace

roce::Packet wire_packet(const DeviceState& d, const vrnic_av& av, uint32_t qpn) {
    roce::Packet p;
    memcpy(p.dst_mac.data(), av.dmac, 6);
    memcpy(p.src_mac.data(), d.params.mac, 6);
    const uint8_t* sgid = d.obj->gids[av.sgid_index].gid;
    p.ipv6 = !roce::gid_is_v4_mapped(sgid);
    memcpy(p.sgid.data(), sgid, 16);
    memcpy(p.dgid.data(), av.dgid, 16);
    p.traffic_class = av.traffic_class;
    p.hop_limit = av.hop_limit ? av.hop_limit : 64;
    p.flow_label = av.flow_label & 0xfffff;
    p.src_port = flow_port(qpn);
    p.bth.pkey = kDefaultPkey;
    return p;
}

bool wire_emit(DeviceState& d, roce::Packet& p) {
    p.bth.pad = static_cast<uint8_t>(-p.payload_len & 3);
    std::vector<uint8_t> frame(roce::frame_bytes(p));
    roce::build(p, frame.data());
    if (!d.wire(frame.data(), static_cast<uint32_t>(frame.size())))
        return false;
    count_in_reg(&d.regs()->wire_tx_pkts);
    return true;
}

void wire_send_ud(DeviceState& d, Qp& qp, const vrnic_av& av, uint32_t dest_qpn, uint32_t qkey,
                  const vrnic_send_wqe_hdr& h, LocalMsg& msg) {
    roce::Packet p = wire_packet(d, av, qp.qpn);
    const bool imm = h.opcode == VRNIC_WR_SEND_WITH_IMM;
    p.bth.opcode = imm ? roce::kUdSendOnlyImm : roce::kUdSendOnly;
    p.bth.solicited = h.flags & VRNIC_WQE_F_SOLICITED;
    p.bth.dest_qp = dest_qpn & VRNIC_QPN_MASK;
    p.bth.psn = qp.attr.sq_psn;
    qp.attr.sq_psn = (qp.attr.sq_psn + 1) & VRNIC_PSN_MASK;
    p.qkey = qkey;
    p.src_qp = qp.qpn;
    p.imm = h.imm_data;
    // The datagram, gathered from the guest's buffers (at most the MTU).
    const auto len = static_cast<uint32_t>(msg.len);
    std::vector<uint8_t> data(len);
    SgCursor dst(data.data(), len);
    SgCursor src = msg.cursor();
    sg_copy(dst, src, len);
    p.payload = data.data();
    p.payload_len = len;
    if (!wire_emit(d, p)) // it reaches no one
        count_in_reg(&d.regs()->ud_no_dest_drops);
}

void wire_receive(DeviceState& d, const uint8_t* f, uint32_t len) {
    vrnic_regs* r = d.regs();
    roce::Packet p;
    if (!d.obj || roce::parse(f, len, &p) != roce::Drop::none)
        return count_in_reg(&r->wire_rx_drops);
    uint8_t dgid[16];
    memcpy(dgid, p.dgid.data(), sizeof(dgid));
    if (!gid_is_local(d, dgid) || p.bth.pkey != kDefaultPkey || p.bth.opcode == roce::kCnp)
        return count_in_reg(&r->wire_rx_drops);
    count_in_reg(&r->wire_rx_pkts);
    const uint8_t op = p.bth.opcode;
    if (op >= roce::kRcReadResponseFirst && op <= roce::kRcAtomicAck)
        return wire_requester_receive(d, p);
    if (op != roce::kUdSendOnly && op != roce::kUdSendOnlyImm)
        return wire_responder_receive(d, p);
    Qp* dst = ud_receiver(d, p.bth.dest_qp);
    if (!dst)
        return count_in_reg(&r->ud_no_dest_drops);
    UdOrigin o;
    o.src_qpn = p.src_qp;
    o.smac = p.src_mac.data();
    o.has_imm = p.bth.opcode == roce::kUdSendOnlyImm;
    o.imm = p.imm;
    o.solicited = p.bth.solicited;
    // The GRH area holds the IP header the packet came with (an IPv4 one
    // in its last 20 bytes).
    const uint32_t ip_at = 14 + (p.vlan ? 4 : 0);
    if (p.ipv6) {
        memcpy(o.grh, f + ip_at, VRNIC_GRH_SIZE);
        o.net_type = VRNIC_NET_IPV6;
    } else {
        memcpy(o.grh + VRNIC_GRH_SIZE - 20, f + ip_at, 20);
        o.net_type = VRNIC_NET_IPV4;
    }
    SgCursor src = SgCursor::reading(p.payload, p.payload_len);
    ud_receive(d, *dst, o, p.qkey, src, p.payload_len);
}

} // namespace vrnic
