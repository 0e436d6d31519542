// The device clock (device-interface.md 12.1, 10.x QUERY_CLOCK): every CQE
// carries a CLOCK_REALTIME stamp, and QUERY_CLOCK reads the same clock.
#include "rc_fixture.h"

#include <ctime>

namespace vrnic::test {
namespace {

uint64_t realtime_now() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

using Clock_ = RcPair;

uint64_t query_clock(FakeDriver& drv) {
    vrnic_cmd r{};
    EXPECT_EQ(VRNIC_CMD_STATUS_OK, drv.cmd(VRNIC_CMD_QUERY_CLOCK, nullptr, 0, &r));
    return r.query_clock_resp.now_ns;
}

TEST_F(Clock_, CqeTimestampLiesBetweenTwoClockReads) {
    uint64_t src_gpa;
    MrInfo src = buffer(4096, VRNIC_ACCESS_LOCAL_WRITE, 0x5a, &src_gpa);
    MrInfo dst = buffer(4096, VRNIC_ACCESS_LOCAL_WRITE | VRNIC_ACCESS_REMOTE_WRITE);
    const uint64_t before = realtime_now();
    SendWr wr;
    wr.wr_id = 1;
    wr.opcode = VRNIC_WR_RDMA_WRITE;
    wr.remote_addr = dst.iova;
    wr.rkey = dst.rkey;
    wr.sge = {sge(src, 0, 64)};
    drv.post_send(a, wr);
    auto c = step(a_cq);
    const uint64_t after = realtime_now();
    ASSERT_EQ(1u, c.size());
    EXPECT_EQ(VRNIC_WC_SUCCESS, c[0].status);
    EXPECT_GE(c[0].timestamp, before);
    EXPECT_LE(c[0].timestamp, after);
}

TEST_F(Clock_, EveryCqeIsStampedWithTheDeviceClock) {
    uint64_t fake = 1'000'000;
    drv.dev().state().wall = [&] { return fake += 7; };
    MrInfo src = buffer(4096, VRNIC_ACCESS_LOCAL_WRITE, 0x11);
    MrInfo rcv = buffer(4096, VRNIC_ACCESS_LOCAL_WRITE);
    drv.post_recv(b, 9, {sge(rcv, 0, 4096)});
    SendWr wr;
    wr.wr_id = 2;
    wr.opcode = VRNIC_WR_SEND;
    wr.sge = {sge(src, 0, 32)};
    drv.post_send(a, wr);
    drv.run();
    auto sc = drv.poll_cq(a_cq);
    auto rc = drv.poll_cq(b_cq);
    ASSERT_EQ(1u, sc.size());
    ASSERT_EQ(1u, rc.size());
    // Both completions were stamped, each with a distinct read of the clock.
    EXPECT_GT(sc[0].timestamp, 1'000'000u);
    EXPECT_GT(rc[0].timestamp, 1'000'000u);
    EXPECT_LE(sc[0].timestamp, fake);
    EXPECT_LE(rc[0].timestamp, fake);
    EXPECT_NE(sc[0].timestamp, rc[0].timestamp);
}

TEST_F(Clock_, QueryClockReadsRealtimeAndIncreases) {
    const uint64_t before = realtime_now();
    const uint64_t t1 = query_clock(drv);
    const uint64_t t2 = query_clock(drv);
    const uint64_t after = realtime_now();
    EXPECT_GE(t1, before);
    EXPECT_GT(t2, t1);
    EXPECT_LE(t2, after);
}

TEST_F(Clock_, QueryClockTakesNoPayload) {
    vrnic_cmd c{};
    c.hdr.opcode = VRNIC_CMD_QUERY_CLOCK;
    c.payload[0] = 1;
    EXPECT_EQ(VRNIC_CMD_STATUS_BAD_PARAM, drv.cmd(c));
}

} // namespace
} // namespace vrnic::test
