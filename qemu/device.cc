// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "device.h"

#include "commands.h"
#include "destination.h"
#include "events.h"
#include "log.h"
#include "rdma_fabric.h"
#include "requester.h"
#include "roce_packet.h"
#include "shared_word.h"
#include "wire.h"

#include <ctime>

namespace vrnic {

uint64_t monotonic_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

uint64_t realtime_ns() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

Device::Device(const GuestMemory& mem, uint8_t* bar2, const DeviceParams& p, IrqFn irq, Clock clock)
    : d_(mem, bar2, p, std::move(clock)), irq_(std::move(irq)) {
    d_.bar2.power_on(p);
    d_.last_heartbeat = d_.now();
}

Device::~Device() {
    if (d_.fabric)
        d_.fabric->leave(d_.fabric_port);
}

void Device::join_fabric(RdmaFabric* fabric, uint32_t port) {
    d_.fabric = fabric;
    d_.fabric_port = port;
    fabric->join(port, this);
}

std::unique_lock<FifoLock> Device::hold() const {
    if (!d_.fabric)
        return {};
    return std::unique_lock<FifoLock>(d_.fabric->lock(d_.fabric_port));
}

void Device::publish_addresses() {
    if (d_.fabric)
        d_.fabric->publish_gids(d_.fabric_port, d_.obj->gids);
    publish_mcast_groups(d_);
}

void Device::signal_completions() {
    finish_cq_batches(d_);
    deliver_irqs();
}

bool Device::poll_once() {
    PassLocks locks(d_);
    d_.keep_alive();
    bool progress = check_control();
    if (d_.driver_ok && !d_.fatal) {
        progress |= process_cmdq(d_);
        progress |= engine_poll(d_);
        progress |= eth_poll_tx(d_, sink_);
    }
    finish_cq_batches(d_);
    deliver_irqs();
    return progress;
}

bool Device::check_control() {
    vrnic_regs* r = d_.regs();
    const uint32_t req = load_acquire(&r->reset_req);
    if (req != load_relaxed(&r->reset_ack)) {
        reset(req);
        return true;
    }
    if (!d_.driver_ok && !d_.fatal && (load_acquire(&r->driver_ctrl) & VRNIC_DRV_CTRL_DRIVER_OK)) {
        latch_rings();
        return true;
    }
    return false;
}

void Device::reset(uint32_t req) {
    LOG_INFO("device reset (reset_req %u)", req);
    d_.obj = std::make_unique<Objects>(d_.params);
    publish_addresses();
    d_.driver_ok = false;
    d_.rings = RingConfig{};
    d_.cmdq_ci = 0;
    d_.aeq = Eq{};
    d_.aeq_enabled = false;
    d_.tx_ci = d_.rx_ci = 0;
    d_.tx_stopped = d_.rx_stopped = false;
    d_.eth_loopback = false;
    d_.irq_pending = 0;
    d_.kicker = {};
    vrnic_regs* r = d_.regs();
    store_relaxed(&r->cmdq_ci, 0u);
    store_relaxed(&r->aeq_pi, 0u);
    store_relaxed(&r->tx_ci, 0u);
    store_relaxed(&r->rx_ci, 0u);
    store_relaxed(&r->need_wakeup, 0u);
    store_relaxed(&r->eq_overflow, 0u);
    store_relaxed(&r->eth_rx_missed, 0u);
    store_relaxed(&r->eth_rx_oversize, 0u);
    store_relaxed(&r->ud_qkey_drops, 0u);
    store_relaxed(&r->ud_no_recv_drops, 0u);
    store_relaxed(&r->ud_no_dest_drops, 0u);
    store_relaxed(&r->uc_drops, 0u);
    store_relaxed(&r->wire_tx_pkts, 0u);
    store_relaxed(&r->wire_rx_pkts, 0u);
    store_relaxed(&r->wire_rx_drops, 0u);
    store_relaxed(&r->wire_resent_pkts, 0u);
    store_relaxed(&r->wire_seq_naks, 0u);
    store_relaxed(&r->wire_dup_reqs, 0u);
    store_relaxed(&r->wire_stale_pkts, 0u);
    for (auto* c : {&r->rdma_tx_msgs, &r->rdma_tx_bytes, &r->rdma_rx_msgs, &r->rdma_rx_bytes,
                    &r->rnr_naks, &r->retries, &r->completion_errors})
        store_relaxed(c, 0ull);
    for (uint32_t p = VRNIC_KERNEL_DB_PAGE; p <= d_.bar2.last_db_page(); p++)
        d_.bar2.zero_page(p);
    // Every fatal condition of this model is recoverable by a reset.
    d_.fatal = false;
    store_relaxed(&r->fatal_code, uint32_t(VRNIC_FATAL_NONE));
    store_release(&r->device_status, uint32_t(VRNIC_DEV_STATUS_READY));
    store_release(&r->reset_ack, req);
}

void Device::latch_rings() {
    const vrnic_regs* r = d_.regs();
    RingConfig c;
    c.cmdq_base = load_acquire(&r->cmdq_base);
    c.cmdq_log_depth = load_acquire(&r->cmdq_log_depth);
    const uint64_t aeq_base = load_acquire(&r->aeq_base);
    const uint32_t aeq_log = load_acquire(&r->aeq_log_depth);
    c.tx_base = load_acquire(&r->tx_base);
    c.tx_log_depth = load_acquire(&r->tx_log_depth);
    c.rx_base = load_acquire(&r->rx_base);
    c.rx_log_depth = load_acquire(&r->rx_log_depth);

    auto ring_ok = [&](uint64_t base, uint32_t log, uint32_t lo, uint32_t hi, uint32_t entry) {
        if (log < lo || log > hi)
            return false;
        uint64_t bytes = uint64_t(entry) << log;
        return base && base % VRNIC_RING_ALIGN == 0 && bytes <= VRNIC_RING_MAX_BYTES &&
               d_.mem.at(base, bytes);
    };
    const char* bad = nullptr;
    if (!ring_ok(c.cmdq_base, c.cmdq_log_depth, VRNIC_CMDQ_LOG_DEPTH_MIN, VRNIC_CMDQ_LOG_DEPTH_MAX,
                 VRNIC_CMD_SIZE))
        bad = "command queue";
    else if (!ring_ok(aeq_base, aeq_log, VRNIC_EQ_LOG_DEPTH_MIN, VRNIC_EQ_LOG_DEPTH_MAX,
                      VRNIC_EQE_SIZE))
        bad = "async EQ";
    else if (c.tx_base && !ring_ok(c.tx_base, c.tx_log_depth, VRNIC_ETH_LOG_DEPTH_MIN,
                                   VRNIC_ETH_LOG_DEPTH_MAX, sizeof(vrnic_eth_desc)))
        bad = "Ethernet TX ring";
    else if (c.rx_base && !ring_ok(c.rx_base, c.rx_log_depth, VRNIC_ETH_LOG_DEPTH_MIN,
                                   VRNIC_ETH_LOG_DEPTH_MAX, sizeof(vrnic_eth_desc)))
        bad = "Ethernet RX ring";
    if (bad) {
        LOG_ERR("DRIVER_OK with an invalid %s configuration", bad);
        enter_fatal(d_, VRNIC_FATAL_BAD_CONFIG);
        return;
    }
    d_.rings = c;
    d_.aeq = Eq{};
    d_.aeq.ring = aeq_base;
    d_.aeq.log_depth = aeq_log;
    d_.aeq.vector = VRNIC_IRQ_ADMIN;
    d_.aeq_enabled = true;
    d_.driver_ok = true;
    LOG_INFO("driver ready: cmdq %u entries, aeq %u, eth tx %u rx %u", 1u << c.cmdq_log_depth,
             1u << aeq_log, c.tx_base ? 1u << c.tx_log_depth : 0,
             c.rx_base ? 1u << c.rx_log_depth : 0);
}

void Device::set_need_wakeup(bool on) {
    auto own = hold();
    // A requester in an RNR wait must hear of new receives: RQ posts kick too.
    uint32_t bits = 0;
    if (on) {
        d_.kicker = {}; // the next kick may come from anyone
        bits = VRNIC_DB_STATUS_NEED_WAKEUP |
               (engine_next_deadline(d_) != UINT64_MAX ? VRNIC_DB_STATUS_RQ_WAKEUP : 0);
    }
    store_release(&d_.regs()->need_wakeup, bits);
    publish_page_status(d_);
    if (on)
        full_fence(); // Dekker pair with the producer's store -> fence -> load
}

uint64_t Device::next_deadline() const {
    auto own = hold();
    uint64_t t = d_.last_heartbeat + DeviceState::kHeartbeatPeriodNs;
    uint64_t rnr = engine_next_deadline(d_);
    return rnr < t ? rnr : t;
}

bool Device::deliver_frame(const uint8_t* frame, uint32_t len, bool from_wire) {
    auto own = hold();
    bool ok = true;
    if (from_wire && has_wire(d_) && roce::is_roce_frame(frame, len))
        wire_receive(d_, frame, len);
    else
        ok = eth_deliver_rx(d_, frame, len);
    deliver_irqs();
    return ok;
}

void Device::deliver_irqs() {
    uint64_t pending = d_.irq_pending;
    d_.irq_pending = 0;
    while (pending) {
        uint32_t v = static_cast<uint32_t>(__builtin_ctzll(pending));
        pending &= pending - 1;
        if (irq_ && v < d_.params.num_vectors)
            irq_(v);
    }
}

} // namespace vrnic
