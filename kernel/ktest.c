// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic_ktest: a kernel verbs consumer that tests vrnic's kernel data path
 * the way a ULP uses it: a PD (with the DMA MR as local_dma_lkey), a
 * softirq-polled CQ, and one of these cases (module parameter "test"):
 *
 * rc (default): two RC QPs connected to each other over the port's own
 * RoCE v2 GID, SEND/RECV with and without immediate data and inline,
 * unsignaled sends, CQ resize, and ib_drain_qp (flush to the error state);
 * ud: two UD QPs and kernel AHs, over every RoCE v2 GID of the port (an
 * IPv4 one and an IPv6 one needed): the GRH area, src_qp, network header
 * type and source MAC of each receive, a qkey mismatch dropped, the QP's
 * own qkey, opcodes UD refuses;
 * mad: a kernel UD QP with the GSI qkey sends to QP1: a Get ib_mad answers,
 * malformed MADs and a wrong qkey it must drop unanswered, the Get again;
 * srq: two RC QPs sharing one kernel SRQ, the SRQ's free slots, post_recv
 * refused on its QPs, the last-WQE event when one of them fails;
 * srq_limit: the SRQ limit event, fired once and read back as 0;
 * srq_resize: an SRQ grown with receives posted and wrapped in its ring:
 * they complete in order after it, then receives beyond the old depth;
 * frwr: fast registration (ktest_frwr.c).
 *
 * Loading it runs the test on every vrnic device; insmod fails with the
 * error of the first failing step (details in the kernel log). It is a test
 * tool only: tests/kselftest/suite_kverbs.c loads and unloads it.
 */
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/module.h>
#include <net/checksum.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include "ktest.h"

MODULE_AUTHOR("vrnic authors");
MODULE_DESCRIPTION("vrnic kernel verbs self-test");
MODULE_LICENSE("Dual BSD/GPL");

static char *kt_test = "rc";
module_param_named(test, kt_test, charp, 0444);
MODULE_PARM_DESC(test,
		 "the case to run: rc, ud, mad, srq, srq_limit, srq_resize or frwr");

static struct kt_ctx kt;

static void kt_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kt_wr *w = container_of(wc->wr_cqe, struct kt_wr, cqe);

	w->wc = *wc;
	complete(&w->done);
}

void kt_wr_init(struct kt_wr *w)
{
	w->cqe.done = kt_done;
	init_completion(&w->done);
	memset(&w->wc, 0, sizeof(w->wc));
}

int kt_wait(struct kt_wr *w, const char *what, enum ib_wc_opcode op,
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

/* One SGE of c->buf[@buf] + @off, in the PD's local DMA lkey. */
struct ib_sge kt_sge(struct kt_ctx *c, int buf, u32 off, u32 len)
{
	return (struct ib_sge){
		.addr = c->dma[buf] + off,
		.length = len,
		.lkey = c->pd->local_dma_lkey,
	};
}

/* A receive WR of one SGE that completes on @w. */
static struct ib_recv_wr kt_recv_wr(struct kt_wr *w, struct ib_sge *sge)
{
	return (struct ib_recv_wr){
		.wr_cqe = &w->cqe,
		.sg_list = sge,
		.num_sge = 1,
	};
}

int kt_post_recv(struct kt_ctx *c, int qp, struct kt_wr *w, u32 off,
		 u32 len)
{
	struct ib_sge sge = kt_sge(c, qp, off, len);
	struct ib_recv_wr wr = kt_recv_wr(w, &sge);

	kt_wr_init(w);
	return ib_post_recv(c->qp[qp], &wr, NULL);
}

static int kt_post_send(struct kt_ctx *c, int qp, struct kt_wr *w, u32 off,
			u32 len, enum ib_wr_opcode op, int flags, __be32 imm)
{
	struct ib_sge sge = kt_sge(c, qp, off, len);
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

int kt_check(bool ok, const char *what)
{
	if (ok)
		return 0;
	pr_err("vrnic_ktest: check failed: %s\n", what);
	return -EIO;
}

int kt_connect(struct kt_ctx *c, int me, int peer,
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

/* A RoCE address vector on port 1 to @gid, one of this device's own. */
static int kt_roce_av(struct rdma_ah_attr *attr, const struct ib_gid_attr *gid,
		      u32 flow_label, u8 hop_limit, u8 tclass)
{
	union ib_gid dgid = gid->gid;

	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(attr, 1);
	rdma_ah_set_grh(attr, &dgid, flow_label, gid->index, hop_limit, tclass);
	return rdma_read_gid_l2_fields(gid, NULL, attr->roce.dmac);
}

/*
 * Kernel AHs on the device: one destroyed sleepable, one as from atomic
 * context (the destroy command then runs from the driver's workqueue, which
 * ib_dealloc_pd() flushes before the PD goes).
 */
static int kt_ah(struct kt_ctx *c, const struct ib_gid_attr *gid)
{
	union ib_gid dgid = gid->gid;
	struct rdma_ah_attr attr;
	struct ib_ah *ah[2];
	int i, err;

	err = kt_roce_av(&attr, gid, 0, 64, 0);
	if (err)
		return err;
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

static void kt_event(struct ib_event *ev, void *ctx)
{
	struct kt_ctx *c = ctx;

	if (ev->event == IB_EVENT_SRQ_LIMIT_REACHED)
		atomic_inc(&c->srq_limit_events);
	if (ev->event < BITS_PER_LONG)
		set_bit(ev->event, &c->events);
	wake_up(&c->event_wq);
}

static int kt_wait_event(struct kt_ctx *c, enum ib_event_type type,
			 const char *what)
{
	if (wait_event_timeout(c->event_wq, test_bit(type, &c->events),
			       KT_TIMEOUT))
		return 0;
	pr_err("vrnic_ktest: no %s event\n", what);
	return -ETIMEDOUT;
}

/* Two QPs of @type on the one CQ, receiving from @srq if not NULL. */
int kt_create_qps(struct kt_ctx *c, enum ib_qp_type type,
		  struct ib_srq *srq)
{
	struct ib_qp_init_attr init = {};
	int i, err;

	init.event_handler = kt_event;
	init.qp_context = c;
	init.send_cq = c->cq;
	init.recv_cq = c->cq;
	init.srq = srq;
	init.qp_type = type;
	init.sq_sig_type = IB_SIGNAL_REQ_WR;
	for (i = 0; i < 2; i++) {
		init.cap.max_send_wr = KT_DEPTH;
		init.cap.max_recv_wr = KT_DEPTH;
		init.cap.max_send_sge = 2;
		init.cap.max_recv_sge = 2;
		init.cap.max_inline_data = 64;
		c->qp[i] = ib_create_qp(c->pd, &init);
		if (IS_ERR(c->qp[i])) {
			err = PTR_ERR(c->qp[i]);
			c->qp[i] = NULL;
			pr_err("vrnic_ktest: create_qp type %d: %d\n", type, err);
			return err;
		}
		err = kt_check(init.cap.max_inline_data >= 64 &&
			       init.cap.max_send_wr >= KT_DEPTH &&
			       (srq ? !init.cap.max_recv_wr :
				init.cap.max_recv_wr >= KT_DEPTH),
			       "create_qp caps");
		if (err)
			return err;
	}
	return 0;
}

static int kt_rc(struct kt_ctx *c, const struct ib_gid_attr *gid)
{
	struct ib_qp_attr qattr = {};
	int err;

	err = kt_create_qps(c, IB_QPT_RC, NULL);
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
	return err;
}

/* ------------------------------------------------------------------ */
/* UD                                                                  */
/* ------------------------------------------------------------------ */

#define KT_QKEY		0x1d1d0001
#define KT_USE_QP_QKEY	0x80000000	/* IB: the sending QP's own qkey */
#define KT_TCLASS	0x28
#define KT_HOP_LIMIT	33
#define KT_FLOW_LABEL	0x12345
#define KT_GRH		40
/* RoCE v2 around a payload: UDP, BTH, DETH, ICRC */
#define KT_ROCE_OVERHEAD	(8 + 12 + 8 + 4)

static int kt_ud_ready(struct ib_qp *qp, u32 qkey)
{
	struct ib_qp_attr attr = {};
	struct ib_qp_init_attr init;
	int err;

	attr.qp_state = IB_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = 1;
	attr.qkey = qkey;
	err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_QKEY);
	if (err)
		return err;
	attr.qp_state = IB_QPS_RTR;
	err = ib_modify_qp(qp, &attr, IB_QP_STATE);
	if (err)
		return err;
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = 7;
	err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN);
	if (err)
		return err;
	memset(&attr, 0, sizeof(attr));
	err = ib_query_qp(qp, &attr, IB_QP_STATE | IB_QP_QKEY, &init);
	if (err)
		return err;
	return kt_check(attr.qp_state == IB_QPS_RTS && attr.qkey == qkey &&
			init.qp_type == IB_QPT_UD, "UD QP state and qkey");
}

static int kt_ud_send(struct kt_ctx *c, struct kt_wr *w, struct ib_ah *ah,
		      u32 off, u32 len, u32 qkey, enum ib_wr_opcode op,
		      const struct ib_send_wr **bad)
{
	struct ib_sge sge = kt_sge(c, 0, off, len);
	struct ib_ud_wr wr = {
		.wr = {
			.wr_cqe = &w->cqe,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = op,
			.send_flags = IB_SEND_SIGNALED,
			.ex.imm_data = cpu_to_be32(0xabcd0000 | len),
		},
		.ah = ah,
		.remote_qpn = c->qp[1]->qp_num,
		.remote_qkey = qkey,
	};
	const struct ib_send_wr *dummy;
	int err;

	kt_wr_init(w);
	err = ib_post_send(c->qp[0], &wr.wr, bad ?: &dummy);
	/* Where the WR was refused, as ib_post_send() reports it. */
	if (err && bad)
		*bad = *bad == &wr.wr ? (void *)w : NULL;
	return err;
}

/* The GRH area of a UD receive: the IP header RoCE v2 carries. */
static int kt_check_grh(const u8 *grh, const struct ib_gid_attr *gid, u32 len)
{
	const u8 *g = gid->gid.raw;
	const struct ipv6hdr *ip6 = (const void *)grh;
	const struct iphdr *ip = (const void *)(grh + 20);
	u32 w0;

	if (rdma_gid_attr_network_type(gid) == RDMA_NETWORK_IPV4)
		return kt_check(!memchr_inv(grh, 0, 20) && ip->version == 4 &&
				ip->ihl == 5 && ip->tos == KT_TCLASS &&
				be16_to_cpu(ip->tot_len) ==
				20 + KT_ROCE_OVERHEAD + len &&
				(be16_to_cpu(ip->frag_off) & IP_DF) &&
				ip->ttl == KT_HOP_LIMIT &&
				ip->protocol == IPPROTO_UDP &&
				!ip_fast_csum(ip, 5) &&
				!memcmp(&ip->saddr, g + 12, 4) &&
				!memcmp(&ip->daddr, g + 12, 4),
				"IPv4 header in the GRH area");
	w0 = be32_to_cpu(*(const __be32 *)grh);
	return kt_check(w0 >> 28 == 6 && ((w0 >> 20) & 0xff) == KT_TCLASS &&
			(w0 & 0xfffff) == KT_FLOW_LABEL &&
			be16_to_cpu(ip6->payload_len) ==
			KT_ROCE_OVERHEAD + len &&
			ip6->nexthdr == IPPROTO_UDP &&
			ip6->hop_limit == KT_HOP_LIMIT &&
			!memcmp(&ip6->saddr, g, 16) && !memcmp(&ip6->daddr, g, 16),
			"IPv6 header in the GRH area");
}

/* The receive of a datagram of @len bytes from c->qp[0], at @b. */
static int kt_check_ud_recv(struct kt_ctx *c, const struct ib_wc *wc,
			    const struct ib_gid_attr *gid, const u8 *mac,
			    const u8 *b, const u8 *sent, u32 len)
{
	int err;

	err = kt_check(wc->byte_len == KT_GRH + len && wc->qp == c->qp[1] &&
		       wc->src_qp == c->qp[0]->qp_num &&
		       (wc->wc_flags & IB_WC_GRH) &&
		       (wc->wc_flags & IB_WC_WITH_IMM) &&
		       wc->ex.imm_data == cpu_to_be32(0xabcd0000 | len),
		       "UD receive: length, QPs, GRH flag, immediate");
	if (!err)
		err = kt_check((wc->wc_flags & IB_WC_WITH_NETWORK_HDR_TYPE) &&
			       wc->network_hdr_type ==
			       rdma_gid_attr_network_type(gid) &&
			       (wc->wc_flags & IB_WC_WITH_SMAC) &&
			       ether_addr_equal(wc->smac, mac),
			       "UD receive: network header type and source MAC");
	if (!err)
		err = kt_check(!memcmp(b + KT_GRH, sent, len),
			       "UD payload after the GRH area");
	if (!err)	/* each is a SEND_WITH_IMM: ImmDt follows DETH */
		err = kt_check_grh(b, gid, 4 + len);
	return err;
}

/* One UD exchange from c->qp[0] to c->qp[1] over @gid. */
static int kt_ud_gid(struct kt_ctx *c, const struct ib_gid_attr *gid)
{
	struct kt_wr *s = &c->wr[0], *r = &c->wr[1];
	u8 *a = c->buf[0], *b = c->buf[1];
	const struct ib_send_wr *bad;
	struct rdma_ah_attr attr;
	const u8 *mac = attr.roce.dmac;
	struct ib_ah *ah;
	int i, err;

	err = kt_roce_av(&attr, gid, KT_FLOW_LABEL, KT_HOP_LIMIT, KT_TCLASS);
	if (err)
		return err;
	ah = rdma_create_ah(c->pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(ah)) {
		pr_err("vrnic_ktest: UD AH: %ld\n", PTR_ERR(ah));
		return PTR_ERR(ah);
	}

	memset(b, 0xee, 1024);
	for (i = 0; i < 1024; i++)
		a[i] = i * 3 + gid->index;
	for (i = 0; i < 2 && !err; i++)
		err = kt_post_recv(c, 1, &r[i], 512 * i, 512);

	/* A datagram: GRH area, then the payload */
	if (!err)
		err = kt_ud_send(c, s, ah, 0, 200, KT_QKEY,
				 IB_WR_SEND_WITH_IMM, NULL);
	if (!err)
		err = kt_wait(s, "UD send", IB_WC_SEND, IB_WC_SUCCESS);
	if (!err)
		err = kt_wait(&r[0], "UD recv", IB_WC_RECV, IB_WC_SUCCESS);
	if (!err)
		err = kt_check_ud_recv(c, &r[0].wc, gid, mac, b, a, 200);

	/* A wrong qkey: the sender completes, the receiver gets nothing. */
	if (!err)
		err = kt_ud_send(c, s, ah, 256, 64, KT_QKEY + 1,
				 IB_WR_SEND_WITH_IMM, NULL);
	if (!err)
		err = kt_wait(s, "UD send, wrong qkey", IB_WC_SEND,
			      IB_WC_SUCCESS);
	if (!err) {
		msleep(100);
		err = kt_check(!completion_done(&r[1].done),
			       "datagram with a wrong qkey dropped");
	}
	/* The high qkey bit: the sending QP's own qkey, which matches. */
	if (!err)
		err = kt_ud_send(c, s, ah, 512, 100, KT_USE_QP_QKEY,
				 IB_WR_SEND_WITH_IMM, NULL);
	if (!err)
		err = kt_wait(s, "UD send, QP's qkey", IB_WC_SEND,
			      IB_WC_SUCCESS);
	if (!err)
		err = kt_wait(&r[1], "UD recv, QP's qkey", IB_WC_RECV,
			      IB_WC_SUCCESS);
	if (!err)
		err = kt_check_ud_recv(c, &r[1].wc, gid, mac, b + 512, a + 512,
				       100);

	/* UD sends nothing but SEND: refused at post, the WR named. */
	if (!err)
		err = kt_check(kt_ud_send(c, s, ah, 0, 8, KT_QKEY,
					  IB_WR_RDMA_WRITE, &bad) == -EINVAL &&
			       bad == (void *)s, "RDMA WRITE on UD refused");
	rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
	return err;
}

/* Over every RoCE v2 GID of the port, an IPv4 and an IPv6 one at least. */
static int kt_ud(struct kt_ctx *c, const struct ib_gid_attr *unused)
{
	const struct ib_gid_attr *gid;
	bool seen[RDMA_NETWORK_IPV6 + 1] = {};
	int i, err;

	err = kt_create_qps(c, IB_QPT_UD, NULL);
	for (i = 0; i < 2 && !err; i++)
		err = kt_ud_ready(c->qp[i], KT_QKEY);
	for (i = 0; !err && i < c->ibdev->port_data[1].immutable.gid_tbl_len;
	     i++) {
		gid = rdma_get_gid_attr(c->ibdev, 1, i);
		if (IS_ERR(gid))
			continue;
		if (gid->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP) {
			err = kt_ud_gid(c, gid);
			if (err)
				pr_err("vrnic_ktest: UD over GID %d %pI6\n", i,
				       gid->gid.raw);
			seen[rdma_gid_attr_network_type(gid)] = true;
		}
		rdma_put_gid_attr(gid);
	}
	if (!err)
		err = kt_check(seen[RDMA_NETWORK_IPV4] &&
			       seen[RDMA_NETWORK_IPV6],
			       "UD over an IPv4 and an IPv6 GID");
	return err;
}

/* ------------------------------------------------------------------ */
/* MADs into QP1                                                       */
/* ------------------------------------------------------------------ */

/* A class no agent registers: ib_mad answers a Get with "unsupported". */
#define KT_MAD_CLASS	IB_MGMT_CLASS_DEVICE_MGMT
#define KT_MAD_LEN	sizeof(struct ib_mad)
#define KT_MAD_RX	1024	/* receive area in buf[0] */
#define KT_QP1		1	/* IB_QP1 is big-endian, for MAD headers */

/* A MAD header at c->buf[0]: the rest of the 256 bytes zeroed. */
static void kt_mad_hdr(struct kt_ctx *c, u8 base, u8 class, u8 method,
		       u16 attr, u64 tid)
{
	struct ib_mad_hdr *h = c->buf[0];

	memset(h, 0, KT_MAD_LEN);
	h->base_version = base;
	h->mgmt_class = class;
	h->class_version = 1;
	h->method = method;
	h->attr_id = cpu_to_be16(attr);
	h->tid = cpu_to_be64(tid);
}

/* Send @len bytes of c->buf[0] from qp[0] to QP1 of the port, @qkey. */
static int kt_mad_send(struct kt_ctx *c, struct ib_ah *ah, u32 len, u32 qkey)
{
	struct kt_wr *s = &c->wr[0];
	struct ib_sge sge = kt_sge(c, 0, 0, len);
	struct ib_ud_wr wr = {
		.wr = {
			.wr_cqe = &s->cqe,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = IB_WR_SEND,
			.send_flags = IB_SEND_SIGNALED,
		},
		.ah = ah,
		.remote_qpn = KT_QP1,
		.remote_qkey = qkey,
	};
	int err;

	kt_wr_init(s);
	err = ib_post_send(c->qp[0], &wr.wr, NULL);
	return err ?: kt_wait(s, "send to QP1", IB_WC_SEND, IB_WC_SUCCESS);
}

/* The answer to the Get of @tid: from QP1, "unsupported method/attribute". */
static int kt_mad_answer(struct kt_ctx *c, u64 tid)
{
	__be16 unsupported = cpu_to_be16(IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB);
	struct kt_wr *r = &c->wr[1];
	const struct ib_mad_hdr *h = c->buf[0] + KT_MAD_RX + KT_GRH;
	int err;

	err = kt_wait(r, "ib_mad's answer", IB_WC_RECV, IB_WC_SUCCESS);
	if (!err)
		err = kt_check(r->wc.src_qp == KT_QP1 &&
			       r->wc.byte_len == KT_GRH + KT_MAD_LEN &&
			       h->mgmt_class == KT_MAD_CLASS &&
			       h->method == IB_MGMT_METHOD_GET_RESP &&
			       h->status == unsupported &&
			       h->tid == cpu_to_be64(tid),
			       "QP1's answer: source, length, method, status, TID");
	if (!err)
		err = kt_post_recv(c, 0, r, KT_MAD_RX, KT_GRH + KT_MAD_LEN);
	return err;
}

/*
 * A kernel UD QP holding the GSI qkey sends to QP1 of the port: a Get that
 * ib_mad answers (so QP1 receives), then malformed MADs and one datagram
 * with a wrong qkey, none of which is answered, then the Get again. The
 * device counts the wrong qkey; the suite checks the counter.
 */
static int kt_mad(struct kt_ctx *c, const struct ib_gid_attr *gid)
{
	static const struct {
		const char *what;
		u8 base, class, method;
		u16 attr;
		u32 len;
	} bad[] = {
		{ "unknown base version", 0x77, KT_MAD_CLASS,
		  IB_MGMT_METHOD_GET, 0x10, KT_MAD_LEN },
		{ "CM attribute not by Send", 1, IB_MGMT_CLASS_CM,
		  IB_MGMT_METHOD_GET, 0x10, KT_MAD_LEN },
		{ "unknown CM attribute", 1, IB_MGMT_CLASS_CM,
		  IB_MGMT_METHOD_SEND, 0xfff0, KT_MAD_LEN },
		{ "response nobody asked for", 1, KT_MAD_CLASS,
		  IB_MGMT_METHOD_GET_RESP, 0x10, KT_MAD_LEN },
		{ "truncated, zeroed", 0, 0, 0, 0, 16 },
	};
	struct rdma_ah_attr attr;
	struct ib_ah *ah;
	u64 tid = 0x6b74657374000000ULL;
	int i, err;

	err = kt_create_qps(c, IB_QPT_UD, NULL);
	if (!err)
		err = kt_ud_ready(c->qp[0], IB_QP1_QKEY);
	if (!err)
		err = kt_roce_av(&attr, gid, 0, 64, 0);
	if (err)
		return err;
	ah = rdma_create_ah(c->pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(ah))
		return PTR_ERR(ah);

	err = kt_post_recv(c, 0, &c->wr[1], KT_MAD_RX, KT_GRH + KT_MAD_LEN);
	kt_mad_hdr(c, 1, KT_MAD_CLASS, IB_MGMT_METHOD_GET, 0x10, ++tid);
	if (!err)
		err = kt_mad_send(c, ah, KT_MAD_LEN, IB_QP1_QKEY);
	if (!err)
		err = kt_mad_answer(c, tid);

	for (i = 0; i < ARRAY_SIZE(bad) && !err; i++) {
		kt_mad_hdr(c, bad[i].base, bad[i].class, bad[i].method,
			   bad[i].attr, ++tid);
		err = kt_mad_send(c, ah, bad[i].len, IB_QP1_QKEY);
		if (!err) {
			msleep(200);
			err = kt_check(!completion_done(&c->wr[1].done),
				       bad[i].what);
		}
	}
	/* A good Get, but the qkey is not QP1's: the device drops it. */
	kt_mad_hdr(c, 1, KT_MAD_CLASS, IB_MGMT_METHOD_GET, 0x10, ++tid);
	if (!err)
		err = kt_mad_send(c, ah, KT_MAD_LEN, IB_QP1_QKEY & ~KT_USE_QP_QKEY);
	if (!err) {
		msleep(200);
		err = kt_check(!completion_done(&c->wr[1].done),
			       "a Get with a wrong qkey dropped");
	}

	/* QP1 and ib_mad still answer. */
	kt_mad_hdr(c, 1, KT_MAD_CLASS, IB_MGMT_METHOD_GET, 0x10, ++tid);
	if (!err)
		err = kt_mad_send(c, ah, KT_MAD_LEN, IB_QP1_QKEY);
	if (!err)
		err = kt_mad_answer(c, tid);
	rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
	return err;
}

/* ------------------------------------------------------------------ */
/* SRQ                                                                 */
/* ------------------------------------------------------------------ */

static int kt_srq_create(struct kt_ctx *c)
{
	struct ib_srq_init_attr init = {
		.event_handler = kt_event,
		.srq_context = c,
		.attr = { .max_wr = KT_DEPTH, .max_sge = 2 },
		.srq_type = IB_SRQT_BASIC,
	};
	struct ib_srq_attr attr = {};
	int err;

	c->srq = ib_create_srq(c->pd, &init);
	if (IS_ERR(c->srq)) {
		err = PTR_ERR(c->srq);
		c->srq = NULL;
		pr_err("vrnic_ktest: create_srq: %d\n", err);
		return err;
	}
	err = ib_query_srq(c->srq, &attr);
	if (err)
		return err;
	return kt_check(init.attr.max_wr == KT_DEPTH &&
			init.attr.max_sge >= 2 &&
			attr.max_wr == KT_DEPTH && attr.max_sge >= 2 &&
			!attr.srq_limit, "SRQ attributes");
}

/* A receive on the SRQ into c->buf[1] + @off. */
static int kt_post_srq(struct kt_ctx *c, struct kt_wr *w, u32 off, u32 len,
		       const struct ib_recv_wr **bad)
{
	struct ib_sge sge = kt_sge(c, 1, off, len);
	struct ib_recv_wr wr = kt_recv_wr(w, &sge);
	int err;

	kt_wr_init(w);
	err = ib_post_srq_recv(c->srq, &wr, bad);
	if (err && bad)
		*bad = *bad == &wr ? (void *)w : NULL;
	return err;
}

/* Two RC QPs on the SRQ, connected to each other. */
static int kt_srq_pair(struct kt_ctx *c, const struct ib_gid_attr *gid)
{
	int err;

	err = kt_srq_create(c);
	if (!err)
		err = kt_create_qps(c, IB_QPT_RC, c->srq);
	if (!err)
		err = kt_connect(c, 0, 1, gid);
	if (!err)
		err = kt_connect(c, 1, 0, gid);
	return err;
}

/* Receive @r holds what c->qp[@peer] sent, @len bytes at @b. */
static int kt_check_srq_recv(struct kt_ctx *c, struct kt_wr *r, const u8 *b,
			     const u8 *sent, u32 len)
{
	int to = r->wc.qp == c->qp[0] ? 0 : 1;

	return kt_check(r->wc.qp == c->qp[to] &&
			r->wc.src_qp == c->qp[!to]->qp_num &&
			r->wc.byte_len == len && !memcmp(b, sent, len),
			"SRQ receive: QP, source, length, data");
}

static int kt_srq(struct kt_ctx *c, const struct ib_gid_attr *gid)
{
	struct kt_wr *s = &c->wr[0], *r = &c->wr[4], rq;
	u8 *a = c->buf[0], *b = c->buf[1];
	const struct ib_recv_wr *rbad;
	struct ib_qp_init_attr init;
	struct ib_qp_attr qattr;
	struct ib_sge sge = kt_sge(c, 1, 0, 64);
	struct ib_recv_wr rwr = kt_recv_wr(&rq, &sge);
	int i, err;

	err = kt_srq_pair(c, gid);
	if (err)
		return err;

	/* Its QPs have no receive queue of their own. */
	err = kt_check(ib_post_recv(c->qp[1], &rwr, &rbad) == -EINVAL &&
		       rbad == &rwr, "post_recv on a QP with an SRQ refused");
	if (!err)
		err = ib_query_qp(c->qp[1], &qattr, IB_QP_CAP, &init);
	if (!err)
		err = kt_check(init.srq == c->srq && !qattr.cap.max_recv_wr,
			       "query_qp: the SRQ, no receive WRs");

	/* The whole SRQ, 256 bytes each; one more does not fit. */
	memset(b, 0xee, KT_BUF);
	for (i = 0; i < KT_DEPTH && !err; i++)
		err = kt_post_srq(c, &r[i], 256 * i, 256, NULL);
	if (!err)
		err = kt_check(kt_post_srq(c, &c->wr[1], 0, 64, &rbad) ==
			       -ENOMEM && rbad == (void *)&c->wr[1],
			       "post to a full SRQ refused");

	/* Each QP sends to the other: both take the SRQ's first WQEs. */
	for (i = 0; i < 2048; i++)
		a[i] = i * 5 + 1;
	memset(c->buf[1] + 3072, 0x77, 120);
	if (!err)
		err = kt_post_send(c, 0, &s[0], 0, 100, IB_WR_SEND,
				   IB_SEND_SIGNALED, 0);
	if (!err)
		err = kt_post_send(c, 1, &s[1], 3072, 120, IB_WR_SEND,
				   IB_SEND_SIGNALED, 0);
	for (i = 0; i < 2 && !err; i++)
		err = kt_wait(&s[i], "send to an SRQ", IB_WC_SEND,
			      IB_WC_SUCCESS);
	for (i = 0; i < 2 && !err; i++)
		err = kt_wait(&r[i], "SRQ recv", IB_WC_RECV, IB_WC_SUCCESS);
	for (i = 0; i < 2 && !err; i++)
		err = kt_check_srq_recv(c, &r[i], b + 256 * i,
					r[i].wc.qp == c->qp[1] ? a : b + 3072,
					r[i].wc.qp == c->qp[1] ? 100 : 120);
	if (!err)
		err = kt_check(r[0].wc.qp != r[1].wc.qp,
			       "the SRQ served both QPs");

	/* The device's consumer index freed two slots, no more. */
	for (i = 0; i < 2 && !err; i++)
		err = kt_post_srq(c, &c->wr[20 + i], 256 * i, 256, NULL);
	if (!err)
		err = kt_check(kt_post_srq(c, &c->wr[1], 0, 64, &rbad) ==
			       -ENOMEM, "SRQ full again");

	/* A QP of the SRQ failing: its last WQE; the SRQ keeps its WQEs. */
	memset(&qattr, 0, sizeof(qattr));
	qattr.qp_state = IB_QPS_ERR;
	if (!err)
		err = ib_modify_qp(c->qp[1], &qattr, IB_QP_STATE);
	if (!err)
		err = kt_wait_event(c, IB_EVENT_QP_LAST_WQE_REACHED,
				    "last WQE reached");
	if (!err) {
		msleep(100);
		err = kt_check(!completion_done(&r[2].done),
			       "the SRQ's receives are not flushed");
	}
	return err;
}

/* Send @len bytes from c->qp[0] and wait for both completions. */
static int kt_send_to_srq(struct kt_ctx *c, struct kt_wr *r, u32 len)
{
	int err;

	err = kt_post_send(c, 0, &c->wr[0], 0, len, IB_WR_SEND,
			   IB_SEND_SIGNALED, 0);
	if (!err)
		err = kt_wait(&c->wr[0], "send", IB_WC_SEND, IB_WC_SUCCESS);
	if (!err)
		err = kt_wait(r, "SRQ recv", IB_WC_RECV, IB_WC_SUCCESS);
	return err;
}

static int kt_srq_limit(struct kt_ctx *c, const struct ib_gid_attr *gid)
{
	struct kt_wr *r = &c->wr[4];
	struct ib_srq_attr attr = {};
	int i, err;

	err = kt_srq_pair(c, gid);
	if (err)
		return err;

	/* No resizing beyond the device's, and a limit below the depth. */
	attr.max_wr = 1U << 30;
	err = kt_check(ib_modify_srq(c->srq, &attr, IB_SRQ_MAX_WR) == -EINVAL,
		       "SRQ resize beyond max_srq_wr refused");
	attr.srq_limit = KT_DEPTH;
	if (!err)
		err = kt_check(ib_modify_srq(c->srq, &attr, IB_SRQ_LIMIT) ==
			       -EINVAL, "limit of the SRQ's depth refused");

	for (i = 0; i < 4 && !err; i++)
		err = kt_post_srq(c, &r[i], 256 * i, 256, NULL);
	attr.srq_limit = 3;
	if (!err)
		err = ib_modify_srq(c->srq, &attr, IB_SRQ_LIMIT);
	memset(&attr, 0, sizeof(attr));
	if (!err)
		err = ib_query_srq(c->srq, &attr);
	if (!err)
		err = kt_check(attr.srq_limit == 3, "armed limit read back");

	/* 3 left is not below the limit of 3 */
	if (!err)
		err = kt_send_to_srq(c, &r[0], 32);
	if (!err) {
		msleep(100);
		err = kt_check(!atomic_read(&c->srq_limit_events),
			       "no limit event at the limit");
	}
	/* 2 left: the event, then the limit reads 0 */
	if (!err)
		err = kt_send_to_srq(c, &r[1], 32);
	if (!err)
		err = kt_wait_event(c, IB_EVENT_SRQ_LIMIT_REACHED,
				    "SRQ limit reached");
	if (!err)
		err = ib_query_srq(c->srq, &attr);
	if (!err)
		err = kt_check(!attr.srq_limit, "limit 0 after the event");
	/* Disarmed: 1 left, no second event */
	if (!err)
		err = kt_send_to_srq(c, &r[2], 32);
	if (!err) {
		msleep(100);
		err = kt_check(atomic_read(&c->srq_limit_events) == 1,
			       "the limit event fires once");
	}
	return err;
}

#define KT_RSZ_SLOT	128	/* bytes per receive in c->buf[1] */
#define KT_RSZ_WR	20	/* receives of kt_srq_resize at once */

/* SRQ index @idx: its receive WR and its place in c->buf[1]. */
static struct kt_wr *kt_rsz_wr(struct kt_ctx *c, u32 idx)
{
	return &c->wr[4 + idx % KT_RSZ_WR];
}

static int kt_rsz_post(struct kt_ctx *c, u32 idx)
{
	u32 off = (idx % (KT_BUF / KT_RSZ_SLOT)) * KT_RSZ_SLOT;

	memset(c->buf[1] + off, 0xee, KT_RSZ_SLOT);
	return kt_post_srq(c, kt_rsz_wr(c, idx), off, KT_RSZ_SLOT, NULL);
}

/* Message @idx from qp[0]: it must land in SRQ index @idx, bytes intact. */
static int kt_rsz_send(struct kt_ctx *c, u32 idx)
{
	u32 off = (idx % (KT_BUF / KT_RSZ_SLOT)) * KT_RSZ_SLOT;
	u32 len = 16 + idx % 100, i;
	u8 *a = c->buf[0], *b = c->buf[1] + off;
	int err;

	for (i = 0; i < len; i++)
		a[i] = idx * 7 + i;
	err = kt_send_to_srq(c, kt_rsz_wr(c, idx), len);
	if (!err)
		err = kt_check(kt_rsz_wr(c, idx)->wc.byte_len == len &&
			       !memcmp(a, b, len) && b[len] == 0xee,
			       "SRQ receive in order, data intact");
	if (err)
		pr_err("vrnic_ktest: SRQ index %u\n", idx);
	return err;
}

static int kt_srq_resize(struct kt_ctx *c, const struct ib_gid_attr *gid)
{
	const struct ib_recv_wr *rbad;
	struct ib_srq_attr attr = {};
	u32 pi = 0, ci = 0;
	int err;

	err = kt_srq_pair(c, gid);
	if (!err)
		err = kt_check(c->ibdev->attrs.device_cap_flags &
			       IB_DEVICE_SRQ_RESIZE, "SRQ resize advertised");
	/* 12 posted, 4 taken, 8 more: indices 16..19 wrap; full. */
	while (!err && pi < 12)
		err = kt_rsz_post(c, pi++);
	while (!err && ci < 4)
		err = kt_rsz_send(c, ci++);
	while (!err && pi < 20)
		err = kt_rsz_post(c, pi++);
	if (!err)
		err = kt_check(kt_post_srq(c, &c->wr[1], 0, 64, &rbad) ==
			       -ENOMEM, "SRQ full before the resize");

	attr.max_wr = 2 * KT_DEPTH;
	if (!err)
		err = ib_modify_srq(c->srq, &attr, IB_SRQ_MAX_WR);
	memset(&attr, 0, sizeof(attr));
	if (!err)
		err = ib_query_srq(c->srq, &attr);
	if (!err)
		err = kt_check(attr.max_wr == 2 * KT_DEPTH, "SRQ grown");
	/* Room beyond the old depth: 16 outstanding, 4 more. */
	while (!err && pi < 24)
		err = kt_rsz_post(c, pi++);
	while (!err && ci < pi)
		err = kt_rsz_send(c, ci++);
	/* The new ring wraps too. */
	while (!err && pi < 72) {
		err = kt_rsz_post(c, pi++);
		if (!err)
			err = kt_rsz_send(c, ci++);
	}
	return err;
}

/* ------------------------------------------------------------------ */
/* XRC from the kernel                                                 */
/* ------------------------------------------------------------------ */

/*
 * struct ib_send_wr has no field for the remote XRC SRQ, so no kernel
 * consumer can send on an XRC initiator: the driver refuses one, and with
 * it kernel XRC SRQs, which only a user-space initiator could fill. An XRC
 * domain of the kernel's own is fine: ib_core shares user-space domains
 * through such objects.
 */
static int kt_xrc(struct kt_ctx *c, const struct ib_gid_attr *unused)
{
	struct ib_qp_init_attr qinit = {
		.send_cq = c->cq,
		.recv_cq = c->cq,
		.cap = { .max_send_wr = KT_DEPTH, .max_send_sge = 1 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_XRC_INI,
	};
	struct ib_srq_init_attr sinit = {
		.attr = { .max_wr = KT_DEPTH, .max_sge = 1 },
		.srq_type = IB_SRQT_XRC,
	};
	struct ib_xrcd *xrcd;
	struct ib_srq *srq;
	struct ib_qp *qp;
	int err, ret;

	xrcd = ib_alloc_xrcd_user(c->ibdev, NULL, NULL);
	if (IS_ERR(xrcd)) {
		pr_err("vrnic_ktest: alloc_xrcd: %ld\n", PTR_ERR(xrcd));
		return PTR_ERR(xrcd);
	}
	sinit.ext.cq = c->cq;
	sinit.ext.xrc.xrcd = xrcd;
	srq = ib_create_srq(c->pd, &sinit);
	err = kt_check(PTR_ERR_OR_ZERO(srq) == -EOPNOTSUPP,
		       "an XRC SRQ from the kernel is refused");
	if (!IS_ERR(srq))
		ib_destroy_srq(srq);
	qp = ib_create_qp(c->pd, &qinit);
	if (!err)
		err = kt_check(PTR_ERR_OR_ZERO(qp) == -EOPNOTSUPP,
			       "an XRC initiator from the kernel is refused");
	if (!IS_ERR(qp))
		ib_destroy_qp(qp);
	ret = ib_dealloc_xrcd_user(xrcd, NULL);
	return err ?: ret;
}

static const struct {
	const char *name;
	int (*run)(struct kt_ctx *c, const struct ib_gid_attr *gid);
} kt_cases[] = {
	{ "rc", kt_rc },
	{ "ud", kt_ud },
	{ "mad", kt_mad },
	{ "srq", kt_srq },
	{ "srq_limit", kt_srq_limit },
	{ "srq_resize", kt_srq_resize },
	{ "frwr", kt_frwr },
	{ "xrc", kt_xrc },
};

static int kt_buffers(struct kt_ctx *c)
{
	int i;

	for (i = 0; i < 2; i++) {
		c->buf[i] = kzalloc(KT_BUF, GFP_KERNEL);
		if (!c->buf[i])
			return -ENOMEM;
		c->dma[i] = ib_dma_map_single(c->ibdev, c->buf[i], KT_BUF,
					      DMA_BIDIRECTIONAL);
		if (ib_dma_mapping_error(c->ibdev, c->dma[i])) {
			kfree(c->buf[i]);
			c->buf[i] = NULL;
			return -ENOMEM;
		}
	}
	return 0;
}

static int kt_run(struct kt_ctx *c)
{
	const struct ib_gid_attr *gid;
	int (*run)(struct kt_ctx *c, const struct ib_gid_attr *gid) = NULL;
	int i, err;

	for (i = 0; i < ARRAY_SIZE(kt_cases); i++)
		if (!strcmp(kt_test, kt_cases[i].name))
			run = kt_cases[i].run;
	if (!run) {
		pr_err("vrnic_ktest: no test \"%s\"\n", kt_test);
		return -EINVAL;
	}
	gid = kt_gid(c->ibdev);
	if (IS_ERR(gid)) {
		pr_err("vrnic_ktest: %s has no RoCE v2 GID\n",
		       dev_name(&c->ibdev->dev));
		return PTR_ERR(gid);
	}
	c->events = 0;
	atomic_set(&c->srq_limit_events, 0);
	init_waitqueue_head(&c->event_wq);

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
	err = kt_buffers(c);
	if (!err)
		err = run(c, gid);

out:
	for (i = 0; i < 2; i++) {
		if (c->qp[i])
			ib_destroy_qp(c->qp[i]);
		c->qp[i] = NULL;
	}
	if (c->srq)
		ib_destroy_srq(c->srq);
	c->srq = NULL;
	for (i = 0; i < 2; i++) {
		if (c->buf[i]) {
			ib_dma_unmap_single(c->ibdev, c->dma[i], KT_BUF,
					    DMA_BIDIRECTIONAL);
			kfree(c->buf[i]);
		}
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
