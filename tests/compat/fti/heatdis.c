/*
 * heatdis.c - heat distribution on a grid cut into row blocks, one per rank,
 * protected with FTI: the test program of cairn's FTI layer (tests/compat/fti).
 *
 * It uses FTI exactly as FTI's own example program examples/heatdis.c does,
 * call for call: FTI_Init(argv[2], MPI_COMM_WORLD), every message on
 * FTI_COMM_WORLD, the loop counter i and both grids protected (ids 0, 1, 2),
 * FTI_Snapshot() at the top of every iteration (it recovers on a restart,
 * i included, and checkpoints when the configuration's interval says so),
 * FTI_Finalize() at the end. So it shows what porting heatdis to cairn takes:
 * the build line, nothing in the source. The stencil code is written for
 * this test; only FTI's API and MPI are used.
 *
 * Usage: heatdis <MB per process> <FTI config file> [grid file [hold file]]
 * With a third argument the final grid of every rank (rank after rank) and
 * the final iteration are written there, for the test to compare bit for bit
 * with an uninterrupted run. With a fourth, every rank waits after the last
 * iteration, before FTI_Finalize, until that file exists: a test that kills
 * the run from outside then always finds it running, however fast it was.
 */
#define _DEFAULT_SOURCE /* usleep */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <fti.h>

#define PRECISION 0.0005 /* stop when no cell changes more than this */
#define ITER_TIMES 600   /* or after this many iterations */
#define ITER_OUT 100     /* progress line every this many */
#define REDUCE 5         /* global error every this many */
#define HALO_TAG 50

/* Zero everywhere but a hot stretch of rank 0's first row. */
static void init_grid(double *g, int cols, int lines, int rank)
{
    for (long k = 0; k < (long)cols * lines; k++)
        g[k] = 0.0;
    if (rank == 0)
        for (int c = cols / 10; c < cols * 9 / 10; c++)
            g[c] = 100.0;
}

/* One Jacobi step: h takes g with fresh halo rows from the neighbours, then g
 * gets the average of each cell's four neighbours in h. Returns the largest
 * change of this rank's cells. */
static double step(int nprocs, int rank, int cols, int lines, double *g, double *h)
{
    MPI_Request req[4];
    int n = 0;
    for (long k = 0; k < (long)cols * lines; k++)
        h[k] = g[k];
    if (rank > 0) {
        MPI_Isend(g + cols, cols, MPI_DOUBLE, rank - 1, HALO_TAG, FTI_COMM_WORLD, &req[n++]);
        MPI_Irecv(h, cols, MPI_DOUBLE, rank - 1, HALO_TAG, FTI_COMM_WORLD, &req[n++]);
    }
    if (rank < nprocs - 1) {
        MPI_Isend(g + (long)(lines - 2) * cols, cols, MPI_DOUBLE, rank + 1, HALO_TAG,
                  FTI_COMM_WORLD, &req[n++]);
        MPI_Irecv(h + (long)(lines - 1) * cols, cols, MPI_DOUBLE, rank + 1, HALO_TAG,
                  FTI_COMM_WORLD, &req[n++]);
    }
    MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    double err = 0.0;
    for (int r = 1; r < lines - 1; r++)
        for (int c = 1; c < cols - 1; c++) {
            long k = (long)r * cols + c;
            g[k] = 0.25 * (h[k - cols] + h[k + cols] + h[k - 1] + h[k + 1]);
            if (fabs(g[k] - h[k]) > err)
                err = fabs(g[k] - h[k]);
        }
    if (rank == nprocs - 1) /* the bottom edge follows the row above it */
        for (int c = 0; c < cols; c++)
            g[(long)(lines - 1) * cols + c] = g[(long)(lines - 2) * cols + c];
    return err;
}

int main(int argc, char *argv[])
{
    int rank, nbProcs, i;
    double localerror, globalerror = 1.0;

    MPI_Init(&argc, &argv);
    FTI_Init(argv[2], MPI_COMM_WORLD);
    MPI_Comm_size(FTI_COMM_WORLD, &nbProcs);
    MPI_Comm_rank(FTI_COMM_WORLD, &rank);

    int mb = atoi(argv[1]);
    int cols = (int)sqrt(mb * 1024.0 * 512.0 * nbProcs / sizeof(double));
    int lines = cols / nbProcs + 3;
    double *h = malloc(sizeof(double) * cols * lines);
    double *g = malloc(sizeof(double) * cols * lines);
    init_grid(g, cols, lines, rank);
    if (rank == 0)
        printf("Local data size is %d x %d = %.2f MB (%d).\n", cols, lines,
               2.0 * cols * lines * sizeof(double) / (1024 * 1024), mb);

    FTI_Protect(0, &i, 1, FTI_INTG);
    FTI_Protect(1, h, cols * lines, FTI_DBLE);
    FTI_Protect(2, g, cols * lines, FTI_DBLE);

    double wtime = MPI_Wtime();
    for (i = 0; i < ITER_TIMES; i++) {
        int checkpointed = FTI_Snapshot();
        localerror = step(nbProcs, rank, cols, lines, g, h);
        if (i % ITER_OUT == 0 && rank == 0)
            printf("Step : %d, error = %f\n", i, globalerror);
        if (i % REDUCE == 0)
            MPI_Allreduce(&localerror, &globalerror, 1, MPI_DOUBLE, MPI_MAX, FTI_COMM_WORLD);
        if (globalerror < PRECISION)
            break;
    }
    if (rank == 0)
        printf("Execution finished in %f seconds.\n", MPI_Wtime() - wtime);

    if (argc > 3) { /* the test's result: every rank's grid, then the final iteration */
        MPI_File f;
        MPI_Offset block = (MPI_Offset)cols * lines * sizeof(double);
        MPI_File_open(FTI_COMM_WORLD, argv[3], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                      &f);
        MPI_File_write_at_all(f, rank * block, g, cols * lines, MPI_DOUBLE, MPI_STATUS_IGNORE);
        if (rank == 0)
            MPI_File_write_at(f, nbProcs * block, &i, 1, MPI_INT, MPI_STATUS_IGNORE);
        MPI_File_close(&f);
        if (rank == 0)
            printf("Final iteration %d; grid written to %s\n", i, argv[3]);
    }

    while (argc > 4 && access(argv[4], F_OK) != 0)
        usleep(10000);

    free(h);
    free(g);
    FTI_Finalize();
    MPI_Finalize();
    return 0;
}
