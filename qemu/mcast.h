// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Multicast groups (device-interface.md 10.23, 14.6): the UD QPs attached to
// each multicast GID of this device. A reset forgets them with the QPs.
#pragma once

#include <vrnic_dev.h>

#include <array>
#include <cstdint>
#include <vector>

namespace vrnic {

// The QPN a datagram to a multicast group carries (IBA 9.8.1: 0xFFFFFF);
// never a QP's number (KeyedLayout::qpns() stops below it).
constexpr uint32_t kMcastQpn = VRNIC_QPN_MASK;

// ff00::/8, or ::ffff:224.0.0.0/100 (RoCE v2's IPv4 multicast).
bool gid_is_mcast(const uint8_t (&gid)[16]);

class McastTable {
  public:
    McastTable(uint32_t max_groups, uint32_t max_qps_per_group)
        : max_groups_(max_groups), max_qps_(max_qps_per_group) {}

    enum class Attach { ok, no_group, group_full };
    // Attaches `qpn` to `gid` (ok when it is already), creating the group.
    Attach attach(const uint8_t (&gid)[16], uint32_t qpn);
    // false when `qpn` is not attached to `gid`. An empty group is freed.
    bool detach(const uint8_t (&gid)[16], uint32_t qpn);
    // Detaches `qpn` from every group (its QP goes to RESET or away).
    void detach_all(uint32_t qpn);
    // The QPNs attached to `gid` in attach order, empty for no group; a
    // copy, so that the caller holds no reference into the table.
    std::vector<uint32_t> members(const uint8_t (&gid)[16]) const;
    // The groups' GIDs.
    std::vector<std::array<uint8_t, 16>> gids() const;

  private:
    struct Group {
        uint8_t gid[16];
        std::vector<uint32_t> qpns;
    };
    Group* find(const uint8_t (&gid)[16]);
    uint32_t max_groups_, max_qps_;
    std::vector<Group> groups_;
};

} // namespace vrnic
