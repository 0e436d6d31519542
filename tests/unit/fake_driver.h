// A test harness that plays guest driver and provider against the model:
// it owns a fake guest RAM (memfd) and the BAR2 memory, writes commands,
// WQEs and doorbells exactly as the spec says, and steps the device with
// poll_once(), so every test is deterministic and needs no QEMU or threads.
#pragma once

#include "device.h"
#include "guest_memory.h"
#include "shared_region.h"

#include <gtest/gtest.h>
#include <vrnic_dev.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

namespace vrnic::test {

struct MrInfo {
    uint32_t handle = 0, lkey = 0, rkey = 0;
    uint64_t iova = 0;
    uint64_t len = 0;
};

struct CqInfo {
    uint32_t cqn = 0, db_slot = 0, uctx = 0, db_page = 0;
    uint64_t ring = 0;
    uint32_t log_depth = 0;
    uint32_t ci = 0; // the consumer's free-running index
    uint16_t next_sn = 0, sol_sn = 0;
};

struct QpInfo {
    uint32_t qpn = 0, db_slot = 0, uctx = 0, db_page = 0, pd = 0;
    uint64_t sq = 0, rq = 0;
    uint32_t sq_log = 0, sq_shift = 0, rq_log = 0, rq_shift = 0;
    uint32_t sq_pi = 0, rq_pi = 0;
};

struct QpOpts {
    uint32_t sq_log = 6, sq_shift = 8, rq_log = 6, rq_shift = 6;
    uint16_t max_send_sge = 4, max_recv_sge = 3;
    uint32_t max_inline = 128;
    uint16_t flags = 0;
};

// A send WQE as the provider would build it.
struct SendWr {
    uint64_t wr_id = 0;
    uint8_t opcode = VRNIC_WR_SEND;
    uint8_t flags = VRNIC_WQE_F_SIGNALED;
    uint32_t imm_be = 0;
    uint64_t remote_addr = 0;
    uint32_t rkey = 0;
    uint64_t compare_add = 0, swap = 0;
    std::vector<vrnic_sge> sge;
    std::vector<uint8_t> inline_data; // used with VRNIC_WQE_F_INLINE
};

// A signaled RDMA WRITE of len bytes from src at src_off to dst at dst_off.
inline SendWr rdma_write(const MrInfo& src, uint64_t src_off, uint32_t len, const MrInfo& dst,
                         uint64_t dst_off = 0) {
    SendWr w;
    w.opcode = VRNIC_WR_RDMA_WRITE;
    w.remote_addr = dst.iova + dst_off;
    w.rkey = dst.rkey;
    w.sge = {{src.iova + src_off, len, src.lkey}};
    return w;
}

class FakeDriver {
  public:
    static constexpr uint64_t kRamSize = 64ull << 20;

    explicit FakeDriver(DeviceParams p = DeviceParams{}, uint64_t ram = kRamSize);

    // ---- memory -----------------------------------------------------------
    // Zeroed guest memory from a bump allocator (never returns GPA 0).
    uint64_t alloc(uint64_t bytes, uint64_t align = 4096);
    uint8_t* host(uint64_t gpa, uint64_t len = 1) const { return mem_->at(gpa, len); }
    void fill(uint64_t gpa, uint64_t len, uint8_t seed); // deterministic pattern
    bool check_pattern(uint64_t gpa, uint64_t len, uint8_t seed) const;

    // ---- device -----------------------------------------------------------
    Device& dev() { return *dev_; }
    vrnic_regs* regs() const { return reinterpret_cast<vrnic_regs*>(bar2_->data()); }
    vrnic_db_slot* slot(uint32_t page, uint32_t s) const {
        return reinterpret_cast<vrnic_db_slot*>(bar2_->data() + uint64_t(page) * 4096) + s;
    }
    uint64_t& clock() { return now_; }
    // Interrupts raised on vector v since the last call.
    uint32_t take_irqs(uint32_t v);
    // Steps the device until it reports no progress (bounded).
    void run(unsigned max_passes = 10000);

    // ---- bring-up and commands ---------------------------------------------
    void reset();
    void bring_up(uint32_t cmdq_log = 4, uint32_t aeq_log = 8, bool eth = true);
    // Posts one command, steps the device, returns the status; the response
    // is copied back into c.
    uint32_t cmd(vrnic_cmd& c);
    uint32_t cmd(uint16_t opcode, const void* req = nullptr, size_t len = 0,
                 vrnic_cmd* resp = nullptr);
    std::vector<vrnic_eqe> take_async_events();

    // ---- objects (asserting success) ----------------------------------------
    uint32_t alloc_uctx(uint32_t* db_page = nullptr);
    uint32_t comp_eqn() const { return comp_eqn_; }
    uint32_t create_pd(uint32_t uctx = 0);
    uint32_t create_eq(uint32_t log_depth = 6, uint32_t vector = VRNIC_IRQ_COMP_BASE);
    // Registers [gpa, gpa + len) of a physically contiguous buffer with
    // iova == gpa (or `iova` when non-zero) and 4 KiB pages.
    MrInfo reg_mr(uint32_t pd, uint64_t gpa, uint64_t len, uint32_t access, uint64_t iova = 0);
    // Same, but the pages are given explicitly (any order, any count).
    uint32_t reg_mr_pages(uint32_t pd, uint64_t iova, uint64_t len, uint32_t page_shift,
                          const std::vector<uint64_t>& pages, uint32_t access, MrInfo* out,
                          uint8_t level = 0);
    CqInfo create_cq(uint32_t uctx, uint32_t log_depth = 8);
    QpInfo create_qp(uint32_t uctx, uint32_t pd, const CqInfo& scq, const CqInfo& rcq,
                     const QpOpts& o = QpOpts{});
    uint32_t modify_qp(const QpInfo& qp, uint32_t mask, const vrnic_qp_attr& a);
    // RESET -> INIT -> RTR -> RTS against dest_qpn, with RNR parameters and
    // PSNs (a pair agrees when each side's sq_psn is the other's rq_psn).
    static constexpr uint32_t kPsn = 0x123;
    void connect(const QpInfo& qp, uint32_t dest_qpn, uint8_t rnr_retry = 7,
                 uint8_t min_rnr_timer = 1, uint32_t access = VRNIC_ACCESS_ALL,
                 uint32_t rq_psn = kPsn, uint32_t sq_psn = kPsn);
    void connect_pair(const QpInfo& a, const QpInfo& b);
    vrnic_qp_attr query_qp(const QpInfo& qp);

    // ---- data path ------------------------------------------------------------
    // Writes the WQE at sq_pi and publishes sq_pi (no device step).
    void post_send(QpInfo& qp, const SendWr& wr, bool publish = true);
    void post_recv(QpInfo& qp, uint64_t wr_id, const std::vector<vrnic_sge>& sge,
                   bool publish = true);
    void publish(const QpInfo& qp);
    // Consumes the valid CQEs and publishes the new ci.
    std::vector<vrnic_cqe> poll_cq(CqInfo& cq, unsigned max = 1u << 20);
    void arm_cq(CqInfo& cq, bool solicited_only);

    uint8_t gid[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x50, 0x54, 0, 0xff, 0xfe, 0x56, 0x52, 0x01};

  private:
    uint64_t brk_ = 1 << 20; // keep the first MiB free, like real RAM
    uint64_t ram_size_;
    std::unique_ptr<GuestMemory> mem_;
    std::unique_ptr<SharedRegion> bar2_;
    std::unique_ptr<Device> dev_;
    uint64_t now_ = 1'000'000'000;
    std::vector<uint32_t> irqs_;
    uint64_t cmdq_ = 0, aeq_ = 0;
    uint32_t cmdq_log_ = 0, aeq_log_ = 0, aeq_ci_ = 0;
    uint32_t cmd_seq_ = 0;
    uint32_t comp_eqn_ = 0;
    std::map<uint32_t, uint32_t> uctx_page_; // context -> doorbell page
};

} // namespace vrnic::test
