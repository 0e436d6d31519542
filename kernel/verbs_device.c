// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic verbs: device and port queries, GIDs, and port and device events.
 */
#include <linux/if_vlan.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>

#include "vrnic.h"

/* A port or device event to every client. Any context. */
void vrnic_ib_dispatch(struct vrnic_dev *dev, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = &dev->ibdev,
		.event = type,
		.element.port_num = 1,
	};
	unsigned long flags;

	spin_lock_irqsave(&dev->event_lock, flags);
	if (test_bit(VRNIC_FLAG_IB_REGISTERED, &dev->flags))
		ib_dispatch_event(&ev);
	spin_unlock_irqrestore(&dev->event_lock, flags);
}

static int vrnic_clamp_int(u64 v)
{
	return (int)min_t(u64, v, INT_MAX);
}

int vrnic_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibdev);
	struct vrnic_caps *c = &dev->caps;
	int err;

	err = vrnic_udata_no_input(udata);
	if (err)
		return err;

	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = c->fw_version;
	attr->sys_image_guid = cpu_to_be64(c->node_guid);
	attr->max_mr_size = c->max_mr_size;
	attr->page_size_cap = c->page_size_cap;
	attr->vendor_id = dev->pdev->vendor;
	attr->vendor_part_id = dev->pdev->device;
	attr->hw_ver = c->hw_rev;
	attr->max_qp = vrnic_clamp_int(c->max_qp);
	attr->max_qp_wr = vrnic_clamp_int(c->max_qp_wr);
	attr->device_cap_flags = IB_DEVICE_CURR_QP_STATE_MOD |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_RC_RNR_NAK_GEN;
	attr->max_send_sge = vrnic_clamp_int(c->max_sge);
	attr->max_recv_sge = vrnic_clamp_int(c->max_sge);
	attr->max_sge_rd = vrnic_clamp_int(c->max_sge);
	attr->max_cq = vrnic_clamp_int(c->max_cq);
	attr->max_cqe = vrnic_clamp_int(c->max_cqe);
	attr->max_mr = vrnic_clamp_int(c->max_mr);
	attr->max_pd = vrnic_clamp_int(c->max_pd);
	attr->max_mcast_grp = vrnic_clamp_int(c->max_mcast_grp);
	attr->max_mcast_qp_attach = vrnic_clamp_int(c->max_mcast_qp_attach);
	attr->max_total_mcast_qp_attach =
		vrnic_clamp_int((u64)c->max_mcast_grp * c->max_mcast_qp_attach);
	attr->max_qp_rd_atom = vrnic_clamp_int(c->max_qp_rd_atom);
	attr->max_qp_init_rd_atom = vrnic_clamp_int(c->max_qp_init_rd_atom);
	attr->max_res_rd_atom = vrnic_clamp_int((u64)c->max_qp_rd_atom *
						c->max_qp);
	attr->atomic_cap = c->atomic_cap;
	attr->max_ah = vrnic_clamp_int(c->max_ah);
	attr->max_srq = vrnic_clamp_int(c->max_srq);
	if (c->max_srq) {
		attr->max_srq_wr = vrnic_clamp_int(c->max_srq_wr);
		attr->max_srq_sge = vrnic_clamp_int(c->max_srq_sge);
	}
	if (vrnic_has_xrc(dev))
		attr->device_cap_flags |= IB_DEVICE_XRC;
	/* 1.7: fast registration for kernel consumers (verbs_frmr.c). */
	if (vrnic_has_frmr(dev)) {
		attr->device_cap_flags |= IB_DEVICE_MEM_MGT_EXTENSIONS;
		attr->max_fast_reg_page_list_len = c->max_fast_reg_pages;
	}
	/* 1.8: memory windows of both types, in the MRs' table (verbs_mw.c). */
	if (vrnic_has_mw(dev)) {
		attr->device_cap_flags |= IB_DEVICE_MEM_WINDOW |
					  IB_DEVICE_MEM_WINDOW_TYPE_2B;
		attr->max_mw = vrnic_clamp_int(c->max_mr);
	}
	/* 1.6 devices grow an SRQ with its posted WQEs (srq_resize.c). */
	if (c->max_srq && c->version_minor >= 6)
		attr->device_cap_flags |= IB_DEVICE_SRQ_RESIZE;
	attr->max_pkeys = 1;
	attr->local_ca_ack_delay = 15;
	/* 1.3 devices stamp every CQE with a nanosecond clock (in kHz). */
	if (c->version_minor >= 3) {
		attr->hca_core_clock = 1000000;
		attr->timestamp_mask = ~0ULL;
	}
	return 0;
}

static u16 vrnic_port_speed(u8 speed)
{
	switch (speed) {
	case IB_SPEED_SDR:
	case IB_SPEED_DDR:
	case IB_SPEED_QDR:
	case IB_SPEED_FDR10:
	case IB_SPEED_FDR:
	case IB_SPEED_EDR:
	case IB_SPEED_HDR:
	case IB_SPEED_NDR:
		return speed;
	default:
		return IB_SPEED_EDR;
	}
}

static u8 vrnic_port_width(u8 width)
{
	switch (width) {
	case IB_WIDTH_1X:
	case IB_WIDTH_2X:
	case IB_WIDTH_4X:
	case IB_WIDTH_8X:
	case IB_WIDTH_12X:
		return width;
	default:
		return IB_WIDTH_4X;
	}
}

/* The device's active MTU, bounded by what the netdev's MTU carries. */
enum ib_mtu vrnic_port_active_mtu(struct vrnic_dev *dev)
{
	u32 mtu = readl(&dev->regs->active_mtu);
	enum ib_mtu ndev_mtu;

	if (mtu < IB_MTU_256 || mtu > dev->caps.max_mtu)
		mtu = dev->caps.max_mtu;
	if (dev->netdev) {
		ndev_mtu = iboe_get_mtu(READ_ONCE(dev->netdev->mtu));
		mtu = min_t(u32, mtu, ndev_mtu ?: IB_MTU_256);
	}
	return mtu;
}

int vrnic_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr)
{
	struct vrnic_dev *dev = to_vdev(ibdev);
	struct vrnic_caps *c = &dev->caps;
	u32 state;

	state = readl(&dev->regs->port_state);
	if (!vrnic_is_fatal(dev) && state == VRNIC_PORT_ACTIVE) {
		attr->state = IB_PORT_ACTIVE;
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	} else {
		attr->state = IB_PORT_DOWN;
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;
	}
	attr->max_mtu = c->max_mtu;
	attr->active_mtu = vrnic_port_active_mtu(dev);
	attr->gid_tbl_len = c->gid_tbl_len;
	attr->ip_gids = true;
	attr->max_msg_sz = c->max_msg_sz;
	attr->pkey_tbl_len = 1;
	attr->max_vl_num = 1;
	if (c->version_minor >= 4)
		attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->active_speed = vrnic_port_speed(c->active_speed);
	attr->active_width = vrnic_port_width(c->active_width);
	return 0;
}

/*
 * RoCE v2 only: the device programs only RoCE v2 GIDs (SET_GID answers
 * UNSUPPORTED for v1). From 1.4 the port has a GSI QP, so ib_mad opens QP1
 * and ib_cm and rdma_cm run on it; before, neither must try.
 */
int vrnic_get_port_immutable(struct ib_device *ibdev, u32 port,
			     struct ib_port_immutable *immutable)
{
	struct ib_port_attr attr;
	int err;

	err = ib_query_port(ibdev, port, &attr);
	if (err)
		return err;
	immutable->pkey_tbl_len = attr.pkey_tbl_len;
	immutable->gid_tbl_len = attr.gid_tbl_len;
	if (to_vdev(ibdev)->caps.version_minor >= 4) {
		immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
		immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	} else {
		immutable->core_cap_flags = RDMA_CORE_CAP_PROT_ROCE_UDP_ENCAP |
					    RDMA_CORE_CAP_ETH_AH;
		immutable->max_mad_size = 0;
	}
	return 0;
}

enum rdma_link_layer vrnic_get_link_layer(struct ib_device *ibdev, u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

int vrnic_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	if (index > 0)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

void vrnic_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	u64 fw = to_vdev(ibdev)->caps.fw_version;

	snprintf(str, IB_FW_VERSION_NAME_MAX, "%u.%u.%u", (u32)(fw >> 32),
		 (u32)(fw >> 16) & 0xffff, (u32)fw & 0xffff);
}

static int vrnic_set_gid(struct vrnic_dev *dev,
			 const struct vrnic_cmd_set_gid *req)
{
	int err;

	err = vrnic_cmd_exec(dev, VRNIC_CMD_SET_GID, req, sizeof(*req), NULL, 0);
	/* A dead device has no GID table to keep in sync. */
	if (err && vrnic_is_fatal(dev))
		return 0;
	return err;
}

int vrnic_add_gid(const struct ib_gid_attr *attr, void **context)
{
	struct vrnic_dev *dev = to_vdev(attr->device);
	struct vrnic_cmd_set_gid req = {};
	u8 mac[ETH_ALEN];
	u16 vlan_id;
	int err;

	if (attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EOPNOTSUPP;
	if (attr->index >= dev->caps.gid_tbl_len)
		return -EINVAL;
	err = rdma_read_gid_l2_fields(attr, &vlan_id, mac);
	if (err)
		return err;

	req.index = cpu_to_le32(attr->index);
	req.gid_type = VRNIC_GID_TYPE_ROCE_V2;
	req.flags = VRNIC_GID_F_VALID;
	req.vlan_id = cpu_to_le16(vlan_id < VLAN_N_VID ? vlan_id :
				  VRNIC_VLAN_NONE);
	memcpy(req.gid, attr->gid.raw, sizeof(req.gid));
	ether_addr_copy(req.mac, mac);
	return vrnic_set_gid(dev, &req);
}

int vrnic_del_gid(const struct ib_gid_attr *attr, void **context)
{
	struct vrnic_dev *dev = to_vdev(attr->device);
	struct vrnic_cmd_set_gid req = {};

	if (attr->index >= dev->caps.gid_tbl_len)
		return -EINVAL;
	req.index = cpu_to_le32(attr->index);
	return vrnic_set_gid(dev, &req);
}
