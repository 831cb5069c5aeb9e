/*
 * bench_data.h - the data sets the compression benchmarks (z_bench,
 * lossy_bench) share: examples/heat's field, the same bit for bit as heat.c
 * on one rank, and proj-data's EGM96 geoid grid; with the allocation and
 * ratio helpers both use. Header-only, on top of bench.h.
 */
#ifndef CAIRN_BENCH_DATA_H
#define CAIRN_BENCH_DATA_H

#include "bench.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((size_t)1 << 20)
#define EGM96_DEFAULT "/usr/share/proj/egm96_15.gtx"

static inline void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die("out of memory (%zu bytes)", n);
    memset(p, 0, n); /* fault the pages in now, not inside a timed run */
    return p;
}

/* Median over N of A[i] / B[i] (N >= 1). */
static inline double med_ratio(const double *a, const double *b, int n)
{
    double *r = malloc((size_t)n * sizeof *r);
    if (!r)
        die("out of memory");
    for (int i = 0; i < n; i++)
        r[i] = b[i] > 0 ? a[i] / b[i] : 0;
    double m = median(r, n);
    free(r);
    return m;
}

/* A simulation state as a lossless codec sees it (l4_bench, l4sync_bench):
 * the field after STEP steps on rank RANK, smooth with noise in its low bits. */
static inline void bench_field(double *u, size_t n, int rank, long step)
{
    uint64_t x = 0x9E3779B97F4A7C15ull * (uint64_t)(rank + 1) + (uint64_t)step;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double t = (double)i * 1e-6 + 0.01 * (double)step;
        u[i] = 300.0 + 20.0 * sin(t * (1 + rank)) + 1e-6 * (double)(x >> 11) / 9007199254740992.0;
    }
}

/* ---- examples/heat's field ------------------------------------------------ */

/* examples/heat's fixed_cell on an N x N grid. */
static inline bool heat_fixed(long n, long i, long j, double *val)
{
    long di = i - 2 * n / 3, dj = j - n / 2, rad = n / 10;
    if (i == 0)
        *val = 1.0;
    else if (i == n - 1 || j == 0 || j == n - 1)
        *val = 0.0;
    else if (di * di + dj * dj <= rad * rad)
        *val = 2.0;
    else
        return false;
    return true;
}

/*
 * examples/heat's field after STEPS steps on an N x N grid (one rank: the
 * edges are fixed, so no halos). Step s can make a cell nonzero only within
 * s + 1 cells of a nonzero fixed cell, so only the top rows and a box around
 * the disc are updated; elsewhere both buffers stay 0, as the full update
 * would leave them. The sum is in heat.c's order, so the field is the same
 * bit for bit. Returns N * N doubles (free them).
 */
static inline double *heat_field(long n, long steps)
{
    double *u = xmalloc((size_t)n * (size_t)n * sizeof *u);
    double *v = xmalloc((size_t)n * (size_t)n * sizeof *v);
    long ci = 2 * n / 3, cj = n / 2, rad = n / 10;
    double val;
    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++)
            if (heat_fixed(n, i, j, &val))
                u[i * n + j] = v[i * n + j] = val;
    for (long s = 0; s < steps; s++) {
        long r = s + 2; /* reach, with a margin */
        for (long i = 1; i < n - 1; i++) {
            long j0, j1;
            if (i <= r) {
                j0 = 1, j1 = n - 2;
            } else if (i >= ci - rad - r && i <= ci + rad + r) {
                j0 = cj - rad - r > 1 ? cj - rad - r : 1;
                j1 = cj + rad + r < n - 2 ? cj + rad + r : n - 2;
            } else {
                continue;
            }
            const double *no = u + (i - 1) * n, *c = u + i * n, *so = u + (i + 1) * n;
            double *out = v + i * n;
            for (long j = j0; j <= j1; j++)
                out[j] = 0.25 * (no[j] + so[j] + c[j - 1] + c[j + 1]);
            long di = i - ci;
            if (di * di <= rad * rad)
                for (long j = cj - rad; j <= cj + rad; j++)
                    if (heat_fixed(n, i, j, &val))
                        out[j] = val;
        }
        double *t = u;
        u = v, v = t;
    }
    free(v);
    return u;
}

/* The share of U[0..N-1] that is exactly 0. */
static inline double zero_share(const double *u, size_t n)
{
    size_t z = 0;
    for (size_t k = 0; k < n; k++)
        z += u[k] == 0.0;
    return (double)z / (double)n;
}

/* ---- the EGM96 geoid grid ---------------------------------------------------- */

static inline uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * proj-data's EGM96 grid at PATH (a 40-byte header, rows and columns as
 * big-endian uint32 at bytes 32 and 36, then big-endian float32) as host
 * floats, ROWS x COLS (free them); NULL if PATH does not exist.
 */
static inline float *load_egm96(const char *path, uint32_t *rows, uint32_t *cols)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT)
            return NULL;
        die("open %s: %s", path, strerror(errno));
    }
    uint8_t hdr[40];
    if (fread(hdr, 1, sizeof hdr, f) != sizeof hdr)
        die("%s: no 40-byte header", path);
    *rows = be32(hdr + 32), *cols = be32(hdr + 36);
    if (*rows == 0 || *cols == 0 || *rows > 100000 || *cols > 100000)
        die("%s: header says %u x %u", path, *rows, *cols);
    size_t n = (size_t)*rows * *cols;
    uint8_t *raw = xmalloc(4 * n);
    if (fread(raw, 4, n, f) != n || fgetc(f) != EOF)
        die("%s: not %u x %u float32 after the header", path, *rows, *cols);
    fclose(f);
    float *v = xmalloc(n * sizeof *v);
    for (size_t k = 0; k < n; k++) {
        uint32_t w = be32(raw + 4 * k);
        memcpy(&v[k], &w, 4);
    }
    free(raw);
    return v;
}

#endif /* CAIRN_BENCH_DATA_H */
