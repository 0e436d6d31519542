// Frames for the switch tests (eth_switch_test.cc, uplink_test.cc): one
// from `src` to `dst` whose bytes depend on `seq`, and what a port's inbox
// holds, taken out.
#pragma once

#include "eth_switch.h"

#include <cstdint>
#include <vector>

namespace vrnic::test {

using Frame = std::vector<uint8_t>;
using Frames = std::vector<Frame>;

inline Frame eth_frame(const Mac& dst, const Mac& src, uint32_t len, uint8_t seq) {
    Frame f(len);
    std::copy(dst.begin(), dst.end(), f.begin());
    std::copy(src.begin(), src.end(), f.begin() + 6);
    f[12] = 0x88; // local experimental EtherType
    f[13] = 0xb5;
    for (uint32_t i = 14; i < len; i++)
        f[i] = static_cast<uint8_t>(seq * 31 + i);
    return f;
}

inline Frames take_frames(EthSwitch& sw, uint32_t port) {
    Frames got;
    sw.inbox(port).drain(
        [&](const uint8_t* f, uint32_t n, uint32_t) { got.emplace_back(f, f + n); });
    return got;
}

} // namespace vrnic::test
