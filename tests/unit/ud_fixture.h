// Two UD QPs in the kernel context with their own CQs, in RTS with one qkey,
// and an AH of their PD to the device's own GID, for UD data-path tests.
#pragma once

#include "completion.h"
#include "fake_driver.h"
#include "shared_word.h"

#include <cstring>

namespace vrnic::test {

class UdPair : public ::testing::Test {
  protected:
    static constexpr uint32_t kQkey = 0x11220033;

    void SetUp() override {
        drv.bring_up();
        pd = drv.create_pd(0);
        a_cq = drv.create_cq(0, 8);
        b_cq = drv.create_cq(0, 8);
        a = make_qp(0, pd, a_cq);
        b = make_qp(0, pd, b_cq);
        ah = drv.create_ah(pd, av_to(kGid, 0));
        drv.take_async_events();
    }

    QpInfo make_qp(uint32_t uctx, uint32_t qp_pd, const CqInfo& cq, uint32_t qkey = kQkey) {
        QpOpts o;
        o.qp_type = VRNIC_QPT_UD;
        QpInfo q = drv.create_qp(uctx, qp_pd, cq, cq, o);
        drv.activate(q, Path{.qp_type = VRNIC_QPT_UD, .qkey = qkey});
        return q;
    }
    static vrnic_av av_to(const uint8_t (&dgid)[16], uint8_t sgid_index) {
        vrnic_av av{};
        memcpy(av.dgid, dgid, 16);
        av.sgid_index = sgid_index;
        av.hop_limit = 64;
        av.traffic_class = 0x28;
        av.flow_label = 0x12345;
        av.sl = 5;
        av.vlan_id = VRNIC_VLAN_NONE;
        return av;
    }
    MrInfo buffer(uint64_t len, uint8_t seed = 0, uint64_t* gpa = nullptr) {
        uint64_t g = drv.alloc(len);
        if (seed)
            drv.fill(g, len, seed);
        if (gpa)
            *gpa = g;
        return drv.reg_mr(pd, g, len, VRNIC_ACCESS_LOCAL_WRITE);
    }
    static vrnic_sge sge(const MrInfo& m, uint64_t off, uint32_t len) {
        return vrnic_sge{m.iova + off, len, m.lkey};
    }
    vrnic_qp_state state(const QpInfo& q) {
        return static_cast<vrnic_qp_state>(drv.query_qp(q).qp_state);
    }
    // Sends len bytes of pattern `seed` from a to b with `qkey` and runs the
    // device; returns a's completions.
    std::vector<vrnic_cqe> send(uint32_t len, uint32_t qkey = kQkey, uint8_t seed = 0x5a) {
        MrInfo src = buffer(len ? len : 1, seed);
        drv.post_send(a, ud_send(ah, b.qpn, qkey, {sge(src, 0, len)}));
        drv.run();
        return drv.poll_cq(a_cq);
    }
    uint32_t counter(uint32_t vrnic_regs::*reg) { return load_acquire(&(drv.regs()->*reg)); }

    FakeDriver drv;
    uint32_t pd = 0, ah = 0;
    CqInfo a_cq, b_cq;
    QpInfo a, b;
};

} // namespace vrnic::test
