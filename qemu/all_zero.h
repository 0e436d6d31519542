// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Reserved bytes the guest must leave zero: in commands and in WQEs.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vrnic {

template <size_t N> inline bool all_zero(const uint8_t (&a)[N]) {
    for (uint8_t b : a)
        if (b)
            return false;
    return true;
}

} // namespace vrnic
