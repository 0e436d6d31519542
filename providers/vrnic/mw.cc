// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Memory windows (device interface 1.8, sections 10.28, 10.29, 14.11):
// ibv_alloc_mw and ibv_dealloc_mw through the kernel, and ibv_bind_mw, which
// binds a type 1 window with a BIND_MW WQE on the QP's send queue, posted as
// ibv_post_send posts (it completes on the send CQ as IBV_WC_BIND_MW). Type 2
// windows are bound by IBV_WR_BIND_MW and ibv_wr_bind_mw (ring.cc).

#include <memory>
#include <mutex>

#include "guard.h"
#include "provider.h"

namespace vrnic::prov {
namespace {

// What the device would refuse with MW_BIND_ERR and the verbs can tell at
// once (spec 14.11), and what libibverbs leaves to the provider.
int check_bind(ibv_qp* qp, ibv_mw* mw, const ibv_mw_bind* bind) {
    if (!qp || !mw || !bind || mw->type != IBV_MW_TYPE_1 || mw->context != qp->context)
        return EINVAL;
    // A parent domain carries its PD's handle: the same PD, the same handle.
    if (!qp->pd || qp->pd->handle != mw->pd->handle)
        return EPERM;
    const ibv_mw_bind_info& info = bind->bind_info;
    if (!info.mr)
        return info.addr || info.length ? EINVAL : 0; // unbinding
    if (info.mr->context != qp->context || info.mr->pd->handle != mw->pd->handle)
        return EPERM;
    if (!info.length)
        return 0; // unbinding: the MR is not used
    // Every MR of this provider is a verbs_mr of reg_mr's (IBV_MR_TYPE_MR);
    // its access is what it was registered (or reregistered) with.
    const auto* vmr = reinterpret_cast<const verbs_mr*>(info.mr);
    if (vmr->mr_type != IBV_MR_TYPE_MR || !(vmr->access & IBV_ACCESS_MW_BIND))
        return EINVAL;
    // Writes and atomics through the window write the MR's pages.
    if ((info.mw_access_flags & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
        !(vmr->access & IBV_ACCESS_LOCAL_WRITE))
        return EINVAL;
    return 0; // the rights themselves: SendQueue::bind_mw()
}

int post_bind(QpRings& r, ibv_mw* mw, const ibv_mw_bind& bind) {
    if (!r.db) // an XRC target has no SQ
        return EINVAL;
    const uint32_t rkey = ibv_inc_rkey(mw->rkey);
    std::lock_guard<QueueLock> guard(r.sq_lock);
    if (r.db->fatal())
        return EIO;
    int err = r.sq.bind_mw(bind.wr_id, bind.send_flags, rkey, bind.bind_info);
    if (err)
        return err;
    r.sq.publish(*r.db, r.sq_pi_word, VRNIC_DB_STATUS_NEED_WAKEUP);
    mw->rkey = rkey;
    return 0;
}

} // namespace

ibv_mw* alloc_mw(ibv_pd* pd, ibv_mw_type type) noexcept {
    return guarded_ptr<ibv_mw>([&](ibv_mw*& out) {
        if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2)
            return EINVAL;
        if (state(pd->context).caps.version_minor < 8)
            return EOPNOTSUPP;
        auto mw = std::make_unique<ibv_mw>();
        struct ibv_alloc_mw cmd {};
        ib_uverbs_alloc_mw_resp resp{};
        int err = ibv_cmd_alloc_mw(pd, type, mw.get(), &cmd, sizeof(cmd), &resp, sizeof(resp));
        if (!err)
            out = mw.release();
        return err;
    });
}

int dealloc_mw(ibv_mw* mw) noexcept {
    return guarded([&] {
        int err = ibv_cmd_dealloc_mw(mw);
        if (!err)
            delete mw;
        return err;
    });
}

// The window's next rkey differs from its current one in the key byte only
// (ibv_inc_rkey); it is the window's rkey once the WQE is posted. Returns 0
// or an errno, also left in errno.
int bind_mw(ibv_qp* ibqp, ibv_mw* mw, ibv_mw_bind* bind) noexcept {
    int err = check_bind(ibqp, mw, bind);
    if (!err)
        err = post_bind(to_qp(ibqp)->rings, mw, *bind);
    if (err)
        errno = err;
    return err;
}

} // namespace vrnic::prov
