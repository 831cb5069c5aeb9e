/*
 * test_compress.c - the codecs and frames of src/compress (codec.c,
 * codec_lz.c, codec_float.c):
 *
 *   - every codec x every type it takes x 1, 3, 7, 1001, 65537 and ~1 MiB
 *     of elements x zeros, smooth, random and (float/double) special values
 *     (NaNs with payloads, signalling NaNs, +-Inf, -0.0, denormals, max/min)
 *     round-tripped bit-exact through encode / parse / decode, each frame in
 *     a buffer of exactly its size so the sanitizers see any over-read;
 *   - the shuffle's odd tail, every level, fpzip under a non-default
 *     floating-point environment, threads sharing the codecs;
 *   - damage: every payload byte flipped (decode fails, or yields exactly
 *     the original bytes), raw_len changed, stored_len past the buffer,
 *     reserved fields, bad codec/type/lengths, checksum mismatch;
 *   - the registry: names, ids, the accepts() matrix.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fenv.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "compress/compress.h"

static const int all_codecs[] = {CZ_ZLIB, CZ_ZSTD, CZ_LZ4, CZ_SHUF_ZSTD, CZ_SHUF_LZ4, CZ_FPZIP};
#define NCODECS (sizeof all_codecs / sizeof all_codecs[0])
enum kind { ZEROS, SMOOTH, RANDOM, SPECIAL, NKINDS };

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    assert_non_null(p);
    return p;
}

static const uint32_t special32[] = {
    0x7fc00000, 0x7f800001, 0x7fa00123, 0xffc00001, 0x7f800000, 0xff800000, 0x80000000, 0,
    1,          0x007fffff, 0x807fffff, 0x7f7fffff, 0xff7fffff, 0x00800000, 0x7fbfffff, 0x3f800000};
static const uint64_t special64[] = {
    0x7ff8000000000000ull, 0x7ff0000000000001ull, 0x7ff4000000000123ull, 0xfff8000000000001ull,
    0x7ff0000000000000ull, 0xfff0000000000000ull, 0x8000000000000000ull, 0,
    1,                     0x000fffffffffffffull, 0x800fffffffffffffull, 0x7fefffffffffffffull,
    0xffefffffffffffffull, 0x0010000000000000ull, 0x7ff7ffffffffffffull, 0x3ff0000000000000ull};

/* COUNT elements of TYPE and KIND at P (SPECIAL: special values mixed into a
 * smooth signal for float/double, random for the others). */
static void fill(uint8_t type, int kind, uint8_t *p, size_t count, uint64_t seed)
{
    size_t es = cairn_type_size((cairn_type)type);
    bool fp = type == CAIRN_FLOAT || type == CAIRN_DOUBLE;
    uint64_t s = seed | 1;
    for (size_t i = 0; i < count; i++) {
        uint8_t *e = p + i * es;
        uint64_t r = rnd(&s);
        if (kind == ZEROS) {
            memset(e, 0, es);
        } else if (kind == RANDOM || (kind == SPECIAL && !fp)) {
            memcpy(e, &r, es);
        } else if (kind == SPECIAL && r % 3 != 0) {
            memcpy(e, es == 4 ? (const void *)&special32[(r >> 8) % 16]
                              : (const void *)&special64[(r >> 8) % 16], es);
        } else {
            double x = 1000.0 * sin((double)i * 0.001) + (double)i * 0.25;
            float f = (float)x;
            int64_t v = (int64_t)x;
            /* little-endian: the low bytes of V for the narrower integers */
            memcpy(e, type == CAIRN_FLOAT ? (const void *)&f : fp ? (const void *)&x : &v, es);
        }
    }
}

/* Encode SRC[0..N-1] with codec ID, then parse and decode a private copy of
 * exactly the frame's size; the result must be bit-exact. Returns the codec
 * the frame was stored with. */
static int round_trip(int id, uint8_t type, int level, const uint8_t *src, size_t n)
{
    uint8_t *frame = xmalloc(cz_frame_bound(n)), *scratch = xmalloc(n);
    size_t size = cz_frame_encode(id, type, level, src, n, frame, scratch);
    assert_true(size > CZ_FRAME_HDR && size <= CZ_FRAME_HDR + n);
    uint8_t *exact = xmalloc(size), *out = xmalloc(n);
    memcpy(exact, frame, size);
    cz_frame f;
    size_t used = 0;
    cn_err err = {0};
    assert_int_equal(cz_frame_parse(exact, size, id, &f, &used, &err), 0);
    assert_int_equal(used, size);
    assert_true(f.codec == CZ_RAW || f.codec == id);
    assert_int_equal(f.raw_len, n);
    assert_int_equal(f.type, type);
    if (cz_frame_decode(&f, out, scratch, &err) != 0)
        fail_msg("%s type %u n %zu: %s", cz_codec_name(id), type, n, err.msg);
    if (memcmp(out, src, n) != 0)
        fail_msg("%s type %u n %zu: decoded bytes differ", cz_codec_name(id), type, n);
    int codec = f.codec;
    free(frame), free(scratch), free(exact), free(out);
    return codec;
}

static void test_round_trip_all(void **state)
{
    static const size_t counts[] = {1, 3, 7, 1001, 65537, 0 /* ~1 MiB */};
    for (size_t c = 0; c < NCODECS; c++) {
        for (uint8_t type = CAIRN_BYTE; type <= CAIRN_DOUBLE; type++) {
            if (!cz_codec_accepts(all_codecs[c], type))
                continue;
            size_t es = cairn_type_size((cairn_type)type);
            for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
                size_t count = counts[k] ? counts[k] : (1u << 20) / es + 1;
                uint8_t *buf = xmalloc(count * es);
                for (int kind = 0; kind < NKINDS; kind++) {
                    fill(type, kind, buf, count, 77 + count + (size_t)kind);
                    int got = round_trip(all_codecs[c], type, 1, buf, count * es);
                    /* Big enough runs of zeros always shrink. */
                    if (kind == ZEROS && count >= 1001)
                        assert_int_equal(got, all_codecs[c]);
                    /* fpzip must handle the special values itself. */
                    if (kind == SPECIAL && all_codecs[c] == CZ_FPZIP && count >= 65537)
                        assert_int_equal(got, CZ_FPZIP);
                }
                free(buf);
            }
        }
    }
}

/* Levels out of range are clamped; the shuffle keeps an odd tail. */
static void test_levels_and_tail(void **state)
{
    size_t n = 40000;
    uint8_t *buf = xmalloc(n + 8), *enc = xmalloc(cz_frame_bound(n + 8));
    uint8_t *scratch = xmalloc(n + 8), *out = xmalloc(n + 8);
    fill(CAIRN_DOUBLE, SMOOTH, buf, n / 8, 5);
    static const int levels[] = {-5, 0, 1, 3, 9, 19, 22, 1000};
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
        for (size_t c = 0; c < NCODECS; c++)
            round_trip(all_codecs[c], CAIRN_DOUBLE, levels[i], buf, n);
    /* Codec level: sizes that are not a whole number of elements. */
    for (int id = CZ_SHUF_ZSTD; id <= CZ_SHUF_LZ4; id++) {
        const cz_codec *c = cz_codec_get(id);
        for (size_t extra = 1; extra < 8; extra++) {
            memset(buf + n, 0xa5 ^ (int)extra, extra);
            size_t len = c->encode(CAIRN_DOUBLE, 1, buf, n + extra, enc, c->bound(n + extra),
                                   scratch);
            assert_true(len > 0);
            assert_int_equal(c->decode(CAIRN_DOUBLE, enc, len, out, n + extra, scratch), 0);
            assert_memory_equal(out, buf, n + extra);
        }
    }
    free(buf), free(enc), free(scratch), free(out);
}

/* Set (ODD) or clear a non-default FP environment: rounding up and, on
 * x86-64, flush-to-zero + denormals-are-zero (what -ffast-math sets). */
static void fp_env(bool odd)
{
    assert_int_equal(fesetround(odd ? FE_UPWARD : FE_TONEAREST), 0);
#if defined(__x86_64__)
    unsigned csr = __builtin_ia32_stmxcsr();
    __builtin_ia32_ldmxcsr(odd ? csr | 0x8040u : csr & ~0x8040u);
#endif
}

/* fpzip predicts with FP arithmetic: data encoded by a process with an odd
 * FP environment must decode in a normal one, and the other way round (an
 * FTZ/DAZ encoder otherwise makes nearly every value of this data decode
 * wrong elsewhere). The caller's environment is left as it was. */
static void test_fpzip_fp_env(void **state)
{
    size_t count = 20000, n = count * 8;
    double *d = xmalloc(n), *out = xmalloc(n);
    uint8_t *frame = xmalloc(cz_frame_bound(n)), *scratch = xmalloc(n);
    for (size_t i = 0; i < count; i++)
        d[i] = (i % 3 ? 1e-310 : 3.0) * (double)(i + 1) / 7.0; /* denormals and normals */
    for (int odd_encoder = 0; odd_encoder < 2; odd_encoder++) {
        fp_env(odd_encoder);
        size_t size = cz_frame_encode(CZ_FPZIP, CAIRN_DOUBLE, 0, (uint8_t *)d, n, frame, scratch);
        assert_int_equal(fegetround(), odd_encoder ? FE_UPWARD : FE_TONEAREST);
#if defined(__x86_64__)
        assert_int_equal(__builtin_ia32_stmxcsr() & 0x8040u, odd_encoder ? 0x8040u : 0);
#endif
        fp_env(!odd_encoder);
        cz_frame f;
        size_t used;
        cn_err err = {0};
        assert_int_equal(cz_frame_parse(frame, size, CZ_FPZIP, &f, &used, &err), 0);
        assert_int_equal(f.codec, CZ_FPZIP);
        if (cz_frame_decode(&f, (uint8_t *)out, scratch, &err) != 0)
            fail_msg("encoder env %d: %s", odd_encoder, err.msg);
        assert_int_equal(memcmp(out, d, n), 0);
    }
    fp_env(false);
    free(d), free(out), free(frame), free(scratch);
}

static void *thread_main(void *arg)
{
    uintptr_t t = (uintptr_t)arg;
    size_t count = 30000 + t;
    uint8_t *buf = malloc(count * 8);
    for (int rep = 0; buf && rep < 3; rep++) {
        fill(CAIRN_DOUBLE, (int)(t + rep) % NKINDS, buf, count, t * 100 + (uint64_t)rep);
        for (size_t c = 0; c < NCODECS; c++)
            round_trip(all_codecs[c], CAIRN_DOUBLE, 1, buf, count * 8);
    }
    free(buf);
    return NULL;
}

static void test_threads(void **state)
{
    pthread_t th[4];
    for (uintptr_t t = 0; t < 4; t++)
        assert_int_equal(pthread_create(&th[t], NULL, thread_main, (void *)t), 0);
    for (int t = 0; t < 4; t++)
        pthread_join(th[t], NULL);
}

/* ---- edges and damage ---------------------------------------------------- */

/* A frame of COUNT doubles of KIND with codec ID (malloc'd, *SIZE bytes);
 * the raw data in *RAW (malloc'd). SMOOTH here is a staircase that every
 * codec shrinks. */
static uint8_t *make_frame(int id, size_t count, int kind, size_t *size, uint8_t **raw)
{
    size_t n = count * 8;
    *raw = xmalloc(n);
    fill(CAIRN_DOUBLE, kind, *raw, count, 99);
    for (size_t i = 0; kind == SMOOTH && i < count; i++) {
        double v = (double)(i / 8) * 0.5 + (double)(i % 3);
        memcpy(*raw + i * 8, &v, 8);
    }
    uint8_t *frame = xmalloc(cz_frame_bound(n)), *scratch = xmalloc(n);
    *size = cz_frame_encode(id, CAIRN_DOUBLE, 3, *raw, n, frame, scratch);
    free(scratch);
    return frame;
}

/* Parse a private copy of exactly LEN bytes; returns the code. */
static int parse_copy(const uint8_t *p, size_t len, int want, cz_frame *f, cn_err *err)
{
    uint8_t *copy = xmalloc(len);
    memcpy(copy, p, len);
    size_t used = 0;
    int rc = cz_frame_parse(copy, len, want, f, &used, err);
    free(copy);
    f->payload = NULL; /* the copy is gone */
    return rc;
}

static void expect_parse_fail(const uint8_t *p, size_t len, int want, const char *what)
{
    cz_frame f;
    cn_err err = {0};
    assert_int_equal(parse_copy(p, len, want, &f, &err), CAIRN_ECORRUPT);
    if (!strstr(err.msg, what))
        fail_msg("message '%s' lacks '%s'", err.msg, what);
}

/* Decode the frame at P (parsed with WANT); returns the code, and on success
 * checks the bytes against RAW. */
static int decode_frame(const uint8_t *p, size_t len, int want, const uint8_t *raw, cn_err *err)
{
    cz_frame f;
    size_t used;
    if (cz_frame_parse(p, len, want, &f, &used, err) != 0)
        fail_msg("parse: %s", err->msg);
    uint8_t *out = xmalloc(f.raw_len), *scratch = xmalloc(f.raw_len);
    int rc = cz_frame_decode(&f, out, scratch, err);
    if (rc == 0)
        assert_memory_equal(out, raw, f.raw_len);
    free(out), free(scratch);
    return rc;
}

static void test_encode_edges(void **state)
{
    uint8_t src[64] = {0}, scratch[64], *dst = xmalloc(cz_frame_bound(64));
    assert_int_equal(cz_frame_encode(CZ_ZSTD, CAIRN_BYTE, 0, src, 0, dst, scratch), 0);
    assert_int_equal(cz_frame_encode(CZ_ZSTD, CAIRN_DOUBLE, 0, src, 7, dst, scratch), 0);
    assert_int_equal(cz_frame_encode(CZ_ZSTD, 11, 0, src, 8, dst, scratch), 0);
    assert_int_equal(cz_frame_encode(CZ_ZSTD, CAIRN_BYTE, 0, src, CZ_MAX_BUF + 1, dst, scratch),
                     0);
    /* Not a codec, or not one for this type: stored raw. */
    static const int raw_ids[] = {CZ_RAW, CZ_AUTO, 99, -1, CZ_FPZIP};
    for (size_t i = 0; i < sizeof raw_ids / sizeof raw_ids[0]; i++) {
        assert_int_equal(cz_frame_encode(raw_ids[i], CAIRN_INT32, 0, src, 64, dst, scratch),
                         CZ_FRAME_HDR + 64);
        assert_int_equal(dst[0], CZ_RAW);
    }
    /* Incompressible: raw; two frames back to back parse in turn. */
    size_t size, size2;
    uint8_t *raw, *raw2;
    uint8_t *a = make_frame(CZ_ZSTD, 4096, RANDOM, &size, &raw);
    uint8_t *b = make_frame(CZ_ZSTD, 512, ZEROS, &size2, &raw2);
    assert_int_equal(size, CZ_FRAME_HDR + 4096 * 8);
    assert_int_equal(a[0], CZ_RAW);
    assert_true(size2 < 512 * 8 / 10);
    uint8_t *both = xmalloc(size + size2);
    memcpy(both, a, size);
    memcpy(both + size, b, size2);
    cz_frame f;
    size_t used;
    cn_err err = {0};
    assert_int_equal(cz_frame_parse(both, size + size2, CZ_ZSTD, &f, &used, &err), 0);
    assert_int_equal(used, size);
    assert_int_equal(cz_frame_parse(both + used, size2, CZ_ZSTD, &f, &used, &err), 0);
    assert_int_equal(f.codec, CZ_ZSTD);
    assert_int_equal(used, size2);
    free(a), free(b), free(raw), free(raw2), free(both), free(dst);
}

/* Every payload byte flipped: the decode fails, or (when the flipped bits
 * do not matter to the codec, e.g. deflate padding) gives the exact data. */
static void test_flip_payload(void **state)
{
    for (size_t c = 0; c < NCODECS; c++) {
        size_t size, fails = 0, benign = 0;
        uint8_t *raw, *frame = make_frame(all_codecs[c], 512, SMOOTH, &size, &raw);
        assert_int_equal(frame[0], all_codecs[c]);
        for (size_t i = CZ_FRAME_HDR; i < size; i++)
            for (int pass = 0; pass < 2; pass++) {
                uint8_t *copy = xmalloc(size);
                memcpy(copy, frame, size);
                copy[i] ^= pass ? 0xff : (uint8_t)(1u << (i % 8));
                cn_err err = {0};
                if (decode_frame(copy, size, all_codecs[c], raw, &err) != 0) {
                    assert_int_equal(err.code, CAIRN_ECORRUPT);
                    fails++;
                } else {
                    benign++;
                }
                free(copy);
            }
        print_message("%-12s %zu-byte payload: %zu flips fail, %zu decode to the same data\n",
                      cz_codec_name(all_codecs[c]), size - CZ_FRAME_HDR, fails, benign);
        assert_true(fails >= 9 * (fails + benign) / 10);
        if (all_codecs[c] == CZ_FPZIP)
            assert_int_equal(benign, 0);
        free(frame), free(raw);
    }
    /* A raw frame: only the checksum can tell. */
    uint8_t src[32], scratch[32], *frame = xmalloc(cz_frame_bound(32));
    for (int i = 0; i < 32; i++)
        src[i] = (uint8_t)(i * 37);
    size_t size = cz_frame_encode(CZ_ZSTD, CAIRN_BYTE, 0, src, 32, frame, scratch);
    frame[CZ_FRAME_HDR + 5] ^= 4;
    cn_err err = {0};
    assert_int_equal(decode_frame(frame, size, CZ_ZSTD, src, &err), CAIRN_ECORRUPT);
    assert_non_null(strstr(err.msg, "frame decodes to data that fails its checksum"));
    free(frame);
}

static void test_bad_headers(void **state)
{
    size_t size;
    uint8_t *raw, *frame = make_frame(CZ_ZSTD, 512, SMOOTH, &size, &raw);
    uint8_t *p = xmalloc(size);
    cz_frame f;
    cn_err err = {0};
    assert_int_equal(frame[0], CZ_ZSTD);
    assert_int_equal(parse_copy(frame, size, CZ_ZSTD, &f, &err), 0);
#define EDIT(stmt, want, what)                                                                    \
    do {                                                                                          \
        memcpy(p, frame, size);                                                                   \
        stmt;                                                                                     \
        expect_parse_fail(p, size, want, what);                                                   \
    } while (0)
    for (size_t len = 0; len < CZ_FRAME_HDR; len++)
        expect_parse_fail(frame, len, CZ_ZSTD, "truncated");
    expect_parse_fail(frame, size - 1, CZ_ZSTD, "runs past");
    static const int reserved[] = {2, 3, 12, 13, 14, 15};
    for (size_t i = 0; i < 6; i++)
        EDIT(p[reserved[i]] = 1, CZ_ZSTD, "reserved");
    EDIT(p[1] = 11, CZ_ZSTD, "element type");
    EDIT(p[1] = 255, CZ_ZSTD, "element type");
    EDIT((void)0, CZ_ZLIB, "where zlib was expected");
    EDIT(p[0] = CZ_NCODECS, CZ_NCODECS, "codec 9");
    EDIT(p[0] = CZ_AUTO, CZ_AUTO, "codec 255");
    EDIT(p[0] = CZ_FPZIP; p[1] = CAIRN_INT64, CZ_FPZIP, "does not take element type");
    EDIT(cn_put_u32(p + 4, 0), CZ_ZSTD, "raw length 0");
    EDIT(cn_put_u32(p + 4, CZ_MAX_BUF + 8), CZ_ZSTD, "raw length");
    EDIT(cn_put_u32(p + 4, 4100), CZ_ZSTD, "8-byte elements");
    EDIT(cn_put_u32(p + 8, 4096), CZ_ZSTD, "compressed frame stores 4096");
    EDIT(cn_put_u32(p + 8, 0), CZ_ZSTD, "compressed frame stores 0");
    EDIT(cn_put_u32(p + 8, (uint32_t)(size - CZ_FRAME_HDR + 1)), CZ_ZSTD, "runs past");
    EDIT(cn_put_u32(p + 8, 0xffffffffu); cn_put_u32(p + 4, 0xfffffff8u), CZ_ZSTD, "raw length");
    EDIT(p[0] = CZ_RAW, CZ_ZSTD, "raw frame stores");
    /* Checksum: parses, fails after decoding. */
    memcpy(p, frame, size);
    p[20] ^= 1;
    assert_int_equal(decode_frame(p, size, CZ_ZSTD, raw, &err), CAIRN_ECORRUPT);
    assert_non_null(strstr(err.msg, "fails its checksum"));
    /* A frame the caller made up is checked too. */
    cz_frame bad = {.codec = CZ_RAW, .raw_len = 0, .payload = frame};
    assert_int_equal(cz_frame_decode(&bad, p, p, &err), CAIRN_ECORRUPT);
    bad = (cz_frame){.codec = CZ_NCODECS, .raw_len = 16, .stored_len = 8, .payload = frame};
    assert_int_equal(cz_frame_decode(&bad, p, p, &err), CAIRN_ECORRUPT);
#undef EDIT
    free(frame), free(raw), free(p);
}

/* raw_len edited to another whole number of elements: the codec must not
 * produce it. */
static void test_wrong_size(void **state)
{
    for (size_t c = 0; c < NCODECS; c++) {
        size_t size;
        uint8_t *raw, *frame = make_frame(all_codecs[c], 512, SMOOTH, &size, &raw);
        assert_int_equal(frame[0], all_codecs[c]);
        uint32_t stored = cn_get_u32(frame + 8);
        const uint32_t lens[] = {8192, 4096 + 8, 4096 - 8, (stored + 8) & ~7u};
        for (size_t i = 0; i < 4; i++) {
            if (lens[i] <= stored)
                continue;
            cn_put_u32(frame + 4, lens[i]);
            cn_err err = {0};
            assert_int_equal(decode_frame(frame, size, all_codecs[c], raw, &err),
                             CAIRN_ECORRUPT);
            if (!strstr(err.msg, "does not decode to the"))
                fail_msg("%s raw_len %u: '%s'", cz_codec_name(all_codecs[c]), lens[i], err.msg);
        }
        free(frame), free(raw);
    }
}

static void test_registry(void **state)
{
    for (int id = CZ_RAW; id < CZ_NCODECS; id++) {
        const char *name = cz_codec_name(id);
        assert_int_equal(cz_codec_parse(name), id);
        assert_non_null(strstr(cz_codec_list(), name));
        const cz_codec *c = cz_codec_get(id);
        if (id == CZ_RAW) {
            assert_null(c);
            continue;
        }
        assert_non_null(c);
        assert_int_equal(c->id, id);
        assert_string_equal(c->name, name);
        assert_true(c->bound(1000) >= 1000);
    }
    assert_int_equal(cz_codec_parse("auto"), CZ_AUTO);
    /* compress.codec's words (config.c) name the lossless codecs in id order, then auto */
    for (int id = CZ_RAW; id < CN_CODEC_AUTO; id++)
        assert_int_equal(cz_codec_parse(cn_codec_words[id]), id);
    assert_string_equal(cn_codec_words[CN_CODEC_AUTO], "auto");
    assert_string_equal(cz_codec_name(CZ_AUTO), "auto");
    assert_string_equal(cz_codec_name(CZ_NCODECS), "?");
    assert_string_equal(cz_codec_name(-1), "?");
    assert_null(cz_codec_get(CZ_NCODECS));
    assert_null(cz_codec_get(-1));
    static const char *bad[] = {"", "ZSTD", "zstd ", "shuffle", "raw", "gzip", "lz4hc"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(cz_codec_parse(bad[i]), -1);
    assert_int_equal(cz_codec_parse(NULL), -1);

    for (int id = CZ_RAW; id <= CZ_NCODECS; id++)
        for (int type = 0; type <= 12; type++) {
            bool real = type <= CAIRN_DOUBLE;
            bool fp = type == CAIRN_FLOAT || type == CAIRN_DOUBLE;
            bool want = id == CZ_NCODECS                       ? false
                        : id == CZ_FPZIP || cz_is_lossy(id) ? fp
                                                            : real;
            assert_int_equal(cz_codec_accepts(id, (uint8_t)type), want);
        }
    assert_true(cz_codec_accepts(CZ_AUTO, CAIRN_INT32));
    assert_false(cz_codec_accepts(CZ_AUTO, 11));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_round_trip_all),
        cmocka_unit_test(test_levels_and_tail),
        cmocka_unit_test(test_fpzip_fp_env),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_encode_edges),
        cmocka_unit_test(test_flip_payload),
        cmocka_unit_test(test_bad_headers),
        cmocka_unit_test(test_wrong_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
