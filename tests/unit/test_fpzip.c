/*
 * test_fpzip.c - fpzip given a variable's shape (src/compress codec_float.c,
 * pipe.c):
 *
 *   - a 2-D float field stored through the write pipeline with its shape
 *     takes fewer bytes than as a plain array, and both read back bit for
 *     bit: EGM96's geoid (proj-data, 721 x 1440, when installed: the ratio
 *     is printed) and a smooth synthetic field of the same shape;
 *   - every frame of a shaped variable holds whole rows (rows wider than a
 *     buffer: cut flat), for 2-D and 3-D arrays of floats and doubles, at
 *     buffer sizes from 4 KiB to 1 MiB and 0-2 threads, all bit-exact;
 *   - a shaped variable is never packed with small ones (which still are);
 *   - a shape that does not hold the variable's bytes is refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compress/compress.h"

#define EGM96 "/usr/share/proj/egm96_15.gtx"

typedef struct out {
    uint8_t *buf;
    size_t len, cap;
    uint64_t at[8];
    int64_t last;
} out;

static int sink(void *arg, uint32_t item, const void *buf, size_t len, cn_err *err)
{
    (void)err;
    out *o = arg;
    if ((int64_t)item != o->last)
        o->at[item] = o->len;
    o->last = item;
    if (o->len + len > o->cap) {
        o->cap = 2 * (o->len + len);
        o->buf = realloc(o->buf, o->cap);
        assert_non_null(o->buf);
    }
    memcpy(o->buf + o->len, buf, len);
    o->len += len;
    return 0;
}

/*
 * Write items IT[0..N-1] (compressed ones not packed: one stream each) with
 * BUF and THREADS, read every one back and compare; returns the bytes stored
 * for item 0.
 */
static uint64_t round_trip(cz_item *it, uint32_t n, uint32_t buf, int threads)
{
    out o = {.last = -1};
    cz_opts opt = {.buf_size = buf, .threads = threads, .level = 0};
    cn_err err = {0};
    if (cz_write(it, n, &opt, sink, &o, NULL, &err) != 0)
        fail_msg("cz_write: %s", err.msg);
    for (uint32_t i = 0; i < n; i++) {
        uint8_t *back = malloc(it[i].size);
        assert_non_null(back);
        if (it[i].codec == CZ_RAW) {
            memcpy(back, o.buf + o.at[i], it[i].size);
        } else {
            assert_false(it[i].packed);
            cz_dest d = {back, it[i].size};
            cz_stream s = {.stored = o.buf + o.at[i], .stored_size = it[i].stored,
                           .codec = it[i].codec, .type = it[i].type,
                           .frame_raw = it[i].frame_raw, .dest = &d, .ndest = 1, .name = "v"};
            if (cz_read(&s, 1, threads, &err) != 0)
                fail_msg("cz_read: %s", err.msg);
        }
        assert_memory_equal(back, it[i].ptr, it[i].size);
        free(back);
    }
    free(o.buf);
    return it[0].stored;
}

/* Stored bytes of the float array P (ROWS x COLS) with and without its shape. */
static void compare(const char *what, const float *p, uint64_t rows, uint64_t cols)
{
    size_t size = rows * cols * sizeof *p;
    cz_shape sh = {.type = CAIRN_FLOAT, .ndims = 2, .dims = {rows, cols}};
    cz_item flat = {.ptr = p, .size = size, .type = CAIRN_FLOAT, .codec = CZ_FPZIP};
    cz_item shaped = flat;
    shaped.shape = &sh;
    uint64_t s1 = round_trip(&flat, 1, 1 << 20, 2), s2 = round_trip(&shaped, 1, 1 << 20, 2);
    print_message("%s (%llu x %llu float): fpzip 1-D %.3fx, 2-D %.3fx\n", what,
                  (unsigned long long)rows, (unsigned long long)cols, (double)size / (double)s1,
                  (double)size / (double)s2);
    assert_true(s2 < s1);
}

static void test_shape_ratio(void **state)
{
    (void)state;
    enum { R = 721, C = 1440 };
    float *f = malloc(sizeof *f * R * C);
    assert_non_null(f);
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++)
            f[i * C + j] =
                (float)(40.0 * sin(i * 0.021) * cos(j * 0.013) + 5.0 * sin((i + j) * 0.07));
    compare("synthetic", f, R, C);
    FILE *g = fopen(EGM96, "rb");
    if (g) { /* 40-byte header, then big-endian float32 rows */
        uint8_t *b = (uint8_t *)f;
        assert_int_equal(fseek(g, 40, SEEK_SET), 0);
        assert_int_equal(fread(b, 4, (size_t)R * C, g), (size_t)R * C);
        fclose(g);
        for (size_t i = 0; i < (size_t)R * C; i++) {
            uint32_t u = (uint32_t)b[4 * i] << 24 | (uint32_t)b[4 * i + 1] << 16 |
                         (uint32_t)b[4 * i + 2] << 8 | b[4 * i + 3];
            memcpy(&f[i], &u, 4);
        }
        compare("EGM96", f, R, C);
    } else {
        print_message("%s not found (proj-data): only the synthetic field\n", EGM96);
    }
    free(f);
}

static void test_shape_edges(void **state)
{
    (void)state;
    static const uint32_t bufs[] = {4096, 5000, 64 << 10, 1 << 20};
    enum { A = 7, B = 33, C = 50 };
    double *d = malloc(sizeof *d * A * B * C);
    float *f = malloc(sizeof *f * 300 * 1500);
    assert_true(d && f);
    for (int i = 0; i < A * B * C; i++)
        d[i] = sin(i * 0.01) * 100.0;
    for (int i = 0; i < 300 * 1500; i++) /* rows of 6000 bytes: wider than 4 KiB */
        f[i] = (float)cos(i * 0.003);
    cz_shape s3 = {.type = CAIRN_DOUBLE, .ndims = 3, .dims = {A, B, C}};
    cz_shape s2 = {.type = CAIRN_FLOAT, .ndims = 2, .dims = {300, 1500}};
    for (size_t b = 0; b < sizeof bufs / sizeof bufs[0]; b++)
        for (int t = 0; t <= 2; t++) {
            cz_item it[2] = {
                {.ptr = d, .size = sizeof *d * A * B * C, .type = CAIRN_DOUBLE,
                 .codec = CZ_FPZIP, .shape = &s3},
                {.ptr = f, .size = sizeof *f * 300 * 1500, .type = CAIRN_FLOAT,
                 .codec = CZ_FPZIP, .shape = &s2},
            };
            round_trip(it, 2, bufs[b], t);
        }
    /* small: the shaped one alone, the two plain ones packed together */
    float small[6 * 10], a[17], c[19];
    for (int i = 0; i < 60; i++)
        small[i] = (float)i * 0.5f;
    for (int i = 0; i < 17; i++)
        a[i] = (float)i, c[i] = (float)-i;
    cz_shape ss = {.type = CAIRN_FLOAT, .ndims = 2, .dims = {6, 10}};
    cz_item it[3] = {
        {.ptr = a, .size = sizeof a, .type = CAIRN_FLOAT, .codec = CZ_FPZIP},
        {.ptr = small, .size = sizeof small, .type = CAIRN_FLOAT, .codec = CZ_FPZIP,
         .shape = &ss},
        {.ptr = c, .size = sizeof c, .type = CAIRN_FLOAT, .codec = CZ_FPZIP},
    };
    out o = {.last = -1};
    cz_opts opt = {.buf_size = 1 << 20, .threads = 1};
    cn_err err = {0};
    assert_int_equal(cz_write(it, 3, &opt, sink, &o, NULL, &err), 0);
    assert_false(it[1].packed);
    assert_false(it[2].packed); /* a is followed by the shaped one: no run to pack */
    free(o.buf);
    cz_item pair[2] = {it[0], it[2]};
    o = (out){.last = -1};
    assert_int_equal(cz_write(pair, 2, &opt, sink, &o, NULL, &err), 0);
    assert_true(pair[1].packed);
    free(o.buf);
    /* a shape that does not hold the bytes */
    cz_shape bad = {.type = CAIRN_FLOAT, .ndims = 2, .dims = {6, 11}};
    it[1].shape = &bad;
    o = (out){.last = -1};
    assert_int_equal(cz_write(&it[1], 1, &opt, sink, &o, NULL, &err), CAIRN_EINVAL);
    assert_non_null(strstr(err.msg, "shape"));
    assert_int_equal(o.len, 0);
    free(o.buf);
    free(d);
    free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shape_ratio),
        cmocka_unit_test(test_shape_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
