// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// XRC (docs/device-interface.md 14.9): XRC domains (shared between processes
// through a file, by the kernel), XRC SRQs, and target QPs created here or
// opened from another process. A target QP has no rings: the device takes
// each message to it into the XRC SRQ the message names. XRC SRQs post on
// their mapped ring like any SRQ (verbs.cc); initiators are send-only QPs
// made by create_qp_ex, whose WQEs carry the remote SRQ number (ring.cc).

#include <memory>

#include "guard.h"
#include "provider.h"

namespace vrnic::prov {

namespace {

struct Xrcd {
    verbs_xrcd vxrcd;
};

// A QP object with no rings: what libibverbs needs of a target QP.
Qp* new_ringless_qp() {
    return make_object<Qp>(nullptr, kResTypeQp);
}

} // namespace

ibv_xrcd* open_xrcd(ibv_context* context, ibv_xrcd_init_attr* attr) noexcept {
    return guarded_ptr<ibv_xrcd>([&](ibv_xrcd*& out) {
        auto x = std::make_unique<Xrcd>();
        struct ibv_open_xrcd cmd {};
        ib_uverbs_open_xrcd_resp resp{};
        int err = ibv_cmd_open_xrcd(context, &x->vxrcd, sizeof(x->vxrcd), attr, &cmd, sizeof(cmd),
                                    &resp, sizeof(resp));
        if (!err)
            out = &x.release()->vxrcd.xrcd;
        return err;
    });
}

int close_xrcd(ibv_xrcd* xrcd) noexcept {
    return guarded([&] {
        auto* x = reinterpret_cast<Xrcd*>(xrcd);
        int err = ibv_cmd_close_xrcd(&x->vxrcd);
        if (!err)
            delete x;
        return err;
    });
}

ibv_srq* create_srq_ex(ibv_context* context, ibv_srq_init_attr_ex* attr) noexcept {
    return guarded_ptr<ibv_srq>([&](ibv_srq*& out) {
        ContextState& st = state(context);
        constexpr uint32_t known = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
                                   IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
        if (attr->comp_mask & ~known)
            return EOPNOTSUPP;
        const bool xrc =
            (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && attr->srq_type == IBV_SRQT_XRC;
        if ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && attr->srq_type != IBV_SRQT_BASIC && !xrc)
            return EOPNOTSUPP;
        if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd)
            return EINVAL;
        if (xrc && (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) ||
                    !(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || !attr->xrcd || !attr->cq))
            return EINVAL;
        if (!st.caps.max_srq_wr)
            return EOPNOTSUPP;
        if (!attr->attr.max_wr || attr->attr.max_wr > st.caps.max_srq_wr)
            return EINVAL;
        auto srq = std::make_unique<Srq>();
        WithUdata<struct ibv_create_xsrq, vrnic_ibv_create_srq> cmd{};
        WithUdata<ib_uverbs_create_srq_resp, vrnic_ibv_create_srq_resp> resp{};
        int err = ibv_cmd_create_srq_ex(context, &srq->vsrq, attr, cmd.core(), cmd.size(),
                                        resp.core(), resp.size());
        if (!err)
            err = finish_srq(st, *srq, resp.drv, attr->attr.max_sge);
        if (!err)
            out = &srq.release()->vsrq.srq;
        return err;
    });
}

int get_srq_num(ibv_srq* srq, uint32_t* srq_num) noexcept {
    const verbs_srq& v = to_srq(srq)->vsrq;
    if (v.srq_type != IBV_SRQT_XRC)
        return EOPNOTSUPP;
    *srq_num = v.srq_num;
    return 0;
}

int create_xrc_recv(ibv_context* context, ibv_qp_init_attr_ex* attr, Qp*& out) noexcept {
    try {
        if (attr->comp_mask & ~uint32_t{IBV_QP_INIT_ATTR_XRCD})
            return EOPNOTSUPP;
        if (!(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !attr->xrcd)
            return EINVAL;
        Qp* qp = new_ringless_qp();
        // The kernel creates the target without this driver's udata.
        WithUdata<struct ibv_create_qp, vrnic_ibv_create_qp> cmd{};
        WithUdata<ib_uverbs_create_qp_resp, vrnic_ibv_create_qp_resp> resp{};
        int err = ibv_cmd_create_qp_ex(context, &qp->vqp, attr, cmd.core(), cmd.size(), resp.core(),
                                       resp.size());
        if (err) {
            destroy_object(qp, kResTypeQp);
            return err;
        }
        out = qp;
        return 0;
    } catch (const std::bad_alloc&) {
        return ENOMEM;
    }
}

ibv_qp* open_qp(ibv_context* context, ibv_qp_open_attr* attr) noexcept {
    return guarded_ptr<ibv_qp>([&](ibv_qp*& out) {
        if (attr->qp_type != IBV_QPT_XRC_RECV)
            return EINVAL;
        Qp* qp = new_ringless_qp();
        struct ibv_open_qp cmd {};
        ib_uverbs_create_qp_resp resp{};
        int err = ibv_cmd_open_qp(context, &qp->vqp, sizeof(qp->vqp), attr, &cmd, sizeof(cmd),
                                  &resp, sizeof(resp));
        if (err) {
            destroy_object(qp, kResTypeQp);
            return err;
        }
        out = &qp->vqp.qp;
        return 0;
    });
}

} // namespace vrnic::prov
