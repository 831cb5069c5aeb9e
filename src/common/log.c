/*
 * log.c - one line per message on stderr: "cairn[rank 3 host n1] warn: ...".
 *
 * The level and prefix are process-wide, set once by cairn_init (or a tool).
 * A message is formatted into one buffer and written with a single write(2)
 * so lines from many ranks do not interleave mid-line. What a job logs at
 * info is one line per event of the job, from rank 0 (checkpoint.c); what
 * each rank or node does is debug. cn_human formats sizes for messages.
 */
#include "common/common.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int log_level = CN_LOG_WARN;
static char log_prefix[128] = "cairn";

void cn_log_setup(int level, const char *prefix)
{
    log_level = level;
    if (prefix)
        snprintf(log_prefix, sizeof log_prefix, "cairn[%s]", prefix);
}

void cn_log(int level, const char *fmt, ...)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    if (level > log_level || level < 0 || level > CN_LOG_DEBUG)
        return;
    char line[CN_MSG_MAX + 256];
    int n = snprintf(line, sizeof line, "%s %s: ", log_prefix, names[level]);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}

const char *cn_human(uint64_t bytes, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) {
        snprintf(buf, len, "%llu B", (unsigned long long)bytes);
        return buf;
    }
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        u++;
    }
    snprintf(buf, len, v < 10 ? "%.1f %s" : "%.0f %s", v, units[u]);
    return buf;
}
