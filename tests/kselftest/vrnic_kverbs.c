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

#include "kselftest_harness.h"

static int module_path(char *path, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n;

	/* <project>/build/kselftest/vrnic_kverbs */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	snprintf(path, len, "%s/../../kernel/vrnic_ktest.ko", dirname(exe));
	return 0;
}

/* "pd 0 cq 0 qp 0 ..." of vrnic0, as one line. */
static int rdma_res(char *buf, size_t len)
{
	FILE *p = popen("rdma res show 2>&1 | grep ' vrnic0: '", "r");
	char *nl;

	if (!p)
		return -1;
	if (!fgets(buf, len, p)) {
		pclose(p);
		return -1;
	}
	pclose(p);
	nl = strchr(buf, '\n');
	if (nl)
		*nl = 0;
	return 0;
}

TEST(kernel_ulp_send_recv_drain)
{
	char path[PATH_MAX], before[256], after[256];
	int fd, ret, err;

	ASSERT_EQ(0, system("ip link set dev \"$(ls /sys/class/infiniband/vrnic0/device/net | head -n1)\" up"));
	ASSERT_EQ(0, module_path(path, sizeof(path)));
	ASSERT_EQ(0, rdma_res(before, sizeof(before)));

	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
	ret = syscall(SYS_finit_module, fd, "", 0);
	err = errno;
	close(fd);
	if (ret)
		system("dmesg | grep vrnic | tail -n 20");
	ASSERT_EQ(0, ret) TH_LOG("vrnic_ktest failed: %s", strerror(err));
	EXPECT_EQ(0, syscall(SYS_delete_module, "vrnic_ktest", O_NONBLOCK));

	ASSERT_EQ(0, rdma_res(after, sizeof(after)));
	EXPECT_STREQ(before, after);
}

TEST_HARNESS_MAIN
