// SPDX-License-Identifier: GPL-2.0
/*
 * QP and CQ rings of a process are kernel memory mapped into it: the driver
 * charges them to the process's locked memory (VmPin, against
 * RLIMIT_MEMLOCK) as ib_umem_get() charges pinned MR pages, refuses a ring
 * past the limit with ENOMEM unless the caller has CAP_IPC_LOCK, and gives
 * the charge back when the ring goes. Each test runs in its own process
 * (the harness forks), so its limit and capabilities stay there.
 */
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "suite.h"
#include "kselftest_harness.h"

#define LIMIT_KB	1024
#define MAX_OBJS	1024
#define CQ_ENTRIES	4096
#define CQ_RING_KB	(CQ_ENTRIES * VRNIC_CQE_SIZE / 1024)

static int drop_ipc_lock(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];
	const uint32_t bit = 1U << (CAP_IPC_LOCK % 32);

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[CAP_IPC_LOCK / 32].effective &= ~bit;
	d[CAP_IPC_LOCK / 32].permitted &= ~bit;
	d[CAP_IPC_LOCK / 32].inheritable &= ~bit;
	return syscall(SYS_capset, &h, d);
}

static int set_memlock_kb(long kb)
{
	struct rlimit r = { .rlim_cur = kb << 10, .rlim_max = kb << 10 };

	return setrlimit(RLIMIT_MEMLOCK, &r);
}

FIXTURE(memlock) {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq[MAX_OBJS];
	struct ibv_qp *qp[MAX_OBJS];
	int ncq, nqp;
	long pin0;
};

FIXTURE_SETUP(memlock)
{
	self->ctx = su_open();
	ASSERT_NE(NULL, self->ctx);
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->pin0 = su_vmpin_kb(0);
	ASSERT_LE(0, self->pin0);
}

FIXTURE_TEARDOWN(memlock)
{
	int i;

	for (i = 0; i < self->nqp; i++)
		ibv_destroy_qp(self->qp[i]);
	for (i = 0; i < self->ncq; i++)
		ibv_destroy_cq(self->cq[i]);
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	if (self->ctx)
		ibv_close_device(self->ctx);
}

static void destroy_all(FIXTURE_DATA(memlock) *self)
{
	while (self->nqp)
		ibv_destroy_qp(self->qp[--self->nqp]);
	while (self->ncq)
		ibv_destroy_cq(self->cq[--self->ncq]);
}

static struct ibv_qp *make_qp(FIXTURE_DATA(memlock) *self, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {
			.max_send_wr = 1024,
			.max_recv_wr = 1024,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
	};

	return ibv_create_qp(self->pd, &a);
}

/* CQ rings are charged; creation stops with ENOMEM exactly at the limit. */
TEST_F(memlock, cq_rings_stop_at_the_limit)
{
	long pin, expect;
	int err = 0;

	ASSERT_EQ(0, drop_ipc_lock());
	ASSERT_EQ(0, set_memlock_kb(LIMIT_KB));
	expect = (LIMIT_KB - self->pin0) / CQ_RING_KB;

	while (self->ncq < MAX_OBJS) {
		self->cq[self->ncq] = ibv_create_cq(self->ctx, CQ_ENTRIES,
						    NULL, NULL, 0);
		if (!self->cq[self->ncq]) {
			err = errno;
			break;
		}
		self->ncq++;
	}
	pin = su_vmpin_kb(0);
	TH_LOG("%d CQs of %d kB under a %d kB limit, then %s; VmPin %ld kB",
	       self->ncq, CQ_RING_KB, LIMIT_KB, strerror(err), pin);
	ASSERT_EQ(ENOMEM, err);
	EXPECT_EQ(expect, self->ncq);
	EXPECT_EQ(self->pin0 + (long)self->ncq * CQ_RING_KB, pin);
	EXPECT_LT(LIMIT_KB, pin + CQ_RING_KB);

	/* The refused CQ left no charge behind. */
	destroy_all(self);
	EXPECT_EQ(self->pin0, su_vmpin_kb(0));
	self->cq[0] = ibv_create_cq(self->ctx, CQ_ENTRIES, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq[0]);
	self->ncq = 1;
	EXPECT_EQ(self->pin0 + CQ_RING_KB, su_vmpin_kb(0));
}

/* QP rings (SQ and RQ) likewise. */
TEST_F(memlock, qp_rings_stop_at_the_limit)
{
	long pin_cq, pin, qp_kb;
	int err = 0, again;

	ASSERT_EQ(0, drop_ipc_lock());
	ASSERT_EQ(0, set_memlock_kb(LIMIT_KB));
	self->cq[0] = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq[0]);
	self->ncq = 1;
	pin_cq = su_vmpin_kb(0);
	ASSERT_LT(self->pin0, pin_cq) TH_LOG("a CQ ring is not charged");

	self->qp[0] = make_qp(self, self->cq[0]);
	ASSERT_NE(NULL, self->qp[0]);
	self->nqp = 1;
	qp_kb = su_vmpin_kb(0) - pin_cq;
	ASSERT_LT(0, qp_kb) TH_LOG("QP rings are not charged");

	while (self->nqp < MAX_OBJS) {
		self->qp[self->nqp] = make_qp(self, self->cq[0]);
		if (!self->qp[self->nqp]) {
			err = errno;
			break;
		}
		self->nqp++;
	}
	pin = su_vmpin_kb(0);
	TH_LOG("%d QPs of %ld kB under a %d kB limit, then %s; VmPin %ld kB",
	       self->nqp, qp_kb, LIMIT_KB, strerror(err), pin);
	ASSERT_EQ(ENOMEM, err);
	EXPECT_EQ((LIMIT_KB - pin_cq) / qp_kb, self->nqp);
	EXPECT_LE(pin, LIMIT_KB);
	EXPECT_LT(LIMIT_KB, pin + qp_kb);

	again = self->nqp;
	while (self->nqp)
		ibv_destroy_qp(self->qp[--self->nqp]);
	EXPECT_EQ(pin_cq, su_vmpin_kb(0));
	while (self->nqp < again) {
		self->qp[self->nqp] = make_qp(self, self->cq[0]);
		ASSERT_NE(NULL, self->qp[self->nqp]);
		self->nqp++;
	}
	EXPECT_EQ(pin, su_vmpin_kb(0));
	destroy_all(self);
	EXPECT_EQ(self->pin0, su_vmpin_kb(0));
}

/*
 * A CQ the device refuses after its ring was charged (its context's
 * doorbell page is full long before the limit) gives the charge back.
 */
TEST_F(memlock, cq_refused_by_the_device_is_uncharged)
{
	long ring_kb, pin;
	int err = 0;

	ASSERT_EQ(0, drop_ipc_lock());
	ASSERT_EQ(0, set_memlock_kb(16 * LIMIT_KB));
	while (self->ncq < MAX_OBJS) {
		self->cq[self->ncq] = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);
		if (!self->cq[self->ncq]) {
			err = errno;
			break;
		}
		self->ncq++;
	}
	pin = su_vmpin_kb(0);
	ASSERT_LT(0, self->ncq);
	ring_kb = (pin - self->pin0) / self->ncq;
	TH_LOG("%d CQs of %ld kB, then %s; VmPin %ld kB", self->ncq, ring_kb,
	       strerror(err), pin);
	ASSERT_NE(0, err);
	EXPECT_LT(0, ring_kb);
	EXPECT_LT(pin + ring_kb, 16 * LIMIT_KB)
		TH_LOG("refused at the limit, not by the device");
	EXPECT_EQ(self->pin0 + self->ncq * ring_kb, pin);
	destroy_all(self);
	EXPECT_EQ(self->pin0, su_vmpin_kb(0));
}

/* A resize charges the new ring and gives the old one back. */
TEST_F(memlock, cq_resize_is_charged)
{
	long pin_small;

	ASSERT_EQ(0, drop_ipc_lock());
	ASSERT_EQ(0, set_memlock_kb(LIMIT_KB));
	self->cq[0] = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq[0]);
	self->ncq = 1;
	pin_small = su_vmpin_kb(0);

	ASSERT_EQ(0, ibv_resize_cq(self->cq[0], CQ_ENTRIES));
	EXPECT_EQ(self->pin0 + CQ_RING_KB, su_vmpin_kb(0));
	/* 16384 CQEs (1 MiB) do not fit beside the 256 kB ring. */
	EXPECT_EQ(ENOMEM, ibv_resize_cq(self->cq[0], 4 * CQ_ENTRIES));
	EXPECT_EQ(self->pin0 + CQ_RING_KB, su_vmpin_kb(0));
	ASSERT_EQ(0, ibv_resize_cq(self->cq[0], 16));
	EXPECT_EQ(pin_small, su_vmpin_kb(0));
	destroy_all(self);
	EXPECT_EQ(self->pin0, su_vmpin_kb(0));
}

/* CAP_IPC_LOCK lifts the limit, as for pinned MRs; rings still count. */
TEST_F(memlock, cap_ipc_lock_is_exempt)
{
	int n = 2 * LIMIT_KB / CQ_RING_KB;

	ASSERT_EQ(0, set_memlock_kb(LIMIT_KB));
	while (self->ncq < n) {
		self->cq[self->ncq] = ibv_create_cq(self->ctx, CQ_ENTRIES,
						    NULL, NULL, 0);
		ASSERT_NE(NULL, self->cq[self->ncq])
			TH_LOG("CQ %d: %s", self->ncq, strerror(errno));
		self->ncq++;
	}
	EXPECT_EQ(self->pin0 + (long)n * CQ_RING_KB, su_vmpin_kb(0));
	destroy_all(self);
	EXPECT_EQ(self->pin0, su_vmpin_kb(0));
}

TEST_HARNESS_MAIN
