/*
 * heatdis_common.c - the kernels of the heat-distribution test programs
 * (heatdis_mem.c, heatdis_file.c): initial field, one stencil step with the
 * halo exchange, and the result file the test scripts compare byte for byte
 * between an uninterrupted run and a crashed and restarted one.
 */
#include "heatdis.h"

void initData(int nbLines, int M, int rank, double *h)
{
    for (long k = 0; k < (long)nbLines * M; k++)
        h[k] = 0.0;
    if (rank == 0) /* the hot part of the top edge */
        for (int j = (int)(M * 0.1); j < (int)(M * 0.9); j++)
            h[j] = 100.0;
}

double doWork(int numprocs, int rank, int M, int nbLines, double *g, double *h)
{
    MPI_Request up[2], down[2];
    double change = 0.0;
    for (long k = 0; k < (long)nbLines * M; k++)
        h[k] = g[k];
    if (rank > 0) { /* first owned row up, halo row from above */
        MPI_Isend(g + M, M, MPI_DOUBLE, rank - 1, WORKTAG, MPI_COMM_WORLD, &up[0]);
        MPI_Irecv(h, M, MPI_DOUBLE, rank - 1, WORKTAG, MPI_COMM_WORLD, &up[1]);
    }
    if (rank < numprocs - 1) { /* last owned row down, halo row from below */
        MPI_Isend(g + (long)(nbLines - 2) * M, M, MPI_DOUBLE, rank + 1, WORKTAG, MPI_COMM_WORLD,
                  &down[0]);
        MPI_Irecv(h + (long)(nbLines - 1) * M, M, MPI_DOUBLE, rank + 1, WORKTAG, MPI_COMM_WORLD,
                  &down[1]);
    }
    if (rank > 0)
        MPI_Waitall(2, up, MPI_STATUSES_IGNORE);
    if (rank < numprocs - 1)
        MPI_Waitall(2, down, MPI_STATUSES_IGNORE);
    for (int i = 1; i < nbLines - 1; i++)
        for (int j = 0; j < M; j++) {
            long c = (long)i * M + j;
            /* as the original: the left/right neighbours of the edge columns wrap
             * into the rows next to them (h holds rows 0..nbLines-1 in a row) */
            g[c] = 0.25 * (h[c - M] + h[c + M] + h[c - 1] + h[c + 1]);
            if (fabs(g[c] - h[c]) > change)
                change = fabs(g[c] - h[c]);
        }
    if (rank == numprocs - 1) /* the bottom edge copies the row above it */
        for (int j = 0; j < M; j++)
            g[(long)(nbLines - 1) * M + j] = g[(long)(nbLines - 2) * M + j];
    return change;
}

int writeResult(const char *path, int rank, int numprocs, int M, int nbLines, const double *g,
                int step)
{
    long n = (long)M * nbLines;
    double *all = rank == 0 ? malloc((size_t)n * numprocs * sizeof *all) : NULL;
    int ok = rank != 0 || all != NULL;
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok)
        return -1;
    MPI_Gather(g, (int)n, MPI_DOUBLE, all, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        FILE *f = fopen(path, "wb");
        ok = f && fwrite(&step, sizeof step, 1, f) == 1 &&
             fwrite(all, sizeof *all, (size_t)n * numprocs, f) == (size_t)n * numprocs;
        if (f && fclose(f) != 0)
            ok = 0;
        free(all);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return ok ? 0 : -1;
}
