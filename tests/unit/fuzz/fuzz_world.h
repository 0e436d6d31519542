// Shared by the vrnic_fuzz_* targets: an input reader that turns the
// fuzzer's bytes into choices, and one device over a small guest RAM
// (guard pages on both sides) that every input brings up afresh, so runs
// are independent and a crash reproduces from its input alone.
#pragma once

#include "device.h"
#include "guest_memory.h"
#include "log.h"
#include "shared_region.h"
#include "shared_word.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sys/mman.h>
#include <unistd.h>

namespace vrnic::fuzz {

// Guest RAM map. Small on purpose: every input zeroes all of it.
constexpr uint64_t kRam = 2 << 20;
constexpr uint64_t kCmdq = 0x10000; // 32 commands
constexpr uint32_t kCmdqLog = 5;
constexpr uint64_t kAeq = 0x11000; // 256 EQEs
constexpr uint32_t kAeqLog = 8;
constexpr uint64_t kTx = 0x20000, kRx = 0x30000;          // up to 4096 descriptors each
constexpr uint64_t kRings = 0x40000;                      // CQ, EQ, SQ and RQ rings
constexpr uint64_t kRingPages = 128;                      // 512 KiB of rings
constexpr uint64_t kPbl = 0xc0000;                        // MR page lists, 16 pages
constexpr uint64_t kData = 0x100000, kDataSize = 1 << 20; // data buffers

// Small object limits: the "table full" paths are then in reach of an input.
inline DeviceParams fuzz_params() {
    DeviceParams p;
    p.bar2_size = 64 << 10; // 15 doorbell pages
    p.max_qp = 16;
    p.max_cq = 16;
    p.max_mr = 32;
    p.max_pd = 8;
    p.max_ah = 8;
    // Small enough that most messages move in several slices.
    p.pass_bytes = 4 << 10;
    p.qp_pass_bytes = 1 << 10;
    // Reproducible QPNs and keys; a short quarantine keeps each run cheap
    // (a freed slot still waits behind others and changes generation).
    p.key_seed = 1;
    p.handle_quarantine = 64;
    return p;
}

// Reads the input front to back; past its end every read yields zeros, so
// any prefix of an input is itself a valid input.
class Input {
  public:
    Input(const uint8_t* p, size_t n) : p_(p), n_(n) {}
    bool empty() const { return n_ == 0; }
    void take(void* dst, size_t len) {
        size_t k = len < n_ ? len : n_;
        if (k)
            memcpy(dst, p_, k);
        memset(static_cast<uint8_t*>(dst) + k, 0, len - k);
        p_ += k;
        n_ -= k;
    }
    template <typename T> T get() {
        T v;
        take(&v, sizeof(v));
        return v;
    }
    uint8_t u8() { return get<uint8_t>(); }
    uint16_t u16() { return get<uint16_t>(); }
    uint32_t u32() { return get<uint32_t>(); }
    uint64_t u64() { return get<uint64_t>(); }
    // A value in [0, n); n > 0.
    uint32_t below(uint32_t n) { return n <= 256 ? u8() % n : u16() % n; }

  private:
    const uint8_t* p_;
    size_t n_;
};

// Ring registers latched at DRIVER_OK.
struct RingSetup {
    uint64_t cmdq_base = kCmdq;
    uint32_t cmdq_log = kCmdqLog;
    uint64_t aeq_base = kAeq;
    uint32_t aeq_log = kAeqLog;
    uint64_t tx_base = kTx;
    uint32_t tx_log = 4;
    uint64_t rx_base = kRx;
    uint32_t rx_log = 4;
};

class World {
  public:
    World() {
        g_log_level = static_cast<LogLevel>(-1); // silent: errors are the point here
        UniqueFd fd(memfd_create("fuzz-ram", MFD_CLOEXEC));
        if (ftruncate(fd.get(), kRam) < 0)
            abort();
        std::string err;
        mem_ = GuestMemory::map_fd(fd.get(), kRam, &err);
        DeviceParams p = fuzz_params();
        bar2_ = SharedRegion::create("fuzz-bar2", p.bar2_size, &err);
        if (!mem_ || !bar2_)
            abort();
        dev_ = std::make_unique<Device>(
            *mem_, bar2_->data(), p, [](uint32_t) {}, [this] { return now; });
    }

    // Zeroes guest RAM, resets the device and sets DRIVER_OK with `r`.
    // False when the device refused the configuration (FATAL).
    bool reset(const RingSetup& r = RingSetup{}) {
        memset(mem_->at(0, kRam), 0, kRam);
        vrnic_regs* g = regs();
        store_release(&g->driver_ctrl, 0u);
        store_release(&g->reset_req, g->reset_req + 1);
        poll();
        g->cmdq_base = r.cmdq_base;
        g->cmdq_log_depth = r.cmdq_log;
        g->aeq_base = r.aeq_base;
        g->aeq_log_depth = r.aeq_log;
        g->tx_base = r.tx_base;
        g->tx_log_depth = r.tx_log;
        g->rx_base = r.rx_base;
        g->rx_log_depth = r.rx_log;
        g->cmdq_pi = g->aeq_ci = g->tx_pi = g->rx_pi = 0;
        store_release(&g->driver_ctrl, uint32_t(VRNIC_DRV_CTRL_DRIVER_OK));
        poll();
        cmdq_log_ = r.cmdq_log;
        cmd_pi_ = 0;
        return !(g->device_status & VRNIC_DEV_STATUS_FATAL);
    }

    // Writes a command into the next slot without publishing it.
    uint32_t write_cmd(const vrnic_cmd& c) {
        uint32_t idx = cmd_pi_++;
        memcpy(cmd_slot(idx), &c, VRNIC_CMD_SIZE);
        return idx;
    }
    // Publishes everything written so far and lets the device run it.
    void publish_cmds() {
        store_release(&regs()->cmdq_pi, cmd_pi_);
        poll();
    }
    const vrnic_cmd& response(uint32_t idx) {
        memcpy(&resp_, cmd_slot(idx), VRNIC_CMD_SIZE);
        return resp_;
    }
    // One command, run now; the response (hdr.status included).
    const vrnic_cmd& raw_cmd(const vrnic_cmd& c) {
        uint32_t idx = write_cmd(c);
        publish_cmds();
        return response(idx);
    }
    const vrnic_cmd& cmd(uint16_t op, const void* req, size_t len) {
        vrnic_cmd c{};
        c.hdr.opcode = op;
        if (len)
            memcpy(c.payload, req, len);
        return raw_cmd(c);
    }
    uint32_t cmd_pi() const { return cmd_pi_; }

    // One pass, checking the invariant of every target: a pass does
    // bounded work (device-interface.md 14.5), whatever the guest wrote.
    bool poll() {
        const bool progress = dev_->poll_once();
        const uint64_t used = dev_->state().pass.used();
        if (used > dev_->state().params.pass_bytes) {
            fprintf(stderr, "bounded-pass invariant: %llu bytes of work in one pass\n",
                    (unsigned long long)used);
            abort();
        }
        return progress;
    }

    // Steps until the device is idle (bounded: an RNR wait never ends).
    void settle(unsigned passes = 64) {
        for (unsigned i = 0; i < passes && poll(); i++) {
        }
    }

    // Time passes: RNR timer units, milliseconds, past the longest timer, or
    // to the next deadline the device asks to be woken at (as the port
    // thread does).
    void step_clock(Input& in) {
        const uint8_t m = in.u8();
        switch (m & 3) {
        case 0:
            now += uint64_t(m >> 2) * 10'000;
            break;
        case 1:
            now += uint64_t(m >> 2) * 1'000'000;
            break;
        case 2:
            now += 700'000'000;
            break;
        default:
            now = std::max(now, dev_->next_deadline());
            break;
        }
    }

    uint8_t* ram(uint64_t gpa, uint64_t len) const { return mem_->at(gpa, len); }
    void put(uint64_t gpa, const void* src, uint64_t len) const {
        if (len && !mem_->write(gpa, src, len))
            abort(); // a harness bug, not a model one
    }
    vrnic_regs* regs() const { return reinterpret_cast<vrnic_regs*>(bar2_->data()); }
    uint32_t bar2_pages() const { return static_cast<uint32_t>(bar2_->size() / VRNIC_PAGE_SIZE); }
    vrnic_db_slot* slot(uint32_t page, uint32_t s) const {
        return reinterpret_cast<vrnic_db_slot*>(bar2_->data() + uint64_t(page) * VRNIC_PAGE_SIZE) +
               s;
    }
    Device& dev() { return *dev_; }
    // White-box view, only to aim inputs (e.g. a CQ's producer index).
    Objects& objects() { return *dev_->state().obj; }

    uint64_t now = 1'000'000'000;

  private:
    uint8_t* cmd_slot(uint32_t idx) {
        uint64_t gpa = kCmdq + uint64_t(idx & ((1u << cmdq_log_) - 1)) * VRNIC_CMD_SIZE;
        return ram(gpa, VRNIC_CMD_SIZE);
    }

    std::unique_ptr<GuestMemory> mem_;
    std::unique_ptr<SharedRegion> bar2_;
    std::unique_ptr<Device> dev_;
    uint32_t cmd_pi_ = 0, cmdq_log_ = kCmdqLog;
    vrnic_cmd resp_{};
};

// The port GID every target installs at index 0; QPs whose dgid is this
// GID reach a responder in the same device.
constexpr uint8_t kGid[16] = {0xfe, 0x80, 0, 0,    0,    0,    0,    0,
                              0x50, 0x54, 0, 0xff, 0xfe, 0x56, 0x52, 1};

inline vrnic_cmd_set_gid gid_entry(uint32_t index) {
    vrnic_cmd_set_gid g{};
    g.index = index;
    g.gid_type = VRNIC_GID_TYPE_ROCE_V2;
    g.flags = VRNIC_GID_F_VALID;
    g.vlan_id = VRNIC_VLAN_NONE;
    memcpy(g.gid, kGid, sizeof(g.gid));
    return g;
}

// The three MODIFY_QP commands of RESET -> INIT -> RTR -> RTS, as a driver
// sends them; each step's status is returned by connect_qp().
struct Path {
    uint32_t dest_qpn = 0;
    uint32_t access = VRNIC_ACCESS_ALL;
    uint8_t max_dest_rd_atomic = 4, max_rd_atomic = 4;
    uint8_t rnr_retry = 7, min_rnr_timer = 1, retry_cnt = 7, mtu = VRNIC_MTU_1024;
};

inline vrnic_cmd_modify_qp modify_to(uint32_t qpn, uint8_t state, const Path& p) {
    vrnic_cmd_modify_qp m{};
    m.qpn = qpn;
    m.attr.qp_state = state;
    switch (state) {
    case VRNIC_QPS_INIT:
        m.attr_mask = VRNIC_QP_ATTR_STATE | VRNIC_QP_ATTR_PKEY_INDEX | VRNIC_QP_ATTR_PORT |
                      VRNIC_QP_ATTR_ACCESS_FLAGS;
        m.attr.port_num = 1;
        m.attr.qp_access_flags = p.access;
        break;
    case VRNIC_QPS_RTR:
        m.attr_mask = VRNIC_QP_ATTR_STATE | VRNIC_QP_ATTR_AV | VRNIC_QP_ATTR_PATH_MTU |
                      VRNIC_QP_ATTR_DEST_QPN | VRNIC_QP_ATTR_RQ_PSN |
                      VRNIC_QP_ATTR_MAX_DEST_RD_ATOMIC | VRNIC_QP_ATTR_MIN_RNR_TIMER;
        m.attr.path_mtu = p.mtu;
        m.attr.dest_qpn = p.dest_qpn;
        m.attr.max_dest_rd_atomic = p.max_dest_rd_atomic;
        m.attr.min_rnr_timer = p.min_rnr_timer;
        memcpy(m.attr.av.dgid, kGid, sizeof(kGid));
        m.attr.av.vlan_id = VRNIC_VLAN_NONE;
        break;
    case VRNIC_QPS_RTS:
        m.attr_mask = VRNIC_QP_ATTR_STATE | VRNIC_QP_ATTR_TIMEOUT | VRNIC_QP_ATTR_RETRY_CNT |
                      VRNIC_QP_ATTR_RNR_RETRY | VRNIC_QP_ATTR_SQ_PSN |
                      VRNIC_QP_ATTR_MAX_QP_RD_ATOMIC;
        m.attr.retry_cnt = p.retry_cnt;
        m.attr.rnr_retry = p.rnr_retry;
        m.attr.max_rd_atomic = p.max_rd_atomic;
        break;
    default: // RESET, ERR: the state alone
        m.attr_mask = VRNIC_QP_ATTR_STATE;
        break;
    }
    return m;
}

inline void connect_qp(World& w, uint32_t qpn, const Path& p, uint8_t last = VRNIC_QPS_RTS) {
    for (uint8_t s = VRNIC_QPS_INIT; s <= last; s++) {
        vrnic_cmd_modify_qp m = modify_to(qpn, s, p);
        w.cmd(VRNIC_CMD_MODIFY_QP, &m, sizeof(m));
    }
}

} // namespace vrnic::fuzz
