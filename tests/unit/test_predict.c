/*
 * test_predict.c - the predictive lossy codec and its Huffman coder
 * (src/compress/predict*.c, huffman.c):
 *
 *   - float and double, 1-3 dimensions, odd and prime shapes (1, 101,
 *     1x1x1, 1xN, Nx1, 2x2x2, 7x13x3, 17x19x23, ...), smooth, noisy,
 *     constant and random-walk fields, with NaN, +-Inf, -0.0, denormals and
 *     huge values mixed in, at bounds of 1e-2..1e-6 of the range and
 *     absolute ones: decode(encode) equals the reported reconstruction byte
 *     for byte, every finite element is within the bound, every non-finite
 *     one bit-exact, max_err is the largest error; both predictors;
 *   - the ratio on a smooth 3-D field, constant fields, the frame path;
 *   - invalid shapes and bounds, a too small CAP;
 *   - damage: every header byte flipped (but the predictor, and the version
 *     between 1 and 3 when the codes are Huffman-coded, which decode, to other
 *     values), every truncation, trailing bytes, wrong raw_len and type -> -1;
 *     random flips never crash;
 *   - Huffman: n = 0 and 1, one symbol, two, all 65536, skewed and
 *     Fibonacci frequencies (lengths limited to 24), damaged tables (Kraft
 *     sum over and under 1, lengths out of range, symbols past 65535),
 *     truncated and padded bit streams -> -1.
 * Payloads and outputs live in buffers of exactly their size, so the
 * sanitizers see any overrun.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compress/compress.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double unif(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }

enum kind { SMOOTH, NOISY, CONSTANT, WALK, SPECIAL, NKINDS };

typedef struct arr {
    uint8_t type;
    uint8_t ndims;
    uint64_t dims[3];
    size_t n, es;
    void *x;
} arr;

static double get(const arr *a, size_t i)
{
    return a->type == CAIRN_FLOAT ? ((const float *)a->x)[i] : ((const double *)a->x)[i];
}

static void set(arr *a, size_t i, double v)
{
    if (a->type == CAIRN_FLOAT)
        ((float *)a->x)[i] = (float)v;
    else
        ((double *)a->x)[i] = v;
}

static arr make(uint8_t type, int nd, const uint64_t *dims, int kind)
{
    arr a = {type, (uint8_t)nd, {0}, 1, type == CAIRN_FLOAT ? 4 : 8, NULL};
    for (int d = 0; d < nd; d++) {
        a.dims[d] = dims[d];
        a.n *= dims[d];
    }
    a.x = malloc(a.n * a.es);
    assert_non_null(a.x);
    uint64_t n1 = nd == 3 ? dims[1] : 1, n2 = dims[nd - 1];
    double walk = 0;
    for (size_t i = 0; i < a.n; i++) {
        double x = (double)(i % n2), y = (double)(i / n2 % n1), z = (double)(i / n2 / n1);
        double v;
        switch (kind) {
        case SMOOTH: v = 10 * sin(x * 0.11) * cos(y * 0.07) + 3 * sin(z * 0.05 + x * 0.02); break;
        case NOISY: v = 100 * (unif() - 0.5); break;
        case CONSTANT: v = 3.25; break;
        case WALK: v = (walk += unif() - 0.5); break;
        default: v = sin(x * 0.3) + cos(y * 0.2 + z * 0.1); break;
        }
        set(&a, i, v);
    }
    if (kind == SPECIAL) {
        const double sp[] = {NAN, -NAN, INFINITY, -INFINITY, -0.0, 0.0, 4.9e-324, -2.2e-308,
                             1.4e-45, 1e300, -1e300, DBL_MAX, FLT_MAX, -FLT_MAX, 1e-30};
        for (size_t k = 0; k < a.n / 5 + 1; k++) {
            size_t i = rnd() % a.n;
            set(&a, i, sp[rnd() % (sizeof sp / sizeof sp[0])]);
        }
        if (type == CAIRN_FLOAT && a.n > 2) { /* a NaN with payload, a signalling NaN */
            uint32_t q = 0x7fc12345, s = 0xff800001;
            memcpy((float *)a.x + 1, &q, 4);
            memcpy((float *)a.x + a.n - 1, &s, 4);
        } else if (a.n > 2) {
            uint64_t q = 0x7ff8000000abcdefull, s = 0xfff0000000000001ull;
            memcpy((double *)a.x + 1, &q, 8);
            memcpy((double *)a.x + a.n - 1, &s, 8);
        }
    }
    return a;
}

/* Range of the finite values (1 if there are none or it is 0). */
static double range_of(const arr *a)
{
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < a->n; i++) {
        double v = get(a, i);
        if (isfinite(v) && fabs(v) < 1e200) {
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
    }
    return hi > lo ? hi - lo : 1;
}

static int seen_predictor[2]; /* payloads by predictor (byte 4) */

static uint8_t *copy_exact(const uint8_t *p, size_t n)
{
    uint8_t *q = malloc(n ? n : 1);
    assert_non_null(q);
    memcpy(q, p, n);
    return q;
}

/* Encode A at BOUND, check everything the contract promises; returns the
 * payload (exact size in *LEN). */
static uint8_t *round_trip(const arr *a, double bound, size_t *len)
{
    cz_shape sh = {a->type, a->ndims, {a->dims[0], a->dims[1], a->dims[2]}, bound};
    size_t raw = a->n * a->es, cap = cz_predict_bound(raw);
    uint8_t *dst = malloc(cap), *rec = malloc(raw), *out = malloc(raw);
    assert_true(dst && rec && out);
    double max_err = -1;
    size_t n = cz_predict_encode(&sh, a->x, dst, cap, rec, &max_err);
    assert_true(n > 0 && n <= cap);
    uint8_t *pay = copy_exact(dst, n);
    free(dst);
    assert_true(pay[4] <= 1);
    seen_predictor[pay[4]]++;
    assert_int_equal(cz_predict_decode(a->type, pay, n, out, raw), 0);
    assert_memory_equal(out, rec, raw);
    double worst = 0;
    arr o = *a;
    o.x = out;
    for (size_t i = 0; i < a->n; i++) {
        double x = get(a, i), y = get(&o, i);
        if (!isfinite(x)) {
            assert_memory_equal((uint8_t *)out + i * a->es, (uint8_t *)a->x + i * a->es, a->es);
            continue;
        }
        double e = fabs(x - y);
        if (!(e <= bound))
            fail_msg("element %zu: %.17g decoded as %.17g, bound %g", i, x, y, bound);
        worst = e > worst ? e : worst;
    }
    assert_true(max_err == worst);
    free(rec);
    free(out);
    *len = n;
    return pay;
}

static void test_shapes(void **state)
{
    (void)state;
    static const struct {
        int nd;
        uint64_t d[3];
    } shapes[] = {
        {1, {1}},        {1, {2}},         {1, {101}},        {1, {1000}},      {3, {1, 1, 1}},
        {2, {1, 57}},    {2, {57, 1}},     {3, {2, 2, 2}},    {3, {7, 13, 3}},  {2, {31, 37}},
        {3, {17, 19, 23}}, {3, {1, 1, 50}}, {3, {50, 1, 1}},  {3, {1, 40, 1}},  {2, {64, 64}},
        {3, {3, 1, 5}},
    };
    const double rel[] = {1e-2, 1e-3, 1e-4, 1e-6};
    for (int t = 0; t < 2; t++) {
        uint8_t type = t ? CAIRN_DOUBLE : CAIRN_FLOAT;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int k = 0; k < NKINDS; k++) {
                arr a = make(type, shapes[s].nd, shapes[s].d, k);
                double r = range_of(&a);
                for (size_t b = 0; b < sizeof rel / sizeof rel[0]; b++) {
                    size_t n;
                    free(round_trip(&a, rel[b] * r, &n));
                }
                size_t n;
                free(round_trip(&a, 0.5, &n));     /* absolute bounds */
                free(round_trip(&a, 1e-9, &n));
                free(round_trip(&a, 1e-300, &n)); /* everything an exception */
                free(round_trip(&a, 1e30, &n));
                free(a.x);
            }
    }
    print_message("payloads by predictor: Lorenzo %d, interpolation %d\n", seen_predictor[0],
                  seen_predictor[1]);
    assert_true(seen_predictor[0] > 50 && seen_predictor[1] > 50);
}

/* Bounds so small or values so large that the float rounding of x' or the
 * quantizer's range decides. */
static void test_edges_of_bound(void **state)
{
    (void)state;
    uint64_t d[1] = {2000};
    for (int t = 0; t < 2; t++) {
        arr a = make(t ? CAIRN_DOUBLE : CAIRN_FLOAT, 1, d, NOISY);
        for (size_t i = 0; i < a.n; i++)
            set(&a, i, (1 + unif()) * ldexp(1, (int)(rnd() % 40) - 20));
        const double bounds[] = {1e-7, 3e-8, 6e-8, 1.2e-7, 1e-15, 1e-5, 0.1};
        for (size_t b = 0; b < sizeof bounds / sizeof bounds[0]; b++) {
            size_t n;
            free(round_trip(&a, bounds[b], &n));
        }
        free(a.x);
    }
}

static void test_ratio(void **state)
{
    (void)state;
    uint64_t d[3] = {64, 64, 64};
    arr a = make(CAIRN_DOUBLE, 3, d, SMOOTH);
    size_t n;
    free(round_trip(&a, 1e-3 * range_of(&a), &n));
    print_message("smooth 64^3 doubles at 1e-3 of the range: ratio %.1f\n",
                  (double)(a.n * 8) / (double)n);
    assert_true(n * 40 < a.n * 8);
    free(a.x);

    a = make(CAIRN_FLOAT, 3, d, CONSTANT);
    free(round_trip(&a, 1e-6, &n));
    assert_true(n < 200);
    free(a.x);
}

/* The frame path of codec.c: encode_lossy, parse, decode. */
static void test_frame(void **state)
{
    (void)state;
    uint64_t d[2] = {100, 120};
    arr a = make(CAIRN_FLOAT, 2, d, SMOOTH);
    cz_shape sh = {CAIRN_FLOAT, 2, {100, 120, 0}, 1e-3};
    size_t raw = a.n * 4;
    uint8_t *fr = malloc(cz_frame_bound(raw)), *rec = malloc(raw), *out = malloc(raw),
            *scratch = malloc(raw);
    double me;
    size_t fs = cz_frame_encode_lossy(CZ_PREDICT, &sh, a.x, raw, fr, rec, &me);
    assert_int_equal(fr[0], CZ_PREDICT);
    assert_true(fs < raw / 4 && me <= 1e-3 && me > 0);
    cz_frame f;
    size_t used;
    cn_err err = {0};
    assert_int_equal(cz_frame_parse(fr, fs, CZ_PREDICT, &f, &used, &err), 0);
    assert_int_equal(cz_frame_decode(&f, out, scratch, &err), 0);
    assert_memory_equal(out, rec, raw);
    free(fr);
    free(rec);
    free(out);
    free(scratch);
    free(a.x);
}

static void test_bad_shapes(void **state)
{
    (void)state;
    double x[64] = {0}, rec[64];
    uint8_t dst[4096];
    double me;
    const cz_shape bad[] = {
        {CAIRN_DOUBLE, 0, {8, 0, 0}, 1},      {CAIRN_DOUBLE, 4, {2, 2, 2}, 1},
        {CAIRN_DOUBLE, 2, {8, 0, 0}, 1},      {CAIRN_INT32, 1, {8, 0, 0}, 1},
        {CAIRN_DOUBLE, 1, {8, 0, 0}, 0},      {CAIRN_DOUBLE, 1, {8, 0, 0}, -1},
        {CAIRN_DOUBLE, 1, {8, 0, 0}, NAN},    {CAIRN_DOUBLE, 1, {8, 0, 0}, INFINITY},
        {CAIRN_DOUBLE, 1, {8, 0, 0}, DBL_MAX}, {CAIRN_DOUBLE, 3, {1ull << 40, 1ull << 40, 8}, 1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(cz_predict_encode(&bad[i], x, dst, sizeof dst, rec, &me), 0);
    cz_shape ok = {CAIRN_DOUBLE, 1, {64, 0, 0}, 1e-3};
    for (int i = 0; i < 64; i++)
        x[i] = unif();
    size_t n = cz_predict_encode(&ok, x, dst, sizeof dst, rec, &me);
    assert_true(n > 0);
    for (size_t cap = 0; cap < n; cap++)
        assert_int_equal(cz_predict_encode(&ok, x, dst, cap, rec, &me), 0);
}

/* Every header byte flipped, every truncation, trailing bytes, wrong
 * raw_len or type: -1. Flips anywhere: 0 or -1, never a crash. */
static void test_damage(void **state)
{
    (void)state;
    uint64_t d[3] = {9, 11, 13};
    for (int t = 0; t < 2; t++) {
        uint8_t type = t ? CAIRN_DOUBLE : CAIRN_FLOAT;
        arr a = make(type, 3, d, SPECIAL);
        size_t n, raw = a.n * a.es;
        uint8_t *p = round_trip(&a, 1e-2, &n);
        uint8_t *out = malloc(raw);
        size_t hdr = 56 + 8 * 3;
        for (size_t i = 0; i < hdr; i++) {
            if (i >= 8 && i < 16)
                continue; /* the bound: any positive finite value decodes */
            for (int bit = 0; bit < 8; bit++) {
                if (i == 4 && bit == 0)
                    continue; /* the other predictor: decodes, to other values */
                if (i == 1 && !(p[5] & 8) && (unsigned)((p[1] ^ (1u << bit)) - 1) < 3)
                    continue; /* Huffman codes (a small array) are read by versions 1-3
                               * alike: 2 and 3 to the same values, 1 to others */
                p[i] ^= (uint8_t)(1u << bit);
                int rc = cz_predict_decode(type, p, n, out, raw);
                if (rc != -1)
                    fail_msg("header byte %zu bit %d flipped: decode returned %d", i, bit, rc);
                p[i] ^= (uint8_t)(1u << bit);
            }
        }
        for (size_t len = 0; len < n; len++) {
            uint8_t *q = copy_exact(p, len);
            assert_int_equal(cz_predict_decode(type, q, len, out, raw), -1);
            free(q);
        }
        uint8_t *longer = malloc(n + 1);
        memcpy(longer, p, n);
        longer[n] = 0;
        assert_int_equal(cz_predict_decode(type, longer, n + 1, out, raw), -1);
        free(longer);
        uint8_t *big = malloc(raw + a.es);
        assert_int_equal(cz_predict_decode(type, p, n, big, raw + a.es), -1);
        assert_int_equal(cz_predict_decode(type, p, n, big, raw - a.es), -1);
        assert_int_equal(cz_predict_decode(t ? CAIRN_FLOAT : CAIRN_DOUBLE, p, n, big, raw), -1);
        assert_int_equal(cz_predict_decode(CAIRN_INT64, p, n, big, raw), -1);
        free(big);
        for (int k = 0; k < 3000; k++) {
            size_t i = rnd() % n;
            uint8_t m = (uint8_t)(1 + rnd() % 255);
            p[i] ^= m;
            (void)cz_predict_decode(type, p, n, out, raw);
            p[i] ^= m;
        }
        assert_int_equal(cz_predict_decode(type, p, n, out, raw), 0);
        free(out);
        free(p);
        free(a.x);
    }
}

/* ---- Huffman ------------------------------------------------------------- */

static uint8_t *huff_round_trip(const uint16_t *sym, size_t n, size_t *len)
{
    size_t cap = cz_huff_bound(n);
    uint8_t *buf = malloc(cap);
    uint16_t *out = malloc((n ? n : 1) * sizeof *out);
    assert_true(buf && out);
    size_t m = cz_huff_encode(sym, n, buf, cap);
    assert_true(m >= 4 && m <= cap);
    uint8_t *p = copy_exact(buf, m);
    free(buf);
    assert_int_equal(cz_huff_decode(p, m, out, n), 0);
    if (n)
        assert_memory_equal(out, sym, n * sizeof *sym);
    const size_t caps[] = {0, 3, m / 2, m - 1, rnd() % m}; /* smaller CAPs fail */
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
        uint8_t *b = malloc(caps[i] ? caps[i] : 1);
        assert_int_equal(cz_huff_encode(sym, n, b, caps[i]), 0);
        free(b);
    }
    free(out);
    *len = m;
    return p;
}

/* The longest code length in the table of P. */
static int huff_maxlen(const uint8_t *p)
{
    uint32_t ns = cn_get_u32(p);
    int most = 0;
    p += 4;
    for (uint32_t i = 0; i < ns && ns >= 2; i++) {
        while (*p & 0x80)
            p++;
        p++;
        most = *p > most ? *p : most;
        p++;
    }
    return most;
}

static void test_huff_shapes(void **state)
{
    (void)state;
    size_t len, n = 1 << 17;
    uint16_t *s = calloc(n, sizeof *s);
    uint16_t one = 77;
    free(huff_round_trip(s, 0, &len));
    assert_int_equal(len, 4);
    free(huff_round_trip(&one, 1, &len));
    for (size_t i = 0; i < n; i++)
        s[i] = 65535;
    free(huff_round_trip(s, n, &len));
    assert_true(len <= 8); /* a lone symbol costs no bits */
    for (size_t i = 0; i < n; i++)
        s[i] = rnd() % 3 == 0 ? 0 : 65535;
    free(huff_round_trip(s, n, &len));
    assert_true(len <= 4 + 6 + n / 8 + 1);
    for (size_t i = 0; i < n; i++) /* all 65536 symbols */
        s[i] = (uint16_t)(i < 65536 ? i : rnd());
    free(huff_round_trip(s, n, &len));
    for (size_t i = 0; i < n; i++) { /* skewed: geometric around 32768 */
        int k = 0;
        while (k < 40 && rnd() % 4 == 0)
            k++;
        s[i] = (uint16_t)(32768 + (rnd() & 1 ? k : -k));
    }
    uint8_t *p = huff_round_trip(s, n, &len);
    assert_true(len < n / 2);
    free(p);
    free(s);

    /* Fibonacci frequencies make the optimal code 40 deep: limited to 24. */
    uint64_t fib[40] = {1, 1};
    size_t total = 2;
    for (int i = 2; i < 31; i++)
        total += fib[i] = fib[i - 1] + fib[i - 2];
    s = malloc(total * sizeof *s);
    size_t k = 0;
    for (int i = 0; i < 31; i++)
        for (uint64_t j = 0; j < fib[i]; j++)
            s[k++] = (uint16_t)(i * 1000);
    for (size_t i = total - 1; i > 0; i--) {
        size_t j = rnd() % (i + 1);
        uint16_t t = s[i];
        s[i] = s[j];
        s[j] = t;
    }
    p = huff_round_trip(s, total, &len);
    assert_int_equal(huff_maxlen(p), 24);
    free(p);
    free(s);
}

static void test_huff_damage(void **state)
{
    (void)state;
    uint16_t out[64];
    /* nsym, then (gap, len) pairs, then bits */
    static const uint8_t ok[] = {3, 0, 0, 0, 5, 1, 0, 2, 0, 2, 0x5b};
    /* 5:'0', 6:'10', 7:'11' -> 0 10 11 0 11 (5 symbols), 0x5b = 0101 1011 */
    assert_int_equal(cz_huff_decode(ok, sizeof ok, out, 5), 0);
    assert_int_equal(out[0], 5);
    assert_int_equal(out[1], 6);
    assert_int_equal(out[2], 7);
    assert_int_equal(out[3], 5);
    assert_int_equal(out[4], 7);
    assert_int_equal(cz_huff_decode(ok, sizeof ok, out, 3), 0);   /* 5 bits: still 1 byte */
    uint8_t *more = malloc(sizeof ok + 1);
    memcpy(more, ok, sizeof ok);
    more[sizeof ok] = 0;
    assert_int_equal(cz_huff_decode(more, sizeof ok + 1, out, 5), -1); /* byte left over */
    free(more);
    assert_int_equal(cz_huff_decode(ok, sizeof ok, out, 7), -1);  /* past the end */
    assert_int_equal(cz_huff_decode(ok, sizeof ok - 1, out, 5), -1);
    const struct {
        uint8_t b[16];
        size_t len, n;
    } bad[] = {
        {{3, 0, 0, 0, 5, 1, 0, 1, 0, 2, 0x5b}, 11, 5},   /* Kraft sum over 1 */
        {{3, 0, 0, 0, 5, 1, 0, 2, 0, 3, 0x5b}, 11, 5},   /* under 1 */
        {{3, 0, 0, 0, 5, 0, 0, 1, 0, 1, 0x5b}, 11, 5},   /* length 0 */
        {{2, 0, 0, 0, 5, 1, 0, 25, 0x5b}, 9, 5},          /* length 25 */
        {{2, 0, 0, 0, 0xff, 0xff, 3, 1, 0, 1, 0}, 11, 1}, /* symbol past 65535 */
        {{2, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f, 1, 0, 1, 0}, 12, 1}, /* varint too long */
        {{1, 0, 1, 0, 5}, 5, 1},                          /* nsym > 65536 */
        {{0, 0, 0, 0}, 4, 1},                             /* no symbols for n = 1 */
        {{1, 0, 0, 0, 5}, 5, 0},                          /* symbols for n = 0 */
        {{1, 0, 0, 0, 5, 0}, 6, 3},                       /* lone symbol, stray byte */
        {{3, 0, 0, 0, 5, 1}, 6, 2},                       /* table truncated */
        {{3, 0, 0}, 3, 2},                                /* header truncated */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t *q = copy_exact(bad[i].b, bad[i].len);
        if (cz_huff_decode(q, bad[i].len, out, bad[i].n) != -1)
            fail_msg("bad table %zu accepted", i);
        free(q);
    }

    /* A real stream: every truncation fails, flips never crash. */
    size_t n = 5000, len;
    uint16_t *s = malloc(n * sizeof *s), *o = malloc(n * sizeof *o);
    for (size_t i = 0; i < n; i++)
        s[i] = (uint16_t)(rnd() % 7 == 0 ? rnd() : 1000 + rnd() % 5);
    uint8_t *p = huff_round_trip(s, n, &len);
    for (size_t l = 0; l < len; l++) {
        uint8_t *q = copy_exact(p, l);
        assert_int_equal(cz_huff_decode(q, l, o, n), -1);
        free(q);
    }
    for (int k = 0; k < 5000; k++) {
        size_t i = rnd() % len;
        uint8_t m = (uint8_t)(1 + rnd() % 255);
        p[i] ^= m;
        (void)cz_huff_decode(p, len, o, n);
        p[i] ^= m;
    }
    free(p);
    free(s);
    free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_edges_of_bound),
        cmocka_unit_test(test_ratio),
        cmocka_unit_test(test_frame),
        cmocka_unit_test(test_bad_shapes),
        cmocka_unit_test(test_damage),
        cmocka_unit_test(test_huff_shapes),
        cmocka_unit_test(test_huff_damage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
