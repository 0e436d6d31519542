// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel side of the vrnic uverbs ABI, driven without libibverbs or
 * the provider: the ucontext response and its doorbell mapping, the udata
 * checks of create_cq, and the driver namespace (VRNIC_OBJECT_DEVICE:
 * KICK, QUERY_LAYOUT) accepting well-formed and rejecting malformed
 * ioctls.
 */
#include "suite.h"
#include "kselftest_harness.h"

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

struct create_cq_cmd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_cq cmd;
	struct vrnic_ibv_create_cq drv;
	__u64 trailer;
};

struct create_cq_resp {
	struct ib_uverbs_create_cq_resp core;
	struct vrnic_ibv_create_cq_resp drv;
};

static int create_cq(int fd, __u32 cqe, const struct vrnic_ibv_create_cq *drv,
		     __u64 trailer, struct create_cq_resp *resp)
{
	struct create_cq_cmd c = {};
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
			    sizeof(*resp));
}

static int destroy_cq(int fd, __u32 handle)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_destroy_cq cmd;
	} c = {};
	struct ib_uverbs_destroy_cq_resp resp;

	c.cmd.response = (__u64)(uintptr_t)&resp;
	c.cmd.cq_handle = handle;
	return su_uverbs_write(fd, IB_USER_VERBS_CMD_DESTROY_CQ, &c, sizeof(c),
			    sizeof(resp));
}

static int query_layout(int fd, struct vrnic_layout *l, __u16 len)
{
	struct su_ioctl io;

	su_ioctl_init(&io, VRNIC_OBJECT_DEVICE, VRNIC_METHOD_QUERY_LAYOUT, 1);
	su_ioctl_ptr(&io, 0, VRNIC_ATTR_QUERY_LAYOUT_RESP, l, len);
	return su_ioctl_call(fd, &io);
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
	struct create_cq_resp resp;
	void *ring;
	off_t key;

	drv.comp_mask = 1;
	EXPECT_EQ(-EINVAL, create_cq(self->fd, 100, &drv, ~0ULL, &resp));
	drv.comp_mask = 0;
	drv.reserved = 1;
	EXPECT_EQ(-EINVAL, create_cq(self->fd, 100, &drv, ~0ULL, &resp));
	drv.reserved = 0;
	/* Unknown trailing input must be zero. */
	EXPECT_EQ(-EINVAL, create_cq(self->fd, 100, &drv, 1, &resp));
	/* Too deep. */
	EXPECT_EQ(-EINVAL, create_cq(self->fd, 1U << 30, &drv, ~0ULL, &resp));

	ASSERT_EQ(0, create_cq(self->fd, 100, &drv, 0, &resp));
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

	ASSERT_EQ(0, destroy_cq(self->fd, resp.core.cq_handle));
	/* The entry went with the CQ. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, resp.drv.ring_size, PROT_READ,
				   MAP_SHARED, self->fd, key));
}

TEST_F(ctx, cq_ring_outlives_cq_while_mapped)
{
	struct vrnic_ibv_create_cq drv = {};
	struct create_cq_resp resp;
	volatile __u8 *ring;

	ASSERT_EQ(0, create_cq(self->fd, 2, &drv, ~0ULL, &resp));
	ring = mmap(NULL, resp.drv.ring_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED, self->fd, resp.drv.ring_mmap_key);
	ASSERT_NE(MAP_FAILED, (void *)ring);
	ASSERT_EQ(0, destroy_cq(self->fd, resp.core.cq_handle));
	/* Still our memory until munmap: no fault, no reuse. */
	ring[0] = 0x5a;
	EXPECT_EQ(0x5a, ring[0]);
	munmap((void *)ring, resp.drv.ring_size);
}

TEST_HARNESS_MAIN
