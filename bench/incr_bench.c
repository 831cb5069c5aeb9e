/*
 * incr_bench.c - incremental checkpoints (incr.mode = on) against full ones,
 * after Jitsumoto et al., Tables 3 and 4: two real MPI programs checkpoint at
 * level 3 on emulated nodes, once storing every generation whole (CP) and
 * once storing only the blocks that changed (ICP); then the block size, the
 * hashing speed, and xdelta3 (the paper's tool) on the same data.
 *
 *   CAIRN_RANKS_PER_NODE=1 CAIRN_SET_SIZE=8 CAIRN_EC_M=2 \
 *   scripts/mpirun.sh 8 build/bench/incr_bench [--reps N] [--mat-n N] [--mat-rows N]
 *       [--lu-n N] [--lu-iters N] [--lu-max-changed P] [--blocks K,K,..] [--sweep-reps N]
 *       [--hash-mib N] [--hash-reps N] [--xdelta-reps N] [--xdelta PROG] [--auto 0|1]
 *       [--settle-ms N]
 *
 * Workloads (incr_apps.h; each rank its own emulated node, one encoding set
 * when the ranks fit in erasure.set_size), restarted from their initial
 * state for every series below:
 *   mat  C = A x B, N = --mat-n (2400: rows of 19200 bytes, so most rows of C
 *        start inside a 4 KiB block); each rank owns N/P rows of A and C and
 *        all of B; an interval computes the next --mat-rows (3) rows of C:
 *        0.1 % of the rank's protected memory (A, B, C, state: 57.6 MB).
 *   lu   SSOR on a 3-D grid in the manner of NPB LU, --lu-n^3 points (72^3)
 *        of 5 unknowns per rank, --lu-iters (1) iterations per interval: u
 *        and rsd change at every point, frct and kap never; ~62 % of the
 *        4 KiB blocks change per interval (48.3 MB per rank).
 * The bytes a program changed in an interval are counted exactly by the
 * benchmark, byte for byte against a copy of the protected memory taken at
 * the previous checkpoint (never by asking cairn); so are the blocks that
 * hold them, and every increment must store exactly those blocks.
 *
 * 1. CP vs ICP. Per workload two series of one checkpoint of the initial
 *    state and then --reps intervals, each followed by cairn_checkpoint at
 *    level 3 (compress.codec = none: compression would blur what is being
 *    measured): incr.mode = off, then on (other incr.* at their defaults,
 *    except incr.max_changed = --lu-max-changed for lu, 100 by default,
 *    because lu changes more than the default 50 % and would otherwise be
 *    stored whole; a short run with the default shows it). Per checkpoint:
 *    stored bytes (cairn_generations, checked against the rank files'
 *    sizes), parity bytes (the parity.ec files of the generation on every
 *    node), and time (cairn_checkpoint, slowest rank, after a barrier).
 *    Figures use the --reps checkpoints after the intervals; ICP figures
 *    only those written incremental (parent >= 0). After the ICP series the
 *    memory is scrambled and cairn_restart of its last generation must
 *    bring back every byte (applying the chain).
 * 2. Block size (mat): a series per incr.block_size in --blocks (KiB) at
 *    level 1, a full checkpoint then --sweep-reps incremental ones: bytes
 *    the increments store (their blocks) / bytes really changed, the
 *    checkpoint time, incr_hash over the rank's memory with 1 thread
 *    (rank 0 alone, the others asleep), and the hash table (16 B a block).
 *    The recommended size is the largest with stored / changed <= 1.1.
 * 3. incr_hash over --hash-mib MiB (1 thread, the library's default block)
 *    against memcpy of the same buffer, rank 0 alone, medians.
 * 4. xdelta3: rank 0's protected memory dumped raw before and after one
 *    interval (two consecutive generations) to files on the RAM disk;
 *    `xdelta3 -e -s OLD NEW DELTA` timed (process included) --xdelta-reps
 *    times, its delta decoded once and checked. Against it, cairn on the
 *    same rank alone (a context over MPI_COMM_SELF, level 1, one compressor
 *    thread, codec none): the memory alternates OLD, NEW, OLD, ... and each
 *    checkpoint after the first is incremental over the same changed
 *    blocks: its time (hash + diff + store) and stored bytes.
 * With --auto 1, each workload also runs CP and ICP for 2 intervals with the
 * default codec (compress.codec unset): the sizes that compression gives.
 * Between checkpoints the ranks sleep --settle-ms (100) so the background
 * removal of pruned generations does not run into the next timed call.
 *
 * Output, from rank 0 (MB = 10^6 bytes; sizes are per generation over all
 * ranks; times are medians over the checkpoints or repetitions):
 *   bench: incr.{mat,lu}.size V MB ratio=R vs full      mean ICP increment / mean CP generation
 *   bench: incr.{mat,lu}.parity V MB ratio=R vs full    same for parity.ec bytes
 *   bench: incr.{mat,lu}.time V s ratio=R vs full       median ICP / median CP checkpoint time
 *   bench: incr.mat.bytes V MB ratio=R vs changed       increment's blocks / bytes changed
 *   bench: incr.block.best S KiB ratio=R vs changed     largest block with R <= 1.1 (or
 *                                                       the smallest, if none: a # line says so)
 *   bench: incr.hash V GB/s ratio=R vs memcpy           hash GB/s / memcpy GB/s
 *   bench: incr.xdelta.{mat,lu}.size V MB ratio=R vs cairn
 *   bench: incr.xdelta.{mat,lu}.time V s ratio=R vs cairn
 * Lines starting with '#' are details for people. Any inconsistency (a
 * restart that differs, stored bytes that disagree with the files, an
 * increment that stores other blocks than those that changed, a wrong
 * product, a solver that diverges, xdelta3 failing or its delta not
 * decoding to NEW) aborts the job instead of printing a figure.
 */
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

#include "bench.h"
#include "cairn.h"
#include "common/common.h"
#include "incr/incr.h"
#include "incr_apps.h"

extern char **environ;

#define MB 1e6
#define MIB ((size_t)1 << 20)
#define MAX_REPS 200
#define MAX_BLOCKS 16
#define GOOD_RATIO 1.1 /* stored / changed a block size must keep to be recommended */

static int g_rank = 0, g_size = 1, g_rpn = 1;
static uint32_t g_def_block;  /* the library's default incr.block_size */
static long g_settle_us = 100000;
static char g_job[64], g_base[4096];

/* ---- small helpers ------------------------------------------------------ */

static void usage(void)
{
    fprintf(stderr,
            "usage: incr_bench [--reps N] [--mat-n N] [--mat-rows N] [--lu-n N] [--lu-iters N]\n"
            "                  [--lu-max-changed P] [--blocks K,K,..] [--sweep-reps N]\n"
            "                  [--hash-mib N] [--hash-reps N] [--xdelta-reps N] [--xdelta PROG]\n"
            "                  [--auto 0|1] [--settle-ms N]\n");
}

static long env_long(const char *name, long def)
{
    const char *s = getenv(name);
    if (s == NULL || s[0] == '\0')
        return def;
    return parse_long(s, name, 0, 1L << 30);
}

static void barrier(void) { check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

/* A barrier that sleeps while it waits, so that rank 0 can measure alone
 * while the other ranks take no CPU time (blocking MPI calls spin). */
static void quiet_barrier(void)
{
    MPI_Request req;
    check_mpi(MPI_Ibarrier(MPI_COMM_WORLD, &req), "MPI_Ibarrier");
    for (;;) {
        int done = 0;
        check_mpi(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test");
        if (done)
            return;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

static void settle(void)
{
    usleep((useconds_t)g_settle_us);
    barrier();
}

static uint64_t sum_u64(uint64_t v)
{
    uint64_t all = 0;
    check_mpi(MPI_Allreduce(&v, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
    return all;
}

static double max_double(double v)
{
    double all = 0;
    check_mpi(MPI_Allreduce(&v, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    return all;
}

static void set_env(const char *name, const char *value)
{
    int rc = value ? setenv(name, value, 1) : unsetenv(name);
    if (rc != 0)
        die("setenv %s: %s", name, strerror(errno));
}

static void set_env_long(const char *name, long v)
{
    char s[32];
    snprintf(s, sizeof s, "%ld", v);
    set_env(name, s);
}

static int rm_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    int rc = type == FTW_DP ? rmdir(path) : unlink(path);
    if (rc != 0 && errno != ENOENT) /* a pruning thread may race us: gone is wiped */
        return errno;
    return 0;
}

/* rm -rf PATH: depth first, never following a symlink. */
static void wipe(const char *path)
{
    for (int tries = 0; tries < 10; tries++) {
        struct stat st;
        if (lstat(path, &st) != 0) {
            if (errno == ENOENT)
                return;
            die("lstat %s: %s", path, strerror(errno));
        }
        int rc = nftw(path, rm_entry, 32, FTW_DEPTH | FTW_PHYS);
        if (rc == 0 || (rc < 0 && errno == ENOENT))
            continue;
        die("removing %s: %s", path, strerror(rc > 0 ? rc : errno));
    }
    die("removing %s: still there after 10 attempts", path);
}

/* Size of a regular file, or 0 if it does not exist. */
static uint64_t file_size(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        die("lstat %s: %s", path, strerror(errno));
    }
    if (!S_ISREG(st.st_mode))
        die("%s is not a regular file", path);
    return (uint64_t)st.st_size;
}

static double pct_less(double a, double b) { return b > 0 ? 100.0 * (1.0 - a / b) : 0.0; }

/* ---- the protected memory of a workload ------------------------------- */

static void protect_all(cairn_ctx *ctx, const work *w)
{
    for (int i = 0; i < w->nv; i++) {
        const var *v = &w->v[i];
        check_cairn(cairn_protect(ctx, v->name, v->p, v->type, v->count, v->ndims,
                                  v->ndims ? v->dims : NULL),
                    ctx, "cairn_protect");
    }
}

/* PREV := the protected memory. */
static void snap(work *w)
{
    uint8_t *q = w->prev;
    for (int i = 0; i < w->nv; i++) {
        memcpy(q, w->v[i].p, var_bytes(&w->v[i]));
        q += var_bytes(&w->v[i]);
    }
}

/* Swap the protected memory with PREV. */
static void swap_prev(work *w)
{
    uint8_t tmp[65536];
    uint8_t *q = w->prev;
    for (int i = 0; i < w->nv; i++) {
        uint8_t *p = w->v[i].p;
        for (uint64_t off = 0, n = var_bytes(&w->v[i]); off < n; off += sizeof tmp) {
            size_t len = n - off < sizeof tmp ? (size_t)(n - off) : sizeof tmp;
            memcpy(tmp, p + off, len);
            memcpy(p + off, q + off, len);
            memcpy(q + off, tmp, len);
        }
        q += var_bytes(&w->v[i]);
    }
}

/* What changed since PREV: bytes that differ, and the blocks of BLOCK bytes
 * (per variable, as cairn cuts them) holding at least one of them. */
typedef struct change {
    uint64_t bytes;        /* bytes that differ */
    uint64_t blocks;       /* blocks that hold one */
    uint64_t nblocks;      /* blocks in all */
    uint64_t block_bytes;  /* bytes of the changed blocks: what an increment must store */
} change;

static change count_changed(const work *w, uint32_t block)
{
    const uint8_t *q = w->prev;
    change c = {0};
    for (int i = 0; i < w->nv; i++) {
        const uint8_t *p = w->v[i].p;
        uint64_t n = var_bytes(&w->v[i]);
        for (uint64_t b = 0; b * block < n; b++) {
            uint64_t lo = b * block, hi = lo + block < n ? lo + block : n, in = 0, k = lo;
            for (; k + 8 <= hi; k += 8) {
                uint64_t x, y;
                memcpy(&x, p + k, 8);
                memcpy(&y, q + k, 8);
                if ((x ^= y) == 0)
                    continue;
                for (int j = 0; j < 8; j++)
                    in += ((x >> (8 * j)) & 0xff) != 0;
            }
            for (; k < hi; k++)
                in += p[k] != q[k];
            c.bytes += in;
            c.blocks += in != 0;
            c.block_bytes += in ? hi - lo : 0;
            c.nblocks++;
        }
        q += n;
    }
    return c;
}

/* Offset of the first byte of the protected memory that differs from PREV, or -1. */
static long long first_diff(const work *w, const char **name)
{
    const uint8_t *q = w->prev;
    for (int i = 0; i < w->nv; i++) {
        uint64_t n = var_bytes(&w->v[i]);
        if (memcmp(w->v[i].p, q, n) != 0) {
            const uint8_t *p = w->v[i].p;
            uint64_t k = 0;
            while (p[k] == q[k])
                k++;
            *name = w->v[i].name;
            return (long long)k;
        }
        q += n;
    }
    return -1;
}

static void scramble(work *w)
{
    for (int i = 0; i < w->nv; i++)
        memset(w->v[i].p, 0x5A, var_bytes(&w->v[i]));
}

/* ---- a series of checkpoints ------------------------------------------- */

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

static void job_dir(char *buf, size_t len, const char *job)
{
    int n = snprintf(buf, len, "%s/cairn-%u/%s", g_base, (unsigned)geteuid(), job);
    if (n < 0 || (size_t)n >= len)
        die("CAIRN_BASE path too long");
}

/* Stored bytes, parity bytes of generation ID in JOB, summed over the ranks. */
static void gen_files(const char *job, long id, uint64_t *files, uint64_t *parity)
{
    char dir[4352], path[4608];
    job_dir(dir, sizeof dir, job);
    snprintf(path, sizeof path, "%s/node%d/gen-%ld/rank-%d.ckpt", dir, g_rank / g_rpn, id, g_rank);
    uint64_t mine = file_size(path), par = 0;
    if (mine == 0)
        die("%s: missing after the checkpoint", path);
    if (g_rank % g_rpn == 0) { /* node leader */
        snprintf(path, sizeof path, "%s/node%d/gen-%ld/parity.ec", dir, g_rank / g_rpn, id);
        par = file_size(path);
    }
    *files = sum_u64(mine);
    *parity = sum_u64(par);
}

static void configure(const series *s, const char *job)
{
    set_env("CAIRN_JOB", job);
    set_env("CAIRN_INCR", s->incr ? "on" : "off");
    set_env("CAIRN_CODEC", s->codec);
    set_env("CAIRN_INCR_FULL_EVERY", NULL);
    set_env("CAIRN_COMPRESS_THREADS", NULL);
    if (s->block)
        set_env_long("CAIRN_INCR_BLOCK", s->block);
    else
        set_env("CAIRN_INCR_BLOCK", NULL);
    if (s->max_changed >= 0)
        set_env_long("CAIRN_INCR_MAX_CHANGED", s->max_changed);
    else
        set_env("CAIRN_INCR_MAX_CHANGED", NULL);
}

/* Run W from its initial state through S, one record per checkpoint into R
 * (1 + S->intervals of them). */
static void run_series(work *w, const series *s, rec *r)
{
    char job[64];
    snprintf(job, sizeof job, "%.40s-%s", g_job, s->tag);
    configure(s, job);
    w->reset(w);
    cairn_ctx *ctx = NULL;
    check_cairn(cairn_init(MPI_COMM_WORLD, NULL, &ctx), NULL, "cairn_init");
    protect_all(ctx, w);
    for (int i = 0; i <= s->intervals; i++) {
        rec *x = &r[i];
        memset(x, 0, sizeof *x);
        x->id = i;
        if (i > 0) {
            w->interval(w);
            change c = count_changed(w, s->block ? (uint32_t)s->block : g_def_block);
            x->changed = sum_u64(c.bytes);
            x->cblocks = sum_u64(c.blocks);
            x->nblocks = sum_u64(c.nblocks);
            x->cbytes = sum_u64(c.block_bytes);
        }
        barrier();
        double t0 = now();
        int rc = cairn_checkpoint(ctx, x->id, s->level);
        double t = now() - t0;
        check_cairn(rc, ctx, "cairn_checkpoint");
        x->time = max_double(t);
        cairn_gen_info info[4];
        int n = 0;
        check_cairn(cairn_generations(ctx, info, 4, &n), ctx, "cairn_generations");
        if (n < 1 || info[0].id != x->id || info[0].level < s->level)
            die("%s: generation %ld is not the newest complete one at level %d", job, x->id,
                s->level);
        x->parent = info[0].parent;
        x->bytes = info[0].bytes;
        x->raw = info[0].raw;
        x->delta = info[0].delta;
        uint64_t files = 0;
        gen_files(job, x->id, &files, &x->parity);
        if (files != x->bytes)
            die("%s: generation %ld: cairn_generations says %llu stored bytes, the rank files "
                "hold %llu",
                job, x->id, (unsigned long long)x->bytes, (unsigned long long)files);
        if (x->raw != sum_u64(w->bytes))
            die("%s: generation %ld restores %llu bytes, the ranks protect %llu", job, x->id,
                (unsigned long long)x->raw, (unsigned long long)sum_u64(w->bytes));
        if (s->level >= CAIRN_LEVEL_ERASURE && x->parity == 0)
            die("%s: generation %ld: no parity.ec at level %d", job, x->id, s->level);
        if (!s->incr && x->parent != -1)
            die("%s: generation %ld has parent %ld with incr.mode = off", job, x->id, x->parent);
        /* An increment holds exactly the blocks that changed since its parent. */
        if (x->parent >= 0 && x->parent != x->id - 1)
            die("%s: generation %ld diffs against %ld, not the previous checkpoint", job, x->id,
                x->parent);
        if (x->parent >= 0 && x->delta != x->cbytes)
            die("%s: generation %ld stores %llu bytes of blocks, the blocks that changed since "
                "generation %ld hold %llu",
                job, x->id, (unsigned long long)x->delta, x->parent,
                (unsigned long long)x->cbytes);
        snap(w);
        settle();
    }
    w->check(w);
    if (s->verify) {
        long last = r[s->intervals].id, got = -1;
        if (r[s->intervals].parent < 0)
            die("%s: the last generation (%ld) was written full: no chain to verify", job, last);
        scramble(w);
        check_cairn(cairn_restart(ctx, last, &got), ctx, "cairn_restart");
        if (got != last)
            die("%s: cairn_restart restored generation %ld, asked for %ld", job, got, last);
        const char *name = "";
        long long off = first_diff(w, &name);
        if (off >= 0)
            fprintf(stderr, "incr_bench: rank %d: %s: restored %s differs at byte %lld\n", g_rank,
                    job, name, off);
        app_agree(off >= 0, "restart of the incremental chain is not bit-exact");
    }
    check_cairn(cairn_finalize(ctx), NULL, "cairn_finalize");
    barrier();
    if (g_rank == 0) {
        char dir[4352];
        job_dir(dir, sizeof dir, job);
        wipe(dir);
    }
    barrier();
}

/* ---- statistics over records -------------------------------------------- */

typedef struct stats {
    int n;              /* records used */
    double bytes, parity, delta, changed; /* means per generation */
    double time;        /* median */
    double ratio;       /* sum delta / sum changed */
    double worst;       /* largest per-generation delta / changed */
} stats;

/* Records 1..N of R: all (INCR 0) or the incremental ones (INCR 1). */
static stats stats_of(const rec *r, int n, int incr)
{
    stats s = {0};
    double t[MAX_REPS + 1], sd = 0, sc = 0;
    for (int i = 1; i <= n; i++) {
        if (incr && r[i].parent < 0)
            continue;
        s.bytes += (double)r[i].bytes;
        s.parity += (double)r[i].parity;
        s.delta += (double)r[i].delta;
        s.changed += (double)r[i].changed;
        sd += (double)r[i].delta;
        sc += (double)r[i].changed;
        double q = r[i].changed ? (double)r[i].delta / (double)r[i].changed : 0;
        s.worst = q > s.worst ? q : s.worst;
        t[s.n++] = r[i].time;
    }
    if (s.n) {
        s.bytes /= s.n, s.parity /= s.n, s.delta /= s.n, s.changed /= s.n;
        s.time = median(t, s.n);
        s.ratio = sc > 0 ? sd / sc : 0;
    }
    return s;
}

static void print_recs(const char *what, const rec *r, int n)
{
    printf("#   %-4s %3s %6s %12s %12s %12s %12s %8s %7s\n", what, "id", "parent", "stored MB",
           "own MB", "parity MB", "changed MB", "chg blk", "time s");
    for (int i = 0; i <= n; i++) {
        char cb[16] = "-", ch[16] = "-";
        if (i > 0) {
            snprintf(cb, sizeof cb, "%.1f%%", 100.0 * (double)r[i].cblocks / (double)r[i].nblocks);
            snprintf(ch, sizeof ch, "%.4f", (double)r[i].changed / MB);
        }
        printf("#   %-4s %3ld %6ld %12.4f %12.4f %12.4f %12s %8s %7.4f\n", "", r[i].id,
               r[i].parent, (double)r[i].bytes / MB, (double)r[i].delta / MB,
               (double)r[i].parity / MB, ch, cb, r[i].time);
    }
}

/* ---- rank 0 alone: hashing, xdelta3, cairn over MPI_COMM_SELF ------------ */

static double hash_vars(const work *w, uint32_t block, cn_h128 *out)
{
    double t0 = now();
    for (int i = 0; i < w->nv; i++)
        incr_hash(w->v[i].p, var_bytes(&w->v[i]), block, 1, out);
    return now() - t0;
}

/* Median time of incr_hash over W's memory in blocks of BLOCK, 1 thread (rank 0). */
static double hash_time(const work *w, uint32_t block, int reps)
{
    uint64_t most = 0;
    for (int i = 0; i < w->nv; i++) {
        uint64_t nb = cn_incr_nblocks(var_bytes(&w->v[i]), block);
        most = nb > most ? nb : most;
    }
    cn_h128 *out = app_alloc(sizeof(cn_h128) * most);
    double t[MAX_REPS];
    hash_vars(w, block, out); /* warm */
    for (int r = 0; r < reps; r++)
        t[r] = hash_vars(w, block, out);
    free(out);
    return median(t, reps);
}

static void write_file(const char *path, const void *p, uint64_t n, int append)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0600);
    if (fd < 0)
        die("open %s: %s", path, strerror(errno));
    const uint8_t *b = p;
    while (n > 0) {
        ssize_t k = write(fd, b, n > (1u << 30) ? (1u << 30) : (size_t)n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            die("write %s: %s", path, k < 0 ? strerror(errno) : "short write");
        b += k;
        n -= (uint64_t)k;
    }
    if (close(fd) != 0)
        die("close %s: %s", path, strerror(errno));
}

static uint8_t *read_file(const char *path, uint64_t *n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        die("open %s: %s", path, strerror(errno));
    uint8_t *b = malloc((size_t)st.st_size + 1);
    if (!b)
        die("out of memory");
    uint64_t got = 0;
    while (got < (uint64_t)st.st_size) {
        ssize_t k = read(fd, b + got, (size_t)st.st_size - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            die("read %s: %s", path, k < 0 ? strerror(errno) : "short read");
        got += (uint64_t)k;
    }
    close(fd);
    *n = got;
    return b;
}

/* Run ARGV (searched in PATH), wait, and die unless it exits 0; its wall time. */
static double run_prog(char *const argv[])
{
    pid_t pid;
    double t0 = now();
    int rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
    if (rc != 0)
        die("cannot run %s: %s", argv[0], strerror(rc));
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            die("waitpid %s: %s", argv[0], strerror(errno));
    double t = now() - t0;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        die("%s %s failed (%s %d)", argv[0], argv[1], WIFEXITED(st) ? "exit" : "signal",
            WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    return t;
}

typedef struct xd {
    double x_time, x_size, c_time, c_bytes, c_delta, changed, dump;
} xd;

/* Rank 0: the memory holds NEW, PREV holds OLD. xdelta3 on the dumps, then
 * cairn alone on the same two states. */
static xd xdelta_vs_cairn(work *w, const char *prog, int reps, const char *tag)
{
    xd res = {0};
    change ch = count_changed(w, g_def_block);
    res.changed = (double)ch.bytes;
    res.dump = (double)w->bytes;

    char dir[4200], oldp[4300], newp[4300], dp[4300], outp[4300];
    snprintf(dir, sizeof dir, "%s/incr-xdelta.XXXXXX", g_base);
    if (!mkdtemp(dir))
        die("mkdtemp %s: %s", dir, strerror(errno));
    snprintf(oldp, sizeof oldp, "%s/old", dir);
    snprintf(newp, sizeof newp, "%s/new", dir);
    snprintf(dp, sizeof dp, "%s/delta", dir);
    snprintf(outp, sizeof outp, "%s/out", dir);
    write_file(oldp, w->prev, w->bytes, 0);
    write_file(newp, "", 0, 0);
    for (int i = 0; i < w->nv; i++)
        write_file(newp, w->v[i].p, var_bytes(&w->v[i]), 1);

    char *enc[] = {(char *)prog, "-e", "-s", oldp, newp, dp, NULL};
    double t[MAX_REPS];
    for (int r = 0; r < reps; r++) {
        unlink(dp);
        t[r] = run_prog(enc);
    }
    res.x_time = median(t, reps);
    res.x_size = (double)file_size(dp);
    /* The delta must be real: it decodes to NEW. */
    char *dec[] = {(char *)prog, "-d", "-s", oldp, dp, outp, NULL};
    run_prog(dec);
    uint64_t n = 0;
    uint8_t *out = read_file(outp, &n);
    const uint8_t *q = out;
    int same = n == w->bytes;
    for (int i = 0; same && i < w->nv; i++) {
        same = memcmp(q, w->v[i].p, var_bytes(&w->v[i])) == 0;
        q += var_bytes(&w->v[i]);
    }
    free(out);
    if (!same)
        die("xdelta3 -d of its own delta does not give back NEW (%s)", dir);
    wipe(dir);

    /* cairn on the same rank alone: OLD full, then NEW, OLD, ... incremental. */
    char job[64];
    snprintf(job, sizeof job, "%.40s-%s", g_job, tag);
    series s = {.tag = tag, .incr = 1, .codec = "none", .max_changed = 100};
    configure(&s, job);
    set_env("CAIRN_INCR_FULL_EVERY", "1000000");
    set_env("CAIRN_COMPRESS_THREADS", "1");
    cairn_ctx *ctx = NULL;
    check_cairn(cairn_init(MPI_COMM_SELF, NULL, &ctx), NULL, "cairn_init (MPI_COMM_SELF)");
    protect_all(ctx, w);
    swap_prev(w); /* memory: OLD */
    check_cairn(cairn_checkpoint(ctx, 0, CAIRN_LEVEL_LOCAL), ctx, "cairn_checkpoint");
    double ct[MAX_REPS], cbytes[MAX_REPS], cdelta[MAX_REPS];
    for (int r = 0; r < reps; r++) {
        swap_prev(w); /* NEW, OLD, NEW, ... */
        usleep((useconds_t)g_settle_us);
        double t0 = now();
        int rc = cairn_checkpoint(ctx, r + 1, CAIRN_LEVEL_LOCAL);
        ct[r] = now() - t0;
        check_cairn(rc, ctx, "cairn_checkpoint");
        cairn_gen_info info[2];
        int k = 0;
        check_cairn(cairn_generations(ctx, info, 2, &k), ctx, "cairn_generations");
        if (k < 1 || info[0].id != r + 1 || info[0].parent != r)
            die("%s: generation %d is not an increment over %d", job, r + 1, r);
        if (info[0].delta != ch.block_bytes)
            die("%s: generation %d stores %llu bytes of blocks, the changed blocks hold %llu",
                job, r + 1, (unsigned long long)info[0].delta,
                (unsigned long long)ch.block_bytes);
        cbytes[r] = (double)info[0].bytes;
        cdelta[r] = (double)info[0].delta;
    }
    if (reps % 2 == 0)
        swap_prev(w); /* back to NEW in memory, OLD in PREV */
    check_cairn(cairn_finalize(ctx), NULL, "cairn_finalize");
    set_env("CAIRN_INCR_FULL_EVERY", NULL);
    set_env("CAIRN_COMPRESS_THREADS", NULL);
    char jd[4352];
    job_dir(jd, sizeof jd, job);
    wipe(jd);
    res.c_time = median(ct, reps);
    res.c_bytes = median(cbytes, reps);
    res.c_delta = median(cdelta, reps);
    return res;
}

/* ---- the measurements ----------------------------------------------------- */

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

/* CP and ICP at level 3, the default codec (optional), xdelta3: one workload. */
static wres measure(work *w, const opts *o, long max_changed, rec *cp, rec *icp)
{
    wres res = {0};
    char tag[32];
    snprintf(tag, sizeof tag, "%s-cp", w->name);
    series s = {.tag = tag, .incr = 0, .codec = "none", .max_changed = -1,
                .level = CAIRN_LEVEL_ERASURE, .intervals = o->reps};
    run_series(w, &s, cp);
    snprintf(tag, sizeof tag, "%s-icp", w->name);
    s = (series){.tag = tag, .incr = 1, .codec = "none", .max_changed = max_changed,
                 .level = CAIRN_LEVEL_ERASURE, .intervals = o->reps, .verify = 1};
    run_series(w, &s, icp);
    res.cp = stats_of(cp, o->reps, 0);
    res.icp = stats_of(icp, o->reps, 1);
    if (res.icp.n == 0)
        die("%s: no generation of the incremental series was written incremental", w->name);

    if (g_rank == 0) {
        printf("# %s: checkpoints at level 3, compress.codec = none; CP = incr.mode off, "
               "ICP = on (incr.max_changed %s)\n",
               w->name, max_changed >= 0 ? "set by --lu-max-changed" : "default");
        print_recs("CP", cp, o->reps);
        print_recs("ICP", icp, o->reps);
        printf("#   ICP: %d of %d generations after the first incremental; restart of generation "
               "%ld (its chain) verified bit-exact\n",
               res.icp.n, o->reps, icp[o->reps].id);
        fflush(stdout);
    }

    if (o->auto_codec) { /* the same, 2 intervals, with the default codec */
        rec a[3], b[3];
        snprintf(tag, sizeof tag, "%s-cp-auto", w->name);
        s = (series){.tag = tag, .incr = 0, .codec = NULL, .max_changed = -1,
                     .level = CAIRN_LEVEL_ERASURE, .intervals = 2};
        run_series(w, &s, a);
        snprintf(tag, sizeof tag, "%s-icp-auto", w->name);
        s = (series){.tag = tag, .incr = 1, .codec = NULL, .max_changed = max_changed,
                     .level = CAIRN_LEVEL_ERASURE, .intervals = 2};
        run_series(w, &s, b);
        stats sa = stats_of(a, 2, 0), sb = stats_of(b, 2, 1);
        if (g_rank == 0 && sb.n == 0)
            printf("#   with the default codec: no incremental generation (parents %ld %ld)\n",
                   b[1].parent, b[2].parent);
        else if (g_rank == 0)
            printf("#   with the default codec (compress.codec auto), 2 intervals: CP %.4f MB, "
                   "ICP %.4f MB (ratio %.6f; raw %.4f MB); parity CP %.4f MB, ICP %.4f MB "
                   "(ratio %.6f); time CP %.4f s, ICP %.4f s\n",
                   sa.bytes / MB, sb.bytes / MB, sb.bytes / sa.bytes, (double)a[1].raw / MB,
                   sa.parity / MB, sb.parity / MB, sb.parity / sa.parity, sa.time, sb.time);
    }

    /* xdelta3: two consecutive generations of rank 0 (after the first interval). */
    w->reset(w);
    w->interval(w);
    snap(w);
    w->interval(w);
    snprintf(tag, sizeof tag, "%s-xd", w->name);
    if (g_rank == 0)
        res.x = xdelta_vs_cairn(w, o->xdelta, o->xdelta_reps, tag);
    quiet_barrier();
    if (g_rank == 0) {
        printf("#   xdelta3 vs cairn, rank 0 alone, one interval of %s (%.4f MB dumped, %.4f MB "
               "changed): xdelta3 -e %.4f MB in %.4f s; cairn increment %.4f MB (blocks %.4f MB) "
               "in %.4f s (level 1, compress.threads 1); medians of %d\n",
               w->name, res.x.dump / MB, res.x.changed / MB, res.x.x_size / MB, res.x.x_time,
               res.x.c_bytes / MB, res.x.c_delta / MB, res.x.c_time, o->xdelta_reps);
        fflush(stdout);
    }
    return res;
}

static void paper_table(const char *what, const wres *r)
{
    printf("# %s in the form of the paper's table (per generation, all ranks; MB = 10^6 B)\n",
           what);
    printf("#   %-18s %14s %14s %10s\n", "", "CP", "ICP", "reduction");
    printf("#   %-18s %11.4f MB %11.4f MB %9.2f%%\n", "checkpoint size", r->cp.bytes / MB,
           r->icp.bytes / MB, pct_less(r->icp.bytes, r->cp.bytes));
    printf("#   %-18s %11.4f MB %11.4f MB %9.2f%%\n", "parity size", r->cp.parity / MB,
           r->icp.parity / MB, pct_less(r->icp.parity, r->cp.parity));
    printf("#   %-18s %12.4f s %12.4f s %9.2f%%\n", "checkpoint time", r->cp.time, r->icp.time,
           pct_less(r->icp.time, r->cp.time));
}

static void parse_blocks(const char *s, opts *o)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    o->nblocks = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (o->nblocks == MAX_BLOCKS)
            die("--blocks: at most %d sizes", MAX_BLOCKS);
        long k = parse_long(t, "--blocks", 1, CN_MAX_INCR_BLOCK >> 10);
        if ((k & (k - 1)) != 0 || (k << 10) < (long)CN_MIN_INCR_BLOCK)
            die("--blocks: %ld KiB is not a power of two in %u..%u KiB", k,
                CN_MIN_INCR_BLOCK >> 10, CN_MAX_INCR_BLOCK >> 10);
        o->blocks[o->nblocks++] = k << 10;
    }
    if (o->nblocks == 0)
        die("--blocks: no size given");
}

static void parse_opts(int argc, char **argv, opts *o)
{
    *o = (opts){.reps = 5, .sweep_reps = 3, .hash_reps = 5, .xdelta_reps = 3, .auto_codec = 1,
                .mat_n = 2400, .mat_rows = 3, .lu_n = 72, .lu_iters = 1, .lu_max_changed = 100,
                .hash_mib = 256, .xdelta = "xdelta3", .settle_ms = 100};
    parse_blocks("1,2,4,8,16,64,256,1024", o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage();
            exit(0);
        } else if (i + 1 < argc && strcmp(a, "--reps") == 0) {
            o->reps = (int)parse_long(argv[++i], a, 1, MAX_REPS);
        } else if (i + 1 < argc && strcmp(a, "--mat-n") == 0) {
            o->mat_n = parse_long(argv[++i], a, 64, 16384);
        } else if (i + 1 < argc && strcmp(a, "--mat-rows") == 0) {
            o->mat_rows = parse_long(argv[++i], a, 1, 16384);
        } else if (i + 1 < argc && strcmp(a, "--lu-n") == 0) {
            o->lu_n = parse_long(argv[++i], a, 4, 512);
        } else if (i + 1 < argc && strcmp(a, "--lu-iters") == 0) {
            o->lu_iters = parse_long(argv[++i], a, 1, 1000);
        } else if (i + 1 < argc && strcmp(a, "--lu-max-changed") == 0) {
            o->lu_max_changed = parse_long(argv[++i], a, 0, 100);
        } else if (i + 1 < argc && strcmp(a, "--blocks") == 0) {
            parse_blocks(argv[++i], o);
        } else if (i + 1 < argc && strcmp(a, "--sweep-reps") == 0) {
            o->sweep_reps = (int)parse_long(argv[++i], a, 1, MAX_REPS);
        } else if (i + 1 < argc && strcmp(a, "--hash-mib") == 0) {
            o->hash_mib = parse_long(argv[++i], a, 1, 1L << 16);
        } else if (i + 1 < argc && strcmp(a, "--hash-reps") == 0) {
            o->hash_reps = (int)parse_long(argv[++i], a, 1, MAX_REPS);
        } else if (i + 1 < argc && strcmp(a, "--xdelta-reps") == 0) {
            o->xdelta_reps = (int)parse_long(argv[++i], a, 1, MAX_REPS);
        } else if (i + 1 < argc && strcmp(a, "--xdelta") == 0) {
            o->xdelta = argv[++i];
        } else if (i + 1 < argc && strcmp(a, "--auto") == 0) {
            o->auto_codec = (int)parse_long(argv[++i], a, 0, 1);
        } else if (i + 1 < argc && strcmp(a, "--settle-ms") == 0) {
            o->settle_ms = parse_long(argv[++i], a, 0, 10000);
        } else {
            usage();
            die("unknown or incomplete option '%s'", a);
        }
    }
}

/* Rank 0 alone: incr_hash over a buffer against memcpy of it; GB/s of both. */
static void hash_vs_memcpy(const opts *o, double *hash_gbs, double *memcpy_gbs)
{
    size_t n = (size_t)o->hash_mib * MIB;
    uint8_t *src = app_alloc(n), *dst = app_alloc(n);
    cn_h128 *out = app_alloc(sizeof(cn_h128) * cn_incr_nblocks(n, g_def_block));
    fill(src, n, 7);
    double th[MAX_REPS], tc[MAX_REPS];
    incr_hash(src, n, g_def_block, 1, out); /* warm */
    memcpy(dst, src, n);
    for (int r = 0; r < o->hash_reps; r++) {
        double t0 = now();
        incr_hash(src, n, g_def_block, 1, out);
        th[r] = now() - t0;
        t0 = now();
        memcpy(dst, src, n);
        tc[r] = now() - t0;
        if (memcmp(dst + n / 2, src + n / 2, 64) != 0 || (out[0].lo == 0 && out[0].hi == 0))
            die("hash or memcpy produced nothing");
    }
    *hash_gbs = (double)n / 1e9 / median(th, o->hash_reps);
    *memcpy_gbs = (double)n / 1e9 / median(tc, o->hash_reps);
    printf("# hash: incr_hash (XXH3-128, %u KiB blocks, 1 thread) over %ld MiB: median %.4f s; "
           "memcpy of the same buffer: median %.4f s (%d reps, rank 0 alone)\n",
           g_def_block >> 10, o->hash_mib, median(th, o->hash_reps), median(tc, o->hash_reps),
           o->hash_reps);
    fflush(stdout);
    free(src), free(dst), free(out);
}

/* incr.block_size on mat at level 1: stored / changed, hashing, table. The
 * largest size with a ratio <= GOOD_RATIO into *BEST (or the smallest, if
 * none), its ratio into *BEST_RATIO; returns whether one qualified. */
static int block_sweep(work *w, const opts *o, long *best, double *best_ratio)
{
    /* mat changes one run of L bytes of C per rank and interval, starting where
     * the last one ended: it touches L / b + 1 blocks of b on average. */
    double run_len = (double)o->mat_rows * (double)o->mat_n * 8;
    if (g_rank == 0)
        printf("# block size (mat, level 1, codec none, %d incremental checkpoints each; ratio = "
               "blocks stored / bytes changed, over all ranks; model = 1 + b / L, L = %.0f bytes "
               "changed per rank per interval in one run; hash = incr_hash over one rank's %.1f "
               "MB, 1 thread, rank 0 alone; ckpt = level-1 increment; table = 16 B per block "
               "per rank)\n"
               "#   %8s %8s %8s %8s %9s %10s %8s %9s\n",
               o->sweep_reps, run_len, (double)w->bytes / MB, "block", "ratio", "worst", "model",
               "hash s", "hash GB/s", "ckpt s", "table MB");
    int found = 0;
    *best = -1;
    for (int b = 0; b < o->nblocks; b++) {
        long bs = o->blocks[b];
        rec r[MAX_REPS + 1];
        char tag[32];
        snprintf(tag, sizeof tag, "mat-b%ld", bs >> 10);
        series s = {.tag = tag, .incr = 1, .codec = "none", .block = bs, .max_changed = -1,
                    .level = CAIRN_LEVEL_LOCAL, .intervals = o->sweep_reps};
        run_series(w, &s, r);
        stats st = stats_of(r, o->sweep_reps, 1);
        if (st.n == 0)
            die("block %ld: no incremental generation", bs);
        double ht = 0;
        if (g_rank == 0)
            ht = hash_time(w, (uint32_t)bs, o->hash_reps);
        quiet_barrier();
        uint64_t nb = 0;
        for (int i = 0; i < w->nv; i++)
            nb += cn_incr_nblocks(var_bytes(&w->v[i]), (uint32_t)bs);
        if (st.ratio <= GOOD_RATIO && bs > *best) {
            *best = bs;
            *best_ratio = st.ratio;
            found = 1;
        } else if (!found && (*best < 0 || bs < *best)) {
            *best = bs;
            *best_ratio = st.ratio;
        }
        if (g_rank == 0) {
            printf("#   %4ld KiB %8.4f %8.4f %8.4f %9.5f %10.2f %8.4f %9.4f%s\n", bs >> 10,
                   st.ratio, st.worst, 1.0 + (double)bs / run_len, ht,
                   (double)w->bytes / 1e9 / ht, st.time, (double)nb * 16 / MB,
                   (uint32_t)bs == g_def_block ? "  (default)" : "");
            fflush(stdout);
        }
    }
    if (g_rank == 0)
        printf("#   stored / changed ~ 1 + b / L: each run of changed bytes costs about one block "
               "more than it holds, so b <= L / 10 keeps it <= 1.1 (here b <= %.0f bytes); "
               "hashing costs the same at every size, smaller blocks only a larger table\n",
               run_len / 10);
    return found;
}

/* lu once more with the default incr.max_changed: what cairn decides. */
static void lu_policy(work *w, int max_changed)
{
    rec r[2];
    series s = {.tag = "lu-policy", .incr = 1, .codec = "none", .max_changed = -1,
                .level = CAIRN_LEVEL_LOCAL, .intervals = 1};
    run_series(w, &s, r);
    if (g_rank == 0)
        printf("#   lu with the default incr.max_changed = %d%%: %.1f%% of the %u KiB blocks "
               "changed in the interval, so generation 1 was written %s (parent %ld, %.4f MB "
               "stored of %.4f MB)\n",
               max_changed, 100.0 * (double)r[1].cblocks / (double)r[1].nblocks,
               g_def_block >> 10, r[1].parent < 0 ? "full" : "incremental", r[1].parent,
               (double)r[1].bytes / MB, (double)r[1].raw / MB);
}

static void summary(const wres *mat, const wres *lu, int found, long best, double best_ratio,
                    double hash_gbs, double memcpy_gbs)
{
    paper_table("mat (Table 3)", mat);
    paper_table("lu (Table 4)", lu);
    const char *name[2] = {"mat", "lu"};
    const wres *ws[2] = {mat, lu};
    for (int i = 0; i < 2; i++)
        printf("bench: incr.%s.size %.4f MB ratio=%.6f vs full\n", name[i], ws[i]->icp.bytes / MB,
               ws[i]->icp.bytes / ws[i]->cp.bytes);
    for (int i = 0; i < 2; i++)
        printf("bench: incr.%s.parity %.4f MB ratio=%.6f vs full\n", name[i],
               ws[i]->icp.parity / MB, ws[i]->icp.parity / ws[i]->cp.parity);
    for (int i = 0; i < 2; i++)
        printf("bench: incr.%s.time %.4f s ratio=%.4f vs full\n", name[i], ws[i]->icp.time,
               ws[i]->icp.time / ws[i]->cp.time);
    printf("bench: incr.mat.bytes %.4f MB ratio=%.4f vs changed\n", mat->icp.delta / MB,
           mat->icp.ratio);
    if (!found)
        printf("# no block size keeps stored / changed <= %.2f for mat: the smallest comes "
               "closest; the overhead is about one block per run of changed bytes (see the "
               "model column), so smaller blocks cost only hash-table memory\n",
               GOOD_RATIO);
    printf("bench: incr.block.best %ld KiB ratio=%.4f vs changed\n", best >> 10, best_ratio);
    printf("bench: incr.hash %.4f GB/s ratio=%.4f vs memcpy\n", hash_gbs, hash_gbs / memcpy_gbs);
    for (int i = 0; i < 2; i++) {
        const xd *x = &ws[i]->x;
        printf("bench: incr.xdelta.%s.size %.4f MB ratio=%.4f vs cairn\n", name[i],
               x->x_size / MB, x->x_size / x->c_bytes);
        printf("bench: incr.xdelta.%s.time %.4f s ratio=%.4f vs cairn\n", name[i], x->x_time,
               x->x_time / x->c_time);
    }
    fflush(stdout);
}

int main(int argc, char **argv)
{
    bench_prog = "incr_bench";
    opts o;
    parse_opts(argc, argv, &o);
    g_settle_us = o.settle_ms * 1000;

    check_mpi(MPI_Init(&argc, &argv), "MPI_Init");
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    bench_rank = g_rank;

    g_rpn = (int)env_long("CAIRN_RANKS_PER_NODE", 0);
    long set_size = env_long("CAIRN_SET_SIZE", 8), m = env_long("CAIRN_EC_M", 2);
    if (g_rpn < 1)
        die("needs emulated nodes: CAIRN_RANKS_PER_NODE=1 (each rank its own node)");
    int nodes = (g_size + g_rpn - 1) / g_rpn;
    if (nodes <= m)
        die("level 3 with m = %ld needs more than %ld nodes, this job has %d", m, m, nodes);
    if ((size_t)o.mat_n < (size_t)g_size)
        die("--mat-n %ld: fewer rows than ranks", o.mat_n);
    const char *base = getenv("CAIRN_BASE");
    snprintf(g_base, sizeof g_base, "%s", base && base[0] ? base : "/dev/shm");
    const char *job = getenv("CAIRN_JOB");
    if (job && job[0]) {
        snprintf(g_job, sizeof g_job, "%s", job);
    } else {
        long pid = (long)getpid();
        check_mpi(MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD), "MPI_Bcast");
        snprintf(g_job, sizeof g_job, "incr-bench-%ld", pid);
    }

    /* The library's defaults, as a context loads them. */
    set_env("CAIRN_INCR_BLOCK", NULL);
    set_env("CAIRN_INCR_FULL_EVERY", NULL);
    set_env("CAIRN_INCR_MAX_CHANGED", NULL);
    cn_config cfg;
    cn_err err = {0};
    if (cn_config_load(&cfg, NULL, &err) != 0)
        die("configuration: %s", err.msg);
    g_def_block = cfg.incr_block;

    if (g_rank == 0) {
        printf("# incr: %d ranks on %d emulated nodes (%d per node), %ld encoding set(s) of at "
               "most %ld, m = %ld; %ld core(s); base %s\n",
               g_size, nodes, g_rpn, (nodes + set_size - 1) / set_size, set_size, m,
               sysconf(_SC_NPROCESSORS_ONLN), g_base);
        printf("# the ranks share the cores: times compare work within this run, not a "
               "cluster's; each time is the slowest rank's\n");
        printf("# library defaults: incr.block_size %u KiB, incr.full_every %d, "
               "incr.max_changed %d%%\n",
               g_def_block >> 10, cfg.incr_full_every, cfg.incr_max_changed);
        fflush(stdout);
    }

    double hash_gbs = 0, memcpy_gbs = 0;
    if (g_rank == 0)
        hash_vs_memcpy(&o, &hash_gbs, &memcpy_gbs);
    quiet_barrier();

    static rec cp[MAX_REPS + 1], icp[MAX_REPS + 1];
    work w;
    mat_setup(&w, g_rank, g_size, (size_t)o.mat_n, (size_t)o.mat_rows);
    w.prev = app_alloc(w.bytes);
    uint64_t all = sum_u64(w.bytes);
    if (g_rank == 0) {
        printf("# mat: C = A x B, N = %ld, %zu rows of A and C per rank, %ld rows of C per "
               "interval; %.4f MB protected per rank (%.4f MB all ranks); rows of %ld bytes\n",
               o.mat_n, g_mat.nloc, o.mat_rows, (double)w.bytes / MB, (double)all / MB,
               o.mat_n * 8);
        fflush(stdout);
    }
    wres mat = measure(&w, &o, -1, cp, icp);
    long best = -1;
    double best_ratio = 0;
    int found = block_sweep(&w, &o, &best, &best_ratio);
    mat_free();
    free(w.prev);

    lu_setup(&w, g_rank, g_size, (int)o.lu_n, (int)o.lu_iters);
    w.prev = app_alloc(w.bytes);
    all = sum_u64(w.bytes);
    if (g_rank == 0) {
        printf("# lu: SSOR (omega %.1f), %ld^3 points per rank x %d unknowns, global grid %ld x "
               "%ld x %ld, %ld iteration(s) per interval; %.4f MB protected per rank (%.4f MB all "
               "ranks): u and rsd change, frct and kap do not\n",
               LU_OMEGA, o.lu_n, LU_C, o.lu_n, o.lu_n, o.lu_n * g_size, o.lu_iters,
               (double)w.bytes / MB, (double)all / MB);
        fflush(stdout);
    }
    wres lu = measure(&w, &o, o.lu_max_changed, cp, icp);
    lu_policy(&w, cfg.incr_max_changed);
    lu_free();
    free(w.prev);

    if (g_rank == 0)
        summary(&mat, &lu, found, best, best_ratio, hash_gbs, memcpy_gbs);
    check_mpi(MPI_Finalize(), "MPI_Finalize");
    return 0;
}
