// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// When a requester in an RNR wait retries next (device-interface.md 14.1).
// A finite rnr_retry waits the responder's RNR timer before each retry, as
// IBTA specifies. An endless one (7) does so for the first few retries, then
// doubles the wait up to a cap: a receive posted meanwhile resumes the SEND
// at once anyway (every pass looks at the responder's RQ producer index, and
// a sleeping device asks for RQ kicks), so the timer only matters for a
// receive the device was not told about.
#pragma once

#include <cstdint>

namespace vrnic {

// Retries of an endless wait at the plain timer, as many as a finite
// rnr_retry can make.
constexpr uint32_t kRnrFullRateRetries = 6;
// The longest wait between two retries, unless the timer itself is longer.
constexpr uint64_t kRnrBackoffCapNs = 100'000'000;

// The wait in ns before the retry that follows `retries` timer-driven ones,
// for the responder's min_rnr_timer encoding and the requester's rnr_retry.
uint64_t rnr_retry_delay_ns(uint8_t min_rnr_timer, uint8_t rnr_retry, uint32_t retries);

} // namespace vrnic
