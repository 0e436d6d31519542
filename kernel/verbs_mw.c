// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic memory windows (device interface sections 10.28, 10.29, 14.11).
 *
 * A window is allocated and freed by command; the provider binds it with a
 * BIND_MW WQE (ibv_bind_mw for type 1, IBV_WR_BIND_MW for type 2) and
 * LOCAL_INV or a peer's SEND_WITH_INV unbinds a type 2 window. Only user
 * space gets windows: kernel post_send takes no IB_WR_BIND_MW.
 */
#include "vrnic.h"

bool vrnic_has_mw(struct vrnic_dev *dev)
{
	return dev->caps.version_minor >= 8;
}

int vrnic_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibmw->device);
	struct vrnic_cmd_alloc_mw_resp resp = {};
	struct vrnic_cmd_alloc_mw req = {};
	struct vrnic_mw *mw = to_vmw(ibmw);
	int err;

	if (!vrnic_has_mw(dev))
		return -EOPNOTSUPP;
	err = vrnic_udata_no_input(udata);
	if (err)
		return err;
	switch (ibmw->type) {
	case IB_MW_TYPE_1:
		req.type = VRNIC_MW_TYPE_1;
		break;
	case IB_MW_TYPE_2:
		req.type = VRNIC_MW_TYPE_2;
		break;
	default:
		return -EINVAL;
	}
	req.pd = cpu_to_le32(to_vpd(ibmw->pd)->pdn);
	err = vrnic_cmd_exec(dev, VRNIC_CMD_ALLOC_MW, &req, sizeof(req), &resp,
			     sizeof(resp));
	if (err)
		return err;
	mw->handle = le32_to_cpu(resp.mw);
	if (mw->handle == VRNIC_HANDLE_NONE) {
		dev_err(&dev->pdev->dev, "ALLOC_MW returned handle 0\n");
		return -EIO;
	}
	/* The provider names the window in a bind by the rkey's upper bits. */
	if (le32_to_cpu(resp.rkey) != mw->handle) {
		dev_err(&dev->pdev->dev, "ALLOC_MW returned handle %#x rkey %#x\n",
			mw->handle, le32_to_cpu(resp.rkey));
		vrnic_cmd_destroy(dev, VRNIC_CMD_DEALLOC_MW, mw->handle);
		return -EIO;
	}
	ibmw->rkey = le32_to_cpu(resp.rkey);
	return 0;
}

int vrnic_dealloc_mw(struct ib_mw *ibmw)
{
	return vrnic_cmd_destroy(to_vdev(ibmw->device), VRNIC_CMD_DEALLOC_MW,
				 to_vmw(ibmw)->handle);
}
