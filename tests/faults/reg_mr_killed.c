// SPDX-License-Identifier: GPL-2.0
/*
 * A process killed in the middle of ibv_reg_mr of 512 MiB, at several
 * points of the registration (timed once first): afterwards `rdma res`,
 * Mlocked and Unevictable are back at their baseline, the pinned pages are
 * free again (MemAvailable) and a new registration and traffic work.
 */
#include "fault_util.h"
#include "kselftest_harness.h"

#define BIG (512UL << 20)

/* Child: get the memory ready, say 'g', register, say 'd', wait. */
static void registrar(int wfd, int dereg)
{
	struct ibv_context *ctx = su_open();
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_mr *mr;
	void *buf;

	CHILD_CHECK(pd);
	buf = mmap(NULL, BIG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHILD_CHECK(buf != MAP_FAILED);
	/* 4 KiB pages: the registration then pins 131072 of them. */
	CHILD_CHECK(!madvise(buf, BIG, MADV_NOHUGEPAGE));
	memset(buf, 0xa5, BIG);
	CHILD_CHECK(write(wfd, "g", 1) == 1);
	mr = ibv_reg_mr(pd, buf, BIG, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	CHILD_CHECK(mr);
	CHILD_CHECK(write(wfd, "d", 1) == 1);
	if (dereg) {
		CHILD_CHECK(!ibv_dereg_mr(mr));
		_exit(0);
	}
	pause();
	_exit(0);
}

static pid_t start(int *rfd, int dereg)
{
	int pipefd[2];
	pid_t pid;

	if (pipe(pipefd))
		return -1;
	pid = fork();
	if (!pid) {
		close(pipefd[0]);
		registrar(pipefd[1], dereg);
	}
	close(pipefd[1]);
	*rfd = pipefd[0];
	return pid;
}

FIXTURE(reg) {
};

FIXTURE_SETUP(reg)
{
}

FIXTURE_TEARDOWN(reg)
{
}

TEST_F_TIMEOUT(reg, killed_in_reg_mr, 600)
{
	static const int pct[] = { 0, 10, 25, 50, 75, 150 };
	long mlocked, unevict, avail, t0, reg_ms, now;
	struct su_res base, after;
	unsigned int i;
	int fd, st, done;
	struct su_pair p;
	struct ibv_mr *mr;
	struct ibv_sge s;
	struct ibv_wc wc;
	pid_t pid;
	void *buf;

	ASSERT_EQ(0, su_res_get(&base));
	mlocked = su_meminfo_kb("Mlocked");
	unevict = su_meminfo_kb("Unevictable");
	avail = su_meminfo_kb("MemAvailable");
	ASSERT_LE(0, mlocked);
	ASSERT_LE(0, unevict);

	/* How long one registration takes here. */
	pid = start(&fd, 1);
	ASSERT_LT(0, pid);
	ASSERT_EQ('g', su_read_byte(fd, 120000));
	t0 = su_now_ms();
	ASSERT_EQ('d', su_read_byte(fd, 120000));
	reg_ms = su_now_ms() - t0;
	close(fd);
	st = su_wait_child(pid, 60000);
	ASSERT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st));
	TH_LOG("ibv_reg_mr of %lu MiB takes %ld ms", BIG >> 20, reg_ms);

	for (i = 0; i < sizeof(pct) / sizeof(pct[0]); i++) {
		pid = start(&fd, 0);
		ASSERT_LT(0, pid);
		ASSERT_EQ('g', su_read_byte(fd, 120000));
		su_sleep_ms(reg_ms * pct[i] / 100);
		ASSERT_EQ(0, kill(pid, SIGKILL));
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		done = su_read_byte(fd, 0) == 'd';
		close(fd);

		EXPECT_EQ(0, su_res_wait(&base, &after, 10000))
			TH_LOG("at %d%%: mr %ld pd %ld ctx %ld left (base %ld %ld %ld)",
			       pct[i], after.mr, after.pd, after.ctx, base.mr,
			       base.pd, base.ctx);
		EXPECT_EQ(mlocked, su_meminfo_kb("Mlocked"));
		EXPECT_EQ(unevict, su_meminfo_kb("Unevictable"));
		/* The 512 MiB come back once nothing pins them. */
		t0 = su_now_ms();
		do {
			now = su_meminfo_kb("MemAvailable");
			if (now > avail - 65536)
				break;
			su_sleep_ms(100);
		} while (su_now_ms() - t0 < 10000);
		EXPECT_LT(avail - 65536, now)
			TH_LOG("at %d%%: MemAvailable %ld kB, was %ld kB",
			       pct[i], now, avail);
		TH_LOG("killed at %d%% (%ld ms): registration %s", pct[i],
		       reg_ms * pct[i] / 100, done ? "had finished" : "in flight");
	}

	/* A new registration of the same size, and traffic. */
	ASSERT_EQ(0, su_pair_open(&p, NULL));
	buf = mmap(NULL, BIG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	mr = ibv_reg_mr(p.env.pd, buf, BIG, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	ASSERT_NE(NULL, mr);
	su_fill(p.env.buf, 65536, 99);
	s = su_sge(&p, 0, 65536);
	ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_RDMA_WRITE, 1, &s, 1,
				  IBV_SEND_SIGNALED,
				  (uintptr_t)buf + BIG - 65536, mr->rkey));
	ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(-1, su_check((uint8_t *)buf + BIG - 65536, 65536, 99));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	munmap(buf, BIG);
	su_pair_close(&p);
}

TEST_HARNESS_MAIN
