// SPDX-License-Identifier: GPL-2.0
/*
 * The connection manager over vrnic's GSI QP (librdmacm -> rdma_ucm ->
 * rdma_cm -> ib_cm -> MADs on QP1), on vrnic0's IPv4 address:
 * - a connect to a port nobody listens on is rejected (REJECTED or
 *   UNREACHABLE), without waiting for a timeout;
 * - a connect to an address nobody answers ends in an error event;
 * - a connected peer process killed with SIGKILL gives the other side
 *   RDMA_CM_EVENT_DISCONNECTED;
 * - a listener destroyed with a connect pending rejects that connect;
 * - a privileged qkey (high bit) from user space is refused with EPERM;
 * and `rdma res` is back to its baseline after each. suite_cm_retries
 * waits out rdma_cm's REQ retries to an address whose CM never answers.
 */
#include "cm_fixture.h"

#define CM_ABSENT "192.168.77.254"	/* same subnet, nobody there */

TEST_F_TIMEOUT(cm, no_listener_is_rejected, CM_TEST_S)
{
	struct ibv_qp_init_attr qa = cm_qp_attr();
	struct rdma_conn_param cp = { .retry_count = 7 };
	int ev;

	ASSERT_EQ(0, cm_resolve(self->ch, self->id, CM_ADDR, CM_PORT));
	ASSERT_EQ(0, rdma_create_qp(self->id, NULL, &qa));
	ASSERT_EQ(0, rdma_connect(self->id, &cp));
	ev = cm_next(self->ch, NULL, NULL);
	TH_LOG("event %s", rdma_event_str(ev));
	EXPECT_TRUE(ev == RDMA_CM_EVENT_REJECTED ||
		    ev == RDMA_CM_EVENT_UNREACHABLE);
}

TEST_F_TIMEOUT(cm, absent_address_fails, CM_TEST_S)
{
	int ev = cm_resolve(self->ch, self->id, CM_ABSENT, CM_PORT);

	TH_LOG("event %s", ev > 0 ? rdma_event_str(ev) : "none");
	EXPECT_TRUE(ev == RDMA_CM_EVENT_ADDR_ERROR ||
		    ev == RDMA_CM_EVENT_ROUTE_ERROR ||
		    ev == RDMA_CM_EVENT_UNREACHABLE);
}

/* A child that listens, accepts one connect, reports it, then waits. */
static void cm_server_child(int report)
{
	struct sockaddr_in a = cm_sin(CM_ADDR, CM_PORT);
	struct ibv_qp_init_attr qa = cm_qp_attr();
	struct rdma_conn_param cp = {};
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *l, *c;
	char ok = 1;

	if (!ch || rdma_create_id(ch, &l, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(l, (struct sockaddr *)&a) || rdma_listen(l, 1) ||
	    write(report, &ok, 1) != 1)
		_exit(1);
	if (cm_next(ch, &c, NULL) != RDMA_CM_EVENT_CONNECT_REQUEST ||
	    rdma_create_qp(c, NULL, &qa) || rdma_accept(c, &cp) ||
	    cm_next(ch, NULL, NULL) != RDMA_CM_EVENT_ESTABLISHED)
		_exit(2);
	if (write(report, &ok, 1) != 1)
		_exit(3);
	pause();
	_exit(0);
}

TEST_F_TIMEOUT(cm, killed_peer_disconnects, CM_TEST_S)
{
	struct ibv_qp_init_attr qa = cm_qp_attr();
	struct rdma_conn_param cp = { .retry_count = 7 };
	int fds[2], status, ev;
	pid_t pid;
	char b;

	ASSERT_EQ(0, pipe(fds));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(fds[0]);
		cm_server_child(fds[1]);
	}
	close(fds[1]);
	ASSERT_EQ(1, read(fds[0], &b, 1));	/* listening */
	ASSERT_EQ(0, cm_resolve(self->ch, self->id, CM_ADDR, CM_PORT));
	ASSERT_EQ(0, rdma_create_qp(self->id, NULL, &qa));
	ASSERT_EQ(0, rdma_connect(self->id, &cp));
	ev = cm_next(self->ch, NULL, NULL);
	ASSERT_EQ(RDMA_CM_EVENT_ESTABLISHED, ev);
	EXPECT_EQ(1, read(fds[0], &b, 1));	/* the server saw it too */
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(fds[0]);
	ev = cm_next(self->ch, NULL, NULL);
	TH_LOG("event %s", ev >= 0 ? rdma_event_str(ev) : "none");
	EXPECT_EQ(RDMA_CM_EVENT_DISCONNECTED, ev);
	/* The teardown checks that the dead server's QP and IDs are gone. */
}

TEST_F_TIMEOUT(cm, destroyed_listener_rejects_pending, CM_TEST_S)
{
	struct sockaddr_in a = cm_sin(CM_ADDR, CM_PORT + 1);
	struct ibv_qp_init_attr qa = cm_qp_attr();
	struct rdma_conn_param cp = { .retry_count = 7 };
	struct rdma_event_channel *lch = rdma_create_event_channel();
	struct rdma_cm_id *l, *req;
	int ev;

	ASSERT_NE(NULL, lch);
	ASSERT_EQ(0, rdma_create_id(lch, &l, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_bind_addr(l, (struct sockaddr *)&a));
	ASSERT_EQ(0, rdma_listen(l, 4));
	ASSERT_EQ(0, cm_resolve(self->ch, self->id, CM_ADDR, CM_PORT + 1));
	ASSERT_EQ(0, rdma_create_qp(self->id, NULL, &qa));
	ASSERT_EQ(0, rdma_connect(self->id, &cp));
	ASSERT_EQ(RDMA_CM_EVENT_CONNECT_REQUEST, cm_next(lch, &req, NULL));
	/* Neither accepted nor rejected: gone with its listener. */
	rdma_destroy_id(req);
	rdma_destroy_id(l);
	rdma_destroy_event_channel(lch);
	ev = cm_next(self->ch, NULL, NULL);
	TH_LOG("event %s", ev >= 0 ? rdma_event_str(ev) : "none");
	EXPECT_TRUE(ev == RDMA_CM_EVENT_REJECTED ||
		    ev == RDMA_CM_EVENT_UNREACHABLE);
}

TEST_F_TIMEOUT(cm, privileged_qkey_is_eperm, CM_TEST_S)
{
	struct ibv_context *ctx = su_open();
	struct ibv_qp_init_attr qa = cm_qp_attr();
	struct ibv_qp_attr at = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qkey = 0x80000001,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		   IBV_QP_QKEY;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;

	ASSERT_NE(NULL, ctx);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	ASSERT_NE(NULL, pd);
	ASSERT_NE(NULL, cq);
	qa.qp_type = IBV_QPT_UD;
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qp = ibv_create_qp(pd, &qa);
	ASSERT_NE(NULL, qp);
	EXPECT_EQ(EPERM, ibv_modify_qp(qp, &at, mask));
	at.qkey = 0x11111111;
	EXPECT_EQ(0, ibv_modify_qp(qp, &at, mask));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
	EXPECT_EQ(0, ibv_close_device(ctx));
}

TEST_HARNESS_MAIN
