// SPDX-License-Identifier: GPL-2.0
/*
 * vrnic's kernel verbs (the path kernel ULPs use): loading
 * kernel/vrnic_ktest.ko runs a PD/CQ/QP SEND-RECV-drain test on every
 * vrnic device inside the kernel and fails the load if any step fails.
 * Afterwards no RDMA resource may be left behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "suite.h"
#include "kselftest_harness.h"

TEST(kernel_ulp_send_recv_drain)
{
	char path[PATH_MAX], before[256], after[256];
	int fd, ret, err;

	ASSERT_EQ(0, system("ip link set dev \"$(ls /sys/class/infiniband/vrnic0/device/net | head -n1)\" up"));
	ASSERT_EQ(0, su_module_path(path, sizeof(path), "vrnic_ktest.ko"));
	ASSERT_EQ(0, su_res_line(before, sizeof(before)));

	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
	ret = syscall(SYS_finit_module, fd, "", 0);
	err = errno;
	close(fd);
	if (ret)
		system("dmesg | grep vrnic | tail -n 20");
	ASSERT_EQ(0, ret) TH_LOG("vrnic_ktest failed: %s", strerror(err));
	EXPECT_EQ(0, syscall(SYS_delete_module, "vrnic_ktest", O_NONBLOCK));

	ASSERT_EQ(0, su_res_line(after, sizeof(after)));
	EXPECT_STREQ(before, after);
}

TEST_HARNESS_MAIN
