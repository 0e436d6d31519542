// libFuzzer target vrnic_fuzz_eth: the Ethernet function's rings. The ring
// configuration latched at DRIVER_OK (depths, bases, disabled rings, bad
// values), TX descriptors (addresses inside, across the end of and outside
// guest RAM, every length around the limits, flags) and tx_pi, RX buffers and
// rx_pi, frames of any length arriving, a frame sink that refuses, and resets
// in the middle of all that.
#include "fuzz_world.h"

#include <vector>

using namespace vrnic;
using namespace vrnic::fuzz;

namespace {

constexpr uint32_t kMaxFrame = 9000 + VRNIC_ETH_HDR_MAX;

struct Eth {
    RingSetup rings;
    uint32_t tx_pi = 0, rx_pi = 0;
    bool sink_accepts = true;
};

// Latches a ring configuration chosen by the input: mostly valid depths,
// sometimes a disabled ring or a value the device must refuse.
bool bring_up(World& w, Eth& e, Input& in) {
    const uint8_t m = in.u8();
    e.rings = fuzz_rings();
    e.rings.tx_log = VRNIC_ETH_LOG_DEPTH_MIN + in.below(9);
    e.rings.rx_log = VRNIC_ETH_LOG_DEPTH_MIN + in.below(9);
    if (m & 1)
        e.rings.tx_base = 0;
    if (m & 2)
        e.rings.rx_base = 0;
    if ((m & 0xf0) == 0x10)
        e.rings.tx_log = in.u8() % 16; // out of range
    if ((m & 0xf0) == 0x20)
        e.rings.rx_base += 8; // misaligned
    if ((m & 0xf0) == 0x30)
        e.rings.tx_base = kRam - 4096; // ring past the end of RAM
    e.tx_pi = e.rx_pi = 0;
    return w.bring_up(e.rings);
}

// A buffer address: in the data area, straddling the end of RAM, outside
// it, or raw.
uint64_t buffer(Input& in) {
    const uint8_t m = in.u8();
    switch (m & 3) {
    case 0:
        return kData + in.u16() * 16;
    case 1:
        return kRam - in.u16();
    case 2:
        return m & 4 ? 0 : kRam + in.u8();
    default:
        return in.u64();
    }
}

// A length around the limits (0, < header, the MTU edge) or anything.
uint32_t length(Input& in) {
    const uint8_t m = in.u8();
    switch (m & 3) {
    case 0:
        return VRNIC_ETH_MIN_FRAME + in.u8();
    case 1:
        return kMaxFrame - 2 + (m >> 2) % 4;
    case 2:
        return (m >> 2) % 16;
    default:
        return in.u32() % (2 * kMaxFrame);
    }
}

void write_desc(World& w, uint64_t ring, uint32_t log, uint32_t idx, Input& in) {
    vrnic_eth_desc d{};
    d.addr = buffer(in);
    d.len = length(in);
    const uint8_t f = in.u8();
    d.flags = f >= 0xf0 ? f : 0;
    // The ring may lie outside RAM when the device refused the configuration.
    if (uint8_t* p = w.host(ring_slot(ring, log, sizeof(d), idx), sizeof(d)))
        memcpy(p, &d, sizeof(d));
}

// A new producer index: the next ones, a whole ring and more, behind, raw.
uint32_t move_pi(Input& in, uint32_t pi, uint32_t ci, uint32_t log) {
    const uint8_t m = in.u8();
    switch (m & 3) {
    case 0:
    case 1:
        return pi + 1 + (m >> 2) % 4;
    case 2:
        return ci + in.below((1u << log) + 3);
    default:
        return in.u32();
    }
}

// Every descriptor the device consumed carries DONE.
void check_done(World& w, uint64_t ring, uint32_t log, uint32_t from, uint32_t to) {
    for (uint32_t i = from; i != to; i++) {
        vrnic_eth_desc d;
        memcpy(&d, w.host(ring_slot(ring, log, sizeof(d), i), sizeof(d)), sizeof(d));
        if (!(d.status & VRNIC_ETH_ST_DONE))
            abort();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static World w;
    static Eth e;
    static std::vector<uint8_t> frame(2 * kMaxFrame);
    w.dev().set_frame_sink([](const uint8_t* f, uint32_t len) {
        // Read every byte: ASan checks the model handed over a real frame.
        static volatile uint8_t sum;
        for (uint32_t i = 0; i < len; i++)
            sum = uint8_t(sum + f[i]);
        return e.sink_accepts;
    });
    Input in(data, size);
    bring_up(w, e, in);
    e.sink_accepts = true;
    while (!in.empty()) {
        vrnic_regs* r = w.regs();
        switch (in.below(8)) {
        case 0:
            if (e.rings.tx_base)
                write_desc(w, e.rings.tx_base, e.rings.tx_log, e.tx_pi + in.below(4), in);
            break;
        case 1: {
            const uint32_t ci = load_acquire(&r->tx_ci);
            e.tx_pi = move_pi(in, e.tx_pi, ci, e.rings.tx_log);
            store_release(&r->tx_pi, e.tx_pi);
            w.poll();
            if (e.rings.tx_base && !(r->device_status & VRNIC_DEV_STATUS_FATAL))
                check_done(w, e.rings.tx_base, e.rings.tx_log, ci, load_acquire(&r->tx_ci));
            break;
        }
        case 2:
            if (e.rings.rx_base)
                write_desc(w, e.rings.rx_base, e.rings.rx_log, e.rx_pi + in.below(4), in);
            break;
        case 3:
            e.rx_pi = move_pi(in, e.rx_pi, load_acquire(&r->rx_ci), e.rings.rx_log);
            store_release(&r->rx_pi, e.rx_pi);
            break;
        case 4:
        case 5: { // a frame arrives
            const uint32_t len = length(in);
            in.take(frame.data(), std::min<uint32_t>(len, 64));
            const uint32_t ci = load_acquire(&r->rx_ci);
            w.dev().deliver_frame(frame.data(), len);
            if (e.rings.rx_base && !(r->device_status & VRNIC_DEV_STATUS_FATAL))
                check_done(w, e.rings.rx_base, e.rings.rx_log, ci, load_acquire(&r->rx_ci));
            break;
        }
        case 6:
            e.sink_accepts = in.u8() & 1;
            break;
        default: // the driver resets the function and starts over
            bring_up(w, e, in);
            break;
        }
        w.poll();
    }
    w.settle();
    return 0;
}
