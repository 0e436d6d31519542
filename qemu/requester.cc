// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The requester half of RC and UC: SQ polling, WQE validation, destination lookup,
// RNR retries, send completions and flushing (device-interface.md 13, 14).
#include "requester.h"

#include "all_zero.h"

#include "completion.h"
#include "destination.h"
#include "events.h"
#include "fast_reg.h"
#include "log.h"
#include "mr.h"
#include "psn.h"
#include "qp_control.h"
#include "rdma_fabric.h"
#include "recv_source.h"
#include "requester_steps.h"
#include "rnr_backoff.h"
#include "shared_word.h"
#include "wire.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace vrnic {

namespace {

// WQEs one QP may execute per pass, so one busy QP cannot starve the rest.
constexpr unsigned kSqBudget = 64;

uint8_t cqe_opcode(uint8_t wr_opcode) {
    switch (wr_opcode) {
    case VRNIC_WR_RDMA_WRITE:
    case VRNIC_WR_RDMA_WRITE_WITH_IMM:
        return VRNIC_CQE_OP_RDMA_WRITE;
    case VRNIC_WR_RDMA_READ:
        return VRNIC_CQE_OP_RDMA_READ;
    case VRNIC_WR_ATOMIC_CMP_AND_SWP:
        return VRNIC_CQE_OP_COMP_SWAP;
    case VRNIC_WR_ATOMIC_FETCH_AND_ADD:
        return VRNIC_CQE_OP_FETCH_ADD;
    case VRNIC_WR_LOCAL_INV:
        return VRNIC_CQE_OP_LOCAL_INV;
    case VRNIC_WR_REG_MR:
        return VRNIC_CQE_OP_REG_MR;
    case VRNIC_WR_BIND_MW:
        return VRNIC_CQE_OP_BIND_MW;
    default:
        return VRNIC_CQE_OP_SEND;
    }
}

} // namespace

void complete_send(DeviceState& d, Qp& qp, const vrnic_send_wqe_hdr& h, uint8_t status,
                   uint64_t len, uint32_t vendor) {
    const bool signaled = status != VRNIC_WC_SUCCESS || (h.flags & VRNIC_WQE_F_SIGNALED) ||
                          (qp.create_flags & VRNIC_QP_F_SQ_SIG_ALL);
    if (status != VRNIC_WC_SUCCESS) {
        LOG_DBG("QP %u WQE %u: status %u vendor_err %u", qp.qpn, qp.sq.ci, status, vendor);
    } else if (!is_local_op(h.opcode)) {
        add_in_reg(&d.regs()->rdma_tx_msgs, 1);
        add_in_reg(&d.regs()->rdma_tx_bytes, is_atomic_opcode(h.opcode) ? 8 : len);
    }
    if (signaled) {
        vrnic_cqe c{};
        c.wr_id = h.wr_id;
        c.qpn = qp.qpn;
        c.opcode = cqe_opcode(h.opcode);
        c.status = status;
        c.vendor_err = vendor;
        c.wqe_idx = qp.sq.ci;
        if (status == VRNIC_WC_SUCCESS)
            c.byte_len = is_atomic_opcode(h.opcode) ? 8 : static_cast<uint32_t>(len);
        write_cqe_or_fail_qp(d, qp, *qp.send_cq, c, status != VRNIC_WC_SUCCESS);
    }
    if (status != VRNIC_WC_SUCCESS)
        qp_enter_error(d, qp);
}

bool read_send_wqe(DeviceState& d, Qp& qp, SendWqeCopy& w) {
    if (d.mem.read(qp.sq.slot(qp.sq.ci), &w, qp.sq.wqe_bytes())) // validated at CREATE_QP
        return true;
    vrnic_send_wqe_hdr none{};
    complete_send(d, qp, none, VRNIC_WC_LOC_QP_OP_ERR, 0, kVeReadFault);
    return false;
}

uint64_t ack_timeout_ns(uint8_t timeout) {
    if (!timeout)
        return 100'000'000;
    return std::min<uint64_t>(uint64_t(4096) << timeout, 1'000'000'000);
}

namespace {

// Whether a SEND's union holds nothing but what its QP type reads there.
bool send_union_clear(QpType t, const vrnic_send_wqe_hdr& h) {
    uint8_t raw[sizeof(h.raw)];
    memcpy(raw, h.raw, sizeof(raw));
    if (t == QpType::xrc_ini)
        memset(raw + offsetof(vrnic_wqe_rdma, xrc_srqn), 0, sizeof(h.rdma.xrc_srqn));
    return all_zero(raw);
}

} // namespace

uint8_t check_local(DeviceState& d, Qp& qp, SendWqeCopy& w, LocalMsg* msg, uint32_t* vendor) {
    msg->mem = &d.mem;
    const vrnic_send_wqe_hdr& h = w.h;
    if (!qp_type_allows_opcode(qp.type, h.opcode))
        return *vendor = kVeBadOpcode, VRNIC_WC_LOC_QP_OP_ERR;
    if ((h.flags & ~uint8_t(VRNIC_WQE_F_ALL)) ||
        ((h.flags & VRNIC_WQE_F_AV) && qp.type != QpType::ud)) // UD takes it out first
        return *vendor = kVeBadFlags, VRNIC_WC_LOC_QP_OP_ERR;
    if (h.num_sge > qp.sq.max_sge)
        return *vendor = kVeTooManySge, VRNIC_WC_LOC_QP_OP_ERR;
    // A SEND names no destination on a connected QP: its union is reserved
    // (but an XRC initiator's xrc_srqn), so a UD-format WQE there fails
    // instead of going to the QP's peer.
    if (qp.type != QpType::ud && is_send_like(h.opcode) && !send_union_clear(qp.type, h))
        return *vendor = kVeForeignWqe, VRNIC_WC_LOC_QP_OP_ERR;
    const bool atomic = is_atomic_opcode(h.opcode);
    if (h.flags & VRNIC_WQE_F_INLINE) {
        const uint32_t ilen = w.inl.ih.length;
        if (h.opcode == VRNIC_WR_RDMA_READ || atomic || h.num_sge || ilen > qp.max_inline)
            return *vendor = kVeBadInline, VRNIC_WC_LOC_QP_OP_ERR;
        msg->is_inline = true;
        msg->inline_data = w.inl.data;
        msg->len = ilen;
        return VRNIC_WC_SUCCESS;
    }
    const vrnic_sge* sge = w.sge;
    if (atomic &&
        (d.params.atomic_cap == VRNIC_ATOMIC_NONE || h.num_sge != 1 || sge[0].length != 8))
        return *vendor = kVeBadAtomicSge, VRNIC_WC_LOC_QP_OP_ERR;
    uint64_t len = 0;
    for (unsigned i = 0; i < h.num_sge; i++)
        len += sge[i].length;
    if (len > d.params.max_msg_sz)
        return *vendor = kVeMsgTooLong, VRNIC_WC_LOC_LEN_ERR;
    // READ results and atomic originals are written into local memory.
    const bool writes_local = h.opcode == VRNIC_WR_RDMA_READ || atomic;
    for (unsigned i = 0; i < h.num_sge; i++) {
        const vrnic_sge& s = sge[i];
        if (s.length == 0)
            continue;
        const Mr* mr = d.obj->mrs.find(s.lkey);
        if (!mr || mr->mw_type || mr->pd != qp.pd)
            return *vendor = kVeBadLkey, VRNIC_WC_LOC_PROT_ERR;
        if (!mr_contains(d.mem, *mr, s.addr, s.length))
            return *vendor = kVeLocalBounds, VRNIC_WC_LOC_PROT_ERR;
        if (writes_local && !(mr->access & VRNIC_ACCESS_LOCAL_WRITE))
            return *vendor = kVeNoLocalWrite, VRNIC_WC_LOC_PROT_ERR;
        msg->sge[msg->nsge++] = {mr, s.addr, s.length};
    }
    msg->len = len;
    return VRNIC_WC_SUCCESS;
}

namespace {

// The responder for this requester in its device `rd` (14.1
// "Destination"), or nullptr: an RC QP talks to an RC QP, a UC QP to a UC
// QP, and a QP of another VM must have its path back to this device.
Qp* find_responder(DeviceState& d, const PeerDevice& peer, Qp& qp) {
    DeviceState& rd = peer.state();
    Qp* r = rd.obj->qps.find(qp.attr.dest_qpn);
    if (!r || r->type != responder_type(qp.type) || r->attr.dest_qpn != qp.qpn)
        return nullptr;
    if (peer.remote() && !gid_is_local(d, r->attr.av.dgid))
        return nullptr;
    if (r->state != VRNIC_QPS_RTR && r->state != VRNIC_QPS_RTS && r->state != VRNIC_QPS_SQD)
        return nullptr;
    return r;
}

// No responder answers: as on a wire, the requester retries after its ack
// timeout (14.1), unless the destination is this device and it knows at
// once that no QP there takes the message. One that is not connected yet
// (RESET, INIT) drops the request unanswered.
bool request_unanswered(const PeerDevice& peer, const Qp& qp) {
    if (peer.status() != PeerDevice::Status::ok || peer.remote())
        return true;
    const Qp* r = peer.state().obj->qps.find(qp.attr.dest_qpn);
    return r && r->type == responder_type(qp.type) &&
           (r->state == VRNIC_QPS_RESET || r->state == VRNIC_QPS_INIT);
}

// The request went unanswered: wait for the next retry, or, after
// retry_cnt retries, RETRY_EXC_ERR.
Outcome request_lost(DeviceState& d, Qp& qp, const vrnic_send_wqe_hdr& h) {
    if (qp.retry_waiting && qp.retries >= qp.attr.retry_cnt) {
        qp.retry_waiting = false;
        complete_send(d, qp, h, VRNIC_WC_RETRY_EXC_ERR, 0, kVeNoResponder);
        return Outcome::consumed;
    }
    if (qp.retry_waiting) {
        qp.retries++;
        add_in_reg(&d.regs()->retries, 1);
    } else {
        qp.retry_waiting = true;
        qp.retries = 0;
    }
    qp.retry_deadline = d.now() + ack_timeout_ns(qp.attr.timeout);
    return Outcome::rnr_wait;
}

// UC is unreliable (14.7): nothing the responder answers reaches the
// requester, which never waits and never retries. A message the responder
// could not take is dropped and counted.
Outcome uc_delivered(DeviceState& d, Qp& qp, Qp& resp, const vrnic_send_wqe_hdr& h,
                     const LocalMsg& msg, const Delivery& r) {
    if (r.partial)
        return Outcome::partial;
    if (r.rnr || r.dropped)
        count_in_reg(&d.regs()->uc_drops);
    psn_advance(qp, resp, msg.len);
    complete_send(d, qp, h, VRNIC_WC_SUCCESS, msg.len, 0);
    return Outcome::consumed;
}

// One slice of the message to `resp` on `peer`, with the RNR retry
// bookkeeping.
Outcome deliver(DeviceState& d, const PeerDevice& peer, Qp& qp, Qp& resp,
                const vrnic_send_wqe_hdr& h, LocalMsg& msg, Slice& sl, bool rnr_counted) {
    Delivery r = respond(peer.state(), qp, resp, h, msg, sl);
    if (!peer.remote() && !r.rnr && !r.partial)
        d.note_delivery(resp);
    if (qp.type == QpType::uc)
        return uc_delivered(d, qp, resp, h, msg, r);
    if (r.rnr) {
        add_in_reg(&d.regs()->rnr_naks, 1);
        qp.rnr_resp_port = peer.port();
        const uint8_t limit = qp.attr.rnr_retry;
        if (!qp.rnr_waiting) {
            qp.rnr_waiting = true;
            qp.rnr_retries = 0;
        } else if (rnr_counted) {
            qp.rnr_retries++;
        }
        if (limit != 7 && qp.rnr_retries >= limit) {
            qp.rnr_waiting = false;
            complete_send(d, qp, h, VRNIC_WC_RNR_RETRY_EXC_ERR, 0, kVeRnrExceeded);
            return Outcome::consumed;
        }
        qp.rnr_deadline =
            d.now() + rnr_retry_delay_ns(resp.attr.min_rnr_timer, limit, qp.rnr_retries);
        return Outcome::rnr_wait;
    }
    if (r.partial)
        return Outcome::partial;
    if (r.status == VRNIC_WC_SUCCESS)
        psn_advance(qp, resp, msg.len);
    qp.rnr_waiting = false;
    complete_send(d, qp, h, r.status, msg.len, r.vendor);
    return Outcome::consumed;
}

// Executes (the next slice of) the WQE at sq.ci. `rnr_counted`: this
// attempt is a timer-driven RNR retry.
Outcome execute_send(DeviceState& d, Qp& qp, bool rnr_counted) {
    MsgInFlight* f = qp.inflight.get();
    if (f && f->sq_idx != qp.sq.ci) { // cannot happen: ERR and RESET drop it
        qp.inflight.reset();
        f = nullptr;
    }
    // One private copy of the whole slot; everything below reads the copy.
    if (qp.wire_req && qp.wire_req->sq_idx == qp.sq.ci)
        return execute_wire_send(d, qp, nullptr);
    SendWqeCopy local;
    SendWqeCopy& w = f ? f->wqe : local;
    if (!f && !read_send_wqe(d, qp, w))
        return Outcome::consumed;
    const vrnic_send_wqe_hdr& h = w.h;
    if (is_local_op(h.opcode))
        return execute_local_op(d, qp, w);
    // Every slice checks again: a key or QP may have gone since the last.
    LocalMsg msg;
    uint32_t vendor = 0;
    Outcome out = Outcome::consumed;
    if (uint8_t st = check_local(d, qp, w, &msg, &vendor)) {
        complete_send(d, qp, h, st, 0, vendor);
        qp.inflight.reset();
        qp.retry_waiting = false;
        return out;
    }
    PeerDevice peer = PeerDevice::find(d, qp.attr.av.dgid);
    if (peer.status() == PeerDevice::Status::busy)
        return Outcome::busy;
    // No VM of the fabric has the GID: RoCE v2 over the uplink.
    if (peer.status() == PeerDevice::Status::none && has_wire(d) && qp.type != QpType::xrc_ini)
        return execute_wire_send(d, qp, &w);
    Qp* resp = peer.status() == PeerDevice::Status::ok ? find_responder(d, peer, qp) : nullptr;
    if (!resp && qp.type == QpType::uc) {
        count_in_reg(&d.regs()->uc_drops);
        complete_send(d, qp, h, VRNIC_WC_SUCCESS, msg.len, 0);
    } else if (!resp && request_unanswered(peer, qp)) {
        return request_lost(d, qp, h);
    } else if (!resp) {
        complete_send(d, qp, h, VRNIC_WC_RETRY_EXC_ERR, 0, kVeNoResponder);
    } else if (!f && qp.type != QpType::uc && !psn_in_sequence(qp, *resp)) {
        // Dropped unanswered: the retries exhaust.
        complete_send(d, qp, h, VRNIC_WC_RETRY_EXC_ERR, 0, kVePsnSequence);
    } else {
        // A UC responder takes the PSN of a new message as its own (IB's
        // UC resynchronisation after a loss).
        if (!f && qp.type == QpType::uc)
            resp->attr.rq_psn = qp.attr.sq_psn;
        RecvWqe recv;
        Slice sl;
        sl.offset = f ? f->done : 0;
        uint64_t want = msg.len - sl.offset;
        if (peer.contended())
            want = std::min(want, PeerDevice::kSharedSliceBytes);
        sl.max = d.pass.grant(want);
        sl.recv = f ? &f->recv : &recv;
        sl.recv_held = f && f->recv_held;
        out = deliver(d, peer, qp, *resp, h, msg, sl, rnr_counted);
        d.pass.charge(sl.moved);
        if (out == Outcome::partial) {
            if (!f) {
                qp.inflight = std::make_unique<MsgInFlight>();
                f = qp.inflight.get();
                f->sq_idx = qp.sq.ci;
                memcpy(&f->wqe, &local, sizeof(local));
                f->recv = recv;
            }
            f->done = sl.offset + sl.moved;
            f->recv_held = sl.recv_held;
            return out;
        }
    }
    if (qp.retry_waiting) // a request sent again that got its answer
        add_in_reg(&d.regs()->retries, 1);
    qp.inflight.reset();
    qp.retry_waiting = false;
    return out;
}

using Executor = Outcome (*)(DeviceState& d, Qp& qp, bool rnr_counted);

bool process_sq(DeviceState& d, Qp& qp, Executor execute) {
    bool progress = false;
    for (unsigned n = 0; n < kSqBudget && !d.pass.qp_exhausted(); n++) {
        if (qp.state != VRNIC_QPS_RTS && qp.state != VRNIC_QPS_SQD)
            break;
        bool counted = false;
        if (qp.rnr_waiting) {
            // Another VM's responder is looked at only if its lock is free.
            const PeerDevice p = PeerDevice::at(d, qp.rnr_resp_port);
            Qp* r = p.status() == PeerDevice::Status::ok ? p.state().obj->qps.find(qp.rnr_resp_qpn)
                                                         : nullptr;
            const bool moved = r && RecvSource(*r).posted_since(qp.rnr_recv_mark);
            if (!moved && d.now() < qp.rnr_deadline)
                break;
            counted = !moved;
        } else if (qp.retry_waiting && d.now() < qp.retry_deadline) {
            break;
        } else if (qp.state == VRNIC_QPS_SQD && qp.sqd_reached()) {
            break; // drained: fetch nothing posted after the transition
        }
        const uint32_t pi = qp.sq.pi();
        if (!qp.sq.index_ok(pi)) {
            LOG_INFO("QP %u: SQ producer index %u out of range (ci %u)", qp.qpn, pi, qp.sq.ci);
            qp_enter_error(d, qp, VRNIC_EQE_QP_FATAL);
            return true;
        }
        if (pi == qp.sq.ci)
            break;
        d.note_poster(qp);
        const Outcome o = execute(d, qp, counted);
        if (o == Outcome::rnr_wait)
            break;
        if (o == Outcome::busy)
            return true; // not idle: the next pass takes that device's lock first
        if (o == Outcome::partial)
            return true;
        qp.sq.ci++;
        progress = true;
        if (qp.sq_drained_pending && qp.state == VRNIC_QPS_SQD && !qp.rnr_waiting &&
            qp.sqd_reached()) {
            qp.sq_drained_pending = false;
            post_async_event(d, VRNIC_EQE_SQ_DRAINED, qp.qpn);
        }
    }
    return progress;
}

// The CQE opcode of a flushed WQE at `gpa`.
uint8_t flushed_send_opcode(const GuestMemory& mem, uint64_t gpa) {
    uint8_t op = 0;
    mem.read(gpa + offsetof(vrnic_send_wqe_hdr, opcode), &op, 1);
    return cqe_opcode(op);
}
uint8_t flushed_recv_opcode(const GuestMemory&, uint64_t) {
    return VRNIC_CQE_OP_RECV;
}

// Flushes [ci, pi) of one queue into `cq` with WR_FLUSH_ERR, reading only
// wr_id and what `opcode` reads from each WQE (14.3).
bool flush_queue(DeviceState& d, Qp& qp, WorkQueue& wq, Cq& cq,
                 uint8_t (*opcode)(const GuestMemory&, uint64_t)) {
    const uint32_t pi = wq.pi();
    // An invalid producer index is ignored until it is valid again.
    if (pi == wq.ci || !wq.index_ok(pi))
        return false;
    for (; wq.ci != pi && !d.pass.qp_exhausted(); wq.ci++) {
        d.pass.charge(0);
        const uint64_t gpa = wq.slot(wq.ci);
        vrnic_cqe c{};
        d.mem.read(gpa, &c.wr_id, sizeof(c.wr_id));
        c.qpn = qp.qpn;
        c.opcode = opcode(d.mem, gpa);
        c.status = VRNIC_WC_WR_FLUSH_ERR;
        c.wqe_idx = wq.ci;
        post_cqe(d, cq, c, true); // a full CQ loses the CQE; the QP is in ERR already
    }
    return true;
}

} // namespace

uint64_t rnr_timer_ns(uint8_t enc) {
    // IBTA table 45, in units of 10 us; code 0 means 655.36 ms.
    static const uint32_t units_10us[32] = {65536, 1,    2,    3,     4,     6,     8,     12,
                                            16,    24,   32,   48,    64,    96,    128,   192,
                                            256,   384,  512,  768,   1024,  1536,  2048,  3072,
                                            4096,  6144, 8192, 12288, 16384, 24576, 32768, 49152};
    return uint64_t(units_10us[enc & 31]) * 10000;
}

bool engine_poll(DeviceState& d) {
    bool progress = false;
    auto& list = d.obj->active_qps;
    // Nothing in a pass removes QPs; those added during it wait for the next.
    const size_t n = list.size();
    size_t i = d.obj->engine_next < n ? d.obj->engine_next : 0;
    d.pass.start_pass(d.params.pass_bytes, d.params.qp_pass_bytes);
    // Round-robin from where the last pass ended, so that the pass budget
    // never serves the same QPs first.
    for (size_t k = 0; k < n && !d.pass.pass_exhausted(); k++, i = (i + 1) % n) {
        Qp& qp = *list[i];
        d.pass.start_qp();
        if (qp.type == QpType::xrc_tgt) {
            // No queues: its receives are its XRC SRQs' (14.9).
        } else if (qp.state == VRNIC_QPS_ERR) {
            progress |= flush_queue(d, qp, qp.sq, *qp.send_cq, flushed_send_opcode);
            // An SRQ is not the QP's to flush (14.3); an XRC initiator has no RQ.
            if (!qp.srq && qp.recv_cq)
                progress |= flush_queue(d, qp, qp.rq, *qp.recv_cq, flushed_recv_opcode);
        } else {
            progress |= wire_send_answers(d, qp);
            switch (qp.type) {
            case QpType::rc:
            case QpType::uc:
            case QpType::xrc_ini:
                progress |= process_sq(d, qp, execute_send);
                break;
            case QpType::ud:
                progress |= process_sq(d, qp, execute_ud_send);
                break;
            case QpType::xrc_tgt:
                break;
            }
        }
        d.keep_alive();
        if (d.reset_requested())
            break; // the next pass resets: no more guest memory is touched
    }
    d.obj->engine_next = i;
    return progress;
}

uint64_t engine_next_deadline(const DeviceState& d) {
    uint64_t t = UINT64_MAX;
    for (const Qp* qp : d.obj->active_qps) {
        if (qp->rnr_waiting && qp->rnr_deadline < t)
            t = qp->rnr_deadline;
        if (qp->retry_waiting && qp->retry_deadline < t)
            t = qp->retry_deadline;
    }
    return t;
}

} // namespace vrnic
