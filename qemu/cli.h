// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Command line of vrnic-model. Parsing is separate from main() so it can be
// unit-tested.
#pragma once

#include "link_faults.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vrnic {

// One VM of the fabric: its ivshmem socket and its guest RAM.
struct VmOption {
    std::string socket_path;
    std::string guest_mem_path;
    uint64_t guest_mem_size = 0;
};

struct CliOptions {
    // The first VM, by the single-VM options (--socket, --guest-mem,
    // --guest-mem-size) ...
    std::string socket_path;
    std::string guest_mem_path;
    uint64_t guest_mem_size = 0;
    // ... then each --vm. After parsing: every VM, the first one first.
    std::vector<VmOption> vms;
    uint32_t mtu = 0;             // the Ethernet MTU of every port; 0: the default
    std::string uplink;           // the uplink's socket (uplink.h); empty: none
    LinkFaultRates uplink_faults; // a lossy uplink, for tests (link_faults.h)
    // The first VM's MAC, the others' following in the last byte; unset:
    // DeviceParams' (two models on one segment need different ones).
    std::optional<std::array<uint8_t, 6>> mac;
    uint64_t bar2_size = 0; // 0: the interface's default
    int verbosity = 0;      // each -v raises the log level by one
    int64_t idle_us = -1;   // busy-poll window before sleeping; -1: the default
    int64_t spin_us = -1;   // the window while the CPU is uncontended; -1: idle_us
};

// The guest RAM file "-": the RAM of the QEMU that connects (peer_ram.h).
inline constexpr const char* kPeerRam = "-";

// VMs one model serves at most (their MACs differ in the last byte).
constexpr size_t kMaxVms = 64;

enum class CliResult { ok, help, error };

CliResult parse_cli(const std::vector<std::string>& args, CliOptions* opts, std::string* err);
// Parses a byte count: decimal or 0x hex, optionally followed by K, M or G
// (binary units).
bool parse_size(const std::string& s, uint64_t* out);
const char* cli_usage();

} // namespace vrnic
