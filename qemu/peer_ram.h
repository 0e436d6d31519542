// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The guest RAM of the QEMU at the other end of an ivshmem connection, for
// a QEMU whose RAM the model cannot name beforehand: libvirt's
// <memoryBacking> with a memfd. Guest RAM is the one shared writable
// mapping of the RAM's size at file offset 0 in QEMU's address space
// (other than BAR2). The model takes a copy of QEMU's own descriptor of it
// (pidfd_getfd(2), which needs the right to ptrace QEMU: the same user, or
// root), never reopening the file: a peer never gets the model to write
// what it may not write itself. The descriptor must be read-write and the
// file a memfd sealed against shrinking, so that the peer cannot make the
// model's mapping fault.
#pragma once

#include "unique_fd.h"

#include <atomic>
#include <cstdint>
#include <string>

namespace vrnic {

enum class PeerRam { found, not_yet, error };

// A pidfd of process `pid` (invalid on error, errno set).
UniqueFd pin_process(int pid);

// One look at process `pid` (pinned by `pidfd`) for guest RAM of `size`
// bytes, leaving out the file of `exclude_fd` (BAR2). not_yet: no such mapping
// (QEMU connects to the model before it allocates RAM); error: *err says
// why, for example two candidates.
PeerRam find_peer_ram(int pidfd, int pid, uint64_t size, int exclude_fd, UniqueFd* out,
                      std::string* err);

// The guest RAM of the process connected on `conn`, looked for every 10 ms
// until it appears, `conn` closes, `stop` is set or `timeout_ms` passes.
UniqueFd wait_peer_ram(int conn, uint64_t size, int exclude_fd, const std::atomic<bool>& stop,
                       int timeout_ms, std::string* err);

} // namespace vrnic
