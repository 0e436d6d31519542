// SPDX-License-Identifier: GPL-2.0
/*
 * RDMA between the two guests of one fabric, every byte checked on the
 * side it lands on. Runs in both guests of `scripts/vm --vms 2`
 * (tests/integration/fabric/run, run type ks:fabric_rdma): guest 0 is the
 * responder, guest 1 the requester.
 * - RC: SEND, SEND_WITH_IMM, RDMA WRITE, WRITE_WITH_IMM, RDMA READ,
 *   CMP_AND_SWP and FETCH_AND_ADD, gathers and scatters over several SGEs
 *   and 1 MiB messages (far above the path MTU); the responder checks its
 *   receive buffers, MR contents, receive completions (byte_len, imm_data)
 *   and the words the atomics left, the requester what READ and the
 *   atomics brought back;
 * - RC on an SRQ at the responder, UC SEND and WRITE_WITH_IMM, UD SEND
 *   with its GRH (the requester's GID as source, src_qp, IBV_WC_GRH);
 * - responder-side errors as on one VM (suite_mr, suite_hostile): a bad
 *   rkey, an rkey of another PD, an MR without the remote right, one byte
 *   out of bounds: IBV_WC_REM_ACCESS_ERR at the requester, the responder
 *   QP in ERR with IBV_EVENT_QP_ACCESS_ERR, no byte moved;
 * - guessing: 256 rkeys around the ones the responder gave, at a sentinel
 *   whose rkey it did not give, and QPNs around the ones it gave, UD and
 *   RC, at QPs it did not name: nothing lands, then the real keys work.
 *
 * Each test meets its peer through files in VRNIC_SHARED named after it,
 * written under a temporary name and renamed: the requester publishes its
 * GID and QPNs (<test>.req); the responder connects to them, prepares its
 * memory and publishes what the requester may use (<test>.resp); the
 * requester works and says so (<test>.done); the responder checks what
 * arrived. Each side ends with <test>.end<i>, which also tells a waiting
 * peer that the test failed early on that side; the requester waits for
 * the responder's before it moves on. Every wait is bounded. The files
 * and the connection are su_fab_* of the kselftest library.
 */
#include <arpa/inet.h>

#include "suite.h"
#include "kselftest_harness.h"

#define FX_TEST_S 240		/* a whole test, then the harness kills it */
#define FX_BUF (4 << 20)	/* each side's main buffer and MR */
#define FX_MIB (1 << 20)
#define FX_RX_UD (VRNIC_GRH_SIZE + 8192)

struct side {
	struct su_fab f;	/* guest 0 responds; env: one MR over FX_BUF */
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp[SU_FAB_NQP];
	struct ibv_srq *srq;
	struct ibv_pd *pd2;
	struct ibv_mr *mr[SU_FAB_NKEY];
	uint8_t *mbuf[SU_FAB_NKEY];
	struct ibv_ah *ah;
};

/* ------------------------------------------------------------------ */
/* Objects                                                             */
/* ------------------------------------------------------------------ */

static int side_open(struct side *s)
{
	int err;

	err = su_env_open(&s->f.env, FX_BUF, 0, SU_MR_ALL);
	if (err)
		return err;
	s->scq = ibv_create_cq(s->f.env.ctx, 1024, NULL, NULL, 0);
	s->rcq = ibv_create_cq(s->f.env.ctx, 1024, NULL, NULL, 0);
	if (!s->scq || !s->rcq)
		return 6;
	memcpy(s->f.mine.gid, s->f.env.gid.raw, 16);
	return 0;
}

static void side_close(struct side *s)
{
	int i;

	if (s->ah)
		ibv_destroy_ah(s->ah);
	for (i = 0; i < SU_FAB_NQP; i++)
		if (s->qp[i])
			ibv_destroy_qp(s->qp[i]);
	if (s->srq)
		ibv_destroy_srq(s->srq);
	if (s->scq)
		ibv_destroy_cq(s->scq);
	if (s->rcq)
		ibv_destroy_cq(s->rcq);
	for (i = 0; i < SU_FAB_NKEY; i++) {
		if (s->mr[i])
			ibv_dereg_mr(s->mr[i]);
		free(s->mbuf[i]);
	}
	if (s->pd2)
		ibv_dealloc_pd(s->pd2);
	su_env_close(&s->f.env);
}

/* The fixture's setup and teardown, shared by both fixtures. */
static void side_setup(struct __test_metadata *_metadata, struct side *s,
		     const char *test)
{
	int err;

	/* Only fabric/run starts this, in both guests: alone it is wrong. */
	SU_FAB_ASSERT_INIT(&s->f, test, "fabric_rdma");
	err = side_open(s);
	if (err)
		su_fab_end(&s->f);	/* the peer need not wait for us */
	ASSERT_EQ(0, err) TH_LOG("open step %d: %s", err, strerror(errno));
}

static void side_teardown(struct __test_metadata *_metadata, struct side *s)
{
	su_fab_end(&s->f);
	/* The responder's checks are over before the next test starts. */
	if (s->f.me == 1 && su_fab_wait_end(&s->f))
		TH_LOG("guest 0 never ended %s", s->f.test);
	side_close(s);
}

static struct ibv_qp *fx_qp(struct side *s, int i, enum ibv_qp_type type,
			    struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = s->scq,
		.recv_cq = s->rcq,
		.srq = srq,
		.cap = {
			.max_send_wr = 64, .max_recv_wr = srq ? 0 : 64,
			.max_send_sge = 4, .max_recv_sge = srq ? 0 : 4,
		},
		.qp_type = type,
	};

	s->qp[i] = ibv_create_qp(s->f.env.pd, &a);
	return s->qp[i];
}

/* The requester: publish its QPNs, then read what the responder gave. */
#define FX_REQ_MEET(s, nqp) do { \
	int i_; \
	for (i_ = 0; i_ < (nqp); i_++) \
		(s)->f.mine.qpn[i_] = (s)->qp[i_]->qp_num; \
	SU_FAB_PUT(&s->f, "req"); \
	SU_FAB_GET(&s->f, "resp"); \
} while (0)

/* The responder: publish qp[0..nqp) and what it filled in s->f.mine. */
#define FX_RESP_PUBLISH(s, nqp) do { \
	int i_; \
	for (i_ = 0; i_ < (nqp); i_++) \
		(s)->f.mine.qpn[i_] = (s)->qp[i_]->qp_num; \
	SU_FAB_PUT(&s->f, "resp"); \
} while (0)

/* Connect qp[0..nqp) to the peer's qpn[0..nqp). */
#define FX_CONNECT_ALL(s, nqp) do { \
	int i_; \
	for (i_ = 0; i_ < (nqp); i_++) { \
		ASSERT_EQ(0, su_fab_connect(&(s)->f, (s)->qp[i_], \
					    (s)->f.peer.qpn[i_], 14, 7)); \
	} \
} while (0)

static struct ibv_sge fx_sge(struct side *s, size_t off, uint32_t len)
{
	struct ibv_sge g = {
		.addr = (uintptr_t)s->f.env.buf + off,
		.length = len,
		.lkey = s->f.env.mr->lkey,
	};
	return g;
}

/* One signalled work request; @imm in host order. */
static int fx_post(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id,
		   struct ibv_sge *sg, int n, uint64_t raddr, uint32_t rkey,
		   uint32_t imm)
{
	return su_post_send_imm(qp, op, wr_id, sg, n, IBV_SEND_SIGNALED, raddr,
				rkey, imm);
}

static int fx_atomic(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id,
		     struct ibv_sge *sg, uint64_t raddr, uint32_t rkey,
		     uint64_t compare_add, uint64_t swap)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = sg, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	return ibv_post_send(qp, &wr, &bad);
}

static int fx_recv(struct side *s, struct ibv_qp *qp, uint64_t wr_id,
		   size_t off, uint32_t len)
{
	struct ibv_sge g = fx_sge(s, off, len);

	return su_post_recv(qp, wr_id, &g, 1);
}

/* The status of the next completion on @cq, or -1 if none came. */
static int fx_status(struct ibv_cq *cq, struct ibv_wc *wc)
{
	return su_poll(cq, wc, SU_TIMEOUT_MS) == 1 ? (int)wc->status : -1;
}

/*
 * The requester's WRs 1..@n completed in order, successfully, each with
 * opcode @op (-1: not checked); then "done" tells the responder to look.
 */
static void fx_sent(struct __test_metadata *_metadata, struct side *s, int n,
		    int op)
{
	struct ibv_wc wc;
	int i;

	for (i = 1; i <= n; i++) {
		ASSERT_EQ(IBV_WC_SUCCESS, fx_status(s->scq, &wc))
			TH_LOG("WR %d: %s", i, ibv_wc_status_str(wc.status));
		EXPECT_EQ(i, wc.wr_id);
		if (op >= 0)
			EXPECT_EQ(op, wc.opcode);
	}
	SU_FAB_PUT(&s->f, "done");
}

/*
 * A message that continues one pattern stream over several pieces: byte i
 * of the piece that starts at stream index @from is su_pat(seed, from + i).
 */
static void pat_fill(uint8_t *b, size_t len, unsigned int seed, size_t from)
{
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = su_pat(seed, from + i);
}

static long pat_check(const uint8_t *b, size_t len, unsigned int seed,
		      size_t from)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != su_pat(seed, from + i))
			return (long)i;
	return -1;
}

FIXTURE(fx) {
	struct side s;
};

FIXTURE_SETUP(fx)
{
	side_setup(_metadata, &self->s, _metadata->name);
}

FIXTURE_TEARDOWN(fx)
{
	side_teardown(_metadata, &self->s);
}

/* ------------------------------------------------------------------ */
/* RC                                                                  */
/* ------------------------------------------------------------------ */

#define IMM_SEND 0x12345678u
#define IMM_WRITE 0xabcdef01u

/*
 * SEND 4 KiB, SEND_WITH_IMM 3000 B, a 3-SGE SEND scattered over 2 receive
 * SGEs, SEND 1 MiB: the responder checks every receive and its bytes.
 */
TEST_F_TIMEOUT(fx, rc_send, FX_TEST_S)
{
	struct side *s = &self->s;
	uint8_t *b = s->f.env.buf;
	struct ibv_sge g[3];
	struct ibv_wc wc;
	int i;

	ASSERT_NE(NULL, fx_qp(s, 0, IBV_QPT_RC, NULL));
	if (s->f.me == 1) {
		FX_REQ_MEET(s, 1);
		FX_CONNECT_ALL(s, 1);
		su_fill(b, 4096, 11);
		g[0] = fx_sge(s, 0, 4096);
		ASSERT_EQ(0, fx_post(s->qp[0], IBV_WR_SEND, 1, g, 1, 0, 0, 0));
		su_fill(b + 8192, 3000, 12);
		g[0] = fx_sge(s, 8192, 3000);
		ASSERT_EQ(0, fx_post(s->qp[0], IBV_WR_SEND_WITH_IMM, 2, g, 1,
				     0, 0, IMM_SEND));
		/* 100 + 4000 + 1900 bytes of one stream, gathered. */
		pat_fill(b + 65536, 100, 13, 0);
		pat_fill(b + 81920, 4000, 13, 100);
		pat_fill(b + 98304, 1900, 13, 4100);
		g[0] = fx_sge(s, 65536, 100);
		g[1] = fx_sge(s, 81920, 4000);
		g[2] = fx_sge(s, 98304, 1900);
		ASSERT_EQ(0, fx_post(s->qp[0], IBV_WR_SEND, 3, g, 3, 0, 0, 0));
		su_fill(b + 2 * FX_MIB, FX_MIB, 14);
		g[0] = fx_sge(s, 2 * FX_MIB, FX_MIB);
		ASSERT_EQ(0, fx_post(s->qp[0], IBV_WR_SEND, 4, g, 1, 0, 0, 0));
		fx_sent(_metadata, s, 4, IBV_WC_SEND);
		return;
	}

	SU_FAB_GET(&s->f, "req");
	FX_CONNECT_ALL(s, 1);
	memset(b, 0xee, FX_BUF);
	ASSERT_EQ(0, fx_recv(s, s->qp[0], 1, 0, 8192));
	ASSERT_EQ(0, fx_recv(s, s->qp[0], 2, 65536, 8192));
	g[0] = fx_sge(s, 131072, 1000);
	g[1] = fx_sge(s, 131072 + 2000, 9000);
	ASSERT_EQ(0, su_post_recv(s->qp[0], 3, g, 2));
	ASSERT_EQ(0, fx_recv(s, s->qp[0], 4, FX_MIB, FX_MIB + 4096));
	FX_RESP_PUBLISH(s, 1);
	SU_FAB_GET(&s->f, "done");

	for (i = 1; i <= 4; i++) {
		ASSERT_EQ(IBV_WC_SUCCESS, fx_status(s->rcq, &wc))
			TH_LOG("receive %d: %s", i, ibv_wc_status_str(wc.status));
		EXPECT_EQ(i, wc.wr_id);
		EXPECT_EQ(IBV_WC_RECV, wc.opcode);
		EXPECT_EQ(s->qp[0]->qp_num, wc.qp_num);
		EXPECT_EQ(i == 2 ? IBV_WC_WITH_IMM : 0,
			  wc.wc_flags & IBV_WC_WITH_IMM);
		switch (i) {
		case 1:
			EXPECT_EQ(4096, wc.byte_len);
			EXPECT_EQ(-1, su_check(b, 4096, 11));
			EXPECT_EQ(-1, su_check_byte(b + 4096, 4096, 0xee));
			break;
		case 2:
			EXPECT_EQ(3000, wc.byte_len);
			EXPECT_EQ(IMM_SEND, ntohl(wc.imm_data));
			EXPECT_EQ(-1, su_check(b + 65536, 3000, 12));
			EXPECT_EQ(-1, su_check_byte(b + 65536 + 3000, 5192,
						    0xee));
			break;
		case 3:
			EXPECT_EQ(6000, wc.byte_len);
			EXPECT_EQ(-1, pat_check(b + 131072, 1000, 13, 0));
			EXPECT_EQ(-1, su_check_byte(b + 131072 + 1000, 1000,
						    0xee));
			EXPECT_EQ(-1, pat_check(b + 131072 + 2000, 5000, 13,
						1000));
			EXPECT_EQ(-1, su_check_byte(b + 131072 + 7000, 4000,
						    0xee));
			break;
		case 4:
			EXPECT_EQ(FX_MIB, wc.byte_len);
			EXPECT_EQ(-1, su_check(b + FX_MIB, FX_MIB, 14));
			EXPECT_EQ(-1, su_check_byte(b + 2 * FX_MIB, 4096,
						    0xee));
			break;
		}
	}
	EXPECT_EQ(0, su_poll(s->rcq, &wc, 200));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(s->qp[0]));
}

/*
 * WRITE 64 KiB, a 3-SGE WRITE, WRITE_WITH_IMM 5000 B, WRITE 1 MiB into the
 * responder's MR: its bytes, the guards after each range, and the receive
 * WRITE_WITH_IMM consumes (byte_len, imm_data) without touching its buffer.
 */
TEST_F_TIMEOUT(fx, rc_write, FX_TEST_S)
{
	static const size_t at[4] = { 0, 131072, 196608, FX_MIB };
	static const uint32_t len[4] = { 65536, 10000, 5000, FX_MIB };
	struct side *s = &self->s;
	uint8_t *b = s->f.env.buf;
	struct ibv_sge g[3];
	struct ibv_wc wc;
	int i;

	ASSERT_NE(NULL, fx_qp(s, 0, IBV_QPT_RC, NULL));
	if (s->f.me == 1) {
		uint64_t r;
		uint32_t rkey;

		FX_REQ_MEET(s, 1);
		FX_CONNECT_ALL(s, 1);
		r = s->f.peer.addr[0];
		rkey = s->f.peer.rkey[0];
		su_fill(b, 65536, 21);
		g[0] = fx_sge(s, 0, 65536);
		ASSERT_EQ(0, fx_post(s->qp[0], IBV_WR_RDMA_WRITE, 1, g, 1,
				     r + at[0], rkey, 0));
		pat_fill(b + 131072, 3000, 22, 0);
		pat_fill(b + 163840, 5000, 22, 3000);
		pat_fill(b + 196608, 2000, 22, 8000);
		g[0] = fx_sge(s, 131072, 3000);
		g[1] = fx_sge(s, 163840, 5000);
		g[2] = fx_sge(s, 196608, 2000);
		ASSERT_EQ(0, fx_post(s->qp[0], IBV_WR_RDMA_WRITE, 2, g, 3,
				     r + at[1], rkey, 0));
		su_fill(b + 262144, 5000, 23);
		g[0] = fx_sge(s, 262144, 5000);
		ASSERT_EQ(0, fx_post(s->qp[0], IBV_WR_RDMA_WRITE_WITH_IMM, 3,
				     g, 1, r + at[2], rkey, IMM_WRITE));
		su_fill(b + FX_MIB, FX_MIB, 24);
		g[0] = fx_sge(s, FX_MIB, FX_MIB);
		ASSERT_EQ(0, fx_post(s->qp[0], IBV_WR_RDMA_WRITE, 4, g, 1,
				     r + at[3], rkey, 0));
		fx_sent(_metadata, s, 4, IBV_WC_RDMA_WRITE);
		return;
	}

	SU_FAB_GET(&s->f, "req");
	FX_CONNECT_ALL(s, 1);
	memset(b, 0xee, FX_BUF);
	ASSERT_EQ(0, fx_recv(s, s->qp[0], 9, 3 * FX_MIB, 64));
	s->f.mine.addr[0] = (uintptr_t)b;
	s->f.mine.rkey[0] = s->f.env.mr->rkey;
	FX_RESP_PUBLISH(s, 1);
	SU_FAB_GET(&s->f, "done");

	ASSERT_EQ(IBV_WC_SUCCESS, fx_status(s->rcq, &wc))
		TH_LOG("receive: %s", ibv_wc_status_str(wc.status));
	EXPECT_EQ(9, wc.wr_id);
	EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, wc.opcode);
	EXPECT_EQ(IBV_WC_WITH_IMM, wc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(len[2], wc.byte_len);
	EXPECT_EQ(IMM_WRITE, ntohl(wc.imm_data));
	EXPECT_EQ(s->qp[0]->qp_num, wc.qp_num);
	EXPECT_EQ(0, su_poll(s->rcq, &wc, 200));
	EXPECT_EQ(-1, su_check_byte(b + 3 * FX_MIB, 64, 0xee));

	EXPECT_EQ(-1, su_check(b + at[0], len[0], 21));
	EXPECT_EQ(-1, pat_check(b + at[1], len[1], 22, 0));
	EXPECT_EQ(-1, su_check(b + at[2], len[2], 23));
	EXPECT_EQ(-1, su_check(b + at[3], len[3], 24));
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(-1, su_check_byte(b + at[i] + len[i], 4096, 0xee))
			TH_LOG("after write %d", i + 1);
	}
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(s->qp[0]));
}

/*
 * READ 1 MiB, a READ scattered over 3 SGEs and a 13-byte READ at an odd
 * offset: the requester checks what came back, the responder that its
 * memory is as it was.
 */
TEST_F_TIMEOUT(fx, rc_read, FX_TEST_S)
{
	struct side *s = &self->s;
	uint8_t *b = s->f.env.buf;
	struct ibv_sge g[3];
	struct ibv_wc wc;
	size_t off;
	int i;

	ASSERT_NE(NULL, fx_qp(s, 0, IBV_QPT_RC, NULL));
	if (s->f.me == 0) {
		SU_FAB_GET(&s->f, "req");
		FX_CONNECT_ALL(s, 1);
		su_fill(b, 2 * FX_MIB, 31);
		s->f.mine.addr[0] = (uintptr_t)b;
		s->f.mine.rkey[0] = s->f.env.mr->rkey;
		FX_RESP_PUBLISH(s, 1);
		SU_FAB_GET(&s->f, "done");
		EXPECT_EQ(-1, su_check(b, 2 * FX_MIB, 31));
		EXPECT_EQ(0, su_poll(s->rcq, &wc, 200));
		EXPECT_EQ(IBV_QPS_RTS, su_qp_state(s->qp[0]));
		return;
	}

	FX_REQ_MEET(s, 1);
	FX_CONNECT_ALL(s, 1);
	memset(b, 0xee, FX_BUF);
	g[0] = fx_sge(s, 0, FX_MIB);
	ASSERT_EQ(0, fx_post(s->qp[0], IBV_WR_RDMA_READ, 1, g, 1,
			     s->f.peer.addr[0], s->f.peer.rkey[0], 0));
	g[0] = fx_sge(s, 2 * FX_MIB, 1000);
	g[1] = fx_sge(s, 2 * FX_MIB + 4096, 3000);
	g[2] = fx_sge(s, 2 * FX_MIB + 16384, 2000);
	ASSERT_EQ(0, fx_post(s->qp[0], IBV_WR_RDMA_READ, 2, g, 3,
			     s->f.peer.addr[0] + FX_MIB + 333, s->f.peer.rkey[0],
			     0));
	g[0] = fx_sge(s, 3 * FX_MIB, 13);
	ASSERT_EQ(0, fx_post(s->qp[0], IBV_WR_RDMA_READ, 3, g, 1,
			     s->f.peer.addr[0] + 777, s->f.peer.rkey[0], 0));
	for (i = 1; i <= 3; i++) {
		ASSERT_EQ(IBV_WC_SUCCESS, fx_status(s->scq, &wc))
			TH_LOG("read %d: %s", i, ibv_wc_status_str(wc.status));
		EXPECT_EQ(i, wc.wr_id);
		EXPECT_EQ(IBV_WC_RDMA_READ, wc.opcode);
		EXPECT_EQ(i == 1 ? FX_MIB : i == 2 ? 6000 : 13, wc.byte_len);
	}
	/* The responder's buffer holds su_pat(31, offset). */
	EXPECT_EQ(-1, su_check(b, FX_MIB, 31));
	EXPECT_EQ(-1, su_check_byte(b + FX_MIB, 4096, 0xee));
	off = 2 * FX_MIB;
	EXPECT_EQ(-1, pat_check(b + off, 1000, 31, FX_MIB + 333));
	EXPECT_EQ(-1, su_check_byte(b + off + 1000, 3096, 0xee));
	EXPECT_EQ(-1, pat_check(b + off + 4096, 3000, 31, FX_MIB + 1333));
	EXPECT_EQ(-1, su_check_byte(b + off + 7096, 9288, 0xee));
	EXPECT_EQ(-1, pat_check(b + off + 16384, 2000, 31, FX_MIB + 4333));
	EXPECT_EQ(-1, su_check_byte(b + off + 18384, 4096, 0xee));
	EXPECT_EQ(-1, pat_check(b + 3 * FX_MIB, 13, 31, 777));
	EXPECT_EQ(-1, su_check_byte(b + 3 * FX_MIB + 13, 4096, 0xee));
	SU_FAB_PUT(&s->f, "done");
}

#define W_OFF 4096		/* the atomics' three words in the responder */
#define W0 0x1111111122222222ull
#define W0_SWAP 0xdeadbeefcafef00dull
#define W1 100ull
#define W2 0x5555ull

/*
 * CMP_AND_SWP that swaps and one that does not, two FETCH_AND_ADDs on one
 * word: the requester checks the original values it got, the responder
 * the 8 bytes each left and the bytes around them.
 */
TEST_F_TIMEOUT(fx, rc_atomics, FX_TEST_S)
{
	static const uint64_t want[4] = { W0, W2, W1, W1 + 42 };
	struct side *s = &self->s;
	uint8_t *b = s->f.env.buf;
	uint64_t w[3];
	struct ibv_sge g;
	struct ibv_wc wc;
	int i;

	ASSERT_NE(NULL, fx_qp(s, 0, IBV_QPT_RC, NULL));
	if (s->f.me == 0) {
		SU_FAB_GET(&s->f, "req");
		FX_CONNECT_ALL(s, 1);
		memset(b, 0xee, 65536);
		w[0] = W0;
		w[1] = W1;
		w[2] = W2;
		memcpy(b + W_OFF, w, sizeof(w));
		s->f.mine.addr[0] = (uintptr_t)b + W_OFF;
		s->f.mine.rkey[0] = s->f.env.mr->rkey;
		FX_RESP_PUBLISH(s, 1);
		SU_FAB_GET(&s->f, "done");
		memcpy(w, b + W_OFF, sizeof(w));
		EXPECT_EQ(W0_SWAP, w[0]);
		EXPECT_EQ(W1 + 42 + 1000, w[1]);
		EXPECT_EQ(W2, w[2]);
		EXPECT_EQ(-1, su_check_byte(b, W_OFF, 0xee));
		EXPECT_EQ(-1, su_check_byte(b + W_OFF + sizeof(w),
					    65536 - W_OFF - sizeof(w), 0xee));
		EXPECT_EQ(IBV_QPS_RTS, su_qp_state(s->qp[0]));
		return;
	}

	FX_REQ_MEET(s, 1);
	FX_CONNECT_ALL(s, 1);
	memset(b, 0xee, 4096);
	g = fx_sge(s, 0, 8);
	ASSERT_EQ(0, fx_atomic(s->qp[0], IBV_WR_ATOMIC_CMP_AND_SWP, 1, &g,
			       s->f.peer.addr[0], s->f.peer.rkey[0], W0, W0_SWAP));
	g = fx_sge(s, 64, 8);
	ASSERT_EQ(0, fx_atomic(s->qp[0], IBV_WR_ATOMIC_CMP_AND_SWP, 2, &g,
			       s->f.peer.addr[0] + 16, s->f.peer.rkey[0], 0x1234,
			       0x9999));
	g = fx_sge(s, 128, 8);
	ASSERT_EQ(0, fx_atomic(s->qp[0], IBV_WR_ATOMIC_FETCH_AND_ADD, 3, &g,
			       s->f.peer.addr[0] + 8, s->f.peer.rkey[0], 42, 0));
	g = fx_sge(s, 192, 8);
	ASSERT_EQ(0, fx_atomic(s->qp[0], IBV_WR_ATOMIC_FETCH_AND_ADD, 4, &g,
			       s->f.peer.addr[0] + 8, s->f.peer.rkey[0], 1000, 0));
	for (i = 1; i <= 4; i++) {
		uint64_t got;

		ASSERT_EQ(IBV_WC_SUCCESS, fx_status(s->scq, &wc))
			TH_LOG("atomic %d: %s", i, ibv_wc_status_str(wc.status));
		EXPECT_EQ(i, wc.wr_id);
		EXPECT_EQ(i <= 2 ? IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD,
			  wc.opcode);
		memcpy(&got, b + (i - 1) * 64, 8);
		EXPECT_EQ(want[i - 1], got) TH_LOG("atomic %d", i);
		EXPECT_EQ(-1, su_check_byte(b + (i - 1) * 64 + 8, 56, 0xee));
	}
	SU_FAB_PUT(&s->f, "done");
}

/* ------------------------------------------------------------------ */
/* SRQ, UC, UD                                                         */
/* ------------------------------------------------------------------ */

#define SRQ_SLOT 8192

/*
 * Two RC QPs of the responder on one SRQ, two SENDs to each: every
 * message in its own SRQ buffer, on the right QP, in order per QP.
 */
TEST_F_TIMEOUT(fx, srq_send, FX_TEST_S)
{
	struct side *s = &self->s;
	uint8_t *b = s->f.env.buf;
	struct ibv_wc wc;
	int slot_of[4] = { -1, -1, -1, -1 };
	int i, m, k;

	if (s->f.me == 1) {
		struct ibv_sge g;

		ASSERT_NE(NULL, fx_qp(s, 0, IBV_QPT_RC, NULL));
		ASSERT_NE(NULL, fx_qp(s, 1, IBV_QPT_RC, NULL));
		FX_REQ_MEET(s, 2);
		FX_CONNECT_ALL(s, 2);
		/* Message m: 1000 * (m + 1) bytes of seed 40 + m on QP m % 2. */
		for (m = 0; m < 4; m++) {
			su_fill(b + m * 65536, 1000 * (m + 1), 40 + m);
			g = fx_sge(s, m * 65536, 1000 * (m + 1));
			ASSERT_EQ(0, fx_post(s->qp[m % 2], IBV_WR_SEND, m, &g,
					     1, 0, 0, 0));
		}
		for (i = 0; i < 4; i++) {
			ASSERT_EQ(IBV_WC_SUCCESS, fx_status(s->scq, &wc))
				TH_LOG("send: %s", ibv_wc_status_str(wc.status));
		}
		SU_FAB_PUT(&s->f, "done");
		return;
	}

	{
		struct ibv_srq_init_attr a = {
			.attr = { .max_wr = 16, .max_sge = 1 },
		};

		s->srq = ibv_create_srq(s->f.env.pd, &a);
		ASSERT_NE(NULL, s->srq);
	}
	ASSERT_NE(NULL, fx_qp(s, 0, IBV_QPT_RC, s->srq));
	ASSERT_NE(NULL, fx_qp(s, 1, IBV_QPT_RC, s->srq));
	SU_FAB_GET(&s->f, "req");
	FX_CONNECT_ALL(s, 2);
	memset(b, 0xee, 4 * SRQ_SLOT);
	for (k = 0; k < 4; k++) {
		struct ibv_sge g = fx_sge(s, k * SRQ_SLOT, SRQ_SLOT);

		ASSERT_EQ(0, su_post_srq_recv(s->srq, 100 + k, &g, 1));
	}
	FX_RESP_PUBLISH(s, 2);
	SU_FAB_GET(&s->f, "done");

	for (i = 0; i < 4; i++) {
		ASSERT_EQ(IBV_WC_SUCCESS, fx_status(s->rcq, &wc))
			TH_LOG("receive: %s", ibv_wc_status_str(wc.status));
		EXPECT_EQ(IBV_WC_RECV, wc.opcode);
		k = (int)wc.wr_id - 100;
		m = (int)wc.byte_len / 1000 - 1;
		ASSERT_TRUE(k >= 0 && k < 4) TH_LOG("wr_id %lu", wc.wr_id);
		ASSERT_TRUE(m >= 0 && m < 4 && wc.byte_len % 1000 == 0)
			TH_LOG("byte_len %u", wc.byte_len);
		EXPECT_EQ(-1, slot_of[m]) TH_LOG("message %d twice", m);
		slot_of[m] = k;
		EXPECT_EQ(s->qp[m % 2]->qp_num, wc.qp_num) TH_LOG("message %d", m);
		EXPECT_EQ(-1, su_check(b + k * SRQ_SLOT, wc.byte_len, 40 + m))
			TH_LOG("message %d in slot %d", m, k);
		EXPECT_EQ(-1, su_check_byte(b + k * SRQ_SLOT + wc.byte_len,
					    SRQ_SLOT - wc.byte_len, 0xee));
	}
	/* SRQ WQEs go in posting order; each QP's messages in theirs. */
	EXPECT_LT(slot_of[0], slot_of[2]);
	EXPECT_LT(slot_of[1], slot_of[3]);
	EXPECT_EQ(0, su_poll(s->rcq, &wc, 200));
}

#define IMM_UC 0x55aa55aau

/* UC: SEND 2000 B, WRITE 4 KiB, WRITE_WITH_IMM 3000 B. */
TEST_F_TIMEOUT(fx, uc_send_write_imm, FX_TEST_S)
{
	struct side *s = &self->s;
	uint8_t *b = s->f.env.buf;
	struct ibv_sge g;
	struct ibv_wc wc;

	ASSERT_NE(NULL, fx_qp(s, 0, IBV_QPT_UC, NULL));
	if (s->f.me == 1) {
		FX_REQ_MEET(s, 1);
		FX_CONNECT_ALL(s, 1);
		su_fill(b, 2000, 51);
		g = fx_sge(s, 0, 2000);
		ASSERT_EQ(0, fx_post(s->qp[0], IBV_WR_SEND, 1, &g, 1, 0, 0, 0));
		su_fill(b + 65536, 4096, 52);
		g = fx_sge(s, 65536, 4096);
		ASSERT_EQ(0, fx_post(s->qp[0], IBV_WR_RDMA_WRITE, 2, &g, 1,
				     s->f.peer.addr[0] + FX_MIB,
				     s->f.peer.rkey[0], 0));
		su_fill(b + 131072, 3000, 53);
		g = fx_sge(s, 131072, 3000);
		ASSERT_EQ(0, fx_post(s->qp[0], IBV_WR_RDMA_WRITE_WITH_IMM, 3,
				     &g, 1, s->f.peer.addr[0] + 2 * FX_MIB,
				     s->f.peer.rkey[0], IMM_UC));
		fx_sent(_metadata, s, 3, -1);
		return;
	}

	SU_FAB_GET(&s->f, "req");
	FX_CONNECT_ALL(s, 1);
	memset(b, 0xee, FX_BUF);
	ASSERT_EQ(0, fx_recv(s, s->qp[0], 1, 0, 8192));
	ASSERT_EQ(0, fx_recv(s, s->qp[0], 2, 3 * FX_MIB, 64));
	s->f.mine.addr[0] = (uintptr_t)b;
	s->f.mine.rkey[0] = s->f.env.mr->rkey;
	FX_RESP_PUBLISH(s, 1);
	SU_FAB_GET(&s->f, "done");

	ASSERT_EQ(IBV_WC_SUCCESS, fx_status(s->rcq, &wc))
		TH_LOG("receive 1: %s", ibv_wc_status_str(wc.status));
	EXPECT_EQ(1, wc.wr_id);
	EXPECT_EQ(IBV_WC_RECV, wc.opcode);
	EXPECT_EQ(2000, wc.byte_len);
	EXPECT_EQ(0, wc.wc_flags & IBV_WC_WITH_IMM);
	ASSERT_EQ(IBV_WC_SUCCESS, fx_status(s->rcq, &wc))
		TH_LOG("receive 2: %s", ibv_wc_status_str(wc.status));
	EXPECT_EQ(2, wc.wr_id);
	EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, wc.opcode);
	EXPECT_EQ(3000, wc.byte_len);
	EXPECT_EQ(IBV_WC_WITH_IMM, wc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(IMM_UC, ntohl(wc.imm_data));
	EXPECT_EQ(0, su_poll(s->rcq, &wc, 200));

	EXPECT_EQ(-1, su_check(b, 2000, 51));
	EXPECT_EQ(-1, su_check_byte(b + 2000, 6192, 0xee));
	EXPECT_EQ(-1, su_check(b + FX_MIB, 4096, 52));
	EXPECT_EQ(-1, su_check_byte(b + FX_MIB + 4096, 4096, 0xee));
	EXPECT_EQ(-1, su_check(b + 2 * FX_MIB, 3000, 53));
	EXPECT_EQ(-1, su_check_byte(b + 2 * FX_MIB + 3000, 4096, 0xee));
	EXPECT_EQ(-1, su_check_byte(b + 3 * FX_MIB, 64, 0xee));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(s->qp[0]));
}

/*
 * UD SENDs of 700 and 1000 bytes from the requester's UD QP: each lands
 * behind the GRH area with the requester's address as source, src_qp is
 * the requester's QPN and libibverbs builds the way back from them.
 */
TEST_F_TIMEOUT(fx, ud_send_grh, FX_TEST_S)
{
	static const uint32_t len[2] = { 700, 1000 };
	struct side *s = &self->s;
	uint8_t *b = s->f.env.buf;
	struct ibv_sge g;
	struct ibv_wc wc;
	int i;

	ASSERT_NE(NULL, fx_qp(s, 0, IBV_QPT_UD, NULL));
	if (s->f.me == 1) {
		struct ibv_ah_attr av;

		FX_REQ_MEET(s, 1);
		ASSERT_EQ(0, su_fab_connect(&s->f, s->qp[0], 0, 0, 0));
		av = su_fab_av(&s->f);
		s->ah = ibv_create_ah(s->f.env.pd, &av);
		ASSERT_NE(NULL, s->ah);
		for (i = 0; i < 2; i++) {
			su_fill(b + i * 65536, len[i], 61 + i);
			g = fx_sge(s, i * 65536, len[i]);
			ASSERT_EQ(0, su_post_ud(s->qp[0], i ? IBV_WR_SEND_WITH_IMM :
						IBV_WR_SEND, i + 1, &g, 1,
						IBV_SEND_SIGNALED, s->ah,
						s->f.peer.qpn[0], s->f.peer.qkey,
						0x0badcafe));
			ASSERT_EQ(IBV_WC_SUCCESS, fx_status(s->scq, &wc));
		}
		SU_FAB_PUT(&s->f, "done");
		return;
	}

	SU_FAB_GET(&s->f, "req");
	ASSERT_EQ(0, su_fab_connect(&s->f, s->qp[0], 0, 0, 0));
	memset(b, 0xee, 2 * 65536);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, fx_recv(s, s->qp[0], i + 1, i * 65536, FX_RX_UD));
	}
	s->f.mine.qkey = SU_FAB_QKEY;
	FX_RESP_PUBLISH(s, 1);
	SU_FAB_GET(&s->f, "done");

	for (i = 0; i < 2; i++) {
		const uint8_t *rx = b + i * 65536;
		struct ibv_ah_attr back;

		ASSERT_EQ(IBV_WC_SUCCESS, fx_status(s->rcq, &wc))
			TH_LOG("datagram %d: %s", i + 1,
			       ibv_wc_status_str(wc.status));
		EXPECT_EQ(i + 1, wc.wr_id);
		EXPECT_EQ(IBV_WC_RECV, wc.opcode);
		EXPECT_EQ(VRNIC_GRH_SIZE + len[i], wc.byte_len);
		EXPECT_EQ(IBV_WC_GRH | (i ? IBV_WC_WITH_IMM : 0), wc.wc_flags);
		if (i) {
			EXPECT_EQ(0x0badcafe, ntohl(wc.imm_data));
		}
		EXPECT_EQ(s->f.peer.qpn[0], wc.src_qp);
		EXPECT_EQ(s->qp[0]->qp_num, wc.qp_num);
		/* with ImmDt after DETH in the second */
		EXPECT_EQ(0, su_grh_ipv4_check(rx, s->f.peer.gid, s->f.mine.gid,
					       (i ? 4 : 0) + len[i]));
		EXPECT_EQ(0, ibv_init_ah_from_wc(s->f.env.ctx, 1, &wc,
						 (struct ibv_grh *)rx, &back));
		EXPECT_EQ(1, back.is_global);
		EXPECT_EQ(0, memcmp(back.grh.dgid.raw, s->f.peer.gid, 16))
			TH_LOG("source GID of datagram %d", i + 1);
		EXPECT_EQ(s->f.env.gid_index, back.grh.sgid_index);
		EXPECT_EQ(-1, su_check(rx + VRNIC_GRH_SIZE, len[i], 61 + i));
		EXPECT_EQ(-1, su_check_byte(rx + VRNIC_GRH_SIZE + len[i],
					    FX_RX_UD - VRNIC_GRH_SIZE - len[i],
					    0xee));
	}
	EXPECT_EQ(0, su_poll(s->rcq, &wc, 200));
}

/* ------------------------------------------------------------------ */
/* Responder-side errors, as on one VM                                 */
/* ------------------------------------------------------------------ */

#define ERR_PAGE 4096		/* the target MR is the middle page of three */

FIXTURE(xerr) {
	struct side s;
};

FIXTURE_VARIANT(xerr) {
	const char *name;	/* names the test's files */
	enum ibv_wr_opcode op;
	int access;		/* of the responder's target MR */
	int other_pd;		/* the target MR is in another PD */
	uint32_t key_flip;	/* rkey ^ this: a key that names nothing */
	long off;		/* from the target MR's start */
	uint32_t len;
};

FIXTURE_VARIANT_ADD(xerr, bad_rkey) {
	.name = "bad_rkey", .op = IBV_WR_RDMA_WRITE, .access = SU_MR_ALL,
	.key_flip = 0x5a5a00, .len = 64,
};
FIXTURE_VARIANT_ADD(xerr, rkey_of_other_pd) {
	.name = "rkey_of_other_pd", .op = IBV_WR_RDMA_WRITE,
	.access = SU_MR_ALL, .other_pd = 1, .len = 64,
};
FIXTURE_VARIANT_ADD(xerr, write_without_remote_write) {
	.name = "write_without_remote_write", .op = IBV_WR_RDMA_WRITE,
	.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
		  IBV_ACCESS_REMOTE_ATOMIC, .len = 64,
};
FIXTURE_VARIANT_ADD(xerr, read_without_remote_read) {
	.name = "read_without_remote_read", .op = IBV_WR_RDMA_READ,
	.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_ATOMIC, .len = 64,
};
FIXTURE_VARIANT_ADD(xerr, atomic_without_remote_atomic) {
	.name = "atomic_without_remote_atomic",
	.op = IBV_WR_ATOMIC_FETCH_AND_ADD,
	.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ, .len = 8,
};
FIXTURE_VARIANT_ADD(xerr, write_one_byte_past_end) {
	.name = "write_one_byte_past_end", .op = IBV_WR_RDMA_WRITE,
	.access = SU_MR_ALL, .off = ERR_PAGE - 15, .len = 16,
};
FIXTURE_VARIANT_ADD(xerr, read_one_byte_past_end) {
	.name = "read_one_byte_past_end", .op = IBV_WR_RDMA_READ,
	.access = SU_MR_ALL, .off = ERR_PAGE - 8, .len = 9,
};
FIXTURE_VARIANT_ADD(xerr, write_one_byte_before_start) {
	.name = "write_one_byte_before_start", .op = IBV_WR_RDMA_WRITE,
	.access = SU_MR_ALL, .off = -1, .len = 16,
};
FIXTURE_VARIANT_ADD(xerr, atomic_just_past_end) {
	.name = "atomic_just_past_end", .op = IBV_WR_ATOMIC_FETCH_AND_ADD,
	.access = SU_MR_ALL, .off = ERR_PAGE, .len = 8,
};

FIXTURE_SETUP(xerr)
{
	side_setup(_metadata, &self->s, variant->name);
}

FIXTURE_TEARDOWN(xerr)
{
	side_teardown(_metadata, &self->s);
}

/*
 * The requester's one request fails with IBV_WC_REM_ACCESS_ERR and its QP
 * goes to ERR; the responder's QP goes to ERR with IBV_EVENT_QP_ACCESS_ERR
 * and no byte moves on either side.
 */
TEST_F_TIMEOUT(xerr, row, FX_TEST_S)
{
	struct side *s = &self->s;
	uint8_t *b = s->f.env.buf;
	struct ibv_wc wc;

	ASSERT_NE(NULL, fx_qp(s, 0, IBV_QPT_RC, NULL));
	if (s->f.me == 1) {
		struct ibv_sge g = fx_sge(s, 0, variant->len);
		uint64_t raddr;
		uint32_t rkey;
		int st;

		FX_REQ_MEET(s, 1);
		FX_CONNECT_ALL(s, 1);
		su_fill(b, 65536, 71);
		raddr = s->f.peer.addr[0] + variant->off;
		rkey = s->f.peer.rkey[0] ^ variant->key_flip;
		if (variant->op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			ASSERT_EQ(0, fx_atomic(s->qp[0], variant->op, 1, &g,
					       raddr, rkey, 1, 0));
		} else {
			ASSERT_EQ(0, fx_post(s->qp[0], variant->op, 1, &g, 1,
					     raddr, rkey, 0));
		}
		st = fx_status(s->scq, &wc);
		EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, st)
			TH_LOG("got %s", st < 0 ? "no completion" :
			       ibv_wc_status_str(st));
		EXPECT_EQ(IBV_QPS_ERR, su_qp_state(s->qp[0]));
		/* Nothing came back into the local buffer either. */
		EXPECT_EQ(-1, su_check(b, 65536, 71));
		SU_FAB_PUT(&s->f, "done");
		return;
	}

	SU_FAB_GET(&s->f, "req");
	FX_CONNECT_ALL(s, 1);
	s->mbuf[0] = aligned_alloc(4096, 3 * ERR_PAGE);
	ASSERT_NE(NULL, s->mbuf[0]);
	su_fill(s->mbuf[0], 3 * ERR_PAGE, 72);
	if (variant->other_pd) {
		s->pd2 = ibv_alloc_pd(s->f.env.ctx);
		ASSERT_NE(NULL, s->pd2);
	}
	s->mr[0] = ibv_reg_mr(variant->other_pd ? s->pd2 : s->f.env.pd,
			      s->mbuf[0] + ERR_PAGE, ERR_PAGE, variant->access);
	ASSERT_NE(NULL, s->mr[0]) TH_LOG("reg_mr: %s", strerror(errno));
	s->f.mine.addr[0] = (uintptr_t)s->mbuf[0] + ERR_PAGE;
	s->f.mine.rkey[0] = s->mr[0]->rkey;
	FX_RESP_PUBLISH(s, 1);
	SU_FAB_GET(&s->f, "done");

	EXPECT_TRUE(su_wait_async(s->f.env.ctx, IBV_EVENT_QP_ACCESS_ERR,
				  s->qp[0], SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_QPS_ERR, su_qp_state(s->qp[0]));
	EXPECT_EQ(0, su_poll(s->rcq, &wc, 200));
	EXPECT_EQ(-1, su_check(s->mbuf[0], 3 * ERR_PAGE, 72));
	EXPECT_EQ(-1, su_check_byte(b, FX_BUF, 0));
}

/* ------------------------------------------------------------------ */
/* Guessing                                                            */
/* ------------------------------------------------------------------ */

/* One async event within @ms: 1 if it is @type for @qp, else 0. */
static int fx_event(struct ibv_context *ctx, enum ibv_event_type type,
		    struct ibv_qp *qp, int ms)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	int got;

	fcntl(ctx->async_fd, F_SETFL,
	      fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
	if (poll(&pfd, 1, ms) <= 0 || ibv_get_async_event(ctx, &ev))
		return 0;
	got = ev.event_type == type && ev.element.qp == qp;
	ibv_ack_async_event(&ev);
	return got;
}

/*
 * WRITE 64 bytes from @loff with @rkey to @raddr on a freshly connected
 * qp[0]; the status. A responder QP still in ERR from the last guess does
 * not answer (RETRY_EXC_ERR): then again, once it is back.
 */
static int guess_write(struct side *s, size_t loff, uint64_t raddr,
		       uint32_t rkey, uint32_t *retries)
{
	struct ibv_sge g = fx_sge(s, loff, 64);
	struct ibv_wc wc;
	int tries, st = -1;

	for (tries = 0; tries < 50; tries++) {
		/* timeout 12 (16 ms), 7 retries: the peer reconnects in less */
		if (su_fab_connect(&s->f, s->qp[0], s->f.peer.qpn[0], 12, 7))
			return -2;
		if (fx_post(s->qp[0], IBV_WR_RDMA_WRITE, 1, &g, 1, raddr, rkey,
			    0))
			return -3;
		st = fx_status(s->scq, &wc);
		if (st != IBV_WC_RETRY_EXC_ERR)
			break;
		if (su_fab_exists(&s->f, "end0"))
			return -4;	/* nobody reconnects any more */
		(*retries)++;
	}
	return st;
}

#define GUESS_SPAN 32

/*
 * The responder registers A, the sentinel S and B one after the other and
 * gives A's and B's rkeys and S's address but not S's rkey. The requester
 * WRITEs to S with 256 rkeys around A's and B's (key byte and key above
 * it, +-1..32 each), never one it was given: every one is
 * IBV_WC_REM_ACCESS_ERR, the responder sees as many QP_ACCESS_ERR events
 * (and reconnects after each) and S, A and B stay as they were; then a
 * WRITE with the main MR's real rkey lands.
 */
TEST_F_TIMEOUT(fx, guess_rkeys, FX_TEST_S)
{
	struct side *s = &self->s;
	uint8_t *b = s->f.env.buf;
	static const size_t len[3] = { 4096, 65536, 4096 };
	static const unsigned int seed[3] = { 84, 81, 85 };
	int i;

	ASSERT_NE(NULL, fx_qp(s, 0, IBV_QPT_RC, NULL));
	if (s->f.me == 1) {
		uint32_t keys[2 * 2 * 2 * GUESS_SPAN], n = 0, errors = 0;
		uint32_t retries = 0, key, base;
		int k, d, form, st = -1;

		FX_REQ_MEET(s, 1);
		su_fill(b, 64, 82);
		su_fill(b + 4096, 64, 83);
		for (k = 1; k <= 2; k++) {
			base = s->f.peer.rkey[k];
			for (form = 0; form < 2; form++) {
				for (d = -GUESS_SPAN; d <= GUESS_SPAN; d++) {
					key = base + (form ? (uint32_t)d << 8 :
						      (uint32_t)d);
					if (key != s->f.peer.rkey[0] &&
					    key != s->f.peer.rkey[1] &&
					    key != s->f.peer.rkey[2])
						keys[n++] = key;
				}
			}
		}
		for (i = 0; i < (int)n; i++) {
			st = guess_write(s, 0, s->f.peer.addr[3], keys[i],
					 &retries);
			ASSERT_NE(-4, st) TH_LOG("guest 0 ended the test");
			/* After a hit the PSNs part: stop there. */
			if (st != IBV_WC_REM_ACCESS_ERR)
				break;
			errors++;
		}
		EXPECT_EQ(n, errors) TH_LOG("rkey %#x: status %d", keys[i], st);
		EXPECT_LE(250, n);
		/* The way in works with the key it was given. */
		if (errors == n) {
			st = guess_write(s, 4096, s->f.peer.addr[0],
					 s->f.peer.rkey[0], &retries);
			EXPECT_EQ(IBV_WC_SUCCESS, st)
				TH_LOG("the real rkey: %d", st);
		}
		TH_LOG("%u rkeys guessed, %u refused, %u retries", n, errors,
		       retries);
		s->f.mine.n[0] = errors;
		s->f.mine.n[1] = n;
		SU_FAB_PUT(&s->f, "done");
		return;
	}

	SU_FAB_GET(&s->f, "req");
	ASSERT_EQ(0, su_fab_connect(&s->f, s->qp[0], s->f.peer.qpn[0], 14, 7));
	for (i = 0; i < 3; i++) {
		s->mbuf[i] = aligned_alloc(4096, len[i]);
		ASSERT_NE(NULL, s->mbuf[i]);
		su_fill(s->mbuf[i], len[i], seed[i]);
		s->mr[i] = ibv_reg_mr(s->f.env.pd, s->mbuf[i], len[i], SU_MR_ALL);
		ASSERT_NE(NULL, s->mr[i]);
	}
	s->f.mine.addr[0] = (uintptr_t)b;
	s->f.mine.rkey[0] = s->f.env.mr->rkey;
	s->f.mine.addr[1] = (uintptr_t)s->mbuf[0];
	s->f.mine.rkey[1] = s->mr[0]->rkey;
	s->f.mine.addr[2] = (uintptr_t)s->mbuf[2];
	s->f.mine.rkey[2] = s->mr[2]->rkey;
	s->f.mine.addr[3] = (uintptr_t)s->mbuf[1];	/* its rkey stays here */
	FX_RESP_PUBLISH(s, 1);

	{
		long end = su_now_ms() + SU_FAB_WAIT_MS;
		uint32_t errors = 0, failed = 0;

		/*
		 * Every refused guess leaves our QP in ERR: reconnect it. A
		 * retried guess may already fail it again in RTR, before RTS:
		 * then its event comes and we reconnect once more.
		 */
		for (;;) {
			/* done comes before end1: end1 first, then done. */
			int ended = su_fab_exists(&s->f, "end1");

			if (su_fab_exists(&s->f, "done"))
				break;
			ASSERT_FALSE(ended) TH_LOG("guest 1 ended the test");
			ASSERT_LT(su_now_ms(), end)
				TH_LOG("%u errors, %u failed reconnects so far",
				       errors, failed);
			if (!fx_event(s->f.env.ctx, IBV_EVENT_QP_ACCESS_ERR,
				      s->qp[0], 100))
				continue;
			errors++;
			end = su_now_ms() + SU_FAB_WAIT_MS;
			if (su_fab_connect(&s->f, s->qp[0], s->f.peer.qpn[0], 14, 7))
				failed++;
		}
		SU_FAB_GET(&s->f, "done");
		EXPECT_EQ(s->f.peer.n[0], errors);
	}
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(-1, su_check(s->mbuf[i], len[i], seed[i]))
			TH_LOG("%s", i == 1 ? "the sentinel" : "a neighbour");
	}
	EXPECT_EQ(-1, su_check(b, 64, 83));
	EXPECT_EQ(-1, su_check_byte(b + 64, FX_BUF - 64, 0));
}

/* A QPN @d away from @base, or 0 if that is no QPN or one we were given. */
static uint32_t qpn_near(struct side *s, uint32_t base, int d)
{
	uint32_t x = (base + d) & 0xffffff;

	if (x < 2 || x == 0xffffff || x == s->f.peer.qpn[1] ||
	    x == s->f.peer.qpn[2])
		return 0;
	return x;
}

#define QPN_UD_SPAN 64
#define QPN_RC_SPAN 16
#define SENTINEL FX_MIB		/* in the responder's main MR */

/*
 * The responder has an RC QP K2 and a UD QP K it names, and an RC QP H
 * (connected to the requester's qp[0]) and a UD QP U it does not. The
 * requester sends datagrams with the right qkey to 256 QPNs around K's and
 * K2's, and connects qp[0] to 64 of them to WRITE into the sentinel with
 * the real rkey: the datagrams go nowhere (counted in its
 * ud_no_dest_drops), the WRITEs find no responder (RETRY_EXC_ERR), U
 * receives nothing and the sentinel stays; then K and K2 do receive.
 */
TEST_F_TIMEOUT(fx, guess_qpns, FX_TEST_S)
{
	struct side *s = &self->s;
	uint8_t *b = s->f.env.buf;
	struct ibv_wc wc;
	struct ibv_sge g;
	int i;

	if (s->f.me == 1) {
		uint32_t ud = 0, rc = 0, base, x;
		struct ibv_ah_attr av;
		long drops;
		int k, d, st;

		ASSERT_NE(NULL, fx_qp(s, 0, IBV_QPT_RC, NULL));
		ASSERT_NE(NULL, fx_qp(s, 1, IBV_QPT_RC, NULL));
		ASSERT_NE(NULL, fx_qp(s, 2, IBV_QPT_UD, NULL));
		FX_REQ_MEET(s, 3);
		ASSERT_EQ(0, su_fab_connect(&s->f, s->qp[1], s->f.peer.qpn[1], 14, 7));
		ASSERT_EQ(0, su_fab_connect(&s->f, s->qp[2], 0, 0, 0));
		av = su_fab_av(&s->f);
		s->ah = ibv_create_ah(s->f.env.pd, &av);
		ASSERT_NE(NULL, s->ah);
		su_fill(b, 64, 91);
		su_fill(b + 4096, 64, 92);
		su_fill(b + 8192, 64, 93);
		su_fill(b + 12288, 64, 94);

		drops = su_counter("ud_no_dest_drops");
		ASSERT_LE(0, drops);
		g = fx_sge(s, 0, 64);
		for (k = 1; k <= 2; k++) {
			base = s->f.peer.qpn[k];
			for (d = -QPN_UD_SPAN; d <= QPN_UD_SPAN; d++) {
				x = d ? qpn_near(s, base, d) : 0;
				if (!x)
					continue;
				ASSERT_EQ(0, su_post_ud(s->qp[2], IBV_WR_SEND,
							x, &g, 1,
							IBV_SEND_SIGNALED,
							s->ah, x, s->f.peer.qkey,
							0));
				ASSERT_EQ(IBV_WC_SUCCESS,
					  fx_status(s->scq, &wc));
				ud++;
			}
		}
		EXPECT_LE(250, ud);
		su_sleep_ms(50);	/* the RDMA core caches counters */
		EXPECT_EQ(drops + ud, su_counter("ud_no_dest_drops"));

		g = fx_sge(s, 12288, 64);
		for (k = 1; k <= 2; k++) {
			base = s->f.peer.qpn[k];
			for (d = -QPN_RC_SPAN; d <= QPN_RC_SPAN; d++) {
				x = d ? qpn_near(s, base, d) : 0;
				if (!x)
					continue;
				/* timeout 1, no retry: it fails fast */
				ASSERT_EQ(0, su_fab_connect(&s->f, s->qp[0], x, 1, 0));
				ASSERT_EQ(0, fx_post(s->qp[0],
						     IBV_WR_RDMA_WRITE, x, &g,
						     1, s->f.peer.addr[0] +
						     SENTINEL,
						     s->f.peer.rkey[0], 0));
				st = fx_status(s->scq, &wc);
				EXPECT_EQ(IBV_WC_RETRY_EXC_ERR, st)
					TH_LOG("QPN %#x: status %d", x, st);
				rc++;
			}
		}
		EXPECT_LE(60, rc);

		/* The QPNs it was given work. */
		g = fx_sge(s, 4096, 64);
		ASSERT_EQ(0, su_post_ud(s->qp[2], IBV_WR_SEND, 1, &g, 1,
					IBV_SEND_SIGNALED, s->ah,
					s->f.peer.qpn[2], s->f.peer.qkey, 0));
		EXPECT_EQ(IBV_WC_SUCCESS, fx_status(s->scq, &wc));
		g = fx_sge(s, 8192, 64);
		ASSERT_EQ(0, fx_post(s->qp[1], IBV_WR_RDMA_WRITE, 2, &g, 1,
				     s->f.peer.addr[0], s->f.peer.rkey[0], 0));
		EXPECT_EQ(IBV_WC_SUCCESS, fx_status(s->scq, &wc));
		TH_LOG("%u UD and %u RC QPNs guessed", ud, rc);
		s->f.mine.n[0] = ud;
		s->f.mine.n[1] = rc;
		SU_FAB_PUT(&s->f, "done");
		return;
	}

	ASSERT_NE(NULL, fx_qp(s, 0, IBV_QPT_RC, NULL));	/* H */
	ASSERT_NE(NULL, fx_qp(s, 1, IBV_QPT_RC, NULL));	/* K2 */
	ASSERT_NE(NULL, fx_qp(s, 2, IBV_QPT_UD, NULL));	/* K */
	ASSERT_NE(NULL, fx_qp(s, 3, IBV_QPT_UD, NULL));	/* U */
	SU_FAB_GET(&s->f, "req");
	ASSERT_EQ(0, su_fab_connect(&s->f, s->qp[0], s->f.peer.qpn[0], 14, 7));
	ASSERT_EQ(0, su_fab_connect(&s->f, s->qp[1], s->f.peer.qpn[1], 14, 7));
	ASSERT_EQ(0, su_fab_connect(&s->f, s->qp[2], 0, 0, 0));
	ASSERT_EQ(0, su_fab_connect(&s->f, s->qp[3], 0, 0, 0));
	su_fill(b + SENTINEL, 65536, 95);
	memset(b + 3 * FX_MIB, 0xee, 5 * 65536);
	ASSERT_EQ(0, fx_recv(s, s->qp[2], 1, 3 * FX_MIB, FX_RX_UD));
	for (i = 1; i <= 4; i++) {
		ASSERT_EQ(0, fx_recv(s, s->qp[3], 10 + i, 3 * FX_MIB + i * 65536,
				     FX_RX_UD));
	}
	s->f.mine.qpn[1] = s->qp[1]->qp_num;
	s->f.mine.qpn[2] = s->qp[2]->qp_num;
	s->f.mine.qkey = SU_FAB_QKEY;
	s->f.mine.addr[0] = (uintptr_t)b;
	s->f.mine.rkey[0] = s->f.env.mr->rkey;
	SU_FAB_PUT(&s->f, "resp");
	SU_FAB_GET(&s->f, "done");

	/* Only the datagram to K arrived, nothing reached U or H. */
	ASSERT_EQ(IBV_WC_SUCCESS, fx_status(s->rcq, &wc))
		TH_LOG("datagram to K: %s", ibv_wc_status_str(wc.status));
	EXPECT_EQ(s->qp[2]->qp_num, wc.qp_num);
	EXPECT_EQ(1, wc.wr_id);
	EXPECT_EQ(VRNIC_GRH_SIZE + 64, wc.byte_len);
	EXPECT_EQ(s->f.peer.qpn[2], wc.src_qp);
	EXPECT_EQ(-1, su_check(b + 3 * FX_MIB + VRNIC_GRH_SIZE, 64, 92));
	EXPECT_EQ(0, su_poll(s->rcq, &wc, 200))
		TH_LOG("stray receive on QP %#x, wr_id %lu", wc.qp_num,
		       wc.wr_id);
	EXPECT_EQ(-1, su_check_byte(b + 3 * FX_MIB + 65536, 4 * 65536, 0xee));
	EXPECT_EQ(-1, su_check(b + SENTINEL, 65536, 95));
	EXPECT_EQ(-1, su_check(b, 64, 93));
	EXPECT_EQ(-1, su_check_byte(b + 64, SENTINEL - 64, 0));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(s->qp[0]));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(s->qp[1]));
}

TEST_HARNESS_MAIN
