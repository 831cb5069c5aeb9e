/*
 * scr_prog.c - an SCR program outside the tree: scr.h and MPI only, as
 * against SCR itself. Built by tests/install/cmake/CMakeLists.txt against
 * cairn::scr and cairn::scr_static; run by tests/install/run_cmake.sh (SCR's
 * parameters from the environment: SCR_CACHE_BASE, SCR_COPY_TYPE, ...).
 *
 *   scr_prog write   each rank writes a file of 160 KB of a pattern of (rank,
 *                    index) where SCR_Route_file says, as checkpoint "cm.1"
 *   scr_prog read    SCR_Have_restart must name "cm.1"; SCR_Start_restart, read
 *                    the file SCR_Route_file gives back and compare every byte
 *
 * Exits 0 when every rank succeeded, 1 otherwise (every rank agreeing).
 */
#include <mpi.h>
#include <scr.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 20000

static uint64_t pattern(int r, size_t i) {
    uint64_t x = ((uint64_t)r << 40) ^ (i * 0x9E3779B97F4A7C15ull);
    x ^= x >> 29;
    return x * 0xBF58476D1CE4E5B9ull;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int writing = argc == 2 && strcmp(argv[1], "write") == 0;
    int reading = argc == 2 && strcmp(argv[1], "read") == 0;
    if (!writing && !reading) {
        fprintf(stderr, "usage: scr_prog write|read\n");
        MPI_Finalize();
        return 2;
    }
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    static uint64_t a[N];
    char name[64], file[SCR_MAX_FILENAME];
    snprintf(name, sizeof name, "rank_%d.ckpt", rank);
    int ok = SCR_Init() == SCR_SUCCESS;
    if (ok && writing) {
        for (size_t i = 0; i < N; i++) a[i] = pattern(rank, i);
        ok = SCR_Start_output("cm.1", SCR_FLAG_CHECKPOINT) == SCR_SUCCESS;
        int valid = ok && SCR_Route_file(name, file) == SCR_SUCCESS;
        FILE *f = valid ? fopen(file, "wb") : NULL;
        valid = f && fwrite(a, sizeof a[0], N, f) == N;
        if (f && fclose(f) != 0) valid = 0;
        if (ok && SCR_Complete_output(valid) != SCR_SUCCESS) ok = 0;
        if (!valid) ok = 0;
    }
    if (ok && reading) {
        int have = 0;
        char ckpt[SCR_MAX_FILENAME] = "";
        ok = SCR_Have_restart(&have, ckpt) == SCR_SUCCESS && have && strcmp(ckpt, "cm.1") == 0;
        if (!ok) fprintf(stderr, "rank %d: no restart offered (have %d, name '%s')\n", rank, have, ckpt);
        if (ok) ok = SCR_Start_restart(ckpt) == SCR_SUCCESS;
        int valid = ok && SCR_Route_file(name, file) == SCR_SUCCESS;
        FILE *f = valid ? fopen(file, "rb") : NULL;
        valid = f && fread(a, sizeof a[0], N, f) == N && fgetc(f) == EOF;
        if (f) fclose(f);
        for (size_t i = 0; valid && i < N; i++) {
            if (a[i] != pattern(rank, i)) {
                fprintf(stderr, "rank %d: word %zu differs from the saved bytes\n", rank, i);
                valid = 0;
            }
        }
        if (ok && SCR_Complete_restart(valid) != SCR_SUCCESS) ok = 0;
        if (!valid) ok = 0;
    }
    if (SCR_Finalize() != SCR_SUCCESS) ok = 0;
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all && rank == 0) printf("scr_prog %s: ok\n", argv[1]);
    MPI_Finalize();
    return all ? 0 : 1;
}
