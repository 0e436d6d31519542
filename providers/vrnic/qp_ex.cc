// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Extended QPs: the ibv_wr_* work-request API. A session (wr_start ..
// wr_complete/wr_abort) holds the QP's send lock, builds WQEs in the ring
// through the same SendQueue code as ibv_post_send (WrBuilder, ring.cc) and
// publishes them all at wr_complete, which reports the first error.

#include "provider.h"

namespace vrnic::prov {
namespace {

void wr_start(ibv_qp_ex* q) noexcept {
    Qp* qp = to_qp(q);
    qp->rings.sq_lock.lock();
    qp->wr.start(qp->rings.sq);
}
int wr_complete(ibv_qp_ex* q) noexcept {
    Qp* qp = to_qp(q);
    int err;
    if (qp->rings.db->fatal()) {
        qp->wr.abort();
        err = EIO;
    } else {
        err = qp->wr.complete(*qp->rings.db, qp->rings.sq_pi_word);
    }
    qp->rings.sq_lock.unlock();
    return err;
}
void wr_abort(ibv_qp_ex* q) noexcept {
    Qp* qp = to_qp(q);
    qp->wr.abort();
    qp->rings.sq_lock.unlock();
}
void wr_rdma_write(ibv_qp_ex* q, uint32_t rkey, uint64_t addr) noexcept {
    Qp* qp = to_qp(q);
    qp->wr.open(q->wr_id, q->wr_flags, VRNIC_WR_RDMA_WRITE);
    qp->wr.rdma(rkey, addr);
}
void wr_rdma_write_imm(ibv_qp_ex* q, uint32_t rkey, uint64_t addr, __be32 imm) noexcept {
    Qp* qp = to_qp(q);
    qp->wr.open(q->wr_id, q->wr_flags, VRNIC_WR_RDMA_WRITE_WITH_IMM, imm);
    qp->wr.rdma(rkey, addr);
}
void wr_rdma_read(ibv_qp_ex* q, uint32_t rkey, uint64_t addr) noexcept {
    Qp* qp = to_qp(q);
    qp->wr.open(q->wr_id, q->wr_flags, VRNIC_WR_RDMA_READ);
    qp->wr.rdma(rkey, addr);
}
void wr_send(ibv_qp_ex* q) noexcept {
    to_qp(q)->wr.open(q->wr_id, q->wr_flags, VRNIC_WR_SEND);
}
void wr_send_imm(ibv_qp_ex* q, __be32 imm) noexcept {
    to_qp(q)->wr.open(q->wr_id, q->wr_flags, VRNIC_WR_SEND_WITH_IMM, imm);
}
void wr_atomic_cmp_swp(ibv_qp_ex* q, uint32_t rkey, uint64_t addr, uint64_t compare,
                       uint64_t swap) noexcept {
    Qp* qp = to_qp(q);
    qp->wr.open(q->wr_id, q->wr_flags, VRNIC_WR_ATOMIC_CMP_AND_SWP);
    qp->wr.atomic(rkey, addr, compare, swap);
}
void wr_atomic_fetch_add(ibv_qp_ex* q, uint32_t rkey, uint64_t addr, uint64_t add) noexcept {
    Qp* qp = to_qp(q);
    qp->wr.open(q->wr_id, q->wr_flags, VRNIC_WR_ATOMIC_FETCH_AND_ADD);
    qp->wr.atomic(rkey, addr, add, 0);
}
// Memory windows and invalidation (RC, UC; send_ops_flags bound them to the
// device's version): local operations, but for SEND_WITH_INV.
void wr_bind_mw(ibv_qp_ex* q, ibv_mw* mw, uint32_t rkey, const ibv_mw_bind_info* info) noexcept {
    Qp* qp = to_qp(q);
    qp->wr.open(q->wr_id, q->wr_flags, VRNIC_WR_BIND_MW);
    qp->wr.bind_mw(mw, rkey, info);
}
void wr_local_inv(ibv_qp_ex* q, uint32_t invalidate_rkey) noexcept {
    Qp* qp = to_qp(q);
    qp->wr.open(q->wr_id, q->wr_flags, VRNIC_WR_LOCAL_INV);
    qp->wr.invalidate(invalidate_rkey);
}
void wr_send_inv(ibv_qp_ex* q, uint32_t invalidate_rkey) noexcept {
    Qp* qp = to_qp(q);
    qp->wr.open(q->wr_id, q->wr_flags, VRNIC_WR_SEND_WITH_INV);
    qp->wr.invalidate(invalidate_rkey);
}
void wr_set_ud_addr(ibv_qp_ex* q, ibv_ah* ah, uint32_t remote_qpn, uint32_t remote_qkey) noexcept {
    to_qp(q)->wr.ud(ah, remote_qpn, remote_qkey);
}
void wr_set_xrc_srqn(ibv_qp_ex* q, uint32_t remote_srqn) noexcept {
    to_qp(q)->wr.xrc_srqn(remote_srqn);
}
void wr_set_sge(ibv_qp_ex* q, uint32_t lkey, uint64_t addr, uint32_t length) noexcept {
    to_qp(q)->wr.sge(lkey, addr, length);
}
void wr_set_sge_list(ibv_qp_ex* q, size_t n, const ibv_sge* sg) noexcept {
    to_qp(q)->wr.sge_list(n, sg);
}
void wr_set_inline_data(ibv_qp_ex* q, void* addr, size_t length) noexcept {
    to_qp(q)->wr.inline_data(addr, length);
}
void wr_set_inline_data_list(ibv_qp_ex* q, size_t n, const ibv_data_buf* bufs) noexcept {
    to_qp(q)->wr.inline_list(n, bufs);
}

} // namespace

void set_qp_ex_ops(ibv_qp_ex* q) noexcept {
    q->wr_start = wr_start;
    q->wr_complete = wr_complete;
    q->wr_abort = wr_abort;
    q->wr_rdma_write = wr_rdma_write;
    q->wr_rdma_write_imm = wr_rdma_write_imm;
    q->wr_rdma_read = wr_rdma_read;
    q->wr_send = wr_send;
    q->wr_send_imm = wr_send_imm;
    q->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
    q->wr_atomic_fetch_add = wr_atomic_fetch_add;
    q->wr_bind_mw = wr_bind_mw;
    q->wr_local_inv = wr_local_inv;
    q->wr_send_inv = wr_send_inv;
    q->wr_set_ud_addr = wr_set_ud_addr;
    q->wr_set_xrc_srqn = wr_set_xrc_srqn;
    q->wr_set_sge = wr_set_sge;
    q->wr_set_sge_list = wr_set_sge_list;
    q->wr_set_inline_data = wr_set_inline_data;
    q->wr_set_inline_data_list = wr_set_inline_data_list;
}

} // namespace vrnic::prov
