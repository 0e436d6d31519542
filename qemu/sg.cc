// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "sg.h"

#include "mr.h"

#include <algorithm>
#include <cstring>

namespace vrnic {

std::span<uint8_t> SgCursor::peek(uint64_t max) {
    if (buf_ || !mem_) {
        uint64_t n = std::min(max, buf_len_ - off_);
        return {buf_ + off_, n};
    }
    while (i_ < n_ && off_ == e_[i_].len) {
        i_++;
        off_ = 0;
    }
    if (i_ == n_ || max == 0)
        return {};
    const SgEntry& e = e_[i_];
    return mr_run(*mem_, *e.mr, e.addr + off_, std::min(max, e.len - off_));
}

void SgCursor::advance(uint64_t n) {
    off_ += n;
}

void SgCursor::skip(uint64_t n) {
    if (buf_ || !mem_) {
        off_ += std::min(n, buf_len_ - off_);
        return;
    }
    while (n && i_ < n_) {
        const uint64_t step = std::min(n, e_[i_].len - off_);
        off_ += step;
        n -= step;
        if (off_ == e_[i_].len) {
            i_++;
            off_ = 0;
        }
    }
}

uint64_t sg_copy(SgCursor& dst, SgCursor& src, uint64_t len) {
    uint64_t done = 0;
    while (done < len) {
        std::span<uint8_t> s = src.peek(len - done);
        if (s.empty())
            break;
        std::span<uint8_t> d = dst.peek(s.size());
        if (d.empty())
            break;
        // memmove: a loopback transfer may overlap itself.
        memmove(d.data(), s.data(), d.size());
        src.advance(d.size());
        dst.advance(d.size());
        done += d.size();
    }
    return done;
}

} // namespace vrnic
