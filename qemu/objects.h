// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The device's objects (what a real RNIC keeps in its context tables). They
// hold only values the device validated; pointers between objects are safe
// because an object cannot be destroyed while another references it (BUSY).
#pragma once

#include "page_budget.h"
#include "qp_type.h"
#include "wire_state.h"
#include "work_queue.h"
#include "wqe_copy.h"

#include <vrnic_dev.h>

#include <bitset>
#include <cstdint>
#include <memory>
#include <vector>

namespace vrnic {

struct Uctx {
    uint32_t handle = 0;
    uint32_t db_page = 0;
    uint32_t refs = 0; // PDs, CQs, QPs, SRQs
    std::bitset<VRNIC_DB_SLOTS_PER_PAGE> slot_used;

    // A free object slot (1..511), or 0 when the page is full.
    uint32_t alloc_slot() {
        for (uint32_t s = VRNIC_DB_FIRST_OBJ_SLOT; s < VRNIC_DB_SLOTS_PER_PAGE; s++)
            if (!slot_used[s]) {
                slot_used[s] = true;
                return s;
            }
        return 0;
    }
    void free_slot(uint32_t s) { slot_used[s] = false; }
};

struct Pd {
    uint32_t handle = 0;
    Uctx* uctx = nullptr;
    uint32_t refs = 0; // MRs, QPs, AHs, SRQs
};

// An XRC domain (10.25): XRC SRQs and XRC target QPs of one domain serve
// each other. One of the kernel context is shared by every context.
struct Xrcd {
    uint32_t handle = 0;
    Uctx* uctx = nullptr;
    uint32_t refs = 0; // XRC SRQs, XRC target QPs
};

struct Ah {
    uint32_t handle = 0;
    Pd* pd = nullptr;
    vrnic_av av{};
};

struct Mr {
    uint32_t key = 0; // handle == lkey == rkey
    Pd* pd = nullptr;
    uint32_t access = 0;
    bool phys = false; // kernel DMA MR: address == GPA
    uint64_t iova = 0;
    uint64_t length = 0;
    uint32_t page_shift = 12;
    std::vector<uint64_t> pages;     // GPAs, validated at registration
    PageBudget::Charge pages_charge; // pages.size() (FRMR: max_pages) entries
    // A fast-registration MR (ALLOC_MR, fast_reg.h): registered by REG_MR
    // WQEs; while not `valid` (free) it contains no address.
    bool fast = false;
    bool valid = true;
    uint32_t max_pages = 0;
    // A memory window (ALLOC_MW, mw.h) when non-zero: `valid` says it is
    // bound, iova/length/access are the window's, and the bytes are those
    // of the MR whose key was `mw_mr_key` at bind time.
    uint8_t mw_type = 0; // VRNIC_MW_TYPE_*
    uint32_t mw_mr_key = 0;
    uint32_t mw_qpn = 0; // type 2: the QP it is bound to
};

struct Eq {
    uint32_t eqn = 0;
    uint64_t ring = 0;
    uint32_t log_depth = 0;
    uint32_t vector = 0;
    uint32_t db_slot = 0; // in page 1; 0 for the async EQ (ci in regs)
    uint32_t pi = 0;
    uint32_t refs = 0; // CQs
    bool overflow_logged = false;
};

enum class CqArm : uint8_t { none, solicited, next };

struct Cq {
    uint32_t cqn = 0;
    Uctx* uctx = nullptr;
    Eq* eq = nullptr;
    uint64_t ring = 0;
    uint32_t log_depth = 0;
    uint32_t db_slot = 0;
    uint32_t pi = 0;
    uint16_t last_next = 0, last_sol = 0;
    CqArm armed = CqArm::none;
    bool error = false;
    uint32_t refs = 0; // QPs
    // The batch of CQEs written since the last arm check.
    bool batch_pending = false;
    bool batch_solicited_or_error = false;
};

// A shared receive queue (device-interface.md 10.17): receive WQEs any QP
// attached to it takes, in order. The device publishes its consumer index.
struct Srq {
    uint32_t srqn = 0;
    Uctx* uctx = nullptr;
    Pd* pd = nullptr;
    Xrcd* xrcd = nullptr;        // an XRC SRQ: its domain; the responder's PD is pd
    Cq* cq = nullptr;            // an XRC SRQ: where its receives complete
    WorkQueue wq;                // pi_word and ci_word are the doorbell slot's
    uint32_t* ci_word = nullptr; // device-written, release-stored
    uint32_t db_slot = 0;
    uint32_t limit = 0;      // armed SRQ_LIMIT threshold; 0: disarmed
    bool pi_invalid = false; // SRQ_ERR posted for the current invalid pi
    uint32_t refs = 0;       // QPs (not the XRC targets bound to it)
};

struct Qp {
    uint32_t qpn = 0;
    QpType type = QpType::rc;
    bool gsi = false; // QPN 1: a UD QP of the kernel with the GSI qkey
    Uctx* uctx = nullptr;
    Pd* pd = nullptr;
    Cq* send_cq = nullptr;
    Cq* recv_cq = nullptr;
    uint16_t create_flags = 0;
    WorkQueue sq, rq;   // their consumer indices are the engine's
    Srq* srq = nullptr; // receives come from it; rq is unused
    // XRC target: its domain; srq, pd and recv_cq are those of the XRC SRQ
    // the last message named (xrc.h), or null.
    Xrcd* xrcd = nullptr;
    uint32_t max_inline = 0;
    uint32_t db_slot = 0;

    vrnic_qp_state state = VRNIC_QPS_RESET;
    vrnic_qp_attr attr{}; // last values set; qp_state mirrors `state`

    // Engine state.
    bool comm_est_sent = false;
    bool sq_drained_pending = false;
    // SQD: WQEs posted before the transition still run; sq.ci stops here.
    uint32_t sqd_stop = 0;
    // RNR: the head SQ WQE waits for a receive at the responder.
    bool rnr_waiting = false;
    uint32_t rnr_retries = 0;   // timer-driven retries so far
    uint64_t rnr_deadline = 0;  // ns, next timer retry
    uint32_t rnr_resp_qpn = 0;  // the responder waited on
    int rnr_resp_port = -1;     // its fabric port (-1: this device)
    uint32_t rnr_recv_mark = 0; // its RecvSource::rnr_mark() then
    // Lost request: the head SQ WQE found its responder not ready yet
    // (RESET, INIT), or over the uplink got no answer or an RNR NAK; it is
    // sent again after the ack timeout, retry_cnt times (the wire's RNR
    // waits count in rnr_retries).
    bool retry_waiting = false;
    uint32_t retries = 0;
    uint64_t retry_deadline = 0; // ns
    // The head SQ WQE's message, when an earlier pass moved part of it.
    std::unique_ptr<MsgInFlight> inflight;
    // UD: the fabric ports (a bit each; fabric_port's bit: this device's own
    // members) the head SQ WQE's multicast datagram has reached, when an
    // earlier pass found the next port busy.
    uint64_t mcast_sent = 0;
    // As a responder on an SRQ: the WQE it took off the SRQ and has not
    // completed yet (no other QP may take it; ERR flushes it).
    std::unique_ptr<RecvWqe> srq_taken;
    // RC/UC to a peer beyond the uplink (wire_state.h).
    std::unique_ptr<WireRequest> wire_req;
    std::unique_ptr<WireResponse> wire_resp;

    bool sqd_reached() const { return int32_t(sqd_stop - sq.ci) <= 0; }
    bool in_active_list = false;
};

} // namespace vrnic
