// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic: DMA-coherent buffers and pinned pages the device accesses, and
 * what happens to them while a reset is pending: the device may still
 * access them, so they are held until it acknowledges (section 5.2).
 */
#include <linux/dma-mapping.h>

#include "vrnic.h"

int vrnic_dma_alloc(struct vrnic_dev *dev, struct vrnic_dma *buf, size_t size)
{
	size = PAGE_ALIGN(size);
	buf->va = dma_alloc_coherent(&dev->pdev->dev, size, &buf->dma,
				     GFP_KERNEL);
	if (!buf->va)
		return -ENOMEM;
	buf->size = size;
	return 0;
}

/*
 * While a reset is pending the device may still read or write what the
 * driver is about to release: keep @umem or @buf on the held list instead,
 * until vrnic_reset_check() sees the reset acknowledged. Returns true if
 * the caller must not release it. Process context.
 */
static bool vrnic_hold(struct vrnic_dev *dev, struct ib_umem *umem,
		       const struct vrnic_dma *buf)
{
	struct vrnic_held *h = NULL;
	unsigned long flags;
	bool warn;

	spin_lock_irqsave(&dev->held_lock, flags);
	while (test_bit(VRNIC_FLAG_RESET_PENDING, &dev->flags) && !h) {
		spin_unlock_irqrestore(&dev->held_lock, flags);
		h = kzalloc(sizeof(*h), GFP_KERNEL);
		spin_lock_irqsave(&dev->held_lock, flags);
		if (!h)
			break;	/* leaked for good, still counted */
	}
	if (!test_bit(VRNIC_FLAG_RESET_PENDING, &dev->flags)) {
		spin_unlock_irqrestore(&dev->held_lock, flags);
		kfree(h);
		return false;
	}
	if (h) {
		h->umem = umem;
		if (buf)
			h->buf = *buf;
		list_add_tail(&h->list, &dev->held);
	}
	dev->held_bytes += umem ? umem->length : buf->size;
	warn = !dev->held_warned;
	dev->held_warned = true;
	spin_unlock_irqrestore(&dev->held_lock, flags);
	if (warn)
		dev_warn(&dev->pdev->dev,
			 "device has not acknowledged its reset: keeping the memory it may still access until it does\n");
	return true;
}

void vrnic_dma_free(struct vrnic_dev *dev, struct vrnic_dma *buf)
{
	if (!buf->va)
		return;
	if (!vrnic_hold(dev, NULL, buf))
		dma_free_coherent(&dev->pdev->dev, buf->size, buf->va,
				  buf->dma);
	buf->va = NULL;
}

/*
 * Unpin an MR's pages, unless the device may still access them. A DMA MR
 * (the one ib_alloc_pd makes for the MAD layer's PD) pins nothing.
 */
void vrnic_umem_release(struct vrnic_dev *dev, struct ib_umem *umem)
{
	if (umem && !vrnic_hold(dev, umem, NULL))
		ib_umem_release(umem);
}

void vrnic_release_held(struct vrnic_dev *dev, struct list_head *list)
{
	struct vrnic_held *h, *tmp;

	list_for_each_entry_safe(h, tmp, list, list) {
		if (h->umem)
			ib_umem_release(h->umem);
		else
			dma_free_coherent(&dev->pdev->dev, h->buf.size,
					  h->buf.va, h->buf.dma);
		list_del(&h->list);
		kfree(h);
	}
}

/* Last step of remove: what the device never let go of is leaked. */
void vrnic_leak_held(struct vrnic_dev *dev)
{
	struct vrnic_held *h, *tmp;

	if (!test_bit(VRNIC_FLAG_RESET_PENDING, &dev->flags))
		return;
	dev_warn(&dev->pdev->dev,
		 "leaking %llu bytes the device may still access\n",
		 dev->held_bytes);
	list_for_each_entry_safe(h, tmp, &dev->held, list) {
		list_del(&h->list);
		kfree(h);
	}
}
