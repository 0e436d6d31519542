// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic memory regions (device interface section 10.8).
 *
 * User MRs are pinned by ib_umem_get (so RLIMIT_MEMLOCK accounting is the
 * kernel's); their DMA blocks go to the device as a one- or two-level page
 * list that the device copies during REG_MR. Kernel users get the PD's DMA
 * MR (VRNIC_MR_F_PHYS), which addresses guest-physical memory directly.
 */
#include <rdma/ib_umem.h>
#include <rdma/iter.h>

#include "vrnic.h"

VRNIC_SAME(IB_ACCESS_REMOTE_WRITE, VRNIC_ACCESS_REMOTE_WRITE);
VRNIC_SAME(IB_ACCESS_REMOTE_READ, VRNIC_ACCESS_REMOTE_READ);
VRNIC_SAME(IB_ACCESS_MW_BIND, VRNIC_ACCESS_MW_BIND);

struct vrnic_pbl {
	struct vrnic_dma top;
	struct vrnic_dma *leaves;
	u32 nleaves;
	u8 level;
};

static void vrnic_pbl_free(struct vrnic_dev *dev, struct vrnic_pbl *pbl)
{
	u32 i;

	if (pbl->leaves) {
		for (i = 0; i < pbl->nleaves; i++)
			vrnic_dma_free(dev, &pbl->leaves[i]);
		kfree(pbl->leaves);
		pbl->leaves = NULL;
	}
	vrnic_dma_free(dev, &pbl->top);
}

static int vrnic_pbl_build(struct vrnic_dev *dev, struct ib_umem *umem,
			   unsigned long pgsz, u32 npages,
			   struct vrnic_pbl *pbl)
{
	struct ib_block_iter biter;
	__le64 *top, *leaf;
	u32 i, n = 0;
	int err;

	memset(pbl, 0, sizeof(*pbl));
	if (npages <= VRNIC_PBL_ENTRIES_PER_PAGE) {
		pbl->level = VRNIC_PBL_DIRECT;
		err = vrnic_dma_alloc(dev, &pbl->top, npages * sizeof(u64));
		if (err)
			return err;
		top = pbl->top.va;
		rdma_umem_for_each_dma_block(umem, &biter, pgsz) {
			if (n >= npages)
				break;
			top[n++] = cpu_to_le64(rdma_block_iter_dma_address(&biter));
		}
		if (n != npages) {
			vrnic_pbl_free(dev, pbl);
			return -EINVAL;
		}
		return 0;
	}

	pbl->level = VRNIC_PBL_INDIRECT;
	pbl->nleaves = DIV_ROUND_UP(npages, VRNIC_PBL_ENTRIES_PER_PAGE);
	err = vrnic_dma_alloc(dev, &pbl->top, pbl->nleaves * sizeof(u64));
	if (err)
		return err;
	pbl->leaves = kcalloc(pbl->nleaves, sizeof(*pbl->leaves), GFP_KERNEL);
	if (!pbl->leaves)
		goto err_nomem;
	top = pbl->top.va;
	for (i = 0; i < pbl->nleaves; i++) {
		if (vrnic_dma_alloc(dev, &pbl->leaves[i], VRNIC_PAGE_SIZE))
			goto err_nomem;
		top[i] = cpu_to_le64(pbl->leaves[i].dma);
	}
	rdma_umem_for_each_dma_block(umem, &biter, pgsz) {
		if (n >= npages)
			break;
		leaf = pbl->leaves[n / VRNIC_PBL_ENTRIES_PER_PAGE].va;
		leaf[n % VRNIC_PBL_ENTRIES_PER_PAGE] =
			cpu_to_le64(rdma_block_iter_dma_address(&biter));
		n++;
	}
	if (n != npages) {
		vrnic_pbl_free(dev, pbl);
		return -EINVAL;
	}
	return 0;

err_nomem:
	vrnic_pbl_free(dev, pbl);
	return -ENOMEM;
}

static int vrnic_reg_mr_cmd(struct vrnic_dev *dev, struct vrnic_mr *mr,
			    const struct vrnic_cmd_reg_mr *req)
{
	struct vrnic_cmd_reg_mr_resp resp = {};
	int err;

	err = vrnic_cmd_exec(dev, VRNIC_CMD_REG_MR, req, sizeof(*req), &resp,
			     sizeof(resp));
	if (err)
		return err;
	mr->handle = le32_to_cpu(resp.mr);
	if (mr->handle == VRNIC_HANDLE_NONE) {
		dev_err(&dev->pdev->dev, "REG_MR returned handle 0\n");
		return -EIO;
	}
	mr->ibmr.lkey = le32_to_cpu(resp.lkey);
	mr->ibmr.rkey = le32_to_cpu(resp.rkey);
	return 0;
}

struct ib_mr *vrnic_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct vrnic_dev *dev = to_vdev(ibpd->device);
	struct vrnic_cmd_reg_mr req = {};
	struct vrnic_mr *mr;
	int err;

	/* The DMA MR is local only: a global rkey would expose all memory. */
	if (access & ~IB_ACCESS_LOCAL_WRITE)
		return ERR_PTR(-EOPNOTSUPP);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	req.pd = cpu_to_le32(to_vpd(ibpd)->pdn);
	req.access = cpu_to_le32(access & VRNIC_ACCESS_LOCAL_WRITE);
	req.flags = cpu_to_le16(VRNIC_MR_F_PHYS);
	err = vrnic_reg_mr_cmd(dev, mr, &req);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

struct ib_mr *vrnic_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 virt_addr, int access,
				struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibpd->device);
	struct vrnic_cmd_reg_mr req = {};
	struct vrnic_pbl pbl;
	unsigned long pgsz;
	struct vrnic_mr *mr;
	size_t npages;
	int err;

	err = vrnic_udata_no_input(udata);
	if (err) {
		ibdev_dbg(ibpd->device, "reg_mr takes no udata\n");
		return ERR_PTR(err);
	}
	/*
	 * Optional flags (relaxed ordering) mean nothing to this device; the
	 * others are its own (VRNIC_SAME), MW_BIND from 1.8 on.
	 */
	access &= ~IB_ACCESS_OPTIONAL;
	if (access & ~(VRNIC_ACCESS_ALL |
		       (vrnic_has_mw(dev) ? VRNIC_ACCESS_MW_BIND : 0))) {
		ibdev_dbg(ibpd->device, "MR access %#x unsupported\n", access);
		return ERR_PTR(-EOPNOTSUPP);
	}
	if (!length || length > dev->caps.max_mr_size ||
	    virt_addr + length < virt_addr) {
		ibdev_dbg(ibpd->device, "MR of %llu bytes at %#llx\n", length,
			  virt_addr);
		return ERR_PTR(-EINVAL);
	}

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);

	mr->umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		goto err_free;
	}

	pgsz = ib_umem_find_best_pgsz(mr->umem, dev->caps.page_size_cap,
				      virt_addr);
	if (!pgsz) {
		ibdev_dbg(ibpd->device, "MR at %#llx: no page size fits\n",
			  virt_addr);
		err = -EINVAL;
		goto err_release;
	}
	npages = ib_umem_num_dma_blocks(mr->umem, pgsz);
	if (npages > U32_MAX) {
		ibdev_dbg(ibpd->device, "MR of %zu pages\n", npages);
		err = -EINVAL;
		goto err_release;
	}
	err = vrnic_pbl_build(dev, mr->umem, pgsz, npages, &pbl);
	if (err)
		goto err_release;

	req.pd = cpu_to_le32(to_vpd(ibpd)->pdn);
	req.access = cpu_to_le32(access);
	req.iova = cpu_to_le64(virt_addr);
	req.length = cpu_to_le64(length);
	req.pbl_addr = cpu_to_le64(pbl.top.dma);
	req.npages = cpu_to_le32(npages);
	req.page_shift = __ffs(pgsz);
	req.pbl_level = pbl.level;
	mr->npages = npages;
	mr->page_shift = req.page_shift;
	mr->access = access;
	err = vrnic_reg_mr_cmd(dev, mr, &req);
	/* The device copied the page list during the command. */
	vrnic_pbl_free(dev, &pbl);
	if (err)
		goto err_release;
	return &mr->ibmr;

err_release:
	vrnic_umem_release(dev, mr->umem);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

/*
 * A new MR with what changes and what the old one had otherwise, which the
 * core then puts in the old one's place and destroys the old one: new keys,
 * and on failure the old MR stands unchanged.
 */
struct ib_mr *vrnic_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 virt_addr, int access,
				  struct ib_pd *pd, struct ib_udata *udata)
{
	struct vrnic_mr *mr = to_vmr(ibmr);

	/* Only uverbs calls this, with an MR of reg_user_mr's (an umem). */
	if (!(flags & IB_MR_REREG_TRANS)) {
		start = mr->umem->address;
		length = ibmr->length;
		virt_addr = ibmr->iova;
	}
	if (!(flags & IB_MR_REREG_ACCESS))
		access = mr->access;
	if (!(flags & IB_MR_REREG_PD))
		pd = ibmr->pd;
	return vrnic_reg_user_mr(pd, start, length, virt_addr, access, udata);
}

int vrnic_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct vrnic_mr *mr = to_vmr(ibmr);
	int err;

	err = vrnic_cmd_destroy(to_vdev(ibmr->device), VRNIC_CMD_DEREG_MR,
				mr->handle);
	if (err)
		return err;
	/*
	 * No access through the MR is in progress: unpin (or, while the
	 * device may still run unreset, keep the pages pinned).
	 */
	vrnic_umem_release(to_vdev(ibmr->device), mr->umem);
	vrnic_dma_free(to_vdev(ibmr->device), &mr->pbl);
	vrnic_poison(mr, sizeof(*mr));
	kfree(mr);
	return 0;
}
