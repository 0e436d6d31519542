// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic Ethernet function (device interface section 17): the net_device
 * the RDMA port's RoCE GIDs are derived from. One TX and one RX ring of
 * linear frames, NAPI on vector 1, carrier from the device's port state,
 * MAC loopback (NETIF_F_LOOPBACK) on a 1.1 device.
 */
#include <linux/etherdevice.h>
#include <linux/netdevice.h>

#include "vrnic.h"

struct vrnic_eth_ring {
	struct vrnic_dma ring;		/* struct vrnic_eth_desc[] */
	u32 log_depth;
	u32 pi;				/* posted */
	u32 ci;				/* reclaimed */
	struct sk_buff **skb;
	dma_addr_t *dma;
	u32 *len;
};

struct vrnic_eth {
	struct vrnic_dev *dev;
	struct net_device *netdev;
	struct napi_struct napi;
	struct vrnic_eth_ring tx;
	struct vrnic_eth_ring rx;
	u32 rx_buf_len;
	spinlock_t link_lock;		/* registered vs carrier updates */
	bool registered;
	bool bad_ring;
	atomic64_t tx_dropped;
	atomic64_t rx_dropped;
	/* The device's 32-bit RX drop counters, folded into 64 bits. */
	spinlock_t stats_lock;
	u32 hw_rx_missed;
	u32 hw_rx_oversize;
	u64 rx_missed;
	u64 rx_oversize;
};

static struct vrnic_eth_desc *vrnic_eth_desc(struct vrnic_eth_ring *r, u32 i)
{
	return vrnic_ring_entry(r->ring.va, i, r->log_depth,
				sizeof(struct vrnic_eth_desc));
}

static u32 vrnic_eth_slot(struct vrnic_eth_ring *r, u32 i)
{
	return vrnic_ring_slot(i, r->log_depth);
}

/* Fills the descriptor at the producer index; the caller publishes it. */
static void vrnic_eth_post(struct vrnic_eth_ring *r, struct sk_buff *skb,
			   dma_addr_t dma, u32 len)
{
	u32 slot = vrnic_eth_slot(r, r->pi);
	struct vrnic_eth_desc *desc = vrnic_eth_desc(r, r->pi);

	r->skb[slot] = skb;
	r->dma[slot] = dma;
	r->len[slot] = len;
	desc->addr = cpu_to_le64(dma);
	desc->len = cpu_to_le32(len);
	desc->flags = 0;
	desc->status = 0;
}

static int vrnic_eth_ring_alloc(struct vrnic_dev *dev, struct vrnic_eth_ring *r,
				u32 log_depth)
{
	u32 depth = 1U << log_depth;

	r->log_depth = log_depth;
	r->pi = 0;
	r->ci = 0;
	r->skb = kcalloc(depth, sizeof(*r->skb), GFP_KERNEL);
	r->dma = kcalloc(depth, sizeof(*r->dma), GFP_KERNEL);
	r->len = kcalloc(depth, sizeof(*r->len), GFP_KERNEL);
	if (!r->skb || !r->dma || !r->len)
		return -ENOMEM;
	return vrnic_dma_alloc(dev, &r->ring,
			       sizeof(struct vrnic_eth_desc) << log_depth);
}

/* After the device reset: nothing is in flight any more. */
static void vrnic_eth_ring_free(struct vrnic_dev *dev, struct vrnic_eth_ring *r,
				enum dma_data_direction dir)
{
	u32 i;

	for (i = r->ci; r->skb && i != r->pi; i++) {
		u32 slot = vrnic_eth_slot(r, i);

		if (!r->skb[slot])
			continue;
		dma_unmap_single(&dev->pdev->dev, r->dma[slot], r->len[slot],
				 dir);
		dev_kfree_skb_any(r->skb[slot]);
		r->skb[slot] = NULL;
	}
	vrnic_dma_free(dev, &r->ring);
	kfree(r->skb);
	kfree(r->dma);
	kfree(r->len);
	r->skb = NULL;
	r->dma = NULL;
	r->len = NULL;
}

static void vrnic_eth_bad_ring(struct vrnic_eth *eth, const char *which,
			       u32 hw, u32 ci, u32 pi)
{
	if (eth->bad_ring)
		return;
	eth->bad_ring = true;
	netdev_err(eth->netdev, "device reported %s index %u outside [%u, %u]\n",
		   which, hw, ci, pi);
}

/* ------------------------------------------------------------------ */
/* TX                                                                  */
/* ------------------------------------------------------------------ */

static netdev_tx_t vrnic_eth_xmit(struct sk_buff *skb,
				  struct net_device *netdev)
{
	struct vrnic_eth *eth = netdev_priv(netdev);
	struct vrnic_dev *dev = eth->dev;
	struct vrnic_eth_ring *tx = &eth->tx;
	u32 depth = 1U << tx->log_depth;
	dma_addr_t dma;

	if (vrnic_is_fatal(dev) || eth->bad_ring || skb->len < ETH_HLEN ||
	    skb->len > dev->caps.eth_max_mtu + VRNIC_ETH_HDR_MAX ||
	    skb_linearize(skb))
		goto drop;

	if ((u32)(tx->pi - READ_ONCE(tx->ci)) >= depth) {
		netif_stop_queue(netdev);
		return NETDEV_TX_BUSY;
	}

	dma = dma_map_single(&dev->pdev->dev, skb->data, skb->len,
			     DMA_TO_DEVICE);
	if (dma_mapping_error(&dev->pdev->dev, dma))
		goto drop;

	vrnic_eth_post(tx, skb, dma, skb->len);
	skb_tx_timestamp(skb);

	dma_wmb();	/* the descriptor before the producer index */
	WRITE_ONCE(tx->pi, tx->pi + 1);
	writel(tx->pi, &dev->regs->tx_pi);
	vrnic_wake_if_needed(dev, VRNIC_KICK_ETH_TX,
			     VRNIC_DB_STATUS_NEED_WAKEUP);

	if ((u32)(tx->pi - READ_ONCE(tx->ci)) >= depth) {
		netif_stop_queue(netdev);
		smp_mb();	/* pairs with the reclaim's wake check */
		if ((u32)(tx->pi - READ_ONCE(tx->ci)) < depth)
			netif_wake_queue(netdev);
	}
	return NETDEV_TX_OK;

drop:
	atomic64_inc(&eth->tx_dropped);
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

static void vrnic_eth_tx_reclaim(struct vrnic_eth *eth, int budget)
{
	struct vrnic_dev *dev = eth->dev;
	struct vrnic_eth_ring *tx = &eth->tx;
	u32 pi = READ_ONCE(tx->pi);
	struct vrnic_eth_desc *desc;
	u32 hw_ci, slot;
	u16 status;

	hw_ci = readl(&dev->regs->tx_ci);
	if ((u32)(hw_ci - tx->ci) > (u32)(pi - tx->ci)) {
		vrnic_eth_bad_ring(eth, "tx_ci", hw_ci, tx->ci, pi);
		return;
	}
	dma_rmb();	/* descriptor status after tx_ci */
	while (tx->ci != hw_ci) {
		slot = vrnic_eth_slot(tx, tx->ci);
		desc = vrnic_eth_desc(tx, tx->ci);
		status = le16_to_cpu(READ_ONCE(desc->status));
		dma_unmap_single(&dev->pdev->dev, tx->dma[slot], tx->len[slot],
				 DMA_TO_DEVICE);
		if (status & VRNIC_ETH_ST_ERR) {
			vrnic_count(dev, VRNIC_CNT_ETH_TX_ERRORS, 1);
		} else if (status & VRNIC_ETH_ST_DROPPED) {
			atomic64_inc(&eth->tx_dropped);
		} else {
			vrnic_count(dev, VRNIC_CNT_ETH_TX_PACKETS, 1);
			vrnic_count(dev, VRNIC_CNT_ETH_TX_BYTES, tx->len[slot]);
		}
		napi_consume_skb(tx->skb[slot], budget);
		tx->skb[slot] = NULL;
		WRITE_ONCE(tx->ci, tx->ci + 1);
	}

	smp_mb();	/* ci before the queue-stopped check */
	if (netif_queue_stopped(eth->netdev) &&
	    (u32)(READ_ONCE(tx->pi) - tx->ci) < (1U << tx->log_depth))
		netif_wake_queue(eth->netdev);
}

/* ------------------------------------------------------------------ */
/* RX                                                                  */
/* ------------------------------------------------------------------ */

static void vrnic_eth_rx_refill(struct vrnic_eth *eth)
{
	struct vrnic_dev *dev = eth->dev;
	struct vrnic_eth_ring *rx = &eth->rx;
	struct sk_buff *skb;
	bool posted = false;
	dma_addr_t dma;

	while ((u32)(rx->pi - rx->ci) < (1U << rx->log_depth)) {
		skb = __netdev_alloc_skb_ip_align(eth->netdev, eth->rx_buf_len,
						  GFP_ATOMIC);
		if (!skb)
			break;
		dma = dma_map_single(&dev->pdev->dev, skb->data,
				     eth->rx_buf_len, DMA_FROM_DEVICE);
		if (dma_mapping_error(&dev->pdev->dev, dma)) {
			dev_kfree_skb_any(skb);
			break;
		}
		vrnic_eth_post(rx, skb, dma, eth->rx_buf_len);
		rx->pi++;
		posted = true;
	}
	if (posted) {
		dma_wmb();	/* descriptors before the producer index */
		writel(rx->pi, &dev->regs->rx_pi);
	}
}

static int vrnic_eth_rx(struct vrnic_eth *eth, int budget)
{
	struct vrnic_dev *dev = eth->dev;
	struct vrnic_eth_ring *rx = &eth->rx;
	struct vrnic_eth_desc *desc;
	struct sk_buff *skb;
	u32 hw_ci, slot, len;
	u16 status;
	int done = 0;

	hw_ci = readl(&dev->regs->rx_ci);
	if ((u32)(hw_ci - rx->ci) > (u32)(rx->pi - rx->ci)) {
		vrnic_eth_bad_ring(eth, "rx_ci", hw_ci, rx->ci, rx->pi);
		return 0;
	}
	dma_rmb();	/* descriptors after rx_ci */
	while (done < budget && rx->ci != hw_ci) {
		slot = vrnic_eth_slot(rx, rx->ci);
		desc = vrnic_eth_desc(rx, rx->ci);
		len = le32_to_cpu(READ_ONCE(desc->len));
		status = le16_to_cpu(READ_ONCE(desc->status));
		skb = rx->skb[slot];
		rx->skb[slot] = NULL;
		rx->ci++;
		dma_unmap_single(&dev->pdev->dev, rx->dma[slot],
				 eth->rx_buf_len, DMA_FROM_DEVICE);
		if (!(status & VRNIC_ETH_ST_DONE) ||
		    (status & VRNIC_ETH_ST_ERR) || len < ETH_HLEN ||
		    len > eth->rx_buf_len) {
			vrnic_count(dev, VRNIC_CNT_ETH_RX_ERRORS, 1);
			dev_kfree_skb_any(skb);
			continue;
		}
		skb_put(skb, len);
		skb->protocol = eth_type_trans(skb, eth->netdev);
		vrnic_count(dev, VRNIC_CNT_ETH_RX_PACKETS, 1);
		vrnic_count(dev, VRNIC_CNT_ETH_RX_BYTES, len);
		napi_gro_receive(&eth->napi, skb);
		done++;
	}
	return done;
}

static bool vrnic_eth_has_work(struct vrnic_eth *eth)
{
	struct vrnic_regs __iomem *r = eth->dev->regs;

	return readl(&r->tx_ci) != eth->tx.ci || readl(&r->rx_ci) != eth->rx.ci;
}

static int vrnic_eth_poll(struct napi_struct *napi, int budget)
{
	struct vrnic_eth *eth = container_of(napi, struct vrnic_eth, napi);
	int done;

	vrnic_eth_tx_reclaim(eth, budget);
	done = vrnic_eth_rx(eth, budget);
	vrnic_eth_rx_refill(eth);
	if (done < budget && napi_complete_done(napi, done)) {
		/* The vector cannot be masked: look once more. */
		if (!eth->bad_ring && vrnic_eth_has_work(eth))
			napi_schedule(napi);
	}
	return done;
}

/* Often enough that a 32-bit device counter cannot wrap unseen. */
static void vrnic_eth_fold_drops(struct vrnic_eth *eth)
{
	struct vrnic_regs __iomem *r = eth->dev->regs;
	unsigned long flags;
	u32 missed, oversize;

	if (eth->dev->caps.version_minor < 1)
		return;		/* reserved words on a 1.0 device */
	spin_lock_irqsave(&eth->stats_lock, flags);
	missed = readl(&r->eth_rx_missed);
	oversize = readl(&r->eth_rx_oversize);
	eth->rx_missed += (u32)(missed - eth->hw_rx_missed);
	eth->rx_oversize += (u32)(oversize - eth->hw_rx_oversize);
	eth->hw_rx_missed = missed;
	eth->hw_rx_oversize = oversize;
	spin_unlock_irqrestore(&eth->stats_lock, flags);
}

/* Once a second: reclaim and refill even if an interrupt was lost. */
void vrnic_eth_watchdog(struct vrnic_dev *dev)
{
	struct vrnic_eth *eth = dev->eth;

	if (!eth)
		return;
	vrnic_eth_fold_drops(eth);
	if (eth->registered && netif_running(eth->netdev))
		napi_schedule(&eth->napi);
}

/* Vector 1. Hard interrupt context. */
void vrnic_eth_irq(struct vrnic_dev *dev)
{
	if (dev->eth)
		napi_schedule(&dev->eth->napi);
}

/* ------------------------------------------------------------------ */
/* net_device                                                          */
/* ------------------------------------------------------------------ */

static int vrnic_eth_open(struct net_device *netdev)
{
	struct vrnic_eth *eth = netdev_priv(netdev);

	napi_enable(&eth->napi);
	netif_start_queue(netdev);
	vrnic_eth_link_update(eth->dev);
	napi_schedule(&eth->napi);
	return 0;
}

static int vrnic_eth_stop(struct net_device *netdev)
{
	struct vrnic_eth *eth = netdev_priv(netdev);

	netif_stop_queue(netdev);
	napi_disable(&eth->napi);
	return 0;
}

static void vrnic_eth_get_stats64(struct net_device *netdev,
				  struct rtnl_link_stats64 *s)
{
	struct vrnic_eth *eth = netdev_priv(netdev);
	atomic64_t *c = eth->dev->counters;
	unsigned long flags;

	vrnic_eth_fold_drops(eth);
	spin_lock_irqsave(&eth->stats_lock, flags);
	s->rx_missed_errors = eth->rx_missed;
	s->rx_length_errors = eth->rx_oversize;
	spin_unlock_irqrestore(&eth->stats_lock, flags);
	s->tx_packets = atomic64_read(&c[VRNIC_CNT_ETH_TX_PACKETS]);
	s->tx_bytes = atomic64_read(&c[VRNIC_CNT_ETH_TX_BYTES]);
	s->tx_errors = atomic64_read(&c[VRNIC_CNT_ETH_TX_ERRORS]);
	s->tx_dropped = atomic64_read(&eth->tx_dropped);
	s->rx_packets = atomic64_read(&c[VRNIC_CNT_ETH_RX_PACKETS]);
	s->rx_bytes = atomic64_read(&c[VRNIC_CNT_ETH_RX_BYTES]);
	s->rx_errors = atomic64_read(&c[VRNIC_CNT_ETH_RX_ERRORS]) +
		       s->rx_length_errors;
	s->rx_dropped = atomic64_read(&eth->rx_dropped);
}

/* Under RTNL. Only NETIF_F_LOOPBACK is changeable (a 1.1 device). */
static int vrnic_eth_set_features(struct net_device *netdev,
				  netdev_features_t features)
{
	struct vrnic_eth *eth = netdev_priv(netdev);
	struct vrnic_cmd_set_eth req = {};

	if (!((netdev->features ^ features) & NETIF_F_LOOPBACK))
		return 0;
	if (features & NETIF_F_LOOPBACK)
		req.flags = cpu_to_le32(VRNIC_ETH_F_LOOPBACK);
	return vrnic_cmd_exec(eth->dev, VRNIC_CMD_SET_ETH, &req, sizeof(req),
			      NULL, 0);
}

static const struct net_device_ops vrnic_netdev_ops = {
	.ndo_open = vrnic_eth_open,
	.ndo_stop = vrnic_eth_stop,
	.ndo_start_xmit = vrnic_eth_xmit,
	.ndo_get_stats64 = vrnic_eth_get_stats64,
	.ndo_set_features = vrnic_eth_set_features,
	.ndo_validate_addr = eth_validate_addr,
};

/* Carrier follows the device's port state. Any context. */
void vrnic_eth_link_update(struct vrnic_dev *dev)
{
	struct vrnic_eth *eth = dev->eth;
	unsigned long flags;
	bool up;

	if (!eth)
		return;
	up = !vrnic_is_fatal(dev) &&
	     readl(&dev->regs->port_state) == VRNIC_PORT_ACTIVE;
	spin_lock_irqsave(&eth->link_lock, flags);
	if (eth->registered) {
		if (up)
			netif_carrier_on(eth->netdev);
		else
			netif_carrier_off(eth->netdev);
	}
	spin_unlock_irqrestore(&eth->link_lock, flags);
}

/* Before DRIVER_OK: the device latches the ring configuration. */
int vrnic_eth_alloc_rings(struct vrnic_dev *dev)
{
	struct net_device *netdev;
	struct vrnic_eth *eth;
	int err;

	netdev = alloc_netdev(sizeof(*eth), "vrnic%d", NET_NAME_ENUM,
			      ether_setup);
	if (!netdev)
		return -ENOMEM;
	eth = netdev_priv(netdev);
	eth->dev = dev;
	eth->netdev = netdev;
	spin_lock_init(&eth->link_lock);
	spin_lock_init(&eth->stats_lock);
	atomic64_set(&eth->tx_dropped, 0);
	atomic64_set(&eth->rx_dropped, 0);
	eth->rx_buf_len = dev->caps.eth_max_mtu + VRNIC_ETH_HDR_MAX;

	err = vrnic_eth_ring_alloc(dev, &eth->tx, VRNIC_ETH_TX_LOG_DEPTH);
	if (!err)
		err = vrnic_eth_ring_alloc(dev, &eth->rx,
					   VRNIC_ETH_RX_LOG_DEPTH);
	if (err) {
		vrnic_eth_ring_free(dev, &eth->tx, DMA_TO_DEVICE);
		vrnic_eth_ring_free(dev, &eth->rx, DMA_FROM_DEVICE);
		free_netdev(netdev);
		return err;
	}

	netdev->netdev_ops = &vrnic_netdev_ops;
	/* Off after every reset; SET_ETH exists from interface 1.1 on. */
	if (dev->caps.version_minor >= 1)
		netdev->hw_features |= NETIF_F_LOOPBACK;
	netdev->min_mtu = ETH_MIN_MTU;
	netdev->max_mtu = dev->caps.eth_max_mtu;
	netdev->mtu = min_t(u32, ETH_DATA_LEN, dev->caps.eth_max_mtu);
	SET_NETDEV_DEV(netdev, &dev->pdev->dev);
	if (is_valid_ether_addr(dev->caps.mac)) {
		eth_hw_addr_set(netdev, dev->caps.mac);
	} else {
		dev_err(&dev->pdev->dev, "device MAC %pM is invalid\n",
			dev->caps.mac);
		eth_hw_addr_random(netdev);
	}
	netif_napi_add(netdev, &eth->napi, vrnic_eth_poll);
	netif_carrier_off(netdev);

	dev->netdev = netdev;
	dev->eth = eth;
	return 0;
}

void vrnic_eth_write_config(struct vrnic_dev *dev)
{
	struct vrnic_regs __iomem *r = dev->regs;
	struct vrnic_eth *eth = dev->eth;

	writeq(eth->tx.ring.dma, &r->tx_base);
	writel(eth->tx.log_depth, &r->tx_log_depth);
	writeq(eth->rx.ring.dma, &r->rx_base);
	writel(eth->rx.log_depth, &r->rx_log_depth);
}

/* After the device reset: no frame buffer is in use by the device. */
void vrnic_eth_free_rings(struct vrnic_dev *dev)
{
	struct vrnic_eth *eth = dev->eth;

	if (!eth)
		return;
	dev->eth = NULL;
	dev->netdev = NULL;
	netif_napi_del(&eth->napi);
	vrnic_eth_ring_free(dev, &eth->tx, DMA_TO_DEVICE);
	vrnic_eth_ring_free(dev, &eth->rx, DMA_FROM_DEVICE);
	free_netdev(eth->netdev);
}

int vrnic_eth_register(struct vrnic_dev *dev)
{
	struct vrnic_eth *eth = dev->eth;
	unsigned long flags;
	int err;

	vrnic_eth_rx_refill(eth);
	err = register_netdev(eth->netdev);
	if (err)
		return err;
	spin_lock_irqsave(&eth->link_lock, flags);
	eth->registered = true;
	spin_unlock_irqrestore(&eth->link_lock, flags);
	vrnic_eth_link_update(dev);
	return 0;
}

void vrnic_eth_unregister(struct vrnic_dev *dev)
{
	struct vrnic_eth *eth = dev->eth;
	unsigned long flags;

	if (!eth || !eth->registered)
		return;
	spin_lock_irqsave(&eth->link_lock, flags);
	eth->registered = false;
	spin_unlock_irqrestore(&eth->link_lock, flags);
	unregister_netdev(eth->netdev);
}
