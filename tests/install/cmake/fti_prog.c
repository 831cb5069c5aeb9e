/*
 * fti_prog.c - an FTI program outside the tree: fti.h and MPI only, as
 * against FTI itself. Built by tests/install/cmake/CMakeLists.txt against
 * cairn::fti and cairn::fti_static; run by tests/install/run_cmake.sh.
 *
 *   fti_prog write CONFIG   protect 20000 doubles of a pattern of (rank,
 *                           index), FTI_Checkpoint(1, 1), FTI_Finalize (the
 *                           config's Keep_last_ckpt = 1 keeps it for the next run)
 *   fti_prog read CONFIG    FTI_Status must announce a recovery; FTI_Recover
 *                           into zeroed memory, then compare every byte
 *
 * Exits 0 when every rank succeeded, 1 otherwise (every rank agreeing).
 */
#include <fti.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 20000

static double pattern(int r, size_t i) {
    uint64_t x = ((uint64_t)r << 40) ^ (i * 0x9E3779B97F4A7C15ull);
    x ^= x >> 31;
    x *= 0x94D049BB133111EBull;
    double d;
    memcpy(&d, &x, sizeof d);
    return d;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int writing = argc == 3 && strcmp(argv[1], "write") == 0;
    int reading = argc == 3 && strcmp(argv[1], "read") == 0;
    if (!writing && !reading) {
        fprintf(stderr, "usage: fti_prog write|read CONFIG\n");
        MPI_Finalize();
        return 2;
    }
    int ok = FTI_Init(argv[2], MPI_COMM_WORLD) == FTI_SCES;
    int rank = 0;
    MPI_Comm_rank(FTI_COMM_WORLD, &rank);
    static double a[N];
    if (ok && FTI_Protect(0, a, N, FTI_DBLE) != FTI_SCES) ok = 0;
    if (ok && writing) {
        for (size_t i = 0; i < N; i++) a[i] = pattern(rank, i);
        if (FTI_Checkpoint(1, 1) != FTI_DONE) {
            fprintf(stderr, "rank %d: FTI_Checkpoint failed\n", rank);
            ok = 0;
        }
    }
    if (ok && reading) {
        if (FTI_Status() == 0 || FTI_Recover() != FTI_SCES) {
            fprintf(stderr, "rank %d: no checkpoint recovered\n", rank);
            ok = 0;
        }
        for (size_t i = 0; ok && i < N; i++) {
            double want = pattern(rank, i);
            if (memcmp(&a[i], &want, sizeof want) != 0) {
                fprintf(stderr, "rank %d: element %zu differs from the saved bytes\n", rank, i);
                ok = 0;
            }
        }
    }
    if (FTI_Finalize() != FTI_SCES) ok = 0;
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all && rank == 0) printf("fti_prog %s: ok\n", argv[1]);
    MPI_Finalize();
    return all ? 0 : 1;
}
