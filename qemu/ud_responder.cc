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
#include <cstring>

namespace vrnic {

namespace {

void complete_ud_recv(DeviceState& d, Qp& dst, const RecvWqe& w, const Qp& sender,
                      const vrnic_av& av, const vrnic_send_wqe_hdr& h, uint32_t len,
                      uint8_t net_type) {
    vrnic_cqe c{};
    c.wr_id = w.wr_id;
    c.qpn = dst.qpn;
    c.opcode = VRNIC_CQE_OP_RECV;
    c.status = VRNIC_WC_SUCCESS;
    c.wqe_idx = w.idx;
    c.byte_len = VRNIC_GRH_SIZE + len;
    c.src_qp = sender.qpn;
    c.flags = VRNIC_CQE_F_GRH;
    if (h.opcode == VRNIC_WR_SEND_WITH_IMM) {
        c.flags |= VRNIC_CQE_F_WITH_IMM;
        c.imm_data = h.imm_data;
    }
    c.sl = av.sl;
    c.network_hdr_type = net_type;
    memcpy(c.smac, d.params.mac, sizeof(c.smac)); // the sender's port: this one
    write_cqe_or_fail_qp(d, dst, *dst.recv_cq, c, h.flags & VRNIC_WQE_F_SOLICITED);
}

// Delivers to one receiver; each receiver of a group takes or drops the
// datagram on its own.
void deliver_to(DeviceState& d, Qp* dst, const Qp& sender, const vrnic_av& av, uint32_t qkey,
                const vrnic_send_wqe_hdr& h, LocalMsg& msg) {
    vrnic_regs* r = d.regs();
    if (!dst)
        return count_in_reg(&r->ud_no_dest_drops);
    if (dst->attr.qkey != qkey)
        return count_in_reg(&r->ud_qkey_drops);
    RecvSource src(*dst);
    RecvWqe w;
    switch (src.fetch(d, &w)) {
    case RecvSource::Fetch::ok:
        break;
    case RecvSource::Fetch::rnr:
    case RecvSource::Fetch::lost:
        return count_in_reg(&r->ud_no_recv_drops);
    case RecvSource::Fetch::malformed:
        return fail_recv(d, *dst, w, VRNIC_WC_LOC_QP_OP_ERR, sender.qpn, kVeBadRecvWqe);
    }
    SgEntry sg[kMaxWqeSge];
    unsigned n = 0;
    uint64_t room = 0;
    if (!resolve_recv_sges(d, *dst, w, sg, &n, &room))
        return fail_recv(d, *dst, w, VRNIC_WC_LOC_PROT_ERR, sender.qpn, kVeBadRecvSge);
    if (room < VRNIC_GRH_SIZE + msg.len)
        return fail_recv(d, *dst, w, VRNIC_WC_LOC_LEN_ERR, sender.qpn, kVeRecvTooShort);
    const uint32_t len = static_cast<uint32_t>(msg.len); // at most the MTU
    uint8_t grh[VRNIC_GRH_SIZE];
    const uint8_t net_type = build_grh(grh, d.obj->gids[av.sgid_index].gid, av, len);
    SgCursor dc(d.mem, sg, n);
    SgCursor gc(grh, sizeof(grh));
    sg_copy(dc, gc, sizeof(grh));
    SgCursor sc = msg.cursor(d.mem);
    sg_copy(dc, sc, len);
    src.consume();
    d.note_delivery(*dst);
    complete_ud_recv(d, *dst, w, sender, av, h, len, net_type);
}

} // namespace

uint64_t ud_copies(const DeviceState& d, const vrnic_av& av, uint32_t dest_qpn) {
    if (!gid_is_mcast(av.dgid))
        return 1;
    return std::max<uint64_t>(find_mcast_destinations(d, av.dgid, dest_qpn).size(), 1);
}

void ud_deliver(DeviceState& d, const Qp& sender, const vrnic_av& av, uint32_t dest_qpn,
                uint32_t qkey, const vrnic_send_wqe_hdr& h, LocalMsg& msg) {
    if (!gid_is_mcast(av.dgid))
        return deliver_to(d, find_ud_destination(d, av.dgid, dest_qpn), sender, av, qkey, h, msg);
    const std::vector<uint32_t> qpns = find_mcast_destinations(d, av.dgid, dest_qpn);
    if (qpns.empty())
        return count_in_reg(&d.regs()->ud_no_dest_drops);
    for (uint32_t qpn : qpns)
        deliver_to(d, ud_receiver(d, qpn), sender, av, qkey, h, msg);
}

} // namespace vrnic
