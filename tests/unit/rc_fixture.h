// Two connected RC QPs in the kernel context, with their own CQs, ready for
// data-path tests.
#pragma once

#include "fake_driver.h"

namespace vrnic::test {

class RcPair : public ::testing::Test {
  protected:
    void SetUp() override {
        drv.bring_up();
        pd = drv.create_pd(0);
        a_cq = drv.create_cq(0, 8);
        b_cq = drv.create_cq(0, 8);
        a = drv.create_qp(0, pd, a_cq, a_cq, opts());
        b = drv.create_qp(0, pd, b_cq, b_cq, opts());
        drv.connect(a, b.qpn, rnr_retry(), 1);
        drv.connect(b, a.qpn, rnr_retry(), 1);
        drv.take_async_events();
    }
    virtual QpOpts opts() { return QpOpts{}; }
    virtual uint8_t rnr_retry() { return 7; }

    // A registered buffer of `len` bytes filled with pattern `seed`.
    MrInfo buffer(uint64_t len, uint32_t access, uint8_t seed = 0, uint64_t* gpa = nullptr) {
        uint64_t g = drv.alloc(len);
        if (seed)
            drv.fill(g, len, seed);
        if (gpa)
            *gpa = g;
        return drv.reg_mr(pd, g, len, access);
    }
    static vrnic_sge sge(const MrInfo& m, uint64_t off, uint32_t len) {
        return vrnic_sge{m.iova + off, len, m.lkey};
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
