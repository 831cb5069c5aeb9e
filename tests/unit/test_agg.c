/*
 * test_agg.c - N->M aggregation (src/compress/agg*.c):
 *
 *   - every scheme (and AUTO) round-trips 37 ranks whose variable sets and
 *     sizes differ (ranks lacking variables, empty variables, a routed file
 *     named like a variable, every cairn type, 1-3 dims, a variable larger
 *     than a chunk), bit for bit and with the same metadata, in table order;
 *   - block sizes: the default, an odd one (rounded down to 8), a tiny one;
 *   - every byte position flipped (header, data, table, trailer) and every
 *     truncation is refused by cz_agg_open with CAIRN_ECORRUPT and a message;
 *     a frame altered and the file resealed (checksums recomputed) passes
 *     open but fails cz_agg_read;
 *   - scheme names parse and print; bad ones are refused;
 *   - aware stores a similar-variables workload smaller than agnostic;
 *   - with a write bandwidth the time model picks: raw groups (version 2)
 *     and no AUTO sampling on a fast file system, compression on a slow one,
 *     the same bytes for the same input;
 *   - cz_agg_read_some delivers exactly the variables wanted, bit for bit;
 *   - variables with known block checksums (cz_agg_var.sums) round-trip in
 *     every scheme, blocks smaller and larger than a chunk; the checksums
 *     given are the frames' (one altered: the file opens, its read fails);
 *   - bad input (duplicate names, size against count), sink errors and a
 *     callback's stop are returned; an empty set is a valid file.
 * With CAIRN_AGG_CORPUS=DIR set, also writes seed files for fuzz_agg there.
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

/* ---- a memory sink -------------------------------------------------------- */

typedef struct buf {
    uint8_t *p;
    size_t len, cap;
    int fail_at;   /* fail the Nth call (0 = never) */
    int calls;
} buf;

static int sink(void *arg, const void *p, size_t len, cn_err *err)
{
    buf *b = arg;
    if (b->fail_at && ++b->calls >= b->fail_at)
        return cn_fail(err, CAIRN_ENOSPC, "sink full");
    if (b->len + len > b->cap) {
        b->cap = 2 * (b->len + len);
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
    memcpy(b->p + b->len, p, len);
    b->len += len;
    return 0;
}

/* ---- a workload ------------------------------------------------------------ */

typedef struct set {
    cz_agg_var v[1024];
    char names[1024][32];
    void *data[1024];
    size_t n;
} set;

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void add(set *s, uint32_t rank, const char *name, uint8_t kind, uint8_t type, int ndims,
                const uint64_t *dims, uint64_t count, uint64_t *seed)
{
    assert_true(s->n < 1024);
    cz_agg_var *v = &s->v[s->n];
    snprintf(s->names[s->n], sizeof s->names[0], "%s", name);
    size_t es = cairn_type_size((cairn_type)type);
    *v = (cz_agg_var){.rank = rank, .name = s->names[s->n], .kind = kind, .type = type,
                      .ndims = (uint8_t)ndims, .count = count, .size = count * es};
    for (int d = 0; d < ndims; d++)
        v->dims[d] = dims[d];
    uint8_t *p = malloc(v->size ? v->size : 1);
    assert_non_null(p);
    /* Smooth values with noise in the low bytes, typed so codecs see real numbers. */
    for (uint64_t i = 0; i < count; i++) {
        double x = sin(0.001 * (double)i + 0.1 * rank) * 1000.0 + (double)(rng(seed) % 7);
        switch (type) {
        case CAIRN_FLOAT: ((float *)p)[i] = (float)x; break;
        case CAIRN_DOUBLE: ((double *)p)[i] = x; break;
        default: {
            uint64_t u = (uint64_t)(int64_t)x ^ (i % 3 == 0 ? rng(seed) : 0);
            memcpy(p + i * es, &u, es);
        }
        }
    }
    v->data = p;
    s->data[s->n++] = p;
}

static void set_free(set *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->data[i]);
    s->n = 0;
}

/* 37 ranks, differing sets (see the file comment). */
static void big_set(set *s)
{
    uint64_t seed = 88172645463325252ull;
    s->n = 0;
    for (uint32_t r = 0; r < 37; r++) {
        if (r % 5 != 3) { /* every fifth rank lacks the field */
            uint64_t d[2] = {20 + r, 31 + (r % 4)};
            add(s, r, "field", CN_KIND_VAR, CAIRN_DOUBLE, 2, d, d[0] * d[1], &seed);
        }
        for (uint8_t t = CAIRN_BYTE; t <= CAIRN_DOUBLE; t++) {
            if ((r + t) % 7 == 0)
                continue; /* lacking */
            char name[16];
            snprintf(name, sizeof name, "t%u", t);
            int nd = 1 + (r + t) % 3;
            uint64_t d[3] = {3 + r % 4, 2 + t % 3, 5};
            if ((r * 11 + t) % 13 == 0)
                d[0] = 0; /* empty */
            uint64_t count = 1;
            for (int k = 0; k < nd; k++)
                count *= d[k];
            add(s, r, name, CN_KIND_VAR, t, nd, d, count, &seed);
        }
        uint64_t one = 1;
        add(s, r, "step", CN_KIND_VAR, CAIRN_INT64, 0, NULL, 1, &seed);
        (void)one;
        if (r % 3 == 0) /* a routed file, named like a variable */
            add(s, r, "field", CN_KIND_FILE, CAIRN_BYTE, 0, NULL, 100 + 37 * r, &seed);
        if (r % 9 == 4) /* an empty routed file */
            add(s, r, "out.log", CN_KIND_FILE, CAIRN_BYTE, 0, NULL, 0, &seed);
    }
    uint64_t d = (5u << 20) / 8 + 3; /* larger than a chunk */
    add(s, 17, "big", CN_KIND_VAR, CAIRN_DOUBLE, 1, &d, d, &seed);
}

/* ---- round trips ------------------------------------------------------------ */

typedef struct check {
    const set *s;
    const cz_agg_file *f;
    size_t calls;
    bool *seen;
    int stop_at;   /* return 7 on this call (0 = never) */
} check;

static size_t find(const set *s, const cz_agg_var *v)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].rank == v->rank && s->v[i].kind == v->kind && !strcmp(s->v[i].name, v->name))
            return i;
    fail_msg("variable '%s' of rank %u was never written", v->name, v->rank);
    return 0;
}

static void same_meta(const cz_agg_var *a, const cz_agg_var *b)
{
    assert_int_equal(a->rank, b->rank);
    assert_string_equal(a->name, b->name);
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->type, b->type);
    assert_int_equal(a->ndims, b->ndims);
    for (int d = 0; d < CAIRN_MAX_DIMS; d++)
        assert_int_equal(a->dims[d], b->dims[d]);
    assert_int_equal(a->count, b->count);
    assert_int_equal(a->size, b->size);
}

static int check_cb(void *arg, const cz_agg_var *v)
{
    check *c = arg;
    cz_agg_var info;
    assert_int_equal(cz_agg_info(c->f, c->calls, &info), 0); /* table order */
    assert_null(info.data);
    same_meta(&info, v);
    size_t i = find(c->s, v);
    assert_false(c->seen[i]);
    c->seen[i] = true;
    same_meta(&c->s->v[i], v);
    assert_non_null(v->data);
    if (v->size)
        assert_memory_equal(v->data, c->s->v[i].data, v->size);
    c->calls++;
    return c->stop_at && (int)c->calls == c->stop_at ? 7 : 0;
}

/* Write S with O, open, compare everything; returns the file (caller frees). */
static buf round_trip(const set *s, const cz_agg_opts *o, cz_agg_stats *st)
{
    buf b = {0};
    cn_err err = {0};
    int rc = cz_agg_write(s->v, s->n, o, sink, &b, st, &err);
    if (rc)
        fail_msg("cz_agg_write (%s): %s", cz_agg_scheme_name(o->scheme), err.msg);
    uint64_t raw = 0;
    for (size_t i = 0; i < s->n; i++)
        raw += s->v[i].size;
    assert_int_equal(st->raw, raw);
    assert_int_equal(st->stored, b.len);
    if (o->scheme != CZ_AGG_AUTO)
        assert_int_equal(st->scheme, o->scheme);
    assert_true(st->scheme >= CZ_AGG_AGNOSTIC && st->scheme <= CZ_AGG_AWARE_BLOCK);
    cz_agg_file *f = NULL;
    if (cz_agg_open(b.p, b.len, &f, &err) != 0)
        fail_msg("cz_agg_open (%s): %s", cz_agg_scheme_name(o->scheme), err.msg);
    assert_int_equal(cz_agg_count(f), s->n);
    assert_int_equal(cz_agg_scheme_of(f), st->scheme);
    cz_agg_var info;
    assert_int_equal(cz_agg_info(f, s->n, &info), CAIRN_EINVAL);
    check c = {.s = s, .f = f, .seen = calloc(s->n + 1, 1)};
    if (cz_agg_read(f, check_cb, &c, &err) != 0)
        fail_msg("cz_agg_read (%s): %s", cz_agg_scheme_name(o->scheme), err.msg);
    assert_int_equal(c.calls, s->n);
    for (size_t i = 0; i < s->n; i++)
        assert_true(c.seen[i]);
    free(c.seen);
    cz_agg_close(f);
    return b;
}

static void test_round_trips(void **state)
{
    (void)state;
    set *s = malloc(sizeof *s);
    assert_non_null(s);
    big_set(s);
    static const uint32_t blocks[] = {0, 1001, 8};
    for (int sc = CZ_AGG_AGNOSTIC; sc <= CZ_AGG_AUTO; sc++) {
        for (int k = 0; k < 3; k++) {
            cz_agg_opts o = {.scheme = sc, .block = blocks[k]};
            if (k && sc != CZ_AGG_AGNOSTIC_BLOCK && sc != CZ_AGG_AWARE_BLOCK)
                continue;
            if (k == 2 && sc == CZ_AGG_AGNOSTIC_BLOCK)
                continue; /* 8-byte rounds over 6 MiB: slow, adds nothing */
            cz_agg_stats st;
            buf b = round_trip(s, &o, &st);
            print_message("# %-14s block %4u: %zu variables, %llu -> %llu bytes, %u groups "
                          "(%u second pass)%s%s\n",
                          cz_agg_scheme_name(sc), blocks[k], s->n, (unsigned long long)st.raw,
                          (unsigned long long)st.stored, st.ngroups, st.npass2,
                          sc == CZ_AGG_AUTO ? ", picked " : "",
                          sc == CZ_AGG_AUTO ? cz_agg_scheme_name(st.scheme) : "");
            if (st.scheme == CZ_AGG_AWARE || st.scheme == CZ_AGG_AWARE_BLOCK)
                assert_int_equal(st.ngroups, 16); /* field, t0..t10, step, big, 2 files */
            else
                assert_int_equal(st.ngroups, 1);
            free(b.p);
        }
    }
    set_free(s);
    free(s);
}

/* ---- damage ------------------------------------------------------------------ */

/* A small file of SCHEME: 6 ranks, a few variables of several types. */
static buf small_file(int scheme, set *s)
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

static void test_flips_and_truncation(void **state)
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

static int count_cb(void *arg, const cz_agg_var *v)
{
    (void)v;
    ++*(int *)arg;
    return 0;
}

static void test_resealed_damage(void **state)
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

/* ---- names, the comparison, errors ------------------------------------------ */

static void test_names(void **state)
{
    (void)state;
    for (int sc = CZ_AGG_AGNOSTIC; sc <= CZ_AGG_AUTO; sc++)
        assert_int_equal(cz_agg_scheme_parse(cz_agg_scheme_name(sc)), sc);
    assert_string_equal(cz_agg_scheme_name(CZ_AGG_AWARE_BLOCK), "aware-block");
    assert_string_equal(cz_agg_scheme_name(CZ_AGG_AUTO), "auto");
    assert_string_equal(cz_agg_scheme_name(5), "?");
    assert_string_equal(cz_agg_scheme_name(-1), "?");
    assert_int_equal(cz_agg_scheme_parse("bogus"), -1);
    assert_int_equal(cz_agg_scheme_parse(""), -1);
    assert_int_equal(cz_agg_scheme_parse("Aware"), -1);
    assert_int_equal(cz_agg_scheme_parse("aware "), -1);
    assert_int_equal(cz_agg_scheme_parse(NULL), -1);
}

/* Ranks of one simulation: the same variables, similar values. */
static void similar_set(set *s, uint32_t nranks)
{
    uint64_t seed = 7;
    s->n = 0;
    for (uint32_t r = 0; r < nranks; r++) {
        uint64_t d[2] = {64, 64};
        add(s, r, "temperature", CN_KIND_VAR, CAIRN_DOUBLE, 2, d, 4096, &seed);
        add(s, r, "pressure", CN_KIND_VAR, CAIRN_FLOAT, 2, d, 4096, &seed);
        uint64_t n = 2000;
        add(s, r, "cell_id", CN_KIND_VAR, CAIRN_INT64, 1, &n, n, &seed);
        int64_t *id = (int64_t *)s->v[s->n - 1].data;
        for (uint64_t i = 0; i < n; i++)
            id[i] = (int64_t)(r * n + i);
        add(s, r, "material", CN_KIND_VAR, CAIRN_UINT8, 1, &n, n, &seed);
        uint8_t *m = (uint8_t *)s->v[s->n - 1].data;
        for (uint64_t i = 0; i < n; i++)
            m[i] = (uint8_t)(i / 300);
    }
}

static void test_aware_beats_agnostic(void **state)
{
    (void)state;
    set *s = malloc(sizeof *s);
    assert_non_null(s);
    similar_set(s, 16);
    uint64_t stored[5];
    for (int sc = CZ_AGG_AGNOSTIC; sc <= CZ_AGG_AUTO; sc++) {
        cz_agg_opts o = {.scheme = sc};
        cz_agg_stats st;
        buf b = round_trip(s, &o, &st);
        stored[sc] = st.stored;
        print_message("# similar variables, %s: %llu -> %llu bytes (ratio %.2f)%s%s\n",
                      cz_agg_scheme_name(sc), (unsigned long long)st.raw,
                      (unsigned long long)st.stored, (double)st.raw / (double)st.stored,
                      sc == CZ_AGG_AUTO ? ", picked " : "",
                      sc == CZ_AGG_AUTO ? cz_agg_scheme_name(st.scheme) : "");
        free(b.p);
    }
    assert_true(stored[CZ_AGG_AWARE] < stored[CZ_AGG_AGNOSTIC]);
    assert_true(stored[CZ_AGG_AWARE_BLOCK] < stored[CZ_AGG_AGNOSTIC_BLOCK]);
    /* AUTO picks by a sample; it must not lose to agnostic here */
    assert_true(stored[CZ_AGG_AUTO] < stored[CZ_AGG_AGNOSTIC]);
    set_free(s);
    free(s);
}

/* Write S with O twice: the same bytes (no clock decides), read back whole. */
static buf twice(const set *s, const cz_agg_opts *o, cz_agg_stats *st)
{
    buf a = round_trip(s, o, st), b = round_trip(s, o, st);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.p, b.p, a.len);
    free(b.p);
    return a;
}

/* With a write bandwidth (opts.bps) the codec is picked by the time model:
 * on a fast file system everything is stored raw (version 2's raw groups)
 * and AUTO does not sample; on a slow one the data is compressed and AUTO
 * samples; the same input gives the same bytes. */
static void test_time_model(void **state)
{
    (void)state;
    set *s = malloc(sizeof *s);
    assert_non_null(s);
    similar_set(s, 8);
    cz_agg_stats st;
    cz_agg_opts fast = {.scheme = CZ_AGG_AUTO, .bps = 1e12};
    buf b = twice(s, &fast, &st);
    assert_int_equal(st.sampled, 0);
    assert_int_equal(st.scheme, CZ_AGG_AWARE);
    assert_int_equal(st.npass2, 0);
    assert_true(st.stored > st.raw); /* raw frames, headers and table */
    free(b.p);
    cz_agg_opts slow = {.scheme = CZ_AGG_AUTO, .bps = 1e6};
    b = twice(s, &slow, &st);
    assert_true(st.sampled > 0);
    assert_true(2 * st.stored < st.raw);
    free(b.p);
    for (int sc = CZ_AGG_AGNOSTIC; sc <= CZ_AGG_AWARE_BLOCK; sc++) {
        fast.scheme = slow.scheme = sc;
        cz_agg_stats sf, ss;
        buf x = twice(s, &fast, &sf), y = twice(s, &slow, &ss);
        assert_true(sf.stored > sf.raw);
        assert_true(ss.stored < sf.stored);
        free(x.p);
        free(y.p);
    }
    cz_agg_opts bad = {.scheme = CZ_AGG_AWARE, .bps = -1};
    cn_err err = {0};
    b = (buf){0};
    assert_int_equal(cz_agg_write(s->v, s->n, &bad, sink, &b, &st, &err), CAIRN_EINVAL);
    assert_int_equal(b.len, 0);
    set_free(s);
    free(s);
}

/* The XXH3-64 of each BS bytes of V's data (the last block shorter). */
static uint64_t *block_sums(const cz_agg_var *v, uint64_t bs)
{
    uint64_t nb = (v->size + bs - 1) / bs;
    uint64_t *s = malloc((nb ? nb : 1) * sizeof *s);
    assert_non_null(s);
    for (uint64_t b = 0; b < nb; b++) {
        uint64_t off = b * bs, n = v->size - off < bs ? v->size - off : bs;
        s[b] = cn_hash((const uint8_t *)v->data + off, (size_t)n);
    }
    return s;
}

static void test_known_sums(void **state)
{
    (void)state;
    set *s = malloc(sizeof *s);
    assert_non_null(s);
    big_set(s);
    static uint64_t *sums[1024];
    static const uint64_t blocks[] = {1u << 20, 4096, 1000, 8u << 20}; /* 8 MiB: > a chunk */
    for (size_t k = 0; k < sizeof blocks / sizeof blocks[0]; k++) {
        for (size_t i = 0; i < s->n; i++) {
            sums[i] = block_sums(&s->v[i], blocks[k]);
            s->v[i].sums = sums[i];
            s->v[i].sum_block = blocks[k];
        }
        for (int sc = CZ_AGG_AGNOSTIC; sc <= CZ_AGG_AUTO; sc++) {
            cz_agg_opts o = {.scheme = sc, .bps = 1e12}; /* fast: raw groups */
            cz_agg_stats st;
            buf b = round_trip(s, &o, &st);
            assert_true(st.stored > st.raw);
            free(b.p);
        }
        for (size_t i = 0; i < s->n; i++)
            free(sums[i]);
    }
    size_t big = 0; /* an altered checksum of "big" (5 MiB): the writer frames with it */
    for (size_t i = 0; i < s->n; i++) {
        s->v[i].sums = NULL;
        big = strcmp(s->v[i].name, "big") == 0 ? i : big;
    }
    uint64_t *bs = block_sums(&s->v[big], 4096);
    bs[1100] ^= 1; /* past the group's first chunk, which is gathered to pick its codec */
    s->v[big].sums = bs;
    s->v[big].sum_block = 4096;
    cz_agg_opts o = {.scheme = CZ_AGG_AWARE, .bps = 1e12};
    buf b = {0};
    cn_err err = {0};
    assert_int_equal(cz_agg_write(s->v, s->n, &o, sink, &b, NULL, &err), 0);
    cz_agg_file *f = NULL;
    assert_int_equal(cz_agg_open(b.p, b.len, &f, &err), 0);
    check c = {.s = s, .f = f, .seen = calloc(s->n + 1, 1)};
    assert_int_equal(cz_agg_read(f, check_cb, &c, &err), CAIRN_ECORRUPT);
    assert_non_null(strstr(err.msg, "checksum"));
    free(c.seen);
    cz_agg_close(f);
    free(b.p);
    free(bs);
    set_free(s);
    free(s);
}

static bool want_third(void *arg, const cz_agg_var *v)
{
    (void)arg;
    assert_null(v->data);
    return v->rank % 3 == 1;
}

static int some_cb(void *arg, const cz_agg_var *v)
{
    check *c = arg;
    assert_int_equal(v->rank % 3, 1);
    size_t i = find(c->s, v);
    assert_false(c->seen[i]);
    c->seen[i] = true;
    same_meta(&c->s->v[i], v);
    if (v->size)
        assert_memory_equal(v->data, c->s->v[i].data, v->size);
    c->calls++;
    if (c->stop_at < 0) /* CZ_AGG_GIVE: the data is ours */
        free((void *)v->data);
    return 0;
}

/* cz_agg_read_some delivers exactly the variables wanted, bit for bit, from
 * raw and compressed files (second pass included) of every scheme. */
static void test_read_some(void **state)
{
    (void)state;
    set *s = malloc(sizeof *s);
    assert_non_null(s);
    big_set(s);
    size_t want = 0;
    for (size_t i = 0; i < s->n; i++)
        want += s->v[i].rank % 3 == 1;
    assert_true(want > 0 && want < s->n);
    for (int sc = CZ_AGG_AGNOSTIC; sc <= CZ_AGG_AWARE_BLOCK; sc++) {
        for (int k = 0; k < 2; k++) {
            cz_agg_opts o = {.scheme = sc, .bps = k ? 1e12 : 0};
            buf b = {0};
            cn_err err = {0};
            cz_agg_stats st;
            assert_int_equal(cz_agg_write(s->v, s->n, &o, sink, &b, &st, &err), 0);
            cz_agg_file *f = NULL;
            assert_int_equal(cz_agg_open(b.p, b.len, &f, &err), 0);
            for (unsigned give = 0; give < 2; give++) { /* GIVE: some_cb frees the data */
                check c = {.s = s, .f = f, .seen = calloc(s->n + 1, 1), .stop_at = -(int)give};
                assert_int_equal(cz_agg_read_some(f, want_third, some_cb, &c,
                                                  give ? CZ_AGG_GIVE : 0, &err), 0);
                assert_int_equal(c.calls, want);
                for (size_t i = 0; i < s->n; i++)
                    assert_int_equal(c.seen[i], s->v[i].rank % 3 == 1);
                free(c.seen);
            }
            check none = {0};
            assert_int_equal(cz_agg_read_some(f, want_third, some_cb, &none, 2, &err),
                             CAIRN_EINVAL);
            cz_agg_close(f);
            free(b.p);
        }
    }
    set_free(s);
    free(s);
}

static int stop_cb(void *arg, const cz_agg_var *v)
{
    (void)v;
    return ++*(int *)arg == 3 ? 7 : 0;
}

static void test_errors(void **state)
{
    (void)state;
    set *s = malloc(sizeof *s);
    assert_non_null(s);
    similar_set(s, 3);
    cz_agg_opts o = {.scheme = CZ_AGG_AWARE};
    cn_err err = {0};
    buf b = {0};
    /* duplicate (rank, kind, name) */
    s->v[4].name = s->v[0].name;
    s->v[4].rank = s->v[0].rank;
    assert_int_equal(cz_agg_write(s->v, s->n, &o, sink, &b, NULL, &err), CAIRN_EINVAL);
    assert_non_null(strstr(err.msg, "temperature"));
    s->v[4].rank = 1;
    s->v[4].name = "temperature";
    /* size against count */
    s->v[1].size--;
    assert_int_equal(cz_agg_write(s->v, s->n, &o, sink, &b, NULL, &err), CAIRN_EINVAL);
    s->v[1].size++;
    /* bad scheme, bad name */
    o.scheme = 9;
    assert_int_equal(cz_agg_write(s->v, s->n, &o, sink, &b, NULL, &err), CAIRN_EINVAL);
    o.scheme = CZ_AGG_AWARE;
    s->v[2].name = "a/b";
    assert_int_equal(cz_agg_write(s->v, s->n, &o, sink, &b, NULL, &err), CAIRN_EINVAL);
    s->v[2].name = "cell_id";
    assert_int_equal(b.len, 0);
    /* the sink's error is returned */
    b.fail_at = 3;
    assert_int_equal(cz_agg_write(s->v, s->n, &o, sink, &b, NULL, &err), CAIRN_ENOSPC);
    assert_string_equal(err.msg, "sink full");
    /* a callback's stop */
    free(b.p);
    b = (buf){0};
    assert_int_equal(cz_agg_write(s->v, s->n, &o, sink, &b, NULL, &err), 0);
    cz_agg_file *f = NULL;
    assert_int_equal(cz_agg_open(b.p, b.len, &f, &err), 0);
    int calls = 0;
    assert_int_equal(cz_agg_read(f, stop_cb, &calls, &err), 7);
    assert_int_equal(calls, 3);
    cz_agg_close(f);
    cz_agg_close(NULL);
    free(b.p);
    /* an empty set is a file with nothing in it */
    b = (buf){0};
    cz_agg_stats st;
    assert_int_equal(cz_agg_write(NULL, 0, &o, sink, &b, &st, &err), 0);
    assert_int_equal(st.ngroups, 0);
    assert_int_equal(cz_agg_open(b.p, b.len, &f, &err), 0);
    assert_int_equal(cz_agg_count(f), 0);
    calls = 0;
    assert_int_equal(cz_agg_read(f, count_cb, &calls, &err), 0);
    assert_int_equal(calls, 0);
    cz_agg_close(f);
    free(b.p);
    set_free(s);
    free(s);
}

/* ---- seeds for fuzz_agg ---------------------------------------------------------- */

static void write_seed(const char *dir, const char *name, const buf *b)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fputc(0, fp), 0); /* fuzz_agg's selector: the file as it is */
    assert_int_equal(fwrite(b->p, 1, b->len, fp), b->len);
    fclose(fp);
}

static void test_corpus(void **state)
{
    (void)state;
    const char *dir = getenv("CAIRN_AGG_CORPUS");
    if (!dir)
        skip();
    set *s = malloc(sizeof *s);
    assert_non_null(s);
    for (int sc = CZ_AGG_AGNOSTIC; sc <= CZ_AGG_AWARE_BLOCK; sc++) {
        buf b = small_file(sc, s);
        char name[64];
        snprintf(name, sizeof name, "valid-%s", cz_agg_scheme_name(sc));
        write_seed(dir, name, &b);
        free(b.p);
        set_free(s);
    }
    similar_set(s, 2);
    cz_agg_opts o = {.scheme = CZ_AGG_AUTO};
    buf b = {0};
    cn_err err = {0};
    cz_agg_stats st;
    assert_int_equal(cz_agg_write(s->v, 4, &o, sink, &b, &st, &err), 0);
    write_seed(dir, "valid-auto-similar", &b);
    free(b.p);
    b = (buf){0};
    cz_agg_opts raw = {.scheme = CZ_AGG_AUTO, .bps = 1e12}; /* version 2: raw groups */
    assert_int_equal(cz_agg_write(s->v, 4, &raw, sink, &b, &st, &err), 0);
    write_seed(dir, "valid-raw", &b);
    free(b.p);
    b = (buf){0};
    assert_int_equal(cz_agg_write(NULL, 0, &o, sink, &b, &st, &err), 0);
    write_seed(dir, "valid-empty", &b);
    free(b.p);
    set_free(s);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_flips_and_truncation),
        cmocka_unit_test(test_resealed_damage),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_aware_beats_agnostic),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_time_model),
        cmocka_unit_test(test_read_some),
        cmocka_unit_test(test_known_sums),
        cmocka_unit_test(test_corpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
