// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// A guest driver and provider played against the model in-process, for the
// unit tests and the fuzzers alike: it owns a fake guest RAM (memfd) and the
// BAR2 memory, writes commands, WQEs and doorbells exactly as the spec says,
// and steps the device with poll_once(), so every run is deterministic and
// needs no QEMU or threads. It asserts nothing: each step reports by its
// return value, and the caller (a test, a fuzz target) decides what a
// failure means.
#pragma once

#include "device.h"
#include "guest_memory.h"
#include "ring_slot.h"
#include "shared_region.h"

#include <vrnic_dev.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace vrnic::test {

// The port GID installed at index 0; a QP whose dgid is this GID reaches a
// responder in the same device.
inline constexpr uint8_t kGid[16] = {0xfe, 0x80, 0, 0,    0,    0,    0,    0,
                                     0x50, 0x54, 0, 0xff, 0xfe, 0x56, 0x52, 0x01};

// The SET_GID entry of kGid at `index`, RoCE v2, no VLAN.
vrnic_cmd_set_gid gid_entry(uint32_t index, const uint8_t* gid = kGid);

// A bump allocator over [next, end) of guest RAM; take() is 0 when full.
struct Arena {
    uint64_t next = 0, end = 0;
    uint64_t take(uint64_t bytes, uint64_t align) {
        const uint64_t a = (next + align - 1) & ~(align - 1);
        if (a > end || bytes > end - a)
            return 0;
        next = a + bytes;
        return a;
    }
};

// The rings latched at DRIVER_OK. With eth false the Ethernet ring
// registers are left as they are.
struct RingSetup {
    uint64_t cmdq_base = 0;
    uint32_t cmdq_log = 0;
    uint64_t aeq_base = 0;
    uint32_t aeq_log = 0;
    bool eth = true;
    uint64_t tx_base = 0;
    uint32_t tx_log = 0;
    uint64_t rx_base = 0;
    uint32_t rx_log = 0;
};

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

// The type, ring layout and limits CREATE_QP asks for.
struct QpOpts {
    uint32_t sq_log = 6, sq_shift = 8, rq_log = 6, rq_shift = 6;
    uint16_t max_send_sge = 4, max_recv_sge = 3;
    uint32_t max_inline = 128;
    uint16_t flags = 0;
    uint8_t qp_type = VRNIC_QPT_RC;
    uint32_t srqn = VRNIC_HANDLE_NONE; // set: no RQ (rq_* and max_recv_sge sent as 0)
};

struct SrqInfo {
    uint32_t srqn = 0, db_slot = 0, uctx = 0, db_page = 0;
    uint64_t ring = 0;
    uint32_t log_depth = 0, wqe_shift = 0, max_sge = 0;
    uint32_t pi = 0; // the producer's free-running index
};

struct QpInfo {
    uint32_t qpn = 0, db_slot = 0, uctx = 0, db_page = 0, pd = 0;
    uint64_t sq = 0, rq = 0;
    uint32_t sq_log = 0, sq_shift = 0, rq_log = 0, rq_shift = 0;
    uint32_t max_send_sge = 0, max_recv_sge = 0, max_inline = 0;
    uint32_t sq_pi = 0, rq_pi = 0; // the producer's free-running indices
};

// The attributes of RESET -> INIT -> RTR -> RTS for a QP of qp_type. A pair
// agrees on PSNs when each side's sq_psn is the other's rq_psn. A UD QP
// takes only qkey (and sq_psn); UC takes neither the RNR nor the RD-atomic
// nor the retry attributes.
struct Path {
    static constexpr uint32_t kPsn = 0x123;
    uint8_t qp_type = VRNIC_QPT_RC;
    uint32_t qkey = 0;
    uint32_t dest_qpn = 0;
    uint32_t access = VRNIC_ACCESS_ALL;
    uint8_t max_dest_rd_atomic = 4, max_rd_atomic = 4;
    uint8_t rnr_retry = 7, min_rnr_timer = 1, retry_cnt = 7, timeout = 14;
    uint8_t mtu = VRNIC_MTU_4096, hop_limit = 64;
    uint32_t rq_psn = kPsn, sq_psn = kPsn;
    const uint8_t* dgid = kGid; // 16 bytes: the responder's port GID
};

// The MODIFY_QP a driver sends to move QP qpn to `state` along p: the
// attributes that transition requires for p.qp_type (the state alone for
// RESET, ERR, SQD).
vrnic_cmd_modify_qp modify_to(uint32_t qpn, uint8_t state, const Path& p);

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
    // UD: the WQE's ud fields instead of rdma.
    bool ud = false;
    uint32_t ah = 0, remote_qpn = 0, remote_qkey = 0;
    uint32_t xrc_srqn = 0; // XRC initiators: the remote XRC SRQ
    // 1.4 kernel UD: the WQE carries `av` (VRNIC_WQE_F_AV) instead of an AH.
    bool with_av = false;
    vrnic_av av{};
    // 1.7: LOCAL_INV's and SEND_WITH_INV's key; REG_MR's union.
    uint32_t inv_rkey = 0;
    vrnic_wqe_reg_mr reg{};
    vrnic_wqe_bind_mw bind{}; // 1.8: BIND_MW's union
};

// `len` bytes at `off` of MR `m`, as an SGE.
inline vrnic_sge sge(const MrInfo& m, uint64_t off, uint32_t len) {
    return vrnic_sge{m.iova + off, len, m.lkey};
}

// A signaled RDMA operation `op` of `len` bytes between the start of
// `local` and `off` in `remote`.
inline SendWr rdma_wr(uint8_t op, const MrInfo& local, uint32_t len, const MrInfo& remote,
                      uint64_t off = 0) {
    SendWr w;
    w.opcode = op;
    w.sge = {sge(local, 0, len)};
    w.remote_addr = remote.iova + off;
    w.rkey = remote.rkey;
    return w;
}

// `key` with its low 8 bits (the key byte a REG_MR or BIND_MW sets) `b`.
inline uint32_t with_key_byte(uint32_t key, uint8_t b) {
    return (key & ~0xffu) | b;
}

// 1.7: a signaled REG_MR of the page list at pbl under `key`.
inline SendWr reg_mr_wr(uint32_t key, uint64_t iova, uint64_t len, uint64_t pbl, uint8_t access,
                        uint8_t page_shift = 12) {
    SendWr w;
    w.opcode = VRNIC_WR_REG_MR;
    w.reg.iova = iova;
    w.reg.length = len;
    w.reg.pbl_addr = pbl;
    w.reg.key = key;
    w.reg.access = access;
    w.reg.page_shift = page_shift;
    return w;
}

// 1.7: a signaled LOCAL_INV of `key`.
inline SendWr local_inv_wr(uint32_t key) {
    SendWr w;
    w.opcode = VRNIC_WR_LOCAL_INV;
    w.inv_rkey = key;
    return w;
}

// 1.8: a signaled BIND_MW giving window key `rkey` [addr, addr + len) of
// the MR `mr_lkey` names, with `access`.
inline SendWr bind_mw_wr(uint32_t rkey, uint32_t mr_lkey, uint64_t addr, uint64_t len,
                         uint32_t access) {
    SendWr w;
    w.opcode = VRNIC_WR_BIND_MW;
    w.bind = {addr, len, rkey, mr_lkey, access, 0};
    return w;
}

// A signaled UD SEND of sge through `ah` to QP remote_qpn with remote_qkey.
inline SendWr ud_send(uint32_t ah, uint32_t remote_qpn, uint32_t remote_qkey,
                      std::vector<vrnic_sge> sge) {
    SendWr w;
    w.ud = true;
    w.ah = ah;
    w.remote_qpn = remote_qpn;
    w.remote_qkey = remote_qkey;
    w.sge = std::move(sge);
    return w;
}

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

class GuestDriver {
  public:
    // The command status when the device did not complete the command, or
    // completed it with another hdr.seq.
    static constexpr uint32_t kCmdLost = ~0u;

    // Guest RAM of ram_bytes; the heap for alloc() starts at 1 MiB, as the
    // first MiB of real RAM is not the driver's. ok() says whether RAM and
    // BAR2 could be made.
    GuestDriver(const DeviceParams& p, uint64_t ram_bytes);
    bool ok() const { return dev_ != nullptr; }
    const std::string& error() const { return err_; }

    // ---- memory -----------------------------------------------------------
    // Zeroed memory from the heap (never GPA 0); 0 when RAM is exhausted.
    uint64_t alloc(uint64_t bytes, uint64_t align = 4096) { return alloc_in(heap_, bytes, align); }
    uint64_t alloc_in(Arena& a, uint64_t bytes, uint64_t align);
    uint8_t* host(uint64_t gpa, uint64_t len = 1) const { return mem_->at(gpa, len); }
    bool put(uint64_t gpa, const void* src, uint64_t len) const;
    void clear_ram() const;
    uint64_t ram_size() const { return mem_->size(); }
    void fill(uint64_t gpa, uint64_t len, uint8_t seed); // deterministic pattern
    bool check_pattern(uint64_t gpa, uint64_t len, uint8_t seed) const;

    // ---- device -----------------------------------------------------------
    Device& dev() { return *dev_; }
    vrnic_regs* regs() const { return reinterpret_cast<vrnic_regs*>(bar2_->data()); }
    uint32_t bar2_pages() const { return static_cast<uint32_t>(bar2_->size() / VRNIC_PAGE_SIZE); }
    vrnic_db_slot* slot(uint32_t page, uint32_t s) const {
        return reinterpret_cast<vrnic_db_slot*>(bar2_->data() + uint64_t(page) * VRNIC_PAGE_SIZE) +
               s;
    }
    uint64_t& clock() { return now_; }
    // Interrupts raised on vector v since the last call.
    uint32_t take_irqs(uint32_t v);
    // Runs after every device pass the harness makes (an invariant check).
    void on_pass(std::function<void()> fn) { on_pass_ = std::move(fn); }
    // One device pass; true when it made progress.
    bool poll();
    // Steps the device until it reports no progress; false when it still
    // does after max_passes.
    bool run(unsigned max_passes = 10000);

    // ---- bring-up and commands ---------------------------------------------
    // Clears DRIVER_OK and asks for a reset; true when the device acked it.
    bool reset();
    // Latches r, sets DRIVER_OK and lets the device take it; false when the
    // device refused the configuration (FATAL).
    bool driver_ok(const RingSetup& r);
    // Writes c into the next command slot as it is, without publishing it;
    // returns its index.
    uint32_t write_cmd(const vrnic_cmd& c);
    // Publishes every command written so far and lets the device run them.
    void publish_cmds();
    vrnic_cmd response(uint32_t idx) const;
    uint32_t cmd_pi() const { return cmd_pi_; }
    // Posts one command with the next hdr.seq, steps the device and copies
    // the response back into c; returns its status, or kCmdLost.
    uint32_t cmd(vrnic_cmd& c);
    uint32_t cmd(uint16_t opcode, const void* req = nullptr, size_t len = 0,
                 vrnic_cmd* resp = nullptr);
    std::vector<vrnic_eqe> take_async_events();

    // ---- objects: each returns the command's status -------------------------
    uint32_t set_gid(uint32_t index, const uint8_t* gid = kGid);
    uint32_t alloc_uctx(uint32_t* uctx, uint32_t* db_page);
    uint32_t create_pd(uint32_t uctx, uint32_t* pd);
    uint32_t create_eq(uint64_t ring, uint32_t log_depth, uint32_t vector, uint32_t* eqn,
                       uint32_t* db_slot = nullptr);
    uint32_t reg_mr(const vrnic_cmd_reg_mr& m, MrInfo* out);
    // Registers [iova, iova + len) over the given pages (any order, any
    // count), writing the page list into `pbl` (the heap when null): one
    // level, or with level 0 two when more than one page of entries.
    uint32_t reg_mr_pages(uint32_t pd, uint64_t iova, uint64_t len, uint32_t page_shift,
                          const std::vector<uint64_t>& pages, uint32_t access, MrInfo* out,
                          uint8_t level = 0, Arena* pbl = nullptr);
    uint32_t create_cq(uint32_t uctx, uint32_t eqn, uint64_t ring, uint32_t log_depth, CqInfo* out);
    uint32_t create_qp(uint32_t uctx, uint32_t pd, const CqInfo& scq, const CqInfo& rcq,
                       const QpOpts& o, uint64_t sq_addr, uint64_t rq_addr, QpInfo* out);
    uint32_t modify_qp(uint32_t qpn, uint32_t mask, const vrnic_qp_attr& a);
    uint32_t create_srq(const vrnic_cmd_create_srq& c, SrqInfo* out);
    uint32_t modify_srq(uint32_t srqn, uint32_t mask, uint32_t srq_limit, uint32_t max_wr = 0);
    // MODIFY_SRQ with MAX_WR: a new ring of 2^log_depth WQEs (allocated if
    // ring is 0); on success srq names the new ring.
    uint32_t resize_srq(SrqInfo& srq, uint32_t log_depth, uint64_t ring = 0);
    // Every MODIFY_QP from INIT up to `last` along p; the first failing
    // status, or 0.
    uint32_t connect(uint32_t qpn, const Path& p, uint8_t last = VRNIC_QPS_RTS);
    uint32_t query_qp(uint32_t qpn, vrnic_qp_attr* out);
    uint32_t create_ah(uint32_t pd, const vrnic_av& av, uint32_t* ah);

    // ---- data path ------------------------------------------------------------
    // Writes the WQE at sq_pi and publishes sq_pi (no device step).
    void post_send(QpInfo& qp, const SendWr& wr, bool publish = true);
    void post_recv(QpInfo& qp, uint64_t wr_id, const std::vector<vrnic_sge>& sge,
                   bool publish = true);
    void publish(const QpInfo& qp);
    // Writes a receive WQE at the SRQ's pi and publishes it (no device step).
    void post_srq_recv(SrqInfo& srq, uint64_t wr_id, const std::vector<vrnic_sge>& sge,
                       bool publish = true);
    void publish(const SrqInfo& srq);
    // The consumer index the device published in the SRQ's slot.
    uint32_t srq_ci(const SrqInfo& srq) const;
    // Consumes the valid CQEs and publishes the new ci.
    std::vector<vrnic_cqe> poll_cq(CqInfo& cq, unsigned max = 1u << 20);
    void arm_cq(CqInfo& cq, bool solicited_only);

  private:
    std::string err_;
    std::unique_ptr<GuestMemory> mem_;
    std::unique_ptr<SharedRegion> bar2_;
    std::unique_ptr<Device> dev_;
    Arena heap_;
    uint64_t now_ = 1'000'000'000;
    std::vector<uint32_t> irqs_;
    std::function<void()> on_pass_;
    uint64_t cmdq_ = 0, aeq_ = 0;
    uint32_t cmdq_log_ = 0, aeq_log_ = 0, aeq_ci_ = 0;
    uint32_t cmd_pi_ = 0, cmd_seq_ = 0;
    std::map<uint32_t, uint32_t> uctx_page_; // context -> doorbell page
};

} // namespace vrnic::test
