/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The helper library of the guest test programs (tests/kselftest and
 * tests/faults): opening vrnic0, a connected RC pair inside one
 * context, polling, patterns, async events, raw uverbs commands on a
 * context's cmd_fd, the driver namespace ioctl, a hand-built QP, the
 * process-level accounting the tests compare (VmPin, `rdma res`) and a
 * bystander process. The .c files beside this one define what it
 * declares, one file a topic.
 *
 * Every helper returns a status instead of asserting, so the tests decide
 * what is fatal and forked children can use them too.
 */
#ifndef VRNIC_SUITE_H
#define VRNIC_SUITE_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl.h>

#include <vrnic_dev.h>
#include <uapi/rdma/vrnic-abi.h>

/* The harness compares int literals with unsigned verbs fields. */
#pragma GCC diagnostic ignored "-Wsign-compare"

#define SU_DEV "vrnic0"
#define SU_SYS "/sys/class/infiniband/" SU_DEV
#define SU_TIMEOUT_MS 10000

long su_now_ms(void);
void su_sleep_ms(long ms);
int su_read_line(const char *path, char *buf, size_t len);
/* One byte from @fd within @ms milliseconds, or -1. */
int su_read_byte(int fd, int ms);

/* "pd 0 cq 0 qp 0 ..." of vrnic0 from `rdma res show`, as one line. */
int su_res_line(char *buf, size_t len);

/*
 * The vrnic netdev's IPv4 addresses ("a/n b/n "), saved before the driver
 * goes away and put back on the new netdev afterwards: later tests may
 * rely on them.
 */
void su_save_netdev_addrs(char *buf, size_t len);
void su_restore_netdev_addrs(char *buf);

/* Runs a formatted shell command; its exit status as system() gives it. */
int su_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The number a shell command prints first, or -1. */
long su_sh_number(const char *cmd);

/*
 * Kernel warnings, bugs, oopses and lock or memory checker reports in the
 * log so far, or -1: what scripts/vm fails a whole guest run on.
 */
#define SU_KMSG_SPLATS "dmesg | grep -E 'WARNING:|BUG:|Oops|Call Trace:|" \
	"general protection fault|Kernel panic|possible circular locking|" \
	"possible recursive locking|inconsistent lock state|lockdep|KASAN|" \
	"UBSAN|RCU stall|hung_task'"
#define su_kmsg_splats() su_sh_number(SU_KMSG_SPLATS " | wc -l")

/* Port 1 of vrnic0 is ACTIVE. */
int su_port_active(void);

/* <project>/kernel/@ko, found from <project>/build/kselftest/<this test>. */
int su_module_path(char *path, size_t len, const char *ko);

/* rmmod vrnic without waiting for its users; 0 or -errno. */
int su_rmmod(void);

/* insmod vrnic.ko with @params and wait for an ACTIVE port; 0 or -errno. */
int su_insmod(const char *params);

/* Both, keeping the netdev's IPv4 addresses; 0 or -errno. */
int su_reload(const char *params);

/* /sys/kernel/debug/vrnic/<PCI function> (mounting debugfs); 0 or -1. */
int su_debugfs_dir(char *dir, size_t len);

/* ------------------------------------------------------------------ */
/* Device, GIDs                                                        */
/* ------------------------------------------------------------------ */

struct ibv_context *su_open(void);
extern const uint8_t su_v4_prefix[12];

/* Index of a RoCE v2 IPv4-mapped GID (waiting up to 5 s), or -1. */
int su_pick_gid(struct ibv_context *ctx, union ibv_gid *gid);

/* ------------------------------------------------------------------ */
/* A connected RC pair: qp[0] <-> qp[1] in one context                 */
/* ------------------------------------------------------------------ */

struct su_opts {
	uint32_t send_wr, recv_wr, send_sge, recv_sge, inline_data;
	int cqe;		/* per CQ; 0: 256 */
	int channel;		/* one completion channel for both CQs */
	size_t buf_size;	/* one MR over the buffer; 0: 1 MiB */
	int mr_access;		/* 0: everything */
	int qp_access;		/* 0: remote write|read|atomic */
	int sig_all;
	uint8_t rnr_retry;	/* requester, 0: 7 */
	uint8_t min_rnr_timer;	/* responder, 0: 12 (0.64 ms) */
	uint32_t rq_psn, sq_psn;	/* what su_to_rtr, su_to_rts set */
	int no_rd_atomic;	/* responder max_dest_rd_atomic 0 (else 16) */
	int no_connect;		/* leave both QPs in RESET */
	int qp_ex;		/* ibv_create_qp_ex with every send op of the type */
	enum ibv_qp_type qp_type;	/* 0: RC; UC; UD (no peer: qkey, su_pair.ah) */
	struct ibv_srq *srq;	/* what QPs su_create_qp makes receive from */
	uint32_t qkey;		/* UD: what su_to_init sets */
};

#define SU_HOP_LIMIT 64		/* of every AV and AH the helpers build */

#define SU_MR_ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/*
 * What QPs need around them: a context, a PD, one MR, a GID. su_pair has
 * one; hand-built QPs (su_raw) use one of their own.
 */
struct su_env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
	int gid_index;
};

/*
 * An MR with @access over @len bytes of @fill; 0, or the step that failed
 * (1 to 5).
 */
int su_env_open(struct su_env *e, size_t len, uint8_t fill,
		unsigned int access);
void su_env_close(struct su_env *e);

struct su_pair {
	struct su_opts o;
	struct su_env env;
	size_t size;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2];
	struct ibv_qp_cap cap;
	struct ibv_ah *ah;	/* UD: to the pair's own GID, on env.pd */
};

struct ibv_qp *su_create_qp(struct su_pair *p, struct ibv_pd *pd,
			    struct ibv_cq *scq,
			    struct ibv_cq *rcq);
int su_to_init(struct su_pair *p, struct ibv_qp *qp);
int su_to_rtr(struct su_pair *p, struct ibv_qp *qp,
	      uint32_t dest);
int su_to_rts(struct su_pair *p, struct ibv_qp *qp);

/* Connect @a and @b (both in RESET) to each other; UD: both to RTS. */
int su_connect(struct su_pair *p, struct ibv_qp *a,
	       struct ibv_qp *b);

/* An AH on @pd to the pair's GID, or NULL. */
struct ibv_ah *su_create_ah(struct su_pair *p, struct ibv_pd *pd);

/* Returns 0, or the negative number of the step that failed. */
int su_pair_open(struct su_pair *p, const struct su_opts *o);

/*
 * What a healthy device does for a new process: a new pair moves 256 KiB
 * by RDMA WRITE. 0 if the bytes of pattern @seed arrived, else the step
 * that failed.
 */
int su_fresh_traffic(unsigned int seed);
void su_pair_close(struct su_pair *p);

/*
 * New QPs for a pair whose QPs an error left in ERR: both destroyed, their
 * CQs emptied, two new ones on the pair's PD and CQs connected in their
 * place, so objects of the PD (MRs, memory windows) stay. 0 or -1.
 */
int su_pair_renew_qps(struct su_pair *p);

struct ibv_sge su_sge(struct su_pair *p, size_t off,
		      uint32_t len);
uint64_t su_addr(struct su_pair *p, size_t off);
int su_post_send(struct ibv_qp *qp, enum ibv_wr_opcode op,
		 uint64_t wr_id, struct ibv_sge *s, int n,
		 unsigned int flags, uint64_t raddr,
		 uint32_t rkey);
/* su_post_send() with an immediate (@imm in host order). */
int su_post_send_imm(struct ibv_qp *qp, enum ibv_wr_opcode op,
		     uint64_t wr_id, struct ibv_sge *s, int n,
		     unsigned int flags, uint64_t raddr, uint32_t rkey,
		     uint32_t imm);
int su_post_recv(struct ibv_qp *qp, uint64_t wr_id,
		 struct ibv_sge *s, int n);

/*
 * Post the one WR @wr on @qp, signaled, and wait SU_TIMEOUT_MS for its
 * completion on @cq into *@wc: the completion's status, or -1 if the post
 * failed or no completion with @wr's wr_id came.
 */
int su_post_wait(struct ibv_qp *qp, struct ibv_cq *cq,
		 struct ibv_send_wr *wr, struct ibv_wc *wc);

/*
 * One RDMA WRITE or READ of @len bytes at @laddr (@lkey) from @qp to
 * @raddr (@rkey), completed on @cq into *@wc: su_post_wait()'s result.
 */
int su_rdma_op(struct ibv_qp *qp, struct ibv_cq *cq, enum ibv_wr_opcode op,
	       void *laddr, uint32_t len, uint32_t lkey, uint64_t raddr,
	       uint32_t rkey, struct ibv_wc *wc);
int su_post_srq_recv(struct ibv_srq *srq, uint64_t wr_id,
		     struct ibv_sge *s, int n);
/* A receive into @len bytes at @off of the pair's buffer, zeroed first. */
int su_post_srq_zeroed(struct su_pair *p, struct ibv_srq *srq,
		       uint64_t wr_id, size_t off, uint32_t len);

/* A UD send (SEND or SEND_WITH_IMM, @imm in host order) to @qpn via @ah. */
int su_post_ud(struct ibv_qp *qp, enum ibv_wr_opcode op,
	       uint64_t wr_id, struct ibv_sge *s, int n,
	       unsigned int flags, struct ibv_ah *ah, uint32_t qpn,
	       uint32_t qkey, uint32_t imm);

/*
 * The GRH area @g of a UD receive from @sgid to @dgid (IPv4-mapped GIDs):
 * 0 if it holds their RoCE v2 IPv4 header for @len bytes after DETH
 * (ImmDt and payload), else the number of the first wrong field.
 */
int su_grh_ipv4_check(const uint8_t *g, const uint8_t *sgid,
		      const uint8_t *dgid, uint32_t len);

/* The active MTU of port 1 in bytes, or -1. */
int su_active_mtu(struct ibv_context *ctx);

/* vrnic0's port 1 counter @name (as `rdma statistic` shows it), or -1. */
long su_counter(const char *name);

/* su_counter() once the RDMA core's 10 ms cache of counters has expired. */
long su_counter_after(const char *name);

/* Poll one completion; 0 after @ms milliseconds without one. */
int su_poll(struct ibv_cq *cq, struct ibv_wc *wc, int ms);

/* A byte pattern that differs per (seed, offset). */
uint8_t su_pat(unsigned int seed, size_t i);
void su_fill(void *b, size_t len, unsigned int seed);

/* Offset of the first byte that does not match, or -1. */
long su_check(const void *b, size_t len, unsigned int seed);

/* Offset of the first byte that is not @v, or -1. */
long su_check_byte(const void *b, size_t len, uint8_t v);

/*
 * Wait for the async event @type (for @elem, a QP, CQ or SRQ pointer, or
 * any element if NULL). Other events are acknowledged and skipped. Returns 1
 * if it came, 0 if not.
 */
int su_wait_async(struct ibv_context *ctx,
		  enum ibv_event_type type, void *elem, int ms);
int su_qp_state(struct ibv_qp *qp);

/* ------------------------------------------------------------------ */
/* Raw uverbs: legacy write() commands and ioctls on a cmd_fd          */
/* ------------------------------------------------------------------ */

/* A write() command whose struct starts with ib_uverbs_cmd_hdr. */
int su_uverbs_write(int fd, uint32_t command, void *cmd,
		    size_t cmd_len, size_t out_len);

/* N of /dev/infiniband/uverbsN for vrnic0, or -1. */
int su_uverbs_index(void);

/* vrnic0's uverbs character device, opened without libibverbs; or -1. */
int su_open_uverbs(void);

/*
 * GET_CONTEXT on a fresh uverbs fd, with @drv_in_len bytes of driver
 * input. With @core the caller gets the response and owns its async_fd;
 * without, the async fd is closed. 0 or -errno.
 */
int su_get_context(int fd, const void *drv_in,
		   size_t drv_in_len,
		   struct ib_uverbs_get_context_resp *core,
		   struct vrnic_ibv_alloc_ucontext_resp *drv);

struct su_ioctl {
	struct ib_uverbs_ioctl_hdr hdr;
	struct ib_uverbs_attr attrs[4];
};

void su_ioctl_init(struct su_ioctl *io, uint16_t object,
		   uint16_t method, uint16_t num_attrs);
void su_ioctl_ptr(struct su_ioctl *io, int i, uint16_t id,
		  void *ptr, uint16_t len);

/* An IDR (object handle) attribute. */
void su_ioctl_idr(struct su_ioctl *io, int i, uint16_t id,
		  uint64_t handle);
int su_ioctl_call(int fd, struct su_ioctl *io);
int su_query_layout(int fd, struct vrnic_layout *l);
int su_kick(int fd);

/*
 * One legacy write() command each, on a context's fd, without driver
 * input unless @drv says; 0 or -errno. The handles come back through
 * @handle (su_cmd_reg_mr: if not NULL), CREATE_CQ and CREATE_QP fill
 * @resp, su_cmd_qp_state() returns the QP's state.
 */
struct su_cq_resp {
	struct ib_uverbs_create_cq_resp core;
	struct vrnic_ibv_create_cq_resp drv;
};

struct su_qp_resp {
	struct ib_uverbs_create_qp_resp core;
	struct vrnic_ibv_create_qp_resp drv;
};

int su_cmd_alloc_pd(int fd, const uint64_t *drv, uint32_t *handle);
int su_cmd_dealloc_pd(int fd, uint32_t handle);
int su_cmd_reg_mr(int fd, uint32_t pd, uint64_t start, uint64_t len,
		  uint64_t va, uint32_t access, const uint64_t *drv,
		  uint32_t *handle);
int su_cmd_dereg_mr(int fd, uint32_t handle);
int su_cmd_create_cq(int fd, uint32_t cqe, uint64_t user_handle,
		     struct su_cq_resp *resp);
int su_cmd_destroy_cq(int fd, uint32_t handle);
int su_cmd_create_qp(int fd, uint32_t pd, uint32_t send_cq, uint32_t recv_cq,
		     const struct ibv_qp_cap *cap, uint8_t type,
		     uint64_t user_handle, struct su_qp_resp *resp);
int su_cmd_destroy_qp(int fd, uint32_t handle);
int su_cmd_qp_state(int fd, uint32_t handle);

/* ------------------------------------------------------------------ */
/* A hand-built user QP: raw uverbs commands, our own ring accesses    */
/* ------------------------------------------------------------------ */

/*
 * A CQ and an RC QP created with raw write() commands on a libibverbs
 * context's cmd_fd (PD and MR come from libibverbs), their rings and the
 * context's doorbell page mapped by this code, WQEs written per the device
 * interface (section 13) without the provider. Posting can skip the
 * wake-up kick, and the rings and doorbell words are at the caller's
 * mercy. The objects' user_handle is the struct su_raw: libibverbs does
 * not know them, so async events for them must be read with
 * su_raw_async(), never with ibv_get_async_event().
 */
struct su_raw {
	int fd;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	/* CQ */
	uint32_t cq_handle, cqn, cq_slot, cq_log;
	uint8_t *cq_ring;
	size_t cq_ring_size;
	uint32_t cq_ci;
	/* QP */
	uint32_t qp_handle, qpn, qp_slot;
	uint8_t *sq, *rq;
	size_t sq_size, rq_size;
	uint8_t sq_log, sq_shift, rq_log, rq_shift;
	uint32_t sq_pi, rq_pi;
	/* doorbell page */
	volatile uint32_t *db;
	struct vrnic_layout layout;
};

volatile uint32_t *su_raw_word(struct su_raw *r, uint32_t slot,
			       uint32_t byte);
int su_raw_need_wakeup(struct su_raw *r);

/* Returns 0 or -errno; @cqe entries, @wr work requests per queue. */
int su_raw_create(struct su_raw *r, struct ibv_context *ctx,
		  struct ibv_pd *pd, uint32_t cqe, uint32_t wr,
		  uint32_t sge);
void su_raw_destroy(struct su_raw *r);

/* INIT, RTR (towards @dest_qpn), RTS. */
int su_raw_connect(struct su_raw *r, uint32_t dest_qpn,
		   const union ibv_gid *gid, int gid_index);

enum su_kick { SU_KICK_NEVER, SU_KICK_IF_NEEDED, SU_KICK_ALWAYS };

/* The next SQ slot, zeroed. */
struct vrnic_send_wqe_hdr *su_raw_sq_slot(struct su_raw *r);

/* Publish @n more SQ WQEs (already written), then kick per @kick. */
int su_raw_sq_ring(struct su_raw *r, uint32_t n,
		   enum su_kick kick);

/* One-SGE send-queue WQE: SEND (raddr, rkey unused) or RDMA WRITE/READ. */
int su_raw_post(struct su_raw *r, uint8_t opcode, uint64_t wr_id,
		uint64_t addr, uint32_t len, uint32_t lkey,
		uint64_t raddr, uint32_t rkey, enum su_kick kick);
int su_raw_post_recv(struct su_raw *r, uint64_t wr_id,
		     uint64_t addr, uint32_t len, uint32_t lkey,
		     enum su_kick kick);
int su_raw_poll_wait(struct su_raw *r, struct vrnic_cqe *out,
		     int ms);

/* The QP state the kernel reports (QUERY_QP), or -errno. */
int su_raw_state(struct su_raw *r);

/*
 * Read async events straight from the context's async fd for up to @ms;
 * return 1 once one of @type for the raw object @r arrives.
 */
int su_raw_async(struct ibv_context *ctx, struct su_raw *r,
		 uint32_t type, int ms);

/* ------------------------------------------------------------------ */
/* Accounting: VmPin, `rdma res`, MemAvailable                         */
/* ------------------------------------------------------------------ */

long su_vmpin_kb(pid_t pid);
long su_meminfo_kb(const char *key);

struct su_res {
	long pd, cq, qp, mr, ctx;
};

/* Object counts of vrnic0 from `rdma res show`. 0 or -1. */
int su_res_get(struct su_res *r);
int su_res_equal(const struct su_res *a, const struct su_res *b);

/* Wait up to @ms for the counts to equal @want; 0 if they did. */
int su_res_wait(const struct su_res *want, struct su_res *now,
		int ms);

/* ------------------------------------------------------------------ */
/* Forked children                                                     */
/* ------------------------------------------------------------------ */

/* In a forked child: report a failed check on stderr and exit 1. */
#define CHILD_CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "# child %d: %s:%d: check failed: %s (errno %d)\n", \
			(int)getpid(), __FILE__, __LINE__, #cond, errno); \
		_exit(1); \
	} \
} while (0)

/*
 * Fork a child that runs @fn(rfd, wfd) on its ends of two pipes and must
 * not return; the parent writes to it on *@to and reads from it on *@from.
 * The child's pid, or -1.
 */
pid_t su_spawn(void (*fn)(int rfd, int wfd), int *to, int *from);

/* waitpid with a timeout: the child's wait status, or -1 (then killed). */
int su_wait_child(pid_t pid, int ms);

/* ------------------------------------------------------------------ */
/* A concurrent well-behaved process                                   */
/* ------------------------------------------------------------------ */

/*
 * A forked process with its own context and connected pair that moves
 * verified bytes (SEND, RDMA WRITE, RDMA READ) round after round while a
 * test attacks the device from elsewhere. It publishes what an attacker
 * would aim at (its keys, QP numbers and a sentinel range nobody may
 * write), counts its rounds in memory shared with the test, and when told
 * to stop checks that its sentinel is intact, its QPs are still in RTS and
 * its doorbell page does not say FATAL, then runs one last round.
 */
#define SU_V_SENTINEL (768 << 10)	/* 256 KiB of its 1 MiB buffer */
#define SU_V_SENTINEL_LEN (256 << 10)
#define SU_V_SEED 0xbad

struct su_target {
	uint64_t buf;		/* its buffer, a VA in its process */
	uint64_t sentinel;	/* buf + SU_V_SENTINEL */
	uint32_t lkey, rkey;
	uint32_t qpn[2];
	uint32_t pd_handle, mr_handle;
};

struct su_verifier_state {
	struct su_target t;
	volatile int ready;	/* 1: target valid; -1: setup failed */
	volatile int stop;
	volatile int rounds;
	volatile int failed;	/* the failing step of a round, or 0 */
	/* The verdict, valid once the process has exited. */
	long sentinel_bad;	/* first bad offset, or -1 */
	int qp_state[2];
	uint32_t db_status;
	int stray;		/* completions nobody asked for */
	int last_round;		/* the round after stop: 0 or its failure */
};

struct su_verifier {
	pid_t pid;
	struct su_verifier_state *s;
};

/* SEND 8 KiB, RDMA WRITE 64 KiB, RDMA READ 16 KiB; 0 if every byte came. */
int su_verifier_round(struct su_pair *p, unsigned int round);

/* Start one and wait for its target; 0, or -1 (nothing left running). */
int su_verifier_start(struct su_verifier *v);

/*
 * Wait until it completes @n more verified rounds (0), or fails or takes
 * longer than @ms (-1): it is still making progress, not just alive.
 */
int su_verifier_progress(struct su_verifier *v, int n, int ms);

/*
 * Stop it (after @min_more further rounds) and collect its verdict into
 * *@out; 0 if it was unharmed, else -1. Logs what went wrong on stderr.
 */
int su_verifier_stop(struct su_verifier *v, int min_more,
		     struct su_verifier_state *out);

/*
 * For kselftest_harness tests: stop @v, expect it unharmed after at least
 * @more further rounds.
 */
#define SU_EXPECT_VERIFIER_UNHARMED(v, more) do { \
	struct su_verifier_state vs_; \
	EXPECT_EQ(0, su_verifier_stop(v, more, &vs_)); \
	TH_LOG("bystander: %d verified rounds", vs_.rounds); \
} while (0)

/* ------------------------------------------------------------------ */
/* Two guests of one fabric (scripts/vm --vms 2, VRNIC_SHARED)         */
/* ------------------------------------------------------------------ */

#define SU_FAB_WAIT_MS 120000	/* any one wait for the peer */
#define SU_FAB_NQP 4
#define SU_FAB_NKEY 4
#define SU_FAB_MAGIC 0x78766d31u
#define SU_FAB_QKEY 0x11111111u

/* What one side tells the other, as a file both read with the same ABI. */
struct su_fab_info {
	uint32_t magic;
	uint8_t gid[16];
	uint32_t qpn[SU_FAB_NQP];
	uint64_t addr[SU_FAB_NKEY];
	uint32_t rkey[SU_FAB_NKEY];
	uint32_t qkey;
	uint32_t n[4];		/* counts one side tells the other */
};

/*
 * One guest's side of a test: it meets its peer through files
 * VRNIC_SHARED/<test>.<what>, written under a temporary name and renamed.
 * <test>.end<i> says that guest i is done with the test, or failed early.
 */
struct su_fab {
	int me;			/* VRNIC_VM_INDEX: 0 or 1 */
	char test[64];		/* names this test's files */
	struct su_env env;	/* whatever the test opens there */
	struct su_fab_info mine, peer;
};

/* Name @test and read the environment: 0, or -EINVAL if not two guests. */
int su_fab_init(struct su_fab *f, const char *test);
int su_fab_exists(const struct su_fab *f, const char *what);

/* @len bytes of @data as <test>.<what>, whole or not at all. */
int su_fab_write(struct su_fab *f, const char *what, const void *data,
		 size_t len);

/* f->mine as <test>.<what>. */
int su_fab_put(struct su_fab *f, const char *what);
void su_fab_end(struct su_fab *f);

/*
 * Wait for the peer's <test>.<what> and read it into f->peer: 0, or
 * -ECANCELED when the peer ended the test first (it failed there), or
 * -ETIMEDOUT after SU_FAB_WAIT_MS.
 */
int su_fab_get(struct su_fab *f, const char *what);

/* Wait for guest 0's end of the test: 0 or -ETIMEDOUT. */
int su_fab_wait_end(struct su_fab *f);

/* The peer's GID as an AV, from f->env's GID. */
struct ibv_ah_attr su_fab_av(const struct su_fab *f);

/*
 * RESET, INIT, RTR towards @dest on the peer (RC, UC) and RTS, PSNs 0;
 * @timeout and @retry_cnt for an RC requester. 0 or the failed step (< 0).
 */
int su_fab_connect(struct su_fab *f, struct ibv_qp *qp, uint32_t dest,
		   uint8_t timeout, uint8_t retry_cnt);

/* For kselftest_harness tests: fail when not run in both guests. */
#define SU_FAB_ASSERT_INIT(f, test, prog) do { \
	ASSERT_EQ(0, su_fab_init(f, test)) \
		TH_LOG("needs both guests of scripts/vm --vms 2 (VRNIC_VMS=2, " \
		       "VRNIC_VM_INDEX, VRNIC_SHARED): run it with " \
		       "FABRIC_RUNS=ks:%s tests/integration/fabric/run", prog); \
} while (0)

#define SU_FAB_GET(f, what) do { \
	int e_ = su_fab_get(f, what); \
	ASSERT_EQ(0, e_) TH_LOG("%s.%s from guest %d: %s", (f)->test, what, \
				!(f)->me, e_ == -ECANCELED ? \
				"it ended the test (failed there)" : \
				strerror(-e_)); \
} while (0)

#define SU_FAB_PUT(f, what) do { \
	ASSERT_EQ(0, su_fab_put(f, what)); \
} while (0)

#endif /* VRNIC_SUITE_H */
