// SPDX-License-Identifier: GPL-2.0
/*
 * A bounded soak: five processes each run a fixed number of iterations
 * that create a PD, a CQ, two QPs and an MR, move verified bytes over them
 * and over the process's long-lived pair, and destroy them again. Every
 * byte is checked; at the end `rdma res` is back at its baseline and the
 * device still works.
 */
#include "fault_util.h"
#include "kselftest_harness.h"

#define PROCS 5
#define ITERS 60
#define XFER 16384

struct soak_result {
	unsigned int iters;
	unsigned long bytes;
};

/* Both completions of a WRITE and a SEND, and the RECV. 0 if all good. */
static int reap(struct ibv_cq *scq, struct ibv_cq *rcq, int sends)
{
	struct ibv_wc wc;
	int i;

	for (i = 0; i < sends; i++)
		if (su_poll(scq, &wc, SU_TIMEOUT_MS) != 1 ||
		    wc.status != IBV_WC_SUCCESS)
			return -1;
	if (su_poll(rcq, &wc, SU_TIMEOUT_MS) != 1 ||
	    wc.status != IBV_WC_SUCCESS || wc.byte_len != XFER)
		return -1;
	return 0;
}

/* A WRITE into @dst and a SEND into @rbuf over @a -> @b; bytes checked. */
static int exchange(struct ibv_qp *a, struct ibv_qp *b, struct ibv_cq *scq,
		    struct ibv_cq *rcq, struct ibv_sge *src, uint8_t *dst,
		    uint32_t rkey, struct ibv_sge *rbuf, unsigned int seed)
{
	long w, r;

	su_fill((void *)(uintptr_t)src->addr, XFER, seed);
	memset(dst, 0, XFER);
	memset((void *)(uintptr_t)rbuf->addr, 0, XFER);
	if (su_post_recv(b, seed, rbuf, 1) ||
	    su_post_send(a, IBV_WR_RDMA_WRITE, seed, src, 1, IBV_SEND_SIGNALED,
			 (uintptr_t)dst, rkey) ||
	    su_post_send(a, IBV_WR_SEND, seed, src, 1, IBV_SEND_SIGNALED, 0, 0))
		return -1;
	if (reap(scq, rcq, 2))
		return -2;
	w = su_check(dst, XFER, seed);
	r = su_check((void *)(uintptr_t)rbuf->addr, XFER, seed);
	if (w != -1 || r != -1) {
		fprintf(stderr, "# pid %d: wrong bytes: WRITE at %ld, SEND at %ld\n",
			(int)getpid(), w, r);
		return -3;
	}
	return 0;
}

static void soaker(int id, int wfd)
{
	struct soak_result res = {};
	struct ibv_qp *qa, *qb;
	struct ibv_sge src, rb;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct su_pair p;
	uint8_t *buf;
	unsigned int seed;

	CHILD_CHECK(su_pair_open(&p, NULL) == 0);
	buf = aligned_alloc(4096, 4 * XFER);
	CHILD_CHECK(buf);
	for (res.iters = 0; res.iters < ITERS; res.iters++) {
		seed = id * 100000 + res.iters * 4;
		/* Fresh objects, bytes over them... */
		pd = ibv_alloc_pd(p.env.ctx);
		CHILD_CHECK(pd);
		mr = ibv_reg_mr(pd, buf, 4 * XFER, SU_MR_ALL);
		CHILD_CHECK(mr);
		cq = ibv_create_cq(p.env.ctx, 32, NULL, NULL, 0);
		CHILD_CHECK(cq);
		qa = su_create_qp(&p, pd, cq, cq);
		CHILD_CHECK(qa);
		qb = su_create_qp(&p, pd, cq, cq);
		CHILD_CHECK(qb);
		CHILD_CHECK(!su_connect(&p, qa, qb));
		src = (struct ibv_sge){ (uintptr_t)buf, XFER, mr->lkey };
		rb = (struct ibv_sge){ (uintptr_t)buf + 2 * XFER, XFER,
				       mr->lkey };
		CHILD_CHECK(!exchange(qa, qb, cq, cq, &src, buf + XFER,
				      mr->rkey, &rb, seed));
		/* ...and over the long-lived pair in between. */
		src = su_sge(&p, 0, XFER);
		rb = su_sge(&p, 3 * XFER, XFER);
		CHILD_CHECK(!exchange(p.qp[0], p.qp[1], p.cq[0], p.cq[1], &src,
				      p.env.buf + XFER, p.env.mr->rkey, &rb, seed + 1));
		CHILD_CHECK(!ibv_destroy_qp(qa));
		CHILD_CHECK(!ibv_destroy_qp(qb));
		CHILD_CHECK(!ibv_destroy_cq(cq));
		CHILD_CHECK(!ibv_dereg_mr(mr));
		CHILD_CHECK(!ibv_dealloc_pd(pd));
		res.bytes += 4 * XFER;
	}
	su_pair_close(&p);
	CHILD_CHECK(write(wfd, &res, sizeof(res)) == sizeof(res));
	_exit(0);
}

FIXTURE(soak) {
};

FIXTURE_SETUP(soak)
{
}

FIXTURE_TEARDOWN(soak)
{
}

TEST_F_TIMEOUT(soak, objects_come_and_go_under_traffic, 600)
{
	struct su_res before, after;
	struct soak_result r;
	unsigned long bytes = 0;
	unsigned int iters = 0;
	int pipefd[2], i, st;
	pid_t pid[PROCS];
	long t0 = su_now_ms();

	ASSERT_EQ(0, su_res_get(&before));
	ASSERT_EQ(0, pipe(pipefd));
	for (i = 0; i < PROCS; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i])
			soaker(i + 1, pipefd[1]);
	}
	close(pipefd[1]);
	for (i = 0; i < PROCS; i++) {
		st = su_wait_child(pid[i], 300000);
		EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st))
			TH_LOG("process %d: status %#x", i + 1, st);
	}
	while (read(pipefd[0], &r, sizeof(r)) == sizeof(r)) {
		iters += r.iters;
		bytes += r.bytes;
	}
	TH_LOG("%u iterations, %lu bytes verified in %ld ms", iters, bytes,
	       su_now_ms() - t0);
	EXPECT_EQ(PROCS * ITERS, iters);
	EXPECT_EQ(0, su_res_wait(&before, &after, 10000))
		TH_LOG("left: ctx %ld pd %ld cq %ld qp %ld mr %ld (base %ld %ld "
		       "%ld %ld %ld)", after.ctx, after.pd, after.cq, after.qp,
		       after.mr, before.ctx, before.pd, before.cq, before.qp,
		       before.mr);
}

TEST_HARNESS_MAIN
