// SPDX-License-Identifier: GPL-2.0
/*
 * vrnic.ko registers its devices: the PCI function is bound to vrnic, the
 * RDMA device vrnic0 is a RoCE (Ethernet) CA with an ACTIVE port, its
 * paired net_device exists, and the port's RoCE v2 GID table follows the
 * IP addresses of that net_device.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "suite.h"
#include "kselftest_harness.h"

#define IBSYS SU_SYS

static int read_at(char *buf, size_t len, const char *fmt, int i)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), fmt, i);
	return su_read_line(path, buf, len);
}

/* The net_device of the vrnic PCI function. */
static int vrnic_netdev(char *name, size_t len)
{
	DIR *d = opendir(IBSYS "/device/net");
	struct dirent *e;
	int ret = -ENOENT;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(name, len, "%s", e->d_name);
		ret = 0;
		break;
	}
	closedir(d);
	return ret;
}

static int run(const char *fmt, const char *a, const char *b)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), fmt, a, b);
	return system(cmd);
}

/* Index of the RoCE v2 GID @gid bound to @ndev, or -1. */
static int find_gid(const char *gid, const char *ndev)
{
	char val[128], path[PATH_MAX];
	int i;

	for (i = 0; i < 1024; i++) {
		snprintf(path, sizeof(path), IBSYS "/ports/1/gids/%d", i);
		if (access(path, R_OK))
			break;
		if (su_read_line(path, val, sizeof(val)) || strcmp(val, gid))
			continue;
		if (read_at(val, sizeof(val),
			    IBSYS "/ports/1/gid_attrs/types/%d", i) ||
		    strcmp(val, "RoCE v2"))
			continue;
		if (read_at(val, sizeof(val),
			    IBSYS "/ports/1/gid_attrs/ndevs/%d", i) ||
		    strcmp(val, ndev))
			continue;
		return i;
	}
	return -1;
}

/* Wait up to 10 s for @gid to be present (@want) or absent (!@want). */
static int wait_gid(const char *gid, const char *ndev, int want)
{
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	int i, idx = -1;

	for (i = 0; i < 100; i++) {
		idx = find_gid(gid, ndev);
		if ((idx >= 0) == !!want)
			return idx;
		nanosleep(&ts, NULL);
	}
	return want ? -1 : idx;
}

TEST(pci_function_bound)
{
	char buf[PATH_MAX], link[PATH_MAX];
	ssize_t n;

	ASSERT_EQ(0, su_read_line(IBSYS "/device/vendor", buf, sizeof(buf)));
	EXPECT_STREQ("0x1af4", buf);
	ASSERT_EQ(0, su_read_line(IBSYS "/device/device", buf, sizeof(buf)));
	EXPECT_STREQ("0x1110", buf);
	n = readlink(IBSYS "/device/driver", link, sizeof(link) - 1);
	ASSERT_LT(0, n);
	link[n] = 0;
	EXPECT_STREQ("vrnic", strrchr(link, '/') + 1);
}

TEST(rdma_device_attributes)
{
	char buf[256];

	ASSERT_EQ(0, su_read_line(IBSYS "/node_type", buf, sizeof(buf)));
	EXPECT_STREQ("1: CA", buf);
	ASSERT_EQ(0, su_read_line(IBSYS "/ports/1/link_layer", buf, sizeof(buf)));
	EXPECT_STREQ("Ethernet", buf);
	ASSERT_EQ(0, su_read_line(IBSYS "/ports/1/state", buf, sizeof(buf)));
	EXPECT_STREQ("4: ACTIVE", buf);
	ASSERT_EQ(0, su_read_line(IBSYS "/ports/1/phys_state", buf, sizeof(buf)));
	EXPECT_STREQ("5: LinkUp", buf);
	ASSERT_EQ(0, su_read_line(IBSYS "/fw_ver", buf, sizeof(buf)));
	EXPECT_NE(0, buf[0]);
	/* No port 2; one P_Key. */
	EXPECT_NE(0, access(IBSYS "/ports/2", F_OK));
	ASSERT_EQ(0, su_read_line(IBSYS "/ports/1/pkeys/0", buf, sizeof(buf)));
	EXPECT_STREQ("0xffff", buf);
}

TEST(driver_counters)
{
	char buf[64];

	/* Every command the driver issued since probe is counted. */
	ASSERT_EQ(0, su_read_line(IBSYS "/ports/1/hw_counters/commands", buf,
			       sizeof(buf)));
	EXPECT_LT(0, atol(buf));
	ASSERT_EQ(0, su_read_line(IBSYS "/ports/1/hw_counters/command_timeouts",
			       buf, sizeof(buf)));
	EXPECT_EQ(0, atol(buf));
}

TEST(netdev_paired)
{
	char ndev[256], buf[256], path[PATH_MAX];
	unsigned int m[6];

	ASSERT_EQ(0, vrnic_netdev(ndev, sizeof(ndev)));
	snprintf(path, sizeof(path), "/sys/class/net/%s/address", ndev);
	ASSERT_EQ(0, su_read_line(path, buf, sizeof(buf)));
	ASSERT_EQ(6, sscanf(buf, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2],
			    &m[3], &m[4], &m[5]));
	EXPECT_EQ(0U, m[0] & 1) TH_LOG("multicast MAC %s", buf);

	ASSERT_EQ(0, run("ip link set dev %s up%s", ndev, ""));
	/* The default GID is the link-local address derived from the MAC. */
	snprintf(buf, sizeof(buf),
		 "fe80:0000:0000:0000:%02x%02x:%02xff:fe%02x:%02x%02x",
		 m[0] ^ 2, m[1], m[2], m[3], m[4], m[5]);
	EXPECT_LE(0, wait_gid(buf, ndev, 1)) TH_LOG("no GID %s", buf);
}

FIXTURE(ip_gid) {
	char ndev[256];
};

FIXTURE_SETUP(ip_gid)
{
	ASSERT_EQ(0, vrnic_netdev(self->ndev, sizeof(self->ndev)));
	ASSERT_EQ(0, run("ip link set dev %s up%s", self->ndev, ""));
}

FIXTURE_TEARDOWN(ip_gid)
{
	/* Only our own addresses: others may be configured on the netdev. */
	run("ip addr del 10.211.77.1/24 dev %s%s 2>/dev/null", self->ndev, "");
	run("ip addr del fd00:0:0:77::1/64 dev %s%s 2>/dev/null", self->ndev,
	    "");
}

TEST_F(ip_gid, ipv4_address_follows)
{
	const char *gid = "0000:0000:0000:0000:0000:ffff:0ad3:4d01";

	EXPECT_EQ(-1, find_gid(gid, self->ndev));
	ASSERT_EQ(0, run("ip addr add 10.211.77.1/24 dev %s%s", self->ndev, ""));
	EXPECT_LE(0, wait_gid(gid, self->ndev, 1)) TH_LOG("GID did not appear");
	ASSERT_EQ(0, run("ip addr del 10.211.77.1/24 dev %s%s", self->ndev, ""));
	EXPECT_EQ(-1, wait_gid(gid, self->ndev, 0)) TH_LOG("GID stayed");
}

TEST_F(ip_gid, ipv6_address_follows)
{
	const char *gid = "fd00:0000:0000:0077:0000:0000:0000:0001";

	ASSERT_EQ(0, run("ip addr add fd00:0:0:77::1/64 dev %s nodad%s",
			 self->ndev, ""));
	EXPECT_LE(0, wait_gid(gid, self->ndev, 1)) TH_LOG("GID did not appear");
	ASSERT_EQ(0, run("ip addr del fd00:0:0:77::1/64 dev %s%s", self->ndev,
			 ""));
	EXPECT_EQ(-1, wait_gid(gid, self->ndev, 0)) TH_LOG("GID stayed");
}

TEST_HARNESS_MAIN
