// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic_ktest case "frwr": fast registration as a storage ULP uses it. QP 0
 * owns an MR of two pages that are not contiguous, registered with
 * IB_WR_REG_MR; QP 1 writes and reads through its rkey (across the page
 * boundary, bytes checked), QP 0 invalidates it with IB_WR_LOCAL_INV and
 * the key fails, the MR is registered again under the next key byte and
 * the previous key fails, and QP 1 invalidates it remotely with a SEND
 * with invalidate (IB_WC_WITH_INVALIDATE and the key at QP 0).
 */
#include <linux/mm.h>
#include <linux/scatterlist.h>

#include "ktest.h"

#define KT_FR_PAGES	2
#define KT_FR_LEN	(KT_FR_PAGES * PAGE_SIZE)
#define KT_FR_OFF	(PAGE_SIZE / 2)	/* writes cross the page boundary */
#define KT_FR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ)

struct kt_fr {
	struct ib_mr *mr;
	struct page *page[KT_FR_PAGES];
	struct scatterlist sg[KT_FR_PAGES];
	bool mapped;
};

static u8 kt_fr_pattern(u32 i, u8 seed)
{
	return (u8)(i * 7 + seed);
}

/* Byte @i of the MR's range, through its pages. */
static u8 *kt_fr_byte(struct kt_fr *f, u32 i)
{
	return (u8 *)page_address(f->page[i / PAGE_SIZE]) + i % PAGE_SIZE;
}

static int kt_fr_check_range(struct kt_fr *f, u32 off, const u8 *want,
			     u32 len, const char *what)
{
	u32 i;

	for (i = 0; i < len; i++)
		if (*kt_fr_byte(f, off + i) != want[i])
			return kt_check(false, what);
	return 0;
}

/* Maps the pages into the MR's page list and posts REG_MR with @key_byte. */
static int kt_fr_reg(struct kt_ctx *c, struct kt_fr *f, struct kt_wr *w,
		     u8 key_byte)
{
	struct ib_reg_wr wr = {
		.wr = {
			.wr_cqe = &w->cqe,
			.opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED,
		},
		.mr = f->mr,
		.access = KT_FR_ACCESS,
	};
	int n, err;

	n = ib_map_mr_sg(f->mr, f->sg, KT_FR_PAGES, NULL, PAGE_SIZE);
	err = kt_check(n == KT_FR_PAGES && f->mr->length == KT_FR_LEN,
		       "ib_map_mr_sg maps both pages");
	if (err)
		return err;
	ib_update_fast_reg_key(f->mr, key_byte);
	wr.key = f->mr->rkey;
	kt_wr_init(w);
	err = ib_post_send(c->qp[0], &wr.wr, NULL);
	return err ?: kt_wait(w, "REG_MR", IB_WC_REG_MR, IB_WC_SUCCESS);
}

static int kt_fr_local_inv(struct kt_ctx *c, struct kt_wr *w, u32 key)
{
	struct ib_send_wr wr = {
		.wr_cqe = &w->cqe,
		.opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = key,
	};
	int err;

	kt_wr_init(w);
	err = ib_post_send(c->qp[0], &wr, NULL);
	return err ?: kt_wait(w, "LOCAL_INV", IB_WC_LOCAL_INV, IB_WC_SUCCESS);
}

/* QP 1 writes or reads @len bytes of its buffer at MR offset @off. */
static int kt_fr_rdma(struct kt_ctx *c, struct kt_fr *f, struct kt_wr *w,
		      bool write, u32 rkey, u32 off, u32 len,
		      enum ib_wc_status status, const char *what)
{
	struct ib_sge sge = kt_sge(c, 1, 0, len);
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_cqe = &w->cqe,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = write ? IB_WR_RDMA_WRITE : IB_WR_RDMA_READ,
			.send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = f->mr->iova + off,
		.rkey = rkey,
	};
	int err;

	kt_wr_init(w);
	err = ib_post_send(c->qp[1], &wr.wr, NULL);
	return err ?: kt_wait(w, what, write ? IB_WC_RDMA_WRITE :
			      IB_WC_RDMA_READ, status);
}

/* After a failed access both QPs are in ERR: connect them again. */
static int kt_fr_reconnect(struct kt_ctx *c, const struct ib_gid_attr *gid)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };
	int i, err;

	for (i = 0; i < 2; i++) {
		err = ib_modify_qp(c->qp[i], &attr, IB_QP_STATE);
		if (err)
			return err;
	}
	err = kt_connect(c, 0, 1, gid);
	return err ?: kt_connect(c, 1, 0, gid);
}

/* A write through @key fails and leaves the MR's pages as they were. */
static int kt_fr_key_fails(struct kt_ctx *c, struct kt_fr *f,
			   struct kt_wr *w, u32 key,
			   const struct ib_gid_attr *gid, const char *what)
{
	u8 *before = c->buf[0];
	u32 i;
	int err;

	for (i = 0; i < KT_FR_LEN && i < KT_BUF; i++)
		before[i] = *kt_fr_byte(f, KT_FR_OFF + i);
	memset(c->buf[1], 0xee, KT_BUF);
	err = kt_fr_rdma(c, f, w, true, key, KT_FR_OFF, KT_BUF,
			 IB_WC_REM_ACCESS_ERR, what);
	if (!err)
		err = kt_fr_check_range(f, KT_FR_OFF, before, KT_BUF,
					"a failed write left the pages alone");
	return err ?: kt_fr_reconnect(c, gid);
}

/* QP 1 writes a pattern through @key and reads it back; bytes checked. */
static int kt_fr_write_read(struct kt_ctx *c, struct kt_fr *f,
			    struct kt_wr *w, u32 key, u8 seed)
{
	u8 *b = c->buf[1];
	u32 i;
	int err;

	for (i = 0; i < KT_BUF; i++)
		b[i] = kt_fr_pattern(i, seed);
	err = kt_fr_rdma(c, f, w, true, key, KT_FR_OFF, KT_BUF,
			 IB_WC_SUCCESS, "RDMA WRITE through the FRMR");
	if (!err)
		err = kt_fr_check_range(f, KT_FR_OFF, b, KT_BUF,
					"written bytes in both pages");
	if (err)
		return err;
	/* Change the pages under the MR and read them back. */
	for (i = 0; i < KT_BUF; i++)
		*kt_fr_byte(f, KT_FR_OFF + i) = kt_fr_pattern(i, seed + 1);
	memset(b, 0, KT_BUF);
	err = kt_fr_rdma(c, f, w, false, key, KT_FR_OFF, KT_BUF,
			 IB_WC_SUCCESS, "RDMA READ through the FRMR");
	if (!err)
		err = kt_fr_check_range(f, KT_FR_OFF, b, KT_BUF,
					"read bytes from both pages");
	return err;
}

/* QP 1 sends 64 bytes with invalidate of @key; QP 0 receives them. */
static int kt_fr_send_inv(struct kt_ctx *c, struct kt_wr *s,
			  struct kt_wr *r, u32 key)
{
	struct ib_sge sge = kt_sge(c, 1, 0, 64);
	struct ib_send_wr wr = {
		.wr_cqe = &s->cqe,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IB_WR_SEND_WITH_INV,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = key,
	};
	u8 *b = c->buf[1];
	u32 i;
	int err;

	for (i = 0; i < 64; i++)
		b[i] = kt_fr_pattern(i, 0x5a);
	memset(c->buf[0], 0, 64);
	err = kt_post_recv(c, 0, r, 0, 64);
	if (err)
		return err;
	kt_wr_init(s);
	err = ib_post_send(c->qp[1], &wr, NULL);
	if (!err)
		err = kt_wait(s, "SEND_WITH_INV", IB_WC_SEND, IB_WC_SUCCESS);
	if (!err)
		err = kt_wait(r, "receive of SEND_WITH_INV", IB_WC_RECV,
			      IB_WC_SUCCESS);
	if (!err)
		err = kt_check(r->wc.byte_len == 64 &&
			       !memcmp(c->buf[0], b, 64),
			       "SEND_WITH_INV's bytes");
	if (!err)
		err = kt_check(r->wc.wc_flags & IB_WC_WITH_INVALIDATE &&
			       !(r->wc.wc_flags & IB_WC_WITH_IMM) &&
			       r->wc.ex.invalidate_rkey == key,
			       "receive reports the invalidated rkey");
	return err;
}

static int kt_fr_steps(struct kt_ctx *c, struct kt_fr *f,
		       const struct ib_gid_attr *gid)
{
	const struct ib_device_attr *a = &c->ibdev->attrs;
	u32 k1, k2, k3;
	int err;

	err = kt_check(a->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS &&
		       a->max_fast_reg_page_list_len >= KT_FR_PAGES,
		       "MEM_MGT_EXTENSIONS and max_fast_reg_page_list_len");
	if (err)
		return err;
	err = kt_fr_reg(c, f, &c->wr[0], 0x11);
	k1 = f->mr->rkey;
	if (!err)
		err = kt_check((k1 & 0xff) == 0x11 && f->mr->lkey == k1,
			       "keys carry the new key byte");
	if (!err)
		err = kt_fr_write_read(c, f, &c->wr[1], k1, 3);
	if (!err)
		err = kt_fr_local_inv(c, &c->wr[2], k1);
	if (!err)
		err = kt_fr_key_fails(c, f, &c->wr[3], k1, gid,
				      "write through an invalidated key");
	/* Registered again under the next key byte: the old key is stale. */
	if (!err)
		err = kt_fr_reg(c, f, &c->wr[4], ib_inc_rkey(k1) & 0xff);
	k2 = f->mr->rkey;
	if (!err)
		err = kt_check(k2 != k1 && (k2 & ~0xffU) == (k1 & ~0xffU),
			       "a new key for the same MR");
	if (!err)
		err = kt_fr_write_read(c, f, &c->wr[5], k2, 9);
	if (!err)
		err = kt_fr_key_fails(c, f, &c->wr[6], k1, gid,
				      "write through the stale key");
	/* The peer invalidates it with its SEND. */
	if (!err)
		err = kt_fr_send_inv(c, &c->wr[7], &c->wr[8], k2);
	if (!err)
		err = kt_fr_key_fails(c, f, &c->wr[9], k2, gid,
				      "write through a remotely invalidated key");
	if (!err)
		err = kt_fr_reg(c, f, &c->wr[10], ib_inc_rkey(k2) & 0xff);
	k3 = f->mr->rkey;
	if (!err)
		err = kt_fr_write_read(c, f, &c->wr[11], k3, 17);
	return err;
}

int kt_frwr(struct kt_ctx *c, const struct ib_gid_attr *gid)
{
	struct kt_fr f = {};
	int i, err;

	err = kt_create_qps(c, IB_QPT_RC, NULL);
	if (!err)
		err = kt_connect(c, 0, 1, gid);
	if (!err)
		err = kt_connect(c, 1, 0, gid);
	if (err)
		return err;
	sg_init_table(f.sg, KT_FR_PAGES);
	for (i = 0; i < KT_FR_PAGES; i++) {
		f.page[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!f.page[i]) {
			err = -ENOMEM;
			goto out;
		}
		sg_set_page(&f.sg[i], f.page[i], PAGE_SIZE, 0);
	}
	if (ib_dma_map_sg(c->ibdev, f.sg, KT_FR_PAGES, DMA_BIDIRECTIONAL) !=
	    KT_FR_PAGES) {
		err = -ENOMEM;
		goto out;
	}
	f.mapped = true;
	f.mr = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG, 4);
	if (IS_ERR(f.mr)) {
		err = PTR_ERR(f.mr);
		f.mr = NULL;
		pr_err("vrnic_ktest: ib_alloc_mr: %d\n", err);
		goto out;
	}
	err = kt_fr_steps(c, &f, gid);
out:
	/* Destroyed before the MR: no WQE of theirs can still reach it. */
	for (i = 0; i < 2; i++) {
		if (c->qp[i])
			ib_destroy_qp(c->qp[i]);
		c->qp[i] = NULL;
	}
	if (f.mr)
		ib_dereg_mr(f.mr);
	if (f.mapped)
		ib_dma_unmap_sg(c->ibdev, f.sg, KT_FR_PAGES, DMA_BIDIRECTIONAL);
	for (i = 0; i < KT_FR_PAGES; i++)
		if (f.page[i])
			__free_page(f.page[i]);
	return err;
}
