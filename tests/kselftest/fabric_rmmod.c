// SPDX-License-Identifier: GPL-2.0
/*
 * A guest's driver unloaded under cross-VM traffic. Runs in both guests of
 * `scripts/vm --vms 2` (tests/integration/fabric/run, run type
 * ks:fabric_rmmod): guest 0 writes, guest 1 is written to and resets.
 * - guest 1 opens RC QPs to guest 0, which writes 64 KiB RDMA WRITEs into
 *   guest 1's MR without pause on all of them (the first ones checked
 *   byte for byte by guest 1);
 * - under that traffic guest 1 unloads vrnic with its verbs objects still
 *   open (the kernel disassociates them) and says so ("gone");
 * - guest 0's WRs then complete in IBV_WC_RETRY_EXC_ERR once the QP's
 *   timeout and retry_cnt have run out (not at once, not after 30 s),
 *   the rest of each QP's in IBV_WC_WR_FLUSH_ERR, and none posted after
 *   "gone" succeeds; a fresh QP towards guest 1's vanished QP does the
 *   same;
 * - guest 1 loads vrnic again: vrnic0 comes back with the same GID and a
 *   new RC connection moves checked data both ways.
 *
 * The two meet through files in VRNIC_SHARED (su_fab_*); every wait is
 * bounded.
 */
#include "../faults/fault_util.h"
#include "kselftest_harness.h"

#define RM_TEST_S 240		/* the whole test, then the harness kills it */
#define RM_BUF (2 << 20)
#define RM_MSG 65536
#define RM_SLOTS 8		/* 64 KiB slots the first writes land in */
#define RM_FLOW (1 << 20)	/* where the writes under way land */
#define RM_BACK (RM_BUF - RM_MSG)	/* the last exchange, both ways */
#define RM_NQP 2
#define RM_DEPTH 4		/* WRITEs in flight per QP */
#define RM_RING 256		/* post times kept, by wr_id */
#define RM_TIMEOUT 14		/* 4.096 us << 14: 67 ms per try */
#define RM_RETRY 2
#define RM_FLOWING 256		/* writes done before guest 1 unloads */
#define RM_LATE_MS 30000	/* an error completion after the peer left */
#define RM_SEED 100

/*
 * An unanswered request is tried retry_cnt + 1 times, each after the
 * timeout: the least a WR can take from post to RETRY_EXC_ERR, in ms,
 * with a few ms of slack for the guests' clocks.
 */
#define RM_MIN_MS ((RM_RETRY + 1) * ((4096ull << RM_TIMEOUT) / 1000000) - 5)

FIXTURE(rm) {
	struct su_fab f;
	struct ibv_cq *cq;
	struct ibv_qp *qp[RM_NQP + 1];
	int unloaded;
};

FIXTURE_SETUP(rm)
{
	SU_FAB_ASSERT_INIT(&self->f, _metadata->name, "fabric_rmmod");
	ASSERT_TRUE(su_port_active());
}

static void rm_close(FIXTURE_DATA(rm) *self)
{
	int i;

	for (i = 0; i <= RM_NQP; i++) {
		if (self->qp[i])
			ibv_destroy_qp(self->qp[i]);
		self->qp[i] = NULL;
	}
	if (self->cq)
		ibv_destroy_cq(self->cq);
	self->cq = NULL;
	su_env_close(&self->f.env);
	memset(&self->f.env, 0, sizeof(self->f.env));
}

FIXTURE_TEARDOWN(rm)
{
	su_fab_end(&self->f);
	if (self->f.me == 1 && su_fab_wait_end(&self->f))
		TH_LOG("guest 0 never ended %s", self->f.test);
	rm_close(self);
	/* Leave guest 1 with a working device whatever happened. */
	if (self->unloaded && access(SU_SYS, F_OK))
		fu_insmod();
}

/* An env over RM_BUF, a CQ, and @nqp RC QPs; 0 or the failed step. */
/* An RC QP on the CQ as self->qp[@i], or NULL. */
static struct ibv_qp *rm_qp(FIXTURE_DATA(rm) *self, int i)
{
	struct ibv_qp_init_attr a = {
		.send_cq = self->cq,
		.recv_cq = self->cq,
		.cap = { .max_send_wr = 64, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	self->qp[i] = ibv_create_qp(self->f.env.pd, &a);
	return self->qp[i];
}

static int rm_open(FIXTURE_DATA(rm) *self, int nqp)
{
	int i, err;

	err = su_env_open(&self->f.env, RM_BUF, 0, SU_MR_ALL);
	if (err)
		return err;
	self->cq = ibv_create_cq(self->f.env.ctx, 256, NULL, NULL, 0);
	if (!self->cq)
		return 6;
	for (i = 0; i < nqp; i++) {
		if (!rm_qp(self, i))
			return 7;
		self->f.mine.qpn[i] = self->qp[i]->qp_num;
	}
	memcpy(self->f.mine.gid, self->f.env.gid.raw, 16);
	self->f.mine.addr[0] = (uintptr_t)self->f.env.buf;
	self->f.mine.rkey[0] = self->f.env.mr->rkey;
	return 0;
}

/* One signalled 64 KiB WRITE from @loff to the peer's MR at @roff. */
static int rm_write(FIXTURE_DATA(rm) *self, struct ibv_qp *qp, uint64_t id,
		    size_t loff, size_t roff)
{
	struct ibv_sge g = {
		.addr = (uintptr_t)self->f.env.buf + loff,
		.length = RM_MSG,
		.lkey = self->f.env.mr->lkey,
	};

	return su_post_send(qp, IBV_WR_RDMA_WRITE, id, &g, 1,
			    IBV_SEND_SIGNALED, self->f.peer.addr[0] + roff,
			    self->f.peer.rkey[0]);
}

/* What guest 0 saw of its writes while guest 1 went away. */
struct rm_flow {
	long posted, ok, retry_exc, flushed, other;
	long ok_after_gone;	/* posted once "gone" was seen */
	long posted_after_gone;
	long min_ms, max_ms;	/* post to RETRY_EXC_ERR */
	int first_err[RM_NQP];	/* each QP's first error status, or -1 */
};

/*
 * Keep RM_DEPTH WRITEs in flight on each QP until each has failed and
 * drained: posting goes on after "gone" is seen, so that later WRs meet
 * the vanished peer too. 0, or -ETIMEDOUT.
 */
static int rm_flow(FIXTURE_DATA(rm) *self, struct rm_flow *r)
{
	long post_ms[RM_RING], gone_ms = 0, now, look = 0, end;
	int inflight[RM_NQP] = { 0 }, dead[RM_NQP] = { 0 };
	int after[RM_RING] = { 0 };
	int i, n, q, live, busy, flowing = 0;
	struct ibv_wc wc[16];
	uint64_t id = 0;

	memset(r, 0, sizeof(*r));
	r->min_ms = LONG_MAX;
	for (i = 0; i < RM_NQP; i++)
		r->first_err[i] = -1;
	end = su_now_ms() + SU_FAB_WAIT_MS;
	for (;;) {
		now = su_now_ms();
		if (now > end)
			return -ETIMEDOUT;
		if (!gone_ms && now - look >= 20) {
			look = now;
			if (su_fab_exists(&self->f, "gone")) {
				gone_ms = now;
				end = now + RM_LATE_MS;
				/* One later WR on each QP, dead or not. */
				for (q = 0; q < RM_NQP; q++)
					dead[q] = 0;
			} else if (su_fab_exists(&self->f, "end1")) {
				return -ECANCELED;
			}
		}
		if (!flowing && r->ok >= RM_FLOWING) {
			flowing = 1;
			if (su_fab_put(&self->f, "flowing"))
				return -EIO;
		}
		live = busy = 0;
		for (q = 0; q < RM_NQP; q++) {
			while (!dead[q] && inflight[q] < RM_DEPTH + !!gone_ms) {
				/* wr_id: the sequence number times the QPs, plus q. */
				uint64_t w = id++ * RM_NQP + q;

				if (rm_write(self, self->qp[q], w,
					     (w % RM_SLOTS) * RM_MSG,
					     RM_FLOW + (w % RM_SLOTS) * RM_MSG))
					return -EIO;
				post_ms[w % RM_RING] = su_now_ms();
				after[w % RM_RING] = !!gone_ms;
				r->posted++;
				r->posted_after_gone += !!gone_ms;
				inflight[q]++;
			}
			live += !dead[q];
			busy += inflight[q];
		}
		/* Done once the later WRs have drained too. */
		if (gone_ms && !live && !busy)
			return 0;
		n = ibv_poll_cq(self->cq, 16, wc);
		if (n < 0)
			return -EIO;
		for (i = 0; i < n; i++) {
			uint64_t w = wc[i].wr_id;
			long ms = su_now_ms() - post_ms[w % RM_RING];

			q = w % RM_NQP;
			inflight[q]--;
			if (wc[i].status == IBV_WC_SUCCESS) {
				r->ok++;
				r->ok_after_gone += after[w % RM_RING];
				continue;
			}
			if (r->first_err[q] < 0)
				r->first_err[q] = wc[i].status;
			dead[q] = 1;
			if (wc[i].status == IBV_WC_WR_FLUSH_ERR) {
				r->flushed++;
			} else if (wc[i].status == IBV_WC_RETRY_EXC_ERR) {
				r->retry_exc++;
				r->min_ms = ms < r->min_ms ? ms : r->min_ms;
				r->max_ms = ms > r->max_ms ? ms : r->max_ms;
			} else {
				r->other++;
			}
		}
	}
}

/*
 * After the reload, on the new qp[0]: each side WRITEs 64 KiB of its own
 * seed into the other's RM_BACK and checks what the other wrote there.
 */
static void rm_exchange(struct __test_metadata *_metadata,
			FIXTURE_DATA(rm) *self)
{
	struct su_fab *f = &self->f;
	char mine[8], peer[8];
	struct ibv_wc wc;

	snprintf(mine, sizeof(mine), "wrote%d", f->me);
	snprintf(peer, sizeof(peer), "wrote%d", !f->me);
	su_fill(f->env.buf, RM_MSG, RM_SEED + 50 + f->me);
	ASSERT_EQ(0, rm_write(self, self->qp[0], 2, 0, RM_BACK));
	ASSERT_EQ(1, su_poll(self->cq, &wc, SU_TIMEOUT_MS))
		TH_LOG("no completion for the WRITE after the reload");
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status)
		TH_LOG("WRITE to guest %d after the reload: %s", !f->me,
		       ibv_wc_status_str(wc.status));
	SU_FAB_PUT(f, mine);
	SU_FAB_GET(f, peer);
	EXPECT_EQ(-1, su_check(f->env.buf + RM_BACK, RM_MSG,
			       RM_SEED + 50 + !f->me))
		TH_LOG("what guest %d wrote after the reload", !f->me);
}

/* Guest 0: writes under way when guest 1 leaves, and after. */
static void rm_writer(struct __test_metadata *_metadata,
		      FIXTURE_DATA(rm) *self)
{
	struct su_fab *f = &self->f;
	struct rm_flow r;
	struct ibv_wc wc;
	long t0, ms;
	int i, err;

	ASSERT_EQ(0, rm_open(self, RM_NQP));
	SU_FAB_GET(f, "req");
	for (i = 0; i < RM_NQP; i++)
		ASSERT_EQ(0, su_fab_connect(f, self->qp[i], f->peer.qpn[i],
					    RM_TIMEOUT, RM_RETRY));
	SU_FAB_PUT(f, "resp");
	/* Only into QPs that are ready: no retry may hide a race. */
	SU_FAB_GET(f, "conn");

	/* The first writes, one per slot, which guest 1 checks. */
	for (i = 0; i < RM_SLOTS; i++) {
		su_fill(f->env.buf + i * RM_MSG, RM_MSG, RM_SEED + i);
		ASSERT_EQ(0, rm_write(self, self->qp[i % RM_NQP], i,
				      i * RM_MSG, i * RM_MSG));
	}
	for (i = 0; i < RM_SLOTS; i++) {
		ASSERT_EQ(1, su_poll(self->cq, &wc, SU_TIMEOUT_MS));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status)
			TH_LOG("first write %d: %s", i,
			       ibv_wc_status_str(wc.status));
	}
	SU_FAB_PUT(f, "warm");

	err = rm_flow(self, &r);
	TH_LOG("%ld WRITEs posted (%ld after guest 1 was gone): %ld ok, %ld RETRY_EXC_ERR after %ld to %ld ms (at least %llu), %ld flushed, %ld other",
	       r.posted, r.posted_after_gone, r.ok, r.retry_exc,
	       r.retry_exc ? r.min_ms : 0, r.max_ms, RM_MIN_MS, r.flushed,
	       r.other);
	ASSERT_EQ(0, err) TH_LOG("writes while guest 1 unloads: %s",
				 err == -ETIMEDOUT ? "no end within the bounds" :
				 err == -ECANCELED ? "guest 1 failed" :
				 "a verb failed");
	EXPECT_LE(RM_NQP, r.posted_after_gone);
	EXPECT_EQ(0, r.ok_after_gone)
		TH_LOG("WRITEs posted after guest 1 was gone succeeded");
	EXPECT_EQ(0, r.other);
	for (i = 0; i < RM_NQP; i++) {
		EXPECT_EQ(IBV_WC_RETRY_EXC_ERR, r.first_err[i])
			TH_LOG("QP %d failed first with status %d", i,
			       r.first_err[i]);
	}
	EXPECT_LE(RM_MIN_MS, r.min_ms)
		TH_LOG("RETRY_EXC_ERR before timeout and retries ran out");
	EXPECT_GE(RM_LATE_MS, r.max_ms);

	/* A fresh QP towards the vanished QP fails the same way. */
	ASSERT_NE(NULL, rm_qp(self, RM_NQP));
	ASSERT_EQ(0, su_fab_connect(f, self->qp[RM_NQP], f->peer.qpn[0],
				    RM_TIMEOUT, RM_RETRY));
	t0 = su_now_ms();
	ASSERT_EQ(0, rm_write(self, self->qp[RM_NQP], 1, 0, 0));
	ASSERT_EQ(1, su_poll(self->cq, &wc, RM_LATE_MS))
		TH_LOG("no completion for a WRITE to the vanished peer");
	ms = su_now_ms() - t0;
	TH_LOG("fresh QP: %s after %ld ms", ibv_wc_status_str(wc.status), ms);
	EXPECT_EQ(IBV_WC_RETRY_EXC_ERR, wc.status);
	EXPECT_LE(RM_MIN_MS, ms);
	SU_FAB_PUT(f, "failed");

	/* Guest 1 is back: a new connection, checked both ways. */
	SU_FAB_GET(f, "back");
	ibv_destroy_qp(self->qp[RM_NQP]);
	self->qp[RM_NQP] = NULL;
	ibv_destroy_qp(self->qp[0]);
	ASSERT_NE(NULL, rm_qp(self, 0));
	ASSERT_EQ(0, su_fab_connect(f, self->qp[0], f->peer.qpn[0], 14, 7));
	memset(f->env.buf + RM_BACK, 0xee, RM_MSG);
	f->mine.qpn[0] = self->qp[0]->qp_num;
	SU_FAB_PUT(f, "resp2");
	SU_FAB_GET(f, "ready");
	rm_exchange(_metadata, self);
}

/* Guest 1: written to, unloads vrnic under it, and comes back. */
static void rm_resetter(struct __test_metadata *_metadata,
			FIXTURE_DATA(rm) *self)
{
	struct su_fab *f = &self->f;
	uint8_t gid[16];
	long t0;
	int i, err;

	ASSERT_EQ(0, rm_open(self, RM_NQP));
	memcpy(gid, f->mine.gid, 16);
	SU_FAB_PUT(f, "req");
	SU_FAB_GET(f, "resp");
	for (i = 0; i < RM_NQP; i++)
		ASSERT_EQ(0, su_fab_connect(f, self->qp[i], f->peer.qpn[i],
					    RM_TIMEOUT, RM_RETRY));
	SU_FAB_PUT(f, "conn");
	SU_FAB_GET(f, "warm");
	for (i = 0; i < RM_SLOTS; i++)
		EXPECT_EQ(-1, su_check(f->env.buf + i * RM_MSG, RM_MSG,
				       RM_SEED + i))
			TH_LOG("first write %d", i);
	SU_FAB_GET(f, "flowing");

	/* Under the writes, verbs objects open: the kernel disassociates. */
	self->unloaded = 1;
	t0 = su_now_ms();
	err = fu_rmmod(60000);
	ASSERT_EQ(0, err) TH_LOG("rmmod under cross-VM writes: %s",
				 strerror(-err));
	TH_LOG("rmmod took %ld ms under guest 0's writes", su_now_ms() - t0);
	ASSERT_NE(0, access(SU_SYS, F_OK));
	SU_FAB_PUT(f, "gone");
	rm_close(self);

	/* Back only once guest 0 has seen the vanished peer fail. */
	SU_FAB_GET(f, "failed");
	err = fu_insmod();
	ASSERT_EQ(0, err) TH_LOG("insmod: %s", strerror(-err));
	self->unloaded = 0;
	ASSERT_EQ(0, rm_open(self, 1));
	EXPECT_EQ(0, memcmp(gid, f->mine.gid, 16))
		TH_LOG("vrnic0's GID changed over the reload");
	memset(f->env.buf + RM_BACK, 0xee, RM_MSG);
	SU_FAB_PUT(f, "back");
	SU_FAB_GET(f, "resp2");
	ASSERT_EQ(0, su_fab_connect(f, self->qp[0], f->peer.qpn[0], 14, 7));
	SU_FAB_PUT(f, "ready");
	rm_exchange(_metadata, self);
}

TEST_F_TIMEOUT(rm, rmmod_under_cross_vm_writes, RM_TEST_S)
{
	if (self->f.me == 0)
		rm_writer(_metadata, self);
	else
		rm_resetter(_metadata, self);
}

TEST_HARNESS_MAIN
