// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The device's secret: a random generator seeded from getrandom(2) (or from
// an injected seed, for deterministic tests and fuzzing) and the keyed
// permutations that turn table positions into QPNs and memory keys a guest
// cannot extrapolate (device-interface.md 9.4).
#pragma once

#include <array>
#include <cstdint>

namespace vrnic {

// xoshiro256** over a 256-bit state from getrandom(2); a non-zero `seed`
// makes the stream reproducible instead.
class KeyGen {
  public:
    explicit KeyGen(uint64_t seed = 0);
    uint64_t next();

  private:
    std::array<uint64_t, 4> s_{};
};

// A keyed permutation of [0, 2^24): a balanced Feistel network on two 12-bit
// halves, 6 rounds, each a multiply-shift hash of one half under a random
// odd multiplier and offset drawn from a KeyGen. Both directions take a few
// cycles, so a lookup by QPN or key on the data path stays cheap.
class Permutation24 {
  public:
    static constexpr uint32_t kMask = (1u << 24) - 1;

    explicit Permutation24(KeyGen& g);
    uint32_t forward(uint32_t x) const {
        uint32_t l = x >> 12 & 0xfff, r = x & 0xfff;
        for (unsigned i = 0; i < kRounds; i++) {
            const uint32_t t = l ^ round(i, r);
            l = r;
            r = t;
        }
        return l << 12 | r;
    }
    uint32_t inverse(uint32_t y) const {
        uint32_t l = y >> 12 & 0xfff, r = y & 0xfff;
        for (unsigned i = kRounds; i-- > 0;) {
            const uint32_t t = r ^ round(i, l);
            r = l;
            l = t;
        }
        return l << 12 | r;
    }

  private:
    static constexpr unsigned kRounds = 6;
    uint32_t round(unsigned i, uint32_t half) const {
        return static_cast<uint32_t>(((half + add_[i]) * mul_[i]) >> 52);
    }
    std::array<uint64_t, kRounds> mul_{}, add_{};
};

} // namespace vrnic
