// SPDX-License-Identifier: GPL-2.0
/*
 * rmmod vrnic while several processes run verified traffic and one issues
 * commands without pause: each process gets DEVICE_FATAL (its verbs then
 * fail) and exits, rmmod returns, and the reloaded module serves new
 * processes with correct bytes and nothing left over. (suite_teardown's
 * rmmod test holds objects but moves no data.)
 */
#include "fault_util.h"
#include "kselftest_harness.h"

#define WORKERS 4

FIXTURE(rmmod) {
	struct su_res base;
};

FIXTURE_VARIANT(rmmod) {
	int delay_ms;
};

FIXTURE_VARIANT_ADD(rmmod, right_away) { .delay_ms = 0 };
FIXTURE_VARIANT_ADD(rmmod, after_1s) { .delay_ms = 1000 };

FIXTURE_SETUP(rmmod)
{
	ASSERT_TRUE(su_port_active());
	ASSERT_EQ(0, su_res_get(&self->base));
}

FIXTURE_TEARDOWN(rmmod)
{
	/* Leave a working device behind whatever happened. */
	if (access(SU_SYS, F_OK))
		fu_insmod();
}

TEST_F_TIMEOUT(rmmod, processes_see_fatal_and_module_reloads, 300)
{
	struct su_res after;
	pid_t pid[WORKERS];
	long t0;
	int i, st;

	ASSERT_EQ(0, fu_start_workers(pid, WORKERS, 1, 120000));
	su_sleep_ms(variant->delay_ms);

	t0 = su_now_ms();
	ASSERT_EQ(0, fu_rmmod(60000));
	TH_LOG("rmmod took %ld ms with %d busy processes",
	       su_now_ms() - t0, WORKERS);
	EXPECT_NE(0, access(SU_SYS, F_OK));
	for (i = 0; i < WORKERS; i++) {
		st = su_wait_child(pid[i], 120000);
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == FU_FATAL_SEEN)
			TH_LOG("worker %d: status %#x", i + 1, st);
	}

	ASSERT_EQ(0, fu_insmod());
	EXPECT_EQ(0, su_res_wait(&self->base, &after, 10000))
		TH_LOG("after reload: ctx %ld pd %ld cq %ld qp %ld mr %ld",
		       after.ctx, after.pd, after.cq, after.qp, after.mr);
	EXPECT_EQ(0, su_fresh_traffic(variant->delay_ms + 7));
}

TEST_HARNESS_MAIN
