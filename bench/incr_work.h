/*
 * incr_work.h - a workload as incr_bench and agg_bench see it: the variables
 * to protect and three collective calls (reset, interval, check), and the
 * helpers the applications and the benchmarks both use (allocation that
 * faults the pages in, agreement of every rank, deterministic values).
 * Header-only, on top of bench.h; the applications themselves are in
 * incr_apps.h, which only a program's main file includes (one instance of
 * each per process).
 */
#ifndef CAIRN_INCR_WORK_H
#define CAIRN_INCR_WORK_H

#include "bench.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define MAX_VARS 6

typedef struct var {
    const char *name;
    void *p;
    cairn_type type;
    size_t count;
    int ndims;
    size_t dims[3];
} var;

typedef struct work {
    const char *name;
    var v[MAX_VARS];
    int nv;
    uint64_t bytes;                   /* protected bytes of this rank */
    uint8_t *prev;                    /* the benchmark's: a copy of the protected bytes */
    void (*reset)(struct work *);     /* collective: the initial state */
    void (*interval)(struct work *);  /* collective: compute until the next checkpoint */
    void (*check)(struct work *);     /* collective: the computation is right, or die */
} work;

static inline uint64_t var_bytes(const var *v) { return (uint64_t)v->count * cairn_type_size(v->type); }

static inline void add_var(work *w, const char *name, void *p, cairn_type type, size_t count, int ndims,
                           size_t d0, size_t d1, size_t d2)
{
    if (w->nv == MAX_VARS)
        die("too many variables");
    w->v[w->nv++] = (var){name, p, type, count, ndims, {d0, d1, d2}};
    w->bytes += (uint64_t)count * cairn_type_size(type);
}

static inline void *app_alloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die("out of memory (%zu bytes)", n);
    memset(p, 0, n); /* fault the pages in now, not inside a timed run */
    return p;
}

/* Every rank agrees that nothing went wrong, or the job dies naming WHAT. */
static inline void app_agree(int bad, const char *what)
{
    int any = 0;
    check_mpi(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    if (any)
        die("%s (see the messages above)", what);
}

static inline uint64_t app_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* A double in [-1, 1) with a full mantissa, from a 64-bit key. */
static inline double app_unit(uint64_t key) { return (double)(app_mix(key) >> 11) * 0x1p-52 - 1.0; }

#endif
