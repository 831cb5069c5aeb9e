/*
 * test_wavelet.c - the wavelet lossy codec (src/compress/wavelet*.c):
 *
 *   - guaranteed mode, float and double, 1-3 dimensions over odd, prime,
 *     1-wide and one-element shapes; smooth, noisy, constant and special
 *     fields (NaN, +/-Inf, -0.0, denormals, huge values); bounds 1e-2 ..
 *     1e-6 of the range and an absolute one; both quantizers, encode on and
 *     off, every lossless pass: decode == recon byte for byte, every element
 *     within the bound (NaN / Inf bit-exact), max_err the true maximum;
 *   - the paper's mode (no guarantee): n = 1, 2, 4, .., 128, d = 64, both
 *     quantizers, encode on / off: decode == recon;
 *   - hostile payloads: every truncation, every header bit flipped, wrong
 *     raw length, wrong type, flipped body bytes, garbage -> -1, no crash;
 *   - invalid shapes and options, a too small DST -> 0;
 *   - the ratio and speed on a smooth 2-D field at 1e-3 of the range
 *     (printed; the ratio must beat 8).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compress/compress.h"

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static double urand(void) /* [0, 1) */
{
    return (double)(rnd() >> 11) * 0x1p-53;
}

enum field { SMOOTH, NOISY, CONSTANT, SPECIAL, NFIELDS };

static size_t count_of(const cz_shape *sh)
{
    size_t n = 1;
    for (int k = 0; k < sh->ndims; k++)
        n *= sh->dims[k];
    return n;
}

/* Element I of a field over shape SH (as a double, before rounding to TYPE). */
static double field_value(enum field f, const cz_shape *sh, size_t i)
{
    uint64_t idx[3] = {0, 0, 0};
    size_t r = i;
    for (int k = sh->ndims - 1; k >= 0; k--) {
        idx[k] = r % sh->dims[k];
        r /= sh->dims[k];
    }
    double s = 1;
    for (int k = 0; k < sh->ndims; k++)
        s *= k % 2 ? cos(0.05 * (double)idx[k] + 0.3) : sin(0.07 * (double)idx[k] + 1);
    switch (f) {
    case SMOOTH:
        return 2 * s + 0.5;
    case NOISY:
        return s + (urand() - 0.5);
    case CONSTANT:
        return -3.25;
    default:
        break;
    }
    switch (rnd() % 16) {
    case 0:
        return NAN;
    case 1:
        return INFINITY;
    case 2:
        return -INFINITY;
    case 3:
        return -0.0;
    case 4:
        return sh->type == CAIRN_FLOAT ? 1e-41 : 4e-320; /* denormal */
    case 5:
        return sh->type == CAIRN_FLOAT ? 3e38 : 1e307;
    default:
        return s;
    }
}

static void *make_field(enum field f, const cz_shape *sh)
{
    size_t n = count_of(sh), es = cairn_type_size((cairn_type)sh->type);
    uint8_t *p = malloc(n * es);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) {
        double v = field_value(f, sh, i);
        if (sh->type == CAIRN_FLOAT) {
            float x = (float)v;
            memcpy(p + i * es, &x, es);
        } else {
            memcpy(p + i * es, &v, es);
        }
    }
    return p;
}

static double get(uint8_t type, const void *p, size_t i)
{
    if (type == CAIRN_FLOAT) {
        float f;
        memcpy(&f, (const uint8_t *)p + 4 * i, 4);
        return f;
    }
    double d;
    memcpy(&d, (const uint8_t *)p + 8 * i, 8);
    return d;
}

/* Range (max - min) of the finite values, 0 if none. */
static double range_of(uint8_t type, const void *p, size_t n)
{
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double v = get(type, p, i);
        if (isfinite(v)) {
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
    }
    return hi >= lo ? hi - lo : 0;
}

/*
 * Encode SRC, decode, and check the contract: decode == recon, and with the
 * guarantee every element within the bound. Returns the payload size.
 */
static size_t round_trip(const cz_shape *sh, const cz_wavelet_opts *o, const void *src)
{
    size_t n = count_of(sh), es = cairn_type_size((cairn_type)sh->type), raw = n * es;
    size_t cap = cz_wavelet_bound(raw);
    uint8_t *pay = malloc(cap), *recon = malloc(raw), *out = malloc(raw);
    assert_non_null(pay);
    assert_non_null(recon);
    assert_non_null(out);
    double max_err = -1;
    size_t len = cz_wavelet_encode(sh, o, src, pay, cap, recon, &max_err);
    assert_true(len > 0 && len <= cap);
    uint8_t *exact = malloc(len); /* exact size: ASan sees any over-read */
    assert_non_null(exact);
    memcpy(exact, pay, len);
    assert_int_equal(cz_wavelet_decode(sh->type, exact, len, out, raw), 0);
    assert_memory_equal(out, recon, raw);
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double x = get(sh->type, src, i), y = get(sh->type, out, i);
        if (!isfinite(x)) {
            if (memcmp((const uint8_t *)src + i * es, out + i * es, es) != 0)
                fail_msg("element %zu: non-finite not stored exactly", i);
            continue;
        }
        double err = fabs(x - y);
        if (isnan(err))
            err = INFINITY;
        if (o->guarantee && !(err <= sh->bound))
            fail_msg("element %zu of %zu: |%.17g - %.17g| = %g > bound %g", i, n, x, y, err,
                     sh->bound);
        worst = err > worst ? err : worst;
    }
    if (!(max_err == worst))
        fail_msg("max_err %.17g, true max %.17g", max_err, worst);
    free(exact);
    free(pay);
    free(recon);
    free(out);
    return len;
}

static const uint64_t shapes[][4] = {
    /* ndims, dims */
    {1, 1, 0, 0},    {1, 2, 0, 0},    {1, 7, 0, 0},     {1, 101, 0, 0},  {1, 4099, 0, 0},
    {2, 1, 1, 0},    {2, 1, 37, 0},   {2, 37, 1, 0},    {2, 13, 7, 0},   {2, 2, 2, 0},
    {2, 64, 64, 0},  {2, 101, 103, 0}, {3, 1, 1, 1},    {3, 2, 2, 2},    {3, 7, 13, 3},
    {3, 3, 1, 5},    {3, 1, 1, 29},   {3, 16, 17, 18},  {3, 33, 2, 9},
};
#define NSHAPES (sizeof shapes / sizeof shapes[0])

static cz_shape shape_at(size_t s, uint8_t type)
{
    cz_shape sh = {.type = type, .ndims = (uint8_t)shapes[s][0]};
    for (int k = 0; k < sh.ndims; k++)
        sh.dims[k] = shapes[s][1 + k];
    return sh;
}

static void test_guaranteed(void **state)
{
    (void)state;
    static const double rel[] = {1e-2, 1e-3, 1e-4, 1e-6, 0}; /* 0: absolute 0.05 */
    for (int t = 0; t < 2; t++) {
        uint8_t type = t ? CAIRN_DOUBLE : CAIRN_FLOAT;
        for (size_t s = 0; s < NSHAPES; s++) {
            for (int f = 0; f < NFIELDS; f++) {
                cz_shape sh = shape_at(s, type);
                void *src = make_field((enum field)f, &sh);
                double range = range_of(type, src, count_of(&sh));
                for (size_t b = 0; b < sizeof rel / sizeof rel[0]; b++) {
                    sh.bound = rel[b] > 0 && range > 0 ? rel[b] * range : 0.05;
                    for (int q = 0; q < 2; q++) {
                        cz_wavelet_opts o = cz_wavelet_defaults;
                        o.quantizer = q ? CZ_Q_MOUNTAIN : CZ_Q_SIMPLE;
                        round_trip(&sh, &o, src);
                    }
                }
                free(src);
            }
        }
    }
}

/* Encode off, other lossless passes, the paper's n with the guarantee, odd d. */
static void test_guaranteed_variants(void **state)
{
    (void)state;
    static const int lossless[] = {CZ_RAW, CZ_ZLIB, CZ_ZSTD};
    for (int t = 0; t < 2; t++) {
        uint8_t type = t ? CAIRN_DOUBLE : CAIRN_FLOAT;
        for (size_t s = 0; s < NSHAPES; s++) {
            for (int f = 0; f < NFIELDS; f++) {
                cz_shape sh = shape_at(s, type);
                void *src = make_field((enum field)f, &sh);
                double range = range_of(type, src, count_of(&sh));
                sh.bound = range > 0 ? 1e-3 * range : 1e-3;
                for (int v = 0; v < 6; v++) {
                    cz_wavelet_opts o = cz_wavelet_defaults;
                    o.lossless = lossless[v % 3];
                    o.encode = v < 3;
                    o.divisions = v == 4 ? 16 : v == 5 ? 128 : 0;
                    o.bins = v == 2 ? 1 : v == 3 ? 1000 : 64;
                    round_trip(&sh, &o, src);
                }
                free(src);
            }
        }
    }
}

/* The paper's configurations, and its NICAM-like shape 1156 x 82 x 2 (cut to 289 x 82 x 2). */
static void test_paper_mode(void **state)
{
    (void)state;
    for (int t = 0; t < 2; t++) {
        uint8_t type = t ? CAIRN_DOUBLE : CAIRN_FLOAT;
        cz_shape sh = {.type = type, .ndims = 3, .dims = {289, 82, 2}, .bound = 1e-3};
        for (int f = 0; f < NFIELDS; f++) {
            void *src = make_field((enum field)f, &sh);
            for (int n = 1; n <= 128; n *= 2)
                for (int v = 0; v < 4; v++) {
                    cz_wavelet_opts o = {v & 1 ? CZ_Q_MOUNTAIN : CZ_Q_SIMPLE, n, 64, v < 2, false,
                                         CZ_ZLIB};
                    round_trip(&sh, &o, src);
                }
            free(src);
        }
        /* small and odd shapes too */
        for (size_t s = 0; s < NSHAPES; s++) {
            cz_shape sh2 = shape_at(s, type);
            sh2.bound = 1e-3;
            void *src = make_field(SPECIAL, &sh2);
            for (int v = 0; v < 4; v++) {
                cz_wavelet_opts o = {v & 1 ? CZ_Q_MOUNTAIN : CZ_Q_SIMPLE, v < 2 ? 1 : 7, 64,
                                     v % 3 == 0, false, CZ_ZSTD};
                round_trip(&sh2, &o, src);
            }
            free(src);
        }
    }
}

/* Values near the limits of the type: overflow in the transform, tiny bounds. */
static void test_extremes(void **state)
{
    (void)state;
    static const double bounds[] = {4e-324, 1e-300, 1e-30, 1e-8, 1, 1e30, 1e300, DBL_MAX};
    for (int t = 0; t < 2; t++) {
        uint8_t type = t ? CAIRN_DOUBLE : CAIRN_FLOAT;
        cz_shape sh = {.type = type, .ndims = 2, .dims = {19, 23}};
        size_t n = count_of(&sh), es = cairn_type_size((cairn_type)type);
        uint8_t *src = malloc(n * es);
        assert_non_null(src);
        for (int rep = 0; rep < 8; rep++) {
            if (rep == 4) { /* 1-D: one coefficient per element, the widest allowance */
                sh.ndims = 1;
                sh.dims[0] = n;
                sh.dims[1] = 0;
            }
            for (size_t i = 0; i < n; i++) { /* random bit patterns: every exponent */
                uint64_t bits = rnd();
                memcpy(src + i * es, &bits, es);
            }
            for (size_t b = 0; b < sizeof bounds / sizeof bounds[0]; b++) {
                sh.bound = bounds[b];
                round_trip(&sh, &cz_wavelet_defaults, src);
                cz_wavelet_opts paper = cz_wavelet_defaults; /* n derived, no guarantee */
                paper.guarantee = false;
                round_trip(&sh, &paper, src);
            }
            for (size_t i = 0; i < n; i++) /* +-max in a checkerboard */
                if (t)
                    memcpy(src + i * es, &(double){(i + i / 23) % 2 ? DBL_MAX : -DBL_MAX}, es);
                else
                    memcpy(src + i * es, &(float){(i + i / 23) % 2 ? FLT_MAX : -FLT_MAX}, es);
            sh.bound = 1;
            round_trip(&sh, &cz_wavelet_defaults, src);
        }
        free(src);
    }
}

/* A valid payload for the corruption tests (lossless LOSSLESS). */
static uint8_t *sample_payload(uint8_t type, int lossless, size_t *len, size_t *raw)
{
    cz_shape sh = {.type = type, .ndims = 2, .dims = {11, 9}, .bound = 1e-2};
    void *src = make_field(SPECIAL, &sh);
    *raw = count_of(&sh) * cairn_type_size((cairn_type)type);
    uint8_t *pay = malloc(cz_wavelet_bound(*raw)), *recon = malloc(*raw);
    assert_non_null(pay);
    assert_non_null(recon);
    cz_wavelet_opts o = cz_wavelet_defaults;
    o.lossless = lossless;
    double err;
    *len = cz_wavelet_encode(&sh, &o, src, pay, cz_wavelet_bound(*raw), recon, &err);
    assert_true(*len > 64);
    free(src);
    free(recon);
    return pay;
}

/* Decode P[0..LEN) from an exact-size copy; returns the result. */
static int decode_copy(uint8_t type, const uint8_t *p, size_t len, size_t raw)
{
    uint8_t *c = malloc(len ? len : 1), *out = malloc(raw ? raw : 1);
    assert_non_null(c);
    assert_non_null(out);
    memcpy(c, p, len);
    int rc = cz_wavelet_decode(type, c, len, out, raw);
    free(c);
    free(out);
    return rc;
}

static void test_corrupt(void **state)
{
    (void)state;
    static const int lossless[] = {CZ_RAW, CZ_ZLIB, CZ_ZSTD};
    for (int t = 0; t < 2; t++) {
        uint8_t type = t ? CAIRN_DOUBLE : CAIRN_FLOAT, other = t ? CAIRN_FLOAT : CAIRN_DOUBLE;
        for (int z = 0; z < 3; z++) {
            size_t len, raw;
            uint8_t *p = sample_payload(type, lossless[z], &len, &raw);
            assert_int_equal(decode_copy(type, p, len, raw), 0);
            for (size_t cut = 0; cut < len; cut++)
                assert_int_equal(decode_copy(type, p, cut, raw), -1);
            for (size_t bit = 0; bit < 64 * 8; bit++) { /* every header bit */
                p[bit / 8] ^= (uint8_t)(1u << bit % 8);
                assert_int_equal(decode_copy(type, p, len, raw), -1);
                p[bit / 8] ^= (uint8_t)(1u << bit % 8);
            }
            size_t es = cairn_type_size((cairn_type)type);
            size_t bad_raw[] = {0, 1, raw - 1, raw + 1, raw - es, raw + es, 2 * raw, SIZE_MAX};
            for (size_t i = 0; i < sizeof bad_raw / sizeof bad_raw[0]; i++)
                if (bad_raw[i] <= 4 * raw)
                    assert_int_equal(decode_copy(type, p, len, bad_raw[i]), -1);
            assert_int_equal(cz_wavelet_decode(type, p, len, NULL, 0), -1);
            assert_int_equal(cz_wavelet_decode(type, p, len, p, SIZE_MAX), -1);
            assert_int_equal(decode_copy(other, p, len, raw), -1);
            assert_int_equal(decode_copy(CAIRN_INT32, p, len, raw), -1);
            assert_int_equal(decode_copy(CAIRN_UINT64, p, len, raw), -1);
            for (size_t i = 64; i < len; i++) /* body bytes: any result, no crash */
                for (int v = 0; v < 3; v++) {
                    uint8_t keep = p[i];
                    p[i] = v == 0 ? (uint8_t)~keep : v == 1 ? 0 : 0xff;
                    decode_copy(type, p, len, raw);
                    p[i] = keep;
                }
            free(p);
        }
    }
    uint8_t junk[4096];
    for (int rep = 0; rep < 2000; rep++) {
        size_t len = rnd() % sizeof junk;
        for (size_t i = 0; i < len; i++)
            junk[i] = (uint8_t)rnd();
        if (len > 0)
            junk[0] = 0x57;
        if (len > 1)
            junk[1] = 1;
        assert_int_equal(decode_copy(CAIRN_DOUBLE, junk, len, 8 * (1 + rnd() % 512)), -1);
    }
}

static void test_bad_args(void **state)
{
    (void)state;
    double src[64], recon[64], err;
    for (int i = 0; i < 64; i++)
        src[i] = i * 0.25;
    uint8_t dst[1024];
    cz_shape ok = {.type = CAIRN_DOUBLE, .ndims = 2, .dims = {8, 8}, .bound = 1e-3};
    const cz_wavelet_opts *d = &cz_wavelet_defaults;
    assert_true(cz_wavelet_encode(&ok, d, src, dst, sizeof dst, recon, &err) > 0);
    cz_shape bad[] = {ok, ok, ok, ok, ok, ok, ok, ok};
    bad[0].ndims = 0;
    bad[1].ndims = 4;
    bad[2].dims[1] = 0;
    bad[3].type = CAIRN_INT64;
    bad[4].bound = 0;
    bad[5].bound = NAN;
    bad[6].bound = INFINITY;
    bad[7].bound = -1;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(cz_wavelet_encode(&bad[i], d, src, dst, sizeof dst, recon, &err), 0);
    cz_wavelet_opts bo[] = {*d, *d, *d, *d, *d};
    bo[0].quantizer = 2;
    bo[1].divisions = -1;
    bo[2].divisions = 70000;
    bo[3].bins = 0;
    bo[4].lossless = CZ_LZ4;
    for (size_t i = 0; i < sizeof bo / sizeof bo[0]; i++)
        assert_int_equal(cz_wavelet_encode(&ok, &bo[i], src, dst, sizeof dst, recon, &err), 0);
    assert_int_equal(cz_wavelet_encode(&ok, d, src, dst, 63, recon, &err), 0);
    /* a DST just big enough works; one byte less falls back or fails, never overflows */
    size_t len = cz_wavelet_encode(&ok, d, src, dst, sizeof dst, recon, &err);
    uint8_t *tight = malloc(len);
    assert_non_null(tight);
    assert_int_equal(cz_wavelet_encode(&ok, d, src, tight, len, recon, &err), len);
    size_t less = cz_wavelet_encode(&ok, d, src, tight, len - 1, recon, &err);
    assert_true(less == 0 || less <= len - 1);
    free(tight);
    /* deterministic */
    uint8_t again[1024];
    assert_int_equal(cz_wavelet_encode(&ok, d, src, again, sizeof again, recon, &err), len);
    assert_memory_equal(dst, again, len);
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Ratio and speed on a smooth 2-D field of doubles at 1e-3 of the range. */
static void test_ratio(void **state)
{
    (void)state;
    cz_shape sh = {.type = CAIRN_DOUBLE, .ndims = 2, .dims = {512, 512}};
    size_t n = count_of(&sh), raw = n * 8;
    double *src = malloc(raw);
    assert_non_null(src);
    for (size_t i = 0; i < n; i++) {
        double y = (double)(i / 512) / 512, x = (double)(i % 512) / 512;
        src[i] = sin(6.0 * x + 1) * cos(4.0 * y) + 0.5 * sin(11.0 * x * y);
    }
    sh.bound = 1e-3 * range_of(CAIRN_DOUBLE, src, n);
    size_t len = round_trip(&sh, &cz_wavelet_defaults, src);
    uint8_t *pay = malloc(cz_wavelet_bound(raw)), *out = malloc(raw);
    assert_non_null(pay);
    assert_non_null(out);
    double err, t0 = seconds();
    int reps = 5;
    for (int r = 0; r < reps; r++)
        cz_wavelet_encode(&sh, &cz_wavelet_defaults, src, pay, cz_wavelet_bound(raw), out, &err);
    double t1 = seconds();
    for (int r = 0; r < reps; r++)
        assert_int_equal(cz_wavelet_decode(CAIRN_DOUBLE, pay, len, out, raw), 0);
    double t2 = seconds();
    print_message("wavelet: smooth 512x512 doubles at 1e-3 of range: ratio %.2f, max_err %.3g "
                  "(bound %.3g), encode %.0f MB/s, decode %.0f MB/s\n",
                  (double)raw / (double)len, err, sh.bound, reps * raw / (t1 - t0) / 1e6,
                  reps * raw / (t2 - t1) / 1e6);
    assert_true((double)raw / (double)len > 8);
    free(pay);
    free(out);
    free(src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_guaranteed),  cmocka_unit_test(test_guaranteed_variants),
        cmocka_unit_test(test_paper_mode),  cmocka_unit_test(test_extremes),
        cmocka_unit_test(test_corrupt),     cmocka_unit_test(test_bad_args),
        cmocka_unit_test(test_ratio),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
