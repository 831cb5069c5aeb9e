/*
 * incr_apps.h - the two sample applications of incr_bench: real MPI programs
 * whose memory changes between checkpoints the way the paper's did (after
 * Jitsumoto et al., section 4: MAT changes little, NPB LU most of it).
 * Header-only, on top of incr_work.h (the workload type and its helpers);
 * one instance of each per process: only a program's main file includes it.
 *
 *   mat  C = A x B, N x N doubles. Rank r owns N/P rows of A and C and all
 *        of B (each rank generates a row panel of B; MPI_Allgatherv makes
 *        the whole). An interval computes the next few rows of C with a
 *        blocked kernel and MPI_Allreduce's their sum into a small state.
 *   lu   SSOR on a 3-D grid in the manner of NPB LU: 5 unknowns per point,
 *        coupled to each other and, through a variable coefficient kap, to
 *        the 6 neighbours; the ranks are stacked in z and exchange halo
 *        planes with MPI_Sendrecv. An interval runs forward and backward
 *        Gauss-Seidel sweeps (omega 1.2) and computes the residual, whose
 *        norm is MPI_Allreduce'd. u (with its halos) and rsd change at every
 *        point, the forcing frct and kap never do.
 * Both are deterministic: reset() gives the same state on every call, for
 * any number of ranks of the same sizes.
 *
 * A workload is a list of variables to protect and three collective calls:
 * reset (the initial state), interval (compute until the next checkpoint)
 * and check (the computation is right, or the job dies).
 */
#ifndef CAIRN_INCR_APPS_H
#define CAIRN_INCR_APPS_H

#include "bench.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "incr_work.h"

/* ---- mat: C = A x B, a few rows of C per interval ----------------------- */

#define MAT_KB 128 /* tile of the inner dimension */
#define MAT_JB 256 /* tile of the columns of B and C */

typedef struct mat_state {
    int64_t next;      /* next local row of C to compute */
    int64_t intervals;
    double sum;        /* sum of every element of C computed so far, all ranks */
    int64_t n;
} mat_state;

static struct {
    int rank, size;
    size_t n, lo, nloc, rows; /* N, first global row, local rows, rows per interval */
    double *a, *b, *c;
    mat_state st;
} g_mat;

static size_t mat_row0(int r) { return g_mat.n * (size_t)r / (size_t)g_mat.size; }

static void mat_reset(work *w)
{
    (void)w;
    size_t n = g_mat.n;
    for (size_t i = 0; i < g_mat.nloc; i++)
        for (size_t j = 0; j < n; j++) {
            uint64_t gi = g_mat.lo + i;
            g_mat.a[i * n + j] = app_unit(0xA000000000000000ULL ^ (gi * n + j));
            g_mat.b[(g_mat.lo + i) * n + j] = app_unit(0xB000000000000000ULL ^ (gi * n + j));
        }
    memset(g_mat.c, 0, g_mat.nloc * n * sizeof(double));
    /* B: every rank generated its row panel; gather the whole of it everywhere. */
    int np = g_mat.size, *counts = app_alloc(sizeof(int) * (size_t)np);
    int *offs = app_alloc(sizeof(int) * (size_t)np);
    for (int r = 0; r < np; r++) {
        counts[r] = (int)((mat_row0(r + 1) - mat_row0(r)) * n);
        offs[r] = (int)(mat_row0(r) * n);
    }
    check_mpi(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g_mat.b, counts, offs,
                             MPI_DOUBLE, MPI_COMM_WORLD),
              "MPI_Allgatherv of B");
    free(counts);
    free(offs);
    g_mat.st = (mat_state){0, 0, 0.0, (int64_t)n};
}

/* Rows [R0, R0 + NR) of C = A x B, tiled for the cache. */
static void mat_rows(size_t r0, size_t nr)
{
    size_t n = g_mat.n;
    for (size_t jj = 0; jj < n; jj += MAT_JB) {
        size_t jn = n - jj < MAT_JB ? n - jj : MAT_JB;
        for (size_t kk = 0; kk < n; kk += MAT_KB) {
            size_t kn = n - kk < MAT_KB ? n - kk : MAT_KB;
            for (size_t i = r0; i < r0 + nr; i++) {
                double *restrict c = g_mat.c + i * n + jj;
                const double *a = g_mat.a + i * n;
                for (size_t k = kk; k < kk + kn; k++) {
                    double aik = a[k];
                    const double *restrict b = g_mat.b + k * n + jj;
                    for (size_t j = 0; j < jn; j++)
                        c[j] += aik * b[j];
                }
            }
        }
    }
}

static void mat_interval(work *w)
{
    (void)w;
    size_t r0 = (size_t)g_mat.st.next, nr = g_mat.rows;
    if (r0 + nr > g_mat.nloc)
        die("mat: C is full after %lld intervals (%zu rows per rank, --mat-rows %zu): fewer "
            "--reps or a larger --mat-n",
            (long long)g_mat.st.intervals, g_mat.nloc, nr);
    mat_rows(r0, nr);
    double s = 0, all = 0;
    for (size_t i = r0 * g_mat.n; i < (r0 + nr) * g_mat.n; i++)
        s += g_mat.c[i];
    check_mpi(MPI_Allreduce(&s, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
    g_mat.st.next += (int64_t)nr;
    g_mat.st.intervals++;
    g_mat.st.sum += all;
}

/* The last rows computed against plain dot products. */
static void mat_check(work *w)
{
    (void)w;
    int bad = 0;
    size_t n = g_mat.n;
    for (int64_t i = g_mat.st.next - 1; i >= 0 && i >= g_mat.st.next - 2; i--)
        for (size_t j = 0; j < n; j += n / 7 + 1) {
            double dot = 0;
            for (size_t k = 0; k < n; k++)
                dot += g_mat.a[(size_t)i * n + k] * g_mat.b[k * n + j];
            double got = g_mat.c[(size_t)i * n + j];
            if (fabs(got - dot) > 1e-9 * (1.0 + fabs(dot))) {
                fprintf(stderr, "rank %d: mat: C[%lld][%zu] = %.17g, expected %.17g\n",
                        g_mat.rank, (long long)(g_mat.lo + (size_t)i), j, got, dot);
                bad = 1;
            }
        }
    app_agree(bad, "mat: the product is wrong");
}

static void mat_setup(work *w, int rank, int size, size_t n, size_t rows)
{
    g_mat.rank = rank;
    g_mat.size = size;
    g_mat.n = n;
    g_mat.rows = rows;
    g_mat.lo = mat_row0(rank);
    g_mat.nloc = mat_row0(rank + 1) - g_mat.lo;
    g_mat.a = app_alloc(g_mat.nloc * n * sizeof(double));
    g_mat.b = app_alloc(n * n * sizeof(double));
    g_mat.c = app_alloc(g_mat.nloc * n * sizeof(double));
    *w = (work){.name = "mat", .reset = mat_reset, .interval = mat_interval, .check = mat_check};
    add_var(w, "A", g_mat.a, CAIRN_DOUBLE, g_mat.nloc * n, 2, g_mat.nloc, n, 0);
    add_var(w, "B", g_mat.b, CAIRN_DOUBLE, n * n, 2, n, n, 0);
    add_var(w, "C", g_mat.c, CAIRN_DOUBLE, g_mat.nloc * n, 2, g_mat.nloc, n, 0);
    add_var(w, "state", &g_mat.st, CAIRN_UINT8, sizeof g_mat.st, 0, 0, 0, 0);
}

static void mat_free(void) { free(g_mat.a), free(g_mat.b), free(g_mat.c); }

/* ---- lu: SSOR on a 3-D grid, NPB LU style -------------------------------- */

#define LU_C 5         /* unknowns per point */
#define LU_OMEGA 1.2
#define LU_GAMMA 0.02  /* coupling between the unknowns of a point */

typedef struct lu_state {
    int64_t iter;
    double norm;       /* residual 2-norm after the last iteration, all ranks */
    double first;      /* ... after the first interval */
    int64_t pad;
} lu_state;

static struct {
    int rank, size;
    int nx, ny, nz, iters;  /* nz: local interior planes; arrays with halos hold nz + 2 */
    long z0, zn;            /* first global plane of this rank, global planes */
    double *u, *rsd, *frct, *kap;
    lu_state st;
} g_lu;

static const double lu_sigma[LU_C] = {0.10, 0.12, 0.14, 0.16, 0.18};

/* Coordinates in [0, 1] of point (k, j, i), k counted with the lower halo. */
static void lu_xyz(int k, int j, int i, double *x, double *y, double *z)
{
    *x = (double)i / (g_lu.nx - 1);
    *y = (double)j / (g_lu.ny - 1);
    *z = (double)(g_lu.z0 + k) / (double)(g_lu.zn + 1);
}

static int lu_boundary(int k, int j, int i)
{
    long gz = g_lu.z0 + k - 1; /* global interior planes are 0 .. zn - 1 */
    return i == 0 || i == g_lu.nx - 1 || j == 0 || j == g_lu.ny - 1 || gz < 0 || gz >= g_lu.zn;
}

static void lu_reset(work *w)
{
    (void)w;
    int nx = g_lu.nx, ny = g_lu.ny, nz = g_lu.nz;
    for (int k = 0; k < nz + 2; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                size_t q = ((size_t)k * ny + j) * nx + i;
                double x, y, z;
                lu_xyz(k, j, i, &x, &y, &z);
                g_lu.kap[q] = 1.0 + 0.5 * sin(2 * M_PI * x) * sin(2 * M_PI * y) * cos(M_PI * z);
                for (int c = 0; c < LU_C; c++) {
                    g_lu.u[LU_C * q + c] =
                        lu_boundary(k, j, i) ? 1.0 + 0.2 * c + x * y + z * z : 0.0;
                    if (k >= 1 && k <= nz) {
                        size_t p = LU_C * (q - (size_t)nx * ny) + c;
                        g_lu.frct[p] = 0.01 * (c + 1) * (1.0 + sin(M_PI * x) * sin(M_PI * y) *
                                                                   sin(M_PI * z));
                        g_lu.rsd[p] = 0.0;
                    }
                }
            }
    g_lu.st = (lu_state){0, 0.0, 0.0, 0};
}

/* Halo planes of u from the neighbours in z (the global ends keep their boundary). */
static void lu_exchange(void)
{
    int nx = g_lu.nx, ny = g_lu.ny, nz = g_lu.nz, cnt = LU_C * nx * ny;
    int up = g_lu.rank + 1 < g_lu.size ? g_lu.rank + 1 : MPI_PROC_NULL;
    int down = g_lu.rank > 0 ? g_lu.rank - 1 : MPI_PROC_NULL;
    double *u = g_lu.u;
    size_t plane = (size_t)cnt;
    check_mpi(MPI_Sendrecv(u + plane * (size_t)nz, cnt, MPI_DOUBLE, up, 1, u, cnt, MPI_DOUBLE,
                           down, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
              "MPI_Sendrecv up");
    check_mpi(MPI_Sendrecv(u + plane, cnt, MPI_DOUBLE, down, 2, u + plane * (size_t)(nz + 1), cnt,
                           MPI_DOUBLE, up, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
              "MPI_Sendrecv down");
}

/* Point Q (interior): relax (RES 0) or compute its residual (RES 1). */
static inline void lu_point(size_t q, int res)
{
    const size_t sx = 1, sy = (size_t)g_lu.nx, sz = (size_t)g_lu.nx * g_lu.ny;
    const double *kap = g_lu.kap;
    double *u = g_lu.u, kp = kap[q];
    const size_t nb[6] = {q - sx, q + sx, q - sy, q + sy, q - sz, q + sz};
    double f[6], fs = 0;
    for (int n = 0; n < 6; n++) {
        f[n] = 0.5 * (kp + kap[nb[n]]);
        fs += f[n];
    }
    double *uq = u + LU_C * q;
    size_t p = LU_C * (q - sz);
    for (int c = 0; c < LU_C; c++) {
        double s = 0, cross = 0;
        for (int n = 0; n < 6; n++)
            s += f[n] * u[LU_C * nb[n] + c];
        for (int e = 0; e < LU_C; e++)
            cross += e == c ? 0.0 : uq[e];
        /* Row c at point q: d u_c - sum_n f_n u_c(n) - gamma sum_{e != c} u_e = frct_c. */
        double d = fs + lu_sigma[c], rhs = g_lu.frct[p + c] + s + LU_GAMMA * cross;
        if (res)
            g_lu.rsd[p + c] = rhs - d * uq[c];
        else
            uq[c] = (1.0 - LU_OMEGA) * uq[c] + LU_OMEGA * rhs / d;
    }
}

static void lu_interval(work *w)
{
    (void)w;
    int nx = g_lu.nx, ny = g_lu.ny, nz = g_lu.nz;
#define LU_Q(k, j, i) (((size_t)(k) * ny + (j)) * nx + (i))
    for (int it = 0; it < g_lu.iters; it++) {
        lu_exchange();
        for (int k = 1; k <= nz; k++) /* lower sweep */
            for (int j = 1; j < ny - 1; j++)
                for (int i = 1; i < nx - 1; i++)
                    lu_point(LU_Q(k, j, i), 0);
        lu_exchange();
        for (int k = nz; k >= 1; k--) /* upper sweep */
            for (int j = ny - 2; j >= 1; j--)
                for (int i = nx - 2; i >= 1; i--)
                    lu_point(LU_Q(k, j, i), 0);
        g_lu.st.iter++;
    }
    lu_exchange();
    double s = 0, all = 0;
    for (int k = 1; k <= nz; k++)
        for (int j = 1; j < ny - 1; j++)
            for (int i = 1; i < nx - 1; i++) {
                lu_point(LU_Q(k, j, i), 1);
                const double *r = g_lu.rsd + LU_C * (LU_Q(k, j, i) - (size_t)nx * ny);
                for (int c = 0; c < LU_C; c++)
                    s += r[c] * r[c];
            }
#undef LU_Q
    check_mpi(MPI_Allreduce(&s, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
    g_lu.st.norm = sqrt(all);
    if (g_lu.st.first == 0)
        g_lu.st.first = g_lu.st.norm;
}

/* SSOR on this system converges: the residual must have shrunk. */
static void lu_check(work *w)
{
    (void)w;
    int bad = !(g_lu.st.norm > 0 && isfinite(g_lu.st.norm)) ||
              (g_lu.st.iter > g_lu.iters && !(g_lu.st.norm < g_lu.st.first));
    if (bad && g_lu.rank == 0)
        fprintf(stderr, "lu: residual %.6g after %lld iterations, %.6g after the "
                        "first interval\n",
                g_lu.st.norm, (long long)g_lu.st.iter, g_lu.st.first);
    app_agree(bad, "lu: SSOR does not converge");
}

static void lu_setup(work *w, int rank, int size, int n, int iters)
{
    g_lu.rank = rank;
    g_lu.size = size;
    g_lu.nx = g_lu.ny = g_lu.nz = n;
    g_lu.iters = iters;
    g_lu.z0 = (long)rank * n;
    g_lu.zn = (long)size * n;
    size_t plane = (size_t)n * n, halo = plane * (size_t)(n + 2), inner = plane * (size_t)n;
    g_lu.u = app_alloc(sizeof(double) * LU_C * halo);
    g_lu.rsd = app_alloc(sizeof(double) * LU_C * inner);
    g_lu.frct = app_alloc(sizeof(double) * LU_C * inner);
    g_lu.kap = app_alloc(sizeof(double) * halo);
    *w = (work){.name = "lu", .reset = lu_reset, .interval = lu_interval, .check = lu_check};
    add_var(w, "u", g_lu.u, CAIRN_DOUBLE, LU_C * halo, 0, 0, 0, 0);
    add_var(w, "rsd", g_lu.rsd, CAIRN_DOUBLE, LU_C * inner, 0, 0, 0, 0);
    add_var(w, "frct", g_lu.frct, CAIRN_DOUBLE, LU_C * inner, 0, 0, 0, 0);
    add_var(w, "kap", g_lu.kap, CAIRN_DOUBLE, halo, 3, (size_t)n + 2, (size_t)n, (size_t)n);
    add_var(w, "state", &g_lu.st, CAIRN_UINT8, sizeof g_lu.st, 0, 0, 0, 0);
}

static void lu_free(void) { free(g_lu.u), free(g_lu.rsd), free(g_lu.frct), free(g_lu.kap); }

#endif /* CAIRN_INCR_APPS_H */
