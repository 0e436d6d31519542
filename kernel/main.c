// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic: PCI probe and remove, device reset and bring-up, liveness.
 *
 * The function is QEMU's ivshmem-doorbell device; it is claimed only when
 * BAR2 carries vrnic's signature and a major version this driver knows
 * (device interface section 2.1). Every other ivshmem device is left alone.
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/iopoll.h>
#include <linux/log2.h>
#include <linux/module.h>

#include "vrnic.h"

MODULE_AUTHOR("vrnic authors");
MODULE_DESCRIPTION("vrnic paravirtual RDMA NIC driver");
MODULE_LICENSE("Dual BSD/GPL");

unsigned int vrnic_cmd_timeout_ms = 30000;
module_param_named(cmd_timeout_ms, vrnic_cmd_timeout_ms, uint, 0644);
MODULE_PARM_DESC(cmd_timeout_ms,
		 "Command timeout in ms after which the device is considered dead (default 30000)");

unsigned int vrnic_heartbeat_timeout_ms = 5000;
module_param_named(heartbeat_timeout_ms, vrnic_heartbeat_timeout_ms, uint,
		   0644);
MODULE_PARM_DESC(heartbeat_timeout_ms,
		 "Heartbeat silence in ms after which the device is considered dead (default 5000)");

/* Read-only: tells a test run which build it has loaded. */
static bool vrnic_debug_checks = VRNIC_DEBUG_CHECKS;
module_param_named(debug_checks, vrnic_debug_checks, bool, 0444);
MODULE_PARM_DESC(debug_checks,
		 "Built with the driver's invariant checks (make kernel VRNIC_DEBUG=1)");

static bool vrnic_user_kick = true;
module_param_named(user_kick, vrnic_user_kick, bool, 0444);
MODULE_PARM_DESC(user_kick,
		 "Let user contexts map the doorbell register when BAR0 has a page to itself (default on)");

static const struct pci_device_id vrnic_pci_table[] = {
	{ PCI_DEVICE(VRNIC_PCI_VENDOR_ID, VRNIC_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, vrnic_pci_table);

/*
 * Section 5.2 step 1, without waiting. RESET_PENDING is set before anyone
 * can see FATAL: whoever releases memory after a failed command holds it.
 */
static void vrnic_request_reset_locked(struct vrnic_dev *dev)
{
	u32 req;

	lockdep_assert_held(&dev->held_lock);
	writel(0, &dev->regs->driver_ctrl);
	req = readl(&dev->regs->reset_req) + 1;
	writel(req, &dev->regs->reset_req);
	dev->reset_req = req;
	set_bit(VRNIC_FLAG_RESET_PENDING, &dev->flags);
	vrnic_kick(dev, VRNIC_KICK_CMD);
}

/*
 * A dead device cannot flag its doorbell pages itself: flag them here, so
 * that providers fail posts with EIO at once (spec 5.5).
 */
static void vrnic_flag_db_pages_fatal(struct vrnic_dev *dev)
{
	struct vrnic_db_page __iomem *pages = dev->bar2;
	u32 end = dev->caps.db_page_first + dev->caps.db_page_count;
	__le32 __iomem *st;
	u32 p;

	for (p = dev->caps.db_page_first; p < end; p++) {
		st = &pages[p].slot[VRNIC_DB_STATUS_SLOT].st.status;
		writel(readl(st) | VRNIC_DB_STATUS_FATAL, st);
	}
}

/*
 * The device stopped (FATAL), died (no heartbeat) or misbehaved: fail every
 * command, take the port down and tell every user. Any context; idempotent.
 */
void vrnic_set_fatal(struct vrnic_dev *dev, const char *why)
{
	unsigned long flags;

	spin_lock_irqsave(&dev->held_lock, flags);
	if (vrnic_is_fatal(dev)) {
		spin_unlock_irqrestore(&dev->held_lock, flags);
		return;
	}
	/*
	 * A device the driver gives up on may still be running (stalled,
	 * not dead): it must stop touching guest memory before any of it
	 * is released.
	 */
	if (!test_bit(VRNIC_FLAG_RESET_PENDING, &dev->flags))
		vrnic_request_reset_locked(dev);
	set_bit(VRNIC_FLAG_FATAL, &dev->flags);
	spin_unlock_irqrestore(&dev->held_lock, flags);
	dev_err(&dev->pdev->dev, "device failed: %s\n", why);
	vrnic_flag_db_pages_fatal(dev);
	vrnic_cmdq_fail_all(dev);
	vrnic_eth_link_update(dev);
	vrnic_ib_dispatch(dev, IB_EVENT_PORT_ERR);
	vrnic_ib_dispatch(dev, IB_EVENT_DEVICE_FATAL);
}

/*
 * Has the device acknowledged the pending reset? Then it no longer touches
 * guest memory (section 5.2): release what was held. True if no reset is
 * pending any more. Process context.
 */
static bool vrnic_reset_check(struct vrnic_dev *dev)
{
	unsigned long flags;
	bool acked = false;
	LIST_HEAD(list);
	u64 bytes = 0;

	spin_lock_irqsave(&dev->held_lock, flags);
	if (!test_bit(VRNIC_FLAG_RESET_PENDING, &dev->flags)) {
		spin_unlock_irqrestore(&dev->held_lock, flags);
		return true;
	}
	if (readl(&dev->regs->reset_ack) == dev->reset_req) {
		acked = true;
		clear_bit(VRNIC_FLAG_RESET_PENDING, &dev->flags);
		list_splice_init(&dev->held, &list);
		bytes = dev->held_bytes;
		dev->held_bytes = 0;
	}
	spin_unlock_irqrestore(&dev->held_lock, flags);
	if (!acked)
		return false;

	if (bytes)
		dev_info(&dev->pdev->dev,
			 "device acknowledged its reset: releasing %llu bytes\n",
			 bytes);
	vrnic_release_held(dev, &list);
	/* The reset zeroed the doorbell pages: keep posts failing. */
	if (vrnic_is_fatal(dev))
		vrnic_flag_db_pages_fatal(dev);
	return true;
}

/*
 * Before the driver's own rings go (remove, failed probe): make sure the
 * device was reset, waiting for it to be acknowledged (section 5.2 step 3).
 * Without it, everything released from now on is kept (and leaked by
 * vrnic_leak_held()).
 */
static void vrnic_quiesce(struct vrnic_dev *dev)
{
	unsigned long flags, end;

	spin_lock_irqsave(&dev->held_lock, flags);
	if (!vrnic_is_fatal(dev) &&
	    !test_bit(VRNIC_FLAG_RESET_PENDING, &dev->flags))
		vrnic_request_reset_locked(dev);
	spin_unlock_irqrestore(&dev->held_lock, flags);

	end = jiffies + msecs_to_jiffies(VRNIC_RESET_TIMEOUT_MS);
	while (!vrnic_reset_check(dev)) {
		if (time_after(jiffies, end)) {
			dev_err(&dev->pdev->dev,
				"device did not acknowledge reset\n");
			return;
		}
		usleep_range(1000, 2000);
	}
}

static void vrnic_watchdog(struct work_struct *work)
{
	struct vrnic_dev *dev = container_of(to_delayed_work(work),
					     struct vrnic_dev, watchdog);
	u32 status, overflow;
	u64 hb;

	if (vrnic_is_fatal(dev))
		goto fatal;

	status = readl(&dev->regs->device_status);
	if (status & VRNIC_DEV_STATUS_FATAL) {
		dev_err(&dev->pdev->dev, "device status FATAL, code %u\n",
			readl(&dev->regs->fatal_code));
		vrnic_set_fatal(dev, "device status FATAL");
		goto fatal;
	}

	hb = readq(&dev->regs->heartbeat);
	if (hb != dev->last_heartbeat) {
		dev->last_heartbeat = hb;
		dev->heartbeat_stamp = jiffies;
	} else if (time_after(jiffies, dev->heartbeat_stamp +
			      msecs_to_jiffies(vrnic_heartbeat_timeout_ms))) {
		set_bit(VRNIC_FLAG_DEAD, &dev->flags);
		vrnic_set_fatal(dev, "heartbeat stopped");
		goto fatal;
	}

	overflow = readl(&dev->regs->eq_overflow);
	if (overflow != dev->last_eq_overflow) {
		vrnic_count(dev, VRNIC_CNT_EQ_OVERFLOW,
			    (u32)(overflow - dev->last_eq_overflow));
		dev_err_ratelimited(&dev->pdev->dev,
				    "device dropped %u events: EQ full\n",
				    (u32)(overflow - dev->last_eq_overflow));
		dev->last_eq_overflow = overflow;
		vrnic_eq_overflow(dev);
	}

	/* Lost interrupts must not stall commands or the Ethernet rings. */
	vrnic_cmdq_complete(dev);
	vrnic_eth_watchdog(dev);

	schedule_delayed_work(&dev->watchdog,
			      msecs_to_jiffies(VRNIC_WATCHDOG_MS));
	return;

fatal:
	/* Until the device acknowledges the reset, e.g. once it runs again. */
	if (!vrnic_reset_check(dev))
		schedule_delayed_work(&dev->watchdog,
				      msecs_to_jiffies(VRNIC_WATCHDOG_MS));
}

static int vrnic_wait_ready(struct vrnic_dev *dev)
{
	u32 status;
	int err;

	err = readl_poll_timeout(&dev->regs->device_status, status,
				 status & VRNIC_DEV_STATUS_READY, 1000,
				 VRNIC_READY_TIMEOUT_MS * 1000);
	if (err)
		dev_err(&dev->pdev->dev, "device not READY (status %#x)\n",
			status);
	return err;
}

/* Device interface section 5.2. */
static int vrnic_reset(struct vrnic_dev *dev)
{
	u32 req, ack;
	int err;

	writel(0, &dev->regs->driver_ctrl);
	req = readl(&dev->regs->reset_req) + 1;
	writel(req, &dev->regs->reset_req);
	vrnic_kick(dev, VRNIC_KICK_CMD);

	err = readl_poll_timeout(&dev->regs->reset_ack, ack, ack == req, 1000,
				 VRNIC_RESET_TIMEOUT_MS * 1000);
	if (err) {
		dev_err(&dev->pdev->dev, "device did not acknowledge reset\n");
		return err;
	}
	if (readl(&dev->regs->device_status) & VRNIC_DEV_STATUS_FATAL) {
		dev_err(&dev->pdev->dev,
			"device still FATAL after reset (code %u)\n",
			readl(&dev->regs->fatal_code));
		return -EIO;
	}
	return 0;
}

static int vrnic_read_caps(struct vrnic_dev *dev)
{
	struct vrnic_regs __iomem *r = dev->regs;
	struct vrnic_caps *c = &dev->caps;
	u64 bar_len = pci_resource_len(dev->pdev, VRNIC_BAR_SHM);
	u64 pages;
	int i;

	c->version_major = readw(&r->version_major);
	c->version_minor = readw(&r->version_minor);
	c->bar2_size = readq(&r->bar2_size);
	c->db_page_first = readl(&r->db_page_first);
	c->db_page_count = readl(&r->db_page_count);
	for (i = 0; i < ETH_ALEN; i++)
		c->mac[i] = readb(&r->mac[i]);
	c->node_guid = readq(&r->node_guid);
	c->fw_version = readq(&r->fw_version);
	c->max_qp = readl(&r->max_qp);
	c->max_cq = readl(&r->max_cq);
	c->max_mr = readl(&r->max_mr);
	c->max_pd = readl(&r->max_pd);
	c->max_srq = readl(&r->max_srq);
	c->max_ah = readl(&r->max_ah);
	c->max_uctx = readl(&r->max_uctx);
	c->max_comp_eqs = readl(&r->max_comp_eqs);
	c->max_qp_wr = readl(&r->max_qp_wr);
	c->max_srq_wr = readl(&r->max_srq_wr);
	c->max_sge = readl(&r->max_sge);
	c->max_srq_sge = readl(&r->max_srq_sge);
	c->max_inline = readl(&r->max_inline);
	c->max_cqe = readl(&r->max_cqe);
	c->max_mr_size = readq(&r->max_mr_size);
	c->page_size_cap = readq(&r->page_size_cap) &
		GENMASK_ULL(VRNIC_MR_PAGE_SHIFT_MAX, VRNIC_MR_PAGE_SHIFT_MIN);
	c->max_msg_sz = readl(&r->max_msg_sz);
	c->num_vectors = readl(&r->num_vectors);
	c->atomic_cap = readl(&r->atomic_cap);
	c->max_qp_rd_atom = readl(&r->max_qp_rd_atom);
	c->max_qp_init_rd_atom = readl(&r->max_qp_init_rd_atom);
	c->gid_tbl_len = readl(&r->gid_tbl_len);
	c->max_eqe = readl(&r->max_eqe);
	c->eth_max_mtu = readl(&r->eth_max_mtu);
	c->max_mcast_grp = readl(&r->max_mcast_grp);
	c->max_mcast_qp_attach = readl(&r->max_mcast_qp_attach);
	/* Reserved (0) before 1.5. */
	c->max_xrcd = c->version_minor >= 5 ? readl(&r->max_xrcd) : 0;
	/* Reserved (0) before 1.7; each page costs the driver 8 bytes. */
	c->max_fast_reg_pages = c->version_minor >= 7 ?
		min_t(u32, readl(&r->max_fast_reg_pages),
		      VRNIC_FRMR_MAX_PAGES) : 0;
	c->hw_rev = readl(&r->hw_rev);
	c->max_mtu = readl(&r->max_mtu);

	/* The driver depends on these; a device outside them is broken. */
	pages = c->bar2_size >> VRNIC_PAGE_SHIFT;
	if (readl(&r->db_page_size) != VRNIC_DB_PAGE_SIZE ||
	    readl(&r->db_slots_per_page) != VRNIC_DB_SLOTS_PER_PAGE ||
	    c->db_page_first < 1 || c->db_page_count < 1 ||
	    (u64)c->db_page_first + c->db_page_count > pages ||
	    c->bar2_size > bar_len ||
	    c->num_vectors < VRNIC_IRQ_COMP_BASE + 1 ||
	    c->max_comp_eqs < 1 || c->max_cq < 1 || c->max_qp < 1 ||
	    c->max_pd < 1 || c->max_mr < 1 || c->max_sge < 1 ||
	    c->max_qp_wr < 2 || c->max_cqe < 2 || c->max_eqe < 16 ||
	    !c->page_size_cap || c->gid_tbl_len < 1 ||
	    c->max_mtu < VRNIC_MTU_256 || c->max_mtu > VRNIC_MTU_4096 ||
	    c->atomic_cap > VRNIC_ATOMIC_GLOB ||
	    c->eth_max_mtu < ETH_MIN_MTU) {
		dev_err(&dev->pdev->dev, "device reports invalid capabilities\n");
		return -EINVAL;
	}
	c->max_uctx = min_t(u32, c->max_uctx, c->db_page_count - 1);
	c->num_vectors = min_t(u32, c->num_vectors, VRNIC_MAX_VECTORS);
	return 0;
}

/* Device interface section 5.3, steps 2-4. */
static void vrnic_driver_ok(struct vrnic_dev *dev)
{
	struct vrnic_regs __iomem *r = dev->regs;

	writeq(dev->cmdq.ring.dma, &r->cmdq_base);
	writeq(dev->aeq.ring.dma, &r->aeq_base);
	writel(dev->cmdq.log_depth, &r->cmdq_log_depth);
	writel(dev->aeq.log_depth, &r->aeq_log_depth);
	vrnic_eth_write_config(dev);
	writel(0, &r->cmdq_pi);
	writel(0, &r->aeq_ci);
	writel(0, &r->tx_pi);
	writel(0, &r->rx_pi);
	writel(VRNIC_DRV_VERSION, &r->driver_version);
	writeq(0, &r->driver_features);
	writel(VRNIC_DRV_CTRL_DRIVER_OK, &r->driver_ctrl);
	vrnic_kick(dev, VRNIC_KICK_CMD);
}

static int vrnic_query_port_caps(struct vrnic_dev *dev)
{
	struct vrnic_cmd_query_port_resp resp = {};
	struct vrnic_cmd_query_port req = { .port_num = 1 };
	int err;

	err = vrnic_cmd_exec(dev, VRNIC_CMD_QUERY_PORT, &req, sizeof(req),
			     &resp, sizeof(resp));
	if (err)
		return err;
	dev->caps.active_speed = resp.active_speed;
	dev->caps.active_width = resp.active_width;
	return 0;
}

static int vrnic_ib_register(struct vrnic_dev *dev)
{
	struct ib_device *ibdev = &dev->ibdev;
	int err;

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = dev->num_ceqs;
	ibdev->node_guid = cpu_to_be64(dev->caps.node_guid);
	ibdev->dev.parent = &dev->pdev->dev;
	ibdev->driver_def = vrnic_uapi_defs;
	strscpy(ibdev->node_desc, "vrnic paravirtual RDMA NIC",
		sizeof(ibdev->node_desc));
	ib_set_device_ops(ibdev, &vrnic_dev_ops);

	err = ib_device_set_netdev(ibdev, dev->netdev, 1);
	if (err)
		return err;

	err = ib_register_device(ibdev, "vrnic%d", &dev->pdev->dev);
	if (err)
		return err;
	set_bit(VRNIC_FLAG_IB_REGISTERED, &dev->flags);
	return 0;
}

static void vrnic_ib_unregister(struct vrnic_dev *dev)
{
	unsigned long flags;

	spin_lock_irqsave(&dev->event_lock, flags);
	clear_bit(VRNIC_FLAG_IB_REGISTERED, &dev->flags);
	spin_unlock_irqrestore(&dev->event_lock, flags);
	ib_unregister_device(&dev->ibdev);
}

/* Is this ivshmem function a vrnic? Reads BAR2 only, changes nothing. */
static bool vrnic_probe_signature(struct pci_dev *pdev)
{
	struct vrnic_regs __iomem *r;
	u64 len = pci_resource_len(pdev, VRNIC_BAR_SHM);
	bool ok = false;
	u64 size;

	if (!(pci_resource_flags(pdev, VRNIC_BAR_SHM) & IORESOURCE_MEM) ||
	    len < 2 * VRNIC_PAGE_SIZE)
		return false;
	r = pci_iomap_range(pdev, VRNIC_BAR_SHM, 0, VRNIC_PAGE_SIZE);
	if (!r)
		return false;
	if (readl(&r->signature) == VRNIC_SIGNATURE &&
	    readw(&r->version_major) == VRNIC_VERSION_MAJOR) {
		size = readq(&r->bar2_size);
		ok = is_power_of_2(size) && size <= len;
	}
	pci_iounmap(pdev, r);
	return ok;
}

/*
 * User contexts may map the page of the ivshmem doorbell register and kick
 * without a system call, but only when BAR0 has a page to itself (the guest
 * booted with pci=resource_alignment=12@pci:1af4:1110): otherwise the page
 * holds other devices' registers. With MSI-X the page's interrupt
 * registers do nothing, and a doorbell write can only cause a spurious kick
 * or interrupt, which both sides treat as "look again" (spec 2.3).
 */
static void vrnic_setup_kick_page(struct vrnic_dev *dev)
{
	resource_size_t start = pci_resource_start(dev->pdev,
						   VRNIC_BAR_IVSHMEM);

	if (!vrnic_user_kick)
		return;
	if ((pci_resource_flags(dev->pdev, VRNIC_BAR_IVSHMEM) &
	     IORESOURCE_MEM) && PAGE_ALIGNED(start) &&
	    pci_resource_len(dev->pdev, VRNIC_BAR_IVSHMEM) >= PAGE_SIZE)
		dev->kick_page = start;
	else
		dev_info(&dev->pdev->dev,
			 "BAR0 shares its page: user space kicks through the kernel\n");
}

static void vrnic_free_vectors(struct vrnic_dev *dev)
{
	pci_free_irq_vectors(dev->pdev);
}

/*
 * Undo vrnic_probe_dev(). The device is reset before the driver's own
 * rings go: once it acknowledges, it touches no guest memory any more; a
 * device that never does keeps its rings.
 */
static void vrnic_remove_dev(struct vrnic_dev *dev)
{
	struct pci_dev *pdev = dev->pdev;

	cancel_delayed_work_sync(&dev->watchdog);
	destroy_workqueue(dev->wq);
	vrnic_quiesce(dev);
	vrnic_irqs_free(dev);
	vrnic_eth_free_rings(dev);
	vrnic_aeq_free(dev);
	vrnic_cmdq_free(dev);
	vrnic_leak_held(dev);
	vrnic_free_vectors(dev);
	pci_iounmap(pdev, dev->bar2);
	pci_iounmap(pdev, dev->bar0);
	WARN_ON(!xa_empty(&dev->qp_xa) || !xa_empty(&dev->cq_xa) ||
		!xa_empty(&dev->srq_xa));
	xa_destroy(&dev->qp_xa);
	xa_destroy(&dev->cq_xa);
	xa_destroy(&dev->srq_xa);
	ib_dealloc_device(&dev->ibdev);
	pci_release_regions(pdev);
	pci_disable_device(pdev);
}

/*
 * The PCI function and the device up to DRIVER_OK: BARs, reset,
 * capabilities, MSI-X, the command queue, the async EQ and the Ethernet
 * rings, then the watchdog. vrnic_remove_dev() undoes it.
 */
static struct vrnic_dev *vrnic_probe_dev(struct pci_dev *pdev)
{
	struct vrnic_dev *dev;
	int i, nvec, err;

	err = pci_enable_device_mem(pdev);
	if (err)
		return ERR_PTR(err);
	if (!vrnic_probe_signature(pdev)) {
		/* Some other ivshmem user: not ours, say nothing. */
		pci_disable_device(pdev);
		return ERR_PTR(-ENODEV);
	}

	err = pci_request_regions(pdev, DRV_NAME);
	if (err)
		goto err_disable;
	pci_set_master(pdev);
	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (err)
		goto err_release;

	dev = ib_alloc_device(vrnic_dev, ibdev);
	if (!dev) {
		err = -ENOMEM;
		goto err_release;
	}
	dev->pdev = pdev;
	pci_set_drvdata(pdev, dev);
	spin_lock_init(&dev->event_lock);
	spin_lock_init(&dev->held_lock);
	INIT_LIST_HEAD(&dev->held);
	xa_init_flags(&dev->qp_xa, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->cq_xa, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->srq_xa, XA_FLAGS_LOCK_IRQ);
	INIT_DELAYED_WORK(&dev->watchdog, vrnic_watchdog);
	for (i = 0; i < VRNIC_CNT_MAX; i++)
		atomic64_set(&dev->counters[i], 0);
	dev->wq = alloc_ordered_workqueue("vrnic-%s", 0, pci_name(pdev));
	if (!dev->wq) {
		err = -ENOMEM;
		goto err_dealloc;
	}

	dev->bar0 = pci_iomap(pdev, VRNIC_BAR_IVSHMEM, 0);
	dev->bar2 = pci_iomap(pdev, VRNIC_BAR_SHM, 0);
	if (!dev->bar0 || !dev->bar2) {
		err = -ENOMEM;
		goto err_unmap;
	}
	dev->regs = dev->bar2;
	dev->bar2_phys = pci_resource_start(pdev, VRNIC_BAR_SHM);

	err = vrnic_wait_ready(dev);
	if (err)
		goto err_unmap;
	err = vrnic_read_caps(dev);
	if (err)
		goto err_unmap;
	dev->kdb = dev->bar2 + (size_t)dev->caps.db_page_first *
		   VRNIC_PAGE_SIZE;

	err = vrnic_reset(dev);
	if (err)
		goto err_unmap;

	nvec = pci_alloc_irq_vectors(pdev, VRNIC_IRQ_COMP_BASE + 1,
				     dev->caps.num_vectors, PCI_IRQ_MSIX);
	if (nvec < 0) {
		err = nvec;
		dev_err(&pdev->dev, "cannot enable MSI-X: %d\n", err);
		goto err_unmap;
	}
	dev->num_vectors = nvec;
	vrnic_setup_kick_page(dev);

	err = vrnic_cmdq_init(dev);
	if (err)
		goto err_vectors;
	err = vrnic_aeq_alloc(dev);
	if (err)
		goto err_cmdq;
	err = vrnic_eth_alloc_rings(dev);
	if (err)
		goto err_aeq;
	err = vrnic_irqs_request(dev);
	if (err)
		goto err_eth_rings;

	dev->last_heartbeat = readq(&dev->regs->heartbeat);
	dev->heartbeat_stamp = jiffies;
	dev->last_eq_overflow = readl(&dev->regs->eq_overflow);
	vrnic_driver_ok(dev);

	err = vrnic_cmd_exec(dev, VRNIC_CMD_NOP, NULL, 0, NULL, 0);
	if (err) {
		dev_err(&pdev->dev, "device does not answer commands: %d\n",
			err);
		vrnic_remove_dev(dev);
		return ERR_PTR(err);
	}
	schedule_delayed_work(&dev->watchdog,
			      msecs_to_jiffies(VRNIC_WATCHDOG_MS));
	return dev;

err_eth_rings:
	vrnic_eth_free_rings(dev);
err_aeq:
	vrnic_aeq_free(dev);
err_cmdq:
	vrnic_cmdq_free(dev);
err_vectors:
	vrnic_leak_held(dev);
	vrnic_free_vectors(dev);
err_unmap:
	if (dev->bar2)
		pci_iounmap(pdev, dev->bar2);
	if (dev->bar0)
		pci_iounmap(pdev, dev->bar0);
	destroy_workqueue(dev->wq);
err_dealloc:
	xa_destroy(&dev->qp_xa);
	xa_destroy(&dev->cq_xa);
	xa_destroy(&dev->srq_xa);
	ib_dealloc_device(&dev->ibdev);
err_release:
	pci_release_regions(pdev);
err_disable:
	pci_disable_device(pdev);
	return ERR_PTR(err);
}

/*
 * What users see, on a device past DRIVER_OK: the completion EQs, the
 * netdev and the ib_device. vrnic_ib_device_remove() undoes it.
 */
static int vrnic_ib_device_add(struct vrnic_dev *dev)
{
	int err;

	err = vrnic_query_port_caps(dev);
	if (err)
		return err;
	err = vrnic_ceqs_create(dev);
	if (err)
		return err;
	err = vrnic_eth_register(dev);
	if (err)
		goto err_ceqs;
	err = vrnic_ib_register(dev);
	if (err)
		goto err_eth;
	vrnic_debugfs_add(dev);
	return 0;

err_eth:
	vrnic_eth_unregister(dev);
err_ceqs:
	vrnic_ceqs_destroy(dev);
	return err;
}

static void vrnic_ib_device_remove(struct vrnic_dev *dev)
{
	vrnic_debugfs_remove(dev);
	/* Users first: disassociates processes, destroys their objects. */
	vrnic_ib_unregister(dev);
	vrnic_eth_unregister(dev);
	vrnic_ceqs_destroy(dev);
}

static int vrnic_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct vrnic_dev *dev;
	int err;

	dev = vrnic_probe_dev(pdev);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	err = vrnic_ib_device_add(dev);
	if (err) {
		vrnic_remove_dev(dev);
		return err;
	}
	dev_info(&pdev->dev,
		 "%s: device interface %u.%u, %d vectors, %d completion EQs, netdev %s\n",
		 dev_name(&dev->ibdev.dev), dev->caps.version_major,
		 dev->caps.version_minor, dev->num_vectors, dev->num_ceqs,
		 netdev_name(dev->netdev));
	return 0;
}

static void vrnic_remove(struct pci_dev *pdev)
{
	struct vrnic_dev *dev = pci_get_drvdata(pdev);

	vrnic_ib_device_remove(dev);
	vrnic_remove_dev(dev);
}

static struct pci_driver vrnic_pci_driver = {
	.name = DRV_NAME,
	.id_table = vrnic_pci_table,
	.probe = vrnic_probe,
	.remove = vrnic_remove,
};

static int __init vrnic_init(void)
{
	int err;

	vrnic_debugfs_init();
	err = pci_register_driver(&vrnic_pci_driver);
	if (err)
		vrnic_debugfs_exit();
	return err;
}

static void __exit vrnic_exit(void)
{
	pci_unregister_driver(&vrnic_pci_driver);
	vrnic_debugfs_exit();
}

module_init(vrnic_init);
module_exit(vrnic_exit);
