// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Extended CQs: start_poll / next_poll / end_poll and the read_* functions
// over the CQE the poller holds, parsed by the same helpers as ibv_poll_cq
// (ring.cc), plus the device clock that stamps CQEs.

#include "guard.h"
#include "provider.h"

namespace vrnic::prov {
namespace {

const vrnic_cqe& cur(ibv_cq_ex* c) noexcept {
    return to_cq(c)->poller.current();
}

// What every poll leaves in the ibv_cq_ex itself.
void expose(ibv_cq_ex* c) noexcept {
    c->wr_id = cur(c).wr_id;
    c->status = cqe_status(cur(c));
}

int cq_start_poll(ibv_cq_ex* c, ibv_poll_cq_attr* attr) noexcept {
    if (attr && attr->comp_mask)
        return EINVAL;
    int err = to_cq(c)->poller.start_poll();
    if (!err)
        expose(c);
    return err;
}

int cq_next_poll(ibv_cq_ex* c) noexcept {
    int err = to_cq(c)->poller.next_poll();
    if (!err)
        expose(c);
    return err;
}

void cq_end_poll(ibv_cq_ex* c) noexcept {
    to_cq(c)->poller.end_poll();
}

ibv_wc_opcode cq_read_opcode(ibv_cq_ex* c) noexcept {
    return static_cast<ibv_wc_opcode>(cur(c).opcode);
}
uint32_t cq_read_vendor_err(ibv_cq_ex* c) noexcept {
    return cur(c).vendor_err;
}
uint32_t cq_read_byte_len(ibv_cq_ex* c) noexcept {
    return cur(c).byte_len;
}
// Also ibv_wc_read_invalidated_rkey()'s: with WITH_INV the CQE's word is the
// invalidated rkey, little-endian as the host reads it (spec 12.1).
__be32 cq_read_imm_data(ibv_cq_ex* c) noexcept {
    return cur(c).imm_data;
}
uint32_t cq_read_qp_num(ibv_cq_ex* c) noexcept {
    return cur(c).qpn;
}
uint32_t cq_read_src_qp(ibv_cq_ex* c) noexcept {
    return cqe_src_qp(cur(c));
}
unsigned int cq_read_wc_flags(ibv_cq_ex* c) noexcept {
    return cqe_wc_flags(cur(c));
}
uint32_t cq_read_slid(ibv_cq_ex*) noexcept {
    return 0; // RoCE-style addressing: no LIDs
}
uint8_t cq_read_sl(ibv_cq_ex* c) noexcept {
    return cqe_sl(cur(c));
}
uint8_t cq_read_dlid_path_bits(ibv_cq_ex* c) noexcept {
    return cur(c).dlid_path_bits;
}
// The device clock counts nanoseconds (hca_core_clock 1 GHz) of the host's
// CLOCK_REALTIME, so the raw stamp is also the wall-clock time.
uint64_t cq_read_completion_ts(ibv_cq_ex* c) noexcept {
    return cur(c).timestamp;
}
uint64_t cq_read_completion_wallclock_ns(ibv_cq_ex* c) noexcept {
    return cur(c).timestamp;
}

} // namespace

// Every reader is set: a CQ from ibv_create_cq can be read the same way.
void set_cq_ex_ops(ibv_cq_ex* c) noexcept {
    c->start_poll = cq_start_poll;
    c->next_poll = cq_next_poll;
    c->end_poll = cq_end_poll;
    c->read_opcode = cq_read_opcode;
    c->read_vendor_err = cq_read_vendor_err;
    c->read_wc_flags = cq_read_wc_flags;
    c->read_byte_len = cq_read_byte_len;
    c->read_imm_data = cq_read_imm_data;
    c->read_qp_num = cq_read_qp_num;
    c->read_src_qp = cq_read_src_qp;
    c->read_slid = cq_read_slid;
    c->read_sl = cq_read_sl;
    c->read_dlid_path_bits = cq_read_dlid_path_bits;
    c->read_completion_ts = cq_read_completion_ts;
    c->read_completion_wallclock_ns = cq_read_completion_wallclock_ns;
}

// The raw clock is the device's nanosecond count, kept whole in tv_nsec
// (tv_sec 0) as rdma-core's providers report raw cycles.
int query_rt_values(ibv_context* context, ibv_values_ex* values) noexcept {
    if (values->comp_mask & ~uint32_t{IBV_VALUES_MASK_RAW_CLOCK})
        return EINVAL;
    uint32_t done = 0;
    if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
        uint64_t now = 0;
        int err = method_query_clock(state(context).cmd_fd, &now);
        if (err)
            return err;
        values->raw_clock.tv_sec = 0;
        values->raw_clock.tv_nsec = static_cast<long>(now);
        done |= IBV_VALUES_MASK_RAW_CLOCK;
    }
    values->comp_mask = done;
    return 0;
}

} // namespace vrnic::prov
