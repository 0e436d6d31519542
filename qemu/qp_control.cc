// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "qp_control.h"

#include "events.h"
#include "log.h"
#include "recv_source.h"
#include "xrc.h"

#include <algorithm>

namespace vrnic {

void qp_set_active(DeviceState& d, Qp& qp, bool active) {
    if (qp.in_active_list == active)
        return;
    auto& list = d.obj->active_qps;
    if (active)
        list.push_back(&qp);
    else
        list.erase(std::find(list.begin(), list.end(), &qp));
    qp.in_active_list = active;
}

void qp_enter_error(DeviceState& d, Qp& qp, uint8_t async_event) {
    const bool entering = qp.state != VRNIC_QPS_ERR;
    if (entering)
        LOG_DBG("QP %u: %u -> ERR", qp.qpn, qp.state);
    qp.state = VRNIC_QPS_ERR;
    qp.attr.qp_state = VRNIC_QPS_ERR;
    qp.rnr_waiting = false;
    qp.retry_waiting = false;
    qp.sq_drained_pending = false;
    // The message in flight stays until RESET (its WQE is flushed like the
    // rest): the step that failed may still read it, as when a QP
    // connected to itself fails its own request.
    qp.wire_req.reset();
    qp.wire_resp.reset();
    qp.mcast_sent = 0;
    qp_set_active(d, qp, true);
    if (async_event)
        post_async_event(d, async_event, qp.qpn);
    if (entering)
        RecvSource(qp).entered_error(d);
}

void qp_enter_reset(DeviceState& d, Qp& qp) {
    qp.sq.ci = qp.sq.pi();
    RecvSource(qp).entered_reset(d);
    if (qp.type == QpType::xrc_tgt)
        xrc_unbind_target(d, qp);
    qp.state = VRNIC_QPS_RESET;
    qp.attr = vrnic_qp_attr{};
    qp.attr.qkey = qp.gsi ? VRNIC_GSI_QKEY : 0;
    qp.comm_est_sent = false;
    qp.rnr_waiting = false;
    qp.retry_waiting = false;
    qp.sq_drained_pending = false;
    qp.inflight.reset();
    qp.wire_req.reset();
    qp.wire_resp.reset();
    qp.mcast_sent = 0;
    qp_set_active(d, qp, false);
}

} // namespace vrnic
