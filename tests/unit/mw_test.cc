// Memory windows (device-interface.md 10.28, 10.29, 14.11): ALLOC_MW and
// DEALLOC_MW, BIND_MW WQEs, accesses through windows, their invalidation,
// and every way each of them fails.
#include "command_fixture.h"
#include "rc_fixture.h"

#include "completion.h"

#include <cstring>
#include <functional>

namespace vrnic::test {
namespace {

constexpr uint32_t kLw = VRNIC_ACCESS_LOCAL_WRITE;
constexpr uint32_t kRr = VRNIC_ACCESS_REMOTE_READ;
constexpr uint32_t kRwr = VRNIC_ACCESS_REMOTE_WRITE | VRNIC_ACCESS_REMOTE_READ;
constexpr uint32_t kTarget = kLw | kRwr | VRNIC_ACCESS_MW_BIND;
constexpr uint64_t kLen = 4096;
constexpr uint64_t kWinOff = 0x100; // the window inside the target MR
constexpr uint64_t kWinLen = 0x200;

// b's MR `target` is what a reaches through windows bound on b's SQ.
class Mw : public RcPair {
  protected:
    void SetUp() override {
        RcPair::SetUp();
        src = buffer(kLen, kLw, 0x5c, &src_gpa);
        target = buffer(kLen, kTarget, 0, &target_gpa);
    }
    uint32_t alloc_mw(uint32_t on_pd, uint8_t type, uint32_t* status = nullptr) {
        vrnic_cmd_alloc_mw c{on_pd, type, {}};
        vrnic_cmd r;
        const uint32_t st = drv.cmd(VRNIC_CMD_ALLOC_MW, &c, sizeof(c), &r);
        if (status)
            *status = st;
        else
            EXPECT_EQ(OK, st);
        EXPECT_EQ(r.alloc_mw_resp.mw, r.alloc_mw_resp.rkey);
        return st == OK ? r.alloc_mw_resp.rkey : 0;
    }
    uint32_t destroy(uint16_t op, uint32_t h) {
        vrnic_cmd_handle c{h, 0};
        return drv.cmd(op, &c, sizeof(c));
    }
    vrnic_cqe one(QpInfo& q, CqInfo& cq, const SendWr& w) {
        drv.post_send(q, w);
        auto c = step(cq);
        EXPECT_EQ(1u, c.size());
        return c.empty() ? vrnic_cqe{} : c[0];
    }
    // Binds window `key` with key byte `b` over the target's window range on
    // b's SQ; returns the new rkey.
    uint32_t bind(uint32_t key, uint8_t kb, uint32_t access = kRwr) {
        const uint32_t rkey = with_key_byte(key, kb);
        vrnic_cqe c =
            one(b, b_cq, bind_mw_wr(rkey, target.lkey, target.iova + kWinOff, kWinLen, access));
        EXPECT_EQ(VRNIC_WC_SUCCESS, c.status) << c.vendor_err;
        EXPECT_EQ(VRNIC_CQE_OP_BIND_MW, c.opcode);
        return rkey;
    }
    // a moves len bytes between src and the target at window offset `off`.
    vrnic_cqe access(uint8_t op, uint32_t rkey, uint64_t off = 0, uint32_t len = kWinLen) {
        SendWr w;
        w.opcode = op;
        w.remote_addr = target.iova + kWinOff + off;
        w.rkey = rkey;
        w.sge = {sge(src, 0, len)};
        return one(a, a_cq, w);
    }
    void expect_remote_fails(const vrnic_cqe& c, uint32_t vendor) {
        EXPECT_EQ(VRNIC_WC_REM_ACCESS_ERR, c.status);
        EXPECT_EQ(vendor, c.vendor_err);
    }
    bool target_untouched() const {
        const uint8_t* t = drv.host(target_gpa, kLen);
        for (uint64_t i = 0; i < kLen; i++)
            if (t[i])
                return false;
        return true;
    }
    // The failing CQE of a BIND_MW on b: status, vendor error, QP in ERR.
    void expect_bind_fails(const SendWr& w, uint8_t status, uint32_t vendor) {
        vrnic_cqe c = one(b, b_cq, w);
        EXPECT_EQ(status, c.status);
        EXPECT_EQ(vendor, c.vendor_err);
        EXPECT_EQ(VRNIC_CQE_OP_BIND_MW, c.opcode);
        EXPECT_EQ(VRNIC_QPS_ERR, state(b));
    }

    // a sends 64 bytes of src with SEND_WITH_INV of `key` to b, which
    // receives them at *sink_gpa: the two CQEs.
    std::pair<vrnic_cqe, vrnic_cqe> send_inv(uint32_t key, uint64_t* sink_gpa) {
        MrInfo sink = buffer(64, kLw, 0, sink_gpa);
        drv.post_recv(b, 0xb0, {sge(sink, 0, 64)});
        SendWr w;
        w.opcode = VRNIC_WR_SEND_WITH_INV;
        w.inv_rkey = key;
        w.sge = {sge(src, 0, 64)};
        drv.post_send(a, w);
        drv.run();
        auto ca = drv.poll_cq(a_cq), cb = drv.poll_cq(b_cq);
        EXPECT_EQ(1u, ca.size());
        EXPECT_EQ(1u, cb.size());
        return {ca.empty() ? vrnic_cqe{} : ca[0], cb.empty() ? vrnic_cqe{} : cb[0]};
    }

    uint64_t src_gpa = 0, target_gpa = 0;
    MrInfo src, target;
};

TEST_F(Mw, AllocAndDeallocCheckTheirRequests) {
    uint32_t st = 0;
    alloc_mw(pd, 0, &st);
    EXPECT_EQ(BAD_PARAM, st);
    alloc_mw(pd, 3, &st);
    EXPECT_EQ(BAD_PARAM, st);
    alloc_mw(pd + 1, VRNIC_MW_TYPE_2, &st);
    EXPECT_EQ(BAD_HANDLE, st);
    vrnic_cmd_alloc_mw c{pd, VRNIC_MW_TYPE_1, {0, 1, 0}};
    EXPECT_EQ(BAD_PARAM, drv.cmd(VRNIC_CMD_ALLOC_MW, &c, sizeof(c)));
    // Windows and MRs are not each other's.
    const uint32_t mw = alloc_mw(pd, VRNIC_MW_TYPE_2);
    EXPECT_EQ(BAD_HANDLE, destroy(VRNIC_CMD_DEALLOC_MW, target.handle));
    EXPECT_EQ(BAD_HANDLE, destroy(VRNIC_CMD_DEREG_MR, mw));
    // A window holds its PD.
    const uint32_t p2 = drv.create_pd(0);
    const uint32_t mw2 = alloc_mw(p2, VRNIC_MW_TYPE_1);
    EXPECT_EQ(BUSY, destroy(VRNIC_CMD_DESTROY_PD, p2));
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DEALLOC_MW, mw2));
    EXPECT_EQ(BAD_HANDLE, destroy(VRNIC_CMD_DEALLOC_MW, mw2));
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DESTROY_PD, p2));
}

TEST_F(Mw, FreshWindowReachesNothing) {
    const uint32_t mw = alloc_mw(pd, VRNIC_MW_TYPE_2);
    expect_remote_fails(access(VRNIC_WR_RDMA_WRITE, mw), kVeBadRkey);
    EXPECT_TRUE(target_untouched());
}

TEST_F(Mw, Type2BindWriteRead) {
    const uint32_t rkey = bind(alloc_mw(pd, VRNIC_MW_TYPE_2), 0x11);
    vrnic_cqe c = access(VRNIC_WR_RDMA_WRITE, rkey);
    ASSERT_EQ(VRNIC_WC_SUCCESS, c.status) << c.vendor_err;
    EXPECT_EQ(0,
              memcmp(drv.host(target_gpa + kWinOff, kWinLen), drv.host(src_gpa, kWinLen), kWinLen));
    EXPECT_EQ(0, drv.host(target_gpa + kWinOff - 1)[0]);
    EXPECT_EQ(0, drv.host(target_gpa + kWinOff + kWinLen)[0]);
    // READ it back into a cleared src.
    memset(drv.host(src_gpa, kWinLen), 0, kWinLen);
    c = access(VRNIC_WR_RDMA_READ, rkey);
    ASSERT_EQ(VRNIC_WC_SUCCESS, c.status) << c.vendor_err;
    EXPECT_EQ(0x5c, drv.host(src_gpa)[0]);
    EXPECT_EQ(0,
              memcmp(drv.host(target_gpa + kWinOff, kWinLen), drv.host(src_gpa, kWinLen), kWinLen));
}

TEST_F(Mw, AccessPastTheWindowFails) {
    const uint32_t rkey = bind(alloc_mw(pd, VRNIC_MW_TYPE_2), 0x11);
    expect_remote_fails(access(VRNIC_WR_RDMA_WRITE, rkey, 1), kVeRemoteBounds);
    EXPECT_TRUE(target_untouched());
}

TEST_F(Mw, WindowRightsApply) {
    const uint32_t rkey = bind(alloc_mw(pd, VRNIC_MW_TYPE_2), 0x11, kRr);
    expect_remote_fails(access(VRNIC_WR_RDMA_WRITE, rkey), kVeRemoteRights);
    EXPECT_TRUE(target_untouched());
}

TEST_F(Mw, Type2IsBoundToItsQp) {
    const uint32_t rkey = bind(alloc_mw(pd, VRNIC_MW_TYPE_2), 0x11);
    // c -> d, on the same PD as the window: d is not the QP it is bound to.
    CqInfo c_cq = drv.create_cq(0, 8), d_cq = drv.create_cq(0, 8);
    QpInfo c = drv.create_qp(0, pd, c_cq, c_cq, QpOpts{});
    QpInfo d = drv.create_qp(0, pd, d_cq, d_cq, QpOpts{});
    drv.connect(c, d.qpn, 7, 1);
    drv.connect(d, c.qpn, 7, 1);
    SendWr w;
    w.opcode = VRNIC_WR_RDMA_WRITE;
    w.remote_addr = target.iova + kWinOff;
    w.rkey = rkey;
    w.sge = {sge(src, 0, 64)};
    expect_remote_fails(one(c, c_cq, w), kVeBadRkey);
    EXPECT_TRUE(target_untouched());
}

TEST_F(Mw, LocalInvThenRebindWithANewKey) {
    const uint32_t mw = alloc_mw(pd, VRNIC_MW_TYPE_2);
    const uint32_t k1 = bind(mw, 0x11);
    vrnic_cqe c = one(b, b_cq, local_inv_wr(k1));
    ASSERT_EQ(VRNIC_WC_SUCCESS, c.status) << c.vendor_err;
    EXPECT_EQ(VRNIC_CQE_OP_LOCAL_INV, c.opcode);
    expect_remote_fails(access(VRNIC_WR_RDMA_WRITE, k1), kVeBadRkey);
    EXPECT_TRUE(target_untouched());
    // a's QP went to ERR with the failed write: a fresh pair for the rest.
    RcPair::SetUp();
    src = buffer(kLen, kLw, 0x5c, &src_gpa);
    target = buffer(kLen, kTarget, 0, &target_gpa);
    const uint32_t mw2 = alloc_mw(pd, VRNIC_MW_TYPE_2);
    const uint32_t k2 = bind(mw2, 0x21);
    ASSERT_EQ(VRNIC_WC_SUCCESS, one(b, b_cq, local_inv_wr(k2)).status);
    const uint32_t k3 = bind(mw2, 0x22);
    ASSERT_EQ(VRNIC_WC_SUCCESS, access(VRNIC_WR_RDMA_WRITE, k3).status);
    expect_remote_fails(access(VRNIC_WR_RDMA_WRITE, k2), kVeBadRkey);
}

TEST_F(Mw, Type2BoundTwiceFails) {
    const uint32_t mw = alloc_mw(pd, VRNIC_MW_TYPE_2);
    bind(mw, 0x11);
    expect_bind_fails(bind_mw_wr(with_key_byte(mw, 0x12), target.lkey, target.iova, 64, kRwr),
                      VRNIC_WC_MW_BIND_ERR, kVeMwBound);
}

TEST_F(Mw, BindErrors) {
    struct Case {
        const char* what;
        std::function<SendWr()> wr;
        uint8_t status;
        uint32_t vendor;
    };
    auto wr = [this](uint8_t type, uint32_t mr_lkey, uint64_t off, uint64_t len, uint32_t acc) {
        return bind_mw_wr(with_key_byte(alloc_mw(pd, type), 0x31), mr_lkey, target.iova + off, len,
                          acc);
    };
    const uint32_t t2 = VRNIC_MW_TYPE_2;
    const Case cases[] = {
        {"no such window",
         [&] { return bind_mw_wr(target.rkey, target.lkey, target.iova, 64, kRwr); },
         VRNIC_WC_MW_BIND_ERR, kVeMwBadKey},
        {"window of another PD",
         [&] {
             return bind_mw_wr(alloc_mw(drv.create_pd(0), t2), target.lkey, target.iova, 64, kRwr);
         },
         VRNIC_WC_MW_BIND_ERR, kVeMwPd},
        {"empty type 2 bind", [&] { return wr(t2, target.lkey, 0, 0, kRwr); }, VRNIC_WC_MW_BIND_ERR,
         kVeMwRange},
        {"no such MR", [&] { return wr(t2, 0, 0, 64, kRwr); }, VRNIC_WC_MW_BIND_ERR, kVeMwMr},
        {"MR of another PD",
         [&] {
             const uint32_t p2 = drv.create_pd(0);
             const uint64_t g = drv.alloc(kLen);
             MrInfo m = drv.reg_mr(p2, g, kLen, kTarget);
             return bind_mw_wr(with_key_byte(alloc_mw(pd, t2), 1), m.lkey, g, 64, kRwr);
         },
         VRNIC_WC_MW_BIND_ERR, kVeMwMr},
        {"a window as the MR", [&] { return wr(t2, alloc_mw(pd, t2), 0, 64, kRwr); },
         VRNIC_WC_MW_BIND_ERR, kVeMwMr},
        {"MR without MW_BIND", [&] { return wr(t2, src.lkey, 0, 64, kRwr); }, VRNIC_WC_MW_BIND_ERR,
         kVeMwNoBind},
        {"LOCAL_WRITE asked of a window", [&] { return wr(t2, target.lkey, 0, 64, kLw); },
         VRNIC_WC_MW_BIND_ERR, kVeMwAccess},
        {"remote write on an MR without LOCAL_WRITE",
         [&] {
             MrInfo m = buffer(kLen, kRr | VRNIC_ACCESS_MW_BIND);
             return bind_mw_wr(with_key_byte(alloc_mw(pd, t2), 1), m.lkey, m.iova, 64,
                               VRNIC_ACCESS_REMOTE_WRITE);
         },
         VRNIC_WC_MW_BIND_ERR, kVeMwAccess},
        {"past the MR's end", [&] { return wr(t2, target.lkey, kLen - 32, 64, kRwr); },
         VRNIC_WC_MW_BIND_ERR, kVeMwRange},
        {"reserved field set",
         [&] {
             SendWr w = wr(t2, target.lkey, 0, 64, kRwr);
             w.bind.reserved = 1;
             return w;
         },
         VRNIC_WC_LOC_QP_OP_ERR, kVeBadFrmrWqe},
        {"with SGEs",
         [&] {
             SendWr w = wr(t2, target.lkey, 0, 64, kRwr);
             w.sge = {sge(src, 0, 8)};
             return w;
         },
         VRNIC_WC_LOC_QP_OP_ERR, kVeBadFrmrWqe},
    };
    for (const Case& k : cases) {
        SCOPED_TRACE(k.what);
        SetUp();
        expect_bind_fails(k.wr(), k.status, k.vendor);
    }
}

TEST_F(Mw, Type1RebindsAndUnbinds) {
    const uint32_t mw = alloc_mw(pd, VRNIC_MW_TYPE_1);
    const uint32_t k1 = bind(mw, 0x41);
    ASSERT_EQ(VRNIC_WC_SUCCESS, access(VRNIC_WR_RDMA_WRITE, k1, 0, 64).status);
    EXPECT_EQ(0x5c, drv.host(target_gpa + kWinOff)[0]);
    // A bound type 1 window may be bound again; the old key is then stale.
    const uint32_t k2 = bind(mw, 0x42);
    ASSERT_EQ(VRNIC_WC_SUCCESS, access(VRNIC_WR_RDMA_WRITE, k2, 64, 64).status);
    // A zero-length bind unbinds it.
    vrnic_cqe c = one(b, b_cq, bind_mw_wr(with_key_byte(mw, 0x43), 0, 0, 0, 0));
    ASSERT_EQ(VRNIC_WC_SUCCESS, c.status) << c.vendor_err;
    expect_remote_fails(access(VRNIC_WR_RDMA_WRITE, with_key_byte(mw, 0x43), 0, 64), kVeBadRkey);
}

TEST_F(Mw, Type1OldKeyIsStale) {
    const uint32_t mw = alloc_mw(pd, VRNIC_MW_TYPE_1);
    const uint32_t k1 = bind(mw, 0x41);
    bind(mw, 0x42);
    expect_remote_fails(access(VRNIC_WR_RDMA_WRITE, k1, 0, 64), kVeBadRkey);
    EXPECT_TRUE(target_untouched());
}

TEST_F(Mw, Type1CannotBeInvalidated) {
    const uint32_t k = bind(alloc_mw(pd, VRNIC_MW_TYPE_1), 0x41);
    vrnic_cqe c = one(b, b_cq, local_inv_wr(k));
    EXPECT_EQ(VRNIC_WC_LOC_PROT_ERR, c.status);
    EXPECT_EQ(kVeMwType1Inv, c.vendor_err);
}

TEST_F(Mw, WindowIsNotAnLkey) {
    const uint32_t k = bind(alloc_mw(pd, VRNIC_MW_TYPE_2), 0x11);
    SendWr w;
    w.opcode = VRNIC_WR_SEND;
    w.sge = {{target.iova + kWinOff, 64, k}};
    vrnic_cqe c = one(a, a_cq, w);
    EXPECT_EQ(VRNIC_WC_LOC_PROT_ERR, c.status);
    EXPECT_EQ(kVeBadLkey, c.vendor_err);
}

TEST_F(Mw, SendWithInvUnbindsAType2Window) {
    const uint32_t k = bind(alloc_mw(pd, VRNIC_MW_TYPE_2), 0x11);
    uint64_t sink_gpa;
    auto [sc, rc] = send_inv(k, &sink_gpa);
    ASSERT_EQ(VRNIC_WC_SUCCESS, sc.status) << sc.vendor_err;
    ASSERT_EQ(VRNIC_WC_SUCCESS, rc.status) << rc.vendor_err;
    EXPECT_EQ(VRNIC_CQE_F_WITH_INV, rc.flags);
    EXPECT_EQ(k, rc.invalidated_rkey);
    EXPECT_EQ(0, memcmp(drv.host(sink_gpa, 64), drv.host(src_gpa, 64), 64));
    expect_remote_fails(access(VRNIC_WR_RDMA_WRITE, k, 0, 64), kVeBadRkey);
    EXPECT_TRUE(target_untouched());
}

TEST_F(Mw, SendWithInvOfAWindowBoundElsewhereFails) {
    // The window is bound on a's SQ; b receives the SEND_WITH_INV.
    const uint32_t mw = alloc_mw(pd, VRNIC_MW_TYPE_2);
    const uint32_t k = with_key_byte(mw, 0x11);
    ASSERT_EQ(VRNIC_WC_SUCCESS,
              one(a, a_cq, bind_mw_wr(k, target.lkey, target.iova, 64, kRwr)).status);
    uint64_t sink_gpa;
    auto [sc, rc] = send_inv(k, &sink_gpa);
    EXPECT_EQ(VRNIC_WC_REM_INV_REQ_ERR, sc.status);
    EXPECT_EQ(VRNIC_WC_LOC_PROT_ERR, rc.status);
    EXPECT_EQ(kVeFrmrPd, rc.vendor_err);
}

TEST_F(Mw, DeregOfTheMrLeavesTheWindowReachingNothing) {
    const uint32_t k = bind(alloc_mw(pd, VRNIC_MW_TYPE_2), 0x11);
    ASSERT_EQ(OK, destroy(VRNIC_CMD_DEREG_MR, target.handle));
    expect_remote_fails(access(VRNIC_WR_RDMA_WRITE, k, 0, 64), kVeBadRkey);
    EXPECT_TRUE(target_untouched());
}

} // namespace
} // namespace vrnic::test
