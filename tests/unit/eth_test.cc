// The Ethernet TX and RX rings (device-interface.md section 17).
#include "fake_driver.h"

#include "shared_word.h"

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

} // namespace
} // namespace vrnic::test
