// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic: driver attributes of QPs, CQs and MRs for rdma res (shown with -d).
 */
#include <rdma/restrack.h>

#include "vrnic.h"

static struct nlattr *vrnic_res_begin(struct sk_buff *msg)
{
	return nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
}

static int vrnic_res_end(struct sk_buff *msg, struct nlattr *table, int err)
{
	if (err) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}

int vrnic_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct vrnic_qp *qp = to_vqp(ibqp);
	struct nlattr *table = vrnic_res_begin(msg);

	if (!table)
		return -EMSGSIZE;
	return vrnic_res_end(msg, table,
		rdma_nl_put_driver_u32(msg, "db_slot", qp->db_slot) ||
		rdma_nl_put_driver_u32(msg, "sq_depth",
				       1U << qp->sq.log_depth) ||
		rdma_nl_put_driver_u32(msg, "sq_wqe_size",
				       1U << qp->sq.wqe_shift) ||
		rdma_nl_put_driver_u32(msg, "rq_depth",
				       1U << qp->rq.log_depth) ||
		rdma_nl_put_driver_u32(msg, "rq_wqe_size",
				       1U << qp->rq.wqe_shift) ||
		rdma_nl_put_driver_u32(msg, "max_inline", qp->max_inline));
}

int vrnic_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct vrnic_cq *cq = to_vcq(ibcq);
	struct nlattr *table = vrnic_res_begin(msg);

	if (!table)
		return -EMSGSIZE;
	return vrnic_res_end(msg, table,
		rdma_nl_put_driver_u32(msg, "hw_cqn", cq->cqn) ||
		rdma_nl_put_driver_u32(msg, "db_slot", cq->db_slot) ||
		rdma_nl_put_driver_u32(msg, "depth", 1U << cq->log_depth) ||
		rdma_nl_put_driver_u32(msg, "eqn", cq->eqn));
}

int vrnic_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct vrnic_mr *mr = to_vmr(ibmr);
	struct nlattr *table = vrnic_res_begin(msg);

	if (!table)
		return -EMSGSIZE;
	return vrnic_res_end(msg, table,
		rdma_nl_put_driver_u32(msg, "handle", mr->handle) ||
		rdma_nl_put_driver_u32(msg, "pages", mr->npages) ||
		(mr->umem && rdma_nl_put_driver_u32(msg, "page_size",
						    1U << mr->page_shift)));
}
