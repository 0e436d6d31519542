// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Everything one device (one attached VM) knows, shared by its units: the
// command processor, the QP engine, the event path and the Ethernet rings.
// The device's own thread touches it, and in a fabric another VM's thread
// moving a message to it, each under the device's lock (rdma_fabric.h).
#pragma once

#include "bar2.h"
#include "device_params.h"
#include "guest_memory.h"
#include "handle_table.h"
#include "key_gen.h"
#include "keyed_table.h"
#include "mcast.h"
#include "objects.h"
#include "pass_budget.h"
#include "qp_table.h"
#include "shared_word.h"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace vrnic {

// Receives a transmitted frame; returns false if it could not be delivered.
using FrameSink = std::function<bool(const uint8_t* frame, uint32_t len)>;

class RdmaFabric;

// Monotonic nanoseconds; injectable so tests control RNR timers.
using Clock = std::function<uint64_t()>;
uint64_t monotonic_ns();
// CLOCK_REALTIME nanoseconds: the device clock that stamps CQEs and that
// QUERY_CLOCK reads (section 12.1), so a guest can take it as a wall clock.
uint64_t realtime_ns();

struct GidEntry {
    bool valid = false;
    uint8_t gid[16] = {};
};

// The objects a reset forgets (section 5.2).
struct Objects {
    explicit Objects(const DeviceParams& p)
        : mr_pages(p.max_mr_pages), keygen(p.key_seed), uctxs(p.max_uctx()), pds(p.max_pd),
          mrs(p.max_mr, KeyedLayout::mr_keys(p.handle_quarantine), keygen), cqs(p.max_cq),
          qps(p.max_qp, KeyedLayout::qpns(p.handle_quarantine), keygen), srqs(p.max_srq),
          ahs(p.max_ah), xrcds(p.max_xrcd), eqs(p.max_comp_eqs()), gids(p.gid_tbl_len),
          mcast(p.max_mcast_grp, p.max_mcast_qp_attach),
          page_owner(p.db_page_count() + 1, nullptr) {
        kernel_uctx.handle = VRNIC_UCTX_KERNEL;
        kernel_uctx.db_page = VRNIC_KERNEL_DB_PAGE;
    }
    PageBudget mr_pages; // before mrs: outlives the charges MRs hold
    Uctx kernel_uctx;
    // QPNs and keys name objects to other QPs, so they are unguessable.
    // The other handles name objects only their owner's kernel uses.
    KeyGen keygen;
    HandleTable<Uctx> uctxs;
    HandleTable<Pd> pds;
    KeyedTable<Mr> mrs;
    HandleTable<Cq> cqs;
    QpTable<Qp> qps;
    HandleTable<Srq> srqs;
    HandleTable<Ah> ahs;
    HandleTable<Xrcd> xrcds;
    HandleTable<Eq> eqs;
    std::vector<GidEntry> gids;
    McastTable mcast;
    std::vector<Uctx*> page_owner;    // doorbell page -> user context
    std::vector<uint32_t> live_pages; // pages with an owner: each sleep and wake-up writes them
    std::vector<Qp*> active_qps;      // QPs not in RESET: the engine polls these
    size_t engine_next = 0;           // where the next engine pass starts in it
    std::vector<Cq*> dirty_cqs;       // CQs with an unfinished CQE batch
    Eq* kernel_eq_slots[VRNIC_DB_SLOTS_PER_PAGE] = {};
};

// The latched ring configuration (section 5.3).
struct RingConfig {
    uint64_t cmdq_base = 0;
    uint32_t cmdq_log_depth = 0;
    uint64_t tx_base = 0, rx_base = 0;
    uint32_t tx_log_depth = 0, rx_log_depth = 0;
};

struct DeviceState {
    DeviceState(const GuestMemory& m, uint8_t* bar2_base, const DeviceParams& p, Clock c)
        : mem(m), bar2(bar2_base, p.bar2_size), params(with_guest_ram(p, m.size())),
          now(std::move(c)), obj(std::make_unique<Objects>(params)) {}

    const GuestMemory& mem;
    Bar2 bar2;
    DeviceParams params;
    Clock now;
    Clock wall = realtime_ns; // the device clock; tests may replace it

    bool driver_ok = false;
    bool fatal = false;
    RingConfig rings;
    uint32_t cmdq_ci = 0;
    Eq aeq; // EQ 0, configured at DRIVER_OK
    bool aeq_enabled = false;
    uint32_t tx_ci = 0, rx_ci = 0;
    bool tx_stopped = false, rx_stopped = false;
    bool eth_loopback = false; // SET_ETH: TX frames go to our own RX

    std::unique_ptr<Objects> obj;
    // The fabric this device is a port of (rdma_fabric.h), or none.
    RdmaFabric* fabric = nullptr;
    uint32_t fabric_port = 0;
    // Where RoCE v2 packets to stations beyond the fabric go (wire.h): the
    // fabric's switch, when the model has an uplink; empty: nowhere.
    FrameSink wire;
    // A lower port a message found locked: passes take it first while they
    // send to it (held_peer, held_peer_used).
    int want_peer = -1;
    int held_peer = -1;
    bool held_peer_used = false;
    uint64_t irq_pending = 0; // vectors to raise at the end of this pass
    PassBudget pass;

    // Liveness (section 5.4): the heartbeat advances every period, also
    // from inside a pass.
    static constexpr uint64_t kHeartbeatPeriodNs = 50'000'000;
    uint64_t last_heartbeat = 0;
    void keep_alive() {
        const uint64_t t = now();
        if (t - last_heartbeat < kHeartbeatPeriodNs)
            return;
        last_heartbeat = t;
        vrnic_regs* r = regs();
        store_release(&r->heartbeat, load_relaxed(&r->heartbeat) + 1);
    }
    // The driver asked for a reset (section 5.2): stop touching guest memory.
    bool reset_requested() const {
        const vrnic_regs* r = regs();
        return load_acquire(&r->reset_req) != load_relaxed(&r->reset_ack);
    }

    // A kick wakes the device thread on the host CPU of the kicking vCPU,
    // which then cannot run until the thread sleeps again. The user context
    // that posts first after the kick is taken as the kicker; once a
    // message has been delivered to it, sleeping gives it its CPU back.
    // Kernel QPs share one context on every vCPU: they name no kicker.
    struct Kicker {
        bool pending = false; // woken by a kick, kicker not yet seen
        const Uctx* uctx = nullptr;
        bool reached = false;
    } kicker;
    void note_poster(const Qp& qp) {
        if (kicker.pending) {
            kicker.pending = false;
            if (qp.uctx->handle != VRNIC_UCTX_KERNEL)
                kicker.uctx = qp.uctx;
        }
    }
    void note_delivery(const Qp& resp) {
        // An XRC target's receives belong to the context of its SRQ.
        const Uctx* to = resp.xrcd && resp.srq ? resp.srq->uctx : resp.uctx;
        if (kicker.uctx && to == kicker.uctx)
            kicker.reached = true;
    }

    void raise(uint32_t vector) {
        if (vector < 64)
            irq_pending |= 1ull << vector;
    }
    Uctx* find_uctx(uint32_t h) const {
        return h == VRNIC_UCTX_KERNEL ? &obj->kernel_uctx : obj->uctxs.find(h);
    }
    vrnic_regs* regs() const { return bar2.regs(); }
};

} // namespace vrnic
