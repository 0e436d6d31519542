// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "xrc.h"

#include "cmd_util.h"
#include "recv_source.h"

namespace vrnic {

const uint32_t* xrc_no_queue_pi() {
    static const uint32_t zero = 0;
    return &zero;
}

CmdResult create_xrc_tgt(DeviceState& d, const vrnic_cmd_create_qp& c, vrnic_cmd& out) {
    if (c.pd || c.send_cqn || c.recv_cqn || c.srqn || c.flags || c.sq_addr || c.rq_addr ||
        c.sq_log_depth || c.sq_wqe_shift || c.rq_log_depth || c.rq_wqe_shift || c.max_send_sge ||
        c.max_recv_sge || c.max_inline)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "PD, CQ, SRQ or queue field of an XRC target");
    Uctx* u = d.find_uctx(c.uctx);
    Xrcd* x = d.obj->xrcds.find(c.xrcd);
    if (!u || !x)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "no such context or XRCD");
    if (!xrcd_usable(*x, *u))
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "XRCD of another context");
    auto qp = std::make_unique<Qp>();
    Qp* q = qp.get();
    q->type = QpType::xrc_tgt;
    q->uctx = u;
    q->xrcd = x;
    q->sq.pi_word = xrc_no_queue_pi();
    q->rq.pi_word = xrc_no_queue_pi();
    q->qpn = d.obj->qps.insert(std::move(qp));
    if (!q->qpn)
        CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "max_qp reached");
    u->refs++;
    x->refs++;
    out.create_qp_resp.qpn = q->qpn;
    out.create_qp_resp.db_slot = 0; // no queues, no doorbell
    return cmd_ok();
}

XrcBind xrc_bind_target(DeviceState& d, Qp& t, uint32_t srqn) {
    Srq* s = d.obj->srqs.find(srqn);
    if (!s || !s->xrcd)
        return XrcBind::no_srq;
    if (s->xrcd != t.xrcd)
        return XrcBind::other_domain;
    if (t.srq != s) {
        xrc_unbind_target(d, t);
        t.srq = s;
        t.pd = s->pd;
        t.recv_cq = s->cq;
    }
    return XrcBind::ok;
}

void xrc_unbind_target(DeviceState& d, Qp& t) {
    if (!t.srq)
        return;
    RecvSource(t).flush_taken(d);
    t.srq = nullptr;
    t.pd = nullptr;
    t.recv_cq = nullptr;
}

void xrc_srq_gone(DeviceState& d, const Srq& s) {
    for (Qp* q : d.obj->active_qps) {
        if (q->type != QpType::xrc_tgt || q->srq != &s)
            continue;
        q->srq_taken.reset();
        q->srq = nullptr;
        q->pd = nullptr;
        q->recv_cq = nullptr;
    }
}

} // namespace vrnic
