// Every error status of device-interface.md 14.4, the QP state each side
// ends in, the async events, and the flush that follows.
#include "rc_fixture.h"

#include "completion.h"

namespace vrnic::test {
namespace {

constexpr uint32_t kLw = VRNIC_ACCESS_LOCAL_WRITE;

class RcError : public RcPair {
  protected:
    void SetUp() override {
        RcPair::SetUp();
        src = buffer(4096, kLw, 0x5c, &src_gpa);
        dst = buffer(4096, VRNIC_ACCESS_ALL, 0, &dst_gpa);
    }
    SendWr write(uint32_t len = 64) {
        SendWr w;
        w.wr_id = 0x77;
        w.opcode = VRNIC_WR_RDMA_WRITE;
        w.remote_addr = dst.iova;
        w.rkey = dst.rkey;
        w.sge = {sge(src, 0, len)};
        return w;
    }
    // A SEND names no remote buffer.
    SendWr send(uint32_t len) {
        SendWr w = write(len);
        w.opcode = VRNIC_WR_SEND;
        w.remote_addr = 0;
        w.rkey = 0;
        return w;
    }
    // Posts one WQE, runs, returns its single CQE.
    vrnic_cqe one(const SendWr& w) {
        drv.post_send(a, w);
        auto c = step(a_cq);
        EXPECT_EQ(1u, c.size());
        return c.empty() ? vrnic_cqe{} : c[0];
    }
    std::vector<uint8_t> events_for(uint32_t qpn) {
        std::vector<uint8_t> t;
        for (auto& e : drv.take_async_events())
            if (e.obj == qpn)
                t.push_back(e.type);
        return t;
    }
    bool dst_untouched() {
        for (int i = 0; i < 4096; i++)
            if (drv.host(dst_gpa)[i])
                return false;
        return true;
    }
    uint64_t src_gpa = 0, dst_gpa = 0;
    MrInfo src, dst;
};

TEST_F(RcError, MalformedWqeIsLocQpOpErr) {
    struct Case {
        const char* what;
        void (*mutate)(SendWr&);
        uint32_t vendor;
    } cases[] = {
        {"opcode 10 (LSO)", [](SendWr& w) { w.opcode = 10; }, kVeBadOpcode},
        {"flag 0x10", [](SendWr& w) { w.flags |= 0x10; }, kVeBadFlags},
        {"5 SGEs > max_send_sge 4", [](SendWr& w) { w.sge.resize(5, w.sge[0]); }, kVeTooManySge},
        {"inline READ",
         [](SendWr& w) {
             w.opcode = VRNIC_WR_RDMA_READ;
             w.flags |= VRNIC_WQE_F_INLINE;
             w.inline_data.resize(8);
         },
         kVeBadInline},
        {"inline too long",
         [](SendWr& w) {
             w.flags |= VRNIC_WQE_F_INLINE;
             w.inline_data.resize(129);
         },
         kVeBadInline},
        {"atomic with 16-byte SGE",
         [](SendWr& w) {
             w.opcode = VRNIC_WR_ATOMIC_FETCH_AND_ADD;
             w.sge[0].length = 16;
         },
         kVeBadAtomicSge},
    };
    for (auto& c : cases) {
        SetUp(); // fresh pair: the error moves the QP to ERR
        SendWr w = write();
        c.mutate(w);
        vrnic_cqe e = one(w);
        EXPECT_EQ(VRNIC_WC_LOC_QP_OP_ERR, e.status) << c.what;
        EXPECT_EQ(c.vendor, e.vendor_err) << c.what;
        EXPECT_EQ(0x77u, e.wr_id);
        EXPECT_EQ(0u, e.byte_len);
        EXPECT_EQ(VRNIC_QPS_ERR, state(a)) << c.what;
        EXPECT_NE(VRNIC_QPS_ERR, state(b)) << c.what;
        EXPECT_TRUE(dst_untouched()) << c.what;
    }
}

TEST_F(RcError, MessageLongerThanMaxMsgSzIsLocLenErr) {
    SendWr w = write();
    w.sge = {sge(src, 0, 4096), {dst.iova, 0x80000000u, dst.lkey}}; // 2 GiB + 4 KiB
    vrnic_cqe e = one(w);
    EXPECT_EQ(VRNIC_WC_LOC_LEN_ERR, e.status);
    EXPECT_TRUE(dst_untouched());
}

TEST_F(RcError, BadLocalSgeIsLocProtErr) {
    uint32_t other_pd = drv.create_pd(0);
    MrInfo foreign = drv.reg_mr(other_pd, drv.alloc(4096), 4096, kLw);
    MrInfo ro = buffer(4096, 0); // no LOCAL_WRITE
    struct Case {
        const char* what;
        SendWr w;
        uint32_t vendor;
    } cases[] = {
        {"unknown lkey", write(), kVeBadLkey},
        {"MR of another PD", write(), kVeBadLkey},
        {"past the MR", write(), kVeLocalBounds},
        {"before the MR", write(), kVeLocalBounds},
        {"READ into MR without LOCAL_WRITE", write(), kVeNoLocalWrite},
        {"atomic result without LOCAL_WRITE", write(), kVeNoLocalWrite},
    };
    cases[0].w.sge[0].lkey = 0x12345678;
    cases[1].w.sge[0].lkey = foreign.lkey;
    cases[1].w.sge[0].addr = foreign.iova;
    cases[2].w.sge[0] = sge(src, 4000, 97);
    cases[3].w.sge[0].addr = src.iova - 1;
    cases[4].w.opcode = VRNIC_WR_RDMA_READ;
    cases[4].w.sge[0] = sge(ro, 0, 64);
    cases[5].w.opcode = VRNIC_WR_ATOMIC_CMP_AND_SWP;
    cases[5].w.sge[0] = sge(ro, 0, 8);
    for (auto& c : cases) {
        SetUp();
        if (c.w.sge[0].lkey == foreign.lkey) {
            uint32_t pd2 = drv.create_pd(0);
            foreign = drv.reg_mr(pd2, drv.alloc(4096), 4096, kLw);
            c.w.sge[0] = sge(foreign, 0, 64);
        }
        if (c.vendor == kVeNoLocalWrite) {
            ro = buffer(4096, 0);
            c.w.sge[0].lkey = ro.lkey;
            c.w.sge[0].addr = ro.iova;
        }
        if (c.vendor == kVeLocalBounds) {
            c.w.sge[0].lkey = src.lkey;
            c.w.sge[0].addr = c.what[0] == 'p' ? src.iova + 4000 : src.iova - 1;
        }
        vrnic_cqe e = one(c.w);
        EXPECT_EQ(VRNIC_WC_LOC_PROT_ERR, e.status) << c.what;
        EXPECT_EQ(c.vendor, e.vendor_err) << c.what;
        EXPECT_EQ(VRNIC_QPS_ERR, state(a)) << c.what;
        EXPECT_EQ(VRNIC_QPS_RTS, state(b)) << c.what;
    }
}

TEST_F(RcError, StaleLkeyAfterDeregFails) {
    ASSERT_EQ(VRNIC_WC_SUCCESS, one(write()).status);
    vrnic_cmd_handle h{src.handle, 0};
    ASSERT_EQ(0u, drv.cmd(VRNIC_CMD_DEREG_MR, &h, sizeof(h)));
    MrInfo fresh = buffer(4096, kLw); // may reuse storage, never the key
    (void)fresh;
    EXPECT_EQ(VRNIC_WC_LOC_PROT_ERR, one(write()).status);
}

TEST_F(RcError, RemoteAccessViolations) {
    MrInfo no_rw = buffer(4096, kLw | VRNIC_ACCESS_REMOTE_READ);
    struct Case {
        const char* what;
        uint8_t opcode;
        uint32_t vendor;
        std::function<void(SendWr&)> mutate;
    } cases[] = {
        {"unknown rkey", VRNIC_WR_RDMA_WRITE, kVeBadRkey, [](SendWr& w) { w.rkey = 0x7fff0001; }},
        {"rkey of another PD", VRNIC_WR_RDMA_WRITE, kVeBadRkey, nullptr},
        {"write past the MR", VRNIC_WR_RDMA_WRITE, kVeRemoteBounds,
         [this](SendWr& w) { w.remote_addr = dst.iova + 4090; }},
        {"read before the MR", VRNIC_WR_RDMA_READ, kVeRemoteBounds,
         [this](SendWr& w) { w.remote_addr = dst.iova - 8; }},
        {"write without REMOTE_WRITE", VRNIC_WR_RDMA_WRITE, kVeRemoteRights,
         [&](SendWr& w) {
             w.rkey = no_rw.rkey;
             w.remote_addr = no_rw.iova;
         }},
        {"read from MR without REMOTE_READ", VRNIC_WR_RDMA_READ, kVeRemoteRights,
         [this](SendWr& w) {
             MrInfo m = buffer(64, kLw | VRNIC_ACCESS_REMOTE_WRITE);
             w.rkey = m.rkey;
             w.remote_addr = m.iova;
         }},
        {"atomic without REMOTE_ATOMIC", VRNIC_WR_ATOMIC_FETCH_AND_ADD, kVeRemoteRights,
         [this](SendWr& w) {
             MrInfo m = buffer(64, kLw | VRNIC_ACCESS_REMOTE_WRITE);
             w.rkey = m.rkey;
             w.remote_addr = m.iova;
             w.sge[0].length = 8;
         }},
    };
    for (auto& c : cases) {
        SetUp();
        no_rw = buffer(4096, kLw | VRNIC_ACCESS_REMOTE_READ);
        SendWr w = write();
        w.opcode = c.opcode;
        if (c.opcode == VRNIC_WR_ATOMIC_FETCH_AND_ADD)
            w.sge[0].length = 8;
        if (c.mutate) {
            c.mutate(w);
        } else {
            uint32_t pd2 = drv.create_pd(0);
            MrInfo m = drv.reg_mr(pd2, drv.alloc(4096), 4096, VRNIC_ACCESS_ALL);
            w.rkey = m.rkey;
            w.remote_addr = m.iova;
        }
        drv.take_async_events();
        vrnic_cqe e = one(w);
        EXPECT_EQ(VRNIC_WC_REM_ACCESS_ERR, e.status) << c.what;
        EXPECT_EQ(c.vendor, e.vendor_err) << c.what;
        EXPECT_EQ(VRNIC_QPS_ERR, state(a)) << c.what;
        EXPECT_EQ(VRNIC_QPS_ERR, state(b)) << c.what;
        EXPECT_EQ(std::vector<uint8_t>{VRNIC_EQE_QP_ACCESS_ERR}, events_for(b.qpn)) << c.what;
        EXPECT_TRUE(events_for(a.qpn).empty());
        EXPECT_TRUE(dst_untouched()) << c.what;
    }
}

TEST_F(RcError, ResponderQpAccessFlagsAreEnforced) {
    // b allows only remote READ at the QP level, whatever its MRs allow.
    drv.bring_up();
    pd = drv.create_pd(0);
    a_cq = drv.create_cq(0);
    b_cq = drv.create_cq(0);
    a = drv.create_qp(0, pd, a_cq, a_cq);
    b = drv.create_qp(0, pd, b_cq, b_cq);
    drv.connect(a, b.qpn);
    drv.connect(b, a.qpn, 7, 1, VRNIC_ACCESS_REMOTE_READ);
    src = buffer(4096, kLw, 0x5c, &src_gpa);
    dst = buffer(4096, VRNIC_ACCESS_ALL, 0, &dst_gpa);
    vrnic_cqe e = one(write());
    EXPECT_EQ(VRNIC_WC_REM_ACCESS_ERR, e.status);
    EXPECT_EQ(kVeRemoteRights, e.vendor_err);
    EXPECT_TRUE(dst_untouched());
}

TEST_F(RcError, InvalidRequests) {
    uint64_t t_gpa;
    MrInfo target = buffer(64, VRNIC_ACCESS_ALL, 0, &t_gpa);
    SendWr at;
    at.opcode = VRNIC_WR_ATOMIC_CMP_AND_SWP;
    at.remote_addr = target.iova + 4; // misaligned
    at.rkey = target.rkey;
    at.sge = {sge(src, 0, 8)};
    drv.take_async_events();
    vrnic_cqe e = one(at);
    EXPECT_EQ(VRNIC_WC_REM_INV_REQ_ERR, e.status);
    EXPECT_EQ(kVeMisalignedAtomic, e.vendor_err);
    EXPECT_EQ(VRNIC_QPS_ERR, state(b));
    EXPECT_EQ(std::vector<uint8_t>{VRNIC_EQE_QP_REQ_ERR}, events_for(b.qpn));
}

TEST_F(RcError, ReadNeedsResponderRdAtomicResources) {
    drv.bring_up();
    pd = drv.create_pd(0);
    a_cq = drv.create_cq(0);
    b_cq = drv.create_cq(0);
    a = drv.create_qp(0, pd, a_cq, a_cq);
    b = drv.create_qp(0, pd, b_cq, b_cq);
    drv.connect(a, b.qpn);
    // b: INIT -> RTR with max_dest_rd_atomic 0.
    drv.activate(b, Path{.dest_qpn = a.qpn, .max_dest_rd_atomic = 0, .mtu = VRNIC_MTU_1024},
                 VRNIC_QPS_RTR);
    src = buffer(4096, kLw, 0x5c, &src_gpa);
    dst = buffer(4096, VRNIC_ACCESS_ALL, 0, &dst_gpa);
    drv.take_async_events();
    SendWr r = write();
    r.opcode = VRNIC_WR_RDMA_READ;
    vrnic_cqe e = one(r);
    EXPECT_EQ(VRNIC_WC_REM_INV_REQ_ERR, e.status);
    EXPECT_EQ(kVeNoRdAtomic, e.vendor_err);
    // b was in RTR and got its first message: COMM_EST, then the error.
    EXPECT_EQ((std::vector<uint8_t>{VRNIC_EQE_QP_REQ_ERR}), events_for(b.qpn));
}

TEST_F(RcError, ReceiveTooShort) {
    MrInfo small = buffer(64, kLw);
    drv.post_recv(b, 0xb1, {sge(small, 0, 32)});
    SendWr s = send(100);
    vrnic_cqe e = one(s);
    EXPECT_EQ(VRNIC_WC_REM_INV_REQ_ERR, e.status);
    auto rc = drv.poll_cq(b_cq);
    ASSERT_EQ(1u, rc.size());
    EXPECT_EQ(0xb1u, rc[0].wr_id);
    EXPECT_EQ(VRNIC_WC_LOC_LEN_ERR, rc[0].status);
    EXPECT_EQ(VRNIC_CQE_OP_RECV, rc[0].opcode);
    EXPECT_EQ(VRNIC_QPS_ERR, state(a));
    EXPECT_EQ(VRNIC_QPS_ERR, state(b));
}

TEST_F(RcError, BadReceiveSge) {
    uint32_t pd2 = drv.create_pd(0);
    MrInfo foreign = drv.reg_mr(pd2, drv.alloc(4096), 4096, kLw);
    MrInfo ro = buffer(64, 0);
    for (const vrnic_sge& bad :
         {vrnic_sge{foreign.iova, 64, foreign.lkey}, vrnic_sge{ro.iova, 64, ro.lkey},
          vrnic_sge{dst.iova + 4090, 64, dst.lkey}}) {
        SetUp();
        drv.post_recv(b, 0xb2, {bad});
        SendWr s = send(16);
        vrnic_cqe e = one(s);
        EXPECT_EQ(VRNIC_WC_REM_OP_ERR, e.status);
        auto rc = drv.poll_cq(b_cq);
        ASSERT_EQ(1u, rc.size());
        EXPECT_EQ(VRNIC_WC_LOC_PROT_ERR, rc[0].status);
        EXPECT_EQ(VRNIC_QPS_ERR, state(b));
        pd2 = drv.create_pd(0);
        foreign = drv.reg_mr(pd2, drv.alloc(4096), 4096, kLw);
        ro = buffer(64, 0);
    }
}

TEST_F(RcError, MalformedReceiveWqe) {
    drv.post_recv(b, 0xb3, {sge(dst, 0, 8), sge(dst, 8, 8), sge(dst, 16, 8)});
    // Rewrite num_sge beyond max_recv_sge (3) in the posted WQE.
    drv.host(b.rq)[8] = 4;
    SendWr s = send(16);
    EXPECT_EQ(VRNIC_WC_REM_OP_ERR, one(s).status);
    auto rc = drv.poll_cq(b_cq);
    ASSERT_EQ(1u, rc.size());
    EXPECT_EQ(VRNIC_WC_LOC_QP_OP_ERR, rc[0].status);
}

TEST_F(RcError, NoResponderIsRetryExceeded) {
    // d -> c, but c -> b: c does not take d's messages.
    QpInfo c = drv.create_qp(0, pd, b_cq, b_cq);
    QpInfo d = drv.create_qp(0, pd, a_cq, a_cq);
    drv.connect(c, b.qpn);
    drv.connect(d, c.qpn);
    drv.post_send(d, write());
    auto e = step(a_cq);
    ASSERT_EQ(1u, e.size());
    EXPECT_EQ(VRNIC_WC_RETRY_EXC_ERR, e[0].status);
    EXPECT_EQ(kVeNoResponder, e[0].vendor_err);
    EXPECT_TRUE(dst_untouched());
    // A dest_qpn that names no QP at all.
    QpInfo f = drv.create_qp(0, pd, a_cq, a_cq);
    drv.connect(f, 0xfffff0);
    drv.post_send(f, write());
    EXPECT_EQ(VRNIC_WC_RETRY_EXC_ERR, step(a_cq).at(0).status);
}

TEST_F(RcError, ResponderNotReadyIsRetryExceeded) {
    vrnic_qp_attr x{};
    x.qp_state = VRNIC_QPS_ERR;
    ASSERT_EQ(0u, drv.modify_qp(b, VRNIC_QP_ATTR_STATE, x));
    EXPECT_EQ(VRNIC_WC_RETRY_EXC_ERR, one(write()).status);
}

TEST_F(RcError, ErrorThenFlushInPostingOrder) {
    MrInfo rbuf = buffer(256, kLw);
    drv.post_recv(a, 0xa0, {sge(rbuf, 0, 64)});
    drv.post_recv(a, 0xa1, {sge(rbuf, 64, 64)});
    SendWr ok = write();
    ok.wr_id = 1;
    SendWr bad = write();
    bad.wr_id = 2;
    bad.rkey = 0xbadbad;
    drv.post_send(a, ok);
    drv.post_send(a, bad);
    for (int i = 3; i <= 5; i++) {
        SendWr after = write();
        after.wr_id = i;
        after.flags = 0; // unsignaled: flushed anyway
        drv.post_send(a, after);
    }
    auto c = step(a_cq);
    ASSERT_EQ(7u, c.size());
    EXPECT_EQ(1u, c[0].wr_id);
    EXPECT_EQ(VRNIC_WC_SUCCESS, c[0].status);
    EXPECT_EQ(2u, c[1].wr_id);
    EXPECT_EQ(VRNIC_WC_REM_ACCESS_ERR, c[1].status);
    // The flush: SQ first, then RQ (both in posting order).
    for (int i = 2; i < 5; i++) {
        EXPECT_EQ(uint64_t(i + 1), c[i].wr_id);
        EXPECT_EQ(VRNIC_WC_WR_FLUSH_ERR, c[i].status);
        EXPECT_EQ(VRNIC_CQE_OP_RDMA_WRITE, c[i].opcode);
        EXPECT_EQ(uint32_t(i), c[i].wqe_idx);
        EXPECT_EQ(0u, c[i].vendor_err);
    }
    EXPECT_EQ(0xa0u, c[5].wr_id);
    EXPECT_EQ(VRNIC_WC_WR_FLUSH_ERR, c[5].status);
    EXPECT_EQ(VRNIC_CQE_OP_RECV, c[5].opcode);
    EXPECT_EQ(0xa1u, c[6].wr_id);
    // Later posts keep being flushed while in ERR.
    SendWr late = write();
    late.wr_id = 9;
    drv.post_send(a, late);
    drv.post_recv(a, 0xa2, {sge(rbuf, 0, 8)});
    c = step(a_cq);
    ASSERT_EQ(2u, c.size());
    EXPECT_EQ(9u, c[0].wr_id);
    EXPECT_EQ(0xa2u, c[1].wr_id);
    for (auto& x : c)
        EXPECT_EQ(VRNIC_WC_WR_FLUSH_ERR, x.status);
}

TEST_F(RcError, ModifyToErrFlushesAndResetDiscards) {
    drv.post_recv(b, 1, {sge(dst, 0, 64)});
    drv.post_recv(b, 2, {sge(dst, 64, 64)});
    vrnic_qp_attr x{};
    x.qp_state = VRNIC_QPS_ERR;
    ASSERT_EQ(0u, drv.modify_qp(b, VRNIC_QP_ATTR_STATE, x));
    auto c = step(b_cq);
    ASSERT_EQ(2u, c.size());
    EXPECT_EQ(VRNIC_WC_WR_FLUSH_ERR, c[1].status);
    // RESET: posted WQEs are discarded without completions.
    drv.post_recv(b, 3, {sge(dst, 0, 64)});
    x.qp_state = VRNIC_QPS_RESET;
    ASSERT_EQ(0u, drv.modify_qp(b, VRNIC_QP_ATTR_STATE, x));
    EXPECT_TRUE(step(b_cq).empty());
    // Back to RTS with the guest's indices continuing.
    drv.connect(b, a.qpn);
    drv.post_recv(b, 4, {sge(dst, 0, 64)});
    SendWr s = send(10);
    EXPECT_EQ(VRNIC_WC_SUCCESS, one(s).status);
    auto rc = drv.poll_cq(b_cq);
    ASSERT_EQ(1u, rc.size());
    EXPECT_EQ(4u, rc[0].wr_id);
}

TEST_F(RcError, CommEstOnFirstMessageInRtr) {
    // b back to RTR only: it can receive but not send.
    vrnic_qp_attr x{};
    x.qp_state = VRNIC_QPS_RESET;
    ASSERT_EQ(0u, drv.modify_qp(b, VRNIC_QP_ATTR_STATE, x));
    drv.activate(b, Path{.dest_qpn = a.qpn, .max_dest_rd_atomic = 1, .mtu = VRNIC_MTU_1024},
                 VRNIC_QPS_RTR);
    drv.take_async_events();
    EXPECT_EQ(VRNIC_WC_SUCCESS, one(write()).status);
    EXPECT_EQ(VRNIC_WC_SUCCESS, one(write()).status);
    EXPECT_EQ(std::vector<uint8_t>{VRNIC_EQE_COMM_EST}, events_for(b.qpn)); // once
}

} // namespace
} // namespace vrnic::test
