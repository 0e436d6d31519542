// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The provider's verbs objects. Each one embeds the libibverbs object first,
// so a pointer handed to us by libibverbs converts back to ours.

#ifndef VRNIC_PROVIDER_PROVIDER_H
#define VRNIC_PROVIDER_PROVIDER_H

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

#include <sys/mman.h>
#include <sys/types.h>

#include <rdma/vrnic-abi.h>
#include <vrnic_dev.h>

#include "ring.h"
#include "verbs_private.h"

namespace vrnic::prov {

// A uverbs command or response followed by this driver's udata. The kernel
// structs end in a flexible array, so they are kept as raw bytes; libibverbs
// finds the udata at sizeof(Core).
template <class Core, class Drv> struct WithUdata {
    alignas(8) unsigned char core_bytes[sizeof(Core)];
    Drv drv;

    Core* core() noexcept { return reinterpret_cast<Core*>(core_bytes); }
    static constexpr size_t size() noexcept { return sizeof(WithUdata); }
};

// An mmap of the verbs command fd, unmapped on destruction.
class Mapping {
  public:
    Mapping() = default;
    ~Mapping() { reset(); }
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    Mapping(Mapping&& o) noexcept
        : addr_(std::exchange(o.addr_, nullptr)), len_(std::exchange(o.len_, 0)) {}
    Mapping& operator=(Mapping&& o) noexcept {
        if (this != &o) {
            reset();
            addr_ = std::exchange(o.addr_, nullptr);
            len_ = std::exchange(o.len_, 0);
        }
        return *this;
    }

    // Returns 0 or an errno.
    int map(int fd, uint64_t key, size_t len, int prot) noexcept {
        reset();
        void* p = mmap(nullptr, len, prot, MAP_SHARED, fd, static_cast<off_t>(key));
        if (p == MAP_FAILED)
            return errno;
        addr_ = p;
        len_ = len;
        return 0;
    }
    void reset() noexcept {
        if (addr_)
            munmap(addr_, len_);
        addr_ = nullptr;
        len_ = 0;
    }
    void* get() const noexcept { return addr_; }
    size_t size() const noexcept { return len_; }

  private:
    void* addr_ = nullptr;
    size_t len_ = 0;
};

struct Device {
    verbs_device vdev;
};

// The C++ side of a device context.
struct ContextState {
    int cmd_fd = -1;
    vrnic_ibv_alloc_ucontext_resp caps{};
    Mapping db_map;
    Mapping kick_map;                      // the kick page, if the kernel offers it
    volatile uint32_t* kick_reg = nullptr; // in kick_map
    Doorbell db;
    QpTable qps;
    std::atomic<uint32_t> kick_failures{0};
};

// Allocated by libibverbs (_verbs_init_and_alloc_context), so plain data.
struct Context {
    verbs_context ibv_ctx;
    ContextState* state;
};
static_assert(std::is_standard_layout_v<Context>);

// A thread domain: a promise that one thread at a time uses the objects
// made on a parent domain that names it (td.cc).
struct Td {
    ibv_td td;
    std::atomic<int> users{0}; // parent domains naming it
};

// A protection domain, or a parent domain (ibv_alloc_parent_domain) that
// stands for the PD `protection` with an optional thread domain and
// allocator. A parent domain has the PD's kernel handle (td.cc).
struct Pd {
    ibv_pd pd;
    Pd* protection = nullptr; // set only in a parent domain
    Td* td = nullptr;
    void* pd_context = nullptr;
    void* (*alloc)(ibv_pd*, void*, size_t, size_t, uint64_t) = nullptr;
    void (*free)(ibv_pd*, void*, void*, uint64_t) = nullptr;
    std::atomic<int> users{0}; // parent domains on a PD; QPs, CQs on a parent domain

    bool is_parent() const noexcept { return protection != nullptr; }
};
inline Pd* to_pd(ibv_pd* p) noexcept {
    return reinterpret_cast<Pd*>(p);
}

// resource_type of the provider's allocations through a parent domain's
// allocator (the driver id in the high word, as rdma-core's providers do).
constexpr uint64_t kResTypeQp = (uint64_t{VRNIC_RDMA_DRIVER_ID} << 32) | 1;
constexpr uint64_t kResTypeCq = (uint64_t{VRNIC_RDMA_DRIVER_ID} << 32) | 2;

// Memory for a provider object, from the parent domain's allocator when it
// has one that does not answer IBV_ALLOCATOR_USE_DEFAULT, else the heap;
// `custom` tells domain_free() which. domain may be null or a plain PD.
void* domain_alloc(Pd* domain, size_t size, size_t align, uint64_t type, bool& custom) noexcept;
void domain_free(Pd* domain, void* p, uint64_t type, bool custom) noexcept;

// An object made by make_object() remembers where its memory came from.
struct DomainMemory {
    Pd* domain = nullptr; // a parent domain, or null
    bool custom = false;
};
template <class T> T* make_object(Pd* domain, uint64_t type) {
    if (domain && !domain->is_parent())
        domain = nullptr;
    bool custom = false;
    void* mem = domain_alloc(domain, sizeof(T), alignof(T), type, custom);
    if (!mem)
        throw std::bad_alloc();
    T* obj = new (mem) T();
    obj->mem = DomainMemory{domain, custom};
    if (domain)
        domain->users.fetch_add(1, std::memory_order_relaxed);
    return obj;
}
template <class T> void destroy_object(T* obj, uint64_t type) noexcept {
    const DomainMemory m = obj->mem;
    obj->~T();
    domain_free(m.domain, obj, type, m.custom);
    if (m.domain)
        m.domain->users.fetch_sub(1, std::memory_order_relaxed);
}

struct Mr {
    verbs_mr vmr;
};

// Ah is in ring.h: the send path reads its handle.

// A shared receive queue: its ring is mapped like a QP's RQ; the device
// writes how far it consumed into the second word of the doorbell slot.
struct Srq {
    verbs_srq vsrq; // an XRC SRQ's number in vsrq.srq_num
    Mapping ring;
    RecvQueue rq;
    QueueLock lock;
    uint32_t* pi_word = nullptr;
    Doorbell* db = nullptr;
};

struct Cq {
    verbs_cq vcq;
    Mapping ring;
    CqPoller poller;
    DomainMemory mem;
};

struct Qp {
    verbs_qp vqp;
    Cq* send_cq = nullptr;
    Cq* recv_cq = nullptr;
    Mapping sq_map;
    Mapping rq_map; // unmapped for a QP without its own RQ
    QpRings rings;
    WrBuilder wr;
    DomainMemory mem;
};

inline Context* to_ctx(ibv_context* c) noexcept {
    return reinterpret_cast<Context*>(reinterpret_cast<char*>(c) - offsetof(Context, ibv_ctx) -
                                      offsetof(verbs_context, context));
}
inline ContextState& state(ibv_context* c) noexcept {
    return *to_ctx(c)->state;
}
// verbs_cq/verbs_qp sit at offset 0 of Cq/Qp and ibv_cq/ibv_qp at offset 0
// of those unions; the objects were created by us with new.
inline Cq* to_cq(ibv_cq* c) noexcept {
    return reinterpret_cast<Cq*>(c);
}
inline Cq* to_cq(ibv_cq_ex* c) noexcept {
    return reinterpret_cast<Cq*>(c);
}
inline Qp* to_qp(ibv_qp* q) noexcept {
    return reinterpret_cast<Qp*>(q);
}
inline Qp* to_qp(ibv_qp_ex* q) noexcept {
    return reinterpret_cast<Qp*>(q);
}
inline Srq* to_srq(ibv_srq* s) noexcept {
    return reinterpret_cast<Srq*>(s);
}

// The ops libibverbs calls (verbs.cc).
const verbs_context_ops& context_ops() noexcept;

// An SRQ the kernel created: checks its answer, maps its ring; on failure
// destroys the kernel's SRQ, leaving `srq` to its owner (verbs.cc).
int finish_srq(ContextState& st, Srq& srq, const vrnic_ibv_create_srq_resp& r,
               uint32_t max_sge) noexcept;

// XRC (xrc.cc): domains, XRC SRQs, target QPs created or opened.
ibv_xrcd* open_xrcd(ibv_context* context, ibv_xrcd_init_attr* attr) noexcept;
int close_xrcd(ibv_xrcd* xrcd) noexcept;
ibv_srq* create_srq_ex(ibv_context* context, ibv_srq_init_attr_ex* attr) noexcept;
int get_srq_num(ibv_srq* srq, uint32_t* srq_num) noexcept;
// A QP of type XRC_RECV: no rings of its own (create_qp_ex sends it here).
int create_xrc_recv(ibv_context* context, ibv_qp_init_attr_ex* attr, Qp*& out) noexcept;
ibv_qp* open_qp(ibv_context* context, ibv_qp_open_attr* attr) noexcept;

// Memory windows (mw.cc): alloc_mw (EOPNOTSUPP before device 1.8),
// dealloc_mw, and bind_mw for type 1 windows. bind_mw returns 0 or an errno,
// which it also leaves in errno.
ibv_mw* alloc_mw(ibv_pd* pd, ibv_mw_type type) noexcept;
int dealloc_mw(ibv_mw* mw) noexcept;
int bind_mw(ibv_qp* qp, ibv_mw* mw, ibv_mw_bind* bind) noexcept;

// Multicast attach and detach (mcast.cc). Return 0 or an errno.
int attach_mcast(ibv_qp* qp, const ibv_gid* gid, uint16_t lid) noexcept;
int detach_mcast(ibv_qp* qp, const ibv_gid* gid, uint16_t lid) noexcept;

// Extended QPs (qp_ex.cc): the ibv_wr_* functions. Each opcode and
// wr_set_ud_addr is refused (by wr_complete) on a QP type that lacks it.
void set_qp_ex_ops(ibv_qp_ex* q) noexcept;

// Extended CQs (cq_ex.cc): the wc_flags create_cq_ex takes (others are
// EOPNOTSUPP), the ibv_cq_ex readers, and the device clock for
// ibv_query_rt_values_ex.
constexpr uint64_t kCqExWcFlags = uint64_t{IBV_WC_STANDARD_FLAGS} |
                                  uint64_t{IBV_WC_EX_WITH_COMPLETION_TIMESTAMP} |
                                  uint64_t{IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK};
void set_cq_ex_ops(ibv_cq_ex* c) noexcept;
int query_rt_values(ibv_context* context, ibv_values_ex* values) noexcept;

// Thread and parent domains (td.cc).
ibv_td* alloc_td(ibv_context* context, ibv_td_init_attr* attr) noexcept;
int dealloc_td(ibv_td* td) noexcept;
ibv_pd* alloc_parent_domain(ibv_context* context, ibv_parent_domain_init_attr* attr) noexcept;
// Frees a parent domain (ibv_dealloc_pd on one); EBUSY while used.
int dealloc_parent_domain(Pd* pd) noexcept;

// The driver's uverbs methods through a hand-built RDMA_VERBS_IOCTL
// (spec 16.3). Return 0 or an errno.
int method_kick(int cmd_fd) noexcept;
int method_query_layout(int cmd_fd, vrnic_layout* out) noexcept;
int method_query_clock(int cmd_fd, uint64_t* now_ns) noexcept;

} // namespace vrnic::prov

#endif // VRNIC_PROVIDER_PROVIDER_H
