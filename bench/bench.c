/*
 * bench.c - the one definition of what bench.h declares for every benchmark
 * program: its name and MPI rank, which die() prints. Linked into every
 * program of bench/ (Makefile), so the files of a program split over
 * bench/NAME/ share them.
 */
#include "bench.h"

const char *bench_prog = "bench";
int bench_rank = 0;
