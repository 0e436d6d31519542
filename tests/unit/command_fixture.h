// Short names for the command statuses and a fixture that issues raw
// commands, for the tests of command validation.
#pragma once

#include "fake_driver.h"

#include <algorithm>
#include <vector>

namespace vrnic::test {

inline constexpr uint32_t OK = VRNIC_CMD_STATUS_OK;
inline constexpr uint32_t BAD_OPCODE = VRNIC_CMD_STATUS_BAD_OPCODE;
inline constexpr uint32_t BAD_PARAM = VRNIC_CMD_STATUS_BAD_PARAM;
inline constexpr uint32_t NO_RESOURCE = VRNIC_CMD_STATUS_NO_RESOURCE;
inline constexpr uint32_t BAD_HANDLE = VRNIC_CMD_STATUS_BAD_HANDLE;
inline constexpr uint32_t BUSY = VRNIC_CMD_STATUS_BUSY;
inline constexpr uint32_t UNSUPPORTED = VRNIC_CMD_STATUS_UNSUPPORTED;
inline constexpr uint32_t BAD_ADDR = VRNIC_CMD_STATUS_BAD_ADDR;

// How many of the async events `ev` are of `type` for object `obj`.
inline uint32_t count_events(const std::vector<vrnic_eqe>& ev, uint8_t type, uint32_t obj) {
    return static_cast<uint32_t>(std::count_if(
        ev.begin(), ev.end(), [&](const vrnic_eqe& e) { return e.type == type && e.obj == obj; }));
}

class CommandTest : public ::testing::Test {
  protected:
    void SetUp() override { drv.bring_up(); }
    // A DESTROY_* / DEALLOC_* of handle h; the status.
    uint32_t destroy(uint16_t op, uint32_t h) { return drv.destroy(op, h); }
    // The object counts QUERY_DEVICE answers.
    vrnic_cmd_query_device_resp counts() {
        vrnic_cmd r;
        EXPECT_EQ(OK, drv.cmd(VRNIC_CMD_QUERY_DEVICE, nullptr, 0, &r));
        return r.query_device_resp;
    }

    FakeDriver drv;
};

} // namespace vrnic::test
