// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "ring.h"

#include <cerrno>
#include <cstring>
#include <new>

namespace vrnic::prov {

// The verbs opcode and SGE layouts are the device's (spec 13.1).
static_assert(int{IBV_WR_RDMA_WRITE} == int{VRNIC_WR_RDMA_WRITE});
static_assert(int{IBV_WR_RDMA_WRITE_WITH_IMM} == int{VRNIC_WR_RDMA_WRITE_WITH_IMM});
static_assert(int{IBV_WR_SEND} == int{VRNIC_WR_SEND});
static_assert(int{IBV_WR_SEND_WITH_IMM} == int{VRNIC_WR_SEND_WITH_IMM});
static_assert(int{IBV_WR_RDMA_READ} == int{VRNIC_WR_RDMA_READ});
static_assert(int{IBV_WR_ATOMIC_CMP_AND_SWP} == int{VRNIC_WR_ATOMIC_CMP_AND_SWP});
static_assert(int{IBV_WR_ATOMIC_FETCH_AND_ADD} == int{VRNIC_WR_ATOMIC_FETCH_AND_ADD});
static_assert(int{IBV_WR_LOCAL_INV} == int{VRNIC_WR_LOCAL_INV});
static_assert(int{IBV_WR_BIND_MW} == int{VRNIC_WR_BIND_MW});
static_assert(int{IBV_WR_SEND_WITH_INV} == int{VRNIC_WR_SEND_WITH_INV});
static_assert(int{IBV_ACCESS_REMOTE_WRITE} == int{VRNIC_ACCESS_REMOTE_WRITE});
static_assert(int{IBV_ACCESS_REMOTE_READ} == int{VRNIC_ACCESS_REMOTE_READ});
static_assert(int{IBV_ACCESS_REMOTE_ATOMIC} == int{VRNIC_ACCESS_REMOTE_ATOMIC});
static_assert(sizeof(ibv_sge) == sizeof(vrnic_sge));
static_assert(offsetof(ibv_sge, addr) == offsetof(vrnic_sge, addr));
static_assert(offsetof(ibv_sge, length) == offsetof(vrnic_sge, length));
static_assert(offsetof(ibv_sge, lkey) == offsetof(vrnic_sge, lkey));
static_assert(int{IBV_WC_RECV} == int{VRNIC_CQE_OP_RECV});
static_assert(int{IBV_WC_RECV_RDMA_WITH_IMM} == int{VRNIC_CQE_OP_RECV_RDMA_WITH_IMM});
static_assert(int{IBV_WC_FETCH_ADD} == int{VRNIC_CQE_OP_FETCH_ADD});
static_assert(int{IBV_WC_BIND_MW} == int{VRNIC_CQE_OP_BIND_MW});
static_assert(int{IBV_WC_LOCAL_INV} == int{VRNIC_CQE_OP_LOCAL_INV});
static_assert(int{IBV_WC_GENERAL_ERR} == int{VRNIC_WC_GENERAL_ERR});

namespace {

constexpr size_t kSgeOffset = VRNIC_SEND_WQE_HDR_SIZE;
constexpr size_t kInlineDataOffset = VRNIC_SEND_WQE_HDR_SIZE + VRNIC_INLINE_HDR_SIZE;

bool is_atomic(uint8_t op) {
    return op == VRNIC_WR_ATOMIC_CMP_AND_SWP || op == VRNIC_WR_ATOMIC_FETCH_AND_ADD;
}
// SEND* carry nothing in the union on a connected QP (spec 13.1).
bool is_send(uint8_t op) {
    return op == VRNIC_WR_SEND || op == VRNIC_WR_SEND_WITH_IMM || op == VRNIC_WR_SEND_WITH_INV;
}
bool can_inline(uint8_t op) {
    return is_send(op) || op == VRNIC_WR_RDMA_WRITE || op == VRNIC_WR_RDMA_WRITE_WITH_IMM;
}
// Local operations (spec 14.10, 14.11): no SGEs, no data.
bool is_local(uint8_t op) {
    return op == VRNIC_WR_LOCAL_INV || op == VRNIC_WR_BIND_MW;
}

// A window's rights are remote ones, the device's values. LOCAL_WRITE means
// nothing for a window and is dropped; anything else (ZERO_BASED, MW_BIND)
// no window of this device has.
int mw_access(unsigned int flags, uint32_t* out) {
    constexpr unsigned int remote =
        IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
    if (flags & ~(remote | IBV_ACCESS_LOCAL_WRITE))
        return EINVAL;
    *out = flags & remote;
    return 0;
}

// IBV_WR_BIND_MW binds a type 2 window (ibv_bind_mw binds type 1 ones) and
// names it twice: mw, and the upper 24 bits of the new rkey, which the
// device goes by. They must agree.
bool names_type2_window(const ibv_mw* mw, uint32_t rkey) {
    return mw && mw->type == IBV_MW_TYPE_2 && !((rkey ^ mw->rkey) & ~uint32_t{0xff});
}

const void* piece_addr(const ibv_sge& s) {
    return reinterpret_cast<const void*>(s.addr);
}
size_t piece_len(const ibv_sge& s) {
    return s.length;
}
const void* piece_addr(const ibv_data_buf& b) {
    return b.addr;
}
size_t piece_len(const ibv_data_buf& b) {
    return b.length;
}

} // namespace

// ---------------------------------------------------------------------------
// SendQueue
// ---------------------------------------------------------------------------

// For the device's opcodes IBV_QP_EX_WITH_<op> is bit IBV_WR_<op>, so one
// mask serves both ibv_wr_* and ibv_post_send.
static_assert(IBV_QP_EX_WITH_RDMA_WRITE == 1U << IBV_WR_RDMA_WRITE);
static_assert(IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM == 1U << IBV_WR_RDMA_WRITE_WITH_IMM);
static_assert(IBV_QP_EX_WITH_SEND == 1U << IBV_WR_SEND);
static_assert(IBV_QP_EX_WITH_SEND_WITH_IMM == 1U << IBV_WR_SEND_WITH_IMM);
static_assert(IBV_QP_EX_WITH_RDMA_READ == 1U << IBV_WR_RDMA_READ);
static_assert(IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP == 1U << IBV_WR_ATOMIC_CMP_AND_SWP);
static_assert(IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD == 1U << IBV_WR_ATOMIC_FETCH_AND_ADD);
static_assert(IBV_QP_EX_WITH_LOCAL_INV == 1U << IBV_WR_LOCAL_INV);
static_assert(IBV_QP_EX_WITH_BIND_MW == 1U << IBV_WR_BIND_MW);
static_assert(IBV_QP_EX_WITH_SEND_WITH_INV == 1U << IBV_WR_SEND_WITH_INV);

uint64_t qp_send_ops(ibv_qp_type type) noexcept {
    constexpr uint64_t sends = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
    constexpr uint64_t writes = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
    switch (type) {
    case IBV_QPT_RC:
    case IBV_QPT_XRC_SEND:
        return sends | writes | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
               IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
    case IBV_QPT_UC: // unreliable: nothing that needs a response
        return sends | writes;
    case IBV_QPT_UD:
        return sends;
    default:
        return 0;
    }
}

// UD and XRC QPs complete these with an error (spec 14.10, 14.11).
uint64_t qp_mem_ops(ibv_qp_type type, unsigned int version_minor) noexcept {
    if (type != IBV_QPT_RC && type != IBV_QPT_UC)
        return 0;
    uint64_t ops = 0;
    if (version_minor >= 7)
        ops |= IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_SEND_WITH_INV;
    if (version_minor >= 8)
        ops |= IBV_QP_EX_WITH_BIND_MW;
    return ops;
}

uint8_t SendQueue::wqe_flags(unsigned int send_flags, bool sig_all) noexcept {
    uint8_t f = 0;
    if ((send_flags & IBV_SEND_SIGNALED) || sig_all)
        f |= VRNIC_WQE_F_SIGNALED;
    if (send_flags & IBV_SEND_SOLICITED)
        f |= VRNIC_WQE_F_SOLICITED;
    if (send_flags & IBV_SEND_FENCE)
        f |= VRNIC_WQE_F_FENCE;
    return f;
}

vrnic_send_wqe_hdr* SendQueue::begin(uint64_t wr_id, uint8_t opcode, uint8_t flags,
                                     __be32 imm) noexcept {
    if (full())
        return nullptr;
    auto* h = reinterpret_cast<vrnic_send_wqe_hdr*>(slot(pi_));
    // Every reserved byte of the header goes out as 0 (spec 1).
    std::memset(h, 0, sizeof(*h));
    h->wr_id = wr_id;
    h->opcode = opcode;
    h->flags = flags;
    h->imm_data = imm;
    return h;
}

int SendQueue::set_sges(vrnic_send_wqe_hdr* h, const ibv_sge* sg, size_t n) noexcept {
    if (n > lim_.max_sge || (n && is_local(h->opcode)))
        return EINVAL;
    if (is_atomic(h->opcode) && (n != 1 || sg[0].length != 8))
        return EINVAL;
    if (n)
        std::memcpy(reinterpret_cast<unsigned char*>(h) + kSgeOffset, sg, n * sizeof(*sg));
    h->num_sge = static_cast<uint8_t>(n);
    h->flags &= ~VRNIC_WQE_F_INLINE;
    return 0;
}

template <class Piece>
int SendQueue::copy_inline(vrnic_send_wqe_hdr* h, const Piece* pieces, size_t n) noexcept {
    if (!can_inline(h->opcode))
        return EINVAL;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += piece_len(pieces[i]);
    if (total > lim_.max_inline)
        return EINVAL;
    auto* base = reinterpret_cast<unsigned char*>(h);
    vrnic_inline_hdr ih{};
    ih.length = static_cast<uint32_t>(total);
    std::memcpy(base + kSgeOffset, &ih, sizeof(ih));
    unsigned char* dst = base + kInlineDataOffset;
    for (size_t i = 0; i < n; i++) {
        size_t len = piece_len(pieces[i]);
        if (len)
            std::memcpy(dst, piece_addr(pieces[i]), len);
        dst += len;
    }
    h->num_sge = 0;
    h->flags |= VRNIC_WQE_F_INLINE;
    return 0;
}

int SendQueue::set_inline(vrnic_send_wqe_hdr* h, const ibv_data_buf* bufs, size_t n) noexcept {
    return copy_inline(h, bufs, n);
}

int SendQueue::set_inline_sges(vrnic_send_wqe_hdr* h, const ibv_sge* sg, size_t n) noexcept {
    return copy_inline(h, sg, n);
}

int SendQueue::bind_fields(uint32_t rkey, const ibv_mw_bind_info& info,
                           vrnic_wqe_bind_mw* out) noexcept {
    uint32_t access = 0;
    if ((info.length && !info.mr) || mw_access(info.mw_access_flags, &access))
        return EINVAL;
    *out = vrnic_wqe_bind_mw{};
    out->addr = info.addr;
    out->length = info.length;
    out->rkey = rkey;
    out->mr_lkey = info.mr ? info.mr->lkey : 0; // length 0: unbinding
    out->access = access;
    return 0;
}

int SendQueue::bind_mw(uint64_t wr_id, unsigned int send_flags, uint32_t rkey,
                       const ibv_mw_bind_info& info) noexcept {
    if (!takes(VRNIC_WR_BIND_MW))
        return EINVAL;
    vrnic_wqe_bind_mw b;
    int err = bind_fields(rkey, info, &b);
    if (err)
        return err;
    auto* h = begin(wr_id, VRNIC_WR_BIND_MW, wqe_flags(send_flags, lim_.sig_all), 0);
    if (!h)
        return ENOMEM;
    h->bind_mw = b;
    advance();
    return 0;
}

int SendQueue::post(const ibv_send_wr& wr) noexcept {
    if (!takes(wr.opcode))
        return EINVAL;
    const auto op = static_cast<uint8_t>(wr.opcode);
    // Local operations ignore the WR's SGEs.
    if (op == VRNIC_WR_BIND_MW) {
        if (!names_type2_window(wr.bind_mw.mw, wr.bind_mw.rkey))
            return EINVAL;
        return bind_mw(wr.wr_id, wr.send_flags, wr.bind_mw.rkey, wr.bind_mw.bind_info);
    }
    if (op == VRNIC_WR_LOCAL_INV) {
        auto* h = begin(wr.wr_id, op, wqe_flags(wr.send_flags, lim_.sig_all), 0);
        if (!h)
            return ENOMEM;
        h->invalidate_rkey = wr.invalidate_rkey;
        advance();
        return 0;
    }
    if (wr.num_sge < 0)
        return EINVAL;
    const auto n = static_cast<size_t>(wr.num_sge);
    const bool inl = (wr.send_flags & IBV_SEND_INLINE) && can_inline(op);
    // Check everything that can be checked before touching the ring, so a
    // failed WR leaves the slot as it was.
    if (!inl && n > lim_.max_sge)
        return EINVAL;
    if (is_atomic(op) && (n != 1 || wr.sg_list[0].length != 8))
        return EINVAL;
    if (lim_.ud && !wr.wr.ud.ah)
        return EINVAL;
    auto* h = begin(
        wr.wr_id, op, wqe_flags(wr.send_flags, lim_.sig_all),
        (op == VRNIC_WR_SEND_WITH_IMM || op == VRNIC_WR_RDMA_WRITE_WITH_IMM) ? wr.imm_data : 0);
    if (!h)
        return ENOMEM;
    if (op == VRNIC_WR_SEND_WITH_INV)
        h->invalidate_rkey = wr.invalidate_rkey;
    if (lim_.ud) {
        set_ud(h, to_ah(wr.wr.ud.ah)->handle, wr.wr.ud.remote_qpn, wr.wr.ud.remote_qkey);
    } else if (is_atomic(op)) {
        set_atomic(h, wr.wr.atomic.remote_addr, wr.wr.atomic.rkey, wr.wr.atomic.compare_add,
                   wr.wr.atomic.swap);
    } else if (!is_send(op)) {
        set_rdma(h, wr.wr.rdma.remote_addr, wr.wr.rdma.rkey);
    }
    if (lim_.xrc) // after the union's other fields: the same word in each layout
        h->rdma.xrc_srqn = wr.qp_type.xrc.remote_srqn;
    int err = inl ? set_inline_sges(h, wr.sg_list, n) : set_sges(h, wr.sg_list, n);
    if (err)
        return err;
    advance();
    return 0;
}

// ---------------------------------------------------------------------------
// RecvQueue
// ---------------------------------------------------------------------------

int RecvQueue::post(const ibv_recv_wr& wr) noexcept {
    if (wr.num_sge < 0 || static_cast<uint32_t>(wr.num_sge) > max_sge_)
        return EINVAL;
    // A device index outside what was published is ignored: the ring then
    // looks full rather than overwriting WQEs the device has not read.
    if (full() && device_ci_)
        retire_to(load_acquire(device_ci_));
    if (full())
        return ENOMEM;
    unsigned char* s = slot(pi_);
    vrnic_recv_wqe_hdr h{};
    h.wr_id = wr.wr_id;
    h.num_sge = static_cast<uint8_t>(wr.num_sge);
    std::memcpy(s, &h, sizeof(h));
    if (wr.num_sge)
        std::memcpy(s + VRNIC_RECV_WQE_HDR_SIZE, wr.sg_list,
                    static_cast<size_t>(wr.num_sge) * sizeof(ibv_sge));
    advance();
    return 0;
}

// ---------------------------------------------------------------------------
// WrBuilder
// ---------------------------------------------------------------------------

void WrBuilder::open(uint64_t wr_id, unsigned int wr_flags, uint8_t opcode, __be32 imm) noexcept {
    check_ud();
    cur_ = nullptr;
    if (err_)
        return;
    if (!sq_->takes(opcode)) {
        fail(EINVAL);
        return;
    }
    // The previous WQE of the session is complete: move past it.
    auto* h = sq_->begin(wr_id, opcode, SendQueue::wqe_flags(wr_flags, sq_->limits().sig_all), imm);
    if (!h) {
        fail(ENOMEM);
        return;
    }
    cur_ = h;
    needs_ud_ = sq_->limits().ud;
    sq_->advance();
}

void WrBuilder::bind_mw(const ibv_mw* mw, uint32_t rkey, const ibv_mw_bind_info* info) noexcept {
    if (!cur_)
        return; // open() failed the session
    vrnic_wqe_bind_mw b;
    if (!info || !names_type2_window(mw, rkey) || SendQueue::bind_fields(rkey, *info, &b)) {
        fail(EINVAL);
        return;
    }
    cur_->bind_mw = b;
}

int WrBuilder::complete(Doorbell& db, uint32_t* pi_word) noexcept {
    check_ud();
    int err = err_;
    if (err)
        sq_->rewind(start_pi_);
    else
        sq_->publish(db, pi_word, VRNIC_DB_STATUS_NEED_WAKEUP);
    cur_ = nullptr;
    return err;
}

void WrBuilder::abort() noexcept {
    sq_->rewind(start_pi_);
    cur_ = nullptr;
    err_ = 0;
    needs_ud_ = false;
}

// ---------------------------------------------------------------------------
// QpTable
// ---------------------------------------------------------------------------

QpTable::~QpTable() {
    for (auto& d : dir_) {
        Mid* mid = d.load(std::memory_order_relaxed);
        if (!mid)
            continue;
        for (auto& l : mid->leaf)
            delete l.load(std::memory_order_relaxed);
        delete mid;
    }
}

int QpTable::insert(uint32_t qpn, QpRings* qp) noexcept {
    if (qpn > VRNIC_QPN_MASK || !qp)
        return EINVAL;
    std::lock_guard<std::mutex> guard(mutex_);
    auto& d = dir_[qpn >> (2 * kBits)];
    Mid* mid = d.load(std::memory_order_relaxed);
    if (!mid) {
        mid = new (std::nothrow) Mid();
        if (!mid)
            return ENOMEM;
        d.store(mid, std::memory_order_release);
    }
    auto& l = mid->leaf[(qpn >> kBits) & kMask];
    Leaf* leaf = l.load(std::memory_order_relaxed);
    if (!leaf) {
        leaf = new (std::nothrow) Leaf();
        if (!leaf)
            return ENOMEM;
        l.store(leaf, std::memory_order_release);
    }
    auto& entry = leaf->qp[qpn & kMask];
    if (entry.load(std::memory_order_relaxed))
        return EINVAL;
    entry.store(qp, std::memory_order_release);
    return 0;
}

void QpTable::erase(uint32_t qpn) noexcept {
    if (qpn > VRNIC_QPN_MASK)
        return;
    std::lock_guard<std::mutex> guard(mutex_);
    Mid* mid = dir_[qpn >> (2 * kBits)].load(std::memory_order_relaxed);
    Leaf* leaf = mid ? mid->leaf[(qpn >> kBits) & kMask].load(std::memory_order_relaxed) : nullptr;
    if (leaf)
        leaf->qp[qpn & kMask].store(nullptr, std::memory_order_release);
}

// ---------------------------------------------------------------------------
// CQ
// ---------------------------------------------------------------------------

// A QPN is 24 bits; the device's word is trusted no further.
uint32_t cqe_src_qp(const vrnic_cqe& cqe) noexcept {
    return cqe.src_qp & VRNIC_QPN_MASK;
}

// RoCE carries no SL, so a UD receive reports its packet type there, in the
// encoding mlx5 uses and UCX reads to find the destination address in the
// GRH area: bit 3 = UDP (RoCE v2), bits 2:0 = L3 header, 1 IPv6, 2 IPv4.
uint8_t cqe_sl(const vrnic_cqe& cqe) noexcept {
    if (!(cqe.flags & VRNIC_CQE_F_GRH))
        return cqe.sl;
    switch (cqe.network_hdr_type) {
    case VRNIC_NET_IPV4:
        return 0x8 | 0x2;
    case VRNIC_NET_IPV6:
        return 0x8 | 0x1;
    default:
        return cqe.sl;
    }
}

// The CQE's word at 0x10 is the immediate or the invalidated rkey, never both.
unsigned int cqe_wc_flags(const vrnic_cqe& cqe) noexcept {
    unsigned int f = 0;
    if (cqe.flags & VRNIC_CQE_F_WITH_IMM)
        f |= IBV_WC_WITH_IMM;
    else if (cqe.flags & VRNIC_CQE_F_WITH_INV)
        f |= IBV_WC_WITH_INV;
    if (cqe.flags & VRNIC_CQE_F_GRH)
        f |= IBV_WC_GRH;
    return f;
}

// A status the device does not define reads as a general error.
ibv_wc_status cqe_status(const vrnic_cqe& cqe) noexcept {
    return cqe.status <= VRNIC_WC_GENERAL_ERR ? static_cast<ibv_wc_status>(cqe.status)
                                              : IBV_WC_GENERAL_ERR;
}

void cqe_to_wc(const vrnic_cqe& cqe, ibv_wc* wc) noexcept {
    wc->wr_id = cqe.wr_id;
    wc->status = cqe_status(cqe);
    wc->opcode = static_cast<ibv_wc_opcode>(cqe.opcode);
    wc->vendor_err = cqe.vendor_err;
    wc->byte_len = cqe.byte_len;
    wc->wc_flags = cqe_wc_flags(cqe);
    if (wc->wc_flags & IBV_WC_WITH_INV)
        wc->invalidated_rkey = cqe.invalidated_rkey; // host order: __le32 on x86
    else
        wc->imm_data = cqe.imm_data;
    wc->qp_num = cqe.qpn;
    wc->src_qp = cqe_src_qp(cqe);
    wc->pkey_index = cqe.pkey_index;
    wc->slid = 0;
    wc->sl = cqe_sl(cqe);
    wc->dlid_path_bits = cqe.dlid_path_bits;
}

bool CqRing::peek(vrnic_cqe* out) const noexcept {
    if (!valid(ci_))
        return false;
    // The acquire load of the owner byte orders this copy after it.
    std::memcpy(out, entry(ci_), sizeof(*out));
    return true;
}

void CqRing::arm(bool solicited_only) noexcept {
    if (solicited_only)
        ++sol_sn_;
    else
        ++next_sn_;
    store_relaxed(arm_word_, VRNIC_CQ_ARM_WORD(next_sn_, sol_sn_));
    full_fence();
}

bool CqPoller::stale(uint32_t idx, uint32_t qpn) noexcept {
    bool hit = false;
    for (size_t i = 0; i < stale_.size();) {
        // Entries are examined in ring order: once past end, never again;
        // a range still kept covers idx.
        if (static_cast<int32_t>(idx - stale_[i].end) >= 0) {
            stale_[i] = stale_.back();
            stale_.pop_back();
            continue;
        }
        if (stale_[i].qpn == qpn)
            hit = true;
        i++;
    }
    return hit;
}

bool CqPoller::next_locked() noexcept {
    for (;;) {
        if (!ring_.peek(&cur_))
            return false;
        // No QP of a user context has a QPN below 2. Such an entry is not
        // a completion: a zero page where the ring was (the kernel zaps the
        // mapping when the device goes away) looks valid once the phase
        // is 0. Report nothing rather than garbage.
        if (cur_.qpn < VRNIC_QPN_MIN)
            return false;
        uint32_t idx = ring_.ci();
        ring_.pop();
        consumed_ = true;
        if (!stale_.empty() && stale(idx, cur_.qpn))
            continue;
        if (QpRings* qp = qps_ ? qps_->find(cur_.qpn) : nullptr)
            qp->retire(cur_);
        return true;
    }
}

int CqPoller::poll(int n, ibv_wc* wc) noexcept {
    if (n < 0)
        return -EINVAL;
    std::lock_guard<SpinLock> guard(lock_);
    int got = 0;
    while (got < n && next_locked())
        cqe_to_wc(cur_, &wc[got++]);
    if (consumed_) {
        ring_.publish_ci();
        consumed_ = false;
    }
    return got;
}

int CqPoller::start_poll() noexcept {
    lock_.lock();
    if (next_locked())
        return 0;
    if (consumed_) {
        ring_.publish_ci();
        consumed_ = false;
    }
    lock_.unlock();
    return ENOENT;
}

int CqPoller::next_poll() noexcept {
    return next_locked() ? 0 : ENOENT;
}

void CqPoller::end_poll() noexcept {
    if (consumed_) {
        ring_.publish_ci();
        consumed_ = false;
    }
    lock_.unlock();
}

int CqPoller::forget_qp(uint32_t qpn) noexcept {
    uint32_t end = 0;
    bool found = false;
    const uint32_t ci = ring_.ci();
    for (uint32_t i = 0; i < ring_.depth() && ring_.valid(ci + i); i++) {
        if (ring_.entry(ci + i)->qpn == qpn) {
            end = ci + i + 1;
            found = true;
        }
    }
    if (!found)
        return 0;
    try {
        stale_.push_back({qpn, end});
    } catch (...) {
        return ENOMEM;
    }
    return 0;
}

} // namespace vrnic::prov
