// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The ivshmem server side of QEMU's ivshmem-doorbell device
// (docs/specs/ivshmem-spec.txt in QEMU). The model is peer 0; each QEMU that
// connects is one VM and gets its own BAR2 memory and eventfds.
#pragma once

#include "unique_fd.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace vrnic {

// A listening UNIX socket; removes its path again on destruction.
class IvshmemListener {
  public:
    static std::unique_ptr<IvshmemListener> listen(const std::string& path, std::string* err);
    ~IvshmemListener();

    int fd() const { return fd_.get(); }
    const std::string& path() const { return path_; }
    // Accepts one pending connection; an invalid fd when none is pending.
    UniqueFd accept() const;

  private:
    IvshmemListener(UniqueFd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}
    UniqueFd fd_;
    std::string path_;
};

// One connected QEMU: the eventfds in both directions.
class IvshmemLink {
  public:
    static constexpr int64_t kProtocolVersion = 0;
    static constexpr int64_t kModelPeerId = 0;

    // Runs the server side of the handshake on `conn`: version, client id,
    // BAR2 fd, the model's (peer 0) doorbell eventfds, then the client's own
    // interrupt eventfds.
    static std::unique_ptr<IvshmemLink> establish(UniqueFd conn, int shm_fd, unsigned vectors,
                                                  int64_t client_id, std::string* err);

    unsigned vectors() const { return static_cast<unsigned>(doorbell_.size()); }
    int conn_fd() const { return conn_.get(); }
    // Signalled when the guest writes (0 << 16) | v to BAR0 Doorbell.
    int doorbell_fd(unsigned v) const { return doorbell_[v].get(); }
    // Consumes pending kicks on vector v; true when there were any.
    bool drain_doorbell(unsigned v) const;
    // Raises MSI-X vector v in the guest.
    void raise_irq(unsigned v) const;
    // True once QEMU has closed its end (the VM is gone). Call when conn_fd()
    // polls readable or hung up.
    bool peer_closed() const;

  private:
    IvshmemLink() = default;
    UniqueFd conn_;
    std::vector<UniqueFd> doorbell_; // ours: QEMU writes, we read
    std::vector<UniqueFd> irq_;      // the guest's: we write, QEMU injects MSI-X
};

// Sends one protocol message: an int64 in little endian plus an optional fd.
bool ivshmem_send_msg(int sock, int64_t value, int fd);

// Turns a QEMU away: a version it does not speak (kRefusedVersion), then
// the close. QEMU fails to start the device with "server sent version -1",
// where a connection closed during the handshake would leave QEMU 7.2
// reading it in a loop forever.
inline constexpr int64_t kRefusedVersion = -1;
void ivshmem_refuse(UniqueFd conn);

} // namespace vrnic
