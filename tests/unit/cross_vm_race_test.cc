// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// RDMA between two VMs while the responder's VM changes under it: one
// thread per VM, as the model runs them. VM a's thread writes into b's
// memory while b's thread deregisters the MR, destroys the QP, resets its
// device or leaves the fabric. Every WRITE completes (success, or the error
// the change causes), what succeeded is in b's memory, and `make
// check-tsan` runs this under ThreadSanitizer.
#include "completion.h"
#include "test_device.h"

#include <memory>
#include <thread>

namespace vrnic::test {
namespace {

constexpr uint32_t kRemote = VRNIC_ACCESS_LOCAL_WRITE | VRNIC_ACCESS_REMOTE_WRITE;
constexpr unsigned kWrites = 16;
constexpr uint32_t kLen = 16384;

// One VM with a buffer its peer writes into and one QP.
struct Side : TestDevice {
    Side(RdmaFabric& f, uint32_t port, const uint8_t* gid)
        : TestDevice(gid, &f, port), mr(buffer(uint64_t(kLen) * kWrites, kRemote, 0, &buf)),
          qp(drv.create_qp(0, pd, cq, cq)) {}
    uint64_t buf = 0;
    MrInfo mr;
    QpInfo qp;
};

enum class Change { dereg_mr, destroy_qp, reset, leave, nothing };

TEST(CrossVmRace, ResponderChangesWhileWritesArrive) {
    RdmaFabric fabric(2);
    Side a(fabric, 0, kGid);
    unsigned succeeded = 0, failed = 0;
    for (unsigned round = 0; round < 40; round++) {
        const auto change = static_cast<Change>(round % 5);
        SCOPED_TRACE(round);
        auto b = std::make_unique<Side>(fabric, 1, kGid2);
        a.qp = a.drv.create_qp(0, a.pd, a.cq, a.cq);
        a.drv.activate(a.qp, Path{.dest_qpn = b->qp.qpn, .retry_cnt = 1, .dgid = kGid2});
        b->drv.activate(b->qp, Path{.dest_qpn = a.qp.qpn, .dgid = kGid});
        for (unsigned i = 0; i < kWrites; i++)
            a.drv.fill(a.buf + uint64_t(i) * kLen, kLen, uint8_t(round * kWrites + i + 1));

        const MrInfo target = b->mr; // b may be gone while the writes go on
        std::vector<vrnic_cqe> done;
        std::thread writer([&] {
            for (unsigned i = 0; i < kWrites; i++) {
                SendWr w;
                w.wr_id = i;
                w.opcode = VRNIC_WR_RDMA_WRITE;
                w.sge = {{a.mr.iova + uint64_t(i) * kLen, kLen, a.mr.lkey}};
                w.remote_addr = target.iova + uint64_t(i) * kLen;
                w.rkey = target.rkey;
                a.drv.post_send(a.qp, w);
                a.drv.run();
            }
            // What waits for an answer that will not come times out.
            for (unsigned t = 0; t < 10 && done.size() < kWrites; t++) {
                auto c = a.drv.poll_cq(a.cq);
                done.insert(done.end(), c.begin(), c.end());
                a.drv.clock() += 1'100'000'000;
                a.drv.run();
            }
            auto c = a.drv.poll_cq(a.cq);
            done.insert(done.end(), c.begin(), c.end());
        });
        switch (change) {
        case Change::dereg_mr:
            EXPECT_EQ(0u, b->drv.destroy(VRNIC_CMD_DEREG_MR, b->mr.handle));
            break;
        case Change::destroy_qp:
            EXPECT_EQ(0u, b->drv.destroy(VRNIC_CMD_DESTROY_QP, b->qp.qpn));
            break;
        case Change::reset:
            b->drv.reset();
            break;
        case Change::leave:
            b.reset();
            break;
        case Change::nothing:
            break;
        }
        writer.join();
        ASSERT_EQ(kWrites, done.size());
        for (const vrnic_cqe& c : done) {
            if (c.status == VRNIC_WC_SUCCESS) {
                succeeded++;
                if (b) {
                    EXPECT_TRUE(b->drv.check_pattern(b->buf + c.wr_id * kLen, kLen,
                                                     uint8_t(round * kWrites + c.wr_id + 1)))
                        << "write " << c.wr_id;
                }
            } else {
                failed++;
                EXPECT_NE(Change::nothing, change) << "status " << int(c.status);
            }
        }
    }
    // Both outcomes happened: the race was run, not decided in advance.
    EXPECT_GT(succeeded, 0u);
    EXPECT_GT(failed, 0u);
}

} // namespace
} // namespace vrnic::test
