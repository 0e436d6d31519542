// SPDX-License-Identifier: GPL-2.0
/*
 * The vrnic provider (libvrnic-rdmav34.so) through libibverbs, on vrnic0:
 * two RC QPs of one process connected to each other, exercising every
 * opcode with data checks, inline data, the ibv_qp_ex work-request API, the
 * ibv_cq_ex polling API, completion channels with solicited and unsolicited
 * arming, synchronous errors (EINVAL/ENOMEM with bad_wr), remote errors as
 * error completions plus async events, QP state changes, CQ resize, queue
 * wrap-around and concurrent posting/polling from two threads.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "suite.h"
#include "kselftest_harness.h"

#define BUF_SIZE (1 << 20)

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

/* RoCE needs the port's netdev up to resolve the destination MAC. */
static void netdev_up(void)
{
	char path[256], name[IF_NAMESIZE + 1] = "";
	struct ifreq ifr = {};
	FILE *f;
	int s;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/gid_attrs/ndevs/0", SU_DEV);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fscanf(f, "%16s", name) != 1)
		name[0] = 0;
	fclose(f);
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0 || !name[0])
		goto out;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (!ioctl(s, SIOCGIFFLAGS, &ifr) && !(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		ioctl(s, SIOCSIFFLAGS, &ifr);
		usleep(200 * 1000);
	}
out:
	if (s >= 0)
		close(s);
}

static const struct su_opts default_opts = {
	.send_wr = 64, .recv_wr = 64, .send_sge = 4, .recv_sge = 4,
	.inline_data = 128,
};

/* Context, PD, one 1 MiB MR, a CQ and a QP per side; connected. */
static int pair_open(struct su_pair *p, const struct su_opts *o, int cqe,
		     int channel)
{
	struct su_opts x = *o;

	x.cqe = cqe;
	x.channel = channel;
	netdev_up();
	return su_pair_open(p, &x);
}

/* Buffer regions: side A uses [0, 512K), side B [512K, 1M). */
#define A_OFF 0
#define B_OFF (BUF_SIZE / 2)

static int post_recv(struct su_pair *p, int side, uint64_t wr_id, size_t off,
		     uint32_t len)
{
	struct ibv_sge s = su_sge(p, off, len);
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &s, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(p->qp[side], &wr, &bad);
}

/* ------------------------------------------------------------------ */
/* Fixture: a connected pair with default QP caps                     */
/* ------------------------------------------------------------------ */

FIXTURE(pair) {
	struct su_pair p;
};

FIXTURE_SETUP(pair)
{
	int err = pair_open(&self->p, &default_opts, 256, 0);

	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
}

FIXTURE_TEARDOWN(pair)
{
	su_pair_close(&self->p);
}

TEST_F(pair, device_and_port)
{
	struct ibv_device_attr_ex attr;
	struct ibv_port_attr pa;

	ASSERT_EQ(0, ibv_query_device_ex(self->p.env.ctx, NULL, &attr));
	EXPECT_LE(1, attr.orig_attr.max_sge);
	EXPECT_LE(1, attr.orig_attr.max_qp_wr);
	EXPECT_EQ(IBV_ATOMIC_HCA, attr.orig_attr.atomic_cap);
	EXPECT_NE(0, attr.orig_attr.fw_ver[0]);
	ASSERT_EQ(0, ibv_query_port(self->p.env.ctx, 1, &pa));
	EXPECT_EQ(IBV_PORT_ACTIVE, pa.state);
	EXPECT_EQ(IBV_LINK_LAYER_ETHERNET, pa.link_layer);
	/* The kernel reports what the strides really hold. */
	EXPECT_LE(default_opts.send_sge, self->p.cap.max_send_sge);
	EXPECT_LE(default_opts.inline_data, self->p.cap.max_inline_data);
	EXPECT_LE(default_opts.send_wr, self->p.cap.max_send_wr);
}

TEST_F(pair, send_with_imm_two_sges)
{
	struct su_pair *p = &self->p;
	struct ibv_sge s[2] = { su_sge(p, A_OFF, 1000), su_sge(p, A_OFF + 4096, 3000) };
	struct ibv_sge r[2] = { su_sge(p, B_OFF, 2000), su_sge(p, B_OFF + 8192, 2000) };
	struct ibv_recv_wr rwr = { .wr_id = 7, .sg_list = r, .num_sge = 2 };
	struct ibv_send_wr wr = {
		.wr_id = 9, .sg_list = s, .num_sge = 2,
		.opcode = IBV_WR_SEND_WITH_IMM, .send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(0x12345678),
	};
	struct ibv_recv_wr *rbad;
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	uint8_t expect[4000];

	su_fill(p->env.buf + A_OFF, 1000, 1);
	su_fill(p->env.buf + A_OFF + 4096, 3000, 2);
	memcpy(expect, p->env.buf + A_OFF, 1000);
	memcpy(expect + 1000, p->env.buf + A_OFF + 4096, 3000);
	ASSERT_EQ(0, ibv_post_recv(p->qp[1], &rwr, &rbad));
	ASSERT_EQ(0, ibv_post_send(p->qp[0], &wr, &bad));

	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_SEND, wc.opcode);
	EXPECT_EQ(9, wc.wr_id);
	EXPECT_EQ(p->qp[0]->qp_num, wc.qp_num);

	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_RECV, wc.opcode);
	EXPECT_EQ(7, wc.wr_id);
	EXPECT_EQ(4000, wc.byte_len);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(htonl(0x12345678), wc.imm_data);
	EXPECT_EQ(p->qp[1]->qp_num, wc.qp_num);
	EXPECT_EQ(p->qp[0]->qp_num, wc.src_qp);
	EXPECT_EQ(0, memcmp(p->env.buf + B_OFF, expect, 2000));
	EXPECT_EQ(0, memcmp(p->env.buf + B_OFF + 8192, expect + 2000, 2000));
}

TEST_F(pair, rdma_write_and_write_with_imm)
{
	struct su_pair *p = &self->p;
	struct ibv_sge s = su_sge(p, A_OFF, 65536);
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &s, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(77),
		.wr.rdma = { .remote_addr = su_addr(p, B_OFF + 4096),
			     .rkey = p->env.mr->rkey },
	};
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	su_fill(p->env.buf + A_OFF, 65536, 3);
	ASSERT_EQ(0, su_post_send(p->qp[0], IBV_WR_RDMA_WRITE, 0, &s, 1,
				  IBV_SEND_SIGNALED, su_addr(p, B_OFF), p->env.mr->rkey));
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_RDMA_WRITE, wc.opcode);
	EXPECT_EQ(0, memcmp(p->env.buf + B_OFF, p->env.buf + A_OFF, 65536));

	/* WRITE_WITH_IMM consumes a receive WQE without using its SGEs. */
	ASSERT_EQ(0, post_recv(p, 1, 5, B_OFF + 200000, 16));
	ASSERT_EQ(0, ibv_post_send(p->qp[0], &wr, &bad));
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, wc.opcode);
	EXPECT_EQ(5, wc.wr_id);
	EXPECT_EQ(65536, wc.byte_len);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(htonl(77), wc.imm_data);
	EXPECT_EQ(0, memcmp(p->env.buf + B_OFF + 4096, p->env.buf + A_OFF, 65536));
}

TEST_F(pair, rdma_read)
{
	struct su_pair *p = &self->p;
	struct ibv_sge s = su_sge(p, A_OFF, 100000);
	struct ibv_wc wc;

	su_fill(p->env.buf + B_OFF, 100000, 4);
	ASSERT_EQ(0, su_post_send(p->qp[0], IBV_WR_RDMA_READ, 3, &s, 1,
				  IBV_SEND_SIGNALED, su_addr(p, B_OFF), p->env.mr->rkey));
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_RDMA_READ, wc.opcode);
	EXPECT_EQ(100000, wc.byte_len);
	EXPECT_EQ(0, memcmp(p->env.buf + A_OFF, p->env.buf + B_OFF, 100000));
}

TEST_F(pair, atomics)
{
	struct su_pair *p = &self->p;
	uint64_t *target = (uint64_t *)(p->env.buf + B_OFF + 64);
	uint64_t *result = (uint64_t *)(p->env.buf + A_OFF + 64);
	struct ibv_sge s = su_sge(p, A_OFF + 64, 8);
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &s, .num_sge = 1,
		.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = su_addr(p, B_OFF + 64),
			       .compare_add = 5, .rkey = p->env.mr->rkey },
	};
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	*target = 100;
	ASSERT_EQ(0, ibv_post_send(p->qp[0], &wr, &bad));
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_FETCH_ADD, wc.opcode);
	EXPECT_EQ(100, *result);
	EXPECT_EQ(105, *target);

	/* Compare-and-swap: a match swaps, a mismatch does not. */
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.compare_add = 105;
	wr.wr.atomic.swap = 0xabcdef;
	ASSERT_EQ(0, ibv_post_send(p->qp[0], &wr, &bad));
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_COMP_SWAP, wc.opcode);
	EXPECT_EQ(105, *result);
	EXPECT_EQ(0xabcdef, *target);
	wr.wr.atomic.compare_add = 1;
	wr.wr.atomic.swap = 2;
	ASSERT_EQ(0, ibv_post_send(p->qp[0], &wr, &bad));
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(0xabcdef, *result);
	EXPECT_EQ(0xabcdef, *target);
}

TEST_F(pair, inline_send_copies_at_post_time)
{
	struct su_pair *p = &self->p;
	char msg[120];
	struct ibv_sge s[2] = {
		{ .addr = (uintptr_t)msg, .length = 60, .lkey = 0 },
		{ .addr = (uintptr_t)msg + 60, .length = 60, .lkey = 0 },
	};
	struct ibv_wc wc;

	for (int i = 0; i < 120; i++)
		msg[i] = (char)('a' + i % 26);
	ASSERT_EQ(0, post_recv(p, 1, 1, B_OFF, 4096));
	ASSERT_EQ(0, su_post_send(p->qp[0], IBV_WR_SEND, 2, s, 2,
				  IBV_SEND_SIGNALED | IBV_SEND_INLINE, 0, 0));
	/* The data is in the WQE: the buffer may change right away. */
	char sent[120];

	memcpy(sent, msg, sizeof(sent));
	memset(msg, 0, sizeof(msg));
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(120, wc.byte_len);
	EXPECT_EQ(0, memcmp(p->env.buf + B_OFF, sent, 120));
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
}

TEST_F(pair, bad_requests_fail_synchronously)
{
	struct su_pair *p = &self->p;
	struct ibv_sge many[64];
	struct ibv_sge s = su_sge(p, A_OFF, 8);
	struct ibv_send_wr wr2 = {
		.wr_id = 2, .sg_list = many, .num_sge = 64,
		.opcode = IBV_WR_SEND,
	};
	struct ibv_send_wr wr1 = {
		.wr_id = 1, .next = &wr2, .sg_list = &s, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = su_addr(p, B_OFF), .rkey = p->env.mr->rkey },
	};
	struct ibv_recv_wr rwr = { .wr_id = 3, .sg_list = many, .num_sge = 64 };
	struct ibv_send_wr *bad = NULL;
	struct ibv_recv_wr *rbad = NULL;
	char big[4096] = { 0 };
	struct ibv_wc wc;

	for (int i = 0; i < 64; i++)
		many[i] = su_sge(p, A_OFF + i * 64, 64);

	/* Too many SGEs: EINVAL at that WR; the WRs before it are posted. */
	EXPECT_EQ(EINVAL, ibv_post_send(p->qp[0], &wr1, &bad));
	EXPECT_EQ(&wr2, bad);
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(1, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(EINVAL, ibv_post_recv(p->qp[1], &rwr, &rbad));
	EXPECT_EQ(&rwr, rbad);

	/* Inline data larger than the QP holds. */
	s.addr = (uintptr_t)big;
	s.length = p->cap.max_inline_data + 1;
	wr1.next = NULL;
	wr1.opcode = IBV_WR_SEND;
	wr1.send_flags = IBV_SEND_INLINE;
	bad = NULL;
	EXPECT_EQ(EINVAL, ibv_post_send(p->qp[0], &wr1, &bad));
	EXPECT_EQ(&wr1, bad);

	/* An atomic operand must be one 8-byte SGE. */
	s = su_sge(p, A_OFF, 4);
	wr1.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr1.send_flags = 0;
	bad = NULL;
	EXPECT_EQ(EINVAL, ibv_post_send(p->qp[0], &wr1, &bad));
	EXPECT_EQ(&wr1, bad);

	/* Opcodes the device does not have. */
	s = su_sge(p, A_OFF, 8);
	wr1.opcode = IBV_WR_TSO;
	EXPECT_EQ(EINVAL, ibv_post_send(p->qp[0], &wr1, &bad));

	/* Nothing else was posted. */
	EXPECT_EQ(0, su_poll(p->cq[0], &wc, 200));
}

TEST_F(pair, full_queues_fail_with_enomem)
{
	struct su_pair *p = &self->p;
	struct ibv_sge s = su_sge(p, A_OFF, 8);
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
	};
	struct ibv_recv_wr rwr = { .sg_list = &s, .num_sge = 1 };
	struct ibv_send_wr *bad;
	struct ibv_recv_wr *rbad;
	struct ibv_qp *qp;
	uint32_t i;

	/* A QP in INIT holds posted sends: the device runs SQs only in RTS. */
	p->o.send_wr = 8;
	p->o.recv_wr = 8;
	qp = su_create_qp(p, p->env.pd, p->cq[0], p->cq[0]);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, su_to_init(p, qp));
	for (i = 0; i < p->cap.max_send_wr; i++) {
		ASSERT_EQ(0, ibv_post_send(qp, &wr, &bad)) TH_LOG("send %u", i);
	}
	EXPECT_EQ(ENOMEM, ibv_post_send(qp, &wr, &bad));
	EXPECT_EQ(&wr, bad);
	for (i = 0; i < p->cap.max_recv_wr; i++) {
		ASSERT_EQ(0, ibv_post_recv(qp, &rwr, &rbad)) TH_LOG("recv %u", i);
	}
	EXPECT_EQ(ENOMEM, ibv_post_recv(qp, &rwr, &rbad));
	EXPECT_EQ(&rwr, rbad);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(pair, remote_access_error_completes_in_error)
{
	struct su_pair *p = &self->p;
	struct ibv_sge s = su_sge(p, A_OFF, 64);
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	struct ibv_wc wc;

	ASSERT_EQ(0, su_post_send(p->qp[0], IBV_WR_RDMA_WRITE, 11, &s, 1,
				  IBV_SEND_SIGNALED, su_addr(p, B_OFF),
				  p->env.mr->rkey ^ 0x5a5a00));
	/* Posted after the failing one: flushed. */
	ASSERT_EQ(0, su_post_send(p->qp[0], IBV_WR_RDMA_WRITE, 12, &s, 1, 0,
				  su_addr(p, B_OFF), p->env.mr->rkey));
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(11, wc.wr_id);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, wc.status);
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(12, wc.wr_id);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
	ASSERT_EQ(0, ibv_query_qp(p->qp[0], &attr, IBV_QP_STATE, &init));
	EXPECT_EQ(IBV_QPS_ERR, attr.qp_state);

	/* The responder's QP went to ERR with an access-error event. */
	EXPECT_TRUE(su_wait_async(p->env.ctx, IBV_EVENT_QP_ACCESS_ERR, p->qp[1],
				  SU_TIMEOUT_MS));
	ASSERT_EQ(0, ibv_query_qp(p->qp[1], &attr, IBV_QP_STATE, &init));
	EXPECT_EQ(IBV_QPS_ERR, attr.qp_state);
}

TEST_F(pair, query_modify_reset_and_reconnect)
{
	struct su_pair *p = &self->p;
	struct ibv_qp_attr attr = {};
	struct ibv_qp_init_attr init;
	struct ibv_sge s = su_sge(p, A_OFF, 32);
	struct ibv_wc wc;

	ASSERT_EQ(0, ibv_query_qp(p->qp[0], &attr, IBV_QP_STATE | IBV_QP_DEST_QPN |
				  IBV_QP_PATH_MTU | IBV_QP_MAX_QP_RD_ATOMIC,
				  &init));
	EXPECT_EQ(IBV_QPS_RTS, attr.qp_state);
	EXPECT_EQ(p->qp[1]->qp_num, attr.dest_qp_num);
	EXPECT_EQ(IBV_MTU_1024, attr.path_mtu);
	EXPECT_EQ(16, attr.max_rd_atomic);
	EXPECT_EQ(IBV_QPT_RC, init.qp_type);

	/* ERR flushes posted receives. */
	ASSERT_EQ(0, post_recv(p, 1, 21, B_OFF, 32));
	ASSERT_EQ(0, post_recv(p, 1, 22, B_OFF, 32));
	attr.qp_state = IBV_QPS_ERR;
	ASSERT_EQ(0, ibv_modify_qp(p->qp[1], &attr, IBV_QP_STATE));
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(21, wc.wr_id);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
	/* Leave the second flush CQE in the CQ: RESET must drop it. */
	usleep(100 * 1000);
	attr.qp_state = IBV_QPS_RESET;
	ASSERT_EQ(0, ibv_modify_qp(p->qp[1], &attr, IBV_QP_STATE));
	attr.qp_state = IBV_QPS_RESET;
	ASSERT_EQ(0, ibv_modify_qp(p->qp[0], &attr, IBV_QP_STATE));

	/* Back to RTS and working, with the old CQEs gone. */
	ASSERT_EQ(0, su_connect(p, p->qp[0], p->qp[1]));
	su_fill(p->env.buf + A_OFF, 32, 9);
	ASSERT_EQ(0, post_recv(p, 1, 23, B_OFF, 32));
	ASSERT_EQ(0, su_post_send(p->qp[0], IBV_WR_SEND, 24, &s, 1, IBV_SEND_SIGNALED,
				  0, 0));
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(23, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(p->env.buf + A_OFF, p->env.buf + B_OFF, 32));
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(24, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
}

TEST_F(pair, resize_cq)
{
	struct su_pair *p = &self->p;
	struct ibv_sge s = su_sge(p, A_OFF, 8);
	struct ibv_wc wc;
	int i;

	/* Completions in the CQ survive a resize. */
	for (i = 0; i < 10; i++) {
		ASSERT_EQ(0, su_post_send(p->qp[0], IBV_WR_RDMA_WRITE, i, &s, 1,
					  IBV_SEND_SIGNALED, su_addr(p, B_OFF),
					  p->env.mr->rkey));
	}
	usleep(200 * 1000);
	ASSERT_EQ(0, ibv_resize_cq(p->cq[0], 1000));
	EXPECT_LE(1000, p->cq[0]->cqe);
	for (i = 0; i < 10; i++) {
		ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
		EXPECT_EQ(i, wc.wr_id);
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	}
	/* And the bigger ring works, past its first wrap of the SQ. */
	for (i = 0; i < 300; i++) {
		int sig = i % 8 == 7;

		ASSERT_EQ(0, su_post_send(p->qp[0], IBV_WR_RDMA_WRITE, i, &s, 1,
					  sig ? IBV_SEND_SIGNALED : 0,
					  su_addr(p, B_OFF), p->env.mr->rkey));
		if (sig) {
			ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
			EXPECT_EQ(i, wc.wr_id);
			EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		}
	}
}

/* ------------------------------------------------------------------ */
/* Queues of depth 2 wrapping many times                               */
/* ------------------------------------------------------------------ */

TEST(small_queues_wrap)
{
	struct su_opts o = { .send_wr = 2, .recv_wr = 2, .send_sge = 1,
			     .recv_sge = 1, .inline_data = 0 };
	struct su_pair pp, *p = &pp;
	struct ibv_wc wc;
	int err;

	err = pair_open(p, &o, 4, 0);
	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	for (int i = 0; i < 500; i++) {
		struct ibv_sge s = su_sge(p, A_OFF + (i % 16) * 64, 64);

		su_fill(p->env.buf + A_OFF + (i % 16) * 64, 64, i);
		ASSERT_EQ(0, post_recv(p, 1, i, B_OFF, 64));
		ASSERT_EQ(0, su_post_send(p->qp[0], IBV_WR_SEND, i, &s, 1,
					  IBV_SEND_SIGNALED, 0, 0));
		ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		ASSERT_EQ(i, wc.wr_id);
		ASSERT_EQ(0, memcmp(p->env.buf + B_OFF, p->env.buf + A_OFF + (i % 16) * 64, 64));
		ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		ASSERT_EQ(i, wc.wr_id);
	}
	su_pair_close(p);
}

/* ------------------------------------------------------------------ */
/* The ibv_qp_ex work-request API and ibv_cq_ex polling                */
/* ------------------------------------------------------------------ */

TEST(qp_ex_and_cq_ex)
{
	struct su_opts o = default_opts;
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 64,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
			    IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP,
	};
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	struct ibv_poll_cq_attr pa = {};
	struct su_pair pp, *p = &pp;
	struct ibv_cq_ex *cqx;
	struct ibv_qp_ex *qpx;
	struct ibv_sge sl[2];
	struct ibv_wc wc;
	char a[] = "hello ", b[] = "world";
	struct ibv_data_buf bufs[2] = { { a, 6 }, { b, 5 } };
	uint64_t *counter;
	int err, n;

	o.qp_ex = 1;
	err = pair_open(p, &o, 64, 0);
	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	/* Replace B's CQ by an extended one: a new QP B on it. */
	cqx = ibv_create_cq_ex(p->env.ctx, &ca);
	ASSERT_NE(NULL, cqx);
	ASSERT_EQ(0, ibv_destroy_qp(p->qp[1]));
	ASSERT_EQ(0, ibv_destroy_cq(p->cq[1]));
	p->cq[1] = ibv_cq_ex_to_cq(cqx);
	p->qp[1] = su_create_qp(p, p->env.pd, p->cq[1], p->cq[1]);
	ASSERT_NE(NULL, p->qp[1]);
	/* A's QP back to RESET, then connect it to the new B. */
	ASSERT_EQ(0, ibv_modify_qp(p->qp[0], &reset, IBV_QP_STATE));
	ASSERT_EQ(0, su_connect(p, p->qp[0], p->qp[1]));

	qpx = ibv_qp_to_qp_ex(p->qp[0]);
	ASSERT_NE(NULL, qpx);
	counter = (uint64_t *)(p->env.buf + B_OFF + 1024);
	*counter = 40;
	su_fill(p->env.buf + A_OFF, 8192, 5);
	su_fill(p->env.buf + B_OFF + 65536, 4096, 6);
	ASSERT_EQ(0, post_recv(p, 1, 100, B_OFF, 4096));
	ASSERT_EQ(0, post_recv(p, 1, 101, B_OFF + 8192, 64));

	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qpx, p->env.mr->rkey, su_addr(p, B_OFF + 16384));
	ibv_wr_set_sge(qpx, p->env.mr->lkey, su_addr(p, A_OFF), 8192);
	qpx->wr_id = 2;
	qpx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
	ibv_wr_send_imm(qpx, htonl(0xfeed));
	ibv_wr_set_inline_data_list(qpx, 2, bufs);
	qpx->wr_id = 3;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_fetch_add(qpx, p->env.mr->rkey, su_addr(p, B_OFF + 1024), 2);
	ibv_wr_set_sge(qpx, p->env.mr->lkey, su_addr(p, A_OFF + 20000), 8);
	qpx->wr_id = 4;
	ibv_wr_rdma_read(qpx, p->env.mr->rkey, su_addr(p, B_OFF + 65536));
	sl[0] = su_sge(p, A_OFF + 32768, 1000);
	sl[1] = su_sge(p, A_OFF + 40960, 3096);
	ibv_wr_set_sge_list(qpx, 2, sl);
	qpx->wr_id = 5;
	ibv_wr_rdma_write_imm(qpx, p->env.mr->rkey, su_addr(p, B_OFF + 16384), htonl(5));
	ibv_wr_set_inline_data(qpx, a, 6);
	ASSERT_EQ(0, ibv_wr_complete(qpx));

	for (int want = 1; want <= 5; want++) {
		ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
		EXPECT_EQ(want, wc.wr_id);
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	}
	EXPECT_EQ(0, memcmp(p->env.buf + B_OFF + 16384 + 6, p->env.buf + A_OFF + 6, 8192 - 6));
	EXPECT_EQ(0, memcmp(p->env.buf + B_OFF + 16384, a, 6));
	EXPECT_EQ(40, *(uint64_t *)(p->env.buf + A_OFF + 20000));
	EXPECT_EQ(42, *counter);
	EXPECT_EQ(0, memcmp(p->env.buf + A_OFF + 32768, p->env.buf + B_OFF + 65536, 1000));
	EXPECT_EQ(0, memcmp(p->env.buf + A_OFF + 40960, p->env.buf + B_OFF + 65536 + 1000, 3096));

	/* The two receive completions through the extended CQ API. */
	for (long end = su_now_ms() + SU_TIMEOUT_MS; su_now_ms() < end;) {
		err = ibv_start_poll(cqx, &pa);
		if (err != ENOENT)
			break;
	}
	ASSERT_EQ(0, err);
	EXPECT_EQ(100, cqx->wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, cqx->status);
	EXPECT_EQ(IBV_WC_RECV, ibv_wc_read_opcode(cqx));
	EXPECT_EQ(11, ibv_wc_read_byte_len(cqx));
	EXPECT_EQ(htonl(0xfeed), ibv_wc_read_imm_data(cqx));
	EXPECT_TRUE(ibv_wc_read_wc_flags(cqx) & IBV_WC_WITH_IMM);
	EXPECT_EQ(p->qp[1]->qp_num, ibv_wc_read_qp_num(cqx));
	EXPECT_EQ(p->qp[0]->qp_num, ibv_wc_read_src_qp(cqx));
	EXPECT_EQ(0, memcmp(p->env.buf + B_OFF, "hello world", 11));
	n = 1;
	for (long end = su_now_ms() + SU_TIMEOUT_MS; n < 2 && su_now_ms() < end;) {
		err = ibv_next_poll(cqx);
		if (!err) {
			n++;
			EXPECT_EQ(101, cqx->wr_id);
			EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, ibv_wc_read_opcode(cqx));
			EXPECT_EQ(htonl(5), ibv_wc_read_imm_data(cqx));
			EXPECT_EQ(6, ibv_wc_read_byte_len(cqx));
		}
	}
	EXPECT_EQ(2, n);
	EXPECT_EQ(ENOENT, ibv_next_poll(cqx));
	ibv_end_poll(cqx);
	EXPECT_EQ(ENOENT, ibv_start_poll(cqx, &pa));

	/* A failing session posts nothing; abort posts nothing. */
	ibv_wr_start(qpx);
	qpx->wr_id = 6;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_read(qpx, p->env.mr->rkey, su_addr(p, B_OFF));
	ibv_wr_set_inline_data(qpx, a, 6); /* READ cannot be inline */
	EXPECT_EQ(EINVAL, ibv_wr_complete(qpx));
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, p->env.mr->lkey, su_addr(p, A_OFF), 8);
	ibv_wr_abort(qpx);
	EXPECT_EQ(0, su_poll(p->cq[0], &wc, 200));

	/* Plain ibv_poll_cq on an extended CQ works too. */
	ASSERT_EQ(0, post_recv(p, 1, 102, B_OFF, 64));
	ibv_wr_start(qpx);
	qpx->wr_id = 7;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, p->env.mr->lkey, su_addr(p, A_OFF), 64);
	ASSERT_EQ(0, ibv_wr_complete(qpx));
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(102, wc.wr_id);
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(7, wc.wr_id);
	su_pair_close(p);
}

/* ------------------------------------------------------------------ */
/* Completion channels and the arm protocol                            */
/* ------------------------------------------------------------------ */

static int wait_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq, int ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	void *ctx;

	if (poll(&pfd, 1, ms) != 1)
		return -1;
	return ibv_get_cq_event(ch, cq, &ctx);
}

TEST(completion_channel)
{
	struct su_pair pp, *p = &pp;
	struct ibv_sge s;
	struct ibv_cq *ev_cq;
	struct ibv_wc wc;
	int err;

	err = pair_open(p, &default_opts, 64, 1);
	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	fcntl(p->ch->fd, F_SETFL, fcntl(p->ch->fd, F_GETFL) | O_NONBLOCK);
	s = su_sge(p, A_OFF, 16);

	/* Armed for any completion: a send completion wakes us. */
	ASSERT_EQ(0, ibv_req_notify_cq(p->cq[0], 0));
	ASSERT_EQ(0, su_post_send(p->qp[0], IBV_WR_RDMA_WRITE, 1, &s, 1,
				  IBV_SEND_SIGNALED, su_addr(p, B_OFF), p->env.mr->rkey));
	ASSERT_EQ(0, wait_cq_event(p->ch, &ev_cq, SU_TIMEOUT_MS));
	EXPECT_EQ(p->cq[0], ev_cq);
	ibv_ack_cq_events(ev_cq, 1);
	ASSERT_EQ(1, ibv_poll_cq(p->cq[0], 1, &wc));
	EXPECT_EQ(1, wc.wr_id);

	/* Not re-armed: no event for the next completion. */
	ASSERT_EQ(0, su_post_send(p->qp[0], IBV_WR_RDMA_WRITE, 2, &s, 1,
				  IBV_SEND_SIGNALED, su_addr(p, B_OFF), p->env.mr->rkey));
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(-1, wait_cq_event(p->ch, &ev_cq, 300));

	/* Solicited only: an unsolicited receive does not wake us ... */
	ASSERT_EQ(0, ibv_req_notify_cq(p->cq[1], 1));
	ASSERT_EQ(0, post_recv(p, 1, 10, B_OFF, 64));
	ASSERT_EQ(0, post_recv(p, 1, 11, B_OFF, 64));
	ASSERT_EQ(0, su_post_send(p->qp[0], IBV_WR_SEND, 3, &s, 1, IBV_SEND_SIGNALED, 0, 0));
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(10, wc.wr_id);
	EXPECT_EQ(-1, wait_cq_event(p->ch, &ev_cq, 300));
	/* ... a solicited one does (the request is still pending). */
	ASSERT_EQ(0, su_post_send(p->qp[0], IBV_WR_SEND, 4, &s, 1,
				  IBV_SEND_SIGNALED | IBV_SEND_SOLICITED, 0, 0));
	ASSERT_EQ(0, wait_cq_event(p->ch, &ev_cq, SU_TIMEOUT_MS));
	EXPECT_EQ(p->cq[1], ev_cq);
	ibv_ack_cq_events(ev_cq, 1);
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(11, wc.wr_id);
	while (su_poll(p->cq[0], &wc, 100))
		;
	su_pair_close(p);
}

/* ------------------------------------------------------------------ */
/* Two threads, two QPs, one shared CQ                                  */
/* ------------------------------------------------------------------ */

#define MT_PER_THREAD 2000

struct mt_arg {
	struct su_pair *p;
	struct ibv_qp *qp;
	size_t off;
	atomic_int *done;	/* completions per QP, indexed 0/1 */
	int index;
	int err;
};

static void *mt_worker(void *arg)
{
	struct mt_arg *a = arg;
	struct ibv_sge s = su_sge(a->p, a->off, 256);
	int posted = 0, outstanding = 0;
	long end = su_now_ms() + 60000;

	while ((posted < MT_PER_THREAD || atomic_load(&a->done[a->index]) < MT_PER_THREAD) &&
	       su_now_ms() < end) {
		if (posted < MT_PER_THREAD && outstanding < 16) {
			struct ibv_send_wr wr = {
				.wr_id = (uint64_t)a->index << 32 | posted,
				.sg_list = &s, .num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE,
				.send_flags = IBV_SEND_SIGNALED,
				.wr.rdma = { .remote_addr = su_addr(a->p, a->off + B_OFF),
					     .rkey = a->p->env.mr->rkey },
			};
			struct ibv_send_wr *bad;
			int err = ibv_post_send(a->qp, &wr, &bad);

			if (!err) {
				posted++;
				outstanding++;
			} else if (err != ENOMEM) {
				a->err = err;
				return NULL;
			}
		}
		struct ibv_wc wc[8];
		int n = ibv_poll_cq(a->p->cq[0], 8, wc);

		for (int i = 0; i < n; i++) {
			int who = (int)(wc[i].wr_id >> 32);

			if (wc[i].status != IBV_WC_SUCCESS || who > 1) {
				a->err = -1;
				return NULL;
			}
			atomic_fetch_add(&a->done[who], 1);
		}
		outstanding = posted - atomic_load(&a->done[a->index]);
	}
	if (atomic_load(&a->done[a->index]) != MT_PER_THREAD)
		a->err = -2;
	return NULL;
}

TEST(two_threads_share_a_cq)
{
	struct su_opts o = default_opts;
	struct su_pair pp, *p = &pp;
	struct ibv_qp *qp2[2];
	atomic_int done[2] = { 0, 0 };
	struct mt_arg args[2];
	pthread_t th[2];
	int err;

	o.send_wr = 16;
	err = pair_open(p, &o, 256, 0);
	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	/* A second connected pair whose requester also uses cq[0]. */
	qp2[0] = su_create_qp(p, p->env.pd, p->cq[0], p->cq[0]);
	qp2[1] = su_create_qp(p, p->env.pd, p->cq[1], p->cq[1]);
	ASSERT_NE(NULL, qp2[0]);
	ASSERT_NE(NULL, qp2[1]);
	ASSERT_EQ(0, su_connect(p, qp2[0], qp2[1]));

	for (int i = 0; i < 2; i++) {
		args[i] = (struct mt_arg){
			.p = p, .qp = i ? qp2[0] : p->qp[0], .off = i * 4096,
			.done = done, .index = i,
		};
		ASSERT_EQ(0, pthread_create(&th[i], NULL, mt_worker, &args[i]));
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	EXPECT_EQ(0, args[0].err);
	EXPECT_EQ(0, args[1].err);
	EXPECT_EQ(MT_PER_THREAD, atomic_load(&done[0]));
	EXPECT_EQ(MT_PER_THREAD, atomic_load(&done[1]));
	EXPECT_EQ(0, ibv_destroy_qp(qp2[0]));
	EXPECT_EQ(0, ibv_destroy_qp(qp2[1]));
	su_pair_close(p);
}

TEST_HARNESS_MAIN
