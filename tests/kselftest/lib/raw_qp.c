// SPDX-License-Identifier: GPL-2.0
/* A hand-built user QP: raw uverbs commands and ring accesses without the provider. */
#include "suite.h"

volatile uint32_t *su_raw_word(struct su_raw *r, uint32_t slot,
			       uint32_t byte)
{
	return r->db + (slot * VRNIC_DB_SLOT_SIZE + byte) / 4;
}

int su_raw_need_wakeup(struct su_raw *r)
{
	return __atomic_load_n(r->db, __ATOMIC_ACQUIRE) &
	       VRNIC_DB_STATUS_NEED_WAKEUP;
}

int su_raw_create(struct su_raw *r, struct ibv_context *ctx,
		  struct ibv_pd *pd, uint32_t cqe, uint32_t wr,
		  uint32_t sge)
{
	const struct ibv_qp_cap cap = {
		.max_send_wr = wr, .max_recv_wr = wr,
		.max_send_sge = sge, .max_recv_sge = sge,
	};
	struct su_cq_resp ccr;
	struct su_qp_resp qcr;
	void *m;
	int err;

	memset(r, 0, sizeof(*r));
	r->ctx = ctx;
	r->pd = pd;
	r->fd = ctx->cmd_fd;
	r->cq_handle = r->qp_handle = ~0u;

	err = su_query_layout(r->fd, &r->layout);
	if (err)
		return err;
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd,
		 r->layout.db_mmap_key);
	if (m == MAP_FAILED)
		return -errno;
	r->db = m;

	err = su_cmd_create_cq(r->fd, cqe, (uintptr_t)r, &ccr);
	if (err)
		return err;
	r->cq_handle = ccr.core.cq_handle;
	r->cqn = ccr.drv.cqn;
	r->cq_slot = ccr.drv.db_slot;
	r->cq_log = ccr.drv.log_depth;
	r->cq_ring_size = ccr.drv.ring_size;
	m = mmap(NULL, r->cq_ring_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 r->fd, ccr.drv.ring_mmap_key);
	if (m == MAP_FAILED)
		return -errno;
	r->cq_ring = m;

	err = su_cmd_create_qp(r->fd, pd->handle, r->cq_handle, r->cq_handle,
			       &cap, IB_UVERBS_QPT_RC, (uintptr_t)r, &qcr);
	if (err)
		return err;
	r->qp_handle = qcr.core.qp_handle;
	r->qpn = qcr.drv.qpn;
	r->qp_slot = qcr.drv.db_slot;
	r->sq_log = qcr.drv.sq_log_depth;
	r->sq_shift = qcr.drv.sq_wqe_shift;
	r->rq_log = qcr.drv.rq_log_depth;
	r->rq_shift = qcr.drv.rq_wqe_shift;
	r->sq_size = qcr.drv.sq_ring_size;
	r->rq_size = qcr.drv.rq_ring_size;
	m = mmap(NULL, r->sq_size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd,
		 qcr.drv.sq_mmap_key);
	if (m == MAP_FAILED)
		return -errno;
	r->sq = m;
	m = mmap(NULL, r->rq_size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd,
		 qcr.drv.rq_mmap_key);
	if (m == MAP_FAILED)
		return -errno;
	r->rq = m;
	return 0;
}

void su_raw_destroy(struct su_raw *r)
{
	if (r->qp_handle != ~0u)
		su_cmd_destroy_qp(r->fd, r->qp_handle);
	if (r->cq_handle != ~0u)
		su_cmd_destroy_cq(r->fd, r->cq_handle);
	if (r->sq)
		munmap(r->sq, r->sq_size);
	if (r->rq)
		munmap(r->rq, r->rq_size);
	if (r->cq_ring)
		munmap(r->cq_ring, r->cq_ring_size);
	if (r->db)
		munmap((void *)r->db, 4096);
	memset(r, 0, sizeof(*r));
}

/* MODIFY_QP through the legacy write() command. */
static int su_raw_modify(struct su_raw *r, int state, uint32_t dest_qpn,
			 const union ibv_gid *gid, int gid_index,
			 uint8_t rnr_retry, uint8_t min_rnr_timer)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_modify_qp cmd;
	} c = {};

	c.cmd.qp_handle = r->qp_handle;
	c.cmd.qp_state = state;
	switch (state) {
	case IBV_QPS_INIT:
		c.cmd.attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
		c.cmd.port_num = 1;
		c.cmd.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
					IBV_ACCESS_REMOTE_READ |
					IBV_ACCESS_REMOTE_ATOMIC;
		break;
	case IBV_QPS_RTR:
		c.cmd.attr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER;
		memcpy(c.cmd.dest.dgid, gid->raw, 16);
		c.cmd.dest.sgid_index = gid_index;
		c.cmd.dest.hop_limit = 64;
		c.cmd.dest.is_global = 1;
		c.cmd.dest.port_num = 1;
		c.cmd.path_mtu = IBV_MTU_1024;
		c.cmd.dest_qp_num = dest_qpn;
		c.cmd.max_dest_rd_atomic = 16;
		c.cmd.min_rnr_timer = min_rnr_timer;
		break;
	case IBV_QPS_RTS:
		c.cmd.attr_mask = IBV_QP_STATE | IBV_QP_TIMEOUT |
				  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
		c.cmd.timeout = 14;
		c.cmd.retry_cnt = 7;
		c.cmd.rnr_retry = rnr_retry;
		c.cmd.max_rd_atomic = 16;
		break;
	default:
		c.cmd.attr_mask = IBV_QP_STATE;
		break;
	}
	return su_uverbs_write(r->fd, IB_USER_VERBS_CMD_MODIFY_QP, &c,
			       sizeof(c), 0);
}

int su_raw_connect(struct su_raw *r, uint32_t dest_qpn,
		   const union ibv_gid *gid, int gid_index)
{
	return su_raw_modify(r, IBV_QPS_INIT, 0, NULL, 0, 0, 0) ?:
	       su_raw_modify(r, IBV_QPS_RTR, dest_qpn, gid, gid_index, 0, 12) ?:
	       su_raw_modify(r, IBV_QPS_RTS, 0, NULL, 0, 7, 0);
}

struct vrnic_send_wqe_hdr *su_raw_sq_slot(struct su_raw *r)
{
	uint8_t *w = r->sq + ((size_t)(r->sq_pi & ((1u << r->sq_log) - 1))
			      << r->sq_shift);

	memset(w, 0, 1u << r->sq_shift);
	return (struct vrnic_send_wqe_hdr *)w;
}

int su_raw_sq_ring(struct su_raw *r, uint32_t n,
		   enum su_kick kick)
{
	r->sq_pi += n;
	__atomic_store_n(su_raw_word(r, r->qp_slot, VRNIC_DB_QP_SQ_PI),
			 r->sq_pi, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (kick == SU_KICK_ALWAYS ||
	    (kick == SU_KICK_IF_NEEDED && su_raw_need_wakeup(r)))
		return su_kick(r->fd);
	return 0;
}

int su_raw_post(struct su_raw *r, uint8_t opcode, uint64_t wr_id,
		uint64_t addr, uint32_t len, uint32_t lkey,
		uint64_t raddr, uint32_t rkey, enum su_kick kick)
{
	struct vrnic_send_wqe_hdr *w = su_raw_sq_slot(r);
	struct vrnic_sge *sge = (struct vrnic_sge *)((uint8_t *)w +
						     VRNIC_SEND_WQE_HDR_SIZE);

	w->wr_id = wr_id;
	w->opcode = opcode;
	w->flags = VRNIC_WQE_F_SIGNALED;
	w->num_sge = 1;
	/* A SEND names no remote buffer: its union is reserved. */
	if (opcode != VRNIC_WR_SEND && opcode != VRNIC_WR_SEND_WITH_IMM) {
		w->rdma.remote_addr = raddr;
		w->rdma.rkey = rkey;
	}
	sge->addr = addr;
	sge->length = len;
	sge->lkey = lkey;
	return su_raw_sq_ring(r, 1, kick);
}

int su_raw_post_recv(struct su_raw *r, uint64_t wr_id,
		     uint64_t addr, uint32_t len, uint32_t lkey,
		     enum su_kick kick)
{
	uint8_t *w = r->rq + ((size_t)(r->rq_pi & ((1u << r->rq_log) - 1))
			      << r->rq_shift);
	struct vrnic_recv_wqe_hdr *h = (struct vrnic_recv_wqe_hdr *)w;
	struct vrnic_sge *sge = (struct vrnic_sge *)(w + VRNIC_RECV_WQE_HDR_SIZE);

	memset(w, 0, 1u << r->rq_shift);
	h->wr_id = wr_id;
	h->num_sge = 1;
	sge->addr = addr;
	sge->length = len;
	sge->lkey = lkey;
	r->rq_pi++;
	__atomic_store_n(su_raw_word(r, r->qp_slot, VRNIC_DB_QP_RQ_PI),
			 r->rq_pi, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (kick == SU_KICK_ALWAYS ||
	    (kick == SU_KICK_IF_NEEDED && su_raw_need_wakeup(r)))
		return su_kick(r->fd);
	return 0;
}

/* Take the next CQE if there is one (1), publishing ci; else 0. */
static int su_raw_poll(struct su_raw *r, struct vrnic_cqe *out)
{
	struct vrnic_cqe *c = (struct vrnic_cqe *)(r->cq_ring +
		(size_t)(r->cq_ci & ((1u << r->cq_log) - 1)) * VRNIC_CQE_SIZE);
	uint8_t owner = __atomic_load_n(&c->owner, __ATOMIC_ACQUIRE);

	if ((owner & VRNIC_OWNER_PHASE) != VRNIC_PHASE(r->cq_ci, r->cq_log))
		return 0;
	*out = *c;
	r->cq_ci++;
	__atomic_store_n(su_raw_word(r, r->cq_slot, VRNIC_DB_CQ_CI), r->cq_ci,
			 __ATOMIC_RELEASE);
	return 1;
}

int su_raw_poll_wait(struct su_raw *r, struct vrnic_cqe *out,
		     int ms)
{
	long end = su_now_ms() + ms;

	do {
		if (su_raw_poll(r, out))
			return 1;
	} while (su_now_ms() < end);
	return 0;
}

int su_raw_state(struct su_raw *r)
{
	return su_cmd_qp_state(r->fd, r->qp_handle);
}

int su_raw_async(struct ibv_context *ctx, struct su_raw *r,
		 uint32_t type, int ms)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ib_uverbs_async_event_desc d;
	long end = su_now_ms() + ms;

	fcntl(ctx->async_fd, F_SETFL,
	      fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
	while (su_now_ms() < end) {
		if (poll(&pfd, 1, 50) <= 0)
			continue;
		while (read(ctx->async_fd, &d, sizeof(d)) == sizeof(d))
			if (d.event_type == type &&
			    d.element == (uintptr_t)r)
				return 1;
	}
	return 0;
}
