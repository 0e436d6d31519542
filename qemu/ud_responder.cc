// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The receiving half of UD: destination and qkey, the receive WQE, the GRH
// area and the payload, the receive completion (device-interface.md 14.6).
#include "completion.h"
#include "destination.h"
#include "grh.h"
#include "mcast.h"
#include "recv_source.h"
#include "shared_word.h"
#include "ud.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace vrnic {

namespace {

void complete_ud_recv(DeviceState& rd, Qp& dst, const RecvWqe& w, const UdOrigin& o, uint32_t len) {
    vrnic_cqe c{};
    c.wr_id = w.wr_id;
    c.qpn = dst.qpn;
    c.opcode = VRNIC_CQE_OP_RECV;
    c.status = VRNIC_WC_SUCCESS;
    c.wqe_idx = w.idx;
    c.byte_len = VRNIC_GRH_SIZE + len;
    c.src_qp = o.src_qpn;
    c.flags = VRNIC_CQE_F_GRH;
    if (o.has_imm) {
        c.flags |= VRNIC_CQE_F_WITH_IMM;
        c.imm_data = o.imm;
    }
    c.sl = o.sl;
    c.network_hdr_type = o.net_type;
    memcpy(c.smac, o.smac, sizeof(c.smac));
    write_cqe_or_fail_qp(rd, dst, *dst.recv_cq, c, o.solicited);
}

// A datagram of device `sd`'s `sender`, as its receivers see it.
UdOrigin local_origin(const DeviceState& sd, const Qp& sender, const vrnic_av& av,
                      const vrnic_send_wqe_hdr& h, uint32_t len) {
    UdOrigin o;
    o.src_qpn = sender.qpn;
    o.smac = sd.params.mac;
    o.has_imm = h.opcode == VRNIC_WR_SEND_WITH_IMM;
    o.imm = h.imm_data;
    o.solicited = h.flags & VRNIC_WQE_F_SOLICITED;
    o.sl = av.sl;
    o.net_type = build_grh(o.grh, sd.obj->gids[av.sgid_index].gid, av, len, o.has_imm);
    return o;
}

// Delivers from device `sd` to one receiver `dst` of device `rd`; each
// receiver of a group takes or drops the datagram on its own. What the
// receiver drops it counts; a datagram that found no receiver the sender
// counts.
void deliver_to(DeviceState& sd, DeviceState& rd, Qp* dst, const Qp& sender, const vrnic_av& av,
                uint32_t qkey, const vrnic_send_wqe_hdr& h, LocalMsg& msg) {
    if (!dst)
        return count_in_reg(&sd.regs()->ud_no_dest_drops);
    const auto len = static_cast<uint32_t>(msg.len); // at most the MTU
    SgCursor sc = msg.cursor();
    if (ud_receive(rd, *dst, local_origin(sd, sender, av, h, len), qkey, sc, len) && &rd == &sd)
        sd.note_delivery(*dst);
}

// The bit of mcast_sent that stands for the sender's own device.
uint64_t own_bit(const DeviceState& d) {
    return uint64_t(1) << (d.fabric ? d.fabric_port : 0);
}

// The other VMs with members of the group av's dgid names that `sender`'s
// datagram has not reached yet, a bit each.
uint64_t other_vms_to_reach(const DeviceState& d, const Qp& sender, const vrnic_av& av,
                            uint32_t dest_qpn) {
    if (!d.fabric || dest_qpn != kMcastQpn)
        return 0;
    return d.fabric->mcast_ports(av.dgid, d.fabric_port) & ~sender.mcast_sent;
}

} // namespace

bool ud_receive(DeviceState& rd, Qp& dst, const UdOrigin& o, uint32_t qkey, SgCursor& payload,
                uint32_t len) {
    vrnic_regs* r = rd.regs();
    if (dst.attr.qkey != qkey) {
        count_in_reg(&r->ud_qkey_drops);
        return false;
    }
    RecvSource src(dst);
    RecvWqe w;
    switch (src.fetch(rd, &w)) {
    case RecvSource::Fetch::ok:
        break;
    case RecvSource::Fetch::rnr:
    case RecvSource::Fetch::lost:
        count_in_reg(&r->ud_no_recv_drops);
        return false;
    case RecvSource::Fetch::malformed:
        fail_recv(rd, dst, w, VRNIC_WC_LOC_QP_OP_ERR, o.src_qpn, kVeBadRecvWqe);
        return false;
    }
    SgEntry sg[kMaxWqeSge];
    unsigned n = 0;
    uint64_t room = 0;
    if (!resolve_recv_sges(rd, dst, w, sg, &n, &room)) {
        fail_recv(rd, dst, w, VRNIC_WC_LOC_PROT_ERR, o.src_qpn, kVeBadRecvSge);
        return false;
    }
    if (room < VRNIC_GRH_SIZE + uint64_t(len)) {
        fail_recv(rd, dst, w, VRNIC_WC_LOC_LEN_ERR, o.src_qpn, kVeRecvTooShort);
        return false;
    }
    SgCursor dc(rd.mem, sg, n);
    uint8_t grh[VRNIC_GRH_SIZE];
    memcpy(grh, o.grh, sizeof(grh));
    SgCursor gc(grh, sizeof(grh));
    sg_copy(dc, gc, sizeof(grh));
    sg_copy(dc, payload, len);
    src.consume();
    add_in_reg(&r->rdma_rx_msgs, 1);
    add_in_reg(&r->rdma_rx_bytes, len);
    complete_ud_recv(rd, dst, w, o, len);
    return true;
}

uint64_t ud_copies(const DeviceState& d, const Qp& sender, const vrnic_av& av, uint32_t dest_qpn) {
    if (!gid_is_mcast(av.dgid))
        return 1;
    uint64_t copies = std::popcount(other_vms_to_reach(d, sender, av, dest_qpn));
    if (!(sender.mcast_sent & own_bit(d)))
        copies += find_mcast_destinations(d, av.dgid, dest_qpn).size();
    return std::max<uint64_t>(copies, 1);
}

void ud_deliver(DeviceState& d, const PeerDevice& to, const Qp& sender, const vrnic_av& av,
                uint32_t dest_qpn, uint32_t qkey, const vrnic_send_wqe_hdr& h, LocalMsg& msg) {
    const bool found = to.status() == PeerDevice::Status::ok && dest_qpn != kMcastQpn;
    DeviceState& rd = found ? to.state() : d;
    deliver_to(d, rd, found ? ud_receiver(rd, dest_qpn) : nullptr, sender, av, qkey, h, msg);
}

bool ud_deliver_mcast(DeviceState& d, Qp& sender, const vrnic_av& av, uint32_t dest_qpn,
                      uint32_t qkey, const vrnic_send_wqe_hdr& h, LocalMsg& msg) {
    // A bit is set only for a device that had members, so that a datagram
    // nobody took is counted once, whatever passes it took.
    const uint64_t own = own_bit(d);
    if (!(sender.mcast_sent & own)) {
        for (uint32_t qpn : find_mcast_destinations(d, av.dgid, dest_qpn)) {
            deliver_to(d, d, ud_receiver(d, qpn), sender, av, qkey, h, msg);
            sender.mcast_sent |= own;
        }
    }
    // Then each other VM with members, in port order, one at a time: a
    // lower port that is busy ends the pass, and the next one takes it
    // first (PassLocks), the ports already reached being skipped.
    for (uint64_t ports = other_vms_to_reach(d, sender, av, dest_qpn); ports; ports &= ports - 1) {
        const auto port = static_cast<uint32_t>(std::countr_zero(ports));
        const PeerDevice to = PeerDevice::of_port(d, port);
        if (to.status() == PeerDevice::Status::busy)
            return false;
        if (to.status() != PeerDevice::Status::ok)
            continue;
        DeviceState& rd = to.state();
        for (uint32_t qpn : find_mcast_destinations(rd, av.dgid, dest_qpn)) {
            deliver_to(d, rd, ud_receiver(rd, qpn), sender, av, qkey, h, msg);
            sender.mcast_sent |= uint64_t(1) << port;
        }
    }
    if (!sender.mcast_sent)
        count_in_reg(&d.regs()->ud_no_dest_drops);
    return true;
}

} // namespace vrnic
