// The whole model process path without QEMU: a Port thread serving a real
// UNIX socket, and a fake QEMU that does the ivshmem handshake, maps BAR2,
// kicks doorbell vectors and waits for interrupts.
#include "fake_ivshmem_client.h"
#include "port.h"
#include "shared_word.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <thread>
#include <vrnic_dev.h>

namespace vrnic::test {
namespace {

bool irq_within(const FakeIvshmemClient& c, unsigned v, int ms = 2000) {
    pollfd p{c.own[v].get(), POLLIN, 0};
    if (poll(&p, 1, ms) != 1)
        return false;
    return c.take_irqs(v) > 0;
}

class PortTest : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!peer_ram) {
            ASSERT_NO_FATAL_FAILURE(map_ram());
        }
        path = "/tmp/vrnic-port-test-" + std::to_string(getpid()) + ".sock";
        PortConfig cfg;
        cfg.socket_path = path;
        cfg.mem = mem.get();
        if (peer_ram) {
            cfg.peer_mem_size = kRam;
            cfg.peer_ram_timeout_ms = 300;
        }
        std::string err;
        port = Port::create(cfg, &err);
        ASSERT_TRUE(port) << err;
        stop_fd.reset(eventfd(0, EFD_CLOEXEC));
        thread = std::thread([this] { ok = port->run(stop, stop_fd.get()); });
    }
    void TearDown() override {
        stop = true;
        uint64_t one = 1;
        (void)!write(stop_fd.get(), &one, 8);
        if (thread.joinable())
            thread.join();
        EXPECT_TRUE(ok);
    }
    // The guest RAM: this process's shared mapping of a memfd, sealed as
    // QEMU's memfd backend seals it.
    void map_ram() {
        ram_fd.reset(memfd_create("port-test-ram", MFD_CLOEXEC | MFD_ALLOW_SEALING));
        ASSERT_EQ(0, ftruncate(ram_fd.get(), kRam));
        ASSERT_EQ(0, fcntl(ram_fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW));
        std::string err;
        mem = GuestMemory::map_fd(ram_fd.get(), kRam, &err);
        ASSERT_TRUE(mem) << err;
    }
    // Resets the device, brings it up with a command queue in guest RAM
    // and completes NOPs through it, each with a kick and an interrupt.
    void bring_up_and_nop(FakeIvshmemClient& qemu, vrnic_regs* r) {
        // Reset.
        store_release(&r->reset_req, 1u);
        qemu.kick(VRNIC_KICK_CMD);
        ASSERT_TRUE(wait_for([&] { return load_acquire(&r->reset_ack) == 1; }));

        // Bring-up with a command queue and async EQ in guest RAM.
        r->cmdq_base = 1 << 20;
        r->cmdq_log_depth = 3;
        r->aeq_base = 2 << 20;
        r->aeq_log_depth = 4;
        store_release(&r->driver_ctrl, uint32_t(VRNIC_DRV_CTRL_DRIVER_OK));
        qemu.kick(VRNIC_KICK_CMD);

        // Several NOPs, each with a kick; each completion raises vector 0.
        for (uint32_t i = 0; i < 20; i++) {
            auto* cmd = reinterpret_cast<vrnic_cmd*>(mem->at((1 << 20) + (i & 7) * 128, 128));
            ASSERT_NE(nullptr, cmd);
            memset(cmd, 0, 128);
            cmd->hdr.opcode = VRNIC_CMD_NOP;
            cmd->hdr.seq = i;
            store_release(&r->cmdq_pi, i + 1);
            qemu.kick(VRNIC_KICK_CMD);
            ASSERT_TRUE(wait_for([&] { return load_acquire(&r->cmdq_ci) == i + 1; })) << i;
            EXPECT_EQ(0u, cmd->hdr.status);
            EXPECT_TRUE(irq_within(qemu, VRNIC_IRQ_ADMIN)) << i;
            if (i == 10) { // let the model fall asleep once
                ASSERT_TRUE(wait_for([&] { return load_acquire(&r->need_wakeup) == 1; }));
            }
        }
    }
    // Connects a fake QEMU and maps its BAR2.
    vrnic_regs* connect(FakeIvshmemClient* c) {
        c->sock = connect_unix(path.c_str());
        EXPECT_TRUE(c->sock.valid());
        return handshake(c);
    }
    vrnic_regs* handshake(FakeIvshmemClient* c) {
        if (!c->handshake(VRNIC_NUM_VECTORS)) {
            ADD_FAILURE() << "handshake failed";
            return nullptr;
        }
        void* p =
            mmap(nullptr, VRNIC_BAR2_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, c->shm.get(), 0);
        if (p == MAP_FAILED) {
            ADD_FAILURE() << "cannot map BAR2";
            return nullptr;
        }
        maps.push_back(p);
        return static_cast<vrnic_regs*>(p);
    }
    static constexpr off_t kRam = 16 << 20;
    UniqueFd ram_fd, stop_fd;
    std::unique_ptr<GuestMemory> mem;
    std::string path;
    std::unique_ptr<Port> port;
    std::atomic<bool> stop{false};
    std::thread thread;
    bool ok = false;
    std::vector<void*> maps;
    bool peer_ram = false; // the model finds the RAM in this process

  public:
    ~PortTest() override {
        for (void* p : maps)
            munmap(p, VRNIC_BAR2_SIZE);
    }
};

TEST_F(PortTest, DriverBringUpOverTheSocket) {
    FakeIvshmemClient qemu;
    vrnic_regs* r = connect(&qemu);
    ASSERT_NE(nullptr, r);
    EXPECT_EQ(1, qemu.id);
    // BAR2 was initialised before QEMU got it.
    EXPECT_EQ(VRNIC_SIGNATURE, r->signature);
    EXPECT_TRUE(r->device_status & VRNIC_DEV_STATUS_READY);

    ASSERT_NO_FATAL_FAILURE(bring_up_and_nop(qemu, r));
    // It sleeps when idle and mirrors that into the kernel page.
    ASSERT_TRUE(wait_for([&] { return load_acquire(&r->need_wakeup) == 1; }));
    auto* page1 = reinterpret_cast<vrnic_db_slot*>(reinterpret_cast<uint8_t*>(r) + 4096);
    EXPECT_EQ(uint32_t(VRNIC_DB_STATUS_NEED_WAKEUP), load_acquire(&page1[0].st.status));
    // The heartbeat runs while it sleeps.
    uint64_t hb = load_acquire(&r->heartbeat);
    ASSERT_TRUE(wait_for([&] { return load_acquire(&r->heartbeat) > hb; }, 1000));
}

TEST_F(PortTest, DisconnectFreesTheVmAndANewOneGetsAFreshDevice) {
    {
        FakeIvshmemClient qemu;
        vrnic_regs* r = connect(&qemu);
        ASSERT_NE(nullptr, r);
        store_release(&r->reset_req, 7u);
        qemu.kick(VRNIC_KICK_CMD);
        ASSERT_TRUE(wait_for([&] { return load_acquire(&r->reset_ack) == 7; }));
        // A second QEMU on the same socket is refused while the first runs.
        FakeIvshmemClient intruder;
        intruder.sock = connect_unix(path.c_str());
        EXPECT_FALSE(intruder.handshake(VRNIC_NUM_VECTORS));
        EXPECT_EQ(kRefusedVersion, intruder.version); // QEMU reports it and stops
    }                                                 // the VM dies: its socket closes
    FakeIvshmemClient next;
    vrnic_regs* r2 = connect(&next);
    ASSERT_NE(nullptr, r2);
    EXPECT_EQ(VRNIC_SIGNATURE, r2->signature);
    EXPECT_EQ(0u, r2->reset_ack); // a new device, not the old state
}

// --guest-mem -: the model finds guest RAM in the QEMU that connects. Here
// this process is that QEMU, and maps its RAM only after it connected, as
// QEMU does.
class PeerRamPortTest : public PortTest {
  protected:
    void SetUp() override {
        peer_ram = true;
        PortTest::SetUp();
    }
};

TEST_F(PeerRamPortTest, FindsTheRamQemuMapsAfterConnecting) {
    FakeIvshmemClient qemu;
    qemu.sock = connect_unix(path.c_str());
    ASSERT_TRUE(qemu.sock.valid());
    usleep(100'000); // the model waits for the RAM meanwhile
    ASSERT_NO_FATAL_FAILURE(map_ram());
    vrnic_regs* r = handshake(&qemu);
    ASSERT_NE(nullptr, r);
    // The commands the model completes are the ones written to this RAM.
    ASSERT_NO_FATAL_FAILURE(bring_up_and_nop(qemu, r));
}

TEST_F(PeerRamPortTest, AQemuWithoutSuchRamIsDroppedAndTheNextOneServed) {
    {
        FakeIvshmemClient qemu;
        qemu.sock = connect_unix(path.c_str());
        ASSERT_TRUE(qemu.sock.valid());
        EXPECT_FALSE(qemu.handshake(VRNIC_NUM_VECTORS)); // refused after 300 ms
        EXPECT_EQ(kRefusedVersion, qemu.version);
    }
    ASSERT_NO_FATAL_FAILURE(map_ram());
    FakeIvshmemClient qemu;
    vrnic_regs* r = connect(&qemu);
    ASSERT_NE(nullptr, r);
    ASSERT_NO_FATAL_FAILURE(bring_up_and_nop(qemu, r));
}

} // namespace
} // namespace vrnic::test
