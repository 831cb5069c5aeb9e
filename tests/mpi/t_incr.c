/*
 * t_incr.c - the MPI test application behind tests/mpi/run_incr.sh:
 * incremental chains, written and restored by real jobs.
 *
 * Each rank protects:
 *   grid    double 64 x 512 (256 KiB), changed in 4 KiB regions
 *   recs    bytes: 3000 records of 24 bytes; record 170 straddles byte 4096,
 *           so a 4 KiB block boundary splits it
 *   grow    int32, 3000..6072 elements: its size changes with the
 *           generation, its values never do (blocks keep their contents)
 *   calm    float 20000, written once (hinted unchanged in "hint" runs); with
 *           T_RETYPE, protected as int32 from generation 3 on (same bytes)
 *   smooth  double 30000, lossy within 1e-4 of its range (predict codec),
 *           changed in regions like grid
 *   step    int64, every generation
 * With T_LOSSY=CODEC, smooth uses CODEC instead of predict and grid is lossy
 * too, with CODEC within 1e-9 (about one unit in the last place of its
 * largest values: the codec's corrections, not its quantizer, keep it there).
 * With T_SPIKE, generation 1's smooth holds a spike of 1e6 (element 5), so
 * its range, and with it its relative bound, is 25000 times that of the
 * generations after it, whose blocks it still holds unchanged.
 * Region R of a variable at generation G holds a function of (rank, variable,
 * R, the last generation <= G that touched R). T_WORK says what a generation
 * after the first touches: none, few (3 regions of grid, one record, record
 * 170), half (4 in 9 regions, every other record) or all. So the state of
 * any generation is known without having kept it, and a restored byte from
 * the wrong generation, rank or place is caught.
 *
 * Modes (rank 0 prints PASS/FAIL; exit 0 only on PASS):
 *   save N [LEVELS]   checkpoint generations 1..N; LEVELS is a level, or
 *                     "alt" for 1 on odd and 3 on even generations
 *   resume G N        restart (newest must be G), then save G+1..N at level 1
 *   resume-id G N L   restart generation G, then save G+1..N at level 1, the
 *                     last one (N) at level L
 *   restore G         restart CAIRN_LATEST, expect G, compare
 *   restore-id G      restart generation G, compare
 *   restore-ids G L   restart each generation G..L in turn, each by a new
 *                     context, compare (one job, many restarts)
 *   parents P1 P2 ..  cairn_generations, oldest first, must have these parents
 *                     (-1: full), and each must store less than its raw size
 *                     when incremental
 *   expect-fail-id G CODE  restart generation G must fail with CODE (e.g.
 *                     CAIRN_ECORRUPT) and leave memory as it was before the
 *                     call, byte for byte (cairn.h: memory unchanged)
 *   hint N            save N generations hinting calm unchanged and step
 *                     changed; generation >= 2 must store none of calm
 */
#include "cairn.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NX 64
#define NY 512
#define NREC 3000
#define RECSZ 24
#define GROW_MAX (3000 + 3 * 1024)
#define NCALM 20000
#define NSMOOTH 30000
#define REGION 4096 /* bytes */

static int rank;
static const char *work = "few";
static const char *lossy; /* T_LOSSY */
static double *grid, *smooth;
static uint8_t *recs;
static int32_t *grow;
static float *calm;
static int64_t step;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* Does generation K touch region R (of NR) of a region-changed variable? */
static int touched(long k, uint64_t r, uint64_t nr)
{
    if (k <= 1 || strcmp(work, "all") == 0)
        return 1;
    if (strcmp(work, "none") == 0)
        return 0;
    if (strcmp(work, "half") == 0)
        return (r + (uint64_t)k) % 9 < 4;
    return r == (uint64_t)k * 7 % nr || r == ((uint64_t)k * 7 + 1) % nr ||
           r == ((uint64_t)k * 13 + 5) % nr; /* few */
}

static long last_touch(long g, uint64_t r, uint64_t nr)
{
    for (long k = g; k > 1; k--)
        if (touched(k, r, nr))
            return k;
    return 1;
}

/* Does generation K touch record R? */
static int rec_touched(long k, int r)
{
    if (k <= 1 || strcmp(work, "all") == 0)
        return 1;
    if (strcmp(work, "none") == 0)
        return 0;
    if (strcmp(work, "half") == 0)
        return (r + k) % 2 == 0;
    return r == 170 || r == (int)(k * 37 % NREC);
}

static uint64_t grow_count(long g) { return 3000 + 1024 * (uint64_t)((g * 5) % 4); }

/* The whole state of generation G, as this rank holds it. */
static void state(long g)
{
    const uint64_t per = REGION / sizeof(double), ng = NX * NY, ns = NSMOOTH;
    for (uint64_t i = 0; i < ng; i++) {
        long t = last_touch(g, i / per, (ng + per - 1) / per);
        grid[i] = (double)(mix((uint64_t)rank << 40 ^ (uint64_t)t << 24 ^ i) >> 11) * 0x1p-30;
    }
    for (int r = 0; r < NREC; r++) {
        long t = 1;
        for (long k = g; k > 1 && t == 1; k--)
            if (rec_touched(k, r))
                t = k;
        for (int b = 0; b < RECSZ; b++)
            recs[r * RECSZ + b] = (uint8_t)mix((uint64_t)rank * 7919 + (uint64_t)t * 104729 +
                                               (uint64_t)r * RECSZ + (uint64_t)b);
    }
    for (uint64_t i = 0; i < GROW_MAX; i++)
        grow[i] = (int32_t)(i * 7 + 1 + (uint64_t)rank);
    for (int i = 0; i < NCALM; i++)
        calm[i] = (float)(rank + i) * 0.5f;
    for (uint64_t i = 0; i < ns; i++) {
        long t = last_touch(g, i / per, (ns + per - 1) / per);
        smooth[i] = 300.0 + rank + sin((double)i * 1e-3) * 20.0 + 0.25 * (double)t;
    }
    if (g == 1 && getenv("T_SPIKE"))
        smooth[5] = 1e6;
    step = g * 100 + rank;
}

static int protect_all(cairn_ctx *ctx, long g)
{
    size_t d2[2] = {NX, NY};
    int rc = 0;
    rc |= cairn_protect(ctx, "grid", grid, CAIRN_DOUBLE, NX * NY, 2, d2);
    rc |= cairn_protect(ctx, "recs", recs, CAIRN_BYTE, NREC * RECSZ, 0, NULL);
    rc |= cairn_protect(ctx, "grow", grow, CAIRN_INT32, grow_count(g), 0, NULL);
    cairn_type calm_type = getenv("T_RETYPE") && g >= 3 ? CAIRN_INT32 : CAIRN_FLOAT;
    rc |= cairn_protect(ctx, "calm", calm, calm_type, NCALM, 0, NULL);
    rc |= cairn_protect(ctx, "smooth", smooth, CAIRN_DOUBLE, NSMOOTH, 0, NULL);
    rc |= cairn_protect(ctx, "step", &step, CAIRN_INT64, 1, 0, NULL);
    rc |= cairn_protect_bound_rel(ctx, "smooth", 1e-4);
    rc |= cairn_protect_codec(ctx, "smooth", lossy ? lossy : "predict");
    if (lossy) {
        rc |= cairn_protect_bound(ctx, "grid", 1e-9);
        rc |= cairn_protect_codec(ctx, "grid", lossy);
    }
    return rc;
}

/* Compare memory against the state of generation G. */
static int same(long g, char *why, size_t len)
{
    double *gr = malloc(sizeof(double) * NX * NY), *sm = malloc(sizeof(double) * NSMOOTH);
    uint8_t *rc = malloc(NREC * RECSZ);
    int32_t *gw = malloc(sizeof(int32_t) * GROW_MAX);
    float *cm = malloc(sizeof(float) * NCALM);
    memcpy(gr, grid, sizeof(double) * NX * NY);
    memcpy(sm, smooth, sizeof(double) * NSMOOTH);
    memcpy(rc, recs, NREC * RECSZ);
    memcpy(gw, grow, sizeof(int32_t) * grow_count(g));
    memcpy(cm, calm, sizeof(float) * NCALM);
    int64_t st = step;
    state(g);
    int ok = 1;
    for (int i = 0; lossy && ok && i < NX * NY; i++)
        if (fabs(gr[i] - grid[i]) > 1e-9)
            ok = 0, snprintf(why, len, "grid[%d] is off by %g, bound 1e-9", i, gr[i] - grid[i]);
    if (!ok)
        ;
    else if (!lossy && memcmp(gr, grid, sizeof(double) * NX * NY) != 0)
        ok = 0, snprintf(why, len, "grid differs from generation %ld", g);
    else if (memcmp(rc, recs, NREC * RECSZ) != 0)
        ok = 0, snprintf(why, len, "recs differ from generation %ld", g);
    else if (memcmp(gw, grow, sizeof(int32_t) * grow_count(g)) != 0)
        ok = 0, snprintf(why, len, "grow differs from generation %ld", g);
    else if (memcmp(cm, calm, sizeof(float) * NCALM) != 0)
        ok = 0, snprintf(why, len, "calm differs from generation %ld", g);
    else if (st != step)
        ok = 0, snprintf(why, len, "step is %lld, generation %ld has %lld", (long long)st, g,
                         (long long)step);
    double lo = smooth[0], hi = smooth[0], worst = 0;
    for (int i = 0; i < NSMOOTH; i++) {
        lo = smooth[i] < lo ? smooth[i] : lo;
        hi = smooth[i] > hi ? smooth[i] : hi;
    }
    for (int i = 0; i < NSMOOTH; i++)
        worst = fabs(sm[i] - smooth[i]) > worst ? fabs(sm[i] - smooth[i]) : worst;
    if (ok && worst > 1e-4 * (hi - lo))
        ok = 0, snprintf(why, len, "smooth is off by %g, bound %g", worst, 1e-4 * (hi - lo));
    free(gr), free(sm), free(rc), free(gw), free(cm);
    return ok;
}

static void scramble(void)
{
    memset(grid, 0xa5, sizeof(double) * NX * NY);
    memset(smooth, 0, sizeof(double) * NSMOOTH);
    memset(recs, 0x5a, NREC * RECSZ);
    memset(grow, 0xff, sizeof(int32_t) * GROW_MAX);
    memset(calm, 0x11, sizeof(float) * NCALM);
    step = -1;
}

/* After a failed restart: is every variable still as scramble() left it? */
static const char *not_scrambled(void)
{
    const char *what = NULL;
    double *gr = malloc(sizeof(double) * NX * NY), *sm = malloc(sizeof(double) * NSMOOTH);
    uint8_t *rc = malloc(NREC * RECSZ);
    int32_t *gw = malloc(sizeof(int32_t) * GROW_MAX);
    float *cm = malloc(sizeof(float) * NCALM);
    int64_t st = step;
    memcpy(gr, grid, sizeof(double) * NX * NY), memcpy(sm, smooth, sizeof(double) * NSMOOTH);
    memcpy(rc, recs, NREC * RECSZ), memcpy(gw, grow, sizeof(int32_t) * GROW_MAX);
    memcpy(cm, calm, sizeof(float) * NCALM);
    scramble();
    if (memcmp(gr, grid, sizeof(double) * NX * NY) != 0)
        what = "grid";
    else if (memcmp(sm, smooth, sizeof(double) * NSMOOTH) != 0)
        what = "smooth";
    else if (memcmp(rc, recs, NREC * RECSZ) != 0)
        what = "recs";
    else if (memcmp(gw, grow, sizeof(int32_t) * GROW_MAX) != 0)
        what = "grow";
    else if (memcmp(cm, calm, sizeof(float) * NCALM) != 0)
        what = "calm";
    else if (st != step)
        what = "step";
    free(gr), free(sm), free(rc), free(gw), free(cm);
    return what;
}

static int code_of(const char *name)
{
#define T_X(n, v, m)                                                                              \
    if (strcmp(name, #n) == 0)                                                                    \
        return v;
    CAIRN_ERROR_LIST(T_X)
#undef T_X
    return 1;
}

static int level_of(const char *levels, long g)
{
    if (!levels)
        return CAIRN_LEVEL_LOCAL;
    if (strcmp(levels, "alt") == 0)
        return g % 2 ? CAIRN_LEVEL_LOCAL : CAIRN_LEVEL_ERASURE;
    return atoi(levels);
}

static int save(cairn_ctx *ctx, long from, long to, const char *levels, int hint, char *why,
                size_t len)
{
    for (long g = from; g <= to; g++) {
        state(g);
        if (protect_all(ctx, g) != 0) {
            snprintf(why, len, "protect: %s", cairn_errmsg(ctx));
            return 0;
        }
        if (hint && g > 1 &&
            (cairn_protect_hint(ctx, "calm", CAIRN_UNCHANGED) != 0 ||
             cairn_protect_hint(ctx, "step", CAIRN_CHANGED) != 0 ||
             cairn_protect_hint(ctx, "step", 7) != CAIRN_EINVAL)) {
            snprintf(why, len, "protect_hint: %s", cairn_errmsg(ctx));
            return 0;
        }
        int rc = cairn_checkpoint(ctx, g, level_of(levels, g));
        if (rc != 0) {
            snprintf(why, len, "checkpoint %ld: %s: %s", g, cairn_strerror(rc),
                     cairn_errmsg(ctx));
            return 0;
        }
    }
    return 1;
}

static int restart(cairn_ctx *ctx, long id, long expect, char *why, size_t len)
{
    scramble();
    protect_all(ctx, expect); /* grow's size at the generation expected */
    long got = -2;
    int rc = cairn_restart(ctx, id, &got);
    if (rc != 0)
        snprintf(why, len, "restart: %s: %s", cairn_strerror(rc), cairn_errmsg(ctx));
    else if (got != expect)
        snprintf(why, len, "restored generation %ld, expected %ld", got, expect);
    else
        return same(expect, why, len);
    return 0;
}

static int finish(const char *mode, int ok, const char *why)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "PASS %s\n" : "FAIL %s: %s\n", mode, why);
    if (!ok)
        fprintf(stderr, "rank %d: FAIL %s: %s\n", rank, mode, why);
    return all ? 0 : 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (getenv("T_WORK"))
        work = getenv("T_WORK");
    lossy = getenv("T_LOSSY");
    grid = malloc(sizeof(double) * NX * NY);
    smooth = malloc(sizeof(double) * NSMOOTH);
    recs = malloc(NREC * RECSZ);
    grow = malloc(sizeof(int32_t) * GROW_MAX);
    calm = malloc(sizeof(float) * NCALM);
    const char *mode = argc > 1 ? argv[1] : "?";
    long a = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
    char why[1400] = "";
    int ok = 0;
    cairn_ctx *ctx = NULL;
    int rc = cairn_init(MPI_COMM_WORLD, NULL, &ctx);
    if (rc != 0) {
        snprintf(why, sizeof why, "init: %s", cairn_errmsg(NULL));
    } else if (strcmp(mode, "save") == 0) {
        ok = save(ctx, 1, a, argc > 3 ? argv[3] : NULL, 0, why, sizeof why);
    } else if (strcmp(mode, "hint") == 0) {
        ok = save(ctx, 1, a, NULL, 1, why, sizeof why);
    } else if (strcmp(mode, "resume") == 0) {
        long to = argc > 3 ? strtol(argv[3], NULL, 10) : a;
        ok = restart(ctx, CAIRN_LATEST, a, why, sizeof why) &&
             save(ctx, a + 1, to, NULL, 0, why, sizeof why);
    } else if (strcmp(mode, "resume-id") == 0 && argc > 4) {
        long to = strtol(argv[3], NULL, 10);
        ok = restart(ctx, a, a, why, sizeof why) &&
             save(ctx, a + 1, to - 1, NULL, 0, why, sizeof why) &&
             save(ctx, to, to, argv[4], 0, why, sizeof why);
    } else if (strcmp(mode, "restore") == 0) {
        ok = restart(ctx, CAIRN_LATEST, a, why, sizeof why);
    } else if (strcmp(mode, "restore-id") == 0) {
        ok = restart(ctx, a, a, why, sizeof why);
    } else if (strcmp(mode, "restore-ids") == 0 && argc > 3) {
        /* each generation A..LAST in turn, each by a context of its own (as a new
         * job's); the ranks agree after each */
        long last = strtol(argv[3], NULL, 10);
        ok = 1;
        for (long g = a; ok && g <= last; g++) {
            if (g > a) {
                cairn_finalize(ctx);
                ctx = NULL;
                if (cairn_init(MPI_COMM_WORLD, NULL, &ctx) != 0) {
                    snprintf(why, sizeof why, "init for generation %ld: %s", g, cairn_errmsg(NULL));
                    ok = 0;
                }
            }
            int mine = ok && restart(ctx, g, g, why, sizeof why);
            if (ok && !mine) { /* name the generation */
                char one[sizeof why];
                snprintf(one, sizeof one, "generation %ld: %s", g, why);
                memcpy(why, one, sizeof why);
            }
            MPI_Allreduce(&mine, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        }
    } else if (strcmp(mode, "expect-fail-id") == 0 && argc > 3) {
        scramble();
        protect_all(ctx, a);
        rc = cairn_restart(ctx, a, NULL);
        const char *changed = not_scrambled();
        ok = rc == code_of(argv[3]) && !changed;
        snprintf(why, sizeof why, "restart of %ld gave %s (%s)%s%s", a, cairn_strerror(rc),
                 cairn_errmsg(ctx), changed ? "; memory changed: " : "", changed ? changed : "");
        if (rank == 0)
            printf("message: %s\n", cairn_errmsg(ctx));
    } else if (strcmp(mode, "parents") == 0) {
        cairn_gen_info info[64];
        int n = 0;
        rc = cairn_generations(ctx, info, 64, &n);
        ok = rc == 0 && n == argc - 2;
        snprintf(why, sizeof why, "generations: rc %d, %d listed, %d expected", rc, n, argc - 2);
        for (int i = 0; ok && i < n; i++) { /* info is newest first; arguments oldest first */
            const cairn_gen_info *x = &info[n - 1 - i];
            long want = strtol(argv[2 + i], NULL, 10);
            ok = x->parent == want && (x->parent < 0 ? x->base == x->id : x->base < x->id) &&
                 (x->parent < 0 ? x->delta == x->raw : x->delta < x->raw);
            if (!ok)
                snprintf(why, sizeof why,
                         "generation %ld: parent %ld (expected %ld), base %ld, stores %llu of "
                         "%llu bytes",
                         x->id, x->parent, want, x->base, (unsigned long long)x->delta,
                         (unsigned long long)x->raw);
        }
    } else {
        snprintf(why, sizeof why, "unknown mode %s", mode);
    }
    int r = finish(mode, ok, why);
    cairn_finalize(ctx);
    MPI_Finalize();
    free(grid), free(smooth), free(recs), free(grow), free(calm);
    return r;
}
