// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Where a responder QP takes its receive WQEs from: its own RQ. The
// responder and the RNR wait reach the queue only through this.
#pragma once

#include "device_state.h"
#include "wqe_copy.h"

#include <cstdint>

namespace vrnic {

class RecvSource {
  public:
    enum class Fetch { ok, rnr, lost, malformed };

    explicit RecvSource(Qp& qp) : qp_(qp), wq_(qp.rq) {}

    // Reads the next receive WQE into *w without consuming it. `lost`: the
    // queue's producer index was invalid and the QP is now in ERR.
    Fetch fetch(DeviceState& d, RecvWqe* w);
    // Consumes the WQE fetch() returned.
    void consume() { wq_.ci++; }
    // Whether `w` is still the head (a message moved in slices holds it).
    bool at_head(const RecvWqe& w) const { return wq_.ci == w.idx; }

    // After an RNR: what to compare later with posted_since().
    uint32_t rnr_mark() const { return wq_.ci; } // pi == ci: it was empty
    // Whether a receive was posted since rnr_mark() returned `mark`.
    bool posted_since(uint32_t mark) const { return wq_.pi() != mark; }

  private:
    Qp& qp_;
    WorkQueue& wq_;
};

} // namespace vrnic
