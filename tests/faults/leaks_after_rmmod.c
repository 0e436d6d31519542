// SPDX-License-Identifier: GPL-2.0
/*
 * Leaks across module lifetimes: cycles of use (a verified pair, many QPs,
 * CQs and MRs, half of them left to process exit), rmmod and insmod. After
 * one warm-up cycle, N more must not grow unreclaimable slab, the kmalloc
 * caches' live objects, Mlocked or Unevictable by more than a bound per
 * cycle that noise stays under and a per-object leak (hundreds of objects
 * per cycle) does not; `rdma res` is back to the fresh device's counts.
 */
#include "fault_util.h"
#include "kselftest_harness.h"

#define CYCLES 3
#define QPS 400
#define CQS 16
#define MRS 16
/*
 * Allowed growth per cycle. In clean runs here the kmalloc caches moved by
 * at most +34 kB in total, SUnreclaim (kernel stacks, page tables of other
 * caches too) by +-184 kB; one leaked 128-byte object per QP ring (800 QPs
 * a cycle) adds about 160 kB a cycle to both.
 */
#define KMALLOC_KB_PER_CYCLE 16
#define SUNRECLAIM_KB_PER_CYCLE 96
#define LOCKED_KB_PER_CYCLE 0

/* Objects in one context; 0 if all were made and the bytes came. */
static int use_device(unsigned int seed, int close_them)
{
	struct su_opts o = { .cqe = 512, .send_wr = 16, .recv_wr = 16 };
	struct ibv_qp *qp[QPS] = {};
	struct ibv_cq *cq[CQS] = {};
	struct ibv_mr *mr[MRS] = {};
	struct su_pair p;
	struct ibv_sge s;
	struct ibv_wc wc;
	int i, ret = -1;

	if (su_pair_open(&p, &o))
		goto out;
	for (i = 0; i < CQS; i++)
		if (!(cq[i] = ibv_create_cq(p.env.ctx, 32, NULL, NULL, 0)))
			goto out;
	for (i = 0; i < MRS; i++)
		if (!(mr[i] = ibv_reg_mr(p.env.pd, p.env.buf + i * 4096, 4096,
					 IBV_ACCESS_LOCAL_WRITE)))
			goto out;
	for (i = 0; i < QPS; i++) {
		qp[i] = su_create_qp(&p, p.env.pd, cq[i % CQS], cq[i % CQS]);
		if (!qp[i] || (i % 4 == 0 && su_to_init(&p, qp[i])))
			goto out;
	}
	su_fill(p.env.buf, 65536, seed);
	s = su_sge(&p, 0, 65536);
	if (su_post_send(p.qp[0], IBV_WR_RDMA_WRITE, 1, &s, 1,
			 IBV_SEND_SIGNALED, su_addr(&p, 524288), p.env.mr->rkey) ||
	    su_poll(p.cq[0], &wc, SU_TIMEOUT_MS) != 1 ||
	    wc.status != IBV_WC_SUCCESS ||
	    su_check(p.env.buf + 524288, 65536, seed) != -1)
		goto out;
	ret = 0;
	if (!close_them)
		return ret;
out:
	for (i = 0; i < QPS; i++)
		if (qp[i])
			ibv_destroy_qp(qp[i]);
	for (i = 0; i < CQS; i++)
		if (cq[i])
			ibv_destroy_cq(cq[i]);
	for (i = 0; i < MRS; i++)
		if (mr[i])
			ibv_dereg_mr(mr[i]);
	su_pair_close(&p);
	return ret;
}

/* One cleanly closing context and one killed with all open. */
static int cycle(unsigned int seed)
{
	struct su_res fresh, after;
	int pipefd[2], st;
	pid_t pid;
	char c;

	if (su_res_get(&fresh))
		return -1;
	if (use_device(seed, 1))
		return -2;
	if (pipe(pipefd))
		return -3;
	pid = fork();
	if (!pid) {
		close(pipefd[0]);
		if (use_device(seed + 1, 0))
			_exit(1);
		(void)!write(pipefd[1], "u", 1);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	if (read(pipefd[0], &c, 1) != 1) {
		su_wait_child(pid, 0);
		close(pipefd[0]);
		return -4;
	}
	close(pipefd[0]);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	if (su_res_wait(&fresh, &after, 10000))
		return -5;
	if (fu_rmmod(60000))
		return -6;
	return 0;
}

FIXTURE(reload) {
};

FIXTURE_SETUP(reload)
{
	ASSERT_TRUE(su_port_active());
}

FIXTURE_TEARDOWN(reload)
{
	/* The programs after this one need the device. */
	if (access(SU_SYS, F_OK))
		fu_insmod();
}

TEST_F_TIMEOUT(reload, cycles_leave_nothing, 600)
{
	struct fu_mem m0, m;
	long t0 = su_now_ms();
	int i, ret;

	/* Warm-up: caches the first use creates are not a leak. */
	ASSERT_EQ(0, cycle(1));
	fu_mem_get(&m0);
	ASSERT_EQ(0, fu_insmod());
	for (i = 0; i < CYCLES; i++) {
		ret = cycle(10 + 2 * i);
		ASSERT_EQ(0, ret) TH_LOG("cycle %d failed at step %d", i, -ret);
		fu_mem_get(&m);
		ASSERT_EQ(0, fu_insmod());
		TH_LOG("cycle %d: SUnreclaim %+ld kB, kmalloc %+ld kB, Mlocked %+ld kB, Unevictable %+ld kB",
		       i + 1, m.sunreclaim_kb - m0.sunreclaim_kb,
		       m.kmalloc_kb - m0.kmalloc_kb, m.mlocked_kb - m0.mlocked_kb,
		       m.unevictable_kb - m0.unevictable_kb);
	}
	TH_LOG("%d cycles in %ld ms", CYCLES + 1, su_now_ms() - t0);
	EXPECT_GE(KMALLOC_KB_PER_CYCLE * CYCLES, m.kmalloc_kb - m0.kmalloc_kb);
	EXPECT_GE(SUNRECLAIM_KB_PER_CYCLE * CYCLES,
		  m.sunreclaim_kb - m0.sunreclaim_kb);
	EXPECT_GE(LOCKED_KB_PER_CYCLE * CYCLES, m.mlocked_kb - m0.mlocked_kb);
	EXPECT_GE(LOCKED_KB_PER_CYCLE * CYCLES,
		  m.unevictable_kb - m0.unevictable_kb);
}

TEST_HARNESS_MAIN
