// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic_ktest: a kernel verbs consumer that tests vrnic's kernel data path
 * the way a ULP uses it: a PD (with the DMA MR as local_dma_lkey), a
 * softirq-polled CQ, two RC QPs connected to each other over the port's own
 * RoCE v2 GID, SEND/RECV with and without immediate data and inline,
 * unsignaled sends, CQ resize, and ib_drain_qp (flush to the error state).
 *
 * Loading it runs the test on every vrnic device; insmod fails with the
 * error of the first failing step (details in the kernel log). It is a test
 * tool only: tests/kselftest/suite_kverbs.c loads and unloads it.
 */
#include <linux/completion.h>
#include <linux/module.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

MODULE_AUTHOR("vrnic authors");
MODULE_DESCRIPTION("vrnic kernel verbs self-test");
MODULE_LICENSE("Dual BSD/GPL");

#define KT_BUF		4096
#define KT_DEPTH	16
#define KT_TIMEOUT	(5 * HZ)

struct kt_wr {
	struct ib_cqe cqe;
	struct completion done;
	struct ib_wc wc;
};

struct kt_ctx {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp[2];
	void *buf[2];
	u64 dma[2];
	int result;
	int devices;
};

static struct kt_ctx kt;

static void kt_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kt_wr *w = container_of(wc->wr_cqe, struct kt_wr, cqe);

	w->wc = *wc;
	complete(&w->done);
}

static void kt_wr_init(struct kt_wr *w)
{
	w->cqe.done = kt_done;
	init_completion(&w->done);
	memset(&w->wc, 0, sizeof(w->wc));
}

static int kt_wait(struct kt_wr *w, const char *what, enum ib_wc_opcode op,
		   enum ib_wc_status status)
{
	if (!wait_for_completion_timeout(&w->done, KT_TIMEOUT)) {
		pr_err("vrnic_ktest: %s: no completion\n", what);
		return -ETIMEDOUT;
	}
	if (w->wc.status != status ||
	    (status == IB_WC_SUCCESS && w->wc.opcode != op)) {
		pr_err("vrnic_ktest: %s: status %d opcode %d, expected %d %d\n",
		       what, w->wc.status, w->wc.opcode, status, op);
		return -EIO;
	}
	return 0;
}

static int kt_post_recv(struct kt_ctx *c, int qp, struct kt_wr *w, u32 off,
			u32 len)
{
	struct ib_sge sge = {
		.addr = c->dma[qp] + off,
		.length = len,
		.lkey = c->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &w->cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};

	kt_wr_init(w);
	return ib_post_recv(c->qp[qp], &wr, NULL);
}

static int kt_post_send(struct kt_ctx *c, int qp, struct kt_wr *w, u32 off,
			u32 len, enum ib_wr_opcode op, int flags, __be32 imm)
{
	struct ib_sge sge = {
		.addr = c->dma[qp] + off,
		.length = len,
		.lkey = c->pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_cqe = &w->cqe,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = flags,
		.ex.imm_data = imm,
	};

	/* Inline data is taken from kernel virtual addresses. */
	if (flags & IB_SEND_INLINE)
		sge.addr = (uintptr_t)c->buf[qp] + off;
	kt_wr_init(w);
	return ib_post_send(c->qp[qp], &wr, NULL);
}

static int kt_check(bool ok, const char *what)
{
	if (ok)
		return 0;
	pr_err("vrnic_ktest: check failed: %s\n", what);
	return -EIO;
}

static int kt_connect(struct kt_ctx *c, int me, int peer,
		      const struct ib_gid_attr *gid)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr = {};
	union ib_gid dgid = gid->gid;
	u8 mac[ETH_ALEN];
	int err;

	err = rdma_read_gid_l2_fields(gid, NULL, mac);
	if (err)
		return err;

	attr.qp_state = IB_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = 1;
	attr.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ;
	err = ib_modify_qp(c->qp[me], &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = IB_MTU_1024;
	attr.dest_qp_num = c->qp[peer]->qp_num;
	attr.rq_psn = 100 + peer;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 12;
	attr.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&attr.ah_attr, 1);
	/* Wider than the wire's: the device sees their low bits. */
	rdma_ah_set_grh(&attr.ah_attr, &dgid, 0x1fffff, gid->index, 64, 0);
	rdma_ah_set_sl(&attr.ah_attr, 0x1f);
	memcpy(attr.ah_attr.roce.dmac, mac, ETH_ALEN);
	err = ib_modify_qp(c->qp[me], &attr, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	err = ib_query_qp(c->qp[me], &attr, IB_QP_AV, &init);
	if (err)
		return err;
	err = kt_check(rdma_ah_read_grh(&attr.ah_attr)->flow_label == 0xfffff &&
		       rdma_ah_get_sl(&attr.ah_attr) == 0xf,
		       "path flow label and SL as the device keeps them");
	if (err)
		return err;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.sq_psn = 100 + me;
	attr.max_rd_atomic = 1;
	return ib_modify_qp(c->qp[me], &attr, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

/* Any RoCE v2 GID of port 1: the QPs talk to their own device. */
static const struct ib_gid_attr *kt_gid(struct ib_device *ibdev)
{
	const struct ib_gid_attr *attr;
	int i;

	for (i = 0; i < ibdev->port_data[1].immutable.gid_tbl_len; i++) {
		attr = rdma_get_gid_attr(ibdev, 1, i);
		if (IS_ERR(attr))
			continue;
		if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP)
			return attr;
		rdma_put_gid_attr(attr);
	}
	return ERR_PTR(-ENOENT);
}

static int kt_traffic(struct kt_ctx *c)
{
	struct kt_wr s[4], r[7], bad;
	struct ib_qp_attr qattr;
	struct ib_qp_init_attr qinit;
	u8 *a = c->buf[0], *b = c->buf[1];
	int i, err;

	for (i = 0; i < 7; i++) {
		err = kt_post_recv(c, 1, &r[i], 512 * i, 512);
		if (err)
			return err;
	}

	/* SEND, 300 bytes */
	for (i = 0; i < 300; i++)
		a[i] = i * 7 + 1;
	err = kt_post_send(c, 0, &s[0], 0, 300, IB_WR_SEND, IB_SEND_SIGNALED,
			   0);
	if (!err)
		err = kt_wait(&s[0], "send", IB_WC_SEND, IB_WC_SUCCESS);
	if (!err)
		err = kt_wait(&r[0], "recv", IB_WC_RECV, IB_WC_SUCCESS);
	if (!err)
		err = kt_check(r[0].wc.byte_len == 300 &&
			       !memcmp(a, b, 300) &&
			       r[0].wc.qp == c->qp[1] &&
			       r[0].wc.src_qp == c->qp[0]->qp_num,
			       "send data, length, qp");
	if (err)
		return err;

	/* SEND_WITH_IMM, inline, 40 bytes */
	memset(a + 1024, 0x3c, 40);
	err = kt_post_send(c, 0, &s[1], 1024, 40, IB_WR_SEND_WITH_IMM,
			   IB_SEND_SIGNALED | IB_SEND_INLINE,
			   cpu_to_be32(0x12345678));
	if (!err)
		err = kt_wait(&s[1], "send imm", IB_WC_SEND, IB_WC_SUCCESS);
	if (!err)
		err = kt_wait(&r[1], "recv imm", IB_WC_RECV, IB_WC_SUCCESS);
	if (!err)
		err = kt_check(r[1].wc.byte_len == 40 &&
			       (r[1].wc.wc_flags & IB_WC_WITH_IMM) &&
			       r[1].wc.ex.imm_data == cpu_to_be32(0x12345678) &&
			       !memcmp(a + 1024, b + 512, 40),
			       "inline send with immediate");
	if (err)
		return err;

	/* Two unsignaled sends, then a signaled one: one send completion */
	for (i = 2; i < 4; i++) {
		err = kt_post_send(c, 0, &s[i], 0, 8, IB_WR_SEND, 0, 0);
		if (err)
			return err;
	}
	err = kt_post_send(c, 0, &s[0], 0, 8, IB_WR_SEND, IB_SEND_SIGNALED, 0);
	for (i = 2; i < 5 && !err; i++)
		err = kt_wait(&r[i], "recv of unsignaled", IB_WC_RECV,
			      IB_WC_SUCCESS);
	if (!err)
		err = kt_wait(&s[0], "signaled after unsignaled", IB_WC_SEND,
			      IB_WC_SUCCESS);
	if (!err)
		err = kt_check(!completion_done(&s[2].done) &&
			       !completion_done(&s[3].done),
			       "unsignaled sends complete silently");
	if (err)
		return err;

	err = ib_query_qp(c->qp[0], &qattr, IB_QP_STATE, &qinit);
	if (!err)
		err = kt_check(qattr.qp_state == IB_QPS_RTS &&
			       qattr.dest_qp_num == c->qp[1]->qp_num,
			       "query_qp state and dest_qpn");
	if (err)
		return err;

	/* A resized CQ keeps working (the device copies pending CQEs). */
	err = ib_resize_cq(c->cq, 8 * KT_DEPTH);
	if (!err)
		err = kt_check(c->cq->cqe >= 8 * KT_DEPTH, "resized depth");
	if (!err)
		err = kt_post_send(c, 0, &s[1], 0, 16, IB_WR_SEND,
				   IB_SEND_SIGNALED, 0);
	if (!err)
		err = kt_wait(&s[1], "send after resize", IB_WC_SEND,
			      IB_WC_SUCCESS);
	if (!err)
		err = kt_wait(&r[5], "recv after resize", IB_WC_RECV,
			      IB_WC_SUCCESS);
	if (err)
		return err;

	/* Drain: to ERR, the posted receive r[6] is flushed. */
	ib_drain_qp(c->qp[1]);
	err = kt_wait(&r[6], "flushed recv", IB_WC_RECV, IB_WC_WR_FLUSH_ERR);
	if (err)
		return err;
	ib_drain_qp(c->qp[0]);

	/* A receive posted in ERR is flushed too. */
	err = kt_post_recv(c, 1, &bad, 0, 64);
	if (!err)
		err = kt_wait(&bad, "recv posted in ERR", IB_WC_RECV,
			      IB_WC_WR_FLUSH_ERR);
	return err;
}

/*
 * Kernel AHs on the device: one destroyed sleepable, one as from atomic
 * context (the destroy command then runs from the driver's workqueue, which
 * ib_dealloc_pd() flushes before the PD goes).
 */
static int kt_ah(struct kt_ctx *c, const struct ib_gid_attr *gid)
{
	struct rdma_ah_attr attr = {};
	union ib_gid dgid = gid->gid;
	struct ib_ah *ah[2];
	u8 mac[ETH_ALEN];
	int i, err;

	err = rdma_read_gid_l2_fields(gid, NULL, mac);
	if (err)
		return err;
	attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&attr, 1);
	rdma_ah_set_grh(&attr, &dgid, 0, gid->index, 64, 0);
	memcpy(attr.roce.dmac, mac, ETH_ALEN);
	for (i = 0; i < 2; i++) {
		ah[i] = rdma_create_ah(c->pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
		if (IS_ERR(ah[i])) {
			err = PTR_ERR(ah[i]);
			pr_err("vrnic_ktest: rdma_create_ah: %d\n", err);
			if (i)
				rdma_destroy_ah(ah[0], RDMA_DESTROY_AH_SLEEPABLE);
			return err;
		}
	}
	rdma_destroy_ah(ah[0], RDMA_DESTROY_AH_SLEEPABLE);
	rdma_destroy_ah(ah[1], 0);

	/*
	 * A flow label and SL wider than the wire's: modify-QP takes their
	 * low bits, and an AH must accept the same address vector.
	 */
	rdma_ah_set_grh(&attr, &dgid, 0x1fffff, gid->index, 64, 0);
	rdma_ah_set_sl(&attr, 0x1f);
	ah[0] = rdma_create_ah(c->pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	err = kt_check(!IS_ERR(ah[0]), "AH with a wide flow label and SL");
	if (!err)
		rdma_destroy_ah(ah[0], RDMA_DESTROY_AH_SLEEPABLE);
	return err;
}

static int kt_run(struct kt_ctx *c)
{
	struct ib_qp_init_attr init = {};
	struct ib_qp_attr qattr = {};
	const struct ib_gid_attr *gid;
	int i, err;

	gid = kt_gid(c->ibdev);
	if (IS_ERR(gid)) {
		pr_err("vrnic_ktest: %s has no RoCE v2 GID\n",
		       dev_name(&c->ibdev->dev));
		return PTR_ERR(gid);
	}

	c->pd = ib_alloc_pd(c->ibdev, 0);
	if (IS_ERR(c->pd)) {
		err = PTR_ERR(c->pd);
		c->pd = NULL;
		goto out;
	}
	c->cq = ib_alloc_cq(c->ibdev, NULL, 4 * KT_DEPTH, 0, IB_POLL_SOFTIRQ);
	if (IS_ERR(c->cq)) {
		err = PTR_ERR(c->cq);
		c->cq = NULL;
		goto out;
	}

	init.send_cq = c->cq;
	init.recv_cq = c->cq;
	init.qp_type = IB_QPT_RC;
	init.sq_sig_type = IB_SIGNAL_REQ_WR;
	init.cap.max_send_wr = KT_DEPTH;
	init.cap.max_recv_wr = KT_DEPTH;
	init.cap.max_send_sge = 2;
	init.cap.max_recv_sge = 2;
	init.cap.max_inline_data = 64;
	for (i = 0; i < 2; i++) {
		c->qp[i] = ib_create_qp(c->pd, &init);
		if (IS_ERR(c->qp[i])) {
			err = PTR_ERR(c->qp[i]);
			c->qp[i] = NULL;
			goto out;
		}
		c->buf[i] = kzalloc(KT_BUF, GFP_KERNEL);
		if (!c->buf[i]) {
			err = -ENOMEM;
			goto out;
		}
		c->dma[i] = ib_dma_map_single(c->ibdev, c->buf[i], KT_BUF,
					      DMA_BIDIRECTIONAL);
		if (ib_dma_mapping_error(c->ibdev, c->dma[i])) {
			kfree(c->buf[i]);
			c->buf[i] = NULL;
			err = -ENOMEM;
			goto out;
		}
	}
	err = kt_check(init.cap.max_inline_data >= 64 &&
		       init.cap.max_send_wr >= KT_DEPTH, "create_qp caps");
	/* RESET -> RTS is not a transition: rejected before the device. */
	qattr.qp_state = IB_QPS_RTS;
	if (!err)
		err = kt_check(ib_modify_qp(c->qp[0], &qattr, IB_QP_STATE) ==
			       -EINVAL, "RESET->RTS rejected");
	if (!err)
		err = kt_ah(c, gid);
	if (!err)
		err = kt_connect(c, 0, 1, gid);
	if (!err)
		err = kt_connect(c, 1, 0, gid);
	if (!err)
		err = kt_traffic(c);

out:
	for (i = 0; i < 2; i++) {
		if (c->qp[i])
			ib_destroy_qp(c->qp[i]);
		if (c->buf[i]) {
			ib_dma_unmap_single(c->ibdev, c->dma[i], KT_BUF,
					    DMA_BIDIRECTIONAL);
			kfree(c->buf[i]);
		}
		c->qp[i] = NULL;
		c->buf[i] = NULL;
	}
	if (c->cq)
		ib_free_cq(c->cq);
	if (c->pd)
		ib_dealloc_pd(c->pd);
	c->cq = NULL;
	c->pd = NULL;
	rdma_put_gid_attr(gid);
	return err;
}

static int kt_add(struct ib_device *ibdev)
{
	int err;

	if (strncmp(dev_name(&ibdev->dev), "vrnic", 5))
		return -EOPNOTSUPP;
	kt.ibdev = ibdev;
	kt.devices++;
	err = kt_run(&kt);
	if (err && !kt.result)
		kt.result = err;
	pr_info("vrnic_ktest: %s: %s (%d)\n", dev_name(&ibdev->dev),
		err ? "FAIL" : "PASS", err);
	/* Nothing to keep: tell the core not to call remove. */
	return -EOPNOTSUPP;
}

static void kt_remove(struct ib_device *ibdev, void *data)
{
}

static struct ib_client kt_client = {
	.name = "vrnic_ktest",
	.add = kt_add,
	.remove = kt_remove,
};

static int __init kt_init(void)
{
	int err;

	err = ib_register_client(&kt_client);
	if (err)
		return err;
	ib_unregister_client(&kt_client);
	if (!kt.devices)
		return -ENODEV;
	return kt.result;
}

static void __exit kt_exit(void)
{
}

module_init(kt_init);
module_exit(kt_exit);
