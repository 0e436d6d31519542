// SPDX-License-Identifier: GPL-2.0
/*
 * Guest half of the model-kill test (tests/faults/run kills vrnic-model on
 * the host): processes run verified traffic, one of them also issues
 * commands without pause; once all are busy the file $FAULT_MARKER is
 * written and the host kills the model. The command in flight must time
 * out, the device go fatal, every process get DEVICE_FATAL and exit, and
 * the module unload.
 */
#include "fault_util.h"
#include "kselftest_harness.h"

#define WORKERS 3

FIXTURE(dead) {
};

FIXTURE_SETUP(dead)
{
}

FIXTURE_TEARDOWN(dead)
{
}

TEST_F_TIMEOUT(dead, model_killed_under_load, 600)
{
	const char *marker = getenv("FAULT_MARKER");
	char buf[64];
	pid_t pid[WORKERS];
	long t0, timeouts;
	int i, st, fd;

	ASSERT_NE(NULL, marker) TH_LOG("FAULT_MARKER is not set");
	/*
	 * A command outstanding when the model dies times out after 2 s,
	 * before the heartbeat watchdog (5 s) would notice.
	 */
	fu_set_param("cmd_timeout_ms", "2000");
	fu_expect_post_eio = 1;
	ASSERT_EQ(0, fu_start_workers(pid, WORKERS, 1, 120000))
		TH_LOG("workers did not get going");

	fd = open(marker, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ASSERT_LE(0, fd);
	close(fd);
	t0 = su_now_ms();

	for (i = 0; i < WORKERS; i++) {
		st = su_wait_child(pid[i], 300000);
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == FU_FATAL_SEEN)
			TH_LOG("worker %d: status %#x", i + 1, st);
	}
	TH_LOG("all workers out %ld ms after the marker", su_now_ms() - t0);
	EXPECT_FALSE(su_port_active());
	ASSERT_EQ(0, su_read_line(SU_SYS "/ports/1/hw_counters/command_timeouts",
				  buf, sizeof(buf)));
	timeouts = strtol(buf, NULL, 10);
	EXPECT_LE(1, timeouts) TH_LOG("command_timeouts %ld", timeouts);

	t0 = su_now_ms();
	EXPECT_EQ(0, fu_rmmod(60000));
	TH_LOG("rmmod took %ld ms", su_now_ms() - t0);
	EXPECT_NE(0, access(SU_SYS, F_OK));
}

TEST_HARNESS_MAIN
