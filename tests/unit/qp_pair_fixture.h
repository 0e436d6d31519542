// What the two-QP data-path fixtures (RC, UC, UD) share: the device, a PD,
// QPs a and b with a CQ each, registered buffers and a run-and-poll step.
#pragma once

#include "fake_driver.h"

namespace vrnic::test {

class QpPairBase : public ::testing::Test {
  protected:
    // Brings the device up with the PD and the two CQs; the fixture makes a
    // and b.
    void bring_up_with_cqs() {
        drv.bring_up();
        pd = drv.create_pd(0);
        a_cq = drv.create_cq(0, 8);
        b_cq = drv.create_cq(0, 8);
    }

    // A registered buffer of `len` bytes filled with pattern `seed`.
    MrInfo buffer(uint64_t len, uint32_t access, uint8_t seed = 0, uint64_t* gpa = nullptr) {
        return drv.buffer(pd, len, access, seed, gpa);
    }
    vrnic_qp_state state(const QpInfo& q) {
        return static_cast<vrnic_qp_state>(drv.query_qp(q).qp_state);
    }
    // Runs the device and returns the CQEs of one CQ.
    std::vector<vrnic_cqe> step(CqInfo& cq) {
        drv.run();
        return drv.poll_cq(cq);
    }

    FakeDriver drv;
    uint32_t pd = 0;
    CqInfo a_cq, b_cq;
    QpInfo a, b;
};

} // namespace vrnic::test
