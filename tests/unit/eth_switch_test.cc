// The fabric's Ethernet switch (qemu/eth_switch.h) on its own: learning,
// flooding, the source MAC check and the MTU, each frame checked in the
// inboxes it reached.
#include "switch_frames.h"

#include <gtest/gtest.h>
#include <vector>

namespace vrnic::test {
namespace {

constexpr Mac kMac[3] = {{0x52, 0x54, 0x00, 0x56, 0x52, 0x01},
                         {0x52, 0x54, 0x00, 0x56, 0x52, 0x02},
                         {0x52, 0x54, 0x00, 0x56, 0x52, 0x03}};
constexpr Mac kBroadcast = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
constexpr Mac kIpv6AllNodes = {0x33, 0x33, 0x00, 0x00, 0x00, 0x01};

class Switch : public ::testing::Test {
  protected:
    void SetUp() override {
        for (const Mac& m : kMac)
            sw.inbox(sw.add_port(m)).open();
    }
    static Frame frame(const Mac& dst, const Mac& src, uint32_t len, uint8_t seq) {
        return eth_frame(dst, src, len, seq);
    }
    bool send(uint32_t from, const std::vector<uint8_t>& f) {
        return sw.forward(from, f.data(), static_cast<uint32_t>(f.size()));
    }
    Frames taken(uint32_t p) { return take_frames(sw, p); }
    EthSwitch sw{1500};
};

TEST_F(Switch, UnknownUnicastFloodsThenTheLearnedPortAloneGetsIt) {
    const auto first = frame(kMac[1], kMac[0], 60, 1);
    ASSERT_TRUE(send(0, first)); // port 1 has not sent yet: flooded
    EXPECT_EQ(Frames{first}, taken(1));
    EXPECT_EQ(Frames{first}, taken(2));
    EXPECT_TRUE(taken(0).empty());
    EXPECT_EQ(1u, sw.counters().flooded);

    const auto reply = frame(kMac[0], kMac[1], 100, 2);
    ASSERT_TRUE(send(1, reply)); // port 0 was learned from its frame
    EXPECT_EQ(Frames{reply}, taken(0));
    EXPECT_TRUE(taken(2).empty());

    const auto second = frame(kMac[1], kMac[0], 1514, 3);
    ASSERT_TRUE(send(0, second)); // now port 1 is known too
    EXPECT_EQ(Frames{second}, taken(1));
    EXPECT_TRUE(taken(2).empty());
    EXPECT_EQ(2u, sw.counters().forwarded);
    EXPECT_EQ(1u, sw.counters().flooded);
}

TEST_F(Switch, BroadcastAndMulticastReachEveryOtherPort) {
    // Learned or not, group addresses are flooded.
    ASSERT_TRUE(send(2, frame(kMac[0], kMac[2], 60, 0)));
    taken(0);
    taken(1);
    for (const Mac& group : {kBroadcast, kIpv6AllNodes}) {
        const auto f = frame(group, kMac[0], 90, 4);
        ASSERT_TRUE(send(0, f));
        EXPECT_TRUE(taken(0).empty());
        EXPECT_EQ(Frames{f}, taken(1));
        EXPECT_EQ(Frames{f}, taken(2));
    }
}

TEST_F(Switch, AForeignSourceMacIsDroppedAndNotLearned) {
    // Port 2 poses as port 1: nothing is delivered, and port 1's MAC is not
    // learned on port 2.
    ASSERT_FALSE(send(2, frame(kMac[0], kMac[1], 60, 5)));
    ASSERT_FALSE(send(2, frame(kBroadcast, kMac[1], 60, 5)));
    for (uint32_t p = 0; p < 3; p++)
        EXPECT_TRUE(taken(p).empty()) << p;
    EXPECT_EQ(2u, sw.counters().spoofed);
    const auto f = frame(kMac[1], kMac[0], 60, 6);
    ASSERT_TRUE(send(0, f));
    EXPECT_EQ(Frames{f}, taken(1));
    EXPECT_EQ(Frames{f}, taken(2)); // still unknown: flooded, not stolen
    EXPECT_EQ(0u, sw.counters().forwarded);
}

TEST_F(Switch, FramesOverTheMtuOrShorterThanAHeaderAreDropped) {
    ASSERT_TRUE(send(0, frame(kBroadcast, kMac[0], 1500 + 18, 7))); // MTU + VLAN header
    EXPECT_EQ(1u, taken(1).size());
    EXPECT_FALSE(send(0, frame(kBroadcast, kMac[0], 1500 + 19, 7)));
    std::vector<uint8_t> runt(13, 0xff);
    EXPECT_FALSE(send(0, runt));
    EXPECT_TRUE(taken(1).empty());
    EXPECT_EQ(2u, sw.counters().bad_len);
}

TEST_F(Switch, APortThatLeftIsForgottenAndGetsNothing) {
    ASSERT_TRUE(send(1, frame(kMac[0], kMac[1], 60, 8)));
    taken(0);
    taken(2);
    sw.inbox(1).close();
    sw.port_down(1);
    // Unknown again: flooded; port 1's closed inbox refuses it.
    ASSERT_TRUE(send(0, frame(kMac[1], kMac[0], 60, 9)));
    EXPECT_TRUE(taken(1).empty());
    EXPECT_EQ(1u, taken(2).size());
    EXPECT_EQ(1u, sw.inbox(1).dropped());
    EXPECT_EQ(2u, sw.counters().flooded); // port 0 was unknown for the first, too
}

TEST_F(Switch, AFullInboxDropsTheNewestFrames) {
    for (uint32_t i = 0; i < FrameInbox::kDepth + 5; i++)
        ASSERT_TRUE(send(0, frame(kMac[1], kMac[0], 60, uint8_t(i))));
    const auto got = taken(1);
    ASSERT_EQ(FrameInbox::kDepth, got.size());
    for (uint32_t i = 0; i < got.size(); i++)
        EXPECT_EQ(frame(kMac[1], kMac[0], 60, uint8_t(i)), got[i]) << i;
    EXPECT_EQ(5u, sw.inbox(1).dropped());
}

} // namespace
} // namespace vrnic::test
