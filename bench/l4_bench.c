/*
 * l4_bench.c - level 4 (the flush to the PFS, and the restore from it alone)
 * against a plain copy of the same generation's files, measured in the same
 * run (issue 18, part 4: "level 4 no slower than a plain copy").
 *
 *   CAIRN_RANKS_PER_NODE=1 CAIRN_PFS_DIR=DIR scripts/mpirun.sh 4 build/bench/l4_bench
 *       [--size MiB] [--reps N] [--warmup N]
 *
 * Every rank is its own emulated node and protects one array of SIZE MiB of
 * doubles (a smooth field with noise in its low bits, as a simulation's state
 * looks to a lossless codec). Each repetition, in this order:
 *   ckpt     untimed: the field moves on one step (every block changes), then
 *            cairn_checkpoint(id, CAIRN_LEVEL_LOCAL), and its pruned
 *            generation removed (cairn removes it on a thread of its own);
 *   l4       timed: api_flush(ctx, id), what level 4 adds to a checkpoint
 *            (the generation materialized, sent to the aggregators,
 *            aggregated, written, the index last): exactly the call
 *            cairn_checkpoint makes for level 4 after the lower levels;
 *            then, untimed, the PFS generation it pruned removed (a thread
 *            of its own, off the critical path: the copies below start on a
 *            quiet machine, as the copy's own old files are removed
 *            untimed);
 *   copy     timed: every rank copies its node's files of generation ID
 *            (rank file and manifest) into DIR/copy/node<i>/ with read() and
 *            write(), then fsync() and close() (as FTI's level 4 copies its
 *            files to the PFS directory);
 *   checked  timed: the same copy into DIR/checked/node<i>/, each chunk read
 *            also hashed once (XXH3-64) before it is written: the least a
 *            copy that checks the bytes it makes durable does (level 4 checks
 *            every block of the rank file against its checksum before it
 *            writes it, and gives the PFS file checksums of its own).
 * Then RESTORE repetitions (the same count), each:
 *   wipe     untimed: every context finalized, every node-local directory of
 *            the job removed (a new allocation), new contexts;
 *   restore  timed: cairn_restart(CAIRN_LATEST) must return the newest
 *            generation, from the PFS alone; untimed: every byte compared;
 *   read     timed: every rank reads its copied files back into memory.
 * Each timed step is bracketed by barriers; its time is the slowest rank's.
 *
 * Then, with incremental checkpoints on (a new context, incr.mode = on,
 * incr.full_every unbounded), a full generation flushed, and RESTORE
 * repetitions (the same count), each:
 *   change   untimed: 1% of the field's 4 KiB blocks change (every 100th,
 *            a different one each time), cairn_checkpoint(id, LOCAL): an
 *            increment of the previous generation, which is on the PFS;
 *   incr     timed: api_flush(ctx, id): the changes go to the PFS as an
 *            increment (the previous generation is its parent there); the
 *            generation pfs.keep would prune after it (the full one before
 *            the parent) is removed first, untimed, as none is in "full";
 *   full     timed: api_flush_full(ctx, id): the same generation again,
 *            materialized and flushed full (what level 4 did before PFS
 *            increments), replacing the increment on the PFS.
 * The last full flush is restored from the PFS alone and compared once.
 *
 * Output, from rank 0 (medians over the measured repetitions):
 *   bench: l4.ckpt V s ratio=R vs copy (stored S MiB; copy C MiB)
 *   bench: l4.ckpt.checked V s ratio=R vs checked-copy
 *   bench: l4.restore V s ratio=R vs copy (stored S MiB; copy C MiB)
 *   bench: l4.incr V s ratio=R vs full (stored S MiB; full F MiB)
 * R is the median of the per-repetition ratios; S the bytes of the newest
 * PFS generation's files, C those of the copied files. Lines starting with
 * '#' are details.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mpi.h>
#include <xxhash.h>

#include "bench.h"
#include "bench_data.h"

#define MIB ((size_t)1 << 20)
#define MAX_REPS 100
#define IOBUF (4u << 20)

/* Level 4 alone (src/levels/pfs/flush.c; collective): linked from the static library. */
int api_flush(cairn_ctx *ctx, long id);
int api_flush_full(cairn_ctx *ctx, long id);
void api_trash_wait(cairn_ctx *ctx); /* pruned generations removed (trash.c) */

static void barrier(void)
{
    check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

static double slowest(double t)
{
    double m = 0;
    check_mpi(MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    return m;
}

static int rm_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    int rc = type == FTW_DP ? rmdir(path) : unlink(path);
    return rc != 0 && errno != ENOENT ? errno : 0;
}

static void wipe(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0 && errno == ENOENT)
        return;
    int rc = nftw(path, rm_entry, 32, FTW_DEPTH | FTW_PHYS);
    if (rc != 0 && !(rc < 0 && errno == ENOENT))
        die("removing %s: %s", path, strerror(rc > 0 ? rc : errno));
}

/* Call FN(path, name, size, ARG) for every regular file of DIR (not
 * recursive); returns the sum of their sizes. */
static uint64_t each_file(const char *dir,
                          void (*fn)(const char *path, const char *name, off_t size, void *arg),
                          void *arg)
{
    DIR *d = opendir(dir);
    if (!d)
        die("opendir %s: %s", dir, strerror(errno));
    uint64_t total = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (fn)
            fn(path, e->d_name, st.st_size, arg);
        total += (uint64_t)st.st_size;
    }
    closedir(d);
    return total;
}

typedef struct copy_to {
    const char *dir;
    uint8_t *buf;
    bool hash;        /* hash each chunk read (the checked copy) */
} copy_to;

/* The checked copy's hashes land here, so that none can be optimized away. */
static volatile uint64_t hash_sink;

/* each_file: copy SRC into the directory of ARG (a copy_to), synced. */
static void copy_one(const char *src, const char *name, off_t size, void *arg)
{
    const copy_to *c = arg;
    char dst[4096];
    snprintf(dst, sizeof dst, "%s/%s", c->dir, name);
    (void)size;
    int in = open(src, O_RDONLY), out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0)
        die("copy %s -> %s: %s", src, dst, strerror(errno));
    for (;;) {
        ssize_t n = read(in, c->buf, IOBUF);
        if (n < 0)
            die("read %s: %s", src, strerror(errno));
        if (n == 0)
            break;
        if (c->hash)
            hash_sink ^= XXH3_64bits(c->buf, (size_t)n);
        for (ssize_t w = 0; w < n;) {
            ssize_t k = write(out, c->buf + w, (size_t)(n - w));
            if (k < 0)
                die("write %s: %s", dst, strerror(errno));
            w += k;
        }
    }
    if (fsync(out) != 0 || close(out) != 0)
        die("closing %s: %s", dst, strerror(errno));
    close(in);
}

/* Copy every regular file of directory FROM into directory TO (created),
 * hashing what it reads if HASH; returns the bytes copied. */
static uint64_t copy_dir(const char *from, const char *to, uint8_t *buf, bool hash)
{
    if (mkdir(to, 0700) != 0 && errno != EEXIST)
        die("mkdir %s: %s", to, strerror(errno));
    copy_to c = {to, buf, hash};
    return each_file(from, copy_one, &c);
}

/* each_file: read PATH whole into a fresh buffer, then free it. */
static void read_one(const char *path, const char *name, off_t size, void *arg)
{
    (void)name, (void)arg;
    int fd = open(path, O_RDONLY);
    uint8_t *p = malloc((size_t)size + 1);
    if (fd < 0 || !p)
        die("reading %s: %s", path, strerror(errno));
    for (off_t off = 0; off < size;) {
        ssize_t n = read(fd, p + off, (size_t)(size - off));
        if (n <= 0)
            die("read %s: %s", path, n < 0 ? strerror(errno) : "short");
        off += n;
    }
    close(fd);
    free(p);
}

/* Read every regular file of DIR into memory (one buffer per file, freed). */
static uint64_t read_dir(const char *dir) { return each_file(dir, read_one, NULL); }

/* Bytes of the regular files under DIR (not recursive). */
static uint64_t dir_bytes(const char *dir) { return each_file(dir, NULL, NULL); }

static void print_list(const char *what, const double *v, int n)
{
    printf("#   %-8s median %8.4f s  (", what, median(v, n));
    for (int i = 0; i < n; i++)
        printf("%s%.4f", i ? " " : "", v[i]);
    printf(")\n");
}

static cairn_ctx *open_ctx(double *u, size_t n)
{
    cairn_ctx *ctx = NULL;
    check_cairn(cairn_init(MPI_COMM_WORLD, NULL, &ctx), ctx, "cairn_init");
    check_cairn(cairn_protect(ctx, "field", u, CAIRN_DOUBLE, n, 0, NULL), ctx, "cairn_protect");
    return ctx;
}

/* Change 1% of U's 4 KiB blocks: every 100th, starting at block K % 100. */
static void change_one_percent(double *u, size_t n, long k)
{
    size_t per = 4096 / sizeof *u;
    for (size_t b = (size_t)(k % 100); b * per < n; b += 100)
        for (size_t i = b * per; i < (b + 1) * per && i < n; i++)
            u[i] += 1e-3;
}

/* Bytes of PFS generation ID of the job (rank 0; 0 elsewhere). */
static uint64_t pfs_gen_bytes(int rank, const char *pfs_job, long id)
{
    char g[3000];
    snprintf(g, sizeof g, "%s/gen-%ld", pfs_job, id);
    return rank == 0 ? dir_bytes(g) : 0;
}

/* The incremental phase (see the top): T_INC and T_FULL get REPS times,
 * *S_INC and *S_FULL the stored bytes of the last generation each way. */
static void incr_phase(double *u, size_t n, int rank, long reps, long warmup, const char *pfs_job,
                       double *t_inc, double *t_full, uint64_t *s_inc, uint64_t *s_full)
{
    setenv("CAIRN_INCR", "on", 1);
    setenv("CAIRN_INCR_FULL_EVERY", "1000000", 1);
    double *ref = xmalloc(n * sizeof *ref);
    cairn_ctx *ctx = open_ctx(u, n);
    long id = 1000;
    bench_field(u, n, rank, id);
    check_cairn(cairn_checkpoint(ctx, id, CAIRN_LEVEL_LOCAL), ctx, "cairn_checkpoint");
    check_cairn(api_flush(ctx, id), ctx, "api_flush");
    for (long r = 0; r < warmup + reps; r++) {
        change_one_percent(u, n, r);
        check_cairn(cairn_checkpoint(ctx, ++id, CAIRN_LEVEL_LOCAL), ctx, "cairn_checkpoint");
        if (rank == 0) { /* what pfs.keep = 2 prunes after it (a full one): not timed */
            char old[3000];
            snprintf(old, sizeof old, "%s/gen-%ld", pfs_job, id - 2);
            wipe(old);
        }
        barrier();
        double t0 = now();
        check_cairn(api_flush(ctx, id), ctx, "api_flush");
        double ti = slowest(now() - t0);
        uint64_t si = pfs_gen_bytes(rank, pfs_job, id);
        barrier();
        t0 = now();
        check_cairn(api_flush_full(ctx, id), ctx, "api_flush_full");
        double tf = slowest(now() - t0);
        if (r >= warmup) {
            t_inc[r - warmup] = ti;
            t_full[r - warmup] = tf;
            *s_inc = si;
            *s_full = pfs_gen_bytes(rank, pfs_job, id);
        }
    }
    memcpy(ref, u, n * sizeof *u);
    check_cairn(cairn_finalize(ctx), NULL, "cairn_finalize");
    memset(u, 0, n * sizeof *u);
    ctx = open_ctx(u, n);
    long got = -1;
    check_cairn(cairn_restart(ctx, CAIRN_LATEST, &got), ctx, "cairn_restart");
    if (got != id || memcmp(u, ref, n * sizeof *u) != 0)
        die("incremental phase: restored generation %ld (expected %ld) differs", got, id);
    check_cairn(cairn_finalize(ctx), NULL, "cairn_finalize");
    free(ref);
}

int main(int argc, char **argv)
{
    bench_prog = "l4_bench";
    long size_mib = 64, reps = 5, warmup = 1;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--size") == 0)
            size_mib = parse_long(argv[++i], "--size", 1, 1 << 20);
        else if (i + 1 < argc && strcmp(argv[i], "--reps") == 0)
            reps = parse_long(argv[++i], "--reps", 1, MAX_REPS);
        else if (i + 1 < argc && strcmp(argv[i], "--warmup") == 0)
            warmup = parse_long(argv[++i], "--warmup", 0, MAX_REPS);
        else
            die("usage: l4_bench [--size MiB] [--reps N] [--warmup N]");
    }
    MPI_Init(&argc, &argv);
    int rank = 0, np = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    bench_rank = rank;
    const char *base = getenv("CAIRN_BASE"), *job = getenv("CAIRN_JOB"),
               *pfs = getenv("CAIRN_PFS_DIR");
    if (!base || !job || !pfs || !pfs[0])
        die("CAIRN_BASE, CAIRN_JOB and CAIRN_PFS_DIR must be set");
    char job_dir[2048], node_dir[2560], copy_root[2048], copy_dir_path[2560], pfs_job[2560];
    snprintf(job_dir, sizeof job_dir, "%s/cairn-%u/%s", base, (unsigned)getuid(), job);
    snprintf(node_dir, sizeof node_dir, "%s/node%d", job_dir, rank);
    snprintf(copy_root, sizeof copy_root, "%s/copy", pfs);
    snprintf(copy_dir_path, sizeof copy_dir_path, "%s/node%d", copy_root, rank);
    char checked_root[2048], checked_path[2560];
    snprintf(checked_root, sizeof checked_root, "%s/checked", pfs);
    snprintf(checked_path, sizeof checked_path, "%s/node%d", checked_root, rank);
    snprintf(pfs_job, sizeof pfs_job, "%s/cairn-%u/%s", pfs, (unsigned)getuid(), job);
    if (rank == 0 && ((mkdir(copy_root, 0700) != 0 && errno != EEXIST) ||
                      (mkdir(checked_root, 0700) != 0 && errno != EEXIST)))
        die("mkdir %s or %s: %s", copy_root, checked_root, strerror(errno));

    size_t n = (size_t)size_mib * MIB / sizeof(double);
    double *u = xmalloc(n * sizeof *u), *ref = xmalloc(n * sizeof *ref);
    uint8_t *buf = xmalloc(IOBUF);
    cairn_ctx *ctx = open_ctx(u, n);
    double t_l4[MAX_REPS], t_copy[MAX_REPS], t_checked[MAX_REPS], t_rest[MAX_REPS],
        t_read[MAX_REPS];
    uint64_t copied = 0, stored = 0;
    long id = 0;
    for (long r = 0; r < warmup + reps; r++) {
        bench_field(u, n, rank, ++id);
        check_cairn(cairn_checkpoint(ctx, id, CAIRN_LEVEL_LOCAL), ctx, "cairn_checkpoint");
        api_trash_wait(ctx);
        barrier();
        double t0 = now();
        check_cairn(api_flush(ctx, id), ctx, "api_flush");
        double tl = slowest(now() - t0);
        api_trash_wait(ctx);
        char gen[3000], to[2700];
        snprintf(gen, sizeof gen, "%s/gen-%ld", node_dir, id);
        snprintf(to, sizeof to, "%s", copy_dir_path);
        wipe(to);
        barrier();
        t0 = now();
        uint64_t c = copy_dir(gen, to, buf, false);
        double tc = slowest(now() - t0);
        check_mpi(MPI_Allreduce(&c, &copied, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD), "sum");
        wipe(checked_path);
        barrier();
        t0 = now();
        copy_dir(gen, checked_path, buf, true);
        double th = slowest(now() - t0);
        if (r >= warmup) {
            t_l4[r - warmup] = tl;
            t_copy[r - warmup] = tc;
            t_checked[r - warmup] = th;
        }
    }
    memcpy(ref, u, n * sizeof *u);
    if (rank == 0) {
        char g[3000];
        snprintf(g, sizeof g, "%s/gen-%ld", pfs_job, id);
        stored = dir_bytes(g);
    }
    for (long r = 0; r < warmup + reps; r++) {
        check_cairn(cairn_finalize(ctx), NULL, "cairn_finalize");
        barrier();
        if (rank == 0)
            wipe(job_dir);
        barrier();
        memset(u, 0, n * sizeof *u);
        ctx = open_ctx(u, n);
        barrier();
        double t0 = now();
        long got = -1;
        check_cairn(cairn_restart(ctx, CAIRN_LATEST, &got), ctx, "cairn_restart");
        double tr = slowest(now() - t0);
        if (got != id)
            die("cairn_restart restored generation %ld, expected %ld", got, id);
        if (memcmp(u, ref, n * sizeof *u) != 0)
            die("restored bytes differ from the checkpointed ones");
        barrier();
        t0 = now();
        read_dir(copy_dir_path);
        double tb = slowest(now() - t0);
        if (r >= warmup) {
            t_rest[r - warmup] = tr;
            t_read[r - warmup] = tb;
        }
    }
    check_cairn(cairn_finalize(ctx), NULL, "cairn_finalize");
    barrier();
    if (rank == 0)
        wipe(job_dir), wipe(pfs_job);
    barrier();
    double t_inc[MAX_REPS], t_full[MAX_REPS];
    uint64_t s_inc = 0, s_full = 0;
    incr_phase(u, n, rank, reps, warmup, pfs_job, t_inc, t_full, &s_inc, &s_full);
    if (rank == 0) {
        int k = (int)reps;
        printf("# l4: %d ranks on %d emulated nodes, %ld MiB of doubles each, %ld repetitions "
               "(+%ld warm-up)\n", np, np, size_mib, reps, warmup);
        print_list("l4", t_l4, k);
        print_list("copy", t_copy, k);
        print_list("checked", t_checked, k);
        print_list("restore", t_rest, k);
        print_list("read", t_read, k);
        double sm = (double)stored / (double)MIB, cm = (double)copied / (double)MIB;
        printf("bench: l4.ckpt %.4f s ratio=%.3f vs copy (stored %.1f MiB; copy %.1f MiB)\n",
               median(t_l4, k), med_ratio(t_l4, t_copy, k), sm, cm);
        printf("bench: l4.ckpt.checked %.4f s ratio=%.3f vs checked-copy (a copy that hashes "
               "every byte it copies once)\n", median(t_l4, k), med_ratio(t_l4, t_checked, k));
        printf("bench: l4.restore %.4f s ratio=%.3f vs copy (stored %.1f MiB; copy %.1f MiB)\n",
               median(t_rest, k), med_ratio(t_rest, t_read, k), sm, cm);
        print_list("incr", t_inc, k);
        print_list("full", t_full, k);
        printf("bench: l4.incr %.4f s ratio=%.3f vs full (stored %.2f MiB; full %.1f MiB)\n",
               median(t_inc, k), med_ratio(t_inc, t_full, k), (double)s_inc / (double)MIB,
               (double)s_full / (double)MIB);
    }
    free(u);
    free(ref);
    free(buf);
    MPI_Finalize();
    return 0;
}
