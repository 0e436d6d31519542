// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The device-wide budget of MR page-list entries (device-interface.md 10.8).
// Each REG_MR's list is bounded by guest RAM, but a guest can register
// max_mr lists; the budget bounds their sum, and with it the host memory
// all page lists together take.
#pragma once

#include <cstdint>
#include <utility>

namespace vrnic {

class PageBudget {
  public:
    // What one registration holds; gives its entries back when destroyed.
    class Charge {
      public:
        Charge() = default;
        Charge(Charge&& o) noexcept
            : budget_(std::exchange(o.budget_, nullptr)), n_(std::exchange(o.n_, 0)) {}
        Charge& operator=(Charge&& o) noexcept {
            if (this != &o) {
                release();
                budget_ = std::exchange(o.budget_, nullptr);
                n_ = std::exchange(o.n_, 0);
            }
            return *this;
        }
        Charge(const Charge&) = delete;
        Charge& operator=(const Charge&) = delete;
        ~Charge() { release(); }
        uint64_t entries() const { return n_; }

      private:
        friend class PageBudget;
        Charge(PageBudget* b, uint64_t n) : budget_(b), n_(n) {}
        void release() {
            if (budget_)
                budget_->used_ -= n_;
            budget_ = nullptr;
            n_ = 0;
        }
        PageBudget* budget_ = nullptr;
        uint64_t n_ = 0;
    };

    explicit PageBudget(uint64_t limit) : limit_(limit) {}
    PageBudget(const PageBudget&) = delete;
    PageBudget& operator=(const PageBudget&) = delete;

    // Takes n entries, or returns false (and takes nothing) past the limit.
    bool charge(uint64_t n, Charge* out) {
        if (n > limit_ - used_)
            return false;
        used_ += n;
        *out = Charge(this, n);
        return true;
    }
    uint64_t used() const { return used_; }
    uint64_t limit() const { return limit_; }

  private:
    uint64_t limit_;
    uint64_t used_ = 0;
};

} // namespace vrnic
