// The ivshmem server handshake, against a fake QEMU over a real UNIX socket.
#include "fake_ivshmem_client.h"
#include "ivshmem_transport.h"
#include "shared_region.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>

using namespace vrnic;
using vrnic::test::FakeIvshmemClient;

namespace {

std::string temp_socket_path() {
    return "/tmp/vrnic-test-" + std::to_string(getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".sock";
}

struct Connected {
    std::unique_ptr<IvshmemListener> listener;
    std::unique_ptr<SharedRegion> shm;
    std::unique_ptr<IvshmemLink> link;
    FakeIvshmemClient client;
};

void connect_one(Connected* c, unsigned vectors) {
    std::string err;
    c->listener = IvshmemListener::listen(temp_socket_path(), &err);
    ASSERT_TRUE(c->listener) << err;
    c->shm = SharedRegion::create("vrnic-test-bar2", 1 << 20, &err);
    ASSERT_TRUE(c->shm) << err;
    c->client.sock = test::connect_unix(c->listener->path().c_str());
    ASSERT_TRUE(c->client.sock.valid());
    pollfd p{c->listener->fd(), POLLIN, 0};
    ASSERT_EQ(1, poll(&p, 1, 5000));
    UniqueFd conn = c->listener->accept();
    ASSERT_TRUE(conn.valid());
    c->link = IvshmemLink::establish(std::move(conn), c->shm->fd(), vectors, 1, &err);
    ASSERT_TRUE(c->link) << err;
    ASSERT_TRUE(c->client.handshake(vectors));
}

TEST(IvshmemTransport, HandshakeSequence) {
    Connected c;
    ASSERT_NO_FATAL_FAILURE(connect_one(&c, 8));
    EXPECT_EQ(0, c.client.version);
    EXPECT_EQ(1, c.client.id);
    EXPECT_EQ(8u, c.client.peer0.size());
    EXPECT_EQ(8u, c.client.own.size());

    // The fd QEMU got is the BAR2 memory: writes are seen by both sides.
    void* p = mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, c.client.shm.get(), 0);
    ASSERT_NE(MAP_FAILED, p);
    static_cast<volatile uint8_t*>(p)[12345] = 0x5a;
    EXPECT_EQ(0x5a, c.shm->data()[12345]);
    munmap(p, 1 << 20);

    // Nothing more follows the handshake.
    pollfd pf{c.client.sock.get(), POLLIN, 0};
    EXPECT_EQ(0, poll(&pf, 1, 20));
}

TEST(IvshmemTransport, DoorbellReachesModelAndIrqReachesGuest) {
    Connected c;
    ASSERT_NO_FATAL_FAILURE(connect_one(&c, 8));
    for (unsigned v = 0; v < 8; v++)
        EXPECT_FALSE(c.link->drain_doorbell(v));
    c.client.kick(3);
    c.client.kick(3);
    pollfd p{c.link->doorbell_fd(3), POLLIN, 0};
    ASSERT_EQ(1, poll(&p, 1, 1000));
    EXPECT_TRUE(c.link->drain_doorbell(3));
    EXPECT_FALSE(c.link->drain_doorbell(3)); // both kicks consumed at once
    EXPECT_FALSE(c.link->drain_doorbell(2));

    c.link->raise_irq(5);
    c.link->raise_irq(5);
    EXPECT_EQ(2u, c.client.take_irqs(5));
    EXPECT_EQ(0u, c.client.take_irqs(4));
    c.link->raise_irq(99); // out of range: ignored
}

TEST(IvshmemTransport, DetectsDisconnect) {
    Connected c;
    ASSERT_NO_FATAL_FAILURE(connect_one(&c, 2));
    EXPECT_FALSE(c.link->peer_closed());
    c.client.sock.reset();
    pollfd p{c.link->conn_fd(), POLLIN, 0};
    ASSERT_EQ(1, poll(&p, 1, 1000));
    EXPECT_TRUE(c.link->peer_closed());
}

TEST(IvshmemTransport, ListenerReplacesStaleSocketAndCleansUp) {
    std::string path = temp_socket_path();
    std::string err;
    {
        auto l1 = IvshmemListener::listen(path, &err);
        ASSERT_TRUE(l1) << err;
        // A crashed model leaves its socket behind: a new one must still bind.
        int fd = l1->fd();
        (void)fd;
        struct stat st {};
        ASSERT_EQ(0, stat(path.c_str(), &st));
    }
    struct stat st {};
    EXPECT_NE(0, stat(path.c_str(), &st)); // removed on destruction

    UniqueFd stale(socket(AF_UNIX, SOCK_STREAM, 0));
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    strncpy(a.sun_path, path.c_str(), sizeof(a.sun_path) - 1);
    ASSERT_EQ(0, bind(stale.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)));
    auto l2 = IvshmemListener::listen(path, &err);
    EXPECT_TRUE(l2) << err;
}

TEST(IvshmemTransport, ListenerErrors) {
    std::string err;
    EXPECT_FALSE(IvshmemListener::listen("", &err));
    EXPECT_FALSE(IvshmemListener::listen(std::string(200, 'x'), &err));
    EXPECT_FALSE(IvshmemListener::listen("/nonexistent-dir/x.sock", &err));
    EXPECT_NE(std::string::npos, err.find("/nonexistent-dir/x.sock"));
}

TEST(SharedRegion, PowerOfTwoOnly) {
    std::string err;
    EXPECT_FALSE(SharedRegion::create("x", 3 << 20, &err));
    EXPECT_FALSE(SharedRegion::create("x", 0, &err));
    auto r = SharedRegion::create("x", 4 << 20, &err);
    ASSERT_TRUE(r) << err;
    EXPECT_EQ(4u << 20, r->size());
    EXPECT_EQ(0, r->data()[r->size() - 1]); // zero-filled and mapped to the end
}

} // namespace
