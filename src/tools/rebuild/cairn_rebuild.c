/*
 * cairn_rebuild.c - `cairn-rebuild`, the MPI program behind `cairn rebuild`:
 * run with as many ranks as the job had, in the job's environment (CAIRN_JOB,
 * CAIRN_BASE, node emulation), it rebuilds what lost or replaced nodes miss
 * (cairn_rebuild: partner copies or decoding) without restoring anything.
 * For a job epilog or an operator. Uses the public API only.
 *
 * Exit status: 0 rebuilt or already whole, 1 error, 2 usage, 3 no checkpoint,
 * 4 data lost (more nodes lost than the level survives) or corrupt.
 */
#include "cairn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(int rank)
{
    if (rank == 0)
        fprintf(stderr, "usage: mpirun -n RANKS cairn-rebuild [--gen N] [--config FILE]\n");
    return 2;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long gen = CAIRN_LATEST;
    const char *config = NULL;
    int status = 0;
    for (int i = 1; i < argc && status == 0; i++) {
        if (strcmp(argv[i], "--gen") == 0 && i + 1 < argc)
            gen = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
            config = argv[++i];
        else
            status = usage(rank);
    }
    cairn_ctx *ctx = NULL;
    int rc = status ? 0 : cairn_init(MPI_COMM_WORLD, config, &ctx);
    long got = -1;
    if (status == 0 && rc == 0)
        rc = cairn_rebuild(ctx, gen, &got);
    if (status == 0 && rank == 0) {
        if (rc != 0)
            fprintf(stderr, "cairn-rebuild: %s: %s\n", cairn_strerror(rc),
                    cairn_errmsg(ctx));
        else if (got < 0)
            fprintf(stderr, "cairn-rebuild: no checkpoint found\n");
        else
            printf("generation %ld is whole on every node\n", got);
    }
    if (status == 0)
        status = rc == 0 ? (got < 0 ? 3 : 0)
                 : (rc == CAIRN_ELOST || rc == CAIRN_ECORRUPT) ? 4
                 : rc == CAIRN_ENOENT                          ? 3
                                                               : 1;
    cairn_finalize(ctx);
    MPI_Finalize();
    return status;
}
