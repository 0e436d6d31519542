// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic event queues and interrupts (device interface sections 2.3, 11).
 *
 * Vector 0 serves command completions and the async EQ, vector 1 the
 * Ethernet function, vectors 2.. one completion EQ each. Handlers run in
 * hard interrupt context, drain everything visible by phase and validate
 * every EQE before use: unknown types and objects are counted and skipped.
 */
#include <linux/interrupt.h>
#include <linux/log2.h>
#include <linux/module.h>

#include "vrnic.h"

static unsigned int vrnic_ceq_log_depth_param;
module_param_named(ceq_log_depth, vrnic_ceq_log_depth_param, uint, 0444);
MODULE_PARM_DESC(ceq_log_depth,
		 "log2 of the completion EQ depth, 4..16 (default 0: room for two events per CQ the device allows)");

static bool vrnic_eqe_valid(const struct vrnic_eq *eq, struct vrnic_eqe *out)
{
	struct vrnic_eqe *eqe;
	u8 owner;

	eqe = vrnic_ring_entry(eq->ring.va, eq->ci, eq->log_depth,
			       sizeof(*eqe));
	owner = READ_ONCE(eqe->owner);
	if (!vrnic_ring_owned(owner, eq->ci, eq->log_depth))
		return false;
	dma_rmb();	/* the rest of the entry after its owner byte */
	out->type = READ_ONCE(eqe->type);
	out->obj = READ_ONCE(eqe->obj);
	out->aux = READ_ONCE(eqe->aux);
	return true;
}

static void vrnic_bad_eqe(struct vrnic_dev *dev, const struct vrnic_eq *eq,
			  const struct vrnic_eqe *eqe)
{
	vrnic_count(dev, VRNIC_CNT_BAD_EQES, 1);
	dev_dbg_ratelimited(&dev->pdev->dev,
			    "EQ %u: skipping EQE type %u obj %u\n", eq->eqn,
			    eqe->type, le32_to_cpu(eqe->obj));
}

static void vrnic_cq_event(struct vrnic_dev *dev, u32 cqn)
{
	struct vrnic_cq *cq = vrnic_cq_get(dev, cqn);
	struct ib_event ev = {};

	if (!cq) {
		vrnic_count(dev, VRNIC_CNT_BAD_EQES, 1);
		return;
	}
	vrnic_count(dev, VRNIC_CNT_CQ_ERRORS, 1);
	dev_dbg_ratelimited(&dev->pdev->dev, "CQ %u error\n", cqn);
	if (cq->ibcq.event_handler) {
		ev.device = &dev->ibdev;
		ev.event = IB_EVENT_CQ_ERR;
		ev.element.cq = &cq->ibcq;
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
	}
	vrnic_cq_put(cq);
}

static void vrnic_qp_event(struct vrnic_dev *dev, u32 qpn,
			   enum ib_event_type type, bool error)
{
	struct vrnic_qp *qp = vrnic_qp_get(dev, qpn);
	struct ib_event ev = {};

	if (!qp) {
		vrnic_count(dev, VRNIC_CNT_BAD_EQES, 1);
		return;
	}
	if (error) {
		vrnic_count(dev, VRNIC_CNT_QP_ERRORS, 1);
		WRITE_ONCE(qp->state, IB_QPS_ERR);
	}
	if (qp->ibqp.event_handler) {
		ev.device = &dev->ibdev;
		ev.event = type;
		ev.element.qp = &qp->ibqp;
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	}
	vrnic_qp_put(qp);
}

static void vrnic_aeq_event(struct vrnic_dev *dev, const struct vrnic_eqe *eqe)
{
	u32 obj = le32_to_cpu(eqe->obj);

	vrnic_count(dev, VRNIC_CNT_ASYNC_EVENTS, 1);

	switch (eqe->type) {
	case VRNIC_EQE_CQ_ERROR:
		vrnic_cq_event(dev, obj);
		return;
	case VRNIC_EQE_QP_FATAL:
		vrnic_qp_event(dev, obj, IB_EVENT_QP_FATAL, true);
		return;
	case VRNIC_EQE_QP_REQ_ERR:
		vrnic_qp_event(dev, obj, IB_EVENT_QP_REQ_ERR, true);
		return;
	case VRNIC_EQE_QP_ACCESS_ERR:
		vrnic_qp_event(dev, obj, IB_EVENT_QP_ACCESS_ERR, true);
		return;
	case VRNIC_EQE_COMM_EST:
		vrnic_qp_event(dev, obj, IB_EVENT_COMM_EST, false);
		return;
	case VRNIC_EQE_SQ_DRAINED:
		vrnic_qp_event(dev, obj, IB_EVENT_SQ_DRAINED, false);
		return;
	case VRNIC_EQE_QP_LAST_WQE_REACHED:
		vrnic_qp_event(dev, obj, IB_EVENT_QP_LAST_WQE_REACHED,
			       false);
		return;
	case VRNIC_EQE_SRQ_LIMIT:
		vrnic_srq_event(dev, obj, IB_EVENT_SRQ_LIMIT_REACHED);
		return;
	case VRNIC_EQE_SRQ_ERR:
		vrnic_srq_event(dev, obj, IB_EVENT_SRQ_ERR);
		return;
	case VRNIC_EQE_PORT_ACTIVE:
	case VRNIC_EQE_PORT_ERR:
		if (obj != 1)
			break;
		vrnic_eth_link_update(dev);
		vrnic_ib_dispatch(dev, eqe->type == VRNIC_EQE_PORT_ACTIVE ?
				  IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR);
		return;
	case VRNIC_EQE_DEVICE_FATAL:
		dev_err(&dev->pdev->dev, "device fatal error, code %u\n",
			obj);
		vrnic_set_fatal(dev, "device reported a fatal error");
		return;
	default:
		/* COMP on the async EQ, GID_CHANGE (reserved in 1.0),
		 * unknown types of a newer minor.
		 */
		break;
	}
	vrnic_bad_eqe(dev, &dev->aeq, eqe);
}

static void vrnic_aeq_process(struct vrnic_dev *dev)
{
	struct vrnic_eq *eq = &dev->aeq;
	u32 budget = 1U << eq->log_depth;
	struct vrnic_eqe eqe;
	u32 done = 0;

	if (!eq->ring.va)
		return;
	while (done < budget && vrnic_eqe_valid(eq, &eqe)) {
		eq->ci++;
		done++;
		vrnic_aeq_event(dev, &eqe);
	}
	if (done)
		writel(eq->ci, &dev->regs->aeq_ci);
}

static irqreturn_t vrnic_admin_irq(int irq, void *data)
{
	struct vrnic_dev *dev = data;

	vrnic_cmdq_complete(dev);
	vrnic_aeq_process(dev);
	return IRQ_HANDLED;
}

static irqreturn_t vrnic_eth_irq_handler(int irq, void *data)
{
	vrnic_eth_irq(data);
	return IRQ_HANDLED;
}

static irqreturn_t vrnic_ceq_irq(int irq, void *data)
{
	struct vrnic_eq *eq = data;
	struct vrnic_dev *dev = eq->dev;
	u32 budget = 1U << eq->log_depth;
	struct vrnic_eqe eqe;
	struct vrnic_cq *cq;
	u32 done = 0;

	if (READ_ONCE(dev->ceq_paused))
		return IRQ_HANDLED;
	while (done < budget && vrnic_eqe_valid(eq, &eqe)) {
		eq->ci++;
		done++;
		if (eqe.type != VRNIC_EQE_COMP) {
			vrnic_bad_eqe(dev, eq, &eqe);
			continue;
		}
		cq = vrnic_cq_get(dev, le32_to_cpu(eqe.obj));
		if (!cq) {
			/* A CQ destroyed with an event in flight. */
			continue;
		}
		vrnic_count(dev, VRNIC_CNT_COMP_EVENTS, 1);
		WRITE_ONCE(cq->armed, false);
		if (cq->ibcq.comp_handler)
			cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
		vrnic_cq_put(cq);
	}
	if (done && eq->created)
		writel(eq->ci, vrnic_kdb_word(dev, eq->db_slot, VRNIC_DB_EQ_CI));
	return IRQ_HANDLED;
}

int vrnic_aeq_alloc(struct vrnic_dev *dev)
{
	struct vrnic_eq *eq = &dev->aeq;

	eq->dev = dev;
	eq->eqn = VRNIC_AEQ_EQN;
	eq->log_depth = VRNIC_AEQ_LOG_DEPTH;
	eq->ci = 0;
	eq->vector = VRNIC_IRQ_ADMIN;
	return vrnic_dma_alloc(dev, &eq->ring,
			       VRNIC_EQE_SIZE << eq->log_depth);
}

void vrnic_aeq_free(struct vrnic_dev *dev)
{
	vrnic_dma_free(dev, &dev->aeq.ring);
}

/* The admin and Ethernet interrupts; comp EQs request their own. */
int vrnic_irqs_request(struct vrnic_dev *dev)
{
	struct pci_dev *pdev = dev->pdev;
	int irq, err;

	snprintf(dev->admin_irq_name, sizeof(dev->admin_irq_name),
		 "vrnic-admin@%s", pci_name(pdev));
	irq = pci_irq_vector(pdev, VRNIC_IRQ_ADMIN);
	err = request_irq(irq, vrnic_admin_irq, 0, dev->admin_irq_name, dev);
	if (err)
		return err;
	dev->admin_irq = irq;

	snprintf(dev->eth_irq_name, sizeof(dev->eth_irq_name),
		 "vrnic-eth@%s", pci_name(pdev));
	irq = pci_irq_vector(pdev, VRNIC_IRQ_ETH);
	err = request_irq(irq, vrnic_eth_irq_handler, 0, dev->eth_irq_name,
			  dev);
	if (err) {
		free_irq(dev->admin_irq, dev);
		dev->admin_irq = 0;
		return err;
	}
	dev->eth_irq = irq;
	return 0;
}

void vrnic_irqs_free(struct vrnic_dev *dev)
{
	if (dev->eth_irq)
		free_irq(dev->eth_irq, dev);
	dev->eth_irq = 0;
	if (dev->admin_irq)
		free_irq(dev->admin_irq, dev);
	dev->admin_irq = 0;
}

static u32 vrnic_ceq_log_depth(struct vrnic_dev *dev)
{
	u64 want = 2ULL * max_t(u32, dev->caps.max_cq, 8);
	u32 max = min_t(u32, dev->caps.max_eqe,
			1U << VRNIC_EQ_LOG_DEPTH_MAX);

	max = min_t(u32, max, VRNIC_RING_MAX_BYTES / VRNIC_EQE_SIZE);
	if (vrnic_ceq_log_depth_param)
		want = 1ULL << min_t(u32, vrnic_ceq_log_depth_param,
				     VRNIC_EQ_LOG_DEPTH_MAX);
	want = min_t(u64, want, max);
	return clamp_t(u32, ilog2(want), VRNIC_EQ_LOG_DEPTH_MIN,
		       VRNIC_EQ_LOG_DEPTH_MAX);
}

static void vrnic_ceq_destroy(struct vrnic_dev *dev, struct vrnic_eq *eq)
{
	if (eq->created) {
		vrnic_cmd_destroy(dev, VRNIC_CMD_DESTROY_EQ, eq->eqn);
		eq->created = false;
	}
	if (eq->irq) {
		free_irq(eq->irq, eq);
		eq->irq = 0;
	}
	vrnic_dma_free(dev, &eq->ring);
}

static int vrnic_ceq_create(struct vrnic_dev *dev, struct vrnic_eq *eq,
			    int index)
{
	struct vrnic_cmd_create_eq_resp resp = {};
	struct vrnic_cmd_create_eq req = {};
	int irq, err;

	eq->dev = dev;
	eq->vector = VRNIC_IRQ_COMP_BASE + index;
	eq->log_depth = vrnic_ceq_log_depth(dev);
	eq->ci = 0;
	err = vrnic_dma_alloc(dev, &eq->ring, VRNIC_EQE_SIZE << eq->log_depth);
	if (err)
		return err;

	snprintf(eq->irq_name, sizeof(eq->irq_name), "vrnic-comp%d@%s",
		 index, pci_name(dev->pdev));
	irq = pci_irq_vector(dev->pdev, eq->vector);
	err = request_irq(irq, vrnic_ceq_irq, 0, eq->irq_name, eq);
	if (err)
		goto err_free;
	eq->irq = irq;

	req.ring_addr = cpu_to_le64(eq->ring.dma);
	req.log_depth = cpu_to_le32(eq->log_depth);
	req.vector = cpu_to_le32(eq->vector);
	err = vrnic_cmd_exec(dev, VRNIC_CMD_CREATE_EQ, &req, sizeof(req),
			     &resp, sizeof(resp));
	if (err)
		goto err_free;
	eq->eqn = le32_to_cpu(resp.eqn);
	eq->db_slot = le32_to_cpu(resp.db_slot);
	eq->created = true;
	if (eq->eqn == VRNIC_AEQ_EQN || !vrnic_db_slot_valid(eq->db_slot)) {
		dev_err(&dev->pdev->dev, "CREATE_EQ returned eqn %u slot %u\n",
			eq->eqn, eq->db_slot);
		err = -EIO;
		goto err_free;
	}
	return 0;

err_free:
	vrnic_ceq_destroy(dev, eq);
	return err;
}

int vrnic_ceqs_create(struct vrnic_dev *dev)
{
	int n, i, err;

	n = min_t(int, dev->num_vectors - VRNIC_IRQ_COMP_BASE,
		  dev->caps.max_comp_eqs);
	if (n < 1)
		return -EINVAL;
	dev->ceqs = kcalloc(n, sizeof(*dev->ceqs), GFP_KERNEL);
	if (!dev->ceqs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		err = vrnic_ceq_create(dev, &dev->ceqs[i], i);
		if (err)
			goto err_destroy;
		dev->num_ceqs = i + 1;
	}
	return 0;

err_destroy:
	vrnic_ceqs_destroy(dev);
	return err;
}

void vrnic_ceqs_destroy(struct vrnic_dev *dev)
{
	int i;

	for (i = dev->num_ceqs - 1; i >= 0; i--)
		vrnic_ceq_destroy(dev, &dev->ceqs[i]);
	dev->num_ceqs = 0;
	kfree(dev->ceqs);
	dev->ceqs = NULL;
}

u32 vrnic_comp_vector_eqn(struct vrnic_dev *dev, int comp_vector)
{
	if (comp_vector < 0)
		comp_vector = 0;
	return dev->ceqs[comp_vector % dev->num_ceqs].eqn;
}

/*
 * The device dropped events because an EQ was full (section 11.4); a
 * completion event among them would leave its consumer waiting forever.
 * Call the completion handler of every CQ that may have been armed, so
 * that each consumer polls again, as after IB_CQ_REPORT_MISSED_EVENTS. A
 * user CQ's arm word belongs to its process, so every user CQ is called:
 * an extra event only makes a consumer poll an empty CQ. A kernel CQ is
 * called only if armed since its last event. Process context.
 */
void vrnic_eq_overflow(struct vrnic_dev *dev)
{
	unsigned long idx, flags;
	struct vrnic_cq *cq;
	void *entry;

	xa_for_each(&dev->cq_xa, idx, entry) {
		cq = vrnic_cq_get(dev, idx);
		if (!cq)
			continue;
		if ((cq->user || xchg(&cq->armed, false)) &&
		    cq->ibcq.comp_handler) {
			local_irq_save(flags);
			cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
			local_irq_restore(flags);
		}
		vrnic_cq_put(cq);
	}
}

/*
 * Test hook (debugfs ceq_pause): stop consuming the completion EQs, so
 * that the device fills them, or consume again what they hold.
 */
void vrnic_ceqs_pause(struct vrnic_dev *dev, bool pause)
{
	struct vrnic_eq *eq;
	int i;

	WRITE_ONCE(dev->ceq_paused, pause);
	if (pause)
		return;
	for (i = 0; i < dev->num_ceqs; i++) {
		eq = &dev->ceqs[i];
		if (!eq->irq)
			continue;
		disable_irq(eq->irq);
		local_irq_disable();
		vrnic_ceq_irq(eq->irq, eq);
		local_irq_enable();
		enable_irq(eq->irq);
	}
}
