// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic debugfs: /sys/kernel/debug/vrnic/<pci>/
 *   state         the device's status words, the driver's ring indices, and
 *                 held_bytes: memory released while a reset is pending,
 *                 which the driver keeps until the device acknowledges it
 *   inject_fatal  write anything: publish an out-of-range cmdq_pi, which the
 *                 device must treat as fatal (VRNIC_FATAL_CMDQ, device
 *                 interface 9.2). Tests the fatal path end to end; only a
 *                 reset (rmmod/insmod, or unbind/bind) recovers.
 *   ceq_pause     write 1: stop consuming the completion EQs (the device
 *                 fills them and then overflows); 0: consume again.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "vrnic.h"

static struct dentry *vrnic_debugfs_root;

static int vrnic_state_show(struct seq_file *s, void *unused)
{
	struct vrnic_dev *dev = s->private;
	struct vrnic_regs __iomem *r = dev->regs;
	unsigned long flags;
	u64 held;
	u32 pi, ci;

	spin_lock_irqsave(&dev->cmdq.lock, flags);
	pi = dev->cmdq.pi;
	ci = dev->cmdq.ci;
	spin_unlock_irqrestore(&dev->cmdq.lock, flags);
	spin_lock_irqsave(&dev->held_lock, flags);
	held = dev->held_bytes;
	spin_unlock_irqrestore(&dev->held_lock, flags);

	seq_printf(s, "device_status\t%#x\n", readl(&r->device_status));
	seq_printf(s, "fatal_code\t%u\n", readl(&r->fatal_code));
	seq_printf(s, "port_state\t%u\n", readl(&r->port_state));
	seq_printf(s, "heartbeat\t%llu\n", readq(&r->heartbeat));
	seq_printf(s, "need_wakeup\t%u\n", readl(&r->need_wakeup));
	seq_printf(s, "eq_overflow\t%u\n", readl(&r->eq_overflow));
	seq_printf(s, "driver_fatal\t%d\n", vrnic_is_fatal(dev));
	seq_printf(s, "reset_pending\t%d\n",
		   test_bit(VRNIC_FLAG_RESET_PENDING, &dev->flags));
	seq_printf(s, "held_bytes\t%llu\n", held);
	seq_printf(s, "cmdq\tpi %u ci %u device_ci %u\n", pi, ci,
		   readl(&r->cmdq_ci));
	seq_printf(s, "aeq\tci %u device_pi %u\n", dev->aeq.ci,
		   readl(&r->aeq_pi));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vrnic_state);

static ssize_t vrnic_inject_fatal_write(struct file *file,
					const char __user *buf, size_t len,
					loff_t *pos)
{
	struct vrnic_dev *dev = file->private_data;
	struct vrnic_cmdq *q = &dev->cmdq;
	unsigned long flags;

	dev_info(&dev->pdev->dev, "injecting a fatal command queue error\n");
	spin_lock_irqsave(&q->lock, flags);
	/* At least 2 * depth ahead of any consumer index the device has. */
	writel(q->ci + 3 * q->depth, &dev->regs->cmdq_pi);
	vrnic_kick(dev, VRNIC_KICK_CMD);
	spin_unlock_irqrestore(&q->lock, flags);
	return len;
}

static const struct file_operations vrnic_inject_fatal_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = vrnic_inject_fatal_write,
};

static ssize_t vrnic_ceq_pause_write(struct file *file,
				     const char __user *buf, size_t len,
				     loff_t *pos)
{
	struct vrnic_dev *dev = file->private_data;
	bool pause;
	int err;

	err = kstrtobool_from_user(buf, len, &pause);
	if (err)
		return err;
	vrnic_ceqs_pause(dev, pause);
	return len;
}

static const struct file_operations vrnic_ceq_pause_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = vrnic_ceq_pause_write,
};

void vrnic_debugfs_add(struct vrnic_dev *dev)
{
	dev->debugfs = debugfs_create_dir(pci_name(dev->pdev),
					  vrnic_debugfs_root);
	debugfs_create_file("state", 0400, dev->debugfs, dev,
			    &vrnic_state_fops);
	debugfs_create_file("inject_fatal", 0200, dev->debugfs, dev,
			    &vrnic_inject_fatal_fops);
	debugfs_create_file("ceq_pause", 0200, dev->debugfs, dev,
			    &vrnic_ceq_pause_fops);
}

void vrnic_debugfs_remove(struct vrnic_dev *dev)
{
	debugfs_remove_recursive(dev->debugfs);
	dev->debugfs = NULL;
}

void vrnic_debugfs_init(void)
{
	vrnic_debugfs_root = debugfs_create_dir(DRV_NAME, NULL);
}

void vrnic_debugfs_exit(void)
{
	debugfs_remove_recursive(vrnic_debugfs_root);
}
