// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The verbs: control path through the kernel (ibv_cmd_*), data path on the
// mapped rings. Every entry point is noexcept and reports failure the way
// libibverbs expects (errno and NULL, or a returned errno).

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>

#include "guard.h"
#include "provider.h"

namespace vrnic::prov {
namespace {

// ---------------------------------------------------------------------------
// Device and port
// ---------------------------------------------------------------------------

int query_device_ex(ibv_context* context, const ibv_query_device_ex_input* input,
                    ibv_device_attr_ex* attr, size_t attr_size) noexcept {
    return guarded([&] {
        ib_uverbs_ex_query_device_resp resp{};
        size_t resp_size = sizeof(resp);
        int err = ibv_cmd_query_device_any(context, input, attr, attr_size, &resp, &resp_size);
        if (err)
            return err;
        // fw_version register: major << 32 | minor << 16 | patch (spec 4.1).
        uint64_t fw = resp.base.fw_ver;
        std::snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver), "%u.%u.%u",
                      static_cast<unsigned>(fw >> 32), static_cast<unsigned>((fw >> 16) & 0xffff),
                      static_cast<unsigned>(fw & 0xffff));
        return 0;
    });
}

int query_port(ibv_context* context, uint8_t port, ibv_port_attr* attr) noexcept {
    return guarded([&] {
        struct ibv_query_port cmd {};
        return ibv_cmd_query_port(context, port, attr, &cmd, sizeof(cmd));
    });
}

// ---------------------------------------------------------------------------
// PD, MR, AH
// ---------------------------------------------------------------------------

ibv_pd* alloc_pd(ibv_context* context) noexcept {
    return guarded_ptr<ibv_pd>([&](ibv_pd*& out) {
        auto pd = std::make_unique<Pd>();
        struct ibv_alloc_pd cmd {};
        ib_uverbs_alloc_pd_resp resp{};
        int err = ibv_cmd_alloc_pd(context, &pd->pd, &cmd, sizeof(cmd), &resp, sizeof(resp));
        if (!err)
            out = &pd.release()->pd;
        return err;
    });
}

int dealloc_pd(ibv_pd* ibpd) noexcept {
    return guarded([&] {
        Pd* pd = to_pd(ibpd);
        if (pd->is_parent())
            return dealloc_parent_domain(pd);
        if (pd->users.load(std::memory_order_relaxed))
            return EBUSY; // a parent domain still stands for it
        int err = ibv_cmd_dealloc_pd(ibpd);
        if (!err)
            delete pd;
        return err;
    });
}

ibv_mr* reg_mr(ibv_pd* pd, void* addr, size_t length, uint64_t hca_va, int access) noexcept {
    return guarded_ptr<ibv_mr>([&](ibv_mr*& out) {
        auto mr = std::make_unique<Mr>();
        struct ibv_reg_mr cmd {};
        ib_uverbs_reg_mr_resp resp{};
        int err = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, &mr->vmr, &cmd, sizeof(cmd),
                                 &resp, sizeof(resp));
        if (!err)
            out = &mr.release()->vmr.ibv_mr;
        return err;
    });
}

// The kernel replaces the MR (new keys) and keeps the handle, so the same
// Mr stands for it. Its access is kept current for ibv_bind_mw (mw.cc), as
// neither libibverbs nor ibv_cmd_rereg_mr does.
int rereg_mr(verbs_mr* vmr, int flags, ibv_pd* pd, void* addr, size_t length, int access) noexcept {
    return guarded([&] {
        struct ibv_rereg_mr cmd {};
        ib_uverbs_rereg_mr_resp resp{};
        int err = ibv_cmd_rereg_mr(vmr, flags, addr, length, reinterpret_cast<uintptr_t>(addr),
                                   access, pd, &cmd, sizeof(cmd), &resp, sizeof(resp));
        if (!err && (flags & IBV_REREG_MR_CHANGE_ACCESS))
            vmr->access = access;
        return err;
    });
}

int dereg_mr(verbs_mr* vmr) noexcept {
    return guarded([&] {
        int err = ibv_cmd_dereg_mr(vmr);
        if (!err)
            delete reinterpret_cast<Mr*>(vmr);
        return err;
    });
}

ibv_ah* create_ah(ibv_pd* pd, ibv_ah_attr* attr) noexcept {
    return guarded_ptr<ibv_ah>([&](ibv_ah*& out) {
        auto ah = std::make_unique<Ah>();
        WithUdata<ib_uverbs_create_ah_resp, vrnic_ibv_create_ah_resp> resp{};
        int err = ibv_cmd_create_ah(pd, &ah->ah, attr, resp.core(), resp.size());
        if (err)
            return err;
        ah->handle = resp.drv.ah_handle;
        out = &ah.release()->ah;
        return 0;
    });
}

int destroy_ah(ibv_ah* ibah) noexcept {
    return guarded([&] {
        int err = ibv_cmd_destroy_ah(ibah);
        if (!err)
            delete reinterpret_cast<Ah*>(ibah);
        return err;
    });
}

// ---------------------------------------------------------------------------
// CQ
// ---------------------------------------------------------------------------

constexpr uint32_t kMaxCqLogDepth = 24;

int map_cq_ring(int cmd_fd, uint64_t key, uint64_t size, uint32_t log_depth, Mapping& out) {
    if (log_depth < VRNIC_CQ_LOG_DEPTH_MIN || log_depth > kMaxCqLogDepth ||
        size < (uint64_t{VRNIC_CQE_SIZE} << log_depth))
        return EPROTO;
    return out.map(cmd_fd, key, size, PROT_READ);
}

int create_cq_common(ibv_context* context, ibv_cq_init_attr_ex* attr, Cq*& out) {
    ContextState& st = state(context);
    if (attr->wc_flags & ~kCqExWcFlags)
        return EOPNOTSUPP;
    if (attr->comp_mask & ~uint32_t{IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD})
        return EOPNOTSUPP;
    if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
        (attr->flags & ~uint32_t{IBV_CREATE_CQ_ATTR_SINGLE_THREADED}))
        return EOPNOTSUPP;
    if (attr->cqe == 0 || attr->cqe > st.caps.max_cqe)
        return EINVAL;
    // A CQ on a parent domain takes its object's memory from its allocator.
    Pd* domain = nullptr;
    if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) {
        domain = attr->parent_domain ? to_pd(attr->parent_domain) : nullptr;
        if (!domain || !domain->is_parent() || attr->parent_domain->context != context)
            return EINVAL;
    }

    auto* cq = make_object<Cq>(domain, kResTypeCq);
    WithUdata<struct ibv_create_cq_ex, vrnic_ibv_create_cq> cmd{};
    WithUdata<ib_uverbs_ex_create_cq_resp, vrnic_ibv_create_cq_resp> resp{};
    int err = ibv_cmd_create_cq_ex(context, attr, &cq->vcq, cmd.core(), cmd.size(), resp.core(),
                                   resp.size(), 0);
    if (err) {
        destroy_object(cq, kResTypeCq);
        return err;
    }
    const auto& r = resp.drv;
    err = Doorbell::valid_slot(r.db_slot) ? 0 : EPROTO;
    if (!err)
        err = map_cq_ring(st.cmd_fd, r.ring_mmap_key, r.ring_size, r.log_depth, cq->ring);
    if (err) {
        ibv_cmd_destroy_cq(&cq->vcq.cq);
        destroy_object(cq, kResTypeCq);
        return err;
    }
    cq->poller.init(cq->ring.get(), r.log_depth, st.db.word(r.db_slot, VRNIC_DB_CQ_CI),
                    st.db.word(r.db_slot, VRNIC_DB_CQ_ARM), &st.qps);
    set_cq_ex_ops(&cq->vcq.cq_ex);
    out = cq;
    return 0;
}

ibv_cq* create_cq(ibv_context* context, int cqe, ibv_comp_channel* channel,
                  int comp_vector) noexcept {
    return guarded_ptr<ibv_cq>([&](ibv_cq*& out) {
        if (cqe <= 0 || comp_vector < 0)
            return EINVAL;
        ibv_cq_init_attr_ex attr{};
        attr.cqe = static_cast<uint32_t>(cqe);
        attr.channel = channel;
        attr.comp_vector = static_cast<uint32_t>(comp_vector);
        Cq* cq = nullptr;
        int err = create_cq_common(context, &attr, cq);
        if (!err)
            out = &cq->vcq.cq;
        return err;
    });
}

ibv_cq_ex* create_cq_ex(ibv_context* context, ibv_cq_init_attr_ex* attr) noexcept {
    return guarded_ptr<ibv_cq_ex>([&](ibv_cq_ex*& out) {
        Cq* cq = nullptr;
        int err = create_cq_common(context, attr, cq);
        if (!err)
            out = &cq->vcq.cq_ex;
        return err;
    });
}

int destroy_cq(ibv_cq* ibcq) noexcept {
    return guarded([&] {
        int err = ibv_cmd_destroy_cq(ibcq);
        if (!err)
            destroy_object(to_cq(ibcq), kResTypeCq);
        return err;
    });
}

int resize_cq(ibv_cq* ibcq, int cqe) noexcept {
    return guarded([&] {
        Cq* cq = to_cq(ibcq);
        ContextState& st = state(ibcq->context);
        if (cqe <= 0 || static_cast<uint32_t>(cqe) > st.caps.max_cqe)
            return EINVAL;
        std::lock_guard<SpinLock> guard(cq->poller.lock());
        // The device reads ci from the slot during the resize (spec 10.12).
        cq->poller.ring().publish_ci();
        WithUdata<struct ibv_resize_cq, vrnic_ibv_resize_cq> cmd{};
        WithUdata<ib_uverbs_resize_cq_resp, vrnic_ibv_resize_cq_resp> resp{};
        int err = ibv_cmd_resize_cq(ibcq, cqe, cmd.core(), cmd.size(), resp.core(), resp.size());
        if (err)
            return err;
        Mapping ring;
        err = map_cq_ring(st.cmd_fd, resp.drv.ring_mmap_key, resp.drv.ring_size, resp.drv.log_depth,
                          ring);
        if (err)
            return err; // the device moved on to a ring we cannot see
        cq->poller.ring().replace_ring(ring.get(), resp.drv.log_depth);
        cq->ring = std::move(ring);
        return 0;
    });
}

int poll_cq(ibv_cq* ibcq, int n, ibv_wc* wc) noexcept {
    return to_cq(ibcq)->poller.poll(n, wc);
}

int req_notify_cq(ibv_cq* ibcq, int solicited_only) noexcept {
    Cq* cq = to_cq(ibcq);
    std::lock_guard<SpinLock> guard(cq->poller.lock());
    cq->poller.ring().arm(solicited_only != 0);
    return 0;
}

// ---------------------------------------------------------------------------
// QP
// ---------------------------------------------------------------------------

// Locks the QP's CQs (once if shared, in address order) for QP teardown.
class CqPairLock {
  public:
    CqPairLock(Cq* a, Cq* b) noexcept : a_(a), b_(a == b ? nullptr : b) {
        if (b_ && b_ < a_)
            std::swap(a_, b_);
        a_->poller.lock().lock();
        if (b_)
            b_->poller.lock().lock();
    }
    ~CqPairLock() {
        if (b_)
            b_->poller.lock().unlock();
        a_->poller.lock().unlock();
    }
    CqPairLock(const CqPairLock&) = delete;
    CqPairLock& operator=(const CqPairLock&) = delete;

  private:
    Cq* a_;
    Cq* b_;
};

// Drop the QP's CQEs still in its CQs (the device produces no more).
int forget_qp_cqes(Qp* qp) noexcept {
    int err = qp->send_cq->poller.forget_qp(qp->rings.qpn);
    if (!err && qp->recv_cq != qp->send_cq)
        err = qp->recv_cq->poller.forget_qp(qp->rings.qpn);
    return err;
}

// The kernel's answer must describe rings the provider can use safely: the
// send queue, and the receive queue if the QP has its own.
int check_qp_resp(const vrnic_ibv_create_qp_resp& r, bool own_rq) {
    if (!Doorbell::valid_slot(r.db_slot) || r.qpn < VRNIC_QPN_MIN || r.qpn > VRNIC_QPN_MASK)
        return EPROTO;
    if (r.sq_wqe_shift < VRNIC_SQ_WQE_SHIFT_MIN || r.sq_wqe_shift > VRNIC_SQ_WQE_SHIFT_MAX ||
        r.sq_log_depth < VRNIC_WQ_LOG_DEPTH_MIN || r.sq_log_depth > 24 ||
        r.sq_ring_size < (uint64_t{1} << (r.sq_log_depth + r.sq_wqe_shift)) ||
        r.max_send_sge > VRNIC_SQ_MAX_SGE(r.sq_wqe_shift) ||
        r.max_inline > VRNIC_SQ_MAX_INLINE(r.sq_wqe_shift))
        return EPROTO;
    if (own_rq &&
        (r.rq_wqe_shift < VRNIC_RQ_WQE_SHIFT_MIN || r.rq_wqe_shift > VRNIC_RQ_WQE_SHIFT_MAX ||
         r.rq_log_depth < VRNIC_WQ_LOG_DEPTH_MIN || r.rq_log_depth > 24 ||
         r.rq_ring_size < (uint64_t{1} << (r.rq_log_depth + r.rq_wqe_shift)) ||
         r.max_recv_sge > VRNIC_RQ_MAX_SGE(r.rq_wqe_shift)))
        return EPROTO;
    return 0;
}

int create_qp_common(ibv_context* context, ibv_qp_init_attr_ex* attr, Qp*& out) {
    ContextState& st = state(context);
    if (attr->qp_type == IBV_QPT_XRC_RECV)
        return create_xrc_recv(context, attr, out);
    if (!qp_send_ops(attr->qp_type))
        return EOPNOTSUPP;
    const uint64_t send_ops =
        qp_send_ops(attr->qp_type) | qp_mem_ops(attr->qp_type, st.caps.version_minor);
    if (attr->comp_mask & ~uint32_t{IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS})
        return EOPNOTSUPP;
    if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) && (attr->send_ops_flags & ~send_ops))
        return EOPNOTSUPP;
    // A QP on an SRQ takes its receives there, an XRC initiator none: their
    // RQ sizes are ignored.
    const bool xrc = attr->qp_type == IBV_QPT_XRC_SEND;
    const bool own_rq = !attr->srq && !xrc;
    if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd || !attr->send_cq ||
        (!attr->recv_cq && !xrc))
        return EINVAL;
    ibv_qp_cap& cap = attr->cap;
    if (!own_rq)
        cap.max_recv_wr = cap.max_recv_sge = 0;
    if (cap.max_send_wr > st.caps.max_qp_wr || cap.max_recv_wr > st.caps.max_qp_wr ||
        cap.max_send_sge > st.caps.max_sge || cap.max_recv_sge > st.caps.max_sge ||
        cap.max_inline_data > st.caps.max_inline)
        return EINVAL;

    // On a parent domain: its allocator for the object, and with a thread
    // domain no locks on the QP's queues (the user serializes its calls).
    Pd* domain = to_pd(attr->pd);
    auto* qp = make_object<Qp>(domain, kResTypeQp);
    if (domain->is_parent() && domain->td) {
        qp->rings.sq_lock.set_single_threaded();
        qp->rings.rq_lock.set_single_threaded();
    }
    qp->send_cq = to_cq(attr->send_cq);
    // An XRC initiator's receives complete elsewhere: its CQEs are all on
    // the send CQ.
    qp->recv_cq = xrc ? qp->send_cq : to_cq(attr->recv_cq);
    WithUdata<struct ibv_create_qp, vrnic_ibv_create_qp> cmd{};
    WithUdata<ib_uverbs_create_qp_resp, vrnic_ibv_create_qp_resp> resp{};
    int err = ibv_cmd_create_qp_ex(context, &qp->vqp, attr, cmd.core(), cmd.size(), resp.core(),
                                   resp.size());
    if (err) {
        destroy_object(qp, kResTypeQp);
        return err;
    }
    const auto& r = resp.drv;
    err = check_qp_resp(r, own_rq);
    if (!err)
        err = qp->sq_map.map(st.cmd_fd, r.sq_mmap_key, r.sq_ring_size, PROT_READ | PROT_WRITE);
    if (!err && own_rq)
        err = qp->rq_map.map(st.cmd_fd, r.rq_mmap_key, r.rq_ring_size, PROT_READ | PROT_WRITE);
    if (!err) {
        QpRings& rings = qp->rings;
        rings.qpn = r.qpn;
        rings.db = &st.db;
        rings.sq_pi_word = st.db.word(r.db_slot, VRNIC_DB_QP_SQ_PI);
        SqLimits lim;
        lim.max_sge = r.max_send_sge;
        lim.max_inline = r.max_inline;
        lim.sig_all = attr->sq_sig_all != 0;
        lim.send_ops = send_ops;
        lim.ud = attr->qp_type == IBV_QPT_UD;
        lim.xrc = xrc;
        rings.sq.init(qp->sq_map.get(), r.sq_log_depth, r.sq_wqe_shift, lim);
        if (own_rq) {
            rings.rq_pi_word = st.db.word(r.db_slot, VRNIC_DB_QP_RQ_PI);
            rings.rq.emplace().init(qp->rq_map.get(), r.rq_log_depth, r.rq_wqe_shift,
                                    r.max_recv_sge);
        }
        err = st.qps.insert(r.qpn, &rings);
    }
    if (err) {
        ibv_cmd_destroy_qp(&qp->vqp.qp);
        destroy_object(qp, kResTypeQp);
        return err;
    }
    if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
        set_qp_ex_ops(&qp->vqp.qp_ex);
        qp->vqp.comp_mask |= VERBS_QP_EX;
    }
    out = qp;
    return 0;
}

ibv_qp* create_qp_ex(ibv_context* context, ibv_qp_init_attr_ex* attr) noexcept {
    return guarded_ptr<ibv_qp>([&](ibv_qp*& out) {
        Qp* qp = nullptr;
        int err = create_qp_common(context, attr, qp);
        if (!err)
            out = &qp->vqp.qp;
        return err;
    });
}

ibv_qp* create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) noexcept {
    return guarded_ptr<ibv_qp>([&](ibv_qp*& out) {
        ibv_qp_init_attr_ex ex{};
        ex.qp_context = attr->qp_context;
        ex.send_cq = attr->send_cq;
        ex.recv_cq = attr->recv_cq;
        ex.srq = attr->srq;
        ex.cap = attr->cap;
        ex.qp_type = attr->qp_type;
        ex.sq_sig_all = attr->sq_sig_all;
        ex.comp_mask = IBV_QP_INIT_ATTR_PD;
        ex.pd = pd;
        Qp* qp = nullptr;
        int err = create_qp_common(pd->context, &ex, qp);
        if (err)
            return err;
        attr->cap = ex.cap;
        out = &qp->vqp.qp;
        return 0;
    });
}

int destroy_qp(ibv_qp* ibqp) noexcept {
    return guarded([&] {
        Qp* qp = to_qp(ibqp);
        int err = ibv_cmd_destroy_qp(ibqp);
        if (err)
            return err;
        if (!qp->send_cq) { // an XRC target: no rings, no CQs
            destroy_object(qp, kResTypeQp);
            return 0;
        }
        {
            CqPairLock locks(qp->send_cq, qp->recv_cq);
            forget_qp_cqes(qp);
            state(ibqp->context).qps.erase(qp->rings.qpn);
        }
        destroy_object(qp, kResTypeQp);
        return 0;
    });
}

int modify_qp(ibv_qp* ibqp, ibv_qp_attr* attr, int mask) noexcept {
    return guarded([&] {
        Qp* qp = to_qp(ibqp);
        struct ibv_modify_qp cmd {};
        int err = ibv_cmd_modify_qp(ibqp, attr, mask, &cmd, sizeof(cmd));
        if (err)
            return err;
        if ((mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET && qp->send_cq) {
            // The device discarded every outstanding WQE without a
            // completion; CQEs it wrote before are skipped (spec 15).
            // Lock order: send queue, receive queue, CQs (an ibv_wr_*
            // session may poll a CQ while it holds the send lock).
            std::lock_guard<QueueLock> sq(qp->rings.sq_lock);
            std::lock_guard<QueueLock> rq(qp->rings.rq_lock);
            CqPairLock locks(qp->send_cq, qp->recv_cq);
            err = forget_qp_cqes(qp);
            qp->rings.sq.discard_outstanding();
            if (qp->rings.rq)
                qp->rings.rq->discard_outstanding();
        }
        return err;
    });
}

int query_qp(ibv_qp* ibqp, ibv_qp_attr* attr, int mask, ibv_qp_init_attr* init_attr) noexcept {
    return guarded([&] {
        struct ibv_query_qp cmd {};
        return ibv_cmd_query_qp(ibqp, attr, mask, init_attr, &cmd, sizeof(cmd));
    });
}

int post_send(ibv_qp* ibqp, ibv_send_wr* wr, ibv_send_wr** bad_wr) noexcept {
    QpRings& r = to_qp(ibqp)->rings;
    if (!r.db) { // an XRC target has no SQ
        *bad_wr = wr;
        return EINVAL;
    }
    std::lock_guard<QueueLock> guard(r.sq_lock);
    if (r.db->fatal()) {
        *bad_wr = wr;
        return EIO;
    }
    int err = 0;
    for (; wr; wr = wr->next) {
        err = r.sq.post(*wr);
        if (err) {
            *bad_wr = wr;
            break;
        }
    }
    r.sq.publish(*r.db, r.sq_pi_word, VRNIC_DB_STATUS_NEED_WAKEUP);
    return err;
}

// One receive path for a QP's own RQ and an SRQ: posts wake a sleeping
// device only while it says a sender waits for a receive (RQ_WAKEUP).
int post_recv_list(RecvQueue& rq, QueueLock& lock, Doorbell& db, uint32_t* pi_word, ibv_recv_wr* wr,
                   ibv_recv_wr** bad_wr) noexcept {
    std::lock_guard<QueueLock> guard(lock);
    if (db.fatal()) {
        *bad_wr = wr;
        return EIO;
    }
    int err = 0;
    for (; wr; wr = wr->next) {
        err = rq.post(*wr);
        if (err) {
            *bad_wr = wr;
            break;
        }
    }
    rq.publish(db, pi_word, VRNIC_DB_STATUS_RQ_WAKEUP);
    return err;
}

int post_recv(ibv_qp* ibqp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) noexcept {
    QpRings& r = to_qp(ibqp)->rings;
    if (!r.rq) {
        *bad_wr = wr; // a QP on a shared receive queue posts there
        return EINVAL;
    }
    return post_recv_list(*r.rq, r.rq_lock, *r.db, r.rq_pi_word, wr, bad_wr);
}

// ---------------------------------------------------------------------------
// SRQ
// ---------------------------------------------------------------------------

// The kernel's answer must describe a ring the provider can post to safely.
int check_srq_resp(const vrnic_ibv_create_srq_resp& r, uint32_t max_sge) {
    if (!Doorbell::valid_slot(r.db_slot) || r.wqe_shift < VRNIC_RQ_WQE_SHIFT_MIN ||
        r.wqe_shift > VRNIC_RQ_WQE_SHIFT_MAX || r.log_depth < VRNIC_WQ_LOG_DEPTH_MIN ||
        r.log_depth > 24 || r.ring_size < (uint64_t{1} << (r.log_depth + r.wqe_shift)) ||
        max_sge > VRNIC_RQ_MAX_SGE(r.wqe_shift))
        return EPROTO;
    return 0;
}

ibv_srq* create_srq(ibv_pd* pd, ibv_srq_init_attr* attr) noexcept {
    return guarded_ptr<ibv_srq>([&](ibv_srq*& out) {
        ContextState& st = state(pd->context);
        if (!st.caps.max_srq_wr)
            return EOPNOTSUPP;
        // The SGE limit of an SRQ (max_srq_sge) is the kernel's to check.
        if (!attr->attr.max_wr || attr->attr.max_wr > st.caps.max_srq_wr)
            return EINVAL;
        auto srq = std::make_unique<Srq>();
        WithUdata<struct ibv_create_srq, vrnic_ibv_create_srq> cmd{};
        WithUdata<ib_uverbs_create_srq_resp, vrnic_ibv_create_srq_resp> resp{};
        int err = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, cmd.core(), cmd.size(), resp.core(),
                                     resp.size());
        if (!err)
            err = finish_srq(st, *srq, resp.drv, attr->attr.max_sge);
        if (!err)
            out = &srq.release()->vsrq.srq;
        return err;
    });
}

} // namespace

int finish_srq(ContextState& st, Srq& srq, const vrnic_ibv_create_srq_resp& r,
               uint32_t max_sge) noexcept {
    int err = check_srq_resp(r, max_sge);
    if (!err)
        err = srq.ring.map(st.cmd_fd, r.ring_mmap_key, r.ring_size, PROT_READ | PROT_WRITE);
    if (err) {
        ibv_cmd_destroy_srq(&srq.vsrq.srq);
        return err;
    }
    srq.db = &st.db;
    srq.pi_word = st.db.word(r.db_slot, VRNIC_DB_SRQ_PI);
    srq.rq.init(srq.ring.get(), r.log_depth, r.wqe_shift, max_sge,
                st.db.word(r.db_slot, VRNIC_DB_SRQ_CI));
    return 0;
}

namespace {

// Growing an SRQ gives it a new ring (the kernel's answer names it). The
// SRQ's lock is held across the verb: no thread of this process posts into
// the old ring while the device moves the posted WQEs to the new one.
int resize_srq(Srq& srq, ibv_srq_attr* attr, int mask) {
    ContextState& st = state(srq.vsrq.srq.context);
    vrnic_ibv_modify_srq_resp r{};
    WithUdata<struct ibv_modify_srq, vrnic_ibv_modify_srq> cmd{};
    cmd.drv.resp_addr = reinterpret_cast<uintptr_t>(&r);
    std::lock_guard<QueueLock> guard(srq.lock);
    int err = ibv_cmd_modify_srq(&srq.vsrq.srq, attr, mask, cmd.core(), cmd.size());
    if (err || !r.ring_mmap_key) // failed, or already that large
        return err;
    const uint32_t shift = srq.rq.wqe_shift();
    if (r.log_depth <= srq.rq.log_depth() || r.log_depth > 24 ||
        r.ring_size < (uint64_t{1} << (r.log_depth + shift)))
        return EPROTO;
    Mapping ring;
    err = ring.map(st.cmd_fd, r.ring_mmap_key, r.ring_size, PROT_READ | PROT_WRITE);
    if (err)
        return err;
    srq.rq.move_ring(ring.get(), r.log_depth);
    srq.ring = std::move(ring); // unmaps the old ring
    return 0;
}

int modify_srq(ibv_srq* ibsrq, ibv_srq_attr* attr, int mask) noexcept {
    return guarded([&] {
        if (mask & IBV_SRQ_MAX_WR)
            return resize_srq(*to_srq(ibsrq), attr, mask);
        struct ibv_modify_srq cmd {};
        return ibv_cmd_modify_srq(ibsrq, attr, mask, &cmd, sizeof(cmd));
    });
}

int query_srq(ibv_srq* ibsrq, ibv_srq_attr* attr) noexcept {
    return guarded([&] {
        struct ibv_query_srq cmd {};
        return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
    });
}

int destroy_srq(ibv_srq* ibsrq) noexcept {
    return guarded([&] {
        int err = ibv_cmd_destroy_srq(ibsrq);
        if (!err)
            delete to_srq(ibsrq);
        return err;
    });
}

int post_srq_recv(ibv_srq* ibsrq, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) noexcept {
    Srq* srq = to_srq(ibsrq);
    return post_recv_list(srq->rq, srq->lock, *srq->db, srq->pi_word, wr, bad_wr);
}

// ---------------------------------------------------------------------------
// Context teardown
// ---------------------------------------------------------------------------

void free_context(ibv_context* ibctx) noexcept {
    Context* ctx = to_ctx(ibctx);
    delete ctx->state;
    ctx->state = nullptr;
    verbs_uninit_context(&ctx->ibv_ctx);
    std::free(ctx);
}

constexpr verbs_context_ops make_context_ops() {
    verbs_context_ops o{};
    o.alloc_mw = alloc_mw;
    o.alloc_parent_domain = alloc_parent_domain;
    o.alloc_pd = alloc_pd;
    o.alloc_td = alloc_td;
    o.attach_mcast = attach_mcast;
    o.detach_mcast = detach_mcast; // out of order: next to its pair
    o.bind_mw = bind_mw;
    o.create_ah = create_ah;
    o.create_cq = create_cq;
    o.create_cq_ex = create_cq_ex;
    o.create_qp = create_qp;
    o.create_qp_ex = create_qp_ex;
    o.create_srq = create_srq;
    o.create_srq_ex = create_srq_ex;
    o.open_xrcd = open_xrcd;
    o.close_xrcd = close_xrcd;
    o.get_srq_num = get_srq_num;
    o.open_qp = open_qp;
    o.dealloc_mw = dealloc_mw;
    o.dealloc_pd = dealloc_pd;
    o.dealloc_td = dealloc_td;
    o.dereg_mr = dereg_mr;
    o.destroy_ah = destroy_ah;
    o.destroy_cq = destroy_cq;
    o.destroy_qp = destroy_qp;
    o.destroy_srq = destroy_srq;
    o.free_context = free_context;
    o.modify_qp = modify_qp;
    o.modify_srq = modify_srq;
    o.poll_cq = poll_cq;
    o.post_recv = post_recv;
    o.post_send = post_send;
    o.post_srq_recv = post_srq_recv;
    o.query_device_ex = query_device_ex;
    o.query_port = query_port;
    o.query_qp = query_qp;
    o.query_rt_values = query_rt_values;
    o.query_srq = query_srq;
    o.reg_mr = reg_mr;
    o.rereg_mr = rereg_mr;
    o.req_notify_cq = req_notify_cq;
    o.resize_cq = resize_cq;
    return o;
}

constexpr verbs_context_ops kContextOps = make_context_ops();

} // namespace

const verbs_context_ops& context_ops() noexcept {
    return kContextOps;
}

} // namespace vrnic::prov
