// Power-on, reset, bring-up, fatal errors, heartbeat and the idle handshake
// (device-interface.md sections 4, 5, 8).
#include "fake_driver.h"
#include "shared_word.h"

namespace vrnic::test {
namespace {

TEST(DeviceLifecycle, PowerOnPublishesIdentityAndCaps) {
    FakeDriver drv;
    vrnic_regs* r = drv.regs();
    EXPECT_EQ(VRNIC_SIGNATURE, r->signature);
    EXPECT_EQ(0, memcmp(r, "VRNC", 4));
    EXPECT_EQ(VRNIC_VERSION_MAJOR, r->version_major);
    EXPECT_EQ(VRNIC_VERSION_MINOR, r->version_minor);
    EXPECT_EQ(uint64_t(VRNIC_BAR2_SIZE), r->bar2_size);
    EXPECT_EQ(1u, r->db_page_first);
    EXPECT_EQ(1023u, r->db_page_count);
    EXPECT_EQ(1022u, r->max_uctx);
    EXPECT_EQ(8u, r->num_vectors);
    EXPECT_EQ(6u, r->max_comp_eqs);
    EXPECT_EQ(16384u, r->max_srq);
    EXPECT_EQ(16384u, r->max_srq_wr);
    EXPECT_EQ(16u, r->max_srq_sge);
    EXPECT_EQ(16384u, r->max_ah);
    EXPECT_EQ(uint32_t(VRNIC_ATOMIC_HCA), r->atomic_cap);
    EXPECT_EQ(uint32_t(VRNIC_PORT_ACTIVE), r->port_state);
    EXPECT_EQ(uint32_t(VRNIC_DEV_STATUS_READY), r->device_status);
}

TEST(DeviceLifecycle, NothingHappensBeforeDriverOk) {
    FakeDriver drv;
    drv.regs()->cmdq_pi = 5; // no rings latched: must be ignored
    EXPECT_FALSE(drv.dev().poll_once());
    EXPECT_EQ(0u, drv.regs()->cmdq_ci);
    EXPECT_FALSE(drv.regs()->device_status & VRNIC_DEV_STATUS_FATAL);
}

TEST(DeviceLifecycle, BringUpAndNop) {
    FakeDriver drv;
    drv.bring_up();
    drv.take_irqs(VRNIC_IRQ_ADMIN);
    EXPECT_EQ(0u, drv.cmd(VRNIC_CMD_NOP));
    EXPECT_EQ(1u, drv.take_irqs(VRNIC_IRQ_ADMIN));
}

TEST(DeviceLifecycle, BadRingConfigIsFatalAndResetRecovers) {
    FakeDriver drv;
    drv.reset();
    vrnic_regs* r = drv.regs();
    r->cmdq_base = drv.alloc(4096) + 64; // misaligned
    r->cmdq_log_depth = 4;
    r->aeq_base = drv.alloc(4096);
    r->aeq_log_depth = 4;
    store_release(&r->driver_ctrl, uint32_t(VRNIC_DRV_CTRL_DRIVER_OK));
    drv.dev().poll_once();
    EXPECT_TRUE(r->device_status & VRNIC_DEV_STATUS_FATAL);
    EXPECT_EQ(uint32_t(VRNIC_FATAL_BAD_CONFIG), r->fatal_code);
    EXPECT_TRUE(drv.slot(1, 0)->st.status & VRNIC_DB_STATUS_FATAL);
    drv.bring_up(); // reset, then a valid configuration
    EXPECT_FALSE(r->device_status & VRNIC_DEV_STATUS_FATAL);
    EXPECT_EQ(0u, r->fatal_code);
    EXPECT_EQ(0u, drv.cmd(VRNIC_CMD_NOP));
}

TEST(DeviceLifecycle, RingConfigEdgesAreRejected) {
    struct Case {
        const char* what;
        void (*set)(vrnic_regs*, uint64_t ram);
    } cases[] = {
        {"cmdq depth 0", [](vrnic_regs* r, uint64_t) { r->cmdq_log_depth = 0; }},
        {"cmdq depth 11", [](vrnic_regs* r, uint64_t) { r->cmdq_log_depth = 11; }},
        {"cmdq base 0", [](vrnic_regs* r, uint64_t) { r->cmdq_base = 0; }},
        {"cmdq past RAM",
         [](vrnic_regs* r, uint64_t ram) {
             r->cmdq_base = ram - 4096;
             r->cmdq_log_depth = 6;
         }},
        {"aeq depth 3", [](vrnic_regs* r, uint64_t) { r->aeq_log_depth = 3; }},
        {"aeq wraps", [](vrnic_regs* r, uint64_t) { r->aeq_base = ~0ull & ~4095ull; }},
        {"tx depth 13",
         [](vrnic_regs* r, uint64_t) {
             r->tx_base = 1 << 20;
             r->tx_log_depth = 13;
         }},
    };
    for (auto& c : cases) {
        FakeDriver drv;
        drv.reset();
        vrnic_regs* r = drv.regs();
        r->cmdq_base = drv.alloc(1 << 16);
        r->cmdq_log_depth = 4;
        r->aeq_base = drv.alloc(1 << 16);
        r->aeq_log_depth = 4;
        c.set(r, FakeDriver::kRamSize);
        store_release(&r->driver_ctrl, uint32_t(VRNIC_DRV_CTRL_DRIVER_OK));
        drv.dev().poll_once();
        EXPECT_EQ(uint32_t(VRNIC_FATAL_BAD_CONFIG), r->fatal_code) << c.what;
    }
}

TEST(DeviceLifecycle, CmdqProducerOutOfRangeIsFatal) {
    FakeDriver drv;
    drv.bring_up(4);
    drv.take_async_events();
    store_release(&drv.regs()->cmdq_pi, drv.regs()->cmdq_ci + 17); // depth is 16
    drv.dev().poll_once();
    EXPECT_TRUE(drv.regs()->device_status & VRNIC_DEV_STATUS_FATAL);
    EXPECT_EQ(uint32_t(VRNIC_FATAL_CMDQ), drv.regs()->fatal_code);
    auto ev = drv.take_async_events();
    ASSERT_EQ(1u, ev.size());
    EXPECT_EQ(VRNIC_EQE_DEVICE_FATAL, ev[0].type);
    EXPECT_EQ(uint32_t(VRNIC_FATAL_CMDQ), ev[0].obj);
    EXPECT_GE(drv.take_irqs(VRNIC_IRQ_ADMIN), 1u);
}

TEST(DeviceLifecycle, ResetForgetsObjectsAndZeroesDoorbells) {
    FakeDriver drv;
    drv.bring_up();
    uint32_t page;
    uint32_t u = drv.alloc_uctx(&page);
    uint32_t pd = drv.create_pd(u);
    ASSERT_NE(0u, pd);
    drv.slot(page, 5)->raw = 0x1234;
    drv.bring_up();
    EXPECT_EQ(0u, drv.slot(page, 5)->raw);
    vrnic_cmd r;
    ASSERT_EQ(0u, drv.cmd(VRNIC_CMD_QUERY_DEVICE, nullptr, 0, &r));
    EXPECT_EQ(0u, r.query_device_resp.num_uctx);
    EXPECT_EQ(0u, r.query_device_resp.num_pd);
    vrnic_cmd_handle h{pd, 0};
    EXPECT_EQ(uint32_t(VRNIC_CMD_STATUS_BAD_HANDLE), drv.cmd(VRNIC_CMD_DESTROY_PD, &h, sizeof(h)));
}

TEST(DeviceLifecycle, HeartbeatAdvancesWithTime) {
    FakeDriver drv;
    uint64_t hb = drv.regs()->heartbeat;
    drv.dev().poll_once();
    EXPECT_EQ(hb, drv.regs()->heartbeat);
    drv.clock() += DeviceState::kHeartbeatPeriodNs;
    drv.dev().poll_once();
    EXPECT_EQ(hb + 1, drv.regs()->heartbeat);
    EXPECT_LE(drv.dev().next_deadline(), drv.clock() + DeviceState::kHeartbeatPeriodNs);
}

TEST(DeviceLifecycle, NeedWakeupIsMirroredInEveryPage) {
    FakeDriver drv;
    drv.bring_up();
    uint32_t page;
    drv.alloc_uctx(&page);
    drv.dev().set_need_wakeup(true);
    EXPECT_EQ(1u, drv.regs()->need_wakeup);
    EXPECT_EQ(uint32_t(VRNIC_DB_STATUS_NEED_WAKEUP), drv.slot(1, 0)->st.status);
    EXPECT_EQ(uint32_t(VRNIC_DB_STATUS_NEED_WAKEUP), drv.slot(page, 0)->st.status);
    // A context allocated while the model sleeps starts with the bit set.
    uint32_t page2;
    const uint32_t u2 = drv.alloc_uctx(&page2);
    EXPECT_EQ(uint32_t(VRNIC_DB_STATUS_NEED_WAKEUP), drv.slot(page2, 0)->st.status);
    drv.dev().set_need_wakeup(false);
    EXPECT_EQ(0u, drv.regs()->need_wakeup);
    EXPECT_EQ(0u, drv.slot(1, 0)->st.status);
    EXPECT_EQ(0u, drv.slot(page, 0)->st.status);
    EXPECT_EQ(0u, drv.slot(page2, 0)->st.status);
    // A freed page is left alone (zero) until a context owns it again.
    vrnic_cmd c{};
    c.hdr.opcode = VRNIC_CMD_DEALLOC_UCTX;
    c.handle.handle = u2;
    ASSERT_EQ(0u, drv.cmd(c));
    drv.dev().set_need_wakeup(true);
    EXPECT_EQ(0u, drv.slot(page2, 0)->st.status);
    EXPECT_EQ(uint32_t(VRNIC_DB_STATUS_NEED_WAKEUP), drv.slot(page, 0)->st.status);
}

TEST(DeviceLifecycle, RescanAfterNeedWakeupFindsWorkPostedMeanwhile) {
    // The producer published before it could see NEED_WAKEUP: the device's
    // rescan (a poll_once after set_need_wakeup) must find it.
    FakeDriver drv;
    drv.bring_up();
    drv.dev().set_need_wakeup(true);
    vrnic_cmd c{};
    c.hdr.opcode = VRNIC_CMD_NOP;
    uint32_t st = drv.cmd(c); // cmd() steps once: that is the rescan
    EXPECT_EQ(0u, st);
}

} // namespace
} // namespace vrnic::test
