// libFuzzer target vrnic_fuzz_roce: the RoCE v2 parser (qemu/roce_packet.h),
// the surface a peer on the fabric's uplink controls. The input is a frame
// as it arrives. Whatever parse() accepts must lie inside the frame, payload
// included, and what build() writes from the fields it read must parse to
// the same fields (the input itself may differ from it only where parse()
// ignores bits: UDP's checksum and reserved ones). An input whose first
// byte is odd is sealed first (roce::reseal(): IPv4 checksum and ICRC), so
// that mutations reach the checks behind the ICRC.
#include "roce_packet.h"

#include <cstdlib>
#include <cstring>
#include <vector>

using namespace vrnic::roce;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1 || size > 65536)
        return 0;
    const bool seal = data[0] & 1;
    // An exact copy, so that a read past the frame is one past the buffer.
    std::vector<uint8_t> frame(data + 1, data + size);
    data = frame.data();
    size = frame.size();
    if (seal)
        reseal(frame.data(), static_cast<uint32_t>(size));
    const auto len = static_cast<uint32_t>(size);
    Packet p;
    if (parse(data, len, &p) != Drop::none)
        return 0;
    if (p.payload < data || p.payload + p.payload_len > data + size)
        abort();
    std::vector<uint8_t> out(frame_bytes(p));
    if (out.size() > size || build(p, out.data()) != out.size())
        abort();
    Packet again;
    if (parse(out.data(), static_cast<uint32_t>(out.size()), &again) != Drop::none)
        abort();
    std::vector<uint8_t> twice(frame_bytes(again));
    if (build(again, twice.data()) != twice.size() || twice != out ||
        again.payload_len != p.payload_len || memcmp(again.payload, p.payload, p.payload_len) != 0)
        abort();
    return 0;
}
