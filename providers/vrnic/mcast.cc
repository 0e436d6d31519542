// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Multicast: a UD QP joins or leaves a group through the kernel, which asks
// the device (the group table and its limits are the device's). Nothing on
// the data path changes: a send to a group is a UD send to QPN 0xffffff.

#include "provider.h"

namespace vrnic::prov {

int attach_mcast(ibv_qp* qp, const ibv_gid* gid, uint16_t lid) noexcept {
    return ibv_cmd_attach_mcast(qp, gid, lid);
}

int detach_mcast(ibv_qp* qp, const ibv_gid* gid, uint16_t lid) noexcept {
    return ibv_cmd_detach_mcast(qp, gid, lid);
}

} // namespace vrnic::prov
