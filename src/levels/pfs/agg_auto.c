/*
 * agg_auto.c - the writer's choices by the time model: pfs.scheme auto, the
 * codec a lone variable was modelled with, the second pass.
 *
 * pfs.scheme auto: the paper's adaptive choice of merging scheme
 * (mcrEngine, section 7.4), by writing a sample of every variable with each
 * of the four schemes to a counting sink and keeping the smallest. With a
 * time model (opts.bps) the sampling is done only when it can pay for
 * itself (sampling_pays); else the aware scheme is taken without trials.
 * Ownership: the sample's variable records are this file's, freed on return;
 * their data is the caller's, only read; w->vpick is allocated here and freed
 * by cz_agg_write.
 */
#include "levels/pfs/agg_impl.h"

#include <stdlib.h>
#include <string.h>

typedef agg_writer writer;

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
        cz_model m;
        cz_model_lossless(x->data, s, x->type, NULL, &env, &m);
        int id = cz_pick(&m);
        if (w->vpick)
            w->vpick[i] = (uint8_t)id;
        double ratio = m.stored[id] > 0 ? m.stored[id] / (double)s : 1.0;
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

int agg_modelled(const writer *w, const agg_wgroup *g)
{
    if (w->bps <= 0 || !w->vpick || g->nvar != 1)
        return -1;
    size_t i = w->order[g->first];
    return w->vpick[i] < CZ_NCODECS && g->type == w->v[i].type ? w->vpick[i] : -1;
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
