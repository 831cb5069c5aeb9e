/*
 * l4sync_bench.c - a synchronous level-4 checkpoint, from cairn_checkpoint
 * to its return, against the write FTI's level 4 does: every rank writing
 * its bytes straight to a file of its own in the same PFS directory, hashing
 * them as it goes (issue 31).
 *
 *   CAIRN_RANKS_PER_NODE=K CAIRN_PFS_DIR=DIR scripts/mpirun.sh NP build/bench/l4sync_bench
 *       --name NAME [--size MiB] [--reps N] [--warmup N] [--async [--gap S]]
 *
 * Every rank protects one array of SIZE MiB of doubles (bench_field: smooth,
 * with noise in its low bits). The codec and every other setting come from
 * the environment (CAIRN_CODEC=none: compression off). Each repetition, the
 * two timed steps interleaved so that both see the same machine, and
 * (synchronous) each of them first in every other repetition: on this kind
 * of virtual machine the step that comes first after the frees below costs
 * up to twice the CPU of the one after it, and a fixed order gave the
 * second place to level 4 every time:
 *   step    untimed: the field moves on one step; the direct files of the
 *           repetition before removed, and the generations cairn pruned
 *           (a thread of cairn's own) waited for;
 *   warm    untimed, before each timed step: every rank touches and frees
 *           2.25 times its array (level 1 and the PFS copy, with room:
 *           warm_memory), so that both steps find free memory in the same
 *           state;
 *   direct  timed: every rank writes its array to DIR/direct/rank-<r> in
 *           4 MiB pieces, each hashed (XXH3-64) before it is written, then
 *           fsync() and close();
 *   l4      timed: cairn_checkpoint(ctx, id, CAIRN_LEVEL_PFS).
 * Each timed step is bracketed by barriers; its time is the slowest rank's.
 * The last generation is restored from the PFS alone (a new context after
 * every node directory is wiped; with --async every generation directory of
 * the nodes) and compared bit for bit, so that a fast figure of a wrong copy
 * cannot pass.
 *
 * With --async (one cairnd per node serving the job, started by the caller),
 * l4 is instead the time from cairn_checkpoint's return (the daemons take the
 * generation from level 1) until its PFS index exists, while every rank goes
 * on computing (passes of a 3-point stencil over an array of its own, 8 MiB);
 * rank 0 looks for the index between passes and the ranks agree on it.
 * --gap S: before each checkpoint the ranks compute for S seconds (an
 * application computes between its checkpoints; the daemons' share of the
 * host over that time is what their burst spends: daemon.burst). 0, the
 * default: checkpoints back to back, the daemons working at their share.
 *
 * Output, from rank 0 (medians over the measured repetitions):
 *   bench: NAME V s ratio=R vs direct (stored S MiB on the PFS; direct D MiB)
 * R is the median of the per-repetition ratios l4 / direct.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>
#include <mpi.h>
#include <xxhash.h>

#include "bench.h"
#include "bench_data.h"

#define MAX_REPS 100
#define PIECE (4u << 20)

void api_trash_wait(cairn_ctx *ctx); /* pruned generations removed (trash.c) */

/* The hashes land here, so that none can be optimized away. */
static volatile uint64_t hash_sink;

static double slowest(double t)
{
    double m = 0;
    check_mpi(MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    return m;
}

/* FTI's level 4 in its plainest form: PATH gets BUF's LEN bytes, hashed, synced. */
static void direct_write(const char *path, const uint8_t *buf, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        die("open %s: %s", path, strerror(errno));
    for (size_t off = 0; off < len;) {
        size_t n = len - off < PIECE ? len - off : PIECE;
        hash_sink ^= XXH3_64bits(buf + off, n);
        for (size_t w = 0; w < n;) {
            ssize_t k = write(fd, buf + off + w, n - w);
            if (k < 0)
                die("write %s: %s", path, strerror(errno));
            w += (size_t)k;
        }
        off += n;
    }
    if (fsync(fd) != 0 || close(fd) != 0)
        die("closing %s: %s", path, strerror(errno));
}

/* LEN bytes of anonymous memory touched and given back. A virtual machine
 * that reports free pages to its host (virtio-balloon free page reporting:
 * this bench's machines, within seconds of a free) makes the first touch of
 * a reported page cost a fault in the host, about a second per GiB there,
 * more than a tmpfs write. Which step met such pages depended on what was
 * freed last (the direct file just before its write; cairn's pruned
 * generation seconds before), not on what either does: 8 x 256 MiB on tmpfs
 * measured 3-4x either way. Touched now, the pages the step allocates next
 * are the host's already. On other machines this costs a memset. */
static void warm_memory(size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        die("mmap %zu bytes: %s", len, strerror(errno));
    memset(p, 1, len);
    munmap(p, len);
}

/* Bytes of the regular files below DIR (recursively). */
static uint64_t tree_bytes(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    uint64_t total = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) != 0)
            continue;
        total += S_ISDIR(st.st_mode) ? tree_bytes(path) : S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
    }
    closedir(d);
    return total;
}

/* One pass of a 3-point stencil over W[0..N-1] (the application computing). */
static void stencil(double *w, size_t n)
{
    for (size_t i = 1; i + 1 < n; i++)
        w[i] = 0.25 * w[i - 1] + 0.5 * w[i] + 0.25 * w[i + 1];
}

/* The array the application computes on: WORK_N doubles (8 MiB). */
#define WORK_N ((8u << 20) / sizeof(double))
static double *work_array(void)
{
    double *w = xmalloc(WORK_N * sizeof *w);
    for (size_t i = 0; i < WORK_N; i++)
        w[i] = (double)(i % 1000);
    return w;
}

/* --async: from now until PATH (generation ID's PFS index) exists, every rank
 * computing; the seconds it took. */
static double compute_until(const char *path, long id)
{
    size_t n = WORK_N;
    double *w = work_array(), t0 = now();
    for (int done = 0; !done;) {
        stencil(w, n);
        struct stat st;
        done = bench_rank == 0 && stat(path, &st) == 0;
        check_mpi(MPI_Bcast(&done, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
        if (!done && now() - t0 > 600)
            die("generation %ld's PFS index did not appear in 600 s", id);
    }
    free(w);
    return now() - t0;
}

/* --async --gap S: every rank computing for S seconds (rank 0's clock). */
static void compute_for(double s)
{
    size_t n = WORK_N;
    double *w = work_array(), t0 = now();
    for (int done = s <= 0; !done;) {
        stencil(w, n);
        done = bench_rank == 0 && now() - t0 >= s;
        check_mpi(MPI_Bcast(&done, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
    }
    free(w);
}

static cairn_ctx *open_ctx(double *u, size_t n)
{
    cairn_ctx *ctx = NULL;
    check_cairn(cairn_init(MPI_COMM_WORLD, NULL, &ctx), ctx, "cairn_init");
    check_cairn(cairn_protect(ctx, "field", u, CAIRN_DOUBLE, n, 0, NULL), ctx, "cairn_protect");
    return ctx;
}

int main(int argc, char **argv)
{
    bench_prog = "l4sync_bench";
    check_mpi(MPI_Init(&argc, &argv), "MPI_Init");
    int rank = 0, np = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    bench_rank = rank;
    long size_mib = 64, reps = 5, warmup = 1;
    const char *name = NULL;
    bool async = false;
    double gap = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--size") && i + 1 < argc)
            size_mib = parse_long(argv[++i], "--size", 1, 1 << 20);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = parse_long(argv[++i], "--reps", 1, MAX_REPS);
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
            warmup = parse_long(argv[++i], "--warmup", 0, MAX_REPS);
        else if (!strcmp(argv[i], "--name") && i + 1 < argc)
            name = argv[++i];
        else if (!strcmp(argv[i], "--async"))
            async = true;
        else if (!strcmp(argv[i], "--gap") && i + 1 < argc)
            gap = (double)parse_long(argv[++i], "--gap", 0, 3600);
        else
            die("usage: l4sync_bench --name NAME [--size MiB] [--reps N] [--warmup N] [--async "
                "[--gap SECONDS]]");
    }
    const char *pfs = getenv("CAIRN_PFS_DIR"), *base = getenv("CAIRN_BASE");
    if (!name || !pfs || !*pfs || !base || !*base)
        die("--name, CAIRN_PFS_DIR and CAIRN_BASE are needed");
    char ddir[4096], dpath[4200], jobdir[8600];
    snprintf(ddir, sizeof ddir, "%s/direct", pfs);
    snprintf(dpath, sizeof dpath, "%s/rank-%d", ddir, rank);
    if (rank == 0 && mkdir(ddir, 0700) != 0 && errno != EEXIST)
        die("mkdir %s: %s", ddir, strerror(errno));

    size_t n = (size_t)size_mib * MIB / sizeof(double);
    size_t bytes = n * sizeof(double), warm = 2 * bytes + bytes / 4; /* level 1 and the PFS */
    double *u = xmalloc(bytes);
    cairn_ctx *ctx = open_ctx(u, n);
    double t_l4[MAX_REPS], t_direct[MAX_REPS], t_call[MAX_REPS];
    long id = 0;
    char gdir[4400], ipath[4500];
    const char *job = getenv("CAIRN_JOB") ? getenv("CAIRN_JOB") : "";
    for (long r = 0; r < warmup + reps; r++) {
        bench_field(u, n, rank, ++id);
        unlink(dpath);
        api_trash_wait(ctx);
        /* Synchronous: the two steps in turn first (ABBA), so that neither
         * always meets the machine as the other left it. */
        bool l4_first = !async && r % 2 == 1;
        double td = 0, tl = 0, tc = 0;
        for (int step = 0; step < 2; step++) {
            bool direct_now = (step == 0) != l4_first;
            warm_memory(warm);
            check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
            double t0 = now();
            if (direct_now) {
                direct_write(dpath, (const uint8_t *)u, n * sizeof *u);
                td = slowest(now() - t0);
                if (async)
                    compute_for(gap);
            } else {
                check_cairn(cairn_checkpoint(ctx, id, CAIRN_LEVEL_PFS), ctx, "cairn_checkpoint");
                tl = tc = slowest(now() - t0);
                if (async) {
                    snprintf(ipath, sizeof ipath, "%s/cairn-%u/%s/gen-%ld/index", pfs,
                             (unsigned)geteuid(), job, id);
                    tl = compute_until(ipath, id);
                }
            }
        }
        if (r >= warmup)
            t_direct[r - warmup] = td, t_l4[r - warmup] = tl, t_call[r - warmup] = tc;
    }
    api_trash_wait(ctx);
    unlink(dpath);
    check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    snprintf(gdir, sizeof gdir, "%s/cairn-%u/%s/gen-%ld", pfs, (unsigned)geteuid(), job, id);
    uint64_t stored = rank == 0 ? tree_bytes(gdir) : 0;
    if (rank == 0 && stored == 0)
        die("nothing on the PFS at %s", gdir);

    /* The last generation, from the PFS alone, bit for bit. */
    double *want = xmalloc(n * sizeof *want);
    memcpy(want, u, n * sizeof *u);
    check_cairn(cairn_finalize(ctx), NULL, "cairn_finalize");
    check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    if (async) /* the daemons' own files stay: only the generations go */
        snprintf(jobdir, sizeof jobdir, "rm -rf '%s'/cairn-%u/'%s'/node*/gen-*", base,
                 (unsigned)geteuid(), job);
    else
        snprintf(jobdir, sizeof jobdir, "rm -rf '%s'/*", base);
    if (rank == 0 && system(jobdir) != 0)
        die("could not wipe %s", base);
    check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    memset(u, 0, n * sizeof *u);
    ctx = open_ctx(u, n);
    long got = -1;
    check_cairn(cairn_restart(ctx, CAIRN_LATEST, &got), ctx, "cairn_restart from the PFS");
    if (got != id || memcmp(u, want, n * sizeof *u) != 0)
        die("the restart from the PFS gave generation %ld, %s", got,
            got == id ? "with different bytes" : "not the last one");
    check_cairn(cairn_finalize(ctx), NULL, "cairn_finalize");

    if (rank == 0) {
        double m_l4 = median(t_l4, (int)reps);
        printf("bench: %s %.4f s ratio=%.3f vs direct (stored %.1f MiB on the PFS, the newest generation; direct "
               "%.1f MiB; %d ranks x %ld MiB)\n",
               name, m_l4, med_ratio(t_l4, t_direct, (int)reps), (double)stored / MIB,
               (double)np * (double)size_mib, np, size_mib);
        printf("# %s: direct median %.4f s%s", name, median(t_direct, (int)reps),
               async ? "" : "\n");
        if (async)
            printf("; the checkpoint call blocked %.4f s (median), the ranks computing while "
                   "the daemons raise and flush\n", median(t_call, (int)reps));
    }
    free(want);
    free(u);
    MPI_Finalize();
    return 0;
}
