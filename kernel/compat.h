/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel interfaces that differ between the kernels vrnic builds
 * on, Debian 12's 6.1 and 6.12: everything version-dependent is here.
 */
#ifndef VRNIC_COMPAT_H
#define VRNIC_COMPAT_H

#include <linux/mm.h>
#include <linux/version.h>
#include <rdma/uverbs_ioctl.h>

/* The one comparison of kernel versions (make check-style allows it here). */
#define VRNIC_KERNEL_AT_LEAST(major, minor) \
	(LINUX_VERSION_CODE >= KERNEL_VERSION(major, minor, 0))

/* 6.3 made vma->vm_flags read-only behind vm_flags_clear(). */
static inline void vrnic_vm_flags_clear(struct vm_area_struct *vma,
					vm_flags_t flags)
{
#if VRNIC_KERNEL_AT_LEAST(6, 3)
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

int vrnic_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata);

/*
 * 6.11 passes .create_cq the uverbs attribute bundle (NULL for a kernel
 * CQ) instead of its udata.
 */
#if VRNIC_KERNEL_AT_LEAST(6, 11)
static inline int vrnic_create_cq_attrs(struct ib_cq *ibcq,
					const struct ib_cq_init_attr *attr,
					struct uverbs_attr_bundle *attrs)
{
	return vrnic_create_cq(ibcq, attr, attrs ? &attrs->driver_udata : NULL);
}

#define VRNIC_CREATE_CQ_OP vrnic_create_cq_attrs
#else
#define VRNIC_CREATE_CQ_OP vrnic_create_cq
#endif

#endif /* VRNIC_COMPAT_H */
