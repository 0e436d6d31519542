// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// vrnic-model: the device model process. Parses the command line, maps
// each VM's guest RAM, binds its ivshmem socket and runs one port thread per
// VM until SIGTERM/SIGINT.
#include "cli.h"
#include "eth_switch.h"
#include "guest_memory.h"
#include "log.h"
#include "port.h"
#include "rdma_fabric.h"
#include "uplink.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <exception>
#include <iterator>
#include <sys/eventfd.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace vrnic;

int main(int argc, char** argv) {
    CliOptions opt;
    std::string err;
    switch (parse_cli(std::vector<std::string>(argv + 1, argv + argc), &opt, &err)) {
    case CliResult::help:
        fputs(cli_usage(), stdout);
        return 0;
    case CliResult::error:
        fprintf(stderr, "vrnic-model: %s\n(see vrnic-model --help)\n", err.c_str());
        return 2;
    case CliResult::ok:
        break;
    }
    g_log_level = static_cast<LogLevel>(std::clamp(2 + opt.verbosity, 0, 3));

    // Signals are taken synchronously by sigwait() below, in this thread only.
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGUSR1); // a port thread's "I stopped"
    sigaddset(&sigs, SIGUSR2); // log the poll loop's counters
    pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
    signal(SIGPIPE, SIG_IGN);

    // The fabric: one port per VM, each with its own guest RAM, MAC, device
    // and thread; they share the switch and reach each other's QPs.
    DeviceParams base;
    if (opt.bar2_size)
        base.bar2_size = opt.bar2_size;
    if (opt.mtu)
        base.eth_max_mtu = opt.mtu;
    if (opt.mac)
        std::copy(opt.mac->begin(), opt.mac->end(), base.mac);
    EthSwitch fabric(base.eth_max_mtu);
    static_assert(kMaxVms <= RdmaFabric::kMaxPorts);
    RdmaFabric rdma(static_cast<uint32_t>(opt.vms.size()));
    std::vector<std::unique_ptr<GuestMemory>> mems;
    std::vector<std::unique_ptr<Port>> ports;
    for (size_t i = 0; i < opt.vms.size(); i++) {
        const VmOption& vm = opt.vms[i];
        PortConfig cfg;
        std::unique_ptr<GuestMemory> mem;
        if (vm.guest_mem_path == kPeerRam) {
            cfg.peer_mem_size = vm.guest_mem_size;
        } else {
            mem = GuestMemory::open_file(vm.guest_mem_path, vm.guest_mem_size, &err);
            if (!mem) {
                LOG_ERR("guest memory %s: %s", vm.guest_mem_path.c_str(), err.c_str());
                return 1;
            }
        }
        cfg.socket_path = vm.socket_path;
        cfg.mem = mem.get();
        cfg.params = base;
        cfg.params.mac[5] = static_cast<uint8_t>(base.mac[5] + i);
        // The MAC, then 0001: a node GUID as unique as the MAC.
        cfg.params.node_guid = 1;
        for (int b = 0; b < 6; b++)
            cfg.params.node_guid |= uint64_t(cfg.params.mac[b]) << (56 - 8 * b);
        if (opt.idle_us >= 0)
            cfg.idle_ns = static_cast<uint64_t>(opt.idle_us) * 1000;
        if (opt.spin_us >= 0)
            cfg.spin_ns = static_cast<uint64_t>(opt.spin_us) * 1000;
        cfg.spin_ns = std::max(cfg.spin_ns, cfg.idle_ns); // never shorter than asked
        Mac mac;
        std::copy(std::begin(cfg.params.mac), std::end(cfg.params.mac), mac.begin());
        cfg.fabric = &fabric;
        cfg.fabric_port = fabric.add_port(mac);
        cfg.rdma = &rdma;
        cfg.uplink = !opt.uplink.empty();
        auto port = Port::create(cfg, &err);
        if (!port) {
            LOG_ERR("%s", err.c_str());
            return 1;
        }
        LOG_INFO("VM %zu: socket %s, guest RAM %s (%llu MiB), MAC %02x:%02x:%02x:%02x:%02x:%02x", i,
                 vm.socket_path.c_str(),
                 mem ? vm.guest_mem_path.c_str() : "of the QEMU that connects",
                 (unsigned long long)(vm.guest_mem_size >> 20), mac[0], mac[1], mac[2], mac[3],
                 mac[4], mac[5]);
        if (mem) // else the port maps its QEMU's RAM itself
            mems.push_back(std::move(mem));
        ports.push_back(std::move(port));
    }

    std::unique_ptr<Uplink> uplink;
    if (!opt.uplink.empty() &&
        !(uplink = Uplink::create(opt.uplink, &fabric, opt.uplink_faults, &err))) {
        LOG_ERR("%s", err.c_str());
        return 1;
    }

    std::atomic<bool> stop{false};
    UniqueFd stop_fd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    std::atomic<int> thread_rc{0};
    std::vector<std::thread> threads;
    auto start = [&](auto* runner) {
        threads.emplace_back([&, runner] {
            // Nothing may escape a thread: log it and stop the process cleanly.
            try {
                if (!runner->run(stop, stop_fd.get()))
                    thread_rc = 1;
            } catch (const std::exception& e) {
                LOG_ERR("fabric thread: %s", e.what());
                thread_rc = 1;
            }
            if (!stop.load())
                kill(getpid(), SIGUSR1);
        });
    };
    for (auto& port : ports)
        start(port.get());
    if (uplink)
        start(uplink.get());

    int sig = 0;
    while (sigwait(&sigs, &sig) == 0 && sig == SIGUSR2)
        for (auto& port : ports)
            port->request_stats();
    if (sig != SIGUSR1)
        LOG_INFO("%s: shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    stop = true;
    uint64_t one = 1;
    (void)!write(stop_fd.get(), &one, sizeof(one));
    for (auto& t : threads)
        t.join();
    const SwitchCounters c = fabric.counters();
    if (fabric.ports() > 1)
        LOG_INFO("switch: %llu forwarded, %llu flooded; dropped %llu spoofed, %llu bad length",
                 (unsigned long long)c.forwarded, (unsigned long long)c.flooded,
                 (unsigned long long)c.spoofed, (unsigned long long)c.bad_len);
    if (uplink) {
        const UplinkCounters u = uplink->counters();
        LOG_INFO("uplink: %llu peers (%llu refused), %llu frames in, %llu out; dropped %llu "
                 "for a full socket; %llu bad lengths",
                 (unsigned long long)u.connects, (unsigned long long)u.refused,
                 (unsigned long long)u.rx_frames, (unsigned long long)u.tx_frames,
                 (unsigned long long)u.tx_dropped, (unsigned long long)u.bad_length);
        if (opt.uplink_faults.any())
            LOG_INFO(
                "uplink faults: in %llu dropped, %llu duplicated, %llu reordered; out "
                "%llu, %llu, %llu",
                (unsigned long long)u.rx_faults.dropped, (unsigned long long)u.rx_faults.duplicated,
                (unsigned long long)u.rx_faults.reordered, (unsigned long long)u.tx_faults.dropped,
                (unsigned long long)u.tx_faults.duplicated,
                (unsigned long long)u.tx_faults.reordered);
    }
    ports.clear(); // removes the sockets
    uplink.reset();
    return thread_rc.load();
}
