// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The requester half of UD: the checks of a datagram's WQE at the sender
// (device-interface.md 14.6), then the delivery (to one QP or a group).
#include "cmd_util.h"
#include "completion.h"
#include "requester_steps.h"
#include "ud.h"
#include "wire.h"

#include <cstring>

namespace vrnic {

namespace {

// The largest datagram: the path MTU the driver gave at RTR, else the port's.
uint32_t ud_mtu_bytes(const DeviceState& d, const Qp& qp) {
    return qp.attr.path_mtu ? 128u << qp.attr.path_mtu : d.params.active_mtu_bytes();
}

// The AH a UD WQE names: of the QP's PD, its source GID still valid.
const Ah* wqe_ah(const DeviceState& d, const Qp& qp, uint32_t handle) {
    const Ah* ah = d.obj->ahs.find(handle);
    if (!ah || ah->pd != qp.pd)
        return nullptr;
    const uint8_t sgid = ah->av.sgid_index;
    if (sgid >= d.obj->gids.size() || !d.obj->gids[sgid].valid) // SET_GID deleted it since
        return nullptr;
    return ah;
}

// 1.4: a kernel WQE with F_AV carries its address vector after the header
// (no AH); it is validated like an AH's and taken out of the copy, so that
// the SGEs or the inline data are where check_local() reads them. False if
// the WQE may not carry one or what it carries does not fit its slot.
bool take_wqe_av(const DeviceState& d, const Qp& qp, SendWqeCopy& w, vrnic_av* av) {
    const uint32_t stride = qp.sq.wqe_bytes();
    const uint32_t room = stride - VRNIC_SEND_WQE_AV_HDR_SIZE; // stride >= 64
    if (qp.uctx->handle != VRNIC_UCTX_KERNEL || w.h.ud.ah || stride < VRNIC_SEND_WQE_AV_HDR_SIZE)
        return false;
    auto* body = reinterpret_cast<uint8_t*>(w.sge);
    memcpy(av, body, sizeof(*av));
    if (bad_av(d, *av))
        return false;
    memmove(body, body + VRNIC_AV_SIZE, room);
    if (w.h.flags & VRNIC_WQE_F_INLINE)
        return room >= VRNIC_INLINE_HDR_SIZE && w.inl.ih.length <= room - VRNIC_INLINE_HDR_SIZE;
    return uint32_t(w.h.num_sge) * VRNIC_SGE_SIZE <= room;
}

// QPs 0 and 1 are the kernel's management QPs: a user QP cannot name them.
bool remote_qpn_ok(const Qp& qp, uint32_t qpn) {
    if (qpn & ~VRNIC_QPN_MASK)
        return false;
    return qpn > 1 || qp.uctx->handle == VRNIC_UCTX_KERNEL;
}

Outcome ud_send(DeviceState& d, Qp& qp) {
    SendWqeCopy w;
    if (!read_send_wqe(d, qp, w))
        return Outcome::consumed;
    const vrnic_send_wqe_hdr& h = w.h;
    // The AV comes out of the copy first: the SGEs are behind it.
    vrnic_av wqe_av;
    const bool has_av = h.flags & VRNIC_WQE_F_AV;
    if (has_av && !take_wqe_av(d, qp, w, &wqe_av)) {
        complete_send(d, qp, h, VRNIC_WC_LOC_QP_OP_ERR, 0, kVeBadAh);
        return Outcome::consumed;
    }
    LocalMsg msg;
    uint32_t vendor = 0;
    if (uint8_t st = check_local(d, qp, w, &msg, &vendor)) {
        complete_send(d, qp, h, st, 0, vendor);
        return Outcome::consumed;
    }
    const Ah* ah = has_av ? nullptr : wqe_ah(d, qp, h.ud.ah);
    if (!has_av && !ah) {
        complete_send(d, qp, h, VRNIC_WC_LOC_QP_OP_ERR, 0, kVeBadAh);
        return Outcome::consumed;
    }
    const vrnic_av* av = has_av ? &wqe_av : &ah->av;
    if (!remote_qpn_ok(qp, h.ud.remote_qpn)) {
        complete_send(d, qp, h, VRNIC_WC_LOC_QP_OP_ERR, 0, kVeBadRemoteQpn);
        return Outcome::consumed;
    }
    if (msg.len > ud_mtu_bytes(d, qp)) {
        complete_send(d, qp, h, VRNIC_WC_LOC_LEN_ERR, 0, kVeMsgTooLong);
        return Outcome::consumed;
    }
    // A datagram is never split: it waits for a visit that can move all its
    // copies (one per multicast receiver).
    const uint64_t cost = msg.len * ud_copies(d, qp, *av, h.ud.remote_qpn);
    if (!d.pass.fits(cost))
        return Outcome::partial;
    const uint32_t qkey = (h.ud.remote_qkey & VRNIC_QKEY_USE_QP) ? qp.attr.qkey : h.ud.remote_qkey;
    if (gid_is_mcast(av->dgid)) {
        if (!ud_deliver_mcast(d, qp, *av, h.ud.remote_qpn, qkey, h, msg))
            return Outcome::busy;
    } else {
        const PeerDevice to = PeerDevice::find(d, av->dgid);
        if (to.status() == PeerDevice::Status::busy)
            return Outcome::busy;
        if (to.status() == PeerDevice::Status::none && has_wire(d))
            wire_send_ud(d, qp, *av, h.ud.remote_qpn, qkey, h, msg);
        else
            ud_deliver(d, to, qp, *av, h.ud.remote_qpn, qkey, h, msg);
    }
    d.pass.charge(cost);
    complete_send(d, qp, h, VRNIC_WC_SUCCESS, msg.len, 0);
    return Outcome::consumed;
}

} // namespace

Outcome execute_ud_send(DeviceState& d, Qp& qp, bool) {
    const Outcome o = ud_send(d, qp);
    if (o == Outcome::consumed) // a WQE the guest rewrote may fail after a busy pass
        qp.mcast_sent = 0;
    return o;
}

} // namespace vrnic
