// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "mcast.h"

#include <algorithm>
#include <cstring>

namespace vrnic {

bool gid_is_mcast(const uint8_t (&gid)[16]) {
    if (gid[0] == 0xff)
        return true;
    static constexpr uint8_t kV4Mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return !memcmp(gid, kV4Mapped, sizeof(kV4Mapped)) && (gid[12] & 0xf0) == 0xe0;
}

McastTable::Group* McastTable::find(const uint8_t (&gid)[16]) {
    for (Group& g : groups_)
        if (!memcmp(g.gid, gid, sizeof(g.gid)))
            return &g;
    return nullptr;
}

McastTable::Attach McastTable::attach(const uint8_t (&gid)[16], uint32_t qpn) {
    Group* g = find(gid);
    if (!g) {
        if (groups_.size() >= max_groups_ || !max_qps_)
            return Attach::no_group;
        g = &groups_.emplace_back();
        memcpy(g->gid, gid, sizeof(g->gid));
    }
    if (std::find(g->qpns.begin(), g->qpns.end(), qpn) != g->qpns.end())
        return Attach::ok;
    if (g->qpns.size() >= max_qps_)
        return Attach::group_full;
    g->qpns.push_back(qpn);
    return Attach::ok;
}

bool McastTable::detach(const uint8_t (&gid)[16], uint32_t qpn) {
    Group* g = find(gid);
    if (!g)
        return false;
    auto it = std::find(g->qpns.begin(), g->qpns.end(), qpn);
    if (it == g->qpns.end())
        return false;
    g->qpns.erase(it);
    if (g->qpns.empty())
        groups_.erase(groups_.begin() + (g - groups_.data()));
    return true;
}

void McastTable::detach_all(uint32_t qpn) {
    for (Group& g : groups_)
        std::erase(g.qpns, qpn);
    std::erase_if(groups_, [](const Group& g) { return g.qpns.empty(); });
}

std::vector<uint32_t> McastTable::members(const uint8_t (&gid)[16]) const {
    for (const Group& g : groups_)
        if (!memcmp(g.gid, gid, sizeof(g.gid)))
            return g.qpns;
    return {};
}

std::vector<std::array<uint8_t, 16>> McastTable::gids() const {
    std::vector<std::array<uint8_t, 16>> out(groups_.size());
    for (size_t i = 0; i < groups_.size(); i++)
        memcpy(out[i].data(), groups_[i].gid, out[i].size());
    return out;
}

} // namespace vrnic
