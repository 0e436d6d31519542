// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The RC and UC requester for a peer beyond the uplink (IBTA 9.7, Annex
// A17): the WQE at the head of the SQ leaves as packets of the path MTU,
// at most kWindow of them unacknowledged; the responder's ACKs complete
// it, a sequence NAK sends again from the PSN it names, an RNR NAK after
// its timer, and the ack timeout from the last acknowledged packet,
// retry_cnt (rnr_retry) times. A READ's response packets are placed as
// they arrive in order; a gap asks again from the first one missing. UC
// sends and completes: nothing answers it.
#include "completion.h"
#include "psn.h"
#include "requester.h"
#include "requester_steps.h"
#include "shared_word.h"
#include "wire.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace vrnic {

namespace {

// Packets sent beyond the last acknowledged one before the requester waits.
constexpr uint32_t kWindow = 32;
// Every this many packets of a message asks for an ACK (and its last one):
// the responder acknowledges nothing else, so its ACKs are coalesced.
constexpr uint32_t kAckEvery = 16;

bool is_read(uint8_t op) {
    return op == VRNIC_WR_RDMA_READ;
}

bool is_write(uint8_t op) {
    return op == VRNIC_WR_RDMA_WRITE || op == VRNIC_WR_RDMA_WRITE_WITH_IMM;
}

// The opcode of packet i of n of a SEND or WRITE.
uint8_t data_opcode(uint8_t wr, uint32_t i, uint32_t n) {
    const bool first = i == 0, last = i + 1 == n;
    if (is_write(wr)) {
        const bool imm = wr == VRNIC_WR_RDMA_WRITE_WITH_IMM;
        if (first && last)
            return imm ? roce::kRcWriteOnlyImm : roce::kRcWriteOnly;
        if (last)
            return imm ? roce::kRcWriteLastImm : roce::kRcWriteLast;
        return first ? roce::kRcWriteFirst : roce::kRcWriteMiddle;
    }
    const bool imm = wr == VRNIC_WR_SEND_WITH_IMM, inv = wr == VRNIC_WR_SEND_WITH_INV;
    if (first && last)
        return imm ? roce::kRcSendOnlyImm : inv ? roce::kRcSendOnlyInv : roce::kRcSendOnly;
    if (last)
        return imm ? roce::kRcSendLastImm : inv ? roce::kRcSendLastInv : roce::kRcSendLast;
    return first ? roce::kRcSendFirst : roce::kRcSendMiddle;
}

// Sends packet i of the request (a READ: the request for its responses
// from packet i on).
void send_packet(DeviceState& d, Qp& qp, const WireRequest& r, LocalMsg& msg, uint32_t i) {
    const vrnic_send_wqe_hdr& h = r.wqe.h;
    const unsigned shift = psn_mtu_shift(qp.attr.path_mtu);
    const uint64_t off = uint64_t(i) << shift;
    roce::Packet p = wire_packet(d, qp.attr.av, qp.qpn);
    p.bth.dest_qp = qp.attr.dest_qpn;
    p.bth.psn = (r.first_psn + i) & VRNIC_PSN_MASK;
    std::vector<uint8_t> data;
    if (is_read(h.opcode)) {
        p.bth.opcode = roce::kRcReadRequest;
        p.bth.ack_req = true;
        p.va = h.rdma.remote_addr + off;
        p.rkey = h.rdma.rkey;
        p.dma_len = static_cast<uint32_t>(msg.len - off);
    } else if (is_atomic_opcode(h.opcode)) {
        const bool cas = h.opcode == VRNIC_WR_ATOMIC_CMP_AND_SWP;
        p.bth.opcode = cas ? roce::kRcCompareSwap : roce::kRcFetchAdd;
        p.bth.ack_req = true;
        p.va = h.atomic.remote_addr;
        p.rkey = h.atomic.rkey;
        p.swap_add = cas ? h.atomic.swap : h.atomic.compare_add;
        p.compare = cas ? h.atomic.compare_add : 0;
    } else {
        const bool last = i + 1 == r.npkts;
        p.bth.opcode = data_opcode(h.opcode, i, r.npkts);
        if (qp.type == QpType::uc)
            p.bth.opcode |= roce::kUcBase;
        else
            p.bth.ack_req = last || (i + 1) % kAckEvery == 0;
        p.bth.solicited = last && (h.flags & VRNIC_WQE_F_SOLICITED);
        if (i == 0 && is_write(h.opcode)) {
            p.va = h.rdma.remote_addr;
            p.rkey = h.rdma.rkey;
            p.dma_len = static_cast<uint32_t>(msg.len);
        }
        p.imm = h.imm_data;
        p.inv_rkey = h.invalidate_rkey;
        const uint64_t n = std::min<uint64_t>(msg.len - off, uint64_t(1) << shift);
        data.resize(n);
        SgCursor dst(data.data(), n);
        SgCursor src = msg.cursor();
        src.skip(off);
        sg_copy(dst, src, n);
        p.payload = data.data();
        p.payload_len = static_cast<uint32_t>(n);
        d.pass.charge(n);
    }
    wire_emit(d, p); // one the switch refuses is lost as on a wire
}

// Completes the WQE with the outcome its packets got.
Outcome finish(DeviceState& d, Qp& qp, uint8_t status, uint32_t vendor, uint64_t len) {
    // complete_send() may move the QP to ERR, which frees the request.
    const vrnic_send_wqe_hdr h = qp.wire_req->wqe.h;
    qp.wire_req.reset();
    qp.retry_waiting = false;
    complete_send(d, qp, h, status, len, vendor);
    return Outcome::consumed;
}

// The ack timeout or an RNR NAK's timer ran out: send again from the last
// acknowledged packet, unless the retries are spent.
bool timer_expired(DeviceState& d, Qp& qp, WireRequest& r, uint8_t* status) {
    qp.retry_waiting = false;
    if (r.rnr) {
        r.rnr = false;
        if (qp.attr.rnr_retry != 7 && qp.rnr_retries++ >= qp.attr.rnr_retry)
            return *status = VRNIC_WC_RNR_RETRY_EXC_ERR, false;
    } else {
        if (qp.retries++ >= qp.attr.retry_cnt)
            return *status = VRNIC_WC_RETRY_EXC_ERR, false;
        add_in_reg(&d.regs()->retries, 1);
    }
    r.next = r.acked;
    r.gap_reported = false;
    return true;
}

// The packets of the request that may go now: a READ's or an atomic's one
// request, or data packets up to the window (RC: UC has no ACK to move it)
// and what this visit's budget allows. True when the budget held back a
// packet the window had room for.
bool send_window(DeviceState& d, Qp& qp, WireRequest& r, LocalMsg& msg) {
    const uint8_t op = r.wqe.h.opcode;
    const uint32_t resent_before = r.next;
    bool held = false;
    if (is_read(op) || is_atomic_opcode(op)) {
        if (r.next < r.npkts) {
            send_packet(d, qp, r, msg, r.acked);
            r.next = r.npkts;
        }
    } else {
        const uint64_t mtu = uint64_t(1) << psn_mtu_shift(qp.attr.path_mtu);
        const uint32_t window = qp.type == QpType::uc ? r.npkts : kWindow;
        for (; r.next < r.npkts && r.next - r.acked < window; r.next++) {
            if (!d.pass.fits(mtu)) {
                held = true;
                break;
            }
            send_packet(d, qp, r, msg, r.next);
        }
    }
    if (r.sent_max > resent_before)
        add_in_reg(&d.regs()->wire_resent_pkts, std::min(r.sent_max, r.next) - resent_before);
    r.sent_max = std::max(r.sent_max, r.next);
    return held;
}

} // namespace

Outcome execute_wire_send(DeviceState& d, Qp& qp, const SendWqeCopy* w) {
    if (w) {
        // UC has no SEND with invalidate on the wire (IBTA 9.4.1.1).
        if (qp.type == QpType::uc && w->h.opcode == VRNIC_WR_SEND_WITH_INV) {
            complete_send(d, qp, w->h, VRNIC_WC_LOC_QP_OP_ERR, 0, kVeBadOpcode);
            return Outcome::consumed;
        }
        qp.wire_req = std::make_unique<WireRequest>();
        qp.retries = 0;
        qp.rnr_retries = 0;
        WireRequest& r = *qp.wire_req;
        r.sq_idx = qp.sq.ci;
        memcpy(&r.wqe, w, sizeof(r.wqe));
    }
    WireRequest& r = *qp.wire_req;
    LocalMsg msg;
    uint32_t vendor = 0;
    // Checked again for every burst: a key may have gone since the last.
    if (uint8_t st = check_local(d, qp, r.wqe, &msg, &vendor))
        return finish(d, qp, st, vendor, 0);
    if (w) {
        const uint8_t op = r.wqe.h.opcode;
        r.npkts = is_atomic_opcode(op) ? 1 : psn_packets(msg.len, qp.attr.path_mtu);
        r.first_psn = qp.attr.sq_psn;
        qp.attr.sq_psn = (qp.attr.sq_psn + r.npkts) & VRNIC_PSN_MASK;
    }
    if (r.done)
        return finish(d, qp, r.status, r.vendor, msg.len);
    uint8_t status = 0;
    if (qp.retry_waiting && !timer_expired(d, qp, r, &status))
        return finish(d, qp, status,
                      status == VRNIC_WC_RNR_RETRY_EXC_ERR ? kVeRnrExceeded : kVeNoResponder, 0);
    const bool held = send_window(d, qp, r, msg);
    if (qp.type == QpType::uc)
        return r.next == r.npkts ? finish(d, qp, VRNIC_WC_SUCCESS, 0, msg.len) : Outcome::partial;
    if (held) // the next pass sends on before the timer starts
        return Outcome::partial;
    qp.retry_waiting = true;
    qp.retry_deadline = d.now() + ack_timeout_ns(qp.attr.timeout);
    return Outcome::rnr_wait;
}

namespace {

// The request is answered: the next pass completes it.
void answered(WireRequest& r, Qp& qp, uint8_t status, uint32_t vendor) {
    r.done = true;
    r.status = status;
    r.vendor = vendor;
    qp.retry_waiting = false;
}

// The packets up to `acked` arrived: the window moves, the timer restarts.
void progressed(DeviceState& d, WireRequest& r, Qp& qp, uint32_t acked) {
    r.acked = acked;
    qp.retries = 0;
    qp.rnr_retries = 0;
    r.gap_reported = false;
    if (r.next < r.npkts) {
        qp.retry_waiting = false; // send what the window now allows
    } else {
        qp.retry_waiting = true;
        qp.retry_deadline = d.now() + ack_timeout_ns(qp.attr.timeout);
    }
}

// The completion status of a NAK's code (IBTA 9.7.5.2.8, table 46).
uint8_t nak_status(uint8_t code) {
    switch (code) {
    case 2:
        return VRNIC_WC_REM_ACCESS_ERR;
    case 3:
        return VRNIC_WC_REM_OP_ERR;
    default: // 1 invalid request, 4 invalid RD request, reserved codes
        return VRNIC_WC_REM_INV_REQ_ERR;
    }
}

void on_ack(DeviceState& d, Qp& qp, WireRequest& r, const roce::Packet& p, uint32_t k) {
    const uint8_t op = r.wqe.h.opcode;
    switch (p.syndrome >> 5) {
    case 0: // ACK: everything up to its PSN arrived
        if (is_read(op) || is_atomic_opcode(op) || k >= r.npkts || k + 1 <= r.acked)
            return;
        if (k + 1 == r.npkts)
            return answered(r, qp, VRNIC_WC_SUCCESS, 0);
        return progressed(d, r, qp, k + 1);
    case 1: // RNR NAK: the packet at its PSN found no receive
        if (k >= r.npkts || k < r.acked)
            return;
        add_in_reg(&d.regs()->rnr_naks, 1);
        r.acked = k;
        r.next = k;
        r.rnr = true;
        qp.retry_waiting = true;
        qp.retry_deadline = d.now() + rnr_timer_ns(p.syndrome & 0x1f);
        return;
    case 3: // NAK
        if (k >= r.npkts || k < r.acked)
            return;
        if ((p.syndrome & 0x1f) == 0) { // sequence error: send again from k
            r.acked = k;
            r.next = k;
            r.gap_reported = false;
            qp.retry_waiting = false;
            return;
        }
        return answered(r, qp, nak_status(p.syndrome & 0x1f), kVeWireNak);
    default: // reserved
        count_in_reg(&d.regs()->wire_rx_drops);
    }
}

// A READ response packet k: placed if it is the next one; a gap asks for
// the rest again, once per gap.
void on_read_response(DeviceState& d, Qp& qp, WireRequest& r, const roce::Packet& p, uint32_t k) {
    if (k < r.acked || k >= r.npkts)
        return; // a duplicate, or not of this request
    if (k > r.acked) {
        if (!r.gap_reported) {
            r.gap_reported = true;
            r.next = r.acked;
            qp.retry_waiting = false;
        }
        return;
    }
    LocalMsg msg;
    uint32_t vendor = 0;
    if (uint8_t st = check_local(d, qp, r.wqe, &msg, &vendor))
        return answered(r, qp, st, vendor);
    const unsigned shift = psn_mtu_shift(qp.attr.path_mtu);
    const uint64_t off = uint64_t(k) << shift;
    const uint64_t want = std::min<uint64_t>(msg.len - off, uint64_t(1) << shift);
    const uint8_t op = p.bth.opcode;
    const bool last = op == roce::kRcReadResponseLast || op == roce::kRcReadResponseOnly;
    if (p.payload_len != want || last != (k + 1 == r.npkts))
        return count_in_reg(&d.regs()->wire_rx_drops);
    SgCursor dst = msg.cursor();
    dst.skip(off);
    SgCursor src = SgCursor::reading(p.payload, p.payload_len);
    sg_copy(dst, src, want);
    if (last)
        return answered(r, qp, VRNIC_WC_SUCCESS, 0);
    progressed(d, r, qp, k + 1);
}

void on_atomic_ack(DeviceState& d, Qp& qp, WireRequest& r, const roce::Packet& p, uint32_t k) {
    if (!is_atomic_opcode(r.wqe.h.opcode) || k != 0)
        return;
    LocalMsg msg;
    uint32_t vendor = 0;
    if (uint8_t st = check_local(d, qp, r.wqe, &msg, &vendor))
        return answered(r, qp, st, vendor);
    const uint64_t orig = p.orig;
    SgCursor src = SgCursor::reading(reinterpret_cast<const uint8_t*>(&orig), 8);
    SgCursor dst = msg.cursor();
    sg_copy(dst, src, 8);
    answered(r, qp, VRNIC_WC_SUCCESS, 0);
}

} // namespace

void wire_requester_receive(DeviceState& d, const roce::Packet& p) {
    Qp* qp = d.obj->qps.find(p.bth.dest_qp);
    WireRequest* r = qp ? qp->wire_req.get() : nullptr;
    // Answers from a station that is not the QP's peer are dropped; the
    // peer's late answers to a request that completed are stale.
    if (!qp || qp->type != QpType::rc || memcmp(p.sgid.data(), qp->attr.av.dgid, 16))
        return count_in_reg(&d.regs()->wire_rx_drops);
    if (!r || r->done || r->sq_idx != qp->sq.ci)
        return count_in_reg(&d.regs()->wire_stale_pkts);
    const uint32_t k = (p.bth.psn - r->first_psn) & VRNIC_PSN_MASK;
    switch (p.bth.opcode) {
    case roce::kRcAck:
        return on_ack(d, *qp, *r, p, k);
    case roce::kRcAtomicAck:
        if ((p.syndrome >> 5) != 0)
            return on_ack(d, *qp, *r, p, k);
        return on_atomic_ack(d, *qp, *r, p, k);
    default:
        if (!is_read(r->wqe.h.opcode))
            return count_in_reg(&d.regs()->wire_rx_drops);
        return on_read_response(d, *qp, *r, p, k);
    }
}

} // namespace vrnic
