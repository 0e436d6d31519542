// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The RC and UC responder for a peer beyond the uplink (IBTA 9.7, Annex
// A17). An RC packet at the expected PSN is executed: SEND and WRITE data
// placed at its offset in the message, a READ answered with response
// packets from guest memory, an atomic executed once and its original value
// kept for a repeated request. An ACK goes out only when the packet asks
// for one (coalescing); a packet beyond the expected PSN gets one sequence
// NAK, a duplicate its ACK again, a SEND without a receive an RNR NAK, and
// a request that fails its checks the NAK of its class, the QP going to
// ERR as on one device. Answers go out in PSN order: a READ's response
// packets are sent by the engine's visits to the QP, within their budget,
// and every answer after it waits its turn. UC answers nothing: a message
// it cannot take, or one a lost packet cut, is dropped and counted, and
// the next first packet sets the PSN it expects.
#include "completion.h"
#include "events.h"
#include "fast_reg.h"
#include "psn.h"
#include "qp_control.h"
#include "recv_source.h"
#include "requester.h"
#include "shared_word.h"
#include "wire.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace vrnic {

namespace {

using Msg = WireResponse::Msg;

// AETH syndromes (IBTA 9.7.5.2.8): an ACK with no end-to-end credit
// limit, an RNR NAK with its timer, a NAK with its code.
constexpr uint8_t kAckUnlimited = 0x1f;
constexpr uint8_t kRnrNak = 0x20;
enum NakCode : uint8_t {
    kNakSequence = 0x60,
    kNakInvalid = 0x61,
    kNakAccess = 0x62,
    kNakOp = 0x63
};

// What one packet's execution came to.
struct Verdict {
    uint8_t nak = 0;   // a NAK syndrome, or 0
    uint8_t event = 0; // the async event of the QP's move to ERR with it
    bool rnr = false;  // no receive: an RNR NAK, the PSN not taken
};

Verdict nak(uint8_t syndrome, uint8_t event) {
    return {syndrome, event, false};
}

uint8_t base_opcode(uint8_t op) {
    return op & 0x1f;
}

bool starts_message(uint8_t op) {
    switch (op) {
    case roce::kRcSendFirst:
    case roce::kRcSendOnly:
    case roce::kRcSendOnlyImm:
    case roce::kRcSendOnlyInv:
    case roce::kRcWriteFirst:
    case roce::kRcWriteOnly:
    case roce::kRcWriteOnlyImm:
    case roce::kRcReadRequest:
    case roce::kRcCompareSwap:
    case roce::kRcFetchAdd:
        return true;
    default:
        return false;
    }
}

bool ends_message(uint8_t op) {
    return op != roce::kRcSendFirst && op != roce::kRcSendMiddle && op != roce::kRcWriteFirst &&
           op != roce::kRcWriteMiddle;
}

bool is_send_packet(uint8_t op) {
    return op <= roce::kRcSendOnlyImm || op == roce::kRcSendLastInv || op == roce::kRcSendOnlyInv;
}

void send_ack(DeviceState& d, const Qp& qp, uint8_t opcode, uint32_t psn, uint8_t syndrome,
              uint32_t msn, uint64_t orig = 0) {
    roce::Packet a = wire_packet(d, qp.attr.av, qp.qpn);
    a.bth.opcode = opcode;
    a.bth.dest_qp = qp.attr.dest_qpn;
    a.bth.psn = psn & VRNIC_PSN_MASK;
    a.syndrome = syndrome;
    a.msn = msn & VRNIC_PSN_MASK;
    a.orig = orig;
    wire_emit(d, a);
}

bool is_plain_ack(const WireAnswer& a) {
    return !a.read && a.opcode == roce::kRcAck && a.syndrome == kAckUnlimited;
}

// An ACK, NAK or atomic ACK: sent now, or queued behind a READ response
// still going out (then returned). An ACK after an ACK replaces it: the
// later covers both.
WireAnswer* answer(DeviceState& d, const Qp& qp, WireResponse& s, uint8_t opcode, uint32_t psn,
                   uint8_t syndrome, uint64_t orig = 0) {
    if (s.answers.empty()) {
        send_ack(d, qp, opcode, psn, syndrome, s.msn, orig);
        return nullptr;
    }
    WireAnswer a;
    a.opcode = opcode;
    a.syndrome = syndrome;
    a.psn = psn & VRNIC_PSN_MASK;
    a.msn = s.msn;
    a.orig = orig;
    if (is_plain_ack(a) && is_plain_ack(s.answers.back()))
        return &(s.answers.back() = a);
    if (s.answers.size() < WireResponse::kMaxAnswers)
        return &s.answers.emplace_back(a);
    count_in_reg(&d.regs()->wire_rx_drops); // unanswered: the requester asks again
    return nullptr;
}

// Queues the response of READ request `p` behind the answers before it;
// `resource`: a new READ, not one asked again.
void queue_read(WireResponse& s, const roce::Packet& p, bool resource) {
    WireAnswer a;
    a.read = true;
    a.resource = resource;
    a.psn = p.bth.psn;
    a.msn = s.msn;
    a.rkey = p.rkey;
    a.va = p.va;
    a.len = p.dma_len;
    s.answers.push_back(a);
}

// The new READs and atomics whose answers are queued: each holds one of
// the responder's resources (max_dest_rd_atomic) until it is sent.
unsigned resources_held(const WireResponse& s) {
    return static_cast<unsigned>(
        std::ranges::count_if(s.answers, [](const WireAnswer& a) { return a.resource; }));
}

// Whether a new READ or atomic may have its answer queued: within the
// responder's resources, else it is an invalid request, as in IB.
Verdict take_resource(const Qp& qp, const WireResponse& s) {
    if (resources_held(s) >= qp.attr.max_dest_rd_atomic)
        return nak(kNakInvalid, VRNIC_EQE_QP_REQ_ERR);
    return {};
}

// Sends response packet `i` of READ `a` (of `n`); false when its MR no
// longer allows it (deregistered or invalidated since the request).
bool send_read_packet(DeviceState& d, const Qp& qp, const WireAnswer& a, uint32_t i, uint32_t n,
                      std::vector<uint8_t>& data) {
    const unsigned shift = psn_mtu_shift(qp.attr.path_mtu);
    const uint64_t off = uint64_t(i) << shift;
    const uint64_t plen = std::min<uint64_t>(a.len - off, uint64_t(1) << shift);
    roce::Packet p = wire_packet(d, qp.attr.av, qp.qpn);
    p.bth.opcode = n == 1       ? roce::kRcReadResponseOnly
                   : i == 0     ? roce::kRcReadResponseFirst
                   : i + 1 == n ? roce::kRcReadResponseLast
                                : roce::kRcReadResponseMiddle;
    p.bth.dest_qp = qp.attr.dest_qpn;
    p.bth.psn = (a.psn + i) & VRNIC_PSN_MASK;
    p.syndrome = kAckUnlimited;
    p.msn = a.msn & VRNIC_PSN_MASK;
    data.resize(plen);
    if (plen) {
        const Mr* mr = nullptr;
        if (check_remote(d, qp, a.rkey, a.va + off, plen, VRNIC_ACCESS_REMOTE_READ, &mr))
            return false;
        SgEntry region{mr, a.va + off, plen};
        SgCursor src(d.mem, &region, 1);
        SgCursor dst(data.data(), plen);
        sg_copy(dst, src, plen);
    }
    p.payload = data.data();
    p.payload_len = static_cast<uint32_t>(plen);
    wire_emit(d, p);
    return true;
}

// The receive WQE of the SEND (or WRITE with immediate) in progress: taken
// by its first packet that needs it, found still held by later ones.
Verdict hold_recv(DeviceState& d, Qp& qp, WireResponse& s) {
    using Fetch = RecvSource::Fetch;
    RecvSource src(qp);
    if (s.recv_held)
        return src.at_head(s.recv) ? Verdict{} : nak(kNakOp, VRNIC_EQE_QP_FATAL);
    switch (src.fetch(d, &s.recv)) {
    case Fetch::ok:
        s.recv_held = true;
        return {};
    case Fetch::rnr:
        return {0, 0, true};
    case Fetch::lost: // the QP is in ERR already
        return nak(kNakOp, 0);
    case Fetch::malformed:
        fail_recv(d, qp, s.recv, VRNIC_WC_LOC_QP_OP_ERR, qp.attr.dest_qpn, kVeBadRecvWqe);
        return nak(kNakOp, 0);
    }
    return {};
}

// The receive completes, with the message's length.
void complete_held_recv(DeviceState& d, Qp& qp, WireResponse& s, const roce::Packet& p,
                        uint8_t cqe_op, uint32_t len, uint32_t inv_rkey) {
    RecvSource(qp).consume();
    s.recv_held = false;
    const bool imm = cqe_op == VRNIC_CQE_OP_RECV_RDMA_WITH_IMM ||
                     base_opcode(p.bth.opcode) == roce::kRcSendLastImm ||
                     base_opcode(p.bth.opcode) == roce::kRcSendOnlyImm;
    complete_recv(d, qp, s.recv.wr_id, s.recv.idx, VRNIC_WC_SUCCESS, cqe_op, len, p.imm, imm,
                  qp.attr.dest_qpn, p.bth.solicited, 0, inv_rkey);
}

// The receive failed: it completes in error and the QP goes to ERR.
Verdict recv_failed(DeviceState& d, Qp& qp, WireResponse& s, uint8_t status, uint32_t vendor,
                    uint8_t syndrome) {
    s.recv_held = false;
    fail_recv(d, qp, s.recv, status, qp.attr.dest_qpn, vendor);
    return nak(syndrome, 0);
}

Verdict on_send(DeviceState& d, Qp& qp, WireResponse& s, const roce::Packet& p, bool last) {
    if (Verdict v = hold_recv(d, qp, s); v.nak || v.rnr)
        return v;
    SgEntry dst[kMaxWqeSge];
    unsigned n = 0;
    uint64_t room = 0;
    if (!resolve_recv_sges(d, qp, s.recv, dst, &n, &room))
        return recv_failed(d, qp, s, VRNIC_WC_LOC_PROT_ERR, kVeBadRecvSge, kNakOp);
    if (s.offset + p.payload_len > room)
        return recv_failed(d, qp, s, VRNIC_WC_LOC_LEN_ERR, kVeRecvTooShort, kNakInvalid);
    SgCursor dc(d.mem, dst, n);
    dc.skip(s.offset);
    SgCursor sc = SgCursor::reading(p.payload, p.payload_len);
    sg_copy(dc, sc, p.payload_len);
    s.offset += p.payload_len;
    if (!last)
        return {};
    const bool inv = base_opcode(p.bth.opcode) == roce::kRcSendLastInv ||
                     base_opcode(p.bth.opcode) == roce::kRcSendOnlyInv;
    if (uint32_t ve = inv ? remote_invalidate(d, qp, p.inv_rkey) : 0)
        return recv_failed(d, qp, s, VRNIC_WC_LOC_PROT_ERR, ve, kNakInvalid);
    complete_held_recv(d, qp, s, p, VRNIC_CQE_OP_RECV, static_cast<uint32_t>(s.offset),
                       inv ? p.inv_rkey : 0);
    return {};
}

Verdict on_write(DeviceState& d, Qp& qp, WireResponse& s, const roce::Packet& p, bool first,
                 bool last) {
    const uint8_t op = base_opcode(p.bth.opcode);
    const bool imm = op == roce::kRcWriteLastImm || op == roce::kRcWriteOnlyImm;
    const Mr* mr = nullptr;
    if (first) {
        s.va = p.va;
        s.rkey = p.rkey;
        s.dma_len = p.dma_len;
        if (p.dma_len > d.params.max_msg_sz)
            return nak(kNakInvalid, VRNIC_EQE_QP_REQ_ERR);
        // The whole region is checked at the first packet, as IB does.
        if (p.dma_len &&
            check_remote(d, qp, p.rkey, p.va, p.dma_len, VRNIC_ACCESS_REMOTE_WRITE, &mr))
            return nak(kNakAccess, VRNIC_EQE_QP_ACCESS_ERR);
    }
    if (s.offset + p.payload_len > s.dma_len || (last && s.offset + p.payload_len != s.dma_len))
        return nak(kNakInvalid, VRNIC_EQE_QP_REQ_ERR);
    // As in IB, the receive resource is checked before the data lands.
    if (imm)
        if (Verdict v = hold_recv(d, qp, s); v.nak || v.rnr)
            return v;
    if (p.payload_len) {
        // Each packet again: the MR may have gone since the first.
        if (check_remote(d, qp, s.rkey, s.va + s.offset, p.payload_len, VRNIC_ACCESS_REMOTE_WRITE,
                         &mr))
            return nak(kNakAccess, VRNIC_EQE_QP_ACCESS_ERR);
        SgEntry region{mr, s.va + s.offset, p.payload_len};
        SgCursor dc(d.mem, &region, 1);
        SgCursor sc = SgCursor::reading(p.payload, p.payload_len);
        sg_copy(dc, sc, p.payload_len);
        s.offset += p.payload_len;
    }
    if (last && imm)
        complete_held_recv(d, qp, s, p, VRNIC_CQE_OP_RECV_RDMA_WITH_IMM, s.dma_len, 0);
    return {};
}

// The checks of a READ request, new or repeated: the MR it reads in *mr
// (none for a zero-length READ), or the NAK.
Verdict read_region(DeviceState& d, const Qp& qp, const roce::Packet& p, const Mr** mr) {
    if (qp.attr.max_dest_rd_atomic == 0 || p.dma_len > d.params.max_msg_sz)
        return nak(kNakInvalid, VRNIC_EQE_QP_REQ_ERR);
    if (p.dma_len && check_remote(d, qp, p.rkey, p.va, p.dma_len, VRNIC_ACCESS_REMOTE_READ, mr))
        return nak(kNakAccess, VRNIC_EQE_QP_ACCESS_ERR);
    return {};
}

// A READ's response is queued (a zero-length READ's is one empty packet):
// the engine sends it (wire_send_answers).
Verdict on_read(DeviceState& d, Qp& qp, WireResponse& s, const roce::Packet& p) {
    const Mr* mr = nullptr;
    if (Verdict v = read_region(d, qp, p, &mr); v.nak)
        return v;
    if (Verdict v = take_resource(qp, s); v.nak)
        return v;
    s.msn++;
    queue_read(s, p, true);
    return {};
}

Verdict on_atomic(DeviceState& d, Qp& qp, WireResponse& s, const roce::Packet& p) {
    if (qp.attr.max_dest_rd_atomic == 0 || p.va % 8)
        return nak(kNakInvalid, VRNIC_EQE_QP_REQ_ERR);
    if (Verdict v = take_resource(qp, s); v.nak)
        return v;
    uint64_t orig = 0;
    const bool cas = p.bth.opcode == roce::kRcCompareSwap;
    if (execute_atomic(d, qp, cas, p.va, p.rkey, cas ? p.compare : p.swap_add, p.swap_add, &orig))
        return nak(kNakAccess, VRNIC_EQE_QP_ACCESS_ERR);
    s.msn++;
    s.atomics[s.atomic_next++ % s.atomics.size()] = {true, p.bth.psn, orig};
    if (WireAnswer* a = answer(d, qp, s, roce::kRcAtomicAck, p.bth.psn, kAckUnlimited, orig))
        a->resource = true;
    return {};
}

// Executes the packet at the PSN the QP expects (its opcode fits the
// message in progress).
Verdict execute(DeviceState& d, Qp& qp, WireResponse& s, const roce::Packet& p) {
    const uint8_t op = base_opcode(p.bth.opcode);
    if (op == roce::kRcReadRequest)
        return on_read(d, qp, s, p);
    if (op == roce::kRcCompareSwap || op == roce::kRcFetchAdd)
        return on_atomic(d, qp, s, p);
    const bool first = starts_message(op), last = ends_message(op);
    if (first) {
        s.offset = 0;
        s.cur = is_send_packet(op) ? Msg::send : Msg::write;
    }
    // Every packet but a message's last carries exactly the path MTU.
    const uint32_t mtu = 1u << psn_mtu_shift(qp.attr.path_mtu);
    if ((!last && p.payload_len != mtu) || p.payload_len > mtu)
        return nak(kNakInvalid, VRNIC_EQE_QP_REQ_ERR);
    const Verdict v =
        is_send_packet(op) ? on_send(d, qp, s, p, last) : on_write(d, qp, s, p, first, last);
    if (qp.wire_resp.get() != &s)
        return v; // the QP went to ERR (a failed receive, a full CQ): `s` is gone
    if (!v.nak && !v.rnr) {
        add_in_reg(&d.regs()->rdma_rx_bytes, p.payload_len);
        if (last) {
            s.cur = Msg::none;
            s.msn++;
            add_in_reg(&d.regs()->rdma_rx_msgs, 1);
        }
    } else if (v.rnr && first) {
        s.cur = Msg::none;
    }
    return v;
}

// Whether the packet's opcode fits the message in progress.
bool in_order(const WireResponse& s, uint8_t op) {
    if (starts_message(op))
        return s.cur == Msg::none;
    return s.cur == (is_send_packet(op) ? Msg::send : Msg::write);
}

// A request the responder has executed before: its answer again.
void duplicate(DeviceState& d, Qp& qp, WireResponse& s, const roce::Packet& p) {
    const uint8_t op = base_opcode(p.bth.opcode);
    count_in_reg(&d.regs()->wire_dup_reqs);
    // A repeated READ or atomic means the requester goes back to it: what
    // is queued from its PSN on (a READ's response that reaches it
    // included) is what it asks again, so it is replaced.
    if (op == roce::kRcReadRequest || op == roce::kRcCompareSwap || op == roce::kRcFetchAdd) {
        std::erase_if(s.answers, [&](const WireAnswer& a) {
            const uint32_t n = a.read ? psn_packets(a.len, qp.attr.path_mtu) : 1;
            if (!psn_at_or_after(a.psn + n - 1, p.bth.psn))
                return false;
            if (!a.read && a.syndrome == kNakSequence)
                s.nak_sent = false; // that gap may be NAKed again
            return true;
        });
    }
    if (op == roce::kRcReadRequest) { // reads are idempotent: executed again
        const Mr* mr = nullptr;
        if (!read_region(d, qp, p, &mr).nak && s.answers.size() < WireResponse::kMaxAnswers)
            queue_read(s, p, false);
        return;
    }
    if (op == roce::kRcCompareSwap || op == roce::kRcFetchAdd) {
        for (const auto& a : s.atomics)
            if (a.valid && a.psn == p.bth.psn)
                answer(d, qp, s, roce::kRcAtomicAck, p.bth.psn, kAckUnlimited, a.orig);
        return; // one older than those kept is not executed twice
    }
    if (p.bth.ack_req)
        answer(d, qp, s, roce::kRcAck, qp.attr.rq_psn - 1, kAckUnlimited);
}

void rc_packet(DeviceState& d, Qp& qp, WireResponse& s, const roce::Packet& p) {
    if (s.failing) // the QP leaves RTS once the answers before its NAK are out
        return count_in_reg(&d.regs()->wire_stale_pkts);
    if (!psn_at_or_after(p.bth.psn, qp.attr.rq_psn))
        return duplicate(d, qp, s, p);
    if (p.bth.psn != qp.attr.rq_psn) { // ahead: a packet before it was lost
        if (!s.nak_sent) {
            s.nak_sent = true;
            count_in_reg(&d.regs()->wire_seq_naks);
            answer(d, qp, s, roce::kRcAck, qp.attr.rq_psn, kNakSequence);
        }
        return;
    }
    const uint8_t op = base_opcode(p.bth.opcode);
    const uint32_t msn = s.msn; // an error may free `s` (the QP goes to ERR)
    const Verdict v =
        in_order(s, op) ? execute(d, qp, s, p) : nak(kNakInvalid, VRNIC_EQE_QP_REQ_ERR);
    if (qp.wire_resp.get() != &s) { // in ERR already
        if (v.nak)
            send_ack(d, qp, roce::kRcAck, p.bth.psn, v.nak, msn);
        return;
    }
    if (v.rnr) {
        add_in_reg(&d.regs()->rnr_naks, 1);
        answer(d, qp, s, roce::kRcAck, p.bth.psn, kRnrNak | (qp.attr.min_rnr_timer & 0x1f));
        return;
    }
    if (v.nak && !s.answers.empty()) { // after the answers before it
        WireAnswer& a = s.answers.emplace_back();
        a.fatal = true;
        a.event = v.event;
        a.opcode = roce::kRcAck;
        a.syndrome = v.nak;
        a.psn = p.bth.psn;
        a.msn = msn;
        s.failing = true;
        return;
    }
    if (v.nak) {
        send_ack(d, qp, roce::kRcAck, p.bth.psn, v.nak, msn);
        qp_enter_error(d, qp, v.event);
        return;
    }
    const uint32_t n = op == roce::kRcReadRequest ? psn_packets(p.dma_len, qp.attr.path_mtu) : 1;
    qp.attr.rq_psn = (qp.attr.rq_psn + n) & VRNIC_PSN_MASK;
    s.nak_sent = false;
    if (p.bth.ack_req && op != roce::kRcReadRequest && op != roce::kRcCompareSwap &&
        op != roce::kRcFetchAdd)
        answer(d, qp, s, roce::kRcAck, p.bth.psn, kAckUnlimited);
}

// UC: a first packet at any PSN starts a message (dropping one a lost
// packet cut); a later one must follow at the expected PSN, or it and the
// rest of its message are dropped.
void uc_packet(DeviceState& d, Qp& qp, WireResponse& s, const roce::Packet& p) {
    const uint8_t op = base_opcode(p.bth.opcode);
    const bool first = starts_message(op);
    if (op > roce::kRcWriteOnlyImm)
        return count_in_reg(&d.regs()->wire_rx_drops); // no UC opcode
    if (first) {
        if (s.cur == Msg::send || s.cur == Msg::write)
            count_in_reg(&d.regs()->uc_drops); // its receive serves the next
        s.cur = Msg::none;
        qp.attr.rq_psn = p.bth.psn;
    } else if (p.bth.psn != qp.attr.rq_psn || !in_order(s, op)) {
        if (s.cur == Msg::send || s.cur == Msg::write)
            count_in_reg(&d.regs()->uc_drops);
        s.cur = Msg::dropping;
        return;
    }
    qp.attr.rq_psn = (p.bth.psn + 1) & VRNIC_PSN_MASK;
    const Verdict v = execute(d, qp, s, p);
    if (qp.wire_resp.get() != &s) // the QP went to ERR: `s` is gone
        return;
    if (v.nak && v.event) { // a request error: the message is dropped, the QP stays
        count_in_reg(&d.regs()->uc_drops);
        s.cur = Msg::dropping;
    } else if (v.rnr) { // no receive: UC never waits
        count_in_reg(&d.regs()->uc_drops);
        s.cur = Msg::dropping;
    }
}

} // namespace

bool wire_send_answers(DeviceState& d, Qp& qp) {
    WireResponse* s = qp.wire_resp.get();
    if (!s || s->answers.empty())
        return false;
    const uint32_t mtu = 1u << psn_mtu_shift(qp.attr.path_mtu);
    std::vector<uint8_t> data;
    while (!s->answers.empty()) {
        WireAnswer& a = s->answers.front();
        const uint32_t n = a.read ? psn_packets(a.len, qp.attr.path_mtu) : 1;
        const uint64_t cost = a.read ? mtu : PassBudget::kWqeCost;
        for (; a.sent < n; a.sent++) {
            if (!d.pass.fits(cost))
                return true; // the next visit goes on
            if (a.fatal) {
                const uint8_t event = a.event;
                send_ack(d, qp, a.opcode, a.psn, a.syndrome, a.msn);
                qp_enter_error(d, qp, event); // frees `s`
                return true;
            }
            if (!a.read) {
                send_ack(d, qp, a.opcode, a.psn, a.syndrome, a.msn, a.orig);
            } else if (!send_read_packet(d, qp, a, a.sent, n, data)) {
                // Its memory went since the request: a remote access NAK
                // at the PSN the requester waits for, as for a WRITE.
                send_ack(d, qp, roce::kRcAck, a.psn + a.sent, kNakAccess, a.msn);
                qp_enter_error(d, qp, VRNIC_EQE_QP_ACCESS_ERR);
                return true;
            }
            d.pass.charge(cost);
        }
        s->answers.pop_front();
    }
    return true;
}

void wire_responder_receive(DeviceState& d, const roce::Packet& p) {
    Qp* qp = d.obj->qps.find(p.bth.dest_qp);
    const bool uc = p.bth.opcode & roce::kUcBase;
    const QpType want = uc ? QpType::uc : QpType::rc;
    if (!qp || qp->type != want || memcmp(p.sgid.data(), qp->attr.av.dgid, 16))
        return count_in_reg(&d.regs()->wire_rx_drops);
    if (qp->state != VRNIC_QPS_RTR && qp->state != VRNIC_QPS_RTS && qp->state != VRNIC_QPS_SQD)
        return count_in_reg(&d.regs()->wire_stale_pkts); // the peer's, but too late
    if (!qp->wire_resp)
        qp->wire_resp = std::make_unique<WireResponse>();
    // The first message a QP in RTR takes establishes the connection.
    if (qp->state == VRNIC_QPS_RTR && !qp->comm_est_sent) {
        qp->comm_est_sent = true;
        post_async_event(d, VRNIC_EQE_COMM_EST, qp->qpn);
    }
    if (uc)
        uc_packet(d, *qp, *qp->wire_resp, p);
    else
        rc_packet(d, *qp, *qp->wire_resp, p);
}

} // namespace vrnic
