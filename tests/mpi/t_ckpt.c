/*
 * t_ckpt.c - the MPI test application behind tests/mpi/run_mpi.sh.
 *
 * One program, several modes, so each scenario is a real job (mpirun) and a
 * restart is a new job that names the old one's directory (CAIRN_JOB):
 *   save N [LEVEL]     protect variables of every type, checkpoint gens 1..N
 *                      (with T_FIRST=F T_STEP=S: the N ids F, F+S, F+2S, ...;
 *                      with T_BEFORE_GEN=G T_BEFORE_CMD=SH: rank 0 runs SH before
 *                      checkpoint G, and every rank waits for it)
 *   restore GEN [LEVEL]  restart LATEST, expect GEN, compare every byte; with
 *                      T_THEN=ID, then checkpoint ID (at LEVEL, default 1)
 *   restore-id GEN [LEVEL]  restart generation GEN explicitly (T_THEN too)
 *   restore-ids FIRST LAST  restart each generation FIRST..LAST in turn, each by
 *                      a new context, compare every byte (one job, many restarts)
 *   restore-either OLD NEW  restart LATEST, expect OLD or NEW (a crash state,
 *                      tests/crash), compare every byte with the one restored
 *   expect-fail CODE [GEN]  restart (LATEST, or generation GEN) must fail with
 *                      CODE (e.g. CAIRN_ENOENT) everywhere, and leave every
 *                      protected variable holding the sentinel bytes put
 *                      there before the call (cairn.h: memory unchanged)
 *   level L CODE       checkpoint T_ID (default 1) at level L must fail with CODE
 *   big MiB            one checkpoint of MiB per rank; expect it to fail with ENOSPC
 *   gens N             cairn_generations must list N generations, newest first, at
 *                      level 1 (T_GEN_LEVELS="4,3": the levels, newest first)
 *   live-rebuild L     checkpoint at level L, run $T_WIPE (wipes nodes), then
 *                      cairn_rebuild and restart in the same job
 * With T_VARS (see tv_protect), extra variables of chosen codecs and sizes.
 * With T_NOROUTE, no file is routed (a checkpoint of variables alone); with
 * T_ROUTE_RANK=R, only rank R routes one. With T_FSIZE_RANK=R and T_FSIZE=B,
 * rank R's files cannot grow past B bytes (RLIMIT_FSIZE: its writes fail).
 * With T_RAW, every variable is noise and exact ("field" has no bound, "cube"
 * is noise too), so level 1 stores all of them raw.
 * With T_CODECS=mixed, two compressible variables join in and every variable
 * gets a codec that depends on its rank (mixed codecs across ranks and
 * variables, raw and "auto" among them).
 * Data are a function of (rank, generation, variable), so a restored byte
 * from the wrong rank, generation or variable is caught. Ranks agree on
 * pass/fail; rank 0 prints "PASS mode" or "FAIL mode: reason" and the exit
 * status is 0 only on PASS.
 */
#include "cairn.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define NVARS 6

static int rank, nranks;
static double *field;   /* 2-D 37 x 53 doubles */
static float *cube;     /* 3-D 3 x 5 x 7 floats */
static int32_t *ints;   /* 1001 int32 */
static uint8_t *bytes;  /* 4099 bytes: not a multiple of anything */
static int64_t step;    /* scalar */
static uint16_t *empty; /* zero elements */
#define NSMOOTH 50001
static double *smooth;  /* T_CODECS only: a smooth field, compresses well */
static int32_t *ramp;   /* T_CODECS only: 777 small counters */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

/* T_VARS="CODEC:BYTES[:r],...": extra uint8 variables x0, x1, ... of the
 * given codec and size, protected first (so that small ones of one codec
 * pack together), noise (or slow ramps with :r) that depends on (rank,
 * generation, variable), restored and compared byte for byte. */
#define TV_MAX 16
static int tv_n;
static uint8_t *tv_buf[TV_MAX];
static size_t tv_size[TV_MAX];
static int tv_ramp[TV_MAX];

static uint8_t tv_byte(int j, long gen, size_t k)
{
    if (tv_ramp[j])
        return (uint8_t)(k / 97 + (size_t)gen + (size_t)j + (size_t)rank);
    return (uint8_t)mix((uint64_t)rank * 1000003u + (uint64_t)gen * 7919u +
                        (uint64_t)j * 104729u + k * 0x9E3779B1u);
}

static void tv_fill(long gen, int zero)
{
    for (int j = 0; j < tv_n; j++)
        for (size_t k = 0; k < tv_size[j]; k++)
            tv_buf[j][k] = zero ? 0 : tv_byte(j, gen, k);
}

static int tv_same(long gen)
{
    for (int j = 0; j < tv_n; j++)
        for (size_t k = 0; k < tv_size[j]; k++)
            if (tv_buf[j][k] != tv_byte(j, gen, k))
                return 0;
    return 1;
}

static int tv_protect(cairn_ctx *ctx)
{
    const char *spec = getenv("T_VARS");
    int rc = 0;
    for (const char *p = spec; p && *p && tv_n < TV_MAX; tv_n++) {
        char item[64], name[16];
        size_t len = strcspn(p, ",");
        snprintf(item, sizeof item, "%.*s", (int)(len < 63 ? len : 63), p);
        p += len + (p[len] == ',');
        char *size = strchr(item, ':');
        if (!size)
            return -1;
        *size++ = '\0';
        tv_size[tv_n] = strtoul(size, &size, 10);
        tv_ramp[tv_n] = strcmp(size, ":r") == 0;
        if (!(tv_buf[tv_n] = calloc(1, tv_size[tv_n] + 1)))
            return -1;
        snprintf(name, sizeof name, "x%d", tv_n);
        rc |= cairn_protect(ctx, name, tv_buf[tv_n], CAIRN_UINT8, tv_size[tv_n], 0, NULL);
        rc |= cairn_protect_codec(ctx, name, item);
    }
    return rc;
}

static void fill(long gen, int zero)
{
    for (int i = 0; i < 37 * 53; i++)
        field[i] = zero ? 0 : (double)mix((uint64_t)rank * 1000003 + (uint64_t)gen * 7919 + (uint64_t)i) / 3.0;
    for (int i = 0; i < 3 * 5 * 7; i++)
        cube[i] = zero ? 0 : getenv("T_RAW") ? (float)mix((uint64_t)rank * 7 + (uint64_t)gen * 3 + (uint64_t)i)
                                             : (float)(rank + gen * 0.5 + i * 0.25);
    for (int i = 0; i < 1001; i++)
        ints[i] = zero ? 0 : (int32_t)mix((uint64_t)rank + 77 * (uint64_t)gen + 31 * (uint64_t)i);
    for (int i = 0; i < 4099; i++)
        bytes[i] = zero ? 0 : (uint8_t)mix((uint64_t)rank * 13 + (uint64_t)gen * 17 + (uint64_t)i);
    step = zero ? 0 : (int64_t)((uint64_t)gen * 100 + (uint64_t)rank); /* wraps: any id */
    for (int i = 0; smooth && i < NSMOOTH; i++)
        smooth[i] = zero ? 0 : 300.0 + (double)rank + 0.01 * (double)gen + sin(i * 1e-3) * 20.0;
    for (int i = 0; ramp && i < 777; i++)
        ramp[i] = zero ? 0 : (int32_t)(uint32_t)((uint64_t)gen + (uint64_t)(i / 7));
    tv_fill(gen, zero);
}

/* The T_CODECS extras, compared on their own. */
static int same_extras(long gen)
{
    if (!smooth)
        return 1;
    double *s = malloc(sizeof(double) * NSMOOTH);
    int32_t *r = malloc(sizeof(int32_t) * 777);
    memcpy(s, smooth, sizeof(double) * NSMOOTH);
    memcpy(r, ramp, sizeof(int32_t) * 777);
    fill(gen, 0);
    /* smooth allows 1e-3 of its range (lossy on some ranks): check each element */
    double lo = smooth[0], hi = smooth[0];
    for (int i = 0; i < NSMOOTH; i++) {
        lo = smooth[i] < lo ? smooth[i] : lo;
        hi = smooth[i] > hi ? smooth[i] : hi;
    }
    int ok = memcmp(r, ramp, sizeof(int32_t) * 777) == 0;
    for (int i = 0; ok && i < NSMOOTH; i++)
        ok = fabs(s[i] - smooth[i]) <= 1e-3 * (hi - lo);
    free(s), free(r);
    return ok;
}

static int same(long gen)
{
    if (!tv_same(gen)) /* first: the fills below overwrite the T_VARS variables too */
        return 0;
    double *f = malloc(sizeof(double) * 37 * 53);
    float *c = malloc(sizeof(float) * 105);
    int32_t *n = malloc(sizeof(int32_t) * 1001);
    uint8_t *b = malloc(4099);
    memcpy(f, field, sizeof(double) * 37 * 53);
    memcpy(c, cube, sizeof(float) * 105);
    memcpy(n, ints, sizeof(int32_t) * 1001);
    memcpy(b, bytes, 4099);
    int64_t s = step;
    if (!same_extras(gen)) {
        free(f), free(c), free(n), free(b);
        return 0;
    }
    fill(gen, 0);
    int ok = memcmp(c, cube, sizeof(float) * 105) == 0 &&
             memcmp(n, ints, sizeof(int32_t) * 1001) == 0 && memcmp(b, bytes, 4099) == 0 &&
             s == step;
    for (int i = 0; ok && i < 37 * 53; i++) /* field allows an error of 1e-6 */
        ok = fabs(f[i] - field[i]) <= 1e-6;
    free(f), free(c), free(n), free(b);
    return ok;
}

/* Every protected byte set to a sentinel, and checked for it after a failed restart. */
#define SENTINEL 0xA5
static void sentinel(void)
{
    memset(field, SENTINEL, sizeof(double) * 37 * 53);
    memset(cube, SENTINEL, sizeof(float) * 105);
    memset(ints, SENTINEL, sizeof(int32_t) * 1001);
    memset(bytes, SENTINEL, 4099);
    memset(&step, SENTINEL, sizeof step);
    if (smooth)
        memset(smooth, SENTINEL, sizeof(double) * NSMOOTH), memset(ramp, SENTINEL, 4 * 777);
    for (int j = 0; j < tv_n; j++)
        memset(tv_buf[j], SENTINEL, tv_size[j]);
}

static const char *not_sentinel(void)
{
    struct { const char *name; const void *p; size_t n; } v[] = {
        {"field", field, sizeof(double) * 37 * 53}, {"cube", cube, sizeof(float) * 105},
        {"ints", ints, sizeof(int32_t) * 1001}, {"bytes", bytes, 4099},
        {"step", &step, sizeof step}, {"smooth", smooth, smooth ? sizeof(double) * NSMOOTH : 0},
        {"ramp", ramp, ramp ? 4 * 777 : 0}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        for (size_t k = 0; k < v[i].n; k++)
            if (((const uint8_t *)v[i].p)[k] != SENTINEL)
                return v[i].name;
    for (int j = 0; j < tv_n; j++)
        for (size_t k = 0; k < tv_size[j]; k++)
            if (tv_buf[j][k] != SENTINEL)
                return "a T_VARS variable";
    return NULL;
}

static int protect_all(cairn_ctx *ctx)
{
    size_t d2[2] = {37, 53}, d3[3] = {3, 5, 7};
    int rc = tv_protect(ctx);
    rc |= cairn_protect(ctx, "field", field, CAIRN_DOUBLE, 37 * 53, 2, d2);
    rc |= cairn_protect(ctx, "cube", cube, CAIRN_FLOAT, 105, 3, d3);
    rc |= cairn_protect(ctx, "ints", ints, CAIRN_INT32, 1001, 0, NULL);
    rc |= cairn_protect(ctx, "bytes", bytes, CAIRN_UINT8, 4099, 1, (size_t[]){4099});
    rc |= cairn_protect(ctx, "step", &step, CAIRN_INT64, 1, 0, NULL);
    rc |= cairn_protect(ctx, "empty", empty, CAIRN_UINT16, 0, 0, NULL);
    if (!getenv("T_RAW"))
        rc |= cairn_protect_bound(ctx, "field", 1e-6); /* lossy within 1e-6 (exact in practice) */
    if (!smooth)
        return rc;
    rc |= cairn_protect(ctx, "smooth", smooth, CAIRN_DOUBLE, NSMOOTH, 1, (size_t[]){NSMOOTH});
    rc |= cairn_protect(ctx, "ramp", ramp, CAIRN_INT32, 777, 0, NULL);
    static const char *const any[] = {"zlib", "zstd", "lz4", "shuffle-zstd", "shuffle-lz4",
                                      "none", "auto"};
    static const char *const fp[] = {"fpzip", "wavelet", "zlib", "auto", "predict", "none",
                                     "shuffle-lz4"};
    rc |= cairn_protect_bound_rel(ctx, "smooth", 1e-3);
    const char *names[] = {"field", "cube", "ints", "bytes", "step", "smooth", "ramp"};
    static const char *const fp_exact[] = {"fpzip", "shuffle-zstd", "zlib", "auto", "lz4",
                                           "none", "shuffle-lz4"};
    /* which list: 0 any type, 1 float/double with a bound, 2 float/double without */
    const int list[] = {1, 2, 0, 0, 0, 1, 0};
    const char *const *lists[] = {any, fp, fp_exact};
    for (int i = 0; i < 7; i++) {
        const char *codec = lists[list[i]][(i + rank) % 7];
        rc |= cairn_protect_codec(ctx, names[i], codec);
    }
    rc |= cairn_protect_codec(ctx, "ints", "fpzip") == CAIRN_EINVAL ? 0 : 1; /* refused */
    return rc;
}

/* Does this rank route a file? Not with T_NOROUTE; with T_ROUTE_RANK=R, only rank R. */
static int routes(void)
{
    const char *only = getenv("T_ROUTE_RANK");
    return !getenv("T_NOROUTE") && (!only || atoi(only) == rank);
}

static int write_routed(cairn_ctx *ctx, long gen)
{
    char path[4096];
    if (!routes())
        return 0;
    if (cairn_route_file(ctx, "notes.txt", path, sizeof path) != 0)
        return -1;
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "rank %d generation %ld\n", rank, gen);
    return fclose(f);
}

static int check_routed(cairn_ctx *ctx, long gen)
{
    char path[4096], want[128], got[128] = "";
    if (!routes())
        return 1;
    if (cairn_route_file(ctx, "notes.txt", path, sizeof path) != 0)
        return 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    if (!fgets(got, sizeof got, f))
        got[0] = '\0';
    fclose(f);
    snprintf(want, sizeof want, "rank %d generation %ld\n", rank, gen);
    return strcmp(got, want) == 0;
}

static int code_of(const char *name)
{
#define T_X(n, v, m)                                                                              \
    if (strcmp(name, #n) == 0)                                                                    \
        return v;
    CAIRN_ERROR_LIST(T_X)
#undef T_X
    char *end = NULL; /* else a number: a negative errno (-27, EFBIG) */
    long v = strtol(name, &end, 10);
    return end != name && *end == '\0' && v < 0 ? (int)v : 1;
}

/* Rank 0 prints PASS, or FAIL with the reason of the first rank that failed
 * (sent to it when that is another rank). */
static int finish(const char *mode, int ok, const char *why)
{
    int mine = ok ? nranks : rank, first = nranks;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    char reason[1200];
    snprintf(reason, sizeof reason, "%s", why ? why : "");
    if (first < nranks && first != 0) {
        if (rank == first)
            MPI_Send(reason, (int)sizeof reason, MPI_CHAR, 0, 77, MPI_COMM_WORLD);
        else if (rank == 0)
            MPI_Recv(reason, (int)sizeof reason, MPI_CHAR, first, 77, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        reason[sizeof reason - 1] = '\0';
    }
    if (rank == 0 && first == nranks)
        printf("PASS %s\n", mode);
    else if (rank == 0 && first == 0)
        printf("FAIL %s: %s\n", mode, reason);
    else if (rank == 0)
        printf("FAIL %s: rank %d: %s\n", mode, first, reason);
    if (!ok)
        fprintf(stderr, "rank %d: FAIL %s: %s\n", rank, mode, why);
    return first == nranks ? 0 : 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: t_ckpt MODE ARG [LEVEL]\n");
        MPI_Finalize();
        return 2;
    }
    const char *mode = argv[1];
    long arg = strtol(argv[2], NULL, 10);
    field = malloc(sizeof(double) * 37 * 53);
    cube = malloc(sizeof(float) * 105);
    ints = malloc(sizeof(int32_t) * 1001);
    bytes = malloc(4099);
    if (getenv("T_CODECS")) {
        smooth = malloc(sizeof(double) * NSMOOTH);
        ramp = malloc(sizeof(int32_t) * 777);
    }
    char why[1200] = "";
    int ok = 1;

    cairn_ctx *ctx = NULL;
    int rc = cairn_init(MPI_COMM_WORLD, getenv("T_CONFIG"), &ctx);
    if (rc != 0) {
        snprintf(why, sizeof why, "init: %s: %s", cairn_strerror(rc), cairn_errmsg(NULL));
        ok = strcmp(mode, "expect-init-fail") == 0 && rc == code_of(argv[2]);
        if (rank == 0)
            printf("message: %s\n", cairn_errmsg(NULL));
        int r = finish(mode, ok, why);
        MPI_Finalize();
        return r;
    }
    const char *fsize_rank = getenv("T_FSIZE_RANK"); /* that rank's files stop at T_FSIZE bytes */
    if (fsize_rank && atoi(fsize_rank) == rank && getenv("T_FSIZE")) {
        rlim_t lim = (rlim_t)atoll(getenv("T_FSIZE"));
        signal(SIGXFSZ, SIG_IGN); /* a write past the limit fails with EFBIG */
        setrlimit(RLIMIT_FSIZE, &(struct rlimit){lim, lim});
    }
    if (protect_all(ctx) != 0) {
        ok = 0;
        snprintf(why, sizeof why, "protect failed: %s", cairn_errmsg(ctx));
    } else if (strcmp(mode, "save") == 0) {
        int level = argc > 3 ? atoi(argv[3]) : CAIRN_LEVEL_LOCAL;
        long pause_ms = getenv("T_PAUSE_MS") ? atol(getenv("T_PAUSE_MS")) : 0;
        long first = getenv("T_FIRST") ? atol(getenv("T_FIRST")) : 1;
        long stride = getenv("T_STEP") ? atol(getenv("T_STEP")) : 1;
        for (long k = 0; ok && k < arg; k++) { /* no first + arg * stride: ids up to LONG_MAX */
            long g = first + k * stride;
            if (k > 0 && pause_ms > 0) /* compute between checkpoints */
                nanosleep(&(struct timespec){pause_ms / 1000, pause_ms % 1000 * 1000000L}, NULL);
            if (getenv("T_BEFORE_GEN") && atol(getenv("T_BEFORE_GEN")) == g) {
                /* a condition to wait for before this checkpoint: rank 0 runs it, all wait */
                if (rank == 0 && system(getenv("T_BEFORE_CMD")) != 0) {
                    ok = 0;
                    snprintf(why, sizeof why, "T_BEFORE_CMD failed before checkpoint %ld", g);
                }
                MPI_Barrier(MPI_COMM_WORLD);
            }
            fill(g, 0);
            write_routed(ctx, g);
            rc = cairn_checkpoint(ctx, g, level);
            if (rc != 0) {
                ok = 0;
                snprintf(why, sizeof why, "checkpoint %ld: %s: %s", g, cairn_strerror(rc),
                         cairn_errmsg(ctx));
            }
        }
    } else if (strcmp(mode, "restore") == 0 || strcmp(mode, "restore-id") == 0) {
        fill(0, 1);
        long got = -2;
        rc = cairn_restart(ctx, strcmp(mode, "restore") == 0 ? CAIRN_LATEST : arg, &got);
        if (rc != 0)
            snprintf(why, sizeof why, "restart: %s: %s", cairn_strerror(rc), cairn_errmsg(ctx));
        else if (got != arg)
            snprintf(why, sizeof why, "restored generation %ld, expected %ld", got, arg);
        else if (!same(arg))
            snprintf(why, sizeof why, "restored bytes differ from generation %ld", arg);
        else if (!check_routed(ctx, arg))
            snprintf(why, sizeof why, "routed file differs from generation %ld", arg);
        long then = getenv("T_THEN") ? atol(getenv("T_THEN")) : -1;
        if (!why[0] && then >= 0) { /* go on from there: checkpoint T_THEN */
            fill(then, 0);
            write_routed(ctx, then);
            rc = cairn_checkpoint(ctx, then, argc > 3 ? atoi(argv[3]) : CAIRN_LEVEL_LOCAL);
            if (rc != 0)
                snprintf(why, sizeof why, "checkpoint %ld after the restart: %s: %s", then,
                         cairn_strerror(rc), cairn_errmsg(ctx));
        }
        ok = why[0] == '\0';
    } else if (strcmp(mode, "restore-ids") == 0 && argc > 3) {
        /* each generation FIRST..LAST in turn, each restored by a context of its own
         * (as a new job's), every byte compared; the ranks agree after each */
        long last = strtol(argv[3], NULL, 10);
        for (long g = arg; ok && g <= last; g++) {
            if (g > arg) {
                cairn_finalize(ctx);
                ctx = NULL;
                if ((rc = cairn_init(MPI_COMM_WORLD, getenv("T_CONFIG"), &ctx)) != 0 ||
                    (rc = protect_all(ctx)) != 0) {
                    snprintf(why, sizeof why, "new context for generation %ld: %s: %s", g,
                             cairn_strerror(rc), cairn_errmsg(ctx));
                    ok = 0;
                }
            }
            fill(0, 1);
            long got = -2;
            if (ok && (rc = cairn_restart(ctx, g, &got)) != 0)
                snprintf(why, sizeof why, "restart of %ld: %s: %s", g, cairn_strerror(rc),
                         cairn_errmsg(ctx));
            else if (ok && got != g)
                snprintf(why, sizeof why, "restored generation %ld, expected %ld", got, g);
            else if (ok && (!same(g) || !check_routed(ctx, g)))
                snprintf(why, sizeof why, "restored bytes differ from generation %ld", g);
            int mine = ok && !why[0];
            MPI_Allreduce(&mine, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        }
    } else if (strcmp(mode, "restore-either") == 0 && argc > 3) {
        long got = -2, newer = strtol(argv[3], NULL, 10);
        fill(0, 1);
        rc = cairn_restart(ctx, CAIRN_LATEST, &got);
        if (rc != 0)
            snprintf(why, sizeof why, "restart: %s: %s", cairn_strerror(rc), cairn_errmsg(ctx));
        else if (got != arg && got != newer)
            snprintf(why, sizeof why, "restored generation %ld, expected %ld or %ld", got, arg, newer);
        else if (!same(got) || !check_routed(ctx, got))
            snprintf(why, sizeof why, "restored bytes differ from generation %ld", got);
        if (rank == 0 && rc == 0)
            printf("restored %ld\n", got);
        ok = why[0] == '\0';
    } else if (strcmp(mode, "resume") == 0) {
        long n = argc > 3 ? atol(argv[3]) : 1, got = -2;
        int level = argc > 4 ? atoi(argv[4]) : CAIRN_LEVEL_LOCAL;
        fill(0, 1);
        rc = cairn_restart(ctx, CAIRN_LATEST, &got);
        if (rc != 0)
            snprintf(why, sizeof why, "restart: %s: %s", cairn_strerror(rc), cairn_errmsg(ctx));
        else if (got != arg || !same(arg))
            snprintf(why, sizeof why, "restored generation %ld, expected %ld bit-exact", got, arg);
        for (long g = arg + 1; !why[0] && g <= arg + n; g++) {
            fill(g, 0);
            write_routed(ctx, g);
            if ((rc = cairn_checkpoint(ctx, g, level)) != 0)
                snprintf(why, sizeof why, "checkpoint %ld after the restart: %s: %s", g,
                         cairn_strerror(rc), cairn_errmsg(ctx));
        }
        ok = why[0] == '\0';
    } else if (strcmp(mode, "expect-fail") == 0) {
        sentinel();
        rc = cairn_restart(ctx, argc > 3 ? strtol(argv[3], NULL, 10) : CAIRN_LATEST, NULL);
        const char *changed = not_sentinel();
        snprintf(why, sizeof why, "restart gave %s: %s", cairn_strerror(rc), cairn_errmsg(ctx));
        ok = rc == code_of(argv[2]) && cairn_errmsg(ctx)[0] != '\0';
        if (ok && changed) {
            ok = 0;
            snprintf(why, sizeof why, "restart failed (%s) but rank %d's '%s' was overwritten",
                     cairn_strerror(rc), rank, changed);
        }
        if (rank == 0)
            printf("message: %s\n", cairn_errmsg(ctx));
    } else if (strcmp(mode, "level") == 0) { /* level L CODE: checkpoint must fail with CODE */
        long g = getenv("T_ID") ? atol(getenv("T_ID")) : 1; /* the checkpoint's id */
        fill(g, 0);
        rc = cairn_checkpoint(ctx, g, (int)arg);
        snprintf(why, sizeof why, "level %ld gave %s: %s", arg, cairn_strerror(rc),
                 cairn_errmsg(ctx));
        ok = argc > 3 && rc == code_of(argv[3]);
        if (rank == 0)
            printf("message: %s\n", cairn_errmsg(ctx));
    } else if (strcmp(mode, "big") == 0) {
        size_t n = (size_t)arg << 20;
        uint8_t *big = malloc(n);
        for (size_t i = 0; i < n; i += 8) { /* incompressible: no codec can make it fit */
            uint64_t x = mix(i + (uint64_t)rank * 0x9E3779B97F4A7C15ull);
            memcpy(big + i, &x, n - i < 8 ? n - i : 8);
        }
        cairn_protect(ctx, "big", big, CAIRN_UINT8, n, 0, NULL);
        fill(2, 0);
        rc = cairn_checkpoint(ctx, 2, CAIRN_LEVEL_LOCAL);
        snprintf(why, sizeof why, "big checkpoint gave %s: %s", cairn_strerror(rc),
                 cairn_errmsg(ctx));
        ok = rc == CAIRN_ENOSPC;
        if (rank == 0)
            printf("message: %s\n", cairn_errmsg(ctx));
        free(big);
    } else if (strcmp(mode, "live-rebuild") == 0) { /* live-rebuild LEVEL: wipe T_WIPE dirs */
        fill(1, 0);
        rc = cairn_checkpoint(ctx, 1, (int)arg);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0 && rc == 0 && getenv("T_WIPE"))
            rc = system(getenv("T_WIPE")) == 0 ? 0 : -1;
        MPI_Barrier(MPI_COMM_WORLD);
        long got = -2;
        if (rc == 0)
            rc = cairn_rebuild(ctx, CAIRN_LATEST, &got);
        fill(0, 1);
        if (rc == 0)
            rc = cairn_restart(ctx, CAIRN_LATEST, &got);
        snprintf(why, sizeof why, "rebuild in a live context: %s: %s (generation %ld)",
                 cairn_strerror(rc), cairn_errmsg(ctx), got);
        ok = rc == 0 && got == 1 && same(1);
    } else if (strcmp(mode, "gens") == 0) {
        cairn_gen_info info[8];
        int count = -1;
        rc = cairn_generations(ctx, info, 8, &count);
        snprintf(why, sizeof why, "generations: rc %d count %d newest %ld", rc, count,
                 count > 0 ? info[0].id : -1L);
        ok = rc == 0 && count == (int)arg;
        const char *lv = getenv("T_GEN_LEVELS"); /* "4,3": levels, newest first; default 1 */
        for (int i = 0; ok && i < count; i++) {
            int want = lv && *lv ? (int)strtol(lv, (char **)&lv, 10) : 1;
            lv = lv && *lv == ',' ? lv + 1 : lv;
            ok = info[i].level == want && info[i].nranks == nranks && info[i].bytes > 0 &&
                 (i == 0 || info[i].id < info[i - 1].id);
            if (!ok)
                snprintf(why, sizeof why, "generation %ld: level %d, want %d", info[i].id,
                         info[i].level, want);
        }
    } else {
        snprintf(why, sizeof why, "unknown mode %s", mode);
        ok = 0;
    }
    int r = finish(mode, ok, why);
    cairn_finalize(ctx);
    MPI_Finalize();
    free(field), free(cube), free(ints), free(bytes);
    return r;
}
