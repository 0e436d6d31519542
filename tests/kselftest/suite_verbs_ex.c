// SPDX-License-Identifier: GPL-2.0
/*
 * The extended verbs through libibverbs and the provider, every byte and
 * every completion field checked:
 * - the ibv_wr_* API for each opcode of RC (SEND, SEND_WITH_IMM, WRITE,
 *   WRITE_WITH_IMM, READ, both atomics; SGE lists and inline lists), UC
 *   (SEND, WRITE) and UD (SEND with ibv_wr_set_ud_addr), and per type an
 *   opcode it refuses, at create (send_ops_flags) and at wr_complete;
 * - extended CQs with every wc_flag the provider supports, read back
 *   against what was sent; an unsupported flag is refused;
 * - completion timestamps: increasing within a run, between two
 *   ibv_query_rt_values_ex reads, the device's ns clock in
 *   ibv_query_device_ex;
 * - a thread domain and a parent domain with its own allocator: QPs and
 *   a CQ on it post and complete, the allocator serves their objects.
 */
#include <arpa/inet.h>

#include "suite.h"
#include "kselftest_harness.h"

#define QKEY 0x11110000u
#define SND 0
#define RCV (256 << 10)
#define ATOM (512 << 10)

#define ALL_WC_FLAGS (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | \
		      IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP | \
		      IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL | \
		      IBV_WC_EX_WITH_DLID_PATH_BITS | \
		      IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
		      IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

/* One completion as the ibv_cq_ex readers return it. */
struct xwc {
	uint64_t wr_id;
	int status, opcode;
	uint32_t byte_len, imm, qp_num, src_qp, slid;
	unsigned int flags;
	uint8_t sl, dlid_path_bits;
	uint64_t ts, wallclock;
};

static struct ibv_cq_ex *xcq(struct ibv_context *ctx, struct ibv_pd *parent)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = 64,
		.wc_flags = ALL_WC_FLAGS,
	};

	if (parent) {
		a.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
		a.parent_domain = parent;
	}
	return ibv_create_cq_ex(ctx, &a);
}

/* One completion through start_poll/end_poll; 0, or -1 after @ms. */
static int xpoll(struct ibv_cq_ex *cq, struct xwc *w, int ms)
{
	struct ibv_poll_cq_attr pa = {};
	long end = su_now_ms() + ms;

	while (ibv_start_poll(cq, &pa) == ENOENT)
		if (su_now_ms() >= end)
			return -1;
	w->wr_id = cq->wr_id;
	w->status = cq->status;
	w->opcode = ibv_wc_read_opcode(cq);
	w->byte_len = ibv_wc_read_byte_len(cq);
	w->imm = ntohl(ibv_wc_read_imm_data(cq));
	w->qp_num = ibv_wc_read_qp_num(cq);
	w->src_qp = ibv_wc_read_src_qp(cq);
	w->slid = ibv_wc_read_slid(cq);
	w->flags = ibv_wc_read_wc_flags(cq);
	w->sl = ibv_wc_read_sl(cq);
	w->dlid_path_bits = ibv_wc_read_dlid_path_bits(cq);
	w->ts = ibv_wc_read_completion_ts(cq);
	w->wallclock = ibv_wc_read_completion_wallclock_ns(cq);
	ibv_end_poll(cq);
	return 0;
}

static uint64_t raw_clock(struct ibv_context *ctx)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };

	if (ibv_query_rt_values_ex(ctx, &v) ||
	    v.comp_mask != IBV_VALUES_MASK_RAW_CLOCK)
		return 0;
	return (uint64_t)v.raw_clock.tv_sec * 1000000000ull +
	       (uint64_t)v.raw_clock.tv_nsec;
}

/*
 * A connected pair of @type whose QPs are extended (every op the type
 * has) on extended CQs; QPs on @pd (a parent domain, or NULL: the env's).
 */
static int xpair_open(struct su_pair *p, enum ibv_qp_type type,
		      struct ibv_pd *(*pd_of)(struct su_pair *p, void *arg),
		      void *arg)
{
	struct su_opts o = {
		.qp_type = type, .qkey = QKEY, .qp_ex = 1, .no_connect = 1,
		.inline_data = 64,
	};
	struct ibv_pd *pd;
	int i, err;

	err = su_pair_open(p, &o);
	if (err)
		return err;
	pd = pd_of ? pd_of(p, arg) : p->env.pd;
	if (!pd)
		return -20;
	for (i = 0; i < 2; i++) {
		if (ibv_destroy_qp(p->qp[i]))
			return -21;
		p->qp[i] = NULL;
		if (ibv_destroy_cq(p->cq[i]))
			return -22;
		p->cq[i] = NULL;
	}
	for (i = 0; i < 2; i++) {
		struct ibv_cq_ex *cq = xcq(p->env.ctx, pd_of ? pd : NULL);

		if (!cq)
			return -23;
		p->cq[i] = ibv_cq_ex_to_cq(cq);
		p->qp[i] = su_create_qp(p, pd, p->cq[i], p->cq[i]);
		if (!p->qp[i])
			return -24;
	}
	return su_connect(p, p->qp[0], p->qp[1]) ? -25 : 0;
}

static struct ibv_cq_ex *xcq_of(struct su_pair *p, int i)
{
	return (struct ibv_cq_ex *)p->cq[i];
}

/* create_qp_ex of @type with @ops on the pair's CQs: the errno, or 0. */
static int create_with_ops(struct su_pair *p, enum ibv_qp_type type,
			   uint64_t ops)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = p->cq[0], .recv_cq = p->cq[0],
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = type,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = p->env.pd,
		.send_ops_flags = ops,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(p->env.ctx, &a);

	if (qp) {
		ibv_destroy_qp(qp);
		return 0;
	}
	return errno;
}

/* Fields every completion of the pair shares, checked. */
#define EXPECT_XWC_SL(w, id, op, len, qpn, s) do { \
	EXPECT_EQ(id, (w).wr_id); \
	EXPECT_EQ(IBV_WC_SUCCESS, (w).status); \
	EXPECT_EQ(op, (w).opcode); \
	EXPECT_EQ(len, (w).byte_len); \
	EXPECT_EQ(qpn, (w).qp_num); \
	EXPECT_EQ(0, (w).slid); \
	EXPECT_EQ(s, (w).sl); \
	EXPECT_EQ(0, (w).dlid_path_bits); \
	EXPECT_EQ((w).ts, (w).wallclock); \
} while (0)
#define EXPECT_XWC(w, id, op, len, qpn) EXPECT_XWC_SL(w, id, op, len, qpn, 0)
/* A UD receive's SL is its RoCE packet type: v2 (UDP) over IPv4. */
#define ROCE_V2_IPV4_SL 0xa

/* ------------------------------------------------------------------ */
/* RC: every opcode through ibv_wr_*                                   */
/* ------------------------------------------------------------------ */

TEST(rc_every_opcode)
{
	struct su_pair pp, *p = &pp;
	struct ibv_qp_ex *qx;
	struct ibv_sge s, sl[3];
	char h1[] = "inline ", h2[] = "list";
	struct ibv_data_buf bufs[2] = { { h1, 7 }, { h2, 4 } };
	uint64_t *word, *ret, t0, t1, last = 0;
	struct xwc w[7], r[3];
	uint8_t *b;
	int i, err;

	err = xpair_open(p, IBV_QPT_RC, NULL, NULL);
	ASSERT_EQ(0, err) TH_LOG("xpair_open step %d: %s", err, strerror(errno));
	b = p->env.buf;
	su_fill(b + SND, 64 << 10, 21);
	su_fill(b + RCV + (128 << 10), 8192, 22);	/* READ source */
	word = (uint64_t *)(b + ATOM);
	ret = (uint64_t *)(b + ATOM + 64);
	*word = 1000;
	qx = ibv_qp_to_qp_ex(p->qp[0]);
	ASSERT_NE(NULL, qx);

	s = su_sge(p, RCV, 4096);
	ASSERT_EQ(0, su_post_recv(p->qp[1], 100, &s, 1));
	s = su_sge(p, RCV + 4096, 64);
	ASSERT_EQ(0, su_post_recv(p->qp[1], 101, &s, 1));
	s = su_sge(p, RCV + 8192, 64);
	ASSERT_EQ(0, su_post_recv(p->qp[1], 102, &s, 1));

	t0 = raw_clock(p->env.ctx);
	ASSERT_NE(0, t0) TH_LOG("ibv_query_rt_values_ex: %s", strerror(errno));
	ibv_wr_start(qx);
	qx->wr_flags = IBV_SEND_SIGNALED;
	qx->wr_id = 1;	/* SEND of an SGE list: 1000 + 2000 + 96 bytes */
	ibv_wr_send(qx);
	sl[0] = su_sge(p, SND, 1000);
	sl[1] = su_sge(p, SND + 4096, 2000);
	sl[2] = su_sge(p, SND + 8192, 96);
	ibv_wr_set_sge_list(qx, 3, sl);
	qx->wr_id = 2;	/* SEND_WITH_IMM, inline */
	ibv_wr_send_imm(qx, htonl(0xabcd0001));
	ibv_wr_set_inline_data(qx, h1, 7);
	qx->wr_id = 3;	/* WRITE of one SGE */
	ibv_wr_rdma_write(qx, p->env.mr->rkey, su_addr(p, RCV + (64 << 10)));
	ibv_wr_set_sge(qx, p->env.mr->lkey, su_addr(p, SND + 16384), 5000);
	qx->wr_id = 4;	/* WRITE_WITH_IMM of an inline list */
	ibv_wr_rdma_write_imm(qx, p->env.mr->rkey,
			      su_addr(p, RCV + (96 << 10)), htonl(0xabcd0002));
	ibv_wr_set_inline_data_list(qx, 2, bufs);
	qx->wr_id = 5;	/* READ into an SGE list */
	ibv_wr_rdma_read(qx, p->env.mr->rkey, su_addr(p, RCV + (128 << 10)));
	sl[0] = su_sge(p, SND + (32 << 10), 3000);
	sl[1] = su_sge(p, SND + (40 << 10), 5192);
	ibv_wr_set_sge_list(qx, 2, sl);
	qx->wr_id = 6;
	ibv_wr_atomic_cmp_swp(qx, p->env.mr->rkey, su_addr(p, ATOM), 1000, 77);
	ibv_wr_set_sge(qx, p->env.mr->lkey, su_addr(p, ATOM + 64), 8);
	qx->wr_id = 7;
	ibv_wr_atomic_fetch_add(qx, p->env.mr->rkey, su_addr(p, ATOM), 23);
	ibv_wr_set_sge(qx, p->env.mr->lkey, su_addr(p, ATOM + 72), 8);
	ASSERT_EQ(0, ibv_wr_complete(qx));

	for (i = 0; i < 7; i++)
		ASSERT_EQ(0, xpoll(xcq_of(p, 0), &w[i], SU_TIMEOUT_MS));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, xpoll(xcq_of(p, 1), &r[i], SU_TIMEOUT_MS));
	t1 = raw_clock(p->env.ctx);

	EXPECT_XWC(w[0], 1, IBV_WC_SEND, 3096, p->qp[0]->qp_num);
	EXPECT_XWC(w[1], 2, IBV_WC_SEND, 7, p->qp[0]->qp_num);
	EXPECT_XWC(w[2], 3, IBV_WC_RDMA_WRITE, 5000, p->qp[0]->qp_num);
	EXPECT_XWC(w[3], 4, IBV_WC_RDMA_WRITE, 11, p->qp[0]->qp_num);
	EXPECT_XWC(w[4], 5, IBV_WC_RDMA_READ, 8192, p->qp[0]->qp_num);
	EXPECT_XWC(w[5], 6, IBV_WC_COMP_SWAP, 8, p->qp[0]->qp_num);
	EXPECT_XWC(w[6], 7, IBV_WC_FETCH_ADD, 8, p->qp[0]->qp_num);
	EXPECT_XWC(r[0], 100, IBV_WC_RECV, 3096, p->qp[1]->qp_num);
	EXPECT_EQ(0, r[0].flags & IBV_WC_WITH_IMM);
	EXPECT_XWC(r[1], 101, IBV_WC_RECV, 7, p->qp[1]->qp_num);
	EXPECT_TRUE(r[1].flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(0xabcd0001, r[1].imm);
	EXPECT_XWC(r[2], 102, IBV_WC_RECV_RDMA_WITH_IMM, 11, p->qp[1]->qp_num);
	EXPECT_TRUE(r[2].flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(0xabcd0002, r[2].imm);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(p->qp[0]->qp_num, r[i].src_qp);

	/* The bytes. */
	EXPECT_EQ(0, memcmp(b + RCV, b + SND, 1000));
	EXPECT_EQ(0, memcmp(b + RCV + 1000, b + SND + 4096, 2000));
	EXPECT_EQ(0, memcmp(b + RCV + 3000, b + SND + 8192, 96));
	EXPECT_EQ(0, memcmp(b + RCV + 4096, "inline ", 7));
	EXPECT_EQ(0, memcmp(b + RCV + (64 << 10), b + SND + 16384, 5000));
	EXPECT_EQ(0, memcmp(b + RCV + (96 << 10), "inline list", 11));
	EXPECT_EQ(-1, su_check(b + SND + (32 << 10), 3000, 22));
	EXPECT_EQ(0, memcmp(b + SND + (40 << 10), b + RCV + (128 << 10) + 3000,
			    5192));
	EXPECT_EQ(1000, ret[0]);	/* CMP_SWP returned the old value */
	EXPECT_EQ(77, ret[1]);		/* FETCH_ADD saw the swapped one */
	EXPECT_EQ(100, *word);

	/* Stamps: between two clock reads, in completion order per CQ. */
	for (i = 0; i < 7; i++) {
		EXPECT_LE(t0, w[i].ts);
		EXPECT_GE(t1, w[i].ts);
		EXPECT_LE(last, w[i].ts);
		last = w[i].ts;
	}
	last = 0;
	for (i = 0; i < 3; i++) {
		EXPECT_LE(t0, r[i].ts);
		EXPECT_GE(t1, r[i].ts);
		EXPECT_LE(last, r[i].ts);
		last = r[i].ts;
	}
	EXPECT_LT(t0, t1);

	/* A session with a bad piece posts nothing and says why. */
	ibv_wr_start(qx);
	qx->wr_id = 8;
	ibv_wr_atomic_fetch_add(qx, p->env.mr->rkey, su_addr(p, ATOM), 1);
	ibv_wr_set_sge(qx, p->env.mr->lkey, su_addr(p, ATOM + 64), 4);
	EXPECT_EQ(EINVAL, ibv_wr_complete(qx));
	ibv_wr_start(qx);
	qx->wr_id = 9;	/* an RC QP has no datagram address */
	ibv_wr_send(qx);
	ibv_wr_set_ud_addr(qx, NULL, 1, QKEY);
	EXPECT_EQ(EINVAL, ibv_wr_complete(qx));
	EXPECT_EQ(-1, xpoll(xcq_of(p, 0), &w[0], 200));
	EXPECT_EQ(100, *word);
	/* RC binds and invalidates memory windows; it has no TSO. */
	EXPECT_EQ(0, create_with_ops(p, IBV_QPT_RC,
				     IBV_QP_EX_WITH_SEND_WITH_INV |
				     IBV_QP_EX_WITH_LOCAL_INV |
				     IBV_QP_EX_WITH_BIND_MW));
	EXPECT_EQ(EOPNOTSUPP, create_with_ops(p, IBV_QPT_RC,
					      IBV_QP_EX_WITH_TSO));
	su_pair_close(p);
}

/* ------------------------------------------------------------------ */
/* UC: SEND and WRITE; no READ                                         */
/* ------------------------------------------------------------------ */

TEST(uc_send_and_write)
{
	struct su_pair pp, *p = &pp;
	struct ibv_qp_ex *qx;
	struct ibv_sge s;
	struct xwc w[2], r;
	uint8_t *b;
	int err;

	err = xpair_open(p, IBV_QPT_UC, NULL, NULL);
	ASSERT_EQ(0, err) TH_LOG("xpair_open step %d: %s", err, strerror(errno));
	b = p->env.buf;
	su_fill(b + SND, 16384, 31);
	qx = ibv_qp_to_qp_ex(p->qp[0]);
	ASSERT_NE(NULL, qx);
	s = su_sge(p, RCV, 8192);
	ASSERT_EQ(0, su_post_recv(p->qp[1], 200, &s, 1));

	ibv_wr_start(qx);
	qx->wr_flags = IBV_SEND_SIGNALED;
	qx->wr_id = 1;
	ibv_wr_send(qx);
	ibv_wr_set_sge(qx, p->env.mr->lkey, su_addr(p, SND), 6000);
	qx->wr_id = 2;
	ibv_wr_rdma_write(qx, p->env.mr->rkey, su_addr(p, RCV + (64 << 10)));
	ibv_wr_set_sge(qx, p->env.mr->lkey, su_addr(p, SND + 8192), 8000);
	ASSERT_EQ(0, ibv_wr_complete(qx));
	ASSERT_EQ(0, xpoll(xcq_of(p, 0), &w[0], SU_TIMEOUT_MS));
	ASSERT_EQ(0, xpoll(xcq_of(p, 0), &w[1], SU_TIMEOUT_MS));
	ASSERT_EQ(0, xpoll(xcq_of(p, 1), &r, SU_TIMEOUT_MS));
	EXPECT_XWC(w[0], 1, IBV_WC_SEND, 6000, p->qp[0]->qp_num);
	EXPECT_XWC(w[1], 2, IBV_WC_RDMA_WRITE, 8000, p->qp[0]->qp_num);
	EXPECT_XWC(r, 200, IBV_WC_RECV, 6000, p->qp[1]->qp_num);
	EXPECT_LE(w[0].ts, w[1].ts);
	EXPECT_EQ(0, memcmp(b + RCV, b + SND, 6000));
	EXPECT_EQ(0, memcmp(b + RCV + (64 << 10), b + SND + 8192, 8000));

	/* READ is refused by wr_complete, and by create. */
	ibv_wr_start(qx);
	qx->wr_id = 3;
	ibv_wr_rdma_read(qx, p->env.mr->rkey, su_addr(p, RCV));
	ibv_wr_set_sge(qx, p->env.mr->lkey, su_addr(p, SND), 64);
	EXPECT_EQ(EINVAL, ibv_wr_complete(qx));
	EXPECT_EQ(-1, xpoll(xcq_of(p, 0), &w[0], 200));
	EXPECT_EQ(EOPNOTSUPP, create_with_ops(p, IBV_QPT_UC,
					      IBV_QP_EX_WITH_RDMA_READ));
	EXPECT_EQ(EOPNOTSUPP, create_with_ops(p, IBV_QPT_UC,
					      IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD));
	EXPECT_EQ(0, create_with_ops(p, IBV_QPT_UC, IBV_QP_EX_WITH_RDMA_WRITE));
	su_pair_close(p);
}

/* ------------------------------------------------------------------ */
/* UD: SEND with ibv_wr_set_ud_addr; no WRITE                          */
/* ------------------------------------------------------------------ */

TEST(ud_send_with_ud_addr)
{
	struct su_pair pp, *p = &pp;
	struct ibv_qp_ex *qx;
	struct ibv_sge s;
	struct xwc w[2], r[2];
	uint8_t *b;
	int err;

	err = xpair_open(p, IBV_QPT_UD, NULL, NULL);
	ASSERT_EQ(0, err) TH_LOG("xpair_open step %d: %s", err, strerror(errno));
	b = p->env.buf;
	su_fill(b + SND, 4096, 41);
	qx = ibv_qp_to_qp_ex(p->qp[0]);
	ASSERT_NE(NULL, qx);
	s = su_sge(p, RCV, 40 + 1024);
	ASSERT_EQ(0, su_post_recv(p->qp[1], 300, &s, 1));
	s = su_sge(p, RCV + 4096, 40 + 1024);
	ASSERT_EQ(0, su_post_recv(p->qp[1], 301, &s, 1));

	ibv_wr_start(qx);
	qx->wr_flags = IBV_SEND_SIGNALED;
	qx->wr_id = 1;
	ibv_wr_send(qx);
	ibv_wr_set_ud_addr(qx, p->ah, p->qp[1]->qp_num, QKEY);
	ibv_wr_set_sge(qx, p->env.mr->lkey, su_addr(p, SND), 1000);
	qx->wr_id = 2;
	ibv_wr_send_imm(qx, htonl(0x5eed));
	ibv_wr_set_ud_addr(qx, p->ah, p->qp[1]->qp_num, QKEY);
	ibv_wr_set_inline_data(qx, "datagram", 8);
	ASSERT_EQ(0, ibv_wr_complete(qx));
	ASSERT_EQ(0, xpoll(xcq_of(p, 0), &w[0], SU_TIMEOUT_MS));
	ASSERT_EQ(0, xpoll(xcq_of(p, 0), &w[1], SU_TIMEOUT_MS));
	ASSERT_EQ(0, xpoll(xcq_of(p, 1), &r[0], SU_TIMEOUT_MS));
	ASSERT_EQ(0, xpoll(xcq_of(p, 1), &r[1], SU_TIMEOUT_MS));
	EXPECT_XWC(w[0], 1, IBV_WC_SEND, 1000, p->qp[0]->qp_num);
	EXPECT_XWC(w[1], 2, IBV_WC_SEND, 8, p->qp[0]->qp_num);
	EXPECT_XWC_SL(r[0], 300, IBV_WC_RECV, 40 + 1000, p->qp[1]->qp_num,
		      ROCE_V2_IPV4_SL);
	EXPECT_XWC_SL(r[1], 301, IBV_WC_RECV, 40 + 8, p->qp[1]->qp_num,
		      ROCE_V2_IPV4_SL);
	EXPECT_TRUE(r[0].flags & IBV_WC_GRH);
	EXPECT_EQ(0, r[0].flags & IBV_WC_WITH_IMM);
	EXPECT_TRUE(r[1].flags & IBV_WC_GRH);
	EXPECT_TRUE(r[1].flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(0x5eed, r[1].imm);
	EXPECT_EQ(p->qp[0]->qp_num, r[0].src_qp);
	EXPECT_EQ(p->qp[0]->qp_num, r[1].src_qp);
	EXPECT_LE(r[0].ts, r[1].ts);
	EXPECT_EQ(0, memcmp(b + RCV + 40, b + SND, 1000));
	EXPECT_EQ(0, memcmp(b + RCV + 4096 + 40, "datagram", 8));

	/* A datagram needs its address; WRITE is not a UD opcode. */
	ibv_wr_start(qx);
	qx->wr_id = 3;
	ibv_wr_send(qx);
	ibv_wr_set_sge(qx, p->env.mr->lkey, su_addr(p, SND), 64);
	EXPECT_EQ(EINVAL, ibv_wr_complete(qx));
	ibv_wr_start(qx);
	qx->wr_id = 4;
	ibv_wr_rdma_write(qx, p->env.mr->rkey, su_addr(p, RCV));
	ibv_wr_set_ud_addr(qx, p->ah, p->qp[1]->qp_num, QKEY);
	ibv_wr_set_sge(qx, p->env.mr->lkey, su_addr(p, SND), 64);
	EXPECT_EQ(EINVAL, ibv_wr_complete(qx));
	EXPECT_EQ(-1, xpoll(xcq_of(p, 0), &w[0], 200));
	EXPECT_EQ(EOPNOTSUPP, create_with_ops(p, IBV_QPT_UD,
					      IBV_QP_EX_WITH_RDMA_WRITE));
	EXPECT_EQ(EOPNOTSUPP, create_with_ops(p, IBV_QPT_UD,
					      IBV_QP_EX_WITH_BIND_MW));
	su_pair_close(p);
}

/* ------------------------------------------------------------------ */
/* Extended CQ flags and the device clock                              */
/* ------------------------------------------------------------------ */

TEST(cq_ex_flags_and_clock)
{
	struct ibv_cq_init_attr_ex a = { .cqe = 16, .wc_flags = ALL_WC_FLAGS };
	struct ibv_device_attr_ex dev = {};
	struct ibv_context *ctx = su_open();
	uint64_t prev = 0, now;
	struct ibv_cq_ex *cq;
	int i;

	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(0, ibv_query_device_ex(ctx, NULL, &dev));
	EXPECT_EQ(1000000, dev.hca_core_clock);	/* kHz: a ns clock */
	EXPECT_EQ(~0ULL, dev.completion_timestamp_mask);
	cq = ibv_create_cq_ex(ctx, &a);
	ASSERT_NE(NULL, cq);
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(cq)));
	a.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_CVLAN;
	EXPECT_EQ(NULL, ibv_create_cq_ex(ctx, &a));
	EXPECT_EQ(EOPNOTSUPP, errno);
	a.wc_flags = IBV_WC_EX_WITH_FLOW_TAG;
	EXPECT_EQ(NULL, ibv_create_cq_ex(ctx, &a));
	EXPECT_EQ(EOPNOTSUPP, errno);
	for (i = 0; i < 5; i++) {
		now = raw_clock(ctx);
		EXPECT_LT(prev, now);
		prev = now;
	}
	ibv_close_device(ctx);
}

/* ------------------------------------------------------------------ */
/* Thread domain and parent domain                                     */
/* ------------------------------------------------------------------ */

struct allocs {
	int alloc, freed, defaults;
	int use_default;
	struct ibv_pd *pd_seen;
	void *ctx_seen;
};

static void *pd_alloc(struct ibv_pd *pd, void *pd_context, size_t size,
		      size_t alignment, uint64_t type)
{
	struct allocs *a = pd_context;
	void *mem;

	(void)type;
	a->pd_seen = pd;
	a->ctx_seen = pd_context;
	if (a->use_default) {
		a->defaults++;
		return IBV_ALLOCATOR_USE_DEFAULT;
	}
	if (posix_memalign(&mem, alignment < sizeof(void *) ? sizeof(void *) :
			   alignment, size))
		return NULL;
	memset(mem, 0xa5, size);	/* the provider must not rely on zeroes */
	a->alloc++;
	return mem;
}

static void pd_free(struct ibv_pd *pd, void *pd_context, void *ptr,
		    uint64_t type)
{
	struct allocs *a = pd_context;

	(void)pd;
	(void)type;
	a->freed++;
	free(ptr);
}

struct domain {
	struct ibv_td *td;
	struct ibv_pd *parent;
	struct allocs *allocs;
};

static struct ibv_pd *make_parent(struct su_pair *p, void *arg)
{
	struct domain *d = arg;
	struct ibv_td_init_attr ta = {};
	struct ibv_parent_domain_init_attr pa = {
		.pd = p->env.pd,
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			     IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.alloc = pd_alloc,
		.free = pd_free,
		.pd_context = d->allocs,
	};

	d->td = ibv_alloc_td(p->env.ctx, &ta);
	if (!d->td)
		return NULL;
	pa.td = d->td;
	d->parent = ibv_alloc_parent_domain(p->env.ctx, &pa);
	return d->parent;
}

/* Destroys what lives on the parent domain, then the domains. */
static int close_domain(struct su_pair *p, struct domain *d)
{
	int i, err = 0;

	for (i = 0; i < 2; i++) {
		if (p->qp[i] && ibv_destroy_qp(p->qp[i]))
			err = -1;
		p->qp[i] = NULL;
		if (p->cq[i] && ibv_destroy_cq(p->cq[i]))
			err = -2;
		p->cq[i] = NULL;
	}
	if (d->parent && ibv_dealloc_pd(d->parent))
		err = -3;
	if (d->td && ibv_dealloc_td(d->td))
		err = -4;
	return err;
}

static void domain_round(struct __test_metadata *_metadata, int use_default)
{
	struct allocs al = { .use_default = use_default };
	struct domain d = { .allocs = &al };
	struct su_pair pp, *p = &pp;
	struct ibv_qp_ex *qx;
	struct ibv_sge s;
	struct xwc w, r;
	uint8_t *b;
	int i, err;

	err = xpair_open(p, IBV_QPT_RC, make_parent, &d);
	ASSERT_EQ(0, err) TH_LOG("xpair_open step %d: %s", err, strerror(errno));
	ASSERT_NE(NULL, d.parent);
	/* Two QPs and two CQs: four objects through the allocator. */
	if (use_default) {
		EXPECT_EQ(4, al.defaults);
		EXPECT_EQ(0, al.alloc);
	} else {
		EXPECT_EQ(4, al.alloc);
	}
	EXPECT_EQ(d.parent, al.pd_seen);
	EXPECT_EQ(&al, al.ctx_seen);
	EXPECT_EQ(d.parent, p->qp[0]->pd);
	/* In use: neither the PD nor the TD can go. */
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(p->env.pd));
	EXPECT_EQ(EBUSY, ibv_dealloc_td(d.td));
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(d.parent));

	b = p->env.buf;
	qx = ibv_qp_to_qp_ex(p->qp[0]);
	ASSERT_NE(NULL, qx);
	for (i = 0; i < 20; i++) {
		su_fill(b + SND, 2048, 50 + i);
		s = su_sge(p, RCV, 4096);
		ASSERT_EQ(0, su_post_recv(p->qp[1], 400 + i, &s, 1));
		ibv_wr_start(qx);
		qx->wr_flags = IBV_SEND_SIGNALED;
		qx->wr_id = i;
		ibv_wr_send(qx);
		ibv_wr_set_sge(qx, p->env.mr->lkey, su_addr(p, SND), 2048);
		ASSERT_EQ(0, ibv_wr_complete(qx));
		ASSERT_EQ(0, xpoll(xcq_of(p, 0), &w, SU_TIMEOUT_MS));
		ASSERT_EQ(0, xpoll(xcq_of(p, 1), &r, SU_TIMEOUT_MS));
		EXPECT_XWC(w, i, IBV_WC_SEND, 2048, p->qp[0]->qp_num);
		EXPECT_XWC(r, 400 + i, IBV_WC_RECV, 2048, p->qp[1]->qp_num);
		EXPECT_EQ(-1, su_check(b + RCV, 2048, 50 + i));
	}
	/* ibv_post_send on the same QP: no lock, same ring. */
	s = su_sge(p, RCV, 4096);
	ASSERT_EQ(0, su_post_recv(p->qp[1], 500, &s, 1));
	ASSERT_EQ(0, su_post_send(p->qp[0], IBV_WR_SEND, 77, &s, 1,
				  IBV_SEND_SIGNALED, 0, 0));
	ASSERT_EQ(0, xpoll(xcq_of(p, 0), &w, SU_TIMEOUT_MS));
	EXPECT_EQ(77, w.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, w.status);

	EXPECT_EQ(0, close_domain(p, &d));
	if (use_default) {
		EXPECT_EQ(0, al.freed);
	} else {
		EXPECT_EQ(al.alloc, al.freed);
	}
	su_pair_close(p);
}

TEST(parent_domain_with_thread_domain)
{
	domain_round(_metadata, 0);
}

TEST(parent_domain_allocator_uses_default)
{
	domain_round(_metadata, 1);
}

TEST(parent_domain_arguments)
{
	struct ibv_context *ctx = su_open();
	struct ibv_td_init_attr ta = { .comp_mask = 1 };
	struct ibv_parent_domain_init_attr pa = {};
	struct ibv_pd *pd, *parent;

	ASSERT_NE(NULL, ctx);
	EXPECT_EQ(NULL, ibv_alloc_td(ctx, &ta));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, ibv_alloc_parent_domain(ctx, &pa));	/* no PD */
	pd = ibv_alloc_pd(ctx);
	ASSERT_NE(NULL, pd);
	pa.pd = pd;
	pa.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS;	/* no functions */
	EXPECT_EQ(NULL, ibv_alloc_parent_domain(ctx, &pa));
	pa.comp_mask = 0;
	parent = ibv_alloc_parent_domain(ctx, &pa);
	ASSERT_NE(NULL, parent);
	pa.pd = parent;		/* a parent of a parent */
	EXPECT_EQ(NULL, ibv_alloc_parent_domain(ctx, &pa));
	EXPECT_EQ(0, ibv_dealloc_pd(parent));
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
	ibv_close_device(ctx);
}

TEST_HARNESS_MAIN
