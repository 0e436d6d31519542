// SPDX-License-Identifier: GPL-2.0
/*
 * Memory windows (device interface 10.28, 10.29, 13.1, 14.10, 14.11),
 * through the public verbs only, on a connected RC pair: A (qp[0]) is the
 * requester, B (qp[1]) owns the target MR (MW_BIND, local and remote
 * write, remote read) and binds the windows on its own QP.
 * - a type 2 window bound with IBV_WR_BIND_MW (a new key byte, a range
 *   strictly inside the MR, across pages) carries A's WRITE and READ
 *   bytes to and from exactly its range; the key it had before the bind
 *   reaches nothing;
 * - a window's range and rights are its own: one byte past either end,
 *   a WRITE through a read-only window and a READ through a write-only
 *   one are refused with REM_ACCESS_ERR although the MR and the QP allow
 *   them, and move no byte;
 * - LOCAL_INV and a peer's SEND_WITH_INV unbind a type 2 window (the
 *   receive reports the invalidated rkey); it binds again under another
 *   key byte, and the old rkey stays stale;
 * - ibv_bind_mw binds and rebinds a type 1 window (a send completion,
 *   a new rkey each time; the previous one is stale);
 * - a type 2 window serves only the QP it was bound on, a type 1 window
 *   every QP of its PD;
 * - binds to an MR without MW_BIND, of a bound type 2 window or outside
 *   the MR complete with MW_BIND_ERR and leave the window as it was;
 * - a window's rkey is never an lkey;
 * - deregistering the MR under a window, or deallocating a bound window,
 *   leaves its rkey reaching nothing;
 * - the device advertises windows (type 2B), and ibv_alloc_mw of an
 *   unknown type fails with EINVAL and leaves nothing behind.
 * Every error of a request moves QPs to ERR, so a test that needs the
 * pair after one takes new QPs on the same PD (su_pair_renew_qps).
 */
#include "suite.h"
#include "kselftest_harness.h"

#define TLEN (64 << 10)		/* B's target MR */
#define WOFF (4096 + 100)	/* the window: strictly inside the MR, */
#define WLEN (3 * 4096 - 200)	/* unaligned, across three pages */
#define FILL 0xee		/* the MR's bytes nobody wrote */
#define RD_OFF (512 << 10)	/* where A's READs land in the pair's buffer */
#define TX_OFF (256 << 10)	/* A's SEND payload */
#define RX_OFF (384 << 10)	/* B's receive buffer */

#define REMOTE_RW (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define TMR_ACCESS (IBV_ACCESS_MW_BIND | IBV_ACCESS_LOCAL_WRITE | REMOTE_RW)

/* Vendor errors the device interface names (14.10, 14.11). */
enum {
	VE_BAD_LKEY = 7,
	VE_BAD_RKEY = 12,
	VE_REMOTE_BOUNDS = 13,
	VE_REMOTE_RIGHTS = 14,
	VE_MW_BOUND = 39,
	VE_MW_NO_BIND = 41,
	VE_MW_RANGE = 43,
};

FIXTURE(mw) {
	struct su_pair p;	/* A = qp[0], B = qp[1] */
	uint8_t *tbuf;		/* B's target memory, FILL where not written */
	struct ibv_mr *tmr;	/* over tbuf, TMR_ACCESS */
	struct ibv_mw *mw;
	struct ibv_cq *cq2[2];	/* a second pair C = qp2[0] -> D = qp2[1], */
	struct ibv_qp *qp2[2];	/* on the same PD, for the tests that ask */
	struct ibv_wc wc;	/* the last completion of a helper below */
};

FIXTURE_SETUP(mw)
{
	struct su_opts o = { .qp_access = REMOTE_RW };
	int err;

	err = su_pair_open(&self->p, &o);
	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	self->tbuf = aligned_alloc(4096, TLEN);
	ASSERT_NE(NULL, self->tbuf);
	memset(self->tbuf, FILL, TLEN);
	self->tmr = ibv_reg_mr(self->p.env.pd, self->tbuf, TLEN, TMR_ACCESS);
	ASSERT_NE(NULL, self->tmr) TH_LOG("reg_mr with MW_BIND: %s",
					   strerror(errno));
}

FIXTURE_TEARDOWN(mw)
{
	int i;

	if (self->mw)
		EXPECT_EQ(0, ibv_dealloc_mw(self->mw));
	for (i = 0; i < 2; i++)
		if (self->qp2[i])
			ibv_destroy_qp(self->qp2[i]);
	for (i = 0; i < 2; i++)
		if (self->cq2[i])
			ibv_destroy_cq(self->cq2[i]);
	if (self->tmr)
		ibv_dereg_mr(self->tmr);
	free(self->tbuf);
	su_pair_close(&self->p);
}

static const char *st_str(int st)
{
	return st < 0 ? "no completion" : ibv_wc_status_str(st);
}

static uint64_t taddr(FIXTURE_DATA(mw) *self, size_t off)
{
	return (uintptr_t)self->tbuf + off;
}

/*
 * An IBV_WR_BIND_MW of the type 2 window on @qp (completing on @cq): new
 * rkey @rkey, [@off, @off + @len) of tbuf through @mr, rights @access.
 * The completion's status, or -1.
 */
static int bind2_on(FIXTURE_DATA(mw) *self, struct ibv_qp *qp,
		    struct ibv_cq *cq, uint32_t rkey, struct ibv_mr *mr,
		    size_t off, uint64_t len, unsigned int access)
{
	struct ibv_send_wr wr = {
		.wr_id = 0xb2, .opcode = IBV_WR_BIND_MW,
	};

	wr.bind_mw.mw = self->mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = taddr(self, off);
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = access;
	return su_post_wait(qp, cq, &wr, &self->wc);
}

/* bind2_on() on B, to the target MR. */
static int bind2(FIXTURE_DATA(mw) *self, uint32_t rkey, size_t off,
		 uint64_t len, unsigned int access)
{
	return bind2_on(self, self->p.qp[1], self->p.cq[1], rkey, self->tmr,
			off, len, access);
}

/* ibv_bind_mw of the type 1 window on B, to the target MR. */
static int bind1(FIXTURE_DATA(mw) *self, size_t off, uint64_t len,
		 unsigned int access)
{
	struct ibv_mw_bind b = {
		.wr_id = 0xb1, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = {
			.mr = self->tmr, .addr = taddr(self, off),
			.length = len, .mw_access_flags = access,
		},
	};

	memset(&self->wc, 0, sizeof(self->wc));
	if (ibv_bind_mw(self->p.qp[1], self->mw, &b))
		return -1;
	if (su_poll(self->p.cq[1], &self->wc, SU_TIMEOUT_MS) != 1 ||
	    self->wc.wr_id != b.wr_id)
		return -1;
	return self->wc.status;
}

/* A LOCAL_INV of @rkey on B. */
static int local_inv(FIXTURE_DATA(mw) *self, uint32_t rkey)
{
	struct ibv_send_wr wr = {
		.wr_id = 0x11, .opcode = IBV_WR_LOCAL_INV,
		.invalidate_rkey = rkey,
	};

	return su_post_wait(self->p.qp[1], self->p.cq[1], &wr, &self->wc);
}

/* @qp (completing on @cq) WRITEs @len bytes of pattern @seed to tbuf + @off. */
static int write_from(FIXTURE_DATA(mw) *self, struct ibv_qp *qp,
		      struct ibv_cq *cq, uint32_t rkey, size_t off,
		      uint32_t len, unsigned int seed)
{
	su_fill(self->p.env.buf, len, seed);
	return su_rdma_op(qp, cq, IBV_WR_RDMA_WRITE, self->p.env.buf, len,
			  self->p.env.mr->lkey, taddr(self, off), rkey,
			  &self->wc);
}

/* A WRITEs; C WRITEs. */
static int a_write(FIXTURE_DATA(mw) *self, uint32_t rkey, size_t off,
		   uint32_t len, unsigned int seed)
{
	return write_from(self, self->p.qp[0], self->p.cq[0], rkey, off, len,
			  seed);
}

static int c_write(FIXTURE_DATA(mw) *self, uint32_t rkey, size_t off,
		   uint32_t len, unsigned int seed)
{
	return write_from(self, self->qp2[0], self->cq2[0], rkey, off, len,
			  seed);
}

/* A READs @len bytes at tbuf + @off into the pair's buffer at RD_OFF, zeroed. */
static int a_read(FIXTURE_DATA(mw) *self, uint32_t rkey, size_t off,
		  uint32_t len)
{
	memset(self->p.env.buf + RD_OFF, 0, len);
	return su_rdma_op(self->p.qp[0], self->p.cq[0], IBV_WR_RDMA_READ,
			  self->p.env.buf + RD_OFF, len, self->p.env.mr->lkey,
			  taddr(self, off), rkey, &self->wc);
}

/* The first byte of tbuf outside the window that is not FILL, or -1. */
static long outside_window(FIXTURE_DATA(mw) *self)
{
	long o = su_check_byte(self->tbuf, WOFF, FILL);

	if (o >= 0)
		return o;
	o = su_check_byte(self->tbuf + WOFF + WLEN, TLEN - WOFF - WLEN, FILL);
	return o < 0 ? -1 : WOFF + WLEN + o;
}

/* The second pair C -> D, on the pair's PD and with CQs of its own. */
static int open_cd(FIXTURE_DATA(mw) *self)
{
	int i;

	for (i = 0; i < 2; i++) {
		self->cq2[i] = ibv_create_cq(self->p.env.ctx, 64, NULL, NULL, 0);
		if (!self->cq2[i])
			return -1;
		self->qp2[i] = su_create_qp(&self->p, self->p.env.pd,
					    self->cq2[i], self->cq2[i]);
		if (!self->qp2[i])
			return -1;
	}
	return su_connect(&self->p, self->qp2[0], self->qp2[1]) ? -1 : 0;
}

/* A completion @st (int, in self->wc) is @want; with vendor error @ve if >= 0. */
#define EXPECT_WC(want, ve, st) do { \
	EXPECT_EQ(want, st) TH_LOG("got %s, vendor error %u", st_str(st), \
				   self->wc.vendor_err); \
	if ((ve) >= 0) \
		EXPECT_EQ(ve, self->wc.vendor_err); \
} while (0)

#define ASSERT_OK(st) ASSERT_EQ(IBV_WC_SUCCESS, st) \
	TH_LOG("got %s, vendor error %u", st_str(st), self->wc.vendor_err)

/* The responder @qp refused a request: access error event, ERR. */
#define EXPECT_RESPONDER_DENIED(qp) do { \
	EXPECT_TRUE(su_wait_async(self->p.env.ctx, IBV_EVENT_QP_ACCESS_ERR, \
				  qp, SU_TIMEOUT_MS)); \
	EXPECT_EQ(IBV_QPS_ERR, su_qp_state(qp)); \
} while (0)

/* Allocate a window of @mw_type, and check what ibv_alloc_mw says of it. */
#define ALLOC_MW(mw_type) do { \
	self->mw = ibv_alloc_mw(self->p.env.pd, mw_type); \
	ASSERT_NE(NULL, self->mw) TH_LOG("alloc_mw: %s", strerror(errno)); \
	EXPECT_EQ(mw_type, self->mw->type); \
	EXPECT_EQ(self->p.env.pd, self->mw->pd); \
	EXPECT_NE(0, self->mw->rkey); \
} while (0)

/* A type 2 window bound over [WOFF, WOFF + WLEN) with @access, as @rkey. */
#define BIND2_WINDOW(rkey, access) do { \
	int st_; \
	ALLOC_MW(IBV_MW_TYPE_2); \
	rkey = ibv_inc_rkey(self->mw->rkey); \
	st_ = bind2(self, rkey, WOFF, WLEN, access); \
	ASSERT_OK(st_); \
} while (0)

/* BIND2_WINDOW() with REMOTE_RW, and A's WRITE of @seed through it landed. */
#define BIND2_AND_WRITE(rkey, seed) do { \
	int st_; \
	BIND2_WINDOW(rkey, REMOTE_RW); \
	st_ = a_write(self, rkey, WOFF, WLEN, seed); \
	ASSERT_OK(st_); \
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF, WLEN, seed)); \
} while (0)

/* ------------------------------------------------------------------ */
/* Type 2: bind, WRITE and READ through the window                    */
/* ------------------------------------------------------------------ */

TEST_F(mw, type2_bind_write_read)
{
	uint32_t old, rkey;
	int st;

	ALLOC_MW(IBV_MW_TYPE_2);
	old = self->mw->rkey;
	rkey = ibv_inc_rkey(old);
	st = bind2(self, rkey, WOFF, WLEN, REMOTE_RW);
	ASSERT_OK(st);
	EXPECT_EQ(IBV_WC_BIND_MW, self->wc.opcode);

	/* The whole window, then a piece at an offset: bytes land there only. */
	st = a_write(self, rkey, WOFF, WLEN, 1);
	ASSERT_OK(st);
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF, WLEN, 1));
	EXPECT_EQ(-1, outside_window(self));
	st = a_write(self, rkey, WOFF + 3000, 2000, 2);
	ASSERT_OK(st);
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF + 3000, 2000, 2));
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF, 3000, 1));
	EXPECT_EQ(-1, outside_window(self));

	/* READ brings B's bytes, as they are now. */
	su_fill(self->tbuf + WOFF, WLEN, 3);
	st = a_read(self, rkey, WOFF, WLEN);
	ASSERT_OK(st);
	EXPECT_EQ(-1, su_check(self->p.env.buf + RD_OFF, WLEN, 3));
	st = a_read(self, rkey, WOFF + 4000, 5000);
	ASSERT_OK(st);
	EXPECT_EQ(0, memcmp(self->p.env.buf + RD_OFF, self->tbuf + WOFF + 4000,
			    5000));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(self->p.qp[0]));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(self->p.qp[1]));

	/* The key from before the bind reaches nothing. */
	st = a_write(self, old, WOFF, 64, 4);
	EXPECT_WC(IBV_WC_REM_ACCESS_ERR, VE_BAD_RKEY, st);
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF, WLEN, 3));
	EXPECT_RESPONDER_DENIED(self->p.qp[1]);
}

/* ------------------------------------------------------------------ */
/* The window's own bounds and rights                                  */
/* ------------------------------------------------------------------ */

TEST_F(mw, one_byte_past_the_end)
{
	uint32_t rkey;
	int st;

	BIND2_WINDOW(rkey, REMOTE_RW);
	/* The window's last 16 bytes are writable ... */
	st = a_write(self, rkey, WOFF + WLEN - 16, 16, 5);
	ASSERT_OK(st);
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF + WLEN - 16, 16, 5));
	/* ... and 17 from there are not, though the MR goes on. */
	st = a_write(self, rkey, WOFF + WLEN - 16, 17, 6);
	EXPECT_WC(IBV_WC_REM_ACCESS_ERR, VE_REMOTE_BOUNDS, st);
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF + WLEN - 16, 16, 5));
	EXPECT_EQ(-1, outside_window(self));
	EXPECT_RESPONDER_DENIED(self->p.qp[1]);
}

TEST_F(mw, one_byte_before_the_start)
{
	uint32_t rkey;
	int st;

	BIND2_WINDOW(rkey, REMOTE_RW);
	st = a_write(self, rkey, WOFF, 16, 7);
	ASSERT_OK(st);
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF, 16, 7));
	st = a_write(self, rkey, WOFF - 1, 17, 8);
	EXPECT_WC(IBV_WC_REM_ACCESS_ERR, VE_REMOTE_BOUNDS, st);
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF, 16, 7));
	EXPECT_EQ(-1, outside_window(self));
	EXPECT_RESPONDER_DENIED(self->p.qp[1]);
}

TEST_F(mw, write_through_a_read_only_window)
{
	uint32_t rkey;
	int st;

	BIND2_WINDOW(rkey, IBV_ACCESS_REMOTE_READ);
	su_fill(self->tbuf + WOFF, WLEN, 9);
	st = a_read(self, rkey, WOFF, WLEN);
	ASSERT_OK(st);
	EXPECT_EQ(-1, su_check(self->p.env.buf + RD_OFF, WLEN, 9));
	/* The MR and the QP allow writes; the window does not. */
	st = a_write(self, rkey, WOFF, 256, 10);
	EXPECT_WC(IBV_WC_REM_ACCESS_ERR, VE_REMOTE_RIGHTS, st);
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF, WLEN, 9));
	EXPECT_EQ(-1, outside_window(self));
	EXPECT_RESPONDER_DENIED(self->p.qp[1]);
}

TEST_F(mw, read_through_a_write_only_window)
{
	uint32_t rkey;
	int st;

	BIND2_WINDOW(rkey, IBV_ACCESS_REMOTE_WRITE);
	st = a_write(self, rkey, WOFF, WLEN, 11);
	ASSERT_OK(st);
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF, WLEN, 11));
	st = a_read(self, rkey, WOFF, 256);
	EXPECT_WC(IBV_WC_REM_ACCESS_ERR, VE_REMOTE_RIGHTS, st);
	EXPECT_EQ(-1, su_check_byte(self->p.env.buf + RD_OFF, 256, 0));
	EXPECT_RESPONDER_DENIED(self->p.qp[1]);
}

/* ------------------------------------------------------------------ */
/* Invalidation of a type 2 window: LOCAL_INV, SEND_WITH_INV          */
/* ------------------------------------------------------------------ */

TEST_F(mw, local_inv_unbinds_type2)
{
	uint32_t rkey, rkey2;
	int st;

	BIND2_WINDOW(rkey, REMOTE_RW);
	st = a_write(self, rkey, WOFF, WLEN, 12);
	ASSERT_OK(st);
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF, WLEN, 12));

	st = local_inv(self, rkey);
	ASSERT_OK(st);
	EXPECT_EQ(IBV_WC_LOCAL_INV, self->wc.opcode);
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(self->p.qp[1]));
	/* The same write as before is refused now. */
	st = a_write(self, rkey, WOFF, WLEN, 13);
	EXPECT_WC(IBV_WC_REM_ACCESS_ERR, VE_BAD_RKEY, st);
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF, WLEN, 12));
	EXPECT_RESPONDER_DENIED(self->p.qp[1]);

	/* Unbound, it binds again (new QPs): under another key byte. */
	ASSERT_EQ(0, su_pair_renew_qps(&self->p));
	rkey2 = ibv_inc_rkey(rkey);
	st = bind2(self, rkey2, WOFF, WLEN, REMOTE_RW);
	ASSERT_OK(st);
	EXPECT_EQ(IBV_WC_BIND_MW, self->wc.opcode);
	st = a_write(self, rkey2, WOFF, WLEN, 14);
	ASSERT_OK(st);
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF, WLEN, 14));
	st = a_write(self, rkey, WOFF, WLEN, 15);
	EXPECT_WC(IBV_WC_REM_ACCESS_ERR, VE_BAD_RKEY, st);
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF, WLEN, 14));
	EXPECT_EQ(-1, outside_window(self));
	EXPECT_RESPONDER_DENIED(self->p.qp[1]);
}

#define SLEN 3000

TEST_F(mw, send_with_inv_unbinds_type2)
{
	struct su_pair *p = &self->p;
	struct ibv_sge tx = su_sge(p, TX_OFF, SLEN), rx = su_sge(p, RX_OFF, 4096);
	struct ibv_send_wr wr = {
		.wr_id = 0x5e, .sg_list = &tx, .num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_INV,
	};
	struct ibv_wc rwc;
	uint32_t rkey;
	int st;

	BIND2_WINDOW(rkey, REMOTE_RW);
	st = a_write(self, rkey, WOFF, WLEN, 16);
	ASSERT_OK(st);
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF, WLEN, 16));

	memset(p->env.buf + RX_OFF, 0, 4096);
	ASSERT_EQ(0, su_post_recv(p->qp[1], 0x7e, &rx, 1));
	su_fill(p->env.buf + TX_OFF, SLEN, 17);
	wr.invalidate_rkey = rkey;
	st = su_post_wait(p->qp[0], p->cq[0], &wr, &self->wc);
	ASSERT_OK(st);
	EXPECT_EQ(IBV_WC_SEND, self->wc.opcode);

	ASSERT_EQ(1, su_poll(p->cq[1], &rwc, SU_TIMEOUT_MS));
	EXPECT_EQ(0x7e, rwc.wr_id);
	ASSERT_EQ(IBV_WC_SUCCESS, rwc.status) TH_LOG("receive: %s, vendor error %u",
						      ibv_wc_status_str(rwc.status),
						      rwc.vendor_err);
	EXPECT_EQ(IBV_WC_RECV, rwc.opcode);
	EXPECT_EQ(SLEN, rwc.byte_len);
	EXPECT_EQ(IBV_WC_WITH_INV, rwc.wc_flags & (IBV_WC_WITH_INV | IBV_WC_WITH_IMM))
		TH_LOG("wc_flags %#x", rwc.wc_flags);
	EXPECT_EQ(rkey, rwc.invalidated_rkey);
	EXPECT_EQ(-1, su_check(p->env.buf + RX_OFF, SLEN, 17));
	EXPECT_EQ(-1, su_check_byte(p->env.buf + RX_OFF + SLEN, 4096 - SLEN, 0));

	/* The window is unbound: the write that worked is refused. */
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(p->qp[1]));
	st = a_write(self, rkey, WOFF, WLEN, 18);
	EXPECT_WC(IBV_WC_REM_ACCESS_ERR, VE_BAD_RKEY, st);
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF, WLEN, 16));
	EXPECT_RESPONDER_DENIED(p->qp[1]);
}

/* ------------------------------------------------------------------ */
/* Type 1: ibv_bind_mw, rebinding                                      */
/* ------------------------------------------------------------------ */

/* The second bind: a range inside the first, so a live old key would reach it. */
#define W2OFF (WOFF + 1000)
#define W2LEN 4000

TEST_F(mw, type1_bind_and_rebind)
{
	uint32_t k0, k1, k2;
	int st;

	ALLOC_MW(IBV_MW_TYPE_1);
	k0 = self->mw->rkey;
	st = bind1(self, WOFF, WLEN, REMOTE_RW);
	ASSERT_OK(st);
	EXPECT_EQ(IBV_WC_BIND_MW, self->wc.opcode);
	k1 = self->mw->rkey;
	EXPECT_NE(k0, k1);
	EXPECT_EQ(k0 & ~0xffu, k1 & ~0xffu);	/* the same window, a new key byte */
	st = a_write(self, k1, WOFF, WLEN, 19);
	ASSERT_OK(st);
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF, WLEN, 19));
	EXPECT_EQ(-1, outside_window(self));
	st = a_read(self, k1, WOFF, WLEN);
	ASSERT_OK(st);
	EXPECT_EQ(-1, su_check(self->p.env.buf + RD_OFF, WLEN, 19));

	/* A type 1 window rebinds while bound. */
	st = bind1(self, W2OFF, W2LEN, REMOTE_RW);
	ASSERT_OK(st);
	EXPECT_EQ(IBV_WC_BIND_MW, self->wc.opcode);
	k2 = self->mw->rkey;
	EXPECT_NE(k1, k2);
	st = a_write(self, k2, W2OFF, W2LEN, 20);
	ASSERT_OK(st);
	EXPECT_EQ(-1, su_check(self->tbuf + W2OFF, W2LEN, 20));
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF, W2OFF - WOFF, 19));

	/* The previous key is stale, inside both ranges. */
	st = a_write(self, k1, W2OFF, 64, 21);
	EXPECT_WC(IBV_WC_REM_ACCESS_ERR, VE_BAD_RKEY, st);
	EXPECT_EQ(-1, su_check(self->tbuf + W2OFF, W2LEN, 20));
	EXPECT_EQ(-1, outside_window(self));
	EXPECT_RESPONDER_DENIED(self->p.qp[1]);
}

/* ------------------------------------------------------------------ */
/* Which QPs a window serves                                           */
/* ------------------------------------------------------------------ */

TEST_F(mw, type2_serves_only_its_qp)
{
	uint32_t rkey;
	int st;

	ASSERT_EQ(0, open_cd(self));
	BIND2_WINDOW(rkey, REMOTE_RW);
	st = a_write(self, rkey, WOFF, WLEN, 22);
	ASSERT_OK(st);
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF, WLEN, 22));

	/* C reaches D's PD: through the MR's own rkey it writes there ... */
	st = c_write(self, self->tmr->rkey, WOFF, WLEN, 23);
	ASSERT_OK(st);
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF, WLEN, 23));
	/* ... but not through B's window. */
	st = c_write(self, rkey, WOFF, WLEN, 24);
	EXPECT_WC(IBV_WC_REM_ACCESS_ERR, -1, st);
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF, WLEN, 23));
	EXPECT_RESPONDER_DENIED(self->qp2[1]);

	/* B and its window are untouched by that. */
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(self->p.qp[1]));
	st = a_write(self, rkey, WOFF, WLEN, 25);
	ASSERT_OK(st);
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF, WLEN, 25));
	EXPECT_EQ(-1, outside_window(self));
}

TEST_F(mw, type1_serves_every_qp_of_the_pd)
{
	int st;

	ASSERT_EQ(0, open_cd(self));
	ALLOC_MW(IBV_MW_TYPE_1);
	st = bind1(self, WOFF, WLEN, REMOTE_RW);
	ASSERT_OK(st);
	st = c_write(self, self->mw->rkey, WOFF, WLEN, 26);
	ASSERT_OK(st);
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF, WLEN, 26));
	st = a_write(self, self->mw->rkey, WOFF + 500, 1000, 27);
	ASSERT_OK(st);
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF + 500, 1000, 27));
	EXPECT_EQ(-1, outside_window(self));
}

/* ------------------------------------------------------------------ */
/* Binds the device refuses                                            */
/* ------------------------------------------------------------------ */

TEST_F(mw, bind_to_an_mr_without_mw_bind)
{
	struct ibv_mr *plain;
	uint32_t rkey;
	int st;

	plain = ibv_reg_mr(self->p.env.pd, self->tbuf, TLEN,
			   IBV_ACCESS_LOCAL_WRITE | REMOTE_RW);
	ASSERT_NE(NULL, plain);
	ALLOC_MW(IBV_MW_TYPE_2);
	rkey = ibv_inc_rkey(self->mw->rkey);
	st = bind2_on(self, self->p.qp[1], self->p.cq[1], rkey, plain, WOFF,
		      WLEN, REMOTE_RW);
	EXPECT_WC(IBV_WC_MW_BIND_ERR, VE_MW_NO_BIND, st);
	EXPECT_EQ(IBV_QPS_ERR, su_qp_state(self->p.qp[1]));
	EXPECT_EQ(0, ibv_dereg_mr(plain));

	/* The window was left unbound: the same bind to the MW_BIND MR works. */
	ASSERT_EQ(0, su_pair_renew_qps(&self->p));
	st = bind2(self, rkey, WOFF, WLEN, REMOTE_RW);
	ASSERT_OK(st);
	st = a_write(self, rkey, WOFF, WLEN, 28);
	ASSERT_OK(st);
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF, WLEN, 28));
	EXPECT_EQ(-1, outside_window(self));
}

TEST_F(mw, bind_of_a_bound_type2_window)
{
	uint32_t rkey;
	int st;

	BIND2_WINDOW(rkey, REMOTE_RW);
	st = a_write(self, rkey, WOFF, WLEN, 29);
	ASSERT_OK(st);
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF, WLEN, 29));
	/* Another key byte, a valid range: still refused until invalidated. */
	st = bind2(self, ibv_inc_rkey(rkey), WOFF, WLEN, REMOTE_RW);
	EXPECT_WC(IBV_WC_MW_BIND_ERR, VE_MW_BOUND, st);
	EXPECT_EQ(IBV_QPS_ERR, su_qp_state(self->p.qp[1]));
	/* A bind is local: A is not concerned. */
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(self->p.qp[0]));
}

TEST_F(mw, bind_outside_the_mr)
{
	uint32_t rkey;
	int st;

	ALLOC_MW(IBV_MW_TYPE_2);
	rkey = ibv_inc_rkey(self->mw->rkey);
	st = bind2(self, rkey, TLEN - 100, 101, REMOTE_RW);
	EXPECT_WC(IBV_WC_MW_BIND_ERR, VE_MW_RANGE, st);
	EXPECT_EQ(IBV_QPS_ERR, su_qp_state(self->p.qp[1]));

	/* One byte less ends where the MR ends, and works. */
	ASSERT_EQ(0, su_pair_renew_qps(&self->p));
	st = bind2(self, rkey, TLEN - 100, 100, REMOTE_RW);
	ASSERT_OK(st);
	st = a_write(self, rkey, TLEN - 100, 100, 30);
	ASSERT_OK(st);
	EXPECT_EQ(-1, su_check(self->tbuf + TLEN - 100, 100, 30));
	EXPECT_EQ(-1, su_check_byte(self->tbuf, TLEN - 100, FILL));
}

/* ------------------------------------------------------------------ */
/* A window's key is no lkey                                           */
/* ------------------------------------------------------------------ */

TEST_F(mw, window_rkey_is_no_lkey)
{
	struct su_pair *p = &self->p;
	uint8_t *dst = p->env.buf + TX_OFF;
	uint32_t rkey;
	int st;

	BIND2_WINDOW(rkey, REMOTE_RW);
	st = a_write(self, rkey, WOFF, WLEN, 31);
	ASSERT_OK(st);

	/* B WRITEs window bytes to A: with the MR's lkey ... */
	memset(dst, 0, 8192);
	st = su_rdma_op(p->qp[1], p->cq[1], IBV_WR_RDMA_WRITE, self->tbuf + WOFF,
			4096, self->tmr->lkey, su_addr(p, TX_OFF), p->env.mr->rkey,
			&self->wc);
	ASSERT_OK(st);
	EXPECT_EQ(-1, su_check(dst, 4096, 31));
	/* ... and with the window's key, which names no MR. */
	st = su_rdma_op(p->qp[1], p->cq[1], IBV_WR_RDMA_WRITE, self->tbuf + WOFF,
			4096, rkey, su_addr(p, TX_OFF + 4096), p->env.mr->rkey,
			&self->wc);
	EXPECT_WC(IBV_WC_LOC_PROT_ERR, VE_BAD_LKEY, st);
	EXPECT_EQ(-1, su_check_byte(dst + 4096, 4096, 0));
	EXPECT_EQ(IBV_QPS_ERR, su_qp_state(p->qp[1]));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(p->qp[0]));
}

/* ------------------------------------------------------------------ */
/* The MR or the window goes                                           */
/* ------------------------------------------------------------------ */

TEST_F(mw, dereg_mr_under_a_window)
{
	uint32_t rkey;
	int st;

	BIND2_AND_WRITE(rkey, 32);
	ASSERT_EQ(0, ibv_dereg_mr(self->tmr));
	self->tmr = NULL;
	st = a_write(self, rkey, WOFF, WLEN, 33);
	EXPECT_WC(IBV_WC_REM_ACCESS_ERR, VE_BAD_RKEY, st);
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF, WLEN, 32));
	EXPECT_EQ(-1, outside_window(self));
	EXPECT_RESPONDER_DENIED(self->p.qp[1]);
}

TEST_F(mw, dealloc_of_a_bound_window)
{
	uint32_t rkey;
	int st;

	BIND2_AND_WRITE(rkey, 34);
	ASSERT_EQ(0, ibv_dealloc_mw(self->mw));
	self->mw = NULL;
	st = a_write(self, rkey, WOFF, WLEN, 35);
	EXPECT_WC(IBV_WC_REM_ACCESS_ERR, VE_BAD_RKEY, st);
	EXPECT_EQ(-1, su_check(self->tbuf + WOFF, WLEN, 34));
	EXPECT_RESPONDER_DENIED(self->p.qp[1]);
}

/* ------------------------------------------------------------------ */
/* What the device offers; a window of no type                         */
/* ------------------------------------------------------------------ */

TEST(device_offers_windows)
{
	struct ibv_device_attr a;
	struct ibv_context *ctx = su_open();

	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(0, ibv_query_device(ctx, &a));
	EXPECT_TRUE(a.device_cap_flags & IBV_DEVICE_MEM_WINDOW)
		TH_LOG("device_cap_flags %#x", a.device_cap_flags);
	EXPECT_TRUE(a.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B)
		TH_LOG("device_cap_flags %#x", a.device_cap_flags);
	EXPECT_LT(0, a.max_mw);
	/* Windows take entries of the MR table (10.28). */
	EXPECT_LE(a.max_mw, a.max_mr);
	ibv_close_device(ctx);
}

TEST(alloc_mw_of_a_bad_type)
{
	static const int bad[] = { 0, 3, 0xff };
	struct su_res r0, r1;
	struct ibv_context *ctx = su_open();
	struct ibv_pd *pd;
	struct ibv_mw *mw;
	unsigned int i;
	int err;

	ASSERT_NE(NULL, ctx);
	pd = ibv_alloc_pd(ctx);
	ASSERT_NE(NULL, pd);
	ASSERT_EQ(0, su_res_get(&r0));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		mw = ibv_alloc_mw(pd, (enum ibv_mw_type)bad[i]);
		EXPECT_EQ(NULL, mw) TH_LOG("type %d", bad[i]);
		EXPECT_EQ(EINVAL, errno) TH_LOG("type %d: %s", bad[i],
						 strerror(errno));
		if (mw)
			ibv_dealloc_mw(mw);
	}
	ASSERT_EQ(0, su_res_get(&r1));
	EXPECT_TRUE(su_res_equal(&r0, &r1));

	/* A window holds its PD (EBUSY): so none of those is left holding it. */
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	ASSERT_NE(NULL, mw) TH_LOG("alloc_mw: %s", strerror(errno));
	err = ibv_dealloc_pd(pd);
	EXPECT_EQ(EBUSY, err);
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
	if (err)
		EXPECT_EQ(0, ibv_dealloc_pd(pd));
	ibv_close_device(ctx);
}

TEST_HARNESS_MAIN
