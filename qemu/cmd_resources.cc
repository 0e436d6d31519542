// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Commands for contexts, PDs, MRs, EQs, the GID table and queries
// (sections 10.2-10.9, 10.19-10.21).
#include "cmd_util.h"
#include "events.h"
#include "shared_word.h"

#include <vector>

namespace vrnic {

CmdResult cmd_query_device(DeviceState& d, const vrnic_cmd&, vrnic_cmd& out) {
    auto& r = out.query_device_resp;
    const Objects& o = *d.obj;
    r.num_uctx = o.uctxs.count();
    r.num_pd = o.pds.count();
    r.num_mr = o.mrs.count();
    r.num_cq = o.cqs.count();
    r.num_qp = o.qps.count();
    r.num_srq = 0;
    r.num_ah = o.ahs.count();
    r.num_eq = o.eqs.count();
    return cmd_ok();
}

CmdResult cmd_query_port(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out) {
    if (in.query_port.port_num != 1)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "port_num != 1");
    if (!all_zero(in.query_port.reserved))
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "reserved field");
    auto& r = out.query_port_resp;
    r.state = VRNIC_PORT_ACTIVE;
    r.phys_state = VRNIC_PORT_PHYS_LINK_UP;
    r.max_mtu = static_cast<uint8_t>(d.params.max_mtu);
    r.active_mtu = static_cast<uint8_t>(d.params.max_mtu);
    r.gid_tbl_len = d.params.gid_tbl_len;
    r.pkey_tbl_len = 1;
    r.active_speed = 32; // IB_SPEED_EDR
    r.active_width = 2;  // IB_WIDTH_4X
    r.max_msg_sz = d.params.max_msg_sz;
    return cmd_ok();
}

CmdResult cmd_alloc_uctx(DeviceState& d, const vrnic_cmd&, vrnic_cmd& out) {
    auto& owner = d.obj->page_owner;
    uint32_t page = 0;
    for (uint32_t p = VRNIC_FIRST_UCTX_DB_PAGE; p < owner.size(); p++)
        if (!owner[p]) {
            page = p;
            break;
        }
    if (!page)
        CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "no free doorbell page");
    auto u = std::make_unique<Uctx>();
    Uctx* up = u.get();
    up->db_page = page;
    up->handle = d.obj->uctxs.insert(std::move(u));
    if (!up->handle)
        CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "max_uctx reached");
    owner[page] = up;
    d.obj->live_pages.push_back(page);
    d.bar2.zero_page(page);
    d.bar2.set_page_status(page, page_status(d));
    out.alloc_uctx_resp.uctx = up->handle;
    out.alloc_uctx_resp.db_page = page;
    return cmd_ok();
}

CmdResult cmd_dealloc_uctx(DeviceState& d, const vrnic_cmd& in, vrnic_cmd&) {
    if (in.handle.reserved)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "reserved field");
    Uctx* u = d.obj->uctxs.find(in.handle.handle);
    if (!u)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "no such user context");
    if (u->refs)
        CMD_FAIL(VRNIC_CMD_STATUS_BUSY, "context still owns objects");
    d.bar2.zero_page(u->db_page);
    d.obj->page_owner[u->db_page] = nullptr;
    std::erase(d.obj->live_pages, u->db_page);
    d.obj->uctxs.remove(in.handle.handle);
    return cmd_ok();
}

CmdResult cmd_create_pd(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out) {
    if (in.create_pd.reserved)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "reserved field");
    Uctx* u = d.find_uctx(in.create_pd.uctx);
    if (!u)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "no such context");
    auto pd = std::make_unique<Pd>();
    Pd* p = pd.get();
    p->uctx = u;
    p->handle = d.obj->pds.insert(std::move(pd));
    if (!p->handle)
        CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "max_pd reached");
    u->refs++;
    out.create_pd_resp.pd = p->handle;
    return cmd_ok();
}

CmdResult cmd_destroy_pd(DeviceState& d, const vrnic_cmd& in, vrnic_cmd&) {
    if (in.handle.reserved)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "reserved field");
    Pd* p = d.obj->pds.find(in.handle.handle);
    if (!p)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "no such PD");
    if (p->refs)
        CMD_FAIL(VRNIC_CMD_STATUS_BUSY, "PD in use");
    p->uctx->refs--;
    d.obj->pds.remove(in.handle.handle);
    return cmd_ok();
}

namespace {

// Reads `n` little-endian u64 at gpa (8-byte aligned, inside guest RAM).
bool read_u64s(const GuestMemory& mem, uint64_t gpa, uint64_t n, uint64_t* dst) {
    return gpa % 8 == 0 && mem.read(gpa, dst, n * 8);
}

// Copies the page list described by the command (10.8).
uint32_t read_page_list(const DeviceState& d, const vrnic_cmd_reg_mr& r,
                        std::vector<uint64_t>* pages) {
    const uint64_t n = r.npages;
    pages->resize(n);
    if (r.pbl_level == VRNIC_PBL_DIRECT)
        return read_u64s(d.mem, r.pbl_addr, n, pages->data()) ? VRNIC_CMD_STATUS_OK
                                                              : VRNIC_CMD_STATUS_BAD_ADDR;
    const uint64_t leaves = (n + VRNIC_PBL_ENTRIES_PER_PAGE - 1) / VRNIC_PBL_ENTRIES_PER_PAGE;
    std::vector<uint64_t> leaf_addr(leaves);
    if (!read_u64s(d.mem, r.pbl_addr, leaves, leaf_addr.data()))
        return VRNIC_CMD_STATUS_BAD_ADDR;
    for (uint64_t k = 0; k < leaves; k++) {
        uint64_t first = k * VRNIC_PBL_ENTRIES_PER_PAGE;
        uint64_t cnt = std::min<uint64_t>(VRNIC_PBL_ENTRIES_PER_PAGE, n - first);
        if (leaf_addr[k] % VRNIC_PAGE_SIZE ||
            !read_u64s(d.mem, leaf_addr[k], cnt, pages->data() + first))
            return VRNIC_CMD_STATUS_BAD_ADDR;
    }
    return VRNIC_CMD_STATUS_OK;
}

} // namespace

CmdResult cmd_reg_mr(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out) {
    const vrnic_cmd_reg_mr& r = in.reg_mr;
    Pd* pd = d.obj->pds.find(r.pd);
    if (!pd)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "no such PD");
    if (r.access & ~uint32_t(VRNIC_ACCESS_ALL))
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "unknown access bits");
    if ((r.access & (VRNIC_ACCESS_REMOTE_WRITE | VRNIC_ACCESS_REMOTE_ATOMIC)) &&
        !(r.access & VRNIC_ACCESS_LOCAL_WRITE))
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "REMOTE_WRITE/ATOMIC without LOCAL_WRITE");
    if (r.flags & ~uint16_t(VRNIC_MR_F_PHYS))
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "unknown MR flags");

    auto mr = std::make_unique<Mr>();
    mr->pd = pd;
    mr->access = r.access;
    if (r.flags & VRNIC_MR_F_PHYS) {
        if (r.iova || r.length || r.npages || r.page_shift || r.pbl_addr || r.pbl_level)
            CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "physical MR with address fields");
        if (r.access & ~uint32_t(VRNIC_ACCESS_LOCAL_WRITE))
            CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "physical MR with remote access");
        if (pd->uctx->handle != VRNIC_UCTX_KERNEL)
            CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "physical MR outside the kernel context");
        mr->phys = true;
    } else {
        if (r.length == 0 || r.length > d.params.max_mr_size)
            CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "length out of range");
        if (r.iova + r.length < r.iova)
            CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "iova + length wraps");
        if (r.page_shift < VRNIC_MR_PAGE_SHIFT_MIN || r.page_shift > VRNIC_MR_PAGE_SHIFT_MAX ||
            !(d.params.page_size_cap & (1ull << r.page_shift)))
            CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "unsupported page_shift");
        const uint64_t psize = 1ull << r.page_shift;
        const uint64_t need = ((r.iova & (psize - 1)) + r.length + psize - 1) >> r.page_shift;
        if (r.npages != need)
            CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "npages does not match iova/length");
        if (r.pbl_level != VRNIC_PBL_DIRECT && r.pbl_level != VRNIC_PBL_INDIRECT)
            CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "bad pbl_level");
        // A list longer than guest RAM has pages can only repeat pages; the
        // bound keeps a hostile driver from making the model allocate GiBs.
        if (need > (d.mem.size() >> r.page_shift) + 1)
            CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "page list larger than guest RAM");
        // The sum of all lists is bounded too (10.8); charged before the
        // list is read, given back when the MR goes, however that happens.
        if (!d.obj->mr_pages.charge(need, &mr->pages_charge))
            CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "MR page-list budget exhausted");
        uint32_t st = read_page_list(d, r, &mr->pages);
        if (st != VRNIC_CMD_STATUS_OK)
            CMD_FAIL(st, "page list not inside guest RAM");
        for (uint64_t a : mr->pages)
            if (a & (psize - 1) || !d.mem.at(a, psize))
                CMD_FAIL(VRNIC_CMD_STATUS_BAD_ADDR, "MR page misaligned or outside guest RAM");
        mr->iova = r.iova;
        mr->length = r.length;
        mr->page_shift = r.page_shift;
    }
    Mr* m = mr.get();
    m->key = d.obj->mrs.insert(std::move(mr));
    if (!m->key)
        CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "max_mr reached");
    pd->refs++;
    out.reg_mr_resp.mr = m->key;
    out.reg_mr_resp.lkey = m->key;
    out.reg_mr_resp.rkey = m->key;
    return cmd_ok();
}

CmdResult cmd_dereg_mr(DeviceState& d, const vrnic_cmd& in, vrnic_cmd&) {
    if (in.handle.reserved)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "reserved field");
    Mr* m = d.obj->mrs.find(in.handle.handle);
    if (!m)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "no such MR");
    m->pd->refs--;
    d.obj->mrs.remove(in.handle.handle);
    return cmd_ok();
}

CmdResult cmd_set_gid(DeviceState& d, const vrnic_cmd& in, vrnic_cmd&) {
    const vrnic_cmd_set_gid& g = in.set_gid;
    if (g.index >= d.params.gid_tbl_len)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "GID index out of range");
    if (g.flags & ~uint8_t(VRNIC_GID_F_VALID) || g.reserved)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "unknown flags or reserved field");
    GidEntry& e = d.obj->gids[g.index];
    if (!(g.flags & VRNIC_GID_F_VALID)) {
        if (g.gid_type || g.vlan_id || !all_zero(g.gid) || !all_zero(g.mac))
            CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "delete with non-zero fields");
        e = GidEntry{};
        return cmd_ok();
    }
    if (g.gid_type > VRNIC_GID_TYPE_ROCE_V2)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "unknown GID type");
    if (g.gid_type != VRNIC_GID_TYPE_ROCE_V2)
        CMD_FAIL(VRNIC_CMD_STATUS_UNSUPPORTED, "only RoCE v2 GIDs");
    if (g.vlan_id != VRNIC_VLAN_NONE && g.vlan_id > 4095)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "bad vlan_id");
    e.valid = true;
    memcpy(e.gid, g.gid, sizeof(e.gid));
    return cmd_ok();
}

CmdResult cmd_create_eq(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out) {
    const vrnic_cmd_create_eq& c = in.create_eq;
    uint32_t max_log = std::min<uint32_t>(VRNIC_EQ_LOG_DEPTH_MAX, log2_floor(d.params.max_eqe));
    if (c.log_depth < VRNIC_EQ_LOG_DEPTH_MIN || c.log_depth > max_log)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "EQ log_depth out of range");
    if (c.vector < VRNIC_IRQ_COMP_BASE || c.vector >= d.params.num_vectors)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "EQ vector out of range");
    if (uint32_t st = check_ring(d, c.ring_addr, uint64_t(VRNIC_EQE_SIZE) << c.log_depth))
        CMD_FAIL(st, "EQ ring");
    Uctx& k = d.obj->kernel_uctx;
    uint32_t slot = k.alloc_slot();
    if (!slot)
        CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "kernel doorbell page full");
    auto eq = std::make_unique<Eq>();
    Eq* e = eq.get();
    e->ring = c.ring_addr;
    e->log_depth = c.log_depth;
    e->vector = c.vector;
    e->db_slot = slot;
    e->eqn = d.obj->eqs.insert(std::move(eq));
    if (!e->eqn) {
        k.free_slot(slot);
        CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "max_comp_eqs reached");
    }
    store_release(&d.bar2.slot(VRNIC_KERNEL_DB_PAGE, slot)->raw, uint64_t(0));
    out.create_eq_resp.eqn = e->eqn;
    out.create_eq_resp.db_slot = slot;
    return cmd_ok();
}

CmdResult cmd_destroy_eq(DeviceState& d, const vrnic_cmd& in, vrnic_cmd&) {
    if (in.handle.reserved)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "reserved field");
    Eq* e = d.obj->eqs.find(in.handle.handle);
    if (!e)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "no such EQ");
    if (e->refs)
        CMD_FAIL(VRNIC_CMD_STATUS_BUSY, "EQ in use by a CQ");
    d.obj->kernel_uctx.free_slot(e->db_slot);
    store_release(&d.bar2.slot(VRNIC_KERNEL_DB_PAGE, e->db_slot)->raw, uint64_t(0));
    d.obj->eqs.remove(in.handle.handle);
    return cmd_ok();
}

} // namespace vrnic
