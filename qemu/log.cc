// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "log.h"

#include <cstdarg>
#include <cstdio>
#include <ctime>

namespace vrnic {

std::atomic<LogLevel> g_log_level{LogLevel::info};

void log_message(LogLevel level, const char* fmt, ...) {
    static const char* const names[] = {"error", "warn", "info", "debug"};
    char line[1024];
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int n = snprintf(line, sizeof(line), "[%5ld.%06ld] vrnic-model %s: ", (long)ts.tv_sec,
                     ts.tv_nsec / 1000, names[static_cast<int>(level)]);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && n < (int)sizeof(line))
        vsnprintf(line + n, sizeof(line) - n, fmt, ap);
    va_end(ap);
    // One call per line keeps lines from different threads whole.
    fprintf(stderr, "%s\n", line);
}

} // namespace vrnic
