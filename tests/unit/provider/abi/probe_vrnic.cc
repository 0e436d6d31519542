// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Sizes and offsets from the provider's declaration of the private ABI.
#include <cstddef>
#include <cstdio>

#include "verbs_private.h"

#define S(t) std::printf("sizeof(%s) = %zu\n", #t, sizeof(t));
#define O(t, m) std::printf("offsetof(%s, %s) = %zu\n", #t, #m, offsetof(t, m));

int main() {
#include "probe_list.h"
    return 0;
}
