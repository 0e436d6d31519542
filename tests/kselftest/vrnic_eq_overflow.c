// SPDX-License-Identifier: GPL-2.0
/*
 * A completion EQ that overflows loses the events the device could not
 * post; the driver then calls the completion handler of its CQs so that
 * every consumer polls again (as after IB_CQ_REPORT_MISSED_EVENTS) and no
 * process blocks in ibv_get_cq_event() forever.
 *
 * The module is reloaded with 16-entry completion EQs (ceq_log_depth=4) and
 * the driver's consumption of them is paused through debugfs (ceq_pause):
 * the EQ then fills and overflows deterministically. A victim process whose
 * completion comes after the EQ is full must still get its event once
 * consumption resumes.
 */
#include <sys/mount.h>
#include <sys/syscall.h>

#include "suite.h"
#include "kselftest_harness.h"

#define PAIRS		12	/* 24 armed CQs: 8 more than the EQ holds */
#define EVENT_MS	10000

static char dbg[PATH_MAX];

static int reload(const char *params)
{
	char path[PATH_MAX], addrs[1024];
	int fd, ret, i;

	if (su_module_path(path, sizeof(path), "vrnic.ko"))
		return -1;
	su_save_netdev_addrs(addrs, sizeof(addrs));
	if (syscall(SYS_delete_module, "vrnic", O_NONBLOCK))
		return -2;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -3;
	ret = syscall(SYS_finit_module, fd, params, 0);
	close(fd);
	if (ret)
		return -4;
	for (i = 0; i < 100 && !su_port_active(); i++)
		su_sleep_ms(100);
	if (!su_port_active())
		return -5;
	su_restore_netdev_addrs(addrs);
	return 0;
}

static int debugfs_dir(void)
{
	char link[PATH_MAX];
	ssize_t n;

	if (access("/sys/kernel/debug/vrnic", F_OK))
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	n = readlink(SU_SYS "/device", link, sizeof(link) - 1);
	if (n <= 0)
		return -1;
	link[n] = 0;
	snprintf(dbg, sizeof(dbg), "/sys/kernel/debug/vrnic/%s", basename(link));
	return access(dbg, F_OK);
}

static int ceq_pause(int on)
{
	char path[PATH_MAX + 16];
	int fd, ok;

	snprintf(path, sizeof(path), "%s/ceq_pause", dbg);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ok = write(fd, on ? "1" : "0", 1) == 1;
	close(fd);
	return ok ? 0 : -1;
}

/* The device's eq_overflow count, or -1. */
static long eq_overflow(void)
{
	char path[PATH_MAX + 16], line[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/state", dbg);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		sscanf(line, "eq_overflow %li", &v);
	fclose(f);
	return v;
}

static long wait_overflow(long above, int ms)
{
	long end = su_now_ms() + ms, v;

	do {
		v = eq_overflow();
		if (v > above)
			return v;
		su_sleep_ms(20);
	} while (su_now_ms() < end);
	return v;
}

/* One SEND from qp[0] to qp[1]: a CQE on each of the pair's CQs. */
static int post_send_pair(struct su_pair *p, int id)
{
	struct ibv_sge r = su_sge(p, 4096, 64), s = su_sge(p, 0, 64);

	return su_post_recv(p->qp[1], id, &r, 1) ?:
	       su_post_send(p->qp[0], IBV_WR_SEND, id, &s, 1,
			    IBV_SEND_SIGNALED, 0, 0);
}

/* Completion events on @ch within @ms: how many (each acknowledged). */
static int get_events(struct ibv_comp_channel *ch, int want, int ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	long end = su_now_ms() + ms;
	struct ibv_cq *cq;
	void *ctx;
	int got = 0;

	fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
	while (got < want && su_now_ms() < end) {
		if (poll(&pfd, 1, 50) <= 0)
			continue;
		while (got < want && !ibv_get_cq_event(ch, &cq, &ctx)) {
			ibv_ack_cq_events(cq, 1);
			got++;
		}
	}
	return got;
}

/*
 * The victim: arms its CQs, says ready, posts one SEND when told, then
 * waits for both completion events. Exit status: 0 if both came.
 */
static void victim(int rfd, int wfd)
{
	struct su_opts o = { .channel = 1 };
	struct su_pair p;
	char c = 'r';
	int got;

	CHILD_CHECK(!su_pair_open(&p, &o));
	CHILD_CHECK(!ibv_req_notify_cq(p.cq[0], 0));
	CHILD_CHECK(!ibv_req_notify_cq(p.cq[1], 0));
	CHILD_CHECK(write(wfd, &c, 1) == 1);
	CHILD_CHECK(read(rfd, &c, 1) == 1);
	CHILD_CHECK(!post_send_pair(&p, 1));
	CHILD_CHECK(write(wfd, &c, 1) == 1);
	got = get_events(p.ch, 2, EVENT_MS);
	fprintf(stderr, "# victim: %d of 2 completion events\n", got);
	_exit(got == 2 ? 0 : 2);
}

FIXTURE(overflow) {
	int loaded;
};

FIXTURE_SETUP(overflow)
{
	ASSERT_EQ(0, reload("ceq_log_depth=4"));
	self->loaded = 1;
	ASSERT_EQ(0, debugfs_dir());
}

FIXTURE_TEARDOWN(overflow)
{
	if (self->loaded) {
		ceq_pause(0);
		EXPECT_EQ(0, reload(""));
	}
}

TEST_F_TIMEOUT(overflow, every_cq_gets_its_event, 300)
{
	struct su_opts o = { .channel = 1 };
	struct su_pair p[PAIRS];
	long before, after;
	int i, to, from, st, got = 0, missing = 0;
	pid_t pid;
	char c;

	for (i = 0; i < PAIRS; i++) {
		ASSERT_EQ(0, su_pair_open(&p[i], &o));
		ASSERT_EQ(0, ibv_req_notify_cq(p[i].cq[0], 0));
		ASSERT_EQ(0, ibv_req_notify_cq(p[i].cq[1], 0));
	}
	pid = su_spawn(victim, &to, &from);
	ASSERT_LT(0, pid);
	ASSERT_EQ(1, read(from, &c, 1));

	before = eq_overflow();
	ASSERT_LE(0, before);
	ASSERT_EQ(0, ceq_pause(1));
	for (i = 0; i < PAIRS; i++)
		ASSERT_EQ(0, post_send_pair(&p[i], i));
	after = wait_overflow(before, 5000);
	ASSERT_LT(before, after) TH_LOG("the completion EQ did not overflow");

	/* The EQ is full: the victim's two events are dropped. */
	ASSERT_EQ(1, write(to, &c, 1));
	ASSERT_EQ(1, read(from, &c, 1));
	after = wait_overflow(after + 1, 5000);
	ASSERT_LE(before + 2 * PAIRS - 16 + 2, after)
		TH_LOG("eq_overflow %ld -> %ld", before, after);
	ASSERT_EQ(0, ceq_pause(0));

	for (i = 0; i < PAIRS; i++) {
		int n = get_events(p[i].ch, 2, i ? 1000 : EVENT_MS);

		got += n;
		missing += 2 - n;
	}
	TH_LOG("eq_overflow %ld -> %ld; %d completion events, %d missing",
	       before, after, got, missing);
	EXPECT_EQ(0, missing);
	st = su_wait_child(pid, 2 * EVENT_MS);
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st))
		TH_LOG("victim: status %#x", st);
	close(to);
	close(from);
	for (i = 0; i < PAIRS; i++)
		su_pair_close(&p[i]);
}

TEST_HARNESS_MAIN
