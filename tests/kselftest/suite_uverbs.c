// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel side of the vrnic uverbs ABI, below the provider, on bare
 * contexts and on contexts opened through libibverbs:
 * - a bare context (GET_CONTEXT on the uverbs fd, no libibverbs): its
 *   response and doorbell mapping, unknown driver input refused, and
 *   QUERY_LAYOUT, KICK and the create_cq udata checks on it;
 * - the vrnic driver namespace (VRNIC_OBJECT_DEVICE) refuses wrong object
 *   and method ids, bad output attributes, and answers QUERY_LAYOUT with
 *   the very doorbell page the provider uses, one per context;
 * - VRNIC_METHOD_KICK wakes a sleeping device model: a WQE posted on a
 *   hand-built QP completes right after the kick;
 * - create_qp udata: reserved fields, comp_mask, strides are checked, and a
 *   refused create leaves nothing behind;
 * - counts no device has (CQ depths and QP capabilities at 0, 2^31,
 *   UINT32_MAX, max + 1), QP types other than RC, driver input where a
 *   verb takes none (ALLOC_PD, REG_MR, extended MODIFY_QP), comp_mask and
 *   reserved bits of RESIZE_CQ, access flags and ranges REG_MR cannot
 *   serve, unknown handles: each refused with the conventional errno,
 *   leaving nothing behind; a response buffer without room for the
 *   driver's part gets not one byte past its end;
 * - handles and mmap keys are per process: a forked process cannot
 *   destroy, modify, query or build on its parent's objects by number,
 *   nor map its parent's rings, and the parent keeps working;
 * - doorbell pages: a dead process's page comes back to the next context
 *   wiped, and when the pages run out a new context fails with ENOMEM,
 *   one freed page is enough for the next, and all of them come back.
 */
#include <dirent.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "suite.h"
#include "kselftest_harness.h"

/* N of /dev/infiniband/uverbsN for vrnic0, found once. */
static int uverbs_n = -1;

static void __attribute__((constructor)) find_uverbs_n(void)
{
	uverbs_n = su_uverbs_index();
}

FIXTURE(vctx) {
	struct ibv_context *ctx;
	int fd;
};

FIXTURE_SETUP(vctx)
{
	self->ctx = su_open();
	ASSERT_NE(NULL, self->ctx) TH_LOG("cannot open " SU_DEV);
	self->fd = self->ctx->cmd_fd;
}

FIXTURE_TEARDOWN(vctx)
{
	if (self->ctx)
		ibv_close_device(self->ctx);
}

static int layout_call(int fd, uint16_t object, uint16_t method, void *out,
		       uint16_t len, struct su_ioctl *io)
{
	su_ioctl_init(io, object, method, 1);
	su_ioctl_ptr(io, 0, VRNIC_ATTR_QUERY_LAYOUT_RESP, out, len);
	return su_ioctl_call(fd, io);
}

TEST_F(vctx, ns_wrong_object_or_method)
{
	struct vrnic_layout l;
	struct su_ioctl io;

	/* The right call, for reference. */
	ASSERT_EQ(0, layout_call(self->fd, VRNIC_OBJECT_DEVICE,
				 VRNIC_METHOD_QUERY_LAYOUT, &l, sizeof(l), &io));

	/* vrnic's methods under core objects. */
	EXPECT_EQ(-EPROTONOSUPPORT,
		  layout_call(self->fd, UVERBS_OBJECT_DEVICE,
			      VRNIC_METHOD_QUERY_LAYOUT, &l, sizeof(l), &io));
	EXPECT_EQ(-EPROTONOSUPPORT,
		  layout_call(self->fd, UVERBS_OBJECT_PD,
			      VRNIC_METHOD_QUERY_LAYOUT, &l, sizeof(l), &io));
	su_ioctl_init(&io, UVERBS_OBJECT_CQ, VRNIC_METHOD_KICK, 0);
	EXPECT_EQ(-EPROTONOSUPPORT, su_ioctl_call(self->fd, &io));

	/* A core method id under vrnic's object. */
	su_ioctl_init(&io, VRNIC_OBJECT_DEVICE, UVERBS_METHOD_INFO_HANDLES, 0);
	EXPECT_EQ(-EPROTONOSUPPORT, su_ioctl_call(self->fd, &io));

	/* A vrnic object id that does not exist. */
	EXPECT_EQ(-EPROTONOSUPPORT,
		  layout_call(self->fd, VRNIC_OBJECT_DEVICE + 1,
			      VRNIC_METHOD_QUERY_LAYOUT, &l, sizeof(l), &io));
	su_ioctl_init(&io, VRNIC_OBJECT_DEVICE + 1, VRNIC_METHOD_KICK, 0);
	EXPECT_EQ(-EPROTONOSUPPORT, su_ioctl_call(self->fd, &io));

	/* The second reserved header field. */
	su_ioctl_init(&io, VRNIC_OBJECT_DEVICE, VRNIC_METHOD_KICK, 0);
	io.hdr.reserved2 = 1;
	EXPECT_EQ(-EPROTONOSUPPORT, su_ioctl_call(self->fd, &io));

	/* A header longer than a page. */
	su_ioctl_init(&io, VRNIC_OBJECT_DEVICE, VRNIC_METHOD_KICK, 0);
	io.hdr.num_attrs = 300;
	io.hdr.length = sizeof(io.hdr) + 300 * sizeof(io.attrs[0]);
	EXPECT_EQ(-EINVAL, su_ioctl_call(self->fd, &io));

	/* An ioctl command number that is not RDMA_VERBS_IOCTL. */
	su_ioctl_init(&io, VRNIC_OBJECT_DEVICE, VRNIC_METHOD_KICK, 0);
	EXPECT_EQ(-1, ioctl(self->fd, _IOWR(RDMA_IOCTL_MAGIC, 2,
					     struct ib_uverbs_ioctl_hdr), &io));
	EXPECT_EQ(ENOTTY, errno);
}

TEST_F(vctx, ns_output_attribute)
{
	struct vrnic_layout l;
	struct su_ioctl io;
	void *ro;

	/* Lengths that do not cover the struct up to db_mmap_key. */
	EXPECT_EQ(-EINVAL, layout_call(self->fd, VRNIC_OBJECT_DEVICE,
				       VRNIC_METHOD_QUERY_LAYOUT, &l, 0, &io));
	EXPECT_EQ(-EINVAL, layout_call(self->fd, VRNIC_OBJECT_DEVICE,
				       VRNIC_METHOD_QUERY_LAYOUT, &l,
				       sizeof(l) - 1, &io));

	/* Output pointers the kernel cannot write. */
	EXPECT_EQ(-EFAULT, layout_call(self->fd, VRNIC_OBJECT_DEVICE,
				       VRNIC_METHOD_QUERY_LAYOUT, NULL,
				       sizeof(l), &io));
	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	EXPECT_EQ(-EFAULT, layout_call(self->fd, VRNIC_OBJECT_DEVICE,
				       VRNIC_METHOD_QUERY_LAYOUT, ro,
				       sizeof(l), &io));
	EXPECT_EQ(-1, su_check_byte(ro, 4096, 0));
	munmap(ro, 4096);

	/* The attribute array itself unreadable: the header is fine. */
	su_ioctl_init(&io, VRNIC_OBJECT_DEVICE, VRNIC_METHOD_QUERY_LAYOUT, 1);
	{
		struct ib_uverbs_ioctl_hdr *h;
		uint8_t *page = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		ASSERT_NE(MAP_FAILED, page);
		ASSERT_EQ(0, munmap(page + 4096, 4096));
		h = (void *)(page + 4096 - sizeof(*h));
		*h = io.hdr;
		EXPECT_EQ(-1, ioctl(self->fd, RDMA_VERBS_IOCTL, h));
		EXPECT_EQ(EFAULT, errno);
		munmap(page, 4096);
	}

	/* A good call marks its output attribute valid for user space. */
	memset(&l, 0, sizeof(l));
	ASSERT_EQ(0, layout_call(self->fd, VRNIC_OBJECT_DEVICE,
				 VRNIC_METHOD_QUERY_LAYOUT, &l, sizeof(l), &io));
	EXPECT_TRUE(io.attrs[0].flags & UVERBS_ATTR_F_VALID_OUTPUT);
	EXPECT_EQ(VRNIC_UVERBS_ABI_VERSION, l.abi_version);
	EXPECT_EQ(4096, l.db_page_size);
}

/*
 * The page QUERY_LAYOUT describes is the page the provider rings: arming a
 * CQ through libibverbs changes exactly one word of it, the arm word of a
 * CQ slot, by one request.
 */
TEST_F(vctx, ns_layout_is_the_provider_page)
{
	uint32_t before[1024], after[1024];
	struct vrnic_layout l;
	volatile uint32_t *db;
	struct ibv_cq *cq;
	int changed = -1, nchanged = 0, i;

	ASSERT_EQ(0, su_query_layout(self->fd, &l));
	db = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		  l.db_mmap_key);
	ASSERT_NE(MAP_FAILED, (void *)db);
	cq = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);

	for (i = 0; i < 1024; i++)
		before[i] = db[i];
	ASSERT_EQ(0, ibv_req_notify_cq(cq, 0));
	for (i = 0; i < 1024; i++)
		after[i] = db[i];
	/* Word 0 is the device's status; ignore its wake-up bits. */
	before[0] &= ~(VRNIC_DB_STATUS_NEED_WAKEUP | VRNIC_DB_STATUS_RQ_WAKEUP);
	after[0] &= ~(VRNIC_DB_STATUS_NEED_WAKEUP | VRNIC_DB_STATUS_RQ_WAKEUP);
	for (i = 0; i < 1024; i++)
		if (before[i] != after[i]) {
			changed = i;
			nchanged++;
		}
	ASSERT_EQ(1, nchanged);
	/* Byte 4 of a slot >= db_first_obj_slot: an arm word. */
	EXPECT_EQ(1, changed % 2);
	EXPECT_LE(l.db_first_obj_slot, changed / 2);
	EXPECT_EQ(VRNIC_CQ_ARM_NEXT_SN(before[changed]) + 1,
		  VRNIC_CQ_ARM_NEXT_SN(after[changed]));
	EXPECT_EQ(VRNIC_CQ_ARM_SOL_SN(before[changed]),
		  VRNIC_CQ_ARM_SOL_SN(after[changed]));
	ASSERT_EQ(0, ibv_req_notify_cq(cq, 1));
	EXPECT_EQ(VRNIC_CQ_ARM_SOL_SN(after[changed]) + 1,
		  VRNIC_CQ_ARM_SOL_SN(db[changed]));

	EXPECT_EQ(0, ibv_destroy_cq(cq));
	munmap((void *)db, 4096);
}

TEST_F(vctx, ns_layout_per_context)
{
	struct vrnic_layout la, lb;
	volatile uint32_t *pa, *pb;
	struct ibv_context *b;

	b = su_open();
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, su_query_layout(self->fd, &la));
	ASSERT_EQ(0, su_query_layout(b->cmd_fd, &lb));
	EXPECT_NE(la.db_page_index, lb.db_page_index);
	EXPECT_LE(VRNIC_FIRST_UCTX_DB_PAGE, la.db_page_index);
	EXPECT_LE(VRNIC_FIRST_UCTX_DB_PAGE, lb.db_page_index);

	pa = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		  la.db_mmap_key);
	pb = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, b->cmd_fd,
		  lb.db_mmap_key);
	ASSERT_NE(MAP_FAILED, (void *)pa);
	ASSERT_NE(MAP_FAILED, (void *)pb);
	/* Different pages: a word written in A's last slot is not in B's. */
	pa[1023] = 0x5a5a1234;
	pb[1023] = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	EXPECT_EQ(0x5a5a1234, pa[1023]);
	EXPECT_EQ(0, pb[1023]);
	pa[1023] = 0;
	munmap((void *)pa, 4096);
	munmap((void *)pb, 4096);
	ibv_close_device(b);
}

/* ------------------------------------------------------------------ */
/* KICK wakes the model                                                */
/* ------------------------------------------------------------------ */

FIXTURE(raw2) {
	struct su_env e;
	struct su_raw a, b;
};

#define RAW_BUF (1 << 20)

FIXTURE_SETUP(raw2)
{
	struct su_env *e = &self->e;

	ASSERT_EQ(0, su_env_open(e, RAW_BUF, 0, SU_MR_ALL));
	ASSERT_EQ(0, su_raw_create(&self->a, e->ctx, e->pd, 64, 64, 1));
	ASSERT_EQ(0, su_raw_create(&self->b, e->ctx, e->pd, 64, 64, 1));
	ASSERT_EQ(0, su_raw_connect(&self->a, self->b.qpn, &e->gid,
				    e->gid_index));
	ASSERT_EQ(0, su_raw_connect(&self->b, self->a.qpn, &e->gid,
				    e->gid_index));
}

FIXTURE_TEARDOWN(raw2)
{
	su_raw_destroy(&self->a);
	su_raw_destroy(&self->b);
	su_env_close(&self->e);
}

/* Wait up to 2 s for the model to announce it sleeps. */
static int wait_asleep(struct su_raw *r)
{
	long end = su_now_ms() + 2000;

	while (su_now_ms() < end)
		if (su_raw_need_wakeup(r))
			return 1;
	return 0;
}

/*
 * Post an RDMA WRITE of 256 bytes while the model sleeps; return the
 * microseconds until its CQE, or -1. The bytes must have arrived. With
 * @kick_reg, the kick is a store of @kick_val there (a kick page).
 */
static long timed_write(FIXTURE_DATA(raw2) *self, enum su_kick kick,
			volatile uint32_t *kick_reg, uint32_t kick_val,
			unsigned int seed)
{
	struct vrnic_cqe cqe;
	struct timespec t0, t1;
	uint8_t *src = self->e.buf + (seed % 64) * 512;
	uint8_t *dst = self->e.buf + RAW_BUF / 2 + (seed % 64) * 512;

	su_fill(src, 256, seed);
	memset(dst, 0, 256);
	if (!wait_asleep(&self->a))
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (su_raw_post(&self->a, VRNIC_WR_RDMA_WRITE, seed, (uintptr_t)src,
			256, self->e.mr->lkey, (uintptr_t)dst, self->e.mr->rkey,
			kick))
		return -1;
	if (kick_reg)
		*kick_reg = kick_val;
	if (!su_raw_poll_wait(&self->a, &cqe, 2000))
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (cqe.status != VRNIC_WC_SUCCESS || cqe.wr_id != seed ||
	    cqe.qpn != self->a.qpn || su_check(dst, 256, seed) != -1)
		return -1;
	return (t1.tv_sec - t0.tv_sec) * 1000000 +
	       (t1.tv_nsec - t0.tv_nsec) / 1000;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/*
 * Nine writes posted while the model sleeps, each kicked as @kick, @reg and
 * @val say, against nine not kicked at all: with the kick the sleeping model
 * runs the WQE right away, without it only at the end of its sleep (at most
 * 100 ms, section 8). A model that never sleeps that long makes the
 * comparison meaningless; say so.
 */
static void compare_kicks(struct __test_metadata *_metadata,
			  FIXTURE_DATA(raw2) *self, enum su_kick kick,
			  volatile uint32_t *reg, uint32_t val,
			  unsigned int seed, const char *how)
{
	long kicked[9], unkicked[9];
	int i;

	for (i = 0; i < 9; i++) {
		kicked[i] = timed_write(self, kick, reg, val, seed + i);
		ASSERT_LE(0, kicked[i]) TH_LOG("kicked write %d failed", i);
		unkicked[i] = timed_write(self, SU_KICK_NEVER, NULL, 0,
					  seed + 100 + i);
		/* The model wakes by itself within its 100 ms period. */
		ASSERT_LE(0, unkicked[i]) TH_LOG("unkicked write %d lost", i);
	}
	qsort(kicked, 9, sizeof(long), cmp_long);
	qsort(unkicked, 9, sizeof(long), cmp_long);
	TH_LOG("median completion: %ld us with %s, %ld us without",
	       kicked[4], how, unkicked[4]);
	EXPECT_LT(kicked[4], 20000);
	if (unkicked[4] > 5000) {
		EXPECT_LT(kicked[4] * 4, unkicked[4]);
	} else {
		TH_LOG("the model woke within 5 ms without a kick");
	}
}

TEST_F(raw2, kick_wakes_the_model)
{
	compare_kicks(_metadata, self, SU_KICK_ALWAYS, NULL, 0, 100, "KICK");
}

/* ------------------------------------------------------------------ */
/* create_qp udata                                                     */
/* ------------------------------------------------------------------ */

struct qp_cmd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_qp cmd;
	struct vrnic_ibv_create_qp drv;
	uint64_t trailer;
};

static int raw_create_qp(int fd, struct ibv_pd *pd, struct ibv_cq *cq,
			 const struct vrnic_ibv_create_qp *drv,
			 uint64_t trailer, uint32_t sge, struct su_qp_resp *resp)
{
	struct qp_cmd c = {};
	size_t len = sizeof(c) - sizeof(c.trailer);

	memset(resp, 0, sizeof(*resp));
	c.cmd.response = (uintptr_t)resp;
	c.cmd.pd_handle = pd->handle;
	c.cmd.send_cq_handle = cq->handle;
	c.cmd.recv_cq_handle = cq->handle;
	c.cmd.max_send_wr = 16;
	c.cmd.max_recv_wr = 16;
	c.cmd.max_send_sge = sge;
	c.cmd.max_recv_sge = sge;
	c.cmd.qp_type = IB_UVERBS_QPT_RC;
	c.drv = *drv;
	if (trailer) {
		c.trailer = trailer;
		len += sizeof(c.trailer);
	}
	return su_uverbs_write(fd, IB_USER_VERBS_CMD_CREATE_QP, &c, len,
			       sizeof(*resp));
}

TEST_F(vctx, create_qp_udata)
{
	struct vrnic_ibv_create_qp drv = {};
	struct ibv_device_attr da;
	struct su_res before, now;
	struct su_qp_resp resp;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	void *ring;

	ASSERT_EQ(0, ibv_query_device(self->ctx, &da));
	pd = ibv_alloc_pd(self->ctx);
	cq = ibv_create_cq(self->ctx, 64, NULL, NULL, 0);
	ASSERT_NE(NULL, pd);
	ASSERT_NE(NULL, cq);
	ASSERT_EQ(0, su_res_get(&before));

	drv.comp_mask = 1;
	EXPECT_EQ(-EINVAL, raw_create_qp(self->fd, pd, cq, &drv, 0, 1, &resp));
	drv.comp_mask = 0;
	drv.reserved = 0x100;
	EXPECT_EQ(-EINVAL, raw_create_qp(self->fd, pd, cq, &drv, 0, 1, &resp));
	drv.reserved = 0;
	/* Unknown trailing input must be zero. */
	EXPECT_EQ(-EINVAL, raw_create_qp(self->fd, pd, cq, &drv, 7, 1, &resp));
	/* Strides outside [min, max], or too small for the SGEs asked. */
	drv.sq_wqe_shift = VRNIC_SQ_WQE_SHIFT_MIN - 1;
	EXPECT_EQ(-EINVAL, raw_create_qp(self->fd, pd, cq, &drv, 0, 1, &resp));
	drv.sq_wqe_shift = VRNIC_SQ_WQE_SHIFT_MAX + 1;
	EXPECT_EQ(-EINVAL, raw_create_qp(self->fd, pd, cq, &drv, 0, 1, &resp));
	drv.sq_wqe_shift = 6;	/* one SGE */
	EXPECT_EQ(-EINVAL, raw_create_qp(self->fd, pd, cq, &drv, 0, 4, &resp));
	drv.sq_wqe_shift = 0;
	drv.rq_wqe_shift = VRNIC_RQ_WQE_SHIFT_MIN - 1;
	EXPECT_EQ(-EINVAL, raw_create_qp(self->fd, pd, cq, &drv, 0, 1, &resp));
	drv.rq_wqe_shift = VRNIC_RQ_WQE_SHIFT_MAX + 1;
	EXPECT_EQ(-EINVAL, raw_create_qp(self->fd, pd, cq, &drv, 0, 1, &resp));
	drv.rq_wqe_shift = 5;	/* one SGE */
	EXPECT_EQ(-EINVAL, raw_create_qp(self->fd, pd, cq, &drv, 0, 4, &resp));
	/* More SGEs than the device has. */
	drv.rq_wqe_shift = 0;
	EXPECT_EQ(-EINVAL, raw_create_qp(self->fd, pd, cq, &drv, 0,
					 da.max_sge + 1, &resp));
	/* Nothing was left behind by the refusals. */
	ASSERT_EQ(0, su_res_get(&now));
	EXPECT_EQ(before.qp, now.qp);

	/* Explicit strides are honoured and reported. */
	drv.sq_wqe_shift = 9;
	drv.rq_wqe_shift = 8;
	ASSERT_EQ(0, raw_create_qp(self->fd, pd, cq, &drv, 0, 2, &resp));
	EXPECT_EQ(0, resp.drv.comp_mask);
	EXPECT_EQ(resp.core.qpn, resp.drv.qpn);
	EXPECT_NE(0, resp.drv.qpn);
	EXPECT_EQ(9, resp.drv.sq_wqe_shift);
	EXPECT_EQ(8, resp.drv.rq_wqe_shift);
	EXPECT_EQ(4, resp.drv.sq_log_depth);
	EXPECT_EQ(4, resp.drv.rq_log_depth);
	EXPECT_EQ(16ULL << 9, resp.drv.sq_ring_size);
	EXPECT_EQ(16ULL << 8, resp.drv.rq_ring_size);
	EXPECT_GE(VRNIC_SQ_MAX_INLINE(9), resp.drv.max_inline);
	EXPECT_EQ(resp.core.max_inline_data, resp.drv.max_inline);
	EXPECT_EQ(da.max_sge < 29 ? da.max_sge : 29, resp.drv.max_send_sge);
	EXPECT_EQ(da.max_sge < 15 ? da.max_sge : 15, resp.drv.max_recv_sge);
	EXPECT_EQ(resp.core.max_send_sge, resp.drv.max_send_sge);
	EXPECT_EQ(resp.core.max_recv_sge, resp.drv.max_recv_sge);
	EXPECT_EQ(0, resp.drv.reserved0);
	EXPECT_EQ(0, resp.drv.reserved1);
	/* The rings map at their keys, at their sizes. */
	ring = mmap(NULL, resp.drv.sq_ring_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED, self->fd, resp.drv.sq_mmap_key);
	EXPECT_NE(MAP_FAILED, ring);
	if (ring != MAP_FAILED)
		munmap(ring, resp.drv.sq_ring_size);
	ring = mmap(NULL, resp.drv.rq_ring_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED, self->fd, resp.drv.rq_mmap_key);
	EXPECT_NE(MAP_FAILED, ring);
	if (ring != MAP_FAILED)
		munmap(ring, resp.drv.rq_ring_size);
	EXPECT_EQ(0, su_cmd_destroy_qp(self->fd, resp.core.qp_handle));
	/* Its ring keys went with it. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, resp.drv.sq_ring_size, PROT_READ,
				   MAP_SHARED, self->fd, resp.drv.sq_mmap_key));
	ASSERT_EQ(0, su_res_get(&now));
	EXPECT_EQ(before.qp, now.qp);

	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
}

/* ------------------------------------------------------------------ */
/* Handles and mmap keys are per process                               */
/* ------------------------------------------------------------------ */

struct foreign {
	uint32_t pd, mr, cq, qp[2];
	uint64_t ring_key, ring_size;
	uint32_t raw_cq, raw_qp;
};

static int cmd_modify_qp_err(int fd, uint32_t h)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_modify_qp cmd;
	} c = {};

	c.cmd.qp_handle = h;
	c.cmd.attr_mask = IBV_QP_STATE;
	c.cmd.qp_state = IBV_QPS_ERR;
	return su_uverbs_write(fd, IB_USER_VERBS_CMD_MODIFY_QP, &c, sizeof(c), 0);
}

static int ioctl_destroy_cq(int fd, uint32_t h)
{
	struct ib_uverbs_destroy_cq_resp r;
	struct su_ioctl io;

	su_ioctl_init(&io, UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_DESTROY, 2);
	su_ioctl_idr(&io, 0, UVERBS_ATTR_DESTROY_CQ_HANDLE, h);
	su_ioctl_ptr(&io, 1, UVERBS_ATTR_DESTROY_CQ_RESP, &r, sizeof(r));
	return su_ioctl_call(fd, &io);
}

static int ioctl_destroy_pd(int fd, uint32_t h)
{
	struct su_ioctl io;

	su_ioctl_init(&io, UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY, 1);
	su_ioctl_idr(&io, 0, UVERBS_ATTR_DESTROY_PD_HANDLE, h);
	return su_ioctl_call(fd, &io);
}

/* The forked process: everything it tries with @f must be refused. */
static void foreign_child(int rfd, int wfd)
{
	struct ibv_context *ctx;
	struct vrnic_layout l;
	struct foreign f;
	struct ibv_pd *pd;
	uint8_t *buf;
	void *m;
	int fd;

	CHILD_CHECK(read(rfd, &f, sizeof(f)) == sizeof(f));
	ctx = su_open();
	CHILD_CHECK(ctx);
	fd = ctx->cmd_fd;
	pd = ibv_alloc_pd(ctx);
	CHILD_CHECK(pd);
	/* Our only IDR handle must not collide with the parent's numbers. */
	CHILD_CHECK(pd->handle != f.pd && pd->handle != f.mr &&
		    pd->handle != f.cq && pd->handle != f.qp[0] &&
		    pd->handle != f.qp[1] && pd->handle != f.raw_cq &&
		    pd->handle != f.raw_qp);
	buf = aligned_alloc(4096, 65536);
	CHILD_CHECK(buf);

	/* Destroying the parent's objects by number: no such handle here. */
	CHILD_CHECK(su_cmd_dealloc_pd(fd, f.pd) == -ENOENT);
	CHILD_CHECK(su_cmd_dereg_mr(fd, f.mr) == -ENOENT);
	CHILD_CHECK(su_cmd_destroy_cq(fd, f.cq) == -ENOENT);
	CHILD_CHECK(su_cmd_destroy_qp(fd, f.qp[0]) == -ENOENT);
	CHILD_CHECK(ioctl_destroy_cq(fd, f.cq) == -ENOENT);
	CHILD_CHECK(ioctl_destroy_pd(fd, f.pd) == -ENOENT);
	/* Using them: the same lookup fails. */
	CHILD_CHECK(cmd_modify_qp_err(fd, f.qp[1]) == -ENOENT);
	CHILD_CHECK(su_cmd_qp_state(fd, f.qp[0]) == -ENOENT);
	CHILD_CHECK(su_cmd_reg_mr(fd, f.pd, (uintptr_t)buf, 65536,
				  (uintptr_t)buf, IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_REMOTE_WRITE, NULL, NULL) == -ENOENT);
	CHILD_CHECK(cmd_modify_qp_err(fd, f.raw_qp) == -ENOENT);
	/* Our own PD named as a CQ: wrong type. */
	CHILD_CHECK(su_cmd_destroy_cq(fd, pd->handle) == -EINVAL);
	CHILD_CHECK(ioctl_destroy_cq(fd, pd->handle) == -EINVAL);

	/* The parent's ring key is not an mmap key of ours. */
	CHILD_CHECK(!su_query_layout(fd, &l));
	CHILD_CHECK(l.db_mmap_key != f.ring_key);
	m = mmap(NULL, f.ring_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 f.ring_key);
	CHILD_CHECK(m == MAP_FAILED);

	/* Our PD survived the wrong-type attempts. */
	CHILD_CHECK(ibv_dealloc_pd(pd) == 0);
	ibv_close_device(ctx);
	free(buf);
	CHILD_CHECK(write(wfd, "k", 1) == 1);
	_exit(0);
}

TEST(handles_and_keys_are_per_process)
{
	struct su_cq_resp ccr;
	struct ibv_pd *pads[6];
	void *m;
	struct su_pair p;
	struct su_raw raw;
	struct foreign f;
	struct ibv_sge s, r;
	struct ibv_wc wc;
	int to_child, from_child, st, i, err;
	pid_t pid;
	char c;

	pid = su_spawn(foreign_child, &to_child, &from_child);
	ASSERT_LE(0, pid);

	err = su_pair_open(&p, NULL);
	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	/* Push our interesting handles above the child's first ones. */
	for (i = 0; i < 6; i++) {
		pads[i] = ibv_alloc_pd(p.env.ctx);
		ASSERT_NE(NULL, pads[i]);
	}
	ASSERT_EQ(0, su_raw_create(&raw, p.env.ctx, p.env.pd, 16, 16, 1));
	f.pd = pads[5]->handle;
	f.mr = p.env.mr->handle;
	f.cq = p.cq[1]->handle;
	f.qp[0] = p.qp[0]->handle;
	f.qp[1] = p.qp[1]->handle;
	f.raw_qp = raw.qp_handle;
	/* A CQ whose ring key we know (the raw helper maps its own). */
	ASSERT_EQ(0, su_cmd_create_cq(p.env.ctx->cmd_fd, 16, 0, &ccr));
	f.ring_key = ccr.drv.ring_mmap_key;
	f.ring_size = ccr.drv.ring_size;
	f.raw_cq = ccr.core.cq_handle;
	ASSERT_EQ(sizeof(f), write(to_child, &f, sizeof(f)));
	st = su_wait_child(pid, 20000);
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("child status %#x", st);
	ASSERT_EQ(1, read(from_child, &c, 1));

	/* Everything of ours is intact: QPs in RTS, bytes flow. */
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(p.qp[0]));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(p.qp[1]));
	su_fill(p.env.buf, 8192, 77);
	s = su_sge(&p, 0, 8192);
	r = su_sge(&p, 65536, 8192);
	ASSERT_EQ(0, su_post_recv(p.qp[1], 1, &r, 1));
	ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_SEND, 2, &s, 1,
				  IBV_SEND_SIGNALED, 0, 0));
	ASSERT_EQ(1, su_poll(p.cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(-1, su_check(p.env.buf + 65536, 8192, 77));
	ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	/* Our CQ ring key still maps for us. */
	m = mmap(NULL, f.ring_size, PROT_READ, MAP_SHARED, p.env.ctx->cmd_fd,
		 f.ring_key);
	EXPECT_NE(MAP_FAILED, m);
	if (m != MAP_FAILED)
		munmap(m, f.ring_size);
	EXPECT_EQ(0, su_cmd_destroy_cq(p.env.ctx->cmd_fd, f.raw_cq));
	su_raw_destroy(&raw);
	for (i = 0; i < 6; i++)
		EXPECT_EQ(0, ibv_dealloc_pd(pads[i]));
	su_pair_close(&p);
}

/* ------------------------------------------------------------------ */
/* Malformed counts, udata and handles on vrnic's verbs                */
/* ------------------------------------------------------------------ */

struct cq_cmd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_cq cmd;
	struct vrnic_ibv_create_cq drv;
	uint64_t trailer;
};

struct cq_resp {
	struct ib_uverbs_create_cq_resp core;
	struct vrnic_ibv_create_cq_resp drv;
	uint8_t canary[16];
};

/* CREATE_CQ with @drv_len bytes of @drv and @out_len of response. */
static int raw_create_cq(int fd, uint32_t cqe, uint32_t vector,
			 const struct vrnic_ibv_create_cq *drv, size_t drv_len,
			 size_t out_len, struct cq_resp *resp)
{
	struct cq_cmd c = {};

	memset(resp, 0xa5, sizeof(*resp));
	c.cmd.response = (uintptr_t)resp;
	c.cmd.cqe = cqe;
	c.cmd.comp_vector = vector;
	c.cmd.comp_channel = -1;
	memcpy(&c.drv, drv, drv_len);
	return su_uverbs_write(fd, IB_USER_VERBS_CMD_CREATE_CQ, &c,
			       sizeof(c.hdr) + sizeof(c.cmd) + drv_len,
			       out_len);
}

static int raw_resize_cq(int fd, uint32_t handle, uint32_t cqe,
			 const struct vrnic_ibv_resize_cq *drv,
			 uint64_t trailer)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_resize_cq cmd;
		struct vrnic_ibv_resize_cq drv;
		uint64_t trailer;
	} c = {};
	struct {
		struct ib_uverbs_resize_cq_resp core;
		struct vrnic_ibv_resize_cq_resp drv;
	} r = {};

	c.cmd.response = (uintptr_t)&r;
	c.cmd.cq_handle = handle;
	c.cmd.cqe = cqe;
	c.drv = *drv;
	c.trailer = trailer;
	return su_uverbs_write(fd, IB_USER_VERBS_CMD_RESIZE_CQ, &c,
			       sizeof(c) - (trailer ? 0 : sizeof(c.trailer)),
			       sizeof(r));
}

TEST_F(vctx, cq_counts_and_udata)
{
	struct vrnic_ibv_create_cq drv = {};
	struct vrnic_ibv_resize_cq rdrv = {};
	struct ibv_device_attr da;
	struct su_res before, now;
	struct cq_resp resp;
	struct ibv_cq *cq;
	size_t core = sizeof(resp.core);
	struct ibv_wc wc;

	ASSERT_EQ(0, ibv_query_device(self->ctx, &da));
	ASSERT_EQ(0, su_res_get(&before));

	/* Depths nobody can have: none, the top bit, all ones, max + 1. */
	EXPECT_EQ(-EINVAL, raw_create_cq(self->fd, 0, 0, &drv, sizeof(drv),
					 sizeof(resp) - 16, &resp));
	EXPECT_EQ(-EINVAL, raw_create_cq(self->fd, 0x80000000u, 0, &drv,
					 sizeof(drv), sizeof(resp) - 16, &resp));
	EXPECT_EQ(-EINVAL, raw_create_cq(self->fd, UINT32_MAX, 0, &drv,
					 sizeof(drv), sizeof(resp) - 16, &resp));
	EXPECT_EQ(-EINVAL, raw_create_cq(self->fd, da.max_cqe + 1, 0, &drv,
					 sizeof(drv), sizeof(resp) - 16, &resp));
	/* A completion vector the device does not have. */
	EXPECT_EQ(-EINVAL, raw_create_cq(self->fd, 16, 1000, &drv, sizeof(drv),
					 sizeof(resp) - 16, &resp));
	/* A request cut short is zero-extended, and still checked. */
	drv.comp_mask = 1;
	EXPECT_EQ(-EINVAL, raw_create_cq(self->fd, 16, 0, &drv, 4,
					 sizeof(resp) - 16, &resp));
	ASSERT_EQ(0, su_res_get(&now));
	EXPECT_EQ(before.cq, now.cq);
	drv.comp_mask = 0;
	ASSERT_EQ(0, raw_create_cq(self->fd, 16, 0, &drv, 4, sizeof(resp) - 16,
				   &resp));
	EXPECT_EQ(0, su_cmd_destroy_cq(self->fd, resp.core.cq_handle));
	/*
	 * Response buffers with no room, or room for 8 bytes, for the
	 * driver's part: the kernel writes what fits and not one byte more.
	 */
	ASSERT_EQ(0, raw_create_cq(self->fd, 16, 0, &drv, sizeof(drv), core,
				   &resp));
	EXPECT_EQ(-1, su_check_byte(&resp.drv, sizeof(resp.drv) + 16, 0xa5));
	EXPECT_EQ(0, su_cmd_destroy_cq(self->fd, resp.core.cq_handle));
	ASSERT_EQ(0, raw_create_cq(self->fd, 16, 0, &drv, sizeof(drv),
				   core + 8, &resp));
	EXPECT_EQ(0U, resp.drv.comp_mask);
	EXPECT_EQ(-1, su_check_byte((uint8_t *)&resp.drv + 8,
				    sizeof(resp.drv) - 8 + 16, 0xa5));
	EXPECT_EQ(0, su_cmd_destroy_cq(self->fd, resp.core.cq_handle));

	/* RESIZE_CQ on a provider CQ: counts and udata checked alike. */
	cq = ibv_create_cq(self->ctx, 64, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	EXPECT_EQ(-EINVAL, raw_resize_cq(self->fd, cq->handle, 0, &rdrv, 0));
	EXPECT_EQ(-EINVAL, raw_resize_cq(self->fd, cq->handle, UINT32_MAX,
					 &rdrv, 0));
	EXPECT_EQ(-EINVAL, raw_resize_cq(self->fd, cq->handle, 0x80000000u,
					 &rdrv, 0));
	rdrv.comp_mask = 4;
	EXPECT_EQ(-EINVAL, raw_resize_cq(self->fd, cq->handle, 128, &rdrv, 0));
	rdrv.comp_mask = 0;
	rdrv.reserved = 1;
	EXPECT_EQ(-EINVAL, raw_resize_cq(self->fd, cq->handle, 128, &rdrv, 0));
	rdrv.reserved = 0;
	EXPECT_EQ(-EINVAL, raw_resize_cq(self->fd, cq->handle, 128, &rdrv, 3));
	/* The CQ was left as it was. */
	EXPECT_EQ(64, cq->cqe);
	EXPECT_EQ(0, ibv_poll_cq(cq, 1, &wc));
	EXPECT_EQ(0, ibv_resize_cq(cq, 256));
	EXPECT_LE(256, cq->cqe);
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	ASSERT_EQ(0, su_res_get(&now));
	EXPECT_EQ(before.cq, now.cq);
}

TEST_F(vctx, qp_counts_and_types)
{
	const struct ibv_qp_cap ok = { 16, 16, 1, 1, 0 };
	struct ibv_device_attr da;
	struct su_res before, now;
	struct ibv_qp_cap cap;
	struct su_qp_resp resp;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	unsigned int i;
	int err;
	struct {
		uint32_t *field, value;
	} rows[] = {
		{ &cap.max_send_wr, UINT32_MAX },
		{ &cap.max_recv_wr, UINT32_MAX },
		{ &cap.max_send_wr, 0x80000000u },
		{ &cap.max_send_sge, UINT32_MAX },
		{ &cap.max_recv_sge, UINT32_MAX },
		{ &cap.max_inline_data, UINT32_MAX },
		{ &cap.max_inline_data, 0x80000000u },
		{ &cap.max_send_wr, 0 },	/* below: max_qp_wr + 1 */
		{ &cap.max_recv_wr, 0 },
	};

	ASSERT_EQ(0, ibv_query_device(self->ctx, &da));
	rows[7].value = da.max_qp_wr + 1;
	rows[8].value = da.max_qp_wr + 1;
	pd = ibv_alloc_pd(self->ctx);
	cq = ibv_create_cq(self->ctx, 64, NULL, NULL, 0);
	ASSERT_NE(NULL, pd);
	ASSERT_NE(NULL, cq);
	ASSERT_EQ(0, su_res_get(&before));

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		cap = ok;
		*rows[i].field = rows[i].value;
		err = su_cmd_create_qp(self->fd, pd->handle, cq->handle,
				       cq->handle, &cap, IB_UVERBS_QPT_RC, 0,
				       &resp);
		EXPECT_EQ(-EINVAL, err) TH_LOG("row %u: %#x", i, rows[i].value);
		if (!err)
			su_cmd_destroy_qp(self->fd, resp.core.qp_handle);
	}
	/* RC, UC and UD exist; raw packet QPs do not. */
	EXPECT_EQ(-EOPNOTSUPP, su_cmd_create_qp(self->fd, pd->handle,
						cq->handle, cq->handle, &ok,
						IB_UVERBS_QPT_RAW_PACKET, 0,
						&resp));
	ASSERT_EQ(0, su_res_get(&now));
	EXPECT_EQ(before.qp, now.qp);
	for (i = IB_UVERBS_QPT_UC; i <= IB_UVERBS_QPT_UD; i++) {
		ASSERT_EQ(0, su_cmd_create_qp(self->fd, pd->handle, cq->handle,
					      cq->handle, &ok, i, 0, &resp))
			TH_LOG("QP type %u", i);
		ASSERT_EQ(0, su_res_get(&now));
		EXPECT_EQ(before.qp + 1, now.qp);
		EXPECT_EQ(0, su_cmd_destroy_qp(self->fd, resp.core.qp_handle));
	}

	/* The same call within the limits works. */
	ASSERT_EQ(0, su_cmd_create_qp(self->fd, pd->handle, cq->handle,
				      cq->handle, &ok, IB_UVERBS_QPT_RC, 0,
				      &resp));
	EXPECT_EQ(0, su_cmd_destroy_qp(self->fd, resp.core.qp_handle));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
}

/* The extended MODIFY_QP, with @drv as provider input (none if 0). */
static int raw_ex_modify_qp(int fd, uint32_t qp, uint32_t mask, int state,
			    uint64_t drv)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_ex_cmd_hdr ex;
		struct ib_uverbs_ex_modify_qp cmd;
		uint64_t drv;
	} c = {};
	struct ib_uverbs_ex_modify_qp_resp r = {};
	size_t len = sizeof(c) - (drv ? 0 : sizeof(c.drv));

	c.hdr.command = IB_USER_VERBS_CMD_FLAG_EXTENDED |
			IB_USER_VERBS_EX_CMD_MODIFY_QP;
	c.hdr.in_words = sizeof(c.cmd) / 8;
	c.hdr.out_words = sizeof(r) / 8;
	c.ex.response = (uintptr_t)&r;
	c.ex.provider_in_words = drv ? 1 : 0;
	c.cmd.base.qp_handle = qp;
	c.cmd.base.attr_mask = mask;
	c.cmd.base.qp_state = state;
	c.cmd.base.port_num = 1;
	c.drv = drv;
	if (write(fd, &c, len) != (ssize_t)len)
		return -errno;
	return 0;
}

TEST_F(vctx, verbs_without_driver_input)
{
	const uint32_t to_init = IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				 IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	/* Driver input of 8 bytes: zero passes, anything else does not. */
	const uint64_t zero = 0, one = 1, big = 1 << 20;
	struct ibv_device_attr da;
	struct su_res before, now;
	uint32_t pd, mr;
	struct ibv_pd *ipd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint64_t va;
	uint8_t *buf;
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	ASSERT_EQ(0, ibv_query_device(self->ctx, &da));
	buf = aligned_alloc(4096, 65536);
	ASSERT_NE(NULL, buf);
	va = (uintptr_t)buf;
	ASSERT_EQ(0, su_res_get(&before));

	/* ALLOC_PD takes no driver input: only zero bytes pass. */
	EXPECT_EQ(-EINVAL, su_cmd_alloc_pd(self->fd, &one, &pd));
	ASSERT_EQ(0, su_cmd_alloc_pd(self->fd, &zero, &pd));

	/* REG_MR: no driver input, no access the device lacks, sane range. */
	EXPECT_EQ(-EINVAL, su_cmd_reg_mr(self->fd, pd, va, 65536, va,
					 IB_UVERBS_ACCESS_LOCAL_WRITE, &big,
					 &mr));
	EXPECT_EQ(-EOPNOTSUPP, su_cmd_reg_mr(self->fd, pd, va, 65536, va,
					     IB_UVERBS_ACCESS_LOCAL_WRITE |
					     IB_UVERBS_ACCESS_ZERO_BASED, &zero,
					     &mr));
	EXPECT_EQ(-EINVAL, su_cmd_reg_mr(self->fd, pd, va, 0, va,
					 IB_UVERBS_ACCESS_LOCAL_WRITE, &zero,
					 &mr));
	EXPECT_EQ(-EINVAL, su_cmd_reg_mr(self->fd, pd, va, 65536, -4096ULL,
					 IB_UVERBS_ACCESS_LOCAL_WRITE, &zero,
					 &mr));
	EXPECT_EQ(-EINVAL, su_cmd_reg_mr(self->fd, pd, va,
					 da.max_mr_size + 4096, va,
					 IB_UVERBS_ACCESS_LOCAL_WRITE, &zero,
					 &mr));
	ASSERT_EQ(0, su_res_get(&now));
	EXPECT_EQ(before.mr, now.mr);
	ASSERT_EQ(0, su_cmd_reg_mr(self->fd, pd, va, 65536, va,
				   IB_UVERBS_ACCESS_LOCAL_WRITE, &zero, &mr));
	EXPECT_EQ(0, su_cmd_dereg_mr(self->fd, mr));
	EXPECT_EQ(0, su_cmd_dealloc_pd(self->fd, pd));

	/* MODIFY_QP: no driver input, no attribute the device lacks. */
	ipd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, ipd);
	cq = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	qa.send_cq = qa.recv_cq = cq;
	qp = ibv_create_qp(ipd, &qa);
	ASSERT_NE(NULL, qp);
	EXPECT_EQ(-EINVAL, raw_ex_modify_qp(self->fd, qp->handle, to_init,
					    IBV_QPS_INIT, 5));
	EXPECT_EQ(-EOPNOTSUPP, raw_ex_modify_qp(self->fd, qp->handle,
						to_init | IBV_QP_CAP,
						IBV_QPS_INIT, 0));
	EXPECT_EQ(-EOPNOTSUPP, raw_ex_modify_qp(self->fd, qp->handle,
						to_init | (1u << 30),
						IBV_QPS_INIT, 0));
	/* RESET to ERR is not a transition the verbs allow. */
	EXPECT_EQ(-EINVAL, raw_ex_modify_qp(self->fd, qp->handle, IBV_QP_STATE,
					    IBV_QPS_ERR, 0));
	EXPECT_EQ(IBV_QPS_RESET, su_qp_state(qp));
	/* Unknown handles. */
	EXPECT_EQ(-ENOENT, raw_ex_modify_qp(self->fd, UINT32_MAX, to_init,
					    IBV_QPS_INIT, 0));
	EXPECT_EQ(-ENOENT, su_cmd_destroy_cq(self->fd, UINT32_MAX));
	EXPECT_EQ(-ENOENT, su_cmd_dereg_mr(self->fd, 0x7fffffff));
	/* The well-formed call works. */
	EXPECT_EQ(0, raw_ex_modify_qp(self->fd, qp->handle, to_init,
				      IBV_QPS_INIT, 0));
	EXPECT_EQ(IBV_QPS_INIT, su_qp_state(qp));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_dealloc_pd(ipd));
	free(buf);
}

/* ------------------------------------------------------------------ */
/* Doorbell pages: reused clean, and running out of them               */
/* ------------------------------------------------------------------ */

/* A bare context: the uverbs fd with GET_CONTEXT done, or -errno. */
static int bare_context(struct vrnic_ibv_alloc_ucontext_resp *drv)
{
	char path[64];
	int fd, err;

	snprintf(path, sizeof(path), "/dev/infiniband/uverbs%d", uverbs_n);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = su_get_context(fd, NULL, 0, NULL, drv);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

static void doorbell_marker_child(int wfd)
{
	struct vrnic_ibv_alloc_ucontext_resp drv;
	volatile uint32_t *db;
	int fd, i;

	fd = bare_context(&drv);
	CHILD_CHECK(fd >= 0);
	db = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		  drv.db_mmap_key);
	CHILD_CHECK(db != MAP_FAILED);
	for (i = 2; i < 1024; i++)
		db[i] = 0xdead0000 | i;
	CHILD_CHECK(db[700] == (0xdead0000 | 700));
	CHILD_CHECK(write(wfd, &drv.db_page_index, 4) == 4);
	/* Exit with the page still mapped: the kernel cleans up. */
	_exit(0);
}

/*
 * The kick page (spec 2.2): scripts/vm boots guests with BAR0 on a page of
 * its own, so every context gets one. It maps only as one page and never
 * executable, and one store to it wakes a sleeping model like the KICK
 * method does.
 */
TEST_F(raw2, kick_page_wakes_the_model)
{
	struct vrnic_ibv_alloc_ucontext_resp drv;
	volatile uint32_t *page;
	void *bad;
	int fd;

	ASSERT_LE(0, uverbs_n);
	fd = bare_context(&drv);
	ASSERT_LE(0, fd);
	ASSERT_TRUE(drv.comp_mask & VRNIC_ALLOC_UCONTEXT_RESP_KICK_PAGE)
		TH_LOG("no kick page (is the guest booted without pci=resource_alignment, or user_kick=0?)");
	EXPECT_EQ(VRNIC_IVSHMEM_DOORBELL, drv.kick_offset);
	EXPECT_EQ(VRNIC_IVSHMEM_DOORBELL_VAL(VRNIC_MODEL_PEER_ID,
					     VRNIC_KICK_DATA_WAKEUP),
		  drv.kick_value);
	bad = mmap(NULL, 4096, PROT_WRITE | PROT_EXEC, MAP_SHARED, fd,
		   drv.kick_mmap_key);
	EXPECT_EQ(MAP_FAILED, bad);
	EXPECT_EQ(EPERM, errno);
	bad = mmap(NULL, 8192, PROT_WRITE, MAP_SHARED, fd, drv.kick_mmap_key);
	EXPECT_EQ(MAP_FAILED, bad);
	EXPECT_EQ(EINVAL, errno);
	bad = mmap(NULL, 4096, PROT_WRITE, MAP_PRIVATE, fd, drv.kick_mmap_key);
	EXPECT_EQ(MAP_FAILED, bad);
	page = mmap(NULL, 4096, PROT_WRITE, MAP_SHARED, fd, drv.kick_mmap_key);
	ASSERT_NE(MAP_FAILED, (void *)page);

	compare_kicks(_metadata, self, SU_KICK_NEVER, page + drv.kick_offset / 4,
		      drv.kick_value, 300, "the kick page");
	munmap((void *)page, 4096);
	close(fd);
}

TEST(doorbell_page_reused_clean)
{
	struct vrnic_ibv_alloc_ucontext_resp drv;
	volatile uint32_t *db;
	int pipefd[2], fds[16], n = 0, st, i, found = -1;
	uint32_t page;
	pid_t pid;

	ASSERT_LE(0, uverbs_n);
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		doorbell_marker_child(pipefd[1]);
	ASSERT_EQ(4, read(pipefd[0], &page, 4));
	st = su_wait_child(pid, 10000);
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	/* Take contexts until one gets the dead process's page. */
	for (n = 0; n < 16 && found < 0; n++) {
		fds[n] = bare_context(&drv);
		ASSERT_LE(0, fds[n]);
		if (drv.db_page_index == page)
			found = n;
	}
	ASSERT_LE(0, found) TH_LOG("page %u never came back", page);
	db = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fds[found],
		  drv.db_mmap_key);
	ASSERT_NE(MAP_FAILED, (void *)db);
	/* Nothing of the previous owner's: slots 1..511 all zero. */
	for (i = 2; i < 1024; i++)
		if (db[i])
			break;
	EXPECT_EQ(1024, i) TH_LOG("word %d of the reused page is %#x", i,
				  i < 1024 ? db[i] : 0);
	munmap((void *)db, 4096);
	for (i = 0; i < n; i++)
		close(fds[i]);
}

TEST(contexts_run_out_cleanly)
{
	struct vrnic_ibv_alloc_ucontext_resp drv;
	struct rlimit rl = { 8192, 8192 };
	struct su_res before, full, after;
	int *fds, n = 0, err = 0, i;
	struct ibv_context *ctx;
	struct ibv_pd *pd;

	ASSERT_LE(0, uverbs_n);
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	ASSERT_EQ(0, su_res_get(&before));
	fds = calloc(4096, sizeof(int));
	ASSERT_NE(NULL, fds);
	while (n < 4096) {
		err = bare_context(&drv);
		if (err < 0)
			break;
		fds[n++] = err;
	}
	TH_LOG("%d contexts, then %s", n, strerror(-err));
	/* One doorbell page each, from a BAR of thousands of pages at most. */
	ASSERT_GT(4096, n);
	EXPECT_LE(64, n);
	EXPECT_EQ(-ENOMEM, err);
	ASSERT_EQ(0, su_res_get(&full));
	EXPECT_EQ(before.ctx + n, full.ctx);

	/* Full: libibverbs cannot open the device either ... */
	EXPECT_EQ(NULL, su_open());
	/* ... one freed page is enough for one more, which works. */
	close(fds[n / 2]);
	ctx = NULL;
	for (i = 0; i < 50 && !ctx; i++) {
		ctx = su_open();
		if (!ctx)
			su_sleep_ms(20);
	}
	ASSERT_NE(NULL, ctx);
	pd = ibv_alloc_pd(ctx);
	EXPECT_NE(NULL, pd);
	if (pd)
		ibv_dealloc_pd(pd);
	ibv_close_device(ctx);

	for (i = 0; i < n; i++)
		if (i != n / 2)
			close(fds[i]);
	free(fds);
	EXPECT_EQ(0, su_res_wait(&before, &after, 10000))
		TH_LOG("ctx %ld, was %ld", after.ctx, before.ctx);
}

/* ------------------------------------------------------------------ */
/* A bare context: its response, QUERY_LAYOUT, KICK, CREATE_CQ udata   */
/* ------------------------------------------------------------------ */

struct get_context_resp {
	struct ib_uverbs_get_context_resp core;
	struct vrnic_ibv_alloc_ucontext_resp drv;
};

static int get_context(int fd, struct get_context_resp *resp,
		       const __u64 *drv_in, size_t drv_in_len)
{
	int ret;

	memset(resp, 0, sizeof(*resp));
	ret = su_get_context(fd, drv_in, drv_in_len, &resp->core, &resp->drv);
	if (!ret)
		close(resp->core.async_fd);
	return ret;
}

/* CREATE_CQ with @trailer after the driver's part (none if ~0). */
static int create_cq_trailer(int fd, __u32 cqe,
			     const struct vrnic_ibv_create_cq *drv,
			     __u64 trailer, struct cq_resp *resp)
{
	struct cq_cmd c = {};
	size_t len = sizeof(c.hdr) + sizeof(c.cmd) + sizeof(c.drv);

	memset(resp, 0, sizeof(*resp));
	c.cmd.response = (__u64)(uintptr_t)resp;
	c.cmd.cqe = cqe;
	c.cmd.comp_channel = -1;
	c.drv = *drv;
	if (trailer != ~0ULL) {
		c.trailer = trailer;
		len += sizeof(c.trailer);
	}
	return su_uverbs_write(fd, IB_USER_VERBS_CMD_CREATE_CQ, &c, len,
			       sizeof(resp->core) + sizeof(resp->drv));
}

static int query_layout(int fd, struct vrnic_layout *l, __u16 len)
{
	struct su_ioctl io;

	return layout_call(fd, VRNIC_OBJECT_DEVICE, VRNIC_METHOD_QUERY_LAYOUT,
			   l, len, &io);
}

FIXTURE(ctx) {
	int fd;
	struct get_context_resp resp;
};

FIXTURE_SETUP(ctx)
{
	self->fd = su_open_uverbs();
	ASSERT_LE(0, self->fd) TH_LOG("no uverbs device for " SU_DEV);
	ASSERT_EQ(0, get_context(self->fd, &self->resp, NULL, 0));
}

FIXTURE_TEARDOWN(ctx)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(ctx, ucontext_response)
{
	struct vrnic_ibv_alloc_ucontext_resp *r = &self->resp.drv;

	/* scripts/vm gives BAR0 its own page: the kick page is offered. */
	EXPECT_EQ(VRNIC_ALLOC_UCONTEXT_RESP_KICK_PAGE, r->comp_mask);
	EXPECT_EQ(0ULL, r->kick_mmap_key % 4096);
	EXPECT_NE(r->db_mmap_key, r->kick_mmap_key);
	EXPECT_EQ(1, r->version_major);
	EXPECT_EQ(4096U, r->db_page_size);
	EXPECT_LE(2U, r->db_page_index);
	/* The first entry of the context: any page-aligned offset. */
	EXPECT_EQ(0ULL, r->db_mmap_key % 4096);
	EXPECT_EQ(64U, r->cqe_size);
	EXPECT_EQ(6, r->sq_wqe_shift_min);
	EXPECT_EQ(11, r->sq_wqe_shift_max);
	EXPECT_EQ(5, r->rq_wqe_shift_min);
	EXPECT_EQ(11, r->rq_wqe_shift_max);
	EXPECT_LE(2U, r->max_qp_wr);
	EXPECT_LE(2U, r->max_cqe);
	EXPECT_LE(1U, r->max_sge);
	EXPECT_LE(1U, self->resp.core.num_comp_vectors);
}

TEST_F(ctx, doorbell_page_mapping)
{
	off_t key = self->resp.drv.db_mmap_key;
	void *p;

	/* Shared, one page, at the key: fine. */
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, key);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap: %s", strerror(errno));
	/* Slot 0 is the device's status word: neither FATAL nor garbage. */
	EXPECT_EQ(0U, *(volatile __u32 *)p & ~(VRNIC_DB_STATUS_NEED_WAKEUP |
						VRNIC_DB_STATUS_RQ_WAKEUP));
	munmap(p, 4096);

	/* Private, too long, executable, or at an unknown key: refused. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE, self->fd, key));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 8192, PROT_READ | PROT_WRITE,
				   MAP_SHARED, self->fd, key));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ | PROT_EXEC,
				   MAP_SHARED, self->fd, key));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED,
				   self->fd, key + 1000 * 4096));
}

TEST(ucontext_rejects_unknown_input)
{
	struct get_context_resp resp;
	__u64 in[2] = { 0, 0 };
	int fd;

	fd = su_open_uverbs();
	ASSERT_LE(0, fd);
	in[1] = 1;
	EXPECT_EQ(-EINVAL, get_context(fd, &resp, in, sizeof(in)));
	/* All-zero input is what an older provider sends: accepted. */
	in[1] = 0;
	EXPECT_EQ(0, get_context(fd, &resp, in, sizeof(in)));
	close(fd);
}

TEST_F(ctx, query_layout)
{
	struct vrnic_layout l;

	memset(&l, 0xa5, sizeof(l));
	ASSERT_EQ(0, query_layout(self->fd, &l, sizeof(l)));
	EXPECT_EQ(self->resp.drv.version_major, l.version_major);
	EXPECT_EQ(self->resp.drv.version_minor, l.version_minor);
	EXPECT_EQ((__u32)VRNIC_UVERBS_ABI_VERSION, l.abi_version);
	EXPECT_EQ(self->resp.drv.db_page_index, l.db_page_index);
	EXPECT_EQ(4096U, l.db_page_size);
	EXPECT_EQ(512U, l.db_slots_per_page);
	EXPECT_EQ(1U, l.db_first_obj_slot);
	EXPECT_EQ(self->resp.drv.db_mmap_key, l.db_mmap_key);
}

TEST_F(ctx, query_layout_longer_buffer_is_zero_filled)
{
	__u8 buf[sizeof(struct vrnic_layout) + 16];
	size_t i;

	memset(buf, 0xa5, sizeof(buf));
	ASSERT_EQ(0, query_layout(self->fd, (void *)buf, sizeof(buf)));
	for (i = sizeof(struct vrnic_layout); i < sizeof(buf); i++)
		EXPECT_EQ(0, buf[i]);
}

TEST_F(ctx, query_layout_malformed)
{
	struct vrnic_layout l, l2;
	struct su_ioctl io;

	/* Output shorter than the struct. */
	EXPECT_EQ(-EINVAL, query_layout(self->fd, &l, 16));

	/* Mandatory attribute missing. */
	su_ioctl_init(&io, VRNIC_OBJECT_DEVICE, VRNIC_METHOD_QUERY_LAYOUT, 0);
	EXPECT_EQ(-EINVAL, su_ioctl_call(self->fd, &io));

	/* Wrong driver_id. */
	su_ioctl_init(&io, VRNIC_OBJECT_DEVICE, VRNIC_METHOD_QUERY_LAYOUT, 1);
	su_ioctl_ptr(&io, 0, VRNIC_ATTR_QUERY_LAYOUT_RESP, &l, sizeof(l));
	io.hdr.driver_id = VRNIC_RDMA_DRIVER_ID + 5;
	EXPECT_EQ(-EINVAL, su_ioctl_call(self->fd, &io));

	/* Reserved header field. */
	su_ioctl_init(&io, VRNIC_OBJECT_DEVICE, VRNIC_METHOD_QUERY_LAYOUT, 1);
	su_ioctl_ptr(&io, 0, VRNIC_ATTR_QUERY_LAYOUT_RESP, &l, sizeof(l));
	io.hdr.reserved1 = 1;
	EXPECT_EQ(-EPROTONOSUPPORT, su_ioctl_call(self->fd, &io));

	/* Reserved attribute field. */
	su_ioctl_init(&io, VRNIC_OBJECT_DEVICE, VRNIC_METHOD_QUERY_LAYOUT, 1);
	su_ioctl_ptr(&io, 0, VRNIC_ATTR_QUERY_LAYOUT_RESP, &l, sizeof(l));
	io.attrs[0].attr_data.reserved = 1;
	EXPECT_EQ(-EINVAL, su_ioctl_call(self->fd, &io));

	/* The same attribute twice. */
	su_ioctl_init(&io, VRNIC_OBJECT_DEVICE, VRNIC_METHOD_QUERY_LAYOUT, 2);
	su_ioctl_ptr(&io, 0, VRNIC_ATTR_QUERY_LAYOUT_RESP, &l, sizeof(l));
	su_ioctl_ptr(&io, 1, VRNIC_ATTR_QUERY_LAYOUT_RESP, &l2, sizeof(l2));
	EXPECT_EQ(-EINVAL, su_ioctl_call(self->fd, &io));

	/* An unknown attribute the caller marks mandatory. */
	su_ioctl_init(&io, VRNIC_OBJECT_DEVICE, VRNIC_METHOD_QUERY_LAYOUT, 2);
	su_ioctl_ptr(&io, 0, VRNIC_ATTR_QUERY_LAYOUT_RESP, &l, sizeof(l));
	su_ioctl_ptr(&io, 1, VRNIC_ATTR_QUERY_LAYOUT_RESP + 7, &l2, sizeof(l2));
	io.attrs[1].flags = UVERBS_ATTR_F_MANDATORY;
	EXPECT_EQ(-EPROTONOSUPPORT, su_ioctl_call(self->fd, &io));

	/* ... and one it does not: ignored. */
	io.attrs[1].flags = 0;
	EXPECT_EQ(0, su_ioctl_call(self->fd, &io));

	/* Unknown method of the vrnic object. */
	su_ioctl_init(&io, VRNIC_OBJECT_DEVICE, VRNIC_METHOD_QUERY_LAYOUT + 9, 0);
	EXPECT_EQ(-EPROTONOSUPPORT, su_ioctl_call(self->fd, &io));

	/* Header length that does not match num_attrs. */
	su_ioctl_init(&io, VRNIC_OBJECT_DEVICE, VRNIC_METHOD_QUERY_LAYOUT, 1);
	su_ioctl_ptr(&io, 0, VRNIC_ATTR_QUERY_LAYOUT_RESP, &l, sizeof(l));
	io.hdr.length += 8;
	EXPECT_EQ(-EINVAL, su_ioctl_call(self->fd, &io));
}

TEST(query_layout_needs_ucontext)
{
	struct vrnic_layout l;
	int fd = su_open_uverbs();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, query_layout(fd, &l, sizeof(l)));
	close(fd);
}

TEST_F(ctx, kick)
{
	struct su_ioctl io;
	__u64 junk = 0;

	su_ioctl_init(&io, VRNIC_OBJECT_DEVICE, VRNIC_METHOD_KICK, 0);
	EXPECT_EQ(0, su_ioctl_call(self->fd, &io));

	su_ioctl_init(&io, VRNIC_OBJECT_DEVICE, VRNIC_METHOD_KICK, 1);
	su_ioctl_ptr(&io, 0, VRNIC_ATTR_QUERY_LAYOUT_RESP, &junk, sizeof(junk));
	io.attrs[0].flags = UVERBS_ATTR_F_MANDATORY;
	EXPECT_EQ(-EPROTONOSUPPORT, su_ioctl_call(self->fd, &io));
}

TEST_F(ctx, create_cq_udata)
{
	struct vrnic_ibv_create_cq drv = {};
	struct cq_resp resp;
	void *ring;
	off_t key;

	drv.comp_mask = 1;
	EXPECT_EQ(-EINVAL, create_cq_trailer(self->fd, 100, &drv, ~0ULL, &resp));
	drv.comp_mask = 0;
	drv.reserved = 1;
	EXPECT_EQ(-EINVAL, create_cq_trailer(self->fd, 100, &drv, ~0ULL, &resp));
	drv.reserved = 0;
	/* Unknown trailing input must be zero. */
	EXPECT_EQ(-EINVAL, create_cq_trailer(self->fd, 100, &drv, 1, &resp));
	/* Too deep. */
	EXPECT_EQ(-EINVAL, create_cq_trailer(self->fd, 1U << 30, &drv, ~0ULL, &resp));

	ASSERT_EQ(0, create_cq_trailer(self->fd, 100, &drv, 0, &resp));
	EXPECT_EQ(0U, resp.drv.comp_mask);
	EXPECT_EQ(128U, resp.core.cqe);
	EXPECT_EQ(7U, resp.drv.log_depth);
	EXPECT_EQ(128ULL * 64, resp.drv.ring_size);
	EXPECT_NE(0U, resp.drv.cqn);
	EXPECT_LE(1U, resp.drv.db_slot);
	EXPECT_GE(511U, resp.drv.db_slot);

	key = resp.drv.ring_mmap_key;
	ring = mmap(NULL, resp.drv.ring_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED, self->fd, key);
	ASSERT_NE(MAP_FAILED, ring) TH_LOG("mmap ring: %s", strerror(errno));
	/* A fresh ring holds no valid CQE. */
	EXPECT_EQ(0, ((volatile __u8 *)ring)[0x1b] & 1);
	munmap(ring, resp.drv.ring_size);

	ASSERT_EQ(0, su_cmd_destroy_cq(self->fd, resp.core.cq_handle));
	/* The entry went with the CQ. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, resp.drv.ring_size, PROT_READ,
				   MAP_SHARED, self->fd, key));
}

TEST_F(ctx, cq_ring_outlives_cq_while_mapped)
{
	struct vrnic_ibv_create_cq drv = {};
	struct cq_resp resp;
	volatile __u8 *ring;

	ASSERT_EQ(0, create_cq_trailer(self->fd, 2, &drv, ~0ULL, &resp));
	ring = mmap(NULL, resp.drv.ring_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED, self->fd, resp.drv.ring_mmap_key);
	ASSERT_NE(MAP_FAILED, (void *)ring);
	ASSERT_EQ(0, su_cmd_destroy_cq(self->fd, resp.core.cq_handle));
	/* Still our memory until munmap: no fault, no reuse. */
	ring[0] = 0x5a;
	EXPECT_EQ(0x5a, ring[0]);
	munmap((void *)ring, resp.drv.ring_size);
}

TEST_HARNESS_MAIN
