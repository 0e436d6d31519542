// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic XRC: domains and target QPs (device interface 1.5).
 *
 * ib_core shares an XRC domain between the processes that open it through
 * the same file, and creates an XRC target QP on behalf of a process
 * (without udata) that outlives it while another process has it open.
 * Both therefore belong to the device's kernel context, which the device
 * lets every context name. A target QP has no rings: the device binds it
 * to the XRC SRQ each incoming message names.
 */
#include "vrnic.h"

bool vrnic_has_xrc(struct vrnic_dev *dev)
{
	return dev->caps.version_minor >= 5 && dev->caps.max_xrcd;
}

int vrnic_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibxrcd->device);
	struct vrnic_xrcd *xrcd = to_vxrcd(ibxrcd);
	struct vrnic_cmd_alloc_xrcd_resp resp = {};
	struct vrnic_cmd_alloc_xrcd req = {};
	int err;

	if (!vrnic_has_xrc(dev))
		return -EOPNOTSUPP;
	err = vrnic_udata_no_input(udata);
	if (err)
		return err;
	req.uctx = cpu_to_le32(VRNIC_UCTX_KERNEL);
	err = vrnic_cmd_exec(dev, VRNIC_CMD_ALLOC_XRCD, &req, sizeof(req),
			     &resp, sizeof(resp));
	if (err)
		return err;
	xrcd->handle = le32_to_cpu(resp.xrcd);
	if (xrcd->handle == VRNIC_HANDLE_NONE) {
		dev_err(&dev->pdev->dev, "ALLOC_XRCD returned handle 0\n");
		return -EIO;
	}
	return 0;
}

int vrnic_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	return vrnic_cmd_destroy(to_vdev(ibxrcd->device),
				 VRNIC_CMD_DEALLOC_XRCD,
				 to_vxrcd(ibxrcd)->handle);
}

int vrnic_create_xrc_tgt(struct ib_qp *ibqp, struct ib_qp_init_attr *init)
{
	struct vrnic_dev *dev = to_vdev(ibqp->device);
	struct vrnic_cmd_create_qp_resp resp = {};
	struct vrnic_cmd_create_qp req = {};
	struct vrnic_qp *qp = to_vqp(ibqp);
	int err;

	if (!vrnic_has_xrc(dev) || !init->xrcd)
		return -EOPNOTSUPP;
	req.uctx = cpu_to_le32(VRNIC_UCTX_KERNEL);
	req.qp_type = VRNIC_QPT_XRC_TGT;
	req.xrcd = cpu_to_le32(to_vxrcd(init->xrcd)->handle);
	err = vrnic_cmd_exec(dev, VRNIC_CMD_CREATE_QP, &req, sizeof(req),
			     &resp, sizeof(resp));
	if (err)
		return err;
	qp->qpn = le32_to_cpu(resp.qpn);
	if (qp->qpn < VRNIC_QPN_MIN || qp->qpn > VRNIC_QPN_MASK ||
	    resp.db_slot) {
		dev_err(&dev->pdev->dev, "CREATE_QP (XRC) returned qpn %u\n",
			qp->qpn);
		err = -EIO;
		goto err_destroy;
	}
	/* No rings: nothing of the kernel data path ever touches it. */
	qp->user = true;
	qp->state = IB_QPS_RESET;
	mutex_init(&qp->state_lock);
	refcount_set(&qp->refcount, 1);
	init_completion(&qp->free);
	err = vrnic_qp_publish(dev, qp);
	if (err)
		goto err_destroy;
	memset(&init->cap, 0, sizeof(init->cap));
	return 0;

err_destroy:
	vrnic_cmd_destroy(dev, VRNIC_CMD_DESTROY_QP, qp->qpn);
	return err;
}

int vrnic_destroy_xrc_tgt(struct ib_qp *ibqp)
{
	struct vrnic_dev *dev = to_vdev(ibqp->device);
	struct vrnic_qp *qp = to_vqp(ibqp);
	int err;

	err = vrnic_cmd_destroy(dev, VRNIC_CMD_DESTROY_QP, qp->qpn);
	if (err)
		return err;
	/* No new EQEs name it; wait for event handlers still using it. */
	xa_erase_irq(&dev->qp_xa, qp->qpn);
	vrnic_qp_put(qp);
	wait_for_completion(&qp->free);
	vrnic_poison(&qp->ibqp + 1, sizeof(*qp) - sizeof(qp->ibqp));
	return 0;
}
