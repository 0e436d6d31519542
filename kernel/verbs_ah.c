// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic verbs: address handles.
 */
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <rdma/ib_cache.h>

#include "vrnic.h"

/*
 * The device's address vector for @ah: the one translation both an AH and
 * a connected QP's path go through, so that the two accept the same input.
 */
int vrnic_av_from_ah(const struct rdma_ah_attr *ah, struct vrnic_av *av)
{
	const struct ib_global_route *grh;
	u16 vlan_id = VRNIC_VLAN_NONE;
	int err;

	if (ah->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(ah) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(ah);
	if (grh->sgid_attr) {
		if (grh->sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
			return -EINVAL;
		err = rdma_read_gid_l2_fields(grh->sgid_attr, &vlan_id, NULL);
		if (err)
			return err;
	}
	memcpy(av->dgid, grh->dgid.raw, sizeof(av->dgid));
	av->flow_label = cpu_to_le32(grh->flow_label & 0xfffff);
	av->sgid_index = grh->sgid_index;
	av->hop_limit = grh->hop_limit;
	av->traffic_class = grh->traffic_class;
	av->sl = rdma_ah_get_sl(ah) & 0xf;
	ether_addr_copy(av->dmac, ah->roce.dmac);
	av->vlan_id = cpu_to_le16(vlan_id < VLAN_N_VID ? vlan_id :
				  VRNIC_VLAN_NONE);
	return 0;
}

static void vrnic_ah_destroy_work(struct work_struct *work)
{
	struct vrnic_ah_destroy *d = container_of(work, struct vrnic_ah_destroy,
						  work);

	vrnic_cmd_destroy(d->dev, VRNIC_CMD_DESTROY_AH, d->handle);
	vrnic_poison(d, sizeof(*d));
	kfree(d);
}

/* AHs address UD datagrams: a UD send WQE names the device's handle. */
int vrnic_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		    struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibah->device);
	struct rdma_ah_attr *ah_attr = init_attr->ah_attr;
	struct vrnic_ibv_create_ah_resp uresp = {};
	struct vrnic_cmd_create_ah_resp resp = {};
	struct vrnic_cmd_create_ah req = {};
	struct vrnic_ah_destroy *d;
	u32 handle;
	int err;

	/* 1.4: a kernel AH needs no command, so atomic callers (ib_cm) work. */
	if (!udata && dev->caps.version_minor >= 4) {
		err = vrnic_av_from_ah(ah_attr, &to_vah(ibah)->av);
		if (err)
			ibdev_dbg(ibah->device, "address vector refused: %d\n",
				  err);
		to_vah(ibah)->deferred = NULL;
		return err;
	}
	if (!dev->caps.max_ah ||
	    !(init_attr->flags & RDMA_CREATE_AH_SLEEPABLE)) {
		ibdev_dbg(ibah->device, "AH %s\n", dev->caps.max_ah ?
			  "from atomic context" : "unsupported by the device");
		return -EOPNOTSUPP;
	}
	err = vrnic_udata_no_input(udata);
	if (err) {
		ibdev_dbg(ibah->device, "create_ah takes no udata\n");
		return err;
	}
	err = vrnic_av_from_ah(ah_attr, &req.av);
	if (err) {
		ibdev_dbg(ibah->device, "address vector refused: %d\n", err);
		return err;
	}
	req.pd = cpu_to_le32(to_vpd(ibah->pd)->pdn);
	/* Allocated now: destroy_ah may come from atomic context. */
	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	err = vrnic_cmd_exec(dev, VRNIC_CMD_CREATE_AH, &req, sizeof(req),
			     &resp, sizeof(resp));
	if (err)
		goto err_free;
	handle = le32_to_cpu(resp.ah);
	if (udata) {
		uresp.ah_handle = handle;
		err = vrnic_udata_out(udata, &uresp, sizeof(uresp));
		if (err)
			goto err_destroy;
	}
	INIT_WORK(&d->work, vrnic_ah_destroy_work);
	d->dev = dev;
	d->handle = handle;
	to_vah(ibah)->deferred = d;
	return 0;

err_destroy:
	vrnic_cmd_destroy(dev, VRNIC_CMD_DESTROY_AH, handle);
err_free:
	kfree(d);
	return err;
}

int vrnic_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct vrnic_ah_destroy *d = to_vah(ibah)->deferred;
	int err;

	if (!d)		/* the AV only: nothing on the device */
		return 0;
	if (!(flags & RDMA_DESTROY_AH_SLEEPABLE)) {
		/* Atomic context: the command must wait for a worker. */
		queue_work(d->dev->wq, &d->work);
		return 0;
	}
	err = vrnic_cmd_destroy(d->dev, VRNIC_CMD_DESTROY_AH, d->handle);
	if (!err)
		kfree(d);
	return err;
}
