// The busy-poll window before sleeping: long while the device thread keeps
// its core, short for a back-off period after a preemption, the period
// doubling while preemptions keep coming.
#include "idle_window.h"

#include <gtest/gtest.h>

namespace vrnic::test {
namespace {

constexpr uint64_t kShort = 2'000, kLong = 50'000;
constexpr uint64_t kMin = IdleWindow::kMinBackoff, kMax = IdleWindow::kMaxBackoff;

struct IdleWindowTest : ::testing::Test {
    long preemptions = 7; // any starting count is the baseline
    IdleWindow w{kShort, kLong, [this] { return preemptions; }};
};

TEST_F(IdleWindowTest, LongWhileNeverPreempted) {
    EXPECT_EQ(kLong, w.ns());
    for (uint64_t t = 1; t < 10; t++) {
        w.update(t * kMax);
        EXPECT_EQ(kLong, w.ns()) << t;
        EXPECT_FALSE(w.contended()) << t;
    }
}

TEST_F(IdleWindowTest, ShortForTheBackoffAfterAPreemption) {
    const uint64_t t0 = 1'000'000'000;
    preemptions++;
    w.update(t0);
    EXPECT_EQ(kShort, w.ns());
    EXPECT_TRUE(w.contended());
    w.update(t0 + kMin - 1);
    EXPECT_EQ(kShort, w.ns());
    w.update(t0 + kMin);
    EXPECT_EQ(kLong, w.ns());
    EXPECT_FALSE(w.contended());
}

TEST_F(IdleWindowTest, BackoffDoublesWhilePreemptionsKeepComingUpToItsCap) {
    uint64_t t = 1'000'000'000, expect = kMin;
    preemptions++;
    w.update(t);
    for (int i = 0; i < 10; i++) {
        // Preempted again within the previous period plus one back-off.
        t += expect + IdleWindow::kCheckNs;
        preemptions++;
        w.update(t);
        expect = std::min(expect * 2, kMax);
        w.update(t + expect - 1);
        EXPECT_EQ(kShort, w.ns()) << i;
        w.update(t + expect);
        EXPECT_EQ(kLong, w.ns()) << i;
    }
    EXPECT_EQ(kMax, expect);
    // A preemption long after the last period starts over at the minimum.
    t += 10 * kMax;
    preemptions++;
    w.update(t);
    w.update(t + kMin);
    EXPECT_EQ(kLong, w.ns());
}

TEST_F(IdleWindowTest, CountsAtMostOncePerCheckPeriod) {
    int calls = 0;
    IdleWindow w2(kShort, kLong, [&] {
        calls++;
        return preemptions;
    });
    const uint64_t t0 = 1'000'000'000, check = IdleWindow::kCheckNs;
    w2.update(t0);
    preemptions++;
    w2.update(t0 + check - 1); // not looked at yet
    EXPECT_EQ(kLong, w2.ns());
    EXPECT_EQ(2, calls);   // the baseline and t0
    w2.update(t0 + check); // noticed at the next check
    EXPECT_EQ(kShort, w2.ns());
    EXPECT_EQ(3, calls);
}

TEST(IdleWindow, EqualWindowsStillTellContention) {
    long preemptions = 0;
    IdleWindow w(kShort, kShort, [&] { return preemptions; });
    const uint64_t t0 = 1'000'000'000;
    w.update(t0);
    EXPECT_FALSE(w.contended());
    preemptions++;
    w.update(t0 + IdleWindow::kCheckNs);
    EXPECT_EQ(kShort, w.ns());
    EXPECT_TRUE(w.contended());
}

TEST(IdleWindow, ThreadPreemptionsIsTheThreadsCount) {
    const long a = IdleWindow::thread_preemptions();
    EXPECT_LE(0, a);
    EXPECT_LE(a, IdleWindow::thread_preemptions());
}

} // namespace
} // namespace vrnic::test
