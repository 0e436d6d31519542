// The guest-driver harness (tests/harness/guest_driver.h) for GoogleTest:
// the same calls, each checking its step succeeded (a failed command, a
// device that never goes idle, RAM run out fail the test), and the objects
// made with guest memory from the harness's heap.
#pragma once

#include "guest_driver.h"

#include <gtest/gtest.h>

namespace vrnic::test {

// Every remote right, and local write: an MR every opcode may target.
inline constexpr uint32_t kRemoteAll = VRNIC_ACCESS_LOCAL_WRITE | VRNIC_ACCESS_REMOTE_WRITE |
                                       VRNIC_ACCESS_REMOTE_READ | VRNIC_ACCESS_REMOTE_ATOMIC;

class FakeDriver : public GuestDriver {
  public:
    static constexpr uint64_t kRamSize = 64ull << 20;
    static constexpr uint32_t kPsn = Path::kPsn;

    explicit FakeDriver(DeviceParams p = DeviceParams{}, uint64_t ram = kRamSize);

    // ---- memory and device ---------------------------------------------------
    uint64_t alloc(uint64_t bytes, uint64_t align = 4096);
    void run(unsigned max_passes = 10000);

    // ---- bring-up and commands ---------------------------------------------
    void reset();
    // `gid`: the port's GID, which the RDMA core adds before any QP connects.
    void bring_up(uint32_t cmdq_log = 4, uint32_t aeq_log = 8, bool eth = true,
                  const uint8_t* gid = kGid);
    uint32_t cmd(vrnic_cmd& c);
    uint32_t cmd(uint16_t opcode, const void* req = nullptr, size_t len = 0,
                 vrnic_cmd* resp = nullptr);

    // ---- objects (asserting success) ----------------------------------------
    uint32_t alloc_uctx(uint32_t* db_page = nullptr);
    uint32_t comp_eqn() const { return comp_eqn_; }
    uint32_t create_pd(uint32_t uctx = 0);
    uint32_t create_eq(uint32_t log_depth = 6, uint32_t vector = VRNIC_IRQ_COMP_BASE);
    // Registers [gpa, gpa + len) of a physically contiguous buffer with
    // iova == gpa (or `iova` when non-zero) and 4 KiB pages.
    MrInfo reg_mr(uint32_t pd, uint64_t gpa, uint64_t len, uint32_t access, uint64_t iova = 0);
    // A new buffer of `len` bytes registered in `pd`, filled with pattern
    // `seed` unless it is 0; its address in `*gpa` when asked.
    MrInfo buffer(uint32_t pd, uint64_t len, uint32_t access, uint8_t seed = 0,
                  uint64_t* gpa = nullptr);
    // CQs share one completion EQ, made with the first.
    CqInfo create_cq(uint32_t uctx, uint32_t log_depth = 8);
    QpInfo create_qp(uint32_t uctx, uint32_t pd, const CqInfo& scq, const CqInfo& rcq,
                     const QpOpts& o = QpOpts{});
    uint32_t modify_qp(const QpInfo& qp, uint32_t mask, const vrnic_qp_attr& a);
    // A command on one object (DEREG_MR, DESTROY_QP, ...): its status.
    uint32_t destroy(uint16_t op, uint32_t handle) {
        vrnic_cmd_handle c{handle, 0};
        return cmd(op, &c, sizeof(c));
    }
    // An SRQ of 2^log_depth WQEs of 2^wqe_shift bytes, ring from the heap.
    SrqInfo create_srq(uint32_t uctx, uint32_t pd, uint32_t log_depth = 4, uint32_t wqe_shift = 6,
                       uint32_t max_sge = 3, uint32_t srq_limit = 0);
    using GuestDriver::create_srq;
    // RESET -> INIT -> RTR -> RTS against dest_qpn, with RNR parameters and
    // PSNs.
    void connect(const QpInfo& qp, uint32_t dest_qpn, uint8_t rnr_retry = 7,
                 uint8_t min_rnr_timer = 1, uint32_t access = VRNIC_ACCESS_ALL,
                 uint32_t rq_psn = kPsn, uint32_t sq_psn = kPsn);
    void connect_pair(const QpInfo& a, const QpInfo& b);
    // RESET -> INIT -> ... -> last along p (of any QP type).
    void activate(const QpInfo& qp, const Path& p, uint8_t last = VRNIC_QPS_RTS);
    uint32_t create_ah(uint32_t pd, const vrnic_av& av);
    vrnic_qp_attr query_qp(const QpInfo& qp);

  private:
    uint32_t comp_eqn_ = 0;
};

} // namespace vrnic::test
