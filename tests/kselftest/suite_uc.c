// SPDX-License-Identifier: GPL-2.0
/*
 * UC through libibverbs and the provider, a connected UC pair, every byte
 * checked:
 * - SEND, RDMA WRITE and RDMA WRITE with immediate, small and over many
 *   MTU-sized slices, inline too, and through the ibv_wr_* API;
 * - unreliable: a SEND without a posted receive and a WRITE with a bad
 *   rkey are dropped, the sender completes with success, no byte moves,
 *   both QPs stay in RTS and `uc_drops` moves; the next message arrives;
 * - READ and atomics are refused at post time (EINVAL), on both posting
 *   paths, and a UC QP cannot be created to offer them.
 */
#include <arpa/inet.h>

#include "suite.h"
#include "kselftest_harness.h"

#define SRC 0
#define DST (512 << 10)
#define LEN_BIG (200 << 10)

FIXTURE(uc)
{
	struct su_pair p;
	uint8_t *dst;
};

FIXTURE_SETUP(uc)
{
	struct su_opts o = {
		.qp_type = IBV_QPT_UC, .inline_data = 64,
		.qp_access = IBV_ACCESS_REMOTE_WRITE,
	};
	int err = su_pair_open(&self->p, &o);

	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	self->dst = self->p.env.buf + DST;
}

FIXTURE_TEARDOWN(uc)
{
	su_pair_close(&self->p);
}

static void prep(struct su_pair *p, uint32_t len, unsigned int seed)
{
	su_fill(p->env.buf + SRC, len, seed);
	memset(p->env.buf + DST, 0, LEN_BIG + 4096);
}

TEST_F(uc, send_write_write_imm_bytes)
{
	static const uint32_t lens[] = { 1, 1000, 4096, 65537, LEN_BIG };
	struct su_pair *p = &self->p;
	struct ibv_sge s, r;
	struct ibv_wc wc;
	unsigned int i;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint32_t len = lens[i];

		/* SEND */
		prep(p, len, i + 1);
		r = su_sge(p, DST, LEN_BIG);
		s = su_sge(p, SRC, len);
		ASSERT_EQ(0, su_post_recv(p->qp[1], 100 + i, &r, 1));
		ASSERT_EQ(0, su_post_send(p->qp[0], IBV_WR_SEND, i, &s, 1,
					  IBV_SEND_SIGNALED, 0, 0));
		ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(IBV_WC_SEND, wc.opcode);
		ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status)
			TH_LOG("%s", ibv_wc_status_str(wc.status));
		EXPECT_EQ(IBV_WC_RECV, wc.opcode);
		EXPECT_EQ(100 + i, wc.wr_id);
		EXPECT_EQ(len, wc.byte_len);
		EXPECT_EQ(0, wc.wc_flags);
		EXPECT_EQ(-1, su_check(self->dst, len, i + 1)) TH_LOG("len %u", len);
		EXPECT_EQ(-1, su_check_byte(self->dst + len, 4096, 0));

		/* RDMA WRITE: no receive consumed. */
		prep(p, len, i + 11);
		ASSERT_EQ(0, su_post_send(p->qp[0], IBV_WR_RDMA_WRITE, i, &s, 1,
					  IBV_SEND_SIGNALED, su_addr(p, DST),
					  p->env.mr->rkey));
		ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(IBV_WC_RDMA_WRITE, wc.opcode);
		EXPECT_EQ(-1, su_check(self->dst, len, i + 11)) TH_LOG("len %u", len);
		EXPECT_EQ(-1, su_check_byte(self->dst + len, 4096, 0));
		EXPECT_EQ(0, su_poll(p->cq[1], &wc, 0));

		/* RDMA WRITE with immediate: the bytes, and a receive. */
		prep(p, len, i + 21);
		{
			struct ibv_send_wr wr = {
				.wr_id = i, .sg_list = &s, .num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
				.send_flags = IBV_SEND_SIGNALED,
				.imm_data = htonl(0x5000 + i),
			}, *bad;

			wr.wr.rdma.remote_addr = su_addr(p, DST);
			wr.wr.rdma.rkey = p->env.mr->rkey;
			r = su_sge(p, DST + LEN_BIG + 4096, 16);
			ASSERT_EQ(0, su_post_recv(p->qp[1], 200 + i, &r, 1));
			ASSERT_EQ(0, ibv_post_send(p->qp[0], &wr, &bad));
		}
		ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, wc.opcode);
		EXPECT_EQ(200 + i, wc.wr_id);
		EXPECT_EQ(len, wc.byte_len);
		EXPECT_EQ(IBV_WC_WITH_IMM, wc.wc_flags);
		EXPECT_EQ(0x5000 + i, ntohl(wc.imm_data));
		EXPECT_EQ(-1, su_check(self->dst, len, i + 21)) TH_LOG("len %u", len);
	}

	/* Inline SEND. */
	{
		char msg[] = "unreliable, connected";
		struct ibv_sge is = { (uintptr_t)msg, sizeof(msg), 0 };

		memset(self->dst, 0, 64);
		r = su_sge(p, DST, 64);
		ASSERT_EQ(0, su_post_recv(p->qp[1], 7, &r, 1));
		ASSERT_EQ(0, su_post_send(p->qp[0], IBV_WR_SEND, 7, &is, 1,
					  IBV_SEND_SIGNALED | IBV_SEND_INLINE,
					  0, 0));
		ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(sizeof(msg), wc.byte_len);
		EXPECT_EQ(0, memcmp(self->dst, msg, sizeof(msg)));
		ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	}
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(p->qp[0]));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(p->qp[1]));
}

TEST_F(uc, send_without_receive_is_dropped)
{
	struct su_pair *p = &self->p;
	struct ibv_sge s = su_sge(p, SRC, 3000), r;
	struct ibv_wc wc;
	long before = su_counter("uc_drops");

	ASSERT_LE(0, before) TH_LOG("no uc_drops in rdma statistic");
	prep(p, 3000, 1);
	ASSERT_EQ(0, su_post_send(p->qp[0], IBV_WR_SEND, 1, &s, 1,
				  IBV_SEND_SIGNALED, 0, 0));
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(before + 1, su_counter_after("uc_drops"));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(p->qp[0]));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(p->qp[1]));

	/* A receive posted now gets the next message only. */
	r = su_sge(p, DST, 4096);
	ASSERT_EQ(0, su_post_recv(p->qp[1], 2, &r, 1));
	EXPECT_EQ(0, su_poll(p->cq[1], &wc, 200));
	EXPECT_EQ(-1, su_check_byte(self->dst, 4096, 0));
	prep(p, 3000, 2);
	ASSERT_EQ(0, su_post_send(p->qp[0], IBV_WR_SEND, 3, &s, 1,
				  IBV_SEND_SIGNALED, 0, 0));
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(2, wc.wr_id);
	EXPECT_EQ(-1, su_check(self->dst, 3000, 2));
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
}

TEST_F(uc, write_with_bad_rkey_is_dropped)
{
	struct su_pair *p = &self->p;
	struct ibv_sge s = su_sge(p, SRC, 5000);
	struct ibv_wc wc;
	long before = su_counter("uc_drops");

	ASSERT_LE(0, before) TH_LOG("no uc_drops in rdma statistic");
	prep(p, 5000, 3);
	ASSERT_EQ(0, su_post_send(p->qp[0], IBV_WR_RDMA_WRITE, 1, &s, 1,
				  IBV_SEND_SIGNALED, su_addr(p, DST),
				  p->env.mr->rkey ^ 0x5a5a00));
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(-1, su_check_byte(self->dst, LEN_BIG, 0));
	EXPECT_EQ(before + 1, su_counter_after("uc_drops"));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(p->qp[0]));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(p->qp[1]));
	EXPECT_EQ(0, su_poll(p->cq[1], &wc, 0));

	/* The connection still works. */
	ASSERT_EQ(0, su_post_send(p->qp[0], IBV_WR_RDMA_WRITE, 2, &s, 1,
				  IBV_SEND_SIGNALED, su_addr(p, DST),
				  p->env.mr->rkey));
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(-1, su_check(self->dst, 5000, 3));
}

TEST_F(uc, read_and_atomics_are_refused_at_post)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP,
		IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	struct su_pair *p = &self->p;
	struct ibv_sge s = su_sge(p, SRC, 8);
	struct ibv_wc wc;
	unsigned int i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		EXPECT_EQ(EINVAL, su_post_send(p->qp[0], ops[i], i, &s, 1,
					       IBV_SEND_SIGNALED,
					       su_addr(p, DST),
					       p->env.mr->rkey))
			TH_LOG("op %d", ops[i]);
	EXPECT_EQ(0, su_poll(p->cq[0], &wc, 100));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(p->qp[0]));
}

TEST(wr_api_and_send_ops)
{
	struct su_opts o = {
		.qp_type = IBV_QPT_UC, .qp_ex = 1,
		.qp_access = IBV_ACCESS_REMOTE_WRITE,
	};
	struct ibv_qp_init_attr_ex a;
	struct su_pair p;
	struct ibv_qp_ex *qx;
	struct ibv_wc wc;
	int err;

	err = su_pair_open(&p, &o);
	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	qx = ibv_qp_to_qp_ex(p.qp[0]);
	ASSERT_NE(NULL, qx);
	su_fill(p.env.buf, 10000, 6);
	ibv_wr_start(qx);
	qx->wr_id = 1;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qx, p.env.mr->rkey, su_addr(&p, DST));
	ibv_wr_set_sge(qx, p.env.mr->lkey, su_addr(&p, 0), 10000);
	ASSERT_EQ(0, ibv_wr_complete(qx));
	ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(-1, su_check(p.env.buf + DST, 10000, 6));

	ibv_wr_start(qx);
	qx->wr_id = 2;
	ibv_wr_rdma_read(qx, p.env.mr->rkey, su_addr(&p, DST));
	ibv_wr_set_sge(qx, p.env.mr->lkey, su_addr(&p, 0), 8);
	EXPECT_EQ(EINVAL, ibv_wr_complete(qx));

	/* A UC QP that would offer READ is not made. */
	memset(&a, 0, sizeof(a));
	a.send_cq = a.recv_cq = p.cq[0];
	a.cap.max_send_wr = a.cap.max_recv_wr = 4;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	a.qp_type = IBV_QPT_UC;
	a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	a.pd = p.env.pd;
	a.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ;
	EXPECT_EQ(NULL, ibv_create_qp_ex(p.env.ctx, &a));
	su_pair_close(&p);
}

TEST_HARNESS_MAIN
