// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Leveled logging to stderr. printf-style so it is cheap and thread-safe (one
// fprintf per line).
#pragma once

#include <atomic>

namespace vrnic {

enum class LogLevel { error = 0, warn = 1, info = 2, debug = 3 };

// The current threshold; messages above it are dropped.
extern std::atomic<LogLevel> g_log_level;

void log_message(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

inline bool log_enabled(LogLevel level) {
    return level <= g_log_level.load(std::memory_order_relaxed);
}

} // namespace vrnic

#define VRNIC_LOG(level, ...)                                                                      \
    do {                                                                                           \
        if (::vrnic::log_enabled(::vrnic::LogLevel::level))                                        \
            ::vrnic::log_message(::vrnic::LogLevel::level, __VA_ARGS__);                           \
    } while (0)
#define LOG_ERR(...) VRNIC_LOG(error, __VA_ARGS__)
#define LOG_WARN(...) VRNIC_LOG(warn, __VA_ARGS__)
#define LOG_INFO(...) VRNIC_LOG(info, __VA_ARGS__)
#define LOG_DBG(...) VRNIC_LOG(debug, __VA_ARGS__)
