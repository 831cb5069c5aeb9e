/*
 * incr_bench.h - what the files of incr_bench share (the program is described
 * in bench/incr_bench.c, which owns main, the options and the globals below):
 *   incr/util.c     small helpers (MPI reductions, environment, files) and the
 *                   protected memory of a workload: snapshots, changed bytes
 *   incr/series.c   a series of checkpoints of one workload and its statistics
 *   incr/alone.c    rank 0 alone: hashing, xdelta3, cairn over MPI_COMM_SELF
 *   incr/measure.c  the measurements (CP vs ICP, block sweep, hash, policy)
 *                   and the summary lines
 */
#ifndef CAIRN_BENCH_INCR_BENCH_H
#define CAIRN_BENCH_INCR_BENCH_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "../bench.h"
#include "cairn.h"
#include "common/common.h"
#include "incr/incr.h"
#include "../incr_work.h"

extern char **environ;

#define MB 1e6
#define MIB ((size_t)1 << 20)
#define MAX_REPS 200
#define MAX_BLOCKS 16
#define GOOD_RATIO 1.1 /* stored / changed a block size must keep to be recommended */

/* What changed since PREV: bytes that differ, and the blocks of BLOCK bytes
 * (per variable, as cairn cuts them) holding at least one of them. */
typedef struct change {
    uint64_t bytes;        /* bytes that differ */
    uint64_t blocks;       /* blocks that hold one */
    uint64_t nblocks;      /* blocks in all */
    uint64_t block_bytes;  /* bytes of the changed blocks: what an increment must store */
} change;

typedef struct series {
    const char *tag;     /* job suffix */
    int incr;            /* incr.mode */
    const char *codec;   /* compress.codec; NULL: the default */
    long block;          /* incr.block_size in bytes; 0: the default */
    long max_changed;    /* incr.max_changed; -1: the default */
    int level;
    int intervals;       /* checkpoints after the first */
    int verify;          /* restart the last generation and compare */
} series;

typedef struct rec {
    long id, parent;
    uint64_t bytes, raw, delta, parity;
    uint64_t changed;        /* bytes changed since the previous checkpoint, all ranks */
    uint64_t cblocks, nblocks; /* blocks (of the series' size) changed / all, all ranks */
    uint64_t cbytes;         /* bytes of those changed blocks: what an increment stores */
    double time;             /* slowest rank's cairn_checkpoint */
} rec;

typedef struct stats {
    int n;              /* records used */
    double bytes, parity, delta, changed; /* means per generation */
    double time;        /* median */
    double ratio;       /* sum delta / sum changed */
    double worst;       /* largest per-generation delta / changed */
} stats;

typedef struct xd {
    double x_time, x_size, c_time, c_bytes, c_delta, changed, dump;
} xd;

typedef struct opts {
    int reps, sweep_reps, hash_reps, xdelta_reps, auto_codec;
    long mat_n, mat_rows, lu_n, lu_iters, lu_max_changed, hash_mib, settle_ms;
    long blocks[MAX_BLOCKS];
    int nblocks;
    const char *xdelta;
} opts;

typedef struct wres {
    stats cp, icp;
    xd x;
} wres;

/* incr_bench.c */
extern int g_rank, g_size, g_rpn;
extern uint32_t g_def_block;  /* the library's default incr.block_size */
extern long g_settle_us;
extern char g_job[64], g_base[4096];

/* util.c */
long env_long(const char *name, long def);
void barrier(void);
void quiet_barrier(void);
void settle(void);
uint64_t sum_u64(uint64_t v);
double max_double(double v);
void set_env(const char *name, const char *value);
void set_env_long(const char *name, long v);
void wipe(const char *path);
uint64_t file_size(const char *path);
double pct_less(double a, double b);
void protect_all(cairn_ctx *ctx, const work *w);
void snap(work *w);
void swap_prev(work *w);
change count_changed(const work *w, uint32_t block);
long long first_diff(const work *w, const char **name);
void scramble(work *w);

/* series.c */
void job_dir(char *buf, size_t len, const char *job);
void configure(const series *s, const char *job);
void run_series(work *w, const series *s, rec *r);
stats stats_of(const rec *r, int n, int incr);
void print_recs(const char *what, const rec *r, int n);

/* alone.c */
double hash_time(const work *w, uint32_t block, int reps);
xd xdelta_vs_cairn(work *w, const char *prog, int reps, const char *tag);

/* measure.c */
wres measure(work *w, const opts *o, long max_changed, rec *cp, rec *icp);
void hash_vs_memcpy(const opts *o, double *hash_gbs, double *memcpy_gbs);
int block_sweep(work *w, const opts *o, long *best, double *best_ratio);
void lu_policy(work *w, int max_changed);
void summary(const wres *mat, const wres *lu, int found, long best, double best_ratio,
             double hash_gbs, double memcpy_gbs);

#endif
