/*
 * t_remap.c - the MPI test application behind tests/mpi/run_remap.sh: a
 * restart onto another rank count or node layout (cairn_protect_block,
 * cairn_protect_replicated, cairn_restart's remap).
 *
 *   save N LEVEL       checkpoint ids 1..N at LEVEL
 *   restore G [CODE]   cairn_restart(CAIRN_LATEST) on this run's rank count
 *                      must restore generation G, every element of every
 *                      rank's new block equal to the global definition (a
 *                      lossy variable within its bound), the replicated step
 *                      stored rank 0's; then (T_CONTINUE) checkpoint G + 1
 *                      at level 1 on this layout. With CODE (an error name):
 *                      the restart must fail with it, memory unchanged.
 *
 * Variables: "u", doubles, a T_DIMS-D (1, 2 or 3) global array in uneven
 * blocks over a process grid (MPI_Dims_create), part i of P along a
 * dimension weighted i + 1; "k", int32, a 1-D global array in blocks
 * weighted P - i; "step", int64, replicated (rank r stores 10 G + r, a
 * remap gives everyone 10 G). T_LOSSY: "u" lossy within 0.01. T_NONDIST:
 * also "x", an int32 array neither distributed nor replicated. T_EXTRA: also
 * "w", replicated doubles that no generation holds. T_KBAD=overlap: ranks
 * above 0 declare "k"'s block 20 elements early (the stored blocks overlap);
 * T_KBAD=gap: "k"'s global array is one longer than the blocks cover, and a
 * restore's last rank asks for that element too. Values are a
 * function of the global index and the generation, a few elements changing
 * per generation (so incremental chains store deltas). Ranks agree on
 * pass/fail; rank 0 prints "PASS mode" or "FAIL mode: why".
 */
#include "cairn.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NK 1237
#define SENT (-7.0)

static int rank, nranks, ndims;
static size_t gdim[3], start[3], cnt[3], nu;
static size_t kstart, kcnt;
static double *u;
static int32_t *k;
static int64_t step;
static int32_t x[10];
static char why[1000];
static bool lossy;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
    if (why[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    fprintf(stderr, "rank %d: %s\n", rank, why);
}

static double uv(long g, size_t lin) { return (double)lin * 0.25 + (lin % 5003 == 0 ? (double)g : 0) + 0.5; }
static int32_t kv(long g, size_t lin) { return (int32_t)(lin * 3 + (lin % 4001 == 0 ? (size_t)g : 0)); }

/* Part I of P of N elements, weighted I + 1 (UP) or P - I: *S, *C. */
static void part(size_t n, int p, int i, bool up, size_t *s, size_t *c)
{
    size_t tot = (size_t)p * (size_t)(p + 1) / 2, before = 0;
    for (int j = 0; j < i; j++)
        before += up ? (size_t)j + 1 : (size_t)(p - j);
    size_t mine = up ? (size_t)i + 1 : (size_t)(p - i);
    *s = n * before / tot;
    *c = n * (before + mine) / tot - *s;
}

static void layout(bool restoring)
{
    const char *d = getenv("T_DIMS");
    ndims = d ? atoi(d) : 1;
    size_t g1[] = {100003}, g2[] = {301, 203}, g3[] = {41, 37, 29};
    const size_t *g = ndims == 3 ? g3 : ndims == 2 ? g2 : g1;
    int pd[3] = {0, 0, 0};
    MPI_Dims_create(nranks, ndims, pd);
    int r = rank, coord[3];
    for (int i = ndims - 1; i >= 0; i--) {
        coord[i] = r % pd[i];
        r /= pd[i];
    }
    nu = 1;
    for (int i = 0; i < ndims; i++) {
        gdim[i] = g[i];
        part(g[i], pd[i], coord[i], true, &start[i], &cnt[i]);
        nu *= cnt[i];
    }
    part(NK, nranks, rank, false, &kstart, &kcnt);
    const char *kb = getenv("T_KBAD");
    if (kb && strcmp(kb, "gap") == 0 && restoring && rank == nranks - 1)
        kcnt++; /* element NK, which no stored block holds */
    u = malloc(sizeof *u * (nu ? nu : 1));
    k = malloc(sizeof *k * (kcnt ? kcnt : 1));
}

/* Global linear index of local element I of "u". */
static size_t ulin(size_t i)
{
    size_t idx[3] = {0, 0, 0}, rest = i, lin = 0;
    for (int d = ndims - 1; d >= 0; d--) {
        idx[d] = rest % cnt[d];
        rest /= cnt[d];
    }
    for (int d = 0; d < ndims; d++)
        lin = lin * gdim[d] + start[d] + idx[d];
    return lin;
}

static void fill(long g)
{
    for (size_t i = 0; i < nu; i++)
        u[i] = uv(g, ulin(i));
    for (size_t i = 0; i < kcnt; i++)
        k[i] = kv(g, kstart + i);
    step = 10 * g + rank;
    for (int i = 0; i < 10; i++)
        x[i] = rank + i;
}

static void protect(cairn_ctx *ctx)
{
    int rc = cairn_protect(ctx, "u", u, CAIRN_DOUBLE, nu, 0, NULL);
    if (rc == 0)
        rc = cairn_protect_block(ctx, "u", ndims, gdim, start, cnt);
    size_t kg = NK, ks = kstart;
    const char *kb = getenv("T_KBAD");
    if (kb && strcmp(kb, "gap") == 0)
        kg = NK + 1;
    if (kb && strcmp(kb, "overlap") == 0 && rank > 0)
        ks = kstart - 20; /* bits of whole bytes marked twice, not only an edge */
    if (rc == 0)
        rc = cairn_protect(ctx, "k", k, CAIRN_INT32, kcnt, 0, NULL);
    if (rc == 0)
        rc = cairn_protect_block(ctx, "k", 1, &kg, &ks, &kcnt);
    if (rc == 0)
        rc = cairn_protect(ctx, "step", &step, CAIRN_INT64, 1, 0, NULL);
    if (rc == 0)
        rc = cairn_protect_replicated(ctx, "step");
    if (rc == 0 && lossy)
        rc = cairn_protect_bound(ctx, "u", 0.01);
    static double w[5];
    if (rc == 0 && getenv("T_EXTRA")) /* replicated, in no generation */
        rc = cairn_protect(ctx, "w", w, CAIRN_DOUBLE, 5, 0, NULL);
    if (rc == 0 && getenv("T_EXTRA"))
        rc = cairn_protect_replicated(ctx, "w");
    if (rc == 0 && getenv("T_NONDIST"))
        rc = cairn_protect(ctx, "x", x, CAIRN_INT32, 10, 0, NULL);
    if (rc)
        fail("protect: %s: %s", cairn_strerror(rc), cairn_errmsg(ctx));
}

static int code_of(const char *name)
{
    static const struct { const char *n; int c; } t[] = {
        {"CAIRN_EINVAL", CAIRN_EINVAL}, {"CAIRN_ENOENT", CAIRN_ENOENT},
        {"CAIRN_ECORRUPT", CAIRN_ECORRUPT}, {"CAIRN_EMISMATCH", CAIRN_EMISMATCH},
        {"CAIRN_ELOST", CAIRN_ELOST}, {"CAIRN_EFORMAT", CAIRN_EFORMAT}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcmp(t[i].n, name) == 0)
            return t[i].c;
    return 1;
}

static void check_restored(long g)
{
    double tol = lossy ? 0.01 : 0.0;
    for (size_t i = 0; i < nu && !why[0]; i++) {
        double want = uv(g, ulin(i));
        if (!(fabs(u[i] - want) <= tol) || (!lossy && memcmp(&u[i], &want, sizeof want) != 0))
            fail("u[%zu] (global %zu) is %.17g, expected %.17g", i, ulin(i), u[i], want);
    }
    for (size_t i = 0; i < kcnt && !why[0]; i++)
        if (k[i] != kv(g, kstart + i))
            fail("k[%zu] (global %zu) is %d, expected %d", i, kstart + i, k[i], kv(g, kstart + i));
    if (!why[0] && step != 10 * g)
        fail("step is %lld, expected %lld (stored rank 0's)", (long long)step, (long long)(10 * g));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    lossy = getenv("T_LOSSY") != NULL;
    const char *mode = argc > 1 ? argv[1] : "";
    layout(strcmp(mode, "restore") == 0);
    cairn_ctx *ctx = NULL;
    int rc = cairn_init(MPI_COMM_WORLD, NULL, &ctx);
    if (rc)
        fail("cairn_init: %s: %s", cairn_strerror(rc), cairn_errmsg(NULL));
    if (!why[0])
        protect(ctx);
    if (!why[0] && strcmp(mode, "save") == 0 && argc == 4) {
        long n = atol(argv[2]);
        int level = atoi(argv[3]);
        for (long g = 1; g <= n && !why[0]; g++) {
            fill(g);
            rc = cairn_checkpoint(ctx, g, level);
            if (rc)
                fail("checkpoint %ld: %s: %s", g, cairn_strerror(rc), cairn_errmsg(ctx));
        }
    } else if (!why[0] && strcmp(mode, "restore") == 0 && argc >= 3) {
        long g = atol(argv[2]), got = -1;
        int want = argc > 3 ? code_of(argv[3]) : 0;
        for (size_t i = 0; i < nu; i++)
            u[i] = SENT;
        for (size_t i = 0; i < kcnt; i++)
            k[i] = -7;
        step = -7;
        rc = cairn_restart(ctx, CAIRN_LATEST, &got);
        if (rank == 0)
            printf("restart: %s (%s)\n", cairn_strerror(rc), rc ? cairn_errmsg(ctx) : "");
        if (want) {
            if (rc != want)
                fail("restart returned %s (%s), expected %s", cairn_strerror(rc),
                     cairn_errmsg(ctx), argv[3]);
            for (size_t i = 0; i < nu && !why[0]; i++)
                if (u[i] != SENT)
                    fail("a failed restart changed u[%zu]", i);
            for (size_t i = 0; i < kcnt && !why[0]; i++)
                if (k[i] != -7)
                    fail("a failed restart changed k[%zu]", i);
            if (step != -7)
                fail("a failed restart changed step");
        } else if (rc) {
            fail("restart: %s: %s", cairn_strerror(rc), cairn_errmsg(ctx));
        } else if (got != g) {
            fail("restored generation %ld, expected %ld", got, g);
        } else {
            check_restored(g);
        }
        int ok = !why[0], all = 0;
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        if (all && !want && getenv("T_CONTINUE")) {
            fill(g + 1);
            step = 10 * (g + 1); /* replicated: the same on every rank */
            rc = cairn_checkpoint(ctx, g + 1, 1);
            if (rc)
                fail("checkpoint %ld after the remap: %s: %s", g + 1, cairn_strerror(rc),
                     cairn_errmsg(ctx));
        }
    } else if (!why[0]) {
        fail("usage: t_remap save N LEVEL | restore G [CODE]");
    }
    int ok = !why[0], all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (ctx)
        cairn_finalize(ctx);
    if (rank == 0) {
        if (all)
            printf("PASS %s\n", mode);
        else
            printf("FAIL %s%s%s\n", mode, why[0] ? ": " : " (another rank failed)", why);
    }
    free(u);
    free(k);
    MPI_Finalize();
    return all ? 0 : 1;
}
