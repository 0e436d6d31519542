// SPDX-License-Identifier: GPL-2.0
/*
 * vrnic's kernel verbs (the path kernel ULPs use): loading
 * kernel/vrnic_ktest.ko runs one case (its "test" parameter) on every vrnic
 * device inside the kernel and fails the load if any step fails: RC
 * SEND/RECV and drain, UD datagrams with kernel AHs, MADs into QP1 (well
 * and badly formed), an SRQ shared by two RC QPs, the SRQ limit event, an
 * SRQ grown with receives posted (they complete in order, bytes checked),
 * fast registration with local and remote invalidation (bytes checked),
 * XRC's kernel boundary. Afterwards no RDMA resource may be left behind.
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

#define NETDEV "\"$(ls " SU_SYS "/device/net | head -n1)\""
/* An IPv4 address, so that the port has a v4-mapped GID too. */
#define UD_IP "192.168.93.9"
#define UD_IP_GID "ffff:c0a8:5d09"

/* Load test module @mod.ko with @params: 0, or the errno of the failed load. */
static int run_module(struct __test_metadata *_metadata, const char *mod,
		      const char *params)
{
	char path[PATH_MAX], ko[64], before[256], after[256];
	int fd, ret, err = 0;

	if (su_sh("ip link set dev " NETDEV " up"))
		return EIO;
	snprintf(ko, sizeof(ko), "%s.ko", mod);
	if (su_module_path(path, sizeof(path), ko) ||
	    su_res_line(before, sizeof(before)))
		return ENOENT;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		TH_LOG("%s: %s", path, strerror(errno));
		return errno;
	}
	ret = syscall(SYS_finit_module, fd, params, 0);
	if (ret) {
		err = errno;
		system("dmesg | grep vrnic | tail -n 20");
		TH_LOG("%s %s failed: %s", mod, params, strerror(err));
	}
	close(fd);
	if (!ret)
		EXPECT_EQ(0, syscall(SYS_delete_module, mod, O_NONBLOCK));
	EXPECT_EQ(0, su_res_line(after, sizeof(after)));
	EXPECT_STREQ(before, after);
	return err;
}

static int run_ktest(struct __test_metadata *_metadata, const char *params)
{
	return run_module(_metadata, "vrnic_ktest", params);
}

/* The RoCE v2 GIDs of port 1 (each carries one UD exchange). */
static int roce_v2_gids(void)
{
	return su_sh_number("grep -lx 'RoCE v2' " SU_SYS
			    "/ports/1/gid_attrs/types/* 2>/dev/null | wc -l");
}

/*
 * vrnic_ktest_cm.ko: two kernel rdma_cm IDs connect over vrnic0's IPv4
 * address (ib_cm's MADs through the GSI QP), exchange checked SENDs and
 * disconnect.
 */
TEST(kernel_rdma_cm_connect_send_disconnect)
{
	ASSERT_EQ(0, su_sh("scripts/vm.d/vrnic-addr >/dev/null && "
			   "modprobe rdma_cm"));
	ASSERT_EQ(0, run_module(_metadata, "vrnic_ktest_cm",
				"addr=192.168.77.1"));
}

TEST(kernel_ulp_send_recv_drain)
{
	ASSERT_EQ(0, run_ktest(_metadata, ""));
}

/*
 * UD between two kernel QPs with kernel AHs, over the IPv6 link-local and
 * an IPv4 GID: the GRH area's IP header, src_qp, network header type and
 * source MAC of each receive; one datagram per GID with a wrong qkey,
 * dropped and counted by the device in ud_qkey_drops.
 */
TEST(kernel_ud_datagrams)
{
	long drops;
	int i, gids, err;

	ASSERT_EQ(0, su_sh("ip link set dev " NETDEV " up && ip addr add " UD_IP "/24 dev " NETDEV));
	for (i = 0; i < 50; i++) {
		if (!su_sh("grep -qs " UD_IP_GID " " SU_SYS "/ports/1/gids/*"))
			break;
		su_sleep_ms(100);
	}
	gids = roce_v2_gids();
	drops = su_counter("ud_qkey_drops");
	err = run_ktest(_metadata, "test=ud");
	su_sh("ip addr del " UD_IP "/24 dev " NETDEV);
	ASSERT_EQ(0, err);
	ASSERT_LE(2, gids);
	ASSERT_LE(0, drops);
	EXPECT_EQ(drops + gids, su_counter("ud_qkey_drops"));
}

/*
 * MADs into QP1 from a kernel UD QP with the GSI qkey (ktest test=mad):
 * ib_mad answers a Get, drops malformed MADs unanswered and stays up, with
 * no kernel warning or oops (it logs the bad base versions itself); the Get
 * with a wrong qkey is the device's to drop and count.
 */
TEST(kernel_mads_into_qp1)
{
	long drops = su_counter("ud_qkey_drops");
	long splats = su_kmsg_splats();

	ASSERT_LE(0, drops);
	ASSERT_LE(0, splats);
	ASSERT_EQ(0, run_ktest(_metadata, "test=mad"));
	EXPECT_EQ(drops + 1, su_counter("ud_qkey_drops"));
	EXPECT_EQ(splats, su_kmsg_splats())
		system(SU_KMSG_SPLATS " | tail -n 20 | sed 's/^/# /'");
}

/* The device's drop counters are in rdma statistic. */
TEST(device_drop_counters_shown)
{
	EXPECT_LE(0, su_counter("ud_qkey_drops"));
	EXPECT_LE(0, su_counter("ud_no_recv_drops"));
	EXPECT_LE(0, su_counter("ud_no_dest_drops"));
	EXPECT_LE(0, su_counter("uc_drops"));
}

/*
 * Two RC QPs on one kernel SRQ: each message lands in the SRQ's next
 * buffer, with the right wr_id and QP; the device's consumer index frees
 * slots; post_recv on such a QP is refused; a QP going to ERR reports its
 * last WQE and leaves the SRQ's receives alone.
 */
TEST(kernel_srq_shared_by_two_rc_qps)
{
	ASSERT_EQ(0, run_ktest(_metadata, "test=srq"));
}

/* The SRQ limit: armed, fired once below it, 0 afterwards. */
TEST(kernel_srq_limit_event)
{
	ASSERT_EQ(0, run_ktest(_metadata, "test=srq_limit"));
}

/*
 * ib_modify_srq(IB_SRQ_MAX_WR): receives posted before the resize, wrapped
 * in the old ring, complete in order after it with their bytes, then
 * receives beyond the old depth and around the new ring.
 */
TEST(kernel_srq_resize_keeps_receives_in_order)
{
	ASSERT_EQ(0, run_ktest(_metadata, "test=srq_resize"));
}

/*
 * Fast registration (kernel/ktest_frwr.c): an MR of two scattered pages
 * registered with IB_WR_REG_MR, written and read through its rkey across
 * the page boundary (bytes checked); after IB_WR_LOCAL_INV the key fails
 * and the pages stay as they were; registered again under a new key byte,
 * it works and the old key fails; a SEND with invalidate from the peer
 * reports the key at the receiver and the key fails after it.
 */
TEST(kernel_frwr_register_invalidate_reregister)
{
	ASSERT_EQ(0, run_ktest(_metadata, "test=frwr"));
}

/*
 * XRC from the kernel (ktest test=xrc): a domain of the kernel's own comes
 * and goes; an XRC SRQ and an XRC initiator are refused with EOPNOTSUPP,
 * since the kernel's send WR cannot name a remote XRC SRQ.
 */
TEST(kernel_xrc_initiator_and_srq_refused)
{
	ASSERT_EQ(0, run_ktest(_metadata, "test=xrc"));
}

TEST_HARNESS_MAIN
