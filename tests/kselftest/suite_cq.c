// SPDX-License-Identifier: GPL-2.0
/*
 * Completion queues and their events:
 * - solicited-only arming: an RDMA WRITE_WITH_IMM without SOLICITED does
 *   not wake the responder's CQ, one with SOLICITED does; a send CQE never
 *   counts as solicited; an error (flush) completion wakes a CQ armed for
 *   solicited events; a NEXT request after a SOLICITED one is honoured and
 *   both are used up by one event;
 * - the completion channel fd in epoll next to a socket: each wakes epoll
 *   for itself, two CQs on one channel report themselves, a non-blocking
 *   channel says EAGAIN when empty;
 * - CQ overflow: more completions than the CQ holds raise IBV_EVENT_CQ_ERR
 *   for that CQ and IBV_EVENT_QP_FATAL for the QP, the completions that
 *   fitted are intact, and other CQs of the context keep working; a QP
 *   that later needs to complete on the broken CQ goes to ERR with
 *   IBV_EVENT_QP_FATAL;
 * - a completion EQ that overflows loses the events the device could not
 *   post; the driver then calls the completion handler of its CQs so that
 *   every consumer polls again (as after IB_CQ_REPORT_MISSED_EVENTS) and
 *   no process blocks in ibv_get_cq_event() forever. The module is
 *   reloaded with 16-entry completion EQs (ceq_log_depth=4) and the
 *   driver's consumption of them is paused through debugfs (ceq_pause):
 *   the EQ then fills and overflows deterministically. A victim process
 *   whose completion comes after the EQ is full must still get its event
 *   once consumption resumes.
 */
#include <arpa/inet.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "suite.h"
#include "kselftest_harness.h"

/* Wait for one event on @ch; the CQ it names, or NULL after @ms. */
static struct ibv_cq *cq_event(struct ibv_comp_channel *ch, int ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *ctx;

	if (poll(&pfd, 1, ms) != 1)
		return NULL;
	if (ibv_get_cq_event(ch, &cq, &ctx))
		return NULL;
	ibv_ack_cq_events(cq, 1);
	return cq;
}

static int write_imm(struct su_pair *p, uint64_t wr_id, size_t src,
		     size_t dst, uint32_t len, uint32_t imm, int solicited)
{
	struct ibv_sge s = su_sge(p, src, len);

	return su_post_send_imm(p->qp[0], IBV_WR_RDMA_WRITE_WITH_IMM, wr_id,
				&s, 1, IBV_SEND_SIGNALED |
				(solicited ? IBV_SEND_SOLICITED : 0),
				su_addr(p, dst), p->env.mr->rkey, imm);
}

FIXTURE(chan) {
	struct su_pair p;
};

FIXTURE_SETUP(chan)
{
	struct su_opts o = { .channel = 1, .cqe = 64 };
	int err = su_pair_open(&self->p, &o);

	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	fcntl(self->p.ch->fd, F_SETFL,
	      fcntl(self->p.ch->fd, F_GETFL) | O_NONBLOCK);
}

FIXTURE_TEARDOWN(chan)
{
	su_pair_close(&self->p);
}

TEST_F(chan, solicited_only_write_with_imm)
{
	struct su_pair *p = &self->p;
	struct ibv_sge r = su_sge(p, 900000, 16);
	struct ibv_wc wc;

	ASSERT_EQ(0, su_post_recv(p->qp[1], 1, &r, 1));
	ASSERT_EQ(0, su_post_recv(p->qp[1], 2, &r, 1));
	ASSERT_EQ(0, ibv_req_notify_cq(p->cq[1], 1));

	/* Not solicited: the data lands, the CQE comes, no event. */
	su_fill(p->env.buf, 8192, 1);
	ASSERT_EQ(0, write_imm(p, 10, 0, 262144, 8192, 0x1111, 0));
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, wc.opcode);
	EXPECT_EQ(1, wc.wr_id);
	EXPECT_EQ(htonl(0x1111), wc.imm_data);
	EXPECT_EQ(8192, wc.byte_len);
	EXPECT_EQ(-1, su_check(p->env.buf + 262144, 8192, 1));
	EXPECT_EQ(NULL, cq_event(p->ch, 300));

	/* Solicited: it wakes us. */
	su_fill(p->env.buf + 8192, 4096, 2);
	ASSERT_EQ(0, write_imm(p, 11, 8192, 300000, 4096, 0x2222, 1));
	EXPECT_EQ(p->cq[1], cq_event(p->ch, SU_TIMEOUT_MS));
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(2, wc.wr_id);
	EXPECT_EQ(htonl(0x2222), wc.imm_data);
	EXPECT_EQ(-1, su_check(p->env.buf + 300000, 4096, 2));
	/* Nothing else: the requester's CQ was never armed. */
	EXPECT_EQ(NULL, cq_event(p->ch, 200));
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(10, wc.wr_id);
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(11, wc.wr_id);
}

TEST_F(chan, send_cqe_is_never_solicited)
{
	struct su_pair *p = &self->p;
	struct ibv_sge s = su_sge(p, 0, 64), r = su_sge(p, 500000, 64);
	struct ibv_wc wc;

	/* The requester's CQ armed for solicited events only. */
	ASSERT_EQ(0, ibv_req_notify_cq(p->cq[0], 1));
	su_fill(p->env.buf, 64, 3);
	ASSERT_EQ(0, su_post_recv(p->qp[1], 1, &r, 1));
	ASSERT_EQ(0, su_post_send(p->qp[0], IBV_WR_SEND, 2, &s, 1,
				  IBV_SEND_SIGNALED | IBV_SEND_SOLICITED, 0, 0));
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(-1, su_check(p->env.buf + 500000, 64, 3));
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SEND, wc.opcode);
	EXPECT_EQ(NULL, cq_event(p->ch, 300));
}

TEST_F(chan, error_completion_wakes_solicited_arm)
{
	struct su_pair *p = &self->p;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_sge r = su_sge(p, 500000, 64);
	struct ibv_wc wc;

	ASSERT_EQ(0, su_post_recv(p->qp[1], 31, &r, 1));
	ASSERT_EQ(0, su_post_recv(p->qp[1], 32, &r, 1));
	ASSERT_EQ(0, ibv_req_notify_cq(p->cq[1], 1));
	EXPECT_EQ(NULL, cq_event(p->ch, 200));
	ASSERT_EQ(0, ibv_modify_qp(p->qp[1], &a, IBV_QP_STATE));
	EXPECT_EQ(p->cq[1], cq_event(p->ch, SU_TIMEOUT_MS));
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(31, wc.wr_id);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(32, wc.wr_id);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
}

TEST_F(chan, next_after_solicited_one_event_for_both)
{
	struct su_pair *p = &self->p;
	struct ibv_sge r = su_sge(p, 600000, 64);
	struct ibv_wc wc;
	int i;

	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, su_post_recv(p->qp[1], 40 + i, &r, 1));
	ASSERT_EQ(0, ibv_req_notify_cq(p->cq[1], 1));
	ASSERT_EQ(0, ibv_req_notify_cq(p->cq[1], 0));
	/* Not solicited, but NEXT was requested too. */
	su_fill(p->env.buf, 4096, 4);
	ASSERT_EQ(0, write_imm(p, 1, 0, 131072, 4096, 1, 0));
	EXPECT_EQ(p->cq[1], cq_event(p->ch, SU_TIMEOUT_MS));
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(40, wc.wr_id);
	EXPECT_EQ(-1, su_check(p->env.buf + 131072, 4096, 4));
	/* That event used up both requests: a solicited one now is silent. */
	ASSERT_EQ(0, write_imm(p, 2, 0, 131072, 4096, 2, 1));
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(41, wc.wr_id);
	EXPECT_EQ(NULL, cq_event(p->ch, 300));
	/* Re-armed, it wakes again. */
	ASSERT_EQ(0, ibv_req_notify_cq(p->cq[1], 1));
	ASSERT_EQ(0, write_imm(p, 3, 0, 131072, 4096, 3, 1));
	EXPECT_EQ(p->cq[1], cq_event(p->ch, SU_TIMEOUT_MS));
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(42, wc.wr_id);
	while (su_poll(p->cq[0], &wc, 100))
		;
}

/* ------------------------------------------------------------------ */
/* epoll                                                               */
/* ------------------------------------------------------------------ */

/* Collect the fds epoll reports within @ms; a bitmask: 1 chan, 2 sock. */
static int epoll_ready(int ep, int chfd, int sockfd, int ms)
{
	struct epoll_event ev[4];
	int n, i, mask = 0;

	n = epoll_wait(ep, ev, 4, ms);
	for (i = 0; i < n; i++) {
		if (ev[i].data.fd == chfd)
			mask |= 1;
		else if (ev[i].data.fd == sockfd)
			mask |= 2;
		else
			mask |= 4;
	}
	return mask;
}

TEST_F(chan, epoll_with_a_socket)
{
	struct su_pair *p = &self->p;
	struct epoll_event ev = { .events = EPOLLIN };
	struct ibv_sge s = su_sge(p, 0, 2048), r = su_sge(p, 700000, 2048);
	struct ibv_cq *cq;
	struct ibv_wc wc;
	int sv[2], ep, mask, seen;
	long end;
	void *ctx;
	char c;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv));
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	ev.data.fd = p->ch->fd;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, p->ch->fd, &ev));
	ev.data.fd = sv[0];
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev));

	/* Quiet: nothing, and the non-blocking channel says EAGAIN. */
	EXPECT_EQ(0, epoll_ready(ep, p->ch->fd, sv[0], 200));
	EXPECT_EQ(-1, ibv_get_cq_event(p->ch, &cq, &ctx));
	EXPECT_EQ(EAGAIN, errno);

	/* The socket alone. */
	ASSERT_EQ(1, write(sv[1], "x", 1));
	EXPECT_EQ(2, epoll_ready(ep, p->ch->fd, sv[0], SU_TIMEOUT_MS));
	ASSERT_EQ(1, read(sv[0], &c, 1));

	/* The channel alone: an armed CQ gets a receive completion. */
	ASSERT_EQ(0, ibv_req_notify_cq(p->cq[1], 0));
	su_fill(p->env.buf, 2048, 5);
	ASSERT_EQ(0, su_post_recv(p->qp[1], 1, &r, 1));
	ASSERT_EQ(0, su_post_send(p->qp[0], IBV_WR_SEND, 2, &s, 1, 0, 0, 0));
	EXPECT_EQ(1, epoll_ready(ep, p->ch->fd, sv[0], SU_TIMEOUT_MS));
	ASSERT_EQ(0, ibv_get_cq_event(p->ch, &cq, &ctx));
	EXPECT_EQ(p->cq[1], cq);
	ibv_ack_cq_events(cq, 1);
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(2048, wc.byte_len);
	EXPECT_EQ(-1, su_check(p->env.buf + 700000, 2048, 5));
	/* Level-triggered and drained: quiet again. */
	EXPECT_EQ(0, epoll_ready(ep, p->ch->fd, sv[0], 200));

	/* Both CQs armed, both complete, and the socket: all three show. */
	ASSERT_EQ(0, ibv_req_notify_cq(p->cq[0], 0));
	ASSERT_EQ(0, ibv_req_notify_cq(p->cq[1], 0));
	su_fill(p->env.buf, 2048, 6);
	ASSERT_EQ(0, su_post_recv(p->qp[1], 3, &r, 1));
	ASSERT_EQ(0, su_post_send(p->qp[0], IBV_WR_SEND, 4, &s, 1,
				  IBV_SEND_SIGNALED, 0, 0));
	ASSERT_EQ(1, write(sv[1], "y", 1));
	seen = 0;
	mask = 0;
	for (end = su_now_ms() + SU_TIMEOUT_MS; seen != 3 && su_now_ms() < end;) {
		int m = epoll_ready(ep, p->ch->fd, sv[0], 100);

		mask |= m;
		if (m & 2) {
			ASSERT_EQ(1, read(sv[0], &c, 1));
		}
		if (m & 1) {
			while (!ibv_get_cq_event(p->ch, &cq, &ctx)) {
				seen |= cq == p->cq[0] ? 1 : cq == p->cq[1] ? 2 : 4;
				ibv_ack_cq_events(cq, 1);
			}
		}
	}
	EXPECT_EQ(3, mask);
	EXPECT_EQ(3, seen);
	EXPECT_EQ('y', c);
	ASSERT_EQ(1, su_poll(p->cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(3, wc.wr_id);
	EXPECT_EQ(-1, su_check(p->env.buf + 700000, 2048, 6));
	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(4, wc.wr_id);
	close(ep);
	close(sv[0]);
	close(sv[1]);
}

/* ------------------------------------------------------------------ */
/* Overflow                                                            */
/* ------------------------------------------------------------------ */

TEST(cq_overflow_raises_cq_err)
{
	struct su_opts o = { .cqe = 2 };
	struct ibv_async_event ev;
	struct ibv_qp *x[2];
	struct su_pair p;
	struct ibv_sge s;
	struct ibv_wc wc;
	int depth, i, err, cq_err = 0, qp_fatal = 0, other = 0;
	long end;

	err = su_pair_open(&p, &o);
	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	depth = p.cq[0]->cqe;
	ASSERT_LE(2, depth);
	ASSERT_GE(16, depth);

	/* depth + 2 signaled WRITEs, never polled. */
	for (i = 0; i < depth + 2; i++) {
		su_fill(p.env.buf + i * 4096, 4096, 50 + i);
		s = su_sge(&p, i * 4096, 4096);
		ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_RDMA_WRITE, 100 + i,
					  &s, 1, IBV_SEND_SIGNALED,
					  su_addr(&p, 524288 + i * 4096),
					  p.env.mr->rkey));
	}

	fcntl(p.env.ctx->async_fd, F_SETFL,
	      fcntl(p.env.ctx->async_fd, F_GETFL) | O_NONBLOCK);
	for (end = su_now_ms() + SU_TIMEOUT_MS;
	     !(cq_err && qp_fatal) && su_now_ms() < end;) {
		struct pollfd pfd = { .fd = p.env.ctx->async_fd, .events = POLLIN };

		if (poll(&pfd, 1, 100) <= 0)
			continue;
		while (!ibv_get_async_event(p.env.ctx, &ev)) {
			if (ev.event_type == IBV_EVENT_CQ_ERR &&
			    ev.element.cq == p.cq[0])
				cq_err++;
			else if (ev.event_type == IBV_EVENT_QP_FATAL &&
				 ev.element.qp == p.qp[0])
				qp_fatal++;
			else
				other++;
			ibv_ack_async_event(&ev);
		}
	}
	EXPECT_EQ(1, cq_err);
	EXPECT_EQ(1, qp_fatal);
	EXPECT_EQ(0, other);
	EXPECT_EQ(IBV_QPS_ERR, su_qp_state(p.qp[0]));

	/* What fitted is intact, in order, and its bytes arrived. */
	for (i = 0; i < depth; i++) {
		ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
		EXPECT_EQ(100 + i, wc.wr_id);
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(-1, su_check(p.env.buf + 524288 + i * 4096, 4096, 50 + i));
	}
	/* The CQ in error takes no more completions. */
	EXPECT_EQ(0, su_poll(p.cq[0], &wc, 300));

	/* The context's other CQ still works, for new QPs. */
	x[0] = su_create_qp(&p, p.env.pd, p.cq[1], p.cq[1]);
	x[1] = su_create_qp(&p, p.env.pd, p.cq[1], p.cq[1]);
	ASSERT_NE(NULL, x[0]);
	ASSERT_NE(NULL, x[1]);
	ASSERT_EQ(0, su_connect(&p, x[0], x[1]));
	su_fill(p.env.buf, 65536, 99);
	s = su_sge(&p, 0, 65536);
	ASSERT_EQ(0, su_post_send(x[0], IBV_WR_RDMA_WRITE, 7, &s, 1,
				  IBV_SEND_SIGNALED, su_addr(&p, 655360),
				  p.env.mr->rkey));
	ASSERT_EQ(1, su_poll(p.cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(7, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(-1, su_check(p.env.buf + 655360, 65536, 99));
	EXPECT_EQ(0, ibv_destroy_qp(x[0]));
	EXPECT_EQ(0, ibv_destroy_qp(x[1]));
	su_pair_close(&p);
}

TEST(errored_cq_takes_down_later_qps)
{
	struct su_opts o = { .cqe = 2 };
	struct ibv_qp *y[2];
	struct su_pair p;
	struct ibv_sge s;
	struct ibv_wc wc;
	int depth, i, err;

	err = su_pair_open(&p, &o);
	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	depth = p.cq[0]->cqe;
	/* y[0] sends on the CQ that is about to break; y[1] on the other. */
	y[0] = su_create_qp(&p, p.env.pd, p.cq[0], p.cq[1]);
	y[1] = su_create_qp(&p, p.env.pd, p.cq[1], p.cq[1]);
	ASSERT_NE(NULL, y[0]);
	ASSERT_NE(NULL, y[1]);
	ASSERT_EQ(0, su_connect(&p, y[0], y[1]));

	/* Overflow cq[0] through qp[0]. */
	s = su_sge(&p, 0, 64);
	for (i = 0; i < depth + 1; i++) {
		ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_RDMA_WRITE, i, &s, 1,
					  IBV_SEND_SIGNALED, su_addr(&p, 4096),
					  p.env.mr->rkey));
	}
	ASSERT_TRUE(su_wait_async(p.env.ctx, IBV_EVENT_CQ_ERR, p.cq[0],
				  SU_TIMEOUT_MS));

	/*
	 * y[0] was fine until now; its next completion cannot be written:
	 * it moves to ERR with QP_FATAL.
	 */
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(y[0]));
	su_fill(p.env.buf + 8192, 4096, 33);
	s = su_sge(&p, 8192, 4096);
	ASSERT_EQ(0, su_post_send(y[0], IBV_WR_RDMA_WRITE, 100, &s, 1,
				  IBV_SEND_SIGNALED, su_addr(&p, 131072),
				  p.env.mr->rkey));
	EXPECT_TRUE(su_wait_async(p.env.ctx, IBV_EVENT_QP_FATAL, y[0],
				  SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_QPS_ERR, su_qp_state(y[0]));
	/* The broken CQ shows only what fitted before it broke. */
	for (i = 0; i < depth; i++) {
		ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
		EXPECT_EQ(i, wc.wr_id);
	}
	EXPECT_EQ(0, su_poll(p.cq[0], &wc, 200));
	/* y[1], on the healthy CQ, is untouched. */
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(y[1]));
	EXPECT_EQ(0, ibv_destroy_qp(y[0]));
	EXPECT_EQ(0, ibv_destroy_qp(y[1]));
	su_pair_close(&p);
}

/* ------------------------------------------------------------------ */
/* A completion EQ that overflows                                      */
/* ------------------------------------------------------------------ */

#define PAIRS		12	/* 24 armed CQs: 8 more than the EQ holds */
#define EVENT_MS	10000

static char dbg[PATH_MAX];

static int ceq_pause(int on)
{
	char path[PATH_MAX + 16];
	int fd, ok;

	snprintf(path, sizeof(path), "%s/ceq_pause", dbg);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ok = write(fd, on ? "1" : "0", 1) == 1;
	close(fd);
	return ok ? 0 : -1;
}

/* The device's eq_overflow count, or -1. */
static long eq_overflow(void)
{
	char path[PATH_MAX + 16], line[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/state", dbg);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		sscanf(line, "eq_overflow %li", &v);
	fclose(f);
	return v;
}

static long wait_overflow(long above, int ms)
{
	long end = su_now_ms() + ms, v;

	do {
		v = eq_overflow();
		if (v > above)
			return v;
		su_sleep_ms(20);
	} while (su_now_ms() < end);
	return v;
}

/* One SEND from qp[0] to qp[1]: a CQE on each of the pair's CQs. */
static int post_send_pair(struct su_pair *p, int id)
{
	struct ibv_sge r = su_sge(p, 4096, 64), s = su_sge(p, 0, 64);

	return su_post_recv(p->qp[1], id, &r, 1) ?:
	       su_post_send(p->qp[0], IBV_WR_SEND, id, &s, 1,
			    IBV_SEND_SIGNALED, 0, 0);
}

/* Completion events on @ch within @ms: how many (each acknowledged). */
static int get_events(struct ibv_comp_channel *ch, int want, int ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	long end = su_now_ms() + ms;
	struct ibv_cq *cq;
	void *ctx;
	int got = 0;

	fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
	while (got < want && su_now_ms() < end) {
		if (poll(&pfd, 1, 50) <= 0)
			continue;
		while (got < want && !ibv_get_cq_event(ch, &cq, &ctx)) {
			ibv_ack_cq_events(cq, 1);
			got++;
		}
	}
	return got;
}

/*
 * The victim: arms its CQs, says ready, posts one SEND when told, then
 * waits for both completion events. Exit status: 0 if both came.
 */
static void victim(int rfd, int wfd)
{
	struct su_opts o = { .channel = 1 };
	struct su_pair p;
	char c = 'r';
	int got;

	CHILD_CHECK(!su_pair_open(&p, &o));
	CHILD_CHECK(!ibv_req_notify_cq(p.cq[0], 0));
	CHILD_CHECK(!ibv_req_notify_cq(p.cq[1], 0));
	CHILD_CHECK(write(wfd, &c, 1) == 1);
	CHILD_CHECK(read(rfd, &c, 1) == 1);
	CHILD_CHECK(!post_send_pair(&p, 1));
	CHILD_CHECK(write(wfd, &c, 1) == 1);
	got = get_events(p.ch, 2, EVENT_MS);
	fprintf(stderr, "# victim: %d of 2 completion events\n", got);
	_exit(got == 2 ? 0 : 2);
}

FIXTURE(overflow) {
	int loaded;
};

FIXTURE_SETUP(overflow)
{
	ASSERT_EQ(0, su_reload("ceq_log_depth=4"));
	self->loaded = 1;
	ASSERT_EQ(0, su_debugfs_dir(dbg, sizeof(dbg)));
}

FIXTURE_TEARDOWN(overflow)
{
	if (self->loaded) {
		ceq_pause(0);
		EXPECT_EQ(0, su_reload(""));
	}
}

TEST_F_TIMEOUT(overflow, every_cq_gets_its_event, 300)
{
	struct su_opts o = { .channel = 1 };
	struct su_pair p[PAIRS];
	long before, after, end;
	int i, to, from, st, got = 0, missing = 0;
	pid_t pid;
	char c;

	for (i = 0; i < PAIRS; i++) {
		ASSERT_EQ(0, su_pair_open(&p[i], &o));
		ASSERT_EQ(0, ibv_req_notify_cq(p[i].cq[0], 0));
		ASSERT_EQ(0, ibv_req_notify_cq(p[i].cq[1], 0));
	}
	pid = su_spawn(victim, &to, &from);
	ASSERT_LT(0, pid);
	ASSERT_EQ(1, read(from, &c, 1));

	before = eq_overflow();
	ASSERT_LE(0, before);
	ASSERT_EQ(0, ceq_pause(1));
	for (i = 0; i < PAIRS; i++)
		ASSERT_EQ(0, post_send_pair(&p[i], i));
	after = wait_overflow(before, 5000);
	ASSERT_LT(before, after) TH_LOG("the completion EQ did not overflow");

	/* The EQ is full: the victim's two events are dropped. */
	ASSERT_EQ(1, write(to, &c, 1));
	ASSERT_EQ(1, read(from, &c, 1));
	after = wait_overflow(after + 1, 5000);
	ASSERT_LE(before + 2 * PAIRS - 16 + 2, after)
		TH_LOG("eq_overflow %ld -> %ld", before, after);
	ASSERT_EQ(0, ceq_pause(0));

	/*
	 * The events the EQ dropped come from the driver's watchdog, once a
	 * second and later under load: every pair shares one deadline, so
	 * that none is given up on before the watchdog had its turn.
	 */
	end = su_now_ms() + EVENT_MS;
	for (i = 0; i < PAIRS; i++) {
		long left = end - su_now_ms();
		int n = get_events(p[i].ch, 2, left > 100 ? (int)left : 100);

		got += n;
		missing += 2 - n;
	}
	TH_LOG("eq_overflow %ld -> %ld; %d completion events, %d missing",
	       before, after, got, missing);
	EXPECT_EQ(0, missing);
	st = su_wait_child(pid, 2 * EVENT_MS);
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st))
		TH_LOG("victim: status %#x", st);
	close(to);
	close(from);
	for (i = 0; i < PAIRS; i++)
		su_pair_close(&p[i]);
}

TEST_HARNESS_MAIN
