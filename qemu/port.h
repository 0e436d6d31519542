// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// One ivshmem socket: it serves one attached VM at a time with a fresh
// Device, on its own thread (the device's poll loop). When QEMU goes away the
// VM's device state is freed and the port waits for the next connection.
// Several ports (one per VM, each with its own guest RAM) run side by side,
// joined by the fabric's switch (eth_switch.h) and its RDMA
// (rdma_fabric.h).
#pragma once

#include "device_params.h"
#include "guest_memory.h"
#include "ivshmem_transport.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

struct epoll_event;

namespace vrnic {

class Device;
class EthSwitch;
class RdmaFabric;

struct PortConfig {
    std::string socket_path;
    // The guest RAM; none: the RAM of the QEMU that connects, found anew
    // for each connection (peer_ram.h), `peer_mem_size` bytes.
    const GuestMemory* mem = nullptr;
    uint64_t peer_mem_size = 0;
    // How long a QEMU that connected may take to map that RAM (with
    // -mem-prealloc it touches every page first).
    int peer_ram_timeout_ms = 60'000;
    DeviceParams params;
    int64_t client_id = 1; // the ivshmem peer ID QEMU gets (IVPosition)
    // The fabric this VM's Ethernet function joins, as port `fabric_port`
    // (its MAC is params.mac); none: transmitted frames are discarded.
    EthSwitch* fabric = nullptr;
    uint32_t fabric_port = 0;
    // The fabric its RDMA function joins, as the same port; none: RDMA
    // stays within the VM.
    RdmaFabric* rdma = nullptr;
    // Whether the fabric's switch has an uplink (uplink.h): RDMA to GIDs
    // no VM holds then goes there as RoCE v2 (wire.h).
    bool uplink = false;
    // Busy-poll this long without work before sleeping (section 8). Short:
    // the model shares the host's cores with the guest's vCPU threads, and
    // a model that spins long gets preempted and then waits a whole
    // scheduler slice (ms) before it sees the next doorbell. Not zero: a
    // reply often comes within microseconds, and catching it by polling
    // saves a sleep and a kick.
    uint64_t idle_ns = 2'000;
    // The window while nothing else wants this thread's core (it was not
    // preempted lately): spinning then costs no one anything, and saves the
    // guest a kick per sleep.
    uint64_t spin_ns = 50'000;
};

// Where the poll loop's time goes (for profiling; logged on SIGUSR2 and when
// a VM disconnects).
struct PollStats {
    uint64_t work_polls = 0;   // poll_once() calls that found work
    uint64_t sleeps = 0;       // idle windows that ended in epoll_pwait2()
    uint64_t kick_wakeups = 0; // ... woken by a guest kick (BAR0 Doorbell)
    uint64_t handbacks = 0;    // ... entered early: the kicker got its answer
    uint64_t work_ns = 0;      // time in polls that found work
    uint64_t sleep_ns = 0;     // time in epoll_pwait2()
    uint64_t since_ns = 0;     // start of this period
    void log(const char* why, uint64_t now) const;
};

class Port {
  public:
    // Binds the socket: it exists when this returns.
    static std::unique_ptr<Port> create(PortConfig cfg, std::string* err);

    // The thread body. Returns when `stop` is set (stop_fd becomes readable
    // then too); false on an unrecoverable error.
    bool run(const std::atomic<bool>& stop, int stop_fd);

    // Asks the poll loop to log its counters and start a new period.
    void request_stats() { stats_requested_.store(true, std::memory_order_relaxed); }

  private:
    explicit Port(PortConfig cfg, std::unique_ptr<IvshmemListener> l)
        : cfg_(std::move(cfg)), listener_(std::move(l)) {}
    struct AttachedVm;
    // Sets up a VM that connected on `conn`: its BAR2, device and link, on
    // the fabric. Null when it could not: with *fatal set if the port
    // cannot go on, else the port waits for the next connection.
    std::unique_ptr<AttachedVm> attach_vm(UniqueFd conn, const std::atomic<bool>& stop,
                                          bool* fatal);
    // Runs one VM until it disconnects or stop is set; false on error.
    bool serve(UniqueFd conn, const std::atomic<bool>& stop, int stop_fd);
    // Refuses pending connections; true if our own VM went away meanwhile.
    bool refuse_extra_clients(const IvshmemLink& link);
    // One poll of the device and of the frames the fabric has for it; true
    // when anything was done.
    bool poll_vm(Device& dev);
    // Logs the counters and starts a new period if request_stats() asked.
    void take_stats_request(PollStats& st, uint64_t now);
    // Handles the `n` events that ended a sleep at `woke`; true when the VM
    // went away.
    bool handle_wakeup(Device& dev, IvshmemLink& link, const epoll_event* evs, int n, PollStats& st,
                       uint64_t woke);

    PortConfig cfg_;
    std::unique_ptr<IvshmemListener> listener_;
    std::atomic<bool> stats_requested_{false};
};

} // namespace vrnic
