// The one bounds-checked accessor for guest addresses, at its edges.
#include "guest_memory.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

using vrnic::GuestMemory;
using vrnic::UniqueFd;

namespace {

constexpr uint64_t kSize = 1 << 20;

std::unique_ptr<GuestMemory> make(uint64_t file_size, uint64_t map_size, std::string* err) {
    UniqueFd fd(memfd_create("gm-test", MFD_CLOEXEC));
    EXPECT_TRUE(fd.valid());
    EXPECT_EQ(0, ftruncate(fd.get(), static_cast<off_t>(file_size)));
    return GuestMemory::map_fd(fd.get(), map_size, err);
}

TEST(GuestMemory, InsideRangeIsMapped) {
    std::string err;
    auto gm = make(kSize, kSize, &err);
    ASSERT_TRUE(gm) << err;
    EXPECT_EQ(kSize, gm->size());
    uint8_t* p0 = gm->at(0, 1);
    ASSERT_NE(nullptr, p0);
    EXPECT_EQ(p0 + 100, gm->at(100, 8));
    EXPECT_EQ(p0, gm->at(0, kSize));                 // the whole RAM
    EXPECT_EQ(p0 + kSize - 1, gm->at(kSize - 1, 1)); // last byte
    EXPECT_EQ(p0 + kSize - 8, gm->at(kSize - 8, 8));
}

TEST(GuestMemory, RejectsEdges) {
    std::string err;
    auto gm = make(kSize, kSize, &err);
    ASSERT_TRUE(gm) << err;
    EXPECT_EQ(nullptr, gm->at(0, 0));                   // len 0
    EXPECT_EQ(nullptr, gm->at(kSize, 0));               // len 0 at the end
    EXPECT_EQ(nullptr, gm->at(kSize, 1));               // first byte past the end
    EXPECT_EQ(nullptr, gm->at(kSize - 1, 2));           // straddles the end
    EXPECT_EQ(nullptr, gm->at(0, kSize + 1));           // longer than RAM
    EXPECT_EQ(nullptr, gm->at(~0ull, 1));               // top of the address space
    EXPECT_EQ(nullptr, gm->at(8, ~0ull));               // addr + len wraps to 7
    EXPECT_EQ(nullptr, gm->at(~0ull - 3, 8));           // wraps to 4
    EXPECT_EQ(nullptr, gm->at(1ull << 63, 1ull << 63)); // wraps to exactly 0
}

TEST(GuestMemory, ReadWriteRoundTripAndRefusal) {
    std::string err;
    auto gm = make(kSize, kSize, &err);
    ASSERT_TRUE(gm) << err;
    const char msg[] = "hello guest";
    ASSERT_TRUE(gm->write(4096, msg, sizeof(msg)));
    char back[sizeof(msg)] = {};
    ASSERT_TRUE(gm->read(4096, back, sizeof(back)));
    EXPECT_STREQ(msg, back);
    char sentinel[4] = {'x', 'x', 'x', 'x'};
    EXPECT_FALSE(gm->read(kSize - 2, sentinel, 4));
    EXPECT_EQ('x', sentinel[0]); // nothing copied on refusal
    EXPECT_FALSE(gm->write(kSize - 2, msg, 4));
}

TEST(GuestMemoryDeathTest, GuardPagesAroundRam) {
    std::string err;
    auto gm = make(kSize, kSize, &err);
    ASSERT_TRUE(gm) << err;
    volatile uint8_t* last = gm->at(kSize - 1, 1);
    volatile uint8_t* first = gm->at(0, 1);
    EXPECT_DEATH(last[1] = 1, "");
    EXPECT_DEATH(first[-1] = 1, "");
}

TEST(GuestMemory, FileSmallerThanSizeIsRefused) {
    std::string err;
    EXPECT_EQ(nullptr, make(kSize / 2, kSize, &err));
    EXPECT_NE(std::string::npos, err.find("smaller"));
}

TEST(GuestMemory, ZeroAndHugeSizesRefused) {
    std::string err;
    EXPECT_EQ(nullptr, make(kSize, 0, &err));
    EXPECT_EQ(nullptr, make(kSize, 4ull << 30, &err));
    EXPECT_NE(std::string::npos, err.find("too large"));
}

TEST(GuestMemory, OpenFileReportsPath) {
    std::string err;
    EXPECT_EQ(nullptr, GuestMemory::open_file("/nonexistent/vrnic-ram", kSize, &err));
    EXPECT_NE(std::string::npos, err.find("/nonexistent/vrnic-ram"));
}

} // namespace
