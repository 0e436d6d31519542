/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the fault tests: a process running verified RDMA traffic
 * until the device dies under it, the module's unload and reload, and the
 * kernel memory figures the leak checks compare.
 */
#ifndef VRNIC_FAULT_UTIL_H
#define VRNIC_FAULT_UTIL_H

#include <dirent.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <sys/syscall.h>

#include "suite.h"

/* A worker's exit status says what it saw. */
enum fu_exit {
	FU_FATAL_SEEN = 0,	/* traffic verified, then DEVICE_FATAL */
	FU_NO_START = 10,	/* could not open its pair */
	FU_BAD_DATA = 11,	/* a successful completion with wrong bytes */
	FU_BAD_STATUS = 12,	/* an error completion before any fatal event */
	FU_POST_FAILED = 13,	/* a post failed before any fatal event */
	FU_NO_FATAL = 14,	/* stuck for FU_STUCK_MS and no fatal event */
	FU_VERB_WORKS = 15,	/* a verb still succeeded after the event */
	FU_POST_WORKS = 16,	/* a post succeeded after the event */
};

#define FU_STUCK_MS 60000
#define FU_CHUNK 65536

/*
 * Set when the device dies with the module still loaded (not by rmmod,
 * which unmaps the doorbell page): posts must then fail with EIO.
 */
static int fu_expect_post_eio;

struct fu_worker {
	struct su_pair p;
	volatile int fatal;
	volatile int stop_churn;
	unsigned long rounds, churned;
	int last_status;	/* of the last error completion, or -1 */
};

/* Wait for DEVICE_FATAL on the context's async fd. */
static inline void *fu_watch_fatal(void *arg)
{
	struct fu_worker *w = arg;
	struct ibv_async_event ev;

	while (!ibv_get_async_event(w->p.env.ctx, &ev)) {
		if (ev.event_type == IBV_EVENT_DEVICE_FATAL)
			w->fatal = 1;
		ibv_ack_async_event(&ev);
		if (w->fatal)
			break;
	}
	return NULL;
}

/* Creates and destroys a CQ without pause: a command is nearly always out. */
static inline void *fu_churn_cq(void *arg)
{
	struct fu_worker *w = arg;
	struct ibv_cq *cq;

	while (!w->fatal && !w->stop_churn) {
		cq = ibv_create_cq(w->p.env.ctx, 16, NULL, NULL, 0);
		if (!cq)
			break;
		ibv_destroy_cq(cq);
		w->churned++;
	}
	return NULL;
}

/* One completion on @cq, or 0 once the device is dead or after the limit. */
static inline int fu_poll(struct fu_worker *w, struct ibv_cq *cq, struct ibv_wc *wc)
{
	long end = su_now_ms() + FU_STUCK_MS;

	while (su_now_ms() < end) {
		if (ibv_poll_cq(cq, 1, wc) == 1)
			return 1;
		if (w->fatal)
			return 0;
	}
	return 0;
}

/*
 * One verified round: a 64 KiB WRITE and a 4 KiB SEND with a fresh pattern.
 * Returns 1 if done and correct, 0 if the device died, or an fu_exit code.
 */
static inline int fu_round(struct fu_worker *w, unsigned int seed)
{
	struct su_pair *p = &w->p;
	size_t slot = (seed % 4) * FU_CHUNK;
	struct ibv_sge s = su_sge(p, slot, FU_CHUNK);
	struct ibv_sge r = su_sge(p, 786432 + slot, 4096);
	struct ibv_wc wc;
	int i;

	su_fill(p->env.buf + slot, FU_CHUNK, seed);
	if (su_post_recv(p->qp[1], seed, &r, 1) ||
	    su_post_send(p->qp[0], IBV_WR_RDMA_WRITE, seed, &s, 1,
			 IBV_SEND_SIGNALED, su_addr(p, 524288 + slot),
			 p->env.mr->rkey))
		return w->fatal ? 0 : FU_POST_FAILED;
	s.length = 4096;
	if (su_post_send(p->qp[0], IBV_WR_SEND, seed, &s, 1, IBV_SEND_SIGNALED,
			 0, 0))
		return w->fatal ? 0 : FU_POST_FAILED;
	for (i = 0; i < 3; i++) {
		if (!fu_poll(w, i < 2 ? p->cq[0] : p->cq[1], &wc))
			return w->fatal ? 0 : FU_NO_FATAL;
		if (wc.status != IBV_WC_SUCCESS) {
			w->last_status = wc.status;
			return w->fatal ? 0 : FU_BAD_STATUS;
		}
	}
	if (su_check(p->env.buf + 524288 + slot, FU_CHUNK, seed) != -1 ||
	    su_check(p->env.buf + 786432 + slot, 4096, seed) != -1)
		return FU_BAD_DATA;
	return 1;
}

/*
 * A forked worker: verified traffic (and with @churn a thread issuing
 * commands) until the device dies. Writes one byte to @ready_fd after ten
 * good rounds. Exits with an fu_exit code.
 */
static inline void fu_worker_run(int id, int ready_fd, int churn)
{
	pthread_t watch, ch;
	struct fu_worker w;
	long end;
	int ret;

	memset(&w, 0, sizeof(w));
	w.last_status = -1;
	if (su_pair_open(&w.p, NULL))
		_exit(FU_NO_START);
	if (pthread_create(&watch, NULL, fu_watch_fatal, &w) ||
	    (churn && pthread_create(&ch, NULL, fu_churn_cq, &w)))
		_exit(FU_NO_START);
	for (;;) {
		ret = fu_round(&w, id * 1000000 + w.rounds);
		if (ret != 1)
			break;
		if (++w.rounds == 10 && write(ready_fd, "r", 1) != 1)
			_exit(FU_NO_START);
	}
	if (ret == FU_BAD_DATA)
		_exit(ret);
	/*
	 * A device going away may flush WQEs in error, or fail posts, before
	 * this process has read its DEVICE_FATAL: only a failure the event
	 * does not follow counts.
	 */
	end = su_now_ms() + FU_STUCK_MS;
	while (!w.fatal && su_now_ms() < end)
		su_sleep_ms(10);
	if (!w.fatal)
		_exit(ret ? ret : FU_NO_FATAL);
	if (churn)
		pthread_join(ch, NULL);
	if (ibv_alloc_pd(w.p.env.ctx))
		_exit(FU_VERB_WORKS);
	if (fu_expect_post_eio) {
		struct ibv_sge s = su_sge(&w.p, 0, 64);

		if (su_post_recv(w.p.qp[1], 1, &s, 1) != EIO)
			_exit(FU_POST_WORKS);
	}
	fprintf(stderr, "# worker %d: %lu verified rounds, %lu CQs churned, then DEVICE_FATAL%s%s\n",
		id, w.rounds, w.churned,
		w.last_status < 0 ? "" : "; last completion: ",
		w.last_status < 0 ? "" : ibv_wc_status_str(w.last_status));
	_exit(FU_FATAL_SEEN);
}

/* Fork @n workers; wait until each has run ten good rounds. 0 or -1. */
static inline int fu_start_workers(pid_t *pid, int n, int churn, int ms)
{
	int pipefd[2], i, got = 0;
	struct pollfd pfd;
	char c;

	if (pipe(pipefd))
		return -1;
	for (i = 0; i < n; i++) {
		pid[i] = fork();
		if (pid[i] < 0)
			return -1;
		if (!pid[i]) {
			close(pipefd[0]);
			fu_worker_run(i + 1, pipefd[1], churn && i == 0);
		}
	}
	close(pipefd[1]);
	pfd.fd = pipefd[0];
	pfd.events = POLLIN;
	while (got < n && poll(&pfd, 1, ms) == 1 && read(pipefd[0], &c, 1) == 1)
		got++;
	close(pipefd[0]);
	if (got == n)
		return 0;
	/* Leave no traffic behind for the tests that follow. */
	for (i = 0; i < n; i++) {
		kill(pid[i], SIGKILL);
		waitpid(pid[i], NULL, 0);
	}
	return -1;
}

/* ------------------------------------------------------------------ */
/* The module                                                          */
/* ------------------------------------------------------------------ */

/*
 * rmmod vrnic in a child so that a hang is seen: 0, -errno of
 * delete_module, or -ETIMEDOUT after @ms.
 */
static inline int fu_rmmod(int ms)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -errno;
	if (!pid)
		_exit(syscall(SYS_delete_module, "vrnic", O_NONBLOCK) ?
		      errno : 0);
	st = su_wait_child(pid, ms);
	if (st == -1)
		return -ETIMEDOUT;
	return WIFEXITED(st) ? -WEXITSTATUS(st) : -EINTR;
}

/* insmod, wait for an ACTIVE port and give the netdev its address back. */
static inline int fu_insmod(void)
{
	char path[PATH_MAX], addr[PATH_MAX + 32];
	int ret;

	if (su_module_path(path, sizeof(path), "vrnic.ko"))
		return -ENOENT;
	ret = su_insmod("");
	if (ret)
		return ret;
	/* Later tests and tools expect vrnic0's address. */
	snprintf(addr, sizeof(addr), "%s/../scripts/vm.d/vrnic-addr",
		 dirname(path));
	return system(addr) ? -EIO : 0;
}

/* ------------------------------------------------------------------ */
/* Kernel memory                                                       */
/* ------------------------------------------------------------------ */

struct fu_mem {
	long sunreclaim_kb, mlocked_kb, unevictable_kb;
	long kmalloc_kb;	/* live objects of the kmalloc caches */
};

/*
 * Live bytes in the generic kmalloc caches (not the reclaimable ones):
 * where a driver's kzalloc'd object ends up, without the dentry and inode
 * caches that come and go with file system activity.
 */
static inline long fu_kmalloc_kb(void)
{
	unsigned long active, total, size;
	char line[512], name[64];
	long bytes = 0;
	FILE *f = fopen("/proc/slabinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %lu %lu %lu", name, &active, &total,
			   &size) == 4 && !strncmp(name, "kmalloc-", 8) &&
		    strncmp(name, "kmalloc-rcl-", 12))
			bytes += active * size;
	fclose(f);
	return bytes >> 10;
}

static inline void fu_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		(void)!write(fd, val, strlen(val));
		close(fd);
	}
}

/* Sets vrnic.ko's module parameter @name. */
static inline void fu_set_param(const char *name, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/vrnic/parameters/%s", name);
	fu_write(path, val);
}

/*
 * Let RCU-freed objects settle, drop the page cache's dentries and inodes,
 * and make SLUB flush its per-CPU slabs and free empty ones: otherwise
 * whole slabs count as used and the figures jump by 100 kB and more.
 */
static inline void fu_mem_get(struct fu_mem *m)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;

	su_sleep_ms(300);
	fu_write("/proc/sys/vm/drop_caches", "3");
	d = opendir("/sys/kernel/slab");
	while (d && (e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink",
			 e->d_name);
		fu_write(path, "1");
	}
	if (d)
		closedir(d);
	m->sunreclaim_kb = su_meminfo_kb("SUnreclaim");
	m->mlocked_kb = su_meminfo_kb("Mlocked");
	m->unevictable_kb = su_meminfo_kb("Unevictable");
	m->kmalloc_kb = fu_kmalloc_kb();
}

#endif /* VRNIC_FAULT_UTIL_H */
