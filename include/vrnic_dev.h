/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * vrnic device interface: everything the guest driver, the user-space
 * provider and the device model share about the device itself.
 *
 * This header is compiled unchanged as kernel C, as user-space C++20 and as
 * user-space C.  It therefore uses only the fixed-width types of
 * <linux/types.h>, plain structs without bitfields, and no implicit padding:
 * every struct is naturally aligned, every hole is an explicit reserved
 * field, and every size and register offset is pinned by a static assertion
 * below.  Every multi-byte field is little endian and typed so (__le16,
 * __le32, __le64), so that sparse checks the kernel driver converts each
 * access; __be32 immediate data is in network order, exactly as verbs hands
 * it over.  In user space these types are the plain __u16/__u32/__u64: the
 * model and the provider run on little-endian x86-64 only.
 *
 * docs/device-interface.md is the specification; the comments here are
 * reminders.
 */

#ifndef VRNIC_DEV_H
#define VRNIC_DEV_H

#include <linux/types.h>

/* static_assert: a keyword in C++, a macro for _Static_assert in C. */
#ifndef __cplusplus
#ifdef __KERNEL__
#include <linux/build_bug.h>
#else
#include <assert.h>
#endif
#endif
#define VRNIC_STATIC_ASSERT(expr, msg) static_assert(expr, msg)

#define VRNIC_ASSERT_SIZE(type, size) \
	VRNIC_STATIC_ASSERT(sizeof(type) == (size), "size of " #type)
#define VRNIC_ASSERT_OFFSET(type, member, off) \
	VRNIC_STATIC_ASSERT(__builtin_offsetof(type, member) == (off), \
			    "offset of " #type "." #member)

/* ------------------------------------------------------------------------
 * Identity, versions, transport
 * ------------------------------------------------------------------------
 */

#define VRNIC_SIGNATURE			0x434e5256U	/* "VRNC" in memory */
#define VRNIC_VERSION_MAJOR		1
#define VRNIC_VERSION_MINOR		11

/* The function is QEMU's stock ivshmem-doorbell device. */
#define VRNIC_PCI_VENDOR_ID		0x1af4
#define VRNIC_PCI_DEVICE_ID		0x1110
#define VRNIC_BAR_IVSHMEM		0	/* ivshmem registers */
#define VRNIC_BAR_SHM			2	/* shared memory: vrnic pages */

/* ivshmem BAR0 registers (QEMU docs/specs/ivshmem-spec.txt). */
#define VRNIC_IVSHMEM_INTR_MASK		0
#define VRNIC_IVSHMEM_INTR_STATUS	4
#define VRNIC_IVSHMEM_IV_POSITION	8
#define VRNIC_IVSHMEM_DOORBELL		12
/* The model is ivshmem peer 0; a doorbell write names peer and vector. */
#define VRNIC_MODEL_PEER_ID		0
#define VRNIC_IVSHMEM_DOORBELL_VAL(peer, vec) \
	((__u32)(((__u32)(peer) << 16) | ((__u32)(vec) & 0xffffU)))

/* Guest -> model vectors: the value written to the BAR0 Doorbell. */
enum vrnic_kick_vector {
	VRNIC_KICK_CMD		= 0,	/* command queue, driver control */
	VRNIC_KICK_DATA_WAKEUP	= 1,	/* data path: SQ/RQ producer moved */
	VRNIC_KICK_ETH_TX	= 2,	/* Ethernet TX ring producer moved */
};

/* Model -> guest MSI-X vectors. */
enum vrnic_irq_vector {
	VRNIC_IRQ_ADMIN		= 0,	/* command completion + async EQ */
	VRNIC_IRQ_ETH		= 1,	/* Ethernet TX completion / RX */
	VRNIC_IRQ_COMP_BASE	= 2,	/* first completion-EQ vector */
};

/*
 * Default number of ivshmem vectors (QEMU "-device ivshmem-doorbell,
 * vectors=8"); the model hands out this many eventfds per peer.  The count
 * actually in use is vrnic_regs.num_vectors.
 */
#define VRNIC_NUM_VECTORS		8
#define VRNIC_MAX_VECTORS		64

/* ------------------------------------------------------------------------
 * BAR2 layout
 * ------------------------------------------------------------------------
 */

#define VRNIC_PAGE_SHIFT		12
#define VRNIC_PAGE_SIZE			4096
#define VRNIC_BAR2_SIZE			(4U << 20)	/* default, power of 2 */
#define VRNIC_REGS_PAGE			0	/* page 0: struct vrnic_regs */
#define VRNIC_KERNEL_DB_PAGE		1	/* the kernel driver's page */
#define VRNIC_FIRST_UCTX_DB_PAGE	2	/* pages 2..N: user contexts */

/* Doorbell pages: 512 slots of 8 bytes. */
#define VRNIC_DB_PAGE_SIZE		4096
#define VRNIC_DB_SLOT_SIZE		8
#define VRNIC_DB_SLOTS_PER_PAGE		512
#define VRNIC_DB_STATUS_SLOT		0	/* device-written status */
#define VRNIC_DB_FIRST_OBJ_SLOT		1	/* slots 1..511: objects */

/* Slot 0 status word (device-written, __le32 at byte 0). */
enum vrnic_db_status_bits {
	VRNIC_DB_STATUS_NEED_WAKEUP	= 1 << 0,	/* mirrors regs */
	VRNIC_DB_STATUS_FATAL		= 1 << 1,	/* DEVICE_FATAL */
	VRNIC_DB_STATUS_RQ_WAKEUP	= 1 << 2,	/* RQ posts kick too */
};

/* Byte offsets of the two 32-bit words inside a slot. */
#define VRNIC_DB_QP_SQ_PI		0	/* QP: SQ producer index */
#define VRNIC_DB_QP_RQ_PI		4	/* QP: RQ producer index */
#define VRNIC_DB_CQ_CI			0	/* CQ: consumer index */
#define VRNIC_DB_CQ_ARM			4	/* CQ: arm word */
#define VRNIC_DB_SRQ_PI			0	/* SRQ: producer index */
#define VRNIC_DB_SRQ_CI			4	/* SRQ: consumer index (device) */
#define VRNIC_DB_EQ_CI			0	/* comp EQ: consumer index */

/*
 * CQ arm word: two independent 16-bit request counters.  The guest
 * increments next_sn for "notify on the next completion" and sol_sn for
 * "notify on the next solicited or error completion", and stores the whole
 * word with one 32-bit store.  The device remembers the last values it saw;
 * a changed counter is a new request.  See the arm protocol in the spec.
 */
#define VRNIC_CQ_ARM_NEXT_SHIFT		0
#define VRNIC_CQ_ARM_SOL_SHIFT		16
#define VRNIC_CQ_ARM_SN_MASK		0xffffU
#define VRNIC_CQ_ARM_WORD(next_sn, sol_sn) \
	((__u32)((((__u32)(next_sn) & VRNIC_CQ_ARM_SN_MASK) << \
		  VRNIC_CQ_ARM_NEXT_SHIFT) | \
		 (((__u32)(sol_sn) & VRNIC_CQ_ARM_SN_MASK) << \
		  VRNIC_CQ_ARM_SOL_SHIFT)))
#define VRNIC_CQ_ARM_NEXT_SN(word) \
	(((__u32)(word) >> VRNIC_CQ_ARM_NEXT_SHIFT) & VRNIC_CQ_ARM_SN_MASK)
#define VRNIC_CQ_ARM_SOL_SN(word) \
	(((__u32)(word) >> VRNIC_CQ_ARM_SOL_SHIFT) & VRNIC_CQ_ARM_SN_MASK)

struct vrnic_db_status {
	__le32 status;			/* VRNIC_DB_STATUS_* */
	__le32 reserved;
};

struct vrnic_db_qp {
	__le32 sq_pi;			/* free-running, guest-written */
	__le32 rq_pi;			/* free-running, guest-written */
};

struct vrnic_db_cq {
	__le32 ci;			/* free-running, guest-written */
	__le32 arm;			/* VRNIC_CQ_ARM_WORD() */
};

struct vrnic_db_srq {
	__le32 pi;			/* free-running, guest-written */
	__le32 ci;			/* free-running, device-written */
};

struct vrnic_db_eq {
	__le32 ci;
	__le32 reserved;
};

union vrnic_db_slot {
	struct vrnic_db_status st;
	struct vrnic_db_qp qp;
	struct vrnic_db_cq cq;
	struct vrnic_db_srq srq;
	struct vrnic_db_eq eq;
	__le64 raw;
};

struct vrnic_db_page {
	union vrnic_db_slot slot[VRNIC_DB_SLOTS_PER_PAGE];
};

/* ------------------------------------------------------------------------
 * Register page (BAR2 page 0)
 *
 * Cache line 0x000-0x0ff: identity and capabilities, and device status.
 * Lines at 0x100, 0x140, 0x180: device-written, changing at run time.
 * Lines at 0x200, 0x240, 0x280: driver-written.
 * Device-written and driver-written words never share a 64-byte line.
 * ------------------------------------------------------------------------
 */

/* device_status */
enum vrnic_dev_status_bits {
	VRNIC_DEV_STATUS_READY		= 1 << 0,
	VRNIC_DEV_STATUS_FATAL		= 1 << 1,
};

/* fatal_code */
enum vrnic_fatal_code {
	VRNIC_FATAL_NONE		= 0,
	VRNIC_FATAL_BAD_CONFIG		= 1,	/* ring registers at DRIVER_OK */
	VRNIC_FATAL_CMDQ		= 2,	/* cmdq_pi out of range */
	VRNIC_FATAL_INTERNAL		= 3,	/* model bug or host failure */
};

/* driver_ctrl */
enum vrnic_drv_ctrl_bits {
	VRNIC_DRV_CTRL_DRIVER_OK	= 1 << 0,
};

/* port_state: IB port states (IB_PORT_*). */
enum vrnic_port_state {
	VRNIC_PORT_NOP			= 0,
	VRNIC_PORT_DOWN			= 1,
	VRNIC_PORT_INIT			= 2,
	VRNIC_PORT_ARMED		= 3,
	VRNIC_PORT_ACTIVE		= 4,
};

/* Physical port state (IB_PORT_PHYS_STATE_*). */
#define VRNIC_PORT_PHYS_DISABLED	3
#define VRNIC_PORT_PHYS_LINK_UP		5

/* MTU codes (IB_MTU_*). */
enum vrnic_mtu {
	VRNIC_MTU_256			= 1,
	VRNIC_MTU_512			= 2,
	VRNIC_MTU_1024			= 3,
	VRNIC_MTU_2048			= 4,
	VRNIC_MTU_4096			= 5,
};

/* atomic_cap (IB_ATOMIC_*). */
enum vrnic_atomic_cap {
	VRNIC_ATOMIC_NONE		= 0,
	VRNIC_ATOMIC_HCA		= 1,
	VRNIC_ATOMIC_GLOB		= 2,
};

struct vrnic_regs {
	/* 0x000: identity; written by the device before READY, constant */
	__le32 signature;		/* VRNIC_SIGNATURE */
	__le16 version_major;		/* VRNIC_VERSION_MAJOR */
	__le16 version_minor;		/* VRNIC_VERSION_MINOR */
	__le64 bar2_size;		/* bytes, power of two */
	__le32 db_page_first;		/* index of first doorbell page (1) */
	__le32 db_page_count;		/* doorbell pages, kernel's included */
	__le32 db_page_size;		/* 4096 */
	__le32 db_slots_per_page;	/* 512 */
	__u8 mac[6];			/* port MAC address */
	__le16 rsvd_026;
	__le64 node_guid;		/* value; driver uses cpu_to_be64() */
	__le64 features;			/* VRNIC_FEATURE_*; none in 1.0 */
	__le64 fw_version;		/* major << 32 | minor << 16 | patch */

	/* 0x040: capabilities; written by the device before READY */
	__le32 max_qp;
	__le32 max_cq;
	__le32 max_mr;
	__le32 max_pd;
	__le32 max_srq;			/* 0: SRQ unsupported */
	__le32 max_ah;
	__le32 max_uctx;			/* user contexts (doorbell pages) */
	__le32 max_comp_eqs;
	__le32 max_qp_wr;		/* SQ/RQ depth limit */
	__le32 max_srq_wr;
	__le32 max_sge;			/* SGEs per send or receive WQE */
	__le32 max_srq_sge;
	__le32 max_inline;		/* inline bytes per send WQE */
	__le32 max_cqe;			/* CQ depth limit */
	__le64 max_mr_size;
	__le64 page_size_cap;		/* bit n set: MR page_shift n ok */
	__le32 max_msg_sz;
	__le32 num_vectors;		/* MSI-X vectors in use */
	__le32 atomic_cap;		/* enum vrnic_atomic_cap */
	__le32 max_qp_rd_atom;		/* max_dest_rd_atomic limit */
	__le32 max_qp_init_rd_atom;	/* max_rd_atomic limit */
	__le32 gid_tbl_len;
	__le32 max_eqe;			/* comp EQ depth limit */
	__le32 eth_max_mtu;		/* Ethernet payload bytes */
	__le32 hw_rev;
	__le32 max_mcast_grp;		/* 1.3: multicast groups */
	__le32 max_mcast_qp_attach;	/* 1.3: QPs per group */
	__le32 max_xrcd;		/* 1.5: XRC domains; 0: no XRC */
	__le32 max_fast_reg_pages;	/* 1.7: ALLOC_MR limit; 0: no FRMR */
	__u8 rsvd_0bc[4];

	/* 0x0c0: device status; written by the device when it changes */
	__le32 device_status;		/* VRNIC_DEV_STATUS_* */
	__le32 fatal_code;		/* enum vrnic_fatal_code */
	__le32 reset_ack;		/* copy of reset_req once done */
	__le32 port_state;		/* enum vrnic_port_state */
	__le32 active_mtu;		/* enum vrnic_mtu */
	__le32 max_mtu;			/* enum vrnic_mtu */
	__le32 eq_overflow;		/* events dropped: EQ full (counter) */
	__le32 eth_rx_missed;		/* 1.1: frames dropped, no RX buffer */
	__le32 eth_rx_oversize;		/* 1.1: frames dropped, buffer short */
	__le32 ud_qkey_drops;		/* 1.3: datagrams dropped, wrong qkey */
	__le32 ud_no_recv_drops;		/* 1.3: datagrams dropped, no receive */
	__le32 ud_no_dest_drops;		/* 1.3: datagrams to no ready QP */
	__le32 uc_drops;			/* 1.3: UC messages dropped */
	__le32 wire_tx_pkts;		/* 1.10: RoCE v2 packets sent to the wire */
	__le32 wire_rx_pkts;		/* 1.10: RoCE v2 packets taken from it */
	__le32 wire_rx_drops;		/* 1.10: RoCE v2 packets dropped */

	/* 0x100: liveness; incremented by the device at least every 100 ms */
	__le64 heartbeat;

	/* 0x108: 1.11: RoCE v2 transport counters (wrapping); device only */
	__le32 wire_resent_pkts;	/* request packets sent again */
	__le32 wire_seq_naks;		/* sequence NAKs sent: a packet missing */
	__le32 wire_dup_reqs;		/* duplicate requests answered again */
	__le32 wire_stale_pkts;		/* late answers, requests to a closed QP */
	__u8 rsvd_118[40];

	/* 0x140: idle handshake; written by the device */
	__le32 need_wakeup;		/* VRNIC_DB_STATUS_*_WAKEUP bits */
	__u8 rsvd_144[60];

	/* 0x180: device-written ring indices (free-running) */
	__le32 cmdq_ci;
	__le32 aeq_pi;
	__le32 tx_ci;
	__le32 rx_ci;
	__u8 rsvd_190[48];

	/* 0x1c0: 1.9: traffic counters (64-bit, wrapping); device only */
	__le64 rdma_tx_msgs;		/* requests completed by this port's QPs */
	__le64 rdma_tx_bytes;		/* ... their payload bytes */
	__le64 rdma_rx_msgs;		/* requests its QPs served as responder */
	__le64 rdma_rx_bytes;		/* ... the bytes moved for them */
	__le64 rnr_naks;		/* requests that found no receive */
	__le64 retries;			/* requests sent again after ack timeout */
	__le64 completion_errors;	/* error CQEs, flushes not counted */
	__le64 rsvd_1f8;

	/* 0x200: driver control; written by the driver */
	__le32 driver_ctrl;		/* VRNIC_DRV_CTRL_* */
	__le32 reset_req;		/* driver increments to request reset */
	__le32 driver_version;		/* major << 16 | minor (informative) */
	__le32 rsvd_20c;
	__le64 driver_features;		/* subset of features */
	__u8 rsvd_218[40];

	/* 0x240: ring configuration; latched at DRIVER_OK 0 -> 1 */
	__le64 cmdq_base;		/* guest physical, 4 KiB aligned */
	__le64 aeq_base;
	__le64 tx_base;			/* 0: Ethernet TX disabled */
	__le64 rx_base;			/* 0: Ethernet RX disabled */
	__le32 cmdq_log_depth;
	__le32 aeq_log_depth;
	__le32 tx_log_depth;
	__le32 rx_log_depth;
	__u8 rsvd_270[16];

	/* 0x280: driver-written ring indices (free-running) */
	__le32 cmdq_pi;
	__le32 aeq_ci;
	__le32 tx_pi;
	__le32 rx_pi;
	__u8 rsvd_290[48];

	__u8 rsvd_2c0[0x1000 - 0x2c0];
};

/* ------------------------------------------------------------------------
 * Rings: common limits
 * ------------------------------------------------------------------------
 */

#define VRNIC_RING_ALIGN		4096	/* every ring base */
#define VRNIC_RING_MAX_BYTES		(4U << 20)	/* every ring */

#define VRNIC_CMDQ_LOG_DEPTH_MIN	1
#define VRNIC_CMDQ_LOG_DEPTH_MAX	10
#define VRNIC_EQ_LOG_DEPTH_MIN		4	/* AEQ and comp EQs */
#define VRNIC_EQ_LOG_DEPTH_MAX		16
#define VRNIC_CQ_LOG_DEPTH_MIN		1
#define VRNIC_WQ_LOG_DEPTH_MIN		1	/* SQ, RQ, SRQ */
#define VRNIC_ETH_LOG_DEPTH_MIN		4
#define VRNIC_ETH_LOG_DEPTH_MAX		12

/*
 * Ownership (phase) bit of CQEs and EQEs: the entry written at free-running
 * index idx carries phase VRNIC_PHASE(idx, log_depth): 1 on the first pass
 * through the ring, 0 on the second, and so on.
 */
#define VRNIC_PHASE(idx, log_depth) \
	((__u8)(((((__u32)(idx)) >> (log_depth)) & 1U) ^ 1U))
enum vrnic_owner_bits {
	VRNIC_OWNER_PHASE		= 1 << 0,	/* bit in owner byte */
};

/* ------------------------------------------------------------------------
 * Command queue
 * ------------------------------------------------------------------------
 */

#define VRNIC_CMD_SIZE			128
#define VRNIC_CMD_PAYLOAD_SIZE		112

enum vrnic_cmd_opcode {
	VRNIC_CMD_NOP			= 0x01,
	VRNIC_CMD_QUERY_DEVICE		= 0x02,
	VRNIC_CMD_QUERY_PORT		= 0x03,
	VRNIC_CMD_ALLOC_UCTX		= 0x04,
	VRNIC_CMD_DEALLOC_UCTX		= 0x05,
	VRNIC_CMD_CREATE_PD		= 0x06,
	VRNIC_CMD_DESTROY_PD		= 0x07,
	VRNIC_CMD_REG_MR		= 0x08,
	VRNIC_CMD_DEREG_MR		= 0x09,
	VRNIC_CMD_CREATE_CQ		= 0x0a,
	VRNIC_CMD_DESTROY_CQ		= 0x0b,
	VRNIC_CMD_RESIZE_CQ		= 0x0c,
	VRNIC_CMD_CREATE_QP		= 0x0d,
	VRNIC_CMD_MODIFY_QP		= 0x0e,
	VRNIC_CMD_QUERY_QP		= 0x0f,
	VRNIC_CMD_DESTROY_QP		= 0x10,
	VRNIC_CMD_CREATE_SRQ		= 0x11,
	VRNIC_CMD_MODIFY_SRQ		= 0x12,
	VRNIC_CMD_DESTROY_SRQ		= 0x13,
	VRNIC_CMD_CREATE_AH		= 0x14,
	VRNIC_CMD_DESTROY_AH		= 0x15,
	VRNIC_CMD_SET_GID		= 0x16,
	VRNIC_CMD_CREATE_EQ		= 0x17,
	VRNIC_CMD_DESTROY_EQ		= 0x18,
	VRNIC_CMD_SET_ETH		= 0x19,	/* 1.1 */
	VRNIC_CMD_ATTACH_MCAST		= 0x1a,	/* 1.3 */
	VRNIC_CMD_DETACH_MCAST		= 0x1b,	/* 1.3 */
	VRNIC_CMD_QUERY_CLOCK		= 0x1c,	/* 1.3 */
	VRNIC_CMD_ALLOC_XRCD		= 0x1d,	/* 1.5 */
	VRNIC_CMD_DEALLOC_XRCD		= 0x1e,	/* 1.5 */
	VRNIC_CMD_ALLOC_MR		= 0x1f,	/* 1.7 */
	VRNIC_CMD_ALLOC_MW		= 0x20,	/* 1.8 */
	VRNIC_CMD_DEALLOC_MW		= 0x21,	/* 1.8 */
};

/* Command status, written by the device.  Errno in the spec's table. */
enum vrnic_cmd_status {
	VRNIC_CMD_STATUS_OK		= 0,
	VRNIC_CMD_STATUS_BAD_OPCODE	= 1,	/* -EOPNOTSUPP */
	VRNIC_CMD_STATUS_BAD_PARAM	= 2,	/* -EINVAL */
	VRNIC_CMD_STATUS_NO_RESOURCE	= 3,	/* -ENOMEM */
	VRNIC_CMD_STATUS_BAD_HANDLE	= 4,	/* -EINVAL */
	VRNIC_CMD_STATUS_BAD_STATE	= 5,	/* -EINVAL */
	VRNIC_CMD_STATUS_BUSY		= 6,	/* -EBUSY */
	VRNIC_CMD_STATUS_UNSUPPORTED	= 7,	/* -EOPNOTSUPP */
	VRNIC_CMD_STATUS_BAD_ADDR	= 8,	/* -EFAULT */
	VRNIC_CMD_STATUS_INTERNAL	= 9,	/* -EIO */
};

/* Handles are device-assigned __u32; these values have fixed meanings. */
#define VRNIC_UCTX_KERNEL		0	/* the kernel driver's context */
#define VRNIC_HANDLE_NONE		0	/* no SRQ, ... */
#define VRNIC_QPN_MIN			2	/* QPNs are in [2, 2^24) */
#define VRNIC_QPN_GSI			1	/* 1.4: the kernel's GSI QP */
#define VRNIC_QPN_MASK			0x00ffffffU
#define VRNIC_PSN_MASK			0x00ffffffU
#define VRNIC_AEQ_EQN			0	/* comp EQs are numbered >= 1 */

struct vrnic_cmd_hdr {
	__le16 opcode;			/* enum vrnic_cmd_opcode */
	__le16 flags;			/* none defined: must be 0 */
	__le32 seq;			/* driver's tag, left untouched */
	__le32 status;			/* enum vrnic_cmd_status (device) */
	__le32 syndrome;			/* device detail for logs (device) */
};

/* Requests and responses.  A response overwrites the payload in place. */

struct vrnic_cmd_handle {		/* DEALLOC_UCTX, DESTROY_*, DEREG_MR */
	__le32 handle;
	__le32 reserved;
};

struct vrnic_cmd_query_device_resp {
	__le32 num_uctx;			/* objects allocated right now */
	__le32 num_pd;
	__le32 num_mr;
	__le32 num_cq;
	__le32 num_qp;
	__le32 num_srq;
	__le32 num_ah;
	__le32 num_eq;
};

struct vrnic_cmd_query_port {
	__u8 port_num;			/* 1 */
	__u8 reserved[7];
};

struct vrnic_cmd_query_port_resp {
	__u8 state;			/* enum vrnic_port_state */
	__u8 phys_state;		/* VRNIC_PORT_PHYS_* */
	__u8 max_mtu;			/* enum vrnic_mtu */
	__u8 active_mtu;		/* enum vrnic_mtu */
	__le32 gid_tbl_len;
	__le16 pkey_tbl_len;		/* 1 */
	__u8 active_speed;		/* IB_SPEED_* */
	__u8 active_width;		/* IB_WIDTH_* */
	__le32 max_msg_sz;
};

struct vrnic_cmd_alloc_uctx_resp {
	__le32 uctx;
	__le32 db_page;			/* BAR2 page index, >= 2 */
};

struct vrnic_cmd_create_pd {
	__le32 uctx;
	__le32 reserved;
};

struct vrnic_cmd_create_pd_resp {
	__le32 pd;
	__le32 reserved;
};

/* Access flags: MR access and QP access (IB_ACCESS_* values). */
enum vrnic_access_flags {
	VRNIC_ACCESS_LOCAL_WRITE	= 1 << 0,
	VRNIC_ACCESS_REMOTE_WRITE	= 1 << 1,
	VRNIC_ACCESS_REMOTE_READ	= 1 << 2,
	VRNIC_ACCESS_REMOTE_ATOMIC	= 1 << 3,
	VRNIC_ACCESS_ALL		= 0xf,
	/* 1.8: an MR that memory windows may be bound to (REG_MR only) */
	VRNIC_ACCESS_MW_BIND		= 1 << 4,
};

/* REG_MR flags */
enum vrnic_mr_flags {
	VRNIC_MR_F_PHYS			= 1 << 0,	/* kernel DMA MR */
};

/* REG_MR page list levels */
#define VRNIC_PBL_DIRECT		1
#define VRNIC_PBL_INDIRECT		2
#define VRNIC_PBL_ENTRIES_PER_PAGE	512	/* __le64 per 4 KiB leaf */

#define VRNIC_MR_PAGE_SHIFT_MIN		12
#define VRNIC_MR_PAGE_SHIFT_MAX		30

struct vrnic_cmd_reg_mr {
	__le32 pd;
	__le32 access;			/* VRNIC_ACCESS_* */
	__le64 iova;
	__le64 length;
	__le64 pbl_addr;			/* guest physical */
	__le32 npages;
	__u8 page_shift;
	__u8 pbl_level;			/* VRNIC_PBL_* */
	__le16 flags;			/* VRNIC_MR_F_* */
};

struct vrnic_cmd_reg_mr_resp {		/* REG_MR, ALLOC_MR */
	__le32 mr;
	__le32 lkey;
	__le32 rkey;
	__le32 reserved;
};

/*
 * ALLOC_MR (1.7): a fast-registration MR of a kernel PD, in the free state
 * until a VRNIC_WR_REG_MR WQE registers it; its page lists hold at most
 * max_pages entries.
 */
struct vrnic_cmd_alloc_mr {
	__le32 pd;
	__le32 max_pages;		/* 1..max_fast_reg_pages */
};

/* ALLOC_MW (1.8): a memory window of type 1 or 2, unbound. */
enum vrnic_mw_type {
	VRNIC_MW_TYPE_1			= 1,
	VRNIC_MW_TYPE_2			= 2,
};

struct vrnic_cmd_alloc_mw {
	__le32 pd;
	__u8 type;			/* enum vrnic_mw_type */
	__u8 reserved[3];
};

struct vrnic_cmd_alloc_mw_resp {
	__le32 mw;			/* handle == initial rkey */
	__le32 rkey;
};

struct vrnic_cmd_create_cq {
	__le32 uctx;
	__le32 eqn;			/* completion EQ, >= 1 */
	__le64 ring_addr;		/* guest physical, zeroed by driver */
	__le32 log_depth;
	__le32 flags;			/* none defined: must be 0 */
};

struct vrnic_cmd_create_cq_resp {
	__le32 cqn;
	__le32 db_slot;
};

struct vrnic_cmd_resize_cq {
	__le32 cqn;
	__le32 log_depth;
	__le64 ring_addr;
};

/* QP types (IB_QPT_* values). */
enum vrnic_qp_type {
	VRNIC_QPT_GSI			= 1,	/* 1.4: kernel only, QPN 1 */
	VRNIC_QPT_RC			= 2,
	VRNIC_QPT_UC			= 3,	/* 1.3 */
	VRNIC_QPT_UD			= 4,	/* 1.3 */
	VRNIC_QPT_XRC_INI		= 9,	/* 1.5 */
	VRNIC_QPT_XRC_TGT		= 10,	/* 1.5 */
};

/* UD: a WQE's remote_qkey with this bit set means the QP's own qkey. */
#define VRNIC_QKEY_USE_QP		0x80000000U
/* 1.4: qkeys with the high bit are privileged: only kernel QPs set them. */
#define VRNIC_QKEY_PRIVILEGED		0x80000000U
/* 1.4: the GSI QP's qkey, its only one (IBA 13.5.3.2). */
#define VRNIC_GSI_QKEY			0x80010000U

/* CREATE_QP flags */
enum vrnic_qp_flags {
	VRNIC_QP_F_SQ_SIG_ALL		= 1 << 0,
};

struct vrnic_cmd_create_qp {
	__le32 uctx;
	__le32 pd;
	__u8 qp_type;			/* enum vrnic_qp_type */
	__u8 reserved0;
	__le16 flags;			/* VRNIC_QP_F_* */
	__le32 send_cqn;
	__le32 recv_cqn;
	__le32 srqn;			/* VRNIC_HANDLE_NONE: own RQ */
	__le64 sq_addr;
	__le64 rq_addr;			/* 0 with an SRQ */
	__u8 sq_log_depth;
	__u8 sq_wqe_shift;
	__u8 rq_log_depth;		/* 0 with an SRQ */
	__u8 rq_wqe_shift;		/* 0 with an SRQ */
	__le16 max_send_sge;
	__le16 max_recv_sge;
	__le32 max_inline;
	__le32 xrcd;			/* 1.5: XRC_TGT only, else 0 */
};

struct vrnic_cmd_create_qp_resp {
	__le32 qpn;
	__le32 db_slot;
};

/* QP states (IB_QPS_* values). */
enum vrnic_qp_state {
	VRNIC_QPS_RESET			= 0,
	VRNIC_QPS_INIT			= 1,
	VRNIC_QPS_RTR			= 2,
	VRNIC_QPS_RTS			= 3,
	VRNIC_QPS_SQD			= 4,
	VRNIC_QPS_SQE			= 5,
	VRNIC_QPS_ERR			= 6,
};

/* MODIFY_QP attr_mask (IB_QP_* values). */
enum vrnic_qp_attr_mask {
	VRNIC_QP_ATTR_STATE		= 1 << 0,
	VRNIC_QP_ATTR_CUR_STATE		= 1 << 1,
	VRNIC_QP_ATTR_EN_SQD_ASYNC_NOTIFY = 1 << 2,
	VRNIC_QP_ATTR_ACCESS_FLAGS	= 1 << 3,
	VRNIC_QP_ATTR_PKEY_INDEX	= 1 << 4,
	VRNIC_QP_ATTR_PORT		= 1 << 5,
	VRNIC_QP_ATTR_QKEY		= 1 << 6,
	VRNIC_QP_ATTR_AV		= 1 << 7,
	VRNIC_QP_ATTR_PATH_MTU		= 1 << 8,
	VRNIC_QP_ATTR_TIMEOUT		= 1 << 9,
	VRNIC_QP_ATTR_RETRY_CNT		= 1 << 10,
	VRNIC_QP_ATTR_RNR_RETRY		= 1 << 11,
	VRNIC_QP_ATTR_RQ_PSN		= 1 << 12,
	VRNIC_QP_ATTR_MAX_QP_RD_ATOMIC	= 1 << 13,
	VRNIC_QP_ATTR_ALT_PATH		= 1 << 14,	/* unsupported */
	VRNIC_QP_ATTR_MIN_RNR_TIMER	= 1 << 15,
	VRNIC_QP_ATTR_SQ_PSN		= 1 << 16,
	VRNIC_QP_ATTR_MAX_DEST_RD_ATOMIC = 1 << 17,
	VRNIC_QP_ATTR_PATH_MIG_STATE	= 1 << 18,	/* unsupported */
	VRNIC_QP_ATTR_CAP		= 1 << 19,	/* unsupported */
	VRNIC_QP_ATTR_DEST_QPN		= 1 << 20,
};

#define VRNIC_QP_ATTR_ALL		0x001fffffU	/* bits 0..20 */

#define VRNIC_VLAN_NONE			0xffff

/* GID types (IB_GID_TYPE_* values); only RoCE v2 in 1.0. */
enum vrnic_gid_type {
	VRNIC_GID_TYPE_IB		= 0,
	VRNIC_GID_TYPE_ROCE_V1		= 1,
	VRNIC_GID_TYPE_ROCE_V2		= 2,
};

/* Address vector: the remote end of an RC QP or a UD AH. */
struct vrnic_av {
	__u8 dgid[16];
	__le32 flow_label;
	__u8 sgid_index;
	__u8 hop_limit;
	__u8 traffic_class;
	__u8 sl;
	__u8 dmac[6];
	__le16 vlan_id;			/* VRNIC_VLAN_NONE: untagged */
};

struct vrnic_qp_attr {
	__u8 qp_state;			/* enum vrnic_qp_state */
	__u8 cur_qp_state;
	__u8 path_mtu;			/* enum vrnic_mtu */
	__u8 port_num;			/* 1 */
	__le32 qp_access_flags;		/* VRNIC_ACCESS_REMOTE_* */
	__le32 qkey;
	__le32 dest_qpn;
	__le32 rq_psn;
	__le32 sq_psn;
	__le16 pkey_index;		/* 0 */
	__u8 min_rnr_timer;		/* IB encoding, 0..31 */
	__u8 timeout;			/* 4.096 us * 2^timeout, 0..31 */
	__u8 retry_cnt;			/* 0..7 */
	__u8 rnr_retry;			/* 0..7, 7 = infinite */
	__u8 max_rd_atomic;
	__u8 max_dest_rd_atomic;
	__u8 en_sqd_async_notify;
	__u8 sq_draining;		/* QUERY_QP only */
	__u8 reserved[6];
	struct vrnic_av av;
};

struct vrnic_cmd_modify_qp {
	__le32 qpn;
	__le32 attr_mask;		/* VRNIC_QP_ATTR_* */
	struct vrnic_qp_attr attr;
};

struct vrnic_cmd_query_qp_resp {
	struct vrnic_qp_attr attr;
};

struct vrnic_cmd_create_srq {
	__le32 uctx;
	__le32 pd;
	__le64 ring_addr;
	__u8 log_depth;
	__u8 wqe_shift;
	__le16 max_sge;
	__le32 srq_limit;
	__le32 xrcd;			/* 1.5: an XRC SRQ's domain, else 0 */
	__le32 cqn;			/* 1.5: an XRC SRQ's CQ, else 0 */
};

struct vrnic_cmd_create_srq_resp {
	__le32 srqn;
	__le32 db_slot;
};

/* MODIFY_SRQ attr_mask (IB_SRQ_* values) */
enum vrnic_srq_attr_mask {
	VRNIC_SRQ_ATTR_MAX_WR		= 1 << 0,	/* resize, since 1.6 */
	VRNIC_SRQ_ATTR_LIMIT		= 1 << 1,
};

struct vrnic_cmd_modify_srq {
	__le32 srqn;
	__le32 attr_mask;
	__le32 max_wr;			/* reserved (0) */
	__le32 srq_limit;
	__le64 ring_addr;		/* VRNIC_SRQ_ATTR_MAX_WR: the new ring */
	__u8 log_depth;			/* VRNIC_SRQ_ATTR_MAX_WR: its depth */
	__u8 reserved[7];
};

struct vrnic_cmd_create_ah {
	__le32 pd;
	__le32 reserved;
	struct vrnic_av av;
};

struct vrnic_cmd_create_ah_resp {
	__le32 ah;
	__le32 reserved;
};

/* SET_GID flags */
enum vrnic_gid_flags {
	VRNIC_GID_F_VALID		= 1 << 0,	/* clear: delete */
};

struct vrnic_cmd_set_gid {
	__le32 index;
	__u8 gid_type;			/* enum vrnic_gid_type */
	__u8 flags;			/* VRNIC_GID_F_* */
	__le16 vlan_id;			/* VRNIC_VLAN_NONE: untagged */
	__u8 gid[16];
	__u8 mac[6];
	__le16 reserved;
};

struct vrnic_cmd_create_eq {
	__le64 ring_addr;		/* guest physical, zeroed by driver */
	__le32 log_depth;
	__le32 vector;			/* MSI-X vector, >= VRNIC_IRQ_COMP_BASE */
};

struct vrnic_cmd_create_eq_resp {
	__le32 eqn;
	__le32 db_slot;			/* in the kernel doorbell page */
};

/* SET_ETH flags (1.1) */
enum vrnic_eth_flags {
	VRNIC_ETH_F_LOOPBACK		= 1 << 0,	/* MAC loopback */
};

struct vrnic_cmd_set_eth {
	__le32 flags;			/* VRNIC_ETH_F_* */
	__le32 reserved;
};

/*
 * QUERY_CLOCK: the device clock that stamps CQEs, in nanoseconds of the
 * host's CLOCK_REALTIME (so also a wall clock).
 */
struct vrnic_cmd_query_clock_resp {
	__le64 now_ns;
};

/* ALLOC_XRCD (1.5): an XRC domain of a context (the kernel's: shared). */
struct vrnic_cmd_alloc_xrcd {
	__le32 uctx;
	__le32 reserved;
};

struct vrnic_cmd_alloc_xrcd_resp {
	__le32 xrcd;
	__le32 reserved;
};

/* ATTACH_MCAST, DETACH_MCAST: a UD QP joins or leaves a multicast GID. */
struct vrnic_cmd_mcast {
	__le32 qpn;
	__le32 reserved;
	__u8 gid[16];
};

struct vrnic_cmd {
	struct vrnic_cmd_hdr hdr;
	union {
		struct vrnic_cmd_handle handle;
		struct vrnic_cmd_query_device_resp query_device_resp;
		struct vrnic_cmd_query_port query_port;
		struct vrnic_cmd_query_port_resp query_port_resp;
		struct vrnic_cmd_alloc_uctx_resp alloc_uctx_resp;
		struct vrnic_cmd_create_pd create_pd;
		struct vrnic_cmd_create_pd_resp create_pd_resp;
		struct vrnic_cmd_reg_mr reg_mr;
		struct vrnic_cmd_reg_mr_resp reg_mr_resp;
		struct vrnic_cmd_alloc_mr alloc_mr;
		struct vrnic_cmd_alloc_mw alloc_mw;
		struct vrnic_cmd_alloc_mw_resp alloc_mw_resp;
		struct vrnic_cmd_create_cq create_cq;
		struct vrnic_cmd_create_cq_resp create_cq_resp;
		struct vrnic_cmd_resize_cq resize_cq;
		struct vrnic_cmd_create_qp create_qp;
		struct vrnic_cmd_create_qp_resp create_qp_resp;
		struct vrnic_cmd_modify_qp modify_qp;
		struct vrnic_cmd_query_qp_resp query_qp_resp;
		struct vrnic_cmd_create_srq create_srq;
		struct vrnic_cmd_create_srq_resp create_srq_resp;
		struct vrnic_cmd_modify_srq modify_srq;
		struct vrnic_cmd_create_ah create_ah;
		struct vrnic_cmd_create_ah_resp create_ah_resp;
		struct vrnic_cmd_set_gid set_gid;
		struct vrnic_cmd_create_eq create_eq;
		struct vrnic_cmd_create_eq_resp create_eq_resp;
		struct vrnic_cmd_set_eth set_eth;
		struct vrnic_cmd_mcast mcast;
		struct vrnic_cmd_query_clock_resp query_clock_resp;
		struct vrnic_cmd_alloc_xrcd alloc_xrcd;
		struct vrnic_cmd_alloc_xrcd_resp alloc_xrcd_resp;
		__u8 payload[VRNIC_CMD_PAYLOAD_SIZE];
	};
};

/* ------------------------------------------------------------------------
 * Event queues
 * ------------------------------------------------------------------------
 */

enum vrnic_eqe_type {
	VRNIC_EQE_COMP			= 1,	/* obj: cqn */
	VRNIC_EQE_CQ_ERROR		= 2,	/* obj: cqn */
	VRNIC_EQE_QP_FATAL		= 3,	/* obj: qpn */
	VRNIC_EQE_QP_REQ_ERR		= 4,	/* obj: qpn */
	VRNIC_EQE_QP_ACCESS_ERR		= 5,	/* obj: qpn */
	VRNIC_EQE_COMM_EST		= 6,	/* obj: qpn */
	VRNIC_EQE_SQ_DRAINED		= 7,	/* obj: qpn */
	VRNIC_EQE_QP_LAST_WQE_REACHED	= 8,	/* obj: qpn */
	VRNIC_EQE_SRQ_LIMIT		= 9,	/* obj: srqn */
	VRNIC_EQE_SRQ_ERR		= 10,	/* obj: srqn */
	VRNIC_EQE_PORT_ACTIVE		= 11,	/* obj: port number */
	VRNIC_EQE_PORT_ERR		= 12,	/* obj: port number */
	VRNIC_EQE_GID_CHANGE		= 13,	/* obj: port number */
	VRNIC_EQE_DEVICE_FATAL		= 14,	/* obj: fatal_code */
};

#define VRNIC_EQE_SIZE			16

struct vrnic_eqe {
	__u8 type;			/* enum vrnic_eqe_type */
	__u8 owner;			/* bit 0: phase; stored last */
	__le16 reserved;
	__le32 obj;
	__le64 aux;			/* type-specific, 0 if unused */
};

/* ------------------------------------------------------------------------
 * Completion queue entries
 * ------------------------------------------------------------------------
 */

#define VRNIC_CQE_SIZE			64

/* CQE opcode (IB_WC_* / IBV_WC_* values). */
enum vrnic_cqe_opcode {
	VRNIC_CQE_OP_SEND		= 0,
	VRNIC_CQE_OP_RDMA_WRITE		= 1,
	VRNIC_CQE_OP_RDMA_READ		= 2,
	VRNIC_CQE_OP_COMP_SWAP		= 3,
	VRNIC_CQE_OP_FETCH_ADD		= 4,
	VRNIC_CQE_OP_BIND_MW		= 5,	/* 1.8 */
	VRNIC_CQE_OP_LOCAL_INV		= 6,	/* 1.7 */
	VRNIC_CQE_OP_REG_MR		= 8,	/* 1.7: 6.1's IB_WC_REG_MR */
	VRNIC_CQE_OP_RECV		= 128,
	VRNIC_CQE_OP_RECV_RDMA_WITH_IMM	= 129,
};

/* CQE status (IB_WC_* / IBV_WC_* status values). */
enum vrnic_wc_status {
	VRNIC_WC_SUCCESS		= 0,
	VRNIC_WC_LOC_LEN_ERR		= 1,
	VRNIC_WC_LOC_QP_OP_ERR		= 2,
	VRNIC_WC_LOC_EEC_OP_ERR		= 3,
	VRNIC_WC_LOC_PROT_ERR		= 4,
	VRNIC_WC_WR_FLUSH_ERR		= 5,
	VRNIC_WC_MW_BIND_ERR		= 6,
	VRNIC_WC_BAD_RESP_ERR		= 7,
	VRNIC_WC_LOC_ACCESS_ERR		= 8,
	VRNIC_WC_REM_INV_REQ_ERR	= 9,
	VRNIC_WC_REM_ACCESS_ERR		= 10,
	VRNIC_WC_REM_OP_ERR		= 11,
	VRNIC_WC_RETRY_EXC_ERR		= 12,
	VRNIC_WC_RNR_RETRY_EXC_ERR	= 13,
	VRNIC_WC_LOC_RDD_VIOL_ERR	= 14,
	VRNIC_WC_REM_INV_RD_REQ_ERR	= 15,
	VRNIC_WC_REM_ABORT_ERR		= 16,
	VRNIC_WC_INV_EECN_ERR		= 17,
	VRNIC_WC_INV_EEC_STATE_ERR	= 18,
	VRNIC_WC_FATAL_ERR		= 19,
	VRNIC_WC_RESP_TIMEOUT_ERR	= 20,
	VRNIC_WC_GENERAL_ERR		= 21,
};

/* CQE flags */
enum vrnic_cqe_flags {
	VRNIC_CQE_F_WITH_IMM		= 1 << 0,
	VRNIC_CQE_F_GRH			= 1 << 1,	/* UD: GRH area filled */
	VRNIC_CQE_F_WITH_INV		= 1 << 2,	/* 1.7: remote invalidation */
};

/* CQE network_hdr_type (enum rdma_network_type values), with F_GRH. */
enum vrnic_net_type {
	VRNIC_NET_IPV4			= 2,
	VRNIC_NET_IPV6			= 3,
};

/* The area a UD receive gets before the payload (RoCE v2: IP header). */
#define VRNIC_GRH_SIZE			40

struct vrnic_cqe {
	__le64 wr_id;
	__le32 qpn;
	__le32 byte_len;
	union {
		__be32 imm_data;	/* network order, as verbs returns it */
		__le32 invalidated_rkey; /* 1.7: with VRNIC_CQE_F_WITH_INV */
	};
	__le32 src_qp;
	__u8 opcode;			/* enum vrnic_cqe_opcode */
	__u8 status;			/* enum vrnic_wc_status */
	__u8 flags;			/* VRNIC_CQE_F_* */
	__u8 owner;			/* bit 0: phase; stored last */
	__le32 vendor_err;
	__le16 pkey_index;
	__u8 sl;
	__u8 dlid_path_bits;
	__le32 wqe_idx;			/* free-running index of the WQE */
	__u8 network_hdr_type;		/* 1.3: enum vrnic_net_type, F_GRH */
	__u8 reserved0;
	__u8 smac[6];			/* 1.3: sender's MAC, with F_GRH */
	__le64 timestamp;		/* 1.3: device clock (QUERY_CLOCK), ns */
	__u8 reserved[8];
};

/* ------------------------------------------------------------------------
 * Work queue entries
 * ------------------------------------------------------------------------
 */

/* Send WR opcodes (IB_WR_* / IBV_WR_* values). */
enum vrnic_wr_opcode {
	VRNIC_WR_RDMA_WRITE		= 0,
	VRNIC_WR_RDMA_WRITE_WITH_IMM	= 1,
	VRNIC_WR_SEND			= 2,
	VRNIC_WR_SEND_WITH_IMM		= 3,
	VRNIC_WR_RDMA_READ		= 4,
	VRNIC_WR_ATOMIC_CMP_AND_SWP	= 5,
	VRNIC_WR_ATOMIC_FETCH_AND_ADD	= 6,
	VRNIC_WR_LOCAL_INV		= 7,	/* 1.7 */
	VRNIC_WR_BIND_MW		= 8,	/* 1.8 */
	VRNIC_WR_SEND_WITH_INV		= 9,	/* 1.7 */
	VRNIC_WR_REG_MR			= 0x20,	/* 1.7: kernel QPs only */
};

/* Send WQE flags */
enum vrnic_wqe_flags {
	VRNIC_WQE_F_SIGNALED		= 1 << 0,
	VRNIC_WQE_F_SOLICITED		= 1 << 1,
	VRNIC_WQE_F_INLINE		= 1 << 2,
	VRNIC_WQE_F_FENCE		= 1 << 3,
	VRNIC_WQE_F_AV			= 1 << 4,	/* 1.4: kernel UD */
	VRNIC_WQE_F_ALL			= 0x1f,
};

struct vrnic_sge {
	__le64 addr;
	__le32 length;
	__le32 lkey;
};

/*
 * RC, UC and XRC sends: on an XRC_INI QP every opcode names the remote XRC
 * SRQ in xrc_srqn (1.5), at the same offset in both layouts; RC and UC
 * leave it 0.
 */
struct vrnic_wqe_rdma {
	__le64 remote_addr;
	__le32 rkey;
	__le32 xrc_srqn;
};

struct vrnic_wqe_atomic {
	__le64 remote_addr;		/* 8-byte aligned */
	__le32 rkey;
	__le32 xrc_srqn;
	__le64 compare_add;		/* host order */
	__le64 swap;			/* host order */
};

/*
 * REG_MR (1.7): registers a fast-registration MR over npages =
 * ceil(((iova & (page size - 1)) + length) / page size) pages, whose guest
 * physical addresses are npages __le64 at pbl_addr, read during the WQE.
 */
struct vrnic_wqe_reg_mr {
	__le64 iova;
	__le64 length;
	__le64 pbl_addr;		/* guest physical, 8-byte aligned */
	__le32 key;			/* the MR's key with its new key byte */
	__u8 access;			/* VRNIC_ACCESS_* */
	__u8 page_shift;
	__le16 reserved;
};

/*
 * BIND_MW (1.8): binds the memory window whose handle is the upper 24 bits
 * of rkey to [addr, addr + length) of the MR mr_lkey names, and gives it
 * rkey's key byte.
 */
struct vrnic_wqe_bind_mw {
	__le64 addr;
	__le64 length;
	__le32 rkey;			/* the window's new rkey */
	__le32 mr_lkey;
	__le32 access;			/* VRNIC_ACCESS_REMOTE_* */
	__le32 reserved;
};

struct vrnic_wqe_ud {			/* UD sends (1.3) */
	__le32 ah;
	__le32 remote_qpn;
	__le32 remote_qkey;
	__le32 reserved;
};

/*
 * Send WQE: this header, then at byte VRNIC_SEND_WQE_HDR_SIZE either
 * num_sge struct vrnic_sge or, with VRNIC_WQE_F_INLINE, a struct
 * vrnic_inline_hdr followed by the inline bytes.
 */
struct vrnic_send_wqe_hdr {
	__le64 wr_id;
	__u8 opcode;			/* enum vrnic_wr_opcode */
	__u8 flags;			/* VRNIC_WQE_F_* */
	__u8 num_sge;
	__u8 reserved;
	union {
		__be32 imm_data;	/* network order */
		__le32 invalidate_rkey;	/* 1.7: LOCAL_INV, SEND_WITH_INV */
	};
	union {
		struct vrnic_wqe_rdma rdma;
		struct vrnic_wqe_atomic atomic;
		struct vrnic_wqe_ud ud;
		struct vrnic_wqe_reg_mr reg_mr;
		struct vrnic_wqe_bind_mw bind_mw;
		__u8 raw[32];
	};
};

struct vrnic_inline_hdr {
	__le32 length;
	__le32 reserved;
};

/* Receive WQE: this header, then num_sge struct vrnic_sge. */
struct vrnic_recv_wqe_hdr {
	__le64 wr_id;
	__u8 num_sge;
	__u8 reserved[7];
};

#define VRNIC_SEND_WQE_HDR_SIZE		48
#define VRNIC_RECV_WQE_HDR_SIZE		16
#define VRNIC_SGE_SIZE			16
#define VRNIC_INLINE_HDR_SIZE		8
/*
 * 1.4: a kernel UD send WQE with VRNIC_WQE_F_AV carries its address vector
 * (struct vrnic_av) at byte VRNIC_SEND_WQE_HDR_SIZE, instead of naming an
 * AH; its SGEs or inline header follow at VRNIC_SEND_WQE_AV_HDR_SIZE.
 */
#define VRNIC_AV_SIZE			32
#define VRNIC_SEND_WQE_AV_HDR_SIZE	(VRNIC_SEND_WQE_HDR_SIZE + VRNIC_AV_SIZE)

#define VRNIC_SQ_WQE_SHIFT_MIN		6	/* 64 bytes */
#define VRNIC_SQ_WQE_SHIFT_MAX		11	/* 2048 bytes */
#define VRNIC_RQ_WQE_SHIFT_MIN		5	/* 32 bytes */
#define VRNIC_RQ_WQE_SHIFT_MAX		11

/* What a WQE stride can hold. */
#define VRNIC_SQ_MAX_SGE(shift) \
	(((1U << (shift)) - VRNIC_SEND_WQE_HDR_SIZE) / VRNIC_SGE_SIZE)
#define VRNIC_SQ_MAX_INLINE(shift) \
	((1U << (shift)) - VRNIC_SEND_WQE_HDR_SIZE - VRNIC_INLINE_HDR_SIZE)
#define VRNIC_RQ_MAX_SGE(shift) \
	(((1U << (shift)) - VRNIC_RECV_WQE_HDR_SIZE) / VRNIC_SGE_SIZE)

/* ------------------------------------------------------------------------
 * Ethernet function
 * ------------------------------------------------------------------------
 */

/* Descriptor status, written by the device */
enum vrnic_eth_status {
	VRNIC_ETH_ST_DONE		= 1 << 0,
	VRNIC_ETH_ST_ERR		= 1 << 1,	/* bad address/length */
	VRNIC_ETH_ST_DROPPED		= 1 << 2,	/* TX: not delivered */
};

#define VRNIC_ETH_MIN_FRAME		14	/* Ethernet header */
#define VRNIC_ETH_HDR_MAX		18	/* header + one VLAN tag */

struct vrnic_eth_desc {
	__le64 addr;			/* guest physical, one whole frame */
	__le32 len;			/* TX: frame; RX: buffer, then frame */
	__le16 flags;			/* none defined: must be 0 */
	__le16 status;			/* VRNIC_ETH_ST_* (device) */
};

/* ------------------------------------------------------------------------
 * Size and offset pins
 * ------------------------------------------------------------------------
 */

VRNIC_ASSERT_SIZE(struct vrnic_db_status, 8);
VRNIC_ASSERT_SIZE(struct vrnic_db_qp, 8);
VRNIC_ASSERT_SIZE(struct vrnic_db_cq, 8);
VRNIC_ASSERT_SIZE(struct vrnic_db_srq, 8);
VRNIC_ASSERT_SIZE(struct vrnic_db_eq, 8);
VRNIC_ASSERT_SIZE(union vrnic_db_slot, VRNIC_DB_SLOT_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_db_page, VRNIC_DB_PAGE_SIZE);
VRNIC_ASSERT_OFFSET(struct vrnic_db_qp, sq_pi, VRNIC_DB_QP_SQ_PI);
VRNIC_ASSERT_OFFSET(struct vrnic_db_qp, rq_pi, VRNIC_DB_QP_RQ_PI);
VRNIC_ASSERT_OFFSET(struct vrnic_db_cq, ci, VRNIC_DB_CQ_CI);
VRNIC_ASSERT_OFFSET(struct vrnic_db_cq, arm, VRNIC_DB_CQ_ARM);
VRNIC_ASSERT_OFFSET(struct vrnic_db_srq, pi, VRNIC_DB_SRQ_PI);
VRNIC_ASSERT_OFFSET(struct vrnic_db_srq, ci, VRNIC_DB_SRQ_CI);

VRNIC_ASSERT_SIZE(struct vrnic_regs, VRNIC_PAGE_SIZE);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, signature, 0x000);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, version_major, 0x004);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, version_minor, 0x006);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, bar2_size, 0x008);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, db_page_first, 0x010);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, db_page_count, 0x014);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, db_page_size, 0x018);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, db_slots_per_page, 0x01c);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, mac, 0x020);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, node_guid, 0x028);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, features, 0x030);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, fw_version, 0x038);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, max_qp, 0x040);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, max_cq, 0x044);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, max_mr, 0x048);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, max_pd, 0x04c);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, max_srq, 0x050);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, max_ah, 0x054);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, max_uctx, 0x058);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, max_comp_eqs, 0x05c);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, max_qp_wr, 0x060);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, max_srq_wr, 0x064);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, max_sge, 0x068);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, max_srq_sge, 0x06c);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, max_inline, 0x070);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, max_cqe, 0x074);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, max_mr_size, 0x078);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, page_size_cap, 0x080);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, max_msg_sz, 0x088);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, num_vectors, 0x08c);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, atomic_cap, 0x090);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, max_qp_rd_atom, 0x094);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, max_qp_init_rd_atom, 0x098);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, gid_tbl_len, 0x09c);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, max_eqe, 0x0a0);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, eth_max_mtu, 0x0a4);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, hw_rev, 0x0a8);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, max_mcast_grp, 0x0ac);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, max_mcast_qp_attach, 0x0b0);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, max_xrcd, 0x0b4);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, max_fast_reg_pages, 0x0b8);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, device_status, 0x0c0);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, fatal_code, 0x0c4);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, reset_ack, 0x0c8);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, port_state, 0x0cc);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, active_mtu, 0x0d0);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, max_mtu, 0x0d4);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, eq_overflow, 0x0d8);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, eth_rx_missed, 0x0dc);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, eth_rx_oversize, 0x0e0);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, ud_qkey_drops, 0x0e4);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, uc_drops, 0x0f0);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, wire_rx_drops, 0x0fc);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, rdma_tx_msgs, 0x1c0);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, completion_errors, 0x1f0);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, heartbeat, 0x100);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, wire_resent_pkts, 0x108);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, wire_dup_reqs, 0x110);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, wire_stale_pkts, 0x114);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, need_wakeup, 0x140);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, cmdq_ci, 0x180);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, aeq_pi, 0x184);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, tx_ci, 0x188);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, rx_ci, 0x18c);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, driver_ctrl, 0x200);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, reset_req, 0x204);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, driver_version, 0x208);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, driver_features, 0x210);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, cmdq_base, 0x240);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, aeq_base, 0x248);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, tx_base, 0x250);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, rx_base, 0x258);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, cmdq_log_depth, 0x260);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, aeq_log_depth, 0x264);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, tx_log_depth, 0x268);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, rx_log_depth, 0x26c);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, cmdq_pi, 0x280);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, aeq_ci, 0x284);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, tx_pi, 0x288);
VRNIC_ASSERT_OFFSET(struct vrnic_regs, rx_pi, 0x28c);

VRNIC_ASSERT_SIZE(struct vrnic_cmd_hdr, 16);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_handle, 8);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_query_device_resp, 32);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_query_port, 8);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_query_port_resp, 16);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_alloc_uctx_resp, 8);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_create_pd, 8);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_create_pd_resp, 8);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_reg_mr, 40);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_reg_mr_resp, 16);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_create_cq, 24);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_create_cq_resp, 8);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_resize_cq, 16);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_create_qp, 56);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_create_qp_resp, 8);
VRNIC_ASSERT_SIZE(struct vrnic_av, VRNIC_AV_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_qp_attr, 72);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_modify_qp, 80);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_query_qp_resp, 72);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_create_srq, 32);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_create_srq_resp, 8);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_modify_srq, 32);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_create_ah, 40);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_create_ah_resp, 8);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_set_gid, 32);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_create_eq, 16);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_create_eq_resp, 8);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_set_eth, 8);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_mcast, 24);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_query_clock_resp, 8);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_alloc_xrcd, 8);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_alloc_xrcd_resp, 8);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_alloc_mr, 8);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_alloc_mw, 8);
VRNIC_ASSERT_SIZE(struct vrnic_cmd_alloc_mw_resp, 8);
VRNIC_ASSERT_SIZE(struct vrnic_cmd, VRNIC_CMD_SIZE);
VRNIC_ASSERT_OFFSET(struct vrnic_cmd, payload, 16);
VRNIC_ASSERT_OFFSET(struct vrnic_cmd_reg_mr, pbl_addr, 0x18);
VRNIC_ASSERT_OFFSET(struct vrnic_cmd_reg_mr, npages, 0x20);
VRNIC_ASSERT_OFFSET(struct vrnic_cmd_create_qp, sq_addr, 0x18);
VRNIC_ASSERT_OFFSET(struct vrnic_cmd_create_qp, sq_log_depth, 0x28);
VRNIC_ASSERT_OFFSET(struct vrnic_cmd_create_qp, max_inline, 0x30);
VRNIC_ASSERT_OFFSET(struct vrnic_qp_attr, pkey_index, 0x18);
VRNIC_ASSERT_OFFSET(struct vrnic_qp_attr, retry_cnt, 0x1c);
VRNIC_ASSERT_OFFSET(struct vrnic_qp_attr, en_sqd_async_notify, 0x20);
VRNIC_ASSERT_OFFSET(struct vrnic_qp_attr, av, 0x28);
VRNIC_ASSERT_OFFSET(struct vrnic_av, flow_label, 0x10);
VRNIC_ASSERT_OFFSET(struct vrnic_av, dmac, 0x18);
VRNIC_ASSERT_OFFSET(struct vrnic_av, vlan_id, 0x1e);
VRNIC_ASSERT_OFFSET(struct vrnic_cmd_set_gid, gid, 0x08);
VRNIC_ASSERT_OFFSET(struct vrnic_cmd_set_gid, mac, 0x18);

VRNIC_ASSERT_SIZE(struct vrnic_eqe, VRNIC_EQE_SIZE);
VRNIC_ASSERT_OFFSET(struct vrnic_eqe, owner, 1);
VRNIC_ASSERT_OFFSET(struct vrnic_eqe, obj, 4);
VRNIC_ASSERT_OFFSET(struct vrnic_eqe, aux, 8);

VRNIC_ASSERT_SIZE(struct vrnic_cqe, VRNIC_CQE_SIZE);
VRNIC_ASSERT_OFFSET(struct vrnic_cqe, qpn, 0x08);
VRNIC_ASSERT_OFFSET(struct vrnic_cqe, byte_len, 0x0c);
VRNIC_ASSERT_OFFSET(struct vrnic_cqe, imm_data, 0x10);
VRNIC_ASSERT_OFFSET(struct vrnic_cqe, invalidated_rkey, 0x10);
VRNIC_ASSERT_OFFSET(struct vrnic_cqe, src_qp, 0x14);
VRNIC_ASSERT_OFFSET(struct vrnic_cqe, opcode, 0x18);
VRNIC_ASSERT_OFFSET(struct vrnic_cqe, status, 0x19);
VRNIC_ASSERT_OFFSET(struct vrnic_cqe, flags, 0x1a);
VRNIC_ASSERT_OFFSET(struct vrnic_cqe, owner, 0x1b);
VRNIC_ASSERT_OFFSET(struct vrnic_cqe, vendor_err, 0x1c);
VRNIC_ASSERT_OFFSET(struct vrnic_cqe, pkey_index, 0x20);
VRNIC_ASSERT_OFFSET(struct vrnic_cqe, sl, 0x22);
VRNIC_ASSERT_OFFSET(struct vrnic_cqe, dlid_path_bits, 0x23);
VRNIC_ASSERT_OFFSET(struct vrnic_cqe, wqe_idx, 0x24);
VRNIC_ASSERT_OFFSET(struct vrnic_cqe, network_hdr_type, 0x28);
VRNIC_ASSERT_OFFSET(struct vrnic_cqe, smac, 0x2a);
VRNIC_ASSERT_OFFSET(struct vrnic_cqe, timestamp, 0x30);

VRNIC_ASSERT_SIZE(struct vrnic_sge, VRNIC_SGE_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_wqe_rdma, 16);
VRNIC_ASSERT_SIZE(struct vrnic_wqe_atomic, 32);
VRNIC_ASSERT_SIZE(struct vrnic_wqe_ud, 16);
VRNIC_ASSERT_SIZE(struct vrnic_wqe_reg_mr, 32);
VRNIC_ASSERT_SIZE(struct vrnic_wqe_bind_mw, 32);
VRNIC_ASSERT_OFFSET(struct vrnic_send_wqe_hdr, bind_mw.rkey, 0x20);
VRNIC_ASSERT_OFFSET(struct vrnic_send_wqe_hdr, invalidate_rkey, 0x0c);
VRNIC_ASSERT_OFFSET(struct vrnic_send_wqe_hdr, reg_mr.key, 0x28);
VRNIC_ASSERT_SIZE(struct vrnic_send_wqe_hdr, VRNIC_SEND_WQE_HDR_SIZE);
VRNIC_ASSERT_OFFSET(struct vrnic_send_wqe_hdr, opcode, 0x08);
VRNIC_ASSERT_OFFSET(struct vrnic_send_wqe_hdr, imm_data, 0x0c);
VRNIC_ASSERT_OFFSET(struct vrnic_send_wqe_hdr, rdma, 0x10);
VRNIC_ASSERT_OFFSET(struct vrnic_send_wqe_hdr, rdma.xrc_srqn, 0x1c);
VRNIC_ASSERT_OFFSET(struct vrnic_send_wqe_hdr, atomic.xrc_srqn, 0x1c);
VRNIC_ASSERT_SIZE(struct vrnic_inline_hdr, VRNIC_INLINE_HDR_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_recv_wqe_hdr, VRNIC_RECV_WQE_HDR_SIZE);
VRNIC_STATIC_ASSERT(VRNIC_SQ_MAX_SGE(VRNIC_SQ_WQE_SHIFT_MIN) >= 1,
		    "smallest send WQE holds one SGE");
VRNIC_STATIC_ASSERT(VRNIC_RQ_MAX_SGE(VRNIC_RQ_WQE_SHIFT_MIN) >= 1,
		    "smallest receive WQE holds one SGE");

VRNIC_ASSERT_SIZE(struct vrnic_eth_desc, 16);

#endif /* VRNIC_DEV_H */
