// SPDX-License-Identifier: GPL-2.0
/*
 * kill -9 in the middle of traffic:
 * - a process with two contexts, a 128 MiB pinned MR, RC traffic in flight
 *   from two threads, a thread blocked in ibv_get_cq_event and an event
 *   never acked, killed at different moments: `rdma res` returns to its
 *   baseline, the pinned pages are really released (MemAvailable comes
 *   back), and the device serves new contexts with correct bytes;
 * - a process whose QP is connected to one of ours, killed while it
 *   RDMA-writes into our memory and while our SENDs to it wait in RNR
 *   retry: every WQE we had outstanding completes (in error, nothing
 *   hangs), no byte reaches our memory after its death, and our other QPs
 *   carry on;
 * - churn: four processes open, use (verified bytes) and drop contexts for
 *   eight seconds, a quarter of them by exiting with everything open;
 *   nothing is left behind;
 * - through the raw uverbs ABI (no libibverbs): a process killed with live
 *   objects (PDs, a pinned MR, CQs, QPs, mapped rings and doorbell page)
 *   leaves nothing behind, and removing the module while a process holds
 *   the device disassociates that process (it gets IB_EVENT_DEVICE_FATAL,
 *   its verbs fail with EIO, its mappings stay safe to touch) without
 *   hanging; the module then loads again. A device that goes FATAL
 *   (injected through debugfs) reaches users as DEVICE_FATAL, takes the
 *   port down and fails verbs with EIO; reloading resets it back to work.
 */
#include <pthread.h>
#include <sys/mman.h>

#include "suite.h"
#include "kselftest_harness.h"

#define BIG_MR (128 << 20)

struct busy {
	struct su_pair p;
	struct ibv_mr *big;
	uint8_t *bigmem;
	struct su_pair q;	/* the second context */
	struct ibv_qp *extra[16];
	struct ibv_cq *ecq[8];
	struct ibv_mr *emr[8];
};

/* Blocks in ibv_get_cq_event until killed; acks nothing. */
static void *blocked_waiter(void *arg)
{
	struct su_pair *q = arg;
	struct ibv_cq *cq;
	void *ctx;

	for (;;)
		ibv_get_cq_event(q->ch, &cq, &ctx);
	return NULL;
}

/* Endless WRITE and SEND traffic on @p's pair. */
static void *traffic(void *arg)
{
	struct su_pair *p = arg;
	struct ibv_wc wc[16];
	unsigned int i = 0, out = 0;
	int n;

	for (;;) {
		while (out < 24) {
			size_t off = (i % 16) * 32768;
			struct ibv_sge s = su_sge(p, off, 32768);
			struct ibv_sge r = su_sge(p, 524288 + off, 32768);

			if (i % 2) {
				if (su_post_recv(p->qp[1], i, &r, 1) ||
				    su_post_send(p->qp[0], IBV_WR_SEND, i, &s, 1,
						 IBV_SEND_SIGNALED, 0, 0))
					break;
			} else if (su_post_send(p->qp[0], IBV_WR_RDMA_WRITE, i, &s,
						1, IBV_SEND_SIGNALED,
						su_addr(p, 524288 + off),
						p->env.mr->rkey)) {
				break;
			}
			i++;
			out++;
		}
		n = ibv_poll_cq(p->cq[0], 16, wc);
		if (n > 0)
			out -= n;
		while (ibv_poll_cq(p->cq[1], 16, wc) > 0)
			;
	}
	return NULL;
}

static void busy_child(int ready_fd)
{
	struct su_opts oq = { .channel = 1 };
	struct ibv_sge s;
	struct busy b;
	pthread_t th[2];
	int i;

	memset(&b, 0, sizeof(b));
	CHILD_CHECK(su_pair_open(&b.p, NULL) == 0);
	b.bigmem = mmap(NULL, BIG_MR, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	CHILD_CHECK(b.bigmem != MAP_FAILED);
	memset(b.bigmem, 0x5c, BIG_MR);
	b.big = ibv_reg_mr(b.p.env.pd, b.bigmem, BIG_MR, SU_MR_ALL);
	CHILD_CHECK(b.big);

	/* Second context: many objects, a channel and events nobody acks. */
	CHILD_CHECK(su_pair_open(&b.q, &oq) == 0);
	for (i = 0; i < 8; i++) {
		b.ecq[i] = ibv_create_cq(b.q.env.ctx, 32, NULL, b.q.ch, 0);
		CHILD_CHECK(b.ecq[i]);
		b.emr[i] = ibv_reg_mr(b.q.env.pd, b.q.env.buf + i * 65536, 65536,
				      IBV_ACCESS_LOCAL_WRITE);
		CHILD_CHECK(b.emr[i]);
	}
	for (i = 0; i < 16; i++) {
		b.extra[i] = su_create_qp(&b.q, b.q.env.pd, b.ecq[i % 8],
					  b.ecq[(i + 1) % 8]);
		CHILD_CHECK(b.extra[i]);
		CHILD_CHECK(!su_to_init(&b.q, b.extra[i]));
	}
	CHILD_CHECK(!ibv_req_notify_cq(b.q.cq[0], 0));
	s = su_sge(&b.q, 0, 64);
	CHILD_CHECK(!su_post_send(b.q.qp[0], IBV_WR_RDMA_WRITE, 1, &s, 1,
				  IBV_SEND_SIGNALED, su_addr(&b.q, 4096),
				  b.q.env.mr->rkey));
	CHILD_CHECK(!ibv_req_notify_cq(b.q.cq[1], 0));
	CHILD_CHECK(!pthread_create(&th[0], NULL, blocked_waiter, &b.q));
	CHILD_CHECK(!pthread_create(&th[1], NULL, traffic, &b.p));

	/* Traffic from this thread too, through the big MR. */
	CHILD_CHECK(write(ready_fd, "r", 1) == 1);
	for (i = 0;; i++) {
		s.addr = (uintptr_t)b.bigmem + (i % 1024) * 65536;
		s.length = 65536;
		s.lkey = b.big->lkey;
		/* The traffic thread reaps cq[1]; a full SQ just waits. */
		if (su_post_send(b.p.qp[1], IBV_WR_RDMA_WRITE, i, &s, 1,
				 IBV_SEND_SIGNALED,
				 (uintptr_t)b.bigmem +
				 ((i + 512) % 1024) * 65536, b.big->rkey))
			su_sleep_ms(1);
	}
}

FIXTURE(kill) {
	struct su_res base;
	long avail;
};

FIXTURE_VARIANT(kill) {
	int delay_ms;
};

FIXTURE_VARIANT_ADD(kill, right_away) { .delay_ms = 0 };
FIXTURE_VARIANT_ADD(kill, after_50ms) { .delay_ms = 50 };
FIXTURE_VARIANT_ADD(kill, after_400ms) { .delay_ms = 400 };

FIXTURE_SETUP(kill)
{
	ASSERT_EQ(0, su_res_get(&self->base));
	self->avail = su_meminfo_kb("MemAvailable");
	ASSERT_LT(0, self->avail);
}

FIXTURE_TEARDOWN(kill)
{
}

TEST_F(kill, busy_process_releases_everything)
{
	struct su_res during, after;
	long pin, avail, t0;
	int pipefd[2], st;
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(pipefd[0]);
		busy_child(pipefd[1]);
	}
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &c, 1)) TH_LOG("the child did not start");

	/* Alive: its objects, its pins, its memory are visible. */
	pin = su_vmpin_kb(pid);
	EXPECT_LE(BIG_MR / 1024 + 2 * 1024, pin) TH_LOG("VmPin %ld kB", pin);
	ASSERT_EQ(0, su_res_get(&during));
	EXPECT_EQ(self->base.ctx + 2, during.ctx);
	EXPECT_EQ(self->base.qp + 4 + 16, during.qp);
	EXPECT_EQ(self->base.cq + 4 + 8, during.cq);
	EXPECT_EQ(self->base.mr + 3 + 8, during.mr);
	EXPECT_EQ(self->base.pd + 2, during.pd);
	avail = su_meminfo_kb("MemAvailable");
	EXPECT_LT(avail, self->avail - BIG_MR / 1024 + 16384)
		TH_LOG("MemAvailable %ld kB, was %ld kB", avail, self->avail);

	su_sleep_ms(variant->delay_ms);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

	t0 = su_now_ms();
	EXPECT_EQ(0, su_res_wait(&self->base, &after, 10000))
		TH_LOG("left: ctx %ld pd %ld cq %ld qp %ld mr %ld (base %ld %ld "
		       "%ld %ld %ld)", after.ctx, after.pd, after.cq, after.qp,
		       after.mr, self->base.ctx, self->base.pd, self->base.cq,
		       self->base.qp, self->base.mr);
	/* The 128 MiB of pinned pages are free again. */
	do {
		avail = su_meminfo_kb("MemAvailable");
		if (avail > self->avail - 32768)
			break;
		su_sleep_ms(100);
	} while (su_now_ms() - t0 < 10000);
	EXPECT_LT(self->avail - 32768, avail)
		TH_LOG("MemAvailable %ld kB, was %ld kB", avail, self->avail);

	EXPECT_EQ(0, su_fresh_traffic(variant->delay_ms + 1));
}

/* ------------------------------------------------------------------ */
/* A peer process dies                                                 */
/* ------------------------------------------------------------------ */

struct peer_info {
	uint32_t qpn;
	uint64_t addr;
	uint32_t rkey;
};

#define PEER_AREA (512 << 10)	/* where the peer writes into our buffer */
#define PEER_RECVS 32

static void peer_child(int rfd, int wfd)
{
	struct su_opts o = { .no_connect = 1 };
	struct peer_info mine, theirs;
	struct ibv_wc wc[16];
	struct su_pair p;
	unsigned int i, out = 0;
	int n, k;

	CHILD_CHECK(su_pair_open(&p, &o) == 0);
	su_fill(p.env.buf, 64 * 4096, 77);
	mine.qpn = p.qp[0]->qp_num;
	mine.addr = su_addr(&p, 0);
	mine.rkey = p.env.mr->rkey;
	CHILD_CHECK(write(wfd, &mine, sizeof(mine)) == sizeof(mine));
	CHILD_CHECK(read(rfd, &theirs, sizeof(theirs)) == sizeof(theirs));
	CHILD_CHECK(!su_to_init(&p, p.qp[0]));
	CHILD_CHECK(!su_to_rtr(&p, p.qp[0], theirs.qpn));
	CHILD_CHECK(!su_to_rts(&p, p.qp[0]));
	for (i = 0; i < PEER_RECVS; i++) {
		struct ibv_sge r = su_sge(&p, 524288 + i * 4096, 4096);

		CHILD_CHECK(!su_post_recv(p.qp[0], i, &r, 1));
	}
	CHILD_CHECK(write(wfd, "g", 1) == 1);

	/*
	 * WRITE into the parent's area without end. The receives above are
	 * all the parent's SENDs get: the rest wait in RNR retry.
	 */
	for (i = 0;; i++) {
		while (out < 16) {
			struct ibv_sge s = su_sge(&p, (i % 64) * 4096, 4096);

			if (su_post_send(p.qp[0], IBV_WR_RDMA_WRITE, i, &s, 1,
					 IBV_SEND_SIGNALED,
					 theirs.addr + (i % 64) * 4096,
					 theirs.rkey))
				break;
			out++;
		}
		n = ibv_poll_cq(p.cq[0], 16, wc);
		for (k = 0; k < n; k++)
			if (!(wc[k].opcode & IBV_WC_RECV))
				out--;
	}
}

TEST(peer_process_dies_mid_traffic)
{
	struct su_opts o = { .send_wr = 64 };
	struct peer_info mine, theirs;
	struct ibv_qp *x;
	struct su_pair p;
	struct ibv_sge s;
	struct ibv_wc wc;
	uint8_t *snap;
	int to, from, st, err, posted, done = 0, ok = 0, bad = 0;
	pid_t pid;
	long end;
	char c;

	pid = su_spawn(peer_child, &to, &from);
	ASSERT_LE(0, pid);

	err = su_pair_open(&p, &o);
	ASSERT_EQ(0, err) TH_LOG("pair_open step %d", err);
	/* x: our QP towards the peer, sharing cq[0]. */
	x = su_create_qp(&p, p.env.pd, p.cq[0], p.cq[0]);
	ASSERT_NE(NULL, x);
	ASSERT_EQ(sizeof(theirs), read(from, &theirs, sizeof(theirs)));
	mine.qpn = x->qp_num;
	mine.addr = su_addr(&p, PEER_AREA);
	mine.rkey = p.env.mr->rkey;
	ASSERT_EQ(0, su_to_init(&p, x));
	ASSERT_EQ(0, su_to_rtr(&p, x, theirs.qpn));
	ASSERT_EQ(0, su_to_rts(&p, x));
	ASSERT_EQ(sizeof(mine), write(to, &mine, sizeof(mine)));
	ASSERT_EQ(1, read(from, &c, 1));

	/*
	 * 48 SENDs to the peer: 32 find a receive, 16 wait in RNR retry
	 * (rnr_retry 7: for ever) when the peer dies.
	 */
	s = su_sge(&p, 0, 1024);
	for (posted = 0; posted < PEER_RECVS + 16; posted++) {
		ASSERT_EQ(0, su_post_send(x, IBV_WR_SEND, posted, &s, 1,
					  IBV_SEND_SIGNALED, 0, 0));
	}
	end = su_now_ms() + 500;
	while (su_now_ms() < end) {
		if (ibv_poll_cq(p.cq[0], 1, &wc) != 1)
			continue;
		done++;
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		ok += wc.status == IBV_WC_SUCCESS;
	}
	EXPECT_EQ(PEER_RECVS, ok);
	EXPECT_EQ(PEER_RECVS, done);
	/* The peer's WRITEs arrive. */
	EXPECT_EQ(-1, su_check(p.env.buf + PEER_AREA, 4096, 77));

	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFSIGNALED(st));

	/* Every WQE we had outstanding completes; none hangs. */
	end = su_now_ms() + 20000;
	while (done < posted && su_now_ms() < end) {
		if (ibv_poll_cq(p.cq[0], 1, &wc) != 1)
			continue;
		done++;
		if (wc.status == IBV_WC_SUCCESS) {
			ok++;
			continue;
		}
		bad++;
		EXPECT_TRUE(wc.status == IBV_WC_RETRY_EXC_ERR ||
			    wc.status == IBV_WC_WR_FLUSH_ERR)
			TH_LOG("%s", ibv_wc_status_str(wc.status));
	}
	EXPECT_EQ(posted, done) TH_LOG("%d of %d WQEs never completed",
				       posted - done, posted);
	EXPECT_EQ(16, bad);
	TH_LOG("%d SENDs: %d succeeded, %d completed in error after the kill",
	       posted, ok, bad);
	EXPECT_EQ(IBV_QPS_ERR, su_qp_state(x));

	/* After the peer's death nothing more lands in our memory. */
	snap = malloc(64 * 4096);
	ASSERT_NE(NULL, snap);
	memcpy(snap, p.env.buf + PEER_AREA, 64 * 4096);
	su_sleep_ms(500);
	EXPECT_EQ(0, memcmp(snap, p.env.buf + PEER_AREA, 64 * 4096));
	free(snap);

	/* Our own pair is untouched. */
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(p.qp[0]));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(p.qp[1]));
	su_fill(p.env.buf + 65536, 65536, 42);
	s = su_sge(&p, 65536, 65536);
	ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_RDMA_WRITE, 1000, &s, 1,
				  IBV_SEND_SIGNALED, su_addr(&p, 262144),
				  p.env.mr->rkey));
	ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(1000, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(-1, su_check(p.env.buf + 262144, 65536, 42));
	EXPECT_EQ(0, ibv_destroy_qp(x));
	su_pair_close(&p);
}

/* ------------------------------------------------------------------ */
/* Churn: processes opening, using and dropping contexts in parallel   */
/* ------------------------------------------------------------------ */

#define CHURN_WORKERS 4
#define CHURN_MS 8000

/* One short life: a pair, a verified SEND and WRITE, then go. */
static int churn_once(unsigned int seed, int clean)
{
	struct su_opts o = { .buf_size = 256 << 10, .cqe = 16, .send_wr = 8,
			     .recv_wr = 8 };
	struct su_pair p;
	struct ibv_sge s, r;
	struct ibv_wc wc;
	int ret = -1;

	if (su_pair_open(&p, &o))
		goto out;
	su_fill(p.env.buf, 4096, seed);
	s = su_sge(&p, 0, 4096);
	r = su_sge(&p, 65536, 4096);
	if (su_post_recv(p.qp[1], 1, &r, 1) ||
	    su_post_send(p.qp[0], IBV_WR_SEND, 2, &s, 1, IBV_SEND_SIGNALED,
			 0, 0) ||
	    su_post_send(p.qp[0], IBV_WR_RDMA_WRITE, 3, &s, 1,
			 IBV_SEND_SIGNALED, su_addr(&p, 131072), p.env.mr->rkey))
		goto out;
	if (su_poll(p.cq[1], &wc, SU_TIMEOUT_MS) != 1 ||
	    wc.status != IBV_WC_SUCCESS ||
	    su_check(p.env.buf + 65536, 4096, seed) != -1)
		goto out;
	if (su_poll(p.cq[0], &wc, SU_TIMEOUT_MS) != 1 ||
	    wc.status != IBV_WC_SUCCESS ||
	    su_poll(p.cq[0], &wc, SU_TIMEOUT_MS) != 1 ||
	    wc.status != IBV_WC_SUCCESS ||
	    su_check(p.env.buf + 131072, 4096, seed) != -1)
		goto out;
	ret = 0;
	if (!clean)
		_exit(0);	/* leave everything to the kernel */
out:
	su_pair_close(&p);
	return ret;
}

static void churn_worker(int id, int wfd)
{
	long end = su_now_ms() + CHURN_MS;
	unsigned int n = 0;
	pid_t pid;
	int st;

	while (su_now_ms() < end) {
		if (n % 4 == 3) {
			/* A child that exits with everything still open. */
			pid = fork();
			CHILD_CHECK(pid >= 0);
			if (!pid)
				_exit(churn_once(id * 100000 + n, 0) ? 1 : 0);
			st = su_wait_child(pid, 20000);
			CHILD_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		} else {
			CHILD_CHECK(churn_once(id * 100000 + n, 1) == 0);
		}
		n++;
	}
	CHILD_CHECK(write(wfd, &n, sizeof(n)) == sizeof(n));
	_exit(0);
}

TEST(contexts_churn_in_parallel)
{
	struct su_res before, after;
	pid_t pid[CHURN_WORKERS];
	unsigned int n, total = 0;
	int pipefd[2], i, st;

	ASSERT_EQ(0, su_res_get(&before));
	ASSERT_EQ(0, pipe(pipefd));
	for (i = 0; i < CHURN_WORKERS; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i])
			churn_worker(i, pipefd[1]);
	}
	close(pipefd[1]);
	for (i = 0; i < CHURN_WORKERS; i++) {
		st = su_wait_child(pid[i], CHURN_MS + 20000);
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
			TH_LOG("worker %d: status %#x", i, st);
	}
	while (read(pipefd[0], &n, sizeof(n)) == sizeof(n))
		total += n;
	TH_LOG("%u context lives in %d processes", total, CHURN_WORKERS);
	EXPECT_LE(CHURN_WORKERS * 4, total);
	EXPECT_EQ(0, su_res_wait(&before, &after, 10000))
		TH_LOG("left: ctx %ld pd %ld cq %ld qp %ld mr %ld (base %ld %ld "
		       "%ld %ld %ld)", after.ctx, after.pd, after.cq, after.qp,
		       after.mr, before.ctx, before.pd, before.cq, before.qp,
		       before.mr);
	EXPECT_EQ(0, su_fresh_traffic(5));
}

/* ------------------------------------------------------------------ */
/* Raw uverbs users, rmmod and a FATAL device                          */
/* ------------------------------------------------------------------ */

#define MR_BYTES (1 << 20)

struct uctx {
	int fd;
	int async_fd;
	struct vrnic_ibv_alloc_ucontext_resp drv;
};

static int get_context(struct uctx *u)
{
	struct ib_uverbs_get_context_resp core;
	int ret;

	u->fd = su_open_uverbs();
	if (u->fd < 0)
		return -ENODEV;
	ret = su_get_context(u->fd, NULL, 0, &core, &u->drv);
	if (ret)
		return ret;
	u->async_fd = core.async_fd;
	return 0;
}

/* A CQ whose ring is mapped; its handle in *@handle. */
static int create_cq(struct uctx *u, __u32 *handle)
{
	struct su_cq_resp r;
	int ret;

	ret = su_cmd_create_cq(u->fd, 64, 0, &r);
	if (ret)
		return ret;
	*handle = r.core.cq_handle;
	if (mmap(NULL, r.drv.ring_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 u->fd, r.drv.ring_mmap_key) == MAP_FAILED)
		return -errno;
	return 0;
}

/* An RC QP on @cq whose two rings are mapped. */
static int create_qp(struct uctx *u, __u32 pd, __u32 cq)
{
	const struct ibv_qp_cap cap = {
		.max_send_wr = 32, .max_recv_wr = 32,
		.max_send_sge = 2, .max_recv_sge = 2,
	};
	struct su_qp_resp r;
	int ret;

	ret = su_cmd_create_qp(u->fd, pd, cq, cq, &cap, IB_UVERBS_QPT_RC, 0, &r);
	if (ret)
		return ret;
	if (mmap(NULL, r.drv.sq_ring_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 u->fd, r.drv.sq_mmap_key) == MAP_FAILED ||
	    mmap(NULL, r.drv.rq_ring_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 u->fd, r.drv.rq_mmap_key) == MAP_FAILED)
		return -errno;
	return 0;
}

static volatile __u32 *map_db(struct uctx *u)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, u->fd,
		       u->drv.db_mmap_key);

	return p == MAP_FAILED ? NULL : p;
}

/* Objects of every kind, mapped; returns 0 or a step number. */
static int make_objects(struct uctx *u)
{
	__u32 pd[2], cq[2];
	void *buf;
	int i;

	if (get_context(u))
		return 1;
	if (!map_db(u))
		return 2;
	for (i = 0; i < 2; i++) {
		if (su_cmd_alloc_pd(u->fd, NULL, &pd[i]))
			return 3;
		if (create_cq(u, &cq[i]))
			return 4;
		if (create_qp(u, pd[i], cq[i]))
			return 5;
	}
	buf = mmap(NULL, MR_BYTES, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 6;
	memset(buf, 1, MR_BYTES);
	if (su_cmd_reg_mr(u->fd, pd[0], (uintptr_t)buf, MR_BYTES, (uintptr_t)buf,
			  IB_UVERBS_ACCESS_LOCAL_WRITE |
			  IB_UVERBS_ACCESS_REMOTE_WRITE |
			  IB_UVERBS_ACCESS_REMOTE_READ, NULL, NULL))
		return 7;
	return 0;
}

static int res_count(const char *line, const char *what)
{
	char key[32];
	const char *p;

	snprintf(key, sizeof(key), " %s ", what);
	p = strstr(line, key);
	return p ? atoi(p + strlen(key)) : -1;
}

static char saved_addrs[1024];

TEST(killed_process_leaves_nothing)
{
	char before[256], during[256], after[256];
	struct uctx u;
	int pipefd[2], status, i;
	char step = 0;
	pid_t pid;

	ASSERT_EQ(0, su_res_line(before, sizeof(before)));
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(pipefd[0]);
		step = make_objects(&u);
		if (write(pipefd[1], &step, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &step, 1));
	close(pipefd[0]);
	EXPECT_EQ(0, step) TH_LOG("child failed at step %d", step);

	ASSERT_EQ(0, su_res_line(during, sizeof(during)));
	EXPECT_EQ(res_count(before, "pd") + 2, res_count(during, "pd"));
	EXPECT_EQ(res_count(before, "cq") + 2, res_count(during, "cq"));
	EXPECT_EQ(res_count(before, "qp") + 2, res_count(during, "qp"));
	EXPECT_EQ(res_count(before, "mr") + 1, res_count(during, "mr"));
	EXPECT_EQ(res_count(before, "ctx") + 1, res_count(during, "ctx"));
	/* The MR's pages are pinned and accounted to the process. */
	EXPECT_LE(MR_BYTES / 1024, su_vmpin_kb(pid));

	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	for (i = 0; i < 50; i++) {
		ASSERT_EQ(0, su_res_line(after, sizeof(after)));
		if (!strcmp(before, after))
			break;
		su_sleep_ms(100);
	}
	EXPECT_STREQ(before, after);
}

/* Child of the rmmod test: exit status 0 if disassociation looked right. */
static int hold_device(int ready_fd)
{
	struct ib_uverbs_async_event_desc ev = {};
	volatile __u32 *db;
	struct uctx u;
	char step;
	__u32 pd;

	step = make_objects(&u);
	db = step ? NULL : map_db(&u);
	if (!step && !db)
		step = 8;
	if (write(ready_fd, &step, 1) != 1 || step)
		return 10 + step;

	/* Blocks until the driver goes away. */
	if (read(u.async_fd, &ev, sizeof(ev)) != sizeof(ev))
		return 30;
	if (ev.event_type != IBV_EVENT_DEVICE_FATAL)
		return 31;
	/* The doorbell page is zapped: touching it must not fault. */
	db[1] = 1;
	(void)db[0];
	/* Every verb now fails with EIO. */
	if (su_cmd_alloc_pd(u.fd, NULL, &pd) != -EIO)
		return 32;
	return 0;
}

TEST(rmmod_disassociates_then_reload)
{
	char path[PATH_MAX];
	int pipefd[2], status = -1, i, ret;
	char step = 0;
	pid_t pid;

	ASSERT_EQ(0, su_module_path(path, sizeof(path), "vrnic.ko"));
	ASSERT_EQ(0, access(path, R_OK)) TH_LOG("%s missing", path);
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(pipefd[0]);
		_exit(hold_device(pipefd[1]));
	}
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &step, 1));
	close(pipefd[0]);
	ASSERT_EQ(0, step) TH_LOG("child failed at step %d", step);

	su_save_netdev_addrs(saved_addrs, sizeof(saved_addrs));
	ret = su_rmmod();
	EXPECT_EQ(0, ret) TH_LOG("rmmod vrnic: %s", strerror(-ret));
	for (i = 0; i < 100; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		su_sleep_ms(100);
	}
	if (i == 100) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("holder: status %#x", status);
	EXPECT_NE(0, access("/sys/class/infiniband/" SU_DEV, F_OK));

	/* Leave the device as we found it for the tests that follow. */
	ret = su_insmod("");
	ASSERT_EQ(0, ret) TH_LOG("insmod %s: %s", path, strerror(-ret));
	su_restore_netdev_addrs(saved_addrs);
}

/* Child of the fatal test: 0 if DEVICE_FATAL arrived and verbs fail. */
static int watch_fatal(int ready_fd)
{
	struct ib_uverbs_async_event_desc ev = {};
	struct uctx u;
	char step;
	__u32 pd;
	int i;

	step = make_objects(&u);
	if (write(ready_fd, &step, 1) != 1 || step)
		return 10 + step;
	for (i = 0; i < 8; i++) {
		if (read(u.async_fd, &ev, sizeof(ev)) != sizeof(ev))
			return 30;
		if (ev.event_type == IBV_EVENT_DEVICE_FATAL)
			break;
	}
	if (ev.event_type != IBV_EVENT_DEVICE_FATAL)
		return 31;
	if (su_cmd_alloc_pd(u.fd, NULL, &pd) != -EIO)
		return 32;
	step = 0;
	if (write(ready_fd, &step, 1) != 1)
		return 33;
	pause();
	return 0;
}

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return 0;
}

TEST(device_fatal_reaches_users_then_reload)
{
	char dir[PATH_MAX], path[PATH_MAX + 32], state[1024], mod[PATH_MAX];
	int pipefd[2], status, fd, i, ret;
	int c;
	pid_t pid;

	ASSERT_EQ(0, su_module_path(mod, sizeof(mod), "vrnic.ko"));
	ASSERT_EQ(0, su_debugfs_dir(dir, sizeof(dir))) TH_LOG("no debugfs dir");
	ASSERT_TRUE(su_port_active());
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(pipefd[0]);
		_exit(watch_fatal(pipefd[1]));
	}
	close(pipefd[1]);
	c = su_read_byte(pipefd[0], 20000);
	ASSERT_EQ(0, c) TH_LOG("child failed at step %d", c);

	/* The device must go FATAL on an out-of-range cmdq_pi. */
	snprintf(path, sizeof(path), "%s/inject_fatal", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1, write(fd, "1", 1));
	close(fd);

	c = su_read_byte(pipefd[0], 10000);
	EXPECT_EQ(0, c) TH_LOG("no DEVICE_FATAL reached the process (%d)", c);
	EXPECT_FALSE(su_port_active());
	snprintf(path, sizeof(path), "%s/state", dir);
	ASSERT_EQ(0, read_file(path, state, sizeof(state)));
	EXPECT_NE(NULL, strstr(state, "driver_fatal\t1"));
	/*
	 * The driver resets a device it gives up on; this one acknowledges
	 * (the watchdog looks every second), which clears its FATAL.
	 */
	for (i = 0; i < 50; i++) {
		ASSERT_EQ(0, read_file(path, state, sizeof(state)));
		if (strstr(state, "reset_pending\t0"))
			break;
		su_sleep_ms(100);
	}
	EXPECT_NE(NULL, strstr(state, "reset_pending\t0")) TH_LOG("%s", state);
	EXPECT_NE(NULL, strstr(state, "held_bytes\t0")) TH_LOG("%s", state);
	EXPECT_NE(NULL, strstr(state, "fatal_code\t0")) TH_LOG("%s", state);
	EXPECT_NE(NULL, strstr(state, "driver_fatal\t1"));

	/* Unload with the process still holding the dead device. */
	su_save_netdev_addrs(saved_addrs, sizeof(saved_addrs));
	ret = su_rmmod();
	EXPECT_EQ(0, ret) TH_LOG("rmmod vrnic: %s", strerror(-ret));
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	EXPECT_TRUE(WIFSIGNALED(status)) TH_LOG("child status %#x", status);

	/* The reset at probe recovers the device. */
	ret = su_insmod("");
	ASSERT_EQ(0, ret) TH_LOG("insmod %s: %s", mod, strerror(-ret));
	su_restore_netdev_addrs(saved_addrs);
}

TEST_HARNESS_MAIN
