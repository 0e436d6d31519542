// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic verbs: device and port queries, GIDs, user contexts and their
 * mmap entries, PDs, AHs, counters, and the ib_device_ops table.
 */
#include <linux/if_vlan.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/restrack.h>
#include <rdma/uverbs_ioctl.h>

#include "vrnic.h"

static_assert(PAGE_SIZE == VRNIC_PAGE_SIZE, "vrnic maps 4 KiB pages");

/* ------------------------------------------------------------------ */
/* udata                                                               */
/* ------------------------------------------------------------------ */

/*
 * Copy a driver request from user space. A shorter request is zero-extended
 * (an older provider); a longer one must have only zero bytes beyond what
 * this driver knows. The caller checks comp_mask and reserved fields.
 */
int vrnic_udata_in(struct ib_udata *udata, void *cmd, size_t size)
{
	memset(cmd, 0, size);
	if (!udata || !udata->inlen)
		return 0;
	if (udata->inlen > size &&
	    !ib_is_udata_cleared(udata, size, udata->inlen - size))
		return -EINVAL;
	return ib_copy_from_udata(cmd, udata, min(size, udata->inlen));
}

/* A verb without a driver request: any input bytes must be zero. */
int vrnic_udata_no_input(struct ib_udata *udata)
{
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	return 0;
}

int vrnic_udata_out(struct ib_udata *udata, void *resp, size_t size)
{
	if (!udata || !udata->outlen)
		return 0;
	return ib_copy_to_udata(udata, resp, min(size, udata->outlen));
}

/* ------------------------------------------------------------------ */
/* Events                                                              */
/* ------------------------------------------------------------------ */

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

/* ------------------------------------------------------------------ */
/* Device and port                                                     */
/* ------------------------------------------------------------------ */

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
	attr->max_qp_rd_atom = vrnic_clamp_int(c->max_qp_rd_atom);
	attr->max_qp_init_rd_atom = vrnic_clamp_int(c->max_qp_init_rd_atom);
	attr->max_res_rd_atom = vrnic_clamp_int((u64)c->max_qp_rd_atom *
						c->max_qp);
	attr->atomic_cap = c->atomic_cap;
	attr->max_ah = vrnic_clamp_int(c->max_ah);
	/* SRQs are not implemented by this driver yet. */
	attr->max_pkeys = 1;
	attr->local_ca_ack_delay = 15;
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

int vrnic_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr)
{
	struct vrnic_dev *dev = to_vdev(ibdev);
	struct vrnic_caps *c = &dev->caps;
	u32 state, mtu;
	enum ib_mtu ndev_mtu;

	state = readl(&dev->regs->port_state);
	mtu = readl(&dev->regs->active_mtu);
	if (!vrnic_is_fatal(dev) && state == VRNIC_PORT_ACTIVE) {
		attr->state = IB_PORT_ACTIVE;
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	} else {
		attr->state = IB_PORT_DOWN;
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;
	}
	attr->max_mtu = c->max_mtu;
	if (mtu < IB_MTU_256 || mtu > c->max_mtu)
		mtu = c->max_mtu;
	if (dev->netdev) {
		ndev_mtu = iboe_get_mtu(READ_ONCE(dev->netdev->mtu));
		mtu = min_t(u32, mtu, ndev_mtu ?: IB_MTU_256);
	}
	attr->active_mtu = mtu;
	attr->gid_tbl_len = c->gid_tbl_len;
	attr->ip_gids = true;
	attr->max_msg_sz = c->max_msg_sz;
	attr->pkey_tbl_len = 1;
	attr->max_vl_num = 1;
	attr->active_speed = vrnic_port_speed(c->active_speed);
	attr->active_width = vrnic_port_width(c->active_width);
	return 0;
}

/*
 * RoCE v2 only: the device programs only RoCE v2 GIDs (SET_GID answers
 * UNSUPPORTED for v1). No IB_MAD/IB_CM: the 1.0 device has no GSI QP, so
 * ib_mad and ib_cm must not try to open QP1 on this port.
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
	immutable->core_cap_flags = RDMA_CORE_CAP_PROT_ROCE_UDP_ENCAP |
				    RDMA_CORE_CAP_ETH_AH;
	immutable->max_mad_size = 0;
	return 0;
}

static enum rdma_link_layer vrnic_get_link_layer(struct ib_device *ibdev,
						 u32 port)
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

static void vrnic_get_dev_fw_str(struct ib_device *ibdev, char *str)
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

	req.index = attr->index;
	req.gid_type = VRNIC_GID_TYPE_ROCE_V2;
	req.flags = VRNIC_GID_F_VALID;
	req.vlan_id = vlan_id < VLAN_N_VID ? vlan_id : VRNIC_VLAN_NONE;
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
	req.index = attr->index;
	return vrnic_set_gid(dev, &req);
}

/* ------------------------------------------------------------------ */
/* User contexts and mmap                                              */
/* ------------------------------------------------------------------ */

/* Insert a copy of @proto, @size bytes, into the context's mmap entries. */
static struct rdma_user_mmap_entry *
vrnic_mmap_insert(struct vrnic_ucontext *uc,
		  const struct vrnic_mmap_entry *proto, size_t size, u64 *key)
{
	struct vrnic_mmap_entry *entry;
	int err;

	entry = kmemdup(proto, sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return ERR_PTR(-ENOMEM);
	entry->dev = to_vdev(uc->ibuc.device);
	err = rdma_user_mmap_entry_insert(&uc->ibuc, &entry->rdma_entry, size);
	if (err) {
		kfree(entry);
		return ERR_PTR(err);
	}
	*key = rdma_user_mmap_get_offset(&entry->rdma_entry);
	return &entry->rdma_entry;
}

/*
 * A ring mapped into a process is memory it keeps locked: charge it to the
 * caller's pinned_vm against RLIMIT_MEMLOCK, as ib_umem_get() charges an
 * MR's pinned pages (CAP_IPC_LOCK lifts the limit, not the count).
 */
static int vrnic_charge_pinned(struct vrnic_mmap_entry *e, size_t size)
{
	unsigned long npages = PAGE_ALIGN(size) >> PAGE_SHIFT;
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	struct mm_struct *mm = current->mm;

	if (!mm)
		return -EINVAL;
	if (atomic64_add_return(npages, &mm->pinned_vm) > limit &&
	    !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		return -ENOMEM;
	}
	mmgrab(mm);
	e->mm = mm;
	e->npages = npages;
	return 0;
}

static void vrnic_uncharge_pinned(struct vrnic_mmap_entry *e)
{
	if (!e->mm)
		return;
	atomic64_sub(e->npages, &e->mm->pinned_vm);
	mmdrop(e->mm);
	e->mm = NULL;
}

/*
 * Make @buf mappable by the context and charge it to the caller's locked
 * memory (-ENOMEM past RLIMIT_MEMLOCK). On success the entry owns the
 * buffer (@buf is cleared) and frees and uncharges it in mmap_free, once
 * the object removed the entry and the last mapping is gone.
 */
struct rdma_user_mmap_entry *
vrnic_mmap_insert_dma(struct vrnic_ucontext *uc, struct vrnic_dma *buf,
		      u64 *key)
{
	struct vrnic_mmap_entry proto = { .type = VRNIC_MMAP_DMA, .buf = *buf };
	struct rdma_user_mmap_entry *entry;
	int err;

	if (!virt_addr_valid(buf->va))
		return ERR_PTR(-EINVAL);
	err = vrnic_charge_pinned(&proto, buf->size);
	if (err)
		return ERR_PTR(err);
	entry = vrnic_mmap_insert(uc, &proto, buf->size, key);
	if (IS_ERR(entry)) {
		vrnic_uncharge_pinned(&proto);
		return entry;
	}
	memset(buf, 0, sizeof(*buf));
	return entry;
}

/* Make @size bytes of device memory at @phys mappable, uncached. */
static struct rdma_user_mmap_entry *
vrnic_mmap_insert_io(struct vrnic_ucontext *uc, phys_addr_t phys, size_t size,
		     u64 *key)
{
	struct vrnic_mmap_entry proto = {
		.type = VRNIC_MMAP_IO_NC,
		.io_addr = phys,
	};

	return vrnic_mmap_insert(uc, &proto, size, key);
}

void vrnic_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct vrnic_mmap_entry *entry = to_vmmap(rdma_entry);

	if (entry->type == VRNIC_MMAP_DMA) {
		vrnic_dma_free(entry->dev, &entry->buf);
		vrnic_uncharge_pinned(entry);
	}
	vrnic_poison(entry, sizeof(*entry));
	kfree(entry);
}

int vrnic_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma_entry;
	struct vrnic_mmap_entry *entry;
	size_t size;
	int err;

	rdma_entry = rdma_user_mmap_entry_get(ibuc, vma);
	if (!rdma_entry)
		return -EINVAL;
	entry = to_vmmap(rdma_entry);
	size = rdma_entry->npages * PAGE_SIZE;

	if (vma->vm_flags & VM_EXEC) {
		err = -EPERM;
		goto out;
	}
	vma->vm_flags &= ~VM_MAYEXEC;

	switch (entry->type) {
	case VRNIC_MMAP_IO_NC:
		err = rdma_user_mmap_io(ibuc, vma, PHYS_PFN(entry->io_addr),
					size,
					pgprot_noncached(vma->vm_page_prot),
					rdma_entry);
		break;
	case VRNIC_MMAP_DMA:
		/*
		 * Coherent memory in the linear map: an ordinary cached
		 * PFN mapping, tracked (and zapped on disassociate) by
		 * the rdma_user_mmap_entry machinery like the BAR page.
		 */
		err = rdma_user_mmap_io(ibuc, vma,
					PHYS_PFN(virt_to_phys(entry->buf.va)),
					size, vma->vm_page_prot, rdma_entry);
		break;
	default:
		err = -EINVAL;
	}
out:
	rdma_user_mmap_entry_put(rdma_entry);
	return err;
}

int vrnic_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibuc->device);
	struct vrnic_ibv_alloc_ucontext_resp resp = {};
	struct vrnic_ucontext *uc = to_vuc(ibuc);
	struct vrnic_cmd_alloc_uctx_resp cmd = {};
	struct vrnic_caps *c = &dev->caps;
	struct rdma_user_mmap_entry *entry;
	int err;

	err = vrnic_udata_no_input(udata);
	if (err)
		return err;

	err = vrnic_cmd_exec(dev, VRNIC_CMD_ALLOC_UCTX, NULL, 0, &cmd,
			     sizeof(cmd));
	if (err)
		return err;
	uc->uctx = cmd.uctx;
	uc->db_page = cmd.db_page;
	if (cmd.uctx == VRNIC_UCTX_KERNEL ||
	    cmd.db_page <= c->db_page_first ||
	    cmd.db_page >= c->db_page_first + c->db_page_count) {
		dev_err(&dev->pdev->dev,
			"ALLOC_UCTX returned uctx %u page %u\n", cmd.uctx,
			cmd.db_page);
		err = -EIO;
		goto err_dealloc;
	}

	entry = vrnic_mmap_insert_io(uc, dev->bar2_phys +
				     (phys_addr_t)uc->db_page * VRNIC_PAGE_SIZE,
				     VRNIC_DB_PAGE_SIZE, &uc->db_mmap_key);
	if (IS_ERR(entry)) {
		err = PTR_ERR(entry);
		goto err_dealloc;
	}
	uc->db_entry = entry;
	if (dev->kick_page) {
		entry = vrnic_mmap_insert_io(uc, dev->kick_page, PAGE_SIZE,
					     &resp.kick_mmap_key);
		if (IS_ERR(entry)) {
			err = PTR_ERR(entry);
			goto err_remove;
		}
		uc->kick_entry = entry;
		resp.comp_mask |= VRNIC_ALLOC_UCONTEXT_RESP_KICK_PAGE;
		resp.kick_offset = VRNIC_IVSHMEM_DOORBELL;
		resp.kick_value =
			VRNIC_IVSHMEM_DOORBELL_VAL(VRNIC_MODEL_PEER_ID,
						   VRNIC_KICK_DATA_WAKEUP);
	}

	resp.db_page_index = uc->db_page;
	resp.db_mmap_key = uc->db_mmap_key;
	resp.db_page_size = VRNIC_DB_PAGE_SIZE;
	resp.version_major = c->version_major;
	resp.version_minor = c->version_minor;
	resp.max_qp_wr = c->max_qp_wr;
	resp.max_cqe = c->max_cqe;
	resp.max_srq_wr = c->max_srq_wr;
	resp.max_sge = c->max_sge;
	resp.max_inline = c->max_inline;
	resp.cqe_size = VRNIC_CQE_SIZE;
	resp.sq_wqe_shift_min = VRNIC_SQ_WQE_SHIFT_MIN;
	resp.sq_wqe_shift_max = VRNIC_SQ_WQE_SHIFT_MAX;
	resp.rq_wqe_shift_min = VRNIC_RQ_WQE_SHIFT_MIN;
	resp.rq_wqe_shift_max = VRNIC_RQ_WQE_SHIFT_MAX;
	resp.atomic_cap = c->atomic_cap;
	err = vrnic_udata_out(udata, &resp, sizeof(resp));
	if (err)
		goto err_remove;
	return 0;

err_remove:
	rdma_user_mmap_entry_remove(uc->kick_entry);
	uc->kick_entry = NULL;
	rdma_user_mmap_entry_remove(uc->db_entry);
	uc->db_entry = NULL;
err_dealloc:
	vrnic_cmd_destroy(dev, VRNIC_CMD_DEALLOC_UCTX, uc->uctx);
	return err;
}

/*
 * Called after every object of the context was destroyed and every mapping
 * of it is gone (closed, or zapped on disassociate), so the doorbell page
 * can go back to the device.
 */
void vrnic_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	struct vrnic_ucontext *uc = to_vuc(ibuc);

	rdma_user_mmap_entry_remove(uc->kick_entry);
	rdma_user_mmap_entry_remove(uc->db_entry);
	vrnic_cmd_destroy(to_vdev(ibuc->device), VRNIC_CMD_DEALLOC_UCTX,
			  uc->uctx);
}

/* The core zaps the context's mappings before this; nothing else to do. */
static void vrnic_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

/* ------------------------------------------------------------------ */
/* PD and AH                                                           */
/* ------------------------------------------------------------------ */

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
	req.uctx = vrnic_udata_uctx(udata);
	err = vrnic_cmd_exec(dev, VRNIC_CMD_CREATE_PD, &req, sizeof(req),
			     &resp, sizeof(resp));
	if (err)
		return err;
	if (resp.pd == VRNIC_HANDLE_NONE) {
		dev_err(&dev->pdev->dev, "CREATE_PD returned handle 0\n");
		return -EIO;
	}
	pd->pdn = resp.pd;
	return 0;
}

int vrnic_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibpd->device);

	/* AHs of this PD destroyed from atomic context go first. */
	flush_workqueue(dev->wq);
	return vrnic_cmd_destroy(dev, VRNIC_CMD_DESTROY_PD, to_vpd(ibpd)->pdn);
}

static void vrnic_ah_destroy_work(struct work_struct *work)
{
	struct vrnic_ah_destroy *d = container_of(work, struct vrnic_ah_destroy,
						  work);

	vrnic_cmd_destroy(d->dev, VRNIC_CMD_DESTROY_AH, d->handle);
	vrnic_poison(d, sizeof(*d));
	kfree(d);
}

/* AHs address UD datagrams; the device keeps them although its QPs are RC. */
int vrnic_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		    struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibah->device);
	struct rdma_ah_attr *ah_attr = init_attr->ah_attr;
	struct vrnic_cmd_create_ah_resp resp = {};
	struct vrnic_cmd_create_ah req = {};
	const struct ib_global_route *grh;
	u16 vlan_id = VRNIC_VLAN_NONE;
	struct vrnic_ah_destroy *d;
	int err;

	if (!dev->caps.max_ah)
		return -EOPNOTSUPP;
	if (!(init_attr->flags & RDMA_CREATE_AH_SLEEPABLE))
		return -EOPNOTSUPP;
	if (!(rdma_ah_get_ah_flags(ah_attr) & IB_AH_GRH))
		return -EINVAL;
	err = vrnic_udata_no_input(udata);
	if (err)
		return err;

	grh = rdma_ah_read_grh(ah_attr);
	err = rdma_read_gid_l2_fields(grh->sgid_attr, &vlan_id, NULL);
	if (err)
		return err;
	req.pd = to_vpd(ibah->pd)->pdn;
	memcpy(req.av.dgid, grh->dgid.raw, sizeof(req.av.dgid));
	req.av.flow_label = grh->flow_label;
	req.av.sgid_index = grh->sgid_index;
	req.av.hop_limit = grh->hop_limit;
	req.av.traffic_class = grh->traffic_class;
	req.av.sl = rdma_ah_get_sl(ah_attr);
	ether_addr_copy(req.av.dmac, ah_attr->roce.dmac);
	req.av.vlan_id = vlan_id < VLAN_N_VID ? vlan_id : VRNIC_VLAN_NONE;
	/* Allocated now: destroy_ah may come from atomic context. */
	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	err = vrnic_cmd_exec(dev, VRNIC_CMD_CREATE_AH, &req, sizeof(req),
			     &resp, sizeof(resp));
	if (err) {
		kfree(d);
		return err;
	}
	INIT_WORK(&d->work, vrnic_ah_destroy_work);
	d->dev = dev;
	d->handle = resp.ah;
	to_vah(ibah)->deferred = d;
	return 0;
}

int vrnic_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct vrnic_ah_destroy *d = to_vah(ibah)->deferred;
	int err;

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

/* ------------------------------------------------------------------ */
/* Counters (rdma statistic)                                           */
/* ------------------------------------------------------------------ */

static const struct rdma_stat_desc vrnic_hw_stat_descs[VRNIC_CNT_MAX] = {
	[VRNIC_CNT_CMDS].name = "commands",
	[VRNIC_CNT_CMD_ERRORS].name = "command_errors",
	[VRNIC_CNT_CMD_TIMEOUTS].name = "command_timeouts",
	[VRNIC_CNT_ASYNC_EVENTS].name = "async_events",
	[VRNIC_CNT_COMP_EVENTS].name = "completion_events",
	[VRNIC_CNT_QP_ERRORS].name = "qp_errors",
	[VRNIC_CNT_CQ_ERRORS].name = "cq_errors",
	[VRNIC_CNT_BAD_EQES].name = "invalid_eqes",
	[VRNIC_CNT_BAD_CQES].name = "invalid_cqes",
	[VRNIC_CNT_EQ_OVERFLOW].name = "eq_overflows",
	[VRNIC_CNT_ETH_TX_PACKETS].name = "eth_tx_packets",
	[VRNIC_CNT_ETH_TX_BYTES].name = "eth_tx_bytes",
	[VRNIC_CNT_ETH_TX_ERRORS].name = "eth_tx_errors",
	[VRNIC_CNT_ETH_RX_PACKETS].name = "eth_rx_packets",
	[VRNIC_CNT_ETH_RX_BYTES].name = "eth_rx_bytes",
	[VRNIC_CNT_ETH_RX_ERRORS].name = "eth_rx_errors",
};

static struct rdma_hw_stats *vrnic_alloc_hw_port_stats(struct ib_device *ibdev,
						       u32 port)
{
	return rdma_alloc_hw_stats_struct(vrnic_hw_stat_descs,
					  ARRAY_SIZE(vrnic_hw_stat_descs),
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static int vrnic_get_hw_stats(struct ib_device *ibdev,
			      struct rdma_hw_stats *stats, u32 port, int index)
{
	struct vrnic_dev *dev = to_vdev(ibdev);
	int i;

	for (i = 0; i < VRNIC_CNT_MAX; i++)
		stats->value[i] = atomic64_read(&dev->counters[i]);
	return VRNIC_CNT_MAX;
}

/* ------------------------------------------------------------------ */
/* Driver attributes for rdma res (shown with -d)                     */
/* ------------------------------------------------------------------ */

static struct nlattr *vrnic_res_begin(struct sk_buff *msg)
{
	return nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
}

static int vrnic_res_end(struct sk_buff *msg, struct nlattr *table, int err)
{
	if (err) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}

static int vrnic_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct vrnic_qp *qp = to_vqp(ibqp);
	struct nlattr *table = vrnic_res_begin(msg);

	if (!table)
		return -EMSGSIZE;
	return vrnic_res_end(msg, table,
		rdma_nl_put_driver_u32(msg, "db_slot", qp->db_slot) ||
		rdma_nl_put_driver_u32(msg, "sq_depth",
				       1U << qp->sq.log_depth) ||
		rdma_nl_put_driver_u32(msg, "sq_wqe_size",
				       1U << qp->sq.wqe_shift) ||
		rdma_nl_put_driver_u32(msg, "rq_depth",
				       1U << qp->rq.log_depth) ||
		rdma_nl_put_driver_u32(msg, "rq_wqe_size",
				       1U << qp->rq.wqe_shift) ||
		rdma_nl_put_driver_u32(msg, "max_inline", qp->max_inline));
}

static int vrnic_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct vrnic_cq *cq = to_vcq(ibcq);
	struct nlattr *table = vrnic_res_begin(msg);

	if (!table)
		return -EMSGSIZE;
	return vrnic_res_end(msg, table,
		rdma_nl_put_driver_u32(msg, "hw_cqn", cq->cqn) ||
		rdma_nl_put_driver_u32(msg, "db_slot", cq->db_slot) ||
		rdma_nl_put_driver_u32(msg, "depth", 1U << cq->log_depth) ||
		rdma_nl_put_driver_u32(msg, "eqn", cq->eqn));
}

static int vrnic_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct vrnic_mr *mr = to_vmr(ibmr);
	struct nlattr *table = vrnic_res_begin(msg);

	if (!table)
		return -EMSGSIZE;
	return vrnic_res_end(msg, table,
		rdma_nl_put_driver_u32(msg, "handle", mr->handle) ||
		rdma_nl_put_driver_u32(msg, "pages", mr->npages) ||
		(mr->umem && rdma_nl_put_driver_u32(msg, "page_size",
						    1U << mr->page_shift)));
}

/* ------------------------------------------------------------------ */

const struct ib_device_ops vrnic_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = VRNIC_UVERBS_ABI_VERSION,

	.add_gid = vrnic_add_gid,
	.alloc_hw_port_stats = vrnic_alloc_hw_port_stats,
	.alloc_pd = vrnic_alloc_pd,
	.alloc_ucontext = vrnic_alloc_ucontext,
	.create_ah = vrnic_create_ah,
	.create_user_ah = vrnic_create_ah,
	.create_cq = vrnic_create_cq,
	.create_qp = vrnic_create_qp,
	.dealloc_pd = vrnic_dealloc_pd,
	.dealloc_ucontext = vrnic_dealloc_ucontext,
	.del_gid = vrnic_del_gid,
	.dereg_mr = vrnic_dereg_mr,
	.destroy_ah = vrnic_destroy_ah,
	.destroy_cq = vrnic_destroy_cq,
	.destroy_qp = vrnic_destroy_qp,
	.disassociate_ucontext = vrnic_disassociate_ucontext,
	.fill_res_cq_entry = vrnic_fill_res_cq_entry,
	.fill_res_mr_entry = vrnic_fill_res_mr_entry,
	.fill_res_qp_entry = vrnic_fill_res_qp_entry,
	.get_dev_fw_str = vrnic_get_dev_fw_str,
	.get_dma_mr = vrnic_get_dma_mr,
	.get_hw_stats = vrnic_get_hw_stats,
	.get_link_layer = vrnic_get_link_layer,
	.get_port_immutable = vrnic_get_port_immutable,
	.mmap = vrnic_mmap,
	.mmap_free = vrnic_mmap_free,
	.modify_qp = vrnic_modify_qp,
	.poll_cq = vrnic_poll_cq,
	.post_recv = vrnic_post_recv,
	.post_send = vrnic_post_send,
	.query_device = vrnic_query_device,
	.query_pkey = vrnic_query_pkey,
	.query_port = vrnic_query_port,
	.query_qp = vrnic_query_qp,
	.reg_user_mr = vrnic_reg_user_mr,
	.req_notify_cq = vrnic_req_notify_cq,
	.resize_cq = vrnic_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, vrnic_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, vrnic_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_pd, vrnic_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, vrnic_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, vrnic_ucontext, ibuc),
};
