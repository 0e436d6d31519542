// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Memory regions and the page lists REG_MR reads from guest RAM
// (sections 10.8, 10.9).
#include "cmd_util.h"

#include <algorithm>
#include <memory>
#include <vector>

namespace vrnic {

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

// Gives a built MR its key and answers with it: one key names the MR
// and is its lkey and rkey.
CmdResult publish_mr(DeviceState& d, std::unique_ptr<Mr> mr, vrnic_cmd& out) {
    Mr* m = mr.get();
    m->key = d.obj->mrs.insert(std::move(mr));
    if (!m->key)
        CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "max_mr reached");
    m->pd->refs++;
    out.reg_mr_resp.mr = m->key;
    out.reg_mr_resp.lkey = m->key;
    out.reg_mr_resp.rkey = m->key;
    return cmd_ok();
}

} // namespace

CmdResult cmd_reg_mr(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out) {
    const vrnic_cmd_reg_mr& r = in.reg_mr;
    Pd* pd = d.obj->pds.find(r.pd);
    if (!pd)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "no such PD");
    if (r.access & ~uint32_t(VRNIC_ACCESS_ALL | VRNIC_ACCESS_MW_BIND))
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
    return publish_mr(d, std::move(mr), out);
}

// A fast-registration MR is named by the handle ALLOC_MR returned, whatever
// key byte REG_MR WQEs gave it since (10.26).
CmdResult cmd_dereg_mr(DeviceState& d, const vrnic_cmd& in, vrnic_cmd&) {
    if (in.handle.reserved)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "reserved field set");
    Mr* m = d.obj->mrs.find_any_low(in.handle.handle);
    if (!m || m->mw_type || (!m->fast && m->key != in.handle.handle))
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "bad MR handle");
    m->pd->refs--;
    d.obj->mrs.remove(m->key);
    return cmd_ok();
}

CmdResult cmd_alloc_mr(DeviceState& d, const vrnic_cmd& in, vrnic_cmd& out) {
    const vrnic_cmd_alloc_mr& r = in.alloc_mr;
    Pd* pd = d.obj->pds.find(r.pd);
    if (!pd)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_HANDLE, "no such PD");
    // Its REG_MR WQEs name guest physical pages: the kernel's alone.
    if (pd->uctx->handle != VRNIC_UCTX_KERNEL)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "fast-registration MR outside the kernel context");
    if (r.max_pages == 0 || r.max_pages > d.params.max_fast_reg_pages)
        CMD_FAIL(VRNIC_CMD_STATUS_BAD_PARAM, "max_pages out of range");
    auto mr = std::make_unique<Mr>();
    // The largest list is charged now: a REG_MR WQE then never allocates.
    if (!d.obj->mr_pages.charge(r.max_pages, &mr->pages_charge))
        CMD_FAIL(VRNIC_CMD_STATUS_NO_RESOURCE, "MR page-list budget exhausted");
    mr->pages.reserve(r.max_pages);
    mr->pd = pd;
    mr->fast = true;
    mr->valid = false;
    mr->max_pages = r.max_pages;
    return publish_mr(d, std::move(mr), out);
}

} // namespace vrnic
