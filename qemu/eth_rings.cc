// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "eth_rings.h"

#include "log.h"
#include "ring_slot.h"
#include "shared_word.h"

#include <vector>

namespace vrnic {

bool eth_poll_tx(DeviceState& d, const FrameSink& sink) {
    if (!d.driver_ok || d.fatal || !d.rings.tx_base || d.tx_stopped)
        return false;
    vrnic_regs* r = d.regs();
    const uint32_t pi = load_acquire(&r->tx_pi);
    if (pi == d.tx_ci)
        return false;
    if (!ring_index_ok(pi, d.tx_ci, 1u << d.rings.tx_log_depth)) {
        LOG_WARN("eth: tx_pi %u out of range (ci %u): TX stopped until reset", pi, d.tx_ci);
        d.tx_stopped = true;
        return true;
    }
    const uint32_t max_len = d.params.eth_max_mtu + VRNIC_ETH_HDR_MAX;
    // The sink (the fabric's switch) checks a frame's source MAC and then
    // delivers it: it gets a copy, never guest memory that another vCPU
    // could rewrite between the check and the delivery.
    std::vector<uint8_t> copy;
    while (d.tx_ci != pi) {
        vrnic_eth_desc* slot =
            ring_entry<vrnic_eth_desc>(d.mem, d.rings.tx_base, d.rings.tx_log_depth, d.tx_ci);
        vrnic_eth_desc desc;
        memcpy(&desc, slot, sizeof(desc));
        uint16_t status = VRNIC_ETH_ST_DONE;
        const uint8_t* frame = desc.len ? d.mem.at(desc.addr, desc.len) : nullptr;
        if (desc.flags || desc.len < VRNIC_ETH_MIN_FRAME || desc.len > max_len || !frame)
            status |= VRNIC_ETH_ST_ERR;
        else if (d.eth_loopback)
            eth_deliver_rx(d, frame, desc.len); // sent; a drop is RX's to count
        else if (sink) {
            copy.assign(frame, frame + desc.len);
            if (!sink(copy.data(), desc.len))
                status |= VRNIC_ETH_ST_DROPPED;
        }
        store_release(&slot->status, status);
        d.tx_ci++;
        store_release(&r->tx_ci, d.tx_ci);
    }
    d.raise(VRNIC_IRQ_ETH);
    return true;
}

bool eth_deliver_rx(DeviceState& d, const uint8_t* frame, uint32_t len) {
    if (!d.driver_ok || d.fatal || !d.rings.rx_base)
        return false;
    vrnic_regs* r = d.regs();
    if (d.rx_stopped) {
        count_in_reg(&r->eth_rx_missed);
        return false;
    }
    const uint32_t pi = load_acquire(&r->rx_pi);
    if (!ring_index_ok(pi, d.rx_ci, 1u << d.rings.rx_log_depth)) {
        LOG_WARN("eth: rx_pi %u out of range (ci %u): RX stopped until reset", pi, d.rx_ci);
        d.rx_stopped = true;
        count_in_reg(&r->eth_rx_missed);
        return false;
    }
    if (pi == d.rx_ci) {
        count_in_reg(&r->eth_rx_missed); // no buffer: no descriptor consumed
        return false;
    }
    vrnic_eth_desc* slot =
        ring_entry<vrnic_eth_desc>(d.mem, d.rings.rx_base, d.rings.rx_log_depth, d.rx_ci);
    vrnic_eth_desc desc;
    memcpy(&desc, slot, sizeof(desc));
    if (len > desc.len) {
        count_in_reg(&r->eth_rx_oversize); // descriptor kept
        return false;
    }
    uint8_t* buf = d.mem.at(desc.addr, len);
    if (desc.flags || !buf) {
        // A bad buffer is the driver's error: consume it, flagged.
        store_relaxed(&slot->len, uint32_t(0));
        store_release(&slot->status, uint16_t(VRNIC_ETH_ST_DONE | VRNIC_ETH_ST_ERR));
    } else {
        // In loopback both are guest memory, and a hostile guest may make
        // them overlap.
        memmove(buf, frame, len);
        store_relaxed(&slot->len, len);
        store_release(&slot->status, uint16_t(VRNIC_ETH_ST_DONE));
    }
    d.rx_ci++;
    store_release(&r->rx_ci, d.rx_ci);
    d.raise(VRNIC_IRQ_ETH);
    return buf && !desc.flags;
}

} // namespace vrnic
