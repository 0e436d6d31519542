// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic verbs: protection domains.
 */
#include <rdma/uverbs_ioctl.h>

#include "vrnic.h"

static u32 vrnic_udata_uctx(struct ib_udata *udata)
{
	struct vrnic_ucontext *uc;

	if (!udata)
		return VRNIC_UCTX_KERNEL;
	uc = rdma_udata_to_drv_context(udata, struct vrnic_ucontext, ibuc);
	return uc->uctx;
}

int vrnic_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibpd->device);
	struct vrnic_cmd_create_pd_resp resp = {};
	struct vrnic_cmd_create_pd req = {};
	struct vrnic_pd *pd = to_vpd(ibpd);
	int err;

	err = vrnic_udata_no_input(udata);
	if (err)
		return err;
	req.uctx = cpu_to_le32(vrnic_udata_uctx(udata));
	err = vrnic_cmd_exec(dev, VRNIC_CMD_CREATE_PD, &req, sizeof(req),
			     &resp, sizeof(resp));
	if (err)
		return err;
	pd->pdn = le32_to_cpu(resp.pd);
	if (pd->pdn == VRNIC_HANDLE_NONE) {
		dev_err(&dev->pdev->dev, "CREATE_PD returned handle 0\n");
		return -EIO;
	}
	return 0;
}

int vrnic_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibpd->device);

	/* AHs of this PD destroyed from atomic context go first. */
	flush_workqueue(dev->wq);
	return vrnic_cmd_destroy(dev, VRNIC_CMD_DESTROY_PD, to_vpd(ibpd)->pdn);
}
