// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic queue pairs (device interface sections 10.13-10.16, 13, 15): RC, UC
 * and UD, with their own RQ or an SRQ. User QPs get their rings through
 * mmap entries; kernel QPs post here on the kernel doorbell page and keep
 * their own wr_id tables (verbs_post.c). The work queue helpers serve SRQs
 * too (verbs_srq.c).
 */
#include <linux/etherdevice.h>
#include <linux/log2.h>

#include "vrnic.h"

/* The device uses the verbs numbering; the driver copies values across. */
VRNIC_SAME(IB_WC_GENERAL_ERR, VRNIC_WC_GENERAL_ERR);
VRNIC_SAME(IB_QPS_RTS, VRNIC_QPS_RTS);
VRNIC_SAME(IB_QPS_ERR, VRNIC_QPS_ERR);
VRNIC_SAME(IB_QP_DEST_QPN, VRNIC_QP_ATTR_DEST_QPN);
VRNIC_SAME(IB_QP_ATTR_STANDARD_BITS, VRNIC_QP_ATTR_ALL);
VRNIC_SAME(IB_ACCESS_LOCAL_WRITE, VRNIC_ACCESS_LOCAL_WRITE);
VRNIC_SAME(IB_ACCESS_REMOTE_ATOMIC, VRNIC_ACCESS_REMOTE_ATOMIC);
VRNIC_SAME(IB_MTU_4096, VRNIC_MTU_4096);

#define VRNIC_QP_REMOTE_ACCESS	(IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC)

struct vrnic_qp *vrnic_qp_get(struct vrnic_dev *dev, u32 qpn)
{
	struct vrnic_qp *qp;
	unsigned long flags;

	xa_lock_irqsave(&dev->qp_xa, flags);
	qp = xa_load(&dev->qp_xa, qpn);
	if (qp && !refcount_inc_not_zero(&qp->refcount))
		qp = NULL;
	xa_unlock_irqrestore(&dev->qp_xa, flags);
	return qp;
}

void vrnic_qp_put(struct vrnic_qp *qp)
{
	if (refcount_dec_and_test(&qp->refcount))
		complete(&qp->free);
}

/* The stride for @sge SGEs or @inline_size bytes after a @hdr-byte header. */
static u32 vrnic_sq_shift_needed(u32 hdr, u32 sge, u32 inline_size)
{
	u32 need = max_t(u32, hdr + VRNIC_SGE_SIZE * sge,
			 hdr + VRNIC_INLINE_HDR_SIZE + inline_size);

	return max_t(u32, VRNIC_SQ_WQE_SHIFT_MIN, order_base_2(need));
}

u32 vrnic_rq_shift_needed(u32 sge)
{
	u32 need = VRNIC_RECV_WQE_HDR_SIZE + VRNIC_SGE_SIZE * max_t(u32, sge, 1);

	return max_t(u32, VRNIC_RQ_WQE_SHIFT_MIN, order_base_2(need));
}

/* Pick a stride: the request (0 = smallest that fits) within [min, max]. */
int vrnic_pick_shift(u32 requested, u32 needed, u32 min, u32 max)
{
	if (requested) {
		if (requested < min || requested > max || requested < needed)
			return -EINVAL;
		return requested;
	}
	return needed <= max ? (int)needed : -EINVAL;
}

/* Ring depth for @wr WQEs of 2^@shift bytes, at most @max_wr of them. */
int vrnic_wq_log_depth(u32 wr, u32 max_wr, u32 shift)
{
	u32 log = max_t(u32, VRNIC_WQ_LOG_DEPTH_MIN,
			order_base_2(max_t(u32, wr, 2)));

	if (log >= 31 || (1U << log) > max_wr ||
	    ((u64)1 << (log + shift)) > VRNIC_RING_MAX_BYTES)
		return -EINVAL;
	return log;
}

void vrnic_wq_free(struct vrnic_dev *dev, struct vrnic_wq *wq)
{
	if (wq->entry)
		rdma_user_mmap_entry_remove(wq->entry);
	wq->entry = NULL;
	vrnic_dma_free(dev, &wq->ring);
	vrnic_poison(wq->wrid, sizeof(*wq->wrid) << wq->log_depth);
	kfree(wq->wrid);
	wq->wrid = NULL;
}

/*
 * Allocate a work queue ring. For a user queue the ring goes straight into
 * an mmap entry (@key, @size report it); a kernel queue also gets its wr_id
 * table if it asks for one (@wrids).
 */
int vrnic_wq_alloc(struct vrnic_dev *dev, struct vrnic_ucontext *uc,
		   struct vrnic_wq *wq, bool wrids, dma_addr_t *dma, u64 *key,
		   u64 *size)
{
	struct vrnic_dma ring = {};
	u32 depth = 1U << wq->log_depth;
	int err;

	spin_lock_init(&wq->lock);
	wq->pi = 0;
	wq->ci = 0;
	err = vrnic_dma_alloc(dev, &ring, (size_t)depth << wq->wqe_shift);
	if (err)
		return err;
	*dma = ring.dma;
	if (uc) {
		*size = ring.size;
		wq->entry = vrnic_mmap_insert_dma(uc, &ring, key);
		if (IS_ERR(wq->entry)) {
			err = PTR_ERR(wq->entry);
			wq->entry = NULL;
			vrnic_dma_free(dev, &ring);
			return err;
		}
		return 0;
	}
	wq->ring = ring;
	if (!wrids)
		return 0;
	wq->wrid = kcalloc(depth, sizeof(*wq->wrid), GFP_KERNEL);
	if (!wq->wrid) {
		vrnic_dma_free(dev, &wq->ring);
		return -ENOMEM;
	}
	return 0;
}

/* The device's type for a verbs QP type; 0 if the device has none. */
static u8 vrnic_qpt(struct vrnic_dev *dev, enum ib_qp_type type)
{
	switch (type) {
	case IB_QPT_GSI:
		return dev->caps.version_minor >= 4 ? VRNIC_QPT_GSI : 0;
	case IB_QPT_RC:
		return VRNIC_QPT_RC;
	case IB_QPT_UC:
		return VRNIC_QPT_UC;
	case IB_QPT_UD:
		return VRNIC_QPT_UD;
	case IB_QPT_XRC_INI:
		return VRNIC_QPT_XRC_INI;
	default:
		return 0;
	}
}

/* Make the QP the device created findable by its qpn (events, CQEs). */
int vrnic_qp_publish(struct vrnic_dev *dev, struct vrnic_qp *qp)
{
	if (xa_insert_irq(&dev->qp_xa, qp->qpn, qp, GFP_KERNEL)) {
		dev_err(&dev->pdev->dev, "CREATE_QP reused live qpn %u\n",
			qp->qpn);
		return -EIO;
	}
	qp->ibqp.qp_num = qp->qpn;
	return 0;
}

int vrnic_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibqp->device);
	struct vrnic_ibv_create_qp_resp uresp = {};
	struct vrnic_cmd_create_qp_resp resp = {};
	struct vrnic_cmd_create_qp req = {};
	struct vrnic_qp *qp = to_vqp(ibqp);
	struct ib_qp_cap *cap = &init->cap;
	struct vrnic_caps *c = &dev->caps;
	struct vrnic_ucontext *uc = NULL;
	struct vrnic_ibv_create_qp ucmd;
	dma_addr_t sq_dma, rq_dma = 0;
	int sq_shift, rq_shift = 0, sq_log, rq_log = 0, err;
	bool xrc_ini = init->qp_type == IB_QPT_XRC_INI;
	bool own_rq = !init->srq && !xrc_ini;
	u32 sq_hdr;

	if (init->qp_type == IB_QPT_XRC_TGT)
		return vrnic_create_xrc_tgt(ibqp, init);
	/* XRC is for user space only, as in other drivers. */
	if (xrc_ini && (!udata || !vrnic_has_xrc(dev))) {
		ibdev_dbg(ibqp->device, "XRC initiator QP %s\n",
			  udata ? "unsupported by the device" : "from the kernel");
		return -EOPNOTSUPP;
	}
	req.qp_type = vrnic_qpt(dev, init->qp_type);
	if (!req.qp_type || (udata && init->qp_type == IB_QPT_GSI)) {
		ibdev_dbg(ibqp->device, "QP type %d unsupported\n",
			  init->qp_type);
		return -EOPNOTSUPP;
	}
	if (init->create_flags) {
		ibdev_dbg(ibqp->device, "create_flags %#x unsupported\n",
			  init->create_flags);
		return -EOPNOTSUPP;
	}
	/*
	 * A QP on an SRQ receives there, an XRC initiator not at all: the
	 * receive caps do not apply.
	 */
	if (!own_rq) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	}
	if (cap->max_send_wr > c->max_qp_wr || cap->max_recv_wr > c->max_qp_wr ||
	    cap->max_send_sge > c->max_sge || cap->max_recv_sge > c->max_sge ||
	    cap->max_inline_data > c->max_inline) {
		ibdev_dbg(ibqp->device,
			  "caps wr %u/%u sge %u/%u inline %u above the device's\n",
			  cap->max_send_wr, cap->max_recv_wr, cap->max_send_sge,
			  cap->max_recv_sge, cap->max_inline_data);
		return -EINVAL;
	}

	err = vrnic_udata_in(udata, &ucmd, sizeof(ucmd));
	if (err) {
		ibdev_dbg(ibqp->device, "create_qp udata: %d\n", err);
		return err;
	}
	if (ucmd.comp_mask || ucmd.reserved || (!own_rq && ucmd.rq_wqe_shift)) {
		ibdev_dbg(ibqp->device,
			  "create_qp comp_mask %#x reserved %#x rq_wqe_shift %u\n",
			  ucmd.comp_mask, ucmd.reserved, ucmd.rq_wqe_shift);
		return -EINVAL;
	}
	if (udata)
		uc = rdma_udata_to_drv_context(udata, struct vrnic_ucontext,
					       ibuc);
	if (init->srq && to_vsrq(init->srq)->user != !!udata) {
		ibdev_dbg(ibqp->device, "QP and SRQ of different owners\n");
		return -EINVAL;
	}

	/* 1.4: a kernel datagram WQE carries its address vector. */
	qp->wqe_av = !udata && vrnic_qpt_is_datagram(init->qp_type) &&
		     dev->caps.version_minor >= 4;
	sq_hdr = qp->wqe_av ? VRNIC_SEND_WQE_AV_HDR_SIZE :
			      VRNIC_SEND_WQE_HDR_SIZE;
	sq_shift = vrnic_pick_shift(ucmd.sq_wqe_shift,
				    vrnic_sq_shift_needed(sq_hdr,
							  cap->max_send_sge,
							  cap->max_inline_data),
				    VRNIC_SQ_WQE_SHIFT_MIN,
				    VRNIC_SQ_WQE_SHIFT_MAX);
	if (own_rq)
		rq_shift = vrnic_pick_shift(ucmd.rq_wqe_shift,
					    vrnic_rq_shift_needed(cap->max_recv_sge),
					    VRNIC_RQ_WQE_SHIFT_MIN,
					    VRNIC_RQ_WQE_SHIFT_MAX);
	if (sq_shift < 0 || rq_shift < 0) {
		ibdev_dbg(ibqp->device,
			  "no WQE stride: SQ asked %u, RQ asked %u\n",
			  ucmd.sq_wqe_shift, ucmd.rq_wqe_shift);
		return -EINVAL;
	}
	sq_log = vrnic_wq_log_depth(cap->max_send_wr, c->max_qp_wr, sq_shift);
	if (own_rq)
		rq_log = vrnic_wq_log_depth(cap->max_recv_wr, c->max_qp_wr,
					    rq_shift);
	if (sq_log < 0 || rq_log < 0) {
		ibdev_dbg(ibqp->device, "rings of %u/%u WQEs too large\n",
			  cap->max_send_wr, cap->max_recv_wr);
		return -EINVAL;
	}

	qp->user = !!udata;
	qp->state = IB_QPS_RESET;
	mutex_init(&qp->state_lock);
	refcount_set(&qp->refcount, 1);
	init_completion(&qp->free);
	qp->sq.log_depth = sq_log;
	qp->sq.wqe_shift = sq_shift;
	qp->sq.max_sge = min_t(u32, c->max_sge,
			       ((1U << sq_shift) - sq_hdr) / VRNIC_SGE_SIZE);
	qp->max_inline = min_t(u32, c->max_inline,
			       (1U << sq_shift) - sq_hdr -
			       VRNIC_INLINE_HDR_SIZE);
	qp->srq = init->srq ? to_vsrq(init->srq) : NULL;
	spin_lock_init(&qp->rq.lock);
	if (own_rq) {
		qp->rq.log_depth = rq_log;
		qp->rq.wqe_shift = rq_shift;
		qp->rq.max_sge = min_t(u32, c->max_sge,
				       VRNIC_RQ_MAX_SGE(rq_shift));
	}

	err = vrnic_wq_alloc(dev, uc, &qp->sq, true, &sq_dma,
			     &uresp.sq_mmap_key, &uresp.sq_ring_size);
	if (err)
		return err;
	if (own_rq) {
		err = vrnic_wq_alloc(dev, uc, &qp->rq, true, &rq_dma,
				     &uresp.rq_mmap_key, &uresp.rq_ring_size);
		if (err)
			goto err_free_sq;
	}

	req.uctx = cpu_to_le32(uc ? uc->uctx : VRNIC_UCTX_KERNEL);
	req.pd = cpu_to_le32(to_vpd(ibqp->pd)->pdn);
	if (init->sq_sig_type == IB_SIGNAL_ALL_WR)
		req.flags |= cpu_to_le16(VRNIC_QP_F_SQ_SIG_ALL);
	req.send_cqn = cpu_to_le32(to_vcq(init->send_cq)->cqn);
	if (!xrc_ini)
		req.recv_cqn = cpu_to_le32(to_vcq(init->recv_cq)->cqn);
	req.srqn = cpu_to_le32(qp->srq ? qp->srq->srqn : VRNIC_HANDLE_NONE);
	req.sq_addr = cpu_to_le64(sq_dma);
	req.rq_addr = cpu_to_le64(rq_dma);
	req.sq_log_depth = sq_log;
	req.sq_wqe_shift = sq_shift;
	req.rq_log_depth = rq_log;
	req.rq_wqe_shift = rq_shift;
	req.max_send_sge = cpu_to_le16(qp->sq.max_sge);
	req.max_recv_sge = cpu_to_le16(qp->rq.max_sge);
	req.max_inline = cpu_to_le32(qp->max_inline);
	err = vrnic_cmd_exec(dev, VRNIC_CMD_CREATE_QP, &req, sizeof(req),
			     &resp, sizeof(resp));
	if (err)
		goto err_free_rq;
	qp->qpn = le32_to_cpu(resp.qpn);
	qp->db_slot = le32_to_cpu(resp.db_slot);
	if ((init->qp_type == IB_QPT_GSI ? qp->qpn != VRNIC_QPN_GSI :
	     qp->qpn < VRNIC_QPN_MIN || qp->qpn > VRNIC_QPN_MASK) ||
	    !vrnic_db_slot_valid(qp->db_slot)) {
		dev_err(&dev->pdev->dev, "CREATE_QP returned qpn %u slot %u\n",
			qp->qpn, qp->db_slot);
		err = -EIO;
		goto err_destroy;
	}
	err = vrnic_qp_publish(dev, qp);
	if (err)
		goto err_destroy;

	cap->max_send_wr = 1U << sq_log;
	cap->max_recv_wr = own_rq ? 1U << rq_log : 0;
	cap->max_send_sge = qp->sq.max_sge;
	cap->max_recv_sge = qp->rq.max_sge;
	cap->max_inline_data = qp->max_inline;

	if (uc) {
		uresp.qpn = qp->qpn;
		uresp.db_slot = qp->db_slot;
		uresp.sq_log_depth = sq_log;
		uresp.sq_wqe_shift = sq_shift;
		uresp.rq_log_depth = rq_log;
		uresp.rq_wqe_shift = rq_shift;
		uresp.max_inline = qp->max_inline;
		uresp.max_send_sge = qp->sq.max_sge;
		uresp.max_recv_sge = qp->rq.max_sge;
		err = vrnic_udata_out(udata, &uresp, sizeof(uresp));
		if (err)
			goto err_erase;
	}
	return 0;

err_erase:
	xa_erase_irq(&dev->qp_xa, qp->qpn);
err_destroy:
	vrnic_cmd_destroy(dev, VRNIC_CMD_DESTROY_QP, qp->qpn);
err_free_rq:
	vrnic_wq_free(dev, &qp->rq);
err_free_sq:
	vrnic_wq_free(dev, &qp->sq);
	return err;
}

/* Wait until no kernel poller can still hold @qp (found via qp_xa). */
static void vrnic_qp_sync_pollers(struct vrnic_qp *qp)
{
	struct vrnic_cq *scq = to_vcq(qp->ibqp.send_cq);
	struct vrnic_cq *rcq = to_vcq(qp->ibqp.recv_cq);

	spin_lock_irq(&scq->lock);
	spin_unlock_irq(&scq->lock);
	if (rcq != scq) {
		spin_lock_irq(&rcq->lock);
		spin_unlock_irq(&rcq->lock);
	}
}

int vrnic_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibqp->device);
	struct vrnic_qp *qp = to_vqp(ibqp);
	int err;

	if (ibqp->qp_type == IB_QPT_XRC_TGT)
		return vrnic_destroy_xrc_tgt(ibqp);
	err = vrnic_cmd_destroy(dev, VRNIC_CMD_DESTROY_QP, qp->qpn);
	if (err)
		return err;
	xa_erase_irq(&dev->qp_xa, qp->qpn);
	if (!qp->user)
		vrnic_qp_sync_pollers(qp);
	vrnic_check(refcount_read(&qp->refcount) >= 1);
	vrnic_qp_put(qp);
	wait_for_completion(&qp->free);
	vrnic_check(!refcount_read(&qp->refcount));

	/* The device no longer touches the rings. */
	vrnic_wq_free(dev, &qp->rq);
	vrnic_wq_free(dev, &qp->sq);
	/* Nobody looks at the driver's part again; the core frees it. */
	vrnic_poison(&qp->ibqp + 1, sizeof(*qp) - sizeof(qp->ibqp));
	return 0;
}

static int vrnic_fill_modify(const struct ib_qp_attr *attr, int mask,
			     struct vrnic_qp_attr *a)
{
	int err;

	if (mask & IB_QP_STATE)
		a->qp_state = attr->qp_state;
	if (mask & IB_QP_CUR_STATE)
		a->cur_qp_state = attr->cur_qp_state;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		a->en_sqd_async_notify = !!attr->en_sqd_async_notify;
	if (mask & IB_QP_ACCESS_FLAGS) {
		if (attr->qp_access_flags &
		    ~(VRNIC_QP_REMOTE_ACCESS | IB_ACCESS_LOCAL_WRITE))
			return -EINVAL;
		a->qp_access_flags = cpu_to_le32(attr->qp_access_flags &
						 VRNIC_QP_REMOTE_ACCESS);
	}
	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = cpu_to_le16(attr->pkey_index);
	if (mask & IB_QP_PORT)
		a->port_num = attr->port_num;
	if (mask & IB_QP_QKEY)
		a->qkey = cpu_to_le32(attr->qkey);
	if (mask & IB_QP_AV) {
		err = vrnic_av_from_ah(&attr->ah_attr, &a->av);
		if (err)
			return err;
	}
	if (mask & IB_QP_PATH_MTU)
		a->path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = cpu_to_le32(attr->rq_psn & VRNIC_PSN_MASK);
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = cpu_to_le32(attr->sq_psn & VRNIC_PSN_MASK);
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qpn = cpu_to_le32(attr->dest_qp_num & VRNIC_QPN_MASK);
	return 0;
}

/* The device took MODIFY_QP to @new: cache it. */
static void vrnic_qp_set_state(struct vrnic_qp *qp, enum ib_qp_state new)
{
	unsigned long flags;

	vrnic_assert_mutex_held(&qp->state_lock);
	vrnic_check(new >= IB_QPS_RESET && new <= IB_QPS_ERR);
	WRITE_ONCE(qp->state, new);
	if (new == IB_QPS_RESET && !qp->user) {
		/* The device discarded everything outstanding. */
		spin_lock_irqsave(&qp->sq.lock, flags);
		qp->sq.ci = qp->sq.pi;
		spin_unlock_irqrestore(&qp->sq.lock, flags);
		spin_lock_irqsave(&qp->rq.lock, flags);
		qp->rq.ci = qp->rq.pi;
		spin_unlock_irqrestore(&qp->rq.lock, flags);
	}
}

int vrnic_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		    int attr_mask, struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibqp->device);
	struct vrnic_qp *qp = to_vqp(ibqp);
	struct vrnic_cmd_modify_qp req = {};
	enum ib_qp_state cur, new;
	int err;

	if (attr_mask & (~IB_QP_ATTR_STANDARD_BITS | IB_QP_ALT_PATH |
			 IB_QP_PATH_MIG_STATE | IB_QP_CAP)) {
		ibdev_dbg(ibqp->device, "modify_qp mask %#x unsupported\n",
			  attr_mask);
		return -EOPNOTSUPP;
	}
	err = vrnic_udata_no_input(udata);
	if (err) {
		ibdev_dbg(ibqp->device, "modify_qp takes no udata\n");
		return err;
	}

	mutex_lock(&qp->state_lock);
	cur = attr_mask & IB_QP_CUR_STATE ? attr->cur_qp_state :
					    READ_ONCE(qp->state);
	new = attr_mask & IB_QP_STATE ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, new, ibqp->qp_type, attr_mask)) {
		ibdev_dbg(ibqp->device,
			  "QP %u: %d -> %d with mask %#x is not a transition\n",
			  qp->qpn, cur, new, attr_mask);
		err = -EINVAL;
		goto out;
	}
	/* The IBA's privileged qkeys are the kernel's (IBA 10.2.4). */
	if (udata && (attr_mask & IB_QP_QKEY) &&
	    (attr->qkey & VRNIC_QKEY_PRIVILEGED)) {
		ibdev_dbg(ibqp->device, "QP %u: privileged qkey %#x\n",
			  qp->qpn, attr->qkey);
		err = -EPERM;
		goto out;
	}
	req.qpn = cpu_to_le32(qp->qpn);
	err = vrnic_fill_modify(attr, attr_mask, &req.attr);
	if (err) {
		ibdev_dbg(ibqp->device, "QP %u: attributes refused: %d\n",
			  qp->qpn, err);
		goto out;
	}
	/* The GSI QP is the port's: the core names no port for it. */
	if (ibqp->qp_type == IB_QPT_GSI && cur == IB_QPS_RESET &&
	    new == IB_QPS_INIT) {
		attr_mask |= IB_QP_PORT;
		req.attr.port_num = 1;
	}
	/* A UD QP sends datagrams up to the port MTU the core reports. */
	if (vrnic_qpt_is_datagram(ibqp->qp_type) && cur == IB_QPS_INIT &&
	    new == IB_QPS_RTR) {
		attr_mask |= IB_QP_PATH_MTU;
		req.attr.path_mtu = vrnic_port_active_mtu(dev);
	}
	req.attr_mask = cpu_to_le32(attr_mask);
	err = vrnic_cmd_exec(dev, VRNIC_CMD_MODIFY_QP, &req, sizeof(req),
			     NULL, 0);
	if (err)
		goto out;

	if (attr_mask & IB_QP_STATE)
		vrnic_qp_set_state(qp, new);
out:
	mutex_unlock(&qp->state_lock);
	return err;
}

/* What a connected QP (RC, UC) reports: its path and remote QP. */
static void vrnic_query_path(const struct vrnic_qp_attr *a,
			     struct ib_qp_attr *attr)
{
	union ib_gid dgid;

	attr->rq_psn = le32_to_cpu(a->rq_psn) & VRNIC_PSN_MASK;
	attr->dest_qp_num = le32_to_cpu(a->dest_qpn) & VRNIC_QPN_MASK;
	attr->qp_access_flags = le32_to_cpu(a->qp_access_flags) &
				VRNIC_QP_REMOTE_ACCESS;
	attr->ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	memcpy(dgid.raw, a->av.dgid, sizeof(dgid.raw));
	rdma_ah_set_grh(&attr->ah_attr, &dgid,
			le32_to_cpu(a->av.flow_label) & 0xfffff,
			a->av.sgid_index, a->av.hop_limit,
			a->av.traffic_class);
	rdma_ah_set_sl(&attr->ah_attr, a->av.sl & 0xf);
	rdma_ah_set_port_num(&attr->ah_attr, 1);
	ether_addr_copy(attr->ah_attr.roce.dmac, a->av.dmac);
}

/* What only RC reports: acknowledgements, retries, RDMA reads. */
static void vrnic_query_reliable(const struct vrnic_qp_attr *a,
				 struct ib_qp_attr *attr)
{
	attr->max_rd_atomic = a->max_rd_atomic;
	attr->max_dest_rd_atomic = a->max_dest_rd_atomic;
	attr->min_rnr_timer = a->min_rnr_timer & 0x1f;
	attr->timeout = a->timeout & 0x1f;
	attr->retry_cnt = a->retry_cnt & 0x7;
	attr->rnr_retry = a->rnr_retry & 0x7;
}

int vrnic_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		   int attr_mask, struct ib_qp_init_attr *init)
{
	struct vrnic_dev *dev = to_vdev(ibqp->device);
	struct vrnic_cmd_handle req = {};
	struct vrnic_qp *qp = to_vqp(ibqp);
	struct vrnic_cmd_query_qp_resp resp;
	struct vrnic_qp_attr *a = &resp.attr;
	int err;

	req.handle = cpu_to_le32(qp->qpn);
	err = vrnic_cmd_exec(dev, VRNIC_CMD_QUERY_QP, &req, sizeof(req),
			     &resp, sizeof(resp));
	if (err)
		return err;
	if (a->qp_state > IB_QPS_ERR || a->cur_qp_state > IB_QPS_ERR)
		return -EIO;

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	attr->qp_state = a->qp_state;
	attr->cur_qp_state = a->cur_qp_state;
	attr->path_mtu = clamp_t(u8, a->path_mtu, IB_MTU_256, IB_MTU_4096);
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->sq_psn = le32_to_cpu(a->sq_psn) & VRNIC_PSN_MASK;
	attr->pkey_index = le16_to_cpu(a->pkey_index);
	attr->en_sqd_async_notify = a->en_sqd_async_notify;
	attr->sq_draining = a->sq_draining;
	attr->port_num = 1;
	if (vrnic_qpt_is_datagram(ibqp->qp_type)) {
		/* A datagram QP has a qkey; its addresses are in each WR. */
		attr->qkey = le32_to_cpu(a->qkey);
	} else {
		vrnic_query_path(a, attr);
	}
	if (ibqp->qp_type == IB_QPT_RC || ibqp->qp_type == IB_QPT_XRC_INI ||
	    ibqp->qp_type == IB_QPT_XRC_TGT)
		vrnic_query_reliable(a, attr);

	/* An XRC target has no queues, an XRC initiator no RQ. */
	if (ibqp->qp_type != IB_QPT_XRC_TGT)
		attr->cap.max_send_wr = 1U << qp->sq.log_depth;
	if (!qp->srq && ibqp->qp_type != IB_QPT_XRC_TGT &&
	    ibqp->qp_type != IB_QPT_XRC_INI)
		attr->cap.max_recv_wr = 1U << qp->rq.log_depth;
	attr->cap.max_send_sge = qp->sq.max_sge;
	attr->cap.max_recv_sge = qp->rq.max_sge;
	attr->cap.max_inline_data = qp->max_inline;

	init->event_handler = ibqp->event_handler;
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->qp_type = ibqp->qp_type;

	WRITE_ONCE(qp->state, a->qp_state);
	return 0;
}
