// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The provider's verbs objects. Each one embeds the libibverbs object first,
// so a pointer handed to us by libibverbs converts back to ours.

#ifndef VRNIC_PROVIDER_PROVIDER_H
#define VRNIC_PROVIDER_PROVIDER_H

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

struct Pd {
    ibv_pd pd;
};

struct Mr {
    verbs_mr vmr;
};

// Ah is in ring.h: the send path reads its handle.

// A shared receive queue: its ring is mapped like a QP's RQ; the device
// writes how far it consumed into the second word of the doorbell slot.
struct Srq {
    ibv_srq srq;
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
};

struct Qp {
    verbs_qp vqp;
    Cq* send_cq = nullptr;
    Cq* recv_cq = nullptr;
    Mapping sq_map;
    Mapping rq_map; // unmapped for a QP without its own RQ
    QpRings rings;
    WrBuilder wr;
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

// Multicast attach and detach (mcast.cc). Return 0 or an errno.
int attach_mcast(ibv_qp* qp, const ibv_gid* gid, uint16_t lid) noexcept;
int detach_mcast(ibv_qp* qp, const ibv_gid* gid, uint16_t lid) noexcept;

// The driver's uverbs methods through a hand-built RDMA_VERBS_IOCTL
// (spec 16.3). Return 0 or an errno.
int method_kick(int cmd_fd) noexcept;
int method_query_layout(int cmd_fd, vrnic_layout* out) noexcept;

} // namespace vrnic::prov

#endif // VRNIC_PROVIDER_PROVIDER_H
