/*
 * shared_scr.c - an SCR program whose ranks share ONE checkpoint file, the
 * access pattern of SCR's examples/test_api.c run with --shared-file: it sets
 * SCR_CACHE_BYPASS=1 through SCR_Config (SCR keeps shared files only in
 * bypass mode), every rank routes the same name "ckpt.<step>/shared.ckpt",
 * rank 0 creates the file and sizes it, then each rank writes its own part
 * at its own offset (parts differ in size, so offsets are a prefix sum).
 * Only MPI and scr.h: the same source builds against SCR or cairn-scr.
 *
 * Each rank's part is [int64 step][int64 rank][its bytes]; every step
 * changes every byte from the step before, so the final bytes depend on the
 * restored ones bit for bit. A restart reads the part back at the same
 * offset and checks step and rank.
 *
 *   shared_scr [-t STEPS] [-s BYTES] [-f FILE] [-n] [-k]
 *   -t STEPS  steps, one checkpoint "ckpt.<step>" after each (default 8)
 *   -s BYTES  bytes of rank 0's part; rank r has BYTES + 37 r (default 65536)
 *   -f FILE   rank 0 writes every rank's final bytes, in rank order, to FILE
 *   -n        no SCR_Config call (SCR_CACHE_BYPASS as configured elsewhere)
 *   -k        one file name for every checkpoint: "shared.ckpt" (no directory)
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

static int rank = -1, ranks = 0, same_name = 0;
static long steps = 8, base = 65536, step = 0;
static size_t mine;         /* bytes of this rank's data */
static unsigned char *data; /* this rank's bytes */
static long long offset;    /* of this rank's part in the shared file */
static long long total;     /* bytes of the shared file: every part */

static void file_name(char *out, size_t len, const char *dset)
{
    if (same_name)
        snprintf(out, len, "shared.ckpt");
    else
        snprintf(out, len, "%.900s/shared.ckpt", dset);
}

static void advance(void)
{
    step++;
    for (size_t i = 0; i < mine; i++)
        data[i] = (unsigned char)(data[i] * 5u + (unsigned)step + (unsigned)(i & 15) + 1u);
}

/* Write this rank's part of the shared file PATH; 1 if all of it went out. */
static int write_part(const char *path)
{
    int ok = 1;
    if (rank == 0) { /* as test_api: rank 0 creates the file at its full size */
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        ok = fd >= 0 && ftruncate(fd, total) == 0;
        if (fd >= 0 && close(fd) != 0)
            ok = 0;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD); /* the file exists before the others open it */
    if (!ok)
        return 0;
    int fd = open(path, O_WRONLY);
    int64_t head[2] = {step, rank};
    ok = fd >= 0 && pwrite(fd, head, sizeof head, offset) == (ssize_t)sizeof head &&
         pwrite(fd, data, mine, offset + 16) == (ssize_t)mine && fsync(fd) == 0;
    if (fd >= 0 && close(fd) != 0)
        ok = 0;
    if (!ok)
        fprintf(stderr, "%d: cannot write my part of %s\n", rank, path);
    return ok;
}

static int read_part(const char *path)
{
    int fd = open(path, O_RDONLY);
    int64_t head[2] = {-1, -1};
    int ok = fd >= 0 && pread(fd, head, sizeof head, offset) == (ssize_t)sizeof head &&
             pread(fd, data, mine, offset + 16) == (ssize_t)mine && head[1] == rank;
    if (fd >= 0)
        close(fd);
    if (ok)
        step = head[0];
    else
        fprintf(stderr, "%d: cannot read my part of %s (rank field %lld)\n", rank, path,
                (long long)head[1]);
    return ok;
}

static void restart(void)
{
    int have = 0, done = 0;
    char dset[SCR_MAX_FILENAME], name[SCR_MAX_FILENAME], file[SCR_MAX_FILENAME];
    while (!done && SCR_Have_restart(&have, dset) == SCR_SUCCESS && have) {
        if (rank == 0)
            printf("Restarting from checkpoint named %s\n", dset);
        int ok = SCR_Start_restart(dset) == SCR_SUCCESS;
        file_name(name, sizeof name, dset);
        ok = ok && SCR_Route_file(name, file) == SCR_SUCCESS && read_part(file);
        done = SCR_Complete_restart(ok) == SCR_SUCCESS;
        if (!done && rank == 0)
            printf("Restart from %s failed\n", dset);
    }
    if (!done) {
        step = 0;
        for (size_t i = 0; i < mine; i++)
            data[i] = (unsigned char)(rank * 7 + (int)i);
        if (rank == 0)
            printf("No checkpoint to restart from\n");
    }
}

int main(int argc, char **argv)
{
    int config = 1;
    for (int c; (c = getopt(argc, argv, "t:s:f:nk")) != -1;) {
        if (c == 't')
            steps = atol(optarg);
        else if (c == 's')
            base = atol(optarg);
        else if (c == 'n')
            config = 0;
        else if (c == 'k')
            same_name = 1;
        else if (c != 'f')
            return 2;
    }
    const char *final_file = NULL;
    optind = 1;
    for (int c; (c = getopt(argc, argv, "t:s:f:nk")) != -1;)
        if (c == 'f')
            final_file = optarg;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    mine = (size_t)base + 37u * (size_t)rank;
    data = malloc(mine);
    long long part = (long long)(mine + 16);
    MPI_Exscan(&part, &offset, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        offset = 0;
    MPI_Allreduce(&part, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (config)
        SCR_Config("SCR_CACHE_BYPASS=1");
    if (!data || SCR_Init() != SCR_SUCCESS) {
        printf("Failed initializing SCR\n");
        return 1;
    }
    restart();
    while (step < steps) {
        advance();
        char dset[64], name[SCR_MAX_FILENAME], file[SCR_MAX_FILENAME];
        snprintf(dset, sizeof dset, "ckpt.%ld", step);
        file_name(name, sizeof name, dset);
        int ok = SCR_Start_output(dset, SCR_FLAG_CHECKPOINT) == SCR_SUCCESS &&
                 SCR_Route_file(name, file) == SCR_SUCCESS;
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        ok = ok && write_part(file);
        if (SCR_Complete_output(ok) != SCR_SUCCESS) {
            if (rank == 0)
                printf("Checkpoint %s failed\n", dset);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (rank == 0) {
            printf("Completed checkpoint %s.\n", dset);
            fflush(stdout);
        }
    }
    int rc = 0;
    if (final_file) { /* every rank's bytes, in rank order */
        int n = (int)mine, *counts = NULL, *displs = NULL;
        unsigned char *all = NULL;
        if (rank == 0) {
            counts = malloc(sizeof *counts * (size_t)ranks);
            displs = malloc(sizeof *displs * (size_t)ranks);
        }
        MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
        int sum = 0;
        for (int r = 0; rank == 0 && r < ranks; r++)
            displs[r] = sum, sum += counts[r];
        if (rank == 0)
            all = malloc((size_t)sum);
        MPI_Gatherv(data, n, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            FILE *f = fopen(final_file, "wb");
            rc = !f || fwrite(all, 1, (size_t)sum, f) != (size_t)sum;
            if (f && fclose(f) != 0)
                rc = 1;
            printf("Final bytes written (%d)\n", sum);
        }
        free(all), free(counts), free(displs);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    SCR_Finalize();
    MPI_Finalize();
    free(data);
    return rc;
}
