// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The steps of executing an SQ WQE that every QP type shares (requester.cc)
// and the executors of the types with their own (ud_requester.cc).
#pragma once

#include "device_state.h"
#include "responder.h"
#include "wqe_copy.h"

#include <cstdint>

namespace vrnic {

// busy: the destination is another VM's device whose lock a lower-ordered
// thread holds; the WQE is tried again in the next pass.
enum class Outcome { consumed, rnr_wait, partial, busy };

// Completes the SQ WQE at the head; an error also moves the QP to ERR.
void complete_send(DeviceState& d, Qp& qp, const vrnic_send_wqe_hdr& h, uint8_t status,
                   uint64_t len, uint32_t vendor);

// Reads the slot at sq.ci into the private copy `w`; false when it could
// not (the WQE has completed in error).
bool read_send_wqe(DeviceState& d, Qp& qp, SendWqeCopy& w);

// Local checks of 14.1 steps 1-3 on the private copy `w` (the opcode by
// qp.type). Returns 0 and fills `msg`, or the failing status with `*vendor`
// set.
uint8_t check_local(DeviceState& d, Qp& qp, SendWqeCopy& w, LocalMsg* msg, uint32_t* vendor);

// The ack timeout (4.096 us * 2^timeout; 0, infinite in IB, waits 100 ms
// per retry here), at most one second.
uint64_t ack_timeout_ns(uint8_t timeout);

// Executes the RC or UC WQE at sq.ci for a peer beyond the uplink
// (wire_requester.cc): `w` is its copy, its local checks passed, when it is
// new; null when its packets are already on their way.
Outcome execute_wire_send(DeviceState& d, Qp& qp, const SendWqeCopy* w);

// Executes the UD WQE at sq.ci (14.6); a datagram is never moved in slices
// and never waits.
Outcome execute_ud_send(DeviceState& d, Qp& qp, bool rnr_counted);

} // namespace vrnic
