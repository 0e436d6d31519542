// Two connected RC QPs in the kernel context, with their own CQs, ready for
// data-path tests.
#pragma once

#include "qp_pair_fixture.h"

namespace vrnic::test {

class RcPair : public QpPairBase {
  protected:
    void SetUp() override {
        bring_up_with_cqs();
        a = drv.create_qp(0, pd, a_cq, a_cq, opts());
        b = drv.create_qp(0, pd, b_cq, b_cq, opts());
        drv.connect(a, b.qpn, rnr_retry(), 1);
        drv.connect(b, a.qpn, rnr_retry(), 1);
        drv.take_async_events();
    }
    virtual QpOpts opts() { return QpOpts{}; }
    virtual uint8_t rnr_retry() { return 7; }
};

} // namespace vrnic::test
