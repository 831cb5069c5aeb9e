/*
 * fault.c - named fault points for failure-injection tests and drills.
 *
 * CAIRN_FAULT="POINT[:gen=N][:rank=R]" kills the calling process with
 * SIGKILL at POINT, as a real crash would, so tests can stop a checkpoint at
 * a precise instant. With CAIRN_FAULT unset this is one getenv per call.
 */
#include "common/common.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

void cn_fault_point(const char *point, int64_t gen, int rank)
{
    const char *spec = getenv("CAIRN_FAULT");
    if (!spec || !*spec)
        return;
    size_t plen = strlen(point);
    if (strncmp(spec, point, plen) != 0 || (spec[plen] != '\0' && spec[plen] != ':'))
        return;
    for (const char *p = strchr(spec, ':'); p; p = strchr(p + 1, ':')) {
        if (strncmp(p, ":gen=", 5) == 0 && strtoll(p + 5, NULL, 10) != gen)
            return;
        if (strncmp(p, ":rank=", 6) == 0 && strtol(p + 6, NULL, 10) != rank)
            return;
    }
    cn_log(CN_LOG_WARN, "fault injection: killing the process at %s (generation %lld)", point,
           (long long)gen);
    raise(SIGKILL);
}
