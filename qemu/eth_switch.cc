// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "eth_switch.h"

#include <vrnic_dev.h>

#include <cstring>

namespace vrnic {

namespace {

Mac mac_at(const uint8_t* p) {
    Mac m;
    memcpy(m.data(), p, m.size());
    return m;
}

} // namespace

uint32_t EthSwitch::add_port(const Mac& mac) {
    auto p = std::make_unique<PortEntry>();
    p->mac = mac;
    ports_.push_back(std::move(p));
    return ports() - 1;
}

uint32_t EthSwitch::add_uplink() {
    auto p = std::make_unique<PortEntry>();
    p->uplink = true;
    ports_.push_back(std::move(p));
    return ports() - 1;
}

bool EthSwitch::source_allowed(const PortEntry& from, const Mac& src) const {
    if (!from.uplink)
        return src == from.mac;
    if (src[0] & 1 || src == Mac{})
        return false;
    for (const auto& p : ports_)
        if (!p->uplink && p->mac == src)
            return false;
    return true;
}

int64_t EthSwitch::lookup(const Mac& mac) const {
    for (const Learned& l : table_)
        if (l.mac == mac)
            return l.port;
    return -1;
}

bool EthSwitch::forward(uint32_t from, const uint8_t* frame, uint32_t len) {
    if (from >= ports())
        return false;
    if (len < VRNIC_ETH_MIN_FRAME || len > mtu_ + VRNIC_ETH_HDR_MAX) {
        bad_len_.fetch_add(1, std::memory_order_relaxed);
        return false;
    }
    const Mac dst = mac_at(frame), src = mac_at(frame + 6);
    const PortEntry& sender = *ports_[from];
    if (!source_allowed(sender, src)) {
        spoofed_.fetch_add(1, std::memory_order_relaxed);
        return false;
    }
    int64_t to = -1;
    const bool group = dst[0] & 1; // broadcast or multicast
    {
        std::lock_guard<std::mutex> g(mu_);
        // A VM's source is its own MAC: learning it once is enough. A
        // station behind the uplink stays there.
        if (lookup(src) < 0 && (!sender.uplink || uplink_learned_ < kMaxUplinkStations)) {
            table_.push_back({src, from});
            uplink_learned_ += sender.uplink;
        }
        if (!group)
            to = lookup(dst);
    }
    if (to == int64_t(from)) {
        to_self_.fetch_add(1, std::memory_order_relaxed);
        return true; // a station on the sender's own segment: not ours to deliver
    }
    if (to >= 0) {
        forwarded_.fetch_add(1, std::memory_order_relaxed);
        ports_[to]->inbox.push(frame, len, from);
    } else {
        flooded_.fetch_add(1, std::memory_order_relaxed);
        flood(from, frame, len);
    }
    return true;
}

void EthSwitch::flood(uint32_t from, const uint8_t* frame, uint32_t len) {
    for (uint32_t p = 0; p < ports(); p++)
        if (p != from)
            ports_[p]->inbox.push(frame, len, from);
}

void EthSwitch::port_down(uint32_t port) {
    std::lock_guard<std::mutex> g(mu_);
    std::erase_if(table_, [port](const Learned& l) { return l.port == port; });
    if (port < ports() && ports_[port]->uplink)
        uplink_learned_ = 0;
}

SwitchCounters EthSwitch::counters() const {
    auto r = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
    return {r(forwarded_), r(flooded_), r(spoofed_), r(bad_len_), r(to_self_)};
}

} // namespace vrnic
