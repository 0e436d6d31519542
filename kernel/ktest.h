/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * vrnic_ktest: what its cases share (ktest.c holds the module, the common
 * steps and most cases; ktest_frwr.c the fast-registration case).
 */
#ifndef VRNIC_KTEST_H
#define VRNIC_KTEST_H

#include <linux/completion.h>
#include <linux/wait.h>
#include <rdma/ib_verbs.h>

#define KT_BUF		4096
#define KT_DEPTH	16
#define KT_TIMEOUT	(5 * HZ)

struct kt_wr {
	struct ib_cqe cqe;
	struct completion done;
	struct ib_wc wc;
};

struct kt_ctx {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp[2];
	struct ib_srq *srq;
	void *buf[2];
	u64 dma[2];
	int result;
	int devices;
	/* async events of the QPs and the SRQ: a bit per type seen */
	unsigned long events;
	atomic_t srq_limit_events;
	wait_queue_head_t event_wq;
	/* WRs of the ud, srq and frwr cases: they outlive a failing step */
	struct kt_wr wr[24];
};

void kt_wr_init(struct kt_wr *w);
int kt_wait(struct kt_wr *w, const char *what, enum ib_wc_opcode op,
	    enum ib_wc_status status);
struct ib_sge kt_sge(struct kt_ctx *c, int buf, u32 off, u32 len);
int kt_post_recv(struct kt_ctx *c, int qp, struct kt_wr *w, u32 off,
		 u32 len);
int kt_check(bool ok, const char *what);
int kt_connect(struct kt_ctx *c, int me, int peer,
	       const struct ib_gid_attr *gid);
int kt_create_qps(struct kt_ctx *c, enum ib_qp_type type,
		  struct ib_srq *srq);

int kt_frwr(struct kt_ctx *c, const struct ib_gid_attr *gid);

#endif /* VRNIC_KTEST_H */
