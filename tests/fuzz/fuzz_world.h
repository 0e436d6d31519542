// Shared by the vrnic_fuzz_* targets: an input reader that turns the
// fuzzer's bytes into choices, and the guest-driver harness over a small
// guest RAM (guard pages on both sides) with a fixed map, that every input
// brings up afresh, so runs are independent and a crash reproduces from its
// input alone.
#pragma once

#include "guest_driver.h"
#include "log.h"
#include "shared_word.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace vrnic::fuzz {

using namespace vrnic::test;

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
    p.max_srq = 4;
    p.max_srq_wr = 64;
    p.max_srq_sge = 8;
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

// The rings every target latches unless it picks its own.
inline RingSetup fuzz_rings() {
    return {.cmdq_base = kCmdq,
            .cmdq_log = kCmdqLog,
            .aeq_base = kAeq,
            .aeq_log = kAeqLog,
            .tx_base = kTx,
            .tx_log = 4,
            .rx_base = kRx,
            .rx_log = 4};
}

// The path the targets connect QPs along.
inline Path fuzz_path() {
    return {.timeout = 0, .mtu = VRNIC_MTU_1024, .hop_limit = 0, .rq_psn = 0, .sq_psn = 0};
}

class World : public GuestDriver {
  public:
    World() : GuestDriver(fuzz_params(), kRam) {
        g_log_level = static_cast<LogLevel>(-1); // silent: errors are the point here
        if (!ok())
            abort();
        // The invariant of every target: a pass does bounded work
        // (device-interface.md 14.5), whatever the guest wrote.
        on_pass([this] {
            const uint64_t used = dev().state().pass.used();
            if (used > dev().state().params.pass_bytes) {
                fprintf(stderr, "bounded-pass invariant: %llu bytes of work in one pass\n",
                        (unsigned long long)used);
                abort();
            }
        });
    }

    // Zeroes guest RAM, resets the device and sets DRIVER_OK with `r`.
    // False when the device refused the configuration (FATAL).
    bool bring_up(const RingSetup& r = fuzz_rings()) {
        clear_ram();
        reset();
        return driver_ok(r);
    }

    // A write the map guarantees; failing is a harness bug, not a model one.
    void put(uint64_t gpa, const void* src, uint64_t len) const {
        if (!GuestDriver::put(gpa, src, len))
            abort();
    }

    // Steps until the device is idle (bounded: an RNR wait never ends).
    void settle(unsigned passes = 64) { run(passes); }

    // Time passes: RNR timer units, milliseconds, past the longest timer, or
    // to the next deadline the device asks to be woken at (as the port
    // thread does).
    void step_clock(Input& in) {
        const uint8_t m = in.u8();
        uint64_t& now = clock();
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
            now = std::max(now, dev().next_deadline());
            break;
        }
    }

    // White-box view, only to aim inputs (e.g. a CQ's producer index).
    Objects& objects() { return *dev().state().obj; }
};

} // namespace vrnic::fuzz
