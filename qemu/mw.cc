// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// BIND_MW WQEs and accesses through memory windows (section 14.11).
#include "mw.h"

#include "completion.h"
#include "mr.h"

namespace vrnic {

namespace {

constexpr uint32_t kMwRights =
    VRNIC_ACCESS_REMOTE_WRITE | VRNIC_ACCESS_REMOTE_READ | VRNIC_ACCESS_REMOTE_ATOMIC;

// The MR a window of `qp` may be bound to over [addr, addr + len), with
// `rights`: 0 or the vendor error (checks 3 to 5 of 14.11).
uint32_t check_bind_target(const DeviceState& d, const Qp& qp, const vrnic_wqe_bind_mw& b,
                           const Mr** out) {
    const Mr* mr = d.obj->mrs.find(b.mr_lkey);
    if (!mr || mr->mw_type || mr->phys || !mr->valid || mr->pd != qp.pd)
        return kVeMwMr;
    if (!(mr->access & VRNIC_ACCESS_MW_BIND))
        return kVeMwNoBind;
    if ((b.access & ~kMwRights) ||
        ((b.access & (VRNIC_ACCESS_REMOTE_WRITE | VRNIC_ACCESS_REMOTE_ATOMIC)) &&
         !(mr->access & VRNIC_ACCESS_LOCAL_WRITE)))
        return kVeMwAccess;
    if (!mr_contains(d.mem, *mr, b.addr, b.length))
        return kVeMwRange;
    *out = mr;
    return kVeNone;
}

} // namespace

uint8_t bind_mw(DeviceState& d, const Qp& qp, const vrnic_send_wqe_hdr& h, uint32_t* ve) {
    const vrnic_wqe_bind_mw& b = h.bind_mw;
    if (h.invalidate_rkey || b.reserved)
        return *ve = kVeBadFrmrWqe, VRNIC_WC_LOC_QP_OP_ERR;
    Mr* mw = d.obj->mrs.find_any_low(b.rkey);
    if (!mw || !mw->mw_type)
        return *ve = kVeMwBadKey, VRNIC_WC_MW_BIND_ERR;
    if (mw->pd != qp.pd)
        return *ve = kVeMwPd, VRNIC_WC_MW_BIND_ERR;
    // A type 2 window is bound once, then invalidated before the next bind.
    if (mw->mw_type == VRNIC_MW_TYPE_2 && mw->valid)
        return *ve = kVeMwBound, VRNIC_WC_MW_BIND_ERR;
    const Mr* mr = nullptr;
    if (b.length || mw->mw_type == VRNIC_MW_TYPE_2) {
        *ve = b.length ? check_bind_target(d, qp, b, &mr) : uint32_t(kVeMwRange);
        if (*ve)
            return VRNIC_WC_MW_BIND_ERR;
    }
    if (!d.obj->mrs.set_low(mw->key, b.rkey))
        return *ve = kVeMwBadKey, VRNIC_WC_MW_BIND_ERR;
    mw->key = b.rkey;
    mw->valid = mr != nullptr;
    if (mr) {
        mw->iova = b.addr;
        mw->length = b.length;
        mw->access = b.access;
        mw->mw_mr_key = mr->key;
        mw->mw_qpn = qp.qpn;
    }
    return VRNIC_WC_SUCCESS;
}

bool mw_serves(const Mr& mw, const Qp& resp) {
    return mw.valid && (mw.mw_type != VRNIC_MW_TYPE_2 || mw.mw_qpn == resp.qpn);
}

const Mr* mw_target(const DeviceState& d, const Mr& mw, uint64_t addr, uint64_t len) {
    // The MR under the key it had at bind time: gone or re-registered since
    // (a new key), it leaves the window reaching nothing.
    const Mr* mr = d.obj->mrs.find(mw.mw_mr_key);
    return mr && mr_contains(d.mem, *mr, addr, len) ? mr : nullptr;
}

} // namespace vrnic
