/*
 * damage.c - test_agg's damaged files: every byte flipped and every
 * truncation refused by cz_agg_open, and frames altered then resealed
 * (checksums recomputed) that open but fail cz_agg_read. Owned by test_agg
 * (tests/unit/test_agg.c).
 */
#include "agg.h"
#include "levels/pfs/pfs.h"

/* ---- damage ------------------------------------------------------------------ */

/* A small file of SCHEME: 6 ranks, a few variables of several types. */
buf small_file(int scheme, set *s)
{
    uint64_t seed = 42;
    s->n = 0;
    for (uint32_t r = 0; r < 6; r++) {
        uint64_t d[2] = {16, 12 + r};
        add(s, r, "temp", CN_KIND_VAR, CAIRN_DOUBLE, 2, d, d[0] * d[1], &seed);
        uint64_t n = 50 + 10 * r;
        add(s, r, "ids", CN_KIND_VAR, CAIRN_INT32, 1, &n, n, &seed);
        if (r != 2)
            add(s, r, "mass", CN_KIND_VAR, CAIRN_FLOAT, 1, &n, n, &seed);
        if (r == 4)
            add(s, r, "restart.dat", CN_KIND_FILE, CAIRN_BYTE, 0, NULL, 333, &seed);
    }
    cz_agg_opts o = {.scheme = scheme, .block = 256};
    cz_agg_stats st;
    return round_trip(s, &o, &st);
}

static void expect_corrupt(const uint8_t *p, size_t len, const char *what, size_t at)
{
    cz_agg_file *f = NULL;
    cn_err err = {0};
    int rc = cz_agg_open(p, len, &f, &err);
    if (rc == 0)
        fail_msg("%s at %zu: cz_agg_open accepted the file", what, at);
    assert_null(f);
    assert_int_equal(rc, CAIRN_ECORRUPT);
    assert_int_equal(err.code, CAIRN_ECORRUPT);
    assert_true(strlen(err.msg) > 10);
}

void test_flips_and_truncation(void **state)
{
    (void)state;
    set *s = malloc(sizeof *s);
    assert_non_null(s);
    for (int sc = CZ_AGG_AGNOSTIC; sc <= CZ_AGG_AWARE_BLOCK; sc++) {
        buf b = small_file(sc, s);
        uint8_t *copy = malloc(b.len + 1);
        assert_non_null(copy);
        /* every byte, two different bits */
        for (size_t i = 0; i < b.len; i++) {
            for (int bit = 0; bit < 8; bit += 5) {
                memcpy(copy, b.p, b.len);
                copy[i] ^= (uint8_t)(1u << bit);
                expect_corrupt(copy, b.len, "flip", i);
            }
        }
        /* every truncation, and one byte too many */
        for (size_t len = 0; len < b.len; len++) {
            uint8_t *t = malloc(len ? len : 1); /* exact size: ASan sees over-reads */
            memcpy(t, b.p, len);
            expect_corrupt(t, len, "truncation", len);
            free(t);
        }
        memcpy(copy, b.p, b.len);
        copy[b.len] = 0;
        expect_corrupt(copy, b.len + 1, "extension", b.len);
        print_message("# %s: %zu bytes, every flip and truncation refused\n",
                      cz_agg_scheme_name(sc), b.len);
        free(copy);
        free(b.p);
        set_free(s);
    }
    free(s);
}

/* A raw file (compress.codec = none, version 4: its groups AGG_HDRSUM, each
 * frame's payload covered by its header's checksum alone): whole, the
 * index's checksum (cz_agg_sum) is the writer's, and a plain file's is the
 * XXH3-64 of its bytes; every byte flipped, either cz_agg_sum fails or its
 * checksum differs, and cz_agg_open refuses the file. */
void test_raw_index_sum(void **state)
{
    (void)state;
    set *s = malloc(sizeof *s);
    assert_non_null(s);
    buf plain = small_file(CZ_AGG_AWARE, s);
    uint64_t sum = 0;
    cn_err err = {0};
    assert_int_equal(cz_agg_sum(plain.p, plain.len, &sum, &err), 0);
    assert_true(sum == cn_hash(plain.p, plain.len));
    free(plain.p);
    for (int sc = CZ_AGG_AGNOSTIC; sc <= CZ_AGG_AWARE_BLOCK; sc++) {
        for (int raw = 0; raw < 2; raw++) { /* every group raw; raw by the time model */
            cz_agg_opts o = {.scheme = sc, .block = 256, .raw = raw, .bps = raw ? 0 : 1e12};
            cz_agg_stats st;
            buf b = round_trip(s, &o, &st);
            assert_int_equal(cn_get_u32(b.p + 8), 4);
            assert_int_equal(cz_agg_sum(b.p, b.len, &sum, &err), 0);
            assert_true(sum == st.sum);
            assert_true(sum != cn_hash(b.p, b.len)); /* the payloads are left out */
            uint8_t *copy = malloc(b.len);
            assert_non_null(copy);
            for (size_t i = 0; i < b.len; i++) {
                memcpy(copy, b.p, b.len);
                copy[i] ^= 0x10;
                uint64_t got = 0;
                if (cz_agg_sum(copy, b.len, &got, &err) == 0 && got == st.sum)
                    fail_msg("%s: a flip at %zu keeps the index's checksum",
                             cz_agg_scheme_name(sc), i);
                expect_corrupt(copy, b.len, "flip", i);
            }
            print_message("# %s%s: %zu bytes, every flip changes the index's checksum\n",
                          cz_agg_scheme_name(sc), raw ? ", all raw" : ", raw by the model", b.len);
            free(copy);
            free(b.p);
        }
    }
    set_free(s);
    free(s);
}

/* Recompute every checksum of the file at P (layout in agg.c). */
static void reseal(uint8_t *p, size_t len)
{
    uint8_t *t = p + len - 64;
    uint64_t data = cn_get_u64(t + 24), tsize = cn_get_u64(t + 32);
    uint32_t ngroups = cn_get_u32(p + 24);
    uint8_t *table = p + 64 + data, *g = table;
    uint64_t off = 64;
    for (uint32_t i = 0; i < ngroups; i++, g += 48) {
        uint64_t stored = cn_get_u64(g + 16);
        cn_put_u64(g + 32, cn_hash(p + off, stored));
        off += stored;
    }
    cn_put_u64(t + 40, cn_hash(table, tsize));
    cn_put_u64(t + 56, cn_hash(t, 56));
}

int count_cb(void *arg, const cz_agg_var *v)
{
    (void)v;
    ++*(int *)arg;
    return 0;
}

void test_resealed_damage(void **state)
{
    (void)state;
    set *s = malloc(sizeof *s);
    assert_non_null(s);
    for (int sc = CZ_AGG_AGNOSTIC; sc <= CZ_AGG_AWARE_BLOCK; sc++) {
        buf b = small_file(sc, s);
        uint8_t *copy = malloc(b.len);
        int read_fail = 0, open_fail = 0, harmless = 0;
        /* every payload byte of the first group's first frame (after its header) */
        uint32_t frame_stored = cn_get_u32(b.p + 64 + 8);
        for (uint32_t i = 0; i < frame_stored; i++) {
            memcpy(copy, b.p, b.len);
            copy[64 + CZ_FRAME_HDR + i] ^= 0x10;
            reseal(copy, b.len);
            cz_agg_file *f = NULL;
            cn_err err = {0};
            if (cz_agg_open(copy, b.len, &f, &err) != 0) {
                assert_int_equal(err.code, CAIRN_ECORRUPT);
                open_fail++;
                continue;
            }
            /* Either an error, or (a bit the codec ignores) every byte right. */
            check c = {.s = s, .f = f, .seen = calloc(s->n + 1, 1)};
            int rc = cz_agg_read(f, check_cb, &c, &err);
            free(c.seen);
            if (rc == 0) {
                assert_int_equal(c.calls, s->n);
                harmless++;
                cz_agg_close(f);
                continue;
            }
            assert_int_equal(rc, CAIRN_ECORRUPT);
            assert_true(strlen(err.msg) > 10);
            read_fail++;
            cz_agg_close(f);
        }
        assert_true(read_fail > 0);
        /* a resealed table whose sizes disagree: a variable one element longer */
        memcpy(copy, b.p, b.len);
        size_t vrec = b.len - 64 - cn_get_u64(b.p + b.len - 64 + 32) +
                      48 * (size_t)cn_get_u32(b.p + 24);
        cn_put_u64(copy + vrec + 40, cn_get_u64(copy + vrec + 40) + 1);
        reseal(copy, b.len);
        expect_corrupt(copy, b.len, "count + 1", vrec);
        print_message("# %s: %d altered payloads refused by read, %d by open, %d decoded "
                      "right (bits the codec ignores)\n",
                      cz_agg_scheme_name(sc), read_fail, open_fail, harmless);
        free(copy);
        free(b.p);
        set_free(s);
    }
    free(s);
}
