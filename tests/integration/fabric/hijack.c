// SPDX-License-Identifier: GPL-2.0
/*
 * The hostile guest's attempts on a connection it does not hold
 * (tests/integration/fabric/hostile builds this and runs it in guests 1
 * and 2). The attacker knows everything a leak could give it: the victim
 * guest's GID and the QPN, rkey and address of a QP and MR that serve
 * another guest.
 *
 *   hijack serve GID_INDEX PORT
 *   hijack attack GID_INDEX VICTIM_IP QPN RKEY VADDR PORT
 *
 * attack, in the hostile guest:
 * 1. its own RC QPs connected to that QPN at the victim's GID: an RDMA
 *    WRITE and READ with the rkey, and a SEND, must each end in
 *    IBV_WC_RETRY_EXC_ERR: the victim's QP answers only the peer it is
 *    connected to, so nothing reaches it;
 * 2. a connection of its own to `serve` in the victim guest (QPN and GID
 *    exchanged over TCP PORT), whose QP grants remote writes: an RDMA
 *    WRITE there with the stolen rkey must end in IBV_WC_REM_ACCESS_ERR,
 *    since the MR belongs to another process's PD.
 * serve, in the victim guest: that connection's responder, which must see
 * IBV_EVENT_QP_ACCESS_ERR on its QP within 60 s.
 * Each prints its outcomes and exits 0 only if every one is as above.
 */
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BUF 4096

struct ctx {
	struct ibv_context *dev;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	int gid_index;
	union ibv_gid gid;
};

static struct ibv_qp *rc_qp(struct ctx *c)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = c->cq, .recv_cq = c->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};
	struct ibv_qp *qp = ibv_create_qp(c->pd, &ia);

	if (qp && ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
		ibv_destroy_qp(qp);
		qp = NULL;
	}
	return qp;
}

/* RTR and RTS towards QPN at GID; a short timeout and one retry, so that
 * an unanswered request fails in milliseconds.
 */
static int rc_connect(struct ctx *c, struct ibv_qp *qp, const union ibv_gid *gid,
		      uint32_t qpn, uint32_t rq_psn, uint32_t sq_psn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = qpn, .rq_psn = rq_psn,
		.max_dest_rd_atomic = 1, .min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1, .port_num = 1,
			.grh = { .dgid = *gid, .sgid_index = c->gid_index,
				 .hop_limit = 64 },
		},
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 10;
	a.retry_cnt = 1;
	a.rnr_retry = 0;
	a.sq_psn = sq_psn;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* Posts one work request and waits (10 s at most) for its completion;
 * its status, or -1.
 */
static int post_one(struct ctx *c, struct ibv_qp *qp, enum ibv_wr_opcode op,
		    uint32_t rkey, uint64_t vaddr)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->buf, .length = 64, .lkey = c->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = vaddr, .rkey = rkey },
	}, *bad;
	struct ibv_wc wc;
	time_t end = time(NULL) + 10;
	int n;

	memset(c->buf, 0xee, 64);
	if (ibv_post_send(qp, &wr, &bad))
		return -1;
	while ((n = ibv_poll_cq(c->cq, 1, &wc)) == 0 && time(NULL) < end)
		usleep(1000);
	return n == 1 ? (int)wc.status : -1;
}

static const char *status_str(int st)
{
	return st < 0 ? "no completion" : ibv_wc_status_str(st);
}

static int expect(const char *what, int st, enum ibv_wc_status want)
{
	printf("hijack: %s: %s\n", what, status_str(st));
	if (st == (int)want)
		return 0;
	printf("hijack: %s: expected %s\n", what, ibv_wc_status_str(want));
	return 1;
}

/* The victim's GID from its IPv4 address, as RoCE v2 makes it. */
static int ipv4_gid(const char *ip, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = 0xff;
	gid->raw[11] = 0xff;
	return inet_pton(AF_INET, ip, &gid->raw[12]) == 1 ? 0 : -1;
}

/* A TCP connection to IP:PORT (retried for 10 s), or with IP NULL the
 * first one accepted on PORT; its descriptor, or -1.
 */
static int tcp_meet(const char *ip, const char *port)
{
	struct addrinfo hints = {
		.ai_family = AF_INET, .ai_socktype = SOCK_STREAM,
		.ai_flags = ip ? 0 : AI_PASSIVE,
	};
	struct addrinfo *res;
	int fd = -1, lfd, one = 1, tries;

	if (getaddrinfo(ip, port, &hints, &res))
		return -1;
	if (!ip) {
		lfd = socket(res->ai_family, res->ai_socktype, 0);
		if (lfd >= 0 &&
		    !setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) &&
		    !bind(lfd, res->ai_addr, res->ai_addrlen) && !listen(lfd, 1))
			fd = accept(lfd, NULL, NULL);
		if (lfd >= 0)
			close(lfd);
	}
	for (tries = 0; ip && fd < 0 && tries < 100; tries++) {
		fd = socket(res->ai_family, res->ai_socktype, 0);
		if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen)) {
			close(fd);
			fd = -1;
			usleep(100000);
		}
	}
	freeaddrinfo(res);
	return fd;
}

/* Sends this side's QPN and GID, reads the other's: "QPN GID" with the
 * GID's 16 bytes in hex.
 */
static int exchange(int fd, const struct ctx *c, uint32_t qpn,
		    uint32_t *peer_qpn, union ibv_gid *peer_gid)
{
	char msg[48], in[48];
	unsigned int i, b;

	snprintf(msg, sizeof(msg), "%06x ", qpn);
	for (i = 0; i < 16; i++)
		snprintf(msg + 7 + 2 * i, 3, "%02x", c->gid.raw[i]);
	memset(in, 0, sizeof(in));
	if (write(fd, msg, sizeof(msg)) != sizeof(msg) ||
	    recv(fd, in, sizeof(in), MSG_WAITALL) != sizeof(in) ||
	    sscanf(in, "%x ", peer_qpn) != 1)
		return -1;
	for (i = 0; i < 16; i++) {
		if (sscanf(in + 7 + 2 * i, "%2x", &b) != 1)
			return -1;
		peer_gid->raw[i] = b;
	}
	return 0;
}

/* An RC QP connected to the other side of TCP connection fd. */
static struct ibv_qp *connected_qp(struct ctx *c, int fd)
{
	struct ibv_qp *qp = rc_qp(c);
	union ibv_gid gid;
	uint32_t qpn;

	if (qp && (exchange(fd, c, qp->qp_num, &qpn, &gid) ||
		   rc_connect(c, qp, &gid, qpn, 0, 0))) {
		ibv_destroy_qp(qp);
		qp = NULL;
	}
	return qp;
}

/* The victim's side of the connection the attacker holds. */
static int serve(struct ctx *c, const char *port)
{
	struct ibv_async_event ev;
	struct ibv_qp *qp;
	int fd = tcp_meet(NULL, port), got = 0;

	qp = fd < 0 ? NULL : connected_qp(c, fd);
	if (!qp) {
		printf("hijack: no connection from the attacker on port %s\n", port);
		return 1;
	}
	if (write(fd, "up", 3) != 3) {
		printf("hijack: the attacker left\n");
		return 1;
	}
	/* Its one event: an access error, or none before the timeout. */
	alarm(60);
	if (!ibv_get_async_event(c->dev, &ev)) {
		got = ev.event_type == IBV_EVENT_QP_ACCESS_ERR && ev.element.qp == qp;
		printf("hijack: the attacker's connection: %s\n",
		       ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
	}
	close(fd);
	ibv_destroy_qp(qp);
	return !got;
}

static int attack(struct ctx *c, char **argv)
{
	static const struct {
		const char *what;
		enum ibv_wr_opcode op;
	} steps[] = {
		{ "WRITE on a QP of its own to the victim's QPN", IBV_WR_RDMA_WRITE },
		{ "READ on a QP of its own to the victim's QPN", IBV_WR_RDMA_READ },
		{ "SEND on a QP of its own to the victim's QPN", IBV_WR_SEND },
	};
	uint32_t qpn = strtoul(argv[1], NULL, 0);
	uint32_t rkey = strtoul(argv[2], NULL, 0);
	uint64_t vaddr = strtoull(argv[3], NULL, 0);
	union ibv_gid victim;
	struct ibv_qp *qp;
	unsigned int i;
	char up[3];
	int bad = 0, st = -1, fd;

	if (ipv4_gid(argv[0], &victim))
		return 2;
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		qp = rc_qp(c);
		st = -1;
		if (qp && !rc_connect(c, qp, &victim, qpn, 0, 0))
			st = post_one(c, qp, steps[i].op, rkey, vaddr);
		bad |= expect(steps[i].what, st, IBV_WC_RETRY_EXC_ERR);
		if (qp)
			ibv_destroy_qp(qp);
	}
	fd = tcp_meet(argv[0], argv[4]);
	qp = fd < 0 ? NULL : connected_qp(c, fd);
	st = -1;
	/* Once the victim's side is connected too. */
	if (qp && recv(fd, up, sizeof(up), MSG_WAITALL) == sizeof(up))
		st = post_one(c, qp, IBV_WR_RDMA_WRITE, rkey, vaddr);
	bad |= expect("WRITE with the stolen rkey on a connection of its own",
		      st, IBV_WC_REM_ACCESS_ERR);
	if (qp)
		ibv_destroy_qp(qp);
	if (fd >= 0)
		close(fd);
	return bad;
}

/* vrnic0 opened, with a PD, a CQ and a registered buffer. */
static int ctx_open(struct ctx *c)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	int i;

	for (i = 0; list && list[i] && !c->dev; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "vrnic0"))
			c->dev = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!c->dev || ibv_query_gid(c->dev, 1, c->gid_index, &c->gid))
		return -1;
	c->pd = ibv_alloc_pd(c->dev);
	c->cq = ibv_create_cq(c->dev, 16, NULL, NULL, 0);
	c->buf = calloc(1, BUF);
	if (!c->pd || !c->cq || !c->buf)
		return -1;
	c->mr = ibv_reg_mr(c->pd, c->buf, BUF, IBV_ACCESS_LOCAL_WRITE);
	return c->mr ? 0 : -1;
}

static void ctx_close(struct ctx *c)
{
	if (c->mr)
		ibv_dereg_mr(c->mr);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->dev)
		ibv_close_device(c->dev);
	free(c->buf);
}

int main(int argc, char **argv)
{
	struct ctx c = { 0 };
	int serving = argc == 4 && !strcmp(argv[1], "serve");
	int rc = 2;

	if (!serving && (argc != 8 || strcmp(argv[1], "attack"))) {
		fprintf(stderr, "usage: hijack serve GID_INDEX PORT\n"
			"       hijack attack GID_INDEX VICTIM_IP QPN RKEY VADDR PORT\n");
		return 2;
	}
	c.gid_index = atoi(argv[2]);
	if (ctx_open(&c))
		perror("hijack: vrnic0");
	else
		rc = serving ? serve(&c, argv[3]) : attack(&c, argv + 3);
	ctx_close(&c);
	return rc;
}
