// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic_ktest_cm: a kernel rdma_cm consumer, the way storage and file
 * ULPs connect. Loading it listens on @addr:@port, connects a second
 * rdma_cm ID to it (address and route resolution, ib_cm REQ/REP/RTU over
 * the GSI QP), exchanges one checked SEND each way over the RC QPs the CM
 * set up, disconnects and frees everything. insmod fails with the error of
 * the first failing step (details in the kernel log). A test tool only:
 * tests/kselftest/suite_kverbs.c loads and unloads it.
 */
#include <linux/completion.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

MODULE_AUTHOR("vrnic authors");
MODULE_DESCRIPTION("vrnic kernel rdma_cm self-test");
MODULE_LICENSE("Dual BSD/GPL");

static char *kc_addr = "192.168.77.1";
module_param_named(addr, kc_addr, charp, 0444);
MODULE_PARM_DESC(addr, "the IPv4 address of a vrnic netdev");
static int kc_port = 19881;
module_param_named(port, kc_port, int, 0444);
MODULE_PARM_DESC(port, "the rdma_cm port to listen on");

#define KC_LEN		4096
#define KC_TIMEOUT	(30 * HZ)	/* bounds a hang; no timing is tested */
#define KC_FAILED	(BIT(RDMA_CM_EVENT_ADDR_ERROR) | \
			 BIT(RDMA_CM_EVENT_ROUTE_ERROR) | \
			 BIT(RDMA_CM_EVENT_CONNECT_ERROR) | \
			 BIT(RDMA_CM_EVENT_UNREACHABLE) | \
			 BIT(RDMA_CM_EVENT_REJECTED) | \
			 BIT(RDMA_CM_EVENT_DEVICE_REMOVAL))

/* One side of the connection and what it has seen. */
struct kc_end {
	const char *name;
	struct rdma_cm_id *id;
	struct ib_pd *pd;
	struct ib_cq *cq;
	u8 *buf;			/* [0, KC_LEN) receive, then send */
	u64 dma;
	unsigned long seen;		/* a bit per rdma_cm event type */
	struct ib_cqe cqe;
	struct completion recv, send;
	struct ib_wc wc;
};

static struct kc_end kc_srv = { .name = "server" };
static struct kc_end kc_cli = { .name = "client" };
static struct rdma_cm_id *kc_listen;
static DECLARE_WAIT_QUEUE_HEAD(kc_wq);

static void kc_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kc_end *e = container_of(wc->wr_cqe, struct kc_end, cqe);

	if (wc->opcode & IB_WC_RECV) {
		e->wc = *wc;
		complete(&e->recv);
	} else {
		if (wc->status)
			e->wc = *wc;
		complete(&e->send);
	}
}

static int kc_event(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct kc_end *e = id->context;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		/* The new ID is the server's end; it inherits our context. */
		if (kc_srv.id)
			return -EBUSY;	/* refused: the core destroys it */
		kc_srv.id = id;
		id->context = &kc_srv;
		e = &kc_srv;
	}
	if (!e)
		return 0;
	pr_debug("vrnic_ktest_cm: %s: %s (%d)\n", e->name,
		 rdma_event_msg(ev->event), ev->status);
	if (ev->event < BITS_PER_LONG)
		set_bit(ev->event, &e->seen);
	wake_up_all(&kc_wq);
	return 0;
}

/* Wait for @event on @e: 0, or -EIO after a failure event or the bound. */
static int kc_wait(struct kc_end *e, enum rdma_cm_event_type event)
{
	long left = wait_event_timeout(kc_wq, READ_ONCE(e->seen) &
				       (BIT(event) | KC_FAILED), KC_TIMEOUT);

	if (left && test_bit(event, &e->seen))
		return 0;
	pr_err("vrnic_ktest_cm: %s: no %s (events seen %#lx)\n", e->name,
	       rdma_event_msg(event), READ_ONCE(e->seen));
	return -EIO;
}

/* PD, CQ, buffer and RC QP on @e's ID, with one receive posted. */
static int kc_resources(struct kc_end *e)
{
	struct ib_device *dev = e->id->device;
	struct ib_qp_init_attr init = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
	};
	struct ib_sge sge;
	struct ib_recv_wr wr = { .wr_cqe = &e->cqe, .sg_list = &sge,
				 .num_sge = 1 };
	int err;

	e->cqe.done = kc_done;
	init_completion(&e->recv);
	init_completion(&e->send);
	e->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(e->pd)) {
		err = PTR_ERR(e->pd);
		e->pd = NULL;
		return err;
	}
	e->cq = ib_alloc_cq(dev, e, 8, 0, IB_POLL_SOFTIRQ);
	if (IS_ERR(e->cq)) {
		err = PTR_ERR(e->cq);
		e->cq = NULL;
		return err;
	}
	e->buf = kzalloc(2 * KC_LEN, GFP_KERNEL);
	if (!e->buf)
		return -ENOMEM;
	e->dma = ib_dma_map_single(dev, e->buf, 2 * KC_LEN,
				   DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(dev, e->dma)) {
		kfree(e->buf);
		e->buf = NULL;
		return -ENOMEM;
	}
	init.send_cq = e->cq;
	init.recv_cq = e->cq;
	err = rdma_create_qp(e->id, e->pd, &init);
	if (err)
		return err;
	sge.addr = e->dma;
	sge.length = KC_LEN;
	sge.lkey = e->pd->local_dma_lkey;
	return ib_post_recv(e->id->qp, &wr, NULL);
}

static void kc_free(struct kc_end *e)
{
	if (e->id && e->id->qp)
		rdma_destroy_qp(e->id);
	if (e->buf) {
		ib_dma_unmap_single(e->id->device, e->dma, 2 * KC_LEN,
				    DMA_BIDIRECTIONAL);
		kfree(e->buf);
	}
	if (e->cq)
		ib_free_cq(e->cq);
	if (e->pd)
		ib_dealloc_pd(e->pd);
	if (e->id)
		rdma_destroy_id(e->id);
	e->id = NULL;
	e->pd = NULL;
	e->cq = NULL;
	e->buf = NULL;
	e->seen = 0;
}

/* @from sends KC_LEN bytes of @seed's pattern; @to must receive them. */
static int kc_exchange(struct kc_end *from, struct kc_end *to, u8 seed)
{
	struct ib_sge sge = { .addr = from->dma + KC_LEN, .length = KC_LEN,
			      .lkey = from->pd->local_dma_lkey };
	struct ib_send_wr wr = { .wr_cqe = &from->cqe, .sg_list = &sge,
				 .num_sge = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED };
	struct ib_device *dev = from->id->device;
	int i, err;

	for (i = 0; i < KC_LEN; i++)
		from->buf[KC_LEN + i] = (u8)(seed + i * 7);
	ib_dma_sync_single_for_device(dev, from->dma, 2 * KC_LEN,
				      DMA_BIDIRECTIONAL);
	err = ib_post_send(from->id->qp, &wr, NULL);
	if (err)
		return err;
	if (!wait_for_completion_timeout(&from->send, KC_TIMEOUT) ||
	    from->wc.status) {
		pr_err("vrnic_ktest_cm: %s: send failed (%d)\n", from->name,
		       from->wc.status);
		return -EIO;
	}
	if (!wait_for_completion_timeout(&to->recv, KC_TIMEOUT) ||
	    to->wc.status || to->wc.byte_len != KC_LEN) {
		pr_err("vrnic_ktest_cm: %s: receive failed (%d, %u bytes)\n",
		       to->name, to->wc.status, to->wc.byte_len);
		return -EIO;
	}
	ib_dma_sync_single_for_cpu(dev, to->dma, 2 * KC_LEN,
				   DMA_BIDIRECTIONAL);
	for (i = 0; i < KC_LEN; i++) {
		if (to->buf[i] != (u8)(seed + i * 7)) {
			pr_err("vrnic_ktest_cm: %s: byte %d is %#x\n",
			       to->name, i, to->buf[i]);
			return -EIO;
		}
	}
	return 0;
}

static int kc_run(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(kc_port) };
	struct rdma_conn_param cp = { .retry_count = 7,
				      .rnr_retry_count = 7 };
	int err;

	if (!in4_pton(kc_addr, -1, (u8 *)&sin.sin_addr, -1, NULL))
		return -EINVAL;
	kc_listen = rdma_create_id(&init_net, kc_event, NULL, RDMA_PS_TCP,
				   IB_QPT_RC);
	if (IS_ERR(kc_listen))
		return PTR_ERR(kc_listen);
	err = rdma_bind_addr(kc_listen, (struct sockaddr *)&sin);
	if (!err)
		err = rdma_listen(kc_listen, 1);
	if (err)
		return err;

	kc_cli.id = rdma_create_id(&init_net, kc_event, &kc_cli, RDMA_PS_TCP,
				   IB_QPT_RC);
	if (IS_ERR(kc_cli.id)) {
		err = PTR_ERR(kc_cli.id);
		kc_cli.id = NULL;
		return err;
	}
	err = rdma_resolve_addr(kc_cli.id, NULL, (struct sockaddr *)&sin,
				2000);
	if (!err)
		err = kc_wait(&kc_cli, RDMA_CM_EVENT_ADDR_RESOLVED);
	if (!err)
		err = rdma_resolve_route(kc_cli.id, 2000);
	if (!err)
		err = kc_wait(&kc_cli, RDMA_CM_EVENT_ROUTE_RESOLVED);
	if (err)
		return err;
	if (strncmp(dev_name(&kc_cli.id->device->dev), "vrnic", 5)) {
		pr_err("vrnic_ktest_cm: %s is not on a vrnic device\n",
		       kc_addr);
		return -ENODEV;
	}
	err = kc_resources(&kc_cli);
	if (!err)
		err = rdma_connect(kc_cli.id, &cp);
	if (!err)
		err = kc_wait(&kc_srv, RDMA_CM_EVENT_CONNECT_REQUEST);
	if (!err)
		err = kc_resources(&kc_srv);
	if (!err)
		err = rdma_accept(kc_srv.id, &cp);
	if (!err)
		err = kc_wait(&kc_cli, RDMA_CM_EVENT_ESTABLISHED);
	if (!err)
		err = kc_wait(&kc_srv, RDMA_CM_EVENT_ESTABLISHED);
	if (!err)
		err = kc_exchange(&kc_cli, &kc_srv, 0x11);
	if (!err)
		err = kc_exchange(&kc_srv, &kc_cli, 0x5c);
	/* DREQ from the client; the server answers it with its DREP. */
	if (!err)
		err = rdma_disconnect(kc_cli.id);
	if (!err)
		err = kc_wait(&kc_srv, RDMA_CM_EVENT_DISCONNECTED);
	if (!err)
		err = rdma_disconnect(kc_srv.id);
	if (!err)
		err = kc_wait(&kc_cli, RDMA_CM_EVENT_DISCONNECTED);
	return err;
}

static void kc_cleanup(void)
{
	kc_free(&kc_cli);
	kc_free(&kc_srv);
	if (!IS_ERR_OR_NULL(kc_listen))
		rdma_destroy_id(kc_listen);
	kc_listen = NULL;
}

static int __init kc_init(void)
{
	int err = kc_run();

	kc_cleanup();
	if (err)
		pr_err("vrnic_ktest_cm: failed: %d\n", err);
	else
		pr_info("vrnic_ktest_cm: connected, 2 x %d bytes checked, disconnected\n",
			KC_LEN);
	return err;
}

static void __exit kc_exit(void)
{
}

module_init(kc_init);
module_exit(kc_exit);
