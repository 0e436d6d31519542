// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "bar2.h"

#include <cstring>

namespace vrnic {

void Bar2::zero_page(uint32_t page) const {
    // Word stores: the guest may be reading the page concurrently.
    auto* w = reinterpret_cast<uint64_t*>(db_page(page));
    for (unsigned i = 0; i < VRNIC_PAGE_SIZE / 8; i++)
        store_relaxed(&w[i], uint64_t(0));
}

void Bar2::power_on(const DeviceParams& p) const {
    memset(base_, 0, size_);
    vrnic_regs* r = regs();
    r->signature = VRNIC_SIGNATURE;
    r->version_major = VRNIC_VERSION_MAJOR;
    r->version_minor = VRNIC_VERSION_MINOR;
    r->bar2_size = size_;
    r->db_page_first = VRNIC_KERNEL_DB_PAGE;
    r->db_page_count = p.db_page_count();
    r->db_page_size = VRNIC_DB_PAGE_SIZE;
    r->db_slots_per_page = VRNIC_DB_SLOTS_PER_PAGE;
    memcpy(r->mac, p.mac, sizeof(r->mac));
    r->node_guid = p.node_guid;
    r->features = 0;
    r->fw_version = kFwVersion;

    r->max_qp = p.max_qp;
    r->max_cq = p.max_cq;
    r->max_mr = p.max_mr;
    r->max_pd = p.max_pd;
    r->max_srq = p.max_srq;
    r->max_ah = p.max_ah;
    r->max_uctx = p.max_uctx();
    r->max_comp_eqs = p.max_comp_eqs();
    r->max_qp_wr = p.max_qp_wr;
    r->max_srq_wr = p.max_srq_wr;
    r->max_sge = p.max_sge;
    r->max_srq_sge = p.max_srq_sge;
    r->max_inline = p.max_inline;
    r->max_cqe = p.max_cqe;
    r->max_mr_size = p.max_mr_size;
    r->page_size_cap = p.page_size_cap;
    r->max_msg_sz = p.max_msg_sz;
    r->num_vectors = p.num_vectors;
    r->atomic_cap = p.atomic_cap;
    r->max_qp_rd_atom = p.max_rd_atom;
    r->max_qp_init_rd_atom = p.max_rd_atom;
    r->gid_tbl_len = p.gid_tbl_len;
    r->max_mcast_grp = p.max_mcast_grp;
    r->max_mcast_qp_attach = p.max_mcast_qp_attach;
    r->max_xrcd = p.max_xrcd;
    r->max_fast_reg_pages = p.max_fast_reg_pages;
    r->max_eqe = p.max_eqe;
    r->eth_max_mtu = p.eth_max_mtu;
    r->hw_rev = 1;

    r->port_state = VRNIC_PORT_ACTIVE;
    r->active_mtu = p.max_mtu;
    r->max_mtu = p.max_mtu;
    store_release(&r->device_status, uint32_t(VRNIC_DEV_STATUS_READY));
}

} // namespace vrnic
