// SPDX-License-Identifier: GPL-2.0
/*
 * Opening vrnic0 through libibverbs, GIDs, a connected pair of RC, UC or UD
 * QPs (optionally on an SRQ), posting and polling.
 */
#include <arpa/inet.h>

#include "suite.h"

struct ibv_context *su_open(void)
{
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (i = 0; i < n && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), SU_DEV))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

const uint8_t su_v4_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

int su_pick_gid(struct ibv_context *ctx, union ibv_gid *gid)
{
	struct ibv_gid_entry e;
	int tries, i;

	for (tries = 0; tries < 50; tries++) {
		for (i = 0; i < 16; i++) {
			if (ibv_query_gid_ex(ctx, 1, i, &e, 0))
				continue;
			if (e.gid_type != IBV_GID_TYPE_ROCE_V2 ||
			    memcmp(e.gid.raw, su_v4_prefix, 12))
				continue;
			*gid = e.gid;
			return i;
		}
		su_sleep_ms(100);
	}
	return -1;
}

int su_env_open(struct su_env *e, size_t len, uint8_t fill,
		unsigned int access)
{
	memset(e, 0, sizeof(*e));
	e->ctx = su_open();
	if (!e->ctx)
		return 1;
	e->gid_index = su_pick_gid(e->ctx, &e->gid);
	if (e->gid_index < 0)
		return 2;
	e->pd = ibv_alloc_pd(e->ctx);
	if (!e->pd)
		return 3;
	e->buf = aligned_alloc(4096, len);
	if (!e->buf)
		return 4;
	memset(e->buf, fill, len);
	e->mr = ibv_reg_mr(e->pd, e->buf, len, access);
	return e->mr ? 0 : 5;
}

void su_env_close(struct su_env *e)
{
	if (e->mr)
		ibv_dereg_mr(e->mr);
	free(e->buf);
	if (e->pd)
		ibv_dealloc_pd(e->pd);
	if (e->ctx)
		ibv_close_device(e->ctx);
}

static enum ibv_qp_type su_qp_type(const struct su_pair *p)
{
	return p->o.qp_type ? p->o.qp_type : IBV_QPT_RC;
}

struct ibv_qp *su_create_qp(struct su_pair *p, struct ibv_pd *pd,
			    struct ibv_cq *scq,
			    struct ibv_cq *rcq)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = scq,
		.recv_cq = rcq,
		.cap = {
			.max_send_wr = p->o.send_wr,
			.max_recv_wr = p->o.recv_wr,
			.max_send_sge = p->o.send_sge,
			.max_recv_sge = p->o.recv_sge,
			.max_inline_data = p->o.inline_data,
		},
		.srq = p->o.srq,
		.qp_type = su_qp_type(p),
		.sq_sig_all = p->o.sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_qp *qp;

	if (p->o.qp_ex) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = IBV_QP_EX_WITH_SEND |
			IBV_QP_EX_WITH_SEND_WITH_IMM;
		if (a.qp_type != IBV_QPT_UD)
			a.send_ops_flags |= IBV_QP_EX_WITH_RDMA_WRITE |
				IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
		if (a.qp_type == IBV_QPT_RC)
			a.send_ops_flags |= IBV_QP_EX_WITH_RDMA_READ |
				IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
				IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
		qp = ibv_create_qp_ex(p->env.ctx, &a);
	} else {
		qp = ibv_create_qp(pd, (struct ibv_qp_init_attr *)&a);
	}
	if (qp)
		p->cap = a.cap;
	return qp;
}

int su_to_init(struct su_pair *p, struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = p->o.qp_access,
		.qkey = p->o.qkey,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= su_qp_type(p) == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	return ibv_modify_qp(qp, &a, mask);
}

/* The address of the device's own GID on port 1: every peer is local. */
static struct ibv_ah_attr su_self_av(const struct su_pair *p)
{
	return (struct ibv_ah_attr){
		.is_global = 1,
		.grh = {
			.dgid = p->env.gid,
			.sgid_index = p->env.gid_index,
			.hop_limit = SU_HOP_LIMIT,
		},
		.port_num = 1,
	};
}

int su_to_rtr(struct su_pair *p, struct ibv_qp *qp,
	      uint32_t dest)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = dest,
		.rq_psn = p->o.rq_psn,
		.max_dest_rd_atomic = p->o.no_rd_atomic ? 0 : 16,
		.min_rnr_timer = p->o.min_rnr_timer,
		.ah_attr = su_self_av(p),
	};
	int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;

	/* UD has no peer; UC no responder resources and no RNR. */
	if (su_qp_type(p) == IBV_QPT_UD)
		mask = IBV_QP_STATE;
	else if (su_qp_type(p) == IBV_QPT_RC)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	return ibv_modify_qp(qp, &a, mask);
}

int su_to_rts(struct su_pair *p, struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = p->o.rnr_retry,
		.sq_psn = p->o.sq_psn,
		.max_rd_atomic = 16,
	};

	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;

	if (su_qp_type(p) == IBV_QPT_RC)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	return ibv_modify_qp(qp, &a, mask);
}

struct ibv_ah *su_create_ah(struct su_pair *p, struct ibv_pd *pd)
{
	struct ibv_ah_attr a = su_self_av(p);

	return ibv_create_ah(pd, &a);
}

int su_connect(struct su_pair *p, struct ibv_qp *a,
	       struct ibv_qp *b)
{
	return su_to_init(p, a) ?: su_to_init(p, b) ?:
	       su_to_rtr(p, a, b->qp_num) ?: su_to_rtr(p, b, a->qp_num) ?:
	       su_to_rts(p, a) ?: su_to_rts(p, b);
}

int su_pair_open(struct su_pair *p, const struct su_opts *o)
{
	int i, err;

	memset(p, 0, sizeof(*p));
	if (o)
		p->o = *o;
	if (!p->o.send_wr)
		p->o.send_wr = 64;
	if (!p->o.recv_wr)
		p->o.recv_wr = 64;
	if (!p->o.send_sge)
		p->o.send_sge = 4;
	if (!p->o.recv_sge)
		p->o.recv_sge = 4;
	if (!p->o.cqe)
		p->o.cqe = 256;
	if (!p->o.buf_size)
		p->o.buf_size = 1 << 20;
	if (!p->o.mr_access)
		p->o.mr_access = SU_MR_ALL;
	if (!p->o.qp_access)
		p->o.qp_access = IBV_ACCESS_REMOTE_WRITE |
				 IBV_ACCESS_REMOTE_READ |
				 IBV_ACCESS_REMOTE_ATOMIC;
	if (!p->o.rnr_retry)
		p->o.rnr_retry = 7;
	if (!p->o.min_rnr_timer)
		p->o.min_rnr_timer = 12;

	p->size = p->o.buf_size;
	err = su_env_open(&p->env, p->size, 0, p->o.mr_access);
	if (err)
		return -err;
	if (p->o.channel) {
		p->ch = ibv_create_comp_channel(p->env.ctx);
		if (!p->ch)
			return -6;
	}
	for (i = 0; i < 2; i++) {
		p->cq[i] = ibv_create_cq(p->env.ctx, p->o.cqe, NULL, p->ch, 0);
		if (!p->cq[i])
			return -7;
	}
	for (i = 0; i < 2; i++) {
		p->qp[i] = su_create_qp(p, p->env.pd, p->cq[i], p->cq[i]);
		if (!p->qp[i])
			return -8;
	}
	if (!p->o.no_connect && su_connect(p, p->qp[0], p->qp[1]))
		return -9;
	if (su_qp_type(p) == IBV_QPT_UD) {
		p->ah = su_create_ah(p, p->env.pd);
		if (!p->ah)
			return -10;
	}
	return 0;
}

void su_pair_close(struct su_pair *p)
{
	int i;

	if (p->ah)
		ibv_destroy_ah(p->ah);
	for (i = 0; i < 2; i++)
		if (p->qp[i])
			ibv_destroy_qp(p->qp[i]);
	for (i = 0; i < 2; i++)
		if (p->cq[i])
			ibv_destroy_cq(p->cq[i]);
	if (p->ch)
		ibv_destroy_comp_channel(p->ch);
	su_env_close(&p->env);
	memset(p, 0, sizeof(*p));
}

int su_pair_renew_qps(struct su_pair *p)
{
	struct ibv_wc wc;
	int i;

	for (i = 0; i < 2; i++) {
		if (p->qp[i] && ibv_destroy_qp(p->qp[i]))
			return -1;
		p->qp[i] = NULL;
		while (ibv_poll_cq(p->cq[i], 1, &wc) > 0)
			;
	}
	for (i = 0; i < 2; i++) {
		p->qp[i] = su_create_qp(p, p->env.pd, p->cq[i], p->cq[i]);
		if (!p->qp[i])
			return -1;
	}
	return su_connect(p, p->qp[0], p->qp[1]) ? -1 : 0;
}

struct ibv_sge su_sge(struct su_pair *p, size_t off,
		      uint32_t len)
{
	struct ibv_sge s = {
		.addr = (uintptr_t)p->env.buf + off,
		.length = len,
		.lkey = p->env.mr->lkey,
	};
	return s;
}

uint64_t su_addr(struct su_pair *p, size_t off)
{
	return (uintptr_t)p->env.buf + off;
}

int su_post_send_imm(struct ibv_qp *qp, enum ibv_wr_opcode op,
		     uint64_t wr_id, struct ibv_sge *s, int n,
		     unsigned int flags, uint64_t raddr, uint32_t rkey,
		     uint32_t imm)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = s, .num_sge = n, .opcode = op,
		.send_flags = flags, .imm_data = htonl(imm),
	};
	struct ibv_send_wr *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

int su_post_send(struct ibv_qp *qp, enum ibv_wr_opcode op,
		 uint64_t wr_id, struct ibv_sge *s, int n,
		 unsigned int flags, uint64_t raddr,
		 uint32_t rkey)
{
	return su_post_send_imm(qp, op, wr_id, s, n, flags, raddr, rkey, 0);
}

int su_post_wait(struct ibv_qp *qp, struct ibv_cq *cq,
		 struct ibv_send_wr *wr, struct ibv_wc *wc)
{
	struct ibv_send_wr *bad;

	memset(wc, 0, sizeof(*wc));
	wr->next = NULL;
	wr->send_flags |= IBV_SEND_SIGNALED;
	if (ibv_post_send(qp, wr, &bad))
		return -1;
	if (su_poll(cq, wc, SU_TIMEOUT_MS) != 1 || wc->wr_id != wr->wr_id)
		return -1;
	return wc->status;
}

int su_rdma_op(struct ibv_qp *qp, struct ibv_cq *cq, enum ibv_wr_opcode op,
	       void *laddr, uint32_t len, uint32_t lkey, uint64_t raddr,
	       uint32_t rkey, struct ibv_wc *wc)
{
	struct ibv_sge s = { (uintptr_t)laddr, len, lkey };
	struct ibv_send_wr wr = {
		.wr_id = 0x5eed, .sg_list = &s, .num_sge = 1, .opcode = op,
	};

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return su_post_wait(qp, cq, &wr, wc);
}

int su_post_recv(struct ibv_qp *qp, uint64_t wr_id,
		 struct ibv_sge *s, int n)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = s, .num_sge = n };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

int su_post_srq_recv(struct ibv_srq *srq, uint64_t wr_id,
		     struct ibv_sge *s, int n)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = s, .num_sge = n };
	struct ibv_recv_wr *bad;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

int su_fresh_traffic(unsigned int seed)
{
	struct su_pair p;
	struct ibv_sge s;
	struct ibv_wc wc;
	int ret = 0;

	if (su_pair_open(&p, NULL))
		ret = 1;
	if (!ret) {
		su_fill(p.env.buf, 262144, seed);
		s = su_sge(&p, 0, 262144);
		if (su_post_send(p.qp[0], IBV_WR_RDMA_WRITE, 1, &s, 1,
				 IBV_SEND_SIGNALED, su_addr(&p, 524288),
				 p.env.mr->rkey))
			ret = 2;
	}
	if (!ret && su_poll(p.cq[0], &wc, SU_TIMEOUT_MS) != 1)
		ret = 3;
	if (!ret && wc.status != IBV_WC_SUCCESS)
		ret = 4;
	if (!ret && su_check(p.env.buf + 524288, 262144, seed) != -1)
		ret = 5;
	su_pair_close(&p);
	return ret;
}

int su_post_srq_zeroed(struct su_pair *p, struct ibv_srq *srq,
		       uint64_t wr_id, size_t off, uint32_t len)
{
	struct ibv_sge r = su_sge(p, off, len);

	memset(p->env.buf + off, 0, len);
	return su_post_srq_recv(srq, wr_id, &r, 1);
}

int su_post_ud(struct ibv_qp *qp, enum ibv_wr_opcode op,
	       uint64_t wr_id, struct ibv_sge *s, int n,
	       unsigned int flags, struct ibv_ah *ah, uint32_t qpn,
	       uint32_t qkey, uint32_t imm)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = s, .num_sge = n, .opcode = op,
		.send_flags = flags, .imm_data = htonl(imm),
	};
	struct ibv_send_wr *bad;

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = qkey;
	return ibv_post_send(qp, &wr, &bad);
}

int su_active_mtu(struct ibv_context *ctx)
{
	struct ibv_port_attr a;

	if (ibv_query_port(ctx, 1, &a))
		return -1;
	return 128 << a.active_mtu;
}

int su_poll(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	long end = su_now_ms() + ms;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n;
	} while (su_now_ms() < end);
	return 0;
}

int su_wait_async(struct ibv_context *ctx,
		  enum ibv_event_type type, void *elem, int ms)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	long end = su_now_ms() + ms;
	int got = 0;

	fcntl(ctx->async_fd, F_SETFL,
	      fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
	while (!got && su_now_ms() < end) {
		if (poll(&pfd, 1, 50) <= 0)
			continue;
		while (!ibv_get_async_event(ctx, &ev)) {
			if (ev.event_type == type &&
			    (!elem || ev.element.qp == elem ||
			     (void *)ev.element.cq == elem))
				got = 1;
			ibv_ack_async_event(&ev);
		}
	}
	return got;
}

int su_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
		return -1;
	return a.qp_state;
}
