/*
 * read.c - test_agg's reading tests: variables with known block checksums
 * in every scheme, cz_agg_read_some delivering exactly the variables
 * wanted, and bad input, sink errors and a callback's stop returned. Owned
 * by test_agg (tests/unit/test_agg.c).
 */
#include "agg.h"
#include "levels/pfs/pfs.h"

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

void test_known_sums(void **state)
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
    cz_agg_file *f = NULL; /* a raw group's frames are checked on a whole open */
    assert_int_equal(cz_agg_open(b.p, b.len, &f, &err), CAIRN_ECORRUPT);
    assert_non_null(strstr(err.msg, "checksum mismatch"));
    uint64_t sum = 0; /* and by the index's checksum */
    assert_int_equal(cz_agg_sum(b.p, b.len, &sum, &err), CAIRN_ECORRUPT);
    assert_non_null(strstr(err.msg, "checksum mismatch"));
    err = (cn_err){0}; /* a lazy open leaves them to the read */
    assert_int_equal(cz_agg_open_flags(b.p, b.len, CZ_AGG_LAZY, &f, &err), 0);
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
void test_read_some(void **state)
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

void test_errors(void **state)
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

/* ---- lent frames (cz_agg_var.frames) --------------------------------------- */

/* V's data as frames of CODEC of at most PIECE raw bytes each, as level 1 stores
 * a variable; *LEN their bytes. */
static uint8_t *frames_of(const cz_agg_var *v, uint8_t codec, size_t piece, uint64_t *len)
{
    size_t es = cairn_type_size((cairn_type)v->type);
    piece = piece / es * es;
    uint8_t *out = malloc((size_t)v->size + (v->size / piece + 1) * (CZ_FRAME_HDR + 64) + 4096);
    uint8_t *scratch = malloc(piece + CZ_FRAME_HDR), *tmp = malloc(cz_frame_bound(piece));
    assert_true(out && scratch && tmp);
    *len = 0;
    for (uint64_t off = 0; off < v->size; off += piece) {
        size_t n = v->size - off < piece ? (size_t)(v->size - off) : piece;
        size_t f = cz_frame_encode(codec, v->type, 0, (const uint8_t *)v->data + off, n, tmp,
                                   scratch);
        assert_true(f > 0);
        memcpy(out + *len, tmp, f);
        *len += f;
    }
    free(scratch);
    free(tmp);
    return out;
}

static bool holds(const buf *b, const uint8_t *p, uint64_t len)
{
    return len && memmem(b->p, b->len, p, (size_t)len) != NULL;
}

/* Write L (lent) and check every variable against S's data. */
static buf lent_trip(const set *s, const cz_agg_var *l, const cz_agg_opts *o, cz_agg_stats *st)
{
    buf b = {0};
    cn_err err = {0};
    if (cz_agg_write(l, s->n, o, sink, &b, st, &err) != 0)
        fail_msg("cz_agg_write (%s): %s", cz_agg_scheme_name(o->scheme), err.msg);
    cz_agg_file *f = NULL;
    if (cz_agg_open(b.p, b.len, &f, &err) != 0)
        fail_msg("cz_agg_open (%s): %s", cz_agg_scheme_name(o->scheme), err.msg);
    check c = {.s = s, .f = f, .seen = calloc(s->n + 1, 1)};
    if (cz_agg_read(f, check_cb, &c, &err) != 0)
        fail_msg("cz_agg_read (%s): %s", cz_agg_scheme_name(o->scheme), err.msg);
    assert_int_equal(c.calls, s->n);
    free(c.seen);
    cz_agg_close(f);
    return b;
}

void test_lent_frames(void **state)
{
    (void)state;
    set *s = malloc(sizeof *s);
    static cz_agg_var l[1024];
    static uint8_t *fr[1024];
    assert_non_null(s);
    similar_set(s, 8); /* smooth fields: frames that compress */
    size_t big = 0;
    for (int mixed = 0; mixed < 2; mixed++) {
        for (size_t i = 0; i < s->n; i++) {
            l[i] = s->v[i];
            fr[i] = NULL;
            if (l[i].kind != CN_KIND_VAR || !l[i].size)
                continue;
            /* one codec for all (lent whole), or a second one on odd ranks */
            uint8_t codec = mixed && l[i].rank % 2 ? CZ_LZ4 : CZ_ZSTD;
            fr[i] = frames_of(&l[i], codec, 8u << 10, &l[i].frames_len);
            l[i].frames = fr[i], l[i].fcodec = codec, l[i].data = NULL;
            big = l[i].size > l[big].size ? i : big;
        }
        for (int sc = CZ_AGG_AGNOSTIC; sc <= CZ_AGG_AUTO; sc++) {
            cz_agg_opts o = {.scheme = sc};
            cz_agg_stats st;
            buf b = lent_trip(s, l, &o, &st);
            bool whole = !mixed && (sc == CZ_AGG_AWARE || sc == CZ_AGG_AUTO);
            print_message("# lent frames, %s, %-14s: %llu -> %llu bytes%s\n",
                          mixed ? "mixed codecs" : "one codec", cz_agg_scheme_name(sc),
                          (unsigned long long)st.raw, (unsigned long long)st.stored,
                          whole ? ", written as they are" : "");
            if (sc == CZ_AGG_AUTO) /* no trials over frames */
                assert_int_equal(st.scheme, CZ_AGG_AWARE);
            assert_int_equal(holds(&b, fr[big], l[big].frames_len), whole);
            free(b.p);
        }
        for (size_t i = 0; i < s->n; i++)
            free(fr[i]);
    }
    /* Frames that do not hold the variable's bytes, or a lossy codec: refused. */
    for (int bad = 0; bad < 3; bad++) {
        for (size_t i = 0; i < s->n; i++)
            l[i] = s->v[i];
        uint8_t *f = frames_of(&l[big], CZ_ZSTD, 8u << 10, &l[big].frames_len);
        l[big].frames = f, l[big].fcodec = bad == 2 ? CZ_PREDICT : CZ_ZSTD, l[big].data = NULL;
        if (bad == 0)
            l[big].size -= 8, l[big].count -= 8 / cairn_type_size((cairn_type)l[big].type),
                l[big].ndims = 0, memset(l[big].dims, 0, sizeof l[big].dims);
        if (bad == 1)
            f[l[big].frames_len / 2] ^= 1; /* a payload byte: its decode fails */
        buf b = {0};
        cn_err err = {0};
        cz_agg_opts o = {.scheme = bad == 1 ? CZ_AGG_AGNOSTIC : CZ_AGG_AWARE};
        int rc = cz_agg_write(l, s->n, &o, sink, &b, NULL, &err);
        print_message("# lent frames, bad case %d: %s\n", bad, err.msg);
        assert_int_equal(rc, bad == 2 ? CAIRN_EINVAL : CAIRN_ECORRUPT);
        free(b.p);
        free(f);
    }
    set_free(s);
    free(s);
}
