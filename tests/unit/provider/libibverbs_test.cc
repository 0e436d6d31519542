// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The provider against the real libibverbs 44 of the host, without a device:
//
//  - the ops table: libibverbs copies our verbs_context_ops into the public
//    ibv_context_ops/verbs_context slots by name, so a layout mismatch
//    between our declaration and libibverbs' shows up as a wrong pointer;
//  - loading the built libvrnic-rdmav34.so through RDMAV_DRIVERS against a
//    fake sysfs (SYSFS_PATH) and a fake /dev/infiniband in a private mount
//    namespace: registration, device matching, alloc_device/uninit_device
//    and a failing alloc_context, all through libibverbs' own code.
//
// Each scenario runs in a child process: libibverbs keeps global state
// (drivers load once per process) and the namespace must not leak.

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/netlink.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "provider.h"

#ifndef VRNIC_PROVIDER_SO
#error "VRNIC_PROVIDER_SO must name the built provider"
#endif

namespace vrnic::prov::test {
namespace {

constexpr int kSkip = 77;

// Runs body in a child; its exit status is the verdict (0 ok, kSkip skip).
void run_in_child(const std::function<int()>& body) {
    std::fflush(nullptr);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        int rc = 1;
        try {
            rc = body();
        } catch (...) {
        }
        std::fflush(nullptr);
        _exit(rc);
    }
    int status = 0;
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    ASSERT_TRUE(WIFEXITED(status)) << "child died with signal " << WTERMSIG(status);
    if (WEXITSTATUS(status) == kSkip)
        GTEST_SKIP() << "needs root, mount namespaces and a host without an RDMA core";
    EXPECT_EQ(0, WEXITSTATUS(status));
}

#define CHILD_CHECK(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::fprintf(stderr, "%s:%d: check failed: %s (errno %d %s)\n", __FILE__, __LINE__,    \
                         #cond, errno, std::strerror(errno));                                      \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

// ---------------------------------------------------------------------------
// verbs_context_ops layout, checked by libibverbs' own verbs_set_ops().
// ---------------------------------------------------------------------------

TEST(Libibverbs, OpsTableLandsInTheRightSlots) {
    run_in_child([]() -> int {
        Device dev{};
        dev.vdev.refcount = 1;
        int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        CHILD_CHECK(fd >= 0);
        auto* ctx = static_cast<Context*>(_verbs_init_and_alloc_context(
            &dev.vdev.device, fd, sizeof(Context),
            reinterpret_cast<verbs_context*>(offsetof(Context, ibv_ctx)), VRNIC_RDMA_DRIVER_ID));
        CHILD_CHECK(ctx);
        CHILD_CHECK(dev.vdev.refcount == 2); // verbs_init_context holds the device
        CHILD_CHECK(ctx->ibv_ctx.context.cmd_fd == fd);
        CHILD_CHECK(ctx->ibv_ctx.context.device == &dev.vdev.device);

        const verbs_context_ops& o = context_ops();
        verbs_set_ops(&ctx->ibv_ctx, &o);
        const ibv_context_ops& c = ctx->ibv_ctx.context.ops;
        auto same = [](auto a, auto b) {
            return reinterpret_cast<void*>(a) == reinterpret_cast<void*>(b);
        };
        CHILD_CHECK(same(c.poll_cq, o.poll_cq));
        CHILD_CHECK(same(c.req_notify_cq, o.req_notify_cq));
        CHILD_CHECK(same(c.post_send, o.post_send));
        CHILD_CHECK(same(c.post_recv, o.post_recv));
        CHILD_CHECK(same(c._compat_alloc_pd, o.alloc_pd));
        CHILD_CHECK(same(c._compat_dealloc_pd, o.dealloc_pd));
        CHILD_CHECK(same(c._compat_reg_mr, o.reg_mr));
        CHILD_CHECK(same(c._compat_dereg_mr, o.dereg_mr));
        CHILD_CHECK(same(c._compat_create_cq, o.create_cq));
        CHILD_CHECK(same(c._compat_resize_cq, o.resize_cq));
        CHILD_CHECK(same(c._compat_destroy_cq, o.destroy_cq));
        CHILD_CHECK(same(c._compat_create_qp, o.create_qp));
        CHILD_CHECK(same(c._compat_query_qp, o.query_qp));
        CHILD_CHECK(same(c._compat_modify_qp, o.modify_qp));
        CHILD_CHECK(same(c._compat_destroy_qp, o.destroy_qp));
        CHILD_CHECK(same(c._compat_create_ah, o.create_ah));
        CHILD_CHECK(same(c._compat_destroy_ah, o.destroy_ah));
        CHILD_CHECK(same(ctx->ibv_ctx.create_qp_ex, o.create_qp_ex));
        CHILD_CHECK(same(ctx->ibv_ctx.query_device_ex, o.query_device_ex));
        CHILD_CHECK(same(c.post_srq_recv, o.post_srq_recv));
        CHILD_CHECK(same(c._compat_create_srq, o.create_srq));
        CHILD_CHECK(same(c._compat_modify_srq, o.modify_srq));
        CHILD_CHECK(same(c._compat_query_srq, o.query_srq));
        CHILD_CHECK(same(c._compat_destroy_srq, o.destroy_srq));
        // Ops we do not implement stay libibverbs' EOPNOTSUPP stubs.
        CHILD_CHECK(c.alloc_mw != nullptr);

        verbs_uninit_context(&ctx->ibv_ctx); // closes fd, drops the hold
        std::free(ctx);
        CHILD_CHECK(dev.vdev.refcount == 1);
        CHILD_CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF);
        return 0;
    });
}

// ---------------------------------------------------------------------------
// The built .so through RDMAV_DRIVERS, against a fake sysfs and /dev.
// ---------------------------------------------------------------------------

bool write_file(const std::string& path, const std::string& content) {
    FILE* f = std::fopen(path.c_str(), "w");
    if (!f)
        return false;
    bool ok = std::fputs(content.c_str(), f) >= 0;
    return std::fclose(f) == 0 && ok;
}

bool mkdirs(const std::string& path) {
    for (size_t pos = 1; pos != std::string::npos;) {
        pos = path.find('/', pos + 1);
        std::string part = path.substr(0, pos);
        if (mkdir(part.c_str(), 0755) && errno != EEXIST)
            return false;
    }
    return true;
}

struct FakeDev {
    std::string ibdev;    // "vrnic0"
    std::string modalias; // PCI modalias of the parent device, "" for none
    std::string driver;   // name of the bound PCI driver, "" for none
};

// A private world: mount namespace, tmpfs over /dev with uverbs nodes that
// are /dev/null (1:3), and a sysfs tree under a tmpfs. Returns the sysfs
// root, or "" to skip.
std::string make_world(const std::vector<FakeDev>& devs) {
    // With an RDMA core on the host, libibverbs enumerates over netlink and
    // never reads SYSFS_PATH; such a host cannot run this test.
    int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
    if (nl >= 0) {
        close(nl);
        return "";
    }
    if (unshare(CLONE_NEWNS) || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr))
        return "";
    if (mount("vrnic-test-dev", "/dev", "tmpfs", 0, "mode=0755") ||
        mount("vrnic-test-sys", "/tmp", "tmpfs", 0, "mode=0755"))
        return "";
    const std::string sys = "/tmp/sys";
    if (!mkdirs("/dev/infiniband") || mknod("/dev/null", S_IFCHR | 0666, makedev(1, 3)) ||
        !mkdirs(sys + "/class/infiniband_verbs") || !mkdirs(sys + "/class/infiniband") ||
        !write_file(sys + "/class/infiniband_verbs/abi_version", "6\n"))
        return "";
    for (size_t i = 0; i < devs.size(); i++) {
        const FakeDev& d = devs[i];
        std::string uv = "uverbs" + std::to_string(i);
        std::string uvdir = sys + "/class/infiniband_verbs/" + uv;
        std::string ibdir = sys + "/class/infiniband/" + d.ibdev;
        std::string pcidir = sys + "/devices/pci0000:00/0000:00:0" + std::to_string(3 + i) + ".0";
        if (mknod(("/dev/infiniband/" + uv).c_str(), S_IFCHR | 0666, makedev(1, 3)) ||
            !mkdirs(uvdir) || !mkdirs(ibdir) || !mkdirs(pcidir) ||
            !write_file(uvdir + "/ibdev", d.ibdev + "\n") || !write_file(uvdir + "/dev", "1:3\n") ||
            !write_file(uvdir + "/abi_version", "1\n") ||
            !write_file(ibdir + "/node_type", "1: CA\n") ||
            !write_file(ibdir + "/node_guid", "5254:00ff:fe12:3456\n"))
            return "";
        if (!d.modalias.empty()) {
            if (!write_file(pcidir + "/modalias", d.modalias + "\n") ||
                symlink(pcidir.c_str(), (ibdir + "/device").c_str()))
                return "";
        }
        if (!d.driver.empty()) {
            std::string drv = sys + "/bus/pci/drivers/" + d.driver;
            if (!mkdirs(drv) || symlink(drv.c_str(), (pcidir + "/driver").c_str()))
                return "";
        }
    }
    setenv("SYSFS_PATH", sys.c_str(), 1);
    // libibverbs appends "-rdmav34.so" to an absolute RDMAV_DRIVERS entry.
    std::string so = VRNIC_PROVIDER_SO;
    const std::string suffix = "-rdmav34.so";
    if (so.size() > suffix.size() && so.ends_with(suffix))
        so.resize(so.size() - suffix.size());
    setenv("RDMAV_DRIVERS", so.c_str(), 1);
    return sys;
}

const char* kVrnicPci = "pci:v00001AF4d00001110sv00001AF4sd00001100bc05sc00i00";

// Names of the devices libibverbs gives us, comma-separated.
std::string device_names() {
    int n = -1;
    ibv_device** list = ibv_get_device_list(&n);
    if (!list)
        return "error";
    std::string names;
    for (int i = 0; i < n; i++)
        names += std::string(i ? "," : "") + ibv_get_device_name(list[i]);
    ibv_free_device_list(list);
    return names;
}

TEST(Libibverbs, NoVrnicDeviceNoCrash) {
    run_in_child([]() -> int {
        if (make_world({{"mlx5_0", "", ""}}).empty())
            return kSkip;
        // The driver loads (a device exists) but matches nothing.
        CHILD_CHECK(device_names() == "");
        CHILD_CHECK(device_names() == "");
        return 0;
    });
}

TEST(Libibverbs, MatchesByNameAndFailsOpenCleanly) {
    run_in_child([]() -> int {
        if (make_world({{"vrnic0", kVrnicPci, "vrnic"}}).empty())
            return kSkip;
        int n = -1;
        ibv_device** list = ibv_get_device_list(&n);
        CHILD_CHECK(list && n == 1);
        CHILD_CHECK(std::strcmp(ibv_get_device_name(list[0]), "vrnic0") == 0);
        CHILD_CHECK(std::strcmp(list[0]->dev_name, "uverbs0") == 0);
        CHILD_CHECK(list[0]->node_type == IBV_NODE_CA);
        CHILD_CHECK(list[0]->transport_type == IBV_TRANSPORT_IB);
        CHILD_CHECK(be64toh(ibv_get_device_guid(list[0])) == 0x525400fffe123456ULL);
        // The "kernel" is /dev/null: GET_CONTEXT's ioctl fails with ENOTTY,
        // the write() fallback "succeeds" without a response, and the
        // provider refuses the all-zero ucontext response.
        errno = 0;
        ibv_context* ctx = ibv_open_device(list[0]);
        CHILD_CHECK(ctx == nullptr);
        CHILD_CHECK(errno == EPROTO);
        ibv_free_device_list(list); // uninit_device
        return 0;
    });
}

TEST(Libibverbs, PciMatchOnlyWithTheVrnicDriver) {
    run_in_child([]() -> int {
        // Any ivshmem function with an RDMA device, but only vrnic's.
        if (make_world({{"rdma_a", kVrnicPci, "vrnic"}, {"rdma_b", kVrnicPci, "ivshmem_other"}})
                .empty())
            return kSkip;
        CHILD_CHECK(device_names() == "rdma_a");
        return 0;
    });
}

TEST(Libibverbs, WrongKernelAbiIsRefused) {
    run_in_child([]() -> int {
        std::string sys = make_world({{"vrnic0", kVrnicPci, "vrnic"}});
        if (sys.empty())
            return kSkip;
        CHILD_CHECK(write_file(sys + "/class/infiniband_verbs/uverbs0/abi_version", "2\n"));
        CHILD_CHECK(device_names() == "");
        return 0;
    });
}

} // namespace
} // namespace vrnic::prov::test
