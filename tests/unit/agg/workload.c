/*
 * workload.c - test_agg's memory sink (growing, failing on a chosen call),
 * its workloads (sets of ranks' variables of every type and shape, smooth
 * values with noise), and the round trip: write a set, read it back, each
 * variable compared bit for bit and by metadata. Owned by test_agg
 * (tests/unit/test_agg.c).
 */
#include "agg.h"
#include "levels/pfs/pfs.h"

int sink(void *arg, const void *p, size_t len, cn_err *err)
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

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

void add(set *s, uint32_t rank, const char *name, uint8_t kind, uint8_t type, int ndims,
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

void set_free(set *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->data[i]);
    s->n = 0;
}

/* 37 ranks, differing sets (see the file comment). */
void big_set(set *s)
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

/* Ranks of one simulation: the same variables, similar values. */
void similar_set(set *s, uint32_t nranks)
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

/* ---- round trips ------------------------------------------------------------ */

size_t find(const set *s, const cz_agg_var *v)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].rank == v->rank && s->v[i].kind == v->kind && !strcmp(s->v[i].name, v->name))
            return i;
    fail_msg("variable '%s' of rank %u was never written", v->name, v->rank);
    return 0;
}

void same_meta(const cz_agg_var *a, const cz_agg_var *b)
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

int check_cb(void *arg, const cz_agg_var *v)
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
buf round_trip(const set *s, const cz_agg_opts *o, cz_agg_stats *st)
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
