// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// One vrnic device: the state of one attached VM and the single-threaded
// step that drives it. The port thread calls poll_once() in a loop; unit
// tests call it directly, which makes them deterministic.
#pragma once

#include "device_state.h"
#include "eth_rings.h"
#include "fifo_lock.h"

#include <cstdint>
#include <functional>

namespace vrnic {

class Device {
  public:
    // Raises MSI-X vector v in the guest.
    using IrqFn = std::function<void(uint32_t vector)>;

    // Powers the device on: BAR2 (size p.bar2_size at bar2) gets its
    // identity, capabilities and READY (section 5.1).
    Device(const GuestMemory& mem, uint8_t* bar2, const DeviceParams& p, IrqFn irq,
           Clock clock = monotonic_ns);
    ~Device();
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;

    // Makes the device port `port` of `fabric`: other VMs reach it by its
    // GIDs until it is destroyed. Every call below then takes its lock.
    void join_fabric(RdmaFabric* fabric, uint32_t port);

    // One pass: reset/bring-up control, the command queue, every active QP,
    // Ethernet TX, CQ arm processing, then the interrupts of the pass. True
    // when anything was done.
    bool poll_once();

    // The idle handshake (section 8): on entering sleep, set NEED_WAKEUP
    // everywhere and fence; the caller then rescans with poll_once() before
    // blocking. On waking, clear it.
    void set_need_wakeup(bool on);

    // A kick woke the device thread; kicker_reached() then says when a
    // message has reached the context that kicked (DeviceState::Kicker).
    void note_kick_wakeup() { d_.kicker = {true, nullptr, false}; }
    bool kicker_reached() const { return d_.kicker.reached; }

    // When the next timed event is due (RNR retry, heartbeat), in d.now ns.
    uint64_t next_deadline() const;

    void set_frame_sink(FrameSink sink) { sink_ = std::move(sink); }
    // RoCE v2 packets to GIDs beyond the fabric go to `wire` (wire.h), and
    // those that arrive from it are the RDMA engine's, not the netdev's.
    void set_wire(FrameSink wire) { d_.wire = std::move(wire); }
    // A frame for the VM; `from_wire`: it came through the uplink. A VM's
    // own RDMA to another VM never takes the form of frames, so RoCE v2
    // frames from a VM (forged by its netdev) go to the netdev like any.
    bool deliver_frame(const uint8_t* frame, uint32_t len, bool from_wire = false);

    DeviceState& state() { return d_; }

    // After another VM's thread moved a message here (under the lock):
    // what it completed is published and signalled.
    void signal_completions();

  private:
    // The device's own lock in a fabric (none outside one).
    std::unique_lock<FifoLock> hold() const;
    bool check_control();
    void reset(uint32_t req);
    void publish_addresses(); // GIDs and multicast groups, to the fabric
    void latch_rings();
    void deliver_irqs();

    DeviceState d_;
    IrqFn irq_;
    FrameSink sink_;
};

} // namespace vrnic
