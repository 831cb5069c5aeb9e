/*
 * fault.c - named fault points for failure-injection tests and drills.
 *
 * CAIRN_FAULT="POINT[:gen=N][:rank=R][:after_us=U]" kills the calling
 * process with SIGKILL at POINT, as a real crash would, so tests can stop a
 * checkpoint at a precise instant. With after_us the kill comes U
 * microseconds later from a detached thread, wherever the process then is:
 * the soak drills draw U uniformly over a checkpoint's measured duration.
 * With :until=PATH (last in the spec) the process is not killed but waits at
 * POINT until PATH exists, so a test can hold one process back until a
 * condition it watches for is met. Several specs, separated by ';', are
 * tried in turn (a hold at one generation, a crash at another).
 * With CAIRN_FAULT unset this is one getenv per call.
 */
#include "common/common.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void *kill_later(void *arg)
{
    long long us = (long long)(intptr_t)arg;
    struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0)
        ;
    raise(SIGKILL);
    return NULL;
}

/* One spec SPEC (LEN bytes, no ';'): does it fire at POINT for GEN and RANK?
 * Returns 0 (no), 1 (kill now), 2 (kill after *AFTER_US), 3 (held until its
 * path existed: done) or, with PROBE, 4 (would wait: the path is not there
 * yet) without waiting. */
static int one_spec(const char *spec, size_t len, const char *point, int64_t gen, int rank,
                    long long *after_us, bool probe)
{
    char s[4096];
    if (len >= sizeof s)
        return 0;
    memcpy(s, spec, len);
    s[len] = '\0';
    size_t plen = strlen(point);
    if (strncmp(s, point, plen) != 0 || (s[plen] != '\0' && s[plen] != ':'))
        return 0;
    *after_us = -1;
    for (const char *p = strchr(s, ':'); p; p = strchr(p + 1, ':')) {
        if (strncmp(p, ":gen=", 5) == 0 && strtoll(p + 5, NULL, 10) != gen)
            return 0;
        if (strncmp(p, ":rank=", 6) == 0 && strtol(p + 6, NULL, 10) != rank)
            return 0;
        if (strncmp(p, ":after_us=", 10) == 0)
            *after_us = strtoll(p + 10, NULL, 10);
        if (strncmp(p, ":until=", 7) == 0) {
            if (access(p + 7, F_OK) == 0)
                return 3; /* held before, or never needed: no word */
            if (probe)
                return 4;
            cn_log(CN_LOG_WARN, "fault injection: waiting at %s (generation %lld) until %s exists",
                   point, (long long)gen, p + 7);
            struct timespec ts = {0, 10 * 1000000L};
            while (access(p + 7, F_OK) != 0)
                nanosleep(&ts, NULL);
            return 3;
        }
    }
    return *after_us > 0 ? 2 : 1;
}

bool cn_fault_waiting(const char *point, int64_t gen, int rank)
{
    const char *spec = getenv("CAIRN_FAULT");
    for (const char *p = spec ? spec : ""; *p;) {
        size_t len = strcspn(p, ";");
        long long after_us = -1;
        if (one_spec(p, len, point, gen, rank, &after_us, true) == 4)
            return true;
        p += len + (p[len] == ';');
    }
    return false;
}

void cn_fault_point(const char *point, int64_t gen, int rank)
{
    const char *spec = getenv("CAIRN_FAULT");
    if (!spec || !*spec)
        return;
    for (const char *p = spec; *p;) { /* SPEC[;SPEC...]: each in turn */
        size_t len = strcspn(p, ";");
        long long after_us = -1;
        int what = one_spec(p, len, point, gen, rank, &after_us, false);
        if (what == 2) {
            pthread_t t;
            pthread_attr_t a;
            pthread_attr_init(&a);
            pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
            int rc = pthread_create(&t, &a, kill_later, (void *)(intptr_t)after_us);
            pthread_attr_destroy(&a);
            if (rc == 0) {
                cn_log(CN_LOG_WARN, "fault injection: killing the process %lld us after %s "
                       "(generation %lld)", after_us, point, (long long)gen);
                return;
            }
            what = 1;
        }
        if (what == 1) {
            cn_log(CN_LOG_WARN, "fault injection: killing the process at %s (generation %lld)",
                   point, (long long)gen);
            raise(SIGKILL);
        }
        p += len + (p[len] == ';');
    }
}
