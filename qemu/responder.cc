// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The responder half of RC and UC: receive WQE consumption, rkey checks, data
// placement, atomics, and the responder's completions and errors
// (device-interface.md 14.1, 14.4).
#include "responder.h"

#include "completion.h"
#include "events.h"
#include "fast_reg.h"
#include "mr.h"
#include "mw.h"
#include "qp_control.h"
#include "recv_source.h"
#include "shared_word.h"
#include "xrc.h"

#include <algorithm>
#include <cstring>

namespace vrnic {

namespace {

Delivery requester_error(uint8_t status, uint32_t vendor) {
    Delivery r;
    r.status = status;
    r.vendor = vendor;
    return r;
}

// A message the responder cannot take though the request was valid: RC
// answers `status`, UC drops it.
Delivery not_taken(const Qp& resp, uint8_t status, uint32_t vendor) {
    Delivery r = requester_error(status, vendor);
    if (resp.type == QpType::uc) {
        r.status = VRNIC_WC_SUCCESS;
        r.dropped = true;
    }
    return r;
}

// Responder access violation: an RC QP goes to ERR with QP_ACCESS_ERR, UC
// drops the message and stays where it is.
Delivery remote_access_error(DeviceState& d, Qp& resp, uint32_t vendor) {
    if (resp.type == QpType::uc)
        return not_taken(resp, VRNIC_WC_REM_ACCESS_ERR, vendor);
    qp_enter_error(d, resp, VRNIC_EQE_QP_ACCESS_ERR);
    return requester_error(VRNIC_WC_REM_ACCESS_ERR, vendor);
}

Delivery invalid_request(DeviceState& d, Qp& resp, uint32_t vendor) {
    qp_enter_error(d, resp, VRNIC_EQE_QP_REQ_ERR);
    return requester_error(VRNIC_WC_REM_INV_REQ_ERR, vendor);
}

// The receive WQE failed: it completes in error, the responder goes to ERR.
Delivery recv_error(DeviceState& d, Qp& req, Qp& resp, const RecvWqe& w, uint8_t recv_status,
                    uint8_t req_status, uint32_t vendor) {
    fail_recv(d, resp, w, recv_status, req.qpn, vendor);
    return requester_error(req_status, vendor);
}

// Returns Delivery with rnr set, or an error, unless the fetch succeeded.
bool take_recv(DeviceState& d, Qp& req, Qp& resp, RecvWqe* w, Delivery* out) {
    using Fetch = RecvSource::Fetch;
    RecvSource src(resp);
    switch (src.fetch(d, w)) {
    case Fetch::ok:
        return true;
    case Fetch::rnr:
        req.rnr_resp_qpn = resp.qpn;
        req.rnr_recv_mark = src.rnr_mark();
        out->rnr = true;
        return false;
    case Fetch::lost:
        *out = not_taken(resp, VRNIC_WC_RETRY_EXC_ERR, kVeNoResponder);
        return false;
    case Fetch::malformed:
        *out = recv_error(d, req, resp, *w, VRNIC_WC_LOC_QP_OP_ERR, VRNIC_WC_REM_OP_ERR,
                          kVeBadRecvWqe);
        return false;
    }
    return false;
}

// Moves this slice of a message from src to dst.
void move_slice(SgCursor& dst, SgCursor& src, uint64_t len, Slice& s) {
    dst.skip(s.offset);
    src.skip(s.offset);
    s.moved = sg_copy(dst, src, std::min(len - s.offset, s.max));
}

bool unfinished(const LocalMsg& msg, const Slice& s) {
    return s.offset + s.moved < msg.len;
}

// The receive WQE of this message: taken from the RQ by its first slice,
// which later slices find still at the head.
bool hold_recv(DeviceState& d, Qp& req, Qp& resp, Slice& s, Delivery* out) {
    if (!s.recv_held)
        return take_recv(d, req, resp, s.recv, out);
    if (RecvSource(resp).at_head(*s.recv))
        return true;
    *out = not_taken(resp, VRNIC_WC_RETRY_EXC_ERR, kVeNoResponder);
    return false;
}

Delivery respond_send(DeviceState& d, Qp& req, Qp& resp, const vrnic_send_wqe_hdr& h, LocalMsg& msg,
                      Slice& s) {
    Delivery out;
    if (!hold_recv(d, req, resp, s, &out))
        return out;
    const RecvWqe& w = *s.recv;
    SgEntry dst[kMaxWqeSge];
    unsigned n = 0;
    uint64_t room = 0;
    if (!resolve_recv_sges(d, resp, w, dst, &n, &room))
        return recv_error(d, req, resp, w, VRNIC_WC_LOC_PROT_ERR, VRNIC_WC_REM_OP_ERR,
                          kVeBadRecvSge);
    if (room < msg.len)
        return recv_error(d, req, resp, w, VRNIC_WC_LOC_LEN_ERR, VRNIC_WC_REM_INV_REQ_ERR,
                          kVeRecvTooShort);
    SgCursor dc(d.mem, dst, n);
    SgCursor sc = msg.cursor();
    move_slice(dc, sc, msg.len, s);
    if (unfinished(msg, s)) {
        s.recv_held = true;
        out.partial = true;
        return out;
    }
    const bool inv = h.opcode == VRNIC_WR_SEND_WITH_INV;
    if (uint32_t ve = inv ? remote_invalidate(d, resp, h.invalidate_rkey) : 0)
        return recv_error(d, req, resp, w, VRNIC_WC_LOC_PROT_ERR, VRNIC_WC_REM_INV_REQ_ERR, ve);
    RecvSource(resp).consume();
    const bool imm = h.opcode == VRNIC_WR_SEND_WITH_IMM;
    complete_recv(d, resp, w.wr_id, w.idx, VRNIC_WC_SUCCESS, VRNIC_CQE_OP_RECV,
                  static_cast<uint32_t>(msg.len), h.imm_data, imm, req.qpn,
                  h.flags & VRNIC_WQE_F_SOLICITED, 0, inv ? h.invalidate_rkey : 0);
    return out;
}

// Checks the responder's region h.rdma names for `access` (every slice: the
// MR may go between two), then moves this slice of the message into it for
// a WRITE or out of it for a READ. 0, or the violation.
uint32_t move_remote(DeviceState& d, Qp& resp, const vrnic_send_wqe_hdr& h, LocalMsg& msg, Slice& s,
                     uint32_t access) {
    const Mr* mr = nullptr;
    if (uint32_t ve = check_remote(d, resp, h.rdma.rkey, h.rdma.remote_addr, msg.len, access, &mr))
        return ve;
    SgEntry region{mr, h.rdma.remote_addr, msg.len};
    SgCursor remote(d.mem, &region, 1);
    SgCursor local = msg.cursor();
    if (access == VRNIC_ACCESS_REMOTE_WRITE)
        move_slice(remote, local, msg.len, s);
    else
        move_slice(local, remote, msg.len, s);
    return 0;
}

Delivery respond_write(DeviceState& d, Qp& req, Qp& resp, const vrnic_send_wqe_hdr& h,
                       LocalMsg& msg, Slice& s) {
    Delivery out;
    const bool imm = h.opcode == VRNIC_WR_RDMA_WRITE_WITH_IMM;
    // As in IB, the receive resource is checked before the rkey.
    if (imm && !hold_recv(d, req, resp, s, &out))
        return out;
    if (msg.len) {
        if (uint32_t ve = move_remote(d, resp, h, msg, s, VRNIC_ACCESS_REMOTE_WRITE))
            return remote_access_error(d, resp, ve);
        if (unfinished(msg, s)) {
            s.recv_held = imm;
            out.partial = true;
            return out;
        }
    }
    if (imm) {
        const RecvWqe& w = *s.recv;
        RecvSource(resp).consume();
        complete_recv(d, resp, w.wr_id, w.idx, VRNIC_WC_SUCCESS, VRNIC_CQE_OP_RECV_RDMA_WITH_IMM,
                      static_cast<uint32_t>(msg.len), h.imm_data, true, req.qpn,
                      h.flags & VRNIC_WQE_F_SOLICITED, 0);
    }
    return out;
}

Delivery respond_read(DeviceState& d, Qp& resp, const vrnic_send_wqe_hdr& h, LocalMsg& msg,
                      Slice& s) {
    if (resp.attr.max_dest_rd_atomic == 0)
        return invalid_request(d, resp, kVeNoRdAtomic);
    Delivery out;
    if (msg.len) {
        if (uint32_t ve = move_remote(d, resp, h, msg, s, VRNIC_ACCESS_REMOTE_READ))
            return remote_access_error(d, resp, ve);
        out.partial = unfinished(msg, s);
    }
    return out;
}

// An atomic is 8 bytes, never split: every grant is at least that.
Delivery respond_atomic(DeviceState& d, Qp& resp, const vrnic_send_wqe_hdr& h, LocalMsg& msg,
                        Slice& s) {
    const vrnic_wqe_atomic& a = h.atomic;
    if (resp.attr.max_dest_rd_atomic == 0)
        return invalid_request(d, resp, kVeNoRdAtomic);
    if (a.remote_addr % 8)
        return invalid_request(d, resp, kVeMisalignedAtomic);
    uint64_t orig = 0;
    if (uint32_t ve = execute_atomic(d, resp, h.opcode == VRNIC_WR_ATOMIC_CMP_AND_SWP,
                                     a.remote_addr, a.rkey, a.compare_add, a.swap, &orig))
        return remote_access_error(d, resp, ve);
    SgCursor sc(reinterpret_cast<uint8_t*>(&orig), 8);
    SgCursor dc = msg.cursor();
    s.moved = sg_copy(dc, sc, 8);
    return {};
}

} // namespace

uint32_t check_remote(DeviceState& d, const Qp& resp, uint32_t rkey, uint64_t addr, uint64_t len,
                      uint32_t right, const Mr** out) {
    const Mr* mr = d.obj->mrs.find(rkey);
    if (!mr || mr->pd != resp.pd || (mr->mw_type && !mw_serves(*mr, resp)))
        return kVeBadRkey;
    // A window's bounds and rights are its own, checked as an MR's are.
    if (!mr_contains(d.mem, *mr, addr, len))
        return kVeRemoteBounds;
    if (!(mr->access & right) || !(resp.attr.qp_access_flags & right))
        return kVeRemoteRights;
    if (mr->mw_type && !(mr = mw_target(d, *mr, addr, len)))
        return kVeBadRkey;
    *out = mr;
    return kVeNone;
}

uint32_t execute_atomic(DeviceState& d, const Qp& resp, bool cas, uint64_t addr, uint32_t rkey,
                        uint64_t compare_add, uint64_t swap, uint64_t* orig) {
    const Mr* mr = nullptr;
    if (uint32_t ve = check_remote(d, resp, rkey, addr, 8, VRNIC_ACCESS_REMOTE_ATOMIC, &mr))
        return ve;
    // An aligned 8-byte range never crosses a page, so this is one run.
    std::span<uint8_t> run = mr_run(d.mem, *mr, addr, 8);
    if (run.size() != 8)
        return kVeRemoteBounds;
    auto* target = reinterpret_cast<uint64_t*>(run.data());
    if (cas) {
        *orig = compare_add;
        __atomic_compare_exchange_n(target, orig, swap, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    } else {
        *orig = __atomic_fetch_add(target, compare_add, __ATOMIC_SEQ_CST);
    }
    return kVeNone;
}

bool resolve_recv_sges(DeviceState& d, const Qp& resp, const RecvWqe& w, SgEntry* dst, unsigned* n,
                       uint64_t* room) {
    *n = 0;
    *room = 0;
    for (unsigned i = 0; i < w.nsge; i++) {
        const vrnic_sge& e = w.sge[i];
        if (e.length == 0)
            continue;
        const Mr* mr = d.obj->mrs.find(e.lkey);
        if (!mr || mr->mw_type || mr->pd != resp.pd || !mr_contains(d.mem, *mr, e.addr, e.length) ||
            !(mr->access & VRNIC_ACCESS_LOCAL_WRITE))
            return false;
        dst[(*n)++] = {mr, e.addr, e.length};
        *room += e.length;
    }
    return true;
}

void fail_recv(DeviceState& d, Qp& resp, const RecvWqe& w, uint8_t status, uint32_t src_qpn,
               uint32_t vendor) {
    RecvSource(resp).consume();
    complete_recv(d, resp, w.wr_id, w.idx, status, VRNIC_CQE_OP_RECV, 0, 0, false, src_qpn, false,
                  vendor);
    qp_enter_error(d, resp);
}

Delivery respond(DeviceState& d, Qp& req, Qp& resp, const vrnic_send_wqe_hdr& h, LocalMsg& msg,
                 Slice& s) {
    Delivery r;
    // An XRC target takes every message into the XRC SRQ it names (14.9).
    if (resp.type == QpType::xrc_tgt) {
        switch (xrc_bind_target(d, resp, h.rdma.xrc_srqn)) {
        case XrcBind::ok:
            break;
        case XrcBind::no_srq:
            return invalid_request(d, resp, kVeNoXrcSrq);
        case XrcBind::other_domain:
            return remote_access_error(d, resp, kVeXrcDomain);
        }
    }
    switch (h.opcode) {
    case VRNIC_WR_SEND:
    case VRNIC_WR_SEND_WITH_IMM:
    case VRNIC_WR_SEND_WITH_INV:
        r = respond_send(d, req, resp, h, msg, s);
        break;
    case VRNIC_WR_RDMA_WRITE:
    case VRNIC_WR_RDMA_WRITE_WITH_IMM:
        r = respond_write(d, req, resp, h, msg, s);
        break;
    case VRNIC_WR_RDMA_READ:
        r = respond_read(d, resp, h, msg, s);
        break;
    default:
        r = respond_atomic(d, resp, h, msg, s);
        break;
    }
    if (r.status == VRNIC_WC_SUCCESS && !r.rnr && !r.dropped) {
        add_in_reg(&d.regs()->rdma_rx_bytes, s.moved);
        if (!r.partial)
            add_in_reg(&d.regs()->rdma_rx_msgs, 1);
    }
    // The first message a QP in RTR takes establishes the connection.
    if (!r.rnr && !r.dropped && resp.state == VRNIC_QPS_RTR && !resp.comm_est_sent) {
        resp.comm_est_sent = true;
        post_async_event(d, VRNIC_EQE_COMM_EST, resp.qpn);
    }
    return r;
}

} // namespace vrnic
