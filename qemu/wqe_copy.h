// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The device's private copies of work queue entries: each WQE is read from
// its ring once, then only the copy is checked and used. A message moved in
// several slices keeps its copies in a MsgInFlight between passes.
#pragma once

#include <vrnic_dev.h>

#include <cstdint>

namespace vrnic {

// Largest SGE count a WQE stride can hold (VRNIC_SQ_MAX_SGE(11) = 125).
constexpr unsigned kMaxWqeSge = 128;

// One SQ slot. (GCC documents union punning; memcpy fills it.)
struct SendWqeCopy {
    vrnic_send_wqe_hdr h;
    union {
        vrnic_sge sge[kMaxWqeSge];
        struct {
            vrnic_inline_hdr ih;
            uint8_t data[VRNIC_SQ_MAX_INLINE(VRNIC_SQ_WQE_SHIFT_MAX)];
        } inl;
    };
};
static_assert(sizeof(SendWqeCopy) >= (1u << VRNIC_SQ_WQE_SHIFT_MAX));

// The fields of one RQ slot the responder uses.
struct RecvWqe {
    uint64_t wr_id = 0;
    uint32_t idx = 0;
    unsigned nsge = 0;
    vrnic_sge sge[kMaxWqeSge];
};

// A message that did not fit in one slice (device-interface.md 14.5). The
// copies are kept; every key, bound and state is checked again for each
// slice against the objects as they are then.
struct MsgInFlight {
    uint32_t sq_idx = 0; // the SQ WQE (free-running index) it belongs to
    uint64_t done = 0;   // bytes moved by earlier slices
    SendWqeCopy wqe;
    bool recv_held = false; // SEND: `recv` is the responder's RQ head
    RecvWqe recv;
};

} // namespace vrnic
