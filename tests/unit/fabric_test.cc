// Two VMs on one fabric, the whole model path without QEMU: two Port
// threads, each serving a fake QEMU on its own socket and guest RAM, joined
// by the EthSwitch. Two test threads, one per VM, drive the Ethernet rings
// like a driver and exchange frames both ways at once; every byte that
// arrives is checked. Built with -DVRNIC_TSAN=ON this runs under
// ThreadSanitizer.
#include "eth_switch.h"
#include "fake_ivshmem_client.h"
#include "port.h"
#include "shared_word.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <mutex>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <thread>
#include <vrnic_dev.h>

namespace vrnic::test {
namespace {

constexpr off_t kRam = 16 << 20;
constexpr uint64_t kCmdq = 1 << 20, kAeq = 2 << 20, kTxRing = 3 << 20, kRxRing = kTxRing + 4096;
constexpr uint64_t kTxBufs = 4 << 20, kRxBufs = 5 << 20, kBuf = 2048;
constexpr uint32_t kLogDepth = 6, kDepth = 1u << kLogDepth;
constexpr uint32_t kWindow = 32; // frames in flight to the peer: fewer than its RX buffers
constexpr uint16_t kProto = 0x88b5;

uint32_t frame_len(uint32_t seq) {
    return 60 + (seq * 37) % 1455;
}
uint8_t frame_byte(uint32_t seq, uint32_t i) {
    return static_cast<uint8_t>(seq * 7 + i * 13);
}

// One VM: its RAM, its port of the fabric, its fake QEMU and BAR2.
struct Vm {
    UniqueFd ram_fd;
    std::unique_ptr<GuestMemory> mem;
    std::string path;
    std::unique_ptr<Port> port;
    std::thread thread;
    bool ok = false;
    FakeIvshmemClient qemu;
    void* bar2_map = nullptr; // ours
    vrnic_regs* r = nullptr;  // BAR2, at the model's own mapping when found
    uint32_t tx_pi = 0, rx_pi = 0, rx_seen = 0;

    // Test addresses are always inside RAM.
    uint8_t* at(uint64_t gpa, uint64_t len) {
        uint8_t* p = mem->at(gpa, len);
        if (!p)
            std::abort();
        return p;
    }
    // The MAC the model gave this VM, from its register page.
    Mac mac() const {
        Mac m;
        memcpy(m.data(), r->mac, m.size());
        return m;
    }
    vrnic_eth_desc* desc(uint64_t ring, uint32_t i) {
        return reinterpret_cast<vrnic_eth_desc*>(at(ring + (i % kDepth) * 16, 16));
    }
    void post_rx() {
        *desc(kRxRing, rx_pi) = {kRxBufs + (rx_pi % kDepth) * kBuf, kBuf, 0, 0};
        store_release(&r->rx_pi, ++rx_pi);
    }
    // Sends a frame dst <- src of frame_len(seq) bytes.
    void send(const Mac& dst, const Mac& src, uint32_t seq) {
        const uint64_t buf = kTxBufs + (tx_pi % kDepth) * kBuf;
        const uint32_t len = frame_len(seq);
        uint8_t* f = at(buf, len);
        memcpy(f, dst.data(), 6);
        memcpy(f + 6, src.data(), 6);
        f[12] = kProto >> 8;
        f[13] = kProto & 0xff;
        memcpy(f + 14, &seq, 4);
        for (uint32_t i = 18; i < len; i++)
            f[i] = frame_byte(seq, i);
        *desc(kTxRing, tx_pi) = {buf, len, 0, 0};
        store_release(&r->tx_pi, ++tx_pi);
        qemu.kick(VRNIC_KICK_ETH_TX);
    }
};

// The model's own mapping of the shared memory behind `fd` (another one than
// `ours`), or `ours` when there is none. The test then reads and writes BAR2
// at the very addresses the model does, so that ThreadSanitizer sees each
// release/acquire pair across the two threads.
void* model_mapping(int fd, void* ours) {
    struct stat st {};
    if (fstat(fd, &st) != 0)
        return ours;
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        unsigned long start = 0, end = 0, ino = 0;
        char perms[8], off[32], dev[32];
        if (sscanf(line.c_str(), "%lx-%lx %7s %31s %31s %lu", &start, &end, perms, off, dev,
                   &ino) == 6 &&
            ino == st.st_ino && line.find("memfd:") != std::string::npos &&
            reinterpret_cast<void*>(start) != ours && end - start == VRNIC_BAR2_SIZE)
            return reinterpret_cast<void*>(start);
    }
    return ours;
}

class Fabric : public ::testing::Test {
  protected:
    void SetUp() override {
        for (uint32_t i = 0; i < 2; i++) {
            Vm& v = vm[i];
            v.ram_fd.reset(memfd_create("fabric-test-ram", MFD_CLOEXEC));
            ASSERT_EQ(0, ftruncate(v.ram_fd.get(), kRam));
            std::string err;
            v.mem = GuestMemory::map_fd(v.ram_fd.get(), kRam, &err);
            ASSERT_TRUE(v.mem) << err;
            v.path = "/tmp/vrnic-fabric-test-" + std::to_string(getpid()) + "-" +
                     std::to_string(i) + ".sock";
            PortConfig cfg;
            cfg.socket_path = v.path;
            cfg.mem = v.mem.get();
            cfg.params.mac[5] = static_cast<uint8_t>(1 + i);
            Mac mac;
            std::copy(std::begin(cfg.params.mac), std::end(cfg.params.mac), mac.begin());
            cfg.fabric = &sw;
            cfg.fabric_port = sw.add_port(mac);
            v.port = Port::create(cfg, &err);
            ASSERT_TRUE(v.port) << err;
        }
        stop_fd.reset(eventfd(0, EFD_CLOEXEC));
        for (Vm& v : vm)
            v.thread = std::thread([this, &v] { v.ok = v.port->run(stop, stop_fd.get()); });
        for (Vm& v : vm)
            ASSERT_NO_FATAL_FAILURE(bring_up(v));
    }
    void TearDown() override {
        stop = true;
        uint64_t one = 1;
        (void)!write(stop_fd.get(), &one, 8);
        for (Vm& v : vm) {
            if (v.thread.joinable())
                v.thread.join();
            EXPECT_TRUE(v.ok);
            if (v.bar2_map)
                munmap(v.bar2_map, VRNIC_BAR2_SIZE);
        }
    }
    // Connects the fake QEMU, resets the device and brings it up with both
    // Ethernet rings.
    void bring_up(Vm& v) {
        v.qemu.sock = connect_unix(v.path.c_str());
        ASSERT_TRUE(v.qemu.sock.valid());
        ASSERT_TRUE(v.qemu.handshake(VRNIC_NUM_VECTORS));
        void* p =
            mmap(nullptr, VRNIC_BAR2_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, v.qemu.shm.get(), 0);
        ASSERT_NE(MAP_FAILED, p);
        v.bar2_map = p;
        v.r = static_cast<vrnic_regs*>(model_mapping(v.qemu.shm.get(), p));
        store_release(&v.r->reset_req, 1u);
        v.qemu.kick(VRNIC_KICK_CMD);
        ASSERT_TRUE(wait_for([&] { return load_acquire(&v.r->reset_ack) == 1; }));
        v.r->cmdq_base = kCmdq;
        v.r->cmdq_log_depth = 3;
        v.r->aeq_base = kAeq;
        v.r->aeq_log_depth = 4;
        v.r->tx_base = kTxRing;
        v.r->tx_log_depth = kLogDepth;
        v.r->rx_base = kRxRing;
        v.r->rx_log_depth = kLogDepth;
        store_release(&v.r->driver_ctrl, uint32_t(VRNIC_DRV_CTRL_DRIVER_OK));
        // A NOP completes once DRIVER_OK has been latched.
        auto* cmd = reinterpret_cast<vrnic_cmd*>(v.at(kCmdq, 128));
        memset(cmd, 0, 128);
        cmd->hdr.opcode = VRNIC_CMD_NOP;
        store_release(&v.r->cmdq_pi, 1u);
        v.qemu.kick(VRNIC_KICK_CMD);
        ASSERT_TRUE(wait_for([&] { return load_acquire(&v.r->cmdq_ci) == 1; }));
        ASSERT_EQ(0u, cmd->hdr.status);
        for (uint32_t i = 0; i < kDepth; i++)
            v.post_rx();
    }

    // The driver of VM `me`: sends `count` frames to the peer while it
    // takes and checks the peer's, at most kWindow ahead of what the peer
    // has taken (so no frame finds its RX ring empty).
    void drive(uint32_t me, uint32_t count) {
        Vm& v = vm[me];
        const uint32_t peer = 1 - me;
        const Mac own_mac = v.mac(), peer_mac = vm[peer].mac();
        uint32_t sent = 0, got = 0, tx_checked = 0;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while ((sent < count || got < count || tx_checked < count) &&
               std::chrono::steady_clock::now() < deadline) {
            const uint32_t rx_ci = load_acquire(&v.r->rx_ci);
            for (; v.rx_seen != rx_ci; v.rx_seen++, got++) {
                vrnic_eth_desc* d = v.desc(kRxRing, v.rx_seen);
                const uint16_t status = load_acquire(&d->status);
                const uint32_t len = d->len;
                const uint8_t* f = v.at(d->addr, kBuf);
                uint32_t seq = ~0u;
                memcpy(&seq, f + 14, 4);
                bool good = status == VRNIC_ETH_ST_DONE && seq == got && len == frame_len(got) &&
                            !memcmp(f, own_mac.data(), 6) && !memcmp(f + 6, peer_mac.data(), 6);
                for (uint32_t i = 18; good && i < len; i++)
                    good = f[i] == frame_byte(got, i);
                if (!good)
                    fail(me, "frame " + std::to_string(got) + " arrived wrong (seq " +
                                 std::to_string(seq) + ", len " + std::to_string(len) + ")");
                taken[me].store(got + 1, std::memory_order_release);
                v.post_rx();
            }
            const uint32_t tx_ci = load_acquire(&v.r->tx_ci);
            for (; tx_checked != tx_ci; tx_checked++)
                if (load_acquire(&v.desc(kTxRing, tx_checked)->status) != VRNIC_ETH_ST_DONE)
                    fail(me, "TX " + std::to_string(tx_checked) + " not DONE");
            if (sent < count && sent - taken[peer].load(std::memory_order_acquire) < kWindow &&
                sent - tx_ci < kDepth) {
                v.send(peer_mac, own_mac, sent);
                sent++;
            } else {
                std::this_thread::yield();
            }
        }
        if (sent != count || got != count || tx_checked != count)
            fail(me, "sent " + std::to_string(sent) + ", received " + std::to_string(got) +
                         ", TX completed " + std::to_string(tx_checked));
    }
    void fail(uint32_t me, const std::string& what) {
        std::lock_guard<std::mutex> g(mu);
        errors.push_back("VM " + std::to_string(me) + ": " + what);
    }

    EthSwitch sw{9000};
    Vm vm[2];
    UniqueFd stop_fd;
    std::atomic<bool> stop{false};
    std::atomic<uint32_t> taken[2] = {0, 0};
    std::mutex mu;
    std::vector<std::string> errors;
};

TEST_F(Fabric, TwoVmsExchangeFramesBothWaysAtOnce) {
    EXPECT_NE(vm[0].mac(), vm[1].mac()); // each VM its own MAC
    constexpr uint32_t kFrames = 3000;
    std::thread a([&] { drive(0, kFrames); });
    std::thread b([&] { drive(1, kFrames); });
    a.join();
    b.join();
    for (const std::string& e : errors)
        ADD_FAILURE() << e;
    EXPECT_TRUE(errors.empty());
    const SwitchCounters c = sw.counters();
    EXPECT_EQ(2 * kFrames, c.forwarded + c.flooded);
    // Flooded only until the switch has learned both MACs, which takes each
    // side's first frame and however long its port thread takes to send it
    // (long under ThreadSanitizer): a bound on the order of the windows
    // would be a race; a switch that does not learn floods all 6000.
    EXPECT_LE(c.flooded, kFrames / 10);
    EXPECT_EQ(0u, c.spoofed + c.bad_len + c.to_self);
}

TEST_F(Fabric, AVmSendingWithTheOtherVmsMacIsDropped) {
    Vm& v = vm[0];
    v.send(vm[1].mac(), vm[1].mac(), 0); // poses as VM 1
    ASSERT_TRUE(wait_for([&] { return load_acquire(&v.r->tx_ci) == 1; }));
    EXPECT_EQ(uint16_t(VRNIC_ETH_ST_DONE | VRNIC_ETH_ST_DROPPED),
              load_acquire(&v.desc(kTxRing, 0)->status));
    EXPECT_EQ(1u, sw.counters().spoofed);
    // Nothing reached VM 1: the first frame it gets is VM 0's next, honest
    // one.
    v.send(vm[1].mac(), v.mac(), 2);
    ASSERT_TRUE(wait_for([&] { return load_acquire(&vm[1].r->rx_ci) == 1; }));
    uint32_t seq = 0;
    memcpy(&seq, vm[1].at(vm[1].desc(kRxRing, 0)->addr, 18) + 14, 4);
    EXPECT_EQ(2u, seq);
    EXPECT_EQ(0u, load_acquire(&vm[1].r->eth_rx_missed));
}

} // namespace
} // namespace vrnic::test
