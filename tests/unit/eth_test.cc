// The Ethernet TX and RX rings and MAC loopback (device-interface.md
// sections 10.22, 17).
#include "fake_driver.h"

#include "shared_word.h"

#include <vector>

namespace vrnic::test {
namespace {

class Eth : public ::testing::Test {
  protected:
    void SetUp() override {
        drv.bring_up();
        tx = drv.regs()->tx_base;
        rx = drv.regs()->rx_base;
        drv.take_irqs(VRNIC_IRQ_ETH);
    }
    vrnic_eth_desc* desc(uint64_t ring, uint32_t i) {
        return reinterpret_cast<vrnic_eth_desc*>(drv.host(ring + (i & 63) * 16, 16));
    }
    void post_tx(uint64_t addr, uint32_t len, uint16_t flags = 0) {
        *desc(tx, tx_pi) = {addr, len, flags, 0};
        store_release(&drv.regs()->tx_pi, ++tx_pi);
    }
    void post_rx(uint64_t addr, uint32_t len) {
        *desc(rx, rx_pi) = {addr, len, 0, 0};
        store_release(&drv.regs()->rx_pi, ++rx_pi);
    }
    uint32_t set_eth(uint32_t flags, uint32_t reserved = 0) {
        vrnic_cmd_set_eth c{flags, reserved};
        return drv.cmd(VRNIC_CMD_SET_ETH, &c, sizeof(c));
    }
    uint32_t missed() { return load_acquire(&drv.regs()->eth_rx_missed); }
    uint32_t oversize() { return load_acquire(&drv.regs()->eth_rx_oversize); }
    // A frame of `len` bytes whose every byte depends on len and seed.
    uint64_t frame(uint32_t len, uint8_t seed) {
        uint64_t f = drv.alloc(len);
        drv.fill(f, len, seed);
        return f;
    }
    FakeDriver drv;
    uint64_t tx = 0, rx = 0;
    uint32_t tx_pi = 0, rx_pi = 0;
};

TEST_F(Eth, TxCompletesValidFramesAndFlagsBadOnes) {
    uint64_t f = drv.alloc(9100);
    drv.fill(f, 9100, 3);
    std::vector<std::vector<uint8_t>> sent;
    drv.dev().set_frame_sink([&](const uint8_t* p, uint32_t n) {
        sent.emplace_back(p, p + n);
        return sent.size() != 2; // the second frame "could not be delivered"
    });
    post_tx(f, 60);
    post_tx(f, 1514);
    post_tx(f, 13);                         // shorter than a header
    post_tx(f, 9019);                       // > MTU + 18
    post_tx(FakeDriver::kRamSize - 10, 60); // outside guest RAM
    post_tx(f, 60, 1);                      // unknown flags
    post_tx(f, 9018);                       // jumbo, exactly the maximum
    drv.run();
    EXPECT_EQ(7u, drv.regs()->tx_ci);
    EXPECT_EQ(1u, drv.take_irqs(VRNIC_IRQ_ETH));
    const uint16_t D = VRNIC_ETH_ST_DONE, E = VRNIC_ETH_ST_ERR, X = VRNIC_ETH_ST_DROPPED;
    uint16_t want[7] = {
        D, uint16_t(D | X), uint16_t(D | E), uint16_t(D | E), uint16_t(D | E), uint16_t(D | E), D};
    for (uint32_t i = 0; i < 7; i++)
        EXPECT_EQ(want[i], desc(tx, i)->status) << i;
    ASSERT_EQ(3u, sent.size());
    EXPECT_EQ(60u, sent[0].size());
    EXPECT_EQ(0, memcmp(sent[0].data(), drv.host(f), 60));
    EXPECT_EQ(9018u, sent[2].size());
}

TEST_F(Eth, TxSinkGetsACopyTheGuestCannotRewrite) {
    const uint64_t f = frame(60, 5);
    std::vector<uint8_t> before(drv.host(f), drv.host(f) + 60), seen;
    drv.dev().set_frame_sink([&](const uint8_t* p, uint32_t n) {
        // Another vCPU rewriting the frame while the sink checks it.
        memset(drv.host(f), 0xee, 60);
        seen.assign(p, p + n);
        return true;
    });
    post_tx(f, 60);
    drv.run();
    EXPECT_EQ(before, seen);
}

TEST_F(Eth, TxWithoutStationCompletesDone) {
    uint64_t f = drv.alloc(64);
    for (int i = 0; i < 200; i++) { // wraps the 64-entry ring
        post_tx(f, 64);
        drv.run();
        ASSERT_EQ(uint16_t(VRNIC_ETH_ST_DONE), desc(tx, i)->status);
    }
    EXPECT_EQ(200u, drv.regs()->tx_ci);
}

TEST_F(Eth, TxProducerOutOfRangeStopsTxOnly) {
    store_release(&drv.regs()->tx_pi, 65u);
    drv.run();
    EXPECT_EQ(0u, drv.regs()->tx_ci);
    store_release(&drv.regs()->tx_pi, 1u);
    drv.run();
    EXPECT_EQ(0u, drv.regs()->tx_ci);      // stopped until reset
    EXPECT_EQ(0u, drv.cmd(VRNIC_CMD_NOP)); // RDMA side unaffected
}

TEST_F(Eth, RxDeliversIntoPostedBuffers) {
    uint8_t frame[100];
    for (int i = 0; i < 100; i++)
        frame[i] = static_cast<uint8_t>(i ^ 0x5a);
    EXPECT_FALSE(drv.dev().deliver_frame(frame, 100)); // no buffer: dropped
    uint64_t b0 = drv.alloc(9018), b1 = drv.alloc(64);
    post_rx(b0, 9018);
    post_rx(b1, 64);
    EXPECT_TRUE(drv.dev().deliver_frame(frame, 100));
    EXPECT_EQ(1u, drv.regs()->rx_ci);
    EXPECT_EQ(100u, desc(rx, 0)->len);
    EXPECT_EQ(uint16_t(VRNIC_ETH_ST_DONE), desc(rx, 0)->status);
    EXPECT_EQ(0, memcmp(drv.host(b0), frame, 100));
    EXPECT_EQ(1u, drv.take_irqs(VRNIC_IRQ_ETH));
    // Too big for the 64-byte buffer: dropped, descriptor kept.
    EXPECT_FALSE(drv.dev().deliver_frame(frame, 100));
    EXPECT_EQ(1u, drv.regs()->rx_ci);
    EXPECT_TRUE(drv.dev().deliver_frame(frame, 64));
    EXPECT_EQ(2u, drv.regs()->rx_ci);
}

TEST_F(Eth, RxBufferOutsideRamIsConsumedWithError) {
    post_rx(FakeDriver::kRamSize - 8, 2048);
    uint8_t frame[60] = {};
    EXPECT_FALSE(drv.dev().deliver_frame(frame, 60));
    EXPECT_EQ(1u, drv.regs()->rx_ci);
    EXPECT_EQ(uint16_t(VRNIC_ETH_ST_DONE | VRNIC_ETH_ST_ERR), desc(rx, 0)->status);
}

TEST_F(Eth, SetEthRejectsUnknownFlagsAndReserved) {
    EXPECT_EQ(uint32_t(VRNIC_CMD_STATUS_BAD_PARAM), set_eth(2));
    EXPECT_EQ(uint32_t(VRNIC_CMD_STATUS_BAD_PARAM), set_eth(VRNIC_ETH_F_LOOPBACK, 1));
    EXPECT_EQ(uint32_t(VRNIC_CMD_STATUS_OK), set_eth(VRNIC_ETH_F_LOOPBACK));
    EXPECT_EQ(uint32_t(VRNIC_CMD_STATUS_OK), set_eth(0));
}

TEST_F(Eth, LoopbackDeliversEveryByteInOrder) {
    std::vector<bool> sunk;
    drv.dev().set_frame_sink([&](const uint8_t*, uint32_t) {
        sunk.push_back(true);
        return true;
    });
    ASSERT_EQ(0u, set_eth(VRNIC_ETH_F_LOOPBACK));
    const uint32_t lens[] = {14, 60, 61, 1514, 4096, 9018};
    std::vector<uint64_t> bufs;
    for (uint32_t i = 0; i < 6; i++) {
        bufs.push_back(drv.alloc(9018));
        memset(drv.host(bufs[i], 9018), 0xee, 9018); // past the frame: untouched
        post_rx(bufs[i], 9018);
    }
    drv.take_irqs(VRNIC_IRQ_ETH);
    for (uint32_t i = 0; i < 6; i++)
        post_tx(frame(lens[i], uint8_t(i + 1)), lens[i]);
    drv.run();
    EXPECT_EQ(6u, drv.regs()->tx_ci);
    EXPECT_EQ(6u, drv.regs()->rx_ci);
    EXPECT_TRUE(sunk.empty()); // looped frames never leave the port
    EXPECT_EQ(1u, drv.take_irqs(VRNIC_IRQ_ETH));
    for (uint32_t i = 0; i < 6; i++) {
        EXPECT_EQ(uint16_t(VRNIC_ETH_ST_DONE), desc(tx, i)->status) << i;
        EXPECT_EQ(uint16_t(VRNIC_ETH_ST_DONE), desc(rx, i)->status) << i;
        EXPECT_EQ(lens[i], desc(rx, i)->len) << i;
        EXPECT_TRUE(drv.check_pattern(bufs[i], lens[i], uint8_t(i + 1))) << i;
        if (lens[i] < 9018) {
            EXPECT_EQ(0xee, *drv.host(bufs[i] + lens[i])) << "wrote past the frame " << i;
        }
    }
    EXPECT_EQ(0u, missed());
    EXPECT_EQ(0u, oversize());

    // Off again: frames go to the sink, RX sees nothing.
    ASSERT_EQ(0u, set_eth(0));
    post_rx(drv.alloc(9018), 9018);
    post_tx(frame(60, 9), 60);
    drv.run();
    EXPECT_EQ(7u, drv.regs()->tx_ci);
    EXPECT_EQ(6u, drv.regs()->rx_ci);
    EXPECT_EQ(1u, sunk.size());
}

TEST_F(Eth, LoopbackRingFullDropsAreCountedAndTxStillDone) {
    ASSERT_EQ(0u, set_eth(VRNIC_ETH_F_LOOPBACK));
    uint64_t b[4];
    for (auto& x : b) {
        x = drv.alloc(2048);
        post_rx(x, 2048);
    }
    for (uint32_t i = 0; i < 10; i++)
        post_tx(frame(100 + i, uint8_t(i)), 100 + i);
    drv.run();
    EXPECT_EQ(10u, drv.regs()->tx_ci);
    for (uint32_t i = 0; i < 10; i++)
        EXPECT_EQ(uint16_t(VRNIC_ETH_ST_DONE), desc(tx, i)->status) << i;
    EXPECT_EQ(4u, drv.regs()->rx_ci);
    EXPECT_EQ(6u, missed());
    for (uint32_t i = 0; i < 4; i++) {
        EXPECT_EQ(100 + i, desc(rx, i)->len);
        EXPECT_TRUE(drv.check_pattern(b[i], 100 + i, uint8_t(i))) << i;
    }
    // A refilled ring receives again, from the next frame on.
    uint64_t again = drv.alloc(2048);
    post_rx(again, 2048);
    post_tx(frame(200, 42), 200);
    drv.run();
    EXPECT_EQ(5u, drv.regs()->rx_ci);
    EXPECT_TRUE(drv.check_pattern(again, 200, 42));
    EXPECT_EQ(6u, missed());
    // A reset zeroes the counter and turns loopback off.
    drv.reset();
    EXPECT_EQ(0u, missed());
}

TEST_F(Eth, LoopbackShortBufferKeepsDescriptorAndCounts) {
    ASSERT_EQ(0u, set_eth(VRNIC_ETH_F_LOOPBACK));
    uint64_t small = drv.alloc(64);
    post_rx(small, 64);
    post_tx(frame(65, 1), 65);
    post_tx(frame(64, 2), 64);
    drv.run();
    EXPECT_EQ(1u, oversize());
    EXPECT_EQ(0u, missed());
    EXPECT_EQ(1u, drv.regs()->rx_ci); // the 64-byte frame took the buffer
    EXPECT_EQ(64u, desc(rx, 0)->len);
    EXPECT_TRUE(drv.check_pattern(small, 64, 2));
}

TEST_F(Eth, LoopbackBadTxFramesAreNotLooped) {
    ASSERT_EQ(0u, set_eth(VRNIC_ETH_F_LOOPBACK));
    post_rx(drv.alloc(9018), 9018);
    post_tx(frame(60, 1), 13);                        // shorter than a header
    post_tx(frame(9019, 1), 9019);                    // longer than MTU + 18
    post_tx(FakeDriver::kRamSize - 10, 60);           // outside guest RAM
    post_tx(frame(60, 1), 60, 1);                     // unknown flags
    drv.run();
    EXPECT_EQ(4u, drv.regs()->tx_ci);
    for (uint32_t i = 0; i < 4; i++)
        EXPECT_EQ(uint16_t(VRNIC_ETH_ST_DONE | VRNIC_ETH_ST_ERR), desc(tx, i)->status) << i;
    EXPECT_EQ(0u, drv.regs()->rx_ci);
    EXPECT_EQ(0u, missed() + oversize());
}

// A hostile guest: bad RX descriptors, a buffer that is the TX frame
// itself, rings on top of each other, a producer index out of range.
TEST_F(Eth, LoopbackHostileRxDescriptors) {
    ASSERT_EQ(0u, set_eth(VRNIC_ETH_F_LOOPBACK));
    uint64_t f = frame(1000, 7);
    *desc(rx, rx_pi) = {f, 1000, 1, 0}; // unknown flags: consumed, flagged
    store_release(&drv.regs()->rx_pi, ++rx_pi);
    post_rx(FakeDriver::kRamSize - 100, 9018); // frame would cross the end of RAM
    post_rx(f + 10, 1000);                     // overlaps the frame it receives
    post_tx(f, 1000);
    post_tx(f, 1000);
    post_tx(f, 990);
    const std::vector<uint8_t> want(drv.host(f), drv.host(f) + 990);
    drv.run();
    EXPECT_EQ(3u, drv.regs()->rx_ci);
    const uint16_t DE = VRNIC_ETH_ST_DONE | VRNIC_ETH_ST_ERR;
    EXPECT_EQ(DE, desc(rx, 0)->status);
    EXPECT_EQ(0u, desc(rx, 0)->len);
    EXPECT_EQ(DE, desc(rx, 1)->status);
    EXPECT_EQ(uint16_t(VRNIC_ETH_ST_DONE), desc(rx, 2)->status);
    EXPECT_EQ(990u, desc(rx, 2)->len);
    // The third frame's bytes arrived whole although source and
    // destination overlap.
    EXPECT_EQ(0, memcmp(drv.host(f + 10), want.data(), 990));
    for (uint32_t i = 0; i < 3; i++)
        EXPECT_EQ(uint16_t(VRNIC_ETH_ST_DONE), desc(tx, i)->status) << i;

    // rx_pi far ahead: RX stops until reset, TX keeps completing, and
    // every frame it cannot take counts as missed.
    store_release(&drv.regs()->rx_pi, rx_pi + 65);
    post_tx(f, 60);
    post_tx(f, 60);
    drv.run();
    EXPECT_EQ(5u, drv.regs()->tx_ci);
    EXPECT_EQ(3u, drv.regs()->rx_ci);
    EXPECT_EQ(2u, missed());
    EXPECT_EQ(0u, drv.cmd(VRNIC_CMD_NOP)); // RDMA side unaffected
}

TEST(EthRings, LoopbackWithTxAndRxRingsOnTopOfEachOther) {
    FakeDriver drv;
    vrnic_regs* r = drv.regs();
    uint64_t ring = drv.alloc(16 << 4);
    r->tx_base = r->rx_base = ring;
    r->tx_log_depth = r->rx_log_depth = 4;
    drv.bring_up(4, 8, false); // keeps the ring registers written above
    ASSERT_EQ(ring, r->rx_base);
    vrnic_cmd_set_eth c{VRNIC_ETH_F_LOOPBACK, 0};
    ASSERT_EQ(0u, drv.cmd(VRNIC_CMD_SET_ETH, &c, sizeof(c)));
    // Whatever the guest made of it, the device must survive and stay in
    // its own bounds.
    uint64_t f = drv.alloc(100);
    auto* d = reinterpret_cast<vrnic_eth_desc*>(drv.host(ring, 16 << 4));
    for (uint32_t i = 0; i < 40; i++) {
        d[i & 15] = {f, 100, 0, 0};
        store_release(&r->rx_pi, i + 1);
        store_release(&r->tx_pi, i + 1);
        drv.run();
    }
    EXPECT_EQ(0u, drv.cmd(VRNIC_CMD_NOP));
}

} // namespace
} // namespace vrnic::test
