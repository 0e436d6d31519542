// SPDX-License-Identifier: GPL-2.0
/*
 * Two guests of one fabric (scripts/vm --vms 2): how they meet through
 * files in VRNIC_SHARED and how a QP of one connects to the other's.
 */
#include "suite.h"

int su_fab_init(struct su_fab *f, const char *test)
{
	const char *vms = getenv("VRNIC_VMS"), *idx = getenv("VRNIC_VM_INDEX");

	memset(f, 0, sizeof(*f));
	snprintf(f->test, sizeof(f->test), "%s", test);
	if (!vms || strcmp(vms, "2") || !idx || !getenv("VRNIC_SHARED"))
		return -EINVAL;
	f->me = atoi(idx);
	return f->me == 0 || f->me == 1 ? 0 : -EINVAL;
}

static int fab_path(char *p, size_t len, const char *test, const char *what)
{
	const char *dir = getenv("VRNIC_SHARED");

	return snprintf(p, len, "%s/%s.%s", dir, test, what) >= (int)len ?
	       -ENAMETOOLONG : 0;
}

int su_fab_exists(const struct su_fab *f, const char *what)
{
	char p[PATH_MAX];

	return !fab_path(p, sizeof(p), f->test, what) && !access(p, F_OK);
}

int su_fab_write(struct su_fab *f, const char *what, const void *data,
		 size_t len)
{
	char p[PATH_MAX], tmp[PATH_MAX + 16];
	ssize_t n;
	int fd;

	if (fab_path(p, sizeof(p), f->test, what))
		return -ENAMETOOLONG;
	snprintf(tmp, sizeof(tmp), "%s.tmp%d", p, f->me);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -errno;
	n = len ? write(fd, data, len) : 0;
	if (close(fd) || n != (ssize_t)len || rename(tmp, p))
		return -EIO;
	return 0;
}

int su_fab_put(struct su_fab *f, const char *what)
{
	f->mine.magic = SU_FAB_MAGIC;
	return su_fab_write(f, what, &f->mine, sizeof(f->mine));
}

void su_fab_end(struct su_fab *f)
{
	char what[8];

	snprintf(what, sizeof(what), "end%d", f->me);
	su_fab_write(f, what, NULL, 0);
}

int su_fab_get(struct su_fab *f, const char *what)
{
	long end = su_now_ms() + SU_FAB_WAIT_MS;
	char p[PATH_MAX], peer_end[8];
	int fd, ended;
	ssize_t n;

	if (fab_path(p, sizeof(p), f->test, what))
		return -ENAMETOOLONG;
	snprintf(peer_end, sizeof(peer_end), "end%d", !f->me);
	while (su_now_ms() < end) {
		/* The peer writes what we wait for before its end: look again. */
		ended = su_fab_exists(f, peer_end);
		fd = open(p, O_RDONLY);
		if (fd >= 0) {
			n = read(fd, &f->peer, sizeof(f->peer));
			close(fd);
			if (n != sizeof(f->peer) || f->peer.magic != SU_FAB_MAGIC)
				return -EPROTO;
			return 0;
		}
		if (ended)
			return -ECANCELED;
		su_sleep_ms(20);
	}
	return -ETIMEDOUT;
}

int su_fab_wait_end(struct su_fab *f)
{
	long end = su_now_ms() + SU_FAB_WAIT_MS;

	while (!su_fab_exists(f, "end0")) {
		if (su_now_ms() > end)
			return -ETIMEDOUT;
		su_sleep_ms(20);
	}
	return 0;
}

struct ibv_ah_attr su_fab_av(const struct su_fab *f)
{
	struct ibv_ah_attr av = {
		.is_global = 1,
		.grh = {
			.sgid_index = f->env.gid_index,
			.hop_limit = SU_HOP_LIMIT,
		},
		.port_num = 1,
	};

	memcpy(av.grh.dgid.raw, f->peer.gid, 16);
	return av;
}

int su_fab_connect(struct su_fab *f, struct ibv_qp *qp, uint32_t dest,
		   uint8_t timeout, uint8_t retry_cnt)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	int rc = qp->qp_type == IBV_QPT_RC, ud = qp->qp_type == IBV_QPT_UD;
	int mask;

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = SU_FAB_QKEY,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	mask |= ud ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	if (ibv_modify_qp(qp, &a, mask))
		return -2;
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dest, .max_dest_rd_atomic = 16,
		.min_rnr_timer = 12, .ah_attr = su_fab_av(f),
	};
	mask = IBV_QP_STATE;
	if (!ud)
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
	if (rc)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	if (ibv_modify_qp(qp, &a, mask))
		return -3;
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTS, .timeout = timeout,
		.retry_cnt = retry_cnt, .rnr_retry = 7, .max_rd_atomic = 16,
	};
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (rc)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	return ibv_modify_qp(qp, &a, mask) ? -4 : 0;
}
