/*
 * heatdis.h - the heat-distribution test application of VeloC's examples
 * (test/heatdis.h there), for the VeloC-API programs of these tests: its
 * constants and the two kernels every variant shares (heatdis_common.c).
 * Plain C and MPI only.
 */
#ifndef HEATDIS_H
#define HEATDIS_H

#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <mpi.h>

#define PRECISION 0.00001 /* stop once the largest change is below this */
#define ITER_TIMES 600    /* iterations of a full run */
#define ITER_OUT 50       /* rank 0 prints the error every ITER_OUT steps */
#define WORKTAG 5         /* tag of the halo exchange */
#define REDUCE 1          /* the error is reduced every REDUCE steps */

/* Zero the NBLINES x M block of a rank; rank 0's first row is the hot edge. */
void initData(int nbLines, int M, int rank, double *h);
/* One Jacobi step on G (H: scratch copy with halos); the rank's largest change. */
double doWork(int numprocs, int rank, int M, int nbLines, double *g, double *h);
/* Not in VeloC's example: the test's witness. Rank 0 writes every rank's
 * block of G and the step to PATH (collective); 0 on success. */
int writeResult(const char *path, int rank, int numprocs, int M, int nbLines, const double *g,
                int step);

#endif
