// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// vrnic-model: the device model process. Parses the command line, maps
// guest RAM, binds the ivshmem socket and runs the port thread until
// SIGTERM/SIGINT.
#include "cli.h"
#include "guest_memory.h"
#include "log.h"
#include "port.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <exception>
#include <sys/eventfd.h>
#include <thread>
#include <unistd.h>

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
    sigaddset(&sigs, SIGUSR1); // the port thread's "I stopped"
    sigaddset(&sigs, SIGUSR2); // log the poll loop's counters
    pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
    signal(SIGPIPE, SIG_IGN);

    auto mem = GuestMemory::open_file(opt.guest_mem_path, opt.guest_mem_size, &err);
    if (!mem) {
        LOG_ERR("guest memory: %s", err.c_str());
        return 1;
    }
    PortConfig cfg;
    cfg.socket_path = opt.socket_path;
    cfg.mem = mem.get();
    if (opt.bar2_size)
        cfg.params.bar2_size = opt.bar2_size;
    if (opt.idle_us >= 0)
        cfg.idle_ns = static_cast<uint64_t>(opt.idle_us) * 1000;
    if (opt.spin_us >= 0)
        cfg.spin_ns = static_cast<uint64_t>(opt.spin_us) * 1000;
    cfg.spin_ns = std::max(cfg.spin_ns, cfg.idle_ns); // never shorter than asked
    auto port = Port::create(cfg, &err);
    if (!port) {
        LOG_ERR("%s", err.c_str());
        return 1;
    }
    LOG_INFO("guest RAM %s (%llu MiB)", opt.guest_mem_path.c_str(),
             (unsigned long long)(opt.guest_mem_size >> 20));

    std::atomic<bool> stop{false};
    UniqueFd stop_fd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    std::atomic<int> thread_rc{0};
    std::thread t([&] {
        // Nothing may escape a thread: log it and stop the process cleanly.
        try {
            if (!port->run(stop, stop_fd.get()))
                thread_rc = 1;
        } catch (const std::exception& e) {
            LOG_ERR("device thread: %s", e.what());
            thread_rc = 1;
        }
        if (!stop.load())
            kill(getpid(), SIGUSR1);
    });

    int sig = 0;
    while (sigwait(&sigs, &sig) == 0 && sig == SIGUSR2)
        port->request_stats();
    if (sig != SIGUSR1)
        LOG_INFO("%s: shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    stop = true;
    uint64_t one = 1;
    (void)!write(stop_fd.get(), &one, sizeof(one));
    t.join();
    port.reset(); // removes the socket
    return thread_rc.load();
}
