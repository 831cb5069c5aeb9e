/*
 * bench.h - what every MPI benchmark program shares: failing loudly (a
 * benchmark aborts the job rather than print a wrong figure), timing,
 * medians, strict option parsing, benchmark data. Header-only but for
 * bench_prog and bench_rank, which bench.c defines once for every program
 * (its files all see the same ones); each program sets them at start.
 */
#ifndef CAIRN_BENCH_H
#define CAIRN_BENCH_H

#include "cairn.h"

#include <errno.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern const char *bench_prog;
extern int bench_rank;

static inline void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static inline void die(const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: rank %d: %s\n", bench_prog, bench_rank, msg);
    fflush(stderr);
    int inited = 0;
    MPI_Initialized(&inited);
    if (inited)
        MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

static inline void check_cairn(int rc, const cairn_ctx *ctx, const char *what)
{
    if (rc != 0)
        die("%s: %s (%d): %s", what, cairn_strerror(rc), rc, cairn_errmsg(ctx));
}

static inline void check_mpi(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        char s[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, s, &len);
        die("%s: %s", what, s);
    }
}

static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of V[0..N-1] (N >= 1); V is left unchanged. */
static inline double median(const double *v, int n)
{
    double *tmp = malloc((size_t)n * sizeof *tmp);
    if (!tmp)
        die("out of memory");
    memcpy(tmp, v, (size_t)n * sizeof *v);
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
    double m = n % 2 ? tmp[n / 2] : 0.5 * (tmp[n / 2 - 1] + tmp[n / 2]);
    free(tmp);
    return m;
}

static inline long parse_long(const char *s, const char *opt, long lo, long hi)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
        die("%s: expected an integer in %ld..%ld, got '%s'", opt, lo, hi, s);
    return v;
}

#define PAGE 4096

/* Non-trivial, incompressible data: xorshift64, seeded (per rank). */
static inline void fill(uint8_t *buf, size_t size, int seed)
{
    uint64_t x = 0x9E3779B97F4A7C15ull ^ ((uint64_t)(seed + 1) * 0xD1B54A32D192ED03ull);
    size_t words = size / 8;
    for (size_t i = 0; i < words; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        memcpy(buf + 8 * i, &x, 8);
    }
    for (size_t i = words * 8; i < size; i++)
        buf[i] = (uint8_t)(x >> (8 * (i % 8)));
}

/* Change one word in every page, so no block equals its previous version. */
static inline void perturb(uint8_t *buf, size_t size, long salt)
{
    for (size_t off = 0; off + 8 <= size; off += PAGE) {
        uint64_t v;
        memcpy(&v, buf + off, 8);
        v ^= (uint64_t)(salt + 1) * 0x9E3779B97F4A7C15ull;
        memcpy(buf + off, &v, 8);
    }
}

#endif /* CAIRN_BENCH_H */
