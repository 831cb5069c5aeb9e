/*
 * agg_table.c - the aggregated file's ends, as the writer (agg.c) finishes
 * it: the header (written first, before the groups' codecs are known) and,
 * after every group's units, the table of group and variable records and
 * the trailer that seals it (layout in agg.c). Ownership: the table is
 * built here and freed once written.
 */
#include "levels/pfs/agg_impl.h"

#include <stdlib.h>
#include <string.h>

typedef agg_writer writer;
typedef agg_wgroup wgroup;

void agg_put_header(const writer *w, uint64_t raw, uint8_t *h)
{
    memset(h, 0, AGG_HDR);
    memcpy(h, cz_agg_magic, 8);
    cn_put_u32(h + 8, w->version);
    h[12] = (uint8_t)w->scheme;
    cn_put_u32(h + 16, (uint32_t)w->block);
    cn_put_u32(h + 20, (uint32_t)w->n);
    cn_put_u32(h + 24, w->ngroups);
    cn_put_u32(h + 28, w->chunk);
    cn_put_u64(h + 32, raw);
    cn_put_u64(h + 56, cn_hash(h, 56));
}

int agg_write_table(writer *w, uint64_t data_size, cn_err *err)
{
    size_t tlen = (size_t)w->ngroups * AGG_GROUP_REC;
    for (size_t i = 0; i < w->n; i++)
        tlen += AGG_VAR_FIXED + strlen(w->v[w->order[i]].name);
    uint8_t *t = calloc(1, tlen + AGG_TRAILER);
    if (!t)
        return cn_fail(err, CAIRN_ENOMEM, "no memory for a table of %zu bytes", tlen);
    uint8_t *p = t;
    for (uint32_t i = 0; i < w->ngroups; i++, p += AGG_GROUP_REC) {
        const wgroup *g = &w->g[i];
        p[0] = g->codec;
        p[1] = g->type;
        p[2] = g->flags;
        cn_put_u32(p + 4, (uint32_t)g->nvar);
        cn_put_u64(p + 8, g->raw);
        cn_put_u64(p + 16, g->stored);
        cn_put_u64(p + 24, g->nunits);
        cn_put_u64(p + 32, g->sum);
    }
    for (size_t i = 0; i < w->n; i++) {
        const cz_agg_var *x = &w->v[w->order[i]];
        size_t nl = strlen(x->name);
        cn_put_u32(p, x->rank);
        p[4] = x->kind;
        p[5] = x->type;
        p[6] = x->ndims;
        cn_put_u16(p + 8, (uint16_t)nl);
        cn_put_u32(p + 12, x->file);
        for (int d = 0; d < CAIRN_MAX_DIMS; d++)
            cn_put_u64(p + 16 + 8 * d, x->dims[d]);
        cn_put_u64(p + 40, x->count);
        cn_put_u64(p + 48, x->size);
        memcpy(p + AGG_VAR_FIXED, x->name, nl);
        p += AGG_VAR_FIXED + nl;
    }
    memcpy(p, cz_agg_tmagic, 8);
    cn_put_u32(p + 8, w->version);
    cn_put_u32(p + 12, (uint32_t)w->n);
    cn_put_u32(p + 16, w->ngroups);
    cn_put_u64(p + 24, data_size);
    cn_put_u64(p + 32, tlen);
    cn_put_u64(p + 40, cn_hash(t, tlen));
    cn_put_u64(p + 48, (uint64_t)AGG_HDR + data_size + tlen + AGG_TRAILER);
    cn_put_u64(p + 56, cn_hash(p, 56));
    int rc = agg_emit(w, t, tlen + AGG_TRAILER, err);
    free(t);
    return rc;
}
