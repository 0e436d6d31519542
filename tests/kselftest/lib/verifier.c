// SPDX-License-Identifier: GPL-2.0
/* A bystander process that moves verified bytes while a test attacks the device. */
#include "suite.h"

int su_verifier_round(struct su_pair *p, unsigned int round)
{
	unsigned int seed = 1000 + round * 3;
	struct ibv_sge s, r;
	struct ibv_wc wc;

	su_fill(p->env.buf, 8192, seed);
	memset(p->env.buf + 65536, 0, 8192);
	s = su_sge(p, 0, 8192);
	r = su_sge(p, 65536, 8192);
	if (su_post_recv(p->qp[1], seed, &r, 1) ||
	    su_post_send(p->qp[0], IBV_WR_SEND, seed, &s, 1,
			 IBV_SEND_SIGNALED, 0, 0))
		return 1;
	if (su_poll(p->cq[1], &wc, SU_TIMEOUT_MS) != 1 ||
	    wc.status != IBV_WC_SUCCESS || wc.wr_id != seed ||
	    wc.byte_len != 8192 || su_check(p->env.buf + 65536, 8192, seed) != -1)
		return 2;
	if (su_poll(p->cq[0], &wc, SU_TIMEOUT_MS) != 1 ||
	    wc.status != IBV_WC_SUCCESS || wc.wr_id != seed)
		return 3;

	su_fill(p->env.buf + 131072, 65536, seed + 1);
	s = su_sge(p, 131072, 65536);
	if (su_post_send(p->qp[0], IBV_WR_RDMA_WRITE, seed + 1, &s, 1,
			 IBV_SEND_SIGNALED, su_addr(p, 262144), p->env.mr->rkey))
		return 4;
	if (su_poll(p->cq[0], &wc, SU_TIMEOUT_MS) != 1 ||
	    wc.status != IBV_WC_SUCCESS || wc.wr_id != seed + 1 ||
	    su_check(p->env.buf + 262144, 65536, seed + 1) != -1)
		return 5;

	su_fill(p->env.buf + 524288, 16384, seed + 2);
	memset(p->env.buf + 589824, 0, 16384);
	s = su_sge(p, 589824, 16384);
	if (su_post_send(p->qp[1], IBV_WR_RDMA_READ, seed + 2, &s, 1,
			 IBV_SEND_SIGNALED, su_addr(p, 524288), p->env.mr->rkey))
		return 6;
	if (su_poll(p->cq[1], &wc, SU_TIMEOUT_MS) != 1 ||
	    wc.status != IBV_WC_SUCCESS || wc.wr_id != seed + 2 ||
	    su_check(p->env.buf + 589824, 16384, seed + 2) != -1)
		return 7;
	return 0;
}

/* The device status word of @ctx's doorbell page, or ~0 if unreadable. */
static uint32_t su_db_status(struct ibv_context *ctx)
{
	struct vrnic_layout l;
	volatile uint32_t *db;
	uint32_t st;

	if (su_query_layout(ctx->cmd_fd, &l))
		return ~0u;
	db = mmap(NULL, 4096, PROT_READ, MAP_SHARED, ctx->cmd_fd,
		  l.db_mmap_key);
	if (db == MAP_FAILED)
		return ~0u;
	st = db[0];
	munmap((void *)db, 4096);
	return st;
}

static void su_verifier_main(struct su_verifier_state *s,
			     pid_t parent)
{
	unsigned int round = 0;
	struct su_pair p;
	struct ibv_wc wc;
	int err;

	err = su_pair_open(&p, NULL);
	if (!err) {
		su_fill(p.env.buf + SU_V_SENTINEL, SU_V_SENTINEL_LEN, SU_V_SEED);
		err = su_verifier_round(&p, round++);
	}
	if (err) {
		fprintf(stderr, "# verifier: setup failed at %d\n", err);
		s->ready = -1;
		_exit(2);
	}
	s->t.buf = su_addr(&p, 0);
	s->t.sentinel = su_addr(&p, SU_V_SENTINEL);
	s->t.lkey = p.env.mr->lkey;
	s->t.rkey = p.env.mr->rkey;
	s->t.qpn[0] = p.qp[0]->qp_num;
	s->t.qpn[1] = p.qp[1]->qp_num;
	s->t.pd_handle = p.env.pd->handle;
	s->t.mr_handle = p.env.mr->handle;
	__atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE) && !s->failed) {
		/* An orphan stops: the test that started it is gone. */
		if (getppid() != parent)
			_exit(3);
		err = su_verifier_round(&p, round++);
		if (err)
			s->failed = err;
		else
			__atomic_add_fetch(&s->rounds, 1, __ATOMIC_RELEASE);
	}
	s->sentinel_bad = su_check(p.env.buf + SU_V_SENTINEL, SU_V_SENTINEL_LEN,
				   SU_V_SEED);
	s->qp_state[0] = su_qp_state(p.qp[0]);
	s->qp_state[1] = su_qp_state(p.qp[1]);
	s->db_status = su_db_status(p.env.ctx);
	s->stray = ibv_poll_cq(p.cq[0], 1, &wc) + ibv_poll_cq(p.cq[1], 1, &wc);
	s->last_round = s->failed ? -1 : su_verifier_round(&p, round++);
	su_pair_close(&p);
	_exit(s->failed || s->last_round || s->sentinel_bad != -1 || s->stray ||
	      s->qp_state[0] != IBV_QPS_RTS || s->qp_state[1] != IBV_QPS_RTS ||
	      (s->db_status & VRNIC_DB_STATUS_FATAL));
}

int su_verifier_start(struct su_verifier *v)
{
	pid_t parent = getpid();
	long end;

	v->s = mmap(NULL, sizeof(*v->s), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (v->s == MAP_FAILED)
		return -1;
	memset(v->s, 0, sizeof(*v->s));
	v->pid = fork();
	if (v->pid < 0) {
		munmap(v->s, sizeof(*v->s));
		return -1;
	}
	if (!v->pid)
		su_verifier_main(v->s, parent);
	end = su_now_ms() + 3 * SU_TIMEOUT_MS;
	while (!__atomic_load_n(&v->s->ready, __ATOMIC_ACQUIRE) &&
	       su_now_ms() < end)
		su_sleep_ms(10);
	if (v->s->ready != 1) {
		su_wait_child(v->pid, 0);
		munmap(v->s, sizeof(*v->s));
		return -1;
	}
	return 0;
}

static int su_verifier_rounds(struct su_verifier *v)
{
	return __atomic_load_n(&v->s->rounds, __ATOMIC_ACQUIRE);
}

int su_verifier_progress(struct su_verifier *v, int n, int ms)
{
	int want = su_verifier_rounds(v) + n;
	long end = su_now_ms() + ms;

	while (su_now_ms() < end) {
		if (v->s->failed)
			return -1;
		if (su_verifier_rounds(v) >= want)
			return 0;
		su_sleep_ms(5);
	}
	return -1;
}

int su_verifier_stop(struct su_verifier *v, int min_more,
		     struct su_verifier_state *out)
{
	int progress = su_verifier_progress(v, min_more, 6 * SU_TIMEOUT_MS);
	int st;

	__atomic_store_n(&v->s->stop, 1, __ATOMIC_RELEASE);
	st = su_wait_child(v->pid, 6 * SU_TIMEOUT_MS);
	*out = *v->s;
	munmap(v->s, sizeof(*v->s));
	v->s = NULL;
	if (progress || st == -1 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr,
			"# verifier: status %#x after %d rounds: failed step %d, sentinel byte %ld, QP states %d/%d, db status %#x, %d stray CQEs, last round %d\n",
			st, out->rounds, out->failed, out->sentinel_bad,
			out->qp_state[0], out->qp_state[1], out->db_status,
			out->stray, out->last_round);
		return -1;
	}
	return 0;
}
