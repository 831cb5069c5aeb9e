/*
 * z_bench.h - what the files of z_bench share (the program is described in
 * bench/z_bench.c, which owns main, the options, the data sets and g):
 *   z/files.c     small helpers, frames in memory, files, the write pipeline
 *                 into a file or nowhere, reading back and verifying
 *   z/codec.c     the codec table and the automatic choice (cz_choose)
 *   z/pipeline.c  the pipeline against the serial way, buffers and threads
 */
#ifndef CAIRN_BENCH_Z_BENCH_H
#define CAIRN_BENCH_Z_BENCH_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mpi.h>

#include "../bench_data.h"
#include "compress/compress.h"

#define MAX_REPS 100
#define BUF ((uint32_t)MIB)   /* the pipeline buffer of every section but the table */
#define THREADS 2             /* this machine's cores */
#define MAX_SETS 3
#define MAX_METHODS 16
#define SLOW 10.0             /* the modelled store is this much slower */

typedef struct dset {
    const char *name;
    uint8_t *p;
    size_t size;
    uint8_t type;
} dset;

/* Frames encoded back to back in memory, as the serial way stores them. */
typedef struct frames {
    uint8_t *buf;
    size_t *len;      /* each frame's size */
    size_t n, used;   /* frames, bytes */
    size_t size;      /* raw bytes it has room for */
    uint32_t bs;      /* in buffers of this size */
} frames;

/* The automatic choice's time on a data set and the best fixed codec's. */
typedef struct aresult {
    double auto_s, best_s; /* medians */
} aresult;

/* The run's settings and buffers (z_bench.c defines it). */
struct z_globals {
    int reps, warmup;
    const char *base;
    unsigned seq;     /* for fresh file names */
    uint8_t *dst;     /* decode target, the largest data set's size */
    uint8_t *back;    /* a file read back */
    size_t back_cap;
    uint8_t *scratch; /* CZ_MAX_BUF */
};
extern struct z_globals g;

/* files.c */
double med(const double *v, int n);
void frames_alloc(frames *f, size_t size, uint32_t bs);
void frames_free(frames *f);
double encode_all(frames *f, const dset *d, int codec, int level, uint32_t bs);
double decode_all(const frames *f, const dset *d, int codec);
double write_frames(const frames *f);
double write_raw(const dset *d);
void fpzip_shape_section(const dset *d, uint32_t rows, uint32_t cols);
double pipe_file(const dset *d, int codec, const cz_opts *o, bool verify, cz_stats *st);
double pipe_drop(const dset *d, int codec, const cz_opts *o, cz_stats *st);

/* codec.c */
void codec_section(const dset *d, frames *f);
aresult auto_section(const dset *d);

/* pipeline.c */
void pipeline_section(const dset *heat, int codec, size_t scale_size);

#endif
