/*
 * data.c - lossy_bench's data sets: heat3d (a 3-D heat equation with hot
 * discs), heat2d (heat.c's field, bench_data.h) and EGM96 (the geoid grid,
 * when its file is there). Owned by lossy_bench (bench/lossy_bench.c).
 */
#include "lossy_bench.h"

/* ---- data sets ------------------------------------------------------------ */

/* heat.c's fixed cells in the (y, x) plane Z of an NZ x NY x NX grid; a
 * second hot disc in plane 1. */
static bool heat3d_fixed(long ny, long nx, long z, long i, long j, double *val)
{
    long rad = (nx < ny ? nx : ny) / 10;
    long ci = z == 0 ? 2 * ny / 3 : ny / 3, cj = z == 0 ? nx / 2 : nx / 4;
    long di = i - ci, dj = j - cj;
    if (i == 0)
        *val = 1.0;
    else if (i == ny - 1 || j == 0 || j == nx - 1)
        *val = 0.0;
    else if (di * di + dj * dj <= rad * rad)
        *val = 2.0;
    else
        return false;
    return true;
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Uniform in [A, B) from the xorshift state S. */
static double uniform(uint64_t *s, double a, double b)
{
    return a + (b - a) * (double)(xorshift(s) >> 11) * (1.0 / 9007199254740992.0);
}

field make_heat3d(long steps)
{
    enum { NZ = 2, NY = 82, NX = 1156, SPOTS = 40 };
    size_t n = (size_t)NZ * NY * NX;
    double *u = xmalloc(n * sizeof *u), *v = xmalloc(n * sizeof *v);
    uint8_t *fixed = xmalloc(n);
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (int k = 0; k < SPOTS; k++) { /* the initial hot and cold spots */
        long z = (long)(xorshift(&s) % NZ), ci = (long)uniform(&s, 0, NY);
        long cj = (long)uniform(&s, 0, NX), rad = (long)uniform(&s, 4, 21);
        double val = uniform(&s, -1, 3);
        for (long i = ci - rad; i <= ci + rad; i++)
            for (long j = cj - rad; j <= cj + rad; j++)
                if (i >= 0 && i < NY && j >= 0 && j < NX &&
                    (i - ci) * (i - ci) + (j - cj) * (j - cj) <= rad * rad)
                    u[((size_t)z * NY + (size_t)i) * NX + (size_t)j] = val;
    }
    for (long z = 0; z < NZ; z++)
        for (long i = 0; i < NY; i++)
            for (long j = 0; j < NX; j++) {
                size_t k = ((size_t)z * NY + (size_t)i) * NX + (size_t)j;
                double val;
                if (heat3d_fixed(NY, NX, z, i, j, &val))
                    u[k] = v[k] = val, fixed[k] = 1;
            }
    const size_t plane = (size_t)NY * NX;
    for (long t = 0; t < steps; t++) {
        for (long z = 0; z < NZ; z++) {
            /* insulated z faces: the missing neighbour is the cell itself */
            size_t zd = z > 0 ? plane : 0, zu = z < NZ - 1 ? plane : 0;
            for (long i = 1; i < NY - 1; i++) {
                size_t k0 = ((size_t)z * NY + (size_t)i) * NX;
                for (long j = 1; j < NX - 1; j++) {
                    size_t k = k0 + (size_t)j;
                    if (fixed[k])
                        continue;
                    double sum = u[k - NX] + u[k + NX] + u[k - 1] + u[k + 1] + u[k - zd] +
                                 u[k + zu];
                    v[k] = u[k] + (sum - 6.0 * u[k]) / 8.0;
                }
            }
        }
        double *tmp = u;
        u = v, v = tmp;
    }
    free(v);
    free(fixed);
    field f = {"heat3d", u, n, CAIRN_DOUBLE, 3, {NZ, NY, NX}, 0, 0};
    set_range(&f);
    return f;
}

/* examples/heat's field after STEPS steps on an N x N grid. */
field make_heat2d(long n, long steps)
{
    size_t cells = (size_t)n * (size_t)n;
    field f = {"heat2d", heat_field(n, steps), cells, CAIRN_DOUBLE, 2,
               {(uint64_t)n, (uint64_t)n}, 0, 0};
    set_range(&f);
    return f;
}

/* The EGM96 grid as host floats into F; false if PATH does not exist. */
bool make_egm96(const char *path, field *f)
{
    uint32_t rows = 0, cols = 0;
    float *v = load_egm96(path, &rows, &cols);
    if (!v)
        return false;
    *f = (field){"egm96", v, (size_t)rows * cols, CAIRN_FLOAT, 2, {rows, cols}, 0, 0};
    set_range(f);
    return true;
}
