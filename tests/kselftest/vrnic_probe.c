// SPDX-License-Identifier: GPL-2.0
/*
 * vrnic binds only to a vrnic: with the driver unbound, BAR2's signature or
 * major version is changed through sysfs and a bind must fail with ENODEV,
 * quietly and without touching the function; with the original values
 * back, the bind brings vrnic0 up again.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "suite.h"
#include "kselftest_harness.h"

#define IBSYS SU_SYS
#define DRV "/sys/bus/pci/drivers/vrnic"

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	n = n < 0 ? -errno : 0;
	close(fd);
	return n;
}

static int kmsg_vrnic_lines(void)
{
	FILE *p = popen("dmesg | grep -c vrnic", "r");
	int n = -1;

	if (!p)
		return -1;
	if (fscanf(p, "%d", &n) != 1)
		n = -1;
	pclose(p);
	return n;
}

static char saved_addrs[1024];

FIXTURE(unbound) {
	char pci[64];
	char dev[PATH_MAX];
	int fd;
	struct vrnic_regs *regs;
	__u32 signature;
	__u16 major;
};

FIXTURE_SETUP(unbound)
{
	char link[PATH_MAX], path[PATH_MAX + 32];
	ssize_t n;

	self->fd = -1;
	self->regs = MAP_FAILED;
	n = readlink(IBSYS "/device", link, sizeof(link) - 1);
	ASSERT_LT(0, n);
	link[n] = 0;
	snprintf(self->pci, sizeof(self->pci), "%s", basename(link));
	snprintf(self->dev, sizeof(self->dev), "/sys/bus/pci/devices/%s",
		 self->pci);

	su_save_netdev_addrs(saved_addrs, sizeof(saved_addrs));
	ASSERT_EQ(0, write_str(DRV "/unbind", self->pci));
	ASSERT_NE(0, access(IBSYS, F_OK));

	/* Unbound: memory decoding via sysfs, then BAR2 by mmap. */
	snprintf(path, sizeof(path), "%s/enable", self->dev);
	ASSERT_EQ(0, write_str(path, "1"));
	snprintf(path, sizeof(path), "%s/resource2", self->dev);
	self->fd = open(path, O_RDWR | O_SYNC | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	self->regs = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
			  self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->regs);
	self->signature = self->regs->signature;
	self->major = self->regs->version_major;
	ASSERT_EQ(VRNIC_SIGNATURE, self->signature);
	ASSERT_EQ(VRNIC_VERSION_MAJOR, self->major);
}

FIXTURE_TEARDOWN(unbound)
{
	char path[PATH_MAX + 32];
	int i;

	if (self->regs != MAP_FAILED) {
		self->regs->signature = self->signature;
		self->regs->version_major = self->major;
		munmap(self->regs, 4096);
	}
	if (self->fd >= 0)
		close(self->fd);
	snprintf(path, sizeof(path), "%s/enable", self->dev);
	write_str(path, "0");
	/* The real thing binds again and comes up. */
	EXPECT_EQ(0, write_str(DRV "/bind", self->pci));
	for (i = 0; i < 100 && !su_port_active(); i++)
		su_sleep_ms(100);
	EXPECT_TRUE(su_port_active());
	su_restore_netdev_addrs(saved_addrs);
}

TEST_F(unbound, foreign_signature_is_left_alone)
{
	int before = kmsg_vrnic_lines();

	self->regs->signature = 0x12345678;
	EXPECT_EQ(-ENODEV, write_str(DRV "/bind", self->pci));
	EXPECT_NE(0, access(IBSYS, F_OK));
	/* Untouched: what we wrote is still there, nothing was logged. */
	EXPECT_EQ(0x12345678U, self->regs->signature);
	EXPECT_EQ(before, kmsg_vrnic_lines());
}

TEST_F(unbound, unknown_major_version_is_refused)
{
	int before = kmsg_vrnic_lines();

	self->regs->version_major = VRNIC_VERSION_MAJOR + 1;
	EXPECT_EQ(-ENODEV, write_str(DRV "/bind", self->pci));
	EXPECT_NE(0, access(IBSYS, F_OK));
	EXPECT_EQ(before, kmsg_vrnic_lines());
}

TEST_HARNESS_MAIN
