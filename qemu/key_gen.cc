// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "key_gen.h"

#include <sys/random.h>

#include <cerrno>
#include <cstdlib>

namespace vrnic {

namespace {

uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) {
    return (x << k) | (x >> (64 - k));
}

void fill_random(void* p, size_t len) {
    auto* b = static_cast<uint8_t*>(p);
    while (len) {
        ssize_t n = getrandom(b, len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            abort(); // no entropy: refuse to hand out guessable keys
        b += n;
        len -= static_cast<size_t>(n);
    }
}

} // namespace

KeyGen::KeyGen(uint64_t seed) {
    if (seed) {
        for (uint64_t& w : s_)
            w = splitmix64(seed);
        return;
    }
    do
        fill_random(s_.data(), sizeof(s_));
    while (!(s_[0] | s_[1] | s_[2] | s_[3]));
}

uint64_t KeyGen::next() {
    const uint64_t r = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return r;
}

Permutation24::Permutation24(KeyGen& g) {
    for (unsigned i = 0; i < kRounds; i++) {
        mul_[i] = g.next() | 1;
        add_[i] = g.next();
    }
}

} // namespace vrnic
