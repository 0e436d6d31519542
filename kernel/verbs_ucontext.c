// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic verbs: user contexts, their doorbell and kick pages, and the mmap
 * entries of the rings user objects share with the device.
 */
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <rdma/uverbs_ioctl.h>

#include "vrnic.h"

static_assert(PAGE_SIZE == VRNIC_PAGE_SIZE, "vrnic maps 4 KiB pages");

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
	vrnic_vm_flags_clear(vma, VM_MAYEXEC);

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
	uc->uctx = le32_to_cpu(cmd.uctx);
	uc->db_page = le32_to_cpu(cmd.db_page);
	if (uc->uctx == VRNIC_UCTX_KERNEL ||
	    uc->db_page <= c->db_page_first ||
	    uc->db_page >= c->db_page_first + c->db_page_count) {
		dev_err(&dev->pdev->dev,
			"ALLOC_UCTX returned uctx %u page %u\n", uc->uctx,
			uc->db_page);
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
void vrnic_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}
