// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "rnr_backoff.h"

#include "requester.h"

#include <algorithm>

namespace vrnic {

uint64_t rnr_retry_delay_ns(uint8_t min_rnr_timer, uint8_t rnr_retry, uint32_t retries) {
    const uint64_t timer = rnr_timer_ns(min_rnr_timer);
    if (rnr_retry != 7 || retries < kRnrFullRateRetries)
        return timer;
    const uint64_t cap = std::max(timer, kRnrBackoffCapNs);
    // timer < 2^30 ns, so up to 33 doublings stay far from overflow.
    const uint32_t doublings = std::min<uint32_t>(retries - kRnrFullRateRetries + 1, 33);
    return std::min(timer << doublings, cap);
}

} // namespace vrnic
