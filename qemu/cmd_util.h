// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Helpers shared by the command handlers (cmd_*.cc).
#pragma once

#include "all_zero.h"
#include "commands.h"
#include "log.h"

#include <cstring>

namespace vrnic {

inline CmdResult cmd_ok() {
    return {VRNIC_CMD_STATUS_OK, 0};
}

// Fails a command with a status, the line of the failed check as syndrome,
// and a debug log line saying why.
#define CMD_FAIL(st, why)                                                                          \
    do {                                                                                           \
        LOG_DBG("command failed: %s (status %u, syndrome %u)", why, unsigned(st), __LINE__);       \
        return CmdResult{static_cast<uint32_t>(st), __LINE__};                                     \
    } while (0)

// A device ring in guest RAM: non-zero, VRNIC_RING_ALIGN-aligned, at most
// VRNIC_RING_MAX_BYTES, wholly inside guest RAM. Returns a status.
inline uint32_t check_ring(const DeviceState& d, uint64_t base, uint64_t bytes) {
    if (bytes > VRNIC_RING_MAX_BYTES)
        return VRNIC_CMD_STATUS_BAD_PARAM;
    if (base == 0 || base % VRNIC_RING_ALIGN || !d.mem.at(base, bytes))
        return VRNIC_CMD_STATUS_BAD_ADDR;
    return VRNIC_CMD_STATUS_OK;
}

// The object a handle command (in.handle) names, or nullptr with the status
// that refuses the command in st: BAD_PARAM for a set reserved field,
// BAD_HANDLE for a handle that names nothing.
template <class Table> auto* named_object(Table& t, const vrnic_cmd& in, uint32_t& st) {
    decltype(t.find(0)) obj = nullptr;
    if (in.handle.reserved)
        st = VRNIC_CMD_STATUS_BAD_PARAM;
    else if (!(obj = t.find(in.handle.handle)))
        st = VRNIC_CMD_STATUS_BAD_HANDLE;
    return obj;
}

inline uint32_t log2_floor(uint32_t v) {
    return 31 - __builtin_clz(v);
}

// Why an address vector is unusable (bad GID index, out-of-range field), or
// nullptr.
const char* bad_av(const DeviceState& d, const vrnic_av& av);

// Per-area handlers, dispatched from execute_command().
CmdResult cmd_query_device(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_query_port(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_query_clock(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_alloc_uctx(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_dealloc_uctx(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_create_pd(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_destroy_pd(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_reg_mr(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_dereg_mr(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_alloc_mr(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_alloc_mw(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_dealloc_mw(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_create_ah(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_destroy_ah(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_set_gid(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_create_eq(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_destroy_eq(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_create_cq(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_destroy_cq(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_resize_cq(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_create_qp(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_modify_qp(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_query_qp(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_destroy_qp(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_create_srq(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_modify_srq(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_destroy_srq(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_set_eth(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_attach_mcast(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_detach_mcast(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_alloc_xrcd(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);
CmdResult cmd_dealloc_xrcd(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out);

} // namespace vrnic
