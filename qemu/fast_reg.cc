// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The local operations REG_MR, LOCAL_INV and BIND_MW, and remote
// invalidation (sections 10.27, 14.10, 14.11).
#include "fast_reg.h"

#include "all_zero.h"
#include "completion.h"
#include "mw.h"

#include <cstring>

namespace vrnic {

namespace {

constexpr uint8_t kLocalOpFlags = VRNIC_WQE_F_SIGNALED | VRNIC_WQE_F_SOLICITED | VRNIC_WQE_F_FENCE;

// What every local operation's header must hold: no data, no destination.
uint32_t check_local_hdr(const Qp& qp, const vrnic_send_wqe_hdr& h) {
    if (!qp_type_allows_opcode(qp.type, h.opcode))
        return kVeBadOpcode;
    if (h.flags & ~kLocalOpFlags)
        return kVeBadFlags;
    if (h.num_sge || h.reserved)
        return kVeBadFrmrWqe;
    return kVeNone;
}

// The pages of the registration `r` asks for, or 0 when it is malformed.
uint64_t reg_npages(const DeviceState& d, const vrnic_wqe_reg_mr& r) {
    if (r.length == 0 || r.length > d.params.max_mr_size || r.iova + r.length < r.iova)
        return 0;
    if (r.page_shift < VRNIC_MR_PAGE_SHIFT_MIN || r.page_shift > VRNIC_MR_PAGE_SHIFT_MAX ||
        !(d.params.page_size_cap & (1ull << r.page_shift)))
        return 0;
    const uint64_t psize = 1ull << r.page_shift;
    return ((r.iova & (psize - 1)) + r.length + psize - 1) >> r.page_shift;
}

bool access_ok(uint32_t access) {
    if (access & ~uint32_t(VRNIC_ACCESS_ALL))
        return false;
    return !(access & (VRNIC_ACCESS_REMOTE_WRITE | VRNIC_ACCESS_REMOTE_ATOMIC)) ||
           (access & VRNIC_ACCESS_LOCAL_WRITE);
}

uint8_t reg_mr(DeviceState& d, const Qp& qp, const vrnic_send_wqe_hdr& h, uint32_t* ve) {
    const vrnic_wqe_reg_mr& r = h.reg_mr;
    // The page list is guest physical: only the kernel may name one.
    if (qp.uctx->handle != VRNIC_UCTX_KERNEL)
        return *ve = kVeFrmrUserQp, VRNIC_WC_LOC_QP_OP_ERR;
    if (h.invalidate_rkey || r.reserved)
        return *ve = kVeBadFrmrWqe, VRNIC_WC_LOC_QP_OP_ERR;
    Mr* mr = d.obj->mrs.find_any_low(r.key);
    if (!mr || !mr->fast)
        return *ve = kVeFrmrBadKey, VRNIC_WC_LOC_PROT_ERR;
    if (mr->pd != qp.pd)
        return *ve = kVeFrmrPd, VRNIC_WC_LOC_PROT_ERR;
    if (mr->valid)
        return *ve = kVeFrmrValid, VRNIC_WC_LOC_PROT_ERR;
    if (!access_ok(r.access))
        return *ve = kVeFrmrAccess, VRNIC_WC_LOC_QP_OP_ERR;
    const uint64_t n = reg_npages(d, r);
    if (!n)
        return *ve = kVeFrmrRange, VRNIC_WC_LOC_QP_OP_ERR;
    if (n > mr->max_pages)
        return *ve = kVeFrmrTooManyPages, VRNIC_WC_LOC_LEN_ERR;
    // The MR is free: its list may be overwritten, even by a bad one.
    mr->pages.resize(n); // within the capacity ALLOC_MR reserved
    if (r.pbl_addr % 8 || !d.mem.read(r.pbl_addr, mr->pages.data(), n * 8))
        return *ve = kVeFrmrPageList, VRNIC_WC_LOC_QP_OP_ERR;
    const uint64_t psize = 1ull << r.page_shift;
    for (uint64_t a : mr->pages)
        if (a & (psize - 1) || !d.mem.at(a, psize))
            return *ve = kVeFrmrPageList, VRNIC_WC_LOC_QP_OP_ERR;
    if (!d.obj->mrs.set_low(mr->key, r.key))
        return *ve = kVeFrmrBadKey, VRNIC_WC_LOC_PROT_ERR;
    mr->key = r.key;
    mr->access = r.access;
    mr->iova = r.iova;
    mr->length = r.length;
    mr->page_shift = r.page_shift;
    mr->valid = true;
    return VRNIC_WC_SUCCESS;
}

// The fast-registration MR or type 2 window `key` names exactly (a stale
// key byte names nothing), of qp's PD; `remote` (SEND_WITH_INV at qp) only
// reaches a window bound to qp. 0 or the vendor error.
uint32_t find_invalidatable(DeviceState& d, const Qp& qp, uint32_t key, bool remote, Mr** out) {
    Mr* mr = d.obj->mrs.find(key);
    if (!mr)
        return kVeFrmrBadKey;
    if (mr->mw_type == VRNIC_MW_TYPE_1)
        return kVeMwType1Inv;
    if (!mr->fast && !mr->mw_type)
        return kVeFrmrNotFast;
    if (mr->pd != qp.pd || (remote && mr->mw_type && mr->valid && mr->mw_qpn != qp.qpn))
        return kVeFrmrPd;
    *out = mr;
    return kVeNone;
}

uint8_t local_inv(DeviceState& d, const Qp& qp, const vrnic_send_wqe_hdr& h, uint32_t* ve) {
    if (!all_zero(h.raw))
        return *ve = kVeBadFrmrWqe, VRNIC_WC_LOC_QP_OP_ERR;
    Mr* mr = nullptr;
    if ((*ve = find_invalidatable(d, qp, h.invalidate_rkey, false, &mr)))
        return VRNIC_WC_LOC_PROT_ERR;
    mr->valid = false;
    return VRNIC_WC_SUCCESS;
}

} // namespace

Outcome execute_local_op(DeviceState& d, Qp& qp, const SendWqeCopy& w) {
    const vrnic_send_wqe_hdr& h = w.h;
    uint32_t ve = check_local_hdr(qp, h);
    uint8_t st = ve ? VRNIC_WC_LOC_QP_OP_ERR : VRNIC_WC_SUCCESS;
    if (!ve && h.opcode == VRNIC_WR_REG_MR)
        st = reg_mr(d, qp, h, &ve);
    else if (!ve && h.opcode == VRNIC_WR_LOCAL_INV)
        st = local_inv(d, qp, h, &ve);
    else if (!ve)
        st = bind_mw(d, qp, h, &ve);
    complete_send(d, qp, h, st, 0, ve);
    return Outcome::consumed;
}

uint32_t remote_invalidate(DeviceState& d, const Qp& resp, uint32_t rkey) {
    Mr* mr = nullptr;
    if (uint32_t ve = find_invalidatable(d, resp, rkey, true, &mr))
        return ve;
    mr->valid = false;
    return kVeNone;
}

} // namespace vrnic
