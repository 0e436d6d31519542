// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A typed view of the BAR2 memory: the register page and the doorbell pages
// (device-interface.md sections 3, 4, 7).
#pragma once

#include "device_params.h"
#include "shared_word.h"

#include <vrnic_dev.h>

#include <cstdint>

namespace vrnic {

class Bar2 {
  public:
    Bar2(uint8_t* base, uint64_t size) : base_(base), size_(size) {}

    vrnic_regs* regs() const { return reinterpret_cast<vrnic_regs*>(base_); }
    uint32_t last_db_page() const { return static_cast<uint32_t>(size_ / VRNIC_PAGE_SIZE) - 1; }
    // Doorbell page `page` (1 = kernel, 2.. = user contexts).
    vrnic_db_page* db_page(uint32_t page) const {
        return reinterpret_cast<vrnic_db_page*>(base_ + uint64_t(page) * VRNIC_PAGE_SIZE);
    }
    vrnic_db_slot* slot(uint32_t page, uint32_t s) const { return &db_page(page)->slot[s]; }
    void zero_page(uint32_t page) const;

    // Power-on (section 5.1): zero everything, write identity, capabilities
    // and status, then READY with a release store.
    void power_on(const DeviceParams& p) const;

    // The device-written status word in slot 0 of a doorbell page.
    void set_page_status(uint32_t page, uint32_t bits) const {
        store_release(&slot(page, VRNIC_DB_STATUS_SLOT)->st.status, bits);
    }

  private:
    uint8_t* base_;
    uint64_t size_;
};

} // namespace vrnic
