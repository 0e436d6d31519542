// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "completion.h"

#include "events.h"
#include "qp_control.h"
#include "shared_word.h"

namespace vrnic {

void write_cqe_or_fail_qp(DeviceState& d, Qp& qp, Cq& cq, const vrnic_cqe& cqe, bool trigger) {
    if (cqe.status != VRNIC_WC_SUCCESS && cqe.status != VRNIC_WC_WR_FLUSH_ERR)
        add_in_reg(&d.regs()->completion_errors, 1);
    if (!post_cqe(d, cq, cqe, trigger) && qp.state != VRNIC_QPS_ERR)
        qp_enter_error(d, qp, VRNIC_EQE_QP_FATAL);
}

void complete_recv(DeviceState& d, Qp& qp, uint64_t wr_id, uint32_t idx, uint8_t status,
                   uint8_t opcode, uint32_t byte_len, uint32_t imm_be, bool with_imm,
                   uint32_t src_qp, bool solicited, uint32_t vendor, uint32_t invalidated_rkey) {
    vrnic_cqe c{};
    c.wr_id = wr_id;
    c.qpn = qp.qpn;
    c.opcode = opcode;
    c.status = status;
    c.wqe_idx = idx;
    c.vendor_err = vendor;
    if (status == VRNIC_WC_SUCCESS) {
        c.byte_len = byte_len;
        c.src_qp = src_qp;
        if (with_imm) {
            c.flags = VRNIC_CQE_F_WITH_IMM;
            c.imm_data = imm_be;
        } else if (invalidated_rkey) { // keys are never 0
            c.flags = VRNIC_CQE_F_WITH_INV;
            c.invalidated_rkey = invalidated_rkey;
        }
    }
    write_cqe_or_fail_qp(d, qp, *qp.recv_cq, c, solicited || status != VRNIC_WC_SUCCESS);
}

} // namespace vrnic
