/*
 * l3_bench.c - level-3 (erasure) checkpoint time against level 1, and the
 * decode-based rebuild of lost nodes against the encode part of a level-3
 * checkpoint, both measured in the same run.
 *
 *   CAIRN_RANKS_PER_NODE=1 CAIRN_SET_SIZE=10 CAIRN_EC_M=2 \
 *   scripts/mpirun.sh 10 build/bench/l3_bench [--size MiB] [--reps N] [--warmup N]
 *       [--lost N] [--verify-every N]
 *
 * Every rank is its own emulated node (CAIRN_RANKS_PER_NODE=1, so rank i is
 * node<i>, whose directory is $CAIRN_BASE/cairn-<uid>/$CAIRN_JOB/node<i>) and
 * protects one buffer of SIZE MiB (xorshift data, one CAIRN_UINT8 variable).
 * With NP = set_size = 10 and m = 2 the nodes form one encoding set, k = 8.
 * Each repetition, always in this order:
 *   l1       cairn_checkpoint(id++, CAIRN_LEVEL_LOCAL);
 *   l3       cairn_checkpoint(id++, CAIRN_LEVEL_ERASURE) (level 1 + parity);
 *   rebuild  untimed: every rank finalizes its context (a lost node's process
 *            dies with it; a context cannot rebuild into a node directory
 *            wiped while it holds it open), rank 0 wipes the directories of
 *            nodes 1..LOST (rm -rf; the other ranks wait at a barrier), every
 *            rank opens a new context (the restarted job on replacement
 *            nodes, with empty node directories); timed:
 *            cairn_rebuild(ctx, CAIRN_LATEST, &got), which must return 0 and
 *            got == the level-3 generation. The lost nodes get back their
 *            rank files, manifest and parity.
 * Each timed call is bracketed by barriers; its time is the slowest rank's.
 * Before each checkpoint one word of every 4 KiB page changes, so both
 * checkpoints are full ones even once incremental checkpoints exist. After
 * each checkpoint the ranks sleep 200 ms (untimed) so the background removal
 * of pruned generations does not run into the next timed call.
 *
 * Encode time is defined as l3 - l1 of the same repetition: what level 3
 * adds to a level-1 checkpoint (the ring encode and the parity files).
 *
 * Verification (untimed): after the rebuild of the warm-up repetitions,
 * every VERIFY-th measured one and the last one, the lost nodes must hold
 * their rank file again, then every rank clears its buffer and
 * cairn_restart(CAIRN_LATEST) must return the level-3 generation with every
 * byte equal to the buffer that was checkpointed (ranks 1..LOST read the
 * decoded files).
 *
 * Output, from rank 0 (medians over the measured repetitions; a ratio is
 * the median of the per-repetition ratios):
 *   bench: l3.ckpt V s ratio=R vs l1                 R = l3 / l1
 *   bench: ec.decode.k<K>m<LOST> V s ratio=R vs encode   R = rebuild / (l3 - l1)
 * Lines starting with '#' are details for people.
 */
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "bench.h"
#include "cairn.h"

#define MIB ((size_t)1 << 20)
#define MAX_REPS 1000
#define SETTLE_US 200000 /* let background pruning finish between timed calls */

enum { T_L1, T_L3, T_REBUILD, N_TIMES };

static int g_rank = 0;

static void barrier(void)
{
    check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

static void usage(void)
{
    fprintf(stderr, "usage: l3_bench [--size MiB] [--reps N] [--warmup N] [--lost N]\n"
                    "                [--verify-every N]\n");
}

/* An integer environment variable, or DEF when unset or empty. */
static long env_long(const char *name, long def)
{
    const char *s = getenv(name);
    if (s == NULL || s[0] == '\0')
        return def;
    return parse_long(s, name, 0, 1L << 30);
}

static int rm_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    int rc = type == FTW_DP ? rmdir(path) : unlink(path);
    /* A background pruning thread of the node's own rank may remove entries
     * under our feet: a vanished entry is already wiped. */
    if (rc != 0 && errno != ENOENT)
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
            continue; /* re-check: gone, or an entry raced away */
        die("removing %s: %s", path, strerror(rc > 0 ? rc : errno));
    }
    die("removing %s: still there after 10 attempts", path);
}

static void print_list(const char *what, const double *v, int n, const char *unit)
{
    printf("#   %-9s median %8.4f %s  (", what, median(v, n), unit);
    for (int i = 0; i < n; i++)
        printf("%s%.4f", i ? " " : "", v[i]);
    printf(")\n");
}

/* A generation id all ranks agree on, or a failure. */
static void check_id(long got, long want, const char *what)
{
    if (got != want)
        die("%s returned generation %ld, expected %ld", what, got, want);
}

/* Untimed: the lost nodes hold their rank file again, and a restart brings
 * back exactly the checkpointed bytes. */
static void verify(cairn_ctx *ctx, uint8_t *data, uint8_t *ref, size_t size, long want,
                   const char *job_dir, long lost)
{
    int bad = 0;
    if (g_rank >= 1 && g_rank <= lost) {
        char path[4608];
        snprintf(path, sizeof path, "%s/node%d/gen-%ld/rank-%d.ckpt", job_dir, g_rank, want,
                 g_rank);
        struct stat st;
        if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
            fprintf(stderr, "l3_bench: rank %d: %s not rebuilt: %s\n", g_rank, path,
                    strerror(errno));
            bad = 1;
        }
    }
    memcpy(ref, data, size);
    memset(data, 0, size);
    long got = -1;
    check_cairn(cairn_restart(ctx, CAIRN_LATEST, &got), ctx, "cairn_restart");
    check_id(got, want, "cairn_restart");
    if (memcmp(data, ref, size) != 0) {
        size_t i = 0;
        while (i < size && data[i] == ref[i])
            i++;
        fprintf(stderr, "l3_bench: rank %d: restored data differs at byte %zu\n", g_rank, i);
        bad = 1;
    }
    int any = 0;
    check_mpi(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    if (any)
        die("verification of generation %ld failed", want);
}

/* Collective: a context protecting DATA, whose node directory must be
 * JOB_DIR/node<rank> (the directory the benchmark wipes). */
static cairn_ctx *open_ctx(uint8_t *data, size_t size, const char *job_dir)
{
    cairn_ctx *ctx = NULL;
    check_cairn(cairn_init(MPI_COMM_WORLD, NULL, &ctx), NULL, "cairn_init");
    check_cairn(cairn_protect(ctx, "data", data, CAIRN_UINT8, size, 0, NULL), ctx,
                "cairn_protect");
    char mine[4608];
    snprintf(mine, sizeof mine, "%s/node%d", job_dir, g_rank);
    struct stat st;
    int bad = lstat(mine, &st) != 0 || !S_ISDIR(st.st_mode), any = 0;
    check_mpi(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    if (any)
        die("node directory %s (or another rank's) not found after cairn_init", mine);
    return ctx;
}

int main(int argc, char **argv)
{
    long size_mib = 16, reps = 5, warmup = 1, lost = 2, verify_every = 2;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage();
            return 0;
        } else if (i + 1 < argc && strcmp(a, "--size") == 0) {
            size_mib = parse_long(argv[++i], a, 1, 1L << 20);
        } else if (i + 1 < argc && strcmp(a, "--reps") == 0) {
            reps = parse_long(argv[++i], a, 1, MAX_REPS);
        } else if (i + 1 < argc && strcmp(a, "--warmup") == 0) {
            warmup = parse_long(argv[++i], a, 0, 100);
        } else if (i + 1 < argc && strcmp(a, "--lost") == 0) {
            lost = parse_long(argv[++i], a, 1, 32);
        } else if (i + 1 < argc && strcmp(a, "--verify-every") == 0) {
            verify_every = parse_long(argv[++i], a, 0, MAX_REPS);
        } else {
            usage();
            die("unknown or incomplete option '%s'", a);
        }
    }

    check_mpi(MPI_Init(&argc, &argv), "MPI_Init");
    int nranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    bench_rank = g_rank;
    bench_prog = "l3_bench";
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    /* The layout this benchmark measures: one rank per node, one set. */
    long rpn = env_long("CAIRN_RANKS_PER_NODE", 0);
    long set_size = env_long("CAIRN_SET_SIZE", 8), m = env_long("CAIRN_EC_M", 2);
    if (rpn != 1)
        die("needs CAIRN_RANKS_PER_NODE=1 (each rank its own emulated node), got %ld", rpn);
    if (set_size < nranks)
        die("needs one encoding set of all %d nodes: CAIRN_SET_SIZE=%ld is smaller", nranks,
            set_size);
    if (lost > m || lost >= nranks)
        die("--lost %ld: a set of %d nodes with m = %ld rebuilds at most %ld", lost, nranks, m,
            m < nranks - 1 ? m : (long)nranks - 1);
    const char *job = getenv("CAIRN_JOB");
    if (job == NULL || job[0] == '\0')
        die("needs CAIRN_JOB (the wiped directories are named after it)");
    const char *base = getenv("CAIRN_BASE");
    if (base == NULL || base[0] == '\0')
        base = "/dev/shm";
    char job_dir[4352];
    int n = snprintf(job_dir, sizeof job_dir, "%s/cairn-%u/%s", base, (unsigned)geteuid(), job);
    if (n < 0 || (size_t)n >= sizeof job_dir)
        die("CAIRN_BASE path too long");

    if ((unsigned long)size_mib > SIZE_MAX / MIB)
        die("--size %ld MiB does not fit in memory", size_mib);
    size_t size = (size_t)size_mib * MIB;
    uint8_t *data = malloc(size);
    uint8_t *ref = malloc(size);
    if (data == NULL || ref == NULL)
        die("cannot allocate 2 x %ld MiB", size_mib);
    fill(data, size, g_rank);
    memset(ref, 0xA5, size); /* pre-fault */

    cairn_ctx *ctx = open_ctx(data, size, job_dir);

    long total = warmup + reps;
    double *local = calloc((size_t)(N_TIMES * total), sizeof *local);
    double *worst = calloc((size_t)(N_TIMES * total), sizeof *worst);
    if (local == NULL || worst == NULL)
        die("out of memory");

    long id = 0, salt = 0, verified = 0;
    for (long r = 0; r < total; r++) {
        double *t = local + N_TIMES * r;
        int rc;

        perturb(data, size, salt++);
        barrier();
        double t0 = now();
        rc = cairn_checkpoint(ctx, id, CAIRN_LEVEL_LOCAL);
        t[T_L1] = now() - t0;
        check_cairn(rc, ctx, "cairn_checkpoint level 1");
        id++;
        usleep(SETTLE_US);
        barrier();

        perturb(data, size, salt++);
        barrier();
        t0 = now();
        rc = cairn_checkpoint(ctx, id, CAIRN_LEVEL_ERASURE);
        t[T_L3] = now() - t0;
        check_cairn(rc, ctx, "cairn_checkpoint level 3");
        long l3_id = id++;
        usleep(SETTLE_US);
        barrier();

        /* The lost nodes' processes die with them: the job ends, the node
         * directories are wiped, a new run starts on replacement nodes. */
        check_cairn(cairn_finalize(ctx), NULL, "cairn_finalize");
        ctx = NULL;
        barrier();
        if (g_rank == 0) {
            for (long x = 1; x <= lost; x++) {
                char path[4608];
                snprintf(path, sizeof path, "%s/node%ld", job_dir, x);
                wipe(path);
            }
        }
        barrier();
        ctx = open_ctx(data, size, job_dir);
        barrier();
        long got = -1;
        t0 = now();
        rc = cairn_rebuild(ctx, CAIRN_LATEST, &got);
        t[T_REBUILD] = now() - t0;
        check_cairn(rc, ctx, "cairn_rebuild");
        check_id(got, l3_id, "cairn_rebuild");
        barrier();

        long mr = r - warmup; /* measured repetition, < 0 in warm-up */
        if (mr < 0 || r == total - 1 || (verify_every > 0 && mr % verify_every == 0)) {
            verify(ctx, data, ref, size, l3_id, job_dir, lost);
            verified++;
        }
        usleep(SETTLE_US);
        barrier();
    }

    check_mpi(MPI_Reduce(local, worst, N_TIMES * (int)total, MPI_DOUBLE, MPI_MAX, 0,
                         MPI_COMM_WORLD),
              "MPI_Reduce");

    if (g_rank == 0) {
        int nr = (int)reps;
        double l1[MAX_REPS], l3[MAX_REPS], enc[MAX_REPS], reb[MAX_REPS];
        double r_l3[MAX_REPS], r_dec[MAX_REPS];
        int enc_bad = 0;
        for (int r = 0; r < nr; r++) {
            const double *t = worst + N_TIMES * (warmup + r);
            l1[r] = t[T_L1];
            l3[r] = t[T_L3];
            reb[r] = t[T_REBUILD];
            enc[r] = l3[r] - l1[r];
            if (enc[r] <= 0) {
                enc_bad++;
                enc[r] = 1e-9;
            }
            r_l3[r] = l3[r] / (l1[r] > 0 ? l1[r] : 1e-9);
            r_dec[r] = reb[r] / enc[r];
        }
        long k = nranks - m;
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        printf("# l3: %d ranks, one emulated node each, one encoding set k = %ld, m = %ld; "
               "%ld MiB per rank (%.0f MiB in all); %ld rep(s) after %ld warm-up; base %s\n",
               nranks, k, m, size_mib, (double)size_mib * nranks, reps, warmup, base);
        printf("# the %d emulated nodes share %ld core(s): times are per-byte-of-total-work "
               "comparisons within this run, not cluster timings\n",
               nranks, cpus);
        printf("# encode time := l3 - l1 of the same rep (what level 3 adds to a level-1 "
               "checkpoint: ring encode + parity files)\n");
        printf("# rebuild: untimed, contexts finalized, nodes 1..%ld wiped (rm -rf), new "
               "contexts opened (a restarted job on replacement nodes); timed, "
               "cairn_rebuild(CAIRN_LATEST): verify the survivors, decode, write back the lost "
               "rank files, manifests and parity\n",
               lost);
        printf("# each time is the slowest rank's; ratios are medians of per-rep ratios\n");
        print_list("l1", l1, nr, "s");
        print_list("l3", l3, nr, "s");
        print_list("encode", enc, nr, "s");
        print_list("rebuild", reb, nr, "s");
        printf("#   restart after rebuild verified bit-exact %ld time(s)\n", verified);
        if (enc_bad)
            printf("# warning: %d rep(s) had l3 <= l1; their encode time was taken as 1 ns\n",
                   enc_bad);
        printf("bench: l3.ckpt %.4f s ratio=%.2f vs l1\n", median(l3, nr), median(r_l3, nr));
        printf("bench: ec.decode.k%ldm%ld %.4f s ratio=%.2f vs encode\n", k, lost,
               median(reb, nr), median(r_dec, nr));
        fflush(stdout);
    }

    free(local);
    free(worst);
    check_cairn(cairn_finalize(ctx), NULL, "cairn_finalize");
    free(ref);
    free(data);
    check_mpi(MPI_Finalize(), "MPI_Finalize");
    return 0;
}
