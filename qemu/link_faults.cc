// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "link_faults.h"

#include <cstdlib>

namespace vrnic {

bool parse_link_faults(const std::string& spec, LinkFaultRates* out, std::string* err) {
    LinkFaultRates r;
    size_t pos = 0;
    while (pos <= spec.size()) {
        const size_t comma = std::min(spec.find(',', pos), spec.size());
        const std::string item = spec.substr(pos, comma - pos);
        const size_t eq = item.find('=');
        const std::string key = item.substr(0, eq),
                          val = eq == std::string::npos ? "" : item.substr(eq + 1);
        if (val.empty() || val.size() > 18 || val.find_first_not_of("0123456789") != val.npos) {
            *err = "'" + item + "' is not NAME=NUMBER";
            return false;
        }
        const uint64_t v = strtoull(val.c_str(), nullptr, 10);
        if (key == "seed") {
            r.seed = v;
        } else if (key == "drop" || key == "dup" || key == "reorder") {
            if (v > 50) {
                *err = key + " must be a percentage of at most 50";
                return false;
            }
            (key == "drop" ? r.drop : key == "dup" ? r.dup : r.reorder) = unsigned(v);
        } else {
            *err = "unknown fault '" + key + "' (drop, dup, reorder, seed)";
            return false;
        }
        pos = comma + 1;
    }
    *out = r;
    return true;
}

void LinkFaults::pass(const uint8_t* f, uint32_t len, const Emit& emit) {
    if (chance(rates_.drop)) {
        count(dropped_);
        return;
    }
    if (!holding_ && chance(rates_.reorder)) {
        held_.assign(f, f + len);
        holding_ = true;
        count(reordered_);
        return;
    }
    emit(f, len);
    if (chance(rates_.dup)) {
        count(duplicated_);
        emit(f, len);
    }
    release(emit);
}

LinkFaultCounters LinkFaults::counters() const {
    auto r = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
    return {r(dropped_), r(duplicated_), r(reordered_)};
}

void LinkFaults::release(const Emit& emit) {
    if (!holding_)
        return;
    holding_ = false;
    emit(held_.data(), uint32_t(held_.size()));
}

} // namespace vrnic
