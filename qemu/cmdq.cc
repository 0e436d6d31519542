// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The command queue ring and the opcode dispatch (sections 9.2, 9.3).
#include "cmd_util.h"
#include "events.h"
#include "ring_slot.h"
#include "shared_word.h"

#include <new>

namespace vrnic {

namespace {

using Handler = CmdResult (*)(DeviceState&, const vrnic_cmd&, vrnic_cmd&);

struct OpInfo {
    Handler fn;
    uint32_t req_size; // request bytes; the rest of the payload must be 0
    const char* name;
};

CmdResult cmd_nop(DeviceState&, const vrnic_cmd&, vrnic_cmd&) {
    return cmd_ok();
}

const OpInfo* op_info(uint16_t opcode) {
    static const OpInfo table[] = {
        /* 0x00 */ {nullptr, 0, "?"},
        /* NOP */ {cmd_nop, 0, "NOP"},
        /* QUERY_DEVICE */ {cmd_query_device, 0, "QUERY_DEVICE"},
        /* QUERY_PORT */ {cmd_query_port, sizeof(vrnic_cmd_query_port), "QUERY_PORT"},
        /* ALLOC_UCTX */ {cmd_alloc_uctx, 0, "ALLOC_UCTX"},
        /* DEALLOC_UCTX */ {cmd_dealloc_uctx, sizeof(vrnic_cmd_handle), "DEALLOC_UCTX"},
        /* CREATE_PD */ {cmd_create_pd, sizeof(vrnic_cmd_create_pd), "CREATE_PD"},
        /* DESTROY_PD */ {cmd_destroy_pd, sizeof(vrnic_cmd_handle), "DESTROY_PD"},
        /* REG_MR */ {cmd_reg_mr, sizeof(vrnic_cmd_reg_mr), "REG_MR"},
        /* DEREG_MR */ {cmd_dereg_mr, sizeof(vrnic_cmd_handle), "DEREG_MR"},
        /* CREATE_CQ */ {cmd_create_cq, sizeof(vrnic_cmd_create_cq), "CREATE_CQ"},
        /* DESTROY_CQ */ {cmd_destroy_cq, sizeof(vrnic_cmd_handle), "DESTROY_CQ"},
        /* RESIZE_CQ */ {cmd_resize_cq, sizeof(vrnic_cmd_resize_cq), "RESIZE_CQ"},
        /* CREATE_QP */ {cmd_create_qp, sizeof(vrnic_cmd_create_qp), "CREATE_QP"},
        /* MODIFY_QP */ {cmd_modify_qp, sizeof(vrnic_cmd_modify_qp), "MODIFY_QP"},
        /* QUERY_QP */ {cmd_query_qp, sizeof(vrnic_cmd_handle), "QUERY_QP"},
        /* DESTROY_QP */ {cmd_destroy_qp, sizeof(vrnic_cmd_handle), "DESTROY_QP"},
        /* CREATE_SRQ */ {cmd_create_srq, sizeof(vrnic_cmd_create_srq), "CREATE_SRQ"},
        /* MODIFY_SRQ */ {cmd_modify_srq, sizeof(vrnic_cmd_modify_srq), "MODIFY_SRQ"},
        /* DESTROY_SRQ */ {cmd_destroy_srq, sizeof(vrnic_cmd_handle), "DESTROY_SRQ"},
        /* CREATE_AH */ {cmd_create_ah, sizeof(vrnic_cmd_create_ah), "CREATE_AH"},
        /* DESTROY_AH */ {cmd_destroy_ah, sizeof(vrnic_cmd_handle), "DESTROY_AH"},
        /* SET_GID */ {cmd_set_gid, sizeof(vrnic_cmd_set_gid), "SET_GID"},
        /* CREATE_EQ */ {cmd_create_eq, sizeof(vrnic_cmd_create_eq), "CREATE_EQ"},
        /* DESTROY_EQ */ {cmd_destroy_eq, sizeof(vrnic_cmd_handle), "DESTROY_EQ"},
        /* SET_ETH */ {cmd_set_eth, sizeof(vrnic_cmd_set_eth), "SET_ETH"},
        /* ATTACH_MCAST */ {cmd_attach_mcast, sizeof(vrnic_cmd_mcast), "ATTACH_MCAST"},
        /* DETACH_MCAST */ {cmd_detach_mcast, sizeof(vrnic_cmd_mcast), "DETACH_MCAST"},
        /* QUERY_CLOCK */ {cmd_query_clock, 0, "QUERY_CLOCK"},
        /* ALLOC_XRCD */ {cmd_alloc_xrcd, sizeof(vrnic_cmd_alloc_xrcd), "ALLOC_XRCD"},
        /* DEALLOC_XRCD */ {cmd_dealloc_xrcd, sizeof(vrnic_cmd_handle), "DEALLOC_XRCD"},
        /* ALLOC_MR */ {cmd_alloc_mr, sizeof(vrnic_cmd_alloc_mr), "ALLOC_MR"},
        /* ALLOC_MW */ {cmd_alloc_mw, sizeof(vrnic_cmd_alloc_mw), "ALLOC_MW"},
        /* DEALLOC_MW */ {cmd_dealloc_mw, sizeof(vrnic_cmd_handle), "DEALLOC_MW"},
    };
    static_assert(sizeof(table) / sizeof(table[0]) == VRNIC_CMD_DEALLOC_MW + 1);
    if (opcode == 0 || opcode > VRNIC_CMD_DEALLOC_MW)
        return nullptr;
    return &table[opcode];
}

} // namespace

CmdResult execute_command(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out) {
    const OpInfo* op = op_info(in.hdr.opcode);
    if (!op)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_OPCODE, "unknown opcode");
    if (in.hdr.flags)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "hdr.flags != 0");
    // Bytes past the request are reserved: a newer driver must not be able
    // to rely on an extension this device would silently ignore.
    for (uint32_t i = op->req_size; i < VRNIC_CMD_PAYLOAD_SIZE; i++)
        if (in.payload[i])
            CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "non-zero bytes after the request");
    CmdResult r;
    try {
        r = op->fn(d, in, out);
    } catch (const std::bad_alloc&) {
        // Page lists and CQ copies are the only large allocations; running
        // out of host memory fails the command, not the model.
        out = vrnic_cmd{};
        r = {VRNIC_CMD_STATUS_NO_RESOURCE, __LINE__};
    }
    LOG_DBG("cmd %s seq %u -> status %u", op->name, in.hdr.seq, r.status);
    return r;
}

bool process_cmdq(DeviceState& d) {
    if (!d.driver_ok || d.fatal)
        return false;
    vrnic_regs* regs = d.regs();
    const uint32_t depth = 1u << d.rings.cmdq_log_depth;
    const uint32_t pi = load_acquire(&regs->cmdq_pi);
    if (pi == d.cmdq_ci)
        return false;
    if (!ring_index_ok(pi, d.cmdq_ci, depth)) {
        LOG_ERR("cmdq_pi %u out of range (ci %u, depth %u)", pi, d.cmdq_ci, depth);
        enter_fatal(d, VRNIC_FATAL_CMDQ);
        return true;
    }
    while (d.cmdq_ci != pi && !d.fatal) {
        // validated when latched
        auto* cmd =
            ring_entry<vrnic_cmd>(d.mem, d.rings.cmdq_base, d.rings.cmdq_log_depth, d.cmdq_ci);
        if (!cmd) {
            enter_fatal(d, VRNIC_FATAL_INTERNAL);
            break;
        }
        vrnic_cmd in;
        memcpy(&in, cmd, sizeof(in)); // read once, then validate the copy
        vrnic_cmd out{};
        CmdResult r = execute_command(d, in, out);
        memcpy(cmd->payload, out.payload, sizeof(out.payload));
        store_relaxed(&cmd->hdr.syndrome, r.syndrome);
        store_relaxed(&cmd->hdr.status, r.status);
        d.cmdq_ci++;
        store_release(&regs->cmdq_ci, d.cmdq_ci);
    }
    d.raise(VRNIC_IRQ_ADMIN);
    return true;
}

} // namespace vrnic
