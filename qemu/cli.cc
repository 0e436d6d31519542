// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "cli.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace vrnic {

const char* cli_usage() {
    return "usage: vrnic-model --socket PATH --guest-mem FILE --guest-mem-size BYTES\n"
           "                   [--vm PATH,FILE,BYTES]... [--mtu N] [--uplink PATH] [--mac MAC]\n"
           "                   [--uplink-faults drop=P,dup=P,reorder=P,seed=N]\n"
           "                   [--bar2-size BYTES] [--idle-us N] [--spin-us N] [-v]...\n"
           "       vrnic-model --vm PATH,FILE,BYTES [--vm PATH,FILE,BYTES]... [options]\n"
           "\n"
           "The vrnic device model: serves QEMU's ivshmem-doorbell device on PATH\n"
           "(-chardev socket,path=PATH -device ivshmem-doorbell,vectors=8) and\n"
           "implements an RDMA NIC over the guest RAM in FILE (the mem-path of a\n"
           "memory-backend-file with share=on, machine pc, at most 2 GiB) or, with\n"
           "FILE '-', in the RAM of the QEMU that connects: a memory-backend-memfd\n"
           "with share=on (libvirt's memfd <memoryBacking>), the one shared\n"
           "mapping of BYTES in QEMU, its descriptor taken with pidfd_getfd. With\n"
           "several VMs, each is a port of one fabric: its own device, MAC\n"
           "52:54:00:56:52:0N (N = 1, 2, ... in order; --mac moves the start) and\n"
           "thread, the Ethernet functions joined by a learning switch.\n"
           "\n"
           "With --uplink, the switch has one more port for stations that are not\n"
           "VMs of this model: a peer on the UNIX socket PATH that speaks QEMU's\n"
           "stream netdev protocol, such as another QEMU's NIC on\n"
           "-netdev stream,id=n,server=off,addr.type=unix,addr.path=PATH.\n"
           "\n"
           "  --socket PATH          UNIX socket to listen on (replaced if stale)\n"
           "  --guest-mem FILE       the guest RAM file, or - for the connecting QEMU's\n"
           "  --guest-mem-size BYTES guest RAM size (suffix K, M or G allowed)\n"
           "  --vm PATH,FILE,BYTES   one more VM: its socket, RAM file (or -) and RAM size\n"
           "  --mtu N                Ethernet MTU limit of every port, 68..9000\n"
           "                         (default 9000)\n"
           "  --uplink PATH          the switch's uplink: a UNIX socket to listen on\n"
           "  --uplink-faults SPEC   for tests: the uplink drops, duplicates and reorders\n"
           "                         P percent (0..50) of the frames each way, from the\n"
           "                         seed N (drop=3,dup=2,reorder=5,seed=7; any subset)\n"
           "  --mac MAC              the first VM's MAC (xx:xx:xx:xx:xx:xx, unicast); the\n"
           "                         others' add 1, 2, ... to its last byte\n"
           "  --bar2-size BYTES      BAR2 size, a power of two (default: interface default)\n"
           "  --idle-us N            poll this long without work before sleeping\n"
           "                         (the guest must then kick; default 2)\n"
           "  --spin-us N            while no other thread waits for this one's CPU\n"
           "                         (no involuntary context switch), poll this long\n"
           "                         instead (default 50, at least --idle-us)\n"
           "  -v, --verbose          more logging (repeat for debug)\n"
           "  -q, --quiet            errors and warnings only\n"
           "  -h, --help             this text\n";
}

// "xx:xx:xx:xx:xx:xx", hex digits in either case.
static bool parse_mac(const std::string& s, std::array<uint8_t, 6>* out) {
    if (s.size() != 17)
        return false;
    for (size_t i = 0; i < 6; i++) {
        const std::string byte = s.substr(3 * i, 2);
        if ((i < 5 && s[3 * i + 2] != ':') || !isxdigit(static_cast<unsigned char>(byte[0])) ||
            !isxdigit(static_cast<unsigned char>(byte[1])))
            return false;
        (*out)[i] = static_cast<uint8_t>(strtoul(byte.c_str(), nullptr, 16));
    }
    return true;
}

bool parse_size(const std::string& s, uint64_t* out) {
    if (s.empty() || s[0] == '-' || s[0] == '+' || s[0] == ' ')
        return false;
    errno = 0;
    char* end = nullptr;
    unsigned long long v = strtoull(s.c_str(), &end, 0);
    if (errno || end == s.c_str())
        return false;
    unsigned shift = 0;
    if (*end) {
        switch (*end) {
        case 'k':
        case 'K':
            shift = 10;
            break;
        case 'm':
        case 'M':
            shift = 20;
            break;
        case 'g':
        case 'G':
            shift = 30;
            break;
        default:
            return false;
        }
        if (end[1])
            return false;
    }
    if (shift && v > (~0ull >> shift))
        return false;
    *out = static_cast<uint64_t>(v) << shift;
    return true;
}

CliResult parse_cli(const std::vector<std::string>& args, CliOptions* o, std::string* err) {
    for (size_t i = 0; i < args.size(); i++) {
        const std::string& a = args[i];
        auto value = [&](std::string* v) {
            if (i + 1 >= args.size()) {
                *err = a + " needs a value";
                return false;
            }
            *v = args[++i];
            return true;
        };
        auto size_value = [&](uint64_t* v) {
            std::string s;
            if (!value(&s))
                return false;
            if (!parse_size(s, v)) {
                *err = a + ": '" + s + "' is not a byte count";
                return false;
            }
            return true;
        };
        auto us_value = [&](int64_t* v) { // a poll window: at most 1 s
            uint64_t us;
            if (!size_value(&us))
                return false;
            if (us > 1'000'000) {
                *err = a + " must be at most 1000000";
                return false;
            }
            *v = static_cast<int64_t>(us);
            return true;
        };
        if (a == "-h" || a == "--help")
            return CliResult::help;
        if (a == "-v" || a == "--verbose") {
            o->verbosity++;
        } else if (a == "-vv") {
            o->verbosity += 2;
        } else if (a == "-q" || a == "--quiet") {
            o->verbosity = -1;
        } else if (a == "--socket") {
            if (!value(&o->socket_path))
                return CliResult::error;
        } else if (a == "--guest-mem") {
            if (!value(&o->guest_mem_path))
                return CliResult::error;
        } else if (a == "--guest-mem-size") {
            if (!size_value(&o->guest_mem_size))
                return CliResult::error;
        } else if (a == "--vm") {
            std::string v;
            if (!value(&v))
                return CliResult::error;
            VmOption vm;
            const size_t c1 = v.find(','), c2 = c1 == std::string::npos ? c1 : v.find(',', c1 + 1);
            if (c2 == std::string::npos || c1 == 0 || c2 == c1 + 1 ||
                !parse_size(v.substr(c2 + 1), &vm.guest_mem_size)) {
                *err = "--vm: '" + v + "' is not SOCKET,RAMFILE,BYTES";
                return CliResult::error;
            }
            vm.socket_path = v.substr(0, c1);
            vm.guest_mem_path = v.substr(c1 + 1, c2 - c1 - 1);
            o->vms.push_back(vm);
        } else if (a == "--mtu") {
            uint64_t mtu;
            if (!size_value(&mtu))
                return CliResult::error;
            if (mtu < 68 || mtu > 9000) {
                *err = "--mtu must be 68..9000";
                return CliResult::error;
            }
            o->mtu = static_cast<uint32_t>(mtu);
        } else if (a == "--uplink") {
            if (!value(&o->uplink))
                return CliResult::error;
        } else if (a == "--uplink-faults") {
            std::string v;
            if (!value(&v))
                return CliResult::error;
            if (!parse_link_faults(v, &o->uplink_faults, err)) {
                *err = "--uplink-faults: " + *err;
                return CliResult::error;
            }
        } else if (a == "--mac") {
            std::string v;
            if (!value(&v))
                return CliResult::error;
            std::array<uint8_t, 6> mac;
            if (!parse_mac(v, &mac)) {
                *err = "--mac: '" + v + "' is not xx:xx:xx:xx:xx:xx";
                return CliResult::error;
            }
            if ((mac[0] & 1) || mac == std::array<uint8_t, 6>{}) {
                *err = "--mac: " + v + " is not a unicast station address";
                return CliResult::error;
            }
            o->mac = mac;
        } else if (a == "--bar2-size") {
            if (!size_value(&o->bar2_size))
                return CliResult::error;
        } else if (a == "--idle-us") {
            if (!us_value(&o->idle_us))
                return CliResult::error;
        } else if (a == "--spin-us") {
            if (!us_value(&o->spin_us))
                return CliResult::error;
        } else {
            *err = "unknown argument '" + a + "'";
            return CliResult::error;
        }
    }
    const bool single = !o->socket_path.empty() || !o->guest_mem_path.empty() || o->guest_mem_size;
    if (single || o->vms.empty()) {
        if (o->socket_path.empty()) {
            *err = "--socket is required (or --vm)";
            return CliResult::error;
        }
        if (o->guest_mem_path.empty()) {
            *err = "--guest-mem is required";
            return CliResult::error;
        }
        o->vms.insert(o->vms.begin(), {o->socket_path, o->guest_mem_path, o->guest_mem_size});
    }
    for (const VmOption& vm : o->vms) {
        const char* what = single && &vm == &o->vms[0] ? "--guest-mem-size" : "--vm's size";
        if (vm.guest_mem_size == 0) {
            *err = std::string(what) + " is required and must be > 0";
            return CliResult::error;
        }
        if (vm.guest_mem_size % 4096) {
            *err = std::string(what) + " must be a multiple of 4096";
            return CliResult::error;
        }
        for (const VmOption& other : o->vms)
            if (&other != &vm && other.socket_path == vm.socket_path) {
                *err = "socket " + vm.socket_path + " given twice";
                return CliResult::error;
            }
        if (vm.socket_path == o->uplink) {
            *err = "socket " + vm.socket_path + " is both a VM's and the uplink's";
            return CliResult::error;
        }
    }
    if (o->vms.size() > kMaxVms) {
        *err = "at most " + std::to_string(kMaxVms) + " VMs";
        return CliResult::error;
    }
    if (o->uplink_faults.any() && o->uplink.empty()) {
        *err = "--uplink-faults needs --uplink";
        return CliResult::error;
    }
    if (o->mac && (*o->mac)[5] + o->vms.size() - 1 > 0xff) {
        *err = "--mac: " + std::to_string(o->vms.size()) + " VMs do not fit below its last byte";
        return CliResult::error;
    }
    if (o->bar2_size && (o->bar2_size < 65536 || (o->bar2_size & (o->bar2_size - 1)))) {
        *err = "--bar2-size must be a power of two >= 64K";
        return CliResult::error;
    }
    return CliResult::ok;
}

} // namespace vrnic
