// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The device-wide budget of MR page-list entries (device-interface.md 10.8):
// twice the guest's 4 KiB pages for all lists together, so that registering
// the same large list again and again cannot make the model allocate a
// multiple of the guest's RAM.
#include "fake_driver.h"

#include <cstdio>
#include <unistd.h>

namespace vrnic::test {
namespace {

constexpr uint64_t kRamPages = FakeDriver::kRamSize / VRNIC_PAGE_SIZE; // 16384
constexpr uint64_t kBudget = 2 * kRamPages;

uint64_t rss_bytes() {
    FILE* f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%lu %lu", &size, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return uint64_t(resident) * uint64_t(sysconf(_SC_PAGESIZE));
}

class MrBudget : public ::testing::Test {
  protected:
    void SetUp() override {
        drv.bring_up();
        pd = drv.create_pd(0);
        page = drv.alloc(VRNIC_PAGE_SIZE);
        // One two-level list of `kRamPages` entries, all the same page, that
        // every registration below reuses.
        const uint64_t leaves = kRamPages / VRNIC_PBL_ENTRIES_PER_PAGE;
        root = drv.alloc(leaves * 8);
        const uint64_t leaf = drv.alloc(VRNIC_PAGE_SIZE);
        for (uint64_t i = 0; i < VRNIC_PBL_ENTRIES_PER_PAGE; i++)
            memcpy(drv.host(leaf + i * 8, 8), &page, 8);
        for (uint64_t k = 0; k < leaves; k++)
            memcpy(drv.host(root + k * 8, 8), &leaf, 8);
    }
    // REG_MR of `npages` entries of that list; the status, *key on success.
    uint32_t reg(uint64_t npages, uint32_t* key = nullptr) {
        vrnic_cmd_reg_mr m{};
        m.pd = pd;
        m.access = VRNIC_ACCESS_LOCAL_WRITE;
        m.iova = 1ull << 40;
        m.length = npages * VRNIC_PAGE_SIZE;
        m.page_shift = 12;
        m.npages = static_cast<uint32_t>(npages);
        m.pbl_level = VRNIC_PBL_INDIRECT;
        m.pbl_addr = root;
        vrnic_cmd r;
        uint32_t st = drv.cmd(VRNIC_CMD_REG_MR, &m, sizeof(m), &r);
        if (key && st == 0)
            *key = r.reg_mr_resp.mr;
        return st;
    }
    uint32_t dereg(uint32_t key) {
        vrnic_cmd_handle h{key, 0};
        return drv.cmd(VRNIC_CMD_DEREG_MR, &h, sizeof(h));
    }
    // Host bytes the model holds in page lists.
    uint64_t list_bytes() {
        uint64_t n = 0;
        drv.dev().state().obj->mrs.for_each(
            [&](uint32_t, const Mr& m) { n += m.pages.capacity() * sizeof(uint64_t); });
        return n;
    }

    FakeDriver drv;
    uint32_t pd = 0;
    uint64_t page = 0, root = 0;
};

TEST_F(MrBudget, RegistrationsFailAtTheBudget) {
    uint32_t k1 = 0, k2 = 0, k = 0;
    ASSERT_EQ(0u, reg(kRamPages, &k1));
    ASSERT_EQ(0u, reg(kRamPages - 1, &k2));
    EXPECT_EQ(uint32_t(VRNIC_CMD_STATUS_NO_RESOURCE), reg(2)); // one entry left
    ASSERT_EQ(0u, reg(1, &k));                                 // exactly at the budget
    EXPECT_EQ(uint32_t(VRNIC_CMD_STATUS_NO_RESOURCE), reg(1));
    // A physical MR has no list: it costs nothing.
    vrnic_cmd_reg_mr phys{};
    phys.pd = pd;
    phys.access = VRNIC_ACCESS_LOCAL_WRITE;
    phys.flags = VRNIC_MR_F_PHYS;
    EXPECT_EQ(0u, drv.cmd(VRNIC_CMD_REG_MR, &phys, sizeof(phys)));
    // DEREG_MR gives the entries back.
    ASSERT_EQ(0u, dereg(k1));
    EXPECT_EQ(0u, reg(kRamPages, &k1));
    EXPECT_EQ(uint32_t(VRNIC_CMD_STATUS_NO_RESOURCE), reg(1));
    // A failed registration takes nothing: a bad list after the check.
    ASSERT_EQ(0u, dereg(k));
    uint64_t bad = drv.alloc(VRNIC_PAGE_SIZE);
    uint64_t outside = FakeDriver::kRamSize;
    memcpy(drv.host(bad, 8), &outside, 8);
    vrnic_cmd_reg_mr m{};
    m.pd = pd;
    m.access = VRNIC_ACCESS_LOCAL_WRITE;
    m.iova = 0x1000;
    m.length = VRNIC_PAGE_SIZE;
    m.page_shift = 12;
    m.npages = 1;
    m.pbl_level = VRNIC_PBL_DIRECT;
    m.pbl_addr = bad;
    EXPECT_EQ(uint32_t(VRNIC_CMD_STATUS_BAD_ADDR), drv.cmd(VRNIC_CMD_REG_MR, &m, sizeof(m)));
    EXPECT_EQ(0u, reg(1));
    // A reset forgets every MR and their charges.
    drv.bring_up(); // resets first
    pd = drv.create_pd(0);
    EXPECT_EQ(0u, reg(kRamPages));
    EXPECT_EQ(0u, reg(kRamPages));
    EXPECT_EQ(uint32_t(VRNIC_CMD_STATUS_NO_RESOURCE), reg(1));
}

// The measurement, scaled to this guest: 1024 registrations of a list
// as long as guest RAM. Without the budget each succeeds and the model holds
// 1024 * 128 KiB = 128 MiB of lists; with it two succeed.
TEST_F(MrBudget, ThousandLargeListsStayWithinTheBound) {
    const uint64_t rss0 = rss_bytes();
    unsigned ok = 0;
    for (int i = 0; i < 1024; i++)
        ok += reg(kRamPages) == 0;
    const uint64_t rss1 = rss_bytes();
    const uint64_t held = list_bytes();
    printf("registrations %u, page lists %llu KiB, RSS growth %llu KiB\n", ok,
           (unsigned long long)(held >> 10),
           (unsigned long long)((rss1 > rss0 ? rss1 - rss0 : 0) >> 10));
    EXPECT_EQ(2u, ok);
    // The bound: the budget's entries, 8 bytes each (guest RAM / 256).
    EXPECT_LE(held, kBudget * sizeof(uint64_t));
    EXPECT_LT(rss1 - std::min(rss0, rss1), 8ull << 20);
}

} // namespace
} // namespace vrnic::test
