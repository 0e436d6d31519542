// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "destination.h"

#include "rdma_fabric.h"

#include <cstring>

namespace vrnic {

bool gid_is_local(const DeviceState& d, const uint8_t (&gid)[16]) {
    for (const GidEntry& g : d.obj->gids)
        if (g.valid && !memcmp(g.gid, gid, sizeof(g.gid)))
            return true;
    return false;
}

std::vector<uint32_t> find_mcast_destinations(const DeviceState& d, const uint8_t (&dgid)[16],
                                              uint32_t qpn) {
    if (qpn != kMcastQpn) // the receivers take only DQPN 0xFFFFFF to a group
        return {};
    return d.obj->mcast.members(dgid);
}

void publish_mcast_groups(const DeviceState& d) {
    if (d.fabric)
        d.fabric->publish_mcast(d.fabric_port, d.obj->mcast);
}

Qp* ud_receiver(DeviceState& d, uint32_t qpn) {
    Qp* r = d.obj->qps.find(qpn);
    if (!r || r->type != QpType::ud)
        return nullptr;
    if (r->state != VRNIC_QPS_RTR && r->state != VRNIC_QPS_RTS && r->state != VRNIC_QPS_SQD)
        return nullptr;
    return r;
}

} // namespace vrnic
