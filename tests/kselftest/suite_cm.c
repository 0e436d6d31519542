// SPDX-License-Identifier: GPL-2.0
/*
 * The connection manager over vrnic's GSI QP (librdmacm -> rdma_ucm ->
 * rdma_cm -> ib_cm -> MADs on QP1), on vrnic0's IPv4 address:
 * - a connect to a port nobody listens on is rejected (REJECTED or
 *   UNREACHABLE), without waiting for a timeout;
 * - a connect to an address nobody answers ends in an error event;
 * - a connect to an address that resolves (a permanent neighbour entry) but
 *   whose CM never answers ends in RDMA_CM_EVENT_UNREACHABLE, ETIMEDOUT,
 *   once ib_cm has sent its REQ and every retry;
 * - a connected peer process killed with SIGKILL gives the other side
 *   RDMA_CM_EVENT_DISCONNECTED;
 * - a listener destroyed with a connect pending rejects that connect;
 * - a privileged qkey (high bit) from user space is refused with EPERM;
 * and `rdma res` is back to its baseline after each.
 */
#include <arpa/inet.h>
#include <sys/utsname.h>
#include <rdma/rdma_cma.h>

#include "suite.h"
#include "kselftest_harness.h"

#define CM_ADDR "192.168.77.1"	/* scripts/vm.d/vrnic-addr */
#define CM_ABSENT "192.168.77.254"	/* same subnet, nobody there */
#define CM_SILENT "192.168.77.253"	/* resolves by hand, nobody there */
#define CM_SILENT_MAC "02:00:00:4d:77:fd"
#define CM_PORT 19871
#define CM_EVENT_MS 30000	/* a bound against hanging, not a timing */
#define CM_TEST_S 120		/* the harness's bound of one test */
/*
 * rdma_cm's REQ on RoCE: CMA_MAX_CM_RETRIES (15) retries after the first
 * send, each after ib_cm's timeout of 2 * 2^(CMA_IBOE_PACKET_LIFETIME - 8)
 * + 2^(CMA_CM_RESPONSE_TIMEOUT (20) - 8) ms. The packet lifetime is 18 in
 * Linux 6.1 and 16 in 6.12; CM_REQ_BUDGET_MAX_MS is the longer budget.
 */
#define CM_REQ_SENDS 16
#define CM_REQ_BUDGET_MAX_MS (CM_REQ_SENDS * (2 * 1024 + 4096))

static long cm_req_budget_ms(void)
{
	struct utsname u;
	int major = 0, minor = 0, lifetime;

	uname(&u);
	sscanf(u.release, "%d.%d", &major, &minor);
	lifetime = major > 6 || (major == 6 && minor >= 12) ? 16 : 18;
	return CM_REQ_SENDS * (2L * (1 << (lifetime - 8)) + 4096);
}

static struct sockaddr_in cm_sin(const char *ip, int port)
{
	struct sockaddr_in s = { .sin_family = AF_INET,
				 .sin_port = htons(port) };

	inet_pton(AF_INET, ip, &s.sin_addr);
	return s;
}

/* The next event on @ch within @ms: its type, or -1. */
static int cm_next_ms(struct rdma_event_channel *ch, int ms,
		      struct rdma_cm_id **id, int *status)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int type;

	if (poll(&p, 1, ms) != 1 || rdma_get_cm_event(ch, &ev))
		return -1;
	type = ev->event;
	if (id)
		*id = ev->id;
	if (status)
		*status = ev->status;
	rdma_ack_cm_event(ev);
	return type;
}

static int cm_next(struct rdma_event_channel *ch, struct rdma_cm_id **id,
		   int *status)
{
	return cm_next_ms(ch, CM_EVENT_MS, id, status);
}

/* Resolve @ip:@port on @id; 0 with the route, else the failing event. */
static int cm_resolve(struct rdma_event_channel *ch, struct rdma_cm_id *id,
		      const char *ip, int port)
{
	struct sockaddr_in dst = cm_sin(ip, port);
	int ev;

	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000))
		return -errno;
	ev = cm_next(ch, NULL, NULL);
	if (ev != RDMA_CM_EVENT_ADDR_RESOLVED)
		return ev;
	if (rdma_resolve_route(id, 2000))
		return -errno;
	ev = cm_next(ch, NULL, NULL);
	return ev == RDMA_CM_EVENT_ROUTE_RESOLVED ? 0 : ev;
}

static struct ibv_qp_init_attr cm_qp_attr(void)
{
	struct ibv_qp_init_attr a = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	return a;
}

/*
 * @line without its "pd N" and "ctx N": librdmacm keeps each device it
 * used open, with a default PD, until the process exits.
 */
static void cm_res_strip(char *line)
{
	char out[512] = "", *tok, *save, *key = NULL;

	for (tok = strtok_r(line, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		if (key) {
			if (strcmp(key, "pd") && strcmp(key, "ctx"))
				snprintf(out + strlen(out),
					 sizeof(out) - strlen(out), "%s %s ",
					 key, tok);
			key = NULL;
		} else if (!strcmp(tok, "pd") || !strcmp(tok, "ctx")) {
			key = tok;
		} else {
			snprintf(out + strlen(out), sizeof(out) - strlen(out),
				 "%s ", tok);
		}
	}
	strcpy(line, out);
}

/* `rdma res` back to @base within 10 s (IDs and QPs go asynchronously). */
static int cm_res_back(const char *base)
{
	char now[512], want[512];
	int i;

	snprintf(want, sizeof(want), "%s", base);
	cm_res_strip(want);
	for (i = 0; i < 100; i++) {
		if (!su_res_line(now, sizeof(now))) {
			cm_res_strip(now);
			if (!strcmp(now, want))
				return 0;
		}
		su_sleep_ms(100);
	}
	printf("# rdma res: '%s', baseline '%s'\n", now, want);
	fflush(stdout);
	return -1;
}

FIXTURE(cm) {
	char base[512];
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
};

FIXTURE_SETUP(cm)
{
	ASSERT_EQ(0, su_sh("scripts/vm.d/vrnic-addr >/dev/null && "
			   "modprobe rdma_ucm"));
	ASSERT_EQ(0, su_res_line(self->base, sizeof(self->base)));
	self->ch = rdma_create_event_channel();
	ASSERT_NE(NULL, self->ch);
	ASSERT_EQ(0, rdma_create_id(self->ch, &self->id, NULL, RDMA_PS_TCP));
}

FIXTURE_TEARDOWN(cm)
{
	if (self->id) {
		if (self->id->qp)
			rdma_destroy_qp(self->id);
		rdma_destroy_id(self->id);
	}
	if (self->ch)
		rdma_destroy_event_channel(self->ch);
	EXPECT_EQ(0, cm_res_back(self->base));
}

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

/*
 * The address resolves, so the REQ goes out on QP1, to a GID no port has:
 * the device drops each copy (ud_no_dest_drops) and completes the send, and
 * ib_mad's retries run out. An early error (a send the device failed, a
 * REQ that nobody sent) would give the same event, hence the lower bound.
 */
TEST_F_TIMEOUT(cm, silent_peer_times_out, CM_TEST_S + CM_REQ_BUDGET_MAX_MS / 1000)
{
	struct ibv_qp_init_attr qa = cm_qp_attr();
	struct rdma_conn_param cp = { .retry_count = 7 };
	long drops = su_counter("ud_no_dest_drops");
	int ev, status = 0, err;
	long budget = cm_req_budget_ms(), t0, ms;

	ASSERT_EQ(0, su_sh("ip neigh replace " CM_SILENT " lladdr " CM_SILENT_MAC
			   " nud permanent dev vrnic0"));
	err = cm_resolve(self->ch, self->id, CM_SILENT, CM_PORT);
	if (!err)
		err = rdma_create_qp(self->id, NULL, &qa);
	if (!err)
		err = rdma_connect(self->id, &cp);
	t0 = su_now_ms();
	ev = err ? err : cm_next_ms(self->ch, budget + 20000, NULL, &status);
	ms = su_now_ms() - t0;
	su_sh("ip neigh del " CM_SILENT " dev vrnic0");
	ASSERT_EQ(0, err);
	TH_LOG("event %s status %d after %ld ms, %ld REQs dropped",
	       ev >= 0 ? rdma_event_str(ev) : "none", status, ms,
	       su_counter("ud_no_dest_drops") - drops);
	EXPECT_EQ(RDMA_CM_EVENT_UNREACHABLE, ev);
	EXPECT_EQ(-ETIMEDOUT, status);
	EXPECT_LE(budget * 9 / 10, ms);
	EXPECT_GE(budget + 20000, ms);
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
