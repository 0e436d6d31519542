// The devices of the tests that join two of them, on one fabric
// (cross_vm_test.cc, cross_vm_race_test.cc) or by their wires
// (wire_rc_test.cc): each up with its own GID, a PD and a CQ.
#pragma once

#include "fake_driver.h"
#include "rdma_fabric.h"
#include "shared_word.h"

namespace vrnic::test {

// The second device's port GID (the first's is kGid).
inline constexpr uint8_t kGid2[16] = {0xfe, 0x80, 0, 0,    0,    0,    0,    0,
                                      0x50, 0x54, 0, 0xff, 0xfe, 0x56, 0x52, 0x02};

struct TestDevice {
    // On `fabric`'s `port` when given one: it joins before its port is up.
    explicit TestDevice(const uint8_t* gid, RdmaFabric* fabric = nullptr, uint32_t port = 0) {
        if (fabric)
            drv.dev().join_fabric(fabric, port);
        drv.bring_up(4, 8, true, gid);
        pd = drv.create_pd(0);
        cq = drv.create_cq(0, 8);
    }
    MrInfo buffer(uint64_t len, uint32_t access, uint8_t seed = 0, uint64_t* gpa = nullptr) {
        return drv.buffer(pd, len, access, seed, gpa);
    }
    uint32_t counter(uint32_t vrnic_regs::*reg) { return load_acquire(&(drv.regs()->*reg)); }
    uint64_t counter64(__le64 vrnic_regs::*reg) { return load_acquire(&(drv.regs()->*reg)); }

    FakeDriver drv;
    uint32_t pd = 0;
    CqInfo cq;
};

} // namespace vrnic::test
