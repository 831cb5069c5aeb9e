/*
 * agg_auto.c - the writer's choices by the time model: pfs.scheme auto, the
 * codec a lone variable was modelled with (and the memo that keeps it from
 * one file to the next), the second pass.
 *
 * pfs.scheme auto: the paper's adaptive choice of merging scheme
 * (mcrEngine, section 7.4), by writing a sample of every variable with each
 * of the four schemes to a counting sink and keeping the smallest. With a
 * time model (opts.bps) the sampling is done only when it can pay for
 * itself (sampling_pays); else the aware scheme is taken without trials.
 * The memo (opts.memo: a context's, ticked once per level-4 generation by
 * api_pfs_gen_open) keeps the codec the model picked for each variable
 * modelled alone, by its rank, kind, name, type and size, at one bandwidth,
 * emptied at the tick after EVERY (compress.resample) generations: a job
 * samples a variable once per that many level-4 checkpoints, as level 1's
 * codec vote does, not in every file. A key that collides costs a slower
 * pick, never a wrong byte: every codec stores exactly.
 * Ownership: the sample's variable records are this file's, freed on return;
 * their data is the caller's, only read; w->vpick is allocated here and freed
 * by cz_agg_write; the memo is the caller's (cz_agg_memo_new, _free).
 */
#include "levels/pfs/agg_impl.h"

#include <stdlib.h>
#include <string.h>

typedef agg_writer writer;

typedef struct memo_pick {
    uint64_t name, size;  /* XXH3-64 of the name; bytes */
    uint32_t rank;
    uint8_t kind, type, codec;
    double ratio;         /* stored/raw of the model's samples */
} memo_pick;

/* Open addressing, linear probing, at most half full: a flush's leader may
 * keep its node's ranks' every variable. */
struct cz_agg_memo {
    double bps;           /* what its picks were modelled at */
    int every, uses;      /* emptied at the tick after EVERY of them */
    size_t n, cap;        /* entries; slots (a power of two, or 0) */
    memo_pick *e;         /* slot free: kind 0xff */
};

#define MEMO_FREE 0xff

static void memo_empty(cz_agg_memo *m)
{
    for (size_t i = 0; i < m->cap; i++)
        m->e[i].kind = MEMO_FREE;
    m->n = 0;
}

cz_agg_memo *cz_agg_memo_new(int every)
{
    cz_agg_memo *m = calloc(1, sizeof *m);
    if (m)
        m->every = every > 0 ? every : 1;
    return m;
}

void cz_agg_memo_free(cz_agg_memo *m)
{
    if (m)
        free(m->e);
    free(m);
}

void cz_agg_memo_tick(cz_agg_memo *m)
{
    if (m && ++m->uses > m->every) {
        memo_empty(m);
        m->uses = 1;
    }
}

void agg_memo_at(cz_agg_memo *m, double bps)
{
    if (m->bps != bps) {
        memo_empty(m);
        m->bps = bps;
    }
}

static memo_pick key_of(const cz_agg_var *x)
{
    return (memo_pick){.name = XXH3_64bits(x->name, strlen(x->name)), .size = x->size,
                       .rank = x->rank, .kind = x->kind, .type = x->type};
}

static bool same_key(const memo_pick *a, const memo_pick *b)
{
    return a->name == b->name && a->size == b->size && a->rank == b->rank &&
           a->kind == b->kind && a->type == b->type;
}

/* K's slot in E (CAP slots, a power of two): its own, or the free one it would take. */
static memo_pick *memo_slot(memo_pick *e, size_t cap, const memo_pick *k)
{
    uint64_t h = k->name ^ (k->size * 0x9E3779B97F4A7C15ull) ^
                 (((uint64_t)k->rank << 16 | (uint64_t)k->kind << 8 | k->type) *
                  0xC2B2AE3D27D4EB4Full);
    for (size_t i = (size_t)(h ^ h >> 29) & (cap - 1);; i = (i + 1) & (cap - 1))
        if (e[i].kind == MEMO_FREE || same_key(&e[i], k))
            return &e[i];
}

static memo_pick *memo_find(const cz_agg_memo *m, const memo_pick *k)
{
    if (!m || !m->cap)
        return NULL;
    memo_pick *e = memo_slot(m->e, m->cap, k);
    return e->kind == MEMO_FREE ? NULL : e;
}

static void memo_put(cz_agg_memo *m, const memo_pick *k)
{
    if (!m)
        return;
    if (2 * (m->n + 1) > m->cap) { /* grow: rehash into twice the slots */
        size_t cap = m->cap ? 2 * m->cap : 16;
        memo_pick *e = malloc(cap * sizeof *e);
        if (!e)
            return; /* not kept: modelled again next time */
        for (size_t i = 0; i < cap; i++)
            e[i].kind = MEMO_FREE;
        for (size_t i = 0; i < m->cap; i++)
            if (m->e[i].kind != MEMO_FREE)
                *memo_slot(e, cap, &m->e[i]) = m->e[i];
        free(m->e);
        m->e = e;
        m->cap = cap;
    }
    memo_pick *s = memo_slot(m->e, m->cap, k);
    m->n += s->kind == MEMO_FREE;
    *s = *k;
}

/* Variable I's codec by the model ENV on S bytes at P, and its sampled
 * stored/raw: from the memo, else modelled (and kept there). */
static int lone_model(writer *w, size_t i, const void *p, uint64_t s, const cz_env *env,
                      double *ratio)
{
    memo_pick k = key_of(&w->v[i]), *e = memo_find(w->memo, &k);
    if (e) {
        *ratio = e->ratio;
        return e->codec;
    }
    cz_model m;
    cz_model_lossless(p, s, k.type, NULL, env, &m);
    w->modelled++;
    int id = cz_pick(&m);
    *ratio = m.stored[id] > 0 ? m.stored[id] / (double)s : 1.0;
    k.codec = (uint8_t)id;
    k.ratio = *ratio;
    memo_put(w->memo, &k);
    return id;
}

static int count_sink(void *arg, const void *buf, size_t len, cn_err *err)
{
    (void)buf;
    (void)err;
    *(uint64_t *)arg += len;
    return 0;
}

/*
 * With a time model: is sampling the four schemes worth its work? Each
 * variable is modelled on its own (its codec by choose.c on the prefix the
 * trials would take, as the aware scheme would store it). The four trials
 * compress the sample (PER bytes of each variable at most) four times with
 * those codecs; a better merge can at most
 * halve the stored bytes (mcrEngine's schemes differ by 1.3-2.2x in ratio),
 * saving at most half their write time. Sample only when that bound is
 * larger than the trials' CPU time; never when every variable stores raw,
 * nor when the file holds one variable (then the schemes store the same
 * bytes, up to the table: a rank's file of one array, 4 trials of 4 MiB).
 */
static int sampling_pays(writer *w, uint64_t per, bool *pays, cn_err *err)
{
    *pays = !w->raw_only; /* all raw: every scheme stores the same bytes */
    if (w->raw_only || w->bps <= 0)
        return 0;
    cz_env env = {.storage_bps = w->bps, .threads = w->threads > 0 ? w->threads : 1,
                  .core = w->core, .level = w->level, .buf_size = AGG_CHUNK};
    double stored = 0, cpu = 0;
    bool packs = false;
    w->vpick = malloc(w->n ? w->n : 1); /* NULL: pick_codec samples again */
    if (w->vpick)
        memset(w->vpick, CZ_NCODECS, w->n);
    for (size_t i = 0; i < w->n; i++) {
        const cz_agg_var *x = &w->v[i];
        if (!x->size)
            continue;
        uint64_t s = x->size < per ? x->size : per; /* the prefix the trials would take */
        s -= s % cairn_type_size((cairn_type)x->type);
        if (!s)
            continue;
        CN_TRY(agg_ready(w, x->data, s, err));
        double ratio;
        int id = lone_model(w, i, x->data, s, &env, &ratio);
        if (w->vpick)
            w->vpick[i] = (uint8_t)id;
        stored += ratio * (double)x->size;
        cpu += 4 * cz_model_cpu(&env, id, x->type, s, ratio);
        packs |= id != CZ_RAW;
    }
    *pays = w->n > 1 && packs && cpu / cz_env_cores(&env) < 0.5 * stored / w->bps;
    return 0;
}

/* Try every scheme on a prefix of each variable; the smallest file wins.
 * With a time model and a sample that cannot pay (sampling_pays), the
 * aware scheme without trials (*SAMPLED 0). */
int agg_pick_scheme(writer *w, uint64_t raw, uint64_t *sampled, cn_err *err)
{
    uint64_t budget = raw / 16;
    budget = budget < (1u << 20) ? (1u << 20) : budget > (16u << 20) ? (16u << 20) : budget;
    uint64_t per = w->n ? budget / w->n : 0;
    per = per < 64 ? 64 : per & ~(uint64_t)7;
    *sampled = 0;
    bool pays = true;
    CN_TRY(sampling_pays(w, per, &pays, err));
    if (!pays) {
        w->scheme = CZ_AGG_AWARE;
        return 0;
    }
    cz_agg_var *s = malloc((w->n ? w->n : 1) * sizeof *s);
    if (!s)
        return cn_fail(err, CAIRN_ENOMEM, "no memory to sample %zu variables", w->n);
    uint64_t total = 0;
    for (size_t i = 0; i < w->n; i++) {
        s[i] = w->v[i];
        s[i].sums = NULL; /* a prefix: its last block's checksum is not the sample's */
        if (s[i].size > per) { /* a prefix of whole elements, without a shape */
            size_t es = cairn_type_size((cairn_type)s[i].type);
            s[i].size = per / es * es;
            s[i].count = s[i].size / es;
            s[i].ndims = 0;
            memset(s[i].dims, 0, sizeof s[i].dims);
        }
        total += s[i].size;
    }
    writer t = *w;
    t.v = s;
    t.sink = count_sink;
    static const int order[] = {CZ_AGG_AWARE, CZ_AGG_AWARE_BLOCK, CZ_AGG_AGNOSTIC,
                                CZ_AGG_AGNOSTIC_BLOCK};
    uint64_t best = UINT64_MAX;
    int rc = 0;
    for (int k = 0; k < 4 && !rc; k++) {
        uint64_t size = 0;
        t.arg = &size;
        t.scheme = order[k];
        t.block = cz_agg_is_block(order[k]) ? w->block : 0;
        rc = agg_write_scheme(&t, total, err);
        if (!rc && size < best) {
            best = size;
            w->scheme = order[k];
        }
    }
    free(s);
    free(t.spans);
    *sampled = total;
    return rc;
}

int agg_modelled(writer *w, const agg_wgroup *g, const uint8_t *src, size_t fill)
{
    if (w->bps <= 0 || g->nvar != 1)
        return -1;
    size_t i = w->order[g->first];
    if (g->type != w->v[i].type)
        return -1;
    if (w->vpick && w->vpick[i] < CZ_NCODECS)
        return w->vpick[i];
    cz_env env = agg_model_env(w);
    double ratio;
    return lone_model(w, i, src, fill, &env, &ratio);
}

cz_env agg_model_env(const writer *w)
{
    return (cz_env){.storage_bps = w->bps, .threads = w->threads > 0 ? w->threads : 1,
                    .core = w->core, .level = w->level, .buf_size = w->chunk};
}

bool agg_pass2_pays(const writer *w, size_t ilen, size_t olen)
{
    if (w->bps <= 0)
        return true;
    cz_env env = agg_model_env(w);
    double cpu = cz_model_cpu(&env, CZ_ZSTD, CAIRN_BYTE, ilen, (double)olen / (double)ilen);
    return cpu / cz_env_cores(&env) < (double)(ilen - olen) / w->bps;
}
