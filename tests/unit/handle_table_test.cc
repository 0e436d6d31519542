#include "handle_table.h"

#include <gtest/gtest.h>

namespace vrnic {
namespace {

TEST(HandleTable, HandlesAreNonZeroAndStaleOnesFail) {
    HandleTable<int> t(2);
    uint32_t a = t.insert(std::make_unique<int>(1));
    uint32_t b = t.insert(std::make_unique<int>(2));
    EXPECT_NE(0u, a);
    EXPECT_NE(0u, b);
    EXPECT_NE(a, b);
    auto c = std::make_unique<int>(3);
    EXPECT_EQ(0u, t.insert(std::move(c)));
    ASSERT_TRUE(c); // a full table leaves the object with the caller
    EXPECT_EQ(1, *t.find(a));
    EXPECT_TRUE(t.remove(a));
    EXPECT_EQ(nullptr, t.find(a));
    uint32_t a2 = t.insert(std::move(c));
    EXPECT_EQ(a >> 8, a2 >> 8); // same slot...
    EXPECT_NE(a, a2);           // ...new generation
    EXPECT_EQ(nullptr, t.find(a));
    EXPECT_EQ(nullptr, t.find(0));
    EXPECT_EQ(nullptr, t.find(3u << 8 | 1)); // past capacity
    EXPECT_EQ(2u, t.count());
}

TEST(HandleTable, GenerationWrapsWithoutZero) {
    HandleTable<int> t(1);
    uint32_t prev = 0;
    for (int i = 0; i < 600; i++) {
        uint32_t h = t.insert(std::make_unique<int>(i));
        ASSERT_NE(0u, h & 0xff);
        ASSERT_NE(prev, h);
        prev = h;
        t.remove(h);
    }
}

} // namespace
} // namespace vrnic
