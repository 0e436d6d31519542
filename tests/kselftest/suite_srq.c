// SPDX-License-Identifier: GPL-2.0
/*
 * Shared receive queues through libibverbs and the provider (posts on the
 * mapped ring, no system call), RC QPs receiving from them, every byte
 * checked:
 * - one SRQ feeding three RC QPs, hundreds of messages of varying length
 *   through a small SRQ that wraps many times, each receive completion on
 *   the right QP with the SRQ WQE's wr_id; ibv_post_recv on such a QP is
 *   EINVAL;
 * - a full SRQ refuses posts with ENOMEM until the device has consumed a
 *   WQE (the consumer index it writes);
 * - the limit: IBV_EVENT_SRQ_LIMIT_REACHED once when fewer than srq_limit
 *   WQEs are left, the limit reads 0 afterwards;
 * - growing an SRQ (IBV_SRQ_MAX_WR, IBV_DEVICE_SRQ_RESIZE): receives posted
 *   before, wrapped in the old ring, complete in order after it, then
 *   receives beyond the old depth; the provider posts to the new ring;
 * - a QP on the SRQ moved to error gets IBV_EVENT_QP_LAST_WQE_REACHED and
 *   its flush leaves the SRQ's WQEs to the other QPs;
 * - an empty SRQ makes the sender wait (RNR) until a receive is posted;
 * - a QP of another PD cannot use the SRQ, and an SRQ in use cannot be
 *   destroyed.
 */
#include <arpa/inet.h>

#include "suite.h"
#include "kselftest_harness.h"

#define SLOT 4096
#define RX (256 << 10)		/* receive slots in the pair's buffer */
#define RX_SLOTS 64

static struct ibv_srq *make_srq(struct ibv_pd *pd, uint32_t wr)
{
	struct ibv_srq_init_attr a = {
		.attr = { .max_wr = wr, .max_sge = 2 },
	};

	return ibv_create_srq(pd, &a);
}

/* A sender with its own RQ on cq[0], and a receiver on @srq on cq[1]. */
static int add_qps(struct su_pair *p, struct ibv_srq *srq,
		   struct ibv_qp **s, struct ibv_qp **r)
{
	*s = su_create_qp(p, p->env.pd, p->cq[0], p->cq[0]);
	p->o.srq = srq;
	*r = su_create_qp(p, p->env.pd, p->cq[1], p->cq[1]);
	p->o.srq = NULL;
	if (!*s || !*r)
		return -1;
	return su_connect(p, *s, *r);
}

/* Destroys the @n pairs add_qps() made, then @srq; the SRQ's status. */
static int drop_qps_and_srq(struct ibv_srq *srq, struct ibv_qp **s,
			    struct ibv_qp **r, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		ibv_destroy_qp(s[i]);
		ibv_destroy_qp(r[i]);
	}
	return ibv_destroy_srq(srq);
}

static uint32_t msg_len(unsigned int seed)
{
	return 1 + (seed * 2654435761u) % 4000;
}

static int post_slot(struct su_pair *p, struct ibv_srq *srq, uint64_t wr_id)
{
	return su_post_srq_zeroed(p, srq, wr_id, RX + (wr_id % RX_SLOTS) * SLOT,
				  SLOT);
}

static int send_msg(struct su_pair *p, struct ibv_qp *qp, unsigned int seed,
		    size_t off)
{
	struct ibv_sge s = su_sge(p, off, msg_len(seed));

	su_fill(p->env.buf + off, msg_len(seed), seed);
	return su_post_send(qp, IBV_WR_SEND, seed, &s, 1, IBV_SEND_SIGNALED,
			    0, 0);
}

FIXTURE(srq)
{
	struct su_pair p;
};

FIXTURE_SETUP(srq)
{
	int err = su_pair_open(&self->p, NULL);

	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
}

FIXTURE_TEARDOWN(srq)
{
	su_pair_close(&self->p);
}

#define NQP 3
#define PER_QP 150
#define SRQ_WR 16

TEST_F(srq, shared_by_three_qps)
{
	struct su_pair *p = &self->p;
	struct ibv_qp *s[NQP], *r[NQP];
	unsigned int sent[NQP] = { 0 }, got[NQP] = { 0 }, done = 0, acked = 0;
	uint64_t posted = 0, received = 0;
	struct ibv_srq_attr sa;
	struct ibv_sge sg;
	struct ibv_srq *srq;
	struct ibv_wc wc[8];
	long end;
	int i, n, k;

	srq = make_srq(p->env.pd, SRQ_WR);
	ASSERT_NE(NULL, srq) TH_LOG("create_srq: %s", strerror(errno));
	ASSERT_EQ(0, ibv_query_srq(srq, &sa));
	EXPECT_LE(SRQ_WR, sa.max_wr);
	EXPECT_LE(2, sa.max_sge);
	EXPECT_EQ(0, sa.srq_limit);
	for (i = 0; i < NQP; i++)
		ASSERT_EQ(0, add_qps(p, srq, &s[i], &r[i]));
	sg = su_sge(p, RX, 8);
	EXPECT_EQ(EINVAL, su_post_recv(r[0], 1, &sg, 1));

	end = su_now_ms() + 60000;
	while (done < NQP * PER_QP) {
		ASSERT_LT(su_now_ms(), end) TH_LOG("stuck: posted %lu received %lu",
						   (unsigned long)posted,
						   (unsigned long)received);
		while (posted - received < SRQ_WR)
			ASSERT_EQ(0, post_slot(p, srq, posted++));
		/* Round-robin, each sender's source slots its own. */
		for (i = 0; i < NQP; i++)
			if (sent[i] < PER_QP && sent[i] - got[i] < 4) {
				ASSERT_EQ(0, send_msg(p, s[i], i * 1000 + sent[i],
						      (i * 8 + sent[i] % 8) * SLOT));
				sent[i]++;
			}
		n = ibv_poll_cq(p->cq[1], 8, wc);
		ASSERT_LE(0, n);
		for (k = 0; k < n; k++) {
			unsigned int seed;
			uint8_t *d;

			ASSERT_EQ(IBV_WC_SUCCESS, wc[k].status)
				TH_LOG("%s", ibv_wc_status_str(wc[k].status));
			ASSERT_EQ(IBV_WC_RECV, wc[k].opcode);
			/* The SRQ is consumed in order of arrival. */
			ASSERT_EQ(received, wc[k].wr_id);
			for (i = 0; i < NQP && r[i]->qp_num != wc[k].qp_num; i++)
				;
			ASSERT_GT(NQP, i) TH_LOG("qpn %u", wc[k].qp_num);
			seed = i * 1000 + got[i];
			d = p->env.buf + RX + (wc[k].wr_id % RX_SLOTS) * SLOT;
			ASSERT_EQ(msg_len(seed), wc[k].byte_len);
			ASSERT_EQ(-1, su_check(d, msg_len(seed), seed))
				TH_LOG("qp %d message %u", i, got[i]);
			ASSERT_EQ(-1, su_check_byte(d + msg_len(seed),
						    SLOT - msg_len(seed), 0));
			got[i]++;
			received++;
			done++;
		}
		n = ibv_poll_cq(p->cq[0], 8, wc);
		ASSERT_LE(0, n);
		for (k = 0; k < n; k++)
			ASSERT_EQ(IBV_WC_SUCCESS, wc[k].status);
		acked += n;
	}
	while (acked < NQP * PER_QP && su_poll(p->cq[0], wc, SU_TIMEOUT_MS)) {
		ASSERT_EQ(IBV_WC_SUCCESS, wc[0].status);
		acked++;
	}
	EXPECT_EQ(NQP * PER_QP, acked);
	for (i = 0; i < NQP; i++)
		EXPECT_EQ(PER_QP, got[i]);
	EXPECT_EQ(0, drop_qps_and_srq(srq, s, r, NQP));
}

TEST_F(srq, full_until_the_device_consumes)
{
	struct su_pair *p = &self->p;
	struct ibv_srq *srq = make_srq(p->env.pd, 8);
	struct ibv_qp *s, *r;
	struct ibv_wc wc;
	int n = 0, err;

	ASSERT_NE(NULL, srq);
	ASSERT_EQ(0, add_qps(p, srq, &s, &r));
	while (!(err = post_slot(p, srq, n)) && n < 4096)
		n++;
	EXPECT_EQ(ENOMEM, err);
	EXPECT_LE(8, n);
	ASSERT_GE(RX_SLOTS, n);
	ASSERT_EQ(0, send_msg(p, s, 1, 0));
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, wc.wr_id);
	EXPECT_EQ(-1, su_check(p->env.buf + RX, msg_len(1), 1));
	/* One slot came free, and only one. */
	EXPECT_EQ(0, post_slot(p, srq, n));
	EXPECT_EQ(ENOMEM, post_slot(p, srq, n + 1));
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, drop_qps_and_srq(srq, &s, &r, 1));
}

TEST_F(srq, limit_event)
{
	struct su_pair *p = &self->p;
	struct ibv_srq *srq = make_srq(p->env.pd, 16);
	struct ibv_srq_attr sa = { .srq_limit = 4 };
	struct ibv_qp *s, *r;
	struct ibv_wc wc;
	int i;

	ASSERT_NE(NULL, srq);
	ASSERT_EQ(0, add_qps(p, srq, &s, &r));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, post_slot(p, srq, i));
	ASSERT_EQ(0, ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT));
	memset(&sa, 0, sizeof(sa));
	ASSERT_EQ(0, ibv_query_srq(srq, &sa));
	EXPECT_EQ(4, sa.srq_limit);

	/* 4 left: not below the limit. */
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, send_msg(p, s, i, 0));
		ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	}
	EXPECT_FALSE(su_wait_async(p->env.ctx, IBV_EVENT_SRQ_LIMIT_REACHED,
				   NULL, 300));
	ASSERT_EQ(0, send_msg(p, s, 4, 0));
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_TRUE(su_wait_async(p->env.ctx, IBV_EVENT_SRQ_LIMIT_REACHED,
				  srq, SU_TIMEOUT_MS));
	ASSERT_EQ(0, ibv_query_srq(srq, &sa));
	EXPECT_EQ(0, sa.srq_limit);
	/* Disarmed: once. */
	ASSERT_EQ(0, send_msg(p, s, 5, 0));
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_FALSE(su_wait_async(p->env.ctx, IBV_EVENT_SRQ_LIMIT_REACHED,
				   NULL, 300));
	for (i = 0; i < 6; i++)
		ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(0, drop_qps_and_srq(srq, &s, &r, 1));
}

/* One SEND of message @seed from @s into the SRQ WQE @wr_id; bytes checked. */
static void send_into(struct __test_metadata *_metadata, struct su_pair *p,
		      struct ibv_qp *s, unsigned int seed, uint64_t wr_id)
{
	uint8_t *d = p->env.buf + RX + (wr_id % RX_SLOTS) * SLOT;
	struct ibv_wc wc;

	ASSERT_EQ(0, send_msg(p, s, seed, 0));
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status)
		TH_LOG("%s", ibv_wc_status_str(wc.status));
	ASSERT_EQ(wr_id, wc.wr_id);
	ASSERT_EQ(msg_len(seed), wc.byte_len);
	ASSERT_EQ(-1, su_check(d, msg_len(seed), seed)) TH_LOG("wr_id %lu",
							   (unsigned long)wr_id);
	ASSERT_EQ(-1, su_check_byte(d + msg_len(seed), SLOT - msg_len(seed), 0));
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
}

TEST_F(srq, grow_keeps_posted_receives_in_order)
{
	struct su_pair *p = &self->p;
	struct ibv_srq *srq = make_srq(p->env.pd, 8);
	struct ibv_srq_attr sa = {};
	struct ibv_device_attr da;
	struct ibv_qp *s, *r;
	uint64_t posted = 0, got = 0;
	uint32_t old_wr;

	ASSERT_NE(NULL, srq);
	ASSERT_EQ(0, ibv_query_device(p->env.ctx, &da));
	ASSERT_TRUE(da.device_cap_flags & IBV_DEVICE_SRQ_RESIZE);
	ASSERT_EQ(0, add_qps(p, srq, &s, &r));
	ASSERT_EQ(0, ibv_query_srq(srq, &sa));
	old_wr = sa.max_wr;
	ASSERT_GE(16, old_wr);
	/* Fill it, let the device take three, refill: the ring wraps. */
	while (!post_slot(p, srq, posted))
		posted++;
	ASSERT_EQ(old_wr, posted);
	for (; got < 3; got++)
		send_into(_metadata, p, s, 100 + got, got);
	while (!post_slot(p, srq, posted))
		posted++;
	ASSERT_EQ(old_wr + 3, posted);

	/* Smaller than it is: nothing changes. */
	sa.max_wr = old_wr / 2;
	EXPECT_EQ(0, ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR));
	ASSERT_EQ(0, ibv_query_srq(srq, &sa));
	EXPECT_EQ(old_wr, sa.max_wr);
	sa.max_wr = 1U << 30;
	EXPECT_NE(0, ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR));

	sa.max_wr = 4 * old_wr;
	sa.srq_limit = 2 * old_wr; /* above the old depth: valid with it */
	ASSERT_EQ(0, ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
		TH_LOG("modify_srq: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	ASSERT_EQ(0, ibv_query_srq(srq, &sa));
	EXPECT_LE(4 * old_wr, sa.max_wr);
	EXPECT_EQ(2 * old_wr, sa.srq_limit);
	ASSERT_GE(RX_SLOTS, sa.max_wr);
	/* Room for more than the old depth, on the new ring. */
	while (!post_slot(p, srq, posted))
		posted++;
	ASSERT_EQ(got + sa.max_wr, posted);
	/* Everything completes in the order it was posted. */
	for (; got < posted; got++)
		send_into(_metadata, p, s, 100 + got, got);
	EXPECT_TRUE(su_wait_async(p->env.ctx, IBV_EVENT_SRQ_LIMIT_REACHED,
				  srq, SU_TIMEOUT_MS));
	/* And the new ring keeps serving after it wrapped. */
	for (; got < posted + 8; got++) {
		ASSERT_EQ(0, post_slot(p, srq, got));
		send_into(_metadata, p, s, 100 + got, got);
	}
	EXPECT_EQ(0, drop_qps_and_srq(srq, &s, &r, 1));
}

TEST_F(srq, last_wqe_reached_leaves_the_srq_alone)
{
	struct su_pair *p = &self->p;
	struct ibv_srq *srq = make_srq(p->env.pd, 16);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_qp *s[2], *r[2];
	struct ibv_wc wc;
	int i;

	ASSERT_NE(NULL, srq);
	ASSERT_EQ(0, add_qps(p, srq, &s[0], &r[0]));
	ASSERT_EQ(0, add_qps(p, srq, &s[1], &r[1]));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, post_slot(p, srq, i));
	ASSERT_EQ(0, ibv_modify_qp(r[0], &a, IBV_QP_STATE));
	EXPECT_TRUE(su_wait_async(p->env.ctx, IBV_EVENT_QP_LAST_WQE_REACHED,
				  r[0], SU_TIMEOUT_MS));
	/* Its flush took none of the SRQ's WQEs. */
	EXPECT_EQ(0, su_poll(p->cq[1], &wc, 200));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, send_msg(p, s[1], 10 + i, 0));
		ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(r[1]->qp_num, wc.qp_num);
		EXPECT_EQ(i, wc.wr_id);
		EXPECT_EQ(-1, su_check(p->env.buf + RX + i * SLOT,
				       msg_len(10 + i), 10 + i));
		ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	}
	EXPECT_EQ(0, drop_qps_and_srq(srq, s, r, 2));
}

TEST_F(srq, empty_srq_rnr_then_post)
{
	struct su_pair *p = &self->p;
	struct ibv_srq *srq = make_srq(p->env.pd, 16);
	struct ibv_qp *s, *r;
	struct ibv_wc wc;

	ASSERT_NE(NULL, srq);
	ASSERT_EQ(0, add_qps(p, srq, &s, &r));
	ASSERT_EQ(0, send_msg(p, s, 3, 0));
	/* The sender waits on RNR retries (rnr_retry 7: for ever). */
	EXPECT_EQ(0, su_poll(p->cq[0], &wc, 300));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(s));
	ASSERT_EQ(0, post_slot(p, srq, 9));
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(9, wc.wr_id);
	EXPECT_EQ(-1, su_check(p->env.buf + RX + 9 * SLOT, msg_len(3), 3));
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, drop_qps_and_srq(srq, &s, &r, 1));
}

TEST_F(srq, other_pd_refused_and_busy_while_used)
{
	struct su_pair *p = &self->p;
	struct ibv_pd *pd2 = ibv_alloc_pd(p->env.ctx);
	struct ibv_srq *srq2, *srq;
	struct ibv_qp *qp;

	ASSERT_NE(NULL, pd2);
	srq2 = make_srq(pd2, 16);
	ASSERT_NE(NULL, srq2);
	p->o.srq = srq2;
	EXPECT_EQ(NULL, su_create_qp(p, p->env.pd, p->cq[1], p->cq[1]));
	p->o.srq = NULL;
	EXPECT_EQ(0, ibv_destroy_srq(srq2));
	EXPECT_EQ(0, ibv_dealloc_pd(pd2));

	srq = make_srq(p->env.pd, 16);
	ASSERT_NE(NULL, srq);
	p->o.srq = srq;
	qp = su_create_qp(p, p->env.pd, p->cq[1], p->cq[1]);
	p->o.srq = NULL;
	ASSERT_NE(NULL, qp);
	EXPECT_NE(0, ibv_destroy_srq(srq));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

TEST_HARNESS_MAIN
