/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * vrnic: the ABI between the vrnic kernel driver and its rdma-core provider
 * (udata of the uverbs commands, mmap keys, and the driver's uverbs
 * namespace).  The device interface itself is in vrnic_dev.h.
 *
 * Structs are 8-byte aligned with explicit reserved fields; every size is a
 * multiple of 8 and pinned below.  comp_mask fields are 0 unless a bit is
 * defined for them; reserved fields must be written as 0 and are checked by
 * the kernel.
 */

#ifndef VRNIC_ABI_USER_H
#define VRNIC_ABI_USER_H

#include <linux/types.h>
#include <rdma/ib_user_ioctl_cmds.h>

/* Increment on any change that breaks user-space ABI compatibility. */
#define VRNIC_UVERBS_ABI_VERSION	1

/*
 * vrnic has no entry in enum rdma_driver_id: the kernel driver registers
 * with RDMA_DRIVER_UNKNOWN (0) and the provider must put the same value in
 * ib_uverbs_ioctl_hdr.driver_id, or the kernel rejects its ioctls.
 */
#define VRNIC_RDMA_DRIVER_ID		0

/* ------------------------------------------------------------------------
 * udata of the write()/ioctl() verbs commands
 * ------------------------------------------------------------------------
 */

enum vrnic_alloc_ucontext_resp_mask {
	/* kick_mmap_key, kick_offset and kick_value are valid. */
	VRNIC_ALLOC_UCONTEXT_RESP_KICK_PAGE = 1 << 0,
};

struct vrnic_ibv_alloc_ucontext_resp {
	__u32 comp_mask;		/* enum vrnic_alloc_ucontext_resp_mask */
	__u32 db_page_index;		/* BAR2 page index (informative) */
	__aligned_u64 db_mmap_key;	/* mmap offset of the doorbell page */
	__u32 db_page_size;		/* bytes to map: 4096 */
	__u16 version_major;		/* device interface version */
	__u16 version_minor;
	__u32 max_qp_wr;
	__u32 max_cqe;
	__u32 max_srq_wr;
	__u32 max_sge;			/* send and receive SGEs per WQE */
	__u32 max_inline;
	__u32 cqe_size;			/* 64 */
	__u8 sq_wqe_shift_min;
	__u8 sq_wqe_shift_max;
	__u8 rq_wqe_shift_min;
	__u8 rq_wqe_shift_max;
	__u32 atomic_cap;		/* enum vrnic_atomic_cap */
	/*
	 * The kick page: one page holding the device's doorbell register,
	 * mapped write-only-in-effect by the context. Writing kick_value as
	 * a 32-bit store at kick_offset wakes the model without a system
	 * call (what VRNIC_METHOD_KICK does in the kernel).
	 */
	__aligned_u64 kick_mmap_key;
	__u32 kick_offset;
	__u32 kick_value;
};

struct vrnic_ibv_create_cq {
	__u32 comp_mask;
	__u32 reserved;
};

struct vrnic_ibv_create_cq_resp {
	__u32 comp_mask;
	__u32 cqn;
	__u32 db_slot;			/* slot in the context's doorbell page */
	__u32 log_depth;		/* ring holds 1 << log_depth CQEs */
	__aligned_u64 ring_mmap_key;
	__aligned_u64 ring_size;	/* bytes to map */
};

struct vrnic_ibv_resize_cq {
	__u32 comp_mask;
	__u32 reserved;
};

struct vrnic_ibv_resize_cq_resp {
	__u32 comp_mask;
	__u32 log_depth;
	__aligned_u64 ring_mmap_key;	/* the new ring */
	__aligned_u64 ring_size;
};

struct vrnic_ibv_create_qp {
	__u32 comp_mask;
	__u8 sq_wqe_shift;		/* 0: kernel chooses */
	__u8 rq_wqe_shift;		/* 0: kernel chooses */
	__u16 reserved;
};

struct vrnic_ibv_create_qp_resp {
	__u32 comp_mask;
	__u32 qpn;
	__u32 db_slot;			/* slot in the context's doorbell page */
	__u32 reserved0;
	__aligned_u64 sq_mmap_key;
	__aligned_u64 sq_ring_size;	/* bytes to map */
	__aligned_u64 rq_mmap_key;	/* 0 with an SRQ */
	__aligned_u64 rq_ring_size;	/* 0 with an SRQ */
	__u8 sq_log_depth;
	__u8 sq_wqe_shift;
	__u8 rq_log_depth;
	__u8 rq_wqe_shift;
	__u32 max_inline;		/* what the SQ stride holds */
	__u16 max_send_sge;
	__u16 max_recv_sge;
	__u32 reserved1;
};

/* create_ah has no driver request. */
struct vrnic_ibv_create_ah_resp {
	__u32 comp_mask;
	__u32 ah_handle;		/* the device's handle (UD WQEs name it) */
};

/* create_srq's request: the WQE size of the SRQ's ring. */
struct vrnic_ibv_create_srq {
	__u32 comp_mask;
	__u8 wqe_shift;			/* 0: kernel chooses */
	__u8 reserved0;
	__u16 reserved1;
};

struct vrnic_ibv_create_srq_resp {
	__u32 comp_mask;
	__u32 srqn;
	__u32 db_slot;
	__u8 log_depth;
	__u8 wqe_shift;
	__u16 reserved;
	__aligned_u64 ring_mmap_key;
	__aligned_u64 ring_size;
};

/*
 * modify_srq with IBV_SRQ_MAX_WR (IB_DEVICE_SRQ_RESIZE): the verb has no
 * driver response, so the request names where the kernel writes it, as
 * rxe's does. The SRQ then has a new ring: the provider maps it and
 * unmaps the old one (the kernel removed its mmap key).
 */
struct vrnic_ibv_modify_srq {
	__u32 comp_mask;
	__u32 reserved;
	__aligned_u64 resp_addr;	/* struct vrnic_ibv_modify_srq_resp */
};

struct vrnic_ibv_modify_srq_resp {
	__aligned_u64 ring_mmap_key;
	__aligned_u64 ring_size;
	__u8 log_depth;
	__u8 reserved[7];
};

/* ------------------------------------------------------------------------
 * Driver uverbs namespace
 * ------------------------------------------------------------------------
 */

/* A global object: it has no instances, only methods. */
enum vrnic_uverbs_objects {
	VRNIC_OBJECT_DEVICE = (1U << UVERBS_ID_NS_SHIFT),
};

enum vrnic_device_methods {
	/* Wake the device model (it set NEED_WAKEUP); no attributes. */
	VRNIC_METHOD_KICK = (1U << UVERBS_ID_NS_SHIFT),
	/* Describe the calling context's doorbell page. */
	VRNIC_METHOD_QUERY_LAYOUT,
	/* Read the device clock that stamps CQEs (interface 1.3). */
	VRNIC_METHOD_QUERY_CLOCK,
};

enum vrnic_query_layout_attrs {
	/* PTR_OUT: struct vrnic_layout */
	VRNIC_ATTR_QUERY_LAYOUT_RESP = (1U << UVERBS_ID_NS_SHIFT),
};

enum vrnic_query_clock_attrs {
	/* PTR_OUT: struct vrnic_clock */
	VRNIC_ATTR_QUERY_CLOCK_RESP = (1U << UVERBS_ID_NS_SHIFT),
};

/* The device clock: ns of the host's CLOCK_REALTIME, as in a CQE. */
struct vrnic_clock {
	__aligned_u64 now_ns;
};

struct vrnic_layout {
	__u16 version_major;		/* device interface version */
	__u16 version_minor;
	__u32 abi_version;		/* VRNIC_UVERBS_ABI_VERSION */
	__u32 db_page_index;		/* BAR2 page index */
	__u32 db_page_size;		/* 4096 */
	__u32 db_slots_per_page;	/* 512 */
	__u32 db_first_obj_slot;	/* 1 */
	__aligned_u64 db_mmap_key;
};

#ifndef __cplusplus
#ifdef __KERNEL__
#include <linux/build_bug.h>
#else
#include <assert.h>
#endif
#endif
#define VRNIC_ABI_STATIC_ASSERT(expr, msg) static_assert(expr, msg)

VRNIC_ABI_STATIC_ASSERT(sizeof(struct vrnic_ibv_alloc_ucontext_resp) == 72,
			"vrnic_ibv_alloc_ucontext_resp");
VRNIC_ABI_STATIC_ASSERT(sizeof(struct vrnic_ibv_create_cq) == 8,
			"vrnic_ibv_create_cq");
VRNIC_ABI_STATIC_ASSERT(sizeof(struct vrnic_ibv_create_cq_resp) == 32,
			"vrnic_ibv_create_cq_resp");
VRNIC_ABI_STATIC_ASSERT(sizeof(struct vrnic_ibv_resize_cq) == 8,
			"vrnic_ibv_resize_cq");
VRNIC_ABI_STATIC_ASSERT(sizeof(struct vrnic_ibv_resize_cq_resp) == 24,
			"vrnic_ibv_resize_cq_resp");
VRNIC_ABI_STATIC_ASSERT(sizeof(struct vrnic_ibv_create_qp) == 8,
			"vrnic_ibv_create_qp");
VRNIC_ABI_STATIC_ASSERT(sizeof(struct vrnic_ibv_create_qp_resp) == 64,
			"vrnic_ibv_create_qp_resp");
VRNIC_ABI_STATIC_ASSERT(sizeof(struct vrnic_ibv_create_ah_resp) == 8,
			"vrnic_ibv_create_ah_resp");
VRNIC_ABI_STATIC_ASSERT(sizeof(struct vrnic_ibv_create_srq) == 8,
			"vrnic_ibv_create_srq");
VRNIC_ABI_STATIC_ASSERT(sizeof(struct vrnic_ibv_create_srq_resp) == 32,
			"vrnic_ibv_create_srq_resp");
VRNIC_ABI_STATIC_ASSERT(sizeof(struct vrnic_ibv_modify_srq) == 16,
			"vrnic_ibv_modify_srq");
VRNIC_ABI_STATIC_ASSERT(sizeof(struct vrnic_ibv_modify_srq_resp) == 24,
			"vrnic_ibv_modify_srq_resp");
VRNIC_ABI_STATIC_ASSERT(sizeof(struct vrnic_layout) == 32,
			"vrnic_layout");

#endif /* VRNIC_ABI_USER_H */
