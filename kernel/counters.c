// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic: the per-port counters (rdma statistic): the driver's own, then the
 * drops and the traffic the device counts in its register page.
 */
#include "vrnic.h"

#define VRNIC_STATS_MAX		(VRNIC_CNT_MAX + VRNIC_DEV_CNT_MAX)

static const struct rdma_stat_desc vrnic_hw_stat_descs[VRNIC_STATS_MAX] = {
	[VRNIC_CNT_CMDS].name = "commands",
	[VRNIC_CNT_CMD_ERRORS].name = "command_errors",
	[VRNIC_CNT_CMD_TIMEOUTS].name = "command_timeouts",
	[VRNIC_CNT_ASYNC_EVENTS].name = "async_events",
	[VRNIC_CNT_COMP_EVENTS].name = "completion_events",
	[VRNIC_CNT_QP_ERRORS].name = "qp_errors",
	[VRNIC_CNT_CQ_ERRORS].name = "cq_errors",
	[VRNIC_CNT_BAD_EQES].name = "invalid_eqes",
	[VRNIC_CNT_BAD_CQES].name = "invalid_cqes",
	[VRNIC_CNT_EQ_OVERFLOW].name = "eq_overflows",
	[VRNIC_CNT_ETH_TX_PACKETS].name = "eth_tx_packets",
	[VRNIC_CNT_ETH_TX_BYTES].name = "eth_tx_bytes",
	[VRNIC_CNT_ETH_TX_ERRORS].name = "eth_tx_errors",
	[VRNIC_CNT_ETH_RX_PACKETS].name = "eth_rx_packets",
	[VRNIC_CNT_ETH_RX_BYTES].name = "eth_rx_bytes",
	[VRNIC_CNT_ETH_RX_ERRORS].name = "eth_rx_errors",
	[VRNIC_CNT_MAX + VRNIC_DEV_CNT_UD_QKEY_DROPS].name = "ud_qkey_drops",
	[VRNIC_CNT_MAX + VRNIC_DEV_CNT_UD_NO_RECV_DROPS].name =
		"ud_no_recv_drops",
	[VRNIC_CNT_MAX + VRNIC_DEV_CNT_UD_NO_DEST_DROPS].name =
		"ud_no_dest_drops",
	[VRNIC_CNT_MAX + VRNIC_DEV_CNT_UC_DROPS].name = "uc_drops",
	[VRNIC_CNT_MAX + VRNIC_DEV_CNT_RDMA_TX_MSGS].name = "rdma_tx_msgs",
	[VRNIC_CNT_MAX + VRNIC_DEV_CNT_RDMA_TX_BYTES].name = "rdma_tx_bytes",
	[VRNIC_CNT_MAX + VRNIC_DEV_CNT_RDMA_RX_MSGS].name = "rdma_rx_msgs",
	[VRNIC_CNT_MAX + VRNIC_DEV_CNT_RDMA_RX_BYTES].name = "rdma_rx_bytes",
	[VRNIC_CNT_MAX + VRNIC_DEV_CNT_RNR_NAKS].name = "rnr_naks",
	[VRNIC_CNT_MAX + VRNIC_DEV_CNT_RETRIES].name = "retries",
	[VRNIC_CNT_MAX + VRNIC_DEV_CNT_COMPLETION_ERRORS].name =
		"completion_errors",
	[VRNIC_CNT_MAX + VRNIC_DEV_CNT_WIRE_TX_PKTS].name = "wire_tx_pkts",
	[VRNIC_CNT_MAX + VRNIC_DEV_CNT_WIRE_RX_PKTS].name = "wire_rx_pkts",
	[VRNIC_CNT_MAX + VRNIC_DEV_CNT_WIRE_RX_DROPS].name = "wire_rx_drops",
	[VRNIC_CNT_MAX + VRNIC_DEV_CNT_WIRE_RESENT_PKTS].name =
		"wire_resent_pkts",
	[VRNIC_CNT_MAX + VRNIC_DEV_CNT_WIRE_SEQ_NAKS].name = "wire_seq_naks",
	[VRNIC_CNT_MAX + VRNIC_DEV_CNT_WIRE_DUP_REQS].name = "wire_dup_reqs",
	[VRNIC_CNT_MAX + VRNIC_DEV_CNT_WIRE_STALE_PKTS].name =
		"wire_stale_pkts",
};

struct rdma_hw_stats *vrnic_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port)
{
	return rdma_alloc_hw_stats_struct(vrnic_hw_stat_descs,
					  ARRAY_SIZE(vrnic_hw_stat_descs),
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

int vrnic_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index)
{
	struct vrnic_dev *dev = to_vdev(ibdev);
	struct vrnic_regs __iomem *r = dev->regs;
	u64 *dv = &stats->value[VRNIC_CNT_MAX];
	int i;

	for (i = 0; i < VRNIC_CNT_MAX; i++)
		stats->value[i] = atomic64_read(&dev->counters[i]);
	/* 32-bit device counters: the value as the device keeps it. */
	dv[VRNIC_DEV_CNT_UD_QKEY_DROPS] = readl(&r->ud_qkey_drops);
	dv[VRNIC_DEV_CNT_UD_NO_RECV_DROPS] = readl(&r->ud_no_recv_drops);
	dv[VRNIC_DEV_CNT_UD_NO_DEST_DROPS] = readl(&r->ud_no_dest_drops);
	dv[VRNIC_DEV_CNT_UC_DROPS] = readl(&r->uc_drops);
	/* 64-bit traffic counters; an older device has none. */
	if (dev->caps.version_minor >= 9) {
		dv[VRNIC_DEV_CNT_RDMA_TX_MSGS] = readq(&r->rdma_tx_msgs);
		dv[VRNIC_DEV_CNT_RDMA_TX_BYTES] = readq(&r->rdma_tx_bytes);
		dv[VRNIC_DEV_CNT_RDMA_RX_MSGS] = readq(&r->rdma_rx_msgs);
		dv[VRNIC_DEV_CNT_RDMA_RX_BYTES] = readq(&r->rdma_rx_bytes);
		dv[VRNIC_DEV_CNT_RNR_NAKS] = readq(&r->rnr_naks);
		dv[VRNIC_DEV_CNT_RETRIES] = readq(&r->retries);
		dv[VRNIC_DEV_CNT_COMPLETION_ERRORS] =
			readq(&r->completion_errors);
	}
	/* RoCE v2 packets on the model's uplink; an older device has none. */
	if (dev->caps.version_minor >= 10) {
		dv[VRNIC_DEV_CNT_WIRE_TX_PKTS] = readl(&r->wire_tx_pkts);
		dv[VRNIC_DEV_CNT_WIRE_RX_PKTS] = readl(&r->wire_rx_pkts);
		dv[VRNIC_DEV_CNT_WIRE_RX_DROPS] = readl(&r->wire_rx_drops);
	}
	/* Its RC transport's recoveries. */
	if (dev->caps.version_minor >= 11) {
		dv[VRNIC_DEV_CNT_WIRE_RESENT_PKTS] =
			readl(&r->wire_resent_pkts);
		dv[VRNIC_DEV_CNT_WIRE_SEQ_NAKS] = readl(&r->wire_seq_naks);
		dv[VRNIC_DEV_CNT_WIRE_DUP_REQS] = readl(&r->wire_dup_reqs);
		dv[VRNIC_DEV_CNT_WIRE_STALE_PKTS] = readl(&r->wire_stale_pkts);
	}
	return VRNIC_STATS_MAX;
}
