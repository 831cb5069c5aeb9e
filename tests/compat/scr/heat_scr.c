/*
 * heat_scr.c - a 2-D heat stencil that checkpoints with SCR, written the way
 * SCR's examples/test_api.c is: SCR_Have_restart / Start_restart / Route_file
 * / Complete_restart to read its files back, SCR_Start_output / Route_file /
 * Complete_output around every checkpoint, file-per-process. Only MPI and
 * scr.h: the same source builds against SCR or cairn-scr.
 *
 * The grid has RANKS*ROWS rows of NX doubles, one block of rows per rank;
 * the top edge is held at 1.0, the others at 0.0; each step swaps halo rows
 * with the neighbours and averages the four neighbours of every free cell,
 * so the final grid depends on the number of steps only, bit for bit.
 * Each rank's checkpoint file "ckpt.<step>/rank_<r>.ckpt" holds a header
 * (step, rank, ranks, rows, nx), its rows and an FNV-1a checksum of all that;
 * a restart reads it back and checks every field. When a restart fails on
 * any rank the program asks SCR again, which offers an older checkpoint.
 *
 *   heat_scr [-x NX] [-y ROWS] [-t STEPS] [-c EVERY] [-o EVERY] [-p EVERY]
 *            [-f FILE] [-r NAME] [-i STEP]
 *   -c EVERY  checkpoint every EVERY steps; 0 (default): when SCR_Need_checkpoint says so
 *   -o EVERY  every EVERY steps also write the output dataset "output.<step>"
 *             (SCR_FLAG_OUTPUT only) of files output.<step>/rank_<r>.out: the rows
 *   -p EVERY  every EVERY steps the checkpoint is SCR_FLAG_CHECKPOINT | SCR_FLAG_OUTPUT
 *   -f FILE   rank 0 writes the final grid (all rows, raw doubles) to FILE
 *   -r NAME   rank 1 finds the checkpoint NAME unusable when restarting from it
 *             (an application check that fails: SCR_Complete_restart(0))
 *   -i STEP   rank 1 fails to write its checkpoint file at STEP (SCR_Complete_output(0))
 * Exit status 0 when the run completed; rank 0 prints what it restarted from.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi.h"
#include "scr.h"

static int rank = -1, ranks = 0;
static long nx = 64, rows = 16, steps = 60, every = 0, out_every = 0, both_every = 0;
static long bad_step = -1;
static const char *final_file = NULL, *reject = NULL;
static double *u, *v; /* (rows + 2) x nx: halo, rows, halo */

#define AT(g, i, j) ((g)[(size_t)(i) * (size_t)nx + (size_t)(j)])

struct header {
    char magic[8];
    int64_t step, rank, ranks, rows, nx;
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* Fixed cells: the global top row is 1.0, every other edge 0.0. */
static void init_grid(void)
{
    for (long i = 0; i < rows + 2; i++)
        for (long j = 0; j < nx; j++)
            AT(u, i, j) = (rank == 0 && i == 1) ? 1.0 : 0.0;
    memcpy(v, u, (size_t)(rows + 2) * (size_t)nx * sizeof *u);
}

static void step_once(void)
{
    int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int down = rank < ranks - 1 ? rank + 1 : MPI_PROC_NULL;
    MPI_Sendrecv(&AT(u, 1, 0), (int)nx, MPI_DOUBLE, up, 0, &AT(u, rows + 1, 0), (int)nx,
                 MPI_DOUBLE, down, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&AT(u, rows, 0), (int)nx, MPI_DOUBLE, down, 1, &AT(u, 0, 0), (int)nx,
                 MPI_DOUBLE, up, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (long i = 1; i <= rows; i++) {
        int fixed_row = (rank == 0 && i == 1) || (rank == ranks - 1 && i == rows);
        for (long j = 0; j < nx; j++)
            AT(v, i, j) = (fixed_row || j == 0 || j == nx - 1)
                              ? AT(u, i, j)
                              : 0.25 * (AT(u, i - 1, j) + AT(u, i + 1, j) + AT(u, i, j - 1) +
                                        AT(u, i, j + 1));
    }
    double *t = u;
    u = v, v = t;
}

static int write_all(int fd, const void *p, size_t n)
{
    return write(fd, p, n) == (ssize_t)n;
}

static int write_checkpoint(const char *file, long step)
{
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, S_IRUSR | S_IWUSR);
    if (fd < 0) {
        printf("%d: Could not open file %s\n", rank, file);
        return 0;
    }
    struct header h = {"HEATSCR", step, rank, ranks, rows, nx};
    size_t bytes = (size_t)rows * (size_t)nx * sizeof(double);
    uint64_t sum = fnv(fnv(0xcbf29ce484222325ull, &h, sizeof h), &AT(u, 1, 0), bytes);
    int ok = write_all(fd, &h, sizeof h) && write_all(fd, &AT(u, 1, 0), bytes) &&
             write_all(fd, &sum, sizeof sum);
    ok = fsync(fd) == 0 && ok;
    ok = close(fd) == 0 && ok;
    if (!ok)
        printf("%d: Error writing to %s\n", rank, file);
    return ok;
}

/* 1 and *STEP if FILE is this rank's good checkpoint, its rows in u. */
static int read_checkpoint(const char *file, long *step)
{
    FILE *f = fopen(file, "rb");
    if (!f)
        return 0;
    struct header h;
    size_t bytes = (size_t)rows * (size_t)nx * sizeof(double);
    double *rowsbuf = malloc(bytes);
    uint64_t sum = 0;
    int ok = rowsbuf && fread(&h, sizeof h, 1, f) == 1 && fread(rowsbuf, bytes, 1, f) == 1 &&
             fread(&sum, sizeof sum, 1, f) == 1 && fgetc(f) == EOF;
    fclose(f);
    ok = ok && strcmp(h.magic, "HEATSCR") == 0 && h.rank == rank && h.ranks == ranks &&
         h.rows == rows && h.nx == nx &&
         sum == fnv(fnv(0xcbf29ce484222325ull, &h, sizeof h), rowsbuf, bytes);
    if (ok) {
        init_grid();
        memcpy(&AT(u, 1, 0), rowsbuf, bytes);
        *step = (long)h.step;
    } else {
        printf("%d: Invalid checkpoint file %s\n", rank, file);
    }
    free(rowsbuf);
    return ok;
}

static void checkpoint(long step)
{
    char label[64], name[128], file[SCR_MAX_FILENAME];
    int flags = SCR_FLAG_CHECKPOINT;
    if (both_every > 0 && step % both_every == 0)
        flags |= SCR_FLAG_OUTPUT;
    snprintf(label, sizeof label, "ckpt.%ld", step);
    if (SCR_Start_output(label, flags) != SCR_SUCCESS) {
        printf("%d: failed calling SCR_Start_output(%s)\n", rank, label);
        return;
    }
    int valid = 0;
    snprintf(name, sizeof name, "%s/rank_%d.ckpt", label, rank);
    if (SCR_Route_file(name, file) == SCR_SUCCESS)
        valid = (step == bad_step && rank == 1) ? 0 : write_checkpoint(file, step);
    int rc = SCR_Complete_output(valid);
    if (rank == 0)
        printf("%s checkpoint %s.\n", rc == SCR_SUCCESS ? "Completed" : "Failed", label);
}

static void output(long step)
{
    char label[64], name[128], file[SCR_MAX_FILENAME];
    snprintf(label, sizeof label, "output.%ld", step);
    if (SCR_Start_output(label, SCR_FLAG_OUTPUT) != SCR_SUCCESS)
        return;
    int valid = 0;
    snprintf(name, sizeof name, "%s/rank_%d.out", label, rank);
    if (SCR_Route_file(name, file) == SCR_SUCCESS) {
        int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, S_IRUSR | S_IWUSR);
        valid = fd >= 0 && write_all(fd, &AT(u, 1, 0), (size_t)rows * (size_t)nx * sizeof(double));
        valid = fd >= 0 && close(fd) == 0 && valid;
    }
    int rc = SCR_Complete_output(valid);
    if (rank == 0)
        printf("%s output %s.\n", rc == SCR_SUCCESS ? "Completed" : "Failed", label);
}

/* The newest checkpoint every rank reads back; else step 0. */
static long restart(void)
{
    int have = 0;
    char dset[SCR_MAX_FILENAME];
    while (SCR_Have_restart(&have, dset) == SCR_SUCCESS && have) {
        if (rank == 0)
            printf("Restarting from checkpoint named %s\n", dset);
        int valid = 0;
        long step = 0;
        if (SCR_Start_restart(dset) == SCR_SUCCESS) {
            char name[2 * SCR_MAX_FILENAME], file[SCR_MAX_FILENAME];
            snprintf(name, sizeof name, "%s/rank_%d.ckpt", dset, rank);
            if (SCR_Route_file(name, file) == SCR_SUCCESS)
                valid = read_checkpoint(file, &step);
            else
                printf("%d: failed calling SCR_Route_file(%s)\n", rank, name);
        }
        if (valid && reject && rank == 1 && strcmp(dset, reject) == 0) {
            printf("%d: rejecting checkpoint %s\n", rank, dset);
            valid = 0;
        }
        if (SCR_Complete_restart(valid) == SCR_SUCCESS)
            return step;
        if (rank == 0)
            printf("Restart from %s failed\n", dset);
    }
    if (rank == 0)
        printf("No checkpoint to restart from\n");
    init_grid();
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    for (int opt; (opt = getopt(argc, argv, "x:y:t:c:o:p:f:r:i:")) != -1;) {
        switch (opt) {
        case 'x': nx = atol(optarg); break;
        case 'y': rows = atol(optarg); break;
        case 't': steps = atol(optarg); break;
        case 'c': every = atol(optarg); break;
        case 'o': out_every = atol(optarg); break;
        case 'p': both_every = atol(optarg); break;
        case 'f': final_file = optarg; break;
        case 'r': reject = optarg; break;
        case 'i': bad_step = atol(optarg); break;
        default:
            if (rank == 0)
                printf("Usage: heat_scr [-x NX] [-y ROWS] [-t STEPS] [-c EVERY] [-o EVERY] "
                       "[-p EVERY] [-f FILE] [-r NAME] [-i STEP]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (nx < 3 || rows < 1 || steps < 0) {
        if (rank == 0)
            printf("bad grid or steps\n");
        MPI_Finalize();
        return 2;
    }
    if (SCR_Init() != SCR_SUCCESS) {
        printf("Failed initializing SCR\n");
        MPI_Finalize();
        return 1;
    }
    u = calloc((size_t)(rows + 2) * (size_t)nx, sizeof *u);
    v = calloc((size_t)(rows + 2) * (size_t)nx, sizeof *v);
    if (!u || !v) {
        printf("%d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    long step = restart();
    if (rank == 0)
        printf("Starting at step %ld of %ld\n", step, steps);
    while (step < steps) {
        step_once();
        step++;
        int need = 0;
        if (every > 0)
            need = step % every == 0;
        else
            SCR_Need_checkpoint(&need);
        if (need)
            checkpoint(step);
        if (out_every > 0 && step % out_every == 0)
            output(step);
    }

    size_t bytes = (size_t)rows * (size_t)nx * sizeof(double);
    double *all = rank == 0 ? malloc(bytes * (size_t)ranks) : NULL;
    MPI_Gather(&AT(u, 1, 0), (int)(rows * nx), MPI_DOUBLE, all, (int)(rows * nx), MPI_DOUBLE, 0,
               MPI_COMM_WORLD);
    int rc = 0;
    if (rank == 0) {
        printf("Final checksum %016llx after %ld steps\n",
               (unsigned long long)fnv(0xcbf29ce484222325ull, all, bytes * (size_t)ranks), step);
        FILE *f = final_file ? fopen(final_file, "wb") : NULL;
        if (final_file && (!f || fwrite(all, bytes, (size_t)ranks, f) != (size_t)ranks))
            rc = 1;
        if (f && fclose(f) != 0)
            rc = 1;
    }
    free(all);
    free(u);
    free(v);
    if (SCR_Finalize() != SCR_SUCCESS)
        rc = 1;
    MPI_Finalize();
    return rc;
}
