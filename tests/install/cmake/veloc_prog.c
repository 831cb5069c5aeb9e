/*
 * veloc_prog.c - a VeloC program outside the tree: veloc.h and MPI only, as
 * against VeloC itself. Built by tests/install/cmake/CMakeLists.txt against
 * cairn::veloc and cairn::veloc_static; run by tests/install/run_cmake.sh.
 *
 *   veloc_prog write CONFIG   protect 20000 doubles of a pattern of (rank,
 *                             index), VELOC_Checkpoint("cm", 1)
 *   veloc_prog read CONFIG    VELOC_Restart_test must find version 1;
 *                             VELOC_Restart into zeroed memory, compare every byte
 *
 * Exits 0 when every rank succeeded, 1 otherwise (every rank agreeing).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <veloc.h>

#define N 20000

static double pattern(int r, size_t i) {
    uint64_t x = ((uint64_t)r << 40) ^ (i * 0xD1B54A32D192ED03ull);
    x ^= x >> 27;
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
        fprintf(stderr, "usage: veloc_prog write|read CONFIG\n");
        MPI_Finalize();
        return 2;
    }
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    static double a[N];
    int ok = VELOC_Init(MPI_COMM_WORLD, argv[2]) == VELOC_SUCCESS;
    if (ok && VELOC_Mem_protect(0, a, N, sizeof a[0]) != VELOC_SUCCESS) ok = 0;
    if (ok && writing) {
        for (size_t i = 0; i < N; i++) a[i] = pattern(rank, i);
        if (VELOC_Checkpoint("cm", 1) != VELOC_SUCCESS) {
            fprintf(stderr, "rank %d: VELOC_Checkpoint failed\n", rank);
            ok = 0;
        }
    }
    if (ok && reading) {
        int v = VELOC_Restart_test("cm", 0);
        if (v != 1 || VELOC_Restart("cm", v) != VELOC_SUCCESS) {
            fprintf(stderr, "rank %d: no checkpoint restored (version %d)\n", rank, v);
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
    if (VELOC_Finalize(0) != VELOC_SUCCESS) ok = 0;
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all && rank == 0) printf("veloc_prog %s: ok\n", argv[1]);
    MPI_Finalize();
    return all ? 0 : 1;
}
