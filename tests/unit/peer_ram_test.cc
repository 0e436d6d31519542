// Finding a QEMU's guest RAM in its mappings (peer_ram.h), with this process
// as the QEMU.
#include "peer_ram.h"

#include <atomic>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace vrnic::test {
namespace {

// A size no other mapping of this test process has.
constexpr size_t kSize = 7 << 20;

// A memfd as QEMU's memfd backend makes it (sealed against shrinking and
// growing, unless `sealed` is false), mapped.
struct SharedFile {
    UniqueFd fd;
    void* map = MAP_FAILED;
    size_t len = 0;
    SharedFile(size_t size, int flags = MAP_SHARED, bool sealed = true) : len(size) {
        fd.reset(memfd_create("peer-ram-test", MFD_CLOEXEC | MFD_ALLOW_SEALING));
        if (ftruncate(fd.get(), static_cast<off_t>(size)) == 0 &&
            (!sealed || fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) == 0))
            map = mmap(nullptr, size, PROT_READ | PROT_WRITE, flags, fd.get(), 0);
    }
    ~SharedFile() {
        if (map != MAP_FAILED)
            munmap(map, len);
    }
};

PeerRam find_self(uint64_t size, int exclude_fd, UniqueFd* out, std::string* err) {
    UniqueFd pidfd = pin_process(getpid());
    return find_peer_ram(pidfd.get(), getpid(), size, exclude_fd, out, err);
}

bool same_file(int a, int b) {
    struct stat sa {
    }, sb{};
    return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

TEST(PeerRam, FindsTheOneSharedMappingOfTheSize) {
    SharedFile ram(kSize), bar2(64 << 10);
    ASSERT_NE(MAP_FAILED, ram.map);
    UniqueFd fd;
    std::string err;
    ASSERT_EQ(PeerRam::found, find_self(kSize, bar2.fd.get(), &fd, &err)) << err;
    EXPECT_TRUE(same_file(fd.get(), ram.fd.get()));
    // It is the RAM itself: what the model writes through it, QEMU sees.
    void* m = mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    ASSERT_NE(MAP_FAILED, m);
    static_cast<char*>(m)[kSize - 1] = 'v';
    EXPECT_EQ('v', static_cast<char*>(ram.map)[kSize - 1]);
    munmap(m, kSize);
}

TEST(PeerRam, NothingOfThatSizeIsNotYet) {
    SharedFile ram(kSize), bar2(64 << 10);
    UniqueFd fd;
    std::string err;
    EXPECT_EQ(PeerRam::not_yet, find_self(kSize + 4096, bar2.fd.get(), &fd, &err));
    EXPECT_FALSE(fd);
}

TEST(PeerRam, LeavesOutBar2AndPrivateMappings) {
    SharedFile bar2(kSize), priv(kSize, MAP_PRIVATE);
    ASSERT_NE(MAP_FAILED, bar2.map);
    ASSERT_NE(MAP_FAILED, priv.map);
    UniqueFd fd;
    std::string err;
    EXPECT_EQ(PeerRam::not_yet, find_self(kSize, bar2.fd.get(), &fd, &err));
}

TEST(PeerRam, TwoCandidatesAreAnError) {
    SharedFile a(kSize), b(kSize), bar2(64 << 10);
    UniqueFd fd;
    std::string err;
    EXPECT_EQ(PeerRam::error, find_self(kSize, bar2.fd.get(), &fd, &err));
    EXPECT_NE(std::string::npos, err.find("2 shared files")) << err;
    EXPECT_FALSE(fd);
}

// A peer that can only read a file cannot have the model write it: a
// read-only shared mapping is no candidate, nor is a writable one whose
// file the peer holds only a read-only descriptor of.
TEST(PeerRam, NeverMoreThanThePeerMayWrite) {
    SharedFile bar2(64 << 10);
    UniqueFd memfd(memfd_create("peer-ram-test", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    ASSERT_EQ(0, ftruncate(memfd.get(), kSize));
    ASSERT_EQ(0, fcntl(memfd.get(), F_ADD_SEALS, F_SEAL_SHRINK));
    const std::string self = "/proc/self/fd/" + std::to_string(memfd.get());
    UniqueFd ro(open(self.c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(ro);
    void* r = mmap(nullptr, kSize, PROT_READ, MAP_SHARED, ro.get(), 0);
    ASSERT_NE(MAP_FAILED, r);
    UniqueFd fd;
    std::string err;
    EXPECT_EQ(PeerRam::not_yet, find_self(kSize, bar2.fd.get(), &fd, &err));
    munmap(r, kSize);

    void* w = mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, memfd.get(), 0);
    ASSERT_NE(MAP_FAILED, w);
    memfd.reset(); // left: the mapping and the read-only descriptor
    EXPECT_EQ(PeerRam::error, find_self(kSize, bar2.fd.get(), &fd, &err));
    EXPECT_NE(std::string::npos, err.find("no read-write descriptor")) << err;
    EXPECT_FALSE(fd);
    munmap(w, kSize);
}

// RAM the peer could shrink would make the model's access fault (SIGBUS,
// the whole model down): a file not sealed against shrinking is refused.
TEST(PeerRam, RamThatCanShrinkIsRefused) {
    SharedFile ram(kSize, MAP_SHARED, false), bar2(64 << 10);
    ASSERT_NE(MAP_FAILED, ram.map);
    UniqueFd fd;
    std::string err;
    EXPECT_EQ(PeerRam::error, find_self(kSize, bar2.fd.get(), &fd, &err));
    EXPECT_NE(std::string::npos, err.find("sealed against shrinking")) << err;
    EXPECT_FALSE(fd);
}

TEST(PeerRam, WaitsForTheRamOfThePeer) {
    int sv[2];
    ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
    UniqueFd model(sv[0]), qemu(sv[1]);
    SharedFile bar2(64 << 10);
    std::unique_ptr<SharedFile> ram;
    std::thread later([&] {
        usleep(50'000);
        ram = std::make_unique<SharedFile>(kSize);
    });
    std::atomic<bool> stop{false};
    std::string err;
    UniqueFd fd = wait_peer_ram(model.get(), kSize, bar2.fd.get(), stop, 5000, &err);
    later.join();
    ASSERT_TRUE(fd) << err;
    EXPECT_TRUE(same_file(fd.get(), ram->fd.get()));
}

TEST(PeerRam, GivesUpWhenThePeerGoesOrTimeRunsOut) {
    int sv[2];
    ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
    UniqueFd model(sv[0]), qemu(sv[1]);
    SharedFile bar2(64 << 10);
    std::atomic<bool> stop{false};
    std::string err;
    EXPECT_FALSE(wait_peer_ram(model.get(), kSize, bar2.fd.get(), stop, 50, &err));
    EXPECT_NE(std::string::npos, err.find("maps no shared guest RAM")) << err;
    qemu.reset();
    err.clear();
    EXPECT_FALSE(wait_peer_ram(model.get(), kSize, bar2.fd.get(), stop, 5000, &err));
    EXPECT_NE(std::string::npos, err.find("went away")) << err;
}

} // namespace
} // namespace vrnic::test
