// SPDX-License-Identifier: GPL-2.0
/*
 * UD multicast through libibverbs, the provider and the driver, with one
 * IPv4-mapped group GID (::ffff:239.7.8.9, the RoCE v2 form rdma_cm joins):
 * - three UD QPs attached to the group each receive one send to it (QPN
 *   0xffffff) with the payload intact behind a GRH area whose IPv4 header
 *   is addressed to 239.7.8.9 from the guest's GID, IBV_WC_GRH, src_qp and
 *   40 + length; the sender completes once with success; a QP of the same
 *   context that never attached receives nothing;
 * - a detached QP no longer receives while the others still do; detaching
 *   it again is EINVAL;
 * - ibv_query_device reports max_mcast_grp, max_mcast_qp_attach and their
 *   product; attaching one QP more than max_mcast_qp_attach to a group
 *   fails with ENOMEM (the device's NO_RESOURCE) and attaching a member
 *   again succeeds;
 * - a unicast GID is EINVAL, and so is an RC QP.
 */
#include <arpa/inet.h>

#include "suite.h"
#include "kselftest_harness.h"

#define QKEY 0x4d43u
#define NQP 5			/* qp[0] sends, 1..3 join, 4 never does */
#define SLOT 8192		/* one receive area per QP in the buffer */
#define LEN 600
#define MCAST_QPN 0xffffffu

static const uint8_t group_gid[16] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 239, 7, 8, 9
};

static struct ibv_qp *ud_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_UD,
	};

	return ibv_create_qp(pd, &a);
}

static int ud_activate(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qkey = QKEY,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return 1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return 2;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x321;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return 3;
	return 0;
}

static uint16_t be16_at(const uint8_t *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

FIXTURE(mcast)
{
	struct su_env env;
	struct ibv_cq *cq[NQP];
	struct ibv_qp *qp[NQP];
	struct ibv_ah *ah;
	union ibv_gid group;
	int attached[NQP];
};

FIXTURE_SETUP(mcast)
{
	struct ibv_ah_attr aa = {
		.is_global = 1,
		.port_num = 1,
		.grh = { .hop_limit = 64 },
	};
	int i, err;

	err = su_env_open(&self->env, 1 << 20, 0, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_EQ(0, err) TH_LOG("env step %d: %s", err, strerror(errno));
	for (i = 0; i < NQP; i++) {
		self->cq[i] = ibv_create_cq(self->env.ctx, 32, NULL, NULL, 0);
		ASSERT_NE(NULL, self->cq[i]);
		self->qp[i] = ud_qp(self->env.pd, self->cq[i]);
		ASSERT_NE(NULL, self->qp[i]) TH_LOG("UD QP: %s", strerror(errno));
		ASSERT_EQ(0, ud_activate(self->qp[i]));
	}
	memcpy(self->group.raw, group_gid, 16);
	aa.grh.dgid = self->group;
	aa.grh.sgid_index = (uint8_t)self->env.gid_index;
	self->ah = ibv_create_ah(self->env.pd, &aa);
	ASSERT_NE(NULL, self->ah) TH_LOG("AH to the group: %s",
					 strerror(errno));
}

FIXTURE_TEARDOWN(mcast)
{
	int i;

	/* uverbs refuses to destroy a QP that is still attached (EBUSY). */
	for (i = 0; i < NQP; i++)
		if (self->attached[i])
			ibv_detach_mcast(self->qp[i], &self->group, 0);
	if (self->ah)
		ibv_destroy_ah(self->ah);
	for (i = 0; i < NQP; i++) {
		if (self->qp[i])
			ibv_destroy_qp(self->qp[i]);
		if (self->cq[i])
			ibv_destroy_cq(self->cq[i]);
	}
	su_env_close(&self->env);
}

static int attach(FIXTURE_DATA(mcast) *self, int i)
{
	int err = ibv_attach_mcast(self->qp[i], &self->group, 0);

	if (!err)
		self->attached[i] = 1;
	return err;
}

static int detach(FIXTURE_DATA(mcast) *self, int i)
{
	int err = ibv_detach_mcast(self->qp[i], &self->group, 0);

	if (!err)
		self->attached[i] = 0;
	return err;
}

/* A receive of the whole slot of QP @i, filled with 0xee first. */
static int post_rx(FIXTURE_DATA(mcast) *self, int i)
{
	uint8_t *b = self->env.buf + (size_t)(i + 1) * SLOT;
	struct ibv_sge s = {
		.addr = (uintptr_t)b, .length = SLOT,
		.lkey = self->env.mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = 100 + i, .sg_list = &s,
				  .num_sge = 1 };
	struct ibv_recv_wr *bad;

	memset(b, 0xee, SLOT);
	return ibv_post_recv(self->qp[i], &wr, &bad);
}

/* One send of LEN bytes of pattern @seed to the group; the sender's WC. */
static int send_group(FIXTURE_DATA(mcast) *self, unsigned int seed,
		      struct ibv_wc *wc)
{
	struct ibv_sge s = {
		.addr = (uintptr_t)self->env.buf, .length = LEN,
		.lkey = self->env.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &s, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	su_fill(self->env.buf, LEN, seed);
	wr.wr.ud.ah = self->ah;
	wr.wr.ud.remote_qpn = MCAST_QPN;
	wr.wr.ud.remote_qkey = QKEY;
	if (ibv_post_send(self->qp[0], &wr, &bad))
		return -1;
	return su_poll(self->cq[0], wc, SU_TIMEOUT_MS);
}

/*
 * The receive of QP @i: 0 if it completed with the datagram of @seed to
 * the group, else the number of the first wrong thing.
 */
static int check_rx(FIXTURE_DATA(mcast) *self, int i, unsigned int seed)
{
	const uint8_t *b = self->env.buf + (size_t)(i + 1) * SLOT;
	const uint8_t *ip = b + 20;
	struct ibv_wc wc;

	if (su_poll(self->cq[i], &wc, SU_TIMEOUT_MS) != 1)
		return 1;
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV)
		return 2;
	if (wc.wr_id != 100u + i || wc.qp_num != self->qp[i]->qp_num)
		return 3;
	if (!(wc.wc_flags & IBV_WC_GRH) || wc.src_qp != self->qp[0]->qp_num)
		return 4;
	if (wc.byte_len != 40 + LEN)
		return 5;
	if (su_check_byte(b, 20, 0) >= 0 || ip[0] != 0x45 || ip[9] != 17)
		return 6;
	if (be16_at(ip + 2) != 20 + 8 + 12 + 8 + LEN + 4)
		return 7;
	if (memcmp(ip + 12, self->env.gid.raw + 12, 4))
		return 8;
	if (memcmp(ip + 16, group_gid + 12, 4))	/* dgid: the group */
		return 9;
	if (su_check(b + 40, LEN, seed) >= 0)
		return 10;
	if (b[40 + LEN] != 0xee)
		return 11;
	return 0;
}

/* No completion on QP @i's CQ for a while, and its slot untouched. */
static int got_nothing(FIXTURE_DATA(mcast) *self, int i)
{
	struct ibv_wc wc;

	if (su_poll(self->cq[i], &wc, 200))
		return 0;
	return su_check_byte(self->env.buf + (size_t)(i + 1) * SLOT, SLOT,
			     0xee) < 0;
}

TEST_F(mcast, three_members_receive_one_send)
{
	struct ibv_wc wc;
	int i;

	for (i = 1; i <= 4; i++)
		ASSERT_EQ(0, post_rx(self, i));
	for (i = 1; i <= 3; i++)
		ASSERT_EQ(0, attach(self, i)) TH_LOG("attach %d", i);
	ASSERT_EQ(1, send_group(self, 31, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(7, wc.wr_id);
	for (i = 1; i <= 3; i++)
		EXPECT_EQ(0, check_rx(self, i, 31)) TH_LOG("member %d", i);
	EXPECT_TRUE(got_nothing(self, 4));
	/* The sender completed once. */
	EXPECT_EQ(0, su_poll(self->cq[0], &wc, 100));
}

TEST_F(mcast, detached_qp_no_longer_receives)
{
	struct ibv_wc wc;

	ASSERT_EQ(0, attach(self, 1));
	ASSERT_EQ(0, attach(self, 2));
	ASSERT_EQ(0, post_rx(self, 1));
	ASSERT_EQ(0, post_rx(self, 2));
	ASSERT_EQ(1, send_group(self, 5, &wc));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, check_rx(self, 1, 5));
	EXPECT_EQ(0, check_rx(self, 2, 5));

	ASSERT_EQ(0, detach(self, 2));
	EXPECT_EQ(EINVAL, ibv_detach_mcast(self->qp[2], &self->group, 0));
	ASSERT_EQ(0, post_rx(self, 1));
	ASSERT_EQ(0, post_rx(self, 2));
	ASSERT_EQ(1, send_group(self, 6, &wc));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, check_rx(self, 1, 6));
	EXPECT_TRUE(got_nothing(self, 2));
}

TEST_F(mcast, attach_beyond_max_mcast_qp_attach_is_enomem)
{
	struct ibv_device_attr a;
	struct ibv_qp **extra;
	int max, i, err = 0;

	ASSERT_EQ(0, ibv_query_device(self->env.ctx, &a));
	ASSERT_GT(a.max_mcast_grp, 0);
	ASSERT_GT(a.max_mcast_qp_attach, 0);
	EXPECT_EQ((long)a.max_mcast_grp * a.max_mcast_qp_attach,
		  a.max_total_mcast_qp_attach);
	max = a.max_mcast_qp_attach;
	ASSERT_LT(max, 1024);
	extra = calloc(max + 1, sizeof(*extra));
	ASSERT_NE(NULL, extra);
	for (i = 0; i <= max && !err; i++) {
		extra[i] = ud_qp(self->env.pd, self->cq[0]);
		if (!extra[i])
			err = -1;
	}
	EXPECT_EQ(0, err);
	for (i = 0; i < max && !err; i++) {
		err = ibv_attach_mcast(extra[i], &self->group, 0);
		EXPECT_EQ(0, err) TH_LOG("attach %d of %d", i + 1, max);
	}
	if (!err) {
		EXPECT_EQ(ENOMEM, ibv_attach_mcast(extra[max], &self->group, 0));
		/* A member again: no new entry, no error. */
		EXPECT_EQ(0, ibv_attach_mcast(extra[0], &self->group, 0));
	}
	for (i = 0; i <= max; i++) {
		if (!extra[i])
			continue;
		ibv_detach_mcast(extra[i], &self->group, 0);
		EXPECT_EQ(0, ibv_destroy_qp(extra[i]));
	}
	free(extra);
}

TEST_F(mcast, unicast_gid_is_einval)
{
	EXPECT_EQ(EINVAL, ibv_attach_mcast(self->qp[1], &self->env.gid, 0));
	EXPECT_EQ(EINVAL, ibv_detach_mcast(self->qp[1], &self->env.gid, 0));
}

TEST_F(mcast, rc_qp_is_refused)
{
	struct ibv_qp_init_attr a = {
		.send_cq = self->cq[0],
		.recv_cq = self->cq[0],
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *rc = ibv_create_qp(self->env.pd, &a);
	int err;

	ASSERT_NE(NULL, rc);
	err = ibv_attach_mcast(rc, &self->group, 0);
	EXPECT_EQ(EINVAL, err);
	if (!err)
		ibv_detach_mcast(rc, &self->group, 0);
	EXPECT_EQ(0, ibv_destroy_qp(rc));
}

TEST_HARNESS_MAIN
