// SPDX-License-Identifier: GPL-2.0
/*
 * XRC through libibverbs and the provider, every byte checked:
 * - in one process: an XRC initiator sends into the XRC SRQ each message
 *   names through a target QP of the same domain; the receive completes on
 *   the SRQ's CQ with the target's QP number and the sent bytes; a message
 *   naming no XRC SRQ fails with IBV_WC_REM_INV_REQ_ERR, one naming an SRQ
 *   of another domain with IBV_WC_REM_ACCESS_ERR, and the target goes to
 *   error;
 * - across three processes sharing one domain through a file: C creates
 *   the target QP, B (owner of the XRC SRQ) opens it, A sends through its
 *   initiator; after C has closed the target and exited, B's handle keeps
 *   it alive and A's messages still arrive in B's SRQ.
 */
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "suite.h"
#include "kselftest_harness.h"

#define SLOT 4096
#define N 20
#define TIMEOUT_MS 10000

/* The XRC domain of the file @fd (a new private one when @fd is -1). */
static struct ibv_xrcd *open_xrcd(struct ibv_context *ctx, int fd)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd,
		.oflags = O_CREAT,
	};

	return ibv_open_xrcd(ctx, &a);
}

static struct ibv_srq *xrc_srq(struct su_pair *p, struct ibv_xrcd *x,
			       struct ibv_cq *cq)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = 64, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
			     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_XRC,
		.pd = p->env.pd,
		.xrcd = x,
		.cq = cq,
	};

	return ibv_create_srq_ex(p->env.ctx, &a);
}

static struct ibv_qp *xrc_tgt(struct su_pair *p, struct ibv_xrcd *x)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		.xrcd = x,
	};

	return ibv_create_qp_ex(p->env.ctx, &a);
}

static struct ibv_qp *xrc_ini(struct su_pair *p)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_SEND,
		.send_cq = p->cq[0],
		.cap = { .max_send_wr = 64, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = p->env.pd,
	};

	return ibv_create_qp_ex(p->env.ctx, &a);
}

/* @qp (in RESET) through INIT and RTR to RTS against @dest. */
static int xrc_up(struct su_pair *p, struct ibv_qp *qp, uint32_t dest)
{
	return su_to_init(p, qp) ?: su_to_rtr(p, qp, dest) ?:
	       su_to_rts(p, qp);
}

/* A signaled SEND of @len pattern bytes (seed @seed) to XRC SRQ @srqn. */
static int xrc_send(struct su_pair *p, struct ibv_qp *ini, uint32_t srqn,
		    unsigned int seed, uint32_t len)
{
	struct ibv_sge s = su_sge(p, 0, len);
	struct ibv_send_wr wr = {
		.wr_id = seed, .sg_list = &s, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	su_fill(p->env.buf, len, seed);
	wr.qp_type.xrc.remote_srqn = srqn;
	return ibv_post_send(ini, &wr, &bad);
}

static int post_slot(struct su_pair *p, struct ibv_srq *srq, unsigned int n)
{
	return su_post_srq_zeroed(p, srq, n, SLOT * (1 + n % 32), SLOT);
}

/* Receive @n on @cq: through @tgt_qpn, seed @seed, @len bytes; 0 if so. */
static int check_recv(struct su_pair *p, struct ibv_cq *cq, unsigned int n,
		      uint32_t tgt_qpn, unsigned int seed, uint32_t len)
{
	struct ibv_wc wc;

	if (su_poll(cq, &wc, TIMEOUT_MS) != 1)
		return 1;
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV ||
	    wc.wr_id != n || wc.qp_num != tgt_qpn || wc.byte_len != len)
		return 2;
	if (su_check(p->env.buf + SLOT * (1 + n % 32), len, seed) != -1 ||
	    su_check_byte(p->env.buf + SLOT * (1 + n % 32) + len,
			  SLOT - len, 0) != -1)
		return 3;
	return 0;
}

static int send_status(struct su_pair *p)
{
	struct ibv_wc wc;

	return su_poll(p->cq[0], &wc, TIMEOUT_MS) == 1 ? (int)wc.status : -1;
}

FIXTURE(xrc)
{
	struct su_pair p;
	struct ibv_xrcd *x, *other;
	struct ibv_cq *rcq;
	struct ibv_srq *srq, *srq_other;
	struct ibv_qp *ini, *tgt;
	uint32_t srqn, srqn_other;
};

FIXTURE_SETUP(xrc)
{
	struct su_opts o = { .no_connect = 1 };

	ASSERT_EQ(0, su_pair_open(&self->p, &o));
	self->x = open_xrcd(self->p.env.ctx, -1);
	ASSERT_NE(NULL, self->x) TH_LOG("open_xrcd: %s", strerror(errno));
	self->other = open_xrcd(self->p.env.ctx, -1);
	ASSERT_NE(NULL, self->other);
	self->rcq = ibv_create_cq(self->p.env.ctx, 64, NULL, NULL, 0);
	ASSERT_NE(NULL, self->rcq);
	self->srq = xrc_srq(&self->p, self->x, self->rcq);
	ASSERT_NE(NULL, self->srq) TH_LOG("XRC SRQ: %s", strerror(errno));
	self->srq_other = xrc_srq(&self->p, self->other, self->rcq);
	ASSERT_NE(NULL, self->srq_other);
	ASSERT_EQ(0, ibv_get_srq_num(self->srq, &self->srqn));
	ASSERT_EQ(0, ibv_get_srq_num(self->srq_other, &self->srqn_other));
	ASSERT_NE(self->srqn, self->srqn_other);
	self->tgt = xrc_tgt(&self->p, self->x);
	ASSERT_NE(NULL, self->tgt) TH_LOG("XRC_RECV QP: %s", strerror(errno));
	self->ini = xrc_ini(&self->p);
	ASSERT_NE(NULL, self->ini) TH_LOG("XRC_SEND QP: %s", strerror(errno));
	ASSERT_EQ(0, xrc_up(&self->p, self->tgt, self->ini->qp_num));
	ASSERT_EQ(0, xrc_up(&self->p, self->ini, self->tgt->qp_num));
}

FIXTURE_TEARDOWN(xrc)
{
	ibv_destroy_qp(self->ini);
	ibv_destroy_qp(self->tgt);
	ibv_destroy_srq(self->srq);
	ibv_destroy_srq(self->srq_other);
	ibv_destroy_cq(self->rcq);
	ibv_close_xrcd(self->x);
	ibv_close_xrcd(self->other);
	su_pair_close(&self->p);
}

TEST_F(xrc, send_lands_in_the_named_srq)
{
	struct su_pair *p = &self->p;
	unsigned int i;

	for (i = 0; i < N; i++)
		ASSERT_EQ(0, post_slot(p, self->srq, i));
	for (i = 0; i < N; i++) {
		uint32_t len = 1 + (i * 977) % SLOT;

		ASSERT_EQ(0, xrc_send(p, self->ini, self->srqn, 100 + i, len));
		ASSERT_EQ(IBV_WC_SUCCESS, send_status(p)) TH_LOG("send %u", i);
		ASSERT_EQ(0, check_recv(p, self->rcq, i, self->tgt->qp_num,
					100 + i, len)) TH_LOG("receive %u", i);
	}
}

TEST_F(xrc, no_such_srq_is_an_invalid_request)
{
	struct su_pair *p = &self->p;
	struct ibv_wc wc;

	ASSERT_EQ(0, post_slot(p, self->srq, 0));
	ASSERT_EQ(0, xrc_send(p, self->ini, self->srqn ^ 0x5500, 1, 64));
	EXPECT_EQ(IBV_WC_REM_INV_REQ_ERR, send_status(p));
	EXPECT_EQ(IBV_QPS_ERR, su_qp_state(self->tgt));
	EXPECT_EQ(0, su_poll(self->rcq, &wc, 200)); /* nothing received */
}

TEST_F(xrc, srq_of_another_domain_is_an_access_error)
{
	struct su_pair *p = &self->p;
	struct ibv_wc wc;

	ASSERT_EQ(0, post_slot(p, self->srq_other, 0));
	ASSERT_EQ(0, xrc_send(p, self->ini, self->srqn_other, 1, 64));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, send_status(p));
	EXPECT_EQ(IBV_QPS_ERR, su_qp_state(self->tgt));
	EXPECT_EQ(0, su_poll(self->rcq, &wc, 200));
	EXPECT_EQ(0, su_check_byte(p->env.buf + SLOT, SLOT, 0) == -1 ? 0 : 1);
}

/* ---- three processes, one domain through one file ---- */

static int put(int fd, uint32_t v)
{
	return write(fd, &v, sizeof(v)) == sizeof(v) ? 0 : -1;
}

static int get(int fd, uint32_t *v)
{
	return read(fd, v, sizeof(*v)) == sizeof(*v) ? 0 : -1;
}

/* C: creates the target, brings it up against the initiator, then exits. */
static int proc_c(const char *path, int in, int out)
{
	struct su_opts o = { .no_connect = 1 };
	struct ibv_xrcd *x;
	struct ibv_qp *t;
	struct su_pair p;
	uint32_t ini;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0 || su_pair_open(&p, &o))
		return 10;
	x = open_xrcd(p.env.ctx, fd);
	t = x ? xrc_tgt(&p, x) : NULL;
	if (!t || su_to_init(&p, t) || put(out, t->qp_num) || get(in, &ini) ||
	    su_to_rtr(&p, t, ini) || su_to_rts(&p, t) || put(out, 1))
		return 11;
	if (get(in, &ini)) /* told to go */
		return 12;
	if (ibv_destroy_qp(t) || ibv_close_xrcd(x))
		return 13;
	su_pair_close(&p);
	return 0;
}

/* B: owns the SRQ, opens the target C made, checks 2 * N receives. */
static int proc_b(const char *path, int in, int out)
{
	struct su_opts o = { .no_connect = 1 };
	struct ibv_qp_open_attr oa = {};
	struct ibv_srq *srq;
	struct ibv_xrcd *x;
	struct ibv_cq *cq;
	struct ibv_qp *t;
	struct su_pair p;
	uint32_t qpn, srqn, i;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0 || su_pair_open(&p, &o))
		return 20;
	x = open_xrcd(p.env.ctx, fd);
	cq = ibv_create_cq(p.env.ctx, 64, NULL, NULL, 0);
	srq = x && cq ? xrc_srq(&p, x, cq) : NULL;
	if (!srq || ibv_get_srq_num(srq, &srqn) || get(in, &qpn))
		return 21;
	oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
		       IBV_QP_OPEN_ATTR_TYPE;
	oa.qp_num = qpn;
	oa.qp_type = IBV_QPT_XRC_RECV;
	oa.xrcd = x;
	t = ibv_open_qp(p.env.ctx, &oa);
	if (!t || t->qp_num != qpn)
		return 22;
	for (i = 0; i < 2 * N; i++)
		if (post_slot(&p, srq, i))
			return 23;
	if (put(out, srqn))
		return 24;
	for (i = 0; i < 2 * N; i++) {
		if (i == N && put(out, 1)) /* the first half arrived */
			return 25;
		if (check_recv(&p, cq, i, qpn, 500 + i, 100 + i))
			return 26;
	}
	if (ibv_destroy_qp(t) || ibv_destroy_srq(srq) || ibv_destroy_cq(cq) ||
	    ibv_close_xrcd(x))
		return 27;
	su_pair_close(&p);
	return 0;
}

static pid_t spawn(int (*fn)(const char *, int, int), const char *path,
		   int *to, int *from)
{
	int a[2], b[2];
	pid_t pid;

	if (pipe(a) || pipe(b))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(a[1]);
		close(b[0]);
		alarm(60);
		_exit(fn(path, a[0], b[1]));
	}
	close(a[0]);
	close(b[1]);
	*to = a[1];
	*from = b[0];
	return pid;
}

static int exit_code(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

TEST(xrc_processes_share_a_domain)
{
	char path[] = "/tmp/vrnic-xrcd-XXXXXX";
	struct su_opts o = { .no_connect = 1 };
	int c_to, c_from, b_to, b_from, fd;
	uint32_t tgt, srqn, v, i;
	struct ibv_qp *ini;
	struct su_pair p;
	pid_t c, b;

	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	close(fd);
	c = spawn(proc_c, path, &c_to, &c_from);
	ASSERT_LT(0, c);
	b = spawn(proc_b, path, &b_to, &b_from);
	ASSERT_LT(0, b);
	ASSERT_EQ(0, su_pair_open(&p, &o));
	ini = xrc_ini(&p);
	ASSERT_NE(NULL, ini);
	ASSERT_EQ(0, get(c_from, &tgt)) TH_LOG("C: %d", exit_code(c));
	ASSERT_EQ(0, put(b_to, tgt));
	ASSERT_EQ(0, get(b_from, &srqn)) TH_LOG("B: %d", exit_code(b));
	ASSERT_EQ(0, xrc_up(&p, ini, tgt));
	ASSERT_EQ(0, put(c_to, ini->qp_num));
	ASSERT_EQ(0, get(c_from, &v));
	for (i = 0; i < 2 * N; i++) {
		if (i == N) {
			/* B has the first half; C closes the target and goes. */
			ASSERT_EQ(0, get(b_from, &v)) TH_LOG("B: %d", exit_code(b));
			ASSERT_EQ(0, put(c_to, 1));
			ASSERT_EQ(0, exit_code(c));
		}
		ASSERT_EQ(0, xrc_send(&p, ini, srqn, 500 + i, 100 + i));
		ASSERT_EQ(IBV_WC_SUCCESS, send_status(&p)) TH_LOG("send %u", i);
	}
	EXPECT_EQ(0, exit_code(b));
	ibv_destroy_qp(ini);
	su_pair_close(&p);
	unlink(path);
}

TEST_HARNESS_MAIN
