// Command validation (device-interface.md sections 9, 10): every field the
// driver writes is checked, handles and contexts are enforced, and a failed
// command has no effect.
#include "command_fixture.h"

namespace vrnic::test {
namespace {

class Commands : public CommandTest {
  protected:
    vrnic_cmd_reg_mr mr_req(uint32_t pd, uint64_t gpa, uint64_t len) {
        vrnic_cmd_reg_mr m{};
        m.pd = pd;
        m.access = VRNIC_ACCESS_LOCAL_WRITE;
        m.iova = gpa;
        m.length = len;
        m.page_shift = 12;
        m.npages = static_cast<uint32_t>(((gpa & 4095) + len + 4095) >> 12);
        m.pbl_level = VRNIC_PBL_DIRECT;
        m.pbl_addr = drv.alloc(uint64_t(m.npages) * 8, 8);
        for (uint32_t i = 0; i < m.npages; i++) {
            uint64_t page = (gpa & ~4095ull) + uint64_t(i) * 4096;
            memcpy(drv.host(m.pbl_addr + i * 8, 8), &page, 8);
        }
        return m;
    }
};

TEST_F(Commands, UnknownOpcodeFlagsAndTrailingBytes) {
    EXPECT_EQ(BAD_OPCODE, drv.cmd(0));
    EXPECT_EQ(BAD_OPCODE, drv.cmd(VRNIC_CMD_DEALLOC_MW + 1));
    EXPECT_EQ(BAD_OPCODE, drv.cmd(0xffff));
    vrnic_cmd c{};
    c.hdr.opcode = VRNIC_CMD_NOP;
    c.hdr.flags = 1;
    EXPECT_EQ(BAD_PARAM, drv.cmd(c));
    c = {};
    c.hdr.opcode = VRNIC_CMD_NOP;
    c.payload[111] = 1;
    EXPECT_EQ(BAD_PARAM, drv.cmd(c));
    c = {};
    c.hdr.opcode = VRNIC_CMD_CREATE_PD;
    c.payload[8] = 1; // right after the 8-byte request
    EXPECT_EQ(BAD_PARAM, drv.cmd(c));
    EXPECT_NE(0u, c.hdr.syndrome); // the device says where
}

TEST_F(Commands, ResponseOverwritesPayloadAndKeepsSeq) {
    vrnic_cmd c{};
    c.hdr.opcode = VRNIC_CMD_CREATE_PD;
    ASSERT_EQ(OK, drv.cmd(c));
    EXPECT_NE(0u, c.create_pd_resp.pd);
    for (size_t i = sizeof(vrnic_cmd_create_pd_resp); i < VRNIC_CMD_PAYLOAD_SIZE; i++)
        EXPECT_EQ(0, c.payload[i]);
}

TEST_F(Commands, QueryPort) {
    vrnic_cmd_query_port q{};
    q.port_num = 1;
    vrnic_cmd r;
    ASSERT_EQ(OK, drv.cmd(VRNIC_CMD_QUERY_PORT, &q, sizeof(q), &r));
    EXPECT_EQ(VRNIC_PORT_ACTIVE, r.query_port_resp.state);
    EXPECT_EQ(VRNIC_PORT_PHYS_LINK_UP, r.query_port_resp.phys_state);
    EXPECT_EQ(16u, r.query_port_resp.gid_tbl_len);
    EXPECT_EQ(1u, r.query_port_resp.pkey_tbl_len);
    q.port_num = 2;
    EXPECT_EQ(BAD_PARAM, drv.cmd(VRNIC_CMD_QUERY_PORT, &q, sizeof(q)));
}

TEST_F(Commands, UserContextsAndPds) {
    uint32_t page;
    uint32_t u = drv.alloc_uctx(&page);
    EXPECT_NE(0u, u);
    EXPECT_GE(page, 2u);
    uint32_t pd = drv.create_pd(u);
    EXPECT_EQ(BUSY, destroy(VRNIC_CMD_DEALLOC_UCTX, u));
    EXPECT_EQ(BAD_HANDLE, destroy(VRNIC_CMD_DEALLOC_UCTX, 0)); // the kernel's
    vrnic_cmd_create_pd p{12345, 0};
    EXPECT_EQ(BAD_HANDLE, drv.cmd(VRNIC_CMD_CREATE_PD, &p, sizeof(p)));
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DESTROY_PD, pd));
    EXPECT_EQ(BAD_HANDLE, destroy(VRNIC_CMD_DESTROY_PD, pd)); // stale
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DEALLOC_UCTX, u));
    EXPECT_EQ(BAD_HANDLE, destroy(VRNIC_CMD_DEALLOC_UCTX, u));
    EXPECT_EQ(0u, counts().num_uctx);
}

TEST_F(Commands, UserContextsRunOutOfPages) {
    DeviceParams p;
    p.bar2_size = 64 << 10; // pages 2..15: 14 user contexts
    FakeDriver small(p);
    small.bring_up();
    for (int i = 0; i < 14; i++)
        EXPECT_NE(0u, small.alloc_uctx());
    EXPECT_EQ(NO_RESOURCE, small.cmd(VRNIC_CMD_ALLOC_UCTX));
}

TEST_F(Commands, RegMrValidation) {
    uint32_t pd = drv.create_pd(0);
    uint64_t buf = drv.alloc(3 * 4096);
    vrnic_cmd_reg_mr good = mr_req(pd, buf + 100, 2 * 4096);
    vrnic_cmd r;
    ASSERT_EQ(OK, drv.cmd(VRNIC_CMD_REG_MR, &good, sizeof(good), &r));
    EXPECT_NE(0u, r.reg_mr_resp.lkey);
    EXPECT_NE(0u, r.reg_mr_resp.rkey);

    struct Case {
        const char* what;
        uint32_t status;
        void (*mutate)(vrnic_cmd_reg_mr&);
    } cases[] = {
        {"bad PD", BAD_HANDLE, [](vrnic_cmd_reg_mr& m) { m.pd = 999; }},
        {"unknown access bit", BAD_PARAM, [](vrnic_cmd_reg_mr& m) { m.access = 0x20; }},
        {"MW_BIND on a physical MR", BAD_PARAM,
         [](vrnic_cmd_reg_mr& m) {
             m = {m.pd, VRNIC_ACCESS_MW_BIND, 0, 0, 0, 0, 0, 0, VRNIC_MR_F_PHYS};
         }},
        {"remote write without local write", BAD_PARAM,
         [](vrnic_cmd_reg_mr& m) { m.access = VRNIC_ACCESS_REMOTE_WRITE; }},
        {"remote atomic without local write", BAD_PARAM,
         [](vrnic_cmd_reg_mr& m) { m.access = VRNIC_ACCESS_REMOTE_ATOMIC; }},
        {"length 0", BAD_PARAM, [](vrnic_cmd_reg_mr& m) { m.length = 0; }},
        {"length > max_mr_size", BAD_PARAM, [](vrnic_cmd_reg_mr& m) { m.length = 1ull << 41; }},
        {"iova wraps", BAD_PARAM, [](vrnic_cmd_reg_mr& m) { m.iova = ~0ull - 10; }},
        {"npages too small", BAD_PARAM, [](vrnic_cmd_reg_mr& m) { m.npages--; }},
        {"npages too large", BAD_PARAM, [](vrnic_cmd_reg_mr& m) { m.npages++; }},
        {"page_shift 11", BAD_PARAM, [](vrnic_cmd_reg_mr& m) { m.page_shift = 11; }},
        {"page_shift 31", BAD_PARAM, [](vrnic_cmd_reg_mr& m) { m.page_shift = 31; }},
        {"pbl_level 3", BAD_PARAM, [](vrnic_cmd_reg_mr& m) { m.pbl_level = 3; }},
        {"unknown flags", BAD_PARAM, [](vrnic_cmd_reg_mr& m) { m.flags = 2; }},
        {"pbl past RAM", BAD_ADDR,
         [](vrnic_cmd_reg_mr& m) { m.pbl_addr = FakeDriver::kRamSize - 8; }},
        {"pbl misaligned", BAD_ADDR, [](vrnic_cmd_reg_mr& m) { m.pbl_addr += 4; }},
        {"pbl wraps", BAD_ADDR, [](vrnic_cmd_reg_mr& m) { m.pbl_addr = ~0ull - 7; }},
        {"phys with addresses", BAD_PARAM, [](vrnic_cmd_reg_mr& m) { m.flags = VRNIC_MR_F_PHYS; }},
    };
    for (auto& c : cases) {
        vrnic_cmd_reg_mr m = good;
        c.mutate(m);
        EXPECT_EQ(c.status, drv.cmd(VRNIC_CMD_REG_MR, &m, sizeof(m))) << c.what;
    }
    // Page addresses: misaligned, past RAM.
    for (uint64_t bad :
         {uint64_t(buf + 8), uint64_t(FakeDriver::kRamSize), uint64_t(~0ull & ~4095ull)}) {
        vrnic_cmd_reg_mr m = good;
        memcpy(drv.host(m.pbl_addr + 8, 8), &bad, 8);
        EXPECT_EQ(BAD_ADDR, drv.cmd(VRNIC_CMD_REG_MR, &m, sizeof(m))) << std::hex << bad;
    }
    EXPECT_EQ(1u, counts().num_mr); // failures left nothing behind
}

TEST_F(Commands, PhysicalMrOnlyForKernel) {
    uint32_t kpd = drv.create_pd(0);
    vrnic_cmd_reg_mr m{};
    m.pd = kpd;
    m.access = VRNIC_ACCESS_LOCAL_WRITE;
    m.flags = VRNIC_MR_F_PHYS;
    EXPECT_EQ(OK, drv.cmd(VRNIC_CMD_REG_MR, &m, sizeof(m)));
    m.access = VRNIC_ACCESS_LOCAL_WRITE | VRNIC_ACCESS_REMOTE_READ;
    EXPECT_EQ(BAD_PARAM, drv.cmd(VRNIC_CMD_REG_MR, &m, sizeof(m)));
    m.access = VRNIC_ACCESS_LOCAL_WRITE;
    m.pd = drv.create_pd(drv.alloc_uctx());
    EXPECT_EQ(BAD_PARAM, drv.cmd(VRNIC_CMD_REG_MR, &m, sizeof(m)));
}

TEST_F(Commands, IndirectPageListOfAnyLength) {
    uint32_t pd = drv.create_pd(0);
    // 1300 pages in reverse order: three leaves, the last one partial.
    std::vector<uint64_t> pages;
    uint64_t base = drv.alloc(1300 * 4096);
    for (int i = 1299; i >= 0; i--)
        pages.push_back(base + uint64_t(i) * 4096);
    MrInfo mr;
    EXPECT_EQ(OK, drv.reg_mr_pages(pd, 0x7f0000000000ull, 1300 * 4096, 12, pages,
                                   VRNIC_ACCESS_LOCAL_WRITE, &mr, VRNIC_PBL_INDIRECT));
    // A leaf address that is not page aligned is refused.
    vrnic_cmd_reg_mr m{};
    m.pd = pd;
    m.iova = 0;
    m.length = 600 * 4096;
    m.page_shift = 12;
    m.npages = 600;
    m.pbl_level = VRNIC_PBL_INDIRECT;
    m.pbl_addr = drv.alloc(16, 8);
    uint64_t leaves[2] = {drv.alloc(4096) + 8, drv.alloc(4096)};
    memcpy(drv.host(m.pbl_addr, 16), leaves, 16);
    EXPECT_EQ(BAD_ADDR, drv.cmd(VRNIC_CMD_REG_MR, &m, sizeof(m)));
}

TEST_F(Commands, DeregAndStaleKeys) {
    uint32_t pd = drv.create_pd(0);
    MrInfo mr = drv.reg_mr(pd, drv.alloc(4096), 4096, VRNIC_ACCESS_LOCAL_WRITE);
    EXPECT_EQ(BUSY, destroy(VRNIC_CMD_DESTROY_PD, pd));
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DEREG_MR, mr.handle));
    EXPECT_EQ(BAD_HANDLE, destroy(VRNIC_CMD_DEREG_MR, mr.handle));
    // The slot is reused round-robin; even when it comes back the key differs.
    MrInfo again = drv.reg_mr(pd, drv.alloc(4096), 4096, VRNIC_ACCESS_LOCAL_WRITE);
    EXPECT_NE(mr.lkey, again.lkey);
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DEREG_MR, again.handle));
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DESTROY_PD, pd));
}

TEST_F(Commands, EqValidation) {
    vrnic_cmd_create_eq e{};
    e.ring_addr = drv.alloc(16 << 6);
    e.log_depth = 6;
    e.vector = VRNIC_IRQ_COMP_BASE;
    vrnic_cmd r;
    ASSERT_EQ(OK, drv.cmd(VRNIC_CMD_CREATE_EQ, &e, sizeof(e), &r));
    EXPECT_GE(r.create_eq_resp.eqn, 1u);
    EXPECT_GE(r.create_eq_resp.db_slot, 1u);
    auto bad = e;
    bad.vector = 1;
    EXPECT_EQ(BAD_PARAM, drv.cmd(VRNIC_CMD_CREATE_EQ, &bad, sizeof(bad)));
    bad = e;
    bad.vector = 8;
    EXPECT_EQ(BAD_PARAM, drv.cmd(VRNIC_CMD_CREATE_EQ, &bad, sizeof(bad)));
    bad = e;
    bad.log_depth = 3;
    EXPECT_EQ(BAD_PARAM, drv.cmd(VRNIC_CMD_CREATE_EQ, &bad, sizeof(bad)));
    bad = e;
    bad.ring_addr += 16;
    EXPECT_EQ(BAD_ADDR, drv.cmd(VRNIC_CMD_CREATE_EQ, &bad, sizeof(bad)));
    // Six completion EQs at most.
    for (int i = 1; i < 6; i++)
        EXPECT_EQ(OK, drv.cmd(VRNIC_CMD_CREATE_EQ, &e, sizeof(e)));
    EXPECT_EQ(NO_RESOURCE, drv.cmd(VRNIC_CMD_CREATE_EQ, &e, sizeof(e)));
    EXPECT_EQ(6u, counts().num_eq);
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DESTROY_EQ, r.create_eq_resp.eqn));
    EXPECT_EQ(BAD_HANDLE, destroy(VRNIC_CMD_DESTROY_EQ, 0));
}

TEST_F(Commands, CqValidationAndBusy) {
    CqInfo cq = drv.create_cq(0, 4);
    vrnic_cmd_create_cq c{};
    c.uctx = 0;
    c.eqn = drv.comp_eqn();
    c.ring_addr = drv.alloc(64 << 4);
    c.log_depth = 4;
    auto bad = c;
    bad.flags = 1;
    EXPECT_EQ(BAD_PARAM, drv.cmd(VRNIC_CMD_CREATE_CQ, &bad, sizeof(bad)));
    bad = c;
    bad.log_depth = 0;
    EXPECT_EQ(BAD_PARAM, drv.cmd(VRNIC_CMD_CREATE_CQ, &bad, sizeof(bad)));
    bad = c;
    bad.log_depth = 17;
    EXPECT_EQ(BAD_PARAM, drv.cmd(VRNIC_CMD_CREATE_CQ, &bad, sizeof(bad)));
    bad = c;
    bad.eqn = 0; // the async EQ is not a completion EQ
    EXPECT_EQ(BAD_HANDLE, drv.cmd(VRNIC_CMD_CREATE_CQ, &bad, sizeof(bad)));
    bad = c;
    bad.uctx = 77;
    EXPECT_EQ(BAD_HANDLE, drv.cmd(VRNIC_CMD_CREATE_CQ, &bad, sizeof(bad)));
    bad = c;
    bad.ring_addr = FakeDriver::kRamSize - 512;
    EXPECT_EQ(BAD_ADDR, drv.cmd(VRNIC_CMD_CREATE_CQ, &bad, sizeof(bad)));
    EXPECT_EQ(BUSY, destroy(VRNIC_CMD_DESTROY_EQ, drv.comp_eqn()));

    uint32_t pd = drv.create_pd(0);
    QpInfo qp = drv.create_qp(0, pd, cq, cq);
    EXPECT_EQ(BUSY, destroy(VRNIC_CMD_DESTROY_CQ, cq.cqn));
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DESTROY_QP, qp.qpn));
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DESTROY_CQ, cq.cqn));
    EXPECT_EQ(BAD_HANDLE, destroy(VRNIC_CMD_DESTROY_CQ, cq.cqn));
}

TEST_F(Commands, QpCreateValidation) {
    uint32_t u = drv.alloc_uctx();
    uint32_t upd = drv.create_pd(u);
    CqInfo ucq = drv.create_cq(u, 4);
    uint32_t kpd = drv.create_pd(0);
    CqInfo kcq = drv.create_cq(0, 4);

    vrnic_cmd_create_qp c{};
    c.uctx = u;
    c.pd = upd;
    c.qp_type = VRNIC_QPT_RC;
    c.send_cqn = c.recv_cqn = ucq.cqn;
    c.sq_addr = drv.alloc(1 << 14);
    c.sq_log_depth = 6;
    c.sq_wqe_shift = 8;
    c.rq_addr = drv.alloc(1 << 12);
    c.rq_log_depth = 6;
    c.rq_wqe_shift = 6;
    c.max_send_sge = 4;
    c.max_recv_sge = 3;
    c.max_inline = 128;
    vrnic_cmd r;
    ASSERT_EQ(OK, drv.cmd(VRNIC_CMD_CREATE_QP, &c, sizeof(c), &r));
    EXPECT_GE(r.create_qp_resp.qpn, uint32_t(VRNIC_QPN_MIN));
    EXPECT_LT(r.create_qp_resp.qpn, 1u << 24);

    struct Case {
        const char* what;
        uint32_t status;
        std::function<void(vrnic_cmd_create_qp&)> mutate;
    } cases[] = {
        {"GSI of a user context", BAD_PARAM, [](auto& q) { q.qp_type = VRNIC_QPT_GSI; }},
        {"type 5", BAD_PARAM, [](auto& q) { q.qp_type = 5; }},
        {"flags", BAD_PARAM, [](auto& q) { q.flags = 2; }},
        {"reserved0", BAD_PARAM, [](auto& q) { q.reserved0 = 1; }},
        {"PD of the kernel", BAD_HANDLE, [&](auto& q) { q.pd = kpd; }},
        {"CQ of the kernel", BAD_HANDLE, [&](auto& q) { q.recv_cqn = kcq.cqn; }},
        {"srq", BAD_HANDLE, [](auto& q) { q.srqn = 5; }},
        {"sq depth 0", BAD_PARAM, [](auto& q) { q.sq_log_depth = 0; }},
        {"sq depth > max_qp_wr", BAD_PARAM, [](auto& q) { q.sq_log_depth = 16; }},
        {"sq shift 5", BAD_PARAM, [](auto& q) { q.sq_wqe_shift = 5; }},
        {"rq shift 12", BAD_PARAM, [](auto& q) { q.rq_wqe_shift = 12; }},
        {"sq misaligned", BAD_ADDR, [](auto& q) { q.sq_addr += 64; }},
        {"rq outside RAM", BAD_ADDR, [](auto& q) { q.rq_addr = FakeDriver::kRamSize; }},
        {"ring > 4 MiB", BAD_PARAM,
         [](auto& q) {
             q.sq_log_depth = 12;
             q.sq_wqe_shift = 11;
         }},
        {"sge > stride", BAD_PARAM, [](auto& q) { q.max_send_sge = 14; }},
        {"sge > max_sge", BAD_PARAM,
         [](auto& q) {
             q.sq_wqe_shift = 11;
             q.max_send_sge = 17;
         }},
        {"recv sge > stride", BAD_PARAM, [](auto& q) { q.max_recv_sge = 4; }},
        {"inline > stride", BAD_PARAM, [](auto& q) { q.max_inline = 201; }},
        {"inline > max_inline", BAD_PARAM,
         [](auto& q) {
             q.sq_wqe_shift = 10;
             q.max_inline = 257;
         }},
    };
    for (auto& cs : cases) {
        vrnic_cmd_create_qp q = c;
        cs.mutate(q);
        EXPECT_EQ(cs.status, drv.cmd(VRNIC_CMD_CREATE_QP, &q, sizeof(q))) << cs.what;
    }
    EXPECT_EQ(1u, counts().num_qp);
}

TEST_F(Commands, DoorbellSlotsRunOut) {
    uint32_t u = drv.alloc_uctx();
    // 511 object slots per page.
    for (int i = 0; i < 511; i++) {
        vrnic_cmd_create_cq c{};
        c.uctx = u;
        if (!drv.comp_eqn())
            drv.create_cq(0, 1);
        c.eqn = drv.comp_eqn();
        c.ring_addr = drv.alloc(128);
        c.log_depth = 1;
        ASSERT_EQ(OK, drv.cmd(VRNIC_CMD_CREATE_CQ, &c, sizeof(c))) << i;
    }
    vrnic_cmd_create_cq c{};
    c.uctx = u;
    c.eqn = drv.comp_eqn();
    c.ring_addr = drv.alloc(128);
    c.log_depth = 1;
    EXPECT_EQ(NO_RESOURCE, drv.cmd(VRNIC_CMD_CREATE_CQ, &c, sizeof(c)));
}

TEST_F(Commands, SetGidValidation) {
    const vrnic_cmd_set_gid g = gid_entry(3);
    EXPECT_EQ(OK, drv.cmd(VRNIC_CMD_SET_GID, &g, sizeof(g)));
    auto bad = g;
    bad.index = 16;
    EXPECT_EQ(BAD_PARAM, drv.cmd(VRNIC_CMD_SET_GID, &bad, sizeof(bad)));
    bad = g;
    bad.gid_type = VRNIC_GID_TYPE_IB;
    EXPECT_EQ(UNSUPPORTED, drv.cmd(VRNIC_CMD_SET_GID, &bad, sizeof(bad)));
    bad = g;
    bad.vlan_id = 4096;
    EXPECT_EQ(BAD_PARAM, drv.cmd(VRNIC_CMD_SET_GID, &bad, sizeof(bad)));
    bad = g;
    bad.flags = 0; // delete must carry no data
    EXPECT_EQ(BAD_PARAM, drv.cmd(VRNIC_CMD_SET_GID, &bad, sizeof(bad)));
    vrnic_cmd_set_gid del{};
    del.index = 3;
    EXPECT_EQ(OK, drv.cmd(VRNIC_CMD_SET_GID, &del, sizeof(del)));
}

TEST_F(Commands, AhChecksItsAddressVectorAndHoldsItsPd) {
    ASSERT_EQ(OK, drv.set_gid(1));
    const uint32_t pd = drv.create_pd(0);
    vrnic_cmd_create_ah c{};
    c.pd = pd;
    c.av.sgid_index = 1;
    c.av.vlan_id = VRNIC_VLAN_NONE;
    c.av.sl = 3;
    vrnic_cmd r{};
    ASSERT_EQ(OK, drv.cmd(VRNIC_CMD_CREATE_AH, &c, sizeof(c), &r));
    const uint32_t ah = r.create_ah_resp.ah;
    EXPECT_NE(0u, ah);
    EXPECT_EQ(1u, counts().num_ah);

    auto bad = c;
    bad.av.sgid_index = 2; // not a valid entry
    EXPECT_EQ(BAD_PARAM, drv.cmd(VRNIC_CMD_CREATE_AH, &bad, sizeof(bad)));
    bad = c;
    bad.av.sl = 16;
    EXPECT_EQ(BAD_PARAM, drv.cmd(VRNIC_CMD_CREATE_AH, &bad, sizeof(bad)));
    bad = c;
    bad.av.flow_label = 1u << 20;
    EXPECT_EQ(BAD_PARAM, drv.cmd(VRNIC_CMD_CREATE_AH, &bad, sizeof(bad)));
    bad = c;
    bad.reserved = 1;
    EXPECT_EQ(BAD_PARAM, drv.cmd(VRNIC_CMD_CREATE_AH, &bad, sizeof(bad)));
    bad = c;
    bad.pd = pd + 100;
    EXPECT_EQ(BAD_HANDLE, drv.cmd(VRNIC_CMD_CREATE_AH, &bad, sizeof(bad)));
    EXPECT_EQ(1u, counts().num_ah);

    EXPECT_EQ(BUSY, destroy(VRNIC_CMD_DESTROY_PD, pd));
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DESTROY_AH, ah));
    EXPECT_EQ(BAD_HANDLE, destroy(VRNIC_CMD_DESTROY_AH, ah));
    EXPECT_EQ(0u, counts().num_ah);
    EXPECT_EQ(OK, destroy(VRNIC_CMD_DESTROY_PD, pd));
}

TEST_F(Commands, ResizeCqKeepsOutstandingCqes) {
    uint32_t pd = drv.create_pd(0);
    CqInfo cq = drv.create_cq(0, 2); // 4 entries
    QpInfo a = drv.create_qp(0, pd, cq, cq);
    QpInfo b = drv.create_qp(0, pd, cq, cq);
    drv.connect_pair(a, b);
    uint64_t g = drv.alloc(4096);
    MrInfo mr = drv.reg_mr(pd, g, 4096, VRNIC_ACCESS_ALL);
    for (int i = 0; i < 6; i++) {
        SendWr w;
        w.wr_id = 100 + i;
        w.opcode = VRNIC_WR_RDMA_WRITE;
        w.remote_addr = mr.iova;
        w.rkey = mr.rkey;
        w.sge = {{mr.iova + 64, 8, mr.lkey}};
        drv.post_send(a, w);
        if (i == 2) {
            drv.run();
            ASSERT_EQ(2u, drv.poll_cq(cq, 2).size()); // consume two: ci=2, pi=3
        }
    }
    // Grow to 16 entries before the rest is written.
    vrnic_cmd_resize_cq rz{};
    rz.cqn = cq.cqn;
    rz.log_depth = 4;
    rz.ring_addr = drv.alloc(64 << 4);
    ASSERT_EQ(OK, drv.cmd(VRNIC_CMD_RESIZE_CQ, &rz, sizeof(rz)));
    cq.ring = rz.ring_addr;
    cq.log_depth = 4;
    drv.run();
    auto c = drv.poll_cq(cq);
    ASSERT_EQ(4u, c.size());
    for (int i = 0; i < 4; i++)
        EXPECT_EQ(uint64_t(102 + i), c[i].wr_id);
    // Shrinking below the outstanding count is refused and changes nothing.
    for (int i = 0; i < 3; i++) {
        SendWr w;
        w.wr_id = 200 + i;
        w.opcode = VRNIC_WR_RDMA_WRITE;
        drv.post_send(a, w);
    }
    drv.run();
    rz.log_depth = 1;
    rz.ring_addr = drv.alloc(128);
    EXPECT_EQ(BAD_PARAM, drv.cmd(VRNIC_CMD_RESIZE_CQ, &rz, sizeof(rz)));
    c = drv.poll_cq(cq); // still in the 16-entry ring
    ASSERT_EQ(3u, c.size());
    EXPECT_EQ(202u, c[2].wr_id);
    // With nothing outstanding any depth is fine.
    EXPECT_EQ(OK, drv.cmd(VRNIC_CMD_RESIZE_CQ, &rz, sizeof(rz)));
    // An impossible consumer index is refused.
    vrnic_db_slot* s = drv.slot(cq.db_page, cq.db_slot);
    s->cq.ci = cq.ci + 100;
    rz.log_depth = 4;
    rz.ring_addr = drv.alloc(64 << 4);
    EXPECT_EQ(BAD_PARAM, drv.cmd(VRNIC_CMD_RESIZE_CQ, &rz, sizeof(rz)));
}

} // namespace
} // namespace vrnic::test
