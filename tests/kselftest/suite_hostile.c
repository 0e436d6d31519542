// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile user space harms only itself. While this process (the victim)
 * moves verified bytes between its own QPs, a forked process:
 * - writes garbage straight into every uverbs mapping it has (its
 *   doorbell page, SQ/RQ rings, CQ rings: found in /proc/self/maps),
 *   kicks the model and keeps posting on the wrecked queues;
 * - hand-crafts WQEs on its own raw QPs naming the victim's lkey, rkey and
 *   addresses, connects to the victim's QP number, writes malformed WQEs
 *   and producer indices past the ring, scribbles over unassigned slots.
 * The victim's traffic never fails, its memory is never touched, its QPs
 * stay in RTS, the device never goes fatal, and the attacker sees the
 * errors the device interface specifies for its own QPs.
 */
#include <sys/mman.h>

#include "suite_util.h"
#include "kselftest_harness.h"

/* ------------------------------------------------------------------ */
/* The victim                                                          */
/* ------------------------------------------------------------------ */

#define V_SENTINEL (768 << 10)	/* 256 KiB nobody may write */
#define V_SENTINEL_LEN (256 << 10)

struct victim {
	struct su_pair p;
	unsigned int round;
};

/* SEND 8 KiB, RDMA WRITE 64 KiB, RDMA READ 16 KiB; 0 if every byte came. */
static int victim_round(struct victim *v)
{
	struct su_pair *p = &v->p;
	unsigned int seed = 1000 + v->round++ * 3;
	struct ibv_sge s, r;
	struct ibv_wc wc;

	su_fill(p->buf, 8192, seed);
	memset(p->buf + 65536, 0, 8192);
	s = su_sge(p, 0, 8192);
	r = su_sge(p, 65536, 8192);
	if (su_post_recv(p->qp[1], seed, &r, 1) ||
	    su_post_send(p->qp[0], IBV_WR_SEND, seed, &s, 1,
			 IBV_SEND_SIGNALED, 0, 0))
		return -1;
	if (su_poll(p->cq[1], &wc, SU_TIMEOUT_MS) != 1 ||
	    wc.status != IBV_WC_SUCCESS || wc.wr_id != seed ||
	    wc.byte_len != 8192 || su_check(p->buf + 65536, 8192, seed) != -1)
		return -2;
	if (su_poll(p->cq[0], &wc, SU_TIMEOUT_MS) != 1 ||
	    wc.status != IBV_WC_SUCCESS || wc.wr_id != seed)
		return -3;

	su_fill(p->buf + 131072, 65536, seed + 1);
	s = su_sge(p, 131072, 65536);
	if (su_post_send(p->qp[0], IBV_WR_RDMA_WRITE, seed + 1, &s, 1,
			 IBV_SEND_SIGNALED, su_addr(p, 262144), p->mr->rkey))
		return -4;
	if (su_poll(p->cq[0], &wc, SU_TIMEOUT_MS) != 1 ||
	    wc.status != IBV_WC_SUCCESS ||
	    su_check(p->buf + 262144, 65536, seed + 1) != -1)
		return -5;

	su_fill(p->buf + 524288, 16384, seed + 2);
	memset(p->buf + 589824, 0, 16384);
	s = su_sge(p, 589824, 16384);
	if (su_post_send(p->qp[1], IBV_WR_RDMA_READ, seed + 2, &s, 1,
			 IBV_SEND_SIGNALED, su_addr(p, 524288), p->mr->rkey))
		return -6;
	if (su_poll(p->cq[1], &wc, SU_TIMEOUT_MS) != 1 ||
	    wc.status != IBV_WC_SUCCESS ||
	    su_check(p->buf + 589824, 16384, seed + 2) != -1)
		return -7;
	return 0;
}

static int victim_open(struct victim *v)
{
	int err;

	memset(v, 0, sizeof(*v));
	err = su_pair_open(&v->p, NULL);
	if (err)
		return err;
	su_fill(v->p.buf + V_SENTINEL, V_SENTINEL_LEN, 0xbad);
	return 0;
}

/* The device status word of the victim's doorbell page. */
static uint32_t victim_db_status(struct victim *v)
{
	struct vrnic_layout l;
	volatile uint32_t *db;
	uint32_t st;

	if (su_query_layout(v->p.ctx->cmd_fd, &l))
		return ~0u;
	db = mmap(NULL, 4096, PROT_READ, MAP_SHARED, v->p.ctx->cmd_fd,
		  l.db_mmap_key);
	if (db == MAP_FAILED)
		return ~0u;
	st = db[0];
	munmap((void *)db, 4096);
	return st;
}

/*
 * Run victim rounds until @pid exits (at least @min_rounds, at most
 * @max_ms); then its exit status, -1 on a failed round (in *@failed).
 */
static int victim_run_until_exit(struct victim *v, pid_t pid, int min_rounds,
				 long max_ms, int *failed, int *rounds)
{
	long end = su_now_ms() + max_ms;
	int st = -1, done = 0;

	*failed = 0;
	*rounds = 0;
	while (su_now_ms() < end) {
		int err = victim_round(v);

		if (err) {
			*failed = err;
			break;
		}
		(*rounds)++;
		if (!done && waitpid(pid, &st, WNOHANG) == pid)
			done = 1;
		if (done && *rounds >= min_rounds)
			break;
	}
	if (!done)
		st = su_wait_child(pid, 5000);
	return st;
}

/* ------------------------------------------------------------------ */
/* Garbage in the provider's mappings                                  */
/* ------------------------------------------------------------------ */

struct mapping {
	uint8_t *addr;
	size_t len;
	int was_ro;
};

/*
 * Every mapping of a uverbs device in this process, made writable: the
 * provider maps CQ rings read-only, but nothing stops a process from
 * mprotect()ing its own shared mapping. Returns how many, or -1.
 */
static int uverbs_mappings(struct mapping *m, int max)
{
	char line[512], perm[8];
	unsigned long a, b;
	int n = 0;
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && n < max) {
		if (!strstr(line, "/dev/infiniband/uverbs"))
			continue;
		if (sscanf(line, "%lx-%lx %7s", &a, &b, perm) != 3)
			continue;
		m[n].addr = (uint8_t *)a;
		m[n].len = b - a;
		m[n].was_ro = perm[1] != 'w';
		if (m[n].was_ro &&
		    mprotect(m[n].addr, m[n].len, PROT_READ | PROT_WRITE)) {
			fclose(f);
			return -1;
		}
		n++;
	}
	fclose(f);
	return n;
}

static uint64_t xs_state = 88172645463325252ull;

static uint64_t xs(void)
{
	xs_state ^= xs_state << 13;
	xs_state ^= xs_state >> 7;
	xs_state ^= xs_state << 17;
	return xs_state;
}

static void scribble(struct mapping *m, int mode)
{
	volatile uint32_t *w = (volatile uint32_t *)m->addr;
	size_t n = m->len / 4, i;

	switch (mode) {
	case 0:		/* random everywhere */
		for (i = 0; i < n; i++)
			w[i] = (uint32_t)xs();
		break;
	case 1:		/* all ones: indices far past any ring */
		for (i = 0; i < n; i++)
			w[i] = ~0u;
		break;
	case 2:		/* a few random words at random places */
		for (i = 0; i < 64; i++)
			w[xs() % n] = (uint32_t)xs();
		break;
	case 3:		/* small increments: plausible but wrong indices */
		for (i = 0; i < n; i++)
			w[i] += (uint32_t)(xs() % 5);
		break;
	default:	/* zero */
		for (i = 0; i < n; i++)
			w[i] = 0;
		break;
	}
}

static void garbage_child(int ready_fd, long ms)
{
	struct mapping m[64];
	struct su_pair p;
	struct ibv_sge s, r;
	struct ibv_wc wc;
	long end;
	int n, i, ro, round = 0;

	CHILD_CHECK(su_pair_open(&p, NULL) == 0);
	/* It works before we break it. */
	su_fill(p.buf, 4096, 5);
	s = su_sge(&p, 0, 4096);
	r = su_sge(&p, 65536, 4096);
	CHILD_CHECK(!su_post_recv(p.qp[1], 1, &r, 1));
	CHILD_CHECK(!su_post_send(p.qp[0], IBV_WR_SEND, 2, &s, 1,
				  IBV_SEND_SIGNALED, 0, 0));
	CHILD_CHECK(su_poll(p.cq[1], &wc, SU_TIMEOUT_MS) == 1);
	CHILD_CHECK(wc.status == IBV_WC_SUCCESS);
	CHILD_CHECK(su_check(p.buf + 65536, 4096, 5) == -1);
	CHILD_CHECK(su_poll(p.cq[0], &wc, SU_TIMEOUT_MS) == 1);

	n = uverbs_mappings(m, 64);
	/* The doorbell page, 2 CQ rings, 2 x (SQ, RQ) rings at least. */
	CHILD_CHECK(n >= 7);
	for (i = 0, ro = 0; i < n; i++)
		ro += m[i].was_ro;
	CHILD_CHECK(ro >= 2);
	CHILD_CHECK(write(ready_fd, "r", 1) == 1);

	end = su_now_ms() + ms;
	while (su_now_ms() < end) {
		for (i = 0; i < n; i++)
			scribble(&m[i], (round + i) % 5);
		/* Wake the model to look, and post on the wreck. */
		su_kick(p.ctx->cmd_fd);
		su_post_recv(p.qp[1], 3, &r, 1);
		su_post_send(p.qp[0], IBV_WR_SEND, 4, &s, 1, IBV_SEND_SIGNALED,
			     0, 0);
		su_post_send(p.qp[1], IBV_WR_RDMA_WRITE, 5, &s, 1, 0,
			     su_addr(&p, 131072), p.mr->rkey);
		ibv_req_notify_cq(p.cq[0], round & 1);
		round++;
		su_sleep_ms(5);
	}
	/* Leave it all to the kernel. */
	_exit(0);
}

TEST(garbage_in_own_mappings)
{
	struct victim v;
	int pipefd[2], st, failed, rounds, err;
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(pipefd[0]);
		garbage_child(pipefd[1], 3000);
	}
	close(pipefd[1]);
	err = victim_open(&v);
	ASSERT_EQ(0, err) TH_LOG("victim pair_open step %d", err);
	ASSERT_EQ(0, victim_round(&v));
	ASSERT_EQ(1, read(pipefd[0], &c, 1)) TH_LOG("the attacker never got ready");

	st = victim_run_until_exit(&v, pid, 20, 20000, &failed, &rounds);
	EXPECT_EQ(0, failed) TH_LOG("victim round %d failed with %d", rounds,
				    failed);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("attacker status %#x", st);
	TH_LOG("%d verified victim rounds while the attacker ran", rounds);

	/* After the attacker is gone: still whole. */
	EXPECT_EQ(-1, su_check(v.p.buf + V_SENTINEL, V_SENTINEL_LEN, 0xbad));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(v.p.qp[0]));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(v.p.qp[1]));
	EXPECT_EQ(0, victim_db_status(&v) & VRNIC_DB_STATUS_FATAL);
	EXPECT_EQ(0, victim_round(&v));
	su_pair_close(&v.p);

	/* And the device serves a new context. */
	err = victim_open(&v);
	ASSERT_EQ(0, err);
	EXPECT_EQ(0, victim_round(&v));
	su_pair_close(&v.p);
}

/* ------------------------------------------------------------------ */
/* Crafted WQEs and doorbells on raw QPs                               */
/* ------------------------------------------------------------------ */

struct target {
	uint64_t sentinel;	/* victim VA */
	uint32_t lkey, rkey;
	uint32_t qpn[2];
	union ibv_gid gid;
	int gid_index;
};

struct attacker {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
	int gid_index;
};

/* A fresh pair of raw QPs, connected to each other. */
static int raw_pair(struct attacker *a, struct su_raw *x, struct su_raw *y)
{
	return su_raw_create(x, a->ctx, a->pd, 16, 16, 2) ?:
	       su_raw_create(y, a->ctx, a->pd, 16, 16, 2) ?:
	       su_raw_connect(x, y->qpn, &a->gid, a->gid_index) ?:
	       su_raw_connect(y, x->qpn, &a->gid, a->gid_index);
}

/* Post one WQE on @x and return its CQE status (or -1). */
static int raw_status(struct su_raw *x, struct vrnic_cqe *cqe)
{
	if (!su_raw_poll_wait(x, cqe, SU_TIMEOUT_MS))
		return -1;
	return cqe->status;
}

static void crafted_child(int rfd, int wfd)
{
	struct vrnic_send_wqe_hdr *w;
	struct vrnic_sge *sge;
	struct vrnic_cqe cqe;
	struct attacker a;
	struct target t;
	struct su_raw x, y;
	uint32_t i;

	CHILD_CHECK(read(rfd, &t, sizeof(t)) == sizeof(t));
	a.ctx = su_open();
	CHILD_CHECK(a.ctx);
	a.gid_index = su_pick_gid(a.ctx, &a.gid);
	CHILD_CHECK(a.gid_index >= 0);
	a.pd = ibv_alloc_pd(a.ctx);
	CHILD_CHECK(a.pd);
	a.buf = aligned_alloc(4096, 1 << 20);
	CHILD_CHECK(a.buf);
	memset(a.buf, 0x77, 1 << 20);
	a.mr = ibv_reg_mr(a.pd, a.buf, 1 << 20, SU_MR_ALL);
	CHILD_CHECK(a.mr);

	/* Our raw pair works with our own keys. */
	CHILD_CHECK(!raw_pair(&a, &x, &y));
	su_fill(a.buf, 4096, 3);
	CHILD_CHECK(!su_raw_post(&x, VRNIC_WR_RDMA_WRITE, 1, (uintptr_t)a.buf,
				 4096, a.mr->lkey, (uintptr_t)a.buf + 65536,
				 a.mr->rkey, SU_KICK_IF_NEEDED));
	CHILD_CHECK(raw_status(&x, &cqe) == VRNIC_WC_SUCCESS);
	CHILD_CHECK(su_check(a.buf + 65536, 4096, 3) == -1);

	/* WRITE into the victim's memory with the victim's rkey. */
	CHILD_CHECK(!su_raw_post(&x, VRNIC_WR_RDMA_WRITE, 2, (uintptr_t)a.buf,
				 4096, a.mr->lkey, t.sentinel, t.rkey,
				 SU_KICK_IF_NEEDED));
	CHILD_CHECK(raw_status(&x, &cqe) == VRNIC_WC_REM_ACCESS_ERR);
	CHILD_CHECK(su_raw_state(&x) == IBV_QPS_ERR);
	su_raw_destroy(&x);
	su_raw_destroy(&y);

	/* READ the victim's memory with the victim's rkey: nothing leaks. */
	CHILD_CHECK(!raw_pair(&a, &x, &y));
	memset(a.buf + 131072, 0x77, 65536);
	CHILD_CHECK(!su_raw_post(&x, VRNIC_WR_RDMA_READ, 3,
				 (uintptr_t)a.buf + 131072, 65536, a.mr->lkey,
				 t.sentinel, t.rkey, SU_KICK_IF_NEEDED));
	CHILD_CHECK(raw_status(&x, &cqe) == VRNIC_WC_REM_ACCESS_ERR);
	CHILD_CHECK(su_check_byte(a.buf + 131072, 65536, 0x77) == -1);
	su_raw_destroy(&x);
	su_raw_destroy(&y);

	/* The victim's lkey as our local SGE (its buffer as our source). */
	CHILD_CHECK(!raw_pair(&a, &x, &y));
	CHILD_CHECK(!su_raw_post(&x, VRNIC_WR_RDMA_WRITE, 4, t.sentinel, 4096,
				 t.lkey, (uintptr_t)a.buf + 262144, a.mr->rkey,
				 SU_KICK_IF_NEEDED));
	CHILD_CHECK(raw_status(&x, &cqe) == VRNIC_WC_LOC_PROT_ERR);
	CHILD_CHECK(su_check_byte(a.buf + 262144, 4096, 0x77) == -1);
	su_raw_destroy(&x);
	su_raw_destroy(&y);

	/* Malformed WQEs: unknown opcode, too many SGEs, unknown flags. */
	for (i = 0; i < 3; i++) {
		CHILD_CHECK(!raw_pair(&a, &x, &y));
		w = su_raw_sq_slot(&x);
		sge = (struct vrnic_sge *)((uint8_t *)w +
					   VRNIC_SEND_WQE_HDR_SIZE);
		w->wr_id = 10 + i;
		w->opcode = i == 0 ? 0x7f : VRNIC_WR_RDMA_WRITE;
		w->flags = i == 2 ? 0xf0 | VRNIC_WQE_F_SIGNALED :
				    VRNIC_WQE_F_SIGNALED;
		w->num_sge = i == 1 ? 200 : 1;
		w->rdma.remote_addr = (uintptr_t)a.buf + 327680;
		w->rdma.rkey = a.mr->rkey;
		sge->addr = (uintptr_t)a.buf;
		sge->length = 64;
		sge->lkey = a.mr->lkey;
		CHILD_CHECK(!su_raw_sq_ring(&x, 1, SU_KICK_IF_NEEDED));
		CHILD_CHECK(raw_status(&x, &cqe) == VRNIC_WC_LOC_QP_OP_ERR);
		CHILD_CHECK(cqe.wr_id == 10 + i);
		CHILD_CHECK(su_check_byte(a.buf + 327680, 64, 0x77) == -1);
		su_raw_destroy(&x);
		su_raw_destroy(&y);
	}

	/* An SQ producer index far past the ring: the QP dies, fatally. */
	CHILD_CHECK(!raw_pair(&a, &x, &y));
	__atomic_store_n(su_raw_word(&x, x.qp_slot, VRNIC_DB_QP_SQ_PI), 1000u,
			 __ATOMIC_RELEASE);
	CHILD_CHECK(!su_kick(x.fd));
	CHILD_CHECK(su_raw_async(a.ctx, &x, IBV_EVENT_QP_FATAL, SU_TIMEOUT_MS));
	CHILD_CHECK(su_raw_state(&x) == IBV_QPS_ERR);
	su_raw_destroy(&x);
	su_raw_destroy(&y);

	/* A CQ consumer index the device never produced: CQ error. */
	CHILD_CHECK(!raw_pair(&a, &x, &y));
	__atomic_store_n(su_raw_word(&x, x.cq_slot, VRNIC_DB_CQ_CI), 0x80000000u,
			 __ATOMIC_RELEASE);
	CHILD_CHECK(!su_raw_post(&x, VRNIC_WR_RDMA_WRITE, 20, (uintptr_t)a.buf,
				 64, a.mr->lkey, (uintptr_t)a.buf + 393216,
				 a.mr->rkey, SU_KICK_ALWAYS));
	CHILD_CHECK(su_raw_async(a.ctx, &x, IBV_EVENT_CQ_ERR, SU_TIMEOUT_MS));
	su_raw_destroy(&x);
	su_raw_destroy(&y);

	/* Our QP aimed at the victim's QP number: nobody answers. */
	CHILD_CHECK(!su_raw_create(&x, a.ctx, a.pd, 16, 16, 1));
	CHILD_CHECK(!su_raw_connect(&x, t.qpn[1], &a.gid, a.gid_index));
	CHILD_CHECK(!su_raw_post(&x, VRNIC_WR_SEND, 30, (uintptr_t)a.buf, 256,
				 a.mr->lkey, 0, 0, SU_KICK_IF_NEEDED));
	CHILD_CHECK(raw_status(&x, &cqe) == VRNIC_WC_RETRY_EXC_ERR);
	su_raw_destroy(&x);

	/* Writes to slots nobody owns, and to the device's status slot. */
	CHILD_CHECK(!raw_pair(&a, &x, &y));
	for (i = 0; i < 1024; i++)
		if (i / 2 != x.qp_slot && i / 2 != x.cq_slot &&
		    i / 2 != y.qp_slot && i / 2 != y.cq_slot)
			x.db[i] = (uint32_t)xs();
	su_kick(x.fd);
	/* ... change nothing for our live pair. */
	su_fill(a.buf, 4096, 4);
	CHILD_CHECK(!su_raw_post(&x, VRNIC_WR_RDMA_WRITE, 40, (uintptr_t)a.buf,
				 4096, a.mr->lkey, (uintptr_t)a.buf + 458752,
				 a.mr->rkey, SU_KICK_ALWAYS));
	CHILD_CHECK(raw_status(&x, &cqe) == VRNIC_WC_SUCCESS);
	CHILD_CHECK(su_check(a.buf + 458752, 4096, 4) == -1);
	su_raw_destroy(&x);
	su_raw_destroy(&y);

	CHILD_CHECK(write(wfd, "d", 1) == 1);
	_exit(0);
}

TEST(crafted_wqes_and_doorbells)
{
	struct victim v;
	struct target t;
	struct ibv_wc wc;
	int to, from, st, failed, rounds, err;
	pid_t pid;
	char c;

	pid = su_spawn(crafted_child, &to, &from);
	ASSERT_LE(0, pid);
	err = victim_open(&v);
	ASSERT_EQ(0, err) TH_LOG("victim pair_open step %d", err);
	t.sentinel = su_addr(&v.p, V_SENTINEL);
	t.lkey = v.p.mr->lkey;
	t.rkey = v.p.mr->rkey;
	t.qpn[0] = v.p.qp[0]->qp_num;
	t.qpn[1] = v.p.qp[1]->qp_num;
	ASSERT_EQ(sizeof(t), write(to, &t, sizeof(t)));

	st = victim_run_until_exit(&v, pid, 10, 30000, &failed, &rounds);
	EXPECT_EQ(0, failed) TH_LOG("victim round %d failed with %d", rounds,
				    failed);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("attacker status %#x", st);
	EXPECT_EQ(1, read(from, &c, 1));

	EXPECT_EQ(-1, su_check(v.p.buf + V_SENTINEL, V_SENTINEL_LEN, 0xbad));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(v.p.qp[0]));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(v.p.qp[1]));
	/* The attacker's SEND to our QP number never arrived. */
	EXPECT_EQ(0, ibv_poll_cq(v.p.cq[1], 1, &wc));
	EXPECT_EQ(0, victim_db_status(&v) & VRNIC_DB_STATUS_FATAL);
	EXPECT_EQ(0, victim_round(&v));
	su_pair_close(&v.p);
}

TEST_HARNESS_MAIN
