// SPDX-License-Identifier: GPL-2.0
/*
 * RC data path at its limits, every byte checked:
 * - the device's maximum SGE count on SEND/RECV (with a zero-length SGE),
 *   RDMA WRITE gather and RDMA READ scatter;
 * - queue wrap-around over thousands of WQEs on small queues: SENDs of
 *   varying length received in order, and mostly unsignalled RDMA WRITEs
 *   that still retire their SQ slots and produce exactly the CQEs asked
 *   for (and sq_sig_all signalling every WQE);
 * - RNR: a SEND with no receive waits and completes once one is posted,
 *   and with a small rnr_retry completes with IBV_WC_RNR_RETRY_EXC_ERR
 *   after the retries;
 * - rdma statistic's traffic counters move with every message and byte,
 *   RNR NAKs and error completions;
 * - an error flushes everything after it with IBV_WC_WR_FLUSH_ERR,
 *   signalled or not, send and receive queue, and later posts too; no
 *   byte of a flushed WQE moves;
 * - the rows of the device interface's error table (14.4) not covered
 *   elsewhere: receive-side failures, misaligned atomics, READ/atomic
 *   without responder resources, ranges crossing an MR's end, message
 *   lengths past max_msg_sz (also when they wrap 32 bits), and the
 *   zero-length exemption from the rkey check: requester and responder
 *   statuses, QP states, events, and untouched memory; a forked bystander
 *   process (su_verifier) moves verified bytes through every row unharmed.
 */
#include <arpa/inet.h>

#include "suite.h"
#include "kselftest_harness.h"

static int device_max_sge(struct ibv_context *ctx)
{
	struct ibv_device_attr a;

	return ibv_query_device(ctx, &a) ? -1 : a.max_sge;
}

/* @n SGEs over [off, off + total) with lengths from @lens (cycled). */
static uint32_t make_sges(struct su_pair *p, struct ibv_sge *s, int n,
			  size_t off, const uint32_t *lens, int nlens,
			  size_t gap)
{
	uint32_t total = 0;
	int i;

	for (i = 0; i < n; i++) {
		s[i] = su_sge(p, off, lens[i % nlens]);
		off += lens[i % nlens] + gap;
		total += lens[i % nlens];
	}
	return total;
}

/* Gather the bytes of @s into @out. */
static void gather(const struct ibv_sge *s, int n, uint8_t *out)
{
	int i;

	for (i = 0; i < n; i++) {
		memcpy(out, (void *)(uintptr_t)s[i].addr, s[i].length);
		out += s[i].length;
	}
}

TEST(max_sges)
{
	static const uint32_t slens[] = { 1, 700, 0, 4096, 33, 2000, 8, 1500 };
	static const uint32_t rlens[] = { 3000, 5, 64, 1200, 999, 17, 4096 };
	struct ibv_sge s[64], r[64];
	uint8_t *expect, *got;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	struct su_opts o;
	struct su_pair p;
	struct ibv_wc wc;
	uint32_t stotal, rtotal, len;
	int max, err, i;

	{
		struct ibv_context *ctx = su_open();

		ASSERT_NE(NULL, ctx);
		max = device_max_sge(ctx);
		ibv_close_device(ctx);
	}
	ASSERT_LE(2, max);
	ASSERT_GE(64, max);
	memset(&o, 0, sizeof(o));
	o.send_sge = max;
	o.recv_sge = max;
	o.buf_size = 4 << 20;
	err = su_pair_open(&p, &o);
	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	ASSERT_EQ(0, ibv_query_qp(p.qp[0], &qa, IBV_QP_CAP, &ia));
	EXPECT_LE(max, ia.cap.max_send_sge);
	EXPECT_LE(max, ia.cap.max_recv_sge);
	expect = malloc(1 << 20);
	got = malloc(1 << 20);
	ASSERT_NE(NULL, expect);
	ASSERT_NE(NULL, got);

	/* SEND: max gather SGEs (one of length 0) into max scatter SGEs. */
	su_fill(p.env.buf, 1 << 20, 1);
	stotal = make_sges(&p, s, max, 0, slens, 8, 13);
	rtotal = make_sges(&p, r, max, 2 << 20, rlens, 7, 29);
	ASSERT_LE(stotal, rtotal);
	memset(p.env.buf + (2 << 20), 0, 1 << 20);
	ASSERT_EQ(0, su_post_recv(p.qp[1], 1, r, max));
	ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_SEND, 2, s, max,
				  IBV_SEND_SIGNALED, 0, 0));
	ASSERT_EQ(1, su_poll(p.cq[1], &wc, SU_TIMEOUT_MS));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(stotal, wc.byte_len);
	gather(s, max, expect);
	gather(r, max, got);
	EXPECT_EQ(0, memcmp(expect, got, stotal));
	/* Past the message the receive buffers are untouched. */
	EXPECT_EQ(-1, su_check_byte(got + stotal, rtotal - stotal, 0));
	ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);

	/* RDMA WRITE: max gather SGEs to one contiguous remote range. */
	su_fill(p.env.buf, 1 << 20, 2);
	len = make_sges(&p, s, max, 4096, slens + 1, 7, 100);
	memset(p.env.buf + (3 << 20), 0, len + 64);
	ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_RDMA_WRITE, 3, s, max,
				  IBV_SEND_SIGNALED, su_addr(&p, 3 << 20),
				  p.env.mr->rkey));
	ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	gather(s, max, expect);
	EXPECT_EQ(0, memcmp(expect, p.env.buf + (3 << 20), len));
	EXPECT_EQ(-1, su_check_byte(p.env.buf + (3 << 20) + len, 64, 0));

	/* RDMA READ: one remote range scattered into max local SGEs. */
	su_fill(p.env.buf + (3 << 20), 1 << 20, 3);
	len = make_sges(&p, r, max, 2 << 20, rlens, 7, 7);
	memset(p.env.buf + (2 << 20), 0, 1 << 20);
	ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_RDMA_READ, 4, r, max,
				  IBV_SEND_SIGNALED, su_addr(&p, 3 << 20),
				  p.env.mr->rkey));
	ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(len, wc.byte_len);
	gather(r, max, got);
	EXPECT_EQ(-1, su_check(got, len, 3));
	/* The 7-byte gaps between the SGEs stayed zero. */
	for (i = 0; i + 1 < max; i++)
		EXPECT_EQ(-1, su_check_byte((void *)(uintptr_t)(r[i].addr +
							       r[i].length),
					    7, 0));

	/* One SGE more than the device has: no such QP. */
	p.o.send_sge = max + 1;
	EXPECT_EQ(NULL, su_create_qp(&p, p.env.pd, p.cq[0], p.cq[0]));
	p.o.send_sge = 1;
	p.o.recv_sge = max + 1;
	EXPECT_EQ(NULL, su_create_qp(&p, p.env.pd, p.cq[0], p.cq[0]));

	free(expect);
	free(got);
	su_pair_close(&p);
}

/* ------------------------------------------------------------------ */
/* Wrap-around                                                         */
/* ------------------------------------------------------------------ */

#define N_SENDS 4000
#define SLOT 4096
#define SRC_SLOTS 64
#define DST_SLOTS 32

static uint32_t msg_len(uint32_t i)
{
	return 1 + (i * 2654435761u) % 3000;
}

TEST(send_recv_wrap_thousands)
{
	struct su_opts o = { .send_wr = 16, .recv_wr = 16, .cqe = 64 };
	uint32_t sent = 0, completed = 0, rposted = 0, rdone = 0, sigs = 0;
	size_t dst0 = SRC_SLOTS * SLOT;
	struct su_pair p;
	struct ibv_wc wc[8];
	long end;
	int err, n, i;

	err = su_pair_open(&p, &o);
	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	ASSERT_EQ(16, p.cap.max_send_wr);

	end = su_now_ms() + 50000;
	while (rdone < N_SENDS) {
		ASSERT_LT(su_now_ms(), end) TH_LOG("stuck: sent %u completed %u "
						   "received %u", sent,
						   completed, rdone);
		/* Receives ahead, into slots no unverified message uses. */
		while (rposted < N_SENDS && rposted - rdone < 14) {
			struct ibv_sge r = su_sge(&p, dst0 + (rposted % DST_SLOTS)
						  * SLOT, SLOT);

			memset(p.env.buf + dst0 + (rposted % DST_SLOTS) * SLOT, 0,
			       SLOT);
			ASSERT_EQ(0, su_post_recv(p.qp[1], rposted, &r, 1));
			rposted++;
		}
		/* Sends, each fourth signalled, at most 12 in flight. */
		while (sent < N_SENDS && sent - completed < 12 && sent < rposted) {
			size_t off = (sent % SRC_SLOTS) * SLOT;
			struct ibv_sge s = su_sge(&p, off, msg_len(sent));
			int sig = sent % 4 == 3 || sent == N_SENDS - 1;

			su_fill(p.env.buf + off, msg_len(sent), sent);
			ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_SEND, sent, &s,
						  1, sig ? IBV_SEND_SIGNALED : 0,
						  0, 0));
			sent++;
		}
		n = ibv_poll_cq(p.cq[0], 8, wc);
		ASSERT_LE(0, n);
		for (i = 0; i < n; i++) {
			ASSERT_EQ(IBV_WC_SUCCESS, wc[i].status);
			ASSERT_TRUE(wc[i].wr_id % 4 == 3 ||
				    wc[i].wr_id == N_SENDS - 1);
			ASSERT_LE(completed, wc[i].wr_id);
			completed = wc[i].wr_id + 1;
			sigs++;
		}
		n = ibv_poll_cq(p.cq[1], 8, wc);
		ASSERT_LE(0, n);
		for (i = 0; i < n; i++) {
			uint8_t *d = p.env.buf + dst0 + (rdone % DST_SLOTS) * SLOT;

			ASSERT_EQ(IBV_WC_SUCCESS, wc[i].status);
			ASSERT_EQ(rdone, wc[i].wr_id);
			ASSERT_EQ(msg_len(rdone), wc[i].byte_len);
			ASSERT_EQ(-1, su_check(d, msg_len(rdone), rdone))
				TH_LOG("message %u", rdone);
			ASSERT_EQ(-1, su_check_byte(d + msg_len(rdone),
						    SLOT - msg_len(rdone), 0));
			rdone++;
		}
	}
	while (completed < N_SENDS && su_poll(p.cq[0], wc, SU_TIMEOUT_MS)) {
		ASSERT_EQ(IBV_WC_SUCCESS, wc[0].status);
		completed = wc[0].wr_id + 1;
		sigs++;
	}
	EXPECT_EQ(N_SENDS, completed);
	EXPECT_EQ(N_SENDS / 4, sigs);
	EXPECT_EQ(0, su_poll(p.cq[0], wc, 100));
	EXPECT_EQ(0, su_poll(p.cq[1], wc, 100));
	su_pair_close(&p);
}

#define N_WRITES 5000

TEST(unsignalled_writes_wrap_and_retire)
{
	struct su_opts o = { .send_wr = 32, .cqe = 16 };
	uint32_t posted = 0, completed = 0, sigs = 0;
	uint32_t last[DST_SLOTS];
	size_t dst0 = 1 << 19;
	struct su_pair p;
	struct ibv_wc wc;
	long end;
	int err, i;

	err = su_pair_open(&p, &o);
	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	ASSERT_EQ(32, p.cap.max_send_wr);

	/* Sources are regenerated only once a later CQE retired them. */
	end = su_now_ms() + 50000;
	while (completed < N_WRITES) {
		ASSERT_LT(su_now_ms(), end);
		while (posted < N_WRITES && posted - completed < 30) {
			size_t off = (posted % SRC_SLOTS) * 1024;
			struct ibv_sge s = su_sge(&p, off, 1024);
			int sig = posted % 16 == 15 || posted == N_WRITES - 1;
			uint32_t slot = posted % DST_SLOTS;

			su_fill(p.env.buf + off, 1024, posted);
			ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_RDMA_WRITE,
						  posted, &s, 1,
						  sig ? IBV_SEND_SIGNALED : 0,
						  su_addr(&p, dst0 + slot * 1024),
						  p.env.mr->rkey));
			last[slot] = posted;
			posted++;
		}
		if (!su_poll(p.cq[0], &wc, SU_TIMEOUT_MS))
			break;
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		ASSERT_EQ(IBV_WC_RDMA_WRITE, wc.opcode);
		/* Only the signalled ones complete, in order. */
		ASSERT_TRUE(wc.wr_id % 16 == 15 || wc.wr_id == N_WRITES - 1)
			TH_LOG("CQE for unsignalled WQE %lu", wc.wr_id);
		ASSERT_LE(completed, wc.wr_id);
		completed = wc.wr_id + 1;
		sigs++;
		/*
		 * Everything up to it is done, and with at most 30 WQEs in
		 * flight over 32 target slots its slot was not written since.
		 */
		ASSERT_EQ(wc.wr_id, last[wc.wr_id % DST_SLOTS]);
		ASSERT_EQ(-1, su_check(p.env.buf + dst0 + (wc.wr_id % DST_SLOTS) *
				       1024, 1024, wc.wr_id));
	}
	EXPECT_EQ(N_WRITES, completed);
	EXPECT_EQ((N_WRITES + 15) / 16, sigs);
	for (i = 0; i < DST_SLOTS; i++) {
		uint32_t w = last[i];

		EXPECT_EQ(-1, su_check(p.env.buf + dst0 + i * 1024, 1024, w))
			TH_LOG("slot %d, WQE %u", i, w);
	}
	EXPECT_EQ(0, su_poll(p.cq[0], &wc, 100));
	su_pair_close(&p);
}

TEST(sq_sig_all_signals_every_wqe)
{
	struct su_opts o = { .sig_all = 1 };
	struct su_pair p;
	struct ibv_sge s;
	struct ibv_wc wc;
	int err, i;

	err = su_pair_open(&p, &o);
	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	for (i = 0; i < 10; i++) {
		su_fill(p.env.buf + i * 512, 512, 300 + i);
		s = su_sge(&p, i * 512, 512);
		ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_RDMA_WRITE, i, &s, 1,
					  0, su_addr(&p, 65536 + i * 512),
					  p.env.mr->rkey));
	}
	for (i = 0; i < 10; i++) {
		ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
		EXPECT_EQ(i, wc.wr_id);
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(-1, su_check(p.env.buf + 65536 + i * 512, 512, 300 + i));
	}
	EXPECT_EQ(0, su_poll(p.cq[0], &wc, 100));
	su_pair_close(&p);
}

/* ------------------------------------------------------------------ */
/* RNR                                                                 */
/* ------------------------------------------------------------------ */

/* RNR timer code 24: 40.96 ms. */
#define RNR_TIMER 24
#define RNR_MS 40.96

TEST(rnr_waits_for_a_receive)
{
	struct su_opts o = { .rnr_retry = 7, .min_rnr_timer = RNR_TIMER };
	struct su_pair p;
	struct ibv_sge s, r;
	struct ibv_wc wc;
	int err;

	err = su_pair_open(&p, &o);
	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	su_fill(p.env.buf, 3000, 7);
	s = su_sge(&p, 0, 3000);
	r = su_sge(&p, 65536, 4096);
	ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_SEND, 1, &s, 1,
				  IBV_SEND_SIGNALED, 0, 0));
	/* rnr_retry 7 retries for ever: nothing happens meanwhile ... */
	EXPECT_EQ(0, su_poll(p.cq[0], &wc, 500));
	EXPECT_EQ(0, su_poll(p.cq[1], &wc, 10));
	EXPECT_EQ(-1, su_check_byte(p.env.buf + 65536, 4096, 0));
	/* ... and a receive lets the SEND through. */
	ASSERT_EQ(0, su_post_recv(p.qp[1], 2, &r, 1));
	ASSERT_EQ(1, su_poll(p.cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(3000, wc.byte_len);
	EXPECT_EQ(-1, su_check(p.env.buf + 65536, 3000, 7));
	ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(1, wc.wr_id);
	su_pair_close(&p);
}

TEST(rnr_retry_exceeded_then_flush)
{
	struct su_opts o = { .rnr_retry = 3, .min_rnr_timer = RNR_TIMER };
	struct su_pair p;
	struct ibv_sge s, r;
	struct ibv_wc wc;
	long t0, ms, naks, errs;
	int err;

	err = su_pair_open(&p, &o);
	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	su_fill(p.env.buf, 3000, 8);
	s = su_sge(&p, 0, 3000);
	naks = su_counter("rnr_naks");
	errs = su_counter("completion_errors");
	ASSERT_LE(0, naks) TH_LOG("no rnr_naks in rdma statistic");
	t0 = su_now_ms();
	ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_SEND, 1, &s, 1,
				  IBV_SEND_SIGNALED, 0, 0));
	/* Behind it: an unsignalled WRITE and a signalled SEND. */
	ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_RDMA_WRITE, 2, &s, 1, 0,
				  su_addr(&p, 131072), p.env.mr->rkey));
	ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_SEND, 3, &s, 1,
				  IBV_SEND_SIGNALED, 0, 0));

	ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
	ms = su_now_ms() - t0;
	EXPECT_EQ(1, wc.wr_id);
	EXPECT_EQ(IBV_WC_RNR_RETRY_EXC_ERR, wc.status)
		TH_LOG("%s", ibv_wc_status_str(wc.status));
	/* Three retries, each after the responder's RNR timer. */
	TH_LOG("RNR_RETRY_EXC_ERR after %ld ms (3 x %.2f ms timer)", ms,
	       RNR_MS);
	EXPECT_LE(2 * RNR_MS, ms);
	EXPECT_GT(5000, ms);
	ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(2, wc.wr_id);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
	ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(3, wc.wr_id);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
	EXPECT_EQ(IBV_QPS_ERR, su_qp_state(p.qp[0]));
	/* rdma statistic: the try and its three retries met an RNR NAK; one
	 * error completion (flushes are not errors of their own).
	 */
	EXPECT_EQ(naks + 4, su_counter_after("rnr_naks"));
	EXPECT_EQ(errs + 1, su_counter("completion_errors"));
	/* No byte moved; the responder is unharmed and got nothing. */
	EXPECT_EQ(-1, su_check_byte(p.env.buf + 131072, 3000, 0));
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(p.qp[1]));
	r = su_sge(&p, 65536, 4096);
	ASSERT_EQ(0, su_post_recv(p.qp[1], 9, &r, 1));
	EXPECT_EQ(0, su_poll(p.cq[1], &wc, 300));
	EXPECT_EQ(-1, su_check_byte(p.env.buf + 65536, 4096, 0));
	su_pair_close(&p);
}

/* rdma statistic: both QPs are vrnic0's, so a message counts once as sent
 * and once as received, with its bytes.
 */
TEST(traffic_counters_move)
{
	struct { const char *name; long want, before; } c[] = {
		{ "rdma_tx_msgs", 2, 0 }, { "rdma_tx_bytes", 8000, 0 },
		{ "rdma_rx_msgs", 2, 0 }, { "rdma_rx_bytes", 8000, 0 },
	};
	struct su_pair p;
	struct ibv_sge s, w, r;
	struct ibv_wc wc;
	unsigned int i;
	int err;

	err = su_pair_open(&p, NULL);
	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	for (i = 0; i < ARRAY_SIZE(c); i++) {
		c[i].before = su_counter(c[i].name);
		ASSERT_LE(0, c[i].before)
			TH_LOG("no %s in rdma statistic", c[i].name);
	}
	su_fill(p.env.buf, 8192, 9);
	s = su_sge(&p, 0, 3000);
	w = su_sge(&p, 0, 5000);
	r = su_sge(&p, 65536, 4096);
	ASSERT_EQ(0, su_post_recv(p.qp[1], 1, &r, 1));
	ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_SEND, 2, &s, 1,
				  IBV_SEND_SIGNALED, 0, 0));
	ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_RDMA_WRITE, 3, &w, 1,
				  IBV_SEND_SIGNALED, su_addr(&p, 131072),
				  p.env.mr->rkey));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	}
	ASSERT_EQ(1, su_poll(p.cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(-1, su_check(p.env.buf + 65536, 3000, 9));
	EXPECT_EQ(-1, su_check(p.env.buf + 131072, 5000, 9));
	for (i = 0; i < ARRAY_SIZE(c); i++) {
		EXPECT_EQ(c[i].before + c[i].want, su_counter(c[i].name))
			TH_LOG("%s", c[i].name);
	}
	su_pair_close(&p);
}

/* ------------------------------------------------------------------ */
/* Flush                                                               */
/* ------------------------------------------------------------------ */

TEST(error_flushes_the_rest)
{
	struct su_pair p;
	struct ibv_sge s, bad, r;
	struct ibv_wc wc;
	int err, i, sq = 0, rq = 0;
	uint64_t want_sq[] = { 1, 2, 3, 4, 5 };
	int want_st[] = { IBV_WC_SUCCESS, IBV_WC_LOC_PROT_ERR,
			  IBV_WC_WR_FLUSH_ERR, IBV_WC_WR_FLUSH_ERR,
			  IBV_WC_WR_FLUSH_ERR };

	err = su_pair_open(&p, NULL);
	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	su_fill(p.env.buf, 65536, 10);
	s = su_sge(&p, 0, 4096);
	bad = su_sge(&p, 4096, 4096);
	bad.lkey ^= 0x3c00;
	r = su_sge(&p, 200000, 4096);

	/* Receives on the requester QP: they get flushed too. */
	ASSERT_EQ(0, su_post_recv(p.qp[0], 101, &r, 1));
	ASSERT_EQ(0, su_post_recv(p.qp[0], 102, &r, 1));
	/* A receive on the responder for the SEND that must never come. */
	ASSERT_EQ(0, su_post_recv(p.qp[1], 201, &r, 1));

	ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_RDMA_WRITE, 1, &s, 1,
				  IBV_SEND_SIGNALED, su_addr(&p, 300000),
				  p.env.mr->rkey));
	/* Unsignalled, bad lkey: completes anyway, in error. */
	ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_RDMA_WRITE, 2, &bad, 1, 0,
				  su_addr(&p, 310000), p.env.mr->rkey));
	ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_SEND, 3, &s, 1, 0, 0, 0));
	ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_RDMA_WRITE, 4, &s, 1,
				  IBV_SEND_SIGNALED, su_addr(&p, 320000),
				  p.env.mr->rkey));
	ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_RDMA_READ, 5, &s, 1, 0,
				  su_addr(&p, 330000), p.env.mr->rkey));

	while (sq < 5 || rq < 2) {
		ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS))
			TH_LOG("have %d SQ and %d RQ completions", sq, rq);
		if (wc.opcode & IBV_WC_RECV && wc.wr_id > 100) {
			EXPECT_EQ(101 + rq, wc.wr_id);
			EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
			rq++;
			continue;
		}
		ASSERT_GT(5, sq);
		EXPECT_EQ(want_sq[sq], wc.wr_id);
		EXPECT_EQ(want_st[sq], wc.status)
			TH_LOG("WQE %lu: %s", wc.wr_id,
			       ibv_wc_status_str(wc.status));
		sq++;
	}
	EXPECT_EQ(IBV_QPS_ERR, su_qp_state(p.qp[0]));
	/* Only the first WRITE moved bytes. */
	EXPECT_EQ(-1, su_check(p.env.buf + 300000, 4096, 10));
	EXPECT_EQ(-1, su_check_byte(p.env.buf + 310000, 4096, 0));
	EXPECT_EQ(-1, su_check_byte(p.env.buf + 320000, 4096, 0));
	EXPECT_EQ(-1, su_check(p.env.buf, 4096, 10));
	EXPECT_EQ(-1, su_check_byte(p.env.buf + 200000, 4096, 0));
	EXPECT_EQ(0, su_poll(p.cq[1], &wc, 200));

	/* Posting to a QP in ERR: flushed straight away. */
	ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_RDMA_WRITE, 6, &s, 1, 0,
				  su_addr(&p, 340000), p.env.mr->rkey));
	ASSERT_EQ(0, su_post_recv(p.qp[0], 103, &r, 1));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
		EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
		EXPECT_TRUE(wc.wr_id == 6 || wc.wr_id == 103);
	}
	EXPECT_EQ(-1, su_check_byte(p.env.buf + 340000, 4096, 0));
	EXPECT_EQ(0, su_poll(p.cq[0], &wc, 100));
	su_pair_close(&p);
}

/* ------------------------------------------------------------------ */
/* SQD, inline at the maximum                                          */
/* ------------------------------------------------------------------ */

TEST(sqd_drains_then_resumes)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_SQD,
				 .en_sqd_async_notify = 1 };
	struct su_pair p;
	struct ibv_sge s;
	struct ibv_wc wc;
	int err, i;

	err = su_pair_open(&p, NULL);
	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	su_fill(p.env.buf, 65536, 90);
	s = su_sge(&p, 0, 65536);
	ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_RDMA_WRITE, 1, &s, 1,
				  IBV_SEND_SIGNALED, su_addr(&p, 262144),
				  p.env.mr->rkey));
	ASSERT_EQ(0, ibv_modify_qp(p.qp[0], &a,
				   IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY));
	EXPECT_TRUE(su_wait_async(p.env.ctx, IBV_EVENT_SQ_DRAINED, p.qp[0],
				  SU_TIMEOUT_MS));
	/* What was posted before SQD is done. */
	ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(1, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(-1, su_check(p.env.buf + 262144, 65536, 90));
	EXPECT_EQ(IBV_QPS_SQD, su_qp_state(p.qp[0]));

	/* Posted in SQD: held, no byte moves ... */
	su_fill(p.env.buf + 65536, 65536, 91);
	s = su_sge(&p, 65536, 65536);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, su_post_send(p.qp[0], IBV_WR_RDMA_WRITE, 10 + i,
					  &s, 1, IBV_SEND_SIGNALED,
					  su_addr(&p, 393216 + i * 65536),
					  p.env.mr->rkey));
	}
	EXPECT_EQ(0, su_poll(p.cq[0], &wc, 300));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(-1, su_check_byte(p.env.buf + 393216 + i * 65536, 65536, 0));
	/* The responder still works meanwhile (its RQ is not drained). */
	EXPECT_EQ(IBV_QPS_RTS, su_qp_state(p.qp[1]));

	/* ... until RTS again. */
	a.qp_state = IBV_QPS_RTS;
	ASSERT_EQ(0, ibv_modify_qp(p.qp[0], &a, IBV_QP_STATE));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
		EXPECT_EQ(10 + i, wc.wr_id);
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(-1, su_check(p.env.buf + 393216 + i * 65536, 65536, 91));
	}
	su_pair_close(&p);
}

TEST(inline_at_the_maximum)
{
	static const uint32_t want[] = { 1992, 968, 456, 200, 72 };
	struct su_opts o = {};
	struct ibv_sge s[4];
	struct su_pair p;
	struct ibv_wc wc;
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = s,
				  .send_flags = IBV_SEND_SIGNALED |
						IBV_SEND_INLINE };
	struct ibv_send_wr *bad;
	uint8_t *msg;
	uint32_t max = 0, q;
	unsigned int i;
	int err = -1;

	/* The largest inline size the device gives a QP. */
	for (i = 0; i < sizeof(want) / sizeof(want[0]) && err; i++) {
		o.inline_data = want[i];
		err = su_pair_open(&p, &o);
		if (err)
			su_pair_close(&p);
	}
	ASSERT_EQ(0, err);
	max = p.cap.max_inline_data;
	TH_LOG("max_inline_data %u", max);
	ASSERT_LE(o.inline_data, max);
	msg = malloc(max + 1);
	ASSERT_NE(NULL, msg);

	/* SEND of exactly max bytes in four inline pieces. */
	su_fill(msg, max, 95);
	q = max / 4;
	for (i = 0; i < 4; i++) {
		s[i].addr = (uintptr_t)msg + i * q;
		s[i].length = i < 3 ? q : max - 3 * q;
		s[i].lkey = 0;
	}
	wr.num_sge = 4;
	wr.opcode = IBV_WR_SEND;
	s[0].lkey = 0;
	{
		struct ibv_sge r = su_sge(&p, 65536, 4096);

		ASSERT_EQ(0, su_post_recv(p.qp[1], 2, &r, 1));
	}
	ASSERT_EQ(0, ibv_post_send(p.qp[0], &wr, &bad));
	memset(msg, 0, max);	/* copied at post time */
	ASSERT_EQ(1, su_poll(p.cq[1], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(max, wc.byte_len);
	EXPECT_EQ(-1, su_check(p.env.buf + 65536, max, 95));
	EXPECT_EQ(-1, su_check_byte(p.env.buf + 65536 + max, 4096 - max, 0));
	ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);

	/* RDMA WRITE of max inline bytes. */
	su_fill(msg, max, 96);
	s[0].addr = (uintptr_t)msg;
	s[0].length = max;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = su_addr(&p, 131072);
	wr.wr.rdma.rkey = p.env.mr->rkey;
	ASSERT_EQ(0, ibv_post_send(p.qp[0], &wr, &bad));
	ASSERT_EQ(1, su_poll(p.cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(-1, su_check(p.env.buf + 131072, max, 96));

	/* One byte more is refused before it reaches the ring. */
	s[0].length = max + 1;
	EXPECT_EQ(EINVAL, ibv_post_send(p.qp[0], &wr, &bad));
	EXPECT_EQ(0, su_poll(p.cq[0], &wc, 100));
	free(msg);
	su_pair_close(&p);
}

/* ------------------------------------------------------------------ */
/* The error table (device interface 14.4), one row per variant        */
/* ------------------------------------------------------------------ */

enum err_kind {
	E_RECV_TOO_SHORT,
	E_RECV_BAD_LKEY,
	E_RECV_NO_LOCAL_WRITE,
	E_ATOMIC_MISALIGNED,
	E_READ_NO_RD_ATOMIC,
	E_ATOMIC_NO_RD_ATOMIC,
	E_WRITE_PAST_MR,
	E_LOCAL_SGE_PAST_MR,
	E_LEN_32BIT_WRAP,
	E_LEN_OVER_MAX_MSG,
	E_ZERO_LEN_BAD_RKEY,
};

FIXTURE(errtab) {
	struct su_verifier v;	/* another process, unharmed throughout */
	struct su_pair p;
	uint8_t *tbuf;		/* 64 KiB; the MR covers the first 32 KiB */
	struct ibv_mr *tmr;
};

FIXTURE_VARIANT(errtab) {
	enum err_kind kind;
	enum ibv_wc_status req;	/* requester CQE */
	int resp_cqe;		/* responder receive CQE status, -1: none */
	int resp_event;		/* responder async event, 0: none */
	int resp_err;		/* the responder QP ends in ERR */
};

FIXTURE_VARIANT_ADD(errtab, recv_too_short) {
	.kind = E_RECV_TOO_SHORT, .req = IBV_WC_REM_INV_REQ_ERR,
	.resp_cqe = IBV_WC_LOC_LEN_ERR, .resp_err = 1,
};
FIXTURE_VARIANT_ADD(errtab, recv_bad_lkey) {
	.kind = E_RECV_BAD_LKEY, .req = IBV_WC_REM_OP_ERR,
	.resp_cqe = IBV_WC_LOC_PROT_ERR, .resp_err = 1,
};
FIXTURE_VARIANT_ADD(errtab, recv_mr_without_local_write) {
	.kind = E_RECV_NO_LOCAL_WRITE, .req = IBV_WC_REM_OP_ERR,
	.resp_cqe = IBV_WC_LOC_PROT_ERR, .resp_err = 1,
};
FIXTURE_VARIANT_ADD(errtab, atomic_misaligned) {
	.kind = E_ATOMIC_MISALIGNED, .req = IBV_WC_REM_INV_REQ_ERR,
	.resp_cqe = -1, .resp_event = IBV_EVENT_QP_REQ_ERR, .resp_err = 1,
};
FIXTURE_VARIANT_ADD(errtab, read_with_no_rd_atomic) {
	.kind = E_READ_NO_RD_ATOMIC, .req = IBV_WC_REM_INV_REQ_ERR,
	.resp_cqe = -1, .resp_event = IBV_EVENT_QP_REQ_ERR, .resp_err = 1,
};
FIXTURE_VARIANT_ADD(errtab, atomic_with_no_rd_atomic) {
	.kind = E_ATOMIC_NO_RD_ATOMIC, .req = IBV_WC_REM_INV_REQ_ERR,
	.resp_cqe = -1, .resp_event = IBV_EVENT_QP_REQ_ERR, .resp_err = 1,
};
FIXTURE_VARIANT_ADD(errtab, write_past_end_of_mr) {
	.kind = E_WRITE_PAST_MR, .req = IBV_WC_REM_ACCESS_ERR,
	.resp_cqe = -1, .resp_event = IBV_EVENT_QP_ACCESS_ERR, .resp_err = 1,
};
FIXTURE_VARIANT_ADD(errtab, local_sge_past_end_of_mr) {
	.kind = E_LOCAL_SGE_PAST_MR, .req = IBV_WC_LOC_PROT_ERR,
	.resp_cqe = -1,
};
FIXTURE_VARIANT_ADD(errtab, length_wraps_32_bits) {
	.kind = E_LEN_32BIT_WRAP, .req = IBV_WC_LOC_LEN_ERR, .resp_cqe = -1,
};
FIXTURE_VARIANT_ADD(errtab, length_over_max_msg_sz) {
	.kind = E_LEN_OVER_MAX_MSG, .req = IBV_WC_LOC_LEN_ERR, .resp_cqe = -1,
};
FIXTURE_VARIANT_ADD(errtab, zero_length_skips_rkey_check) {
	.kind = E_ZERO_LEN_BAD_RKEY, .req = IBV_WC_SUCCESS, .resp_cqe = -1,
};

FIXTURE_SETUP(errtab)
{
	struct su_opts o = {
		.no_rd_atomic = variant->kind == E_READ_NO_RD_ATOMIC ||
				variant->kind == E_ATOMIC_NO_RD_ATOMIC,
	};
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	int err;

	if (variant->kind == E_RECV_NO_LOCAL_WRITE)
		access = IBV_ACCESS_REMOTE_READ;
	ASSERT_EQ(0, su_verifier_start(&self->v));
	err = su_pair_open(&self->p, &o);
	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	self->tbuf = aligned_alloc(4096, 65536);
	ASSERT_NE(NULL, self->tbuf);
	su_fill(self->tbuf, 65536, 2);
	self->tmr = ibv_reg_mr(self->p.env.pd, self->tbuf, 32768, access);
	ASSERT_NE(NULL, self->tmr);
}

FIXTURE_TEARDOWN(errtab)
{
	if (self->tmr)
		ibv_dereg_mr(self->tmr);
	free(self->tbuf);
	su_pair_close(&self->p);
	SU_EXPECT_VERIFIER_UNHARMED(&self->v, 1);
}

TEST_F(errtab, row)
{
	struct su_pair *p = &self->p;
	uint8_t *remote = p->env.buf + 524288, *local = p->env.buf;
	struct ibv_sge s[2], r;
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = s, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int st;

	su_fill(local, 65536, 1);
	su_fill(remote, 65536, 2);
	s[0] = su_sge(p, 0, 4096);
	wr.wr.rdma.remote_addr = (uintptr_t)remote;
	wr.wr.rdma.rkey = p->env.mr->rkey;

	switch (variant->kind) {
	case E_RECV_TOO_SHORT:
		r = su_sge(p, 524288, 1024);
		wr.opcode = IBV_WR_SEND;
		break;
	case E_RECV_BAD_LKEY:
		r = su_sge(p, 524288, 4096);
		r.lkey ^= 0x3c00;
		wr.opcode = IBV_WR_SEND;
		break;
	case E_RECV_NO_LOCAL_WRITE:
		r.addr = (uintptr_t)self->tbuf;
		r.length = 4096;
		r.lkey = self->tmr->lkey;
		remote = self->tbuf;
		wr.opcode = IBV_WR_SEND;
		break;
	case E_ATOMIC_MISALIGNED:
	case E_ATOMIC_NO_RD_ATOMIC:
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		s[0].length = 8;
		wr.wr.atomic.remote_addr = (uintptr_t)remote +
			(variant->kind == E_ATOMIC_MISALIGNED ? 4 : 0);
		wr.wr.atomic.rkey = p->env.mr->rkey;
		wr.wr.atomic.compare_add = 1;
		break;
	case E_READ_NO_RD_ATOMIC:
		wr.opcode = IBV_WR_RDMA_READ;
		break;
	case E_WRITE_PAST_MR:
		/* 100 bytes inside the MR, the rest past its end. */
		remote = self->tbuf;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = (uintptr_t)self->tbuf + 32768 - 100;
		wr.wr.rdma.rkey = self->tmr->rkey;
		break;
	case E_LOCAL_SGE_PAST_MR:
		local = self->tbuf;
		s[0].addr = (uintptr_t)self->tbuf + 32768 - 100;
		s[0].lkey = self->tmr->lkey;
		wr.opcode = IBV_WR_RDMA_WRITE;
		break;
	case E_LEN_32BIT_WRAP:
		/* 0xffffffff + 2 is 1 in 32 bits. */
		s[0].length = 0xffffffff;
		s[1] = su_sge(p, 8192, 2);
		wr.num_sge = 2;
		wr.opcode = IBV_WR_RDMA_WRITE;
		break;
	case E_LEN_OVER_MAX_MSG:
		s[0].length = 0x80000001;
		wr.opcode = IBV_WR_RDMA_WRITE;
		break;
	case E_ZERO_LEN_BAD_RKEY:
		wr.num_sge = 0;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.rkey ^= 0x5a5a00;
		wr.wr.rdma.remote_addr = 0x1000;
		break;
	}
	if (wr.opcode == IBV_WR_SEND) {
		ASSERT_EQ(0, su_post_recv(p->qp[1], 77, &r, 1));
	}
	ASSERT_EQ(0, ibv_post_send(p->qp[0], &wr, &bad));

	ASSERT_EQ(1, su_poll(p->cq[0], &wc, SU_TIMEOUT_MS));
	EXPECT_EQ(1, wc.wr_id);
	EXPECT_EQ(variant->req, wc.status) TH_LOG("requester: %s",
						  ibv_wc_status_str(wc.status));
	st = su_poll(p->cq[1], &wc, variant->resp_cqe >= 0 ? SU_TIMEOUT_MS : 200);
	if (variant->resp_cqe >= 0) {
		ASSERT_EQ(1, st);
		EXPECT_EQ(77, wc.wr_id);
		EXPECT_EQ(variant->resp_cqe, wc.status)
			TH_LOG("responder: %s", ibv_wc_status_str(wc.status));
	} else {
		EXPECT_EQ(0, st);
	}
	if (variant->resp_event) {
		EXPECT_TRUE(su_wait_async(p->env.ctx, variant->resp_event,
					  p->qp[1], SU_TIMEOUT_MS));
	}
	EXPECT_EQ(variant->req == IBV_WC_SUCCESS ? IBV_QPS_RTS : IBV_QPS_ERR,
		  su_qp_state(p->qp[0]));
	EXPECT_EQ(variant->resp_err ? IBV_QPS_ERR : IBV_QPS_RTS,
		  su_qp_state(p->qp[1]));

	/* No byte moved, except where a partial receive is undefined. */
	if (variant->kind != E_RECV_TOO_SHORT) {
		EXPECT_EQ(-1, su_check(remote, 65536, 2));
	}
	EXPECT_EQ(-1, su_check(local, 65536, local == self->tbuf ? 2 : 1));
	EXPECT_EQ(-1, su_check(self->tbuf, 65536, 2));
}

TEST_HARNESS_MAIN
