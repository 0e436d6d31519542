// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Where a responder QP takes its receive WQEs from: its own RQ, or the SRQ
// it is attached to. The responder, the RNR wait and the QP's state changes
// reach the queue only through this.
#pragma once

#include "device_state.h"
#include "wqe_copy.h"

#include <cstdint>

namespace vrnic {

class RecvSource {
  public:
    enum class Fetch { ok, rnr, lost, malformed };

    explicit RecvSource(Qp& qp) : qp_(qp), wq_(qp.srq ? qp.srq->wq : qp.rq) {}

    // Reads the next receive WQE into *w. From an RQ it stays at the head
    // until consume(); from an SRQ the QP takes it off the SRQ at once (other
    // QPs share the SRQ) and fetches it again until consume(). `lost`: the
    // queue's producer index was invalid and the QP is now in ERR.
    Fetch fetch(DeviceState& d, RecvWqe* w);
    // Consumes (completes) the WQE fetch() returned.
    void consume();
    // Whether `w` is still the head (a message moved in slices holds it).
    bool at_head(const RecvWqe& w) const;

    // After an RNR: what to compare later with posted_since().
    uint32_t rnr_mark() const { return wq_.ci; } // pi == ci: it was empty
    // Whether a receive was posted since rnr_mark() returned `mark`.
    bool posted_since(uint32_t mark) const { return wq_.pi() != mark; }

    // The QP entered ERR (from another state): the RQ is flushed by the
    // engine; with an SRQ, the WQE the QP took is flushed now and
    // QP_LAST_WQE_REACHED posted (14.3).
    void entered_error(DeviceState& d);
    // The QP entered RESET: its RQ WQEs are discarded; an SRQ is left alone
    // except for the WQE the QP took, which is flushed: it belongs to the
    // SRQ's consumer, who would lose the buffer otherwise.
    void entered_reset(DeviceState& d);
    // The WQE the QP took off its SRQ, if any, completes as flushed.
    void flush_taken(DeviceState& d);

  private:
    Fetch fetch_srq(DeviceState& d, RecvWqe* w);
    void take_from_srq(DeviceState& d, uint32_t pi);

    Qp& qp_;
    WorkQueue& wq_;
};

} // namespace vrnic
