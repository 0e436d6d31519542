// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic shared receive queues: one receive ring that several QPs take their
 * receives from. The ring is a work queue like an RQ (verbs_qp.c allocates
 * it, and maps it for the provider). The device stores its consumer index
 * in the doorbell slot, so posting needs no CQE; a receive CQE names the
 * SRQ index in wqe_idx. A kernel SRQ keeps the wr_id of each slot until
 * its CQE: the device's copy of it is never trusted.
 */
#include "vrnic.h"

static struct vrnic_srq *vrnic_srq_get(struct vrnic_dev *dev, u32 srqn)
{
	struct vrnic_srq *srq;
	unsigned long flags;

	xa_lock_irqsave(&dev->srq_xa, flags);
	srq = xa_load(&dev->srq_xa, srqn);
	if (srq && !refcount_inc_not_zero(&srq->refcount))
		srq = NULL;
	xa_unlock_irqrestore(&dev->srq_xa, flags);
	return srq;
}

static void vrnic_srq_put(struct vrnic_srq *srq)
{
	if (refcount_dec_and_test(&srq->refcount))
		complete(&srq->free);
}

static int vrnic_srq_input(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
			   struct ib_udata *udata, u32 *wqe_shift)
{
	struct vrnic_caps *c = &to_vdev(ibsrq->device)->caps;
	struct ib_srq_attr *attr = &init->attr;
	struct vrnic_ibv_create_srq ucmd;
	int shift, err;

	/* XRC SRQs are for user space only, as in other drivers. */
	bool xrc = init->srq_type == IB_SRQT_XRC && udata &&
		   vrnic_has_xrc(to_vdev(ibsrq->device));

	if (!c->max_srq || (init->srq_type != IB_SRQT_BASIC && !xrc)) {
		ibdev_dbg(ibsrq->device, "SRQ type %d unsupported\n",
			  init->srq_type);
		return -EOPNOTSUPP;
	}
	if (!attr->max_wr || attr->max_wr > c->max_srq_wr ||
	    attr->max_sge > c->max_srq_sge) {
		ibdev_dbg(ibsrq->device,
			  "SRQ of %u WRs, %u SGEs above the device's\n",
			  attr->max_wr, attr->max_sge);
		return -EINVAL;
	}
	err = vrnic_udata_in(udata, &ucmd, sizeof(ucmd));
	if (err)
		return err;
	if (ucmd.comp_mask || ucmd.reserved0 || ucmd.reserved1) {
		ibdev_dbg(ibsrq->device, "create_srq comp_mask %#x reserved\n",
			  ucmd.comp_mask);
		return -EINVAL;
	}
	shift = vrnic_pick_shift(ucmd.wqe_shift,
				 vrnic_rq_shift_needed(attr->max_sge),
				 VRNIC_RQ_WQE_SHIFT_MIN, VRNIC_RQ_WQE_SHIFT_MAX);
	if (shift < 0) {
		ibdev_dbg(ibsrq->device, "no SRQ WQE stride: asked %u\n",
			  ucmd.wqe_shift);
		return -EINVAL;
	}
	*wqe_shift = shift;
	return 0;
}

int vrnic_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibsrq->device);
	struct vrnic_ibv_create_srq_resp uresp = {};
	struct vrnic_cmd_create_srq_resp resp = {};
	struct vrnic_cmd_create_srq req = {};
	struct vrnic_srq *srq = to_vsrq(ibsrq);
	struct ib_srq_attr *attr = &init->attr;
	struct vrnic_ucontext *uc = NULL;
	dma_addr_t dma;
	u32 shift;
	int log, err;

	err = vrnic_srq_input(ibsrq, init, udata, &shift);
	if (err)
		return err;
	log = vrnic_wq_log_depth(attr->max_wr, dev->caps.max_srq_wr, shift);
	if (log < 0) {
		ibdev_dbg(ibsrq->device, "SRQ ring of %u WQEs too large\n",
			  attr->max_wr);
		return log;
	}
	if (udata)
		uc = rdma_udata_to_drv_context(udata, struct vrnic_ucontext,
					       ibuc);

	srq->user = !!udata;
	srq->srq_limit = 0;
	srq->next = NULL;
	mutex_init(&srq->limit_lock);
	spin_lock_init(&srq->limit_spin);
	refcount_set(&srq->refcount, 1);
	init_completion(&srq->free);
	srq->wq.log_depth = log;
	srq->wq.wqe_shift = shift;
	srq->wq.max_sge = min_t(u32, dev->caps.max_srq_sge,
				VRNIC_RQ_MAX_SGE(shift));
	srq->wq.shared = true;
	err = vrnic_wq_alloc(dev, uc, &srq->wq, true, &dma,
			     &uresp.ring_mmap_key, &uresp.ring_size);
	if (err)
		return err;

	/* Verbs ignore srq_limit at create: the limit starts disarmed. */
	req.uctx = cpu_to_le32(uc ? uc->uctx : VRNIC_UCTX_KERNEL);
	req.pd = cpu_to_le32(to_vpd(ibsrq->pd)->pdn);
	req.ring_addr = cpu_to_le64(dma);
	req.log_depth = log;
	req.wqe_shift = shift;
	req.max_sge = cpu_to_le16(srq->wq.max_sge);
	if (init->srq_type == IB_SRQT_XRC) {
		/* The domain's, and a CQ of this process (the device checks). */
		req.xrcd = cpu_to_le32(to_vxrcd(init->ext.xrc.xrcd)->handle);
		req.cqn = cpu_to_le32(to_vcq(init->ext.cq)->cqn);
	}
	err = vrnic_cmd_exec(dev, VRNIC_CMD_CREATE_SRQ, &req, sizeof(req),
			     &resp, sizeof(resp));
	if (err)
		goto err_free;
	srq->srqn = le32_to_cpu(resp.srqn);
	srq->db_slot = le32_to_cpu(resp.db_slot);
	if (srq->srqn == VRNIC_HANDLE_NONE ||
	    !vrnic_db_slot_valid(srq->db_slot)) {
		dev_err(&dev->pdev->dev, "CREATE_SRQ returned srqn %u slot %u\n",
			srq->srqn, srq->db_slot);
		err = -EIO;
		goto err_destroy;
	}
	err = xa_insert_irq(&dev->srq_xa, srq->srqn, srq, GFP_KERNEL);
	if (err) {
		dev_err(&dev->pdev->dev, "CREATE_SRQ reused live srqn %u\n",
			srq->srqn);
		err = -EIO;
		goto err_destroy;
	}

	attr->max_wr = 1U << log;
	attr->max_sge = srq->wq.max_sge;
	attr->srq_limit = 0;
	/* What a message to an XRC target names (ibv_get_srq_num). */
	if (init->srq_type == IB_SRQT_XRC)
		ibsrq->ext.xrc.srq_num = srq->srqn;
	if (uc) {
		uresp.srqn = srq->srqn;
		uresp.db_slot = srq->db_slot;
		uresp.log_depth = log;
		uresp.wqe_shift = shift;
		err = vrnic_udata_out(udata, &uresp, sizeof(uresp));
		if (err)
			goto err_erase;
	}
	return 0;

err_erase:
	xa_erase_irq(&dev->srq_xa, srq->srqn);
err_destroy:
	vrnic_cmd_destroy(dev, VRNIC_CMD_DESTROY_SRQ, srq->srqn);
err_free:
	vrnic_wq_free(dev, &srq->wq);
	return err;
}

/* The request of modify_srq: a resize names where its answer goes. */
static int vrnic_modify_srq_input(struct ib_srq *ibsrq,
				  enum ib_srq_attr_mask mask,
				  struct ib_udata *udata, u64 *resp_addr)
{
	struct vrnic_srq *srq = to_vsrq(ibsrq);
	struct vrnic_ibv_modify_srq ucmd;
	int err;

	*resp_addr = 0;
	if (!(mask & IB_SRQ_MAX_WR) || !srq->user)
		return vrnic_udata_no_input(udata);
	if (!udata || udata->inlen < sizeof(ucmd)) {
		ibdev_dbg(ibsrq->device, "SRQ resize without a driver request\n");
		return -EINVAL;
	}
	err = vrnic_udata_in(udata, &ucmd, sizeof(ucmd));
	if (err)
		return err;
	if (ucmd.comp_mask || ucmd.reserved || !ucmd.resp_addr) {
		ibdev_dbg(ibsrq->device, "modify_srq comp_mask %#x reserved\n",
			  ucmd.comp_mask);
		return -EINVAL;
	}
	*resp_addr = ucmd.resp_addr;
	return 0;
}

int vrnic_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibsrq->device);
	struct vrnic_srq *srq = to_vsrq(ibsrq);
	struct vrnic_cmd_modify_srq req = {};
	u64 resp_addr;
	bool grow;
	u32 log;
	int err;

	if (mask & ~(IB_SRQ_LIMIT | IB_SRQ_MAX_WR)) {
		ibdev_dbg(ibsrq->device, "modify_srq mask %#x unsupported\n",
			  mask);
		return -EINVAL;
	}
	/* An older device cannot grow an SRQ, whatever the request says. */
	if ((mask & IB_SRQ_MAX_WR) && dev->caps.version_minor < 6) {
		ibdev_dbg(ibsrq->device, "SRQ resize: device too old\n");
		return -EOPNOTSUPP;
	}
	err = vrnic_modify_srq_input(ibsrq, mask, udata, &resp_addr);
	if (err)
		return err;
	/*
	 * The event arrives in the admin interrupt, which cannot take the
	 * mutex held across the command: it takes limit_spin. An event seen
	 * while the command ran may be the new limit's, so the limit reads
	 * 0 after it, as after any event. The mutex also orders concurrent
	 * grows: each sizes the SRQ from the depth the last one left.
	 */
	mutex_lock(&srq->limit_lock);
	log = srq->wq.log_depth;
	if (mask & IB_SRQ_MAX_WR) {
		err = vrnic_srq_resize_log(dev, srq, attr->max_wr);
		if (err < 0) {
			ibdev_dbg(ibsrq->device, "SRQ %u: cannot hold %u WRs\n",
				  srq->srqn, attr->max_wr);
			goto out_unlock;
		}
		log = err;
		err = 0;
	}
	if ((mask & IB_SRQ_LIMIT) && attr->srq_limit >= (1U << log)) {
		ibdev_dbg(ibsrq->device, "SRQ %u: limit %u not below %u\n",
			  srq->srqn, attr->srq_limit, 1U << log);
		err = -EINVAL;
		goto out_unlock;
	}
	grow = log != srq->wq.log_depth;
	req.srqn = cpu_to_le32(srq->srqn);
	if (mask & IB_SRQ_LIMIT) {
		req.attr_mask = cpu_to_le32(VRNIC_SRQ_ATTR_LIMIT);
		req.srq_limit = cpu_to_le32(attr->srq_limit);
		spin_lock_irq(&srq->limit_spin);
		srq->limit_fired = false;
		spin_unlock_irq(&srq->limit_spin);
	}
	if (grow)
		err = vrnic_srq_resize(dev, srq, &req, log, udata, resp_addr);
	else if (mask & IB_SRQ_LIMIT)
		err = vrnic_cmd_exec(dev, VRNIC_CMD_MODIFY_SRQ, &req,
				     sizeof(req), NULL, 0);
	/* Asked to grow to what it holds already: no new ring. */
	if (!err && resp_addr && !grow)
		err = vrnic_srq_resize_report(srq, resp_addr, NULL);
	if (mask & IB_SRQ_LIMIT) {
		spin_lock_irq(&srq->limit_spin);
		if (!err)
			WRITE_ONCE(srq->srq_limit,
				   srq->limit_fired ? 0 : attr->srq_limit);
		spin_unlock_irq(&srq->limit_spin);
	}
out_unlock:
	mutex_unlock(&srq->limit_lock);
	return err;
}

int vrnic_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct vrnic_srq *srq = to_vsrq(ibsrq);

	attr->max_wr = 1U << srq->wq.log_depth;
	attr->max_sge = srq->wq.max_sge;
	/* The device disarms the limit when it fires: 0 after the event. */
	attr->srq_limit = READ_ONCE(srq->srq_limit);
	return 0;
}

int vrnic_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibsrq->device);
	struct vrnic_srq *srq = to_vsrq(ibsrq);
	int err;

	err = vrnic_cmd_destroy(dev, VRNIC_CMD_DESTROY_SRQ, srq->srqn);
	if (err)
		return err;
	/* No new EQEs name this SRQ; wait for handlers still using it. */
	xa_erase_irq(&dev->srq_xa, srq->srqn);
	vrnic_check(refcount_read(&srq->refcount) >= 1);
	vrnic_srq_put(srq);
	wait_for_completion(&srq->free);
	vrnic_check(!refcount_read(&srq->refcount));

	vrnic_wq_free(dev, &srq->wq);
	/* Nobody looks at the driver's part again; the core frees it. */
	vrnic_poison(&srq->ibsrq + 1, sizeof(*srq) - sizeof(srq->ibsrq));
	return 0;
}

/*
 * Take the device's consumer index from the doorbell slot. A value that
 * goes backwards or past what was posted is a device error: ignored, so
 * that no slot still holding a WQE the device has not read is reused.
 */
static void vrnic_srq_read_ci(struct vrnic_dev *dev, struct vrnic_srq *srq)
{
	struct vrnic_wq *wq = &srq->wq;
	u32 ci;

	vrnic_assert_spin_held(&wq->lock);
	ci = readl(vrnic_kdb_word(dev, srq->db_slot, VRNIC_DB_SRQ_CI));
	if ((u32)(ci - wq->ci) <= (u32)(wq->pi - wq->ci)) {
		wq->ci = ci;
		return;
	}
	dev_dbg_ratelimited(&dev->pdev->dev,
			    "SRQ %u: device ci %u outside [%u, %u]\n",
			    srq->srqn, ci, wq->ci, wq->pi);
}

int vrnic_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct vrnic_dev *dev = to_vdev(ibsrq->device);
	struct vrnic_srq *srq = to_vsrq(ibsrq);
	struct vrnic_wq *wq = &srq->wq;
	unsigned long flags;
	u32 old_pi;
	int err;

	if (srq->user) {
		/* User SRQs post from the provider, on their own rings. */
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	spin_lock_irqsave(&wq->lock, flags);
	old_pi = wq->pi;
	if (vrnic_is_fatal(dev)) {
		err = -EIO;
	} else {
		vrnic_srq_read_ci(dev, srq);
		err = vrnic_wq_post_recv(wq, &wr);
		vrnic_srq_resize_mirror(srq, old_pi);
	}
	if (err)
		*bad_wr = wr;
	if (wq->pi != old_pi) {
		dma_wmb();	/* WQEs before the producer index */
		writel(wq->pi, vrnic_kdb_word(dev, srq->db_slot,
					      VRNIC_DB_SRQ_PI));
		vrnic_wake_if_needed(dev, VRNIC_KICK_DATA_WAKEUP,
				     VRNIC_DB_STATUS_RQ_WAKEUP);
	}
	spin_unlock_irqrestore(&wq->lock, flags);
	return err;
}

/*
 * Retire SRQ index @wqe_idx named by a receive CQE into @wr: only a WQE
 * posted there, not completed yet, and consumed by the device, passes.
 * Anything else (a stale, duplicate or invented index) is refused.
 */
bool vrnic_srq_retire(struct vrnic_srq *srq, u32 wqe_idx,
		      struct vrnic_wr_slot *wr)
{
	struct vrnic_dev *dev = to_vdev(srq->ibsrq.device);
	struct vrnic_wq *wq = &srq->wq;
	struct vrnic_wr_slot *slot;
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&wq->lock, flags);
	vrnic_srq_read_ci(dev, srq);
	slot = &wq->wrid[vrnic_ring_slot(wqe_idx, wq->log_depth)];
	ok = slot->pending && slot->idx == wqe_idx &&
	     (s32)(wq->ci - wqe_idx) > 0;
	if (ok) {
		*wr = *slot;
		slot->pending = false;
		vrnic_srq_resize_retire(srq, wqe_idx);
	}
	spin_unlock_irqrestore(&wq->lock, flags);
	return ok;
}

/* An SRQ event from the async EQ: the limit it reached or an error. */
void vrnic_srq_event(struct vrnic_dev *dev, u32 srqn, enum ib_event_type type)
{
	struct vrnic_srq *srq = vrnic_srq_get(dev, srqn);
	struct ib_event ev = {};
	unsigned long flags;

	if (!srq) {
		vrnic_count(dev, VRNIC_CNT_BAD_EQES, 1);
		return;
	}
	/* The device disarmed the limit when it posted the event. */
	if (type == IB_EVENT_SRQ_LIMIT_REACHED) {
		spin_lock_irqsave(&srq->limit_spin, flags);
		WRITE_ONCE(srq->srq_limit, 0);
		srq->limit_fired = true;
		spin_unlock_irqrestore(&srq->limit_spin, flags);
	}
	if (srq->ibsrq.event_handler) {
		ev.device = &dev->ibdev;
		ev.event = type;
		ev.element.srq = &srq->ibsrq;
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
	}
	vrnic_srq_put(srq);
}
