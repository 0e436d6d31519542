// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic command queue (device interface section 9).
 *
 * Any number of process-context callers post commands under a spinlock and
 * sleep on a per-command completion. The admin interrupt (or the waiter
 * itself, every 100 ms, in case an interrupt was lost) retires entries below
 * the device's cmdq_ci and copies each completed entry to its waiter. A
 * command that does not complete in vrnic_cmd_timeout_ms marks the device
 * dead; a dead device fails every command at once with -EIO.
 */
#include <linux/jiffies.h>
#include <linux/sched.h>

#include "vrnic.h"

#define VRNIC_CMD_POLL_MS	100

/* One command in flight, on its poster's stack. */
struct vrnic_cmd_wait {
	struct completion done;
	struct vrnic_cmd entry;		/* the completed entry, copied once */
	int err;			/* set when failed without completion */
	bool finished;
	u16 opcode;
	u32 idx;			/* its cmdq index */
	u32 seq;
	unsigned long deadline;		/* jiffies */
};

static const char *vrnic_cmd_name(u16 opcode)
{
	static const char * const names[] = {
		[VRNIC_CMD_NOP] = "NOP",
		[VRNIC_CMD_QUERY_DEVICE] = "QUERY_DEVICE",
		[VRNIC_CMD_QUERY_PORT] = "QUERY_PORT",
		[VRNIC_CMD_ALLOC_UCTX] = "ALLOC_UCTX",
		[VRNIC_CMD_DEALLOC_UCTX] = "DEALLOC_UCTX",
		[VRNIC_CMD_CREATE_PD] = "CREATE_PD",
		[VRNIC_CMD_DESTROY_PD] = "DESTROY_PD",
		[VRNIC_CMD_REG_MR] = "REG_MR",
		[VRNIC_CMD_DEREG_MR] = "DEREG_MR",
		[VRNIC_CMD_CREATE_CQ] = "CREATE_CQ",
		[VRNIC_CMD_DESTROY_CQ] = "DESTROY_CQ",
		[VRNIC_CMD_RESIZE_CQ] = "RESIZE_CQ",
		[VRNIC_CMD_CREATE_QP] = "CREATE_QP",
		[VRNIC_CMD_MODIFY_QP] = "MODIFY_QP",
		[VRNIC_CMD_QUERY_QP] = "QUERY_QP",
		[VRNIC_CMD_DESTROY_QP] = "DESTROY_QP",
		[VRNIC_CMD_CREATE_SRQ] = "CREATE_SRQ",
		[VRNIC_CMD_MODIFY_SRQ] = "MODIFY_SRQ",
		[VRNIC_CMD_DESTROY_SRQ] = "DESTROY_SRQ",
		[VRNIC_CMD_CREATE_AH] = "CREATE_AH",
		[VRNIC_CMD_DESTROY_AH] = "DESTROY_AH",
		[VRNIC_CMD_SET_GID] = "SET_GID",
		[VRNIC_CMD_CREATE_EQ] = "CREATE_EQ",
		[VRNIC_CMD_DESTROY_EQ] = "DESTROY_EQ",
		[VRNIC_CMD_SET_ETH] = "SET_ETH",
		[VRNIC_CMD_ATTACH_MCAST] = "ATTACH_MCAST",
		[VRNIC_CMD_DETACH_MCAST] = "DETACH_MCAST",
		[VRNIC_CMD_QUERY_CLOCK] = "QUERY_CLOCK",
		[VRNIC_CMD_ALLOC_XRCD] = "ALLOC_XRCD",
		[VRNIC_CMD_DEALLOC_XRCD] = "DEALLOC_XRCD",
		[VRNIC_CMD_ALLOC_MR] = "ALLOC_MR",
		[VRNIC_CMD_ALLOC_MW] = "ALLOC_MW",
		[VRNIC_CMD_DEALLOC_MW] = "DEALLOC_MW",
	};

	if (opcode < ARRAY_SIZE(names) && names[opcode])
		return names[opcode];
	return "?";
}

static int vrnic_cmd_status_to_errno(u32 status)
{
	switch (status) {
	case VRNIC_CMD_STATUS_OK:
		return 0;
	case VRNIC_CMD_STATUS_BAD_OPCODE:
	case VRNIC_CMD_STATUS_UNSUPPORTED:
		return -EOPNOTSUPP;
	case VRNIC_CMD_STATUS_BAD_PARAM:
	case VRNIC_CMD_STATUS_BAD_HANDLE:
	case VRNIC_CMD_STATUS_BAD_STATE:
		return -EINVAL;
	case VRNIC_CMD_STATUS_NO_RESOURCE:
		return -ENOMEM;
	case VRNIC_CMD_STATUS_BUSY:
		return -EBUSY;
	case VRNIC_CMD_STATUS_BAD_ADDR:
		return -EFAULT;
	case VRNIC_CMD_STATUS_INTERNAL:
	default:
		return -EIO;
	}
}

int vrnic_cmdq_init(struct vrnic_dev *dev)
{
	struct vrnic_cmdq *q = &dev->cmdq;
	int err;

	q->log_depth = VRNIC_CMDQ_LOG_DEPTH;
	q->depth = 1U << q->log_depth;
	spin_lock_init(&q->lock);
	init_waitqueue_head(&q->space_wq);
	q->pi = 0;
	q->ci = 0;
	q->seq = 1;

	q->wait = kcalloc(q->depth, sizeof(*q->wait), GFP_KERNEL);
	if (!q->wait)
		return -ENOMEM;

	err = vrnic_dma_alloc(dev, &q->ring, VRNIC_CMD_SIZE << q->log_depth);
	if (err) {
		kfree(q->wait);
		q->wait = NULL;
	}
	return err;
}

void vrnic_cmdq_free(struct vrnic_dev *dev)
{
	struct vrnic_cmdq *q = &dev->cmdq;

	vrnic_dma_free(dev, &q->ring);
	kfree(q->wait);
	q->wait = NULL;
}

/*
 * Retire every entry the device has completed. Any context. The device's
 * cmdq_ci is untrusted: it must lie between our ci and our pi.
 */
void vrnic_cmdq_complete(struct vrnic_dev *dev)
{
	struct vrnic_cmdq *q = &dev->cmdq;
	struct vrnic_cmd *ring = q->ring.va;
	bool progress = false, bad = false;
	struct vrnic_cmd_wait *w;
	unsigned long flags;
	u32 hw_ci, slot;

	if (!ring)
		return;

	spin_lock_irqsave(&q->lock, flags);
	hw_ci = readl(&dev->regs->cmdq_ci);
	if ((u32)(hw_ci - q->ci) > (u32)(q->pi - q->ci)) {
		bad = !vrnic_is_fatal(dev);
		goto unlock;
	}
	dma_rmb();	/* read the entries only after cmdq_ci */
	while (q->ci != hw_ci) {
		slot = vrnic_ring_slot(q->ci, q->log_depth);
		w = q->wait[slot];
		if (w) {
			vrnic_check(!w->finished);
			memcpy(&w->entry, &ring[slot], sizeof(w->entry));
			w->finished = true;
			complete(&w->done);
			q->wait[slot] = NULL;
		}
		q->ci++;
		progress = true;
	}
unlock:
	spin_unlock_irqrestore(&q->lock, flags);

	if (bad) {
		dev_err(&dev->pdev->dev,
			"device reported cmdq_ci %u outside [%u, %u]\n",
			hw_ci, q->ci, q->pi);
		vrnic_set_fatal(dev, "invalid command queue index");
	}
	if (progress)
		wake_up(&q->space_wq);
}

/* The device is gone: fail every command in flight. Any context. */
void vrnic_cmdq_fail_all(struct vrnic_dev *dev)
{
	struct vrnic_cmdq *q = &dev->cmdq;
	struct vrnic_cmd_wait *w;
	unsigned long flags;
	u32 i;

	if (!q->wait)
		return;

	spin_lock_irqsave(&q->lock, flags);
	for (i = 0; i < q->depth; i++) {
		w = q->wait[i];
		if (!w)
			continue;
		w->err = -EIO;
		w->finished = true;
		complete(&w->done);
		q->wait[i] = NULL;
	}
	spin_unlock_irqrestore(&q->lock, flags);
	wake_up(&q->space_wq);
}

static bool vrnic_cmdq_has_space(struct vrnic_dev *dev)
{
	struct vrnic_cmdq *q = &dev->cmdq;

	return (u32)(READ_ONCE(q->pi) - READ_ONCE(q->ci)) < q->depth ||
	       vrnic_is_fatal(dev);
}

/* The device missed a command's deadline: it is dead. */
static int vrnic_cmd_timed_out(struct vrnic_dev *dev, u16 opcode)
{
	vrnic_count(dev, VRNIC_CNT_CMD_TIMEOUTS, 1);
	dev_err(&dev->pdev->dev, "command %s timed out after %u ms\n",
		vrnic_cmd_name(opcode), vrnic_cmd_timeout_ms);
	set_bit(VRNIC_FLAG_DEAD, &dev->flags);
	vrnic_set_fatal(dev, "command timeout");
	return -ETIMEDOUT;
}

/*
 * Wait for a free slot, write the command into it and hand it to the
 * device, with @w as its waiter. @w->opcode is set; this sets @w->idx and
 * @w->seq.
 */
static int vrnic_cmd_post(struct vrnic_dev *dev, struct vrnic_cmd_wait *w,
			  const void *req, size_t req_len)
{
	struct vrnic_cmdq *q = &dev->cmdq;
	struct vrnic_cmd *entry;
	unsigned long flags;
	u32 slot;

	spin_lock_irqsave(&q->lock, flags);
	while ((u32)(q->pi - q->ci) >= q->depth) {
		spin_unlock_irqrestore(&q->lock, flags);
		if (time_after(jiffies, w->deadline))
			return vrnic_cmd_timed_out(dev, w->opcode);
		wait_event_timeout(q->space_wq, vrnic_cmdq_has_space(dev),
				   msecs_to_jiffies(VRNIC_CMD_POLL_MS));
		vrnic_cmdq_complete(dev);
		spin_lock_irqsave(&q->lock, flags);
		if (vrnic_is_fatal(dev))
			break;
	}
	if (vrnic_is_fatal(dev)) {
		spin_unlock_irqrestore(&q->lock, flags);
		return -EIO;
	}

	w->idx = q->pi;
	w->seq = q->seq++;
	slot = vrnic_ring_slot(w->idx, q->log_depth);
	entry = (struct vrnic_cmd *)q->ring.va + slot;
	memset(entry, 0, sizeof(*entry));
	entry->hdr.opcode = cpu_to_le16(w->opcode);
	entry->hdr.seq = cpu_to_le32(w->seq);
	if (req_len)
		memcpy(entry->payload, req, req_len);
	vrnic_check(!q->wait[slot]);
	q->wait[slot] = w;
	q->pi = w->idx + 1;
	vrnic_check((u32)(q->pi - q->ci) <= q->depth);
	dma_wmb();	/* the entry before the producer index */
	writel(q->pi, &dev->regs->cmdq_pi);
	vrnic_kick(dev, VRNIC_KICK_CMD);
	spin_unlock_irqrestore(&q->lock, flags);
	vrnic_count(dev, VRNIC_CNT_CMDS, 1);
	return 0;
}

/*
 * Wait until the posted command @w completes or fails, polling for it in
 * case an interrupt was lost, up to its deadline.
 */
static int vrnic_cmd_wait_done(struct vrnic_dev *dev, struct vrnic_cmd_wait *w)
{
	struct vrnic_cmdq *q = &dev->cmdq;
	unsigned long flags;
	bool timed_out;

	for (;;) {
		if (wait_for_completion_timeout(&w->done,
						msecs_to_jiffies(VRNIC_CMD_POLL_MS)))
			return 0;
		/* Lost interrupt, or a device that does not interrupt. */
		vrnic_cmdq_complete(dev);
		if (completion_done(&w->done))
			return 0;
		if (!time_after(jiffies, w->deadline))
			continue;
		spin_lock_irqsave(&q->lock, flags);
		timed_out = !w->finished;
		if (timed_out)
			q->wait[vrnic_ring_slot(w->idx, q->log_depth)] = NULL;
		spin_unlock_irqrestore(&q->lock, flags);
		if (timed_out)
			return vrnic_cmd_timed_out(dev, w->opcode);
		wait_for_completion(&w->done);
		return 0;
	}
}

/*
 * The outcome of the completed command @w: its status as an errno, and on
 * success the first @resp_len bytes of its response payload in @resp.
 */
static int vrnic_cmd_result(struct vrnic_dev *dev,
			    const struct vrnic_cmd_wait *w, void *resp,
			    size_t resp_len)
{
	const struct vrnic_cmd_hdr *hdr = &w->entry.hdr;
	u32 seq, status, syndrome;
	u16 opcode;
	int err;

	if (w->err)
		return w->err;

	seq = le32_to_cpu(hdr->seq);
	opcode = le16_to_cpu(hdr->opcode);
	if (seq != w->seq || opcode != w->opcode) {
		dev_err(&dev->pdev->dev,
			"command %s: completion carries opcode %u seq %u, expected seq %u\n",
			vrnic_cmd_name(w->opcode), opcode, seq, w->seq);
		vrnic_set_fatal(dev, "corrupt command completion");
		return -EIO;
	}

	status = le32_to_cpu(hdr->status);
	syndrome = le32_to_cpu(hdr->syndrome);
	err = vrnic_cmd_status_to_errno(status);
	if (err) {
		vrnic_count(dev, VRNIC_CNT_CMD_ERRORS, 1);
		if (status == VRNIC_CMD_STATUS_INTERNAL || err == -EIO)
			dev_err_ratelimited(&dev->pdev->dev,
					    "command %s failed: status %u syndrome %#x\n",
					    vrnic_cmd_name(w->opcode), status,
					    syndrome);
		else
			dev_dbg(&dev->pdev->dev,
				"command %s failed: status %u syndrome %#x\n",
				vrnic_cmd_name(w->opcode), status, syndrome);
		return err;
	}

	if (resp_len)
		memcpy(resp, w->entry.payload, resp_len);
	return 0;
}

/*
 * Execute one command and wait for it. @req (@req_len bytes) is the request
 * payload; on success the first @resp_len bytes of the response payload are
 * copied to @resp. Process context only.
 */
int vrnic_cmd_exec(struct vrnic_dev *dev, u16 opcode, const void *req,
		   size_t req_len, void *resp, size_t resp_len)
{
	struct vrnic_cmd_wait w = {
		.opcode = opcode,
		.deadline = jiffies + msecs_to_jiffies(vrnic_cmd_timeout_ms),
	};
	int err;

	might_sleep();
	if (req_len > VRNIC_CMD_PAYLOAD_SIZE || resp_len > VRNIC_CMD_PAYLOAD_SIZE)
		return -EINVAL;
	if (vrnic_is_fatal(dev))
		return -EIO;

	init_completion(&w.done);
	err = vrnic_cmd_post(dev, &w, req, req_len);
	if (err)
		return err;
	err = vrnic_cmd_wait_done(dev, &w);
	if (err)
		return err;
	return vrnic_cmd_result(dev, &w, resp, resp_len);
}

/*
 * Destroy a device object. Once the device is declared dead a failure is a
 * success for the caller: the RDMA core must be able to release everything.
 * The object's memory is safe to release only once the device acknowledged
 * the reset the driver requested when it gave up on it: until then
 * vrnic_dma_free() and vrnic_umem_release() keep it (main.c).
 */
int vrnic_cmd_destroy(struct vrnic_dev *dev, u16 opcode, u32 handle)
{
	struct vrnic_cmd_handle req = { .handle = cpu_to_le32(handle) };
	int err;

	err = vrnic_cmd_exec(dev, opcode, &req, sizeof(req), NULL, 0);
	if (err && vrnic_is_fatal(dev))
		return 0;
	if (err)
		dev_err(&dev->pdev->dev, "%s of handle %u failed: %d\n",
			vrnic_cmd_name(opcode), handle, err);
	return err;
}
