// The fabric's uplink (qemu/uplink.h): the switch's rules for a port of
// foreign stations, then the stream protocol on a real UNIX socket, driven
// as QEMU's stream netdev drives it, with the bytes checked both ways.
#include "switch_frames.h"
#include "uplink.h"

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <chrono>
#include <cstring>
#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <tuple>
#include <unistd.h>
#include <vector>

namespace vrnic::test {
namespace {

constexpr Mac kVm[2] = {{0x52, 0x54, 0x00, 0x56, 0x52, 0x01}, {0x52, 0x54, 0x00, 0x56, 0x52, 0x02}};
constexpr Mac kStation = {0x52, 0x54, 0x00, 0x77, 0x00, 0x09};
constexpr Mac kBroadcast = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

Frame frame(const Mac& dst, const Mac& src, uint32_t len, uint8_t seq) {
    return eth_frame(dst, src, len, seq);
}

Frames taken(EthSwitch& sw, uint32_t p) {
    return take_frames(sw, p);
}

class UplinkSwitch : public ::testing::Test {
  protected:
    void SetUp() override {
        for (const Mac& m : kVm)
            sw.inbox(sw.add_port(m)).open();
        up = sw.add_uplink();
        sw.inbox(up).open();
    }
    bool send(uint32_t from, const Frame& f) {
        return sw.forward(from, f.data(), static_cast<uint32_t>(f.size()));
    }
    EthSwitch sw{1500};
    uint32_t up = 0;
};

TEST_F(UplinkSwitch, StationsBeyondItReachVmsAndAreLearned) {
    ASSERT_TRUE(send(1, frame(kBroadcast, kVm[1], 60, 0))); // VM 1 learned
    EXPECT_EQ(1u, taken(sw, up).size());
    taken(sw, 0);
    const Frame in = frame(kVm[1], kStation, 98, 1);
    ASSERT_TRUE(send(up, in));
    std::vector<uint32_t> from; // the inbox says where each frame came from
    Frames got;
    sw.inbox(1).drain([&](const uint8_t* f, uint32_t n, uint32_t port) {
        got.emplace_back(f, f + n);
        from.push_back(port);
    });
    EXPECT_EQ(Frames{in}, got);
    EXPECT_EQ(std::vector<uint32_t>{up}, from);
    EXPECT_TRUE(sw.is_uplink(up));
    EXPECT_FALSE(sw.is_uplink(1));
    EXPECT_TRUE(taken(sw, 0).empty());

    const Frame out = frame(kStation, kVm[0], 98, 2); // learned: the uplink alone
    ASSERT_TRUE(send(0, out));
    EXPECT_EQ(Frames{out}, taken(sw, up));
    EXPECT_TRUE(taken(sw, 1).empty());

    const Frame bcast = frame(kBroadcast, kVm[0], 60, 3); // flooded to it too
    ASSERT_TRUE(send(0, bcast));
    EXPECT_EQ(Frames{bcast}, taken(sw, up));
    EXPECT_EQ(Frames{bcast}, taken(sw, 1));
}

TEST_F(UplinkSwitch, AVmsMacOrAGroupAddressAsSourceIsDropped) {
    const Mac group = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
    for (const Mac& src : {kVm[0], kVm[1], group, Mac{}})
        EXPECT_FALSE(send(up, frame(kVm[1], src, 60, 4)));
    EXPECT_EQ(4u, sw.counters().spoofed);
    EXPECT_TRUE(taken(sw, 0).empty());
    EXPECT_TRUE(taken(sw, 1).empty());
    // Nothing was learned on the uplink: VM 0 still reaches VM 1 alone.
    ASSERT_TRUE(send(1, frame(kVm[0], kVm[1], 60, 5))); // VM 1 learned
    ASSERT_TRUE(send(0, frame(kVm[1], kVm[0], 60, 6)));
    EXPECT_EQ(1u, taken(sw, 1).size());
    EXPECT_EQ(1u, sw.counters().forwarded);
}

TEST_F(UplinkSwitch, LearningIsBoundedAndForgottenWhenThePeerGoes) {
    auto station = [](uint32_t i) {
        return Mac{0x02, 0x00, 0x00, 0x00, static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i)};
    };
    const uint32_t n = EthSwitch::kMaxUplinkStations + 8;
    ASSERT_TRUE(send(0, frame(kBroadcast, kVm[0], 60, 6))); // VM 0 learned
    taken(sw, 1);
    taken(sw, up);
    for (uint32_t i = 0; i < n; i++)
        ASSERT_TRUE(send(up, frame(kVm[0], station(i), 60, 7)));
    taken(sw, 0);
    const auto before = sw.counters();
    ASSERT_TRUE(send(0, frame(station(0), kVm[0], 60, 8)));     // learned
    ASSERT_TRUE(send(0, frame(station(n - 1), kVm[0], 60, 9))); // past the bound
    EXPECT_EQ(before.forwarded + 1, sw.counters().forwarded);
    EXPECT_EQ(before.flooded + 1, sw.counters().flooded);
    EXPECT_EQ(1u, taken(sw, 1).size()); // the flooded one

    sw.port_down(up);
    taken(sw, up);
    ASSERT_TRUE(send(0, frame(station(0), kVm[0], 60, 10)));
    EXPECT_EQ(before.flooded + 2, sw.counters().flooded);
}

// A peer on the uplink's socket, as QEMU's stream netdev is.
class Peer {
  public:
    explicit Peer(const std::string& path) : fd_(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        strncpy(a.sun_path, path.c_str(), sizeof(a.sun_path) - 1);
        ok_ = connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
    }
    ~Peer() { close(fd_); }
    bool ok() const { return ok_; }
    void write_bytes(const uint8_t* p, size_t n) {
        while (n) {
            // A model that closed the connection is an error, not SIGPIPE.
            ssize_t w = ::send(fd_, p, n, MSG_NOSIGNAL);
            ASSERT_GT(w, 0);
            p += w;
            n -= static_cast<size_t>(w);
        }
    }
    void send_frame(const Frame& f) {
        send_len(static_cast<uint32_t>(f.size()));
        write_bytes(f.data(), f.size());
    }
    // The stream's length word alone.
    void send_len(uint32_t len) {
        const uint32_t be = htonl(len);
        write_bytes(reinterpret_cast<const uint8_t*>(&be), 4);
    }
    // The next whole frame, or an empty one at EOF or after 5 s.
    Frame read_frame() {
        uint32_t be = 0;
        if (!read_exact(reinterpret_cast<uint8_t*>(&be), 4))
            return {};
        Frame f(ntohl(be));
        return read_exact(f.data(), f.size()) ? f : Frame{};
    }
    // True when the model closed the connection within 5 s.
    bool closed() {
        uint8_t b;
        pollfd p{fd_, POLLIN, 0};
        return poll(&p, 1, 5000) == 1 && read(fd_, &b, 1) == 0;
    }

  private:
    bool read_exact(uint8_t* p, size_t n) {
        while (n) {
            pollfd pf{fd_, POLLIN, 0};
            if (poll(&pf, 1, 5000) != 1)
                return false;
            ssize_t r = read(fd_, p, n);
            if (r <= 0)
                return false;
            p += r;
            n -= static_cast<size_t>(r);
        }
        return true;
    }
    int fd_;
    bool ok_ = false;
};

template <typename Pred> bool eventually(Pred pred) {
    for (int i = 0; i < 500; i++) {
        if (pred())
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return pred();
}

class UplinkSocket : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/vrnic-uplink-XXXXXX";
        ASSERT_NE(nullptr, mkdtemp(tmpl));
        dir = tmpl;
        path = dir + "/uplink.sock";
        sw.inbox(sw.add_port(kVm[0])).open();
        std::string err;
        uplink = Uplink::create(path, &sw, faults, &err);
        ASSERT_TRUE(uplink) << err;
        stop_fd = UniqueFd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
        thread = std::thread([this] { ran_ok = uplink->run(stop, stop_fd.get()); });
    }
    void TearDown() override {
        stop = true;
        uint64_t one = 1;
        (void)!write(stop_fd.get(), &one, sizeof(one));
        if (thread.joinable())
            thread.join();
        EXPECT_TRUE(ran_ok);
        uplink.reset();
        rmdir(dir.c_str());
    }
    // Waits for what VM 0 got from the uplink: `n` frames.
    Frames vm_got(size_t n) {
        Frames got;
        eventually([&] {
            for (Frame& f : taken(sw, 0))
                got.push_back(std::move(f));
            return got.size() >= n;
        });
        return got;
    }
    bool vm_sends(const Frame& f) {
        return sw.forward(0, f.data(), static_cast<uint32_t>(f.size()));
    }

    EthSwitch sw{9000};
    LinkFaultRates faults; // none unless a test's fixture sets them
    std::unique_ptr<Uplink> uplink;
    std::string dir, path;
    UniqueFd stop_fd;
    std::atomic<bool> stop{false};
    bool ran_ok = false;
    std::thread thread;
};

TEST_F(UplinkSocket, FramesCrossBothWaysByteForByte) {
    Peer peer(path);
    ASSERT_TRUE(peer.ok());
    ASSERT_TRUE(eventually([&] { return uplink->counters().connects == 1; }));

    const Frame in1 = frame(kVm[0], kStation, 60, 1), in2 = frame(kBroadcast, kStation, 9018, 2);
    peer.send_frame(in1);
    // The second one in pieces: the length split, then the frame.
    const uint32_t be = htonl(static_cast<uint32_t>(in2.size()));
    peer.write_bytes(reinterpret_cast<const uint8_t*>(&be), 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    peer.write_bytes(reinterpret_cast<const uint8_t*>(&be) + 1, 3);
    peer.write_bytes(in2.data(), 100);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    peer.write_bytes(in2.data() + 100, in2.size() - 100);
    EXPECT_EQ((Frames{in1, in2}), vm_got(2));

    const Frame out1 = frame(kStation, kVm[0], 1514, 3), out2 = frame(kBroadcast, kVm[0], 42, 4);
    ASSERT_TRUE(vm_sends(out1));
    ASSERT_TRUE(vm_sends(out2));
    EXPECT_EQ(out1, peer.read_frame());
    EXPECT_EQ(out2, peer.read_frame());
    const UplinkCounters c = uplink->counters();
    EXPECT_EQ(2u, c.rx_frames);
    EXPECT_EQ(2u, c.tx_frames);
}

TEST_F(UplinkSocket, ASecondPeerIsRefusedUntilTheFirstGoes) {
    auto first = std::make_unique<Peer>(path);
    ASSERT_TRUE(eventually([&] { return uplink->counters().connects == 1; }));
    Peer second(path);
    EXPECT_TRUE(second.closed());
    EXPECT_EQ(1u, uplink->counters().refused);

    first.reset();
    Peer third(path);
    ASSERT_TRUE(eventually([&] { return uplink->counters().connects == 2; }));
    const Frame in = frame(kVm[0], kStation, 64, 5);
    third.send_frame(in);
    EXPECT_EQ(Frames{in}, vm_got(1));
}

TEST_F(UplinkSocket, AnImpossibleLengthEndsTheConnectionOnly) {
    {
        Peer peer(path);
        ASSERT_TRUE(eventually([&] { return uplink->counters().connects == 1; }));
        // Only the length: the model may close before a body would go.
        peer.send_len(Uplink::kMaxStreamFrame + 1);
        EXPECT_TRUE(peer.closed());
    }
    EXPECT_EQ(1u, uplink->counters().bad_length);
    EXPECT_TRUE(taken(sw, 0).empty());
    // Lengths the stream can hold but the switch cannot take are the
    // switch's drops; the connection goes on.
    Peer peer(path);
    ASSERT_TRUE(eventually([&] { return uplink->counters().connects == 2; }));
    peer.send_frame(Frame(10, 0xaa));
    peer.send_frame(frame(kVm[0], kStation, 9100, 7));
    const Frame good = frame(kVm[0], kStation, 64, 8);
    peer.send_frame(good);
    EXPECT_EQ(Frames{good}, vm_got(1));
    EXPECT_EQ(2u, sw.counters().bad_len);
}

TEST_F(UplinkSocket, APeerThatDoesNotReadLosesFramesAndStallsNoOne) {
    Peer peer(path);
    ASSERT_TRUE(eventually([&] { return uplink->counters().connects == 1; }));
    peer.send_frame(frame(kVm[0], kStation, 64, 9)); // learned
    vm_got(1);
    // Far more than the socket and kMaxPending hold, at the pace the
    // inbox takes it.
    const Frame big = frame(kStation, kVm[0], 9014, 10);
    for (int round = 0; round < 40 && uplink->counters().tx_dropped == 0; round++) {
        for (int i = 0; i < 100; i++)
            ASSERT_TRUE(vm_sends(big));
        ASSERT_TRUE(eventually([&] { return !sw.inbox(uplink->port()).pending(); }));
    }
    EXPECT_GT(uplink->counters().tx_dropped, 0u);
    // The uplink still takes what the peer sends.
    const Frame in = frame(kVm[0], kStation, 64, 11);
    peer.send_frame(in);
    EXPECT_EQ(Frames{in}, vm_got(1));
    // And what it queued arrives whole, in order.
    EXPECT_EQ(big, peer.read_frame());
}

// --uplink-faults: what the peer gets and what the VM gets are what the
// counters say the link did, each way, and every frame that arrives is one
// that was sent.
class UplinkSocketFaulty : public UplinkSocket {
  protected:
    void SetUp() override {
        faults = {.drop = 20, .dup = 20, .reorder = 20, .seed = 3};
        UplinkSocket::SetUp();
    }
};

TEST_F(UplinkSocketFaulty, FramesAreDroppedDuplicatedAndReorderedAsCounted) {
    Peer peer(path);
    ASSERT_TRUE(peer.ok());
    ASSERT_TRUE(eventually([&] { return uplink->counters().connects == 1; }));
    constexpr int kFrames = 200;
    Frames in, out;
    for (int i = 0; i < kFrames; i++) {
        in.push_back(frame(kVm[0], kStation, 64 + i, uint8_t(i)));
        out.push_back(frame(kStation, kVm[0], 64 + i, uint8_t(i)));
    }
    // The station must be learned before the VM's frames go to it.
    for (const Frame& f : in)
        peer.send_frame(f);
    ASSERT_TRUE(eventually([&] { return uplink->counters().rx_frames > 0; }));
    for (const Frame& f : out)
        ASSERT_TRUE(vm_sends(f));
    // Every frame has passed the link, each way, before the counts are read.
    ASSERT_TRUE(eventually([&] {
        const UplinkCounters c = uplink->counters();
        return c.rx_frames + c.rx_faults.dropped - c.rx_faults.duplicated == kFrames &&
               c.tx_frames + c.tx_faults.dropped - c.tx_faults.duplicated == kFrames;
    }));
    const UplinkCounters c = uplink->counters();
    const Frames vm = vm_got(c.rx_frames);
    Frames peer_got;
    for (uint64_t i = 0; i < kFrames - c.tx_faults.dropped + c.tx_faults.duplicated; i++)
        peer_got.push_back(peer.read_frame());

    for (const auto& [f, got, sent] :
         {std::tuple{c.rx_faults, vm, in}, std::tuple{c.tx_faults, peer_got, out}}) {
        EXPECT_LT(0u, f.dropped);
        EXPECT_LT(0u, f.duplicated);
        EXPECT_LT(0u, f.reordered);
        EXPECT_EQ(kFrames - f.dropped + f.duplicated, got.size());
        size_t out_of_order = 0;
        for (size_t i = 0; i < got.size(); i++) {
            EXPECT_NE(sent.end(), std::find(sent.begin(), sent.end(), got[i])) << i;
            out_of_order += i && got[i].size() < got[i - 1].size();
        }
        EXPECT_LT(0u, out_of_order);
    }
}

} // namespace
} // namespace vrnic::test
