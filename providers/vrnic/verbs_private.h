// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The subset of libibverbs' private provider ABI (IBVERBS_PRIVATE_34,
// rdma-core 44.0) that this provider uses.
//
// rdma-core does not install its internal headers (libibverbs/driver.h,
// kern-abi.h), so the layouts below are declared here from the facts of
// rdma-core v44.0 and pinned with static_assert. A wrong layout here makes
// libibverbs read garbage, so every struct the provider shares with
// libibverbs has its size and the offsets it uses checked. The numbers were
// cross-checked by compiling rdma-core v44.0's own driver.h and kern-abi.h and
// printing sizeof/offsetof: tests/unit/provider/abi/check_private_abi.sh.
//
// Only this header may declare private libibverbs ABI.

#ifndef VRNIC_PROVIDER_VERBS_PRIVATE_H
#define VRNIC_PROVIDER_VERBS_PRIVATE_H

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <sys/types.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

// ---------------------------------------------------------------------------
// ccan/list.h: the node embedded in libibverbs' device structures.
// ---------------------------------------------------------------------------
struct list_node {
    struct list_node* next;
    struct list_node* prev;
};

// ---------------------------------------------------------------------------
// Device matching (driver.h)
// ---------------------------------------------------------------------------
enum {
    VERBS_MATCH_SENTINEL = 0,
    VERBS_MATCH_PCI = 1,
    VERBS_MATCH_MODALIAS = 2,
    VERBS_MATCH_DRIVER_ID = 3,
};

struct verbs_match_ent {
    void* driver_data;
    union {
        const char* modalias;
        uint64_t driver_id;
    } u;
    uint16_t vendor;
    uint16_t device;
    uint8_t kind;
};

// A device found in sysfs, handed to match_device/alloc_device.
struct verbs_sysfs_dev {
    struct list_node entry;
    void* provider_data;
    const struct verbs_match_ent* match;
    unsigned int flags;
    char sysfs_name[IBV_SYSFS_NAME_MAX];
    dev_t sysfs_cdev;
    char ibdev_name[IBV_SYSFS_NAME_MAX];
    char ibdev_path[IBV_SYSFS_PATH_MAX];
    char modalias[512];
    uint64_t node_guid;
    uint32_t driver_id;
    enum ibv_node_type node_type;
    int ibdev_idx;
    uint32_t num_ports;
    uint32_t abi_ver;
    struct timespec time_created;
};

struct verbs_device;

struct verbs_device_ops {
    const char* name;
    uint32_t match_min_abi_version;
    uint32_t match_max_abi_version;
    const struct verbs_match_ent* match_table;
    const struct verbs_device_ops** static_providers;
    bool (*match_device)(struct verbs_sysfs_dev* sysfs_dev);
    struct verbs_context* (*alloc_context)(struct ibv_device* device, int cmd_fd,
                                           void* private_data);
    struct verbs_context* (*import_context)(struct ibv_device* device, int cmd_fd);
    struct verbs_device* (*alloc_device)(struct verbs_sysfs_dev* sysfs_dev);
    void (*uninit_device)(struct verbs_device* device);
};

struct verbs_device {
    struct ibv_device device; // must be first
    const struct verbs_device_ops* ops;
    int refcount; // C11 atomic_int in libibverbs: same size and alignment
    struct list_node entry;
    struct verbs_sysfs_dev* sysfs;
    uint64_t core_support;
};

// ---------------------------------------------------------------------------
// Verbs objects with libibverbs-private extensions (driver.h)
// ---------------------------------------------------------------------------
enum ibv_mr_type {
    IBV_MR_TYPE_MR,
    IBV_MR_TYPE_NULL_MR,
    IBV_MR_TYPE_IMPORTED_MR,
    IBV_MR_TYPE_DMABUF_MR,
};

struct verbs_mr {
    struct ibv_mr ibv_mr;
    enum ibv_mr_type mr_type;
    int access;
};

enum verbs_qp_mask {
    VERBS_QP_XRCD = 1 << 0,
    VERBS_QP_EX = 1 << 1,
};

struct verbs_xrcd {
    struct ibv_xrcd xrcd;
    uint32_t comp_mask;
    uint32_t handle;
};

struct verbs_srq {
    struct ibv_srq srq;
    enum ibv_srq_type srq_type;
    struct verbs_xrcd* xrcd;
    struct ibv_cq* cq;
    uint32_t srq_num;
};

struct verbs_qp {
    union {
        struct ibv_qp qp;
        struct ibv_qp_ex qp_ex;
    };
    uint32_t comp_mask;
    struct verbs_xrcd* xrcd;
};

struct verbs_cq {
    union {
        struct ibv_cq cq;
        struct ibv_cq_ex cq_ex;
    };
};

// The union of every op a provider can implement. Keep the order of v44.0.
struct verbs_context_ops {
    int (*advise_mr)(struct ibv_pd* pd, enum ibv_advise_mr_advice advice, uint32_t flags,
                     struct ibv_sge* sg_list, uint32_t num_sges);
    struct ibv_dm* (*alloc_dm)(struct ibv_context* context, struct ibv_alloc_dm_attr* attr);
    struct ibv_mw* (*alloc_mw)(struct ibv_pd* pd, enum ibv_mw_type type);
    struct ibv_mr* (*alloc_null_mr)(struct ibv_pd* pd);
    struct ibv_pd* (*alloc_parent_domain)(struct ibv_context* context,
                                          struct ibv_parent_domain_init_attr* attr);
    struct ibv_pd* (*alloc_pd)(struct ibv_context* context);
    struct ibv_td* (*alloc_td)(struct ibv_context* context, struct ibv_td_init_attr* init_attr);
    void (*async_event)(struct ibv_context* context, struct ibv_async_event* event);
    int (*attach_counters_point_flow)(struct ibv_counters* counters,
                                      struct ibv_counter_attach_attr* attr, struct ibv_flow* flow);
    int (*attach_mcast)(struct ibv_qp* qp, const union ibv_gid* gid, uint16_t lid);
    int (*bind_mw)(struct ibv_qp* qp, struct ibv_mw* mw, struct ibv_mw_bind* mw_bind);
    int (*close_xrcd)(struct ibv_xrcd* xrcd);
    void (*cq_event)(struct ibv_cq* cq);
    struct ibv_ah* (*create_ah)(struct ibv_pd* pd, struct ibv_ah_attr* attr);
    struct ibv_counters* (*create_counters)(struct ibv_context* context,
                                            struct ibv_counters_init_attr* init_attr);
    struct ibv_cq* (*create_cq)(struct ibv_context* context, int cqe,
                                struct ibv_comp_channel* channel, int comp_vector);
    struct ibv_cq_ex* (*create_cq_ex)(struct ibv_context* context,
                                      struct ibv_cq_init_attr_ex* init_attr);
    struct ibv_flow* (*create_flow)(struct ibv_qp* qp, struct ibv_flow_attr* flow_attr);
    struct ibv_flow_action* (*create_flow_action_esp)(struct ibv_context* context,
                                                      struct ibv_flow_action_esp_attr* attr);
    struct ibv_qp* (*create_qp)(struct ibv_pd* pd, struct ibv_qp_init_attr* attr);
    struct ibv_qp* (*create_qp_ex)(struct ibv_context* context,
                                   struct ibv_qp_init_attr_ex* qp_init_attr_ex);
    struct ibv_rwq_ind_table* (*create_rwq_ind_table)(
        struct ibv_context* context, struct ibv_rwq_ind_table_init_attr* init_attr);
    struct ibv_srq* (*create_srq)(struct ibv_pd* pd, struct ibv_srq_init_attr* srq_init_attr);
    struct ibv_srq* (*create_srq_ex)(struct ibv_context* context,
                                     struct ibv_srq_init_attr_ex* srq_init_attr_ex);
    struct ibv_wq* (*create_wq)(struct ibv_context* context, struct ibv_wq_init_attr* wq_init_attr);
    int (*dealloc_mw)(struct ibv_mw* mw);
    int (*dealloc_pd)(struct ibv_pd* pd);
    int (*dealloc_td)(struct ibv_td* td);
    int (*dereg_mr)(struct verbs_mr* vmr);
    int (*destroy_ah)(struct ibv_ah* ah);
    int (*destroy_counters)(struct ibv_counters* counters);
    int (*destroy_cq)(struct ibv_cq* cq);
    int (*destroy_flow)(struct ibv_flow* flow);
    int (*destroy_flow_action)(struct ibv_flow_action* action);
    int (*destroy_qp)(struct ibv_qp* qp);
    int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table* rwq_ind_table);
    int (*destroy_srq)(struct ibv_srq* srq);
    int (*destroy_wq)(struct ibv_wq* wq);
    int (*detach_mcast)(struct ibv_qp* qp, const union ibv_gid* gid, uint16_t lid);
    void (*free_context)(struct ibv_context* context);
    int (*free_dm)(struct ibv_dm* dm);
    int (*get_srq_num)(struct ibv_srq* srq, uint32_t* srq_num);
    struct ibv_dm* (*import_dm)(struct ibv_context* context, uint32_t dm_handle);
    struct ibv_mr* (*import_mr)(struct ibv_pd* pd, uint32_t mr_handle);
    struct ibv_pd* (*import_pd)(struct ibv_context* context, uint32_t pd_handle);
    int (*modify_cq)(struct ibv_cq* cq, struct ibv_modify_cq_attr* attr);
    int (*modify_flow_action_esp)(struct ibv_flow_action* action,
                                  struct ibv_flow_action_esp_attr* attr);
    int (*modify_qp)(struct ibv_qp* qp, struct ibv_qp_attr* attr, int attr_mask);
    int (*modify_qp_rate_limit)(struct ibv_qp* qp, struct ibv_qp_rate_limit_attr* attr);
    int (*modify_srq)(struct ibv_srq* srq, struct ibv_srq_attr* srq_attr, int srq_attr_mask);
    int (*modify_wq)(struct ibv_wq* wq, struct ibv_wq_attr* wq_attr);
    struct ibv_qp* (*open_qp)(struct ibv_context* context, struct ibv_qp_open_attr* attr);
    struct ibv_xrcd* (*open_xrcd)(struct ibv_context* context,
                                  struct ibv_xrcd_init_attr* xrcd_init_attr);
    int (*poll_cq)(struct ibv_cq* cq, int num_entries, struct ibv_wc* wc);
    int (*post_recv)(struct ibv_qp* qp, struct ibv_recv_wr* wr, struct ibv_recv_wr** bad_wr);
    int (*post_send)(struct ibv_qp* qp, struct ibv_send_wr* wr, struct ibv_send_wr** bad_wr);
    int (*post_srq_ops)(struct ibv_srq* srq, struct ibv_ops_wr* op, struct ibv_ops_wr** bad_op);
    int (*post_srq_recv)(struct ibv_srq* srq, struct ibv_recv_wr* recv_wr,
                         struct ibv_recv_wr** bad_recv_wr);
    int (*query_device_ex)(struct ibv_context* context,
                           const struct ibv_query_device_ex_input* input,
                           struct ibv_device_attr_ex* attr, size_t attr_size);
    int (*query_ece)(struct ibv_qp* qp, struct ibv_ece* ece);
    int (*query_port)(struct ibv_context* context, uint8_t port_num,
                      struct ibv_port_attr* port_attr);
    int (*query_qp)(struct ibv_qp* qp, struct ibv_qp_attr* attr, int attr_mask,
                    struct ibv_qp_init_attr* init_attr);
    int (*query_qp_data_in_order)(struct ibv_qp* qp, enum ibv_wr_opcode op, uint32_t flags);
    int (*query_rt_values)(struct ibv_context* context, struct ibv_values_ex* values);
    int (*query_srq)(struct ibv_srq* srq, struct ibv_srq_attr* srq_attr);
    int (*read_counters)(struct ibv_counters* counters, uint64_t* counters_value,
                         uint32_t ncounters, uint32_t flags);
    struct ibv_mr* (*reg_dm_mr)(struct ibv_pd* pd, struct ibv_dm* dm, uint64_t dm_offset,
                                size_t length, unsigned int access);
    struct ibv_mr* (*reg_dmabuf_mr)(struct ibv_pd* pd, uint64_t offset, size_t length,
                                    uint64_t iova, int fd, int access);
    struct ibv_mr* (*reg_mr)(struct ibv_pd* pd, void* addr, size_t length, uint64_t hca_va,
                             int access);
    int (*req_notify_cq)(struct ibv_cq* cq, int solicited_only);
    int (*rereg_mr)(struct verbs_mr* vmr, int flags, struct ibv_pd* pd, void* addr, size_t length,
                    int access);
    int (*resize_cq)(struct ibv_cq* cq, int cqe);
    int (*set_ece)(struct ibv_qp* qp, struct ibv_ece* ece);
    void (*unimport_dm)(struct ibv_dm* dm);
    void (*unimport_mr)(struct ibv_mr* mr);
    void (*unimport_pd)(struct ibv_pd* pd);
};

// ---------------------------------------------------------------------------
// Legacy command layouts (kern-abi.h): the uverbs write() header followed by
// the kernel's request struct. The ibv_cmd_* helpers take a pointer to one
// of these plus the total size; a provider's udata starts right after it.
// The kernel request structs end in a flexible driver_data[] array, so a
// provider cannot nest them in a bigger C++ struct; see CmdWithUdata in
// provider.h.
// ---------------------------------------------------------------------------
struct ex_hdr {
    struct ib_uverbs_cmd_hdr hdr;
    struct ib_uverbs_ex_cmd_hdr ex_hdr;
};

#define VRNIC_DECLARE_LEGACY_CMD(name, kabi)                                                       \
    struct name {                                                                                  \
        struct ib_uverbs_cmd_hdr hdr;                                                              \
        struct kabi core_payload;                                                                  \
    }
#define VRNIC_DECLARE_EX_CMD(name, kabi)                                                           \
    struct name {                                                                                  \
        struct ex_hdr hdr;                                                                         \
        struct kabi core_payload;                                                                  \
    }

VRNIC_DECLARE_LEGACY_CMD(ibv_get_context, ib_uverbs_get_context);
VRNIC_DECLARE_LEGACY_CMD(ibv_alloc_pd, ib_uverbs_alloc_pd);
VRNIC_DECLARE_LEGACY_CMD(ibv_reg_mr, ib_uverbs_reg_mr);
VRNIC_DECLARE_LEGACY_CMD(ibv_rereg_mr, ib_uverbs_rereg_mr);
VRNIC_DECLARE_LEGACY_CMD(ibv_alloc_mw, ib_uverbs_alloc_mw);
VRNIC_DECLARE_LEGACY_CMD(ibv_resize_cq, ib_uverbs_resize_cq);
VRNIC_DECLARE_LEGACY_CMD(ibv_create_qp, ib_uverbs_create_qp);
VRNIC_DECLARE_LEGACY_CMD(ibv_modify_qp, ib_uverbs_modify_qp);
VRNIC_DECLARE_LEGACY_CMD(ibv_query_qp, ib_uverbs_query_qp);
VRNIC_DECLARE_LEGACY_CMD(ibv_query_port, ib_uverbs_query_port);
VRNIC_DECLARE_LEGACY_CMD(ibv_create_srq, ib_uverbs_create_srq);
VRNIC_DECLARE_LEGACY_CMD(ibv_modify_srq, ib_uverbs_modify_srq);
VRNIC_DECLARE_LEGACY_CMD(ibv_query_srq, ib_uverbs_query_srq);
VRNIC_DECLARE_LEGACY_CMD(ibv_open_xrcd, ib_uverbs_open_xrcd);
VRNIC_DECLARE_LEGACY_CMD(ibv_create_xsrq, ib_uverbs_create_xsrq);
VRNIC_DECLARE_LEGACY_CMD(ibv_open_qp, ib_uverbs_open_qp);
VRNIC_DECLARE_EX_CMD(ibv_create_cq_ex, ib_uverbs_ex_create_cq);

#undef VRNIC_DECLARE_LEGACY_CMD
#undef VRNIC_DECLARE_EX_CMD

// ---------------------------------------------------------------------------
// Functions exported by libibverbs.so.1 under IBVERBS_PRIVATE_34.
// They return 0 or a positive errno unless noted.
// ---------------------------------------------------------------------------
extern "C" {
void verbs_register_driver_34(const struct verbs_device_ops* ops);

void* _verbs_init_and_alloc_context(struct ibv_device* device, int cmd_fd, size_t alloc_size,
                                    struct verbs_context* context_offset, uint32_t driver_id);
void verbs_uninit_context(struct verbs_context* context);
void verbs_set_ops(struct verbs_context* vctx, const struct verbs_context_ops* ops);

int ibv_cmd_get_context(struct verbs_context* context, struct ibv_get_context* cmd, size_t cmd_size,
                        struct ib_uverbs_get_context_resp* resp, size_t resp_size);
int ibv_cmd_query_device_any(struct ibv_context* context,
                             const struct ibv_query_device_ex_input* input,
                             struct ibv_device_attr_ex* attr, size_t attr_size,
                             struct ib_uverbs_ex_query_device_resp* resp, size_t* resp_size);
int ibv_cmd_query_port(struct ibv_context* context, uint8_t port_num,
                       struct ibv_port_attr* port_attr, struct ibv_query_port* cmd,
                       size_t cmd_size);
int ibv_cmd_alloc_pd(struct ibv_context* context, struct ibv_pd* pd, struct ibv_alloc_pd* cmd,
                     size_t cmd_size, struct ib_uverbs_alloc_pd_resp* resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd* pd);
int ibv_cmd_reg_mr(struct ibv_pd* pd, void* addr, size_t length, uint64_t hca_va, int access,
                   struct verbs_mr* vmr, struct ibv_reg_mr* cmd, size_t cmd_size,
                   struct ib_uverbs_reg_mr_resp* resp, size_t resp_size);
int ibv_cmd_rereg_mr(struct verbs_mr* vmr, uint32_t flags, void* addr, size_t length,
                     uint64_t hca_va, int access, struct ibv_pd* pd, struct ibv_rereg_mr* cmd,
                     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp* resp, size_t resp_sz);
int ibv_cmd_dereg_mr(struct verbs_mr* vmr);
int ibv_cmd_alloc_mw(struct ibv_pd* pd, enum ibv_mw_type type, struct ibv_mw* mw,
                     struct ibv_alloc_mw* cmd, size_t cmd_size,
                     struct ib_uverbs_alloc_mw_resp* resp, size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw* mw);
int ibv_cmd_create_cq_ex(struct ibv_context* context, const struct ibv_cq_init_attr_ex* cq_attr,
                         struct verbs_cq* cq, struct ibv_create_cq_ex* cmd, size_t cmd_size,
                         struct ib_uverbs_ex_create_cq_resp* resp, size_t resp_size,
                         uint32_t cmd_flags);
int ibv_cmd_resize_cq(struct ibv_cq* cq, int cqe, struct ibv_resize_cq* cmd, size_t cmd_size,
                      struct ib_uverbs_resize_cq_resp* resp, size_t resp_size);
int ibv_cmd_destroy_cq(struct ibv_cq* cq);
int ibv_cmd_create_qp_ex(struct ibv_context* context, struct verbs_qp* qp,
                         struct ibv_qp_init_attr_ex* attr_ex, struct ibv_create_qp* cmd,
                         size_t cmd_size, struct ib_uverbs_create_qp_resp* resp, size_t resp_size);
int ibv_cmd_modify_qp(struct ibv_qp* qp, struct ibv_qp_attr* attr, int attr_mask,
                      struct ibv_modify_qp* cmd, size_t cmd_size);
int ibv_cmd_query_qp(struct ibv_qp* qp, struct ibv_qp_attr* qp_attr, int attr_mask,
                     struct ibv_qp_init_attr* qp_init_attr, struct ibv_query_qp* cmd,
                     size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp* qp);
int ibv_cmd_create_srq(struct ibv_pd* pd, struct ibv_srq* srq, struct ibv_srq_init_attr* attr,
                       struct ibv_create_srq* cmd, size_t cmd_size,
                       struct ib_uverbs_create_srq_resp* resp, size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq* srq, struct ibv_srq_attr* srq_attr, int srq_attr_mask,
                       struct ibv_modify_srq* cmd, size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq* srq, struct ibv_srq_attr* srq_attr, struct ibv_query_srq* cmd,
                      size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq* srq);
int ibv_cmd_create_srq_ex(struct ibv_context* context, struct verbs_srq* srq,
                          struct ibv_srq_init_attr_ex* attr_ex, struct ibv_create_xsrq* cmd,
                          size_t cmd_size, struct ib_uverbs_create_srq_resp* resp,
                          size_t resp_size);
int ibv_cmd_open_xrcd(struct ibv_context* context, struct verbs_xrcd* xrcd, int vxrcd_size,
                      struct ibv_xrcd_init_attr* attr, struct ibv_open_xrcd* cmd, size_t cmd_size,
                      struct ib_uverbs_open_xrcd_resp* resp, size_t resp_size);
int ibv_cmd_close_xrcd(struct verbs_xrcd* xrcd);
int ibv_cmd_open_qp(struct ibv_context* context, struct verbs_qp* qp, int vqp_sz,
                    struct ibv_qp_open_attr* attr, struct ibv_open_qp* cmd, size_t cmd_size,
                    struct ib_uverbs_create_qp_resp* resp, size_t resp_size);
int ibv_cmd_create_ah(struct ibv_pd* pd, struct ibv_ah* ah, struct ibv_ah_attr* attr,
                      struct ib_uverbs_create_ah_resp* resp, size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah* ah);
int ibv_cmd_attach_mcast(struct ibv_qp* qp, const union ibv_gid* gid, uint16_t lid);
int ibv_cmd_detach_mcast(struct ibv_qp* qp, const union ibv_gid* gid, uint16_t lid);
}

// ---------------------------------------------------------------------------
// Layout pins (x86-64, rdma-core 44.0)
// ---------------------------------------------------------------------------
static_assert(sizeof(void*) == 8, "vrnic is x86-64 only");

static_assert(sizeof(struct verbs_match_ent) == 24);
static_assert(offsetof(struct verbs_match_ent, u) == 8);
static_assert(offsetof(struct verbs_match_ent, vendor) == 16);
static_assert(offsetof(struct verbs_match_ent, device) == 18);
static_assert(offsetof(struct verbs_match_ent, kind) == 20);

static_assert(sizeof(struct verbs_sysfs_dev) == 992);
static_assert(offsetof(struct verbs_sysfs_dev, match) == 24);
static_assert(offsetof(struct verbs_sysfs_dev, sysfs_name) == 36);
static_assert(offsetof(struct verbs_sysfs_dev, sysfs_cdev) == 104);
static_assert(offsetof(struct verbs_sysfs_dev, ibdev_name) == 112);
static_assert(offsetof(struct verbs_sysfs_dev, ibdev_path) == 176);
static_assert(offsetof(struct verbs_sysfs_dev, modalias) == 432);
static_assert(offsetof(struct verbs_sysfs_dev, node_guid) == 944);
static_assert(offsetof(struct verbs_sysfs_dev, driver_id) == 952);
static_assert(offsetof(struct verbs_sysfs_dev, abi_ver) == 968);
static_assert(offsetof(struct verbs_sysfs_dev, time_created) == 976);

static_assert(sizeof(struct verbs_device_ops) == 72);
static_assert(offsetof(struct verbs_device_ops, match_min_abi_version) == 8);
static_assert(offsetof(struct verbs_device_ops, match_max_abi_version) == 12);
static_assert(offsetof(struct verbs_device_ops, match_table) == 16);
static_assert(offsetof(struct verbs_device_ops, match_device) == 32);
static_assert(offsetof(struct verbs_device_ops, alloc_context) == 40);
static_assert(offsetof(struct verbs_device_ops, alloc_device) == 56);
static_assert(offsetof(struct verbs_device_ops, uninit_device) == 64);

static_assert(sizeof(struct ibv_device) == 664);
static_assert(sizeof(struct verbs_device) == 712);
static_assert(offsetof(struct verbs_device, ops) == 664);
static_assert(offsetof(struct verbs_device, refcount) == 672);
static_assert(offsetof(struct verbs_device, entry) == 680);
static_assert(offsetof(struct verbs_device, sysfs) == 696);
static_assert(offsetof(struct verbs_device, core_support) == 704);

static_assert(sizeof(struct verbs_mr) == 56);
static_assert(offsetof(struct verbs_mr, mr_type) == 48);
static_assert(offsetof(struct verbs_mr, access) == 52);

static_assert(offsetof(struct ibv_qp_ex, qp_base) == 0);
static_assert(sizeof(struct ibv_qp_ex) == 352);
static_assert(sizeof(struct verbs_qp) == 368);
static_assert(offsetof(struct verbs_qp, comp_mask) == 352);
static_assert(offsetof(struct verbs_qp, xrcd) == 360);
static_assert(sizeof(struct ibv_cq_ex) == 288);
static_assert(sizeof(struct verbs_cq) == 288);

// 76 function pointers, in v44.0's (alphabetical) order.
static_assert(sizeof(struct verbs_context_ops) == 76 * sizeof(void*));
static_assert(offsetof(struct verbs_context_ops, alloc_pd) == 5 * 8);
static_assert(offsetof(struct verbs_context_ops, attach_mcast) == 9 * 8);
static_assert(offsetof(struct verbs_context_ops, detach_mcast) == 38 * 8);
static_assert(offsetof(struct verbs_context_ops, create_cq) == 15 * 8);
static_assert(offsetof(struct verbs_context_ops, create_qp_ex) == 20 * 8);
static_assert(offsetof(struct verbs_context_ops, dereg_mr) == 28 * 8);
static_assert(offsetof(struct verbs_context_ops, free_context) == 39 * 8);
static_assert(offsetof(struct verbs_context_ops, modify_qp) == 47 * 8);
static_assert(offsetof(struct verbs_context_ops, poll_cq) == 53 * 8);
static_assert(offsetof(struct verbs_context_ops, post_send) == 55 * 8);
static_assert(offsetof(struct verbs_context_ops, query_device_ex) == 58 * 8);
static_assert(offsetof(struct verbs_context_ops, query_port) == 60 * 8);
static_assert(offsetof(struct verbs_context_ops, reg_mr) == 68 * 8);
static_assert(offsetof(struct verbs_context_ops, req_notify_cq) == 69 * 8);
static_assert(offsetof(struct verbs_context_ops, rereg_mr) == 70 * 8);
static_assert(offsetof(struct verbs_context_ops, resize_cq) == 71 * 8);
static_assert(offsetof(struct verbs_context_ops, unimport_pd) == 75 * 8);
static_assert(offsetof(struct verbs_context_ops, create_srq) == 22 * 8);
static_assert(offsetof(struct verbs_context_ops, destroy_srq) == 36 * 8);
static_assert(offsetof(struct verbs_context_ops, modify_srq) == 49 * 8);
static_assert(offsetof(struct verbs_context_ops, post_srq_recv) == 57 * 8);
static_assert(offsetof(struct verbs_context_ops, query_srq) == 64 * 8);
static_assert(offsetof(struct verbs_context_ops, alloc_parent_domain) == 4 * 8);
static_assert(offsetof(struct verbs_context_ops, alloc_td) == 6 * 8);
static_assert(offsetof(struct verbs_context_ops, create_cq_ex) == 16 * 8);
static_assert(offsetof(struct verbs_context_ops, dealloc_td) == 27 * 8);
static_assert(offsetof(struct verbs_context_ops, query_rt_values) == 63 * 8);
static_assert(offsetof(struct verbs_context_ops, alloc_mw) == 2 * 8);
static_assert(offsetof(struct verbs_context_ops, bind_mw) == 10 * 8);
static_assert(offsetof(struct verbs_context_ops, dealloc_mw) == 25 * 8);

// The size of each command struct decides where libibverbs looks for udata.
static_assert(sizeof(struct ibv_get_context) == 16);
static_assert(sizeof(struct ibv_alloc_pd) == 16);
static_assert(sizeof(struct ibv_reg_mr) == 48);
static_assert(sizeof(struct ibv_rereg_mr) == 56);
static_assert(sizeof(struct ibv_alloc_mw) == 24);
static_assert(sizeof(struct ib_uverbs_alloc_mw_resp) == 8);
static_assert(sizeof(struct ibv_resize_cq) == 24);
static_assert(sizeof(struct ibv_create_qp) == 64);
static_assert(sizeof(struct ibv_modify_qp) == 120);
static_assert(sizeof(struct ibv_query_qp) == 24);
static_assert(sizeof(struct ibv_query_port) == 24);
static_assert(sizeof(struct ibv_create_cq_ex) == 56);
static_assert(sizeof(struct ibv_create_srq) == 40);
static_assert(sizeof(struct ibv_create_xsrq) == 56);
static_assert(sizeof(struct ibv_open_xrcd) == 24);
static_assert(sizeof(struct ibv_open_qp) == 40);
static_assert(sizeof(struct verbs_xrcd) == 16);
static_assert(offsetof(struct verbs_xrcd, handle) == 12);
static_assert(sizeof(struct verbs_srq) == 160);
static_assert(offsetof(struct verbs_srq, srq_num) == 152);
static_assert(sizeof(struct ibv_modify_srq) == 24);
static_assert(sizeof(struct ibv_query_srq) == 24);
static_assert(sizeof(struct ib_uverbs_create_srq_resp) == 16);
static_assert(sizeof(struct ib_uverbs_get_context_resp) == 8);
static_assert(sizeof(struct ib_uverbs_ex_create_cq_resp) == 16);
static_assert(sizeof(struct ib_uverbs_resize_cq_resp) == 8);
static_assert(sizeof(struct ib_uverbs_create_qp_resp) == 32);

#endif // VRNIC_PROVIDER_VERBS_PRIVATE_H
