/*
 * test_choose.c - the automatic codec choice (src/compress/choose.c):
 *
 *   - the same data gives the same model, bit for bit, and the same pick,
 *     call after call, also while two busy processes (started here, killed
 *     by their pids) load the machine: lossless (smooth, sparse, noise, a
 *     2-D float array) and lossy (a 2-D field with a bound);
 *   - a candidate both larger and slower than another is never picked:
 *     thousands of random models (ratios, threads, bandwidths, levels'
 *     costs, flushes, space limits), exact cost ties, and a lossy model
 *     where wavelet stores more and works longer than predict;
 *   - what a stored byte costs at levels 2-4 is weighed: a field that is
 *     stored raw at level 1 alone is compressed when levels 3 and 4 add
 *     their cost per stored byte, and storing raw loses when the node-local
 *     space cannot hold it (the smallest pick when nothing fits);
 *   - a worker with a share of a core (cz_env.core: cairnd's flush) pays
 *     for compression at that share: the field a whole core compresses for
 *     a PFS at 160 MB/s goes raw at a twentieth of one, and the modelled time
 *     of a codec is its CPU over the share plus the write, not scaled.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compress/compress.h"

#define N (2u << 20)

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static const cz_env L1 = {.storage_bps = 2048.0 * (1 << 20), .threads = 1, .level = 0,
                          .buf_size = 1 << 20};

/* Doubles on a grid of 2^-20 (shuffled codecs reach about 3x). */
static double *smooth(size_t n)
{
    double *d = malloc(n * sizeof *d);
    assert_non_null(d);
    for (size_t i = 0; i < n; i++)
        d[i] = ldexp(round(ldexp(100.0 + 20.0 * sin((double)i * 0.002), 20)), -20);
    return d;
}

/* Two busy processes; *PIDS receives them. They die with this one. */
static void hog_start(pid_t *pids)
{
    for (int i = 0; i < 2; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            for (volatile uint64_t x = 0;; x++)
                ;
        }
    }
}

static void hog_stop(const pid_t *pids)
{
    for (int i = 0; i < 2; i++) {
        assert_int_equal(kill(pids[i], SIGKILL), 0);
        assert_int_equal(waitpid(pids[i], NULL, 0), pids[i]);
    }
}

static bool same_model(const cz_model *a, const cz_model *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

static void test_same_choice(void **state)
{
    (void)state;
    double *field = smooth(N / 8), *sparse = calloc(N / 8, sizeof(double));
    uint8_t *noise = malloc(N);
    float *geo = malloc(N);
    double *lossy = malloc(512 * 512 * sizeof *lossy);
    assert_true(sparse && noise && geo && lossy);
    for (size_t i = 0; i < N / 8; i += 10)
        sparse[i] = 1.0 + 0.5 * sin((double)i);
    for (size_t i = 0; i < N; i++)
        noise[i] = (uint8_t)mix(i);
    for (size_t i = 0; i < N / 4; i++)
        geo[i] = (float)(30 * sin((double)(i / 1024) * 0.03) * cos((double)(i % 1024) * 0.02));
    for (size_t i = 0; i < 512 * 512; i++)
        lossy[i] = exp(-(double)((i / 512 - 200) * (i / 512 - 200) + (i % 512 - 300) *
                                 (i % 512 - 300)) / 5000.0);
    cz_shape geo_sh = {.type = CAIRN_FLOAT, .ndims = 2, .dims = {N / 4 / 1024, 1024}};
    cz_shape lossy_sh = {.type = CAIRN_DOUBLE, .ndims = 2, .dims = {512, 512}, .bound = 1e-4};
    enum { SETS = 5, REPS = 12 };
    cz_model first[SETS], m;
    pid_t pids[2];
    int differ = 0; /* asserted once the hog is gone */
    for (int r = 0; r < REPS; r++) {
        if (r == REPS / 2)
            hog_start(pids);
        cz_model_lossless(field, N, CAIRN_DOUBLE, NULL, &L1, r ? &m : &first[0]);
        differ += r && !same_model(&m, &first[0]);
        cz_model_lossless(sparse, N, CAIRN_DOUBLE, NULL, &L1, r ? &m : &first[1]);
        differ += r && !same_model(&m, &first[1]);
        cz_model_lossless(noise, N, CAIRN_UINT8, NULL, &L1, r ? &m : &first[2]);
        differ += r && !same_model(&m, &first[2]);
        cz_model_lossless(geo, N, CAIRN_FLOAT, &geo_sh, &L1, r ? &m : &first[3]);
        differ += r && !same_model(&m, &first[3]);
        cz_model_lossy(lossy, &lossy_sh, &L1, r ? &m : &first[4]);
        differ += r && !same_model(&m, &first[4]);
    }
    hog_stop(pids);
    assert_int_equal(differ, 0);
    assert_int_equal(cz_pick(&first[2]), CZ_RAW); /* noise */
    assert_int_not_equal(cz_pick(&first[1]), CZ_RAW); /* 90% zeros */
    assert_true(cz_is_lossy(cz_pick(&first[4])));
    free(field), free(sparse), free(noise), free(geo), free(lossy);
}

/* Does candidate A dominate B: no more bytes, no more work, one strictly less? */
static bool dominates(const cz_model *m, int a, int b)
{
    return m->stored[a] <= m->stored[b] && m->cpu[a] <= m->cpu[b] &&
           (m->stored[a] < m->stored[b] || m->cpu[a] < m->cpu[b]);
}

static void test_never_dominated(void **state)
{
    (void)state;
    uint64_t seed = 1;
    for (int trial = 0; trial < 20000; trial++) {
        cz_env env = L1;
        env.threads = 1 + (int)(mix(seed++) % 4);
        env.storage_bps = 1e8 * (1 + (double)(mix(seed++) % 100));
        env.byte_s = (double)(mix(seed++) % 5000) * 1e-12;
        env.flush = mix(seed++) % 2;
        env.max_ratio = mix(seed++) % 3 ? 0 : (double)(mix(seed++) % 1000) / 1000.0;
        env.level = (int)(mix(seed++) % 10);
        uint8_t type = mix(seed++) % 2 ? CAIRN_DOUBLE : CAIRN_FLOAT;
        uint64_t size = 1 + mix(seed++) % (64u << 20);
        bool lossy = mix(seed++) % 4 == 0;
        cz_model m;
        for (int id = 0; id < CZ_NCODECS; id++) {
            m.cost[id] = INFINITY, m.cpu[id] = 0, m.stored[id] = 0;
            if (id == CZ_RAW && lossy)
                continue;
            if (id != CZ_RAW && cz_is_lossy(id) != lossy)
                continue;
            double ratio = id == CZ_RAW ? 1.0 : (double)(1 + mix(seed++) % 1000) / 1000.0;
            m.cost[id] = cz_model_cost(&env, id, type, size, ratio);
            m.cpu[id] = cz_model_cpu(&env, id, type, size, ratio);
            m.stored[id] = ratio * (double)size;
        }
        int pick = cz_pick(&m);
        for (int id = 0; id < CZ_NCODECS; id++)
            if (m.cost[id] < INFINITY && dominates(&m, id, pick))
                fail_msg("trial %d: %s picked, but %s stores %.0f <= %.0f bytes with %.3g <= "
                         "%.3g s of work", trial, cz_codec_name(pick), cz_codec_name(id),
                         m.stored[id], m.stored[pick], m.cpu[id], m.cpu[pick]);
    }
    /* ties: the same cost, the less work wins, then the fewer bytes */
    cz_model t;
    for (int id = 0; id < CZ_NCODECS; id++)
        t.cost[id] = INFINITY, t.cpu[id] = 0, t.stored[id] = 0;
    t.cost[CZ_WAVELET] = t.cost[CZ_PREDICT] = 1.0;
    t.cpu[CZ_WAVELET] = 0.5, t.cpu[CZ_PREDICT] = 0.2;
    t.stored[CZ_WAVELET] = 100, t.stored[CZ_PREDICT] = 100;
    assert_int_equal(cz_pick(&t), CZ_PREDICT);
    t.cpu[CZ_WAVELET] = 0.2, t.stored[CZ_WAVELET] = 50;
    assert_int_equal(cz_pick(&t), CZ_WAVELET);
    /* the case: wavelet 2.3-8.7x larger than predict, and slower */
    cz_env env = L1;
    for (double k = 2.3; k <= 8.7; k += 0.4) {
        for (int id = 0; id < CZ_NCODECS; id++)
            t.cost[id] = INFINITY, t.cpu[id] = 0, t.stored[id] = 0;
        double rp = 0.01, rw = rp * k;
        t.cost[CZ_PREDICT] = cz_model_cost(&env, CZ_PREDICT, CAIRN_DOUBLE, N, rp);
        t.cost[CZ_WAVELET] = cz_model_cost(&env, CZ_WAVELET, CAIRN_DOUBLE, N, rw);
        t.cpu[CZ_PREDICT] = cz_model_cpu(&env, CZ_PREDICT, CAIRN_DOUBLE, N, rp);
        t.cpu[CZ_WAVELET] = cz_model_cpu(&env, CZ_WAVELET, CAIRN_DOUBLE, N, rw);
        t.stored[CZ_PREDICT] = rp * N, t.stored[CZ_WAVELET] = rw * N;
        assert_true(t.cpu[CZ_WAVELET] > t.cpu[CZ_PREDICT]);
        assert_int_equal(cz_pick(&t), CZ_PREDICT);
    }
}

static void test_levels_and_space(void **state)
{
    (void)state;
    double *field = smooth(N / 8);
    double r1 = 0, r3 = 0;
    /* level 1 alone, one thread, a RAM disk: raw is the faster write */
    assert_int_equal(cz_choose(field, N, CAIRN_DOUBLE, NULL, &L1, &r1), CZ_RAW);
    /* level 3 (4 nodes, m = 1, as compress.c counts it): every stored byte
     * is also read, passed on, encoded, and its parity written */
    cz_env l3 = L1;
    double b = L1.storage_bps;
    l3.byte_s = 1 / b + 1 / 12.5e9 + 1 / 2e9 + 1.0 / 3 / b;
    int id = cz_choose(field, N, CAIRN_DOUBLE, NULL, &l3, &r3);
    assert_int_not_equal(id, CZ_RAW);
    assert_true(r3 < 0.5);
    print_message("field: level 1 raw, level 3 %s (stored/raw %.3f)\n", cz_codec_name(id), r3);
    /* with two threads, level 4 too: also read back and written to the PFS as
     * it is (here as fast as level 1) */
    cz_env l4 = l3;
    l4.byte_s += 2 / b;
    l4.flush = true;
    l4.threads = 2;
    id = cz_choose(field, N, CAIRN_DOUBLE, NULL, &l4, &r3);
    assert_int_not_equal(id, CZ_RAW);
    print_message("field: levels 3 + 4, 2 threads: %s (stored/raw %.3f)\n", cz_codec_name(id), r3);
    /* level 1 only, but the node-local space holds half the raw bytes */
    cz_env tight = L1;
    tight.max_ratio = 0.5;
    cz_model m;
    cz_model_lossless(field, N, CAIRN_DOUBLE, NULL, &tight, &m);
    id = cz_pick(&m);
    assert_int_not_equal(id, CZ_RAW);
    assert_true(m.stored[id] <= 0.5 * N);
    /* nothing fits: the fewest bytes of what was sampled */
    tight.max_ratio = 1e-6;
    cz_model_lossless(field, N, CAIRN_DOUBLE, NULL, &tight, &m);
    id = cz_pick(&m);
    for (int c = 0; c < CZ_NCODECS; c++)
        assert_true(m.stored[c] == 0 || m.stored[id] <= m.stored[c]);
    free(field);
}

static void test_core_share(void **state)
{
    (void)state;
    double *field = smooth(N / 8);
    double r = 0;
    cz_env pfs = L1;
    pfs.storage_bps = 160e6;
    int whole = cz_choose(field, N, CAIRN_DOUBLE, NULL, &pfs, &r);
    assert_int_not_equal(whole, CZ_RAW);
    cz_env share = pfs;
    share.core = 0.05;
    assert_int_equal(cz_choose(field, N, CAIRN_DOUBLE, NULL, &share, &r), CZ_RAW);
    /* raw costs the same either way; a codec's CPU takes 20 times as long */
    assert_true(cz_model_cost(&share, CZ_RAW, CAIRN_DOUBLE, N, 1) ==
                cz_model_cost(&pfs, CZ_RAW, CAIRN_DOUBLE, N, 1));
    double c1 = cz_model_cost(&pfs, whole, CAIRN_DOUBLE, N, 0.01);
    double c20 = cz_model_cost(&share, whole, CAIRN_DOUBLE, N, 0.01);
    double cpu = cz_model_cpu(&pfs, whole, CAIRN_DOUBLE, N, 0.01), tw = 0.01 * N / 160e6;
    assert_true(fabs(c1 - (cpu + tw)) < 1e-12 && fabs(c20 - (cpu / 0.05 + tw)) < 1e-12);
    assert_true(cz_env_cores(&share) == 0.05 && cz_env_cores(&pfs) == 1);
    print_message("field for a PFS at 160 MB/s: %s on a whole core, raw at 0.05 of one\n",
                  cz_codec_name(whole));
    free(field);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_choice),
        cmocka_unit_test(test_never_dominated),
        cmocka_unit_test(test_levels_and_space),
        cmocka_unit_test(test_core_share),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
