// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The provider's side of the data path: WQEs, doorbells and CQ polling.
#include "guest_driver.h"

#include "shared_word.h"

#include <algorithm>
#include <cstring>

namespace vrnic::test {

namespace {

// A receive WQE (RQ or SRQ: one format) in the slot at w; SGEs past the
// stride are cut off, num_sge says how many the caller asked for.
void write_recv_wqe(uint8_t* w, uint32_t stride, uint64_t wr_id,
                    const std::vector<vrnic_sge>& sge) {
    memset(w, 0, stride);
    auto* h = reinterpret_cast<vrnic_recv_wqe_hdr*>(w);
    h->wr_id = wr_id;
    h->num_sge = static_cast<uint8_t>(sge.size());
    size_t room = (stride - VRNIC_RECV_WQE_HDR_SIZE) / VRNIC_SGE_SIZE;
    if (!sge.empty())
        memcpy(w + VRNIC_RECV_WQE_HDR_SIZE, sge.data(),
               std::min(room, sge.size()) * VRNIC_SGE_SIZE);
}

} // namespace

void GuestDriver::post_send(QpInfo& qp, const SendWr& wr, bool pub) {
    const uint32_t stride = 1u << qp.sq_shift;
    uint8_t* w = host(ring_slot(qp.sq, qp.sq_log, stride, qp.sq_pi), stride);
    memset(w, 0, stride);
    auto* h = reinterpret_cast<vrnic_send_wqe_hdr*>(w);
    h->wr_id = wr.wr_id;
    h->opcode = wr.opcode;
    h->flags = wr.flags;
    h->imm_data = wr.imm_be;
    if (wr.inv_rkey)
        h->invalidate_rkey = wr.inv_rkey;
    if (wr.opcode == VRNIC_WR_REG_MR) {
        h->reg_mr = wr.reg;
    } else if (wr.opcode == VRNIC_WR_BIND_MW) {
        h->bind_mw = wr.bind;
    } else if (wr.opcode == VRNIC_WR_ATOMIC_CMP_AND_SWP ||
               wr.opcode == VRNIC_WR_ATOMIC_FETCH_AND_ADD) {
        h->atomic.remote_addr = wr.remote_addr;
        h->atomic.rkey = wr.rkey;
        h->atomic.compare_add = wr.compare_add;
        h->atomic.swap = wr.swap;
        h->atomic.xrc_srqn = wr.xrc_srqn;
    } else if (wr.ud) {
        h->ud.ah = wr.ah;
        h->ud.remote_qpn = wr.remote_qpn;
        h->ud.remote_qkey = wr.remote_qkey;
    } else {
        h->rdma.remote_addr = wr.remote_addr;
        h->rdma.rkey = wr.rkey;
        h->rdma.xrc_srqn = wr.xrc_srqn;
    }
    uint32_t hdr = VRNIC_SEND_WQE_HDR_SIZE;
    if (wr.with_av) {
        h->flags |= VRNIC_WQE_F_AV;
        memcpy(w + hdr, &wr.av, sizeof(wr.av));
        hdr = VRNIC_SEND_WQE_AV_HDR_SIZE;
    }
    if (wr.flags & VRNIC_WQE_F_INLINE) {
        auto* ih = reinterpret_cast<vrnic_inline_hdr*>(w + hdr);
        ih->length = static_cast<uint32_t>(wr.inline_data.size());
        size_t room = stride - hdr - VRNIC_INLINE_HDR_SIZE;
        if (!wr.inline_data.empty())
            memcpy(w + hdr + VRNIC_INLINE_HDR_SIZE, wr.inline_data.data(),
                   std::min(room, wr.inline_data.size()));
    } else {
        h->num_sge = static_cast<uint8_t>(wr.sge.size());
        size_t room = (stride - hdr) / VRNIC_SGE_SIZE;
        if (!wr.sge.empty())
            memcpy(w + hdr, wr.sge.data(), std::min(room, wr.sge.size()) * VRNIC_SGE_SIZE);
    }
    qp.sq_pi++;
    if (pub)
        publish(qp);
}

void GuestDriver::post_recv(QpInfo& qp, uint64_t wr_id, const std::vector<vrnic_sge>& sge,
                            bool pub) {
    const uint32_t stride = 1u << qp.rq_shift;
    write_recv_wqe(host(ring_slot(qp.rq, qp.rq_log, stride, qp.rq_pi), stride), stride, wr_id, sge);
    qp.rq_pi++;
    if (pub)
        publish(qp);
}

void GuestDriver::post_srq_recv(SrqInfo& srq, uint64_t wr_id, const std::vector<vrnic_sge>& sge,
                                bool pub) {
    const uint32_t stride = 1u << srq.wqe_shift;
    write_recv_wqe(host(ring_slot(srq.ring, srq.log_depth, stride, srq.pi), stride), stride, wr_id,
                   sge);
    srq.pi++;
    if (pub)
        publish(srq);
}

void GuestDriver::publish(const SrqInfo& srq) {
    store_release(&slot(srq.db_page, srq.db_slot)->srq.pi, srq.pi);
}

uint32_t GuestDriver::srq_ci(const SrqInfo& srq) const {
    return load_acquire(&slot(srq.db_page, srq.db_slot)->srq.ci);
}

void GuestDriver::publish(const QpInfo& qp) {
    vrnic_db_slot* s = slot(qp.db_page, qp.db_slot);
    store_release(&s->qp.sq_pi, qp.sq_pi);
    store_release(&s->qp.rq_pi, qp.rq_pi);
}

std::vector<vrnic_cqe> GuestDriver::poll_cq(CqInfo& cq, unsigned max) {
    std::vector<vrnic_cqe> out;
    while (out.size() < max) {
        auto* e = reinterpret_cast<vrnic_cqe*>(
            host(ring_slot(cq.ring, cq.log_depth, VRNIC_CQE_SIZE, cq.ci), VRNIC_CQE_SIZE));
        if ((load_acquire(&e->owner) & 1) != VRNIC_PHASE(cq.ci, cq.log_depth))
            break;
        out.push_back(*e);
        cq.ci++;
    }
    store_release(&slot(cq.db_page, cq.db_slot)->cq.ci, cq.ci);
    return out;
}

void GuestDriver::arm_cq(CqInfo& cq, bool solicited_only) {
    if (solicited_only)
        cq.sol_sn++;
    else
        cq.next_sn++;
    store_release(&slot(cq.db_page, cq.db_slot)->cq.arm, VRNIC_CQ_ARM_WORD(cq.next_sn, cq.sol_sn));
    full_fence();
}

} // namespace vrnic::test
