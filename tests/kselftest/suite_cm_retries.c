// SPDX-License-Identifier: GPL-2.0
/*
 * A connect over vrnic's GSI QP to an address that resolves (a permanent
 * neighbour entry) but whose CM never answers ends in
 * RDMA_CM_EVENT_UNREACHABLE, ETIMEDOUT, once ib_cm has sent its REQ and
 * every retry: a program of its own because that takes rdma_cm's whole
 * budget, 98 s on Linux 6.1 and 74 s on 6.12.
 */
#include <sys/utsname.h>

#include "cm_fixture.h"

#define CM_SILENT "192.168.77.253"	/* resolves by hand, nobody there */
#define CM_SILENT_MAC "02:00:00:4d:77:fd"

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

TEST_HARNESS_MAIN
