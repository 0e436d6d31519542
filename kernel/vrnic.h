/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * vrnic: paravirtual RDMA NIC driver, shared definitions.
 *
 * The device interface (registers, commands, rings) is include/vrnic_dev.h;
 * the kernel <-> provider ABI is include/uapi/rdma/vrnic-abi.h.
 */
#ifndef VRNIC_H
#define VRNIC_H

#include <linux/bitops.h>
#include <linux/completion.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/pci.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include <vrnic_dev.h>
#include <rdma/vrnic-abi.h>

#include "compat.h"
#include "debug.h"
#include "ring.h"

#define DRV_NAME		"vrnic"
#define VRNIC_DRV_VERSION	((VRNIC_VERSION_MAJOR << 16) | VRNIC_VERSION_MINOR)

/* Ring sizes the driver chooses (all within the limits of vrnic_dev.h). */
#define VRNIC_CMDQ_LOG_DEPTH	6	/* 64 commands in flight */
#define VRNIC_AEQ_LOG_DEPTH	12	/* 4096 async events */
#define VRNIC_ETH_TX_LOG_DEPTH	8
#define VRNIC_ETH_RX_LOG_DEPTH	7

#define VRNIC_READY_TIMEOUT_MS	5000
#define VRNIC_RESET_TIMEOUT_MS	5000
#define VRNIC_WATCHDOG_MS	1000

/* The device uses the verbs numbering; the driver copies values across. */
#define VRNIC_SAME(a, b) static_assert((int)(a) == (int)(b), #a " == " #b)

extern unsigned int vrnic_cmd_timeout_ms;
extern unsigned int vrnic_heartbeat_timeout_ms;

/* A physically contiguous, zeroed DMA-coherent buffer. */
struct vrnic_dma {
	void *va;
	dma_addr_t dma;
	size_t size;
};

/* Device capabilities, read once from the register page at probe. */
struct vrnic_caps {
	u16 version_major;
	u16 version_minor;
	u64 bar2_size;
	u32 db_page_first;
	u32 db_page_count;
	u8 mac[ETH_ALEN];
	u64 node_guid;
	u64 fw_version;
	u32 max_qp;
	u32 max_cq;
	u32 max_mr;
	u32 max_pd;
	u32 max_srq;
	u32 max_ah;
	u32 max_uctx;
	u32 max_comp_eqs;
	u32 max_qp_wr;
	u32 max_srq_wr;
	u32 max_sge;
	u32 max_srq_sge;
	u32 max_inline;
	u32 max_cqe;
	u64 max_mr_size;
	u64 page_size_cap;
	u32 max_msg_sz;
	u32 num_vectors;
	u32 atomic_cap;
	u32 max_qp_rd_atom;
	u32 max_qp_init_rd_atom;
	u32 gid_tbl_len;
	u32 max_eqe;
	u32 eth_max_mtu;
	u32 max_mcast_grp;
	u32 max_mcast_qp_attach;
	u32 max_xrcd;			/* 1.5 */
	u32 max_fast_reg_pages;		/* 1.7, at most VRNIC_FRMR_MAX_PAGES */
	u32 hw_rev;
	u32 max_mtu;
	/* from QUERY_PORT at probe */
	u8 active_speed;
	u8 active_width;
};

struct vrnic_cmd_wait;

struct vrnic_cmdq {
	struct vrnic_dma ring;
	u32 log_depth;
	u32 depth;
	spinlock_t lock;		/* pi, ci, wait[] */
	u32 pi;				/* next index the driver posts */
	u32 ci;				/* next index the driver retires */
	u32 seq;
	struct vrnic_cmd_wait **wait;	/* waiter per ring slot */
	wait_queue_head_t space_wq;	/* waiting for a free slot */
};

struct vrnic_dev;

struct vrnic_eq {
	struct vrnic_dev *dev;
	struct vrnic_dma ring;
	u32 log_depth;
	u32 ci;
	u32 eqn;			/* 0: the async EQ */
	u32 db_slot;			/* comp EQs: slot in the kernel page */
	u32 vector;
	int irq;			/* Linux IRQ, 0 if not requested */
	bool created;
	char irq_name[32];
};

enum vrnic_dev_flags {
	VRNIC_FLAG_FATAL,		/* device stopped or dead */
	VRNIC_FLAG_DEAD,		/* heartbeat stopped or command timeout */
	VRNIC_FLAG_IB_REGISTERED,
	VRNIC_FLAG_RESET_PENDING,	/* reset requested, not acknowledged:
					 * the device may still access memory
					 */
};

/*
 * Memory the device may still access, kept until it acknowledges a reset:
 * an MR's pinned pages or a DMA buffer (ring, page list).
 */
struct vrnic_held {
	struct list_head list;
	struct ib_umem *umem;
	struct vrnic_dma buf;
};

/* Per-port software counters (rdma statistic). */
enum vrnic_hw_counter {
	VRNIC_CNT_CMDS,
	VRNIC_CNT_CMD_ERRORS,
	VRNIC_CNT_CMD_TIMEOUTS,
	VRNIC_CNT_ASYNC_EVENTS,
	VRNIC_CNT_COMP_EVENTS,
	VRNIC_CNT_QP_ERRORS,
	VRNIC_CNT_CQ_ERRORS,
	VRNIC_CNT_BAD_EQES,
	VRNIC_CNT_BAD_CQES,
	VRNIC_CNT_EQ_OVERFLOW,
	VRNIC_CNT_ETH_TX_PACKETS,
	VRNIC_CNT_ETH_TX_BYTES,
	VRNIC_CNT_ETH_TX_ERRORS,
	VRNIC_CNT_ETH_RX_PACKETS,
	VRNIC_CNT_ETH_RX_BYTES,
	VRNIC_CNT_ETH_RX_ERRORS,
	VRNIC_CNT_MAX
};

/* Counters the device keeps in its register page, after the driver's. */
enum vrnic_dev_counter {
	VRNIC_DEV_CNT_UD_QKEY_DROPS,
	VRNIC_DEV_CNT_UD_NO_RECV_DROPS,
	VRNIC_DEV_CNT_UD_NO_DEST_DROPS,
	VRNIC_DEV_CNT_UC_DROPS,
	VRNIC_DEV_CNT_RDMA_TX_MSGS,	/* 1.9: the traffic counters */
	VRNIC_DEV_CNT_RDMA_TX_BYTES,
	VRNIC_DEV_CNT_RDMA_RX_MSGS,
	VRNIC_DEV_CNT_RDMA_RX_BYTES,
	VRNIC_DEV_CNT_RNR_NAKS,
	VRNIC_DEV_CNT_RETRIES,
	VRNIC_DEV_CNT_COMPLETION_ERRORS,
	VRNIC_DEV_CNT_WIRE_TX_PKTS,	/* 1.10: RoCE v2 on the uplink */
	VRNIC_DEV_CNT_WIRE_RX_PKTS,
	VRNIC_DEV_CNT_WIRE_RX_DROPS,
	VRNIC_DEV_CNT_WIRE_RESENT_PKTS,	/* 1.11: its RC transport */
	VRNIC_DEV_CNT_WIRE_SEQ_NAKS,
	VRNIC_DEV_CNT_WIRE_DUP_REQS,
	VRNIC_DEV_CNT_WIRE_STALE_PKTS,
	VRNIC_DEV_CNT_MAX
};

struct vrnic_eth;

struct vrnic_dev {
	struct ib_device ibdev;		/* must be first: ib_alloc_device */
	struct pci_dev *pdev;
	void __iomem *bar0;		/* ivshmem registers */
	void __iomem *bar2;		/* vrnic pages */
	struct vrnic_regs __iomem *regs;
	void __iomem *kdb;		/* the kernel's doorbell page */
	resource_size_t bar2_phys;
	resource_size_t kick_page;	/* BAR0's own page, or 0 */
	struct vrnic_caps caps;
	unsigned long flags;		/* enum vrnic_dev_flags */

	struct vrnic_cmdq cmdq;
	struct vrnic_eq aeq;
	struct vrnic_eq *ceqs;
	int num_ceqs;
	int num_vectors;
	int admin_irq;			/* 0 if not requested */
	int eth_irq;
	char admin_irq_name[32];
	char eth_irq_name[32];
	spinlock_t event_lock;		/* ib_dispatch_event vs unregister */

	/* Releases while a reset is pending (section 5.2). */
	spinlock_t held_lock;		/* held, held_bytes, reset_req */
	struct list_head held;
	u64 held_bytes;
	u32 reset_req;			/* the value RESET_PENDING waits for */
	bool held_warned;

	/* Objects the device may name in EQEs and CQEs. */
	struct xarray qp_xa;
	struct xarray cq_xa;
	struct xarray srq_xa;

	struct workqueue_struct *wq;	/* deferred AH destroys */
	struct delayed_work watchdog;
	u64 last_heartbeat;
	unsigned long heartbeat_stamp;	/* jiffies of the last change */
	u32 last_eq_overflow;
	bool ceq_paused;		/* debugfs ceq_pause */

	struct net_device *netdev;
	struct vrnic_eth *eth;
	struct dentry *debugfs;

	atomic64_t counters[VRNIC_CNT_MAX];
};

static inline struct vrnic_dev *to_vdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct vrnic_dev, ibdev);
}

static inline bool vrnic_is_fatal(struct vrnic_dev *dev)
{
	return test_bit(VRNIC_FLAG_FATAL, &dev->flags);
}

static inline void vrnic_count(struct vrnic_dev *dev, enum vrnic_hw_counter c,
			       u64 n)
{
	atomic64_add(n, &dev->counters[c]);
}

/* Guest -> model kick through the ivshmem BAR0 Doorbell register. */
static inline void vrnic_kick(struct vrnic_dev *dev, u32 vector)
{
	writel(VRNIC_IVSHMEM_DOORBELL_VAL(VRNIC_MODEL_PEER_ID, vector),
	       dev->bar0 + VRNIC_IVSHMEM_DOORBELL);
}

/* A 32-bit word of a slot in the kernel's doorbell page. */
static inline void __iomem *vrnic_kdb_word(struct vrnic_dev *dev, u32 slot,
					   u32 offset)
{
	return dev->kdb + slot * VRNIC_DB_SLOT_SIZE + offset;
}

/*
 * After publishing a producer index: wake the model if it asked for it with
 * @bit (VRNIC_DB_STATUS_NEED_WAKEUP, or _RQ_WAKEUP for a receive queue).
 */
static inline void vrnic_wake_if_needed(struct vrnic_dev *dev, u32 vector,
					u32 bit)
{
	mb();	/* producer store before the NEED_WAKEUP load (section 8) */
	if (readl(&dev->regs->need_wakeup) & bit)
		vrnic_kick(dev, vector);
}

static inline bool vrnic_db_slot_valid(u32 slot)
{
	return slot >= VRNIC_DB_FIRST_OBJ_SLOT &&
	       slot < VRNIC_DB_SLOTS_PER_PAGE;
}

/* ------------------------------------------------------------------ */
/* RDMA objects                                                        */
/* ------------------------------------------------------------------ */

enum vrnic_mmap_type {
	VRNIC_MMAP_IO_NC,		/* a BAR2 doorbell page or the kick
					 * page, uncached
					 */
	VRNIC_MMAP_DMA,			/* a ring in DMA-coherent memory */
};

struct vrnic_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	struct vrnic_dev *dev;
	enum vrnic_mmap_type type;
	phys_addr_t io_addr;		/* VRNIC_MMAP_IO_NC */
	struct vrnic_dma buf;		/* VRNIC_MMAP_DMA: owned by the entry */
	struct mm_struct *mm;		/* VRNIC_MMAP_DMA: charged npages */
	unsigned long npages;
};

static inline struct vrnic_mmap_entry *
to_vmmap(struct rdma_user_mmap_entry *e)
{
	return container_of(e, struct vrnic_mmap_entry, rdma_entry);
}

struct vrnic_ucontext {
	struct ib_ucontext ibuc;
	u32 uctx;
	u32 db_page;
	struct rdma_user_mmap_entry *db_entry;
	u64 db_mmap_key;
	struct rdma_user_mmap_entry *kick_entry;	/* NULL: no kick page */
};

static inline struct vrnic_ucontext *to_vuc(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct vrnic_ucontext, ibuc);
}

struct vrnic_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

static inline struct vrnic_pd *to_vpd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct vrnic_pd, ibpd);
}

struct vrnic_xrcd {
	struct ib_xrcd ibxrcd;
	u32 handle;			/* of the kernel context: shared */
};

static inline struct vrnic_xrcd *to_vxrcd(struct ib_xrcd *ibxrcd)
{
	return container_of(ibxrcd, struct vrnic_xrcd, ibxrcd);
}

struct vrnic_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;		/* NULL for the DMA MR */
	u32 handle;
	u32 npages;
	u8 page_shift;
	int access;			/* a user MR's, for rereg */
	/* fast registration (verbs_frmr.c): the page list REG_MR WQEs name */
	struct vrnic_dma pbl;
	u32 max_pages;
};

/* The longest page list of a fast-registration MR the driver allocates. */
#define VRNIC_FRMR_MAX_PAGES	4096

static inline struct vrnic_mr *to_vmr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct vrnic_mr, ibmr);
}

/* A memory window (1.8, verbs_mw.c): user space binds it, by WQE. */
struct vrnic_mw {
	struct ib_mw ibmw;
	u32 handle;
};

static inline struct vrnic_mw *to_vmw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct vrnic_mw, ibmw);
}

struct vrnic_cq {
	struct ib_cq ibcq;
	u32 cqn;
	u32 db_slot;
	u32 log_depth;
	u32 eqn;
	bool user;
	/* kernel CQs */
	struct vrnic_dma ring;
	spinlock_t lock;		/* ci, arm counters, ring */
	u32 ci;
	u16 arm_next;
	u16 arm_sol;
	bool armed;			/* since its last completion event */
	bool resizing;
	struct mutex resize_lock;	/* resize vs. resize */
	/* user CQs: the ring belongs to its mmap entry */
	struct rdma_user_mmap_entry *ring_entry;
	/* lifetime against EQE dispatch */
	refcount_t refcount;
	struct completion free;
};

static inline struct vrnic_cq *to_vcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct vrnic_cq, ibcq);
}

/*
 * What a kernel queue remembers of a posted WQE, by slot: CQEs name only
 * the index, so nothing the device writes becomes a wr_id or a length.
 */
struct vrnic_wr_slot {
	u64 wr_id;
	u32 len;			/* receives: the SGEs' total length */
	u32 idx;			/* SRQs: the index it was posted at */
	bool pending;			/* SRQs: posted, not completed yet */
};

struct vrnic_wq {
	struct vrnic_dma ring;		/* kernel QPs */
	struct rdma_user_mmap_entry *entry;	/* user QPs */
	u32 log_depth;
	u32 wqe_shift;
	u32 max_sge;
	bool shared;			/* an SRQ: slots complete in any order */
	/* kernel QPs and SRQs */
	spinlock_t lock;
	u32 pi;				/* posted */
	u32 ci;				/* retired (from CQEs); for an SRQ
					 * the device's ci last read
					 */
	struct vrnic_wr_slot *wrid;
};

/*
 * A shared receive queue. The device writes the consumer index into the
 * doorbell slot: a kernel SRQ slot is free once the device has read it and
 * its CQE, on the CQ of whichever QP took it, has been polled.
 */
struct vrnic_srq {
	struct ib_srq ibsrq;
	u32 srqn;
	u32 db_slot;
	bool user;
	struct vrnic_wq wq;		/* ci unused: the slot's ci word */
	struct mutex limit_lock;	/* modify_srq vs. modify_srq */
	struct vrnic_wq *next;		/* kernel SRQ under resize (wq.lock) */
	spinlock_t limit_spin;		/* the next two vs. the LIMIT event */
	u32 srq_limit;			/* armed limit; 0 after the event */
	bool limit_fired;		/* a LIMIT event during modify_srq */
	refcount_t refcount;		/* lifetime against EQE dispatch */
	struct completion free;
};

static inline struct vrnic_srq *to_vsrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct vrnic_srq, ibsrq);
}

struct vrnic_qp {
	struct ib_qp ibqp;
	u32 qpn;
	u32 db_slot;
	bool user;
	struct vrnic_wq sq;
	struct vrnic_wq rq;		/* unused with an SRQ */
	struct vrnic_srq *srq;		/* NULL: its own RQ */
	u32 max_inline;
	bool wqe_av;			/* 1.4: UD WQEs carry the AV */
	struct mutex state_lock;	/* modify_qp */
	enum ib_qp_state state;		/* cached; the device may move to ERR */
	refcount_t refcount;
	struct completion free;
};

static inline struct vrnic_qp *to_vqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct vrnic_qp, ibqp);
}

/* UD and the GSI QP (a UD QP of the kernel, QPN 1): datagram services. */
static inline bool vrnic_qpt_is_datagram(enum ib_qp_type type)
{
	return type == IB_QPT_UD || type == IB_QPT_GSI;
}

struct vrnic_ah_destroy {
	struct work_struct work;
	struct vrnic_dev *dev;
	u32 handle;
};

/*
 * A user AH is the device's (@deferred names it); a kernel AH on a 1.4
 * device is only its address vector, which each WQE carries (@av).
 */
struct vrnic_ah {
	struct ib_ah ibah;
	struct vrnic_ah_destroy *deferred;	/* the device AH, or NULL */
	struct vrnic_av av;
};

static inline struct vrnic_ah *to_vah(struct ib_ah *ibah)
{
	return container_of(ibah, struct vrnic_ah, ibah);
}

/* ------------------------------------------------------------------ */
/* main.c                                                              */
/* ------------------------------------------------------------------ */
void vrnic_set_fatal(struct vrnic_dev *dev, const char *why);

/* dma.c */
int vrnic_dma_alloc(struct vrnic_dev *dev, struct vrnic_dma *buf, size_t size);
void vrnic_dma_free(struct vrnic_dev *dev, struct vrnic_dma *buf);
void vrnic_umem_release(struct vrnic_dev *dev, struct ib_umem *umem);
void vrnic_release_held(struct vrnic_dev *dev, struct list_head *list);
void vrnic_leak_held(struct vrnic_dev *dev);

/* cmdq.c */
int vrnic_cmdq_init(struct vrnic_dev *dev);
void vrnic_cmdq_free(struct vrnic_dev *dev);
void vrnic_cmdq_complete(struct vrnic_dev *dev);
void vrnic_cmdq_fail_all(struct vrnic_dev *dev);
int vrnic_cmd_exec(struct vrnic_dev *dev, u16 opcode, const void *req,
		   size_t req_len, void *resp, size_t resp_len);
int vrnic_cmd_destroy(struct vrnic_dev *dev, u16 opcode, u32 handle);

/* debugfs.c */
void vrnic_debugfs_init(void);
void vrnic_debugfs_exit(void);
void vrnic_debugfs_add(struct vrnic_dev *dev);
void vrnic_debugfs_remove(struct vrnic_dev *dev);

/* eq.c */
int vrnic_aeq_alloc(struct vrnic_dev *dev);
void vrnic_aeq_free(struct vrnic_dev *dev);
int vrnic_irqs_request(struct vrnic_dev *dev);
void vrnic_irqs_free(struct vrnic_dev *dev);
int vrnic_ceqs_create(struct vrnic_dev *dev);
void vrnic_ceqs_destroy(struct vrnic_dev *dev);
u32 vrnic_comp_vector_eqn(struct vrnic_dev *dev, int comp_vector);
void vrnic_eq_overflow(struct vrnic_dev *dev);
void vrnic_ceqs_pause(struct vrnic_dev *dev, bool pause);

/* netdev.c */
int vrnic_eth_alloc_rings(struct vrnic_dev *dev);
void vrnic_eth_write_config(struct vrnic_dev *dev);
void vrnic_eth_free_rings(struct vrnic_dev *dev);
int vrnic_eth_register(struct vrnic_dev *dev);
void vrnic_eth_unregister(struct vrnic_dev *dev);
void vrnic_eth_irq(struct vrnic_dev *dev);
void vrnic_eth_link_update(struct vrnic_dev *dev);
void vrnic_eth_watchdog(struct vrnic_dev *dev);

/* uapi.c */
extern const struct uapi_definition vrnic_uapi_defs[];

/* counters.c */
struct rdma_hw_stats *vrnic_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port);
int vrnic_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index);

/* restrack.c */
int vrnic_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int vrnic_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq);
int vrnic_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr);

/* udata.c */
int vrnic_udata_in(struct ib_udata *udata, void *cmd, size_t size);
int vrnic_udata_no_input(struct ib_udata *udata);
int vrnic_udata_out(struct ib_udata *udata, void *resp, size_t size);

/* verbs.c */
extern const struct ib_device_ops vrnic_dev_ops;

/* verbs_device.c */
void vrnic_ib_dispatch(struct vrnic_dev *dev, enum ib_event_type type);
int vrnic_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata);
enum ib_mtu vrnic_port_active_mtu(struct vrnic_dev *dev);
int vrnic_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr);
int vrnic_get_port_immutable(struct ib_device *ibdev, u32 port,
			     struct ib_port_immutable *immutable);
enum rdma_link_layer vrnic_get_link_layer(struct ib_device *ibdev, u32 port);
int vrnic_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey);
void vrnic_get_dev_fw_str(struct ib_device *ibdev, char *str);
int vrnic_add_gid(const struct ib_gid_attr *attr, void **context);
int vrnic_del_gid(const struct ib_gid_attr *attr, void **context);

/* verbs_ucontext.c */
struct rdma_user_mmap_entry *
vrnic_mmap_insert_dma(struct vrnic_ucontext *uc, struct vrnic_dma *buf,
		      u64 *key);
int vrnic_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void vrnic_dealloc_ucontext(struct ib_ucontext *ibuc);
void vrnic_disassociate_ucontext(struct ib_ucontext *ibuc);
int vrnic_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void vrnic_mmap_free(struct rdma_user_mmap_entry *rdma_entry);

/* verbs_pd.c */
int vrnic_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int vrnic_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/* verbs_ah.c */
int vrnic_av_from_ah(const struct rdma_ah_attr *ah, struct vrnic_av *av);
int vrnic_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		    struct ib_udata *udata);
int vrnic_destroy_ah(struct ib_ah *ibah, u32 flags);

/* verbs_mcast.c */
int vrnic_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int vrnic_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);

/* verbs_mr.c */
struct ib_mr *vrnic_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *vrnic_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 virt_addr, int access,
				struct ib_udata *udata);
struct ib_mr *vrnic_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 virt_addr, int access,
				  struct ib_pd *pd, struct ib_udata *udata);
int vrnic_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
bool vrnic_has_frmr(struct vrnic_dev *dev);
struct ib_mr *vrnic_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg);
int vrnic_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);
int vrnic_build_reg_mr(const struct ib_reg_wr *wr,
		       struct vrnic_send_wqe_hdr *hdr);

/* verbs_mw.c */
bool vrnic_has_mw(struct vrnic_dev *dev);
int vrnic_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int vrnic_dealloc_mw(struct ib_mw *ibmw);

/* verbs_cq.c (vrnic_create_cq: compat.h) */
int vrnic_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int vrnic_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int vrnic_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int vrnic_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
struct vrnic_cq *vrnic_cq_get(struct vrnic_dev *dev, u32 cqn);
void vrnic_cq_put(struct vrnic_cq *cq);

/* verbs_qp.c */
int vrnic_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init_attr,
		    struct ib_udata *udata);
int vrnic_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		    int attr_mask, struct ib_udata *udata);
int vrnic_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		   int attr_mask, struct ib_qp_init_attr *init_attr);
int vrnic_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int vrnic_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int vrnic_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);
struct vrnic_qp *vrnic_qp_get(struct vrnic_dev *dev, u32 qpn);
void vrnic_qp_put(struct vrnic_qp *qp);
int vrnic_qp_publish(struct vrnic_dev *dev, struct vrnic_qp *qp);
bool vrnic_qp_retire(struct vrnic_qp *qp, bool send, u32 wqe_idx,
		     struct vrnic_wr_slot *wr);
u32 vrnic_rq_shift_needed(u32 sge);
int vrnic_pick_shift(u32 requested, u32 needed, u32 min, u32 max);
int vrnic_wq_log_depth(u32 wr, u32 max_wr, u32 shift);
int vrnic_wq_alloc(struct vrnic_dev *dev, struct vrnic_ucontext *uc,
		   struct vrnic_wq *wq, bool wrids, dma_addr_t *dma, u64 *key,
		   u64 *size);
void vrnic_wq_free(struct vrnic_dev *dev, struct vrnic_wq *wq);
int vrnic_wq_post_recv(struct vrnic_wq *wq, const struct ib_recv_wr **wr);

/* verbs_xrcd.c */
bool vrnic_has_xrc(struct vrnic_dev *dev);
int vrnic_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int vrnic_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int vrnic_create_xrc_tgt(struct ib_qp *ibqp, struct ib_qp_init_attr *init);
int vrnic_destroy_xrc_tgt(struct ib_qp *ibqp);

/* verbs_srq.c */
int vrnic_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int vrnic_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int vrnic_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int vrnic_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int vrnic_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);
bool vrnic_srq_retire(struct vrnic_srq *srq, u32 wqe_idx,
		      struct vrnic_wr_slot *wr);
void vrnic_srq_event(struct vrnic_dev *dev, u32 srqn, enum ib_event_type type);

/* srq_resize.c */
int vrnic_srq_resize_log(struct vrnic_dev *dev, struct vrnic_srq *srq,
			 u32 max_wr);
int vrnic_srq_resize(struct vrnic_dev *dev, struct vrnic_srq *srq,
		     struct vrnic_cmd_modify_srq *req, u32 log,
		     struct ib_udata *udata, u64 resp_addr);
int vrnic_srq_resize_report(struct vrnic_srq *srq, u64 resp_addr,
			    struct vrnic_ibv_modify_srq_resp *uresp);
void vrnic_srq_resize_mirror(struct vrnic_srq *srq, u32 old_pi);
void vrnic_srq_resize_retire(struct vrnic_srq *srq, u32 wqe_idx);

#endif /* VRNIC_H */
