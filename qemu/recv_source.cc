// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "recv_source.h"

#include "events.h"
#include "log.h"
#include "qp_control.h"
#include "shared_word.h"

namespace vrnic {

namespace {

// Reads the WQE at wq.ci into *w.
RecvSource::Fetch read_wqe(DeviceState& d, const WorkQueue& wq, RecvWqe* w) {
    const uint64_t gpa = wq.slot(wq.ci);
    w->idx = wq.ci;
    vrnic_recv_wqe_hdr h;
    if (!d.mem.read(gpa, &h, sizeof(h)))
        return RecvSource::Fetch::malformed;
    w->wr_id = h.wr_id;
    if (h.num_sge > wq.max_sge)
        return RecvSource::Fetch::malformed;
    w->nsge = h.num_sge;
    if (w->nsge && !d.mem.read(gpa + VRNIC_RECV_WQE_HDR_SIZE, w->sge, w->nsge * VRNIC_SGE_SIZE))
        return RecvSource::Fetch::malformed;
    return RecvSource::Fetch::ok;
}

} // namespace

RecvSource::Fetch RecvSource::fetch(DeviceState& d, RecvWqe* w) {
    if (qp_.srq)
        return fetch_srq(d, w);
    const uint32_t pi = wq_.pi();
    if (!wq_.index_ok(pi)) {
        LOG_INFO("QP %u: RQ producer index %u out of range (ci %u)", qp_.qpn, pi, wq_.ci);
        qp_enter_error(d, qp_, VRNIC_EQE_QP_FATAL);
        return Fetch::lost;
    }
    if (pi == wq_.ci)
        return Fetch::rnr;
    return read_wqe(d, wq_, w);
}

// An invalid SRQ producer index is the fault of the context that owns the
// SRQ (and all its QPs): the QP that fetched goes to ERR as with an invalid
// RQ index, SRQ_ERR is posted once, and the SRQ serves again when the index
// is valid. A requester never waits on it, so no other context stalls.
RecvSource::Fetch RecvSource::fetch_srq(DeviceState& d, RecvWqe* w) {
    if (qp_.srq_taken) {
        *w = *qp_.srq_taken;
        return Fetch::ok;
    }
    Srq& s = *qp_.srq;
    const uint32_t pi = wq_.pi();
    if (!wq_.index_ok(pi)) {
        LOG_INFO("SRQ %u: producer index %u out of range (ci %u)", s.srqn, pi, wq_.ci);
        if (!s.pi_invalid) {
            s.pi_invalid = true;
            post_async_event(d, VRNIC_EQE_SRQ_ERR, s.srqn);
        }
        qp_enter_error(d, qp_, VRNIC_EQE_QP_FATAL);
        return Fetch::lost;
    }
    s.pi_invalid = false;
    if (pi == wq_.ci)
        return Fetch::rnr;
    const Fetch f = read_wqe(d, wq_, w);
    take_from_srq(d, pi);
    if (f == Fetch::ok)
        qp_.srq_taken = std::make_unique<RecvWqe>(*w);
    return f; // malformed: completed in error by the caller, which consumes it
}

void RecvSource::take_from_srq(DeviceState& d, uint32_t pi) {
    Srq& s = *qp_.srq;
    wq_.ci++;
    store_release(s.ci_word, wq_.ci); // the guest may reuse the slot now
    if (s.limit && pi - wq_.ci < s.limit) {
        s.limit = 0;
        post_async_event(d, VRNIC_EQE_SRQ_LIMIT, s.srqn);
    }
}

void RecvSource::consume() {
    if (qp_.srq)
        qp_.srq_taken.reset();
    else
        wq_.ci++;
}

bool RecvSource::at_head(const RecvWqe& w) const {
    if (qp_.srq)
        return qp_.srq_taken && qp_.srq_taken->idx == w.idx;
    return wq_.ci == w.idx;
}

void RecvSource::flush_taken(DeviceState& d) {
    if (!qp_.srq_taken)
        return;
    vrnic_cqe c{};
    c.wr_id = qp_.srq_taken->wr_id;
    c.qpn = qp_.qpn;
    c.opcode = VRNIC_CQE_OP_RECV;
    c.status = VRNIC_WC_WR_FLUSH_ERR;
    c.wqe_idx = qp_.srq_taken->idx;
    post_cqe(d, *qp_.recv_cq, c, true); // a full CQ loses it, as every flush
    qp_.srq_taken.reset();
}

void RecvSource::entered_error(DeviceState& d) {
    // An XRC target receives from XRC SRQs even when bound to none now.
    if (!qp_.srq && qp_.type != QpType::xrc_tgt)
        return;
    flush_taken(d);
    post_async_event(d, VRNIC_EQE_QP_LAST_WQE_REACHED, qp_.qpn);
}

void RecvSource::entered_reset(DeviceState& d) {
    if (qp_.srq)
        flush_taken(d);
    else
        wq_.ci = wq_.pi();
}

} // namespace vrnic
