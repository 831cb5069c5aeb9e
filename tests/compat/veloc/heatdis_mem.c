/*
 * heatdis_mem.c - VeloC's memory-based example (test/heatdis_mem.c of
 * ECP-VeloC/VELOC), kept call for call: VELOC_Init with a config file,
 * three protected regions (the iteration counter and both grids),
 * VELOC_Restart_test / VELOC_Restart on start, VELOC_Checkpoint every
 * ITER_TIMES / 3 iterations, VELOC_Finalize(1). Only veloc.h and MPI.
 *
 *   heatdis_mem <mem_in_mb> <cfg_file> [result_file]
 *
 * The optional result file (not in VeloC's example) receives the final grid
 * of every rank (heatdis_common.c), which the tests compare byte for byte.
 */
#include "heatdis.h"
#include "veloc.h"

#undef NDEBUG /* the example checks every VeloC call with assert */
#include <assert.h>

static const unsigned int CKPT_FREQ = ITER_TIMES / 3;

int main(int argc, char *argv[])
{
    int rank, nbProcs, nbLines, i, M, arg;
    double wtime, *h, *g, memSize, localerror, globalerror = 1;

    if (argc < 3) {
        printf("Usage: %s <mem_in_mb> <cfg_file> [result_file]\n", argv[0]);
        exit(1);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &nbProcs);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (sscanf(argv[1], "%d", &arg) != 1) {
        printf("Wrong memory size! See usage\n");
        exit(3);
    }
    if (VELOC_Init(MPI_COMM_WORLD, argv[2]) != VELOC_SUCCESS) {
        printf("Error initializing VELOC! Aborting...\n");
        exit(2);
    }

    /* two grids of M columns share the memory asked for */
    M = (int)sqrt((double)(arg * 1024.0 * 1024.0 * nbProcs) / (2 * sizeof(double)));
    nbLines = (M / nbProcs) + 3;
    h = (double *)malloc(sizeof(double) * M * nbLines);
    g = (double *)malloc(sizeof(double) * M * nbLines);
    initData(nbLines, M, rank, g);
    memSize = M * nbLines * 2 * sizeof(double) / (1024 * 1024);
    if (rank == 0) {
        printf("Local data size is %d x %d = %f MB (%d).\n", M, nbLines, memSize, arg);
        printf("Target precision : %f \n", PRECISION);
        printf("Maximum number of iterations : %d \n", ITER_TIMES);
    }

    VELOC_Mem_protect(0, &i, 1, sizeof(int));
    VELOC_Mem_protect(1, h, M * nbLines, sizeof(double));
    VELOC_Mem_protect(2, g, M * nbLines, sizeof(double));

    wtime = MPI_Wtime();
    int v = VELOC_Restart_test("heatdis", 0);
    if (v > 0) {
        printf("Previous checkpoint found at iteration %d, initiating restart...\n", v);
        assert(VELOC_Restart("heatdis", v) == VELOC_SUCCESS);
    } else
        i = 0;
    while (i < ITER_TIMES) {
        localerror = doWork(nbProcs, rank, M, nbLines, g, h);
        if ((i % ITER_OUT) == 0 && rank == 0)
            printf("Step : %d, error = %f\n", i, globalerror);
        if ((i % REDUCE) == 0)
            MPI_Allreduce(&localerror, &globalerror, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (globalerror < PRECISION)
            break;
        i++;
        if (i % CKPT_FREQ == 0)
            assert(VELOC_Checkpoint("heatdis", i) == VELOC_SUCCESS);
    }
    if (rank == 0)
        printf("Execution finished in %lf seconds.\n", MPI_Wtime() - wtime);
    if (argc > 3 && writeResult(argv[3], rank, nbProcs, M, nbLines, g, i) != 0) {
        printf("Cannot write %s\n", argv[3]);
        exit(4);
    }

    free(h);
    free(g);
    VELOC_Finalize(1); /* wait for checkpoints to finish */
    MPI_Finalize();
    return 0;
}
