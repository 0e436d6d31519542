// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The kernel consumers' data path (device interface section 13): send WQEs
 * built from ib_send_wr for each QP type, receives for QPs and SRQs, posted
 * on the kernel doorbell page. Each WQ keeps its own wr_id table, indexed
 * by the (validated) wqe_idx of each CQE.
 */
#include "vrnic.h"

/* The device uses the verbs opcodes; the driver copies them across. */
VRNIC_SAME(IB_WR_RDMA_WRITE, VRNIC_WR_RDMA_WRITE);
VRNIC_SAME(IB_WR_RDMA_WRITE_WITH_IMM, VRNIC_WR_RDMA_WRITE_WITH_IMM);
VRNIC_SAME(IB_WR_SEND, VRNIC_WR_SEND);
VRNIC_SAME(IB_WR_SEND_WITH_IMM, VRNIC_WR_SEND_WITH_IMM);
VRNIC_SAME(IB_WR_RDMA_READ, VRNIC_WR_RDMA_READ);
VRNIC_SAME(IB_WR_ATOMIC_CMP_AND_SWP, VRNIC_WR_ATOMIC_CMP_AND_SWP);
VRNIC_SAME(IB_WR_ATOMIC_FETCH_AND_ADD, VRNIC_WR_ATOMIC_FETCH_AND_ADD);
VRNIC_SAME(IB_WR_LOCAL_INV, VRNIC_WR_LOCAL_INV);
VRNIC_SAME(IB_WR_SEND_WITH_INV, VRNIC_WR_SEND_WITH_INV);
VRNIC_SAME(IB_WR_REG_MR, VRNIC_WR_REG_MR);

/* The slot of @idx, about to be written: never one still outstanding. */
static void *vrnic_wq_slot(struct vrnic_wq *wq, u32 idx)
{
	vrnic_assert_spin_held(&wq->lock);
	vrnic_check((u32)(idx - wq->ci) < (1U << wq->log_depth));
	return vrnic_ring_entry(wq->ring.va, idx, wq->log_depth,
				(size_t)1 << wq->wqe_shift);
}

/*
 * Retire a WQE named by a CQE into @wr; false if wqe_idx is not
 * outstanding.
 */
bool vrnic_qp_retire(struct vrnic_qp *qp, bool send, u32 wqe_idx,
		     struct vrnic_wr_slot *wr)
{
	struct vrnic_wq *wq = send ? &qp->sq : &qp->rq;
	struct ib_cq *cq = send ? qp->ibqp.send_cq : qp->ibqp.recv_cq;
	bool ok;

	/* The CQ's lock keeps the QP from being destroyed meanwhile. */
	vrnic_assert_spin_held(&to_vcq(cq)->lock);
	spin_lock(&wq->lock);
	vrnic_check((u32)(wq->pi - wq->ci) <= (1U << wq->log_depth));
	ok = (u32)(wqe_idx - wq->ci) < (u32)(wq->pi - wq->ci);
	if (ok) {
		*wr = wq->wrid[vrnic_ring_slot(wqe_idx, wq->log_depth)];
		wq->ci = wqe_idx + 1;
	}
	spin_unlock(&wq->lock);
	return ok;
}

/* Where a send WQE's SGEs or inline data start: after its AV if it has one. */
static void *vrnic_send_wqe_body(struct vrnic_send_wqe_hdr *hdr)
{
	return (void *)hdr + (hdr->flags & VRNIC_WQE_F_AV ?
			      VRNIC_SEND_WQE_AV_HDR_SIZE :
			      VRNIC_SEND_WQE_HDR_SIZE);
}

static int vrnic_build_inline(struct vrnic_qp *qp, const struct ib_send_wr *wr,
			      struct vrnic_send_wqe_hdr *hdr)
{
	struct vrnic_inline_hdr *ih = vrnic_send_wqe_body(hdr);
	u8 *data = (u8 *)ih + VRNIC_INLINE_HDR_SIZE;
	u32 total = 0;
	int i;

	vrnic_assert_spin_held(&qp->sq.lock);
	switch (wr->opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		break;
	default:
		return -EINVAL;
	}
	for (i = 0; i < wr->num_sge; i++) {
		if (wr->sg_list[i].length > qp->max_inline - total)
			return -EINVAL;
		/* Inline data comes from kernel virtual addresses. */
		memcpy(data + total, (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		total += wr->sg_list[i].length;
	}
	ih->length = cpu_to_le32(total);
	ih->reserved = 0;
	hdr->flags |= VRNIC_WQE_F_INLINE;
	hdr->num_sge = 0;
	return 0;
}

/* The fields of an RC send WQE that depend on its opcode. */
static int vrnic_build_rc(const struct ib_send_wr *wr,
			  struct vrnic_send_wqe_hdr *hdr)
{
	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE_WITH_IMM:
		hdr->imm_data = wr->ex.imm_data;
		fallthrough;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_READ:
		hdr->rdma.remote_addr = cpu_to_le64(rdma_wr(wr)->remote_addr);
		hdr->rdma.rkey = cpu_to_le32(rdma_wr(wr)->rkey);
		break;
	case IB_WR_SEND_WITH_IMM:
		hdr->imm_data = wr->ex.imm_data;
		break;
	case IB_WR_SEND:
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		hdr->invalidate_rkey = cpu_to_le32(wr->ex.invalidate_rkey);
		break;
	case IB_WR_REG_MR:
		return vrnic_build_reg_mr(reg_wr(wr), hdr);
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		hdr->atomic.remote_addr = cpu_to_le64(atomic_wr(wr)->remote_addr);
		hdr->atomic.rkey = cpu_to_le32(atomic_wr(wr)->rkey);
		hdr->atomic.compare_add = cpu_to_le64(atomic_wr(wr)->compare_add);
		hdr->atomic.swap = cpu_to_le64(atomic_wr(wr)->swap);
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

/* UC is RC without RDMA reads and atomics (refused here, not by the device). */
static int vrnic_build_uc(const struct ib_send_wr *wr,
			  struct vrnic_send_wqe_hdr *hdr)
{
	switch (wr->opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
	case IB_WR_REG_MR:
		return vrnic_build_rc(wr, hdr);
	default:
		return -EINVAL;
	}
}

/*
 * A datagram names its destination: the device's AH (1.4, kernel: the AV
 * itself, after the header), QPN and qkey.
 */
static int vrnic_build_ud(struct vrnic_qp *qp, const struct ib_send_wr *wr,
			  struct vrnic_send_wqe_hdr *hdr)
{
	const struct ib_ud_wr *ud = ud_wr(wr);

	switch (wr->opcode) {
	case IB_WR_SEND_WITH_IMM:
		hdr->imm_data = wr->ex.imm_data;
		break;
	case IB_WR_SEND:
		break;
	default:
		return -EINVAL;
	}
	if (!ud->ah || ud->ah->device != qp->ibqp.device ||
	    ud->remote_qpn & ~VRNIC_QPN_MASK ||
	    qp->wqe_av != !to_vah(ud->ah)->deferred)
		return -EINVAL;
	if (qp->wqe_av) {
		memcpy((void *)hdr + VRNIC_SEND_WQE_HDR_SIZE,
		       &to_vah(ud->ah)->av, VRNIC_AV_SIZE);
		hdr->flags |= VRNIC_WQE_F_AV;
	} else {
		hdr->ud.ah = cpu_to_le32(to_vah(ud->ah)->deferred->handle);
	}
	hdr->ud.remote_qpn = cpu_to_le32(ud->remote_qpn);
	hdr->ud.remote_qkey = cpu_to_le32(ud->remote_qkey);
	return 0;
}

static int vrnic_build_send(struct vrnic_qp *qp, const struct ib_send_wr *wr,
			    struct vrnic_send_wqe_hdr *hdr)
{
	struct vrnic_sge *sge;
	bool local_op;
	int i, err;

	vrnic_assert_spin_held(&qp->sq.lock);
	memset(hdr, 0, VRNIC_SEND_WQE_HDR_SIZE);
	hdr->wr_id = cpu_to_le64(wr->wr_id);
	local_op = wr->opcode == IB_WR_REG_MR || wr->opcode == IB_WR_LOCAL_INV;
	if ((local_op || wr->opcode == IB_WR_SEND_WITH_INV) &&
	    !vrnic_has_frmr(to_vdev(qp->ibqp.device)))
		return -EINVAL;
	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		err = vrnic_build_rc(wr, hdr);
		break;
	case IB_QPT_UC:
		err = vrnic_build_uc(wr, hdr);
		break;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		err = vrnic_build_ud(qp, wr, hdr);
		break;
	default:
		err = -EINVAL;
	}
	if (err)
		return err;
	hdr->opcode = wr->opcode;
	if (wr->send_flags & IB_SEND_SIGNALED)
		hdr->flags |= VRNIC_WQE_F_SIGNALED;
	if (wr->send_flags & IB_SEND_SOLICITED)
		hdr->flags |= VRNIC_WQE_F_SOLICITED;
	if (wr->send_flags & IB_SEND_FENCE)
		hdr->flags |= VRNIC_WQE_F_FENCE;
	/* Local operations carry no data. */
	if (local_op)
		return 0;

	if (wr->send_flags & IB_SEND_INLINE)
		return vrnic_build_inline(qp, wr, hdr);

	if (wr->num_sge < 0 || wr->num_sge > qp->sq.max_sge)
		return -EINVAL;
	sge = vrnic_send_wqe_body(hdr);
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = cpu_to_le64(wr->sg_list[i].addr);
		sge[i].length = cpu_to_le32(wr->sg_list[i].length);
		sge[i].lkey = cpu_to_le32(wr->sg_list[i].lkey);
	}
	hdr->num_sge = wr->num_sge;
	return 0;
}

int vrnic_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct vrnic_dev *dev = to_vdev(ibqp->device);
	struct vrnic_qp *qp = to_vqp(ibqp);
	struct vrnic_wq *sq = &qp->sq;
	u32 depth = 1U << sq->log_depth;
	unsigned long flags;
	bool posted = false;
	int err = 0;

	if (qp->user) {
		/* User QPs post from the provider, on their own rings. */
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	spin_lock_irqsave(&sq->lock, flags);
	if (vrnic_is_fatal(dev))
		err = -EIO;
	else if (READ_ONCE(qp->state) == IB_QPS_RESET)
		err = -EINVAL;
	for (; wr && !err; wr = wr->next) {
		if ((u32)(sq->pi - sq->ci) >= depth) {
			err = -ENOMEM;
			break;
		}
		err = vrnic_build_send(qp, wr, vrnic_wq_slot(sq, sq->pi));
		if (err)
			break;
		sq->wrid[vrnic_ring_slot(sq->pi, sq->log_depth)].wr_id =
			wr->wr_id;
		sq->pi++;
		posted = true;
	}
	if (err)
		*bad_wr = wr;
	if (posted) {
		dma_wmb();	/* WQEs before the producer index */
		writel(sq->pi, vrnic_kdb_word(dev, qp->db_slot,
					      VRNIC_DB_QP_SQ_PI));
		vrnic_wake_if_needed(dev, VRNIC_KICK_DATA_WAKEUP,
				     VRNIC_DB_STATUS_NEED_WAKEUP);
	}
	spin_unlock_irqrestore(&sq->lock, flags);
	return err;
}

/*
 * Write receive WQEs for @*wr and its successors at wq->pi while the ring
 * has room; @*wr is left at the first one not posted. The caller holds
 * wq->lock and publishes the producer index. An SRQ slot the device has
 * read may still await its CQE: it is not reused before.
 */
int vrnic_wq_post_recv(struct vrnic_wq *wq, const struct ib_recv_wr **wr)
{
	u32 depth = 1U << wq->log_depth;
	const struct ib_recv_wr *w;
	struct vrnic_recv_wqe_hdr *hdr;
	struct vrnic_wr_slot *slot;
	struct vrnic_sge *sge;
	u64 len;
	int i;

	vrnic_assert_spin_held(&wq->lock);
	for (w = *wr; w; w = w->next) {
		slot = &wq->wrid[vrnic_ring_slot(wq->pi, wq->log_depth)];
		if ((u32)(wq->pi - wq->ci) >= depth ||
		    (wq->shared && slot->pending)) {
			*wr = w;
			return -ENOMEM;
		}
		if (w->num_sge < 0 || w->num_sge > wq->max_sge) {
			*wr = w;
			return -EINVAL;
		}
		hdr = vrnic_wq_slot(wq, wq->pi);
		sge = (void *)hdr + VRNIC_RECV_WQE_HDR_SIZE;
		memset(hdr, 0, VRNIC_RECV_WQE_HDR_SIZE);
		hdr->wr_id = cpu_to_le64(w->wr_id);
		hdr->num_sge = w->num_sge;
		len = 0;
		for (i = 0; i < w->num_sge; i++) {
			sge[i].addr = cpu_to_le64(w->sg_list[i].addr);
			sge[i].length = cpu_to_le32(w->sg_list[i].length);
			sge[i].lkey = cpu_to_le32(w->sg_list[i].lkey);
			len += w->sg_list[i].length;
		}
		slot->wr_id = w->wr_id;
		slot->len = min_t(u64, len, U32_MAX);
		slot->idx = wq->pi;
		slot->pending = wq->shared;
		wq->pi++;
	}
	*wr = NULL;
	return 0;
}

int vrnic_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct vrnic_dev *dev = to_vdev(ibqp->device);
	struct vrnic_qp *qp = to_vqp(ibqp);
	struct vrnic_wq *rq = &qp->rq;
	unsigned long flags;
	u32 old_pi;
	int err = 0;

	/* User QPs post from the provider; a QP on an SRQ posts there. */
	if (qp->user || qp->srq) {
		*bad_wr = wr;
		return qp->user ? -EOPNOTSUPP : -EINVAL;
	}
	spin_lock_irqsave(&rq->lock, flags);
	old_pi = rq->pi;
	if (vrnic_is_fatal(dev))
		err = -EIO;
	else if (READ_ONCE(qp->state) == IB_QPS_RESET)
		err = -EINVAL;
	else
		err = vrnic_wq_post_recv(rq, &wr);
	if (err)
		*bad_wr = wr;
	if (rq->pi != old_pi) {
		dma_wmb();	/* WQEs before the producer index */
		writel(rq->pi, vrnic_kdb_word(dev, qp->db_slot,
					      VRNIC_DB_QP_RQ_PI));
		vrnic_wake_if_needed(dev, VRNIC_KICK_DATA_WAKEUP,
				     VRNIC_DB_STATUS_RQ_WAKEUP);
	}
	spin_unlock_irqrestore(&rq->lock, flags);
	return err;
}
