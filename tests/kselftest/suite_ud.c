// SPDX-License-Identifier: GPL-2.0
/*
 * UD through libibverbs and the provider, two UD QPs and an AH to the
 * guest's own IPv4 GID, every byte checked:
 * - a datagram arrives behind 40 bytes of GRH area holding the RoCE v2
 *   IPv4 header (bytes 20..39, valid checksum, the addresses of the GID),
 *   with IBV_WC_GRH, src_qp, byte_len = 40 + length and the immediate;
 *   inline sends and the ibv_wr_* API (ibv_wr_set_ud_addr) too;
 * - a qkey mismatch, no posted receive or no ready destination QP drop
 *   the datagram silently: the sender completes with success, both QPs
 *   stay in RTS, the matching `rdma statistic` counter moves; a remote
 *   qkey with the high bit takes the sender QP's own qkey;
 * - a send longer than the active MTU completes with IBV_WC_LOC_LEN_ERR
 *   (one of exactly the MTU arrives), a receive shorter than 40 + length
 *   completes with IBV_WC_LOC_LEN_ERR;
 * - RDMA and atomic work requests are refused at post time (EINVAL), and
 *   an AH of another PD is refused or completes in error.
 */
#include <arpa/inet.h>

#include "suite.h"
#include "kselftest_harness.h"

#define QKEY 0x11111111u
#define RX (512 << 10)		/* receive area in the pair's buffer */
#define RX_LEN (VRNIC_GRH_SIZE + 8192)

static struct su_opts ud_opts(int qp_ex)
{
	struct su_opts o = {
		.qp_type = IBV_QPT_UD, .qkey = QKEY, .qp_ex = qp_ex,
		.inline_data = 64,
	};
	return o;
}

FIXTURE(ud)
{
	struct su_pair p;
	uint8_t *rx;
};

FIXTURE_SETUP(ud)
{
	struct su_opts o = ud_opts(0);
	int err = su_pair_open(&self->p, &o);

	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	self->rx = self->p.env.buf + RX;
}

FIXTURE_TEARDOWN(ud)
{
	su_pair_close(&self->p);
}

/* Post a receive of RX_LEN bytes at RX, filled with 0xee first. */
static int post_rx(struct su_pair *p, uint64_t wr_id, uint32_t len)
{
	struct ibv_sge r = su_sge(p, RX, len);

	memset(p->env.buf + RX, 0xee, RX_LEN);
	return su_post_recv(p->qp[1], wr_id, &r, 1);
}

/* Send @len bytes of pattern @seed from offset 0 to qp[1]. */
static int send_ud(struct su_pair *p, uint64_t wr_id, uint32_t len,
		   unsigned int seed, uint32_t qkey, struct ibv_ah *ah,
		   uint32_t qpn)
{
	struct ibv_sge s = su_sge(p, 0, len);

	su_fill(p->env.buf, len, seed);
	return su_post_ud(p->qp[0], IBV_WR_SEND, wr_id, &s, 1,
			  IBV_SEND_SIGNALED, ah, qpn, qkey, 0);
}

/*
 * Send as send_ud() to qp[1] through the pair's AH: the sender completes
 * with SUCCESS, as UD does where the datagram is dropped too.
 */
static void send_completes(struct __test_metadata *_metadata,
			   struct su_pair *p, uint64_t wr_id, uint32_t len,
			   unsigned int seed, uint32_t qkey)
{
	struct ibv_wc wc;

	ASSERT_EQ(0, send_ud(p, wr_id, len, seed, qkey, p->ah,
			     p->qp[1]->qp_num));
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
}

/* A datagram with QKEY to qp[1] lands after the GRH area of @rx. */
static void datagram_arrives(struct __test_metadata *_metadata,
			     struct su_pair *p, const uint8_t *rx,
			     uint64_t wr_id, uint32_t len, unsigned int seed)
{
	struct ibv_wc wc;

	ASSERT_EQ(0, send_ud(p, wr_id, len, seed, QKEY, p->ah,
			     p->qp[1]->qp_num));
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(-1, su_check(rx + VRNIC_GRH_SIZE, len, seed));
}

TEST_F(ud, grh_src_qp_byte_len_and_bytes)
{
	struct su_pair *p = &self->p;
	struct ibv_sge s = su_sge(p, 0, 700);
	struct ibv_wc wc;
	char msg[] = "inline datagram!";

	ASSERT_EQ(0, post_rx(p, 11, RX_LEN));
	su_fill(p->env.buf, 700, 5);
	ASSERT_EQ(0, su_post_ud(p->qp[0], IBV_WR_SEND_WITH_IMM, 12, &s, 1,
				IBV_SEND_SIGNALED, p->ah, p->qp[1]->qp_num,
				QKEY, 0xabcd));
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_SEND, wc.opcode);
	EXPECT_EQ(12, wc.wr_id);
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status)
		TH_LOG("%s", ibv_wc_status_str(wc.status));
	EXPECT_EQ(IBV_WC_RECV, wc.opcode);
	EXPECT_EQ(11, wc.wr_id);
	EXPECT_EQ(VRNIC_GRH_SIZE + 700, wc.byte_len);
	EXPECT_EQ(IBV_WC_GRH | IBV_WC_WITH_IMM, wc.wc_flags);
	EXPECT_EQ(0xabcd, ntohl(wc.imm_data));
	EXPECT_EQ(p->qp[0]->qp_num, wc.src_qp);
	EXPECT_EQ(p->qp[1]->qp_num, wc.qp_num);
	EXPECT_EQ(0, wc.pkey_index);
	/* ImmDt and payload follow DETH */
	EXPECT_EQ(0, su_grh_ipv4_check(self->rx, p->env.gid.raw, p->env.gid.raw,
				       4 + 700));
	EXPECT_EQ(-1, su_check(self->rx + VRNIC_GRH_SIZE, 700, 5));
	EXPECT_EQ(-1, su_check_byte(self->rx + VRNIC_GRH_SIZE + 700,
				    RX_LEN - VRNIC_GRH_SIZE - 700, 0xee));

	/* Inline, the other way round, without an immediate. */
	{
		struct ibv_sge r = su_sge(p, RX, RX_LEN);
		struct ibv_sge is = { (uintptr_t)msg, sizeof(msg), 0 };

		memset(self->rx, 0xee, RX_LEN);
		ASSERT_EQ(0, su_post_recv(p->qp[0], 21, &r, 1));
		ASSERT_EQ(0, su_post_ud(p->qp[1], IBV_WR_SEND, 22, &is, 1,
					IBV_SEND_SIGNALED | IBV_SEND_INLINE,
					p->ah, p->qp[0]->qp_num, QKEY, 0));
	}
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(22, wc.wr_id);
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(21, wc.wr_id);
	EXPECT_EQ(VRNIC_GRH_SIZE + sizeof(msg), wc.byte_len);
	EXPECT_EQ(IBV_WC_GRH, wc.wc_flags);
	EXPECT_EQ(p->qp[1]->qp_num, wc.src_qp);
	EXPECT_EQ(0, su_grh_ipv4_check(self->rx, p->env.gid.raw, p->env.gid.raw,
				       sizeof(msg)));
	EXPECT_EQ(0, memcmp(self->rx + VRNIC_GRH_SIZE, msg, sizeof(msg)));
}

TEST_F(ud, qkey_mismatch_is_dropped)
{
	struct su_pair *p = &self->p;
	struct ibv_wc wc;
	long before = su_counter("ud_qkey_drops");

	ASSERT_LE(0, before) TH_LOG("no ud_qkey_drops in rdma statistic");
	ASSERT_EQ(0, post_rx(p, 1, RX_LEN));
	send_completes(_metadata, p, 2, 100, 1, QKEY + 1);
	EXPECT_EQ(0, su_poll(p->cq[1], &wc, 200));
	EXPECT_EQ(before + 1, su_counter_after("ud_qkey_drops"));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(p->qp[0]));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(p->qp[1]));

	/* The high bit: the sender QP's own qkey, which matches. */
	send_completes(_metadata, p, 3, 100, 2, 0x80000000u);
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(1, wc.wr_id);
	EXPECT_EQ(-1, su_check(self->rx + VRNIC_GRH_SIZE, 100, 2));
	EXPECT_EQ(before + 1, su_counter_after("ud_qkey_drops"));
}

/*
 * A user UD QP cannot put a datagram into QP1 (the GSI QP, whose MADs the
 * kernel trusts) nor QP0 (which RoCE does not have): the device refuses a
 * WR naming either as a local QP operation error (vendor_err 23, the
 * model's kVeBadRemoteQpn), before anything is sent, and the QP goes to
 * ERR.
 */
TEST_F(ud, user_qp_cannot_name_qp0_or_qp1)
{
	struct su_pair *p = &self->p;
	long qkey_drops = su_counter("ud_qkey_drops");
	long dest_drops = su_counter("ud_no_dest_drops");
	struct ibv_sge s = su_sge(p, 0, 256);
	struct ibv_wc wc;
	int i;

	ASSERT_LE(0, qkey_drops);
	ASSERT_LE(0, dest_drops);
	for (i = 0; i < 2; i++) {
		/* QP1's own qkey, as a MAD sender would name it */
		ASSERT_EQ(0, su_post_ud(p->qp[i], IBV_WR_SEND, 40 + i, &s, 1,
					IBV_SEND_SIGNALED, p->ah, 1 - i,
					0x80010000u, 0));
		ASSERT_EQ(1, su_poll(p->cq[i], &wc, SU_TIMEOUT_MS));
		EXPECT_EQ(40 + i, wc.wr_id);
		EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, wc.status)
			TH_LOG("QPN %d: %s", 1 - i, ibv_wc_status_str(wc.status));
		EXPECT_EQ(23, wc.vendor_err);
		EXPECT_EQ(IBV_QPS_ERR, su_qp_state(p->qp[i]));
	}
	EXPECT_EQ(qkey_drops, su_counter_after("ud_qkey_drops"));
	EXPECT_EQ(dest_drops, su_counter("ud_no_dest_drops"));
}

/* QP1 is the kernel's: uverbs refuses a GSI (or SMI) QP from user space. */
TEST_F(ud, user_cannot_create_gsi_or_smi_qp)
{
	struct ibv_qp_init_attr a = {
		.send_cq = self->p.cq[0], .recv_cq = self->p.cq[0],
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int type;

	for (type = 0; type <= 1; type++) {
		a.qp_type = type;
		errno = 0;
		EXPECT_EQ(NULL, ibv_create_qp(self->p.env.pd, &a));
		EXPECT_NE(0, errno);
	}
}

TEST_F(ud, no_receive_is_dropped)
{
	struct su_pair *p = &self->p;
	struct ibv_wc wc;
	long before = su_counter("ud_no_recv_drops");

	ASSERT_LE(0, before) TH_LOG("no ud_no_recv_drops in rdma statistic");
	send_completes(_metadata, p, 1, 300, 1, QKEY);
	EXPECT_EQ(before + 1, su_counter_after("ud_no_recv_drops"));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(p->qp[0]));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(p->qp[1]));

	/* A receive posted later gets the next datagram, not the lost one. */
	ASSERT_EQ(0, post_rx(p, 5, RX_LEN));
	EXPECT_EQ(0, su_poll(p->cq[1], &wc, 200));
	datagram_arrives(_metadata, p, self->rx, 2, 300, 9);
}

TEST_F(ud, no_ready_destination_is_dropped)
{
	struct su_pair *p = &self->p;
	struct ibv_qp *reset = su_create_qp(p, p->env.pd, p->cq[1], p->cq[1]);
	struct ibv_sge r = su_sge(p, RX, RX_LEN);
	struct ibv_wc wc;
	long before = su_counter("ud_no_dest_drops");

	ASSERT_NE(NULL, reset);
	ASSERT_LE(0, before) TH_LOG("no ud_no_dest_drops in rdma statistic");
	ASSERT_EQ(0, su_to_init(p, reset));
	ASSERT_EQ(0, su_post_recv(reset, 1, &r, 1)); /* INIT: not ready */
	ASSERT_EQ(0, send_ud(p, 1, 64, 1, QKEY, p->ah, reset->qp_num));
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, su_poll(p->cq[1], &wc, 200));
	EXPECT_EQ(before + 1, su_counter_after("ud_no_dest_drops"));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(p->qp[0]));
	ibv_destroy_qp(reset);
}

TEST_F(ud, longer_than_mtu_is_loc_len_err)
{
	struct su_pair *p = &self->p;
	int mtu = su_active_mtu(p->env.ctx);
	struct ibv_wc wc;

	ASSERT_LT(0, mtu);
	ASSERT_GE(RX_LEN - VRNIC_GRH_SIZE, mtu);
	ASSERT_EQ(0, post_rx(p, 1, RX_LEN));
	send_completes(_metadata, p, 2, mtu, 3, QKEY);
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(VRNIC_GRH_SIZE + mtu, wc.byte_len);
	EXPECT_EQ(-1, su_check(self->rx + VRNIC_GRH_SIZE, mtu, 3));

	ASSERT_EQ(0, post_rx(p, 3, RX_LEN));
	ASSERT_EQ(0, send_ud(p, 4, mtu + 1, 4, QKEY, p->ah, p->qp[1]->qp_num));
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(4, wc.wr_id);
	EXPECT_EQ(IBV_WC_LOC_LEN_ERR, wc.status)
		TH_LOG("%s", ibv_wc_status_str(wc.status));
	EXPECT_EQ(IBV_QPS_ERR, su_qp_state(p->qp[0]));
	EXPECT_EQ(0, su_poll(p->cq[1], &wc, 200));
	EXPECT_EQ(-1, su_check_byte(self->rx, RX_LEN, 0xee));
}

TEST_F(ud, receive_shorter_than_grh_and_payload)
{
	struct su_pair *p = &self->p;
	struct ibv_wc wc;

	ASSERT_EQ(0, post_rx(p, 1, VRNIC_GRH_SIZE + 99));
	send_completes(_metadata, p, 2, 100, 1, QKEY);
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(1, wc.wr_id);
	EXPECT_EQ(IBV_WC_LOC_LEN_ERR, wc.status)
		TH_LOG("%s", ibv_wc_status_str(wc.status));
	EXPECT_EQ(IBV_QPS_ERR, su_qp_state(p->qp[1]));
}

TEST_F(ud, rdma_and_atomics_are_refused_at_post)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	struct su_pair *p = &self->p;
	struct ibv_sge s = su_sge(p, 0, 8);
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	unsigned int i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = i;
		wr.opcode = ops[i];
		wr.sg_list = &s;
		wr.num_sge = 1;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.ud.ah = p->ah;
		wr.wr.ud.remote_qpn = p->qp[1]->qp_num;
		wr.wr.ud.remote_qkey = QKEY;
		bad = NULL;
		EXPECT_EQ(EINVAL, ibv_post_send(p->qp[0], &wr, &bad))
			TH_LOG("op %d", ops[i]);
		EXPECT_EQ(&wr, bad);
	}
	/* A send without an AH neither. */
	wr.opcode = IBV_WR_SEND;
	wr.wr.ud.ah = NULL;
	EXPECT_EQ(EINVAL, ibv_post_send(p->qp[0], &wr, &bad));
	EXPECT_EQ(0, su_poll(p->cq[0], &wc, 100));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(p->qp[0]));

	ASSERT_EQ(0, post_rx(p, 1, RX_LEN));
	datagram_arrives(_metadata, p, self->rx, 2, 64, 7);
}

TEST_F(ud, ah_of_another_pd)
{
	struct su_pair *p = &self->p;
	struct ibv_pd *pd2 = ibv_alloc_pd(p->env.ctx);
	struct ibv_ah *ah2;
	struct ibv_wc wc;
	int err;

	ASSERT_NE(NULL, pd2);
	ah2 = su_create_ah(p, pd2);
	ASSERT_NE(NULL, ah2);
	ASSERT_EQ(0, post_rx(p, 1, RX_LEN));
	err = send_ud(p, 2, 64, 1, QKEY, ah2, p->qp[1]->qp_num);
	if (err) {
		EXPECT_EQ(EINVAL, err);
	} else {
		ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
		EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, wc.status)
			TH_LOG("%s", ibv_wc_status_str(wc.status));
	}
	EXPECT_EQ(0, su_poll(p->cq[1], &wc, 200));
	EXPECT_EQ(-1, su_check_byte(self->rx, RX_LEN, 0xee));
	EXPECT_EQ(0, ibv_destroy_ah(ah2));
	EXPECT_EQ(0, ibv_dealloc_pd(pd2));
}

/* The ibv_wr_* API names the destination with ibv_wr_set_ud_addr. */
TEST(wr_api_ud_addr)
{
	struct su_opts o = ud_opts(1);
	struct su_pair p;
	struct ibv_qp_ex *qx;
	struct ibv_sge r;
	struct ibv_wc wc;
	int err;

	err = su_pair_open(&p, &o);
	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	qx = ibv_qp_to_qp_ex(p.qp[0]);
	ASSERT_NE(NULL, qx);
	r = su_sge(&p, RX, RX_LEN);
	ASSERT_EQ(0, su_post_recv(p.qp[1], 1, &r, 1));
	su_fill(p.env.buf, 1000, 4);
	ibv_wr_start(qx);
	qx->wr_id = 2;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(qx, htonl(77));
	ibv_wr_set_ud_addr(qx, p.ah, p.qp[1]->qp_num, QKEY);
	ibv_wr_set_sge(qx, p.env.mr->lkey, su_addr(&p, 0), 1000);
	ASSERT_EQ(0, ibv_wr_complete(qx));
	ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(1, su_poll(p.cq[1], &wc, SU_TIMEOUT_MS));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(VRNIC_GRH_SIZE + 1000, wc.byte_len);
	EXPECT_EQ(77, ntohl(wc.imm_data));
	EXPECT_EQ(p.qp[0]->qp_num, wc.src_qp);
	EXPECT_EQ(-1, su_check(p.env.buf + RX + VRNIC_GRH_SIZE, 1000, 4));

	/* A WRITE in a session on UD fails the whole session. */
	ibv_wr_start(qx);
	qx->wr_id = 3;
	ibv_wr_rdma_write(qx, p.env.mr->rkey, su_addr(&p, RX));
	ibv_wr_set_sge(qx, p.env.mr->lkey, su_addr(&p, 0), 8);
	EXPECT_EQ(EINVAL, ibv_wr_complete(qx));
	EXPECT_EQ(0, su_poll(p.cq[0], &wc, 100));
	su_pair_close(&p);
}

TEST_HARNESS_MAIN
