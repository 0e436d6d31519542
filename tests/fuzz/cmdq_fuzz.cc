// libFuzzer target vrnic_fuzz_cmdq: the command queue. Raw 128-byte entries,
// and commands a driver could send built from the input with the handles
// earlier commands returned (or stale, foreign and raw ones): contexts, PDs,
// MRs with direct and two-level page lists, CQs and RESIZE_CQ with
// completions outstanding, SRQs (their fields at and past the limits, the
// limit armed, destroyed while QPs use them), QPs on their own RQ or on an
// SRQ through the whole MODIFY_QP state machine, AHs, GIDs, EQs, multicast
// attach and detach (datagrams to the groups), XRC domains, XRC SRQs and
// both XRC QP types (initiators' messages naming any SRQ). Commands run one
// at a time or in batches that wrap the ring, a byte of the next command
// may be corrupted, the producer index may jump out of range (FATAL), and
// the driver may reset and start over. After every step the model's memory
// must be within its bound (fuzz_memory.h).
#include "fuzz_memory.h"
#include "fuzz_world.h"

#include <algorithm>
#include <vector>

using namespace vrnic;
using namespace vrnic::fuzz;

namespace {

struct Obj {
    uint32_t h, uctx, page, slot; // handle, owner context, doorbell slot
};

struct QpObj : Obj {
    uint64_t sq;
    uint32_t sq_log, sq_shift, sq_pi;
};

// What the harness knows exists, from command responses.
struct Pools {
    std::vector<Obj> uctx, pd, mr, cq, ah, eq, srq, xrcd;
    std::vector<QpObj> qp;
    void clear() { *this = Pools{}; }
};

// CREATE_QP's qp_type for a QP of type t (not the GSI QP's).
uint8_t qp_type_of(QpType t) {
    static constexpr uint8_t dev[kQpTypeCount] = {VRNIC_QPT_RC, VRNIC_QPT_UC, VRNIC_QPT_UD,
                                                  VRNIC_QPT_XRC_INI, VRNIC_QPT_XRC_TGT};
    return dev[size_t(t)];
}

class CmdFuzz {
  public:
    void run(Input& in) {
        w_.bring_up();
        p_.clear();
        batch_ = 0;
        corrupt_ = false;
        pending_.clear();
        last_reg_mr_ = vrnic_cmd{};
        while (!in.empty()) {
            step(in);
            w_.poll();
            check_model_memory(w_.dev().state());
        }
        flush();
        w_.settle();
        check_model_memory(w_.dev().state());
    }

  private:
    void step(Input& in) {
        vrnic_cmd c{};
        const uint32_t op = in.below(33);
        switch (op) {
        case 0: // anything at all
            in.take(&c, sizeof(c));
            c.hdr.opcode %= 0x20;
            break;
        case 1:
            c.hdr.opcode = VRNIC_CMD_ALLOC_UCTX;
            break;
        case 2:
            handle_cmd(c, VRNIC_CMD_DEALLOC_UCTX, pick(in, p_.uctx));
            break;
        case 3:
            c.hdr.opcode = VRNIC_CMD_CREATE_PD;
            c.create_pd.uctx = pick_uctx(in);
            break;
        case 4:
            handle_cmd(c, VRNIC_CMD_DESTROY_PD, pick(in, p_.pd));
            break;
        case 5:
            reg_mr(c, in);
            last_reg_mr_ = c;
            break;
        case 6: { // the last REG_MR again, up to 64 times: one buffer registered
            // over and over (its page list may have been overwritten since)
            const uint32_t n = 1 + in.below(64);
            for (uint32_t k = 0; k < n; k++)
                submit(last_reg_mr_);
            return;
        }
        case 7:
            handle_cmd(c, VRNIC_CMD_DEREG_MR, pick(in, p_.mr));
            break;
        case 8:
            create_cq(c, in);
            break;
        case 9:
            handle_cmd(c, VRNIC_CMD_DESTROY_CQ, pick(in, p_.cq));
            break;
        case 10:
            c.hdr.opcode = VRNIC_CMD_RESIZE_CQ;
            c.resize_cq.cqn = pick(in, p_.cq);
            c.resize_cq.log_depth = cq_log(in);
            c.resize_cq.ring_addr = ring_addr(in);
            break;
        case 11:
        case 12:
            create_qp(c, in);
            break;
        case 13:
        case 14:
        case 15:
            modify_qp(c, in);
            break;
        case 16:
            handle_cmd(c, VRNIC_CMD_QUERY_QP, pick(in, p_.qp));
            break;
        case 17:
            handle_cmd(c, VRNIC_CMD_DESTROY_QP, pick(in, p_.qp));
            break;
        case 18:
            create_ah(c, in);
            break;
        case 19:
            handle_cmd(c, VRNIC_CMD_DESTROY_AH, pick(in, p_.ah));
            break;
        case 20:
            set_gid(c, in);
            break;
        case 21:
            c.hdr.opcode = VRNIC_CMD_CREATE_EQ;
            c.create_eq.ring_addr = ring_addr(in);
            c.create_eq.log_depth = in.u8() >= 0xf0 ? in.u32() : 4 + in.below(10);
            c.create_eq.vector = in.below(VRNIC_NUM_VECTORS + 2);
            break;
        case 22:
            handle_cmd(c, VRNIC_CMD_DESTROY_EQ, pick(in, p_.eq));
            break;
        case 23: { // queries, NOP, the SRQ and the XRCD commands
            switch (in.below(8)) {
            case 0:
                c.hdr.opcode = VRNIC_CMD_NOP;
                break;
            case 1:
                c.hdr.opcode = VRNIC_CMD_QUERY_DEVICE;
                break;
            case 2:
                c.hdr.opcode = VRNIC_CMD_QUERY_PORT;
                c.query_port.port_num = in.u8() & 0x81;
                break;
            case 3:
                create_srq(c, in);
                break;
            case 4:
                modify_srq(c, in);
                break;
            case 5:
                c.hdr.opcode = VRNIC_CMD_ALLOC_XRCD;
                c.alloc_xrcd.uctx = pick_uctx(in);
                break;
            case 6:
                handle_cmd(c, VRNIC_CMD_DEALLOC_XRCD, pick(in, p_.xrcd));
                break;
            default:
                handle_cmd(c, VRNIC_CMD_DESTROY_SRQ, pick(in, p_.srq));
                break;
            }
            break;
        }
        case 24: // the next commands go out together, maybe wrapping the ring
            flush();
            batch_ = 2 + in.below(1u << kCmdqLog);
            return;
        case 25: // one byte of the next command is wrong
            corrupt_ = true;
            corrupt_at_ = in.below(VRNIC_CMD_SIZE);
            corrupt_xor_ = in.u8() | 1;
            return;
        case 26:
            traffic(in);
            return;
        case 27:
            cq_doorbell(in);
            return;
        case 28: { // a completion EQ or the async EQ consumed
            if (Obj* e = pick_obj(in, p_.eq)) {
                const Eq* eq = w_.objects().eqs.find(e->h);
                if (eq)
                    store_release(&w_.slot(VRNIC_KERNEL_DB_PAGE, e->slot)->eq.ci, eq->pi);
            }
            store_release(&w_.regs()->aeq_ci, load_acquire(&w_.regs()->aeq_pi));
            return;
        }
        case 29:
            w_.step_clock(in);
            return;
        case 30: // a driver that lost track of cmdq_pi: FATAL until reset
            if ((in.u8() & 15) == 0) {
                flush();
                store_release(&w_.regs()->cmdq_pi, w_.cmd_pi() + (1u << kCmdqLog) + 1 + in.u8());
            }
            return;
        case 31:
            mcast(c, in);
            break;
        default: // the driver resets the device and starts over
            flush();
            w_.bring_up();
            p_.clear();
            return;
        }
        submit(c);
    }

    // ---- posting and bookkeeping ---------------------------------------------

    void submit(vrnic_cmd c) {
        if (corrupt_) {
            reinterpret_cast<uint8_t*>(&c)[corrupt_at_] ^= corrupt_xor_;
            corrupt_ = false;
        }
        c.hdr.status = ~0u; // "not executed" unless the device answers
        pending_.push_back({w_.write_cmd(c), c});
        if (batch_ > 0 && --batch_ > 0 && pending_.size() < (1u << kCmdqLog))
            return;
        batch_ = 0;
        flush();
    }

    void flush() {
        if (pending_.empty())
            return;
        w_.publish_cmds();
        for (const auto& [idx, req] : pending_)
            record(req, w_.response(idx));
        pending_.clear();
    }

    static void forget(std::vector<Obj>& v, uint32_t h) {
        std::erase_if(v, [h](const Obj& o) { return o.h == h; });
    }

    uint32_t page_of(uint32_t uctx) const {
        for (const Obj& u : p_.uctx)
            if (u.h == uctx)
                return u.page;
        return VRNIC_KERNEL_DB_PAGE;
    }

    // Learns the handles a successful command created or destroyed.
    void record(const vrnic_cmd& req, const vrnic_cmd& r) {
        if (r.hdr.status != VRNIC_CMD_STATUS_OK)
            return;
        switch (req.hdr.opcode) {
        case VRNIC_CMD_ALLOC_UCTX:
            p_.uctx.push_back({r.alloc_uctx_resp.uctx, 0, r.alloc_uctx_resp.db_page, 0});
            break;
        case VRNIC_CMD_DEALLOC_UCTX:
            forget(p_.uctx, req.handle.handle);
            break;
        case VRNIC_CMD_CREATE_PD:
            p_.pd.push_back({r.create_pd_resp.pd, req.create_pd.uctx, 0, 0});
            break;
        case VRNIC_CMD_DESTROY_PD:
            forget(p_.pd, req.handle.handle);
            break;
        case VRNIC_CMD_REG_MR:
            p_.mr.push_back({r.reg_mr_resp.lkey, 0, 0, 0});
            break;
        case VRNIC_CMD_DEREG_MR:
            forget(p_.mr, req.handle.handle);
            break;
        case VRNIC_CMD_CREATE_CQ:
            p_.cq.push_back({r.create_cq_resp.cqn, req.create_cq.uctx, page_of(req.create_cq.uctx),
                             r.create_cq_resp.db_slot});
            break;
        case VRNIC_CMD_DESTROY_CQ:
            forget(p_.cq, req.handle.handle);
            break;
        case VRNIC_CMD_CREATE_QP: {
            const vrnic_cmd_create_qp& q = req.create_qp;
            QpObj o{};
            o.h = r.create_qp_resp.qpn;
            o.uctx = q.uctx;
            o.page = page_of(q.uctx);
            o.slot = r.create_qp_resp.db_slot;
            o.sq = q.sq_addr;
            o.sq_log = q.sq_log_depth;
            o.sq_shift = q.sq_wqe_shift;
            p_.qp.push_back(o);
            break;
        }
        case VRNIC_CMD_DESTROY_QP:
            std::erase_if(p_.qp, [&](const QpObj& o) { return o.h == req.handle.handle; });
            break;
        case VRNIC_CMD_CREATE_SRQ:
            p_.srq.push_back({r.create_srq_resp.srqn, req.create_srq.uctx,
                              page_of(req.create_srq.uctx), r.create_srq_resp.db_slot});
            break;
        case VRNIC_CMD_DESTROY_SRQ:
            forget(p_.srq, req.handle.handle);
            break;
        case VRNIC_CMD_ALLOC_XRCD:
            p_.xrcd.push_back({r.alloc_xrcd_resp.xrcd, req.alloc_xrcd.uctx, 0, 0});
            break;
        case VRNIC_CMD_DEALLOC_XRCD:
            forget(p_.xrcd, req.handle.handle);
            break;
        case VRNIC_CMD_CREATE_AH:
            p_.ah.push_back({r.create_ah_resp.ah, 0, 0, 0});
            break;
        case VRNIC_CMD_DESTROY_AH:
            forget(p_.ah, req.handle.handle);
            break;
        case VRNIC_CMD_CREATE_EQ:
            p_.eq.push_back(
                {r.create_eq_resp.eqn, 0, VRNIC_KERNEL_DB_PAGE, r.create_eq_resp.db_slot});
            break;
        case VRNIC_CMD_DESTROY_EQ:
            forget(p_.eq, req.handle.handle);
            break;
        default:
            break;
        }
    }

    // ---- choosing handles and values -----------------------------------------

    // A live object the harness acts on, or none.
    template <typename T> T* pick_obj(Input& in, std::vector<T>& v) {
        const uint8_t m = in.u8();
        return v.empty() || m >= 224 ? nullptr : &v[m % v.size()];
    }
    // A handle for a command: mostly live; sometimes 0, a stale generation or
    // a neighbouring slot, or raw.
    template <typename T> uint32_t pick(Input& in, std::vector<T>& v) {
        const uint8_t m = in.u8();
        if (m < 200 && !v.empty())
            return v[m % v.size()].h;
        if (m < 216)
            return 0;
        if (m < 240 && !v.empty())
            return v[m % v.size()].h ^ (1u << (m % 9)); // stale or another slot
        return in.u32();
    }
    // Prefers an object of context `uctx` so cross-object checks pass.
    template <typename T> uint32_t pick_in(Input& in, std::vector<T>& v, uint32_t uctx) {
        const uint8_t m = in.u8();
        std::vector<uint32_t> mine;
        for (const T& o : v)
            if (o.uctx == uctx)
                mine.push_back(o.h);
        if (m < 224 && !mine.empty())
            return mine[m % mine.size()];
        return pick(in, v);
    }
    uint32_t pick_uctx(Input& in) {
        const uint8_t m = in.u8();
        if (m >= 250)
            return in.u32();
        if (m < 128 || p_.uctx.empty())
            return VRNIC_UCTX_KERNEL;
        return p_.uctx[m % p_.uctx.size()].h;
    }

    // A ring base: a page of the ring area, or 0, misaligned, raw.
    static uint64_t ring_addr(Input& in) {
        const uint8_t m = in.u8();
        if (m < 240)
            return kRings + (m % kRingPages) * 4096;
        if (m < 244)
            return 0;
        if (m < 248)
            return kRings + 8;
        return in.u64();
    }
    static uint32_t cq_log(Input& in) {
        const uint8_t m = in.u8();
        return m >= 0xf0 ? m % 32 : 1 + m % 12;
    }

    void handle_cmd(vrnic_cmd& c, uint16_t op, uint32_t h) {
        c.hdr.opcode = op;
        c.handle.handle = h;
    }

    // ---- builders --------------------------------------------------------------

    void reg_mr(vrnic_cmd& c, Input& in) {
        c.hdr.opcode = VRNIC_CMD_REG_MR;
        vrnic_cmd_reg_mr& m = c.reg_mr;
        m.pd = pick(in, p_.pd);
        const uint8_t f = in.u8();
        m.access = f >= 0xf0 ? in.u32() : f & VRNIC_ACCESS_ALL;
        if ((f & 0x30) == 0x30) { // a kernel DMA MR: no address fields
            m.flags = VRNIC_MR_F_PHYS;
            return;
        }
        if ((f & 0xf0) == 0xe0)
            m.flags = 0x8000; // a flag this device does not know
        const uint8_t s = in.u8();
        m.page_shift = uint8_t(s >= 0xf8 ? s : VRNIC_MR_PAGE_SHIFT_MIN + s % 12);
        const uint32_t shift = m.page_shift < 64 ? m.page_shift : 12;
        const uint64_t psize = 1ull << shift;
        m.iova = (f & 0x40) ? in.u64() : uint64_t(in.u16()) << 12 | (in.u16() & 0xfff);
        const uint8_t l = in.u8();
        switch (l & 3) {
        case 0:
            m.length = 1 + in.u16();
            break;
        case 1:
            m.length = uint64_t(1 + (l >> 2)) << 12;
            break;
        case 2: // more pages than one leaf holds
            m.length = uint64_t(VRNIC_PBL_ENTRIES_PER_PAGE + (l >> 2)) << 12;
            break;
        default:
            m.length = in.u64();
            break;
        }
        const uint64_t need = ((m.iova & (psize - 1)) + m.length + psize - 1) >> shift;
        m.npages = uint32_t(need);
        if (f & 0x80)
            m.npages += int8_t(in.u8());
        const uint8_t lv = in.u8();
        m.pbl_level = lv >= 0xf8 ? lv : (lv & 1 ? VRNIC_PBL_INDIRECT : VRNIC_PBL_DIRECT);
        m.pbl_addr = lv >= 0xf0 && lv < 0xf8 ? kPbl + 4 : kPbl;
        write_page_list(in, m, psize);
    }

    // Fills the page list at kPbl: one level, or a top page of leaf
    // addresses followed by the leaves.
    void write_page_list(Input& in, const vrnic_cmd_reg_mr& m, uint64_t psize) {
        const uint32_t n = std::min<uint32_t>(m.npages, 2 * VRNIC_PBL_ENTRIES_PER_PAGE);
        const uint8_t mode = in.u8();
        const uint64_t frames = std::max<uint64_t>(kRam / psize, 1);
        const uint64_t first = (in.u16() % frames) * psize;
        const uint32_t bad = in.below(std::max(n, 1u));
        std::vector<uint64_t> pages(n);
        for (uint32_t i = 0; i < n; i++) {
            switch (mode & 3) {
            case 0: // contiguous, wrapping inside RAM
                pages[i] = ((first / psize + i) % frames) * psize;
                break;
            case 1: // one page over and over
                pages[i] = first;
                break;
            case 2: // scattered
                pages[i] = (uint64_t(i) * 2654435761u % frames) * psize;
                break;
            default: // contiguous with one bad entry
                pages[i] = ((first / psize + i) % frames) * psize;
                if (i == bad)
                    pages[i] = (mode & 4) ? pages[i] + 8 : kRam + (mode >> 3) * psize;
                break;
            }
        }
        if (m.pbl_level != VRNIC_PBL_INDIRECT) {
            w_.put(kPbl, pages.data(), n * 8ull);
            return;
        }
        const uint32_t leaves = (n + VRNIC_PBL_ENTRIES_PER_PAGE - 1) / VRNIC_PBL_ENTRIES_PER_PAGE;
        for (uint32_t k = 0; k < leaves; k++) {
            uint64_t leaf = kPbl + (k + 1) * 4096ull;
            if (mode & 0x80 && k == leaves - 1)
                leaf += 8; // a misaligned leaf
            w_.put(kPbl + 8 * k, &leaf, 8);
            const uint32_t cnt = std::min<uint32_t>(VRNIC_PBL_ENTRIES_PER_PAGE, n - k * 512u);
            w_.put(leaf, pages.data() + k * 512, cnt * 8ull);
        }
    }

    void create_cq(vrnic_cmd& c, Input& in) {
        c.hdr.opcode = VRNIC_CMD_CREATE_CQ;
        c.create_cq.uctx = pick_uctx(in);
        c.create_cq.eqn = pick(in, p_.eq);
        c.create_cq.ring_addr = ring_addr(in);
        c.create_cq.log_depth = cq_log(in);
        if (in.u8() == 0xff)
            c.create_cq.flags = 1;
    }

    void create_qp(vrnic_cmd& c, Input& in) {
        c.hdr.opcode = VRNIC_CMD_CREATE_QP;
        vrnic_cmd_create_qp& q = c.create_qp;
        q.uctx = pick_uctx(in);
        q.pd = pick_in(in, p_.pd, q.uctx);
        const uint8_t t = in.u8();
        q.qp_type = t >= 0xf0   ? t % 12 // XRC too, and invalid types
                    : t >= 0xc0 ? (t & 2 ? VRNIC_QPT_UD : VRNIC_QPT_UC)
                                : VRNIC_QPT_RC;
        q.flags = t & 1 ? VRNIC_QP_F_SQ_SIG_ALL : 0;
        const bool on_srq = (t & 0x0e) == 0x0e; // an SRQ: its own, stale, or another's
        if (on_srq)
            q.srqn = pick_in(in, p_.srq, q.uctx);
        q.send_cqn = pick_in(in, p_.cq, q.uctx);
        q.recv_cqn = pick_in(in, p_.cq, q.uctx);
        q.sq_addr = ring_addr(in);
        q.rq_addr = ring_addr(in);
        const uint8_t d = in.u8();
        q.sq_log_depth = uint8_t(d >= 0xf0 ? d : 1 + d % 8);
        q.sq_wqe_shift = uint8_t(VRNIC_SQ_WQE_SHIFT_MIN - 1 + in.below(8));
        q.rq_log_depth = uint8_t(1 + in.below(9));
        q.rq_wqe_shift = uint8_t(VRNIC_RQ_WQE_SHIFT_MIN - 1 + in.below(8));
        const uint8_t lim = in.u8();
        const uint32_t sq_shift = std::clamp<uint32_t>(q.sq_wqe_shift, 6, 11);
        const uint32_t rq_shift = std::clamp<uint32_t>(q.rq_wqe_shift, 5, 11);
        q.max_send_sge = uint16_t(std::min(VRNIC_SQ_MAX_SGE(sq_shift), 16u) + (lim & 1));
        q.max_recv_sge = uint16_t(std::min(VRNIC_RQ_MAX_SGE(rq_shift), 16u) + ((lim >> 1) & 1));
        q.max_inline = std::min(VRNIC_SQ_MAX_INLINE(sq_shift), 256u) + ((lim >> 2) & 1);
        if (lim >= 0xf8 || q.qp_type == VRNIC_QPT_XRC_TGT)
            q.xrcd = pick(in, p_.xrcd);
        if (on_srq && !(lim & 0x30)) { // the RQ fields as an SRQ wants them, mostly
            q.rq_addr = 0;
            q.rq_log_depth = q.rq_wqe_shift = 0;
            q.max_recv_sge = 0;
        }
    }

    void create_srq(vrnic_cmd& c, Input& in) {
        c.hdr.opcode = VRNIC_CMD_CREATE_SRQ;
        vrnic_cmd_create_srq& q = c.create_srq;
        q.uctx = pick_uctx(in);
        q.pd = pick_in(in, p_.pd, q.uctx);
        q.ring_addr = ring_addr(in);
        const uint8_t d = in.u8();
        q.log_depth = uint8_t(d >= 0xf0 ? d : d % 17); // 0 and past max_srq_wr too
        q.wqe_shift = uint8_t(VRNIC_RQ_WQE_SHIFT_MIN - 1 + in.below(8));
        const uint32_t shift = std::clamp<uint32_t>(q.wqe_shift, 5, 11);
        const uint8_t lim = in.u8();
        q.max_sge = uint16_t(std::min(VRNIC_RQ_MAX_SGE(shift), 16u) - (lim & 3) + ((lim >> 2) & 1));
        const uint32_t depth = q.log_depth < 32 ? 1u << q.log_depth : 0;
        q.srq_limit = lim >= 0xf0 ? in.u32() : (lim >> 3) % (depth + 1);
        if (in.u8() >= 0xc0) { // an XRC SRQ: a domain and a CQ of its own
            q.xrcd = pick(in, p_.xrcd);
            q.cqn = pick_in(in, p_.cq, q.uctx);
        }
    }

    void modify_srq(vrnic_cmd& c, Input& in) {
        c.hdr.opcode = VRNIC_CMD_MODIFY_SRQ;
        vrnic_cmd_modify_srq& m = c.modify_srq;
        m.srqn = pick(in, p_.srq);
        const uint8_t x = in.u8();
        m.attr_mask = x < 0xf0 ? VRNIC_SRQ_ATTR_LIMIT : x & 7;
        m.srq_limit = x & 0x40 ? in.u32() : in.u8() % 20;
        if (x == 0xef)
            m.max_wr = 1;
    }

    void modify_qp(vrnic_cmd& c, Input& in) {
        c.hdr.opcode = VRNIC_CMD_MODIFY_QP;
        const uint32_t qpn = pick(in, p_.qp);
        const Qp* qp = w_.objects().qps.find(qpn);
        const uint8_t cur = qp ? qp->state : VRNIC_QPS_RESET;
        const uint8_t m = in.u8();
        // Mostly the next state of the usual path, else any (7 is invalid).
        static const uint8_t next[] = {VRNIC_QPS_INIT, VRNIC_QPS_RTR, VRNIC_QPS_RTS,  VRNIC_QPS_SQD,
                                       VRNIC_QPS_RTS,  VRNIC_QPS_ERR, VRNIC_QPS_RESET};
        const uint8_t to = m < 128 && cur < 7 ? next[cur] : m % 8;
        Path p = fuzz_path();
        if (qp) // the attributes its type takes
            p.qp_type = qp_type_of(qp->type);
        p.dest_qpn = pick(in, p_.qp);
        const uint8_t a = in.u8();
        p.access = a & VRNIC_ACCESS_ALL;
        p.max_dest_rd_atomic = uint8_t((a >> 4) % 4 == 3 ? 17 : (a >> 4) % 4);
        p.max_rd_atomic = uint8_t((a >> 6) == 3 ? 17 : a >> 6);
        const uint8_t r = in.u8();
        p.rnr_retry = r % 8;
        p.min_rnr_timer = r >> 3;
        p.mtu = uint8_t(in.below(7));
        p.qkey = r & 1 ? in.u32() : 0x1234;
        vrnic_cmd_modify_qp& mq = c.modify_qp;
        mq = modify_to(qpn, to, p);
        const bool rts_sqd = (cur == VRNIC_QPS_RTS || cur == VRNIC_QPS_SQD) &&
                             (to == VRNIC_QPS_RTS || to == VRNIC_QPS_SQD);
        if (rts_sqd) // no required attributes between these
            mq.attr_mask = VRNIC_QP_ATTR_STATE;
        const uint8_t x = in.u8();
        if (x & 1) {
            mq.attr_mask |= VRNIC_QP_ATTR_CUR_STATE;
            mq.attr.cur_qp_state = x & 2 ? cur : uint8_t(in.u8() % 8);
        }
        if (to == VRNIC_QPS_SQD && (x & 4)) {
            mq.attr_mask |= VRNIC_QP_ATTR_EN_SQD_ASYNC_NOTIFY;
            mq.attr.en_sqd_async_notify = x & 0x80 ? 2 : 1;
        }
        if (x & 8) // an attribute the transition does or does not allow
            mq.attr_mask ^= 1u << in.below(22);
        if (x & 0x10) {
            mq.attr.av.sgid_index = uint8_t(in.below(18));
            mq.attr.av.sl = uint8_t(in.below(17));
            mq.attr.av.flow_label = in.u8() == 0xff ? 1u << 20 : in.u16();
            mq.attr.av.vlan_id = in.u8() & 1 ? uint16_t(in.below(4200)) : VRNIC_VLAN_NONE;
        }
        if (x & 0x20) { // one attribute just past its limit
            vrnic_qp_attr& at = mq.attr;
            switch (in.below(14)) {
            case 0:
                at.reserved[in.below(6)] = 1;
                break;
            case 1:
                at.qp_access_flags |= 0x10;
                break;
            case 2:
                at.pkey_index = 1;
                break;
            case 3:
                at.port_num = 2;
                break;
            case 4:
                at.en_sqd_async_notify = 2;
                break;
            case 5:
                at.timeout = 32;
                break;
            case 6:
                at.retry_cnt = 8;
                break;
            case 7:
                at.rnr_retry = 8;
                break;
            case 8:
                at.rq_psn = 1u << 24;
                break;
            case 9:
                at.sq_psn = 1u << 24;
                break;
            case 10:
                at.min_rnr_timer = 32;
                break;
            case 11:
                at.dest_qpn |= 1u << 24;
                break;
            case 12:
                at.path_mtu = VRNIC_MTU_4096 + 1;
                break;
            default:
                at.av.sgid_index = 16;
                break;
            }
        }
        if (m >= 0xfc) // raw attributes
            in.take(&mq.attr, sizeof(mq.attr));
    }

    void create_ah(vrnic_cmd& c, Input& in) {
        c.hdr.opcode = VRNIC_CMD_CREATE_AH;
        vrnic_cmd_create_ah& a = c.create_ah;
        a.pd = pick(in, p_.pd);
        const uint8_t m = in.u8();
        memcpy(a.av.dgid, kGid, sizeof(kGid));
        if (m & 2) // a GID the device does not have
            a.av.dgid[in.below(16)] ^= in.u8();
        if ((m & 0x0c) == 0x0c)
            mcast_gid(a.av.dgid, in);
        a.av.sgid_index = uint8_t(m < 200 ? 0 : in.below(18));
        a.av.flow_label = m == 200 ? 1u << 20 : in.u16();
        a.av.sl = uint8_t(m == 201 ? 16 : m % 16);
        a.av.vlan_id = m == 202 ? 4096 : (m & 1 ? m : VRNIC_VLAN_NONE);
        a.reserved = m == 203;
    }

    // A multicast group (more IPv6 ones than max_mcast_grp, a few IPv4
    // ones) or, rarely, a unicast GID.
    static void mcast_gid(uint8_t (&gid)[16], Input& in) {
        const uint8_t m = in.u8();
        memset(gid, 0, 16);
        if (m < 0x80) {
            gid[0] = 0xff;
            gid[1] = 0x0e;
            gid[15] = m % 70;
        } else if (m < 0xf0) {
            gid[10] = gid[11] = 0xff;
            gid[12] = 239;
            gid[15] = m % 8;
        } else {
            memcpy(gid, kGid, sizeof(kGid));
        }
    }

    void mcast(vrnic_cmd& c, Input& in) {
        const uint8_t m = in.u8();
        c.hdr.opcode = m & 1 ? VRNIC_CMD_DETACH_MCAST : VRNIC_CMD_ATTACH_MCAST;
        c.mcast.qpn = pick(in, p_.qp);
        mcast_gid(c.mcast.gid, in);
        c.mcast.reserved = m == 0xff;
    }

    void set_gid(vrnic_cmd& c, Input& in) {
        c.hdr.opcode = VRNIC_CMD_SET_GID;
        const uint8_t m = in.u8();
        vrnic_cmd_set_gid& g = c.set_gid;
        g = gid_entry(m < 128 ? 0 : in.below(18));
        if (m & 1) { // delete, sometimes with stray fields
            g = vrnic_cmd_set_gid{};
            g.index = m < 128 ? 0 : in.below(18);
            if (m & 2)
                g.vlan_id = 1;
            return;
        }
        if (m & 2)
            g.gid_type = uint8_t(in.below(4));
        if (m & 4)
            g.vlan_id = uint16_t(in.below(4200));
        if (m & 8)
            g.flags |= 2;
        if (m & 16)
            g.gid[15] ^= in.u8();
    }

    // ---- a little data path, so CQs have completions to keep or lose ----------

    // One WQE on a QP from the pool: an empty signaled WRITE or SEND (or an
    // invalid opcode) to whatever the QP is connected to, or a datagram
    // through an AH from the pool.
    void traffic(Input& in) {
        QpObj* q = pick_obj(in, p_.qp);
        if (!q || q->sq_log > 12 || q->sq_shift < 6 || q->sq_shift > 11)
            return;
        const Qp* qp = w_.objects().qps.find(q->h);
        const bool xrc_ini = qp && qp->type == QpType::xrc_ini;
        const uint8_t m = in.u8();
        const uint32_t n = 1 + m % 8;
        for (uint32_t k = 0; k < n; k++) {
            vrnic_send_wqe_hdr h{};
            h.wr_id = q->sq_pi;
            h.opcode = uint8_t((m >> 3) % 8);
            h.flags = VRNIC_WQE_F_SIGNALED;
            if (!p_.ah.empty() && (m & 0x40)) { // a datagram, if it is a UD QP
                h.ud.ah = pick(in, p_.ah);
                h.ud.remote_qpn = m & 0x80 ? pick(in, p_.qp) : k & 4 ? VRNIC_QPN_MASK : k & 1;
                h.ud.remote_qkey = k & 2 ? VRNIC_QKEY_USE_QP : 0x1234;
            } else if (xrc_ini) { // the remote XRC SRQ: any SRQ, stale or raw
                h.rdma.xrc_srqn = pick(in, p_.srq);
            }
            const uint64_t at = ring_slot(q->sq, q->sq_log, 1u << q->sq_shift, q->sq_pi);
            if (uint8_t* p = w_.host(at, sizeof(h)))
                memcpy(p, &h, sizeof(h));
            q->sq_pi++;
        }
        store_release(&w_.slot(q->page, q->slot)->qp.sq_pi, q->sq_pi);
        // Receives for SRQ-attached responders: whatever the SRQ ring holds,
        // up to a ring ahead of the device's ci and sometimes past it.
        if (Obj* o = pick_obj(in, p_.srq)) {
            const Srq* srq = w_.objects().srqs.find(o->h);
            if (srq)
                store_release(&w_.slot(o->page, o->slot)->srq.pi,
                              srq->wq.ci + in.below(srq->wq.depth() + 2));
        }
    }

    // A provider consuming (all, some, or too many) CQEs, or arming.
    void cq_doorbell(Input& in) {
        Obj* o = pick_obj(in, p_.cq);
        const Cq* cq = o ? w_.objects().cqs.find(o->h) : nullptr;
        if (!cq)
            return;
        vrnic_db_cq* db = &w_.slot(o->page, o->slot)->cq;
        const uint8_t m = in.u8();
        switch (m & 3) {
        case 0:
            store_release(&db->ci, cq->pi - (m >> 2) % 4);
            break;
        case 1:
            store_release(&db->ci, cq->pi + 1 + (m >> 2));
            break;
        default:
            store_release(&db->arm, load_relaxed(&db->arm) + 1 + (m & 1) * 0xffff);
            break;
        }
    }

    World w_;
    Pools p_;
    uint32_t batch_ = 0;
    bool corrupt_ = false;
    uint32_t corrupt_at_ = 0;
    uint8_t corrupt_xor_ = 0;
    std::vector<std::pair<uint32_t, vrnic_cmd>> pending_;
    vrnic_cmd last_reg_mr_{};
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static CmdFuzz f;
    Input in(data, size);
    f.run(in);
    return 0;
}
