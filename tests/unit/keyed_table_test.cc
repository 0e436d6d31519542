// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The table behind QPNs and memory keys: a keyed bijection, stale handles
// that fail, and a handle that stays unused long after its object is gone.
#include "keyed_table.h"

#include <gtest/gtest.h>

#include <unordered_set>

namespace vrnic {
namespace {

TEST(Permutation24, IsABijectionAndDependsOnTheSeed) {
    KeyGen g1(1), g2(2);
    Permutation24 p1(g1), p2(g2);
    std::vector<bool> hit(Permutation24::kMask + 1);
    unsigned same = 0;
    for (uint32_t x = 0; x <= Permutation24::kMask; x++) {
        const uint32_t y = p1.forward(x);
        ASSERT_LE(y, Permutation24::kMask);
        ASSERT_FALSE(hit[y]) << x;
        hit[y] = true;
        if (x % 64 == 0) {
            ASSERT_EQ(x, p1.inverse(y));
            same += y == p2.forward(x);
        }
    }
    EXPECT_LT(same, 16u);
}

TEST(KeyedTable, FullTableStaleAndReservedHandles) {
    KeyGen g(7);
    KeyedTable<int> t(2, KeyedLayout::qpns(16), g);
    const uint32_t a = t.insert(std::make_unique<int>(1));
    const uint32_t b = t.insert(std::make_unique<int>(2));
    EXPECT_NE(a, b);
    auto c = std::make_unique<int>(3);
    EXPECT_EQ(0u, t.insert(std::move(c)));
    ASSERT_TRUE(c); // a full table leaves the object with the caller
    EXPECT_EQ(1, *t.find(a));
    EXPECT_TRUE(t.remove(a));
    EXPECT_EQ(nullptr, t.find(a));
    EXPECT_FALSE(t.remove(a));
    const uint32_t a2 = t.insert(std::move(c));
    EXPECT_NE(a, a2);
    EXPECT_EQ(3, *t.find(a2));
    for (uint32_t h : {0u, 1u, VRNIC_QPN_MASK, VRNIC_QPN_MASK + 1, a2 | 1u << 24})
        EXPECT_EQ(nullptr, t.find(h)) << h;
    EXPECT_EQ(2u, t.count());
}

TEST(KeyedTable, KeysKeepTheirKeyByteAndAreNeverZero) {
    KeyGen g(9);
    KeyedTable<int> t(64, KeyedLayout::mr_keys(64), g);
    for (int i = 0; i < 10000; i++) {
        const uint32_t k = t.insert(std::make_unique<int>(i));
        ASSERT_NE(0u, k);
        ASSERT_EQ(i, *t.find(k));
        // Another key byte is another key.
        ASSERT_EQ(nullptr, t.find(k ^ 1));
        ASSERT_EQ(nullptr, t.find(k ^ 0x100));
        t.remove(k);
    }
}

// However the guest churns, a handle does not come back within the
// quarantine times the generations of a slot.
TEST(KeyedTable, NoHandleComesBackWithinTheReuseDistance) {
    KeyGen g(11);
    KeyedTable<int> t(16384, KeyedLayout::qpns(65536), g);
    ASSERT_GE(t.reuse_distance(), 65536ull * 100);
    // Fill all but one slot, then churn the last one.
    std::vector<uint32_t> live;
    while (t.count() + 1 < t.capacity())
        live.push_back(t.insert(std::make_unique<int>(0)));
    std::unordered_set<uint32_t> seen(live.begin(), live.end());
    for (int i = 0; i < 200000; i++) {
        const uint32_t h = t.insert(std::make_unique<int>(i));
        ASSERT_TRUE(seen.insert(h).second) << "handle repeated after " << i << " allocations";
        t.remove(h);
    }
}

} // namespace
} // namespace vrnic
