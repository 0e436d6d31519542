// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The capabilities this model advertises in the register page
// (device-interface.md section 20). The model enforces these values, never
// their copies in BAR2, which the guest can write.
#pragma once

#include <vrnic_dev.h>

#include <cstdint>

namespace vrnic {

// Responder resources of a QP: the wire responder keeps this many atomic
// results, so a requester may have them all outstanding (wire_state.h).
constexpr uint32_t kMaxRdAtom = 16;

struct DeviceParams {
    uint64_t bar2_size = VRNIC_BAR2_SIZE;
    uint32_t num_vectors = VRNIC_NUM_VECTORS;
    uint32_t max_qp = 16384;
    uint32_t max_cq = 16384;
    uint32_t max_mr = 65536;
    uint32_t max_pd = 16384;
    uint32_t max_ah = 16384;
    uint32_t max_srq = 16384;
    uint32_t max_srq_wr = 16384;
    uint32_t max_srq_sge = 16;
    uint32_t max_qp_wr = 32768;
    uint32_t max_sge = 16;
    uint32_t max_inline = 256;
    uint32_t max_cqe = 65536;
    uint32_t max_eqe = 65536;
    uint64_t max_mr_size = 1ull << 40;
    // Page-list entries of all MRs together (10.8); 0: kMrPagesPerRamPage
    // for each 4 KiB page of guest RAM (with_guest_ram()).
    uint64_t max_mr_pages = 0;
    uint64_t page_size_cap = 0x7ffff000ull;
    uint32_t max_msg_sz = 1u << 31;
    uint32_t max_rd_atom = kMaxRdAtom; // max_qp_rd_atom, max_qp_init_rd_atom
    uint32_t atomic_cap = VRNIC_ATOMIC_HCA;
    uint32_t max_mtu = VRNIC_MTU_4096; // path MTU limit, enum vrnic_mtu
    uint32_t gid_tbl_len = 16;
    // Multicast groups of UD QPs (10.23): groups, and QPs in one group.
    uint32_t max_mcast_grp = 64;
    uint32_t max_mcast_qp_attach = 8;
    uint32_t max_xrcd = 1024;           // XRC domains (10.25)
    uint32_t max_fast_reg_pages = 1024; // an ALLOC_MR's page-list limit (10.27)
    uint32_t eth_max_mtu = 9000;
    // The work of one engine pass (device-interface.md 14.5): payload bytes
    // of all QPs together, and of one QP per visit.
    uint64_t pass_bytes = 4u << 20;
    uint64_t qp_pass_bytes = 1u << 20;
    uint8_t mac[6] = {0x52, 0x54, 0x00, 0x56, 0x52, 0x01};
    uint64_t node_guid = 0x5254005652010001ull;
    // QPNs and memory keys (section 9.4): the secret is drawn from
    // getrandom(2) at every reset unless a seed is given (tests, fuzzing);
    // a freed QP or MR slot waits behind this many other allocations.
    uint64_t key_seed = 0;
    uint32_t handle_quarantine = 65536;

    uint32_t db_page_count() const {
        return static_cast<uint32_t>(bar2_size / VRNIC_PAGE_SIZE) - 1;
    }
    uint32_t max_uctx() const { return db_page_count() - 1; }
    uint32_t max_comp_eqs() const { return num_vectors - VRNIC_IRQ_COMP_BASE; }
    // The port's active MTU (always max_mtu here) in bytes: a UD datagram's
    // limit.
    uint32_t active_mtu_bytes() const { return 128u << max_mtu; }
};

// The default budget of MR page-list entries per 4 KiB page of guest RAM: a
// guest may register all its memory twice over with 4 KiB pages, and the
// model holds at most 16 bytes of lists per page of guest RAM.
constexpr uint64_t kMrPagesPerRamPage = 2;

// `p` with the values that follow from the size of guest RAM filled in.
inline DeviceParams with_guest_ram(DeviceParams p, uint64_t ram_bytes) {
    if (!p.max_mr_pages)
        p.max_mr_pages = kMrPagesPerRamPage * (ram_bytes / VRNIC_PAGE_SIZE);
    return p;
}

// Model version reported in fw_version.
constexpr uint64_t kFwVersion = (1ull << 32) | (0ull << 16) | 0;

} // namespace vrnic
