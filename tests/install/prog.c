/*
 * prog.c - an application outside the tree, as a user of an installed cairn
 * writes it: it knows only <cairn.h> and what pkg-config says. Built and run
 * by tests/install/run_install.sh (shared and static).
 *
 *   prog write   protect an array of doubles and a step counter, fill them
 *                with a pattern of (rank, index), checkpoint generation 1 at
 *                level 1
 *   prog read    protect zeroed memory, restart from the newest generation,
 *                and compare every byte with the pattern
 *
 * Exits 0 on success; 1 on any failure, every rank agreeing, after printing
 * the error and, on a mismatch, the first differing element.
 */
#include <cairn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 20000 /* doubles per rank: 160 KB */

/* The value of element I on rank R: any bit pattern, NaN payloads included. */
static double pattern(int r, size_t i) {
    uint64_t x = ((uint64_t)r << 40) ^ (i * 0x9E3779B97F4A7C15ull);
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    double d;
    memcpy(&d, &x, sizeof d);
    return d;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int writing = argc == 2 && strcmp(argv[1], "write") == 0;
    int reading = argc == 2 && strcmp(argv[1], "read") == 0;
    if (!writing && !reading) {
        if (rank == 0) fprintf(stderr, "usage: prog write|read\n");
        MPI_Finalize();
        return 2;
    }

    double *a = calloc(N, sizeof *a);
    int64_t step = 0;
    int ok = a != NULL;
    cairn_ctx *ctx = NULL;
    int rc = ok ? cairn_init(MPI_COMM_WORLD, NULL, &ctx) : CAIRN_ENOMEM;
    if (rc) {
        fprintf(stderr, "rank %d: cairn_init: %s: %s\n", rank, cairn_strerror(rc), cairn_errmsg(NULL));
        ok = 0;
    }
    if (ok) {
        size_t dims[2] = {N / 100, 100};
        rc = cairn_protect(ctx, "field", a, CAIRN_DOUBLE, N, 2, dims);
        if (!rc) rc = cairn_protect(ctx, "step", &step, CAIRN_INT64, 1, 0, NULL);
        if (rc) {
            fprintf(stderr, "rank %d: cairn_protect: %s\n", rank, cairn_errmsg(ctx));
            ok = 0;
        }
    }
    if (ok && writing) {
        for (size_t i = 0; i < N; i++) a[i] = pattern(rank, i);
        step = 42 + rank;
        rc = cairn_checkpoint(ctx, 1, CAIRN_LEVEL_LOCAL);
        if (rc) {
            fprintf(stderr, "rank %d: cairn_checkpoint: %s: %s\n", rank, cairn_strerror(rc), cairn_errmsg(ctx));
            ok = 0;
        }
    }
    if (ok && reading) {
        long id = -1;
        rc = cairn_restart(ctx, CAIRN_LATEST, &id);
        if (rc || id != 1) {
            fprintf(stderr, "rank %d: cairn_restart: %s (generation %ld): %s\n", rank, cairn_strerror(rc), id,
                    cairn_errmsg(ctx));
            ok = 0;
        }
        for (size_t i = 0; ok && i < N; i++) {
            double want = pattern(rank, i);
            if (memcmp(&a[i], &want, sizeof want) != 0) {
                fprintf(stderr, "rank %d: element %zu differs from the saved bytes\n", rank, i);
                ok = 0;
            }
        }
        if (ok && step != 42 + rank) {
            fprintf(stderr, "rank %d: step is %lld, saved %d\n", rank, (long long)step, 42 + rank);
            ok = 0;
        }
    }
    if (cairn_finalize(ctx) != 0) ok = 0;
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all && rank == 0) printf("prog %s: %d ranks ok\n", argv[1], size);
    free(a);
    MPI_Finalize();
    return all ? 0 : 1;
}
