// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// XRC (device-interface.md 10.13, 10.17, 10.25, 14.9): domains, the target
// QP (which has no queues of its own) and its binding to the XRC SRQ each
// message names. While bound, the target's srq, pd and recv_cq are the
// SRQ's: the responder checks rkeys against the SRQ's PD and completes on
// the SRQ's CQ, as IB's XRC responder does.
#pragma once

#include "commands.h"
#include "device_state.h"

#include <cstdint>

namespace vrnic {

// Whether context `u` may name XRC domain `x`: its own, or one of the
// kernel context, which the driver shares between processes.
inline bool xrcd_usable(const Xrcd& x, const Uctx& u) {
    return x.uctx == &u || x.uctx->handle == VRNIC_UCTX_KERNEL;
}

// The producer index of a queue an XRC QP does not have: always 0.
const uint32_t* xrc_no_queue_pi();

// CREATE_QP of an XRC_TGT QP: a domain and nothing else.
CmdResult create_xrc_tgt(DeviceState& d, const vrnic_cmd_create_qp& c, vrnic_cmd& out);

enum class XrcBind { ok, no_srq, other_domain };

// Binds target `t` to the XRC SRQ `srqn` a message names (unbinding it from
// another first): no_srq when srqn names no XRC SRQ, other_domain when the
// SRQ is of another XRC domain.
XrcBind xrc_bind_target(DeviceState& d, Qp& t, uint32_t srqn);

// Unbinds `t`: the WQE it took off its SRQ is flushed.
void xrc_unbind_target(DeviceState& d, Qp& t);

// XRC SRQ `s` is destroyed: the targets bound to it forget it and the WQE
// they took (the SRQ's owner is destroying its buffers).
void xrc_srq_gone(DeviceState& d, const Srq& s);

} // namespace vrnic
