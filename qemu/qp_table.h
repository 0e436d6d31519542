// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The device's QPs by QPN (device-interface.md 10.13): the keyed table of
// unguessable QPNs, and QPN 1, the GSI QP (1.4), which only the kernel's
// context creates, at most one at a time, and which no other QP ever gets.
#pragma once

#include "keyed_table.h"

#include <vrnic_dev.h>

#include <cstdint>
#include <memory>

namespace vrnic {

template <typename T> class QpTable {
  public:
    QpTable(uint32_t capacity, const KeyedLayout& l, KeyGen& g) : keyed_(capacity, l, g) {}

    uint32_t capacity() const { return keyed_.capacity(); }
    uint32_t count() const { return keyed_.count() + (gsi_ ? 1 : 0); }

    // A QP of any other type: a keyed QPN, never 1; 0 when full.
    uint32_t insert(std::unique_ptr<T>&& obj) {
        return count() < capacity() ? keyed_.insert(std::move(obj)) : 0;
    }

    // The GSI QP: QPN 1, or 0 when it exists already or the table is full.
    uint32_t insert_gsi(std::unique_ptr<T>&& obj) {
        if (gsi_ || count() >= capacity())
            return 0;
        gsi_ = std::move(obj);
        return VRNIC_QPN_GSI;
    }

    T* find(uint32_t qpn) const { return qpn == VRNIC_QPN_GSI ? gsi_.get() : keyed_.find(qpn); }

    std::unique_ptr<T> remove(uint32_t qpn) {
        if (qpn == VRNIC_QPN_GSI)
            return std::move(gsi_);
        return keyed_.remove(qpn);
    }

    // f(qpn, qp) for every QP, the GSI QP first.
    template <typename F> void for_each(F&& f) const {
        if (gsi_)
            f(VRNIC_QPN_GSI, *gsi_);
        keyed_.for_each(f);
    }

    uint64_t reuse_distance() const { return keyed_.reuse_distance(); }

  private:
    KeyedTable<T> keyed_;
    std::unique_ptr<T> gsi_;
};

} // namespace vrnic
