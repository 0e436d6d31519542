// SPDX-License-Identifier: GPL-2.0
/*
 * Guest half of the model-stop test (tests/faults/run stops vrnic-model
 * with SIGSTOP and later resumes it with SIGCONT). The driver declares the
 * stopped device dead while RDMA WRITEs into an MR are queued on a QP; the
 * process then deregisters that MR and destroys a QP and a CQ with their
 * rings; a registration in flight when the device stops fails. A device
 * the driver declared dead may still run: the driver must keep the MRs'
 * pages pinned and the rings and page lists allocated until the device
 * acknowledges a reset, and only then release them. The process fills the
 * MR's pages with a sentinel at the moment the driver unpins them; after
 * the model has resumed, the sentinel must be intact.
 *
 * Handshake through files next to $FAULT_MARKER: the guest creates
 * <marker>.stop and <marker>.cont, the host answers with <marker>.stopped
 * and <marker>.resumed.
 */
#include <glob.h>
#include <sys/mount.h>

#include "fault_util.h"
#include "kselftest_harness.h"

#define DST_LEN		(256 << 10)
#define BIG_LEN		(4 << 20)	/* a two-level page list */
#define WRITE_LEN	(32 << 10)
#define SENTINEL	0x5a
#define PATTERN_SEED	0x5707

static int marker(const char *base, const char *suffix)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s.%s", base, suffix);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int wait_marker(const char *base, const char *suffix, int ms)
{
	char path[PATH_MAX];
	long end = su_now_ms() + ms;

	snprintf(path, sizeof(path), "%s.%s", base, suffix);
	while (su_now_ms() < end) {
		if (!access(path, F_OK))
			return 0;
		su_sleep_ms(100);
	}
	return -1;
}

/*
 * The driver's held_bytes (debugfs state): memory the device may still
 * touch that the driver keeps until a reset is acknowledged. -1 if absent.
 */
static long long held_bytes(void)
{
	long long v = -1;
	char line[128];
	glob_t g;
	FILE *f;

	if (access("/sys/kernel/debug/vrnic", F_OK))
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	if (glob("/sys/kernel/debug/vrnic/*/state", 0, NULL, &g))
		return -1;
	f = g.gl_pathc ? fopen(g.gl_pathv[0], "r") : NULL;
	globfree(&g);
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		sscanf(line, "held_bytes %lld", &v);
	fclose(f);
	return v;
}

FIXTURE(stopped) {
	struct su_pair p;
	uint8_t *dst;
	struct ibv_mr *dst_mr;
};

FIXTURE_SETUP(stopped)
{
	/* The stopped model is declared dead after 2 s of silence. */
	fu_set_param("heartbeat_timeout_ms", "2000");
	fu_set_param("cmd_timeout_ms", "2000");
	ASSERT_EQ(0, su_pair_open(&self->p, NULL));
	self->dst = aligned_alloc(4096, DST_LEN);
	ASSERT_NE(NULL, self->dst);
	memset(self->dst, 0, DST_LEN);
	self->dst_mr = ibv_reg_mr(self->p.env.pd, self->dst, DST_LEN,
				  IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_REMOTE_WRITE);
	ASSERT_NE(NULL, self->dst_mr);
}

FIXTURE_TEARDOWN(stopped)
{
	/* The device is dead: just let the process exit. */
}

/* Queue @n signalled WRITEs of the pattern, covering dst from the start. */
static int post_writes(struct su_pair *p, struct ibv_mr *mr, uint8_t *dst,
		       int n)
{
	struct ibv_sge s;
	int i, err;

	for (i = 0; i < n; i++) {
		s = su_sge(p, 0, WRITE_LEN);
		err = su_post_send(p->qp[0], IBV_WR_RDMA_WRITE, i, &s, 1,
				   IBV_SEND_SIGNALED,
				   (uintptr_t)dst + (size_t)i * WRITE_LEN,
				   mr->rkey);
		if (err)
			return err;
	}
	return 0;
}

TEST_F_TIMEOUT(stopped, released_pages_untouched_after_resume, 600)
{
	const char *base = getenv("FAULT_MARKER");
	struct su_pair *p = &self->p;
	long pin0, pin_now, pin_big, pin_dead, t_rel = 0, t_resume, bad;
	int released = 0, n = DST_LEN / WRITE_LEN;
	struct ibv_qp_init_attr qa = {};
	long long held, held_after = -1;
	struct ibv_mr *big_mr;
	struct ibv_cq *cq2;
	struct ibv_qp *qp2;
	struct ibv_sge s;
	uint8_t *big;
	struct ibv_wc wc;
	int i;

	ASSERT_NE(NULL, base) TH_LOG("FAULT_MARKER is not set");
	su_fill(p->env.buf, WRITE_LEN, PATTERN_SEED);

	/* The WRITEs work while the model runs. */
	ASSERT_EQ(0, post_writes(p, self->dst_mr, self->dst, n));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	}
	ASSERT_EQ(-1, su_check(self->dst + DST_LEN - WRITE_LEN, WRITE_LEN,
			       PATTERN_SEED));
	memset(self->dst, 0, DST_LEN);

	/* A QP and a CQ whose rings are released while the device is dead. */
	cq2 = ibv_create_cq(p->env.ctx, 4096, NULL, NULL, 0);
	ASSERT_NE(NULL, cq2);
	qa.send_cq = cq2;
	qa.recv_cq = cq2;
	qa.cap.max_send_wr = 1024;
	qa.cap.max_recv_wr = 1024;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.qp_type = IBV_QPT_RC;
	qp2 = ibv_create_qp(p->env.pd, &qa);
	ASSERT_NE(NULL, qp2);

	ASSERT_EQ(0, marker(base, "stop"));
	ASSERT_EQ(0, wait_marker(base, "stopped", 120000))
		TH_LOG("the host did not stop the model");

	/* Queued on a stopped device: they run if it ever runs again. */
	ASSERT_EQ(0, post_writes(p, self->dst_mr, self->dst, n));

	/*
	 * A registration the stopped device never answers: it fails, and
	 * its pages and page list stay with the device until the reset.
	 */
	big = aligned_alloc(4096, BIG_LEN);
	ASSERT_NE(NULL, big);
	memset(big, 1, BIG_LEN);
	pin_big = su_vmpin_kb(0);
	big_mr = ibv_reg_mr(p->env.pd, big, BIG_LEN, IBV_ACCESS_LOCAL_WRITE);
	EXPECT_EQ(NULL, big_mr);
	TH_LOG("REG_MR on the stopped device: %s, VmPin %ld -> %ld kB",
	       big_mr ? "registered" : strerror(errno), pin_big,
	       su_vmpin_kb(0));
	EXPECT_EQ(pin_big + BIG_LEN / 1024, su_vmpin_kb(0))
		TH_LOG("the failed registration's pages were unpinned");
	ASSERT_EQ(1, su_wait_async(p->env.ctx, IBV_EVENT_DEVICE_FATAL, NULL,
				   60000))
		TH_LOG("no DEVICE_FATAL with the model stopped");

	pin0 = su_vmpin_kb(0);
	ASSERT_EQ(0, ibv_dereg_mr(self->dst_mr));
	pin_now = su_vmpin_kb(0);
	if (pin_now <= pin0 - DST_LEN / 1024) {
		/* Unpinned: from now on the pages are not the device's. */
		released = 1;
		t_rel = su_now_ms();
		memset(self->dst, SENTINEL, DST_LEN);
	}
	EXPECT_FALSE(released)
		TH_LOG("VmPin %ld -> %ld kB: the MR was unpinned while the device was dead and unreset",
		       pin0, pin_now);
	ASSERT_EQ(0, ibv_destroy_qp(qp2));
	ASSERT_EQ(0, ibv_destroy_cq(cq2));
	/* Without the rings' charge, which goes with them. */
	pin_dead = su_vmpin_kb(0);
	held = held_bytes();
	TH_LOG("dead device: VmPin %ld -> %ld kB after dereg, held_bytes %lld",
	       pin0, pin_now, held);
	/*
	 * Both MRs' pages, the big one's page list, the CQ ring (4096 CQEs)
	 * and the QP's two rings.
	 */
	EXPECT_LE(DST_LEN + BIG_LEN + 4096LL * VRNIC_CQE_SIZE, held)
		TH_LOG("the driver does not hold the released memory");

	ASSERT_EQ(0, marker(base, "cont"));
	ASSERT_EQ(0, wait_marker(base, "resumed", 120000))
		TH_LOG("the host did not resume the model");
	t_resume = su_now_ms();

	/* The driver sees the reset acknowledged, then unpins. */
	while (su_now_ms() < t_resume + 20000) {
		if (!released && su_vmpin_kb(0) <= pin_dead - DST_LEN / 1024) {
			released = 1;
			t_rel = su_now_ms();
			memset(self->dst, SENTINEL, DST_LEN);
		}
		held_after = held_bytes();
		if (released && held_after <= 0)
			break;
		su_sleep_ms(20);
	}
	ASSERT_TRUE(released) TH_LOG("the MR stayed pinned after the model resumed");
	EXPECT_EQ(pin_dead - (DST_LEN + BIG_LEN) / 1024, su_vmpin_kb(0))
		TH_LOG("VmPin %ld kB at the end", su_vmpin_kb(0));
	TH_LOG("unpinned %ld ms after the model resumed, held_bytes %lld",
	       t_rel - t_resume, held_after);
	EXPECT_EQ(0, held_after);

	/* Give a device that still runs time to write. */
	while (su_now_ms() < t_resume + 3000 || su_now_ms() < t_rel + 3000)
		su_sleep_ms(100);
	bad = su_check_byte(self->dst, DST_LEN, SENTINEL);
	EXPECT_EQ(-1, bad)
		TH_LOG("the device wrote into unpinned pages: byte %ld is %#x",
		       bad, bad >= 0 ? self->dst[bad] : 0);

	/* The reset cleared the doorbell pages: still flagged FATAL. */
	s = su_sge(p, 0, 64);
	EXPECT_EQ(EIO, su_post_recv(p->qp[1], 1, &s, 1));

	su_pair_close(p);
	EXPECT_EQ(0, fu_rmmod(60000));
}

TEST_HARNESS_MAIN
