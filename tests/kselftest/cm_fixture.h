/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What suite_cm and suite_cm_retries share: vrnic0's addresses, the helpers
 * that drive librdmacm with bounded waits, and the fixture whose teardown
 * checks that `rdma res` is back to its baseline.
 */
#ifndef VRNIC_KSFT_CM_FIXTURE_H
#define VRNIC_KSFT_CM_FIXTURE_H

#include <arpa/inet.h>
#include <rdma/rdma_cma.h>

#include "suite.h"
#include "kselftest_harness.h"

#define CM_ADDR "192.168.77.1"	/* scripts/vm.d/vrnic-addr */
#define CM_PORT 19871
#define CM_EVENT_MS 30000	/* a bound against hanging, not a timing */
#define CM_TEST_S 120		/* the harness's bound of one test */

static inline struct sockaddr_in cm_sin(const char *ip, int port)
{
	struct sockaddr_in s = { .sin_family = AF_INET,
				 .sin_port = htons(port) };

	inet_pton(AF_INET, ip, &s.sin_addr);
	return s;
}

/* The next event on @ch within @ms: its type, or -1. */
static inline int cm_next_ms(struct rdma_event_channel *ch, int ms,
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

static inline int cm_next(struct rdma_event_channel *ch,
			  struct rdma_cm_id **id, int *status)
{
	return cm_next_ms(ch, CM_EVENT_MS, id, status);
}

/* Resolve @ip:@port on @id; 0 with the route, else the failing event. */
static inline int cm_resolve(struct rdma_event_channel *ch,
			     struct rdma_cm_id *id, const char *ip, int port)
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

static inline struct ibv_qp_init_attr cm_qp_attr(void)
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
static inline void cm_res_strip(char *line)
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
static inline int cm_res_back(const char *base)
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

#endif
