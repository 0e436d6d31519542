// SPDX-License-Identifier: GPL-2.0
/*
 * Device registration as user space sees it:
 * - the PCI function is bound to vrnic, vrnic0 is a RoCE (Ethernet) CA
 *   with one ACTIVE port and one P_Key, its command counters run, and its
 *   paired net_device has a unicast MAC whose link-local address is the
 *   default GID;
 * - the uverbs character device of vrnic0 (sysfs, /dev/infiniband, the fd
 *   libibverbs opens), one port state everywhere (verbs, sysfs, `rdma
 *   link`), and address handles on a RoCE v2 GID;
 * - RoCE v2 GIDs follow the IPv4 and IPv6 addresses of the vrnic netdev,
 *   and the IPv4 ones carry traffic while they exist, including a table
 *   index reused after a removal;
 * - vrnic binds only to a vrnic: with the driver unbound, BAR2's
 *   signature or major version is changed through sysfs and a bind must
 *   fail with ENODEV, quietly and without touching the function; with the
 *   original values back, the bind brings vrnic0 up again.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <endian.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <net/if.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "suite.h"
#include "kselftest_harness.h"

/* The netdev `rdma link show vrnic0/1` names. */
static int link_netdev(char *name, size_t len, char *state, size_t slen)
{
	char line[512], *s;
	int ret = -1;
	FILE *f;

	f = popen("rdma link show " SU_DEV "/1 2>/dev/null", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		s = strstr(line, " netdev ");
		if (s && sscanf(s + 8, "%63s", name) == 1 && strlen(name) < len)
			ret = 0;
		s = strstr(line, " state ");
		if (s && slen >= 32 && sscanf(s + 7, "%31s", state) != 1)
			ret = -1;
	}
	pclose(f);
	return ret;
}

/* The sysfs GID string of an IPv4-mapped GID for @ip. */
static void v4_gid_str(const char *ip, char *out, size_t len)
{
	struct in_addr a;
	uint8_t *b = (uint8_t *)&a;

	inet_pton(AF_INET, ip, &a);
	snprintf(out, len, "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x",
		 b[0], b[1], b[2], b[3]);
}

/* Index of the RoCE v2 GID @gid (as sysfs writes it) bound to @ndev, or -1. */
static int gid_index(const char *gid, const char *ndev)
{
	char val[128], path[PATH_MAX];
	int i;

	for (i = 0; i < 1024; i++) {
		snprintf(path, sizeof(path), SU_SYS "/ports/1/gids/%d", i);
		if (access(path, R_OK))
			break;
		if (su_read_line(path, val, sizeof(val)) || strcmp(val, gid))
			continue;
		snprintf(path, sizeof(path),
			 SU_SYS "/ports/1/gid_attrs/types/%d", i);
		if (su_read_line(path, val, sizeof(val)) ||
		    strcmp(val, "RoCE v2"))
			continue;
		snprintf(path, sizeof(path),
			 SU_SYS "/ports/1/gid_attrs/ndevs/%d", i);
		if (su_read_line(path, val, sizeof(val)) || strcmp(val, ndev))
			continue;
		return i;
	}
	return -1;
}

/* Index of the RoCE v2 GID for @ip in sysfs, or -1. */
static int sysfs_gid_index(const char *ip, const char *ndev)
{
	char gid[64];

	v4_gid_str(ip, gid, sizeof(gid));
	return gid_index(gid, ndev);
}

/* Wait up to 10 s for @gid to be present (@want) or gone. */
static int wait_gid_str(const char *gid, const char *ndev, int want)
{
	int i, idx = -1;

	for (i = 0; i < 100; i++) {
		idx = gid_index(gid, ndev);
		if ((idx >= 0) == !!want)
			return idx;
		su_sleep_ms(100);
	}
	return want ? -1 : idx;
}

/* The same for the GID of @ip. */
static int wait_gid(const char *ip, const char *ndev, int want)
{
	char gid[64];

	v4_gid_str(ip, gid, sizeof(gid));
	return wait_gid_str(gid, ndev, want);
}

/* The net_device of the vrnic PCI function. */
static int vrnic_netdev(char *name, size_t len)
{
	DIR *d = opendir(SU_SYS "/device/net");
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

TEST(pci_function_bound)
{
	char buf[PATH_MAX], link[PATH_MAX];
	ssize_t n;

	ASSERT_EQ(0, su_read_line(SU_SYS "/device/vendor", buf, sizeof(buf)));
	EXPECT_STREQ("0x1af4", buf);
	ASSERT_EQ(0, su_read_line(SU_SYS "/device/device", buf, sizeof(buf)));
	EXPECT_STREQ("0x1110", buf);
	n = readlink(SU_SYS "/device/driver", link, sizeof(link) - 1);
	ASSERT_LT(0, n);
	link[n] = 0;
	EXPECT_STREQ("vrnic", strrchr(link, '/') + 1);
}

TEST(rdma_device_attributes)
{
	char buf[256];

	ASSERT_EQ(0, su_read_line(SU_SYS "/node_type", buf, sizeof(buf)));
	EXPECT_STREQ("1: CA", buf);
	ASSERT_EQ(0, su_read_line(SU_SYS "/ports/1/link_layer", buf,
				  sizeof(buf)));
	EXPECT_STREQ("Ethernet", buf);
	ASSERT_EQ(0, su_read_line(SU_SYS "/ports/1/state", buf, sizeof(buf)));
	EXPECT_STREQ("4: ACTIVE", buf);
	ASSERT_EQ(0, su_read_line(SU_SYS "/ports/1/phys_state", buf,
				  sizeof(buf)));
	EXPECT_STREQ("5: LinkUp", buf);
	ASSERT_EQ(0, su_read_line(SU_SYS "/fw_ver", buf, sizeof(buf)));
	EXPECT_NE(0, buf[0]);
	/* No port 2; one P_Key. */
	EXPECT_NE(0, access(SU_SYS "/ports/2", F_OK));
	ASSERT_EQ(0, su_read_line(SU_SYS "/ports/1/pkeys/0", buf, sizeof(buf)));
	EXPECT_STREQ("0xffff", buf);
}

TEST(driver_counters)
{
	char buf[64];

	/* Every command the driver issued since probe is counted. */
	ASSERT_EQ(0, su_read_line(SU_SYS "/ports/1/hw_counters/commands", buf,
				  sizeof(buf)));
	EXPECT_LT(0, atol(buf));
	ASSERT_EQ(0, su_read_line(SU_SYS "/ports/1/hw_counters/command_timeouts",
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

	ASSERT_EQ(0, su_sh("ip link set dev %s up", ndev));
	/* The default GID is the link-local address derived from the MAC. */
	snprintf(buf, sizeof(buf),
		 "fe80:0000:0000:0000:%02x%02x:%02xff:fe%02x:%02x%02x",
		 m[0] ^ 2, m[1], m[2], m[3], m[4], m[5]);
	EXPECT_LE(0, wait_gid_str(buf, ndev, 1)) TH_LOG("no GID %s", buf);
}

TEST(uverbs_char_device)
{
	char path[PATH_MAX], buf[256], guid[64];
	struct ibv_device **list;
	struct ibv_context *ctx;
	unsigned int maj, min;
	struct stat st, fst;
	int idx, n, i, found = 0;

	idx = su_uverbs_index();
	ASSERT_LE(0, idx) TH_LOG("no infiniband_verbs entry for " SU_DEV);

	/* sysfs dev numbers are the /dev/infiniband node's. */
	snprintf(path, sizeof(path), "/sys/class/infiniband_verbs/uverbs%d/dev",
		 idx);
	ASSERT_EQ(0, su_read_line(path, buf, sizeof(buf)));
	ASSERT_EQ(2, sscanf(buf, "%u:%u", &maj, &min));
	snprintf(path, sizeof(path), "/dev/infiniband/uverbs%d", idx);
	ASSERT_EQ(0, stat(path, &st)) TH_LOG("%s: %s", path, strerror(errno));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(maj, major(st.st_rdev));
	EXPECT_EQ(min, minor(st.st_rdev));

	/* The driver's uverbs ABI version. */
	snprintf(path, sizeof(path),
		 "/sys/class/infiniband_verbs/uverbs%d/abi_version", idx);
	ASSERT_EQ(0, su_read_line(path, buf, sizeof(buf)));
	EXPECT_EQ(VRNIC_UVERBS_ABI_VERSION, atoi(buf));

	/* The uverbs device hangs off the same PCI function. */
	snprintf(path, sizeof(path), SU_SYS "/device/infiniband_verbs/uverbs%d",
		 idx);
	EXPECT_EQ(0, access(path, F_OK)) TH_LOG("%s missing", path);

	/* libibverbs lists it with the node GUID sysfs shows ... */
	ASSERT_EQ(0, su_read_line(SU_SYS "/node_guid", guid, sizeof(guid)));
	list = ibv_get_device_list(&n);
	ASSERT_NE(NULL, list);
	for (i = 0; i < n; i++) {
		uint64_t g;

		if (strcmp(ibv_get_device_name(list[i]), SU_DEV))
			continue;
		found = 1;
		g = be64toh(ibv_get_device_guid(list[i]));
		snprintf(buf, sizeof(buf), "%04x:%04x:%04x:%04x",
			 (unsigned int)(g >> 48), (unsigned int)(g >> 32) & 0xffff,
			 (unsigned int)(g >> 16) & 0xffff,
			 (unsigned int)g & 0xffff);
		EXPECT_STREQ(guid, buf);
		EXPECT_EQ(IBV_NODE_CA, list[i]->node_type);
		EXPECT_EQ(IBV_TRANSPORT_IB, list[i]->transport_type);
		snprintf(path, sizeof(path), "uverbs%d", idx);
		EXPECT_STREQ(path, list[i]->dev_name);
	}
	ibv_free_device_list(list);
	ASSERT_TRUE(found);

	/* ... and the context it opens is a file on that node. */
	ctx = su_open();
	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(0, fstat(ctx->cmd_fd, &fst));
	EXPECT_TRUE(S_ISCHR(fst.st_mode));
	EXPECT_EQ(st.st_rdev, fst.st_rdev);
	ibv_close_device(ctx);
}

TEST(port_state_agrees_everywhere)
{
	char ndev[64] = "", state[32] = "", sys[256];
	struct ibv_port_attr pa;
	struct ibv_context *ctx;

	ASSERT_EQ(0, link_netdev(ndev, sizeof(ndev), state, sizeof(state)));
	EXPECT_STREQ("ACTIVE", state);
	ASSERT_EQ(0, su_read_line(SU_SYS "/ports/1/state", sys, sizeof(sys)));
	EXPECT_STREQ("4: ACTIVE", sys);
	/* The netdev of the link is the PCI function's and the GID's. */
	snprintf(sys, sizeof(sys), SU_SYS "/device/net/%s", ndev);
	EXPECT_EQ(0, access(sys, F_OK)) TH_LOG("%s is not vrnic's netdev", ndev);
	ASSERT_EQ(0, su_read_line(SU_SYS "/ports/1/gid_attrs/ndevs/0", sys,
				  sizeof(sys)));
	EXPECT_STREQ(ndev, sys);

	ctx = su_open();
	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(0, ibv_query_port(ctx, 1, &pa));
	EXPECT_EQ(IBV_PORT_ACTIVE, pa.state);
	EXPECT_EQ(IBV_LINK_LAYER_ETHERNET, pa.link_layer);
	EXPECT_LE(IBV_MTU_1024, pa.active_mtu);
	EXPECT_LE(pa.active_mtu, pa.max_mtu);
	EXPECT_LE(2, pa.gid_tbl_len);
	/* Port 2 does not exist. */
	EXPECT_NE(0, ibv_query_port(ctx, 2, &pa));
	ibv_close_device(ctx);
}

/* AHs: created on a RoCE v2 GID, checked, and they hold their PD. */
TEST(address_handles)
{
	struct ibv_ah_attr a = { .is_global = 1, .port_num = 1 };
	struct ibv_device_attr da;
	struct ibv_context *ctx;
	struct ibv_ah *ah, *bad;
	union ibv_gid gid;
	struct ibv_pd *pd;
	int idx;

	ctx = su_open();
	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(0, ibv_query_device(ctx, &da));
	EXPECT_LT(0, da.max_ah);
	pd = ibv_alloc_pd(ctx);
	ASSERT_NE(NULL, pd);
	idx = su_pick_gid(ctx, &gid);
	ASSERT_LE(0, idx);
	a.grh.dgid = gid;
	a.grh.sgid_index = idx;
	a.grh.hop_limit = 64;
	ah = ibv_create_ah(pd, &a);
	ASSERT_NE(NULL, ah) TH_LOG("ibv_create_ah: %s", strerror(errno));

	/* RoCE needs a GRH; an empty source GID entry is refused. */
	a.is_global = 0;
	bad = ibv_create_ah(pd, &a);
	EXPECT_EQ(NULL, bad);
	if (bad)
		ibv_destroy_ah(bad);
	a.is_global = 1;
	a.grh.sgid_index = 15;
	bad = ibv_create_ah(pd, &a);
	EXPECT_EQ(NULL, bad);
	if (bad)
		ibv_destroy_ah(bad);

	EXPECT_EQ(EBUSY, ibv_dealloc_pd(pd));
	EXPECT_EQ(0, ibv_destroy_ah(ah));
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
	ibv_close_device(ctx);
}

/* ------------------------------------------------------------------ */
/* GIDs following IPv4 addresses                                       */
/* ------------------------------------------------------------------ */

FIXTURE(gid) {
	char ndev[64];
	int ifindex;
};

FIXTURE_SETUP(gid)
{
	char state[32];

	ASSERT_EQ(0, link_netdev(self->ndev, sizeof(self->ndev), state,
				 sizeof(state)));
	self->ifindex = if_nametoindex(self->ndev);
	ASSERT_LT(0, self->ifindex);
	ASSERT_EQ(0, su_sh("ip link set dev %s up", self->ndev));
}

FIXTURE_TEARDOWN(gid)
{
	static const char *const ips[] = { "192.168.88.5", "192.168.89.6",
					   "192.168.90.7" };
	unsigned int i;

	for (i = 0; i < sizeof(ips) / sizeof(ips[0]); i++)
		su_sh("ip addr del %s/24 dev %s 2>/dev/null", ips[i], self->ndev);
	su_sh("ip addr del fd00:0:0:77::1/64 dev %s 2>/dev/null", self->ndev);
}

/*
 * Send and RDMA WRITE between two QPs whose AVs use GID index @idx as
 * source and destination: the device must know the GID for the responder
 * to be found. Returns 0 when every byte arrived.
 */
static int traffic_over_gid(struct __test_metadata *_metadata, int idx,
			    const union ibv_gid *gid, unsigned int seed)
{
	struct su_opts o = { .no_connect = 1 };
	struct su_pair p;
	struct ibv_sge s, r;
	struct ibv_wc wc;
	int err;

	err = su_pair_open(&p, &o);
	EXPECT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	if (err)
		goto out;
	p.env.gid = *gid;
	p.env.gid_index = idx;
	err = su_connect(&p, p.qp[0], p.qp[1]);
	EXPECT_EQ(0, err) TH_LOG("connect over GID %d: %s", idx, strerror(err));
	if (err)
		goto out;

	su_fill(p.env.buf, 4096, seed);
	r = su_sge(&p, 8192, 4096);
	s = su_sge(&p, 0, 4096);
	err = -1;
	EXPECT_EQ(0, su_post_recv(p.qp[1], 1, &r, 1));
	EXPECT_EQ(0, su_post_send(p.qp[0], IBV_WR_SEND, 2, &s, 1,
				  IBV_SEND_SIGNALED, 0, 0));
	EXPECT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("send: %s",
						     ibv_wc_status_str(wc.status));
	EXPECT_EQ(1, su_poll(p.cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(4096, wc.byte_len);
	EXPECT_EQ(-1, su_check(p.env.buf + 8192, 4096, seed));

	su_fill(p.env.buf + 16384, 65536, seed + 1);
	s = su_sge(&p, 16384, 65536);
	EXPECT_EQ(0, su_post_send(p.qp[0], IBV_WR_RDMA_WRITE, 3, &s, 1,
				  IBV_SEND_SIGNALED, su_addr(&p, 131072),
				  p.env.mr->rkey));
	EXPECT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(-1, su_check(p.env.buf + 131072, 65536, seed + 1));
	if (_metadata->passed)
		err = 0;
out:
	su_pair_close(&p);
	return err;
}

/* Check what libibverbs reports for index @idx against @ip. */
static int verbs_gid_is(struct ibv_context *ctx, int idx, const char *ip,
			int ifindex, union ibv_gid *gid)
{
	struct ibv_gid_entry e;
	struct in_addr a;

	if (ibv_query_gid_ex(ctx, 1, idx, &e, 0))
		return 0;
	inet_pton(AF_INET, ip, &a);
	if (memcmp(e.gid.raw, su_v4_prefix, 12) ||
	    memcmp(e.gid.raw + 12, &a, 4) ||
	    e.gid_type != IBV_GID_TYPE_ROCE_V2 || e.ndev_ifindex != ifindex)
		return 0;
	if (gid)
		*gid = e.gid;
	return 1;
}

TEST_F(gid, ipv4_gid_follows_address_and_carries_traffic)
{
	const char *ip = "192.168.88.5";
	struct su_opts o = { .no_connect = 1 };
	struct ibv_context *ctx;
	struct su_pair p;
	union ibv_gid gid;
	int idx;

	EXPECT_EQ(-1, sysfs_gid_index(ip, self->ndev));
	ASSERT_EQ(0, su_sh("ip addr add %s/24 dev %s", ip, self->ndev));
	idx = wait_gid(ip, self->ndev, 1);
	ASSERT_LE(0, idx) TH_LOG("GID ::ffff:%s did not appear", ip);

	ctx = su_open();
	ASSERT_NE(NULL, ctx);
	EXPECT_TRUE(verbs_gid_is(ctx, idx, ip, self->ifindex, &gid));
	EXPECT_EQ(0, traffic_over_gid(_metadata, idx, &gid, 11));

	ASSERT_EQ(0, su_sh("ip addr del %s/24 dev %s", ip, self->ndev));
	EXPECT_EQ(-1, wait_gid(ip, self->ndev, 0)) TH_LOG("GID stayed");
	/* libibverbs no longer reports it at that index either. */
	EXPECT_FALSE(verbs_gid_is(ctx, idx, ip, self->ifindex, NULL));
	ibv_close_device(ctx);

	/* An AV naming the now empty index is refused. */
	ASSERT_EQ(0, su_pair_open(&p, &o));
	p.env.gid = gid;
	p.env.gid_index = idx;
	EXPECT_EQ(0, su_to_init(&p, p.qp[0]));
	EXPECT_NE(0, su_to_rtr(&p, p.qp[0], p.qp[1]->qp_num));
	su_pair_close(&p);
}

TEST_F(gid, two_addresses_independent_and_index_reused)
{
	struct ibv_context *ctx;
	union ibv_gid gid;
	int i5, i6, i7;

	/* Different subnets: deleting a primary also drops its secondaries. */
	ASSERT_EQ(0, su_sh("ip addr add 192.168.88.5/24 dev %s", self->ndev));
	ASSERT_EQ(0, su_sh("ip addr add 192.168.89.6/24 dev %s", self->ndev));
	i5 = wait_gid("192.168.88.5", self->ndev, 1);
	i6 = wait_gid("192.168.89.6", self->ndev, 1);
	ASSERT_LE(0, i5);
	ASSERT_LE(0, i6);
	EXPECT_NE(i5, i6);

	/* Removing one leaves the other, at its index, working. */
	ASSERT_EQ(0, su_sh("ip addr del 192.168.88.5/24 dev %s", self->ndev));
	EXPECT_EQ(-1, wait_gid("192.168.88.5", self->ndev, 0));
	EXPECT_EQ(i6, sysfs_gid_index("192.168.89.6", self->ndev));
	ctx = su_open();
	ASSERT_NE(NULL, ctx);
	ASSERT_TRUE(verbs_gid_is(ctx, i6, "192.168.89.6", self->ifindex, &gid));
	EXPECT_EQ(0, traffic_over_gid(_metadata, i6, &gid, 21));

	/*
	 * The next address takes a free index, possibly the one .5 had: the
	 * device's copy of that entry must be the new GID.
	 */
	ASSERT_EQ(0, su_sh("ip addr add 192.168.90.7/24 dev %s", self->ndev));
	i7 = wait_gid("192.168.90.7", self->ndev, 1);
	ASSERT_LE(0, i7);
	EXPECT_NE(i6, i7);
	ASSERT_TRUE(verbs_gid_is(ctx, i7, "192.168.90.7", self->ifindex, &gid));
	EXPECT_EQ(0, traffic_over_gid(_metadata, i7, &gid, 31));

	ASSERT_EQ(0, su_sh("ip addr del 192.168.89.6/24 dev %s", self->ndev));
	ASSERT_EQ(0, su_sh("ip addr del 192.168.90.7/24 dev %s", self->ndev));
	EXPECT_EQ(-1, wait_gid("192.168.89.6", self->ndev, 0));
	EXPECT_EQ(-1, wait_gid("192.168.90.7", self->ndev, 0));
	ibv_close_device(ctx);
}

TEST_F(gid, ipv6_address_follows)
{
	const char *gid = "fd00:0000:0000:0077:0000:0000:0000:0001";

	ASSERT_EQ(0, su_sh("ip addr add fd00:0:0:77::1/64 dev %s nodad",
			   self->ndev));
	EXPECT_LE(0, wait_gid_str(gid, self->ndev, 1))
		TH_LOG("GID did not appear");
	ASSERT_EQ(0, su_sh("ip addr del fd00:0:0:77::1/64 dev %s", self->ndev));
	EXPECT_EQ(-1, wait_gid_str(gid, self->ndev, 0)) TH_LOG("GID stayed");
}

/* ------------------------------------------------------------------ */
/* Binding only to a vrnic                                             */
/* ------------------------------------------------------------------ */

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
	return su_sh_number("dmesg | grep -c vrnic");
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
	n = readlink(SU_SYS "/device", link, sizeof(link) - 1);
	ASSERT_LT(0, n);
	link[n] = 0;
	snprintf(self->pci, sizeof(self->pci), "%s", basename(link));
	snprintf(self->dev, sizeof(self->dev), "/sys/bus/pci/devices/%s",
		 self->pci);

	su_save_netdev_addrs(saved_addrs, sizeof(saved_addrs));
	ASSERT_EQ(0, write_str(DRV "/unbind", self->pci));
	ASSERT_NE(0, access(SU_SYS, F_OK));

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
	EXPECT_NE(0, access(SU_SYS, F_OK));
	/* Untouched: what we wrote is still there, nothing was logged. */
	EXPECT_EQ(0x12345678U, self->regs->signature);
	EXPECT_EQ(before, kmsg_vrnic_lines());
}

TEST_F(unbound, unknown_major_version_is_refused)
{
	int before = kmsg_vrnic_lines();

	self->regs->version_major = VRNIC_VERSION_MAJOR + 1;
	EXPECT_EQ(-ENODEV, write_str(DRV "/bind", self->pci));
	EXPECT_NE(0, access(SU_SYS, F_OK));
	EXPECT_EQ(before, kmsg_vrnic_lines());
}

TEST_HARNESS_MAIN
