/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the suite_*.c kselftests: opening vrnic0, a connected
 * RC pair inside one context, polling, patterns, async events, raw uverbs
 * commands on a context's cmd_fd, the driver namespace ioctl, and the
 * process-level accounting the tests compare (VmPin, `rdma res`).
 *
 * Every helper returns a status instead of asserting, so the tests decide
 * what is fatal and forked children can use them too.
 */
#ifndef VRNIC_SUITE_UTIL_H
#define VRNIC_SUITE_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl.h>

#include <vrnic_dev.h>
#include "../../include/uapi/rdma/vrnic-abi.h"

/* The harness compares int literals with unsigned verbs fields. */
#pragma GCC diagnostic ignored "-Wsign-compare"

#define SU_DEV "vrnic0"
#define SU_SYS "/sys/class/infiniband/" SU_DEV
#define SU_TIMEOUT_MS 10000

static inline long su_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void su_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static inline int su_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	char *nl;

	if (!f)
		return -errno;
	if (!fgets(buf, len, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	nl = strchr(buf, '\n');
	if (nl)
		*nl = 0;
	return 0;
}

/* "pd 0 cq 0 qp 0 ..." of vrnic0 from `rdma res show`, as one line. */
static inline int su_res_line(char *buf, size_t len)
{
	FILE *p = popen("rdma res show 2>&1 | grep ' " SU_DEV ": '", "r");
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

/*
 * The vrnic netdev's IPv4 addresses ("a/n b/n "), saved before the driver
 * goes away and put back on the new netdev afterwards: later tests may
 * rely on them.
 */
static inline void su_save_netdev_addrs(char *buf, size_t len)
{
	FILE *p = popen("nd=$(ls " SU_SYS "/device/net | head -n1); "
			"ip -4 -o addr show dev \"$nd\" scope global | "
			"awk '{printf \"%s \", $4}'", "r");
	size_t n;

	buf[0] = 0;
	if (!p)
		return;
	n = fread(buf, 1, len - 1, p);
	buf[n] = 0;
	pclose(p);
}

static inline void su_restore_netdev_addrs(char *buf)
{
	char cmd[1400];

	snprintf(cmd, sizeof(cmd),
		 "nd=$(ls " SU_SYS "/device/net | head -n1); "
		 "ip link set \"$nd\" up; for a in %s; do "
		 "ip addr replace \"$a\" dev \"$nd\"; done", buf);
	if (system(cmd))
		buf[0] = 0;
}

/* Port 1 of vrnic0 is ACTIVE. */
static inline int su_port_active(void)
{
	char buf[64];

	return !su_read_line(SU_SYS "/ports/1/state", buf, sizeof(buf)) &&
	       !strncmp(buf, "4: ACTIVE", 9);
}

/* <project>/kernel/@ko, found from <project>/build/kselftest/<this test>. */
static inline int su_module_path(char *path, size_t len, const char *ko)
{
	char exe[PATH_MAX];
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	snprintf(path, len, "%s/../../kernel/%s", dirname(exe), ko);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Device, GIDs                                                        */
/* ------------------------------------------------------------------ */

/* Runs a formatted shell command; its exit status as system() gives it. */
static inline int su_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int su_sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static inline struct ibv_context *su_open(void)
{
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (i = 0; i < n && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), SU_DEV))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

static const uint8_t su_v4_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					  0xff, 0xff };

/* Index of a RoCE v2 IPv4-mapped GID (waiting up to 5 s), or -1. */
static inline int su_pick_gid(struct ibv_context *ctx, union ibv_gid *gid)
{
	struct ibv_gid_entry e;
	int tries, i;

	for (tries = 0; tries < 50; tries++) {
		for (i = 0; i < 16; i++) {
			if (ibv_query_gid_ex(ctx, 1, i, &e, 0))
				continue;
			if (e.gid_type != IBV_GID_TYPE_ROCE_V2 ||
			    memcmp(e.gid.raw, su_v4_prefix, 12))
				continue;
			*gid = e.gid;
			return i;
		}
		su_sleep_ms(100);
	}
	return -1;
}

/* ------------------------------------------------------------------ */
/* A connected RC pair: qp[0] <-> qp[1] in one context                 */
/* ------------------------------------------------------------------ */

struct su_opts {
	uint32_t send_wr, recv_wr, send_sge, recv_sge, inline_data;
	int cqe;		/* per CQ; 0: 256 */
	int channel;		/* one completion channel for both CQs */
	size_t buf_size;	/* one MR over the buffer; 0: 1 MiB */
	int mr_access;		/* 0: everything */
	int qp_access;		/* 0: remote write|read|atomic */
	int sig_all;
	uint8_t rnr_retry;	/* requester, 0: 7 */
	uint8_t min_rnr_timer;	/* responder, 0: 12 (0.64 ms) */
	int no_rd_atomic;	/* responder max_dest_rd_atomic 0 (else 16) */
	int no_connect;		/* leave both QPs in RESET */
	int qp_ex;		/* ibv_create_qp_ex with every send op */
};

#define SU_MR_ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/*
 * What QPs need around them: a context, a PD, one MR, a GID. su_pair has
 * one; hand-built QPs (su_raw) use one of their own.
 */
struct su_env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
	int gid_index;
};

/*
 * An MR with @access over @len bytes of @fill; 0, or the step that failed
 * (1 to 5).
 */
static inline int su_env_open(struct su_env *e, size_t len, uint8_t fill,
			      unsigned int access)
{
	memset(e, 0, sizeof(*e));
	e->ctx = su_open();
	if (!e->ctx)
		return 1;
	e->gid_index = su_pick_gid(e->ctx, &e->gid);
	if (e->gid_index < 0)
		return 2;
	e->pd = ibv_alloc_pd(e->ctx);
	if (!e->pd)
		return 3;
	e->buf = aligned_alloc(4096, len);
	if (!e->buf)
		return 4;
	memset(e->buf, fill, len);
	e->mr = ibv_reg_mr(e->pd, e->buf, len, access);
	return e->mr ? 0 : 5;
}

static inline void su_env_close(struct su_env *e)
{
	if (e->mr)
		ibv_dereg_mr(e->mr);
	free(e->buf);
	if (e->pd)
		ibv_dealloc_pd(e->pd);
	if (e->ctx)
		ibv_close_device(e->ctx);
}

struct su_pair {
	struct su_opts o;
	struct su_env env;
	size_t size;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2];
	struct ibv_qp_cap cap;
};

static inline struct ibv_qp *su_create_qp(struct su_pair *p, struct ibv_pd *pd,
					  struct ibv_cq *scq,
					  struct ibv_cq *rcq)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = scq,
		.recv_cq = rcq,
		.cap = {
			.max_send_wr = p->o.send_wr,
			.max_recv_wr = p->o.recv_wr,
			.max_send_sge = p->o.send_sge,
			.max_recv_sge = p->o.recv_sge,
			.max_inline_data = p->o.inline_data,
		},
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = p->o.sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_qp *qp;

	if (p->o.qp_ex) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE |
			IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
			IBV_QP_EX_WITH_RDMA_READ |
			IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
		qp = ibv_create_qp_ex(p->env.ctx, &a);
	} else {
		qp = ibv_create_qp(pd, (struct ibv_qp_init_attr *)&a);
	}
	if (qp)
		p->cap = a.cap;
	return qp;
}

static inline int su_to_init(struct su_pair *p, struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = p->o.qp_access,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static inline int su_to_rtr(struct su_pair *p, struct ibv_qp *qp,
			    uint32_t dest)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = dest,
		.rq_psn = 0,
		.max_dest_rd_atomic = p->o.no_rd_atomic ? 0 : 16,
		.min_rnr_timer = p->o.min_rnr_timer,
		.ah_attr = {
			.is_global = 1,
			.grh = {
				.dgid = p->env.gid,
				.sgid_index = p->env.gid_index,
				.hop_limit = 64,
			},
			.port_num = 1,
		},
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			     IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER);
}

static inline int su_to_rts(struct su_pair *p, struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = p->o.rnr_retry,
		.sq_psn = 0,
		.max_rd_atomic = 16,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* Connect @a and @b (both in RESET) to each other. */
static inline int su_connect(struct su_pair *p, struct ibv_qp *a,
			     struct ibv_qp *b)
{
	return su_to_init(p, a) ?: su_to_init(p, b) ?:
	       su_to_rtr(p, a, b->qp_num) ?: su_to_rtr(p, b, a->qp_num) ?:
	       su_to_rts(p, a) ?: su_to_rts(p, b);
}

/* Returns 0, or the negative number of the step that failed. */
static inline int su_pair_open(struct su_pair *p, const struct su_opts *o)
{
	int i, err;

	memset(p, 0, sizeof(*p));
	if (o)
		p->o = *o;
	if (!p->o.send_wr)
		p->o.send_wr = 64;
	if (!p->o.recv_wr)
		p->o.recv_wr = 64;
	if (!p->o.send_sge)
		p->o.send_sge = 4;
	if (!p->o.recv_sge)
		p->o.recv_sge = 4;
	if (!p->o.cqe)
		p->o.cqe = 256;
	if (!p->o.buf_size)
		p->o.buf_size = 1 << 20;
	if (!p->o.mr_access)
		p->o.mr_access = SU_MR_ALL;
	if (!p->o.qp_access)
		p->o.qp_access = IBV_ACCESS_REMOTE_WRITE |
				 IBV_ACCESS_REMOTE_READ |
				 IBV_ACCESS_REMOTE_ATOMIC;
	if (!p->o.rnr_retry)
		p->o.rnr_retry = 7;
	if (!p->o.min_rnr_timer)
		p->o.min_rnr_timer = 12;

	p->size = p->o.buf_size;
	err = su_env_open(&p->env, p->size, 0, p->o.mr_access);
	if (err)
		return -err;
	if (p->o.channel) {
		p->ch = ibv_create_comp_channel(p->env.ctx);
		if (!p->ch)
			return -6;
	}
	for (i = 0; i < 2; i++) {
		p->cq[i] = ibv_create_cq(p->env.ctx, p->o.cqe, NULL, p->ch, 0);
		if (!p->cq[i])
			return -7;
	}
	for (i = 0; i < 2; i++) {
		p->qp[i] = su_create_qp(p, p->env.pd, p->cq[i], p->cq[i]);
		if (!p->qp[i])
			return -8;
	}
	if (!p->o.no_connect && su_connect(p, p->qp[0], p->qp[1]))
		return -9;
	return 0;
}

static inline void su_pair_close(struct su_pair *p)
{
	int i;

	for (i = 0; i < 2; i++)
		if (p->qp[i])
			ibv_destroy_qp(p->qp[i]);
	for (i = 0; i < 2; i++)
		if (p->cq[i])
			ibv_destroy_cq(p->cq[i]);
	if (p->ch)
		ibv_destroy_comp_channel(p->ch);
	su_env_close(&p->env);
	memset(p, 0, sizeof(*p));
}

static inline struct ibv_sge su_sge(struct su_pair *p, size_t off,
				    uint32_t len)
{
	struct ibv_sge s = {
		.addr = (uintptr_t)p->env.buf + off,
		.length = len,
		.lkey = p->env.mr->lkey,
	};
	return s;
}

static inline uint64_t su_addr(struct su_pair *p, size_t off)
{
	return (uintptr_t)p->env.buf + off;
}

static inline int su_post_send(struct ibv_qp *qp, enum ibv_wr_opcode op,
			       uint64_t wr_id, struct ibv_sge *s, int n,
			       unsigned int flags, uint64_t raddr,
			       uint32_t rkey)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = s, .num_sge = n, .opcode = op,
		.send_flags = flags,
	};
	struct ibv_send_wr *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

static inline int su_post_recv(struct ibv_qp *qp, uint64_t wr_id,
			       struct ibv_sge *s, int n)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = s, .num_sge = n };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

/* Poll one completion; 0 after @ms milliseconds without one. */
static inline int su_poll(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	long end = su_now_ms() + ms;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n;
	} while (su_now_ms() < end);
	return 0;
}

/* A byte pattern that differs per (seed, offset). */
static inline uint8_t su_pat(unsigned int seed, size_t i)
{
	uint32_t x = seed * 2654435761u + (uint32_t)i * 40503u;

	return (uint8_t)(x ^ (x >> 11) ^ (x >> 19));
}

static inline void su_fill(void *b, size_t len, unsigned int seed)
{
	uint8_t *p = b;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = su_pat(seed, i);
}

/* Offset of the first byte that does not match, or -1. */
static inline long su_check(const void *b, size_t len, unsigned int seed)
{
	const uint8_t *p = b;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != su_pat(seed, i))
			return (long)i;
	return -1;
}

/* Offset of the first byte that is not @v, or -1. */
static inline long su_check_byte(const void *b, size_t len, uint8_t v)
{
	const uint8_t *p = b;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			return (long)i;
	return -1;
}

/*
 * Wait for the async event @type (for @elem, a QP or CQ pointer, or any
 * element if NULL). Other events are acknowledged and skipped. Returns 1
 * if it came, 0 if not.
 */
static inline int su_wait_async(struct ibv_context *ctx,
				enum ibv_event_type type, void *elem, int ms)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	long end = su_now_ms() + ms;
	int got = 0;

	fcntl(ctx->async_fd, F_SETFL,
	      fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
	while (!got && su_now_ms() < end) {
		if (poll(&pfd, 1, 50) <= 0)
			continue;
		while (!ibv_get_async_event(ctx, &ev)) {
			if (ev.event_type == type &&
			    (!elem || ev.element.qp == elem ||
			     (void *)ev.element.cq == elem))
				got = 1;
			ibv_ack_async_event(&ev);
		}
	}
	return got;
}

static inline int su_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
		return -1;
	return a.qp_state;
}

/* ------------------------------------------------------------------ */
/* Raw uverbs: legacy write() commands and ioctls on a cmd_fd          */
/* ------------------------------------------------------------------ */

/* A write() command whose struct starts with ib_uverbs_cmd_hdr. */
static inline int su_uverbs_write(int fd, uint32_t command, void *cmd,
				  size_t cmd_len, size_t out_len)
{
	struct ib_uverbs_cmd_hdr *hdr = cmd;

	hdr->command = command;
	hdr->in_words = cmd_len / 4;
	hdr->out_words = out_len / 4;
	if (write(fd, cmd, cmd_len) != (ssize_t)cmd_len)
		return -errno;
	return 0;
}

/* N of /dev/infiniband/uverbsN for vrnic0, or -1. */
static inline int su_uverbs_index(void)
{
	char path[300], name[64];
	struct dirent *e;
	int idx = -1;
	DIR *d;

	d = opendir("/sys/class/infiniband_verbs");
	if (!d)
		return -1;
	while ((e = readdir(d)) && idx < 0) {
		if (strncmp(e->d_name, "uverbs", 6))
			continue;
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband_verbs/%s/ibdev", e->d_name);
		if (!su_read_line(path, name, sizeof(name)) &&
		    !strcmp(name, SU_DEV))
			idx = atoi(e->d_name + 6);
	}
	closedir(d);
	return idx;
}

/* vrnic0's uverbs character device, opened without libibverbs; or -1. */
static inline int su_open_uverbs(void)
{
	char path[64];
	int idx = su_uverbs_index();

	if (idx < 0)
		return -1;
	snprintf(path, sizeof(path), "/dev/infiniband/uverbs%d", idx);
	return open(path, O_RDWR | O_CLOEXEC);
}

/*
 * GET_CONTEXT on a fresh uverbs fd, with @drv_in_len bytes of driver
 * input. With @core the caller gets the response and owns its async_fd;
 * without, the async fd is closed. 0 or -errno.
 */
static inline int su_get_context(int fd, const void *drv_in,
				 size_t drv_in_len,
				 struct ib_uverbs_get_context_resp *core,
				 struct vrnic_ibv_alloc_ucontext_resp *drv)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_get_context cmd;
		uint64_t drv[2];
	} c = {};
	struct {
		struct ib_uverbs_get_context_resp core;
		struct vrnic_ibv_alloc_ucontext_resp drv;
	} r = {};
	int err;

	if (drv_in_len > sizeof(c.drv))
		return -E2BIG;
	c.cmd.response = (uintptr_t)&r;
	if (drv_in_len)
		memcpy(c.drv, drv_in, drv_in_len);
	err = su_uverbs_write(fd, IB_USER_VERBS_CMD_GET_CONTEXT, &c,
			      sizeof(c.hdr) + sizeof(c.cmd) + drv_in_len,
			      sizeof(r));
	if (err)
		return err;
	if (core)
		*core = r.core;
	else
		close(r.core.async_fd);
	if (drv)
		*drv = r.drv;
	return 0;
}

struct su_ioctl {
	struct ib_uverbs_ioctl_hdr hdr;
	struct ib_uverbs_attr attrs[4];
};

static inline void su_ioctl_init(struct su_ioctl *io, uint16_t object,
				 uint16_t method, uint16_t num_attrs)
{
	memset(io, 0, sizeof(*io));
	io->hdr.length = sizeof(io->hdr) + num_attrs * sizeof(io->attrs[0]);
	io->hdr.object_id = object;
	io->hdr.method_id = method;
	io->hdr.num_attrs = num_attrs;
	io->hdr.driver_id = VRNIC_RDMA_DRIVER_ID;
}

static inline void su_ioctl_ptr(struct su_ioctl *io, int i, uint16_t id,
				void *ptr, uint16_t len)
{
	io->attrs[i].attr_id = id;
	io->attrs[i].len = len;
	io->attrs[i].data = (uint64_t)(uintptr_t)ptr;
}

/* An IDR (object handle) attribute. */
static inline void su_ioctl_idr(struct su_ioctl *io, int i, uint16_t id,
				uint64_t handle)
{
	io->attrs[i].attr_id = id;
	io->attrs[i].len = 0;
	io->attrs[i].data = handle;
}

static inline int su_ioctl_call(int fd, struct su_ioctl *io)
{
	return ioctl(fd, RDMA_VERBS_IOCTL, &io->hdr) ? -errno : 0;
}

static inline int su_query_layout(int fd, struct vrnic_layout *l)
{
	struct su_ioctl io;

	su_ioctl_init(&io, VRNIC_OBJECT_DEVICE, VRNIC_METHOD_QUERY_LAYOUT, 1);
	su_ioctl_ptr(&io, 0, VRNIC_ATTR_QUERY_LAYOUT_RESP, l, sizeof(*l));
	return su_ioctl_call(fd, &io);
}

static inline int su_kick(int fd)
{
	struct su_ioctl io;

	su_ioctl_init(&io, VRNIC_OBJECT_DEVICE, VRNIC_METHOD_KICK, 0);
	return su_ioctl_call(fd, &io);
}

/* ------------------------------------------------------------------ */
/* A hand-built user QP: raw uverbs commands, our own ring accesses    */
/* ------------------------------------------------------------------ */

/*
 * A CQ and an RC QP created with raw write() commands on a libibverbs
 * context's cmd_fd (PD and MR come from libibverbs), their rings and the
 * context's doorbell page mapped by this code, WQEs written per the device
 * interface (section 13) without the provider. Posting can skip the
 * wake-up kick, and the rings and doorbell words are at the caller's
 * mercy. The objects' user_handle is the struct su_raw: libibverbs does
 * not know them, so async events for them must be read with
 * su_raw_async(), never with ibv_get_async_event().
 */
struct su_raw {
	int fd;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	/* CQ */
	uint32_t cq_handle, cqn, cq_slot, cq_log;
	uint8_t *cq_ring;
	size_t cq_ring_size;
	uint32_t cq_ci;
	/* QP */
	uint32_t qp_handle, qpn, qp_slot;
	uint8_t *sq, *rq;
	size_t sq_size, rq_size;
	uint8_t sq_log, sq_shift, rq_log, rq_shift;
	uint32_t sq_pi, rq_pi;
	/* doorbell page */
	volatile uint32_t *db;
	struct vrnic_layout layout;
};

static inline volatile uint32_t *su_raw_word(struct su_raw *r, uint32_t slot,
					     uint32_t byte)
{
	return r->db + (slot * VRNIC_DB_SLOT_SIZE + byte) / 4;
}

static inline int su_raw_need_wakeup(struct su_raw *r)
{
	return __atomic_load_n(r->db, __ATOMIC_ACQUIRE) &
	       VRNIC_DB_STATUS_NEED_WAKEUP;
}

/* Returns 0 or -errno; @cqe entries, @wr work requests per queue. */
static inline int su_raw_create(struct su_raw *r, struct ibv_context *ctx,
				struct ibv_pd *pd, uint32_t cqe, uint32_t wr,
				uint32_t sge)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_create_cq cmd;
		struct vrnic_ibv_create_cq drv;
	} cc = {};
	struct {
		struct ib_uverbs_create_cq_resp core;
		struct vrnic_ibv_create_cq_resp drv;
	} ccr = {};
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_create_qp cmd;
		struct vrnic_ibv_create_qp drv;
	} qc = {};
	struct {
		struct ib_uverbs_create_qp_resp core;
		struct vrnic_ibv_create_qp_resp drv;
	} qcr = {};
	void *m;
	int err;

	memset(r, 0, sizeof(*r));
	r->ctx = ctx;
	r->pd = pd;
	r->fd = ctx->cmd_fd;
	r->cq_handle = r->qp_handle = ~0u;

	err = su_query_layout(r->fd, &r->layout);
	if (err)
		return err;
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd,
		 r->layout.db_mmap_key);
	if (m == MAP_FAILED)
		return -errno;
	r->db = m;

	cc.cmd.response = (uintptr_t)&ccr;
	cc.cmd.user_handle = (uintptr_t)r;
	cc.cmd.cqe = cqe;
	cc.cmd.comp_channel = -1;
	err = su_uverbs_write(r->fd, IB_USER_VERBS_CMD_CREATE_CQ, &cc,
			      sizeof(cc), sizeof(ccr));
	if (err)
		return err;
	r->cq_handle = ccr.core.cq_handle;
	r->cqn = ccr.drv.cqn;
	r->cq_slot = ccr.drv.db_slot;
	r->cq_log = ccr.drv.log_depth;
	r->cq_ring_size = ccr.drv.ring_size;
	m = mmap(NULL, r->cq_ring_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 r->fd, ccr.drv.ring_mmap_key);
	if (m == MAP_FAILED)
		return -errno;
	r->cq_ring = m;

	qc.cmd.response = (uintptr_t)&qcr;
	qc.cmd.user_handle = (uintptr_t)r;
	qc.cmd.pd_handle = pd->handle;
	qc.cmd.send_cq_handle = r->cq_handle;
	qc.cmd.recv_cq_handle = r->cq_handle;
	qc.cmd.max_send_wr = wr;
	qc.cmd.max_recv_wr = wr;
	qc.cmd.max_send_sge = sge;
	qc.cmd.max_recv_sge = sge;
	qc.cmd.qp_type = IB_UVERBS_QPT_RC;
	err = su_uverbs_write(r->fd, IB_USER_VERBS_CMD_CREATE_QP, &qc,
			      sizeof(qc), sizeof(qcr));
	if (err)
		return err;
	r->qp_handle = qcr.core.qp_handle;
	r->qpn = qcr.drv.qpn;
	r->qp_slot = qcr.drv.db_slot;
	r->sq_log = qcr.drv.sq_log_depth;
	r->sq_shift = qcr.drv.sq_wqe_shift;
	r->rq_log = qcr.drv.rq_log_depth;
	r->rq_shift = qcr.drv.rq_wqe_shift;
	r->sq_size = qcr.drv.sq_ring_size;
	r->rq_size = qcr.drv.rq_ring_size;
	m = mmap(NULL, r->sq_size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd,
		 qcr.drv.sq_mmap_key);
	if (m == MAP_FAILED)
		return -errno;
	r->sq = m;
	m = mmap(NULL, r->rq_size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd,
		 qcr.drv.rq_mmap_key);
	if (m == MAP_FAILED)
		return -errno;
	r->rq = m;
	return 0;
}

static inline void su_raw_destroy(struct su_raw *r)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_destroy_qp cmd;
	} dq = {};
	struct ib_uverbs_destroy_qp_resp dqr;
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_destroy_cq cmd;
	} dc = {};
	struct ib_uverbs_destroy_cq_resp dcr;

	if (r->qp_handle != ~0u) {
		dq.cmd.response = (uintptr_t)&dqr;
		dq.cmd.qp_handle = r->qp_handle;
		su_uverbs_write(r->fd, IB_USER_VERBS_CMD_DESTROY_QP, &dq,
				sizeof(dq), sizeof(dqr));
	}
	if (r->cq_handle != ~0u) {
		dc.cmd.response = (uintptr_t)&dcr;
		dc.cmd.cq_handle = r->cq_handle;
		su_uverbs_write(r->fd, IB_USER_VERBS_CMD_DESTROY_CQ, &dc,
				sizeof(dc), sizeof(dcr));
	}
	if (r->sq)
		munmap(r->sq, r->sq_size);
	if (r->rq)
		munmap(r->rq, r->rq_size);
	if (r->cq_ring)
		munmap(r->cq_ring, r->cq_ring_size);
	if (r->db)
		munmap((void *)r->db, 4096);
	memset(r, 0, sizeof(*r));
}


/* MODIFY_QP through the legacy write() command. */
static inline int su_raw_modify(struct su_raw *r, int state, uint32_t dest_qpn,
				const union ibv_gid *gid, int gid_index,
				uint8_t rnr_retry, uint8_t min_rnr_timer)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_modify_qp cmd;
	} c = {};

	c.cmd.qp_handle = r->qp_handle;
	c.cmd.qp_state = state;
	switch (state) {
	case IBV_QPS_INIT:
		c.cmd.attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
		c.cmd.port_num = 1;
		c.cmd.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
					IBV_ACCESS_REMOTE_READ |
					IBV_ACCESS_REMOTE_ATOMIC;
		break;
	case IBV_QPS_RTR:
		c.cmd.attr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER;
		memcpy(c.cmd.dest.dgid, gid->raw, 16);
		c.cmd.dest.sgid_index = gid_index;
		c.cmd.dest.hop_limit = 64;
		c.cmd.dest.is_global = 1;
		c.cmd.dest.port_num = 1;
		c.cmd.path_mtu = IBV_MTU_1024;
		c.cmd.dest_qp_num = dest_qpn;
		c.cmd.max_dest_rd_atomic = 16;
		c.cmd.min_rnr_timer = min_rnr_timer;
		break;
	case IBV_QPS_RTS:
		c.cmd.attr_mask = IBV_QP_STATE | IBV_QP_TIMEOUT |
				  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
		c.cmd.timeout = 14;
		c.cmd.retry_cnt = 7;
		c.cmd.rnr_retry = rnr_retry;
		c.cmd.max_rd_atomic = 16;
		break;
	default:
		c.cmd.attr_mask = IBV_QP_STATE;
		break;
	}
	return su_uverbs_write(r->fd, IB_USER_VERBS_CMD_MODIFY_QP, &c,
			       sizeof(c), 0);
}

/* INIT, RTR (towards @dest_qpn), RTS. */
static inline int su_raw_connect(struct su_raw *r, uint32_t dest_qpn,
				 const union ibv_gid *gid, int gid_index)
{
	return su_raw_modify(r, IBV_QPS_INIT, 0, NULL, 0, 0, 0) ?:
	       su_raw_modify(r, IBV_QPS_RTR, dest_qpn, gid, gid_index, 0, 12) ?:
	       su_raw_modify(r, IBV_QPS_RTS, 0, NULL, 0, 7, 0);
}

enum su_kick { SU_KICK_NEVER, SU_KICK_IF_NEEDED, SU_KICK_ALWAYS };

/* The next SQ slot, zeroed. */
static inline struct vrnic_send_wqe_hdr *su_raw_sq_slot(struct su_raw *r)
{
	uint8_t *w = r->sq + ((size_t)(r->sq_pi & ((1u << r->sq_log) - 1))
			      << r->sq_shift);

	memset(w, 0, 1u << r->sq_shift);
	return (struct vrnic_send_wqe_hdr *)w;
}

/* Publish @n more SQ WQEs (already written), then kick per @kick. */
static inline int su_raw_sq_ring(struct su_raw *r, uint32_t n,
				 enum su_kick kick)
{
	r->sq_pi += n;
	__atomic_store_n(su_raw_word(r, r->qp_slot, VRNIC_DB_QP_SQ_PI),
			 r->sq_pi, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (kick == SU_KICK_ALWAYS ||
	    (kick == SU_KICK_IF_NEEDED && su_raw_need_wakeup(r)))
		return su_kick(r->fd);
	return 0;
}

/* One-SGE send-queue WQE: SEND or RDMA WRITE/READ. */
static inline int su_raw_post(struct su_raw *r, uint8_t opcode, uint64_t wr_id,
			      uint64_t addr, uint32_t len, uint32_t lkey,
			      uint64_t raddr, uint32_t rkey, enum su_kick kick)
{
	struct vrnic_send_wqe_hdr *w = su_raw_sq_slot(r);
	struct vrnic_sge *sge = (struct vrnic_sge *)((uint8_t *)w +
						     VRNIC_SEND_WQE_HDR_SIZE);

	w->wr_id = wr_id;
	w->opcode = opcode;
	w->flags = VRNIC_WQE_F_SIGNALED;
	w->num_sge = 1;
	w->rdma.remote_addr = raddr;
	w->rdma.rkey = rkey;
	sge->addr = addr;
	sge->length = len;
	sge->lkey = lkey;
	return su_raw_sq_ring(r, 1, kick);
}

static inline int su_raw_post_recv(struct su_raw *r, uint64_t wr_id,
				   uint64_t addr, uint32_t len, uint32_t lkey,
				   enum su_kick kick)
{
	uint8_t *w = r->rq + ((size_t)(r->rq_pi & ((1u << r->rq_log) - 1))
			      << r->rq_shift);
	struct vrnic_recv_wqe_hdr *h = (struct vrnic_recv_wqe_hdr *)w;
	struct vrnic_sge *sge = (struct vrnic_sge *)(w + VRNIC_RECV_WQE_HDR_SIZE);

	memset(w, 0, 1u << r->rq_shift);
	h->wr_id = wr_id;
	h->num_sge = 1;
	sge->addr = addr;
	sge->length = len;
	sge->lkey = lkey;
	r->rq_pi++;
	__atomic_store_n(su_raw_word(r, r->qp_slot, VRNIC_DB_QP_RQ_PI),
			 r->rq_pi, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (kick == SU_KICK_ALWAYS ||
	    (kick == SU_KICK_IF_NEEDED && su_raw_need_wakeup(r)))
		return su_kick(r->fd);
	return 0;
}

/* Take the next CQE if there is one (1), publishing ci; else 0. */
static inline int su_raw_poll(struct su_raw *r, struct vrnic_cqe *out)
{
	struct vrnic_cqe *c = (struct vrnic_cqe *)(r->cq_ring +
		(size_t)(r->cq_ci & ((1u << r->cq_log) - 1)) * VRNIC_CQE_SIZE);
	uint8_t owner = __atomic_load_n(&c->owner, __ATOMIC_ACQUIRE);

	if ((owner & VRNIC_OWNER_PHASE) != VRNIC_PHASE(r->cq_ci, r->cq_log))
		return 0;
	*out = *c;
	r->cq_ci++;
	__atomic_store_n(su_raw_word(r, r->cq_slot, VRNIC_DB_CQ_CI), r->cq_ci,
			 __ATOMIC_RELEASE);
	return 1;
}

static inline int su_raw_poll_wait(struct su_raw *r, struct vrnic_cqe *out,
				   int ms)
{
	long end = su_now_ms() + ms;

	do {
		if (su_raw_poll(r, out))
			return 1;
	} while (su_now_ms() < end);
	return 0;
}

/* The QP state the kernel reports (QUERY_QP), or -errno. */
static inline int su_raw_state(struct su_raw *r)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_query_qp cmd;
	} c = {};
	struct ib_uverbs_query_qp_resp resp = {};
	int err;

	c.cmd.response = (uintptr_t)&resp;
	c.cmd.qp_handle = r->qp_handle;
	c.cmd.attr_mask = IBV_QP_STATE;
	err = su_uverbs_write(r->fd, IB_USER_VERBS_CMD_QUERY_QP, &c,
			      sizeof(c), sizeof(resp));
	return err ? err : resp.qp_state;
}

/*
 * Read async events straight from the context's async fd for up to @ms;
 * return 1 once one of @type for the raw object @r arrives.
 */
static inline int su_raw_async(struct ibv_context *ctx, struct su_raw *r,
			       uint32_t type, int ms)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ib_uverbs_async_event_desc d;
	long end = su_now_ms() + ms;

	fcntl(ctx->async_fd, F_SETFL,
	      fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
	while (su_now_ms() < end) {
		if (poll(&pfd, 1, 50) <= 0)
			continue;
		while (read(ctx->async_fd, &d, sizeof(d)) == sizeof(d))
			if (d.event_type == type &&
			    d.element == (uintptr_t)r)
				return 1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Accounting: VmPin, `rdma res`, MemAvailable                         */
/* ------------------------------------------------------------------ */

/* A "Key:   N kB" line of /proc/<pid>/status (pid 0: self), or -1. */
static inline long su_status_kb(pid_t pid, const char *key)
{
	char path[64], line[256];
	size_t kl = strlen(key);
	long v = -1;
	FILE *f;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':') {
			v = strtol(line + kl + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

static inline long su_vmpin_kb(pid_t pid)
{
	return su_status_kb(pid, "VmPin");
}

static inline long su_meminfo_kb(const char *key)
{
	char line[256];
	size_t kl = strlen(key);
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':') {
			v = strtol(line + kl + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

struct su_res {
	long pd, cq, qp, mr, ctx;
};

/* Object counts of vrnic0 from `rdma res show`. 0 or -1. */
static inline int su_res_get(struct su_res *r)
{
	char line[512], key[32];
	int found = 0, off, n;
	long val;
	char *s;
	FILE *f;

	memset(r, 0xff, sizeof(*r));
	f = popen("rdma res show 2>/dev/null", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		s = strstr(line, " " SU_DEV ": ");
		if (!s)
			continue;
		s += strlen(" " SU_DEV ": ");
		while (sscanf(s, "%31s %ld%n", key, &val, &off) == 2) {
			if (!strcmp(key, "pd"))
				r->pd = val;
			else if (!strcmp(key, "cq"))
				r->cq = val;
			else if (!strcmp(key, "qp"))
				r->qp = val;
			else if (!strcmp(key, "mr"))
				r->mr = val;
			else if (!strcmp(key, "ctx"))
				r->ctx = val;
			s += off;
		}
		found = 1;
	}
	n = pclose(f);
	return found && n == 0 ? 0 : -1;
}

static inline int su_res_equal(const struct su_res *a, const struct su_res *b)
{
	return a->pd == b->pd && a->cq == b->cq && a->qp == b->qp &&
	       a->mr == b->mr && a->ctx == b->ctx;
}

/* Wait up to @ms for the counts to equal @want; 0 if they did. */
static inline int su_res_wait(const struct su_res *want, struct su_res *now,
			      int ms)
{
	long end = su_now_ms() + ms;

	do {
		if (!su_res_get(now) && su_res_equal(want, now))
			return 0;
		su_sleep_ms(50);
	} while (su_now_ms() < end);
	return -1;
}

/* ------------------------------------------------------------------ */
/* Forked children                                                     */
/* ------------------------------------------------------------------ */

/* In a forked child: report a failed check on stderr and exit 1. */
#define CHILD_CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "# child %d: %s:%d: check failed: %s (errno %d)\n", \
			(int)getpid(), __FILE__, __LINE__, #cond, errno); \
		_exit(1); \
	} \
} while (0)

/*
 * Fork a child that runs @fn(rfd, wfd) on its ends of two pipes and must
 * not return; the parent writes to it on *@to and reads from it on *@from.
 * The child's pid, or -1.
 */
static inline pid_t su_spawn(void (*fn)(int rfd, int wfd), int *to, int *from)
{
	int a[2], b[2];
	pid_t pid;

	if (pipe(a))
		return -1;
	if (pipe(b)) {
		close(a[0]);
		close(a[1]);
		return -1;
	}
	pid = fork();
	if (!pid) {
		close(a[1]);
		close(b[0]);
		fn(a[0], b[1]);
		_exit(1);
	}
	close(a[0]);
	close(b[1]);
	if (pid < 0) {
		close(a[1]);
		close(b[0]);
		return -1;
	}
	*to = a[1];
	*from = b[0];
	return pid;
}

/* waitpid with a timeout: the child's wait status, or -1 (then killed). */
static inline int su_wait_child(pid_t pid, int ms)
{
	long end = su_now_ms() + ms;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return st;
		if (r < 0)
			return -1;
		if (su_now_ms() >= end) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		su_sleep_ms(10);
	}
}

/* ------------------------------------------------------------------ */
/* A concurrent well-behaved process                                   */
/* ------------------------------------------------------------------ */

/*
 * A forked process with its own context and connected pair that moves
 * verified bytes (SEND, RDMA WRITE, RDMA READ) round after round while a
 * test attacks the device from elsewhere. It publishes what an attacker
 * would aim at (its keys, QP numbers and a sentinel range nobody may
 * write), counts its rounds in memory shared with the test, and when told
 * to stop checks that its sentinel is intact, its QPs are still in RTS and
 * its doorbell page does not say FATAL, then runs one last round.
 */
#define SU_V_SENTINEL (768 << 10)	/* 256 KiB of its 1 MiB buffer */
#define SU_V_SENTINEL_LEN (256 << 10)
#define SU_V_SEED 0xbad

struct su_target {
	uint64_t buf;		/* its buffer, a VA in its process */
	uint64_t sentinel;	/* buf + SU_V_SENTINEL */
	uint32_t lkey, rkey;
	uint32_t qpn[2];
	uint32_t pd_handle, mr_handle;
};

struct su_verifier_state {
	struct su_target t;
	volatile int ready;	/* 1: target valid; -1: setup failed */
	volatile int stop;
	volatile int rounds;
	volatile int failed;	/* the failing step of a round, or 0 */
	/* The verdict, valid once the process has exited. */
	long sentinel_bad;	/* first bad offset, or -1 */
	int qp_state[2];
	uint32_t db_status;
	int stray;		/* completions nobody asked for */
	int last_round;		/* the round after stop: 0 or its failure */
};

struct su_verifier {
	pid_t pid;
	struct su_verifier_state *s;
};

/* SEND 8 KiB, RDMA WRITE 64 KiB, RDMA READ 16 KiB; 0 if every byte came. */
static inline int su_verifier_round(struct su_pair *p, unsigned int round)
{
	unsigned int seed = 1000 + round * 3;
	struct ibv_sge s, r;
	struct ibv_wc wc;

	su_fill(p->env.buf, 8192, seed);
	memset(p->env.buf + 65536, 0, 8192);
	s = su_sge(p, 0, 8192);
	r = su_sge(p, 65536, 8192);
	if (su_post_recv(p->qp[1], seed, &r, 1) ||
	    su_post_send(p->qp[0], IBV_WR_SEND, seed, &s, 1,
			 IBV_SEND_SIGNALED, 0, 0))
		return 1;
	if (su_poll(p->cq[1], &wc, SU_TIMEOUT_MS) != 1 ||
	    wc.status != IBV_WC_SUCCESS || wc.wr_id != seed ||
	    wc.byte_len != 8192 || su_check(p->env.buf + 65536, 8192, seed) != -1)
		return 2;
	if (su_poll(p->cq[0], &wc, SU_TIMEOUT_MS) != 1 ||
	    wc.status != IBV_WC_SUCCESS || wc.wr_id != seed)
		return 3;

	su_fill(p->env.buf + 131072, 65536, seed + 1);
	s = su_sge(p, 131072, 65536);
	if (su_post_send(p->qp[0], IBV_WR_RDMA_WRITE, seed + 1, &s, 1,
			 IBV_SEND_SIGNALED, su_addr(p, 262144), p->env.mr->rkey))
		return 4;
	if (su_poll(p->cq[0], &wc, SU_TIMEOUT_MS) != 1 ||
	    wc.status != IBV_WC_SUCCESS || wc.wr_id != seed + 1 ||
	    su_check(p->env.buf + 262144, 65536, seed + 1) != -1)
		return 5;

	su_fill(p->env.buf + 524288, 16384, seed + 2);
	memset(p->env.buf + 589824, 0, 16384);
	s = su_sge(p, 589824, 16384);
	if (su_post_send(p->qp[1], IBV_WR_RDMA_READ, seed + 2, &s, 1,
			 IBV_SEND_SIGNALED, su_addr(p, 524288), p->env.mr->rkey))
		return 6;
	if (su_poll(p->cq[1], &wc, SU_TIMEOUT_MS) != 1 ||
	    wc.status != IBV_WC_SUCCESS || wc.wr_id != seed + 2 ||
	    su_check(p->env.buf + 589824, 16384, seed + 2) != -1)
		return 7;
	return 0;
}

/* The device status word of @ctx's doorbell page, or ~0 if unreadable. */
static inline uint32_t su_db_status(struct ibv_context *ctx)
{
	struct vrnic_layout l;
	volatile uint32_t *db;
	uint32_t st;

	if (su_query_layout(ctx->cmd_fd, &l))
		return ~0u;
	db = mmap(NULL, 4096, PROT_READ, MAP_SHARED, ctx->cmd_fd,
		  l.db_mmap_key);
	if (db == MAP_FAILED)
		return ~0u;
	st = db[0];
	munmap((void *)db, 4096);
	return st;
}

static inline void su_verifier_main(struct su_verifier_state *s,
				    pid_t parent)
{
	unsigned int round = 0;
	struct su_pair p;
	struct ibv_wc wc;
	int err;

	err = su_pair_open(&p, NULL);
	if (!err) {
		su_fill(p.env.buf + SU_V_SENTINEL, SU_V_SENTINEL_LEN, SU_V_SEED);
		err = su_verifier_round(&p, round++);
	}
	if (err) {
		fprintf(stderr, "# verifier: setup failed at %d\n", err);
		s->ready = -1;
		_exit(2);
	}
	s->t.buf = su_addr(&p, 0);
	s->t.sentinel = su_addr(&p, SU_V_SENTINEL);
	s->t.lkey = p.env.mr->lkey;
	s->t.rkey = p.env.mr->rkey;
	s->t.qpn[0] = p.qp[0]->qp_num;
	s->t.qpn[1] = p.qp[1]->qp_num;
	s->t.pd_handle = p.env.pd->handle;
	s->t.mr_handle = p.env.mr->handle;
	__atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE) && !s->failed) {
		/* An orphan stops: the test that started it is gone. */
		if (getppid() != parent)
			_exit(3);
		err = su_verifier_round(&p, round++);
		if (err)
			s->failed = err;
		else
			__atomic_add_fetch(&s->rounds, 1, __ATOMIC_RELEASE);
	}
	s->sentinel_bad = su_check(p.env.buf + SU_V_SENTINEL, SU_V_SENTINEL_LEN,
				   SU_V_SEED);
	s->qp_state[0] = su_qp_state(p.qp[0]);
	s->qp_state[1] = su_qp_state(p.qp[1]);
	s->db_status = su_db_status(p.env.ctx);
	s->stray = ibv_poll_cq(p.cq[0], 1, &wc) + ibv_poll_cq(p.cq[1], 1, &wc);
	s->last_round = s->failed ? -1 : su_verifier_round(&p, round++);
	su_pair_close(&p);
	_exit(s->failed || s->last_round || s->sentinel_bad != -1 || s->stray ||
	      s->qp_state[0] != IBV_QPS_RTS || s->qp_state[1] != IBV_QPS_RTS ||
	      (s->db_status & VRNIC_DB_STATUS_FATAL));
}

/* Start one and wait for its target; 0, or -1 (nothing left running). */
static inline int su_verifier_start(struct su_verifier *v)
{
	pid_t parent = getpid();
	long end;

	v->s = mmap(NULL, sizeof(*v->s), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (v->s == MAP_FAILED)
		return -1;
	memset(v->s, 0, sizeof(*v->s));
	v->pid = fork();
	if (v->pid < 0) {
		munmap(v->s, sizeof(*v->s));
		return -1;
	}
	if (!v->pid)
		su_verifier_main(v->s, parent);
	end = su_now_ms() + 3 * SU_TIMEOUT_MS;
	while (!__atomic_load_n(&v->s->ready, __ATOMIC_ACQUIRE) &&
	       su_now_ms() < end)
		su_sleep_ms(10);
	if (v->s->ready != 1) {
		su_wait_child(v->pid, 0);
		munmap(v->s, sizeof(*v->s));
		return -1;
	}
	return 0;
}

static inline int su_verifier_rounds(struct su_verifier *v)
{
	return __atomic_load_n(&v->s->rounds, __ATOMIC_ACQUIRE);
}

/*
 * Wait until it completes @n more verified rounds (0), or fails or takes
 * longer than @ms (-1): it is still making progress, not just alive.
 */
static inline int su_verifier_progress(struct su_verifier *v, int n, int ms)
{
	int want = su_verifier_rounds(v) + n;
	long end = su_now_ms() + ms;

	while (su_now_ms() < end) {
		if (v->s->failed)
			return -1;
		if (su_verifier_rounds(v) >= want)
			return 0;
		su_sleep_ms(5);
	}
	return -1;
}

/*
 * Stop it (after @min_more further rounds) and collect its verdict into
 * *@out; 0 if it was unharmed, else -1. Logs what went wrong on stderr.
 */
static inline int su_verifier_stop(struct su_verifier *v, int min_more,
				   struct su_verifier_state *out)
{
	int progress = su_verifier_progress(v, min_more, 6 * SU_TIMEOUT_MS);
	int st;

	__atomic_store_n(&v->s->stop, 1, __ATOMIC_RELEASE);
	st = su_wait_child(v->pid, 6 * SU_TIMEOUT_MS);
	*out = *v->s;
	munmap(v->s, sizeof(*v->s));
	v->s = NULL;
	if (progress || st == -1 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr,
			"# verifier: status %#x after %d rounds: failed step %d, sentinel byte %ld, QP states %d/%d, db status %#x, %d stray CQEs, last round %d\n",
			st, out->rounds, out->failed, out->sentinel_bad,
			out->qp_state[0], out->qp_state[1], out->db_status,
			out->stray, out->last_round);
		return -1;
	}
	return 0;
}

/*
 * For kselftest_harness tests: stop @v, expect it unharmed after at least
 * @more further rounds.
 */
#define SU_EXPECT_VERIFIER_UNHARMED(v, more) do { \
	struct su_verifier_state vs_; \
	EXPECT_EQ(0, su_verifier_stop(v, more, &vs_)); \
	TH_LOG("bystander: %d verified rounds", vs_.rounds); \
} while (0)

#endif /* VRNIC_SUITE_UTIL_H */
