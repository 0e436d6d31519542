// SPDX-License-Identifier: GPL-2.0
/*
 * The guest's RDMA core is usable: ib_uverbs and rdma_ucm load, their sysfs
 * classes and character devices appear, and libibverbs can enumerate.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"

static int read_sysfs_int(const char *path, int *val)
{
	FILE *f = fopen(path, "r");
	int ret;

	if (!f)
		return -errno;
	ret = fscanf(f, "%d", val) == 1 ? 0 : -EINVAL;
	fclose(f);
	return ret;
}

TEST(uverbs_class)
{
	int abi = 0;

	ASSERT_EQ(0, system("modprobe ib_uverbs"));
	ASSERT_EQ(0, read_sysfs_int("/sys/class/infiniband_verbs/abi_version", &abi));
	/* The uverbs write ABI has been 6 since Linux 2.6.x. */
	EXPECT_EQ(6, abi);
}

TEST(rdma_cm_device)
{
	struct stat st;
	int fd;

	ASSERT_EQ(0, system("modprobe rdma_ucm"));
	ASSERT_EQ(0, stat("/dev/infiniband/rdma_cm", &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	fd = open("/dev/infiniband/rdma_cm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("open rdma_cm: %s", strerror(errno));
	close(fd);
}

TEST(libibverbs_enumerates)
{
	struct ibv_device **list;
	int n = -1;

	ASSERT_EQ(0, system("modprobe ib_uverbs"));
	list = ibv_get_device_list(&n);
	/* A list (possibly empty) means libibverbs found the uverbs class. */
	ASSERT_NE(NULL, list) TH_LOG("ibv_get_device_list: %s", strerror(errno));
	EXPECT_LE(0, n);
	ibv_free_device_list(list);
}

TEST_HARNESS_MAIN
