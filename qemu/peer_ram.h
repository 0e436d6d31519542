// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The guest RAM of the QEMU at the other end of an ivshmem connection, for
// a QEMU whose RAM the model cannot name beforehand: libvirt's
// <memoryBacking> with a memfd, or with a file whose path holds the
// domain's run-time ID. Guest RAM is the one shared writable mapping of
// the RAM's size at file offset 0 in QEMU's address space (other than
// BAR2); the model reopens that file through a descriptor QEMU opened for
// reading and writing (/proc/PID/fd), which takes the right to ptrace
// QEMU (the same user, or root). A peer thus never gets the model to
// write a file it may not write itself.
#pragma once

#include "unique_fd.h"

#include <atomic>
#include <cstdint>
#include <string>

namespace vrnic {

enum class PeerRam { found, not_yet, error };

// One look at process `pid`'s mappings for guest RAM of `size` bytes,
// leaving out the file of `exclude_fd` (BAR2). not_yet: no such mapping
// (QEMU connects to the model before it allocates RAM); error: *err says
// why, for example two candidates.
PeerRam find_peer_ram(int pid, uint64_t size, int exclude_fd, UniqueFd* out, std::string* err);

// The guest RAM of the process connected on `conn`, looked for every 10 ms
// until it appears, `conn` closes, `stop` is set or `timeout_ms` passes.
UniqueFd wait_peer_ram(int conn, uint64_t size, int exclude_fd, const std::atomic<bool>& stop,
                       int timeout_ms, std::string* err);

} // namespace vrnic
