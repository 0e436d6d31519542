// SPDX-License-Identifier: GPL-2.0
/*
 * vrnic teardown, driven through the raw uverbs ABI (no libibverbs):
 * a process killed with live objects (PDs, a pinned MR, CQs, QPs, mapped
 * rings and doorbell page) leaves nothing behind, and removing the module
 * while a process holds the device disassociates that process (it gets
 * IB_EVENT_DEVICE_FATAL, its verbs fail with EIO, its mappings stay safe
 * to touch) without hanging; the module then loads again. A device that
 * goes FATAL (injected through debugfs) reaches users as DEVICE_FATAL, takes
 * the port down and fails verbs with EIO; reloading resets it back to work.
 */
#include <libgen.h>
#include <limits.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "suite.h"
#include "kselftest_harness.h"

#define MR_BYTES (1 << 20)

struct uctx {
	int fd;
	int async_fd;
	struct vrnic_ibv_alloc_ucontext_resp drv;
};

static int get_context(struct uctx *u)
{
	struct ib_uverbs_get_context_resp core;
	int ret;

	u->fd = su_open_uverbs();
	if (u->fd < 0)
		return -ENODEV;
	ret = su_get_context(u->fd, NULL, 0, &core, &u->drv);
	if (ret)
		return ret;
	u->async_fd = core.async_fd;
	return 0;
}

static int alloc_pd(struct uctx *u, __u32 *pd)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_alloc_pd cmd;
	} c = {};
	struct ib_uverbs_alloc_pd_resp r = {};
	int ret;

	c.cmd.response = (__u64)(uintptr_t)&r;
	ret = su_uverbs_write(u->fd, IB_USER_VERBS_CMD_ALLOC_PD, &c, sizeof(c),
			   sizeof(r));
	*pd = r.pd_handle;
	return ret;
}

static int reg_mr(struct uctx *u, __u32 pd, void *buf, size_t len)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_reg_mr cmd;
	} c = {};
	struct ib_uverbs_reg_mr_resp r = {};

	c.cmd.response = (__u64)(uintptr_t)&r;
	c.cmd.start = (__u64)(uintptr_t)buf;
	c.cmd.length = len;
	c.cmd.hca_va = (__u64)(uintptr_t)buf;
	c.cmd.pd_handle = pd;
	c.cmd.access_flags = IB_UVERBS_ACCESS_LOCAL_WRITE |
			     IB_UVERBS_ACCESS_REMOTE_WRITE |
			     IB_UVERBS_ACCESS_REMOTE_READ;
	return su_uverbs_write(u->fd, IB_USER_VERBS_CMD_REG_MR, &c, sizeof(c),
			    sizeof(r));
}

static int create_cq(struct uctx *u, __u32 *handle)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_create_cq cmd;
		struct vrnic_ibv_create_cq drv;
	} c = {};
	struct {
		struct ib_uverbs_create_cq_resp core;
		struct vrnic_ibv_create_cq_resp drv;
	} r = {};
	int ret;

	c.cmd.response = (__u64)(uintptr_t)&r;
	c.cmd.cqe = 64;
	c.cmd.comp_channel = -1;
	ret = su_uverbs_write(u->fd, IB_USER_VERBS_CMD_CREATE_CQ, &c, sizeof(c),
			   sizeof(r));
	if (ret)
		return ret;
	*handle = r.core.cq_handle;
	if (mmap(NULL, r.drv.ring_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 u->fd, r.drv.ring_mmap_key) == MAP_FAILED)
		return -errno;
	return 0;
}

static int create_qp(struct uctx *u, __u32 pd, __u32 cq)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_create_qp cmd;
		struct vrnic_ibv_create_qp drv;
	} c = {};
	struct {
		struct ib_uverbs_create_qp_resp core;
		struct vrnic_ibv_create_qp_resp drv;
	} r = {};
	int ret;

	c.cmd.response = (__u64)(uintptr_t)&r;
	c.cmd.pd_handle = pd;
	c.cmd.send_cq_handle = cq;
	c.cmd.recv_cq_handle = cq;
	c.cmd.max_send_wr = 32;
	c.cmd.max_recv_wr = 32;
	c.cmd.max_send_sge = 2;
	c.cmd.max_recv_sge = 2;
	c.cmd.qp_type = IB_UVERBS_QPT_RC;
	ret = su_uverbs_write(u->fd, IB_USER_VERBS_CMD_CREATE_QP, &c, sizeof(c),
			   sizeof(r));
	if (ret)
		return ret;
	if (mmap(NULL, r.drv.sq_ring_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 u->fd, r.drv.sq_mmap_key) == MAP_FAILED ||
	    mmap(NULL, r.drv.rq_ring_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 u->fd, r.drv.rq_mmap_key) == MAP_FAILED)
		return -errno;
	return 0;
}

static volatile __u32 *map_db(struct uctx *u)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, u->fd,
		       u->drv.db_mmap_key);

	return p == MAP_FAILED ? NULL : p;
}

/* Objects of every kind, mapped; returns 0 or a step number. */
static int make_objects(struct uctx *u)
{
	__u32 pd[2], cq[2];
	void *buf;
	int i;

	if (get_context(u))
		return 1;
	if (!map_db(u))
		return 2;
	for (i = 0; i < 2; i++) {
		if (alloc_pd(u, &pd[i]))
			return 3;
		if (create_cq(u, &cq[i]))
			return 4;
		if (create_qp(u, pd[i], cq[i]))
			return 5;
	}
	buf = mmap(NULL, MR_BYTES, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 6;
	memset(buf, 1, MR_BYTES);
	if (reg_mr(u, pd[0], buf, MR_BYTES))
		return 7;
	return 0;
}

static int res_count(const char *line, const char *what)
{
	char key[32];
	const char *p;

	snprintf(key, sizeof(key), " %s ", what);
	p = strstr(line, key);
	return p ? atoi(p + strlen(key)) : -1;
}

static char saved_addrs[1024];

TEST(killed_process_leaves_nothing)
{
	char before[256], during[256], after[256];
	struct uctx u;
	int pipefd[2], status, i;
	char step = 0;
	pid_t pid;

	ASSERT_EQ(0, su_res_line(before, sizeof(before)));
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(pipefd[0]);
		step = make_objects(&u);
		if (write(pipefd[1], &step, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &step, 1));
	close(pipefd[0]);
	EXPECT_EQ(0, step) TH_LOG("child failed at step %d", step);

	ASSERT_EQ(0, su_res_line(during, sizeof(during)));
	EXPECT_EQ(res_count(before, "pd") + 2, res_count(during, "pd"));
	EXPECT_EQ(res_count(before, "cq") + 2, res_count(during, "cq"));
	EXPECT_EQ(res_count(before, "qp") + 2, res_count(during, "qp"));
	EXPECT_EQ(res_count(before, "mr") + 1, res_count(during, "mr"));
	EXPECT_EQ(res_count(before, "ctx") + 1, res_count(during, "ctx"));
	/* The MR's pages are pinned and accounted to the process. */
	EXPECT_LE(MR_BYTES / 1024, su_vmpin_kb(pid));

	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	for (i = 0; i < 50; i++) {
		ASSERT_EQ(0, su_res_line(after, sizeof(after)));
		if (!strcmp(before, after))
			break;
		su_sleep_ms(100);
	}
	EXPECT_STREQ(before, after);
}

/* Child of the rmmod test: exit status 0 if disassociation looked right. */
static int hold_device(int ready_fd)
{
	struct ib_uverbs_async_event_desc ev = {};
	volatile __u32 *db;
	struct uctx u;
	char step;
	__u32 pd;

	step = make_objects(&u);
	db = step ? NULL : map_db(&u);
	if (!step && !db)
		step = 8;
	if (write(ready_fd, &step, 1) != 1 || step)
		return 10 + step;

	/* Blocks until the driver goes away. */
	if (read(u.async_fd, &ev, sizeof(ev)) != sizeof(ev))
		return 30;
	if (ev.event_type != IBV_EVENT_DEVICE_FATAL)
		return 31;
	/* The doorbell page is zapped: touching it must not fault. */
	db[1] = 1;
	(void)db[0];
	/* Every verb now fails with EIO. */
	if (alloc_pd(&u, &pd) != -EIO)
		return 32;
	return 0;
}

TEST(rmmod_disassociates_then_reload)
{
	char path[PATH_MAX];
	int pipefd[2], status = -1, fd, i, ret;
	char step = 0;
	pid_t pid;

	ASSERT_EQ(0, su_module_path(path, sizeof(path), "vrnic.ko"));
	ASSERT_EQ(0, access(path, R_OK)) TH_LOG("%s missing", path);
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(pipefd[0]);
		_exit(hold_device(pipefd[1]));
	}
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &step, 1));
	close(pipefd[0]);
	ASSERT_EQ(0, step) TH_LOG("child failed at step %d", step);

	su_save_netdev_addrs(saved_addrs, sizeof(saved_addrs));
	ret = syscall(SYS_delete_module, "vrnic", O_NONBLOCK);
	EXPECT_EQ(0, ret) TH_LOG("rmmod vrnic: %s", strerror(errno));
	for (i = 0; i < 100; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		su_sleep_ms(100);
	}
	if (i == 100) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("holder: status %#x", status);
	EXPECT_NE(0, access("/sys/class/infiniband/" SU_DEV, F_OK));

	/* Leave the device as we found it for the tests that follow. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ret = syscall(SYS_finit_module, fd, "", 0);
	close(fd);
	ASSERT_EQ(0, ret) TH_LOG("insmod %s: %s", path, strerror(errno));
	for (i = 0; i < 100 && !su_port_active(); i++)
		su_sleep_ms(100);
	ASSERT_TRUE(su_port_active());
	su_restore_netdev_addrs(saved_addrs);
}

/* Child of the fatal test: 0 if DEVICE_FATAL arrived and verbs fail. */
static int watch_fatal(int ready_fd)
{
	struct ib_uverbs_async_event_desc ev = {};
	struct uctx u;
	char step;
	__u32 pd;
	int i;

	step = make_objects(&u);
	if (write(ready_fd, &step, 1) != 1 || step)
		return 10 + step;
	for (i = 0; i < 8; i++) {
		if (read(u.async_fd, &ev, sizeof(ev)) != sizeof(ev))
			return 30;
		if (ev.event_type == IBV_EVENT_DEVICE_FATAL)
			break;
	}
	if (ev.event_type != IBV_EVENT_DEVICE_FATAL)
		return 31;
	if (alloc_pd(&u, &pd) != -EIO)
		return 32;
	step = 0;
	if (write(ready_fd, &step, 1) != 1)
		return 33;
	pause();
	return 0;
}

static int read_byte(int fd, char *c, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, ms) != 1)
		return -1;
	return read(fd, c, 1) == 1 ? 0 : -1;
}

static int debugfs_dir(char *dir, size_t len)
{
	char link[PATH_MAX];
	ssize_t n;

	if (access("/sys/kernel/debug/vrnic", F_OK))
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	n = readlink("/sys/class/infiniband/" SU_DEV "/device", link,
		     sizeof(link) - 1);
	if (n <= 0)
		return -1;
	link[n] = 0;
	snprintf(dir, len, "/sys/kernel/debug/vrnic/%s", basename(link));
	return access(dir, F_OK);
}

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return 0;
}

TEST(device_fatal_reaches_users_then_reload)
{
	char dir[PATH_MAX], path[PATH_MAX + 32], state[1024], mod[PATH_MAX];
	int pipefd[2], status, fd, i, ret;
	char c = 1;
	pid_t pid;

	ASSERT_EQ(0, su_module_path(mod, sizeof(mod), "vrnic.ko"));
	ASSERT_EQ(0, debugfs_dir(dir, sizeof(dir))) TH_LOG("no debugfs dir");
	ASSERT_TRUE(su_port_active());
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(pipefd[0]);
		_exit(watch_fatal(pipefd[1]));
	}
	close(pipefd[1]);
	ASSERT_EQ(0, read_byte(pipefd[0], &c, 20000));
	ASSERT_EQ(0, c) TH_LOG("child failed at step %d", c);

	/* The device must go FATAL on an out-of-range cmdq_pi. */
	snprintf(path, sizeof(path), "%s/inject_fatal", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1, write(fd, "1", 1));
	close(fd);

	c = 1;
	EXPECT_EQ(0, read_byte(pipefd[0], &c, 10000))
		TH_LOG("no DEVICE_FATAL reached the process");
	EXPECT_EQ(0, c);
	EXPECT_FALSE(su_port_active());
	snprintf(path, sizeof(path), "%s/state", dir);
	ASSERT_EQ(0, read_file(path, state, sizeof(state)));
	EXPECT_NE(NULL, strstr(state, "driver_fatal\t1"));
	/*
	 * The driver resets a device it gives up on; this one acknowledges
	 * (the watchdog looks every second), which clears its FATAL.
	 */
	for (i = 0; i < 50; i++) {
		ASSERT_EQ(0, read_file(path, state, sizeof(state)));
		if (strstr(state, "reset_pending\t0"))
			break;
		su_sleep_ms(100);
	}
	EXPECT_NE(NULL, strstr(state, "reset_pending\t0")) TH_LOG("%s", state);
	EXPECT_NE(NULL, strstr(state, "held_bytes\t0")) TH_LOG("%s", state);
	EXPECT_NE(NULL, strstr(state, "fatal_code\t0")) TH_LOG("%s", state);
	EXPECT_NE(NULL, strstr(state, "driver_fatal\t1"));

	/* Unload with the process still holding the dead device. */
	su_save_netdev_addrs(saved_addrs, sizeof(saved_addrs));
	ret = syscall(SYS_delete_module, "vrnic", O_NONBLOCK);
	EXPECT_EQ(0, ret) TH_LOG("rmmod vrnic: %s", strerror(errno));
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	EXPECT_TRUE(WIFSIGNALED(status)) TH_LOG("child status %#x", status);

	/* The reset at probe recovers the device. */
	fd = open(mod, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ret = syscall(SYS_finit_module, fd, "", 0);
	close(fd);
	ASSERT_EQ(0, ret) TH_LOG("insmod %s: %s", mod, strerror(errno));
	for (i = 0; i < 100 && !su_port_active(); i++)
		su_sleep_ms(100);
	ASSERT_TRUE(su_port_active());
	su_restore_netdev_addrs(saved_addrs);
}

TEST_HARNESS_MAIN
