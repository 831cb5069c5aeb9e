/*
 * remap_bench.c - what a restart onto another rank count costs against one
 * onto the same rank count (cairn_restart's remap, issue 19).
 *
 *   CAIRN_RANKS_PER_NODE=NP scripts/mpirun.sh NP build/bench/remap_bench save|restore MB OLD_NP
 *
 * The state is one 2-D global array of doubles, OLD_NP * MB MiB, 1024
 * columns, cut into blocks of rows (the first ranks one row more), plus a
 * replicated step counter. save (on OLD_NP ranks) writes generation 1 at
 * level 1. restore (on any NP) protects this run's blocks and times
 * cairn_restart between two barriers (the slowest rank's time), then checks
 * every element against the global definition.
 *
 * Output, rank 0, for bench/run.sh: "result restart=S".
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "bench.h"
#include "cairn.h"

#define COLS 1024

static double value(size_t row, size_t col) { return (double)(row * COLS + col) * 0.5 + 1.0; }

int main(int argc, char **argv)
{
    bench_prog = "remap_bench";
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    bench_rank = rank;
    if (argc != 4 || (strcmp(argv[1], "save") && strcmp(argv[1], "restore")))
        die("usage: remap_bench save|restore MB_PER_OLD_RANK OLD_NP");
    bool save = strcmp(argv[1], "save") == 0;
    long mb = parse_long(argv[2], "MB", 1, 1 << 16);
    long old_np = parse_long(argv[3], "OLD_NP", 1, 1 << 20);
    size_t rows = (size_t)old_np * (size_t)mb * ((size_t)1 << 20) / (COLS * sizeof(double));
    size_t r0 = rows / (size_t)np * (size_t)rank + ((size_t)rank < rows % (size_t)np ? (size_t)rank : rows % (size_t)np);
    size_t nr = rows / (size_t)np + ((size_t)rank < rows % (size_t)np);
    double *u = malloc(nr * COLS * sizeof *u + 1);
    int64_t step = save ? 7 : -1;
    if (!u)
        die("out of memory");
    for (size_t i = 0; i < nr * COLS; i++)
        u[i] = save ? value(r0 + i / COLS, i % COLS) : -1.0;
    cairn_ctx *ctx = NULL;
    check_cairn(cairn_init(MPI_COMM_WORLD, NULL, &ctx), NULL, "cairn_init");
    size_t global[2] = {rows, COLS}, start[2] = {r0, 0}, count[2] = {nr, COLS};
    check_cairn(cairn_protect(ctx, "u", u, CAIRN_DOUBLE, nr * COLS, 0, NULL), ctx, "protect");
    check_cairn(cairn_protect_block(ctx, "u", 2, global, start, count), ctx, "protect_block");
    check_cairn(cairn_protect(ctx, "step", &step, CAIRN_INT64, 1, 0, NULL), ctx, "protect");
    check_cairn(cairn_protect_replicated(ctx, "step"), ctx, "protect_replicated");
    if (save) {
        check_cairn(cairn_checkpoint(ctx, 1, CAIRN_LEVEL_LOCAL), ctx, "cairn_checkpoint");
    } else {
        long got = -1;
        check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        double t0 = MPI_Wtime();
        check_cairn(cairn_restart(ctx, CAIRN_LATEST, &got), ctx, "cairn_restart");
        double t = MPI_Wtime() - t0, tmax = 0;
        check_mpi(MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD), "MPI_Reduce");
        if (got != 1 || step != 7)
            die("restored generation %ld, step %lld", got, (long long)step);
        for (size_t i = 0; i < nr * COLS; i++)
            if (u[i] != value(r0 + i / COLS, i % COLS))
                die("element %zu of the block is wrong", i);
        if (rank == 0)
            printf("result restart=%.6f\n", tmax);
    }
    check_cairn(cairn_finalize(ctx), NULL, "cairn_finalize");
    free(u);
    MPI_Finalize();
    return 0;
}
