// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic verbs: multicast groups of UD QPs. The device keeps the groups and
 * enforces their limits; attachments last until detached or the QP is
 * destroyed.
 */
#include <rdma/ib_addr.h>

#include "vrnic.h"

static int vrnic_mcast_cmd(struct ib_qp *ibqp, union ib_gid *gid, u16 opcode)
{
	struct vrnic_cmd_mcast req = {};

	/* uverbs passes any QP and GID; the device would refuse them too. */
	if (ibqp->qp_type != IB_QPT_UD ||
	    !rdma_is_multicast_addr((struct in6_addr *)gid->raw)) {
		ibdev_dbg(ibqp->device, "multicast %pI6 on a QP of type %d\n",
			  gid->raw, ibqp->qp_type);
		return -EINVAL;
	}
	req.qpn = cpu_to_le32(to_vqp(ibqp)->qpn);
	memcpy(req.gid, gid->raw, sizeof(req.gid));
	return vrnic_cmd_exec(to_vdev(ibqp->device), opcode, &req, sizeof(req),
			      NULL, 0);
}

/* RoCE has no LIDs: @lid is ignored, as the core does for RoCE ports. */
int vrnic_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	return vrnic_mcast_cmd(ibqp, gid, VRNIC_CMD_ATTACH_MCAST);
}

int vrnic_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	return vrnic_mcast_cmd(ibqp, gid, VRNIC_CMD_DETACH_MCAST);
}
