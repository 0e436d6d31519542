// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// PSNs at message level (device-interface.md 14.1): the requester's next PSN
// (attr.sq_psn, from RTS) must be the responder's expected PSN (attr.rq_psn,
// from RTR), or the responder drops the message as out of sequence. A message
// takes ceil(len / path MTU) PSNs, at least one, at the requester's path MTU
// (an RDMA READ the PSNs of its response packets, an atomic one); both sides
// advance by that much when the responder has executed it.
#pragma once

#include "objects.h"

#include <cstdint>

namespace vrnic {

// log2 of the bytes a packet carries at `path_mtu` (VRNIC_MTU_256 (1): 8).
inline unsigned psn_mtu_shift(uint8_t path_mtu) {
    const unsigned lo = VRNIC_MTU_256, hi = VRNIC_MTU_4096;
    return 7 + (path_mtu < lo ? lo : path_mtu > hi ? hi : path_mtu);
}

inline uint32_t psn_packets(uint64_t len, uint8_t path_mtu) {
    return len ? static_cast<uint32_t>(((len - 1) >> psn_mtu_shift(path_mtu)) + 1) : 1;
}

// Whether PSN a is at or after PSN b (within half the 24-bit PSN space).
inline bool psn_at_or_after(uint32_t a, uint32_t b) {
    return ((a - b) & VRNIC_PSN_MASK) < (VRNIC_PSN_MASK + 1) / 2;
}

inline bool psn_in_sequence(const Qp& req, const Qp& resp) {
    return req.attr.sq_psn == resp.attr.rq_psn;
}

inline void psn_advance(Qp& req, Qp& resp, uint64_t len) {
    const uint32_t n = psn_packets(len, req.attr.path_mtu);
    req.attr.sq_psn = (req.attr.sq_psn + n) & VRNIC_PSN_MASK;
    resp.attr.rq_psn = (resp.attr.rq_psn + n) & VRNIC_PSN_MASK;
}

} // namespace vrnic
