// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions:
 * - pinning is accounted to the process: ibv_reg_mr raises VmPin by the
 *   pages the range touches (twice for two MRs on the same pages), dereg
 *   lowers it again, and the pinned pages carry data both ways;
 * - RLIMIT_MEMLOCK is enforced for a process without CAP_IPC_LOCK: a
 *   registration past the limit fails with ENOMEM and leaves no MR and no
 *   pinned page behind, while one up to the limit works;
 * - page lists: a 16 MiB MR (two-level list), an MR over transparent huge
 *   pages starting inside one, and an MR registered at an IOVA other than
 *   its address carry the right bytes across every page boundary, and
 *   refuse what lies outside them;
 * - ibv_rereg_mr moves an MR to new pages (the old ones keep their bytes),
 *   changes its rights or PD as the device then enforces, gives it new
 *   keys (the old rkey is stale), and leaves it as it was when it fails;
 * - access rights are enforced by the device: a remote WRITE, READ or
 *   atomic on an MR (or through a QP) without the matching right, an rkey
 *   of another PD, and a READ into a local MR without LOCAL_WRITE complete
 *   in error and move no byte; the same request with the right succeeds;
 *   a forked bystander process (su_verifier) moves verified bytes through
 *   every case unharmed;
 * - QP and CQ rings of a process are kernel memory mapped into it: the
 *   driver charges them to the process's locked memory (VmPin, against
 *   RLIMIT_MEMLOCK) as ib_umem_get() charges pinned MR pages, refuses a
 *   ring past the limit with ENOMEM unless the caller has CAP_IPC_LOCK,
 *   and gives the charge back when the ring goes. Each test runs in its
 *   own process (the harness forks), so its limit and capabilities stay
 *   there.
 */
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "suite.h"
#include "kselftest_harness.h"

#define KB(pages) ((long)(pages) * 4)

/* One RDMA op on a connected pair; the completion's status (or -1). */
static int rdma_op(struct su_pair *p, enum ibv_wr_opcode op, void *laddr,
		   uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge s = { (uintptr_t)laddr, len, lkey };
	struct ibv_send_wr wr = {
		.wr_id = 42, .sg_list = &s, .num_sge = 1, .opcode = op,
	};
	struct ibv_wc wc;

	if (op != IBV_WR_ATOMIC_FETCH_AND_ADD)
		return su_rdma_op(p->qp[0], p->cq[0], op, laddr, len, lkey,
				  raddr, rkey, &wc);
	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = 1;
	return su_post_wait(p->qp[0], p->cq[0], &wr, &wc);
}

TEST(vmpin_follows_reg_and_dereg)
{
	struct ibv_mr *big, *odd, *twice[2];
	struct su_pair p;
	long base, kb;
	uint8_t *mem;
	int err;

	err = su_pair_open(&p, NULL);
	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	base = su_vmpin_kb(0);
	ASSERT_LE(KB(256), base);	/* the pair's own 1 MiB MR */

	mem = mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);

	/* 2 MiB, page aligned: 512 pages. */
	big = ibv_reg_mr(p.env.pd, mem, 2 << 20, SU_MR_ALL);
	ASSERT_NE(NULL, big);
	EXPECT_EQ(base + KB(512), su_vmpin_kb(0));

	/* Two bytes across a page boundary pin both pages. */
	odd = ibv_reg_mr(p.env.pd, mem + (3 << 20) - 1, 2, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, odd);
	EXPECT_EQ(base + KB(514), su_vmpin_kb(0));

	/* Two MRs on the same 16 pages are accounted twice. */
	twice[0] = ibv_reg_mr(p.env.pd, mem + (3 << 20) + 8192, 65536,
			      IBV_ACCESS_LOCAL_WRITE);
	twice[1] = ibv_reg_mr(p.env.pd, mem + (3 << 20) + 8192, 65536,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, twice[0]);
	ASSERT_NE(NULL, twice[1]);
	EXPECT_EQ(base + KB(514 + 32), su_vmpin_kb(0));

	/* The pinned pages carry data: WRITE into big, READ back via twice. */
	su_fill(p.env.buf, 65536, 5);
	EXPECT_EQ(IBV_WC_SUCCESS,
		  rdma_op(&p, IBV_WR_RDMA_WRITE, p.env.buf, 65536, p.env.mr->lkey,
			  (uintptr_t)mem + 4096, big->rkey));
	EXPECT_EQ(-1, su_check(mem + 4096, 65536, 5));
	su_fill(mem + (3 << 20) + 8192, 65536, 6);
	memset(p.env.buf + 65536, 0, 65536);
	EXPECT_EQ(IBV_WC_SUCCESS,
		  rdma_op(&p, IBV_WR_RDMA_READ, p.env.buf + 65536, 65536,
			  p.env.mr->lkey, (uintptr_t)mem + (3 << 20) + 8192,
			  twice[1]->rkey));
	EXPECT_EQ(-1, su_check(p.env.buf + 65536, 65536, 6));

	/* Each dereg gives back exactly its pages. */
	ASSERT_EQ(0, ibv_dereg_mr(twice[0]));
	EXPECT_EQ(base + KB(514 + 16), su_vmpin_kb(0));
	ASSERT_EQ(0, ibv_dereg_mr(twice[1]));
	EXPECT_EQ(base + KB(514), su_vmpin_kb(0));
	ASSERT_EQ(0, ibv_dereg_mr(big));
	EXPECT_EQ(base + KB(2), su_vmpin_kb(0));
	ASSERT_EQ(0, ibv_dereg_mr(odd));
	EXPECT_EQ(base, su_vmpin_kb(0));
	munmap(mem, 4 << 20);

	su_pair_close(&p);
	kb = su_vmpin_kb(0);
	EXPECT_EQ(0, kb);
}

/* ------------------------------------------------------------------ */
/* RLIMIT_MEMLOCK without CAP_IPC_LOCK                                 */
/* ------------------------------------------------------------------ */

static int drop_cap_ipc_lock(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
	d[CAP_IPC_LOCK / 32].permitted &= ~(1u << (CAP_IPC_LOCK % 32));
	d[CAP_IPC_LOCK / 32].inheritable &= ~(1u << (CAP_IPC_LOCK % 32));
	if (syscall(SYS_capset, &h, d))
		return -1;
	return prctl(PR_CAPBSET_DROP, CAP_IPC_LOCK, 0, 0, 0);
}

static int have_cap_ipc_lock(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	return !!(d[CAP_IPC_LOCK / 32].effective & (1u << (CAP_IPC_LOCK % 32)));
}

#define LIMIT_PAGES 128		/* RLIMIT_MEMLOCK beyond the pair's MR and rings */

static void memlock_child(void)
{
	struct su_opts o = { .buf_size = 64 << 10 };	/* 16 pages */
	struct ibv_mr *a, *b, *c;
	struct su_res r0, r1;
	struct rlimit rl;
	struct su_pair p;
	uint8_t *mem;
	long base;

	CHILD_CHECK(su_pair_open(&p, &o) == 0);
	/* The pair's MR and its rings, which are locked memory too. */
	base = su_vmpin_kb(0);
	CHILD_CHECK(base > KB(16));
	mem = mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	CHILD_CHECK(mem != MAP_FAILED);

	rl.rlim_cur = rl.rlim_max = base * 1024 + LIMIT_PAGES * 4096;
	CHILD_CHECK(!setrlimit(RLIMIT_MEMLOCK, &rl));

	/* Root with CAP_IPC_LOCK is not bound by the limit ... */
	CHILD_CHECK(have_cap_ipc_lock() == 1);
	a = ibv_reg_mr(p.env.pd, mem, 1 << 20, IBV_ACCESS_LOCAL_WRITE);
	CHILD_CHECK(a);
	CHILD_CHECK(su_vmpin_kb(0) == base + KB(256));
	CHILD_CHECK(!ibv_dereg_mr(a));
	CHILD_CHECK(su_vmpin_kb(0) == base);

	/* ... without it, it is. */
	CHILD_CHECK(!drop_cap_ipc_lock());
	CHILD_CHECK(have_cap_ipc_lock() == 0);

	a = ibv_reg_mr(p.env.pd, mem, LIMIT_PAGES / 2 * 4096, SU_MR_ALL);
	CHILD_CHECK(a);
	CHILD_CHECK(!su_res_get(&r0));
	CHILD_CHECK(su_vmpin_kb(0) == base + KB(LIMIT_PAGES / 2));
	/* One page more than is left: refused, nothing pinned or created. */
	errno = 0;
	b = ibv_reg_mr(p.env.pd, mem + (1 << 20), (LIMIT_PAGES / 2 + 1) * 4096,
		       IBV_ACCESS_LOCAL_WRITE);
	CHILD_CHECK(!b);
	CHILD_CHECK(errno == ENOMEM);
	CHILD_CHECK(su_vmpin_kb(0) == base + KB(LIMIT_PAGES / 2));
	CHILD_CHECK(!su_res_get(&r1));
	CHILD_CHECK(su_res_equal(&r0, &r1));
	/* Exactly what is left fits. */
	b = ibv_reg_mr(p.env.pd, mem + (1 << 20), LIMIT_PAGES / 2 * 4096,
		       IBV_ACCESS_LOCAL_WRITE);
	CHILD_CHECK(b);
	CHILD_CHECK(su_vmpin_kb(0) == base + KB(LIMIT_PAGES));
	/* Now even one page is too much. */
	errno = 0;
	c = ibv_reg_mr(p.env.pd, mem + (2 << 20), 1, IBV_ACCESS_LOCAL_WRITE);
	CHILD_CHECK(!c && errno == ENOMEM);

	/* The MR inside the limit works: bytes in and out. */
	su_fill(p.env.buf, 32768, 9);
	CHILD_CHECK(rdma_op(&p, IBV_WR_RDMA_WRITE, p.env.buf, 32768, p.env.mr->lkey,
			    (uintptr_t)mem + 4096, a->rkey) == IBV_WC_SUCCESS);
	CHILD_CHECK(su_check(mem + 4096, 32768, 9) == -1);

	/* Freeing gives the room back. */
	CHILD_CHECK(!ibv_dereg_mr(b));
	CHILD_CHECK(!ibv_dereg_mr(a));
	CHILD_CHECK(su_vmpin_kb(0) == base);
	a = ibv_reg_mr(p.env.pd, mem, LIMIT_PAGES * 4096, IBV_ACCESS_LOCAL_WRITE);
	CHILD_CHECK(a);
	CHILD_CHECK(!ibv_dereg_mr(a));
	su_pair_close(&p);
	CHILD_CHECK(su_vmpin_kb(0) == 0);
	_exit(0);
}

TEST(memlock_limit_without_cap_ipc_lock)
{
	struct su_res before, after;
	pid_t pid;
	int st;

	ASSERT_EQ(0, su_res_get(&before));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		memlock_child();
	st = su_wait_child(pid, 25000);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("child status %#x", st);
	EXPECT_EQ(0, su_res_wait(&before, &after, 5000));
}

/* ------------------------------------------------------------------ */
/* Access rights                                                       */
/* ------------------------------------------------------------------ */

FIXTURE(access) {
	struct su_verifier v;	/* another process, unharmed throughout */
	struct su_pair p;
	struct ibv_pd *pd2;
	struct ibv_mr *tmr;	/* the target MR */
	uint8_t *tbuf;
};

FIXTURE_VARIANT(access) {
	enum ibv_wr_opcode op;
	int mr_access;		/* target MR (remote) or local MR (READ dst) */
	int qp_access;		/* responder QP, 0: all */
	int other_pd;		/* target MR in another PD */
	int local;		/* the restricted MR is the local one */
	enum ibv_wc_status want;
};

#define ALL_REMOTE (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		    IBV_ACCESS_REMOTE_ATOMIC)

FIXTURE_VARIANT_ADD(access, write_allowed) {
	.op = IBV_WR_RDMA_WRITE, .mr_access = IBV_ACCESS_LOCAL_WRITE |
	IBV_ACCESS_REMOTE_WRITE, .want = IBV_WC_SUCCESS,
};

FIXTURE_VARIANT_ADD(access, write_without_remote_write) {
	.op = IBV_WR_RDMA_WRITE, .mr_access = IBV_ACCESS_LOCAL_WRITE |
	IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	.want = IBV_WC_REM_ACCESS_ERR,
};

FIXTURE_VARIANT_ADD(access, write_qp_without_remote_write) {
	.op = IBV_WR_RDMA_WRITE, .mr_access = SU_MR_ALL,
	.qp_access = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	.want = IBV_WC_REM_ACCESS_ERR,
};

FIXTURE_VARIANT_ADD(access, write_rkey_of_other_pd) {
	.op = IBV_WR_RDMA_WRITE, .mr_access = SU_MR_ALL, .other_pd = 1,
	.want = IBV_WC_REM_ACCESS_ERR,
};

FIXTURE_VARIANT_ADD(access, read_allowed) {
	.op = IBV_WR_RDMA_READ, .mr_access = IBV_ACCESS_REMOTE_READ,
	.want = IBV_WC_SUCCESS,
};

FIXTURE_VARIANT_ADD(access, read_without_remote_read) {
	.op = IBV_WR_RDMA_READ, .mr_access = IBV_ACCESS_LOCAL_WRITE |
	IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
	.want = IBV_WC_REM_ACCESS_ERR,
};

FIXTURE_VARIANT_ADD(access, read_qp_without_remote_read) {
	.op = IBV_WR_RDMA_READ, .mr_access = SU_MR_ALL,
	.qp_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
	.want = IBV_WC_REM_ACCESS_ERR,
};

FIXTURE_VARIANT_ADD(access, read_into_mr_without_local_write) {
	.op = IBV_WR_RDMA_READ, .mr_access = IBV_ACCESS_REMOTE_READ,
	.local = 1, .want = IBV_WC_LOC_PROT_ERR,
};

FIXTURE_VARIANT_ADD(access, atomic_allowed) {
	.op = IBV_WR_ATOMIC_FETCH_AND_ADD, .mr_access = IBV_ACCESS_LOCAL_WRITE |
	IBV_ACCESS_REMOTE_ATOMIC, .want = IBV_WC_SUCCESS,
};

FIXTURE_VARIANT_ADD(access, atomic_without_remote_atomic) {
	.op = IBV_WR_ATOMIC_FETCH_AND_ADD, .mr_access = IBV_ACCESS_LOCAL_WRITE |
	IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	.want = IBV_WC_REM_ACCESS_ERR,
};

FIXTURE_SETUP(access)
{
	struct su_opts o = { .qp_access = variant->qp_access };
	struct ibv_pd *pd;
	int err;

	ASSERT_EQ(0, su_verifier_start(&self->v));
	err = su_pair_open(&self->p, &o);
	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	self->tbuf = aligned_alloc(4096, 65536);
	ASSERT_NE(NULL, self->tbuf);
	pd = self->p.env.pd;
	if (variant->other_pd) {
		self->pd2 = ibv_alloc_pd(self->p.env.ctx);
		ASSERT_NE(NULL, self->pd2);
		pd = self->pd2;
	}
	self->tmr = ibv_reg_mr(pd, self->tbuf, 65536, variant->mr_access);
	ASSERT_NE(NULL, self->tmr) TH_LOG("reg_mr %#x: %s", variant->mr_access,
					   strerror(errno));
}

FIXTURE_TEARDOWN(access)
{
	if (self->tmr)
		ibv_dereg_mr(self->tmr);
	if (self->pd2)
		ibv_dealloc_pd(self->pd2);
	free(self->tbuf);
	su_pair_close(&self->p);
	SU_EXPECT_VERIFIER_UNHARMED(&self->v, 1);
}

TEST_F(access, enforced)
{
	struct su_pair *p = &self->p;
	uint8_t *local = p->env.buf, *remote = p->env.buf + 262144;
	uint32_t lkey = p->env.mr->lkey, rkey = p->env.mr->rkey;
	uint32_t len = variant->op == IBV_WR_ATOMIC_FETCH_AND_ADD ? 8 : 16384;
	int ok = variant->want == IBV_WC_SUCCESS, status;
	uint64_t before;

	/* The MR under test is the remote target, or the local buffer. */
	if (variant->local) {
		local = self->tbuf;
		lkey = self->tmr->lkey;
	} else {
		remote = self->tbuf;
		rkey = self->tmr->rkey;
	}
	su_fill(local, len, 1);
	su_fill(remote, len, 2);
	memcpy(&before, remote, 8);

	status = rdma_op(p, variant->op, local, len, lkey, (uintptr_t)remote,
			 rkey);
	ASSERT_EQ(variant->want, status) TH_LOG("got %s",
		status < 0 ? "no completion" : ibv_wc_status_str(status));

	switch (variant->op) {
	case IBV_WR_RDMA_WRITE:
		/* The target holds the new bytes, or still its old ones. */
		EXPECT_EQ(-1, su_check(remote, len, ok ? 1 : 2));
		break;
	case IBV_WR_RDMA_READ:
		EXPECT_EQ(-1, su_check(local, len, ok ? 2 : 1));
		EXPECT_EQ(-1, su_check(remote, len, 2));
		break;
	default:
		if (ok) {
			uint64_t after = before + 1;

			EXPECT_EQ(0, memcmp(local, &before, 8));
			EXPECT_EQ(0, memcmp(remote, &after, 8));
		} else {
			EXPECT_EQ(-1, su_check(local, len, 1));
			EXPECT_EQ(-1, su_check(remote, len, 2));
		}
		break;
	}

	if (ok) {
		EXPECT_EQ(IBV_QPS_RTS, su_qp_state(p->qp[0]));
		EXPECT_EQ(IBV_QPS_RTS, su_qp_state(p->qp[1]));
		return;
	}
	/* The requester is in ERR; a remote violation also stops the
	 * responder with an access-error event.
	 */
	EXPECT_EQ(IBV_QPS_ERR, su_qp_state(p->qp[0]));
	if (variant->want == IBV_WC_REM_ACCESS_ERR) {
		EXPECT_TRUE(su_wait_async(p->env.ctx, IBV_EVENT_QP_ACCESS_ERR,
					  p->qp[1], SU_TIMEOUT_MS));
		EXPECT_EQ(IBV_QPS_ERR, su_qp_state(p->qp[1]));
	} else {
		EXPECT_EQ(IBV_QPS_RTS, su_qp_state(p->qp[1]));
	}
}

/* ------------------------------------------------------------------ */
/* Page lists: two levels, huge pages, an IOVA that is not the address */
/* ------------------------------------------------------------------ */

/*
 * WRITE @len bytes from the pair's buffer to @raddr (rkey @rkey), READ
 * them back into another part of the pair's buffer; 0 if the bytes at
 * @where (the local view of @raddr) and the read-back copy are right.
 */
static int write_read_back(struct su_pair *p, uint64_t raddr, uint32_t rkey,
			   uint8_t *where, uint32_t len, unsigned int seed)
{
	su_fill(p->env.buf, len, seed);
	memset(p->env.buf + (512 << 10), 0, len);
	if (rdma_op(p, IBV_WR_RDMA_WRITE, p->env.buf, len, p->env.mr->lkey, raddr,
		    rkey) != IBV_WC_SUCCESS)
		return -1;
	if (su_check(where, len, seed) != -1)
		return -2;
	if (rdma_op(p, IBV_WR_RDMA_READ, p->env.buf + (512 << 10), len, p->env.mr->lkey,
		    raddr, rkey) != IBV_WC_SUCCESS)
		return -3;
	if (su_check(p->env.buf + (512 << 10), len, seed) != -1)
		return -4;
	return 0;
}

TEST(two_level_page_list)
{
	/* 4 KiB pages; 512 entries per page-list page. */
	static const unsigned int pages[] = { 0, 1, 511, 512, 513, 1023, 1024,
					      2047, 2048, 4095 };
	size_t len = 16 << 20;
	struct ibv_mr *mr;
	struct su_pair p;
	uint8_t *mem;
	unsigned int i;
	int err;

	err = su_pair_open(&p, NULL);
	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	madvise(mem, len, MADV_NOHUGEPAGE);
	memset(mem, 0xee, len);
	mr = ibv_reg_mr(p.env.pd, mem, len, SU_MR_ALL);
	ASSERT_NE(NULL, mr);

	/* 8 KiB starting 100 bytes before each page: always crosses one. */
	for (i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		size_t off = pages[i] * 4096ul;
		uint32_t n = 8192;

		if (off >= 100)
			off -= 100;
		if (off + n > len)
			n = len - off;
		EXPECT_EQ(0, write_read_back(&p, (uintptr_t)mem + off, mr->rkey,
					     mem + off, n, 40 + i))
			TH_LOG("page %u", pages[i]);
	}
	/* Nothing else in the region changed. */
	EXPECT_EQ(0xee, mem[len / 2 + 12345]);
	EXPECT_EQ(0xee, mem[300 * 4096]);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	munmap(mem, len);
	su_pair_close(&p);
}

/* The driver's page size for the MR with @lkey, from `rdma -dd res`. */
static long mr_page_size(uint32_t lkey)
{
	char line[1024], want[32], *pg;
	long ps = -1;
	FILE *f;

	snprintf(want, sizeof(want), "lkey 0x%x ", lkey);
	f = popen("rdma -dd res show mr 2>/dev/null", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, want))
			continue;
		pg = strstr(line, "drv_page_size ");
		if (pg)
			ps = strtol(pg + 14, NULL, 0);
	}
	pclose(f);
	return ps;
}

static long anon_huge_kb(void *addr)
{
	char line[256];
	unsigned long a, b, want = (uintptr_t)addr;
	int in = 0;
	long kb = -1;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		/* Only a mapping's header line starts "start-end ". */
		if (sscanf(line, "%lx-%lx ", &a, &b) == 2) {
			in = want >= a && want < b;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

TEST(huge_page_backed_mr)
{
	size_t len = 32 << 20;
	struct ibv_mr *mr;
	struct su_pair p;
	uint8_t *raw, *mem, *start;
	long huge;
	int err, i;

	err = su_pair_open(&p, NULL);
	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	raw = mmap(NULL, len + (2 << 20), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, raw);
	mem = (uint8_t *)(((uintptr_t)raw + (2 << 20) - 1) & ~((2ul << 20) - 1));
	ASSERT_EQ(0, madvise(mem, len, MADV_HUGEPAGE));
	memset(mem, 0xee, len);
	huge = anon_huge_kb(mem);
	TH_LOG("AnonHugePages in the region: %ld kB", huge);
	ASSERT_LE(2048, huge) TH_LOG("no transparent huge pages here");

	/* Starting 12 KiB into a huge page, 20 MiB: crosses many. */
	start = mem + 12288;
	mr = ibv_reg_mr(p.env.pd, start, 20 << 20, SU_MR_ALL);
	ASSERT_NE(NULL, mr);
	TH_LOG("the driver maps it with %ld-byte pages", mr_page_size(mr->lkey));
	for (i = 1; i < 10; i++) {
		size_t off = (size_t)i * (2 << 20) - 12288 - 3000;

		EXPECT_EQ(0, write_read_back(&p, (uintptr_t)start + off,
					     mr->rkey, start + off, 6000, 60 + i))
			TH_LOG("huge page boundary %d", i);
	}
	/* The MR's last bytes; one past its end is refused. */
	EXPECT_EQ(0, write_read_back(&p, (uintptr_t)start + (20 << 20) - 5000,
				     mr->rkey, start + (20 << 20) - 5000, 5000,
				     70));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma_op(&p, IBV_WR_RDMA_WRITE, p.env.buf, 5001, p.env.mr->lkey,
			  (uintptr_t)start + (20 << 20) - 5000, mr->rkey));
	EXPECT_EQ(0xee, start[(20 << 20)]);
	EXPECT_EQ(0xee, mem[12287]);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	munmap(raw, len + (2 << 20));
	su_pair_close(&p);
}

TEST(mr_with_an_iova)
{
	const uint64_t iova = 0x5a0000000000ull;
	struct ibv_mr *mr;
	struct su_pair p;
	uint8_t *mem;
	int err;

	err = su_pair_open(&p, NULL);
	ASSERT_EQ(0, err) TH_LOG("pair_open step %d: %s", err, strerror(errno));
	mem = aligned_alloc(4096, 1 << 20);
	ASSERT_NE(NULL, mem);
	memset(mem, 0xee, 1 << 20);
	mr = ibv_reg_mr_iova(p.env.pd, mem, 1 << 20, iova, SU_MR_ALL);
	ASSERT_NE(NULL, mr);

	/* Remote addresses are IOVAs: iova + X is mem + X. */
	EXPECT_EQ(0, write_read_back(&p, iova + 70000, mr->rkey, mem + 70000,
				     50000, 80));
	/* The process address is not in the MR's range. */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma_op(&p, IBV_WR_RDMA_WRITE, p.env.buf, 64, p.env.mr->lkey,
			  (uintptr_t)mem + 4096, mr->rkey));
	EXPECT_EQ(-1, su_check_byte(mem + 4096, 64, 0xee));
	/* That error took the pair down; a new one for the next part. */
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	su_pair_close(&p);

	/* Local SGEs use the IOVA too: a READ into iova + Y lands at mem + Y. */
	err = su_pair_open(&p, NULL);
	ASSERT_EQ(0, err);
	mr = ibv_reg_mr_iova(p.env.pd, mem, 1 << 20, iova, SU_MR_ALL);
	ASSERT_NE(NULL, mr);
	su_fill(p.env.buf + 4096, 30000, 81);
	EXPECT_EQ(IBV_WC_SUCCESS,
		  rdma_op(&p, IBV_WR_RDMA_READ, (void *)(uintptr_t)(iova + 200000),
			  30000, mr->lkey, su_addr(&p, 4096), p.env.mr->rkey));
	EXPECT_EQ(-1, su_check(mem + 200000, 30000, 81));
	EXPECT_EQ(-1, su_check_byte(mem + 230000, 1000, 0xee));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	free(mem);
	su_pair_close(&p);
}

/*
 * ibv_rereg_mr: a new translation sends the MR's bytes to the new pages and
 * leaves the old ones alone; a rereg that fails leaves the MR as it was; a
 * new access or PD is enforced by the device; the rkey from before a rereg
 * is stale after it. Each part that ends in a remote error (which takes
 * the pair down) has a pair of its own.
 */
#define REREG_LEN (64 << 10)

TEST(rereg_translation)
{
	uint8_t *a = aligned_alloc(4096, REREG_LEN), *b = aligned_alloc(4096, REREG_LEN);
	struct ibv_mr *mr;
	struct su_pair p;
	void *none;

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	memset(a, 0xaa, REREG_LEN);
	memset(b, 0xbb, REREG_LEN);
	ASSERT_EQ(0, su_pair_open(&p, NULL));
	mr = ibv_reg_mr(p.env.pd, a, REREG_LEN, SU_MR_ALL);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(0, write_read_back(&p, (uintptr_t)a + 100, mr->rkey, a + 100, 5000, 90));

	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, b,
				  REREG_LEN, 0));
	EXPECT_EQ(b, mr->addr);
	EXPECT_EQ(0, write_read_back(&p, (uintptr_t)b + 200, mr->rkey, b + 200, 6000, 91));
	EXPECT_EQ(-1, su_check(a + 100, 5000, 90));
	EXPECT_EQ(-1, su_check_byte(a + 5100, REREG_LEN - 5100, 0xaa));

	/* Pages the process cannot write: the device never sees the rereg. */
	none = mmap(NULL, REREG_LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, none);
	EXPECT_EQ(IBV_REREG_MR_ERR_CMD,
		  ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, none, REREG_LEN, 0));
	EXPECT_EQ(b, mr->addr);
	EXPECT_EQ(0, write_read_back(&p, (uintptr_t)b + 300, mr->rkey, b + 300, 7000, 92));
	munmap(none, REREG_LEN);

	EXPECT_EQ(0, ibv_dereg_mr(mr));
	su_pair_close(&p);
	free(a);
	free(b);
}

TEST(rereg_access)
{
	uint8_t *b = aligned_alloc(4096, REREG_LEN);
	struct ibv_mr *mr;
	struct su_pair p;

	ASSERT_NE(NULL, b);
	su_fill(b, REREG_LEN, 93);
	ASSERT_EQ(0, su_pair_open(&p, NULL));
	mr = ibv_reg_mr(p.env.pd, b, REREG_LEN, SU_MR_ALL);
	ASSERT_NE(NULL, mr);
	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ));
	/* READ is still allowed and brings the MR's bytes; WRITE is not. */
	memset(p.env.buf, 0, REREG_LEN);
	EXPECT_EQ(IBV_WC_SUCCESS, rdma_op(&p, IBV_WR_RDMA_READ, p.env.buf, REREG_LEN,
					  p.env.mr->lkey, (uintptr_t)b, mr->rkey));
	EXPECT_EQ(-1, su_check(p.env.buf, REREG_LEN, 93));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, rdma_op(&p, IBV_WR_RDMA_WRITE, p.env.buf + REREG_LEN,
						 64, p.env.mr->lkey, (uintptr_t)b, mr->rkey));
	EXPECT_EQ(-1, su_check(b, REREG_LEN, 93));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	su_pair_close(&p);
	free(b);
}

TEST(rereg_pd)
{
	uint8_t *b = aligned_alloc(4096, REREG_LEN);
	struct ibv_pd *pd2;
	struct ibv_mr *mr;
	struct su_pair p;

	ASSERT_NE(NULL, b);
	memset(b, 0xbb, REREG_LEN);
	ASSERT_EQ(0, su_pair_open(&p, NULL));
	pd2 = ibv_alloc_pd(p.env.ctx);
	ASSERT_NE(NULL, pd2);
	mr = ibv_reg_mr(p.env.pd, b, REREG_LEN, SU_MR_ALL);
	ASSERT_NE(NULL, mr);
	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0));
	EXPECT_EQ(pd2, mr->pd);
	/* The QPs are in the first PD: the MR is out of their reach now. */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, rdma_op(&p, IBV_WR_RDMA_WRITE, p.env.buf, 64,
						 p.env.mr->lkey, (uintptr_t)b, mr->rkey));
	EXPECT_EQ(-1, su_check_byte(b, REREG_LEN, 0xbb));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(0, ibv_dealloc_pd(pd2));
	su_pair_close(&p);
	free(b);
}

TEST(rereg_leaves_the_old_rkey_stale)
{
	uint8_t *b = aligned_alloc(4096, REREG_LEN);
	struct ibv_mr *mr;
	struct su_pair p;
	uint32_t old;

	ASSERT_NE(NULL, b);
	memset(b, 0xbb, REREG_LEN);
	ASSERT_EQ(0, su_pair_open(&p, NULL));
	mr = ibv_reg_mr(p.env.pd, b, REREG_LEN, SU_MR_ALL);
	ASSERT_NE(NULL, mr);
	old = mr->rkey;
	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, SU_MR_ALL));
	EXPECT_NE(old, mr->rkey);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, rdma_op(&p, IBV_WR_RDMA_WRITE, p.env.buf, 64,
						 p.env.mr->lkey, (uintptr_t)b, old));
	EXPECT_EQ(-1, su_check_byte(b, REREG_LEN, 0xbb));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	su_pair_close(&p);
	free(b);
}

/* ------------------------------------------------------------------ */
/* Rings count as locked memory                                        */
/* ------------------------------------------------------------------ */

#define LIMIT_KB	1024
#define MAX_OBJS	1024
#define CQ_ENTRIES	4096
#define CQ_RING_KB	(CQ_ENTRIES * VRNIC_CQE_SIZE / 1024)

static int set_memlock_kb(long kb)
{
	struct rlimit r = { .rlim_cur = kb << 10, .rlim_max = kb << 10 };

	return setrlimit(RLIMIT_MEMLOCK, &r);
}

FIXTURE(memlock) {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq[MAX_OBJS];
	struct ibv_qp *qp[MAX_OBJS];
	int ncq, nqp;
	long pin0;
};

FIXTURE_SETUP(memlock)
{
	self->ctx = su_open();
	ASSERT_NE(NULL, self->ctx);
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->pin0 = su_vmpin_kb(0);
	ASSERT_LE(0, self->pin0);
}

FIXTURE_TEARDOWN(memlock)
{
	int i;

	for (i = 0; i < self->nqp; i++)
		ibv_destroy_qp(self->qp[i]);
	for (i = 0; i < self->ncq; i++)
		ibv_destroy_cq(self->cq[i]);
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	if (self->ctx)
		ibv_close_device(self->ctx);
}

static void destroy_all(FIXTURE_DATA(memlock) *self)
{
	while (self->nqp)
		ibv_destroy_qp(self->qp[--self->nqp]);
	while (self->ncq)
		ibv_destroy_cq(self->cq[--self->ncq]);
}

static struct ibv_qp *make_qp(FIXTURE_DATA(memlock) *self, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {
			.max_send_wr = 1024,
			.max_recv_wr = 1024,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
	};

	return ibv_create_qp(self->pd, &a);
}

/* CQ rings are charged; creation stops with ENOMEM exactly at the limit. */
TEST_F(memlock, cq_rings_stop_at_the_limit)
{
	long pin, expect;
	int err = 0;

	ASSERT_EQ(0, drop_cap_ipc_lock());
	ASSERT_EQ(0, set_memlock_kb(LIMIT_KB));
	expect = (LIMIT_KB - self->pin0) / CQ_RING_KB;

	while (self->ncq < MAX_OBJS) {
		self->cq[self->ncq] = ibv_create_cq(self->ctx, CQ_ENTRIES,
						    NULL, NULL, 0);
		if (!self->cq[self->ncq]) {
			err = errno;
			break;
		}
		self->ncq++;
	}
	pin = su_vmpin_kb(0);
	TH_LOG("%d CQs of %d kB under a %d kB limit, then %s; VmPin %ld kB",
	       self->ncq, CQ_RING_KB, LIMIT_KB, strerror(err), pin);
	ASSERT_EQ(ENOMEM, err);
	EXPECT_EQ(expect, self->ncq);
	EXPECT_EQ(self->pin0 + (long)self->ncq * CQ_RING_KB, pin);
	EXPECT_LT(LIMIT_KB, pin + CQ_RING_KB);

	/* The refused CQ left no charge behind. */
	destroy_all(self);
	EXPECT_EQ(self->pin0, su_vmpin_kb(0));
	self->cq[0] = ibv_create_cq(self->ctx, CQ_ENTRIES, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq[0]);
	self->ncq = 1;
	EXPECT_EQ(self->pin0 + CQ_RING_KB, su_vmpin_kb(0));
}

/* QP rings (SQ and RQ) likewise. */
TEST_F(memlock, qp_rings_stop_at_the_limit)
{
	long pin_cq, pin, qp_kb;
	int err = 0, again;

	ASSERT_EQ(0, drop_cap_ipc_lock());
	ASSERT_EQ(0, set_memlock_kb(LIMIT_KB));
	self->cq[0] = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq[0]);
	self->ncq = 1;
	pin_cq = su_vmpin_kb(0);
	ASSERT_LT(self->pin0, pin_cq) TH_LOG("a CQ ring is not charged");

	self->qp[0] = make_qp(self, self->cq[0]);
	ASSERT_NE(NULL, self->qp[0]);
	self->nqp = 1;
	qp_kb = su_vmpin_kb(0) - pin_cq;
	ASSERT_LT(0, qp_kb) TH_LOG("QP rings are not charged");

	while (self->nqp < MAX_OBJS) {
		self->qp[self->nqp] = make_qp(self, self->cq[0]);
		if (!self->qp[self->nqp]) {
			err = errno;
			break;
		}
		self->nqp++;
	}
	pin = su_vmpin_kb(0);
	TH_LOG("%d QPs of %ld kB under a %d kB limit, then %s; VmPin %ld kB",
	       self->nqp, qp_kb, LIMIT_KB, strerror(err), pin);
	ASSERT_EQ(ENOMEM, err);
	EXPECT_EQ((LIMIT_KB - pin_cq) / qp_kb, self->nqp);
	EXPECT_LE(pin, LIMIT_KB);
	EXPECT_LT(LIMIT_KB, pin + qp_kb);

	again = self->nqp;
	while (self->nqp)
		ibv_destroy_qp(self->qp[--self->nqp]);
	EXPECT_EQ(pin_cq, su_vmpin_kb(0));
	while (self->nqp < again) {
		self->qp[self->nqp] = make_qp(self, self->cq[0]);
		ASSERT_NE(NULL, self->qp[self->nqp]);
		self->nqp++;
	}
	EXPECT_EQ(pin, su_vmpin_kb(0));
	destroy_all(self);
	EXPECT_EQ(self->pin0, su_vmpin_kb(0));
}

/*
 * A CQ the device refuses after its ring was charged (its context's
 * doorbell page is full long before the limit) gives the charge back.
 */
TEST_F(memlock, cq_refused_by_the_device_is_uncharged)
{
	long ring_kb, pin;
	int err = 0;

	ASSERT_EQ(0, drop_cap_ipc_lock());
	ASSERT_EQ(0, set_memlock_kb(16 * LIMIT_KB));
	while (self->ncq < MAX_OBJS) {
		self->cq[self->ncq] = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);
		if (!self->cq[self->ncq]) {
			err = errno;
			break;
		}
		self->ncq++;
	}
	pin = su_vmpin_kb(0);
	ASSERT_LT(0, self->ncq);
	ring_kb = (pin - self->pin0) / self->ncq;
	TH_LOG("%d CQs of %ld kB, then %s; VmPin %ld kB", self->ncq, ring_kb,
	       strerror(err), pin);
	ASSERT_NE(0, err);
	EXPECT_LT(0, ring_kb);
	EXPECT_LT(pin + ring_kb, 16 * LIMIT_KB)
		TH_LOG("refused at the limit, not by the device");
	EXPECT_EQ(self->pin0 + self->ncq * ring_kb, pin);
	destroy_all(self);
	EXPECT_EQ(self->pin0, su_vmpin_kb(0));
}

/* A resize charges the new ring and gives the old one back. */
TEST_F(memlock, cq_resize_is_charged)
{
	long pin_small;

	ASSERT_EQ(0, drop_cap_ipc_lock());
	ASSERT_EQ(0, set_memlock_kb(LIMIT_KB));
	self->cq[0] = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq[0]);
	self->ncq = 1;
	pin_small = su_vmpin_kb(0);

	ASSERT_EQ(0, ibv_resize_cq(self->cq[0], CQ_ENTRIES));
	EXPECT_EQ(self->pin0 + CQ_RING_KB, su_vmpin_kb(0));
	/* 16384 CQEs (1 MiB) do not fit beside the 256 kB ring. */
	EXPECT_EQ(ENOMEM, ibv_resize_cq(self->cq[0], 4 * CQ_ENTRIES));
	EXPECT_EQ(self->pin0 + CQ_RING_KB, su_vmpin_kb(0));
	ASSERT_EQ(0, ibv_resize_cq(self->cq[0], 16));
	EXPECT_EQ(pin_small, su_vmpin_kb(0));
	destroy_all(self);
	EXPECT_EQ(self->pin0, su_vmpin_kb(0));
}

/* CAP_IPC_LOCK lifts the limit, as for pinned MRs; rings still count. */
TEST_F(memlock, cap_ipc_lock_is_exempt)
{
	int n = 2 * LIMIT_KB / CQ_RING_KB;

	ASSERT_EQ(0, set_memlock_kb(LIMIT_KB));
	while (self->ncq < n) {
		self->cq[self->ncq] = ibv_create_cq(self->ctx, CQ_ENTRIES,
						    NULL, NULL, 0);
		ASSERT_NE(NULL, self->cq[self->ncq])
			TH_LOG("CQ %d: %s", self->ncq, strerror(errno));
		self->ncq++;
	}
	EXPECT_EQ(self->pin0 + (long)n * CQ_RING_KB, su_vmpin_kb(0));
	destroy_all(self);
	EXPECT_EQ(self->pin0, su_vmpin_kb(0));
}

TEST_HARNESS_MAIN
