// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// QP commands (sections 10.13-10.16) and the effects of MODIFY_QP (15).
#include "cmd_util.h"
#include "destination.h"
#include "events.h"
#include "qp_control.h"
#include "qp_state_machine.h"
#include "shared_word.h"
#include "xrc.h"

namespace vrnic {

namespace {

uint32_t check_wq(const DeviceState& d, uint64_t addr, uint32_t log_depth, uint32_t shift,
                  uint32_t shift_min) {
    if (log_depth < VRNIC_WQ_LOG_DEPTH_MIN || log_depth > log2_floor(d.params.max_qp_wr) ||
        shift < shift_min || shift > VRNIC_SQ_WQE_SHIFT_MAX)
        return VRNIC_CMD_STATUS_BAD_PARAM;
    return check_ring(d, addr, uint64_t(1) << (log_depth + shift));
}

// The SRQ a CREATE_QP names: of the QP's context and PD, and no RQ asked
// for besides. Returns a status.
uint32_t check_srq(const DeviceState& d, const vrnic_cmd_create_qp& c, const Uctx* u, const Pd* pd,
                   Srq** out) {
    Srq* s = d.obj->srqs.find(c.srqn);
    if (!s || s->uctx != u)
        return VRNIC_CMD_STATUS_BAD_HANDLE;
    if (s->xrcd || s->pd != pd || c.rq_addr || c.rq_log_depth || c.rq_wqe_shift || c.max_recv_sge)
        return VRNIC_CMD_STATUS_BAD_PARAM;
    *out = s;
    return VRNIC_CMD_STATUS_OK;
}

// Range checks of the attribute values present in the mask (10.14).
const char* bad_attr_value(const DeviceState& d, uint32_t mask, const vrnic_qp_attr& a) {
    const DeviceParams& p = d.params; // never BAR2's copies: the guest can write those
    for (uint8_t b : a.reserved)
        if (b)
            return "reserved attribute bytes";
    if ((mask & VRNIC_QP_ATTR_ACCESS_FLAGS) && (a.qp_access_flags & ~uint32_t(VRNIC_ACCESS_ALL)))
        return "qp_access_flags";
    if ((mask & VRNIC_QP_ATTR_PKEY_INDEX) && a.pkey_index != 0)
        return "pkey_index";
    if ((mask & VRNIC_QP_ATTR_PORT) && a.port_num != 1)
        return "port_num";
    if ((mask & VRNIC_QP_ATTR_EN_SQD_ASYNC_NOTIFY) && a.en_sqd_async_notify > 1)
        return "en_sqd_async_notify";
    if (mask & VRNIC_QP_ATTR_AV) {
        if (const char* bad = bad_av(d, a.av))
            return bad;
    }
    if ((mask & VRNIC_QP_ATTR_PATH_MTU) && (a.path_mtu < VRNIC_MTU_256 || a.path_mtu > p.max_mtu))
        return "path_mtu";
    if ((mask & VRNIC_QP_ATTR_TIMEOUT) && a.timeout > 31)
        return "timeout";
    if ((mask & VRNIC_QP_ATTR_RETRY_CNT) && a.retry_cnt > 7)
        return "retry_cnt";
    if ((mask & VRNIC_QP_ATTR_RNR_RETRY) && a.rnr_retry > 7)
        return "rnr_retry";
    if ((mask & VRNIC_QP_ATTR_RQ_PSN) && (a.rq_psn & ~VRNIC_PSN_MASK))
        return "rq_psn";
    if ((mask & VRNIC_QP_ATTR_SQ_PSN) && (a.sq_psn & ~VRNIC_PSN_MASK))
        return "sq_psn";
    if ((mask & VRNIC_QP_ATTR_MAX_QP_RD_ATOMIC) && a.max_rd_atomic > p.max_rd_atom)
        return "max_rd_atomic";
    if ((mask & VRNIC_QP_ATTR_MAX_DEST_RD_ATOMIC) && a.max_dest_rd_atomic > p.max_rd_atom)
        return "max_dest_rd_atomic";
    if ((mask & VRNIC_QP_ATTR_MIN_RNR_TIMER) && a.min_rnr_timer > 31)
        return "min_rnr_timer";
    if ((mask & VRNIC_QP_ATTR_DEST_QPN) && (a.dest_qpn & ~VRNIC_QPN_MASK))
        return "dest_qpn";
    return nullptr;
}

// 1.4: the GSI QP keeps the GSI qkey; a privileged qkey is the kernel's.
const char* bad_qkey(const Qp& q, uint32_t mask, uint32_t qkey) {
    if (!(mask & VRNIC_QP_ATTR_QKEY))
        return nullptr;
    if (q.gsi && qkey != VRNIC_GSI_QKEY)
        return "GSI qkey";
    if ((qkey & VRNIC_QKEY_PRIVILEGED) && q.uctx->handle != VRNIC_UCTX_KERNEL)
        return "privileged qkey of a user QP";
    return nullptr;
}

void apply_attrs(vrnic_qp_attr& q, uint32_t mask, const vrnic_qp_attr& a) {
    if (mask & VRNIC_QP_ATTR_EN_SQD_ASYNC_NOTIFY)
        q.en_sqd_async_notify = a.en_sqd_async_notify;
    if (mask & VRNIC_QP_ATTR_ACCESS_FLAGS)
        q.qp_access_flags = a.qp_access_flags;
    if (mask & VRNIC_QP_ATTR_PKEY_INDEX)
        q.pkey_index = a.pkey_index;
    if (mask & VRNIC_QP_ATTR_PORT)
        q.port_num = a.port_num;
    if (mask & VRNIC_QP_ATTR_QKEY) // UD only: the state table refuses it for the others
        q.qkey = a.qkey;
    if (mask & VRNIC_QP_ATTR_AV)
        q.av = a.av;
    if (mask & VRNIC_QP_ATTR_PATH_MTU)
        q.path_mtu = a.path_mtu;
    if (mask & VRNIC_QP_ATTR_TIMEOUT)
        q.timeout = a.timeout;
    if (mask & VRNIC_QP_ATTR_RETRY_CNT)
        q.retry_cnt = a.retry_cnt;
    if (mask & VRNIC_QP_ATTR_RNR_RETRY)
        q.rnr_retry = a.rnr_retry;
    if (mask & VRNIC_QP_ATTR_RQ_PSN)
        q.rq_psn = a.rq_psn;
    if (mask & VRNIC_QP_ATTR_MAX_QP_RD_ATOMIC)
        q.max_rd_atomic = a.max_rd_atomic;
    if (mask & VRNIC_QP_ATTR_MIN_RNR_TIMER)
        q.min_rnr_timer = a.min_rnr_timer;
    if (mask & VRNIC_QP_ATTR_SQ_PSN)
        q.sq_psn = a.sq_psn;
    if (mask & VRNIC_QP_ATTR_MAX_DEST_RD_ATOMIC)
        q.max_dest_rd_atomic = a.max_dest_rd_atomic;
    if (mask & VRNIC_QP_ATTR_DEST_QPN)
        q.dest_qpn = a.dest_qpn;
}

} // namespace

CmdResult cmd_create_qp(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out) {
    const vrnic_cmd_create_qp& c = in.create_qp;
    if (c.reserved0)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "reserved field");
    if (c.flags & ~uint16_t(VRNIC_QP_F_SQ_SIG_ALL))
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "unknown QP flags");
    QpType type;
    bool gsi = false;
    if (uint32_t st = qp_type_from_dev(c.qp_type, &type, &gsi))
        CMD_FAIL(st, "QP type");
    if (gsi && c.uctx != VRNIC_UCTX_KERNEL)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "GSI QP of a user context");
    if (gsi && d.obj->qps.find(VRNIC_QPN_GSI))
        CMD_FAIL(VRNIC_CMD_STATUS_BUSY, "GSI QP exists");
    if (type == QpType::xrc_tgt)
        return create_xrc_tgt(d, c, out);
    if (c.xrcd)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "xrcd of a QP that is no XRC target");
    // An XRC initiator sends only: it has no receive side.
    const bool ini = type == QpType::xrc_ini;
    if (ini &&
        (c.recv_cqn || c.srqn || c.rq_addr || c.rq_log_depth || c.rq_wqe_shift || c.max_recv_sge))
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "receive-side field of an XRC initiator");
    Uctx* u = d.find_uctx(c.uctx);
    Pd* pd = d.obj->pds.find(c.pd);
    Cq* scq = d.obj->cqs.find(c.send_cqn);
    Cq* rcq = ini ? nullptr : d.obj->cqs.find(c.recv_cqn);
    if (!u || !pd || !scq || (!ini && !rcq))
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "no such context, PD or CQ");
    if (pd->uctx != u || scq->uctx != u || (rcq && rcq->uctx != u))
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "PD or CQ of another context");
    Srq* srq = nullptr;
    if (c.srqn != VRNIC_HANDLE_NONE) {
        if (uint32_t st = check_srq(d, c, u, pd, &srq))
            CMD_FAIL(st, "SRQ");
    }
    if (uint32_t st =
            check_wq(d, c.sq_addr, c.sq_log_depth, c.sq_wqe_shift, VRNIC_SQ_WQE_SHIFT_MIN))
        CMD_FAIL(st, "SQ ring");
    if (uint32_t st = srq || ini ? 0
                                 : check_wq(d, c.rq_addr, c.rq_log_depth, c.rq_wqe_shift,
                                            VRNIC_RQ_WQE_SHIFT_MIN))
        CMD_FAIL(st, "RQ ring");
    if (c.max_send_sge > d.params.max_sge || c.max_send_sge > VRNIC_SQ_MAX_SGE(c.sq_wqe_shift))
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "max_send_sge");
    if (!srq && !ini &&
        (c.max_recv_sge > d.params.max_sge || c.max_recv_sge > VRNIC_RQ_MAX_SGE(c.rq_wqe_shift)))
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "max_recv_sge");
    if (c.max_inline > d.params.max_inline || c.max_inline > VRNIC_SQ_MAX_INLINE(c.sq_wqe_shift))
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "max_inline");

    uint32_t slot = u->alloc_slot();
    if (!slot)
        CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "doorbell page full");
    auto qp = std::make_unique<Qp>();
    Qp* q = qp.get();
    q->type = type;
    q->gsi = gsi;
    q->attr.qkey = gsi ? VRNIC_GSI_QKEY : 0;
    q->uctx = u;
    q->pd = pd;
    q->send_cq = scq;
    q->recv_cq = rcq;
    q->create_flags = c.flags;
    const vrnic_db_qp& db = d.bar2.slot(u->db_page, slot)->qp;
    q->sq = {.ring = c.sq_addr,
             .log_depth = c.sq_log_depth,
             .wqe_shift = c.sq_wqe_shift,
             .max_sge = c.max_send_sge,
             .pi_word = &db.sq_pi};
    q->rq = {.ring = c.rq_addr,
             .log_depth = c.rq_log_depth,
             .wqe_shift = c.rq_wqe_shift,
             .max_sge = c.max_recv_sge,
             .pi_word = ini ? xrc_no_queue_pi() : &db.rq_pi};
    q->srq = srq;
    q->max_inline = c.max_inline;
    q->db_slot = slot;
    q->qpn = gsi ? d.obj->qps.insert_gsi(std::move(qp)) : d.obj->qps.insert(std::move(qp));
    if (!q->qpn) {
        u->free_slot(slot);
        CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "max_qp reached");
    }
    store_release(&d.bar2.slot(u->db_page, slot)->raw, uint64_t(0));
    u->refs++;
    pd->refs++;
    scq->refs++;
    if (rcq)
        rcq->refs++;
    if (srq)
        srq->refs++;
    out.create_qp_resp.qpn = q->qpn;
    out.create_qp_resp.db_slot = slot;
    return cmd_ok();
}

CmdResult cmd_modify_qp(DeviceState& d, const vrnic_cmd& in, vrnic_cmd&) {
    const vrnic_cmd_modify_qp& m = in.modify_qp;
    Qp* q = d.obj->qps.find(m.qpn);
    if (!q)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "no such QP");
    TransitionCheck t = check_qp_transition(q->type, q->state, m.attr_mask, m.attr);
    if (t.status != VRNIC_CMD_STATUS_OK)
        CMD_FAIL(t.status, "QP state transition or attribute mask");
    if (const char* bad = bad_attr_value(d, m.attr_mask, m.attr))
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, bad);
    if (const char* bad = bad_qkey(*q, m.attr_mask, m.attr.qkey))
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, bad);

    const vrnic_qp_state from = q->state;
    if (t.target == VRNIC_QPS_RESET) {
        qp_enter_reset(d, *q);
        return cmd_ok();
    }
    apply_attrs(q->attr, m.attr_mask, m.attr);
    if (t.target == VRNIC_QPS_ERR) {
        qp_enter_error(d, *q);
        return cmd_ok();
    }
    q->state = t.target;
    q->attr.qp_state = t.target;
    qp_set_active(d, *q, true);
    if (t.target == VRNIC_QPS_SQD && from != VRNIC_QPS_SQD) {
        // What was posted before this command (the producer index now) still
        // runs, even if the engine has not fetched it yet; then SQ_DRAINED.
        const uint32_t pi = q->sq.pi();
        q->sqd_stop = q->sq.index_ok(pi) ? pi : q->sq.ci + q->rnr_waiting;
        if (q->attr.en_sqd_async_notify) {
            if (q->rnr_waiting || !q->sqd_reached())
                q->sq_drained_pending = true;
            else
                post_async_event(d, VRNIC_EQE_SQ_DRAINED, q->qpn);
        }
    }
    if (t.target != VRNIC_QPS_SQD)
        q->sq_drained_pending = false;
    return cmd_ok();
}

CmdResult cmd_query_qp(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out) {
    uint32_t st = 0;
    Qp* q = named_object(d.obj->qps, in, st);
    if (!q)
        CMD_FAIL(st, "bad QP handle");
    vrnic_qp_attr& a = out.query_qp_resp.attr;
    a = q->attr;
    a.qp_state = q->state;
    a.cur_qp_state = q->state;
    a.sq_draining = q->state == VRNIC_QPS_SQD && (q->rnr_waiting || !q->sqd_reached());
    return cmd_ok();
}

CmdResult cmd_destroy_qp(DeviceState& d, const vrnic_cmd& in, vrnic_cmd&) {
    uint32_t st = 0;
    Qp* q = named_object(d.obj->qps, in, st);
    if (!q)
        CMD_FAIL(st, "bad QP handle");
    qp_set_active(d, *q, false);
    d.obj->mcast.detach_all(q->qpn);
    publish_mcast_groups(d);
    if (q->type == QpType::xrc_tgt) {
        // Its pd, srq and recv_cq are a binding, not references.
        xrc_unbind_target(d, *q);
        q->xrcd->refs--;
        q->uctx->refs--;
        d.obj->qps.remove(in.handle.handle);
        return cmd_ok();
    }
    q->uctx->free_slot(q->db_slot);
    store_release(&d.bar2.slot(q->uctx->db_page, q->db_slot)->raw, uint64_t(0));
    q->uctx->refs--;
    q->pd->refs--;
    q->send_cq->refs--;
    if (q->recv_cq)
        q->recv_cq->refs--;
    if (q->srq)
        q->srq->refs--;
    d.obj->qps.remove(in.handle.handle);
    return cmd_ok();
}

} // namespace vrnic
