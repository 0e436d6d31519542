// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Growing an SRQ (IB_DEVICE_SRQ_RESIZE, device interface 1.6). MODIFY_SRQ
 * hands the device a new ring; when it runs the command the device copies
 * the WQEs posted and not yet taken to the same free-running indices of the
 * new ring and reads only that ring from then on (docs/device-interface.md
 * 10.17). Indices do not change, so the doorbell words and the CQEs' SRQ
 * indices mean the same before and after.
 *
 * A kernel SRQ may be posted from any context while the command runs: the
 * driver then writes each WQE, and its wr_id slot, into both rings. Which
 * ring the device reads it from, it finds the same WQE; if the command
 * fails nothing changed. A user SRQ is the provider's: it holds its SRQ
 * lock across the verb, and maps the new ring after it.
 */
#include "vrnic.h"

/* Copy WQE @idx and its wr_id slot from @from into @to. */
static void vrnic_srq_copy_slot(struct vrnic_wq *to, struct vrnic_wq *from,
				u32 idx)
{
	size_t stride = (size_t)1 << from->wqe_shift;

	memcpy(vrnic_ring_entry(to->ring.va, idx, to->log_depth, stride),
	       vrnic_ring_entry(from->ring.va, idx, from->log_depth, stride),
	       stride);
	to->wrid[vrnic_ring_slot(idx, to->log_depth)] =
		from->wrid[vrnic_ring_slot(idx, from->log_depth)];
}

/* Posts of a kernel SRQ under resize, [@old_pi, pi): into the new ring too. */
void vrnic_srq_resize_mirror(struct vrnic_srq *srq, u32 old_pi)
{
	struct vrnic_wq *wq = &srq->wq;
	u32 idx;

	vrnic_assert_spin_held(&wq->lock);
	if (!srq->next)
		return;
	for (idx = old_pi; idx != wq->pi; idx++)
		vrnic_srq_copy_slot(srq->next, wq, idx);
}

/* A retired slot of a kernel SRQ under resize: retired in the new table. */
void vrnic_srq_resize_retire(struct vrnic_srq *srq, u32 wqe_idx)
{
	vrnic_assert_spin_held(&srq->wq.lock);
	if (srq->next)
		srq->next->wrid[vrnic_ring_slot(wqe_idx, srq->next->log_depth)]
			.pending = false;
}

static int vrnic_srq_resize_kernel(struct vrnic_dev *dev,
				   struct vrnic_srq *srq,
				   struct vrnic_cmd_modify_srq *req, u32 log)
{
	struct vrnic_wq *wq = &srq->wq;
	struct vrnic_wq next = {}, old = {};
	unsigned long flags;
	dma_addr_t dma;
	u32 i;
	int err;

	next.log_depth = log;
	next.wqe_shift = wq->wqe_shift;
	next.max_sge = wq->max_sge;
	next.shared = true;
	err = vrnic_wq_alloc(dev, NULL, &next, true, &dma, NULL, NULL);
	if (err)
		return err;
	req->ring_addr = cpu_to_le64(dma);
	req->log_depth = log;

	spin_lock_irqsave(&wq->lock, flags);
	/* Every slot still posted or not yet completed, at its new place. */
	for (i = 0; i < (1U << wq->log_depth); i++)
		if (wq->wrid[i].pending)
			vrnic_srq_copy_slot(&next, wq, wq->wrid[i].idx);
	srq->next = &next;
	spin_unlock_irqrestore(&wq->lock, flags);

	err = vrnic_cmd_exec(dev, VRNIC_CMD_MODIFY_SRQ, req, sizeof(*req),
			     NULL, 0);

	spin_lock_irqsave(&wq->lock, flags);
	srq->next = NULL;
	if (!err) {
		old.ring = wq->ring;
		old.wrid = wq->wrid;
		old.log_depth = wq->log_depth;
		wq->ring = next.ring;
		wq->wrid = next.wrid;
		wq->log_depth = log;
	} else {
		old = next;
	}
	spin_unlock_irqrestore(&wq->lock, flags);
	vrnic_wq_free(dev, &old);
	return err;
}

static int vrnic_srq_resize_user(struct vrnic_dev *dev, struct vrnic_srq *srq,
				 struct vrnic_cmd_modify_srq *req, u32 log,
				 struct ib_udata *udata, u64 resp_addr)
{
	struct vrnic_ibv_modify_srq_resp uresp = {};
	struct vrnic_ucontext *uc;
	struct vrnic_wq next = {};
	dma_addr_t dma;
	int err;

	uc = rdma_udata_to_drv_context(udata, struct vrnic_ucontext, ibuc);
	next.log_depth = log;
	next.wqe_shift = srq->wq.wqe_shift;
	err = vrnic_wq_alloc(dev, uc, &next, false, &dma, &uresp.ring_mmap_key,
			     &uresp.ring_size);
	if (err)
		return err;
	req->ring_addr = cpu_to_le64(dma);
	req->log_depth = log;
	err = vrnic_cmd_exec(dev, VRNIC_CMD_MODIFY_SRQ, req, sizeof(*req),
			     NULL, 0);
	if (err) {
		vrnic_wq_free(dev, &next);
		return err;
	}
	/* The old pages stay until the provider unmaps them. */
	rdma_user_mmap_entry_remove(srq->wq.entry);
	srq->wq.entry = next.entry;
	srq->wq.log_depth = log;
	return vrnic_srq_resize_report(srq, resp_addr, &uresp);
}

/*
 * Tell the provider the SRQ's depth and its new ring (@uresp), or that it
 * keeps its ring (@uresp NULL: key 0).
 */
int vrnic_srq_resize_report(struct vrnic_srq *srq, u64 resp_addr,
			    struct vrnic_ibv_modify_srq_resp *uresp)
{
	struct vrnic_ibv_modify_srq_resp same = {};

	if (!uresp)
		uresp = &same;
	uresp->log_depth = srq->wq.log_depth;
	if (copy_to_user(u64_to_user_ptr(resp_addr), uresp, sizeof(*uresp)))
		return -EFAULT;
	return 0;
}

/*
 * The depth @max_wr asks for as a log: the current one if it is not
 * larger (nothing to do), negative if the device cannot grow to it.
 */
int vrnic_srq_resize_log(struct vrnic_dev *dev, struct vrnic_srq *srq,
			 u32 max_wr)
{
	int log;

	if (dev->caps.version_minor < 6)
		return -EOPNOTSUPP;
	if (!max_wr || max_wr > dev->caps.max_srq_wr)
		return -EINVAL;
	if (max_wr <= (1U << srq->wq.log_depth))
		return srq->wq.log_depth;
	log = vrnic_wq_log_depth(max_wr, dev->caps.max_srq_wr,
				 srq->wq.wqe_shift);
	return log;
}

/*
 * Run MODIFY_SRQ @req growing @srq to 2^@log WQEs (with any limit @req
 * also sets). The caller holds limit_lock.
 */
int vrnic_srq_resize(struct vrnic_dev *dev, struct vrnic_srq *srq,
		     struct vrnic_cmd_modify_srq *req, u32 log,
		     struct ib_udata *udata, u64 resp_addr)
{
	vrnic_assert_mutex_held(&srq->limit_lock);
	req->attr_mask |= cpu_to_le32(VRNIC_SRQ_ATTR_MAX_WR);
	if (srq->user)
		return vrnic_srq_resize_user(dev, srq, req, log, udata,
					     resp_addr);
	return vrnic_srq_resize_kernel(dev, srq, req, log);
}
