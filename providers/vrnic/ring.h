// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The provider's data path on plain memory: send/receive WQE building, CQE
// parsing, the arm word and the wake-up handshake of the doorbell page
// (docs/device-interface.md sections 6, 7, 8, 12, 13). Nothing here makes a
// system call or knows about libibverbs' private ABI, so the host unit tests
// drive it on fake rings in ordinary memory.

#ifndef VRNIC_PROVIDER_RING_H
#define VRNIC_PROVIDER_RING_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include <infiniband/verbs.h>
#include <vrnic_dev.h>
#include <vrnic_ordering.h>

namespace vrnic::prov {

// A small test-and-test-and-set lock for the per-QP and per-CQ critical
// sections, which are a few hundred instructions long.
class SpinLock {
  public:
    void lock() noexcept {
        while (locked_.exchange(true, std::memory_order_acquire)) {
            while (locked_.load(std::memory_order_relaxed))
                __builtin_ia32_pause();
        }
    }
    bool try_lock() noexcept { return !locked_.exchange(true, std::memory_order_acquire); }
    void unlock() noexcept { locked_.store(false, std::memory_order_release); }

  private:
    std::atomic<bool> locked_{false};
};

// The lock of a queue (send, receive, CQ poll). A queue whose user
// promised to serialize its calls itself (a QP on a parent domain with a
// thread domain, a single-threaded CQ) runs without it.
class QueueLock {
  public:
    void set_single_threaded() noexcept { single_threaded_ = true; }
    bool single_threaded() const noexcept { return single_threaded_; }
    void lock() noexcept {
        if (!single_threaded_)
            lock_.lock();
    }
    bool try_lock() noexcept { return single_threaded_ || lock_.try_lock(); }
    void unlock() noexcept {
        if (!single_threaded_)
            lock_.unlock();
    }

  private:
    SpinLock lock_;
    bool single_threaded_ = false;
};

// ---------------------------------------------------------------------------
// The context's doorbell page (spec 7, 8).
// ---------------------------------------------------------------------------
class Doorbell {
  public:
    // Asks the kernel to kick the device (VRNIC_METHOD_KICK); returns 0 or
    // an errno. Called only when the device said it may be asleep.
    using KickFn = int (*)(void* arg);

    void init(vrnic_db_page* page, KickFn kick, void* kick_arg) noexcept {
        page_ = page;
        kick_ = kick;
        kick_arg_ = kick_arg;
    }

    // Is slot in range for an object (1..511)?
    static bool valid_slot(uint32_t slot) noexcept {
        return slot >= VRNIC_DB_FIRST_OBJ_SLOT && slot < VRNIC_DB_SLOTS_PER_PAGE;
    }
    // The 32-bit word at byte_off (0 or 4) of an object slot.
    uint32_t* word(uint32_t slot, uint32_t byte_off) const noexcept {
        auto* base = reinterpret_cast<unsigned char*>(&page_->slot[slot]);
        return reinterpret_cast<uint32_t*>(base + byte_off);
    }
    uint32_t status() const noexcept {
        return load_relaxed(&page_->slot[VRNIC_DB_STATUS_SLOT].st.status);
    }
    bool fatal() const noexcept { return status() & VRNIC_DB_STATUS_FATAL; }

    // Producer side of the wake-up handshake (spec 8): release-store the new
    // producer index, full fence, then kick if the device asked for it with
    // wake_bit (NEED_WAKEUP for an SQ, RQ_WAKEUP for an RQ).
    void publish_producer(uint32_t* word, uint32_t pi, uint32_t wake_bit) noexcept {
        store_release(word, pi);
        full_fence();
        if (status() & wake_bit) {
            kicks_.fetch_add(1, std::memory_order_relaxed);
            if (kick_)
                kick_(kick_arg_);
        }
    }

    uint64_t kicks() const noexcept { return kicks_.load(std::memory_order_relaxed); }

  private:
    vrnic_db_page* page_ = nullptr;
    KickFn kick_ = nullptr;
    void* kick_arg_ = nullptr;
    std::atomic<uint64_t> kicks_{0};
};

// ---------------------------------------------------------------------------
// Work queues (spec 13).
// ---------------------------------------------------------------------------

// Shared index bookkeeping of a work queue. pi_ is owned by the posting
// thread (under the queue's lock); ci_ (retired) is advanced by whoever polls
// the CQ; published_ is the last producer index given to the device.
class WorkQueue {
  public:
    void init_ring(void* buf, uint32_t log_depth, uint32_t wqe_shift) noexcept {
        buf_ = static_cast<unsigned char*>(buf);
        log_depth_ = log_depth;
        wqe_shift_ = wqe_shift;
        pi_ = 0;
        ci_.store(0, std::memory_order_relaxed);
        published_.store(0, std::memory_order_relaxed);
    }
    // The device moved the ring (an SRQ resize): the indices stay.
    void move_ring(void* buf, uint32_t log_depth) noexcept {
        buf_ = static_cast<unsigned char*>(buf);
        log_depth_ = log_depth;
    }
    uint32_t depth() const noexcept { return 1U << log_depth_; }
    uint32_t log_depth() const noexcept { return log_depth_; }
    uint32_t wqe_shift() const noexcept { return wqe_shift_; }
    uint32_t pi() const noexcept { return pi_; }
    uint32_t ci() const noexcept { return ci_.load(std::memory_order_acquire); }
    uint32_t published() const noexcept { return published_.load(std::memory_order_relaxed); }
    // Entries posted and not yet retired by a completion.
    uint32_t outstanding() const noexcept { return pi_ - ci(); }
    bool full() const noexcept { return outstanding() >= depth(); }
    unsigned char* slot(uint32_t idx) const noexcept {
        return buf_ + (static_cast<size_t>(idx & (depth() - 1)) << wqe_shift_);
    }

    // A completion for WQE wqe_idx retires it and every WQE before it (RC
    // completes in order). Returns false, changing nothing, if wqe_idx is
    // not an outstanding published WQE (a bad or stale CQE).
    bool retire(uint32_t wqe_idx) noexcept {
        uint32_t ci = ci_.load(std::memory_order_relaxed);
        if (wqe_idx + 1 == ci)
            return false; // retire_to() would take it as no progress
        return retire_to(wqe_idx + 1);
    }
    // Everything before the free-running index ci has been consumed.
    // Returns false, changing nothing, if ci lies outside [ci(), published].
    bool retire_to(uint32_t ci) noexcept {
        uint32_t old = ci_.load(std::memory_order_relaxed);
        uint32_t pub = published_.load(std::memory_order_acquire);
        if (static_cast<uint32_t>(ci - old) > static_cast<uint32_t>(pub - old))
            return false;
        ci_.store(ci, std::memory_order_release);
        return true;
    }
    // After MODIFY_QP to RESET the device discards everything outstanding.
    void discard_outstanding() noexcept { ci_.store(pi_, std::memory_order_release); }
    // Forget WQEs built since a saved producer index (ibv_wr_abort).
    void rewind(uint32_t pi) noexcept { pi_ = pi; }
    void advance() noexcept { ++pi_; }

    // Hand everything built so far to the device.
    void publish(Doorbell& db, uint32_t* word, uint32_t wake_bit) noexcept {
        if (pi_ == published_.load(std::memory_order_relaxed))
            return;
        published_.store(pi_, std::memory_order_release);
        db.publish_producer(word, pi_, wake_bit);
    }

  protected:
    unsigned char* buf_ = nullptr;
    uint32_t log_depth_ = 0;
    uint32_t wqe_shift_ = 0;
    uint32_t pi_ = 0;
    std::atomic<uint32_t> ci_{0};
    std::atomic<uint32_t> published_{0};
};

// The send opcodes a QP type takes, as IBV_QP_EX_WITH_* bits (bit n admits
// IBV_WR opcode n); 0 for a type the device does not offer.
uint64_t qp_send_ops(ibv_qp_type type) noexcept;
// What a QP type takes besides, on a device of interface version 1.minor:
// LOCAL_INV and SEND_WITH_INV (1.7) and BIND_MW (1.8) on RC and UC QPs.
uint64_t qp_mem_ops(ibv_qp_type type, unsigned int version_minor) noexcept;

// What the QP's send stride holds, as reported by the kernel, and what its
// type lets it send.
struct SqLimits {
    uint32_t max_sge = 0;
    uint32_t max_inline = 0;
    bool sig_all = false;
    uint64_t send_ops = 0; // qp_send_ops() | qp_mem_ops() of the QP's type
    bool ud = false;       // datagram: every WQE names its destination
    bool xrc = false;      // XRC initiator: every WQE names the remote XRC SRQ
};

// An address handle. A UD work request names the AH by the device's handle,
// so a send needs no system call.
struct Ah {
    ibv_ah ah;
    uint32_t handle = 0;
};
inline const Ah* to_ah(const ibv_ah* a) noexcept {
    return reinterpret_cast<const Ah*>(a);
}

class SendQueue : public WorkQueue {
  public:
    void init(void* buf, uint32_t log_depth, uint32_t wqe_shift, const SqLimits& lim) noexcept {
        init_ring(buf, log_depth, wqe_shift);
        lim_ = lim;
    }
    const SqLimits& limits() const noexcept { return lim_; }
    bool takes(unsigned int opcode) const noexcept {
        return opcode < 64 && (lim_.send_ops >> opcode & 1);
    }

    // Translate one ibv_send_wr into the WQE at pi and advance pi.
    // Returns 0, EINVAL (an opcode the QP's type does not take, too many
    // SGEs, inline too large, bad atomic operand, a UD WR without an AH, a
    // bind of anything but a type 2 window) or ENOMEM (queue full); on error
    // nothing is written.
    int post(const ibv_send_wr& wr) noexcept;

    // A BIND_MW WQE at pi (spec 14.11), pi advanced: the window the upper 24
    // bits of rkey name gets rkey and info's range and rights (length 0:
    // unbound). ibv_bind_mw's path for type 1 windows; post() takes type 2
    // ones here. Returns 0, EINVAL (BIND_MW not taken, no MR for a non-zero
    // length, rights a window cannot have) or ENOMEM.
    int bind_mw(uint64_t wr_id, unsigned int send_flags, uint32_t rkey,
                const ibv_mw_bind_info& info) noexcept;

    // --- WQE building blocks, shared by post() and the ibv_wr_* API ---

    // Writes a zeroed header for a new WQE at pi (not advanced). Returns
    // the slot, or nullptr if the queue is full.
    vrnic_send_wqe_hdr* begin(uint64_t wr_id, uint8_t opcode, uint8_t flags, __be32 imm) noexcept;
    static void set_rdma(vrnic_send_wqe_hdr* h, uint64_t remote_addr, uint32_t rkey) noexcept {
        h->rdma.remote_addr = remote_addr;
        h->rdma.rkey = rkey;
    }
    static void set_ud(vrnic_send_wqe_hdr* h, uint32_t ah, uint32_t remote_qpn,
                       uint32_t remote_qkey) noexcept {
        h->ud.ah = ah;
        h->ud.remote_qpn = remote_qpn;
        h->ud.remote_qkey = remote_qkey;
    }
    static void set_atomic(vrnic_send_wqe_hdr* h, uint64_t remote_addr, uint32_t rkey,
                           uint64_t compare_add, uint64_t swap) noexcept {
        h->atomic.remote_addr = remote_addr;
        h->atomic.rkey = rkey;
        h->atomic.compare_add = compare_add;
        h->atomic.swap = swap;
    }
    // The bind_mw union for rkey and info; EINVAL as bind_mw() says.
    static int bind_fields(uint32_t rkey, const ibv_mw_bind_info& info,
                           vrnic_wqe_bind_mw* out) noexcept;
    // SGE payload; EINVAL if n > max_sge (or an atomic without one 8-byte SGE,
    // or SGEs on a local operation: BIND_MW, LOCAL_INV).
    int set_sges(vrnic_send_wqe_hdr* h, const ibv_sge* sg, size_t n) noexcept;
    // Inline payload gathered from buffers; EINVAL if the opcode cannot
    // carry inline data or the total exceeds max_inline.
    int set_inline(vrnic_send_wqe_hdr* h, const ibv_data_buf* bufs, size_t n) noexcept;
    int set_inline_sges(vrnic_send_wqe_hdr* h, const ibv_sge* sg, size_t n) noexcept;

    static uint8_t wqe_flags(unsigned int send_flags, bool sig_all) noexcept;

  private:
    template <class Piece>
    int copy_inline(vrnic_send_wqe_hdr* h, const Piece* pieces, size_t n) noexcept;
    SqLimits lim_;
};

// A receive queue: a QP's own, whose WQEs its receive completions retire,
// or a shared one (SRQ), whose free space the device reports in a consumer
// index it writes (device_ci), since its completions land on many QPs.
class RecvQueue : public WorkQueue {
  public:
    void init(void* buf, uint32_t log_depth, uint32_t wqe_shift, uint32_t max_sge,
              const uint32_t* device_ci = nullptr) noexcept {
        init_ring(buf, log_depth, wqe_shift);
        max_sge_ = max_sge;
        device_ci_ = device_ci;
    }
    uint32_t max_sge() const noexcept { return max_sge_; }
    // Returns 0, EINVAL (too many SGEs) or ENOMEM (full).
    int post(const ibv_recv_wr& wr) noexcept;

  private:
    uint32_t max_sge_ = 0;
    const uint32_t* device_ci_ = nullptr;
};

// The data-path state of one QP: its rings, their locks and doorbell words.
// rq is empty when the QP takes its receives from a shared receive queue.
struct QpRings {
    uint32_t qpn = 0;
    SendQueue sq;
    std::optional<RecvQueue> rq;
    QueueLock sq_lock;
    QueueLock rq_lock;
    uint32_t* sq_pi_word = nullptr;
    uint32_t* rq_pi_word = nullptr;
    Doorbell* db = nullptr;

    // A CQE of this QP retires WQEs of the queue it completes (see
    // WorkQueue::retire); receives from a shared queue are not this QP's.
    void retire(const vrnic_cqe& cqe) noexcept {
        if (!(cqe.opcode & IBV_WC_RECV))
            sq.retire(cqe.wqe_idx);
        else if (rq)
            rq->retire(cqe.wqe_idx);
    }
};

// The ibv_wr_* session of one QP (wr_start .. wr_complete/wr_abort). The
// caller holds the QP's send lock for the whole session.
class WrBuilder {
  public:
    void start(SendQueue& sq) noexcept {
        sq_ = &sq;
        start_pi_ = sq.pi();
        err_ = 0;
        cur_ = nullptr;
        needs_ud_ = false;
    }
    // Opens a WQE at the next slot; a full queue fails the session (ENOMEM),
    // an opcode the QP's type does not take fails it with EINVAL.
    void open(uint64_t wr_id, unsigned int wr_flags, uint8_t opcode, __be32 imm = 0) noexcept;
    void rdma(uint32_t rkey, uint64_t remote_addr) noexcept {
        if (cur_)
            SendQueue::set_rdma(cur_, remote_addr, rkey);
    }
    void atomic(uint32_t rkey, uint64_t remote_addr, uint64_t compare_add, uint64_t swap) noexcept {
        if (cur_)
            SendQueue::set_atomic(cur_, remote_addr, rkey, compare_add, swap);
    }
    // ibv_wr_local_inv, ibv_wr_send_inv: the key the open WQE invalidates.
    void invalidate(uint32_t rkey) noexcept {
        if (cur_)
            cur_->invalidate_rkey = rkey;
    }
    // ibv_wr_bind_mw: what the open BIND_MW WQE binds, a type 2 window
    // (EINVAL otherwise, or as SendQueue::bind_mw()).
    void bind_mw(const ibv_mw* mw, uint32_t rkey, const ibv_mw_bind_info* info) noexcept;
    // Only a UD QP's WQEs carry a destination, and each of them must.
    // ibv_wr_set_xrc_srqn: the remote XRC SRQ of the WQE being built.
    void xrc_srqn(uint32_t srqn) noexcept {
        if (!cur_ || !sq_->limits().xrc) {
            fail(EINVAL);
            return;
        }
        cur_->rdma.xrc_srqn = srqn; // also atomic.xrc_srqn: the same word
    }
    void ud(const ibv_ah* ah, uint32_t remote_qpn, uint32_t remote_qkey) noexcept {
        if (!cur_ || !ah || !sq_->limits().ud) {
            fail(EINVAL);
            return;
        }
        SendQueue::set_ud(cur_, to_ah(ah)->handle, remote_qpn, remote_qkey);
        needs_ud_ = false;
    }
    void sge(uint32_t lkey, uint64_t addr, uint32_t length) noexcept {
        ibv_sge s{addr, length, lkey};
        sge_list(1, &s);
    }
    void sge_list(size_t n, const ibv_sge* sg) noexcept {
        if (cur_)
            fail(sq_->set_sges(cur_, sg, n));
        else
            fail(EINVAL);
    }
    void inline_data(void* addr, size_t length) noexcept {
        ibv_data_buf b{addr, length};
        inline_list(1, &b);
    }
    void inline_list(size_t n, const ibv_data_buf* bufs) noexcept {
        if (cur_)
            fail(sq_->set_inline(cur_, bufs, n));
        else
            fail(EINVAL);
    }
    // Publishes the session's WQEs (0) or drops them all (the first errno).
    int complete(Doorbell& db, uint32_t* pi_word) noexcept;
    void abort() noexcept;
    int error() const noexcept { return err_; }

  private:
    void fail(int err) noexcept {
        if (err && !err_)
            err_ = err;
    }
    // The open WQE of a UD QP has no destination yet: EINVAL unless set.
    void check_ud() noexcept {
        if (needs_ud_)
            fail(EINVAL);
        needs_ud_ = false;
    }
    SendQueue* sq_ = nullptr;
    uint32_t start_pi_ = 0;
    int err_ = 0;
    vrnic_send_wqe_hdr* cur_ = nullptr;
    bool needs_ud_ = false;
};

// ---------------------------------------------------------------------------
// QPN -> QpRings lookup for the poller. Three levels of 256 entries cover the
// 24-bit QPN space, which the device fills sparsely (QPNs are unpredictable,
// spec 9.4): each QP costs at most two 2 KiB nodes. Readers (pollers,
// holding a CQ lock) look up without a lock; insert/erase serialize on a
// mutex. A QP is erased only while its CQs' locks are held, so a poller never
// sees a QP being freed.
// ---------------------------------------------------------------------------
class QpTable {
  public:
    QpTable() = default;
    ~QpTable();
    QpTable(const QpTable&) = delete;
    QpTable& operator=(const QpTable&) = delete;

    // Returns 0, EINVAL (QPN out of range or already present) or ENOMEM.
    int insert(uint32_t qpn, QpRings* qp) noexcept;
    void erase(uint32_t qpn) noexcept;
    QpRings* find(uint32_t qpn) const noexcept {
        if (qpn > VRNIC_QPN_MASK)
            return nullptr;
        Mid* mid = dir_[qpn >> (2 * kBits)].load(std::memory_order_acquire);
        Leaf* leaf =
            mid ? mid->leaf[(qpn >> kBits) & kMask].load(std::memory_order_acquire) : nullptr;
        return leaf ? leaf->qp[qpn & kMask].load(std::memory_order_acquire) : nullptr;
    }

  private:
    static constexpr uint32_t kBits = 8;
    static constexpr uint32_t kMask = (1U << kBits) - 1;
    struct Leaf {
        std::atomic<QpRings*> qp[1U << kBits];
    };
    struct Mid {
        std::atomic<Leaf*> leaf[1U << kBits];
    };
    std::mutex mutex_;
    std::atomic<Mid*> dir_[1U << kBits] = {};
};

// ---------------------------------------------------------------------------
// Completion queue (spec 6, 12).
// ---------------------------------------------------------------------------

// Fill a work completion from a CQE (verbs opcode/status values are the
// device's, spec 12.1).
void cqe_to_wc(const vrnic_cqe& cqe, ibv_wc* wc) noexcept;
// The pieces of cqe_to_wc, also read one by one by the ibv_cq_ex API.
ibv_wc_status cqe_status(const vrnic_cqe& cqe) noexcept;
unsigned int cqe_wc_flags(const vrnic_cqe& cqe) noexcept;
uint32_t cqe_src_qp(const vrnic_cqe& cqe) noexcept;
uint8_t cqe_sl(const vrnic_cqe& cqe) noexcept;

class CqRing {
  public:
    void init(void* ring, uint32_t log_depth, uint32_t* ci_word, uint32_t* arm_word) noexcept {
        ring_ = static_cast<vrnic_cqe*>(ring);
        log_depth_ = log_depth;
        ci_word_ = ci_word;
        arm_word_ = arm_word;
        ci_ = 0;
        next_sn_ = 0;
        sol_sn_ = 0;
    }
    // Switch to a resized ring; the free-running ci carries over (spec 10.12).
    void replace_ring(void* ring, uint32_t log_depth) noexcept {
        ring_ = static_cast<vrnic_cqe*>(ring);
        log_depth_ = log_depth;
    }
    uint32_t depth() const noexcept { return 1U << log_depth_; }
    uint32_t log_depth() const noexcept { return log_depth_; }
    uint32_t ci() const noexcept { return ci_; }
    const vrnic_cqe* entry(uint32_t idx) const noexcept { return &ring_[idx & (depth() - 1)]; }
    bool valid(uint32_t idx) const noexcept {
        uint8_t owner = load_acquire(&entry(idx)->owner);
        return (owner & VRNIC_OWNER_PHASE) == VRNIC_PHASE(idx, log_depth_);
    }
    // Copies the CQE at ci into out if the device has written it (acquire
    // on the owner byte, then the rest). Does not consume it.
    bool peek(vrnic_cqe* out) const noexcept;
    void pop() noexcept { ++ci_; }
    // Tell the device how far we consumed (spec 12.4: at the end of every
    // poll that consumed CQEs).
    void publish_ci() noexcept { store_release(ci_word_, ci_); }
    // req_notify_cq (spec 12.3): bump a counter, store the word, full fence.
    void arm(bool solicited_only) noexcept;
    uint16_t next_sn() const noexcept { return next_sn_; }
    uint16_t sol_sn() const noexcept { return sol_sn_; }

  private:
    vrnic_cqe* ring_ = nullptr;
    uint32_t log_depth_ = 0;
    uint32_t* ci_word_ = nullptr;
    uint32_t* arm_word_ = nullptr;
    uint32_t ci_ = 0;
    uint16_t next_sn_ = 0;
    uint16_t sol_sn_ = 0;
};

// A CQ's poller: the ring, its lock, the QP lookup for retiring WQEs, and
// ranges of CQEs of destroyed (or reset) QPs to skip.
class CqPoller {
  public:
    void init(void* ring, uint32_t log_depth, uint32_t* ci_word, uint32_t* arm_word,
              const QpTable* qps) noexcept {
        ring_.init(ring, log_depth, ci_word, arm_word);
        qps_ = qps;
    }
    CqRing& ring() noexcept { return ring_; }
    SpinLock& lock() noexcept { return lock_; }

    // ibv_poll_cq: up to n completions into wc; takes the lock.
    int poll(int n, ibv_wc* wc) noexcept;

    // ibv_cq_ex: start_poll takes the lock and keeps it until end_poll,
    // unless it returns non-zero (ENOENT: empty).
    int start_poll() noexcept;
    int next_poll() noexcept;
    void end_poll() noexcept;
    const vrnic_cqe& current() const noexcept { return cur_; }

    // Called with lock() held after the device stopped producing CQEs for
    // qpn (DESTROY_QP, or MODIFY_QP to RESET done): every CQE of that QP now
    // in the ring is dropped unseen. May allocate (ENOMEM).
    int forget_qp(uint32_t qpn) noexcept;

  private:
    // Next CQE to report, consumed, with its WQE retired; false if empty.
    bool next_locked() noexcept;
    bool stale(uint32_t idx, uint32_t qpn) noexcept;

    struct Stale {
        uint32_t qpn;
        uint32_t end; // CQEs of qpn before this free-running index are stale
    };
    CqRing ring_;
    SpinLock lock_;
    const QpTable* qps_ = nullptr;
    std::vector<Stale> stale_;
    vrnic_cqe cur_{};
    bool consumed_ = false;
};

} // namespace vrnic::prov

#endif // VRNIC_PROVIDER_RING_H
