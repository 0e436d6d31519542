// Fast registration (device-interface.md 10.27, 14.10): ALLOC_MR, REG_MR and
// LOCAL_INV WQEs, SEND_WITH_INV, and every way each of them fails.
#include "command_fixture.h"
#include "rc_fixture.h"

#include "completion.h"

#include <cstring>
#include <functional>

namespace vrnic::test {
namespace {

constexpr uint32_t kLw = VRNIC_ACCESS_LOCAL_WRITE;
constexpr uint8_t kRw =
    VRNIC_ACCESS_LOCAL_WRITE | VRNIC_ACCESS_REMOTE_WRITE | VRNIC_ACCESS_REMOTE_READ;
constexpr uint64_t kIova = 0x7f0000000100ull; // 0x100 into its first page
constexpr uint64_t kLen = 2 * 4096;           // so three pages
constexpr uint32_t kMaxPages = 8;

class FastReg : public RcPair {
  protected:
    void SetUp() override {
        RcPair::SetUp();
        src = buffer(kLen, kLw, 0x5c, &src_gpa);
        sink = buffer(kLen, kLw, 0, &sink_gpa);
        // Three pages the FRMR maps, in reverse order of their addresses.
        pages.clear();
        for (int i = 0; i < 3; i++)
            pages.insert(pages.begin(), drv.alloc(4096));
        pbl = drv.alloc(kMaxPages * 8 + 8, 8);
        ASSERT_TRUE(drv.put(pbl, pages.data(), pages.size() * 8));
        frmr = alloc_mr(pd, kMaxPages);
    }
    MrInfo alloc_mr(uint32_t on_pd, uint32_t max_pages, uint32_t* status = nullptr) {
        vrnic_cmd_alloc_mr c{on_pd, max_pages};
        vrnic_cmd r;
        const uint32_t st = drv.cmd(VRNIC_CMD_ALLOC_MR, &c, sizeof(c), &r);
        if (status)
            *status = st;
        else
            EXPECT_EQ(OK, st);
        MrInfo m;
        m.handle = r.reg_mr_resp.mr;
        m.lkey = r.reg_mr_resp.lkey;
        m.rkey = r.reg_mr_resp.rkey;
        return m;
    }
    // Posts one WQE on `q`, runs, returns the single CQE of `cq`.
    vrnic_cqe one(QpInfo& q, CqInfo& cq, const SendWr& w) {
        drv.post_send(q, w);
        auto c = step(cq);
        EXPECT_EQ(1u, c.size());
        return c.empty() ? vrnic_cqe{} : c[0];
    }
    vrnic_cqe on_a(const SendWr& w) { return one(a, a_cq, w); }
    // Registers the FRMR on a's SQ with key byte `b`; returns the new key.
    uint32_t reg(uint8_t b, uint8_t access = kRw) {
        const uint32_t key = with_key_byte(frmr.lkey, b);
        vrnic_cqe c = on_a(reg_mr_wr(key, kIova, kLen, pbl, access));
        EXPECT_EQ(VRNIC_WC_SUCCESS, c.status) << c.vendor_err;
        EXPECT_EQ(VRNIC_CQE_OP_REG_MR, c.opcode);
        return key;
    }
    // b writes len bytes of src into the FRMR at kIova + off under rkey.
    vrnic_cqe write_to_frmr(uint32_t rkey, uint64_t off = 0, uint32_t len = kLen) {
        SendWr w;
        w.opcode = VRNIC_WR_RDMA_WRITE;
        w.remote_addr = kIova + off;
        w.rkey = rkey;
        w.sge = {sge(src, 0, len)};
        return one(b, b_cq, w);
    }
    // Byte i of the FRMR's range, through its page list.
    uint8_t frmr_byte(uint64_t i) const {
        const uint64_t off = (kIova & 4095) + i;
        return drv.host(pages[off / 4096] + off % 4096)[0];
    }
    // The pattern of src landed at every byte of the FRMR's range.
    bool frmr_holds_src() const {
        for (uint64_t i = 0; i < kLen; i++)
            if (frmr_byte(i) != drv.host(src_gpa + i)[0])
                return false;
        return true;
    }
    bool frmr_untouched() const {
        for (uint64_t i = 0; i < kLen; i++)
            if (frmr_byte(i))
                return false;
        return true;
    }
    SendWr send_with_inv(uint32_t key) {
        SendWr w;
        w.opcode = VRNIC_WR_SEND_WITH_INV;
        w.inv_rkey = key;
        w.sge = {sge(src, 0, 64)};
        return w;
    }
    // The failing CQE of a REG_MR WQE on a: status and vendor error, and the
    // QP in ERR.
    void expect_reg_fails(const SendWr& w, uint8_t status, uint32_t vendor) {
        vrnic_cqe c = on_a(w);
        EXPECT_EQ(status, c.status);
        EXPECT_EQ(vendor, c.vendor_err);
        EXPECT_EQ(VRNIC_CQE_OP_REG_MR, c.opcode);
        EXPECT_EQ(VRNIC_QPS_ERR, state(a));
    }

    uint64_t src_gpa = 0, sink_gpa = 0, pbl = 0;
    MrInfo src, sink, frmr;
    std::vector<uint64_t> pages;
};

TEST_F(FastReg, CapabilityIsAdvertised) {
    EXPECT_EQ(DeviceParams{}.max_fast_reg_pages, drv.regs()->max_fast_reg_pages);
    EXPECT_GT(drv.regs()->max_fast_reg_pages, 0u);
}

TEST_F(FastReg, AllocMrChecksItsRequest) {
    uint32_t st = 0;
    alloc_mr(pd, 0, &st);
    EXPECT_EQ(BAD_PARAM, st);
    alloc_mr(pd, DeviceParams{}.max_fast_reg_pages + 1, &st);
    EXPECT_EQ(BAD_PARAM, st);
    alloc_mr(pd + 1, 4, &st);
    EXPECT_EQ(BAD_HANDLE, st);
    // A user context's PD: its WQEs would name guest physical pages.
    const uint32_t upd = drv.create_pd(drv.alloc_uctx());
    alloc_mr(upd, 4, &st);
    EXPECT_EQ(BAD_PARAM, st);
}

TEST_F(FastReg, AllocMrIsChargedToThePageBudget) {
    DeviceParams p;
    p.max_mr_pages = 100;
    FakeDriver small(p);
    small.bring_up();
    const uint32_t spd = small.create_pd(0);
    vrnic_cmd_alloc_mr c{spd, 64};
    EXPECT_EQ(OK, small.cmd(VRNIC_CMD_ALLOC_MR, &c, sizeof(c)));
    EXPECT_EQ(NO_RESOURCE, small.cmd(VRNIC_CMD_ALLOC_MR, &c, sizeof(c)));
}

TEST_F(FastReg, FreshMrIsFree) {
    // Before any REG_MR its key reaches nothing.
    vrnic_cqe c = write_to_frmr(frmr.rkey, 0, 64);
    EXPECT_EQ(VRNIC_WC_REM_ACCESS_ERR, c.status);
    EXPECT_TRUE(frmr_untouched());
}

TEST_F(FastReg, RegisterWriteReadThroughPageList) {
    const uint32_t key = reg(0x11);
    EXPECT_EQ(0x11u, key & 0xff);
    vrnic_cqe c = write_to_frmr(key);
    ASSERT_EQ(VRNIC_WC_SUCCESS, c.status) << c.vendor_err;
    EXPECT_TRUE(frmr_holds_src());
    // READ it back into sink.
    SendWr r;
    r.opcode = VRNIC_WR_RDMA_READ;
    r.remote_addr = kIova;
    r.rkey = key;
    r.sge = {sge(sink, 0, kLen)};
    c = one(b, b_cq, r);
    ASSERT_EQ(VRNIC_WC_SUCCESS, c.status) << c.vendor_err;
    EXPECT_EQ(0, memcmp(drv.host(sink_gpa, kLen), drv.host(src_gpa, kLen), kLen));
    // Past the registered length: out of bounds.
    c = write_to_frmr(key, kLen - 8, 16);
    EXPECT_EQ(VRNIC_WC_REM_ACCESS_ERR, c.status);
    EXPECT_EQ(kVeRemoteBounds, c.vendor_err);
}

TEST_F(FastReg, LocalKeyWorksAsLkey) {
    const uint32_t key = reg(0x21);
    drv.fill(pages[0], 4096, 0x33);
    uint64_t dst_gpa = 0;
    const MrInfo dst = buffer(64, VRNIC_ACCESS_ALL, 0, &dst_gpa);
    SendWr w;
    w.opcode = VRNIC_WR_RDMA_WRITE;
    w.remote_addr = dst.iova;
    w.rkey = dst.rkey;
    w.sge = {{kIova, 64, key}};
    vrnic_cqe c = on_a(w);
    ASSERT_EQ(VRNIC_WC_SUCCESS, c.status) << c.vendor_err;
    EXPECT_EQ(0, memcmp(drv.host(dst_gpa, 64), drv.host(pages[0] + 0x100, 64), 64));
}

TEST_F(FastReg, InvalidatedKeyFails) {
    const uint32_t key = reg(0x31);
    vrnic_cqe c = on_a(local_inv_wr(key));
    ASSERT_EQ(VRNIC_WC_SUCCESS, c.status) << c.vendor_err;
    EXPECT_EQ(VRNIC_CQE_OP_LOCAL_INV, c.opcode);
    c = write_to_frmr(key, 0, 64);
    EXPECT_EQ(VRNIC_WC_REM_ACCESS_ERR, c.status);
    EXPECT_TRUE(frmr_untouched());
}

TEST_F(FastReg, ReregisterWithNewKey) {
    const uint32_t k1 = reg(0x41);
    ASSERT_EQ(VRNIC_WC_SUCCESS, on_a(local_inv_wr(k1)).status);
    const uint32_t k2 = reg(0x42);
    vrnic_cqe c = write_to_frmr(k2);
    ASSERT_EQ(VRNIC_WC_SUCCESS, c.status) << c.vendor_err;
    EXPECT_TRUE(frmr_holds_src());
}

TEST_F(FastReg, StaleKeyFailsAfterReregister) {
    const uint32_t k1 = reg(0x51);
    ASSERT_EQ(VRNIC_WC_SUCCESS, on_a(local_inv_wr(k1)).status);
    reg(0x52);
    vrnic_cqe c = write_to_frmr(k1, 0, 64);
    EXPECT_EQ(VRNIC_WC_REM_ACCESS_ERR, c.status);
    EXPECT_EQ(kVeBadRkey, c.vendor_err);
    EXPECT_TRUE(frmr_untouched());
}

TEST_F(FastReg, StaleLkeyFailsAfterReregister) {
    const uint32_t k1 = reg(0x55);
    ASSERT_EQ(VRNIC_WC_SUCCESS, on_a(local_inv_wr(k1)).status);
    reg(0x56);
    SendWr w;
    w.opcode = VRNIC_WR_RDMA_WRITE;
    w.remote_addr = sink.iova;
    w.rkey = sink.rkey;
    w.sge = {{kIova, 64, k1}};
    vrnic_cqe c = on_a(w);
    EXPECT_EQ(VRNIC_WC_LOC_PROT_ERR, c.status);
    EXPECT_EQ(kVeBadLkey, c.vendor_err);
}

TEST_F(FastReg, DeregByAllocHandleAfterRekey) {
    reg(0x61);
    vrnic_cmd_handle h{frmr.handle, 0};
    EXPECT_EQ(OK, drv.cmd(VRNIC_CMD_DEREG_MR, &h, sizeof(h)));
    EXPECT_EQ(BAD_HANDLE, drv.cmd(VRNIC_CMD_DEREG_MR, &h, sizeof(h)));
    // An ordinary MR is still named by its exact key only.
    vrnic_cmd_handle o{with_key_byte(src.handle, uint8_t(src.handle + 1)), 0};
    EXPECT_EQ(BAD_HANDLE, drv.cmd(VRNIC_CMD_DEREG_MR, &o, sizeof(o)));
}

TEST_F(FastReg, RegOfValidMrFails) {
    reg(0x71);
    expect_reg_fails(reg_mr_wr(with_key_byte(frmr.lkey, 0x72), kIova, kLen, pbl, kRw),
                     VRNIC_WC_LOC_PROT_ERR, kVeFrmrValid);
}

TEST_F(FastReg, RegOnAnotherPdFails) {
    const MrInfo other = alloc_mr(drv.create_pd(0), kMaxPages);
    expect_reg_fails(reg_mr_wr(other.lkey, kIova, kLen, pbl, kRw), VRNIC_WC_LOC_PROT_ERR,
                     kVeFrmrPd);
}

TEST_F(FastReg, RegOfOrdinaryMrFails) {
    expect_reg_fails(reg_mr_wr(sink.lkey, kIova, kLen, pbl, kRw), VRNIC_WC_LOC_PROT_ERR,
                     kVeFrmrBadKey);
}

TEST_F(FastReg, RegBeyondMaxPagesFails) {
    // 8 pages and 0x100 bytes need 9 entries.
    expect_reg_fails(reg_mr_wr(frmr.lkey, kIova, kMaxPages * 4096, pbl, kRw), VRNIC_WC_LOC_LEN_ERR,
                     kVeFrmrTooManyPages);
}

TEST_F(FastReg, RegRemoteWriteWithoutLocalWriteFails) {
    expect_reg_fails(reg_mr_wr(frmr.lkey, kIova, kLen, pbl, VRNIC_ACCESS_REMOTE_WRITE),
                     VRNIC_WC_LOC_QP_OP_ERR, kVeFrmrAccess);
}

TEST_F(FastReg, RegUnknownAccessBitFails) {
    expect_reg_fails(reg_mr_wr(frmr.lkey, kIova, kLen, pbl, kRw | 0x10), VRNIC_WC_LOC_QP_OP_ERR,
                     kVeFrmrAccess);
}

TEST_F(FastReg, RegMalformedRangeFails) {
    struct Case {
        const char* what;
        uint64_t iova, len;
        uint8_t shift;
    } cases[] = {
        {"length 0", kIova, 0, 12},
        {"wraps", ~0ull - 100, 4096, 12},
        {"page shift 11", kIova, kLen, 11},
        {"page shift 31", kIova, kLen, 31},
    };
    for (const Case& k : cases) {
        SCOPED_TRACE(k.what);
        SetUp();
        expect_reg_fails(reg_mr_wr(frmr.lkey, k.iova, k.len, pbl, kRw, k.shift),
                         VRNIC_WC_LOC_QP_OP_ERR, kVeFrmrRange);
    }
}

TEST_F(FastReg, RegPageListOutsideRamFails) {
    struct Case {
        const char* what;
        uint64_t pbl_addr;
        uint64_t page0;
    } cases[] = {
        {"list misaligned", 0, 0},
        {"list beyond RAM", FakeDriver::kRamSize - 8, 0},
        {"page beyond RAM", 0, FakeDriver::kRamSize},
        {"page misaligned", 0, 0x2000 + 8},
    };
    for (const Case& k : cases) {
        SCOPED_TRACE(k.what);
        SetUp();
        uint64_t list = pbl;
        if (k.pbl_addr)
            list = k.pbl_addr;
        else if (!k.page0)
            list = pbl + 4;
        if (k.page0) {
            ASSERT_TRUE(drv.put(pbl, &k.page0, 8));
        }
        expect_reg_fails(reg_mr_wr(frmr.lkey, kIova, kLen, list, kRw), VRNIC_WC_LOC_QP_OP_ERR,
                         kVeFrmrPageList);
    }
}

TEST_F(FastReg, RegWithDataFails) {
    SendWr w = reg_mr_wr(frmr.lkey, kIova, kLen, pbl, kRw);
    w.sge = {sge(src, 0, 8)};
    expect_reg_fails(w, VRNIC_WC_LOC_QP_OP_ERR, kVeBadFrmrWqe);
}

TEST_F(FastReg, RegOnUserQpFails) {
    const uint32_t u = drv.alloc_uctx();
    const uint32_t upd = drv.create_pd(u);
    CqInfo ucq = drv.create_cq(u, 6);
    QpInfo uq = drv.create_qp(u, upd, ucq, ucq);
    drv.connect(uq, b.qpn);
    vrnic_cqe c = one(uq, ucq, reg_mr_wr(frmr.lkey, kIova, kLen, pbl, kRw));
    EXPECT_EQ(VRNIC_WC_LOC_QP_OP_ERR, c.status);
    EXPECT_EQ(kVeFrmrUserQp, c.vendor_err);
}

TEST_F(FastReg, LocalInvOfOrdinaryMrFails) {
    vrnic_cqe c = on_a(local_inv_wr(sink.lkey));
    EXPECT_EQ(VRNIC_WC_LOC_PROT_ERR, c.status);
    EXPECT_EQ(kVeFrmrNotFast, c.vendor_err);
    EXPECT_EQ(VRNIC_CQE_OP_LOCAL_INV, c.opcode);
    EXPECT_EQ(VRNIC_QPS_ERR, state(a));
}

TEST_F(FastReg, LocalInvOfForeignMrFails) {
    const MrInfo other = alloc_mr(drv.create_pd(0), kMaxPages);
    vrnic_cqe c = on_a(local_inv_wr(other.lkey));
    EXPECT_EQ(VRNIC_WC_LOC_PROT_ERR, c.status);
    EXPECT_EQ(kVeFrmrPd, c.vendor_err);
}

TEST_F(FastReg, LocalInvWithStaleKeyFailsAndKeepsMrValid) {
    const uint32_t key = reg(0x81);
    vrnic_cqe c = on_a(local_inv_wr(with_key_byte(key, 0x80)));
    EXPECT_EQ(VRNIC_WC_LOC_PROT_ERR, c.status);
    EXPECT_EQ(kVeFrmrBadKey, c.vendor_err);
    // The key in use still works, from a new pair (a is in ERR now).
    CqInfo cq = drv.create_cq(0, 6);
    QpInfo c1 = drv.create_qp(0, pd, cq, cq), c2 = drv.create_qp(0, pd, cq, cq);
    drv.connect(c1, c2.qpn);
    drv.connect(c2, c1.qpn);
    SendWr w;
    w.opcode = VRNIC_WR_RDMA_WRITE;
    w.remote_addr = kIova;
    w.rkey = key;
    w.sge = {sge(src, 0, kLen)};
    c = one(c2, cq, w);
    EXPECT_EQ(VRNIC_WC_SUCCESS, c.status) << c.vendor_err;
    EXPECT_TRUE(frmr_holds_src());
}

TEST_F(FastReg, LocalInvWithUnionSetFails) {
    SendWr w = local_inv_wr(frmr.lkey);
    w.remote_addr = 8;
    vrnic_cqe c = on_a(w);
    EXPECT_EQ(VRNIC_WC_LOC_QP_OP_ERR, c.status);
    EXPECT_EQ(kVeBadFrmrWqe, c.vendor_err);
}

TEST_F(FastReg, UdQpRefusesFastRegOpcodes) {
    for (uint8_t op : {VRNIC_WR_REG_MR, VRNIC_WR_LOCAL_INV, VRNIC_WR_BIND_MW}) {
        SCOPED_TRACE(int(op));
        FakeDriver d;
        d.bring_up();
        const uint32_t p = d.create_pd(0);
        CqInfo cq = d.create_cq(0, 6);
        QpOpts o;
        o.qp_type = VRNIC_QPT_UD;
        QpInfo q = d.create_qp(0, p, cq, cq, o);
        d.activate(q, Path{.qp_type = VRNIC_QPT_UD});
        SendWr w = local_inv_wr(1);
        w.opcode = op;
        d.post_send(q, w);
        d.run();
        auto c = d.poll_cq(cq);
        ASSERT_EQ(1u, c.size());
        EXPECT_EQ(VRNIC_WC_LOC_QP_OP_ERR, c[0].status);
        EXPECT_EQ(kVeBadOpcode, c[0].vendor_err);
    }
}

// Remote invalidation: b's FRMR is a's target (the FRMR is registered on
// b's SQ this time, as a target registers what it exposes).
class RemoteInv : public FastReg {
  protected:
    uint32_t reg_on_b(uint8_t kb) {
        const uint32_t key = with_key_byte(frmr.lkey, kb);
        vrnic_cqe c = one(b, b_cq, reg_mr_wr(key, kIova, kLen, pbl, kRw));
        EXPECT_EQ(VRNIC_WC_SUCCESS, c.status) << c.vendor_err;
        return key;
    }
    // a sends SEND_WITH_INV of `key` to b, which has a receive posted.
    std::pair<vrnic_cqe, vrnic_cqe> send_inv(uint32_t key) {
        drv.post_recv(b, 0xb0, {sge(sink, 0, 64)});
        drv.post_send(a, send_with_inv(key));
        drv.run();
        auto ca = drv.poll_cq(a_cq), cb = drv.poll_cq(b_cq);
        EXPECT_EQ(1u, ca.size());
        EXPECT_EQ(1u, cb.size());
        return {ca.empty() ? vrnic_cqe{} : ca[0], cb.empty() ? vrnic_cqe{} : cb[0]};
    }
};

TEST_F(RemoteInv, SendWithInvInvalidates) {
    const uint32_t key = reg_on_b(0x91);
    auto [sc, rc] = send_inv(key);
    ASSERT_EQ(VRNIC_WC_SUCCESS, sc.status) << sc.vendor_err;
    EXPECT_EQ(VRNIC_CQE_OP_SEND, sc.opcode);
    ASSERT_EQ(VRNIC_WC_SUCCESS, rc.status) << rc.vendor_err;
    EXPECT_EQ(VRNIC_CQE_OP_RECV, rc.opcode);
    EXPECT_EQ(VRNIC_CQE_F_WITH_INV, rc.flags);
    EXPECT_EQ(key, rc.invalidated_rkey);
    EXPECT_EQ(64u, rc.byte_len);
    EXPECT_EQ(0, memcmp(drv.host(sink_gpa, 64), drv.host(src_gpa, 64), 64));
    // a's next WRITE through the invalidated key fails.
    SendWr w;
    w.opcode = VRNIC_WR_RDMA_WRITE;
    w.remote_addr = kIova;
    w.rkey = key;
    w.sge = {sge(src, 0, 64)};
    vrnic_cqe c = on_a(w);
    EXPECT_EQ(VRNIC_WC_REM_ACCESS_ERR, c.status);
    EXPECT_TRUE(frmr_untouched());
}

TEST_F(RemoteInv, BadKeysFailTheReceive) {
    struct Case {
        const char* what;
        std::function<uint32_t()> key;
        uint32_t vendor;
    } cases[] = {
        {"ordinary MR", [this] { return sink.rkey; }, kVeFrmrNotFast},
        {"stale key byte", [this] { return with_key_byte(reg_on_b(0xa1), 0xa0); }, kVeFrmrBadKey},
        {"no such key", [] { return 0u; }, kVeFrmrBadKey},
        {"other PD", [this] { return alloc_mr(drv.create_pd(0), 4).rkey; }, kVeFrmrPd},
    };
    for (const Case& k : cases) {
        SCOPED_TRACE(k.what);
        SetUp();
        auto [sc, rc] = send_inv(k.key());
        EXPECT_EQ(VRNIC_WC_REM_INV_REQ_ERR, sc.status);
        EXPECT_EQ(VRNIC_WC_LOC_PROT_ERR, rc.status);
        EXPECT_EQ(k.vendor, rc.vendor_err);
        EXPECT_EQ(0, rc.flags);
        EXPECT_EQ(VRNIC_QPS_ERR, state(b));
    }
}

} // namespace
} // namespace vrnic::test
