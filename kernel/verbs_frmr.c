// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic fast registration (device interface sections 10.27, 14.10).
 *
 * ib_alloc_mr() makes a free MR on the device and a page list of its
 * max_num_sg entries in DMA memory; ib_map_mr_sg() fills the list, and an
 * IB_WR_REG_MR work request names it, with the key byte the consumer chose
 * (ib_update_fast_reg_key), so that the device reads it at that WQE.
 * IB_WR_LOCAL_INV and a peer's IB_WR_SEND_WITH_INV free the MR again.
 */
#include "vrnic.h"

bool vrnic_has_frmr(struct vrnic_dev *dev)
{
	return dev->caps.version_minor >= 7 && dev->caps.max_fast_reg_pages;
}

struct ib_mr *vrnic_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct vrnic_dev *dev = to_vdev(ibpd->device);
	struct vrnic_cmd_reg_mr_resp resp = {};
	struct vrnic_cmd_alloc_mr req = {};
	struct vrnic_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG || !vrnic_has_frmr(dev))
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > dev->caps.max_fast_reg_pages)
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	err = vrnic_dma_alloc(dev, &mr->pbl, max_num_sg * sizeof(u64));
	if (err)
		goto err_free;
	mr->max_pages = max_num_sg;

	req.pd = cpu_to_le32(to_vpd(ibpd)->pdn);
	req.max_pages = cpu_to_le32(max_num_sg);
	err = vrnic_cmd_exec(dev, VRNIC_CMD_ALLOC_MR, &req, sizeof(req), &resp,
			     sizeof(resp));
	if (err)
		goto err_pbl;
	mr->handle = le32_to_cpu(resp.mr);
	/* Keys are the handle until the first REG_MR changes the key byte. */
	if (mr->handle == VRNIC_HANDLE_NONE ||
	    le32_to_cpu(resp.lkey) != mr->handle ||
	    le32_to_cpu(resp.rkey) != mr->handle) {
		dev_err(&dev->pdev->dev,
			"ALLOC_MR returned handle %#x keys %#x %#x\n",
			mr->handle, le32_to_cpu(resp.lkey),
			le32_to_cpu(resp.rkey));
		/* The device reads the list only at a REG_MR WQE: free it. */
		err = -EIO;
		goto err_pbl;
	}
	mr->ibmr.lkey = mr->handle;
	mr->ibmr.rkey = mr->handle;
	return &mr->ibmr;

err_pbl:
	vrnic_dma_free(dev, &mr->pbl);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

static int vrnic_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct vrnic_mr *mr = to_vmr(ibmr);
	__le64 *list = mr->pbl.va;

	if (mr->npages >= mr->max_pages)
		return -ENOMEM;
	list[mr->npages++] = cpu_to_le64(addr);
	return 0;
}

int vrnic_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	struct vrnic_mr *mr = to_vmr(ibmr);

	mr->npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, vrnic_set_page);
}

/*
 * The REG_MR WQE for @wr. The device derives the page count from iova,
 * length and page size; a list ib_map_mr_sg() filled otherwise, or a page
 * size the device does not take, is refused here rather than there.
 */
int vrnic_build_reg_mr(const struct ib_reg_wr *wr,
		       struct vrnic_send_wqe_hdr *hdr)
{
	struct vrnic_dev *dev = to_vdev(wr->mr->device);
	struct vrnic_mr *mr = to_vmr(wr->mr);
	u64 psize = wr->mr->page_size;
	int access = wr->access & ~IB_ACCESS_OPTIONAL;
	u64 npages;

	if (!mr->pbl.va || !is_power_of_2(psize) ||
	    !(dev->caps.page_size_cap & psize) || !wr->mr->length ||
	    access & ~VRNIC_ACCESS_ALL ||
	    (wr->key ^ mr->handle) & ~0xffU)
		return -EINVAL;
	npages = DIV_ROUND_UP((wr->mr->iova & (psize - 1)) + wr->mr->length,
			      psize);
	if (npages != mr->npages)
		return -EINVAL;
	hdr->reg_mr.iova = cpu_to_le64(wr->mr->iova);
	hdr->reg_mr.length = cpu_to_le64(wr->mr->length);
	hdr->reg_mr.pbl_addr = cpu_to_le64(mr->pbl.dma);
	hdr->reg_mr.key = cpu_to_le32(wr->key);
	hdr->reg_mr.access = access;
	hdr->reg_mr.page_shift = __ffs64(psize);
	return 0;
}
