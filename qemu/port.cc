// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "port.h"

#include "device.h"
#include "eth_switch.h"
#include "idle_window.h"
#include "log.h"
#include "peer_ram.h"
#include "shared_region.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <vector>

namespace vrnic {

long IdleWindow::thread_preemptions() {
    rusage ru{}; // getrusage fails only for a bad `who` or pointer
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_nivcsw;
}

void PollStats::log(const char* why, uint64_t now) const {
    const uint64_t total = now - since_ns;
    auto pct = [total](uint64_t ns) { return total ? 100.0 * double(ns) / double(total) : 0.0; };
    LOG_INFO("poll loop (%s): %.2f s, %llu polls with work, %llu sleeps (%llu ended by a kick, "
             "%llu entered at once for the kicker); working %.3f s (%.1f%%), polling idle %.3f s "
             "(%.1f%%), asleep %.3f s (%.1f%%)",
             why, double(total) / 1e9, (unsigned long long)work_polls, (unsigned long long)sleeps,
             (unsigned long long)kick_wakeups, (unsigned long long)handbacks, double(work_ns) / 1e9,
             pct(work_ns), double(total - work_ns - sleep_ns) / 1e9,
             pct(total - work_ns - sleep_ns), double(sleep_ns) / 1e9, pct(sleep_ns));
}

std::unique_ptr<Port> Port::create(PortConfig cfg, std::string* err) {
    auto l = IvshmemListener::listen(cfg.socket_path, err);
    if (!l)
        return nullptr;
    return std::unique_ptr<Port>(new Port(std::move(cfg), std::move(l)));
}

bool Port::run(const std::atomic<bool>& stop, int stop_fd) {
    LOG_INFO("listening on %s", listener_->path().c_str());
    while (!stop.load()) {
        pollfd p[2] = {{listener_->fd(), POLLIN, 0}, {stop_fd, POLLIN, 0}};
        if (poll(p, 2, -1) < 0 && errno != EINTR) {
            LOG_ERR("poll: %s", strerror(errno));
            return false;
        }
        if (stop.load())
            break;
        UniqueFd conn = listener_->accept();
        if (conn && !serve(std::move(conn), stop, stop_fd))
            return false;
    }
    return true;
}

bool Port::refuse_extra_clients(const IvshmemLink& link) {
    for (;;) {
        // A QEMU that restarts closes the old connection before it opens the
        // new one: if ours is gone, the pending one is the VM's successor.
        if (link.peer_closed())
            return true;
        UniqueFd extra = listener_->accept();
        if (!extra)
            return false;
        LOG_WARN("refusing a second QEMU on %s: one VM per socket", listener_->path().c_str());
        ivshmem_refuse(std::move(extra));
    }
}

namespace {

// What woke an epoll_pwait2(): the tag of each fd in the set.
enum : uint32_t { kConn, kListener, kStop, kInbox, kFirstKick };

// epoll, registered once: a wake-up then costs less than ppoll's per-call
// walk over every fd. Invalid on error.
// inbox_fd: the fabric's frames for this VM, or -1.
UniqueFd watch_vm(const IvshmemLink& link, int listener_fd, int stop_fd, int inbox_fd) {
    UniqueFd ep(epoll_create1(EPOLL_CLOEXEC));
    bool watched = ep.valid();
    auto watch = [&](int fd, uint32_t tag) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u32 = tag;
        watched = watched && epoll_ctl(ep.get(), EPOLL_CTL_ADD, fd, &ev) == 0;
    };
    watch(link.conn_fd(), kConn);
    watch(listener_fd, kListener);
    watch(stop_fd, kStop);
    if (inbox_fd >= 0)
        watch(inbox_fd, kInbox);
    for (uint32_t v = 0; v < link.vectors(); v++)
        watch(link.doorbell_fd(v), kFirstKick + v);
    return watched ? std::move(ep) : UniqueFd();
}

// After `idle` ns without work: whether to go on busy-polling rather than
// sleep. The window is re-read only once the current one is over.
bool keep_polling(IdleWindow& window, uint64_t now, uint64_t idle) {
    if (idle < window.ns()) {
        __builtin_ia32_pause();
        return true;
    }
    window.update(now);
    return idle < window.ns(); // contention is gone: keep polling
}

// How long a sleep at `now` may last: until the device's next deadline, at
// most 100 ms (section 8); RNR timers need finer than 1 ms.
timespec sleep_limit(uint64_t deadline, uint64_t now) {
    uint64_t wait_ns = deadline > now ? deadline - now : 0;
    wait_ns = std::min<uint64_t>(wait_ns, 100'000'000);
    return {static_cast<time_t>(wait_ns / 1'000'000'000),
            static_cast<long>(wait_ns % 1'000'000'000)};
}

// The VM went away: its last counters; leaving serve() frees its state.
void disconnect(const PollStats& st, const std::string& path) {
    st.log("VM disconnected", monotonic_ns());
    LOG_INFO("VM disconnected: freeing its device state (%s)", path.c_str());
}

} // namespace

bool Port::poll_vm(Device& dev) {
    bool progress = dev.poll_once();
    if (cfg_.fabric) {
        FrameInbox& in = cfg_.fabric->inbox(cfg_.fabric_port);
        if (in.pending())
            progress |= in.drain([&](const uint8_t* f, uint32_t n, uint32_t from) {
                dev.deliver_frame(f, n, cfg_.fabric->is_uplink(from));
            }) != 0;
    }
    return progress;
}

void Port::take_stats_request(PollStats& st, uint64_t now) {
    // A plain load first: this runs on every idle poll.
    if (stats_requested_.load(std::memory_order_relaxed) &&
        stats_requested_.exchange(false, std::memory_order_relaxed)) {
        st.log("SIGUSR2", now);
        st = PollStats{};
        st.since_ns = now;
    }
}

bool Port::handle_wakeup(Device& dev, IvshmemLink& link, const epoll_event* evs, int n,
                         PollStats& st, uint64_t woke) {
    // The work a kick announced first; draining the eventfds and clearing
    // NEED_WAKEUP (system calls and page stores) after it. Kicks meanwhile
    // are harmless: the loop polls again before any sleep.
    bool kicked = false, gone = false;
    for (int i = 0; i < n && !kicked; i++)
        kicked = evs[i].data.u32 >= kFirstKick;
    if (kicked) {
        dev.note_kick_wakeup();
        if (poll_vm(dev)) {
            st.work_polls++;
            st.work_ns += monotonic_ns() - woke;
        }
    }
    for (int i = 0; i < n; i++) {
        const uint32_t tag = evs[i].data.u32;
        if (tag >= kFirstKick) {
            link.drain_doorbell(tag - kFirstKick);
        } else if (tag == kInbox) {
            cfg_.fabric->inbox(cfg_.fabric_port).clear_wake(); // the loop drains it
        } else if (tag == kConn) {
            gone = gone || link.peer_closed();
        } else if (tag == kListener) {
            gone = gone || refuse_extra_clients(link);
        }
    }
    st.kick_wakeups += kicked;
    return gone;
}

// One connected VM: its BAR2, its link to QEMU and its device, on the fabric
// until destroyed. Members go in reverse order: the VM leaves the switch
// before its device is freed, the device before the link its interrupts
// use, and the guest RAM of this connection (if it has its own) last.
struct Port::AttachedVm {
    std::unique_ptr<GuestMemory> own_mem;
    std::unique_ptr<SharedRegion> bar2;
    std::unique_ptr<IvshmemLink> link;
    std::unique_ptr<Device> dev;
    FrameInbox* inbox = nullptr;
    EthSwitch* fabric = nullptr;
    uint32_t fabric_port = 0;
    ~AttachedVm() {
        if (fabric) {
            inbox->close();
            fabric->port_down(fabric_port);
        }
    }
};

std::unique_ptr<Port::AttachedVm> Port::attach_vm(UniqueFd conn, const std::atomic<bool>& stop,
                                                  bool* fatal) {
    std::string err;
    auto vm = std::make_unique<AttachedVm>();
    // BAR2 is initialised (READY) before QEMU learns its fd.
    vm->bar2 = SharedRegion::create("vrnic-bar2", cfg_.params.bar2_size, &err);
    if (!vm->bar2) {
        LOG_ERR("%s", err.c_str());
        *fatal = true;
        return nullptr;
    }
    const GuestMemory* mem = cfg_.mem;
    if (!mem) {
        // QEMU connects before it allocates guest RAM: wait for it.
        UniqueFd fd = wait_peer_ram(conn.get(), cfg_.peer_mem_size, vm->bar2->fd(), stop,
                                    cfg_.peer_ram_timeout_ms, &err);
        if (fd)
            vm->own_mem = GuestMemory::map_fd(fd.get(), cfg_.peer_mem_size, &err);
        if (!vm->own_mem) {
            LOG_WARN("guest RAM of the VM on %s: %s; refusing it", cfg_.socket_path.c_str(),
                     err.c_str());
            ivshmem_refuse(std::move(conn));
            return nullptr;
        }
        mem = vm->own_mem.get();
    }
    AttachedVm* v = vm.get();
    vm->dev = std::make_unique<Device>(*mem, vm->bar2->data(), cfg_.params,
                                       [v](uint32_t vec) { v->link->raise_irq(vec); });
    vm->link = IvshmemLink::establish(std::move(conn), vm->bar2->fd(), cfg_.params.num_vectors,
                                      cfg_.client_id, &err);
    if (!vm->link) {
        LOG_WARN("%s; waiting for the next connection", err.c_str());
        return nullptr;
    }
    LOG_INFO("VM connected on %s (peer %lld, %u vectors, BAR2 %llu KiB)", cfg_.socket_path.c_str(),
             (long long)cfg_.client_id, cfg_.params.num_vectors,
             (unsigned long long)(cfg_.params.bar2_size >> 10));
    // Other VMs reach this one's QPs from now on, until the device is freed.
    if (cfg_.rdma)
        vm->dev->join_fabric(cfg_.rdma, cfg_.fabric_port);
    // The fabric delivers to this VM from now on, until it leaves.
    if (cfg_.fabric) {
        vm->fabric = cfg_.fabric;
        vm->fabric_port = cfg_.fabric_port;
        vm->inbox = &cfg_.fabric->inbox(cfg_.fabric_port);
        vm->dev->set_frame_sink([this](const uint8_t* f, uint32_t n) {
            return cfg_.fabric->forward(cfg_.fabric_port, f, n);
        });
        if (cfg_.uplink)
            vm->dev->set_wire([this](const uint8_t* f, uint32_t n) {
                return cfg_.fabric->forward(cfg_.fabric_port, f, n);
            });
        vm->inbox->open();
    }
    return vm;
}

bool Port::serve(UniqueFd conn, const std::atomic<bool>& stop, int stop_fd) {
    bool fatal = false;
    std::unique_ptr<AttachedVm> vm = attach_vm(std::move(conn), stop, &fatal);
    if (!vm)
        return !fatal;
    Device& dev = *vm->dev;
    UniqueFd ep =
        watch_vm(*vm->link, listener_->fd(), stop_fd, vm->inbox ? vm->inbox->wake_fd() : -1);
    if (!ep) {
        LOG_ERR("epoll: %s", strerror(errno));
        return false;
    }

    uint64_t last_work = monotonic_ns();
    PollStats st;
    st.since_ns = last_work;
    IdleWindow window(cfg_.idle_ns, cfg_.spin_ns);
    uint64_t mark = last_work; // the last clock reading: the next poll starts about then
    while (!stop.load(std::memory_order_relaxed)) {
        uint64_t now;
        if (poll_vm(dev)) {
            st.work_polls++;
            last_work = now = monotonic_ns();
            st.work_ns += now - mark;
            mark = now;
            // Woken on the kicker's CPU under contention: once it has its
            // answer, sleep at once so that it can run and see it.
            if (!dev.kicker_reached() || !window.contended())
                continue;
            st.handbacks++;
        } else {
            now = mark = monotonic_ns();
            take_stats_request(st, now);
            if (keep_polling(window, now, now - last_work))
                continue;
        }
        // Idle: announce the sleep, then rescan once (section 8).
        dev.set_need_wakeup(true);
        if (poll_vm(dev)) {
            dev.set_need_wakeup(false);
            last_work = mark = monotonic_ns();
            st.work_ns += last_work - now;
            continue;
        }
        const timespec ts = sleep_limit(dev.next_deadline(), now);
        st.sleeps++;
        epoll_event evs[kFirstKick + VRNIC_MAX_VECTORS];
        int n = epoll_pwait2(ep.get(), evs, std::size(evs), &ts, nullptr);
        if (n < 0 && errno != EINTR) {
            LOG_ERR("epoll: %s", strerror(errno));
            return false;
        }
        const uint64_t woke = monotonic_ns();
        st.sleep_ns += woke - now;
        if (handle_wakeup(dev, *vm->link, evs, n, st, woke)) {
            disconnect(st, cfg_.socket_path);
            break;
        }
        dev.set_need_wakeup(false);
        last_work = woke;
        mark = monotonic_ns();
    }
    return true;
}

} // namespace vrnic
