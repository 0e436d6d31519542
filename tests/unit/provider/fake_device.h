// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Plain-memory stand-ins for what the device and the kernel give the
// provider: a doorbell page, page-aligned rings, and a device that writes
// CQEs the way spec section 6 says (everything, then the owner byte).

#ifndef VRNIC_TESTS_FAKE_DEVICE_H
#define VRNIC_TESTS_FAKE_DEVICE_H

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <vrnic_dev.h>

namespace vrnic::prov::test {

struct FreeDeleter {
    void operator()(void* p) const { std::free(p); }
};

// Zeroed, 4 KiB-aligned memory like the kernel's dma_alloc_coherent rings.
class Buffer {
  public:
    explicit Buffer(size_t size) : size_(size) {
        void* p = std::aligned_alloc(4096, (size + 4095) & ~size_t{4095});
        std::memset(p, 0, size);
        mem_.reset(p);
    }
    unsigned char* data() const { return static_cast<unsigned char*>(mem_.get()); }
    size_t size() const { return size_; }

  private:
    size_t size_;
    std::unique_ptr<void, FreeDeleter> mem_;
};

class FakeDbPage : public Buffer {
  public:
    FakeDbPage() : Buffer(VRNIC_DB_PAGE_SIZE) {}
    vrnic_db_page* page() const { return reinterpret_cast<vrnic_db_page*>(data()); }
    void set_status(uint32_t bits) {
        std::atomic_ref<uint32_t>(page()->slot[0].st.status).store(bits);
    }
    uint32_t word(uint32_t slot, uint32_t off) const {
        uint32_t v;
        std::memcpy(&v, data() + slot * 8 + off, 4);
        return v;
    }
};

// The device side of one CQ: produces CQEs at its own free-running pi.
class FakeCqProducer {
  public:
    FakeCqProducer(unsigned char* ring, uint32_t log_depth) : ring_(ring), log_depth_(log_depth) {}
    void produce(vrnic_cqe cqe) {
        auto* slot = reinterpret_cast<vrnic_cqe*>(ring_) + (pi_ & ((1U << log_depth_) - 1));
        cqe.owner = 0;
        std::memcpy(slot, &cqe, sizeof(cqe));
        std::atomic_ref<uint8_t>(slot->owner)
            .store(VRNIC_PHASE(pi_, log_depth_), std::memory_order_release);
        pi_++;
    }
    uint32_t pi() const { return pi_; }

  private:
    unsigned char* ring_;
    uint32_t log_depth_;
    uint32_t pi_ = 0;
};

inline vrnic_cqe make_cqe(uint32_t qpn, uint64_t wr_id, uint8_t opcode, uint32_t wqe_idx,
                          uint8_t status = VRNIC_WC_SUCCESS) {
    vrnic_cqe c{};
    c.qpn = qpn;
    c.wr_id = wr_id;
    c.opcode = opcode;
    c.wqe_idx = wqe_idx;
    c.status = status;
    return c;
}

// Raw little-endian field readers, so the tests check the byte offsets of
// the spec rather than the header's struct.
template <class T> T rd(const unsigned char* p, size_t off) {
    T v;
    std::memcpy(&v, p + off, sizeof(v));
    return v;
}

} // namespace vrnic::prov::test

#endif // VRNIC_TESTS_FAKE_DEVICE_H
