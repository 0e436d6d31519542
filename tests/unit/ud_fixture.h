// Two UD QPs in the kernel context with their own CQs, in RTS with one qkey,
// and an AH of their PD to the device's own GID, for UD data-path tests.
#pragma once

#include "completion.h"
#include "qp_pair_fixture.h"
#include "shared_word.h"

#include <cstring>

namespace vrnic::test {

class UdPair : public QpPairBase {
  protected:
    static constexpr uint32_t kQkey = 0x11220033;

    void SetUp() override {
        bring_up_with_cqs();
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
    // UD buffers are local: a buffer of `len` bytes filled with `seed`.
    MrInfo buffer(uint64_t len, uint8_t seed = 0, uint64_t* gpa = nullptr) {
        return QpPairBase::buffer(len, VRNIC_ACCESS_LOCAL_WRITE, seed, gpa);
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

    uint32_t ah = 0;
};

} // namespace vrnic::test
