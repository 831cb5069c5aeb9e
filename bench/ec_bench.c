/*
 * ec_bench.c - throughput of the CRS codec (src/erasure/codec*.c), each kernel
 * against ISA-L's ec_encode_data called directly with the same Cauchy matrix
 * and against memcpy of the same bytes, all measured in the same run.
 *
 *   build/bench/ec_bench [--shard KiB] [--reps N] [--ks "4 8 16"] [--ms "1 2 3 4"]
 *
 * For each k and m: k data shards of SHARD KiB (default 1024) are encoded
 * into m parity shards. Throughput is GB/s of data encoded, k * SHARD / time.
 * One sample of a method runs it back to back until about SAMPLE_BYTES of
 * data went through (so a sample lasts milliseconds, not microseconds); each
 * repetition takes one sample of every method in a fixed order (isal-direct,
 * memcpy, then the kernels), so drift on a shared machine hits all alike. A
 * figure is the median over repetitions (after one warm-up repetition); a
 * ratio is the median of the per-repetition ratios.
 *
 *   isal       ISA-L: ec_init_tables of cauchy_good_general_coding_matrix(k, m,
 *              8) once, then ec_encode_data(shard, k, m, ...): the baseline.
 *   memcpy     memcpy of the k data shards into another k shards.
 *   KERNEL     ec_encode with an ec_codec of that kernel (isal, matrix,
 *              bitmatrix); the shard size is rounded down to the bitmatrix's
 *              coding unit for every method alike.
 *
 * Decode: k = 8, m = 2, the first two data shards erased, ec_decode against
 * ec_encode of the same kernel (GB/s of the stripe's data, k * SHARD / time).
 *
 * Output (one line per figure; lines starting with '#' are details):
 *   bench: ec.encode.kKmM.KERNEL V GB/s ratio=R vs isal
 *   bench: ec.isal.kKmM V GB/s ratio=R vs memcpy
 *   bench: ec.encode.k8m2 V GB/s ratio=R vs isal      (the default kernel;
 *   bench: ec.encode.k8m2 V GB/s ratio=R vs memcpy     also k8m4)
 *   bench: ec.decode.kernel.k8m2[.KERNEL] V s ratio=R vs encode
 * V: seconds to decode the two lost shards of one stripe of 8 shards; R: that
 * time over the time to encode the same stripe (a time ratio, as ec.decode
 * is in every section: l3_bench prints rebuild time over encode time)
 * Built with mpicc like every benchmark, but it uses no MPI.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <isa-l/erasure_code.h>
#include <jerasure/cauchy.h>

#include "erasure/erasure.h"

#define MAX_REPS 101
#define SAMPLE_BYTES ((size_t)64 << 20)
#define MAX_K 16
#define MAX_M 4

enum { M_ISAL, M_MEMCPY, M_KISAL, M_KMATRIX, M_KBITMATRIX, N_METHODS };
static const char *const method_name[N_METHODS] = {"isal-direct", "memcpy", "isal", "matrix",
                                                   "bitmatrix"};

typedef struct setup {
    int k, m;
    size_t shard;
    uint8_t *data[MAX_K], *parity[MAX_M], *copy[MAX_K];
    uint8_t *tbls;               /* ISA-L tables of the Cauchy matrix */
    ec_codec *codec[N_METHODS];  /* for M_K* */
} setup;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "ec_bench: %s\n", what);
    exit(1);
}

static uint8_t *shard_alloc(size_t n, uint64_t *seed)
{
    uint8_t *p = aligned_alloc(64, n);
    if (!p)
        die("out of memory");
    for (size_t i = 0; i < n; i += 8) {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        memcpy(p + i, seed, 8);
    }
    return p;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* One run of METHOD over the whole stripe. */
static void run_once(setup *s, int method)
{
    switch (method) {
    case M_ISAL:
        ec_encode_data((int)s->shard, s->k, s->m, s->tbls, s->data, s->parity);
        break;
    case M_MEMCPY:
        for (int p = 0; p < s->k; p++)
            memcpy(s->copy[p], s->data[p], s->shard);
        break;
    default:
        if (ec_encode(s->codec[method], (const uint8_t *const *)s->data, s->parity, s->shard))
            die("ec_encode failed");
    }
}

/* Seconds per run of METHOD, over about SAMPLE_BYTES of data. */
static double sample(setup *s, int method)
{
    size_t bytes = (size_t)s->k * s->shard;
    int iters = (int)(SAMPLE_BYTES / bytes);
    if (iters < 1)
        iters = 1;
    double t0 = now();
    for (int i = 0; i < iters; i++)
        run_once(s, method);
    return (now() - t0) / iters;
}

static void setup_init(setup *s, int k, int m, size_t shard)
{
    memset(s, 0, sizeof *s);
    s->k = k;
    s->m = m;
    uint64_t seed = 0x2545f4914f6cdd1dull ^ (uint64_t)(k * 16 + m);
    cn_err err = {0};
    for (int method = M_KISAL; method < N_METHODS; method++) {
        int kernel = EC_KERNEL_ISAL + (method - M_KISAL);
        if (ec_codec_new(k, m, 8, kernel, &s->codec[method], &err) < 0)
            die(err.msg);
    }
    size_t unit = ec_codec_align(s->codec[M_KBITMATRIX]);
    s->shard = shard / unit * unit;
    if (s->shard == 0)
        s->shard = unit;
    for (int p = 0; p < k; p++) {
        s->data[p] = shard_alloc(s->shard, &seed);
        s->copy[p] = shard_alloc(s->shard, &seed);
    }
    for (int r = 0; r < m; r++)
        s->parity[r] = shard_alloc(s->shard, &seed);
    int *X = cauchy_good_general_coding_matrix(k, m, 8);
    unsigned char coef[MAX_K * MAX_M];
    if (!X || !(s->tbls = malloc(32 * (size_t)k * m)))
        die("out of memory");
    for (int i = 0; i < k * m; i++)
        coef[i] = (unsigned char)X[i];
    free(X);
    ec_init_tables(k, m, coef, s->tbls);
}

static void setup_free(setup *s)
{
    for (int p = 0; p < s->k; p++) {
        free(s->data[p]);
        free(s->copy[p]);
    }
    for (int r = 0; r < s->m; r++)
        free(s->parity[r]);
    free(s->tbls);
    for (int i = 0; i < N_METHODS; i++)
        ec_codec_free(s->codec[i]);
}

static void line(const char *name, double v, const char *unit, double ratio, const char *base)
{
    printf("bench: %s %.*f %s ratio=%.3f vs %s\n", name, strcmp(unit, "s") ? 2 : 6, v, unit, ratio,
           base);
}

/* Encode figures for one (k, m); the default kernel's lines when HEADLINE. */
static void bench_encode(int k, int m, size_t shard, int reps, int def_method, int headline)
{
    setup s;
    setup_init(&s, k, m, shard);
    double gbs[N_METHODS][MAX_REPS], vs_isal[N_METHODS][MAX_REPS], vs_memcpy[MAX_REPS];
    double gb = (double)k * (double)s.shard / 1e9;
    for (int rep = -1; rep < reps; rep++) { /* rep -1: warm-up */
        double t[N_METHODS];
        for (int method = 0; method < N_METHODS; method++)
            t[method] = sample(&s, method);
        if (rep < 0)
            continue;
        for (int method = 0; method < N_METHODS; method++) {
            gbs[method][rep] = gb / t[method];
            vs_isal[method][rep] = t[M_ISAL] / t[method];
        }
        vs_memcpy[rep] = t[M_MEMCPY] / t[M_ISAL];
    }
    double med[N_METHODS], rat[N_METHODS];
    for (int method = 0; method < N_METHODS; method++) {
        med[method] = median(gbs[method], reps);
        rat[method] = median(vs_isal[method], reps);
    }
    char name[96];
    for (int method = M_KISAL; method < N_METHODS; method++) {
        snprintf(name, sizeof name, "ec.encode.k%dm%d.%s", k, m, method_name[method]);
        line(name, med[method], "GB/s", rat[method], "isal");
    }
    snprintf(name, sizeof name, "ec.isal.k%dm%d", k, m);
    line(name, med[M_ISAL], "GB/s", median(vs_memcpy, reps), "memcpy");
    printf("# k=%d m=%d shard=%zu B: memcpy %.2f GB/s\n", k, m, s.shard, med[M_MEMCPY]);
    if (headline) {
        double dm[MAX_REPS];
        for (int rep = 0; rep < reps; rep++)
            dm[rep] = gbs[def_method][rep] / gbs[M_MEMCPY][rep];
        snprintf(name, sizeof name, "ec.encode.k%dm%d", k, m);
        line(name, med[def_method], "GB/s", rat[def_method], "isal");
        line(name, med[def_method], "GB/s", median(dm, reps), "memcpy");
    }
    setup_free(&s);
}

/* Decode with the first two data shards erased vs encode, k = 8, m = 2. */
static void bench_decode(size_t shard, int reps, int def_method)
{
    setup s;
    setup_init(&s, 8, 2, shard);
    uint8_t *shards[10];
    for (int p = 0; p < 8; p++)
        shards[p] = s.data[p];
    shards[8] = s.parity[0];
    shards[9] = s.parity[1];
    double gb = 8.0 * (double)s.shard / 1e9;
    int erased[2] = {0, 1};
    cn_err err = {0};
    for (int method = M_KISAL; method < N_METHODS; method++) {
        double dec[MAX_REPS], ratio[MAX_REPS];
        int iters = (int)(SAMPLE_BYTES / (8 * s.shard));
        if (iters < 1)
            iters = 1;
        for (int rep = -1; rep < reps; rep++) {
            double te = sample(&s, method);
            double t0 = now();
            for (int i = 0; i < iters; i++)
                if (ec_decode(s.codec[method], shards, erased, 2, s.shard, &err) < 0)
                    die(err.msg);
            double td = (now() - t0) / iters;
            if (rep < 0)
                continue;
            dec[rep] = td;
            ratio[rep] = td / te;
        }
        double v = median(dec, reps), r = median(ratio, reps);
        char name[96];
        snprintf(name, sizeof name, "ec.decode.kernel.k8m2.%s", method_name[method]);
        printf("# %s: %.2f GB/s of data shards\n", name, gb / v);
        line(name, v, "s", r, "encode");
        if (method == def_method)
            line("ec.decode.kernel.k8m2", v, "s", r, "encode");
    }
    setup_free(&s);
}

static int parse_list(const char *s, int *out, int max)
{
    int n = 0;
    char *end;
    while (*s && n < max) {
        long v = strtol(s, &end, 10);
        if (end == s)
            break;
        out[n++] = (int)v;
        s = end;
    }
    return n;
}

int main(int argc, char **argv)
{
    size_t shard = (size_t)1 << 20;
    int reps = 21, ks[8] = {4, 8, 16}, nk = 3, ms[8] = {1, 2, 3, 4}, nm = 4;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--shard") && i + 1 < argc)
            shard = (size_t)strtoul(argv[++i], NULL, 10) << 10;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ks") && i + 1 < argc)
            nk = parse_list(argv[++i], ks, 8);
        else if (!strcmp(argv[i], "--ms") && i + 1 < argc)
            nm = parse_list(argv[++i], ms, 8);
        else {
            fprintf(stderr, "usage: ec_bench [--shard KiB] [--reps N] [--ks \"4 8 16\"] "
                            "[--ms \"1 2 3 4\"]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > MAX_REPS || shard == 0 || shard > ((size_t)1 << 30))
        die("bad --reps or --shard");
    for (int i = 0; i < nk; i++)
        if (ks[i] < 1 || ks[i] > MAX_K)
            die("k must be 1..16");
    for (int i = 0; i < nm; i++)
        if (ms[i] < 1 || ms[i] > MAX_M)
            die("m must be 1..4");

    ec_codec *def = NULL;
    cn_err err = {0};
    if (ec_codec_new(8, 2, 8, EC_KERNEL_AUTO, &def, &err) < 0)
        die(err.msg);
    int def_method = M_KISAL + (ec_codec_kernel(def) - EC_KERNEL_ISAL);
    printf("# default kernel (auto, w = 8): %s; shard %zu KiB, %d repetitions, median\n",
           ec_kernel_name(ec_codec_kernel(def)), shard >> 10, reps);
    ec_codec_free(def);

    for (int i = 0; i < nk; i++)
        for (int j = 0; j < nm; j++)
            bench_encode(ks[i], ms[j], shard, reps, def_method,
                         ks[i] == 8 && (ms[j] == 2 || ms[j] == 4));
    bench_decode(shard, reps, def_method);
    return 0;
}
