// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "recv_source.h"

#include "log.h"
#include "qp_control.h"

namespace vrnic {

RecvSource::Fetch RecvSource::fetch(DeviceState& d, RecvWqe* w) {
    const uint32_t pi = wq_.pi();
    if (!wq_.index_ok(pi)) {
        LOG_INFO("QP %u: RQ producer index %u out of range (ci %u)", qp_.qpn, pi, wq_.ci);
        qp_enter_error(d, qp_, VRNIC_EQE_QP_FATAL);
        return Fetch::lost;
    }
    if (pi == wq_.ci)
        return Fetch::rnr;
    const uint64_t gpa = wq_.slot(wq_.ci);
    w->idx = wq_.ci;
    vrnic_recv_wqe_hdr h;
    if (!d.mem.read(gpa, &h, sizeof(h)))
        return Fetch::malformed;
    w->wr_id = h.wr_id;
    if (h.num_sge > wq_.max_sge)
        return Fetch::malformed;
    w->nsge = h.num_sge;
    if (w->nsge && !d.mem.read(gpa + VRNIC_RECV_WQE_HDR_SIZE, w->sge, w->nsge * VRNIC_SGE_SIZE))
        return Fetch::malformed;
    return Fetch::ok;
}

} // namespace vrnic
