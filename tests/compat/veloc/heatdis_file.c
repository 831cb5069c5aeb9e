/*
 * heatdis_file.c - VeloC's file-based example (test/heatdis_file.c of
 * ECP-VeloC/VELOC), kept call for call: each checkpoint writes the iteration
 * counter and both grids into the file VELOC_Route_file gives for it,
 * between VELOC_Checkpoint_begin and VELOC_Checkpoint_end(valid); a restart
 * reads them back from the file it routes between VELOC_Restart_begin and
 * VELOC_Restart_end(valid). Only veloc.h and MPI.
 *
 *   heatdis_file <mem_in_mb> <cfg_file> [result_file]
 */
#include "heatdis.h"
#include "include/veloc.h" /* as VeloC's own test/heatdis_file.c */

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

    wtime = MPI_Wtime();
    int v = VELOC_Restart_test("heatdis", 0);
    if (v > 0) {
        printf("Previous checkpoint found at iteration %d, initiating restart...\n", v);
        assert(VELOC_Restart_begin("heatdis", v) == VELOC_SUCCESS);
        char original[VELOC_MAX_NAME], veloc_file[VELOC_MAX_NAME];
        sprintf(original, "heatdis-file-ckpt-%d_%d.dat", v, rank);
        assert(VELOC_Route_file(original, veloc_file) == VELOC_SUCCESS);
        int valid = 1;
        FILE *fd = fopen(veloc_file, "rb");
        if (fd != NULL) {
            if (fread(&i, sizeof(int), 1, fd) != 1)
                valid = 0;
            if (fread(h, sizeof(double), M * nbLines, fd) != (size_t)(M * nbLines))
                valid = 0;
            if (fread(g, sizeof(double), M * nbLines, fd) != (size_t)(M * nbLines))
                valid = 0;
            fclose(fd);
        } else
            valid = 0; /* no file to read */
        assert(VELOC_Restart_end(valid) == VELOC_SUCCESS);
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
        if (i % CKPT_FREQ == 0) {
            assert(VELOC_Checkpoint_wait() == VELOC_SUCCESS);
            assert(VELOC_Checkpoint_begin("heatdis", i) == VELOC_SUCCESS);
            char original[VELOC_MAX_NAME], veloc_file[VELOC_MAX_NAME];
            sprintf(original, "heatdis-file-ckpt_%d_%d.dat", i, rank);
            assert(VELOC_Route_file(original, veloc_file) == VELOC_SUCCESS);
            int valid = 1;
            FILE *fd = fopen(veloc_file, "wb");
            if (fd != NULL) {
                if (fwrite(&i, sizeof(int), 1, fd) != 1)
                    valid = 0;
                if (fwrite(h, sizeof(double), M * nbLines, fd) != (size_t)(M * nbLines))
                    valid = 0;
                if (fwrite(g, sizeof(double), M * nbLines, fd) != (size_t)(M * nbLines))
                    valid = 0;
                fclose(fd);
            } else
                valid = 0; /* cannot create the file */
            assert(VELOC_Checkpoint_end(valid) == VELOC_SUCCESS);
        }
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
