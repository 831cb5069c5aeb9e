/*
 * test_codes_rc.c - the entropy coders of quantization codes, the range
 * coder of payload version 2 (src/compress/codes_rc.c) and the rANS coder
 * of version 3 (codes_ans.c), and the predictive payload versions around
 * them (predict.c). For each coder:
 *
 *   - round trips: n = 0 and 1, all zero residuals, every code 0..65535,
 *     exceptions, the extremes 1 and 65535, skewed random residuals, runs;
 *     in one run of rows of width 1, of 1000, and in several runs (several
 *     levels); runs that do not add up to n, or of width 0, -> 0 / -1;
 *     the output is exactly what the encoder wrote and the decoder reads it
 *     all: one byte less, one more or a changed length -> -1;
 *   - a CAP too small: 0 (never a write past CAP);
 *   - a long run of zero residuals costs under 1/2000 of a bit each (2^20 of them);
 *   - random damage never crashes and gives 0 or -1;
 * and the payloads: version 3 (what cairn writes) decodes to the encoder's
 * reconstruction; version 1 (Huffman codes, the bound at every
 * interpolation level) and version 2 (range-coded) payloads, built as cairn
 * wrote them, still decode to what their encoder reconstructed, within the
 * bound (version 2 exactly as version 3); a coder flag outside its version,
 * zstd'd and coded at once, versions 0 and 4 -> -1.
 * Buffers have exactly their size, so the sanitizers see any overrun.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compress/compress.h"
#include "compress/predict_impl.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint8_t *copy_exact(const uint8_t *p, size_t n)
{
    uint8_t *q = malloc(n ? n : 1);
    assert_non_null(q);
    if (n)
        memcpy(q, p, n);
    return q;
}

/* The coder under test: the range coder (payload version 2) or rANS (3). */
typedef struct coder {
    size_t (*enc)(const uint16_t *, size_t, const cz_rows *, size_t, uint8_t *, size_t);
    int (*dec)(const uint8_t *, size_t, uint16_t *, size_t, const cz_rows *, size_t);
} coder;
static const coder coders[2] = {{cz_rc_encode, cz_rc_decode}, {cz_ans_encode, cz_ans_decode}};
static const coder *cur = &coders[0];

static cz_rows rows_of[3];
static size_t nrows_of;

/* Rows for N codes: one run of WIDTH, or (WIDTH 0) three runs of widths 1,
 * 7 and 64. */
static void set_rows(size_t n, uint64_t width)
{
    if (width) {
        rows_of[0] = (cz_rows){n, width, 0};
        nrows_of = 1;
        return;
    }
    rows_of[0] = (cz_rows){n / 3, 1, 0};
    rows_of[1] = (cz_rows){n / 3, 7, 1};
    rows_of[2] = (cz_rows){n - 2 * (n / 3), 64, 2};
    nrows_of = 3;
}

/* Encode SYM[0..N) in the rows of set_rows and decode it back; returns the
 * stream length and checks the decode, plus the length checks around it. */
static size_t round_trip(const uint16_t *sym, size_t n)
{
    size_t cap = 16 * n + 64;
    uint8_t *buf = malloc(cap);
    assert_non_null(buf);
    size_t len = cur->enc(sym, n, rows_of, nrows_of, buf, cap);
    assert_true(len > 0);
    uint8_t *s = copy_exact(buf, len);
    uint16_t *out = malloc((n ? n : 1) * sizeof *out);
    assert_non_null(out);
    assert_int_equal(cur->dec(s, len, out, n, rows_of, nrows_of), 0);
    if (n)
        assert_memory_equal(out, sym, n * sizeof *sym);
    if (n > 1) { /* runs that do not add up, a width of 0 */
        assert_int_equal(cur->dec(s, len, out, n - 1, rows_of, nrows_of), -1);
        assert_int_equal(cur->enc(sym, n - 1, rows_of, nrows_of, buf, cap), 0);
        cz_rows one = {n, 0, 0};
        assert_int_equal(cur->dec(s, len, out, n, &one, 1), -1);
        one = (cz_rows){n - 1, 1, 0};
        assert_int_equal(cur->dec(s, len, out, n, &one, 1), -1);
    }
    /* one byte short, one byte more: the decoder must notice */
    uint8_t *shorter = copy_exact(buf, len - 1);
    assert_int_equal(cur->dec(shorter, len - 1, out, n, rows_of, nrows_of), -1);
    uint8_t *longer = malloc(len + 1);
    assert_non_null(longer);
    memcpy(longer, buf, len);
    longer[len] = 0;
    assert_int_equal(cur->dec(longer, len + 1, out, n, rows_of, nrows_of), -1);
    /* too small a CAP: 0, and nothing written past it */
    if (len > 1) {
        uint8_t *small = malloc(len - 1);
        assert_non_null(small);
        assert_int_equal(cur->enc(sym, n, rows_of, nrows_of, small, len - 1), 0);
        free(small);
    }
    free(shorter);
    free(longer);
    free(out);
    free(s);
    free(buf);
    return len;
}

static void test_round_trips(void **state)
{
    cur = *state;
    uint16_t one = PZ_RADIUS;
    set_rows(0, 1);
    round_trip(&one, 0);
    set_rows(1, 1);
    round_trip(&one, 1);
    one = 0;
    round_trip(&one, 1);

    size_t n = 65536;
    uint16_t *s = malloc(n * sizeof *s);
    assert_non_null(s);
    static const uint64_t widths[] = {1, 1000, 0};
    for (int w = 0; w < 3; w++) {
        set_rows(n, widths[w]);
        for (size_t i = 0; i < n; i++)
            s[i] = (uint16_t)i; /* every code, the exception and both extremes */
        round_trip(s, n);
        for (size_t i = 0; i < n; i++)
            s[i] = i % 2 ? 1 : 65535;
        round_trip(s, n);
    }

    for (size_t i = 0; i < n; i++) { /* skewed residuals, a few exceptions, runs */
        uint64_t r = rnd();
        int q = r % 4 ? 0 : (int)((r >> 8) % 7) - 3;
        if (r % 1000 == 1)
            q = (int)((r >> 20) % 60000) - 30000;
        s[i] = r % 997 == 3 ? 0 : (uint16_t)(q + PZ_RADIUS);
        if ((i / 4096) % 3 == 1)
            s[i] = PZ_RADIUS;
    }
    round_trip(s, n);
    free(s);
}

/* A long run of zero residuals is nearly free. */
static void test_zero_run(void **state)
{
    cur = *state;
    size_t n = 1 << 20;
    uint16_t *s = malloc(n * sizeof *s);
    assert_non_null(s);
    for (size_t i = 0; i < n; i++)
        s[i] = PZ_RADIUS;
    set_rows(n, 1024);
    size_t len = round_trip(s, n);
    print_message("2^20 zero residuals: %zu bytes\n", len);
    assert_true(len * 8 < n / 2000);
    free(s);
}

static void test_damage(void **state)
{
    cur = *state;
    size_t n = 5000;
    uint16_t *s = malloc(n * sizeof *s), *out = malloc(n * sizeof *out);
    assert_non_null(s);
    assert_non_null(out);
    for (size_t i = 0; i < n; i++)
        s[i] = (uint16_t)(PZ_RADIUS + (int)(rnd() % 9) - 4);
    uint8_t buf[4 * 5000 + 64];
    cz_rows rows = {n, 50, 0};
    size_t len = cur->enc(s, n, &rows, 1, buf, sizeof buf);
    assert_true(len > 0);
    uint8_t *p = copy_exact(buf, len);
    for (int k = 0; k < 5000; k++) {
        size_t i = rnd() % len;
        uint8_t m = (uint8_t)(1 + rnd() % 255);
        p[i] ^= m;
        int rc = cur->dec(p, len, out, n, &rows, 1);
        assert_true(rc == 0 || rc == -1);
        p[i] ^= m;
    }
    for (size_t cut = 0; cut < len; cut++) {
        uint8_t *q = copy_exact(p, cut);
        assert_int_equal(cur->dec(q, cut, out, n, &rows, 1), -1);
        free(q);
    }
    assert_int_equal(cur->dec(p, len, out, n, &rows, 1), 0);
    assert_memory_equal(out, s, n * sizeof *s);
    free(p);
    free(s);
    free(out);
}

/* ---- payload versions ----------------------------------------------------- */

/* A smooth 2-D float field, with one NaN (an exception). */
static float *field(size_t r, size_t c)
{
    float *x = malloc(r * c * sizeof *x);
    assert_non_null(x);
    for (size_t i = 0; i < r; i++)
        for (size_t j = 0; j < c; j++)
            x[i * c + j] = (float)(sin(0.05 * (double)i) * cos(0.07 * (double)j) * 10);
    x[r * c / 3] = NAN;
    return x;
}

/* A version 1 or 2 payload of X (R x C floats, interpolation), as cairn
 * wrote them before: version 1 with the bound at every level and the codes
 * Huffman-coded, version 2 with the per-level bounds and the codes
 * range-coded; *LEN its size, RECON what it decodes to. */
static uint8_t *old_payload(int version, const float *x, size_t r, size_t c, double bound,
                            size_t *len, float *recon)
{
    const size_t n = r * c, hdr = 56 + 16;
    pz_ctx pc = {.n0 = 1, .n1 = r, .n2 = c, .count = n, .es = 4, .fl = true, .bound = bound,
                 .step = pz_step_of(bound), .src = (const uint8_t *)x, .out = (uint8_t *)recon,
                 .level_bounds = version > 1};
    pz_fixes fixes = {0};
    pc.fixes = &fixes;
    pc.inv_step = 1 / pc.step;
    pc.codes = malloc(n * sizeof *pc.codes);
    pc.exc = malloc(n * 4);
    assert_non_null(pc.codes);
    assert_non_null(pc.exc);
    assert_int_equal(pz_interp(&pc, true), 0);
    pz_fixup(&pc, true);
    size_t hcap = cz_huff_bound(n);
    uint8_t *sec = malloc(hcap);
    assert_non_null(sec);
    cz_rows rows[PZ_MAX_ROWS];
    size_t nrows = pz_interp_rows(&pc, rows);
    size_t hl = version == 1 ? cz_huff_encode(pc.codes, n, sec, hcap)
                             : cz_rc_encode(pc.codes, n, rows, nrows, sec, hcap);
    assert_true(hl > 0);
    *len = hdr + hl + pc.nexc * 4;
    uint8_t *p = calloc(1, *len);
    assert_non_null(p);
    uint64_t bbits;
    memcpy(&bbits, &bound, 8);
    p[0] = 'P', p[1] = (uint8_t)version, p[2] = CAIRN_FLOAT, p[3] = 2, p[4] = PZ_INTERP;
    p[5] = version == 1 ? 0 : 4;
    cn_put_u64(p + 8, bbits);
    cn_put_u32(p + 16, PZ_RADIUS);
    cn_put_u64(p + 24, r);
    cn_put_u64(p + 32, c);
    cn_put_u64(p + 40, pc.nexc);
    cn_put_u64(p + 48, hl);
    cn_put_u64(p + 56, hl);
    cn_put_u64(p + 64, pc.nexc * 4);
    memcpy(p + hdr, sec, hl);
    memcpy(p + hdr + hl, pc.exc, pc.nexc * 4);
    free(sec);
    free(pc.codes);
    free(pc.exc);
    return p;
}

/* Decode old payload P (LEN) of version V: to REC, every element of X within
 * BOUND (the NaN a NaN). */
static void check_old(const uint8_t *p, size_t len, const float *x, const float *rec, size_t n,
                      double bound)
{
    float *v = malloc(n * 4);
    assert_non_null(v);
    assert_int_equal(cz_predict_decode(CAIRN_FLOAT, p, len, v, n * 4), 0);
    assert_memory_equal(v, rec, n * 4);
    for (size_t i = 0; i < n; i++)
        assert_true(isnan(x[i]) ? isnan(v[i]) : fabs((double)x[i] - v[i]) <= bound);
    free(v);
}

static void test_versions(void **state)
{
    (void)state;
    const size_t r = 61, c = 87, n = r * c, raw = n * 4, hdr = 56 + 16;
    float *x = field(r, c);
    cz_shape sh = {.type = CAIRN_FLOAT, .ndims = 2, .dims = {r, c}, .bound = 1e-3};
    size_t cap = cz_predict_bound(raw);
    uint8_t *dst = malloc(cap), *rec = malloc(raw);
    assert_non_null(dst);
    assert_non_null(rec);
    double me;
    size_t len = cz_predict_encode(&sh, x, dst, cap, rec, &me);
    assert_true(len > hdr);
    assert_int_equal(dst[1], 3);       /* version 3 */
    assert_int_equal(dst[4], PZ_INTERP);
    assert_int_equal(dst[5] & 13, 8);  /* codes rANS-coded, not zstd'd */
    uint64_t nexc = cn_get_u64(dst + hdr - 32), hs = cn_get_u64(dst + hdr - 16),
             xs = cn_get_u64(dst + hdr - 8);
    assert_int_equal(nexc, 1);
    assert_int_equal(hdr + hs + xs, len);
    check_old(dst, len, x, (const float *)rec, n, sh.bound);

    /* versions 1 and 2 decode as they were coded; 2 codes like 3, but for the coder */
    size_t len1, len2;
    float *rec1 = malloc(raw), *rec2 = malloc(raw);
    assert_non_null(rec1);
    assert_non_null(rec2);
    uint8_t *p1 = old_payload(1, x, r, c, sh.bound, &len1, rec1);
    uint8_t *p2 = old_payload(2, x, r, c, sh.bound, &len2, rec2);
    check_old(p1, len1, x, rec1, n, sh.bound);
    check_old(p2, len2, x, rec2, n, sh.bound);
    assert_true(memcmp(rec1, rec, raw) != 0); /* the per-level bounds make a difference */
    assert_memory_equal(rec2, rec, raw);
    float *v = malloc(raw);
    assert_non_null(v);

    /* each coder flag in its own version only; zstd'd and coded at once is no flag set */
    p1[5] |= 4;
    assert_int_equal(cz_predict_decode(CAIRN_FLOAT, p1, len1, v, raw), -1);
    p2[5] = 8;
    assert_int_equal(cz_predict_decode(CAIRN_FLOAT, p2, len2, v, raw), -1);
    p2[5] = 5;
    assert_int_equal(cz_predict_decode(CAIRN_FLOAT, p2, len2, v, raw), -1);
    dst[5] = 4;
    assert_int_equal(cz_predict_decode(CAIRN_FLOAT, dst, len, v, raw), -1);
    dst[5] = 9;
    assert_int_equal(cz_predict_decode(CAIRN_FLOAT, dst, len, v, raw), -1);
    dst[5] = 8;
    dst[1] = 4;
    assert_int_equal(cz_predict_decode(CAIRN_FLOAT, dst, len, v, raw), -1);
    dst[1] = 0;
    assert_int_equal(cz_predict_decode(CAIRN_FLOAT, dst, len, v, raw), -1);

    free(p1);
    free(p2);
    free(v);
    free(rec1);
    free(rec2);
    free(dst);
    free(rec);
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(test_round_trips, (void *)&coders[0]),
        cmocka_unit_test_prestate(test_zero_run, (void *)&coders[0]),
        cmocka_unit_test_prestate(test_damage, (void *)&coders[0]),
        cmocka_unit_test_prestate(test_round_trips, (void *)&coders[1]),
        cmocka_unit_test_prestate(test_zero_run, (void *)&coders[1]),
        cmocka_unit_test_prestate(test_damage, (void *)&coders[1]),
        cmocka_unit_test(test_versions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
