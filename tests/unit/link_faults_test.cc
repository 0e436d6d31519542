// A lossy link for tests (qemu/link_faults.h): the rates it is given, the
// order it keeps, and the same faults from the same seed.
#include "link_faults.h"

#include <gtest/gtest.h>
#include <set>
#include <vector>

namespace vrnic::test {
namespace {

using Seq = std::vector<uint32_t>;

// Passes frames 0..n-1 (each a 4-byte number) in bursts of `burst`.
Seq run(LinkFaults& l, uint32_t n, uint32_t burst = 8) {
    Seq got;
    const LinkFaults::Emit emit = [&](const uint8_t* f, uint32_t len) {
        ASSERT_EQ(4u, len);
        uint32_t v;
        memcpy(&v, f, 4);
        got.push_back(v);
    };
    for (uint32_t i = 0; i < n; i++) {
        l.pass(reinterpret_cast<const uint8_t*>(&i), 4, emit);
        if (i % burst == burst - 1)
            l.release(emit);
    }
    l.release(emit);
    return got;
}

TEST(LinkFaults, ParseNamesTheProblem) {
    LinkFaultRates r;
    std::string err;
    ASSERT_TRUE(parse_link_faults("reorder=5,drop=3,seed=7,dup=2", &r, &err)) << err;
    EXPECT_EQ(3u, r.drop);
    EXPECT_EQ(2u, r.dup);
    EXPECT_EQ(5u, r.reorder);
    EXPECT_EQ(7u, r.seed);
    const std::pair<const char*, const char*> bad[] = {
        {"", "NAME=NUMBER"},         {"drop", "NAME=NUMBER"},    {"drop=x", "NAME=NUMBER"},
        {"drop=-1", "NAME=NUMBER"},  {"drop=3,", "NAME=NUMBER"}, {"drop=51", "at most 50"},
        {"loss=3", "unknown fault"},
    };
    for (const auto& [spec, needle] : bad) {
        EXPECT_FALSE(parse_link_faults(spec, &r, &err)) << spec;
        EXPECT_NE(std::string::npos, err.find(needle)) << spec << ": " << err;
    }
}

TEST(LinkFaults, NoneKeepsEveryFrameInOrder) {
    LinkFaults l({}, 0);
    Seq want(1000);
    for (uint32_t i = 0; i < want.size(); i++)
        want[i] = i;
    EXPECT_EQ(want, run(l, 1000));
    EXPECT_EQ(0u, l.counters().dropped + l.counters().duplicated + l.counters().reordered);
}

TEST(LinkFaults, RatesAreKeptAndCounted) {
    constexpr uint32_t kN = 20000;
    LinkFaults l({.drop = 10, .dup = 10, .reorder = 10, .seed = 1}, 0);
    const Seq got = run(l, kN);
    const LinkFaultCounters c = l.counters();
    EXPECT_EQ(kN - c.dropped + c.duplicated, got.size());
    // 10 % of 20000 is 2000; the generator's draws stay well within 1500..2500.
    for (uint64_t n : {c.dropped, c.duplicated, c.reordered}) {
        EXPECT_LT(1500u, n);
        EXPECT_GT(2500u, n);
    }
    // Every frame arrives once or twice or not at all, none is invented, and
    // none leaves its burst.
    std::multiset<uint32_t> seen(got.begin(), got.end());
    for (uint32_t i = 0; i < kN; i++)
        EXPECT_GE(2u, seen.count(i));
    EXPECT_EQ(0u, seen.count(kN));
    size_t late = 0;
    for (size_t i = 1; i < got.size(); i++) {
        EXPECT_EQ(got[i] / 8 >= got[i - 1] / 8, true) << "frame " << got[i] << " left its burst";
        late += got[i] < got[i - 1];
    }
    // A frame held back arrives after a later one, unless no later one of
    // its burst got through: then the burst's end lets it go in order.
    EXPECT_GE(c.reordered, late);
    EXPECT_LT(c.reordered * 3 / 4, late);
}

TEST(LinkFaults, SameSeedSameFaultsOtherStreamOthers) {
    const LinkFaultRates r{.drop = 20, .dup = 20, .reorder = 20, .seed = 9};
    LinkFaults a(r, 0), b(r, 0), c(r, 1);
    const Seq sa = run(a, 500);
    EXPECT_EQ(sa, run(b, 500));
    EXPECT_NE(sa, run(c, 500));
}

} // namespace
} // namespace vrnic::test
