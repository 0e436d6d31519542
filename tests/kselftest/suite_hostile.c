// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile user space harms only itself. A forked bystander (su_verifier:
 * its own context, moving verified bytes round after round) runs through
 * every test here while this process or its children:
 * - write garbage straight into every uverbs mapping they have (their
 *   doorbell page, SQ/RQ rings, an SRQ ring, CQ rings: found in
 *   /proc/self/maps),
 *   kick the model and keep posting on the wrecked queues;
 * - hand-craft WQEs on their own raw QPs naming the bystander's lkey, rkey
 *   and addresses, connect to the bystander's QP numbers, write malformed
 *   WQEs and producer indices past the ring, UD-format SENDs on RC QPs,
 *   scribble over unassigned slots;
 * - publish stale producer and consumer indices (rewound, replayed);
 * - name MRs of another PD, addresses one byte outside a registered range
 *   and atomics on unaligned addresses;
 * - unmap a registered buffer, or exit, while the device writes into it;
 * - name a victim QP from a QP it names back, but from the wrong PSN;
 * - flood the device with more bytes than it moves in many seconds.
 * The bystander's traffic never fails, its memory is never touched, its
 * QPs stay in RTS, the device never goes fatal, and the attacker sees the
 * errors the device interface specifies for its own QPs.
 */
#include <sys/mman.h>

#include "suite.h"
#include "kselftest_harness.h"

/*
 * Wait for the attacker @pid to exit while the bystander keeps going;
 * the attacker's wait status, or -1.
 */
static int wait_attacker(struct su_verifier *v, pid_t pid, long ms)
{
	long end = su_now_ms() + ms;
	int st;

	while (su_now_ms() < end) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		if (v->s->failed)
			break;
		su_sleep_ms(10);
	}
	return su_wait_child(pid, 0);
}

/* A fresh pair in a new context works: the device still serves. */
static int fresh_pair_works(void)
{
	struct su_pair p;
	int err = su_pair_open(&p, NULL);

	if (!err)
		err = su_verifier_round(&p, 77) ? -100 : 0;
	su_pair_close(&p);
	return err;
}

/* ------------------------------------------------------------------ */
/* Garbage in the provider's mappings                                  */
/* ------------------------------------------------------------------ */

struct mapping {
	uint8_t *addr;
	size_t len;
	int was_ro;
};

/*
 * Every mapping of a uverbs device in this process, made writable: the
 * provider maps CQ rings read-only, but nothing stops a process from
 * mprotect()ing its own shared mapping. Returns how many, or -1.
 */
static int uverbs_mappings(struct mapping *m, int max)
{
	char line[512], perm[8];
	unsigned long a, b;
	int n = 0;
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && n < max) {
		if (!strstr(line, "/dev/infiniband/uverbs"))
			continue;
		if (sscanf(line, "%lx-%lx %7s", &a, &b, perm) != 3)
			continue;
		m[n].addr = (uint8_t *)a;
		m[n].len = b - a;
		m[n].was_ro = perm[1] != 'w';
		if (m[n].was_ro &&
		    mprotect(m[n].addr, m[n].len, PROT_READ | PROT_WRITE)) {
			fclose(f);
			return -1;
		}
		n++;
	}
	fclose(f);
	return n;
}

static uint64_t xs_state = 88172645463325252ull;

static uint64_t xs(void)
{
	xs_state ^= xs_state << 13;
	xs_state ^= xs_state >> 7;
	xs_state ^= xs_state << 17;
	return xs_state;
}

static void scribble(struct mapping *m, int mode)
{
	volatile uint32_t *w = (volatile uint32_t *)m->addr;
	size_t n = m->len / 4, i;

	switch (mode) {
	case 0:		/* random everywhere */
		for (i = 0; i < n; i++)
			w[i] = (uint32_t)xs();
		break;
	case 1:		/* all ones: indices far past any ring */
		for (i = 0; i < n; i++)
			w[i] = ~0u;
		break;
	case 2:		/* a few random words at random places */
		for (i = 0; i < 64; i++)
			w[xs() % n] = (uint32_t)xs();
		break;
	case 3:		/* small increments: plausible but wrong indices */
		for (i = 0; i < n; i++)
			w[i] += (uint32_t)(xs() % 5);
		break;
	default:	/* zero */
		for (i = 0; i < n; i++)
			w[i] = 0;
		break;
	}
}

static void garbage_child(int ready_fd, long ms)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_qp *srq_s, *srq_r;
	struct mapping m[64];
	struct ibv_srq *srq;
	struct su_pair p;
	struct ibv_sge s, r;
	struct ibv_wc wc;
	long end;
	int n, i, ro, round = 0;

	CHILD_CHECK(su_pair_open(&p, NULL) == 0);
	/* And a pair whose receiver takes from an SRQ: its ring is wrecked too. */
	srq = ibv_create_srq(p.env.pd, &sa);
	CHILD_CHECK(srq);
	srq_s = su_create_qp(&p, p.env.pd, p.cq[0], p.cq[0]);
	p.o.srq = srq;
	srq_r = su_create_qp(&p, p.env.pd, p.cq[1], p.cq[1]);
	p.o.srq = NULL;
	CHILD_CHECK(srq_s && srq_r && !su_connect(&p, srq_s, srq_r));
	/* It works before we break it. */
	su_fill(p.env.buf, 4096, 5);
	s = su_sge(&p, 0, 4096);
	r = su_sge(&p, 65536, 4096);
	CHILD_CHECK(!su_post_recv(p.qp[1], 1, &r, 1));
	CHILD_CHECK(!su_post_send(p.qp[0], IBV_WR_SEND, 2, &s, 1,
				  IBV_SEND_SIGNALED, 0, 0));
	CHILD_CHECK(su_poll(p.cq[1], &wc, SU_TIMEOUT_MS) == 1);
	CHILD_CHECK(wc.status == IBV_WC_SUCCESS);
	CHILD_CHECK(su_check(p.env.buf + 65536, 4096, 5) == -1);
	CHILD_CHECK(su_poll(p.cq[0], &wc, SU_TIMEOUT_MS) == 1);
	memset(p.env.buf + 65536, 0, 4096);
	CHILD_CHECK(!su_post_srq_recv(srq, 6, &r, 1));
	CHILD_CHECK(!su_post_send(srq_s, IBV_WR_SEND, 7, &s, 1,
				  IBV_SEND_SIGNALED, 0, 0));
	CHILD_CHECK(su_poll(p.cq[1], &wc, SU_TIMEOUT_MS) == 1);
	CHILD_CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 6);
	CHILD_CHECK(su_check(p.env.buf + 65536, 4096, 5) == -1);
	CHILD_CHECK(su_poll(p.cq[0], &wc, SU_TIMEOUT_MS) == 1);

	n = uverbs_mappings(m, 64);
	/* The doorbell page, 2 CQ rings, 2 x (SQ, RQ) rings at least. */
	CHILD_CHECK(n >= 7);
	for (i = 0, ro = 0; i < n; i++)
		ro += m[i].was_ro;
	CHILD_CHECK(ro >= 2);
	CHILD_CHECK(write(ready_fd, "r", 1) == 1);

	end = su_now_ms() + ms;
	while (su_now_ms() < end) {
		for (i = 0; i < n; i++)
			scribble(&m[i], (round + i) % 5);
		/* Wake the model to look, and post on the wreck. */
		su_kick(p.env.ctx->cmd_fd);
		su_post_recv(p.qp[1], 3, &r, 1);
		su_post_send(p.qp[0], IBV_WR_SEND, 4, &s, 1, IBV_SEND_SIGNALED,
			     0, 0);
		su_post_send(p.qp[1], IBV_WR_RDMA_WRITE, 5, &s, 1, 0,
			     su_addr(&p, 131072), p.env.mr->rkey);
		su_post_srq_recv(srq, 8, &r, 1);
		su_post_send(srq_s, IBV_WR_SEND, 9, &s, 1, IBV_SEND_SIGNALED,
			     0, 0);
		ibv_req_notify_cq(p.cq[0], round & 1);
		round++;
		su_sleep_ms(5);
	}
	/* Leave it all to the kernel. */
	_exit(0);
}

TEST(garbage_in_own_mappings)
{
	struct su_verifier v;
	int pipefd[2], st;
	pid_t pid;
	char c;

	ASSERT_EQ(0, su_verifier_start(&v));
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(pipefd[0]);
		garbage_child(pipefd[1], 3000);
	}
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &c, 1)) TH_LOG("the attacker never got ready");
	/* The bystander makes progress while the attacker is at it. */
	EXPECT_EQ(0, su_verifier_progress(&v, 5, 3 * SU_TIMEOUT_MS));
	st = wait_attacker(&v, pid, 20000);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("attacker status %#x", st);
	SU_EXPECT_VERIFIER_UNHARMED(&v, 5);
	EXPECT_EQ(0, fresh_pair_works());
}

/* ------------------------------------------------------------------ */
/* Crafted WQEs and doorbells on raw QPs                               */
/* ------------------------------------------------------------------ */

/* A fresh pair of raw QPs, connected to each other. */
static int raw_pair(struct su_env *a, struct su_raw *x, struct su_raw *y)
{
	return su_raw_create(x, a->ctx, a->pd, 16, 16, 2) ?:
	       su_raw_create(y, a->ctx, a->pd, 16, 16, 2) ?:
	       su_raw_connect(x, y->qpn, &a->gid, a->gid_index) ?:
	       su_raw_connect(y, x->qpn, &a->gid, a->gid_index);
}

/* Post one WQE on @x and return its CQE status (or -1). */
static int raw_status(struct su_raw *x, struct vrnic_cqe *cqe)
{
	if (!su_raw_poll_wait(x, cqe, SU_TIMEOUT_MS))
		return -1;
	return cqe->status;
}

static void crafted_child(int rfd, int wfd)
{
	struct vrnic_send_wqe_hdr *w;
	struct vrnic_sge *sge;
	struct vrnic_cqe cqe;
	struct su_env a;
	struct su_target t;
	struct su_raw x, y;
	uint32_t i;

	CHILD_CHECK(read(rfd, &t, sizeof(t)) == sizeof(t));
	CHILD_CHECK(!su_env_open(&a, 1 << 20, 0x77, SU_MR_ALL));

	/* Our raw pair works with our own keys. */
	CHILD_CHECK(!raw_pair(&a, &x, &y));
	su_fill(a.buf, 4096, 3);
	CHILD_CHECK(!su_raw_post(&x, VRNIC_WR_RDMA_WRITE, 1, (uintptr_t)a.buf,
				 4096, a.mr->lkey, (uintptr_t)a.buf + 65536,
				 a.mr->rkey, SU_KICK_IF_NEEDED));
	CHILD_CHECK(raw_status(&x, &cqe) == VRNIC_WC_SUCCESS);
	CHILD_CHECK(su_check(a.buf + 65536, 4096, 3) == -1);

	/* WRITE into the bystander's memory with the bystander's rkey. */
	CHILD_CHECK(!su_raw_post(&x, VRNIC_WR_RDMA_WRITE, 2, (uintptr_t)a.buf,
				 4096, a.mr->lkey, t.sentinel, t.rkey,
				 SU_KICK_IF_NEEDED));
	CHILD_CHECK(raw_status(&x, &cqe) == VRNIC_WC_REM_ACCESS_ERR);
	CHILD_CHECK(su_raw_state(&x) == IBV_QPS_ERR);
	su_raw_destroy(&x);
	su_raw_destroy(&y);

	/* READ the bystander's memory with the bystander's rkey: nothing leaks. */
	CHILD_CHECK(!raw_pair(&a, &x, &y));
	memset(a.buf + 131072, 0x77, 65536);
	CHILD_CHECK(!su_raw_post(&x, VRNIC_WR_RDMA_READ, 3,
				 (uintptr_t)a.buf + 131072, 65536, a.mr->lkey,
				 t.sentinel, t.rkey, SU_KICK_IF_NEEDED));
	CHILD_CHECK(raw_status(&x, &cqe) == VRNIC_WC_REM_ACCESS_ERR);
	CHILD_CHECK(su_check_byte(a.buf + 131072, 65536, 0x77) == -1);
	su_raw_destroy(&x);
	su_raw_destroy(&y);

	/* The victim's lkey as our local SGE (its buffer as our source). */
	CHILD_CHECK(!raw_pair(&a, &x, &y));
	CHILD_CHECK(!su_raw_post(&x, VRNIC_WR_RDMA_WRITE, 4, t.sentinel, 4096,
				 t.lkey, (uintptr_t)a.buf + 262144, a.mr->rkey,
				 SU_KICK_IF_NEEDED));
	CHILD_CHECK(raw_status(&x, &cqe) == VRNIC_WC_LOC_PROT_ERR);
	CHILD_CHECK(su_check_byte(a.buf + 262144, 4096, 0x77) == -1);
	su_raw_destroy(&x);
	su_raw_destroy(&y);

	/* Malformed WQEs: unknown opcode, too many SGEs, unknown flags. */
	for (i = 0; i < 3; i++) {
		CHILD_CHECK(!raw_pair(&a, &x, &y));
		w = su_raw_sq_slot(&x);
		sge = (struct vrnic_sge *)((uint8_t *)w +
					   VRNIC_SEND_WQE_HDR_SIZE);
		w->wr_id = 10 + i;
		w->opcode = i == 0 ? 0x7f : VRNIC_WR_RDMA_WRITE;
		w->flags = i == 2 ? 0xf0 | VRNIC_WQE_F_SIGNALED :
				    VRNIC_WQE_F_SIGNALED;
		w->num_sge = i == 1 ? 200 : 1;
		w->rdma.remote_addr = (uintptr_t)a.buf + 327680;
		w->rdma.rkey = a.mr->rkey;
		sge->addr = (uintptr_t)a.buf;
		sge->length = 64;
		sge->lkey = a.mr->lkey;
		CHILD_CHECK(!su_raw_sq_ring(&x, 1, SU_KICK_IF_NEEDED));
		CHILD_CHECK(raw_status(&x, &cqe) == VRNIC_WC_LOC_QP_OP_ERR);
		CHILD_CHECK(cqe.wr_id == 10 + i);
		CHILD_CHECK(su_check_byte(a.buf + 327680, 64, 0x77) == -1);
		su_raw_destroy(&x);
		su_raw_destroy(&y);
	}

	/*
	 * A UD-format SEND (an AH, the bystander's QP number, a qkey) on an
	 * RC QP: it fails on our QP and reaches neither our peer, whose
	 * receive stays posted, nor the bystander.
	 */
	CHILD_CHECK(!raw_pair(&a, &x, &y));
	memset(a.buf + 524288, 0x77, 4096);
	CHILD_CHECK(!su_raw_post_recv(&y, 50, (uintptr_t)a.buf + 524288, 4096,
				      a.mr->lkey, SU_KICK_NEVER));
	w = su_raw_sq_slot(&x);
	sge = (struct vrnic_sge *)((uint8_t *)w + VRNIC_SEND_WQE_HDR_SIZE);
	w->wr_id = 51;
	w->opcode = VRNIC_WR_SEND;
	w->flags = VRNIC_WQE_F_SIGNALED;
	w->num_sge = 1;
	w->ud.ah = 1;
	w->ud.remote_qpn = t.qpn[0];
	w->ud.remote_qkey = 0x11111111;
	sge->addr = (uintptr_t)a.buf;
	sge->length = 256;
	sge->lkey = a.mr->lkey;
	CHILD_CHECK(!su_raw_sq_ring(&x, 1, SU_KICK_IF_NEEDED));
	CHILD_CHECK(raw_status(&x, &cqe) == VRNIC_WC_LOC_QP_OP_ERR);
	CHILD_CHECK(cqe.wr_id == 51);
	CHILD_CHECK(su_raw_state(&x) == IBV_QPS_ERR);
	CHILD_CHECK(su_raw_state(&y) == IBV_QPS_RTS);
	CHILD_CHECK(!su_raw_poll_wait(&y, &cqe, 300));
	CHILD_CHECK(su_check_byte(a.buf + 524288, 4096, 0x77) == -1);
	su_raw_destroy(&x);
	su_raw_destroy(&y);

	/* An SQ producer index far past the ring: the QP dies, fatally. */
	CHILD_CHECK(!raw_pair(&a, &x, &y));
	__atomic_store_n(su_raw_word(&x, x.qp_slot, VRNIC_DB_QP_SQ_PI), 1000u,
			 __ATOMIC_RELEASE);
	CHILD_CHECK(!su_kick(x.fd));
	CHILD_CHECK(su_raw_async(a.ctx, &x, IBV_EVENT_QP_FATAL, SU_TIMEOUT_MS));
	CHILD_CHECK(su_raw_state(&x) == IBV_QPS_ERR);
	su_raw_destroy(&x);
	su_raw_destroy(&y);

	/* A CQ consumer index the device never produced: CQ error. */
	CHILD_CHECK(!raw_pair(&a, &x, &y));
	__atomic_store_n(su_raw_word(&x, x.cq_slot, VRNIC_DB_CQ_CI), 0x80000000u,
			 __ATOMIC_RELEASE);
	CHILD_CHECK(!su_raw_post(&x, VRNIC_WR_RDMA_WRITE, 20, (uintptr_t)a.buf,
				 64, a.mr->lkey, (uintptr_t)a.buf + 393216,
				 a.mr->rkey, SU_KICK_ALWAYS));
	CHILD_CHECK(su_raw_async(a.ctx, &x, IBV_EVENT_CQ_ERR, SU_TIMEOUT_MS));
	su_raw_destroy(&x);
	su_raw_destroy(&y);

	/*
	 * Our QP aimed at the bystander's QP numbers (each is connected to
	 * its partner, not to us): a SEND, and a WRITE with its rkey into its
	 * sentinel. Nobody answers.
	 */
	for (i = 0; i < 4; i++) {
		CHILD_CHECK(!su_raw_create(&x, a.ctx, a.pd, 16, 16, 1));
		CHILD_CHECK(!su_raw_connect(&x, t.qpn[i & 1], &a.gid,
					    a.gid_index));
		CHILD_CHECK(!su_raw_post(&x, i < 2 ? VRNIC_WR_SEND :
					 VRNIC_WR_RDMA_WRITE, 30 + i,
					 (uintptr_t)a.buf, 256, a.mr->lkey,
					 t.sentinel, t.rkey, SU_KICK_IF_NEEDED));
		CHILD_CHECK(raw_status(&x, &cqe) == VRNIC_WC_RETRY_EXC_ERR);
		CHILD_CHECK(cqe.wr_id == 30 + i);
		CHILD_CHECK(su_raw_state(&x) == IBV_QPS_ERR);
		su_raw_destroy(&x);
	}

	/* Writes to slots nobody owns, and to the device's status slot. */
	CHILD_CHECK(!raw_pair(&a, &x, &y));
	for (i = 0; i < 1024; i++)
		if (i / 2 != x.qp_slot && i / 2 != x.cq_slot &&
		    i / 2 != y.qp_slot && i / 2 != y.cq_slot)
			x.db[i] = (uint32_t)xs();
	su_kick(x.fd);
	/* ... change nothing for our live pair. */
	su_fill(a.buf, 4096, 4);
	CHILD_CHECK(!su_raw_post(&x, VRNIC_WR_RDMA_WRITE, 40, (uintptr_t)a.buf,
				 4096, a.mr->lkey, (uintptr_t)a.buf + 458752,
				 a.mr->rkey, SU_KICK_ALWAYS));
	CHILD_CHECK(raw_status(&x, &cqe) == VRNIC_WC_SUCCESS);
	CHILD_CHECK(su_check(a.buf + 458752, 4096, 4) == -1);
	su_raw_destroy(&x);
	su_raw_destroy(&y);

	CHILD_CHECK(write(wfd, "d", 1) == 1);
	_exit(0);
}

TEST(crafted_wqes_and_doorbells)
{
	struct su_verifier v;
	int to, from, st;
	pid_t pid;
	char c;

	ASSERT_EQ(0, su_verifier_start(&v));
	pid = su_spawn(crafted_child, &to, &from);
	ASSERT_LE(0, pid);
	ASSERT_EQ(sizeof(v.s->t), write(to, &v.s->t, sizeof(v.s->t)));
	st = wait_attacker(&v, pid, 60000);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("attacker status %#x", st);
	EXPECT_EQ(1, read(from, &c, 1));
	/* Its SENDs and WRITEs to the bystander's QP numbers never landed. */
	SU_EXPECT_VERIFIER_UNHARMED(&v, 5);
}

/* ------------------------------------------------------------------ */
/* Stale indices                                                       */
/* ------------------------------------------------------------------ */

/* Take the next CQE without publishing the consumer index. */
static int raw_peek_wait(struct su_raw *r, struct vrnic_cqe *out, int ms)
{
	uint32_t ci = r->cq_ci;
	struct vrnic_cqe *c = (struct vrnic_cqe *)(r->cq_ring +
		(size_t)(ci & ((1u << r->cq_log) - 1)) * VRNIC_CQE_SIZE);
	long end = su_now_ms() + ms;

	do {
		uint8_t owner = __atomic_load_n(&c->owner, __ATOMIC_ACQUIRE);

		if ((owner & VRNIC_OWNER_PHASE) == VRNIC_PHASE(ci, r->cq_log)) {
			*out = *c;
			r->cq_ci++;
			return 1;
		}
	} while (su_now_ms() < end);
	return 0;
}

static void store_word(struct su_raw *r, uint32_t slot, uint32_t off,
		       uint32_t v)
{
	__atomic_store_n(su_raw_word(r, slot, off), v, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* A WRITE of 256 bytes of @seed from our offset 0 to @dst; its status. */
static int raw_write(struct su_env *a, struct su_raw *x, unsigned int seed,
		     size_t dst)
{
	struct vrnic_cqe cqe;

	su_fill(a->buf, 256, seed);
	if (su_raw_post(x, VRNIC_WR_RDMA_WRITE, seed, (uintptr_t)a->buf, 256,
			a->mr->lkey, (uintptr_t)a->buf + dst, a->mr->rkey,
			SU_KICK_ALWAYS))
		return -1;
	return raw_status(x, &cqe);
}

TEST(stale_indices)
{
	struct su_verifier v;
	struct vrnic_cqe cqe;
	struct su_env a;
	struct su_raw x, y;
	uint32_t depth, i;

	ASSERT_EQ(0, su_verifier_start(&v));
	ASSERT_EQ(0, su_env_open(&a, 1 << 20, 0x77, SU_MR_ALL));

	/* A replayed SQ producer index runs nothing twice. */
	ASSERT_EQ(0, raw_pair(&a, &x, &y));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(VRNIC_WC_SUCCESS, raw_write(&a, &x, 10 + i,
						      65536 + i * 4096));
	memset(a.buf + 65536, 0, 4 * 4096);
	for (i = 0; i < 3; i++) {
		store_word(&x, x.qp_slot, VRNIC_DB_QP_SQ_PI, x.sq_pi);
		ASSERT_EQ(0, su_kick(x.fd));
	}
	EXPECT_EQ(0, su_raw_poll_wait(&x, &cqe, 300));
	EXPECT_EQ(-1, su_check_byte(a.buf + 65536, 4 * 4096, 0));
	EXPECT_EQ(VRNIC_WC_SUCCESS, raw_write(&a, &x, 20, 131072));
	EXPECT_EQ(-1, su_check(a.buf + 131072, 256, 20));

	/* Rewound by one, behind what the device consumed: QP fatal. */
	store_word(&x, x.qp_slot, VRNIC_DB_QP_SQ_PI, x.sq_pi - 1);
	ASSERT_EQ(0, su_kick(x.fd));
	EXPECT_TRUE(su_raw_async(a.ctx, &x, IBV_EVENT_QP_FATAL, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_QPS_ERR, su_raw_state(&x));
	su_raw_destroy(&x);
	su_raw_destroy(&y);

	/* An RQ producer index rewound behind consumed receives. */
	ASSERT_EQ(0, raw_pair(&a, &x, &y));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, su_raw_post_recv(&y, 40 + i,
					      (uintptr_t)a.buf + 196608,
					      4096, a.mr->lkey,
					      SU_KICK_IF_NEEDED));
		ASSERT_EQ(0, su_raw_post(&x, VRNIC_WR_SEND, 50 + i,
					 (uintptr_t)a.buf, 64, a.mr->lkey, 0, 0,
					 SU_KICK_IF_NEEDED));
		ASSERT_EQ(1, su_raw_poll_wait(&x, &cqe, SU_TIMEOUT_MS));
		ASSERT_EQ(VRNIC_WC_SUCCESS, cqe.status);
		ASSERT_EQ(1, su_raw_poll_wait(&y, &cqe, SU_TIMEOUT_MS));
		ASSERT_EQ(VRNIC_WC_SUCCESS, cqe.status);
		ASSERT_EQ(40 + i, cqe.wr_id);
	}
	/* The device reads it when the next message needs a receive. */
	store_word(&y, y.qp_slot, VRNIC_DB_QP_RQ_PI, 1);
	ASSERT_EQ(0, su_raw_post(&x, VRNIC_WR_SEND, 52, (uintptr_t)a.buf, 64,
				 a.mr->lkey, 0, 0, SU_KICK_ALWAYS));
	EXPECT_TRUE(su_raw_async(a.ctx, &y, IBV_EVENT_QP_FATAL, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_QPS_ERR, su_raw_state(&y));
	su_raw_destroy(&x);
	su_raw_destroy(&y);

	/*
	 * A CQ consumer index rewound: by less than the depth it only
	 * shrinks the room (one more CQE fits, exactly), then the CQ is full
	 * and goes to error.
	 */
	ASSERT_EQ(0, raw_pair(&a, &x, &y));
	depth = 1u << x.cq_log;
	for (i = 0; i < depth + 3; i++)
		ASSERT_EQ(VRNIC_WC_SUCCESS, raw_write(&a, &x, 60 + i, 262144));
	store_word(&x, x.cq_slot, VRNIC_DB_CQ_CI, x.cq_ci - (depth - 1));
	su_fill(a.buf, 256, 99);
	ASSERT_EQ(0, su_raw_post(&x, VRNIC_WR_RDMA_WRITE, 99, (uintptr_t)a.buf,
				 256, a.mr->lkey, (uintptr_t)a.buf + 327680,
				 a.mr->rkey, SU_KICK_ALWAYS));
	ASSERT_EQ(1, raw_peek_wait(&x, &cqe, SU_TIMEOUT_MS));
	EXPECT_EQ(VRNIC_WC_SUCCESS, cqe.status);
	EXPECT_EQ(99, cqe.wr_id);
	EXPECT_EQ(-1, su_check(a.buf + 327680, 256, 99));
	ASSERT_EQ(0, su_raw_post(&x, VRNIC_WR_RDMA_WRITE, 100, (uintptr_t)a.buf,
				 256, a.mr->lkey, (uintptr_t)a.buf + 393216,
				 a.mr->rkey, SU_KICK_ALWAYS));
	EXPECT_TRUE(su_raw_async(a.ctx, &x, IBV_EVENT_CQ_ERR, SU_TIMEOUT_MS));
	EXPECT_EQ(0, raw_peek_wait(&x, &cqe, 200));
	EXPECT_EQ(IBV_QPS_ERR, su_raw_state(&x));
	su_raw_destroy(&x);
	su_raw_destroy(&y);

	su_env_close(&a);
	SU_EXPECT_VERIFIER_UNHARMED(&v, 3);
}

/* ------------------------------------------------------------------ */
/* Other PDs, range edges, unaligned atomics                           */
/* ------------------------------------------------------------------ */

#define WIN_OFF 4096		/* the window MR covers [4096, 8192) of win */

enum edge_buf { B_MAIN, B_WIN, B_OTHER_PD };

struct edge_row {
	const char *name;
	int op;			/* an ibv_wr_opcode, or -1: a bad receive */
	enum edge_buf lbuf;	/* local SGE: main MR, window, other PD */
	long loff;		/* ... at this offset from the MR start */
	uint32_t len;
	enum edge_buf rbuf;	/* remote: window or other PD */
	long roff;
	enum ibv_wc_status want;
};

static const struct edge_row edge_rows[] = {
	{ "local lkey of another PD", IBV_WR_RDMA_WRITE, B_OTHER_PD, 0, 64,
	  B_WIN, 0, IBV_WC_LOC_PROT_ERR },
	{ "WRITE to an rkey of another PD", IBV_WR_RDMA_WRITE, B_MAIN, 0, 64,
	  B_OTHER_PD, 0, IBV_WC_REM_ACCESS_ERR },
	{ "READ from an rkey of another PD", IBV_WR_RDMA_READ, B_MAIN, 0, 64,
	  B_OTHER_PD, 0, IBV_WC_REM_ACCESS_ERR },
	{ "CAS on an rkey of another PD", IBV_WR_ATOMIC_CMP_AND_SWP, B_MAIN, 0,
	  8, B_OTHER_PD, 0, IBV_WC_REM_ACCESS_ERR },
	{ "local SGE from 1 byte before the MR", IBV_WR_RDMA_WRITE, B_WIN, -1,
	  16, B_WIN, 64, IBV_WC_LOC_PROT_ERR },
	{ "local SGE to 1 byte past the MR", IBV_WR_RDMA_WRITE, B_WIN, 4088, 9,
	  B_WIN, 64, IBV_WC_LOC_PROT_ERR },
	{ "WRITE from 1 byte before the MR", IBV_WR_RDMA_WRITE, B_MAIN, 0, 16,
	  B_WIN, -1, IBV_WC_REM_ACCESS_ERR },
	{ "READ to 1 byte past the MR", IBV_WR_RDMA_READ, B_MAIN, 0, 9, B_WIN,
	  4088, IBV_WC_REM_ACCESS_ERR },
	{ "WRITE of exactly the MR", IBV_WR_RDMA_WRITE, B_MAIN, 0, 4096, B_WIN,
	  0, IBV_WC_SUCCESS },
	{ "CAS at 8n+1", IBV_WR_ATOMIC_CMP_AND_SWP, B_MAIN, 0, 8, B_WIN, 1,
	  IBV_WC_REM_INV_REQ_ERR },
	{ "CAS at 8n+4", IBV_WR_ATOMIC_CMP_AND_SWP, B_MAIN, 0, 8, B_WIN, 4,
	  IBV_WC_REM_INV_REQ_ERR },
	{ "FETCH_ADD at 8n+2", IBV_WR_ATOMIC_FETCH_AND_ADD, B_MAIN, 0, 8, B_WIN,
	  2, IBV_WC_REM_INV_REQ_ERR },
	{ "FETCH_ADD at the MR's last 8 bytes", IBV_WR_ATOMIC_FETCH_AND_ADD,
	  B_MAIN, 0, 8, B_WIN, 4088, IBV_WC_SUCCESS },
	{ "FETCH_ADD just past the MR", IBV_WR_ATOMIC_FETCH_AND_ADD, B_MAIN, 0,
	  8, B_WIN, 4096, IBV_WC_REM_ACCESS_ERR },
	{ "receive SGE with an lkey of another PD", -1, B_OTHER_PD, 0, 64,
	  B_MAIN, 0, IBV_WC_REM_OP_ERR },
	{ "receive SGE to 1 byte past the MR", -1, B_WIN, 4088, 9, B_MAIN, 0,
	  IBV_WC_REM_OP_ERR },
};

struct edges {
	struct su_pair p;
	uint8_t *win;		/* 3 pages; the window MR is the middle one */
	struct ibv_mr *wmr;
	struct ibv_pd *opd;
	uint8_t *other;		/* one page, registered in another PD */
	struct ibv_mr *omr;
};

static uint64_t edge_addr(struct edges *e, enum edge_buf b, long off)
{
	if (b == B_WIN)
		return (uintptr_t)e->win + WIN_OFF + off;
	if (b == B_OTHER_PD)
		return (uintptr_t)e->other + off;
	return su_addr(&e->p, off);
}

static uint32_t edge_key(struct edges *e, enum edge_buf b, int remote)
{
	struct ibv_mr *mr = b == B_WIN ? e->wmr :
			    b == B_OTHER_PD ? e->omr : e->p.env.mr;

	return remote ? mr->rkey : mr->lkey;
}

/* New QPs for each row: an error leaves the old ones in ERR. */
static int edges_reconnect(struct edges *e)
{
	struct ibv_wc wc;
	int i;

	for (i = 0; i < 2; i++) {
		if (e->p.qp[i])
			ibv_destroy_qp(e->p.qp[i]);
		e->p.qp[i] = NULL;
		while (ibv_poll_cq(e->p.cq[i], 1, &wc) > 0)
			;
	}
	for (i = 0; i < 2; i++) {
		e->p.qp[i] = su_create_qp(&e->p, e->p.env.pd, e->p.cq[i],
					  e->p.cq[i]);
		if (!e->p.qp[i])
			return -1;
	}
	return su_connect(&e->p, e->p.qp[0], e->p.qp[1]);
}

static void edges_fill(struct edges *e, unsigned int seed)
{
	su_fill(e->p.env.buf, 65536, seed);
	su_fill(e->win, 3 * 4096, seed + 1);
	su_fill(e->other, 4096, seed + 2);
}

/* Offset of the first changed byte in any of the buffers, or -1. */
static long edges_changed(struct edges *e, unsigned int seed)
{
	long off = su_check(e->p.env.buf, 65536, seed);

	if (off < 0)
		off = su_check(e->win, 3 * 4096, seed + 1);
	if (off < 0)
		off = su_check(e->other, 4096, seed + 2);
	return off;
}

/* Run one row; the requester's status, *resp the responder's (or -1). */
static int edge_run(struct edges *e, const struct edge_row *r, int *resp)
{
	struct ibv_sge s = {
		.addr = edge_addr(e, r->lbuf, r->loff),
		.length = r->len,
		.lkey = edge_key(e, r->lbuf, 0),
	};
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &s, .num_sge = 1,
		.opcode = r->op < 0 ? IBV_WR_SEND : r->op,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int st;

	*resp = -1;
	if (r->op < 0) {
		/* The bad SGE is the responder's; we send 64 good bytes. */
		if (su_post_recv(e->p.qp[1], 2, &s, 1))
			return -2;
		s = su_sge(&e->p, 0, 64);
	} else if (r->op == IBV_WR_ATOMIC_CMP_AND_SWP ||
		   r->op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = edge_addr(e, r->rbuf, r->roff);
		wr.wr.atomic.rkey = edge_key(e, r->rbuf, 1);
		wr.wr.atomic.compare_add = 5;
		wr.wr.atomic.swap = 6;
	} else {
		wr.wr.rdma.remote_addr = edge_addr(e, r->rbuf, r->roff);
		wr.wr.rdma.rkey = edge_key(e, r->rbuf, 1);
	}
	if (ibv_post_send(e->p.qp[0], &wr, &bad))
		return -3;
	if (su_poll(e->p.cq[0], &wc, SU_TIMEOUT_MS) != 1)
		return -4;
	st = wc.status;
	if (r->op < 0 && su_poll(e->p.cq[1], &wc, SU_TIMEOUT_MS) == 1)
		*resp = wc.status;
	return st;
}

TEST(other_pds_range_edges_unaligned_atomics)
{
	struct su_verifier v;
	struct edges e = {};
	unsigned int i, seed;
	uint64_t old, now;
	int st, resp;
	long off;

	ASSERT_EQ(0, su_verifier_start(&v));
	ASSERT_EQ(0, su_pair_open(&e.p, NULL));
	e.win = aligned_alloc(4096, 3 * 4096);
	e.other = aligned_alloc(4096, 4096);
	ASSERT_NE(NULL, e.win);
	ASSERT_NE(NULL, e.other);
	e.wmr = ibv_reg_mr(e.p.env.pd, e.win + WIN_OFF, 4096, SU_MR_ALL);
	ASSERT_NE(NULL, e.wmr);
	e.opd = ibv_alloc_pd(e.p.env.ctx);
	ASSERT_NE(NULL, e.opd);
	e.omr = ibv_reg_mr(e.opd, e.other, 4096, SU_MR_ALL);
	ASSERT_NE(NULL, e.omr);

	for (i = 0; i < sizeof(edge_rows) / sizeof(edge_rows[0]); i++) {
		const struct edge_row *r = &edge_rows[i];

		seed = 300 + i * 7;
		ASSERT_EQ(0, edges_reconnect(&e)) TH_LOG("%s", r->name);
		edges_fill(&e, seed);
		memcpy(&old, e.win + WIN_OFF + 4088, 8);
		st = edge_run(&e, r, &resp);
		EXPECT_EQ(r->want, st) TH_LOG("%s: status %d", r->name, st);
		if (r->op < 0)
			EXPECT_EQ(IBV_WC_LOC_PROT_ERR, resp)
				TH_LOG("%s: receive status %d", r->name, resp);
		if (r->want != IBV_WC_SUCCESS) {
			/* No byte moved anywhere, the QP is dead. */
			off = edges_changed(&e, seed);
			EXPECT_EQ(-1, off) TH_LOG("%s: byte %ld changed",
						  r->name, off);
			EXPECT_EQ(IBV_QPS_ERR, su_qp_state(e.p.qp[0]))
				TH_LOG("%s", r->name);
		} else if (r->op == IBV_WR_RDMA_WRITE) {
			/* The window holds the new bytes, its neighbours not. */
			EXPECT_EQ(-1, su_check(e.win + WIN_OFF, 4096, seed));
			EXPECT_EQ(-1, su_check(e.win, WIN_OFF, seed + 1));
			for (off = WIN_OFF + 4096; off < 3 * 4096; off++)
				if (e.win[off] != su_pat(seed + 1, off))
					break;
			EXPECT_EQ(3 * 4096, off);
		} else {
			/* FETCH_ADD: the old value back, the sum in place. */
			memcpy(&now, e.win + WIN_OFF + 4088, 8);
			EXPECT_EQ(old + 5, now);
			EXPECT_EQ(0, memcmp(&old, e.p.env.buf, 8));
		}
	}

	ibv_dereg_mr(e.omr);
	ibv_dealloc_pd(e.opd);
	ibv_dereg_mr(e.wmr);
	su_pair_close(&e.p);
	free(e.win);
	free(e.other);
	SU_EXPECT_VERIFIER_UNHARMED(&v, 3);
}

/* ------------------------------------------------------------------ */
/* Memory freed while the device writes into it                        */
/* ------------------------------------------------------------------ */

#define FREED_LEN (4 << 20)

/* @n signalled-at-the-end 128 KiB WRITEs from p's buffer into @mr. */
static int write_burst(struct su_pair *p, struct ibv_mr *mr, int n,
		       uint64_t wr_id)
{
	struct ibv_sge s = su_sge(p, 0, 128 << 10);
	int i;

	for (i = 0; i < n; i++)
		if (su_post_send(p->qp[0], IBV_WR_RDMA_WRITE, wr_id + i, &s, 1,
				 i == n - 1 ? IBV_SEND_SIGNALED : 0,
				 (uintptr_t)mr->addr +
				 (size_t)(i % 32) * (128 << 10), mr->rkey))
			return -1;
	return 0;
}

TEST(mr_unmapped_while_device_writes)
{
	struct su_verifier v;
	struct su_pair p;
	struct ibv_wc wc;
	struct ibv_mr *mr;
	long pin0, pin1;
	uint8_t *mem, *again;
	struct ibv_sge s;

	ASSERT_EQ(0, su_verifier_start(&v));
	ASSERT_EQ(0, su_pair_open(&p, NULL));
	mem = mmap(NULL, FREED_LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	memset(mem, 0, FREED_LEN);
	pin0 = su_vmpin_kb(0);
	mr = ibv_reg_mr(p.env.pd, mem, FREED_LEN, SU_MR_ALL);
	ASSERT_NE(NULL, mr);
	pin1 = su_vmpin_kb(0);
	EXPECT_LE(pin0 + FREED_LEN / 1024, pin1);

	/* Unmapped right behind the posts, while the WRITEs run. */
	su_fill(p.env.buf, 128 << 10, 41);
	ASSERT_EQ(0, write_burst(&p, mr, 32, 100));
	ASSERT_EQ(0, munmap(mem, FREED_LEN));
	ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(131, wc.wr_id);

	/* Whatever is mapped there next is not the MR's memory. */
	again = mmap(mem, FREED_LEN, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ASSERT_EQ(mem, again);
	memset(again, 0x5a, FREED_LEN);
	su_fill(p.env.buf, 128 << 10, 42);
	ASSERT_EQ(0, write_burst(&p, mr, 32, 200));
	ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(-1, su_check_byte(again, FREED_LEN, 0x5a));

	/* The pinned pages hold what the device wrote: READ them back. */
	memset(p.env.buf + 262144, 0, 128 << 10);
	s = su_sge(&p, 262144, 128 << 10);
	ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_RDMA_READ, 300, &s, 1,
				  IBV_SEND_SIGNALED,
				  (uintptr_t)mr->addr + (31 << 17), mr->rkey));
	ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(-1, su_check(p.env.buf + 262144, 128 << 10, 42));

	/* Still pinned until deregistered, then released. */
	EXPECT_LE(pin1, su_vmpin_kb(0));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_GE(pin0, su_vmpin_kb(0));
	munmap(again, FREED_LEN);
	su_pair_close(&p);
	SU_EXPECT_VERIFIER_UNHARMED(&v, 3);
}

/* A process that posts WRITEs into its own MR and exits after @delay_ms. */
static void exiting_writer(int delay_ms, int unmap_first)
{
	struct su_pair p;
	struct ibv_mr *mr;
	uint8_t *mem;

	CHILD_CHECK(su_pair_open(&p, NULL) == 0);
	mem = mmap(NULL, FREED_LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHILD_CHECK(mem != MAP_FAILED);
	mr = ibv_reg_mr(p.env.pd, mem, FREED_LEN, SU_MR_ALL);
	CHILD_CHECK(mr);
	su_fill(p.env.buf, 128 << 10, 7);
	CHILD_CHECK(!write_burst(&p, mr, 60, 1));
	if (unmap_first)
		CHILD_CHECK(!munmap(mem, FREED_LEN));
	su_sleep_ms(delay_ms);
	_exit(0);
}

TEST(process_exits_while_device_writes)
{
	static const int delays[] = { 0, 2, 20 };
	struct su_res before, after;
	struct su_verifier v;
	unsigned int i;
	int st;
	pid_t pid;

	ASSERT_EQ(0, su_verifier_start(&v));
	ASSERT_EQ(0, su_res_get(&before));
	for (i = 0; i < 2 * sizeof(delays) / sizeof(delays[0]); i++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			exiting_writer(delays[i / 2], i & 1);
		st = su_wait_child(pid, 3 * SU_TIMEOUT_MS);
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
			TH_LOG("writer %u: status %#x", i, st);
		/* Everything it had is gone, and the bystander goes on. */
		EXPECT_EQ(0, su_res_wait(&before, &after, SU_TIMEOUT_MS))
			TH_LOG("writer %u: qp %ld mr %ld ctx %ld, were %ld %ld %ld",
			       i, after.qp, after.mr, after.ctx, before.qp,
			       before.mr, before.ctx);
		EXPECT_EQ(0, su_verifier_progress(&v, 2, 3 * SU_TIMEOUT_MS));
	}
	SU_EXPECT_VERIFIER_UNHARMED(&v, 3);
	EXPECT_EQ(0, fresh_pair_works());
}

/* ------------------------------------------------------------------ */
/* A flood of large messages                                           */
/* ------------------------------------------------------------------ */

#define FLOOD_QPS 128
#define FLOOD_SGE_LEN (4u << 20)

/*
 * 128 self-connected QPs, each with 64 SENDs of 16 x 4 MiB SGEs (all on the
 * first 8 MiB of one MR) into 64 MiB receives: 512 GiB to move, tens of
 * seconds of the model's time. Posts everything, says so on @wfd, waits
 * to be killed.
 */
static void flood_child(int rfd, int wfd)
{
	struct su_opts o = { .send_sge = 16, .recv_sge = 1,
			     .buf_size = 72u << 20 };
	struct ibv_qp *qp[FLOOD_QPS];
	struct ibv_sge s[16], r;
	struct su_pair p;
	struct ibv_cq *cq;
	int i, j;

	if (su_pair_open(&p, &o))
		_exit(2);
	for (j = 0; j < 16; j++)
		s[j] = su_sge(&p, (j % 2) * FLOOD_SGE_LEN, FLOOD_SGE_LEN);
	r = su_sge(&p, 8u << 20, 64u << 20);
	for (i = 0; i < FLOOD_QPS; i++) {
		cq = ibv_create_cq(p.env.ctx, 256, NULL, NULL, 0);
		qp[i] = cq ? su_create_qp(&p, p.env.pd, cq, cq) : NULL;
		if (!qp[i] || su_to_init(&p, qp[i]) ||
		    su_to_rtr(&p, qp[i], qp[i]->qp_num) || su_to_rts(&p, qp[i]))
			_exit(3);
		for (j = 0; j < 64; j++)
			if (su_post_recv(qp[i], j, &r, 1))
				_exit(4);
	}
	/* Posted once every QP exists, so that it all starts at once. */
	for (i = 0; i < FLOOD_QPS; i++)
		for (j = 0; j < 64; j++)
			if (su_post_send(qp[i], IBV_WR_SEND, j, s, 16,
					 IBV_SEND_SIGNALED, 0, 0))
				_exit(5);
	if (write(wfd, "F", 1) != 1)
		_exit(6);
	for (;;)
		pause();
}

/*
 * The device works a flood in bounded slices: its heartbeat never stops
 * for the driver's timeout, so it is not declared dead, and a bystander's
 * traffic keeps flowing and verifying all along.
 */
TEST(flood_keeps_device_alive)
{
	struct su_verifier v;
	int to, from, st;
	long end;
	pid_t pid;
	char c;

	ASSERT_EQ(0, su_verifier_start(&v));
	pid = su_spawn(flood_child, &to, &from);
	ASSERT_LE(0, pid);
	EXPECT_EQ(1, read(from, &c, 1)) TH_LOG("the flood never started");
	close(to);
	close(from);
	/* Longer than the driver's 5 s heartbeat timeout. */
	end = su_now_ms() + 8000;
	while (su_now_ms() < end && !v.s->failed)
		EXPECT_EQ(0, su_verifier_progress(&v, 5, 3 * SU_TIMEOUT_MS));
	EXPECT_EQ(0, waitpid(pid, &st, WNOHANG)) TH_LOG("the flood exited");
	kill(pid, SIGKILL);
	su_wait_child(pid, 3 * SU_TIMEOUT_MS);
	SU_EXPECT_VERIFIER_UNHARMED(&v, 5);
	EXPECT_EQ(0, fresh_pair_works());
}

/* ------------------------------------------------------------------ */
/* A QP that names the victim but does not know its PSN                */
/* ------------------------------------------------------------------ */

static int psn_connect(struct su_pair *p, struct ibv_qp *qp, uint32_t dest,
		       uint32_t rq_psn, uint32_t sq_psn)
{
	p->o.rq_psn = rq_psn;
	p->o.sq_psn = sq_psn;
	return su_to_init(p, qp) ?: su_to_rtr(p, qp, dest) ?: su_to_rts(p, qp);
}

/*
 * qp[1] (the victim) and qp[0] name each other, as after a QPN takeover,
 * but qp[0] sends from another PSN than qp[1] expects: nothing arrives and
 * qp[0] gets RETRY_EXC_ERR. From the right PSN the same QP delivers.
 */
TEST(wrong_psn_cannot_inject)
{
	struct su_opts o = { .no_connect = 1 };
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	struct su_pair p;
	struct ibv_sge s;
	struct ibv_wc wc;
	uint8_t zero[64] = {};

	ASSERT_EQ(0, su_pair_open(&p, &o));
	ASSERT_EQ(0, psn_connect(&p, p.qp[1], p.qp[0]->qp_num, 0x1000, 0x77));
	ASSERT_EQ(0, psn_connect(&p, p.qp[0], p.qp[1]->qp_num, 0x77, 0x2000));
	memset(p.env.buf, 0, 4096);
	su_fill(p.env.buf + 4096, 64, 5);
	s = su_sge(&p, 0, 4096);
	ASSERT_EQ(0, su_post_recv(p.qp[1], 1, &s, 1));
	s = su_sge(&p, 4096, 64);
	ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_SEND, 2, &s, 1,
				  IBV_SEND_SIGNALED, 0, 0));
	ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_RETRY_EXC_ERR, wc.status);
	EXPECT_EQ(0, su_poll(p.cq[1], &wc, 200));
	EXPECT_EQ(0, memcmp(p.env.buf, zero, sizeof(zero)));
	ASSERT_EQ(0, ibv_query_qp(p.qp[1], &qa, IBV_QP_STATE | IBV_QP_RQ_PSN,
				  &ia));
	EXPECT_EQ(IBV_QPS_RTS, qa.qp_state);
	EXPECT_EQ(0x1000, qa.rq_psn);

	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RESET;
	ASSERT_EQ(0, ibv_modify_qp(p.qp[0], &qa, IBV_QP_STATE));
	ASSERT_EQ(0, psn_connect(&p, p.qp[0], p.qp[1]->qp_num, 0x77, 0x1000));
	ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_SEND, 3, &s, 1,
				  IBV_SEND_SIGNALED, 0, 0));
	ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(1, su_poll(p.cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(64, wc.byte_len);
	EXPECT_EQ(0, memcmp(p.env.buf, p.env.buf + 4096, 64));
	ASSERT_EQ(0, ibv_query_qp(p.qp[1], &qa, IBV_QP_RQ_PSN, &ia));
	EXPECT_EQ(0x1001, qa.rq_psn);
	ASSERT_EQ(0, ibv_query_qp(p.qp[0], &qa, IBV_QP_SQ_PSN, &ia));
	EXPECT_EQ(0x1001, qa.sq_psn);
	su_pair_close(&p);
}

TEST_HARNESS_MAIN
