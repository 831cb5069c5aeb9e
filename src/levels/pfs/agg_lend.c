/*
 * agg_lend.c - variables lent to the writer as level 1's frames
 * (cz_agg_var.frames): a flush whose rank file stores a variable compressed
 * hands the writer those stored bytes instead of decoding them, and a group
 * made of such variables alone, all of one codec, is written from them as
 * they are: no decode, no second encode, and the PFS gets level 1's bytes
 * (its codec was chosen for this data, by level 1's model, at no cost here).
 *
 * Only the aware scheme groups variables by key, so only there can a group
 * be lent whole (the block schemes interleave bytes, the agnostic ones
 * concatenate every type); with scheme auto, a file holding lent frames is
 * written aware, without trials over data it would first have to decode. A
 * lent variable in any other group is decoded into a buffer of the writer's
 * own first, and written as any other.
 * The frames were checked by the caller against level 1's block checksums;
 * here their headers are checked again (codec, type, raw lengths adding up
 * to the variable, each within AGG_CHUNK, as the reader requires), and a
 * frame that decodes wrong fails the decode with CAIRN_ECORRUPT.
 * Ownership: the copy of the variables (w->vown) and the decoded buffers
 * (w->vbuf) are the writer's, freed by agg_lend_free.
 */
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include "levels/pfs/agg_impl.h"

#include <stdlib.h>
#include <string.h>

typedef agg_writer writer;

/* X's frames walked: each header parsed; *UNITS frames, 0 if they cannot be
 * written as they are (a frame over AGG_CHUNK, a type not X's). Fails with
 * CAIRN_ECORRUPT (message in ERR) if a header does not parse or they do not
 * hold exactly X's bytes. */
static int walk(const cz_agg_var *x, uint64_t *units, cn_err *err)
{
    const uint8_t *q = x->frames;
    uint64_t left = x->frames_len, raw = 0, n = 0;
    bool fits = true;
    while (left) {
        cz_frame fr;
        size_t used;
        CN_TRY(cz_frame_parse(q, (size_t)(left < SIZE_MAX ? left : SIZE_MAX), x->fcodec, &fr,
                              &used, err));
        fits &= fr.type == x->type && fr.raw_len <= AGG_CHUNK;
        raw += fr.raw_len;
        n++;
        q += used;
        left -= used;
    }
    CN_FAIL_IF(raw != x->size, err, CAIRN_ECORRUPT,
               "'%s' (rank %u): its frames hold %llu bytes, the variable %llu", x->name, x->rank,
               (unsigned long long)raw, (unsigned long long)x->size);
    *units = fits ? n : 0;
    return 0;
}

int cz_agg_unframe(const uint8_t *frames, uint64_t frames_len, uint8_t fcodec, uint8_t type,
                   uint8_t *dst, uint64_t raw, cn_err *err)
{
    const cz_dest d = {dst, raw};
    const cz_stream s = {.stored = frames, .stored_size = frames_len, .codec = fcodec,
                         .type = type, .frame_raw = raw, .dest = &d, .ndest = 1,
                         .name = "lent frames"};
    return cz_read(&s, 1, 0, err);
}

/* Checked: lent only as frames of a lossless codec, a variable (not a file). */
int agg_lend_setup(writer *w, const cz_agg_var *v, size_t n, cn_err *err)
{
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        const cz_codec *c = v[i].frames ? cz_codec_get(v[i].fcodec) : NULL;
        CN_FAIL_IF(v[i].frames && (v[i].data || !c || c->lossy || v[i].kind != CN_KIND_VAR),
                   err, CAIRN_EINVAL, "aggregation: '%s' (rank %u) lent as frames of codec %u",
                   v[i].name, v[i].rank, v[i].fcodec);
        any |= v[i].frames != NULL;
    }
    if (!any)
        return 0;
    w->vown = malloc(n * sizeof *w->vown);
    w->vbuf = calloc(n, sizeof *w->vbuf);
    CN_FAIL_IF(!w->vown || !w->vbuf, err, CAIRN_ENOMEM, "no memory for %zu variables", n);
    memcpy(w->vown, v, n * sizeof *v);
    w->v = w->vown;
    return 0;
}

/* Variable I (of w->vown) decoded into a buffer of the writer's own. */
static int unlend(writer *w, size_t i, cn_err *err)
{
    cz_agg_var *x = &w->vown[i];
    w->vbuf[i] = malloc(x->size ? (size_t)x->size : 1);
    CN_FAIL_IF(!w->vbuf[i], err, CAIRN_ENOMEM, "no memory to decode '%s' (rank %u, %llu bytes)",
               x->name, x->rank, (unsigned long long)x->size);
    int rc = cz_agg_unframe(x->frames, x->frames_len, x->fcodec, x->type, w->vbuf[i], x->size,
                            err);
    if (rc)
        return cn_err_prefix(err, "'%s' (rank %u): ", x->name, x->rank), rc;
    x->data = w->vbuf[i];
    x->frames = NULL;
    return 0;
}

int agg_lend_plan(writer *w, cn_err *err)
{
    if (!w->vown)
        return 0;
    for (uint32_t gi = 0; gi < w->ngroups; gi++) {
        const agg_wgroup *g = &w->g[gi];
        const cz_agg_var *h = &w->v[w->order[g->first]];
        bool whole = w->scheme == CZ_AGG_AWARE;
        for (size_t k = g->first; whole && k < g->first + g->nvar; k++) {
            const cz_agg_var *x = &w->v[w->order[k]];
            uint64_t units = 0;
            whole = x->frames && x->fcodec == h->fcodec && x->type == g->type;
            if (whole)
                CN_TRY(walk(x, &units, err));
            whole &= units > 0;
        }
        for (size_t k = g->first; !whole && k < g->first + g->nvar; k++)
            if (w->v[w->order[k]].frames)
                CN_TRY(unlend(w, w->order[k], err));
    }
    return 0;
}

int agg_write_lent(writer *w, agg_wgroup *g, cn_err *err)
{
    XXH3_state_t hs;
    XXH3_64bits_reset(&hs);
    g->codec = w->v[w->order[g->first]].fcodec;
    for (size_t k = g->first; k < g->first + g->nvar; k++) {
        const cz_agg_var *x = &w->v[w->order[k]];
        uint64_t units;
        CN_TRY(walk(x, &units, err));
        XXH3_64bits_update(&hs, x->frames, (size_t)x->frames_len);
        CN_TRY(agg_emit(w, x->frames, (size_t)x->frames_len, err));
        g->stored += x->frames_len;
        g->nunits += units;
    }
    g->sum = XXH3_64bits_digest(&hs);
    return 0;
}

void agg_lend_free(writer *w)
{
    for (size_t i = 0; w->vbuf && i < w->n; i++)
        free(w->vbuf[i]);
    free(w->vbuf);
    free(w->vown);
    w->vbuf = NULL;
    w->vown = NULL;
}
