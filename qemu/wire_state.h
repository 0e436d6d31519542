// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// What an RC or UC QP whose peer is beyond the uplink keeps between passes
// (wire_requester.cc, wire_responder.cc): the packets of the message at the
// head of its SQ, the message its responder is in the middle of, and the
// answers it has yet to send.
#pragma once

#include "device_params.h"
#include "wqe_copy.h"

#include <array>
#include <cstdint>
#include <deque>

namespace vrnic {

// The SQ WQE at sq.ci on its way: packets [0, npkts) take PSNs first_psn..;
// a READ's are those of its response packets.
struct WireRequest {
    uint32_t sq_idx = 0;
    SendWqeCopy wqe; // the private copy every packet and retry is built from
    uint32_t first_psn = 0;
    uint32_t npkts = 0;
    uint32_t next = 0;         // packets sent (READ: npkts once the request is out)
    uint32_t acked = 0;        // packets acknowledged (READ: response packets taken)
    uint32_t sent_max = 0;     // the furthest `next` so far: below it, packets go again
    bool rnr = false;          // the wait is an RNR NAK's, not the ack timeout
    bool gap_reported = false; // READ: a gap in the responses asked again
    bool done = false;
    uint8_t status = 0;
    uint32_t vendor = 0;
};

// An answer the requester waits for: an ACK, NAK or atomic ACK, or the
// response packets of a READ (`read`), which go out over engine passes.
struct WireAnswer {
    bool read = false;
    bool resource = false; // a new READ or atomic: holds a responder resource
    bool fatal = false;    // a NAK that moves the QP to ERR once it is sent
    uint8_t event = 0;     // the async event of that move, or 0
    uint8_t opcode = 0;    // not a READ: kRcAck or kRcAtomicAck
    uint8_t syndrome = 0;
    uint32_t psn = 0; // a READ: its first response's
    uint32_t msn = 0;
    uint64_t orig = 0; // an atomic ACK's original value
    uint32_t rkey = 0; // a READ: what it reads, checked again per packet
    uint64_t va = 0;
    uint32_t len = 0;
    uint32_t sent = 0; // a READ: response packets out
};

// The responder's side: the message in progress, its MSN, the answers not
// yet sent, and the atomics it answered, to answer a repeated request with
// the same original value.
struct WireResponse {
    enum class Msg : uint8_t { none, send, write, dropping };
    Msg cur = Msg::none;
    bool recv_held = false; // SEND: `recv` is taken (RQ head or off the SRQ)
    RecvWqe recv;
    uint64_t offset = 0; // bytes of the message placed so far
    uint64_t va = 0;     // WRITE: from the first packet's RETH
    uint32_t rkey = 0;
    uint32_t dma_len = 0;
    uint32_t msn = 0;
    bool nak_sent = false; // a sequence NAK is out for the expected PSN
    struct Atomic {
        bool valid = false;
        uint32_t psn = 0;
        uint64_t orig = 0;
    };
    // The last answered, by PSN: one per responder resource, since a
    // requester may repeat any of max_dest_rd_atomic outstanding atomics.
    std::array<Atomic, kMaxRdAtom> atomics;
    unsigned atomic_next = 0;
    // In PSN order, as IB answers: behind a READ whose response is still
    // going out, every later answer waits. Bounded: a READ or atomic beyond
    // the responder's resources is an invalid request, ACKs in a row
    // coalesce, and what finds the queue full is not answered (the
    // requester asks again).
    static constexpr size_t kMaxAnswers = 2 * kMaxRdAtom + 2;
    std::deque<WireAnswer> answers;
    // A NAK that ends the QP waits behind earlier answers: nothing more is
    // executed meanwhile.
    bool failing = false;
};

} // namespace vrnic
