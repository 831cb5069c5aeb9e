/*
 * async_bench.c - what checkpointing costs an application: the time it is
 * blocked in cairn_checkpoint and the slowdown of its own compute, with
 * node daemons (cairnd) doing levels 2-4 in the background or without.
 *
 *   CAIRN_RANKS_PER_NODE=1 CAIRN_SET_SIZE=4 CAIRN_EC_M=1 CAIRN_PFS_DIR=DIR \
 *   CAIRN_PFS_EVERY=4 scripts/mpirun.sh 4 build/bench/async_bench MODE LEVEL ITERS MB [PASSES]
 *
 * MODE is nockpt (no cairn at all) or ckpt. Every rank owns one array of MB
 * MiB of doubles (seeded per rank, protected as one CAIRN_DOUBLE variable
 * in ckpt mode) and runs ITERS iterations of PASSES (default 48) in-place
 * passes of a periodic 1-D 3-point stencil (1/4, 1/2, 1/4) over it; after
 * each iteration all ranks meet at a barrier and, in ckpt mode, call
 * cairn_checkpoint(ctx, iteration + 1, LEVEL). Whether that returns at level
 * 1 (cairnd serves every node) or does every level itself (no daemon, or
 * CAIRN_DAEMON_USE=off) is up to the library and the environment.
 *
 * Timed with MPI_Wtime on every rank: compute (the stencil passes only,
 * summed over the iterations), blocked (each cairn_checkpoint call), wall
 * (the loop, and cairn_finalize in ckpt mode, between two barriers). Each is
 * the slowest rank's (MPI_MAX; blocked per checkpoint). The barrier waits
 * are in neither compute nor blocked.
 *
 * In ckpt mode, once the loop is done (before cairn_finalize, outside wall),
 * cairn_generations says how far the levels behind level 1 have come: the
 * newest generation at level 3 or above and the newest on the PFS, and how
 * many generations and seconds (between the returns of their checkpoints;
 * from the loop's start if there is none) each lags behind the newest one,
 * at level 1: the work the daemons have not done yet, which they do later
 * (for the drain) or never (a generation superseded before its turn).
 *
 * Output, rank 0, for bench/run.sh (which prints the bench: lines):
 *   result compute=S blocked_median=S blocked_mean=S wall=S sum=HEX
 *   lag newest_l1=G newest_l3=G newest_l4=G lag3_gens=N lag3_s=S lag4_gens=N lag4_s=S
 *   # blocked per checkpoint: S S ...
 * sum is the 64-bit sum of the arrays' bit patterns over all ranks: equal in
 * every mode, or a checkpoint disturbed the computation.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "bench.h"
#include "cairn.h"

#define MIB ((size_t)1 << 20)
#define MAX_ITERS 10000

static void usage(void)
{
    fprintf(stderr, "usage: async_bench nockpt|ckpt LEVEL ITERS MB_PER_RANK [PASSES]\n");
}

/* Deterministic, incompressible start: xorshift64 doubles in [0, 1). */
static void init(double *u, size_t n, int seed)
{
    uint64_t x = 0x9E3779B97F4A7C15ull ^ ((uint64_t)(seed + 1) * 0xD1B54A32D192ED03ull);
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        u[i] = (double)(x >> 11) * 0x1.0p-53;
    }
}

/* PASSES in-place passes of a periodic 3-point stencil over U[0..N-1], N >= 2. */
static void sweep(double *u, size_t n, long passes)
{
    for (long p = 0; p < passes; p++) {
        double left = u[n - 1], first = u[0];
        for (size_t i = 0; i + 1 < n; i++) {
            double c = u[i];
            u[i] = 0.25 * left + 0.5 * c + 0.25 * u[i + 1];
            left = c;
        }
        u[n - 1] = 0.25 * left + 0.5 * u[n - 1] + 0.25 * first;
    }
}

/* The newest generation at LEVEL or above in INFO[0..N-1], or 0 (ids start at 1). */
static long newest_at(const cairn_gen_info *info, int n, int level)
{
    long id = 0;
    for (int i = 0; i < n; i++)
        if (info[i].level >= level && info[i].id > id)
            id = info[i].id;
    return id;
}

static uint64_t bitsum(const double *u, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t b;
        memcpy(&b, &u[i], sizeof b);
        s += b;
    }
    return s;
}

int main(int argc, char **argv)
{
    bench_prog = "async_bench";
    check_mpi(MPI_Init(&argc, &argv), "MPI_Init");
    int rank = 0;
    check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
    bench_rank = rank;

    if (argc != 5 && argc != 6) {
        if (rank == 0)
            usage();
        die("expected 4 or 5 arguments, got %d", argc - 1);
    }
    int ckpt = strcmp(argv[1], "ckpt") == 0;
    if (!ckpt && strcmp(argv[1], "nockpt") != 0)
        die("MODE: expected nockpt or ckpt, got '%s'", argv[1]);
    int level = (int)parse_long(argv[2], "LEVEL", 1, 4);
    long iters = parse_long(argv[3], "ITERS", 1, MAX_ITERS);
    long mib = parse_long(argv[4], "MB_PER_RANK", 1, 1L << 16);
    long passes = argc == 6 ? parse_long(argv[5], "PASSES", 1, 1L << 20) : 48;

    size_t n = (size_t)mib * MIB / sizeof(double);
    double *u = malloc(n * sizeof *u);
    double *blocked = calloc((size_t)iters, sizeof *blocked);
    double *worst = calloc((size_t)iters, sizeof *worst);
    double *returned = calloc((size_t)iters, sizeof *returned); /* since start */
    cairn_gen_info *info = calloc((size_t)iters, sizeof *info);
    if (u == NULL || blocked == NULL || worst == NULL || returned == NULL || info == NULL)
        die("cannot allocate %ld MiB", mib);
    init(u, n, rank);

    cairn_ctx *ctx = NULL;
    if (ckpt) {
        check_cairn(cairn_init(MPI_COMM_WORLD, NULL, &ctx), NULL, "cairn_init");
        check_cairn(cairn_protect(ctx, "u", u, CAIRN_DOUBLE, n, 0, NULL), ctx, "cairn_protect");
    }

    double compute = 0;
    check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    double start = MPI_Wtime();
    for (long it = 0; it < iters; it++) {
        double t0 = MPI_Wtime();
        sweep(u, n, passes);
        compute += MPI_Wtime() - t0;
        check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        if (ckpt) {
            t0 = MPI_Wtime();
            int rc = cairn_checkpoint(ctx, it + 1, level);
            blocked[it] = MPI_Wtime() - t0;
            returned[it] = t0 + blocked[it] - start;
            check_cairn(rc, ctx, "cairn_checkpoint");
        }
    }
    double query = 0; /* the look at the levels below, not the application's time */
    int ngens = 0;
    if (ckpt) {
        double t0 = MPI_Wtime();
        int rc = cairn_generations(ctx, info, (int)iters, &ngens);
        check_cairn(rc, ctx, "cairn_generations");
        query = MPI_Wtime() - t0;
        if (ngens > iters)
            ngens = (int)iters;
    }
    if (ckpt) {
        check_cairn(cairn_finalize(ctx), NULL, "cairn_finalize");
        ctx = NULL;
    }
    check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    double wall = MPI_Wtime() - start - query;

    double mine[2] = {compute, wall}, most[2] = {0, 0};
    uint64_t sum = bitsum(u, n), total = 0;
    check_mpi(MPI_Reduce(mine, most, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD), "MPI_Reduce");
    check_mpi(MPI_Reduce(blocked, worst, (int)iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD),
              "MPI_Reduce");
    check_mpi(MPI_Reduce(&sum, &total, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD),
              "MPI_Reduce");

    if (rank == 0) {
        double mean = 0;
        for (long i = 0; i < iters; i++)
            mean += worst[i] / (double)iters;
        printf("result compute=%.4f blocked_median=%.4f blocked_mean=%.4f wall=%.4f "
               "sum=%016llx\n",
               most[0], ckpt ? median(worst, (int)iters) : 0.0, ckpt ? mean : 0.0, most[1],
               (unsigned long long)total);
        if (ckpt) {
            long l3 = newest_at(info, ngens, 3), l4 = newest_at(info, ngens, 4);
            double last = returned[iters - 1];
            printf("lag newest_l1=%ld newest_l3=%ld newest_l4=%ld lag3_gens=%ld lag3_s=%.4f "
                   "lag4_gens=%ld lag4_s=%.4f\n",
                   iters, l3, l4, iters - l3, last - (l3 ? returned[l3 - 1] : 0), iters - l4,
                   last - (l4 ? returned[l4 - 1] : 0));
            printf("# blocked per checkpoint:");
            for (long i = 0; i < iters; i++)
                printf(" %.4f", worst[i]);
            printf("\n");
        }
        fflush(stdout);
    }

    free(info);
    free(returned);
    free(worst);
    free(blocked);
    free(u);
    check_mpi(MPI_Finalize(), "MPI_Finalize");
    return 0;
}
