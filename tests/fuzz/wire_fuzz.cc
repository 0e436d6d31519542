// libFuzzer target vrnic_fuzz_wire: the RC and UC transport over the uplink
// (qemu/wire_requester.cc, wire_responder.cc), what a station beyond the
// fabric's uplink controls once a QP is connected to it. Each input brings
// up one device whose uplink is a sink that checks every frame the device
// sends, with an RC QP, a UC QP and an RC QP on an SRQ connected to a GID
// beyond it (IPv6 or IPv4, a path MTU, PSNs near the wrap, the input's
// pick), MRs of each mix of rights, receives posted. Then the input is a
// sequence of steps: RoCE v2 packets built from fields it chooses (opcode,
// PSN around the one expected, ACK request, keys of the MRs, stale or raw,
// addresses at, across and before their edges, DMA and payload lengths
// around the path MTU, immediate data, invalidated keys, atomic operands,
// a foreign source or destination GID, another QPN, another P_Key), whole
// messages in order with one packet lost, repeated or swapped, answers to
// the request in flight (ACKs, RNR NAKs, NAKs, READ responses, atomic
// ACKs, at any PSN of it), more sends of any opcode and receives, clock
// steps that fire the retry timers, MRs deregistered and QPs moved to
// ERR, SQD or RESET in between. Beyond the sanitizers: every frame the
// device sends parses, comes from its GID and goes to a QP of the peer
// within the path MTU, and guest RAM that no MR with a write right, ring
// or page list covers is never written.
#include "fuzz_world.h"
#include "psn.h"
#include "roce_packet.h"

#include <vector>

using namespace vrnic;
using namespace vrnic::fuzz;

namespace {

// The station beyond the uplink, and the device's GID and the station's as
// IPv4 addresses (the packets are then IPv4).
constexpr uint8_t kFar6[16] = {0xfe, 0x80, 0, 0,    0,    0,    0,    0,
                               0x50, 0x54, 0, 0xff, 0xfe, 0x56, 0x52, 0x02};
constexpr uint8_t kLocal4[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1};
constexpr uint8_t kFar4[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2};
// The peer's QPN of local QP i is kFarQpn + i.
constexpr uint32_t kFarQpn = 0x4240;

// Guest RAM of the MRs. A: 16 scattered pages, every right, its iova not
// its address; the last 2 KiB of its last page are no MR's.
constexpr uint64_t kIovaA = 0x10000000, kLenA = 0xf800;
constexpr uint64_t kPagesA[16] = {0, 1, 2, 3, 8, 9, 5, 4, 15, 14, 13, 12, 6, 7, 10, 11};
constexpr uint64_t kTailA = kData + kPagesA[15] * 4096 + (kLenA & 4095), kTailLen = 4096 - 0x800;
// B: REMOTE_READ only, so nothing may ever write it.
constexpr uint64_t kMrB = kData + 0x10000, kLenB = 0x4000;
// C: LOCAL_WRITE only: receive buffers and the requester's local buffers.
constexpr uint64_t kMrC = kData + 0x20000, kLenC = 0x10000;
// D: remote write and atomics, a two-level page list.
constexpr uint64_t kMrD = kData + 0x30000, kLenD = 0x2000, kIovaD = 0x20000000;
// No MR's: a canary pattern, then zeros to the end of the data area.
constexpr uint64_t kCanary = kData + 0x40000, kCanaryLen = 0x10000;
constexpr uint64_t kZero = kData + 0x50000;
enum { kA, kB, kC, kD, kMrs };

constexpr unsigned kQps = 3; // RC, UC, RC on the SRQ
enum { kRc, kUc, kRcSrq };

// The payload every packet carries, and the pattern the never-written
// areas hold (memcmp against it: a byte loop under ASan costs more).
constexpr uint32_t kMaxPayload = 4608;
uint8_t g_payload[kMaxPayload];
uint8_t g_canary[kCanaryLen];

// A QP and the path it is connected along.
struct Conn : QpInfo {
    Path path;
};

class Rig {
  public:
    // Everything on a freshly reset World, as the input's first byte says.
    void build(World& w, Input& in) {
        w_ = &w;
        const uint8_t c = in.u8();
        static constexpr uint8_t kMtus[4] = {VRNIC_MTU_256, VRNIC_MTU_1024, VRNIC_MTU_4096,
                                             VRNIC_MTU_512};
        mtu_code = kMtus[c & 3];
        mtu = 1u << psn_mtu_shift(mtu_code);
        v4 = c & 4;
        local = v4 ? kLocal4 : kGid;
        far = v4 ? kFar4 : kFar6;
        static constexpr uint32_t kPsns[4] = {0, Path::kPsn, 0xfffff0, VRNIC_PSN_MASK};
        const uint32_t psn = kPsns[(c >> 3) & 3];
        lossy = c & 0x20;
        frames = 0;
        must(w.set_gid(0, local));
        rings_ = Arena{kRings, kPbl};
        Arena& rings = rings_;
        pbl_ = Arena{kPbl, kPbl + 16 * 4096};
        must(w.create_eq(rings.take(4096, 4096), 6, VRNIC_IRQ_COMP_BASE, &eqn_));
        must(w.create_pd(0, &pd_));
        must(w.create_cq(0, eqn_, rings.take(256 * VRNIC_CQE_SIZE, 4096), 8, &scq));
        must(w.create_cq(0, eqn_, rings.take(256 * VRNIC_CQE_SIZE, 4096), 8, &rcq));
        for (unsigned i = 0; i < kMrs; i++)
            must(reg(i));

        vrnic_cmd_create_srq s{};
        s.pd = pd_;
        s.ring_addr = rings.take(4096, 4096);
        s.log_depth = 5;
        s.wqe_shift = 6;
        s.max_sge = 3;
        must(w.create_srq(s, &srq));
        for (unsigned i = 0; i < kQps; i++) {
            QpOpts o;
            o.qp_type = i == kUc ? VRNIC_QPT_UC : VRNIC_QPT_RC;
            if (i == kRcSrq)
                o.srqn = srq.srqn;
            const uint64_t sq = rings.take(uint64_t(1) << (o.sq_log + o.sq_shift), 4096);
            const uint64_t rq = rings.take(uint64_t(1) << (o.rq_log + o.rq_shift), 4096);
            qps[i] = Conn{};
            must(w.create_qp(0, pd_, scq, rcq, o, sq, rq, &qps[i]));
            Path& p = qps[i].path;
            p.qp_type = o.qp_type;
            p.dest_qpn = kFarQpn + i;
            p.dgid = far;
            p.mtu = mtu_code;
            p.rq_psn = psn;
            p.sq_psn = (psn - 2) & VRNIC_PSN_MASK; // the requester wraps too
            p.timeout = 0;
            // Or: the RC QP takes no READ or atomic, the SRQ's only remote
            // writes, and every QP's retries run out after one.
            if (i == kRc && (c & 0x40))
                p.max_dest_rd_atomic = 0;
            if (i == kRcSrq && (c & 0x40))
                p.access = VRNIC_ACCESS_REMOTE_WRITE;
            if (c & 0x80)
                p.retry_cnt = p.rnr_retry = 1;
            must(w.connect(qps[i].qpn, p));
        }

        // The receives the first SENDs land in: one SGE, two, a short one.
        const std::vector<vrnic_sge> rc_recv[] = {{sge(kC, 0, 0x4000)},
                                                  {sge(kC, 0x4000, 100), sge(kA, 0x100, 3000)},
                                                  {sge(kC, 0x5000, 64)}};
        for (const auto& g : rc_recv) {
            w.post_recv(qps[kRc], qps[kRc].rq_pi, g);
            w.post_recv(qps[kUc], qps[kUc].rq_pi, g);
            w.post_srq_recv(srq, srq.pi, g);
        }
        w.dev().set_wire([this](const uint8_t* f, uint32_t n) { return sent(f, n); });
        w.put(kMrB, g_canary, kLenB);
        w.put(kCanary, g_canary, kCanaryLen);
        w.put(kTailA, g_canary, kTailLen);
    }

    // An SGE of MR i at `off`.
    vrnic_sge sge(unsigned i, uint64_t off, uint32_t len) const {
        return {mrs[i].iova + off, len, mrs[i].lkey};
    }

    // MR i, registered again (a new key) or deregistered.
    void toggle_mr(unsigned i) {
        if (!live[i]) {
            // Only while the page-list area has room: the harness would
            // put a list it has no room for at GPA 0.
            if (pbl_.end - pbl_.next >= 3 * 4096)
                reg(i);
            return;
        }
        vrnic_cmd_handle h{mrs[i].handle, 0};
        w_->cmd(VRNIC_CMD_DEREG_MR, &h, sizeof(h));
        live[i] = false;
    }

    // The guest consumes every completion and async event.
    void drain() {
        w_->poll_cq(scq);
        w_->poll_cq(rcq);
        w_->take_async_events();
    }

    // What only the device's bugs can change.
    bool untouched() const {
        const struct {
            uint64_t from, to;
        } zero[] = {
            {0, kCmdq}, {rings_.next, kPbl}, {pbl_.next, kData}, {kZero, kData + kDataSize}};
        for (const auto& a : zero) {
            const uint8_t* p = w_->host(a.from, a.to - a.from);
            if (p[0] || memcmp(p, p + 1, a.to - a.from - 1))
                return false;
        }
        return !memcmp(w_->host(kMrB, kLenB), g_canary, kLenB) &&
               !memcmp(w_->host(kCanary, kCanaryLen), g_canary, kCanaryLen) &&
               !memcmp(w_->host(kTailA, kTailLen), g_canary, kTailLen);
    }

    Qp* qp(unsigned i) const { return w_->objects().qps.find(qps[i].qpn); }

    uint8_t mtu_code = 0;
    uint32_t mtu = 0;
    bool v4 = false, lossy = false;
    const uint8_t* local = kGid;
    const uint8_t* far = kFar6;
    MrInfo mrs[kMrs] = {};
    bool live[kMrs] = {};
    CqInfo scq, rcq;
    SrqInfo srq;
    Conn qps[kQps];

  private:
    // The uplink: every frame must be a good one from the device's GID to
    // one of the peer's QPs, no larger than the path MTU. A lossy wire
    // refuses every fifth (as the switch does a frame over its MTU).
    bool sent(const uint8_t* f, uint32_t n) {
        roce::Packet p;
        if (roce::parse(f, n, &p) != roce::Drop::none) {
            fprintf(stderr, "wire invariant: the device sent a frame parse() refuses\n");
            abort();
        }
        if (memcmp(p.sgid.data(), local, 16) || memcmp(p.dgid.data(), far, 16) ||
            p.bth.dest_qp - kFarQpn >= kQps || p.payload_len > mtu || p.bth.pkey != 0xffff) {
            fprintf(stderr, "wire invariant: a frame off the QP's path (opcode 0x%x)\n",
                    p.bth.opcode);
            abort();
        }
        return !(lossy && ++frames % 5 == 0);
    }

    uint32_t reg(unsigned i) {
        std::vector<uint64_t> pages;
        uint32_t st = 0;
        switch (i) {
        case kA:
            for (uint64_t k : kPagesA)
                pages.push_back(kData + k * 4096);
            st = w_->reg_mr_pages(pd_, kIovaA, kLenA, 12, pages, VRNIC_ACCESS_ALL, &mrs[i],
                                  VRNIC_PBL_DIRECT, &pbl_);
            break;
        case kB:
            for (uint64_t k = 0; k < kLenB / 4096; k++)
                pages.push_back(kMrB + k * 4096);
            st = w_->reg_mr_pages(pd_, kMrB, kLenB, 12, pages, VRNIC_ACCESS_REMOTE_READ, &mrs[i],
                                  VRNIC_PBL_DIRECT, &pbl_);
            break;
        case kC:
            for (uint64_t k = 0; k < kLenC / 4096; k++)
                pages.push_back(kMrC + k * 4096);
            st = w_->reg_mr_pages(pd_, kMrC, kLenC, 12, pages, VRNIC_ACCESS_LOCAL_WRITE, &mrs[i],
                                  VRNIC_PBL_DIRECT, &pbl_);
            break;
        default:
            pages = {kMrD, kMrD + 4096};
            st = w_->reg_mr_pages(pd_, kIovaD, kLenD, 12, pages,
                                  VRNIC_ACCESS_LOCAL_WRITE | VRNIC_ACCESS_REMOTE_WRITE |
                                      VRNIC_ACCESS_REMOTE_ATOMIC,
                                  &mrs[i], VRNIC_PBL_INDIRECT, &pbl_);
            break;
        }
        live[i] = st == VRNIC_CMD_STATUS_OK;
        return st;
    }

    // Every command of the set-up is valid: a refusal makes the input
    // meaningless.
    static void must(uint32_t status) {
        if (status != VRNIC_CMD_STATUS_OK)
            abort();
    }

    World* w_ = nullptr;
    Arena rings_, pbl_;
    uint32_t eqn_ = 0, pd_ = 0;
    uint64_t frames = 0;
};

// ---- packets from the peer ---------------------------------------------------

// The headers of a packet from the peer's QP to local QP `to`.
roce::Packet from_peer(const Rig& r, unsigned to) {
    roce::Packet p;
    p.dst_mac = {0x52, 0x54, 0x00, 0x56, 0x52, 0x01};
    p.src_mac = {0x52, 0x54, 0x00, 0x56, 0x52, 0x02};
    p.ipv6 = !r.v4;
    memcpy(p.sgid.data(), r.far, 16);
    memcpy(p.dgid.data(), r.local, 16);
    p.src_port = static_cast<uint16_t>(0xc000 | (kFarQpn + to));
    p.bth.dest_qp = r.qps[to].qpn;
    return p;
}

// Builds `p` with the shared payload (none when its opcode carries none)
// into a buffer of the frame's exact size, and hands it to the device.
void deliver(World& w, roce::Packet& p) {
    if (!(roce::opcode_exts(p.bth.opcode) & roce::kPayload))
        p.payload_len = 0;
    p.payload_len = std::min(p.payload_len, kMaxPayload);
    p.payload = g_payload;
    p.bth.pad = static_cast<uint8_t>(-p.payload_len & 3);
    std::vector<uint8_t> f(roce::frame_bytes(p));
    roce::build(p, f.data());
    w.dev().deliver_frame(f.data(), static_cast<uint32_t>(f.size()), true);
}

// Now and then a packet the QP must not take: from another GID, to
// another QP, to a GID the device does not have, or with another P_Key.
void misroute(Rig& r, Input& in, roce::Packet& p, uint8_t flags) {
    if ((flags >> 5) != 7)
        return;
    switch ((flags >> 3) & 3) {
    case 0:
        p.sgid[15] ^= 1 + in.u8() % 255;
        break;
    case 1: {
        const uint8_t q = in.u8();
        p.bth.dest_qp = q < 0xc0 ? r.qps[q % kQps].qpn : in.u32() & VRNIC_QPN_MASK;
        break;
    }
    case 2:
        p.dgid[14] ^= 0x10;
        break;
    default:
        p.bth.pkey = in.u16();
        break;
    }
}

// A PSN around `expected`: it, a little ahead (a gap), behind (a
// duplicate), at the edges of the half-window that tells them apart, raw.
uint32_t psn_near(Input& in, uint32_t expected) {
    const uint8_t m = in.u8();
    uint32_t off = 0;
    switch (m & 7) {
    case 4:
        off = 1 + ((m >> 3) & 7);
        break;
    case 5:
        off = -(1u + (m >> 3));
        break;
    case 6:
        off = (VRNIC_PSN_MASK + 1) / 2 - 1 + ((m >> 3) & 3);
        break;
    case 7:
        return in.u32() & VRNIC_PSN_MASK;
    default:
        break;
    }
    return (expected + off) & VRNIC_PSN_MASK;
}

// An rkey: one of the MRs' (any of them, deregistered ones too), one of
// another generation, raw or 0; *mr says which MR's iova to aim at.
uint32_t pick_key(Input& in, const Rig& r, unsigned* mr) {
    const uint8_t k = in.u8();
    *mr = (k >> 3) % kMrs;
    switch (k & 7) {
    case 4:
        return r.mrs[*mr].rkey ^ (1u << ((k >> 5) + 8));
    case 5:
        return in.u32();
    case 6:
        return 0;
    default:
        *mr = (k & 7) % kMrs;
        return r.mrs[*mr].rkey;
    }
}

// An address in, across the end of, before or aligned in MR `mr`, or raw.
uint64_t pick_va(Input& in, const Rig& r, unsigned mr) {
    const MrInfo& m = r.mrs[mr];
    const uint8_t v = in.u8();
    switch (v & 3) {
    case 0:
        return m.iova + in.u16() % m.len;
    case 1:
        return m.iova + m.len - (v >> 2);
    case 2:
        return m.iova + uint64_t(in.u8()) * 8 - (v & 4 ? 8 : 0);
    default:
        return in.u64();
    }
}

// A payload length: the path MTU, short, up to the MTU, or past it.
uint32_t pick_len(Input& in, const Rig& r) {
    const uint8_t l = in.u8();
    switch (l & 3) {
    case 0:
        return r.mtu;
    case 1:
        return l >> 2;
    case 2:
        return in.u16() % (r.mtu + 1);
    default:
        return in.u16() % kMaxPayload;
    }
}

// A RETH's DMA length: small, whole packets and a tail, the payload's, raw.
uint32_t pick_dma_len(Input& in, const Rig& r, uint32_t payload) {
    const uint8_t d = in.u8();
    switch (d & 3) {
    case 0:
        return d >> 2;
    case 1:
        return r.mtu * ((d >> 2) & 7) + in.u8();
    case 2:
        return payload;
    default:
        return in.u32();
    }
}

constexpr uint8_t kRcRequests[] = {
    roce::kRcSendFirst,   roce::kRcSendMiddle,   roce::kRcSendLast,   roce::kRcSendLastImm,
    roce::kRcSendOnly,    roce::kRcSendOnlyImm,  roce::kRcWriteFirst, roce::kRcWriteMiddle,
    roce::kRcWriteLast,   roce::kRcWriteLastImm, roce::kRcWriteOnly,  roce::kRcWriteOnlyImm,
    roce::kRcReadRequest, roce::kRcCompareSwap,  roce::kRcFetchAdd,   roce::kRcSendLastInv,
    roce::kRcSendOnlyInv,
};

// One request packet to a QP's responder, every field the input's.
void to_responder(World& w, Rig& r, Input& in) {
    const uint8_t m = in.u8();
    const unsigned to = m % kQps;
    const Qp* qp = r.qp(to);
    const bool uc = to == kUc;
    roce::Packet p = from_peer(r, to);
    const uint8_t o = in.u8();
    if (o >= 0xf0) // any opcode: responses, UD, CNP, unknown ones
        p.bth.opcode = in.u8();
    else if (uc)
        p.bth.opcode = roce::kUcBase | (o % (roce::kRcWriteOnlyImm + 1));
    else
        p.bth.opcode = kRcRequests[o % sizeof(kRcRequests)];
    p.bth.psn = psn_near(in, qp ? qp->attr.rq_psn : 0);
    const uint8_t f = in.u8();
    p.bth.ack_req = f & 1;
    p.bth.solicited = f & 2;
    p.bth.becn = p.bth.fecn = f & 4;
    p.payload_len = pick_len(in, r);
    const uint8_t ext = roce::opcode_exts(p.bth.opcode);
    if (ext & (roce::kReth | roce::kAtomicEth)) {
        unsigned mr = 0;
        p.rkey = pick_key(in, r, &mr);
        p.va = pick_va(in, r, mr);
        if (ext & roce::kReth)
            p.dma_len = pick_dma_len(in, r, p.payload_len);
        if (ext & roce::kAtomicEth) {
            p.compare = in.u8();
            p.swap_add = in.u64();
        }
    }
    if (ext & roce::kImm)
        p.imm = in.u32();
    if (ext & roce::kIeth) {
        unsigned mr = 0;
        p.inv_rkey = pick_key(in, r, &mr);
    }
    misroute(r, in, p, f);
    deliver(w, p);
}

// The opcode of packet i of n of a SEND (imm: 1, invalidate: 2) or WRITE
// (imm: 1), as a requester sends them.
uint8_t data_opcode(bool write, unsigned variant, uint32_t i, uint32_t n) {
    const bool first = i == 0, last = i + 1 == n;
    if (write) {
        if (first && last)
            return variant ? roce::kRcWriteOnlyImm : roce::kRcWriteOnly;
        if (last)
            return variant ? roce::kRcWriteLastImm : roce::kRcWriteLast;
        return first ? roce::kRcWriteFirst : roce::kRcWriteMiddle;
    }
    static constexpr uint8_t kOnly[] = {roce::kRcSendOnly, roce::kRcSendOnlyImm,
                                        roce::kRcSendOnlyInv};
    static constexpr uint8_t kLast[] = {roce::kRcSendLast, roce::kRcSendLastImm,
                                        roce::kRcSendLastInv};
    if (first && last)
        return kOnly[variant];
    if (last)
        return kLast[variant];
    return first ? roce::kRcSendFirst : roce::kRcSendMiddle;
}

// A whole SEND or WRITE message at the expected PSNs, as a requester sends
// it (an ACK asked every 16 packets and at the end), with one packet lost,
// repeated, or swapped with the next.
void message(World& w, Rig& r, Input& in) {
    const uint8_t m = in.u8();
    const unsigned to = m % kQps;
    const Qp* qp = r.qp(to);
    if (!qp)
        return;
    const bool uc = to == kUc;
    const unsigned kind = (m >> 2) % 5;
    const bool write = kind >= 3;
    const unsigned variant = write ? kind - 3 : (uc && kind == 2 ? 1 : kind);
    const uint32_t n = 1 + in.below(20);
    const uint32_t tail = 1 + in.below(r.mtu);
    const uint32_t len = (n - 1) * r.mtu + tail;
    unsigned mr = 0;
    uint32_t rkey = 0;
    uint64_t va = 0;
    if (write) {
        rkey = pick_key(in, r, &mr);
        const uint8_t v = in.u8();
        va = v < 0xc0 ? r.mrs[mr].iova + v * 8 : pick_va(in, r, mr);
    }
    const uint32_t imm = in.u32(), inv = r.mrs[in.below(kMrs)].rkey;
    const uint8_t perturb = in.u8();
    const uint32_t at = (perturb >> 2) % n;
    const uint32_t psn = qp->attr.rq_psn;
    std::vector<roce::Packet> pkts;
    for (uint32_t i = 0; i < n; i++) {
        roce::Packet p = from_peer(r, to);
        p.bth.opcode = data_opcode(write, variant, i, n) | (uc ? roce::kUcBase : 0);
        p.bth.psn = (psn + i) & VRNIC_PSN_MASK;
        p.bth.ack_req = !uc && (i + 1 == n || (i + 1) % 16 == 0);
        p.bth.solicited = i + 1 == n && (m & 0x80);
        p.payload_len = i + 1 == n ? tail : r.mtu;
        p.rkey = rkey;
        p.va = va;
        p.dma_len = len;
        p.imm = imm;
        p.inv_rkey = inv;
        if ((perturb & 3) == 1 && i == at)
            continue; // lost
        pkts.push_back(p);
        if ((perturb & 3) == 2 && i == at)
            pkts.push_back(p); // repeated
    }
    if ((perturb & 3) == 3 && at + 1 < pkts.size())
        std::swap(pkts[at], pkts[at + 1]);
    for (roce::Packet& p : pkts)
        deliver(w, p);
}

// ---- answers to the local requester -------------------------------------------

// The bytes of the request's message (its SGEs; the harness posts no
// inline data).
uint64_t msg_len(const WireRequest& q) {
    uint64_t len = 0;
    for (unsigned i = 0; i < q.wqe.h.num_sge && i < kMaxWqeSge; i++)
        len += q.wqe.sge[i].length;
    return len;
}

// Response packet k of a READ of `len` bytes in `npkts` packets.
roce::Packet read_response(const Rig& r, unsigned to, uint32_t first, uint32_t k, uint32_t npkts,
                           uint64_t len) {
    roce::Packet p = from_peer(r, to);
    p.bth.opcode = npkts == 1       ? roce::kRcReadResponseOnly
                   : k == 0         ? roce::kRcReadResponseFirst
                   : k + 1 == npkts ? roce::kRcReadResponseLast
                                    : roce::kRcReadResponseMiddle;
    p.bth.psn = (first + k) & VRNIC_PSN_MASK;
    p.syndrome = 0x1f;
    const uint64_t off = uint64_t(k) * r.mtu;
    p.payload_len = off < len ? static_cast<uint32_t>(std::min<uint64_t>(len - off, r.mtu)) : 0;
    return p;
}

// One answer packet to a QP's requester, every field the input's: an ACK
// or NAK of any syndrome, an atomic ACK, a READ response, at a PSN of the
// request in flight or around it.
void to_requester(World& w, Rig& r, Input& in) {
    const uint8_t m = in.u8();
    const unsigned to = m % kQps;
    const Qp* qp = r.qp(to);
    const WireRequest* q = qp ? qp->wire_req.get() : nullptr;
    const uint32_t first = q ? q->first_psn : qp ? qp->attr.sq_psn : 0;
    const uint32_t npkts = q ? q->npkts : 1;
    static constexpr uint8_t kOps[] = {roce::kRcAck,
                                       roce::kRcAck,
                                       roce::kRcAtomicAck,
                                       roce::kRcReadResponseFirst,
                                       roce::kRcReadResponseMiddle,
                                       roce::kRcReadResponseLast,
                                       roce::kRcReadResponseOnly,
                                       roce::kRcReadResponseOnly};
    roce::Packet p = from_peer(r, to);
    p.bth.opcode = kOps[(m >> 2) & 7];
    const uint8_t k = in.u8();
    switch (k & 3) {
    case 0:
    case 1:
        p.bth.psn = first + (k >> 2) % (npkts + 1);
        break;
    case 2:
        p.bth.psn = first + (q ? (k & 4 ? q->acked : q->next - 1) : 0);
        break;
    default:
        p.bth.psn = psn_near(in, first);
        break;
    }
    p.bth.psn &= VRNIC_PSN_MASK;
    const uint8_t s = in.u8();
    switch (s & 3) {
    case 0:
        p.syndrome = 0x1f; // ACK, no credit limit
        break;
    case 1:
        p.syndrome = 0x20 | (s >> 3); // RNR NAK with its timer
        break;
    case 2:
        p.syndrome = 0x60 | ((s >> 2) & 7); // NAK: sequence, the classes, reserved
        break;
    default:
        p.syndrome = in.u8(); // credit counts, reserved classes
        break;
    }
    p.msn = in.u8();
    const uint32_t k_psn = (p.bth.psn - first) & VRNIC_PSN_MASK;
    const uint8_t l = in.u8();
    if (q && (l & 3) == 0) // what the requester expects there
        p.payload_len = read_response(r, to, first, k_psn, npkts, msg_len(*q)).payload_len;
    else
        p.payload_len = (l & 3) == 1 ? r.mtu : in.u16() % kMaxPayload;
    p.orig = in.u64();
    misroute(r, in, p, l);
    deliver(w, p);
}

// The answer the request in flight waits for, as a responder sends it: the
// READ's responses (one lost, repeated, or only the first half), the
// atomic's ACK, or for a SEND or WRITE an ACK, a sequence NAK or an RNR
// NAK at a PSN it sent.
void answer(World& w, Rig& r, Input& in) {
    const uint8_t m = in.u8();
    const unsigned to = m % kQps;
    const Qp* qp = r.qp(to);
    const WireRequest* q = qp ? qp->wire_req.get() : nullptr;
    if (!q || q->done)
        return;
    const uint32_t first = q->first_psn, npkts = q->npkts, acked = q->acked;
    const uint64_t len = msg_len(*q);
    const uint8_t op = q->wqe.h.opcode;
    const unsigned how = (m >> 2) & 3;
    if (op == VRNIC_WR_RDMA_READ) {
        const uint32_t at = acked + in.below(std::max(npkts - acked, 1u));
        const uint32_t end = how == 3 ? acked + (npkts - acked) / 2 : npkts;
        for (uint32_t k = acked; k < end; k++) {
            roce::Packet p = read_response(r, to, first, k, npkts, len);
            if (how == 1 && k == at)
                continue;
            deliver(w, p);
            if (how == 2 && k == at)
                deliver(w, p);
        }
        return;
    }
    roce::Packet p = from_peer(r, to);
    if (op == VRNIC_WR_ATOMIC_CMP_AND_SWP || op == VRNIC_WR_ATOMIC_FETCH_AND_ADD) {
        p.bth.opcode = roce::kRcAtomicAck;
        p.bth.psn = first;
        p.syndrome = 0x1f;
        p.orig = in.u64();
        deliver(w, p);
        if (how == 2)
            deliver(w, p);
        return;
    }
    p.bth.opcode = roce::kRcAck;
    switch (how) {
    case 0: // all it sent
        p.bth.psn = first + (q->next ? q->next - 1 : 0);
        p.syndrome = 0x1f;
        break;
    case 1: // part of it
        p.bth.psn = first + acked + in.below(std::max(npkts - acked, 1u));
        p.syndrome = 0x1f;
        break;
    case 2:
        p.bth.psn = first + acked;
        p.syndrome = 0x60;
        break;
    default:
        p.bth.psn = first + acked;
        p.syndrome = 0x20 | (in.u8() & 0x1f);
        break;
    }
    p.bth.psn &= VRNIC_PSN_MASK;
    deliver(w, p);
}

// ---- the guest ------------------------------------------------------------------

// A send WQE of any opcode on one of the QPs, its local buffer in C (or a
// MR the message may not be written into), its remote address and key the
// peer's business.
void post_send(World& w, Rig& r, Input& in) {
    const uint8_t m = in.u8();
    Conn& c = r.qps[m % kQps];
    const Qp* qp = r.qp(m % kQps);
    if (!qp || c.sq_pi - qp->sq.ci >= (1u << c.sq_log))
        return;
    static constexpr uint8_t kOps[] = {VRNIC_WR_SEND,
                                       VRNIC_WR_SEND_WITH_IMM,
                                       VRNIC_WR_SEND_WITH_INV,
                                       VRNIC_WR_RDMA_WRITE,
                                       VRNIC_WR_RDMA_WRITE_WITH_IMM,
                                       VRNIC_WR_RDMA_READ,
                                       VRNIC_WR_ATOMIC_CMP_AND_SWP,
                                       VRNIC_WR_ATOMIC_FETCH_AND_ADD};
    SendWr wr;
    wr.wr_id = c.sq_pi;
    wr.opcode = kOps[(m >> 2) & 7];
    wr.flags = VRNIC_WQE_F_SIGNALED | (m & 0x20 ? VRNIC_WQE_F_SOLICITED : 0);
    const bool atomic =
        wr.opcode == VRNIC_WR_ATOMIC_CMP_AND_SWP || wr.opcode == VRNIC_WR_ATOMIC_FETCH_AND_ADD;
    const uint8_t l = in.u8();
    uint32_t len = 8;
    if (!atomic || (l & 3) == 3)
        len = (l & 3) == 0 ? l >> 2 : (l & 3) == 1 ? in.u16() % 0x2000 : in.u16() % 0x8000;
    const uint8_t b = in.u8();
    const unsigned mr = b < 0xe0 ? kC : b & 3; // B: no local write, so no READ into it
    const uint64_t off = (b & 0x1f) * 64 % r.mrs[mr].len;
    wr.sge = {r.sge(mr, off, len)};
    if (b & 0x40 && !atomic)
        wr.sge.push_back(r.sge(kC, 0x8000, in.u16() % 0x1000));
    const uint32_t remote = in.u32(), key = in.u32();
    // A SEND's union is reserved on a connected QP: mostly left clear.
    const bool send = wr.opcode == VRNIC_WR_SEND || wr.opcode == VRNIC_WR_SEND_WITH_IMM ||
                      wr.opcode == VRNIC_WR_SEND_WITH_INV;
    if (!send || (m & 0x80)) {
        wr.remote_addr = remote;
        wr.rkey = key;
    }
    wr.imm_be = key;
    wr.inv_rkey = key;
    wr.compare_add = in.u8();
    wr.swap = in.u8();
    w.post_send(c, wr);
}

// Up to four receive SGEs (one more than the QPs take) into C, A or D (or
// B, which the model must refuse), on a QP's RQ or the SRQ, while the
// ring has room.
void post_recv(World& w, Rig& r, Input& in) {
    const uint8_t m = in.u8();
    const unsigned n = 1 + m % 4; // four: more than max_recv_sge
    std::vector<vrnic_sge> g;
    for (unsigned i = 0; i < n; i++) {
        const uint8_t b = in.u8();
        const unsigned mr = b < 0xc0 ? kC : b & 3;
        const uint32_t len = b & 0x20 ? in.u16() % 0x4000 : (b & 0x1f) * 64;
        g.push_back(r.sge(mr, (in.u8() * 256u) % r.mrs[mr].len, len));
    }
    const unsigned to = (m >> 2) % kQps;
    if (to == kRcSrq) {
        if (r.srq.pi - w.srq_ci(r.srq) < (1u << r.srq.log_depth))
            w.post_srq_recv(r.srq, r.srq.pi, g);
        return;
    }
    Conn& c = r.qps[to];
    const Qp* qp = r.qp(to);
    if (qp && c.rq_pi - qp->rq.ci < (1u << c.rq_log))
        w.post_recv(c, c.rq_pi, g);
}

// QP state changes (ERR, SQD and back, RESET and connected again, to RTR
// or RTS), an MR deregistered or registered again, a CQ armed.
void change(World& w, Rig& r, Input& in) {
    const uint8_t m = in.u8();
    Conn& c = r.qps[(m >> 3) % kQps];
    vrnic_cmd_modify_qp q{};
    switch (m & 7) {
    case 0:
        q = modify_to(c.qpn, VRNIC_QPS_ERR, c.path);
        break;
    case 1:
        q = modify_to(c.qpn, VRNIC_QPS_SQD, c.path);
        break;
    case 2:
        q = modify_to(c.qpn, VRNIC_QPS_RTS, c.path);
        q.attr_mask = VRNIC_QP_ATTR_STATE;
        break;
    case 3:
    case 4:
        q = modify_to(c.qpn, VRNIC_QPS_RESET, c.path);
        w.cmd(VRNIC_CMD_MODIFY_QP, &q, sizeof(q));
        w.connect(c.qpn, c.path, (m & 7) == 3 ? VRNIC_QPS_RTS : VRNIC_QPS_RTR);
        return;
    case 5:
    case 6:
        r.toggle_mr((m >> 3) % kMrs);
        return;
    default:
        w.arm_cq(m & 8 ? r.rcq : r.scq, m & 16);
        return;
    }
    w.cmd(VRNIC_CMD_MODIFY_QP, &q, sizeof(q));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static World w;
    static Rig r;
    if (!g_payload[1]) {
        // fuzz_world.h's bounded-pass invariant, less one known excess:
        // send_window() in wire_requester.cc sends its whole window (32
        // packets of the path MTU) without asking the pass budget, so a
        // pass may end up to one window past it. Anything more is a crash.
        w.on_pass([] {
            const uint64_t used = w.dev().state().pass.used();
            if (used > w.dev().state().params.pass_bytes + 32 * r.mtu) {
                fprintf(stderr, "bounded-pass invariant: %llu bytes of work in one pass\n",
                        (unsigned long long)used);
                abort();
            }
        });
        for (uint32_t i = 0; i < kMaxPayload; i++)
            g_payload[i] = static_cast<uint8_t>(i * 13 + 1);
        for (uint32_t i = 0; i < kCanaryLen; i++)
            g_canary[i] = static_cast<uint8_t>(0xa5 ^ i ^ (i >> 8));
    }
    if (!w.bring_up())
        abort();
    Input in(data, size);
    r.build(w, in);
    while (!in.empty()) {
        switch (in.below(12)) {
        case 0:
        case 1:
        case 2:
            to_responder(w, r, in);
            break;
        case 3:
            message(w, r, in);
            break;
        case 4:
            to_requester(w, r, in);
            break;
        case 5:
        case 6:
            answer(w, r, in);
            break;
        case 7:
        case 8:
            post_send(w, r, in);
            break;
        case 9:
            post_recv(w, r, in);
            break;
        case 10:
            w.step_clock(in);
            break;
        default:
            change(w, r, in);
            break;
        }
        w.poll();
        r.drain();
    }
    // What is left: the passes, and every timer that is due run out.
    for (int i = 0; i < 4; i++) {
        w.settle();
        r.drain();
        w.clock() = std::max(w.clock(), w.dev().next_deadline());
    }
    w.settle();
    if (!r.untouched()) {
        fprintf(stderr, "wire invariant: guest RAM outside every writable MR and ring written\n");
        abort();
    }
    return 0;
}
