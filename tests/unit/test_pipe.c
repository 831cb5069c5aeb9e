/*
 * test_pipe.c - the compression pipelines (src/compress/pipe*.c, choose.c):
 *
 *   - cz_write then cz_read, bit-exact, for many variables of every type and
 *     awkward size (empty, 1 element, odd, larger than a buffer), codecs
 *     mixed and raw, at buffer sizes 1K..1M and 0..4 threads; the sink sees
 *     each item's bytes in order and never a packed item;
 *   - small variables of one codec are aggregated into one frame (packed),
 *     and scattered back to each destination, NULL destinations skipped;
 *   - the read side refuses a stream whose frames do not add up, a frame of
 *     the wrong codec or a truncated frame before touching any destination,
 *     and a frame whose payload was altered (checksum) with an error;
 *   - a sink error stops the pipeline and is returned;
 *   - a lossy 2-D variable is cut into slabs of whole rows of up to 8 MiB,
 *     whatever the buffer (one frame for a small one, two for 9.6 MB), and
 *     comes back within its bound;
 *   - items gathered from spans (the changed blocks of an incremental
 *     checkpoint) come back scattered to the same places, for every codec,
 *     raw and lossy (flat) included, as packs too, at several buffer sizes;
 *     lossy ones within their bound also where only the codec's corrections
 *     keep them there (noise near 1e18 within 1e-6, max_error checked too);
 *     spans that do not add up to the size are refused;
 *   - cz_choose stores random bytes raw and compresses zeros.
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

typedef struct out {
    uint8_t *buf;          /* every item's stored stream, item after item */
    size_t len, cap;
    uint64_t at[64];       /* where each item's stream starts */
    int64_t last;          /* last item seen */
    int calls_for_packed;
    int fail_after;        /* fail the Nth call (0 = never) */
    int calls;
} out;

static int sink(void *arg, uint32_t item, const void *buf, size_t len, cn_err *err)
{
    out *o = arg;
    if (o->fail_after && ++o->calls >= o->fail_after)
        return cn_fail(err, CAIRN_ENOSPC, "sink full");
    assert_true((int64_t)item >= o->last); /* in order, never interleaved */
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

static uint64_t mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    return x;
}

/* Half smooth (compressible), half noise, as a variable of TYPE. */
static void fill(uint8_t *p, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = i < n / 2 ? (uint8_t)(i / 64 + seed) : (uint8_t)mix(i * 31 + (uint64_t)seed);
}

typedef struct spec {
    uint8_t type, codec;
    size_t count;
} spec;

static const spec SPECS[] = {
    {CAIRN_DOUBLE, CZ_SHUF_ZSTD, 40000}, {CAIRN_FLOAT, CZ_FPZIP, 1},
    {CAIRN_INT32, CZ_ZSTD, 7},           {CAIRN_UINT8, CZ_ZSTD, 1001},
    {CAIRN_INT64, CZ_ZSTD, 3},           {CAIRN_UINT16, CZ_LZ4, 0},
    {CAIRN_INT16, CZ_ZSTD, 5},           {CAIRN_DOUBLE, CZ_FPZIP, 333},
    {CAIRN_DOUBLE, CZ_FPZIP, 12},        {CAIRN_BYTE, CZ_RAW, 70001},
    {CAIRN_UINT64, CZ_ZLIB, 9999},       {CAIRN_INT8, CZ_SHUF_LZ4, 65537},
    {CAIRN_FLOAT, CZ_SHUF_LZ4, 3},       {CAIRN_FLOAT, CZ_SHUF_LZ4, 4},
};
#define NSPECS (sizeof SPECS / sizeof SPECS[0])

/* Write SPECS with buffer BUF and THREADS, read back, compare. */
static void round_trip(uint32_t buf, int threads, int read_threads)
{
    cz_item it[NSPECS];
    uint8_t *src[NSPECS], *dst[NSPECS];
    for (size_t i = 0; i < NSPECS; i++) {
        size_t n = SPECS[i].count * cairn_type_size(SPECS[i].type);
        src[i] = malloc(n + 1);
        dst[i] = calloc(1, n + 1);
        fill(src[i], n, (int)i);
        it[i] = (cz_item){.ptr = src[i], .size = n, .type = SPECS[i].type,
                          .codec = SPECS[i].codec};
    }
    out o = {.last = -1};
    cz_opts opt = {.buf_size = buf, .threads = threads, .level = 0};
    cz_stats st;
    cn_err err = {0};
    int wrc = cz_write(it, NSPECS, &opt, sink, &o, &st, &err);
    if (wrc != 0)
        fail_msg("cz_write: %s", err.msg);
    assert_int_equal(st.stored, o.len);

    cz_stream s[NSPECS];
    cz_dest d[NSPECS];
    uint32_t ns = 0;
    size_t packs = 0;
    for (size_t i = 0; i < NSPECS; i++) {
        d[i] = (cz_dest){dst[i], it[i].size};
        if (it[i].codec == CZ_RAW) {
            assert_false(it[i].packed);
            if (it[i].size)
                memcpy(dst[i], o.buf + o.at[i], it[i].size);
            continue;
        }
        if (it[i].packed) {
            assert_int_equal(it[i].stored, 0);
            s[ns - 1].ndest++;
            packs++;
            continue;
        }
        s[ns++] = (cz_stream){.stored = o.buf + o.at[i], .stored_size = it[i].stored,
                              .codec = it[i].codec, .type = it[i].type,
                              .frame_raw = it[i].frame_raw, .dest = &d[i], .ndest = 1,
                              .name = "v"};
    }
    if (buf >= 64 << 10)
        assert_true(packs >= 2); /* int32/uint8/int64 (zstd) share a buffer */
    assert_int_equal(cz_read(s, ns, read_threads, &err), 0);
    for (size_t i = 0; i < NSPECS; i++) {
        assert_memory_equal(src[i], dst[i], it[i].size);
        free(src[i]);
        free(dst[i]);
    }
    free(o.buf);
}

static void test_round_trips(void **state)
{
    (void)state;
    static const uint32_t bufs[] = {1024, 4096, 64 << 10, 1 << 20};
    for (size_t b = 0; b < 4; b++)
        for (int t = 0; t <= 4; t++)
            round_trip(bufs[b], t, t % 3);
    round_trip(1030, 2, 2); /* not a multiple of 8: rounded down */
}

/* One zstd variable of 3 frames; returns its stream in *O. */
static void three_frames(uint8_t *data, size_t n, out *o, cz_item *it)
{
    fill(data, n, 9);
    *it = (cz_item){.ptr = data, .size = n, .type = CAIRN_UINT8, .codec = CZ_ZSTD};
    *o = (out){.last = -1};
    cz_opts opt = {.buf_size = 4096, .threads = 1};
    cn_err err = {0};
    assert_int_equal(cz_write(it, 1, &opt, sink, o, NULL, &err), 0);
}

static void test_read_refuses(void **state)
{
    (void)state;
    enum { N = 3 * 4096 - 100 };
    uint8_t data[N], dst[N];
    out o;
    cz_item it;
    three_frames(data, N, &o, &it);
    cz_dest d = {dst, N};
    cz_stream s = {.stored = o.buf, .stored_size = it.stored, .codec = CZ_ZSTD,
                   .type = CAIRN_UINT8, .frame_raw = N, .dest = &d, .ndest = 1, .name = "v"};
    cn_err err = {0};
    memset(dst, 0xee, N);
    cz_stream bad = s;
    bad.frame_raw = N + 1; /* destinations do not add up */
    assert_int_equal(cz_read(&bad, 1, 1, &err), CAIRN_ECORRUPT);
    bad = s;
    bad.stored_size -= 1; /* last frame truncated */
    assert_int_equal(cz_read(&bad, 1, 1, &err), CAIRN_ECORRUPT);
    bad = s;
    bad.codec = CZ_LZ4; /* frames of another codec */
    assert_int_equal(cz_read(&bad, 1, 1, &err), CAIRN_ECORRUPT);
    bad = s;
    bad.type = CAIRN_INT32; /* frames of another type */
    assert_int_equal(cz_read(&bad, 1, 1, &err), CAIRN_ECORRUPT);
    for (size_t i = 0; i < N; i++) /* refused before any destination was written */
        assert_int_equal(dst[i], 0xee);
    o.buf[o.len - 5] ^= 0x40; /* payload damage: decodes badly or fails its checksum */
    assert_int_equal(cz_read(&s, 1, 2, &err), CAIRN_ECORRUPT);
    o.buf[o.len - 5] ^= 0x40;
    assert_int_equal(cz_read(&s, 1, 2, &err), 0);
    assert_memory_equal(dst, data, N);
    free(o.buf);
}

static void test_sink_error_stops(void **state)
{
    (void)state;
    enum { N = 1 << 20 };
    uint8_t *data = malloc(N);
    fill(data, N, 3);
    cz_item it = {.ptr = data, .size = N, .type = CAIRN_UINT8, .codec = CZ_LZ4};
    for (int t = 0; t <= 3; t++) {
        out o = {.last = -1, .fail_after = 5};
        cz_opts opt = {.buf_size = 4096, .threads = t};
        cn_err err = {0};
        assert_int_equal(cz_write(&it, 1, &opt, sink, &o, NULL, &err), CAIRN_ENOSPC);
        assert_non_null(strstr(err.msg, "sink full"));
        free(o.buf);
    }
    cz_opts bad = {.buf_size = 100, .threads = 1};
    cn_err err = {0};
    assert_int_equal(cz_write(&it, 1, &bad, sink, NULL, NULL, &err), CAIRN_EINVAL);
    it.codec = CZ_FPZIP; /* not for bytes */
    bad.buf_size = 4096;
    assert_int_equal(cz_write(&it, 1, &bad, sink, NULL, NULL, &err), CAIRN_EINVAL);
    free(data);
}

/* A lossy 2-D variable of R x C doubles through a 4 KiB buffer: slabs of
 * whole rows of up to 8 MiB (the pipeline's LOSSY_PIECE), not one buffer,
 * so FRAMES frames whose first holds FIRST_ROWS rows; every element back
 * within the bound. */
static void lossy_slabs(int R, int C, int frames, int first_rows)
{
    double *x = malloc(sizeof(double) * R * C), *y = malloc(sizeof(double) * R * C);
    assert_non_null(x);
    assert_non_null(y);
    for (int i = 0; i < R * C; i++)
        x[i] = 10.0 + (double)(i / C) * 0.01 + (double)(i % C) * 0.001;
    cz_shape sh = {.type = CAIRN_DOUBLE, .ndims = 2, .dims = {(uint64_t)R, (uint64_t)C},
                   .bound = 1e-3};
    for (int codec = CZ_WAVELET; codec <= CZ_PREDICT; codec++) {
        cz_item it = {.ptr = x, .size = sizeof(double) * R * C, .type = CAIRN_DOUBLE,
                      .codec = (uint8_t)codec, .shape = &sh};
        out o = {.last = -1};
        cz_opts opt = {.buf_size = 4096, .threads = 2};
        cn_err err = {0};
        assert_int_equal(cz_write(&it, 1, &opt, sink, &o, NULL, &err), 0);
        assert_true(it.max_error <= sh.bound);
        int nf = 0;
        for (size_t at = 0, used; at < o.len; at += used, nf++) {
            cz_frame f;
            assert_int_equal(cz_frame_parse(o.buf + at, o.len - at, codec, &f, &used, &err), 0);
            if (nf == 0)
                assert_int_equal(f.raw_len, (size_t)first_rows * C * sizeof(double));
        }
        assert_int_equal(nf, frames);
        cz_dest d = {y, it.size};
        cz_stream st = {.stored = o.buf, .stored_size = it.stored, .codec = (uint8_t)codec,
                        .type = CAIRN_DOUBLE, .frame_raw = it.frame_raw, .dest = &d,
                        .ndest = 1, .name = "v"};
        assert_int_equal(cz_read(&st, 1, 2, &err), 0);
        for (int i = 0; i < R * C; i++)
            assert_true(fabs(x[i] - y[i]) <= sh.bound);
        free(o.buf);
    }
    free(x);
    free(y);
}

static void test_lossy_rows(void **state)
{
    (void)state;
    lossy_slabs(50, 300, 1, 50);        /* 120 KB: one slab, not 30 buffers */
    lossy_slabs(1200, 1000, 2, 1048);   /* 9.6 MB: 1048 rows (8.38 MB) and 152 */
}

/* Spans of 1 KiB blocks of a double array, as an incremental checkpoint cuts
 * it: runs of changed blocks, the last block short. HARD: noise near 1e18
 * within 1e-6, which only the lossy codec's own corrections (or a raw frame)
 * keep within the bound; else a smooth field within 1e-4. */
static void span_round_trip(uint8_t codec, uint32_t buf, int threads, bool hard)
{
    enum { N = 9000 }; /* doubles: 72000 bytes, 71 blocks of 1 KiB (the last 320 B) */
    static const uint32_t runs[][2] = {{0, 1}, {3, 4}, {20, 1}, {22, 30}, {70, 1}};
    double *x = malloc(sizeof(double) * N), *y = calloc(N, sizeof(double));
    for (int i = 0; i < N; i++)
        x[i] = hard ? (double)mix((uint64_t)i) / 3.0
                    : 100.0 + sin(i * 1e-2) * 5 + (double)(i % 17) * 1e-3;
    cz_span sp[5];
    cz_dest d[5];
    uint64_t total = 0;
    for (int r = 0; r < 5; r++) {
        uint64_t lo = (uint64_t)runs[r][0] * 1024, hi = lo + (uint64_t)runs[r][1] * 1024;
        hi = hi < sizeof(double) * N ? hi : sizeof(double) * N;
        sp[r] = (cz_span){(uint8_t *)x + lo, hi - lo};
        d[r] = (cz_dest){(uint8_t *)y + lo, hi - lo};
        total += hi - lo;
    }
    /* the small item before it may be packed with it (same codec, if small) */
    uint8_t small[300];
    fill(small, sizeof small, 3);
    cz_span small_sp[2] = {{small, 100}, {small + 200, 100}};
    uint8_t small_back[300] = {0};
    cz_shape flat = {.type = CAIRN_DOUBLE, .ndims = 1, .dims = {total / 8},
                     .bound = hard ? 1e-6 : 1e-4};
    bool lossy = cz_is_lossy(codec);
    cz_item it[2] = {
        {.size = 200, .span = small_sp, .nspan = 2, .type = CAIRN_BYTE,
         .codec = lossy || codec == CZ_FPZIP ? CZ_ZSTD : codec},
        {.size = total, .span = sp, .nspan = 5, .type = CAIRN_DOUBLE, .codec = codec,
         .shape = lossy ? &flat : NULL},
    };
    out o = {.last = -1};
    cz_opts opt = {.buf_size = buf, .threads = threads};
    cn_err err = {0};
    if (cz_write(it, 2, &opt, sink, &o, NULL, &err) != 0)
        fail_msg("cz_write (codec %u, buffer %u): %s", codec, buf, err.msg);
    if (lossy && !(it[1].max_error <= flat.bound))
        fail_msg("codec %u buffer %u: max error %g, bound %g", codec, buf, it[1].max_error,
                 flat.bound);
    cz_dest sd[7] = {{small_back, 100}, {small_back + 200, 100}};
    memcpy(&sd[2], d, sizeof d);
    cz_stream st[2];
    uint32_t ns = 0;
    for (int i = 0; i < 2; i++) {
        cz_dest *di = i == 0 ? sd : &sd[2];
        uint32_t nd = i == 0 ? 2 : 5;
        if (it[i].codec == CZ_RAW) { /* scatter the raw stream by hand */
            const uint8_t *p = o.buf + o.at[i];
            for (uint32_t k = 0; k < nd; p += di[k].len, k++)
                memcpy(di[k].ptr, p, di[k].len);
            continue;
        }
        if (it[i].packed) {
            st[ns - 1].ndest += nd;
            continue;
        }
        st[ns++] = (cz_stream){.stored = o.buf + o.at[i], .stored_size = it[i].stored,
                               .codec = it[i].codec, .type = it[i].type,
                               .frame_raw = it[i].frame_raw, .dest = di, .ndest = nd,
                               .name = "spans"};
    }
    if (cz_read(st, ns, threads, &err) != 0)
        fail_msg("cz_read (codec %u, buffer %u): %s", codec, buf, err.msg);
    assert_memory_equal(small_back, small, 100);
    assert_memory_equal(small_back + 200, small + 200, 100);
    for (int r = 0; r < 5; r++)
        for (uint64_t k = 0; k < d[r].len / 8; k++) {
            double a = ((double *)sp[r].ptr)[k], b = ((double *)d[r].ptr)[k];
            if (lossy ? fabs(a - b) > flat.bound : memcmp(&a, &b, 8) != 0)
                fail_msg("codec %u buffer %u: run %d element %llu: %g != %g", codec, buf, r,
                         (unsigned long long)k, a, b);
        }
    for (int i = 0; i < N; i++) { /* blocks outside the runs stay untouched */
        uint64_t blk = (uint64_t)i * 8 / 1024;
        bool in = false;
        for (int r = 0; r < 5; r++)
            in |= blk >= runs[r][0] && blk < runs[r][0] + runs[r][1];
        if (!in)
            assert_true(y[i] == 0.0);
    }
    free(o.buf), free(x), free(y);
}

static void test_spans(void **state)
{
    (void)state;
    static const uint8_t codecs[] = {CZ_RAW,      CZ_ZLIB,  CZ_ZSTD,    CZ_LZ4,    CZ_SHUF_ZSTD,
                                     CZ_SHUF_LZ4, CZ_FPZIP, CZ_WAVELET, CZ_PREDICT};
    static const uint32_t bufs[] = {1024, 3000, 64 << 10};
    for (size_t c = 0; c < sizeof codecs; c++)
        for (size_t b = 0; b < 3; b++)
            span_round_trip(codecs[c], bufs[b], (int)(b % 3), false);
    /* the gathered blocks are the lossy codec's source: its reconstruction
     * must not overwrite them before it measures the error */
    for (size_t b = 0; b < 3; b++) {
        span_round_trip(CZ_WAVELET, bufs[b], (int)(b % 3), true);
        span_round_trip(CZ_PREDICT, bufs[b], (int)(b % 3), true);
    }
    /* spans that do not add up to the size are refused */
    uint8_t x[64];
    cz_span sp = {x, 32};
    cz_item it = {.size = 64, .span = &sp, .nspan = 1, .type = CAIRN_BYTE, .codec = CZ_ZSTD};
    out o = {.last = -1};
    cz_opts opt = {.buf_size = 4096};
    cn_err err = {0};
    assert_int_equal(cz_write(&it, 1, &opt, sink, &o, NULL, &err), CAIRN_EINVAL);
    assert_non_null(strstr(err.msg, "spans hold 32 bytes"));
    free(o.buf);
}

static void test_choose(void **state)
{
    (void)state;
    enum { N = 4 << 20 };
    uint8_t *p = malloc(N);
    for (size_t i = 0; i < N; i++)
        p[i] = (uint8_t)mix(i);
    cz_env env = {.storage_bps = 2e9, .threads = 1, .level = 0, .buf_size = 1 << 20};
    double ratio = 0;
    assert_int_equal(cz_choose(p, N, CAIRN_UINT8, NULL, &env, &ratio), CZ_RAW);
    assert_true(ratio == 1.0);
    memset(p, 0, N);
    int id = cz_choose(p, N, CAIRN_UINT8, NULL, &env, &ratio);
    assert_int_not_equal(id, CZ_RAW);
    assert_true(ratio < 0.05);
    assert_int_equal(cz_choose(p, 0, CAIRN_UINT8, NULL, &env, NULL), CZ_RAW);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_read_refuses),
        cmocka_unit_test(test_sink_error_stops),
        cmocka_unit_test(test_lossy_rows),
        cmocka_unit_test(test_spans),
        cmocka_unit_test(test_choose),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
