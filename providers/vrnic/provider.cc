// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Registration with libibverbs, device matching and the device context.

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include <sys/ioctl.h>
#include <unistd.h>

#include <rdma/rdma_user_ioctl_cmds.h>

#include "provider.h"

namespace vrnic::prov {

// ---------------------------------------------------------------------------
// Driver uverbs methods (spec 16.3)
// ---------------------------------------------------------------------------

namespace {

// ib_uverbs_ioctl_hdr ends in a flexible array of attributes.
template <size_t N> struct IoctlBuf {
    alignas(8) unsigned char bytes[sizeof(ib_uverbs_ioctl_hdr) + N * sizeof(ib_uverbs_attr)];
    ib_uverbs_ioctl_hdr* hdr() { return reinterpret_cast<ib_uverbs_ioctl_hdr*>(bytes); }
    ib_uverbs_attr* attr(size_t i) {
        return reinterpret_cast<ib_uverbs_attr*>(bytes + sizeof(ib_uverbs_ioctl_hdr)) + i;
    }
};

void init_hdr(ib_uverbs_ioctl_hdr& hdr, uint16_t method, uint16_t num_attrs) {
    hdr.length = static_cast<uint16_t>(sizeof(hdr) + num_attrs * sizeof(ib_uverbs_attr));
    hdr.object_id = VRNIC_OBJECT_DEVICE;
    hdr.method_id = method;
    hdr.num_attrs = num_attrs;
    hdr.driver_id = VRNIC_RDMA_DRIVER_ID;
}

} // namespace

int method_kick(int cmd_fd) noexcept {
    IoctlBuf<0> buf{};
    init_hdr(*buf.hdr(), VRNIC_METHOD_KICK, 0);
    return ioctl(cmd_fd, RDMA_VERBS_IOCTL, buf.hdr()) ? errno : 0;
}

int method_query_layout(int cmd_fd, vrnic_layout* out) noexcept {
    IoctlBuf<1> buf{};
    init_hdr(*buf.hdr(), VRNIC_METHOD_QUERY_LAYOUT, 1);
    ib_uverbs_attr* a = buf.attr(0);
    a->attr_id = VRNIC_ATTR_QUERY_LAYOUT_RESP;
    a->len = sizeof(*out);
    a->flags = UVERBS_ATTR_F_MANDATORY;
    a->data = reinterpret_cast<uintptr_t>(out);
    return ioctl(cmd_fd, RDMA_VERBS_IOCTL, buf.hdr()) ? errno : 0;
}

int method_query_clock(int cmd_fd, uint64_t* now_ns) noexcept {
    IoctlBuf<1> buf{};
    vrnic_clock clock{};
    init_hdr(*buf.hdr(), VRNIC_METHOD_QUERY_CLOCK, 1);
    ib_uverbs_attr* a = buf.attr(0);
    a->attr_id = VRNIC_ATTR_QUERY_CLOCK_RESP;
    a->len = sizeof(clock);
    a->flags = UVERBS_ATTR_F_MANDATORY;
    a->data = reinterpret_cast<uintptr_t>(&clock);
    if (ioctl(cmd_fd, RDMA_VERBS_IOCTL, buf.hdr()))
        return errno;
    *now_ns = clock.now_ns;
    return 0;
}

namespace {

// Wakes the device with one uncached store to the mapped doorbell register:
// no system call (kick_reg is set only when the kernel offered the page).
int kick_mmio(void* arg) {
    auto* st = static_cast<ContextState*>(arg);
    *st->kick_reg = st->caps.kick_value;
    return 0;
}

int kick_ioctl(void* arg) {
    auto* st = static_cast<ContextState*>(arg);
    int err = method_kick(st->cmd_fd);
    if (err && st->kick_failures.fetch_add(1, std::memory_order_relaxed) == 0)
        std::fprintf(stderr, "vrnic: waking the device failed: %s\n", std::strerror(err));
    return err;
}

// ---------------------------------------------------------------------------
// Context
// ---------------------------------------------------------------------------

// What the provider needs from the kernel's ucontext response.
int check_ucontext_resp(const vrnic_ibv_alloc_ucontext_resp& r) {
    if (r.version_major != VRNIC_VERSION_MAJOR || r.cqe_size != VRNIC_CQE_SIZE ||
        r.db_page_size != VRNIC_DB_PAGE_SIZE || r.sq_wqe_shift_min < VRNIC_SQ_WQE_SHIFT_MIN ||
        r.sq_wqe_shift_max > VRNIC_SQ_WQE_SHIFT_MAX ||
        r.rq_wqe_shift_min < VRNIC_RQ_WQE_SHIFT_MIN || r.rq_wqe_shift_max > VRNIC_RQ_WQE_SHIFT_MAX)
        return EPROTO;
    return 0;
}

int init_context(Context* ctx, int cmd_fd) {
    struct ibv_get_context cmd {};
    WithUdata<ib_uverbs_get_context_resp, vrnic_ibv_alloc_ucontext_resp> resp{};
    int err = ibv_cmd_get_context(&ctx->ibv_ctx, &cmd, sizeof(cmd), resp.core(), resp.size());
    if (err)
        return err;
    err = check_ucontext_resp(resp.drv);
    if (err) {
        std::fprintf(stderr, "vrnic: unsupported kernel ABI (interface %u.%u, cqe %u)\n",
                     resp.drv.version_major, resp.drv.version_minor, resp.drv.cqe_size);
        return err;
    }

    auto* st = new (std::nothrow) ContextState();
    if (!st)
        return ENOMEM;
    ctx->state = st;
    st->cmd_fd = cmd_fd;
    st->caps = resp.drv;

    // Cross-check the doorbell layout with the driver's method when it has
    // one; an older kernel without it is fine.
    vrnic_layout layout{};
    if (method_query_layout(cmd_fd, &layout) == 0) {
        if (layout.db_mmap_key != resp.drv.db_mmap_key ||
            layout.db_page_size != VRNIC_DB_PAGE_SIZE ||
            layout.db_slots_per_page != VRNIC_DB_SLOTS_PER_PAGE ||
            layout.db_first_obj_slot != VRNIC_DB_FIRST_OBJ_SLOT ||
            layout.abi_version != VRNIC_UVERBS_ABI_VERSION) {
            std::fprintf(stderr, "vrnic: doorbell layout does not match the ucontext\n");
            return EPROTO;
        }
    }

    err = st->db_map.map(cmd_fd, resp.drv.db_mmap_key, VRNIC_DB_PAGE_SIZE, PROT_READ | PROT_WRITE);
    if (err)
        return err;
    Doorbell::KickFn kick = kick_ioctl;
    if (resp.drv.comp_mask & VRNIC_ALLOC_UCONTEXT_RESP_KICK_PAGE) {
        const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
        const uint32_t off = resp.drv.kick_offset;
        if (off % sizeof(uint32_t) || off >= page)
            return EPROTO;
        err = st->kick_map.map(cmd_fd, resp.drv.kick_mmap_key, page, PROT_WRITE);
        if (err)
            return err;
        st->kick_reg =
            reinterpret_cast<volatile uint32_t*>(static_cast<char*>(st->kick_map.get()) + off);
        kick = kick_mmio;
    }
    st->db.init(static_cast<vrnic_db_page*>(st->db_map.get()), kick, st);
    verbs_set_ops(&ctx->ibv_ctx, &context_ops());
    return 0;
}

verbs_context* alloc_context(ibv_device* ibdev, int cmd_fd, void* /*private_data*/) noexcept {
    auto* ctx = static_cast<Context*>(_verbs_init_and_alloc_context(
        ibdev, cmd_fd, sizeof(Context),
        reinterpret_cast<verbs_context*>(offsetof(Context, ibv_ctx)), VRNIC_RDMA_DRIVER_ID));
    if (!ctx)
        return nullptr;
    int err;
    try {
        err = init_context(ctx, cmd_fd);
    } catch (...) {
        err = ENOMEM;
    }
    if (!err)
        return &ctx->ibv_ctx;
    delete ctx->state;
    verbs_uninit_context(&ctx->ibv_ctx);
    std::free(ctx);
    errno = err;
    return nullptr;
}

// ---------------------------------------------------------------------------
// Device
// ---------------------------------------------------------------------------

verbs_device* alloc_device(verbs_sysfs_dev* /*sysfs_dev*/) noexcept {
    auto* dev = new (std::nothrow) Device{};
    return dev ? &dev->vdev : nullptr;
}

void uninit_device(verbs_device* vdev) noexcept {
    delete reinterpret_cast<Device*>(vdev);
}

// vrnic devices are named vrnic%d by the kernel and sit on QEMU's
// ivshmem-doorbell PCI function. The kernel registers them with
// RDMA_DRIVER_UNKNOWN (spec 16.1), so match by name or by the PCI ID.
constexpr verbs_match_ent kMatchTable[] = {
    {.driver_data = nullptr,
     .u = {.modalias = "rdma_device:*Nvrnic*"},
     .vendor = 0,
     .device = 0,
     .kind = VERBS_MATCH_MODALIAS},
    {.driver_data = nullptr,
     .u = {.modalias = nullptr},
     .vendor = VRNIC_PCI_VENDOR_ID,
     .device = VRNIC_PCI_DEVICE_ID,
     .kind = VERBS_MATCH_PCI},
    {},
};

// Many unrelated devices share ivshmem's PCI ID; only vrnic registers an
// RDMA device on one, but if sysfs names the bound driver, insist on it.
bool match_device(verbs_sysfs_dev* sd) noexcept {
    if (!sd->match)
        return false;
    if (sd->match->kind != VERBS_MATCH_PCI)
        return true;
    char link[PATH_MAX];
    char path[IBV_SYSFS_PATH_MAX + 32];
    std::snprintf(path, sizeof(path), "%s/device/driver", sd->ibdev_path);
    ssize_t n = readlink(path, link, sizeof(link) - 1);
    if (n <= 0)
        return true;
    link[n] = '\0';
    const char* base = std::strrchr(link, '/');
    base = base ? base + 1 : link;
    return std::strncmp(base, "vrnic", 5) == 0;
}

constexpr verbs_device_ops make_device_ops() {
    verbs_device_ops o{};
    o.name = "vrnic";
    o.match_min_abi_version = VRNIC_UVERBS_ABI_VERSION;
    o.match_max_abi_version = VRNIC_UVERBS_ABI_VERSION;
    o.match_table = kMatchTable;
    o.match_device = match_device;
    o.alloc_context = alloc_context;
    o.alloc_device = alloc_device;
    o.uninit_device = uninit_device;
    return o;
}

constexpr verbs_device_ops kDeviceOps = make_device_ops();

} // namespace
} // namespace vrnic::prov

// libibverbs dlopen()s the provider; its constructor registers the driver.
__attribute__((constructor)) static void vrnic_register_driver() {
    verbs_register_driver_34(&vrnic::prov::kDeviceOps);
}
