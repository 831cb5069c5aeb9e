/*
 * lossy_bench.h - what the files of lossy_bench share (the program is
 * described in bench/lossy_bench.c, which owns main, the options and g):
 *   lossy/field.c  a field (a data set as the codecs see it): sizes, range,
 *                  the error of a decoded array, cairn's shape and bound
 *   lossy/data.c   the data sets: heat3d, heat2d, EGM96
 *   lossy/paper.c  the wavelet method as published (figs. 8-10)
 *   lossy/bound.c  the error-bounded modes against ZFP (fixed accuracy)
 */
#ifndef CAIRN_BENCH_LOSSY_BENCH_H
#define CAIRN_BENCH_LOSSY_BENCH_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <zfp.h>

#include "../bench_data.h"
#include "compress/compress.h"

#define MAX_REPS 100
#define MAX_FIELDS 3
#define PAPER_BINS 64
#define PAPER_MAX_N 128
#define TARGET_RATIO 2.0   /* the target at 1e-3: >= 2x ZFP's ratio */
#define TARGET_SPEED 0.5   /* at >= half ZFP's compress throughput */
#define SAMPLE (8 * MIB)    /* a timed sample covers at least this many raw bytes */

typedef struct field {
    const char *name;
    void *p;                  /* the values, owned */
    size_t n;                 /* elements */
    uint8_t type;             /* CAIRN_FLOAT or CAIRN_DOUBLE */
    uint8_t ndims;
    uint64_t dims[CAIRN_MAX_DIMS]; /* slowest varying first */
    double lo, hi;            /* min and max over the finite elements */
} field;

typedef struct errs {
    double max_abs, mean_abs; /* over the finite elements */
} errs;


/* The run's settings and buffers (lossy_bench.c defines it). */
struct lossy_globals {
    int reps, warmup;
    uint8_t *dst;      /* payloads, cap bytes */
    size_t cap;
    uint8_t *recon;    /* what cairn's encode says decode will produce */
    uint8_t *dec;      /* decode target */
    uint8_t *scratch;  /* for the zlib codec */
};
extern struct lossy_globals g;

/* field.c */
size_t raw_size(const field *f);
void set_range(field *f);
double range(const field *f);
int inner_calls(const field *f);
const char *dims_str(const field *f, char *buf, size_t cap);
errs measure(const field *f, const void *dec, double bound, const char *what);
cz_shape shape_of(const field *f, double bound);
errs verify_cairn(const field *f, double bound, double max_err, const char *what);

/* data.c */
field make_heat3d(long steps);
field make_heat2d(long n, long steps);
bool make_egm96(const char *path, field *f);

/* paper.c */
const char *qname(int q);
void paper_section(const field *f);

/* bound.c */
size_t zfp_bound_tightest(const field *f);
bool bound_section(const field *f);

#endif
