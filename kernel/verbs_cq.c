// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic completion queues (device interface sections 10.10-10.12, 12).
 *
 * A user CQ's ring belongs to its mmap entry from the start, so it lives as
 * long as the process maps it. A kernel CQ is polled here: every CQE is
 * checked (phase, QP, opcode, wqe_idx, the datagram fields) before it
 * becomes a work completion.
 */
#include <linux/etherdevice.h>
#include <linux/log2.h>

#include "vrnic.h"

struct vrnic_cq *vrnic_cq_get(struct vrnic_dev *dev, u32 cqn)
{
	struct vrnic_cq *cq;
	unsigned long flags;

	xa_lock_irqsave(&dev->cq_xa, flags);
	cq = xa_load(&dev->cq_xa, cqn);
	if (cq && !refcount_inc_not_zero(&cq->refcount))
		cq = NULL;
	xa_unlock_irqrestore(&dev->cq_xa, flags);
	return cq;
}

void vrnic_cq_put(struct vrnic_cq *cq)
{
	if (refcount_dec_and_test(&cq->refcount))
		complete(&cq->free);
}

static void __iomem *vrnic_cq_db(struct vrnic_dev *dev, struct vrnic_cq *cq,
				 u32 offset)
{
	return vrnic_kdb_word(dev, cq->db_slot, offset);
}

/* CQ depth for @cqe entries, or a negative errno. */
static int vrnic_cq_log_depth(struct vrnic_dev *dev, int cqe)
{
	u32 max = min_t(u32, dev->caps.max_cqe,
			VRNIC_RING_MAX_BYTES / VRNIC_CQE_SIZE);
	u32 max_log = ilog2(max);

	if (cqe < 1 || (u32)cqe > (1U << max_log))
		return -EINVAL;
	return max_t(int, VRNIC_CQ_LOG_DEPTH_MIN,
		     order_base_2(max_t(int, cqe, 2)));
}

static int vrnic_check_cq_udata(struct ib_udata *udata)
{
	struct vrnic_ibv_create_cq cmd;
	int err;

	BUILD_BUG_ON(sizeof(struct vrnic_ibv_create_cq) !=
		     sizeof(struct vrnic_ibv_resize_cq));
	err = vrnic_udata_in(udata, &cmd, sizeof(cmd));
	if (err)
		return err;
	if (cmd.comp_mask || cmd.reserved)
		return -EINVAL;
	return 0;
}

/*
 * What create and resize both check: the ring depth for @cqe entries, and
 * for a user CQ its udata and ucontext. A negative errno if refused.
 */
static int vrnic_cq_input(struct ib_cq *ibcq, int cqe, struct ib_udata *udata,
			  struct vrnic_ucontext **uc)
{
	int log_depth = vrnic_cq_log_depth(to_vdev(ibcq->device), cqe);
	int err;

	if (log_depth < 0) {
		ibdev_dbg(ibcq->device, "CQ of %d entries\n", cqe);
		return log_depth;
	}
	if (udata) {
		err = vrnic_check_cq_udata(udata);
		if (err)
			return err;
		*uc = rdma_udata_to_drv_context(udata, struct vrnic_ucontext,
						ibuc);
	}
	return log_depth;
}

int vrnic_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibcq->device);
	struct vrnic_ibv_create_cq_resp uresp = {};
	struct vrnic_cmd_create_cq_resp resp = {};
	struct vrnic_cmd_create_cq req = {};
	struct vrnic_cq *cq = to_vcq(ibcq);
	struct vrnic_ucontext *uc = NULL;
	struct vrnic_dma ring = {};
	u64 ring_size = 0;
	dma_addr_t ring_dma;
	int log_depth, err;

	/* 1.3 devices stamp every CQE: a timestamping CQ is any CQ. */
	if ((attr->flags & ~IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION) ||
	    (attr->flags && dev->caps.version_minor < 3)) {
		ibdev_dbg(ibcq->device, "CQ flags %#x unsupported\n",
			  attr->flags);
		return -EOPNOTSUPP;
	}
	log_depth = vrnic_cq_input(ibcq, attr->cqe, udata, &uc);
	if (log_depth < 0)
		return log_depth;

	spin_lock_init(&cq->lock);
	mutex_init(&cq->resize_lock);
	refcount_set(&cq->refcount, 1);
	init_completion(&cq->free);
	cq->user = !!udata;
	cq->log_depth = log_depth;
	cq->eqn = vrnic_comp_vector_eqn(dev, attr->comp_vector);

	err = vrnic_dma_alloc(dev, &ring, VRNIC_CQE_SIZE << log_depth);
	if (err)
		return err;
	ring_dma = ring.dma;
	if (uc) {
		ring_size = ring.size;
		cq->ring_entry = vrnic_mmap_insert_dma(uc, &ring,
						       &uresp.ring_mmap_key);
		if (IS_ERR(cq->ring_entry)) {
			err = PTR_ERR(cq->ring_entry);
			cq->ring_entry = NULL;
			vrnic_dma_free(dev, &ring);
			return err;
		}
	} else {
		cq->ring = ring;
	}

	req.uctx = cpu_to_le32(uc ? uc->uctx : VRNIC_UCTX_KERNEL);
	req.eqn = cpu_to_le32(cq->eqn);
	req.ring_addr = cpu_to_le64(ring_dma);
	req.log_depth = cpu_to_le32(log_depth);
	err = vrnic_cmd_exec(dev, VRNIC_CMD_CREATE_CQ, &req, sizeof(req),
			     &resp, sizeof(resp));
	if (err)
		goto err_free_ring;
	cq->cqn = le32_to_cpu(resp.cqn);
	cq->db_slot = le32_to_cpu(resp.db_slot);
	if (!cq->cqn || !vrnic_db_slot_valid(cq->db_slot)) {
		dev_err(&dev->pdev->dev, "CREATE_CQ returned cqn %u slot %u\n",
			cq->cqn, cq->db_slot);
		err = -EIO;
		goto err_destroy;
	}
	err = xa_insert_irq(&dev->cq_xa, cq->cqn, cq, GFP_KERNEL);
	if (err) {
		dev_err(&dev->pdev->dev, "CREATE_CQ reused live cqn %u\n",
			cq->cqn);
		err = -EIO;
		goto err_destroy;
	}

	if (uc) {
		uresp.cqn = cq->cqn;
		uresp.db_slot = cq->db_slot;
		uresp.log_depth = log_depth;
		uresp.ring_size = ring_size;
		err = vrnic_udata_out(udata, &uresp, sizeof(uresp));
		if (err)
			goto err_erase;
	}
	ibcq->cqe = 1 << log_depth;
	return 0;

err_erase:
	xa_erase_irq(&dev->cq_xa, cq->cqn);
err_destroy:
	vrnic_cmd_destroy(dev, VRNIC_CMD_DESTROY_CQ, cq->cqn);
err_free_ring:
	if (cq->ring_entry)
		rdma_user_mmap_entry_remove(cq->ring_entry);
	cq->ring_entry = NULL;
	vrnic_dma_free(dev, &cq->ring);
	return err;
}

int vrnic_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibcq->device);
	struct vrnic_cq *cq = to_vcq(ibcq);
	int err;

	err = vrnic_cmd_destroy(dev, VRNIC_CMD_DESTROY_CQ, cq->cqn);
	if (err)
		return err;
	/* No new EQEs name this CQ; wait for handlers still using it. */
	xa_erase_irq(&dev->cq_xa, cq->cqn);
	vrnic_check(refcount_read(&cq->refcount) >= 1);
	vrnic_cq_put(cq);
	wait_for_completion(&cq->free);
	vrnic_check(!refcount_read(&cq->refcount));

	if (cq->ring_entry)
		rdma_user_mmap_entry_remove(cq->ring_entry);
	vrnic_dma_free(dev, &cq->ring);
	/* Nobody looks at the driver's part again; the core frees it. */
	vrnic_poison(&cq->ibcq + 1, sizeof(*cq) - sizeof(cq->ibcq));
	return 0;
}

int vrnic_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibcq->device);
	struct vrnic_ibv_resize_cq_resp uresp = {};
	struct rdma_user_mmap_entry *entry = NULL;
	struct vrnic_cq *cq = to_vcq(ibcq);
	struct vrnic_cmd_resize_cq req = {};
	struct vrnic_ucontext *uc = NULL;
	struct vrnic_dma ring = {}, old;
	int log_depth, err;

	if (!!udata != cq->user) {
		ibdev_dbg(ibcq->device, "resize of a %s CQ %s udata\n",
			  cq->user ? "user" : "kernel",
			  udata ? "with" : "without");
		return -EINVAL;
	}
	log_depth = vrnic_cq_input(ibcq, cqe, udata, &uc);
	if (log_depth < 0)
		return log_depth;

	err = vrnic_dma_alloc(dev, &ring, VRNIC_CQE_SIZE << log_depth);
	if (err)
		return err;
	req.cqn = cpu_to_le32(cq->cqn);
	req.log_depth = cpu_to_le32(log_depth);
	req.ring_addr = cpu_to_le64(ring.dma);

	if (uc) {
		uresp.ring_size = ring.size;
		entry = vrnic_mmap_insert_dma(uc, &ring, &uresp.ring_mmap_key);
		if (IS_ERR(entry)) {
			vrnic_dma_free(dev, &ring);
			return PTR_ERR(entry);
		}
		/* The provider stored its ci in the slot before calling. */
		mutex_lock(&cq->resize_lock);
		err = vrnic_cmd_exec(dev, VRNIC_CMD_RESIZE_CQ, &req,
				     sizeof(req), NULL, 0);
		if (err) {
			mutex_unlock(&cq->resize_lock);
			rdma_user_mmap_entry_remove(entry);
			return err;
		}
		rdma_user_mmap_entry_remove(cq->ring_entry);
		cq->ring_entry = entry;
		cq->log_depth = log_depth;
		ibcq->cqe = 1 << log_depth;
		mutex_unlock(&cq->resize_lock);
		uresp.log_depth = log_depth;
		return vrnic_udata_out(udata, &uresp, sizeof(uresp));
	}

	mutex_lock(&cq->resize_lock);
	spin_lock_irq(&cq->lock);
	writel(cq->ci, vrnic_cq_db(dev, cq, VRNIC_DB_CQ_CI));
	cq->resizing = true;
	spin_unlock_irq(&cq->lock);

	err = vrnic_cmd_exec(dev, VRNIC_CMD_RESIZE_CQ, &req, sizeof(req),
			     NULL, 0);

	spin_lock_irq(&cq->lock);
	cq->resizing = false;
	if (!err) {
		old = cq->ring;
		cq->ring = ring;
		cq->log_depth = log_depth;
		ibcq->cqe = 1 << log_depth;
	} else {
		old = ring;
	}
	spin_unlock_irq(&cq->lock);
	mutex_unlock(&cq->resize_lock);
	vrnic_dma_free(dev, &old);
	return err;
}

static struct vrnic_cqe *vrnic_cq_head(struct vrnic_cq *cq)
{
	struct vrnic_cqe *cqe;
	u8 owner;

	vrnic_assert_spin_held(&cq->lock);
	cqe = vrnic_ring_entry(cq->ring.va, cq->ci, cq->log_depth,
			       sizeof(*cqe));
	owner = READ_ONCE(cqe->owner);
	if (!vrnic_ring_owned(owner, cq->ci, cq->log_depth))
		return NULL;
	dma_rmb();	/* the entry after its owner byte */
	return cqe;
}

int vrnic_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct vrnic_dev *dev = to_vdev(ibcq->device);
	struct vrnic_cq *cq = to_vcq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	/* A user CQ's arm word is in its process's page: the provider's. */
	if (cq->user)
		return -EOPNOTSUPP;
	spin_lock_irqsave(&cq->lock, irqflags);
	if ((flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED)
		cq->arm_sol++;
	else
		cq->arm_next++;
	WRITE_ONCE(cq->armed, true);
	writel(VRNIC_CQ_ARM_WORD(cq->arm_next, cq->arm_sol),
	       vrnic_cq_db(dev, cq, VRNIC_DB_CQ_ARM));
	mb();	/* arm store before re-reading the CQ (section 12.3) */
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && !cq->resizing &&
	    vrnic_cq_head(cq))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

static_assert((int)RDMA_NETWORK_IPV4 == (int)VRNIC_NET_IPV4);
static_assert((int)RDMA_NETWORK_IPV6 == (int)VRNIC_NET_IPV6);

/*
 * The device's CQE opcodes are the IB_WC values of 6.1; later kernels put
 * IB_WC_FLUSH and IB_WC_ATOMIC_WRITE before IB_WC_REG_MR, so each is
 * translated. False for an opcode the device must not write.
 */
static bool vrnic_wc_opcode(u8 op, enum ib_wc_opcode *opcode)
{
	switch (op) {
	case VRNIC_CQE_OP_SEND:
		*opcode = IB_WC_SEND;
		break;
	case VRNIC_CQE_OP_RDMA_WRITE:
		*opcode = IB_WC_RDMA_WRITE;
		break;
	case VRNIC_CQE_OP_RDMA_READ:
		*opcode = IB_WC_RDMA_READ;
		break;
	case VRNIC_CQE_OP_COMP_SWAP:
		*opcode = IB_WC_COMP_SWAP;
		break;
	case VRNIC_CQE_OP_FETCH_ADD:
		*opcode = IB_WC_FETCH_ADD;
		break;
	case VRNIC_CQE_OP_BIND_MW:
		*opcode = IB_WC_BIND_MW;
		break;
	case VRNIC_CQE_OP_LOCAL_INV:
		*opcode = IB_WC_LOCAL_INV;
		break;
	case VRNIC_CQE_OP_REG_MR:
		*opcode = IB_WC_REG_MR;
		break;
	case VRNIC_CQE_OP_RECV:
		*opcode = IB_WC_RECV;
		break;
	case VRNIC_CQE_OP_RECV_RDMA_WITH_IMM:
		*opcode = IB_WC_RECV_RDMA_WITH_IMM;
		break;
	default:
		return false;
	}
	return true;
}

/*
 * The receive fields only a UD QP's CQEs carry: a successful UD receive
 * has its GRH area filled (F_GRH, the IP version, the sender's MAC), no
 * other CQE claims one, and src_qp is a QPN.
 */
static bool vrnic_cqe_addr_ok(const struct vrnic_qp *qp,
			      const struct vrnic_cqe *cqe, bool send)
{
	bool ud_recv = !send && vrnic_qpt_is_datagram(qp->ibqp.qp_type);

	if (le32_to_cpu(cqe->src_qp) & ~VRNIC_QPN_MASK)
		return false;
	if (!(cqe->flags & VRNIC_CQE_F_GRH))
		return !ud_recv || cqe->status != VRNIC_WC_SUCCESS;
	if (!ud_recv || le32_to_cpu(cqe->byte_len) < VRNIC_GRH_SIZE)
		return false;
	return cqe->network_hdr_type == VRNIC_NET_IPV4 ||
	       cqe->network_hdr_type == VRNIC_NET_IPV6;
}

/*
 * The wr_id of the WQE a CQE completes, from the table of the queue it was
 * posted on: a QP's own queues retire in order, an SRQ slot by slot. A
 * receive's byte_len must fit the SGEs it was posted with (a write with
 * immediate reports the write's length, which the receive does not hold).
 */
static bool vrnic_cqe_wr_id(struct vrnic_qp *qp, const struct vrnic_cqe *cqe,
			    bool send, u64 *wr_id)
{
	u32 wqe_idx = le32_to_cpu(cqe->wqe_idx);
	struct vrnic_wr_slot wr;
	bool ok;

	if (send || !qp->srq)
		ok = vrnic_qp_retire(qp, send, wqe_idx, &wr);
	else
		ok = vrnic_srq_retire(qp->srq, wqe_idx, &wr);
	if (!ok)
		return false;
	if (cqe->opcode == VRNIC_CQE_OP_RECV &&
	    le32_to_cpu(cqe->byte_len) > wr.len)
		return false;
	*wr_id = wr.wr_id;
	return true;
}

static bool vrnic_poll_one(struct vrnic_dev *dev, struct vrnic_cq *cq,
			   const struct vrnic_cqe *cqe, struct ib_wc *wc)
{
	u32 wqe_idx = le32_to_cpu(cqe->wqe_idx);
	bool send = cqe->opcode < VRNIC_CQE_OP_RECV;
	u32 qpn = le32_to_cpu(cqe->qpn);
	enum ib_wc_opcode opcode;
	struct vrnic_qp *qp;
	u64 wr_id;

	vrnic_assert_spin_held(&cq->lock);
	if (!vrnic_wc_opcode(cqe->opcode, &opcode))
		goto bad;
	/* Only a receive reports an invalidation, never with an immediate. */
	if ((cqe->flags & VRNIC_CQE_F_WITH_INV) &&
	    (send || cqe->flags & VRNIC_CQE_F_WITH_IMM))
		goto bad;

	/* Destroyed QPs leave qp_xa before they take cq->lock: safe. */
	qp = xa_load(&dev->qp_xa, qpn);
	if (!qp || qp->user ||
	    (send ? qp->ibqp.send_cq : qp->ibqp.recv_cq) != &cq->ibcq)
		goto bad;
	if (!vrnic_cqe_addr_ok(qp, cqe, send) ||
	    !vrnic_cqe_wr_id(qp, cqe, send, &wr_id))
		goto bad;

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = wr_id;
	wc->status = cqe->status <= VRNIC_WC_GENERAL_ERR ?
		     cqe->status : IB_WC_GENERAL_ERR;
	wc->opcode = opcode;
	wc->vendor_err = le32_to_cpu(cqe->vendor_err);
	wc->byte_len = le32_to_cpu(cqe->byte_len);
	wc->qp = &qp->ibqp;
	if (cqe->flags & VRNIC_CQE_F_WITH_IMM) {
		wc->ex.imm_data = cqe->imm_data;
		wc->wc_flags |= IB_WC_WITH_IMM;
	} else if (cqe->flags & VRNIC_CQE_F_WITH_INV) {
		wc->ex.invalidate_rkey = le32_to_cpu(cqe->invalidated_rkey);
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
	}
	/* Checked to be a QPN above. */
	wc->src_qp = le32_to_cpu(cqe->src_qp);
	wc->pkey_index = 0;
	wc->sl = cqe->sl & 0xf;
	wc->port_num = 1;
	if (cqe->flags & VRNIC_CQE_F_GRH) {
		wc->wc_flags |= IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE |
				IB_WC_WITH_SMAC;
		wc->network_hdr_type = cqe->network_hdr_type;
		ether_addr_copy(wc->smac, cqe->smac);
	}
	return true;

bad:
	vrnic_count(dev, VRNIC_CNT_BAD_CQES, 1);
	dev_dbg_ratelimited(&dev->pdev->dev,
			    "CQ %u: skipping CQE qpn %u opcode %u wqe_idx %u\n",
			    cq->cqn, qpn, cqe->opcode, wqe_idx);
	return false;
}

int vrnic_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct vrnic_dev *dev = to_vdev(ibcq->device);
	struct vrnic_cq *cq = to_vcq(ibcq);
	struct vrnic_cqe copy, *cqe;
	unsigned long flags;
	u32 consumed = 0;
	int n = 0;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->resizing || !cq->ring.va)
		goto out;
	while (n < num_entries) {
		cqe = vrnic_cq_head(cq);
		if (!cqe)
			break;
		memcpy(&copy, cqe, sizeof(copy));
		cq->ci++;
		consumed++;
		if (vrnic_poll_one(dev, cq, &copy, &wc[n]))
			n++;
		/* Never spin forever on a device that floods the ring. */
		if (consumed >= (1U << cq->log_depth))
			break;
	}
	if (consumed)
		writel(cq->ci, vrnic_cq_db(dev, cq, VRNIC_DB_CQ_CI));
out:
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}
