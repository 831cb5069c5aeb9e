/*
 * pfsapply.c - one link of a PFS chain applied to one rank: the rank's
 * variables at the parent generation (CUR) and what the increment stores for
 * it (INC: its delta record, its variables' stored bytes, its routed files)
 * become its variables at the increment's generation.
 *
 * By the delta record (src/levels/pfs/pdelta.c), for every variable it lists:
 *   whole     the increment's member replaces whatever the parent held;
 *   changes   the parent's bytes, resized to the new size, with each run's
 *             blocks copied over from the member, one after another; every
 *             block outside the runs must have the same length in the parent
 *             (a variable that grew or shrank stores its changed last block).
 * A variable the record does not list is gone; routed files are the
 * increment's. Anything that does not fit (a member missing, of the wrong
 * size, not listed, a record of another rank or generation, a variable the
 * parent does not hold) is CAIRN_ECORRUPT naming the rank and the variable;
 * CUR is left as it was then.
 *
 * Ownership: on success CUR owns the result, and what it held before is
 * freed or moved; INC's members are moved out (the caller frees INC).
 */
#include "core/core.h"
#include "levels/pfs/pfs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static lvl_src *find(api_rvars *rv, const char *name, uint8_t kind)
{
    for (size_t i = 0; i < rv->n; i++)
        if (rv->src[i].name && rv->src[i].kind == kind && strcmp(rv->src[i].name, name) == 0)
            return &rv->src[i];
    return NULL;
}

/* Block J's length in a variable of SIZE bytes. */
static uint64_t block_len(uint64_t j, uint64_t size, uint32_t block)
{
    uint64_t off = j * block;
    return off >= size ? 0 : size - off < block ? size - off : block;
}

/* Does every block of V outside its runs have the same length in a parent
 * copy of PSIZE bytes? */
static bool continues(const cn_pdelta_var *v, uint64_t psize, uint32_t block)
{
    uint64_t nb = cn_incr_nblocks(v->size, block), j = 0;
    for (uint32_t r = 0; r <= v->nruns; r++) {
        uint64_t stop = r < v->nruns ? v->runs[r].first : nb;
        for (; j < stop; j++)
            if (block_len(j, psize, block) != block_len(j, v->size, block))
                return false;
        j = r < v->nruns ? (uint64_t)v->runs[r].first + v->runs[r].count : nb;
    }
    return true;
}

/* Variable V (changes) from the parent's copy P and the member M (NULL when
 * nothing of it changed) into a new buffer *OUT. */
static int patch(cairn_ctx *ctx, const cn_pdelta_var *v, uint32_t block, const lvl_src *p,
                 const lvl_src *m, uint8_t **out)
{
    uint64_t stream = cn_pdelta_stream(v, block);
    CN_FAIL_IF(!p || !continues(v, p->size, block), &ctx->err, CAIRN_ECORRUPT,
               "'%s' is stored as changes to a variable its parent does not hold", v->name);
    CN_FAIL_IF((m ? m->size : 0) != stream, &ctx->err, CAIRN_ECORRUPT,
               "'%s': %llu bytes of changes stored, its delta record says %llu", v->name,
               (unsigned long long)(m ? m->size : 0), (unsigned long long)stream);
    uint8_t *b = malloc(v->size ? v->size : 1);
    CN_FAIL_IF(!b, &ctx->err, CAIRN_ENOMEM, "no memory for '%s'", v->name);
    memcpy(b, p->ptr, p->size < v->size ? p->size : v->size);
    if (p->size < v->size)
        memset(b + p->size, 0, v->size - p->size); /* every new block is in a run */
    const uint8_t *src = m ? m->ptr : NULL;
    for (uint32_t r = 0; r < v->nruns; r++) {
        uint64_t lo = (uint64_t)v->runs[r].first * block;
        uint64_t hi = lo + (uint64_t)v->runs[r].count * block;
        hi = hi < v->size ? hi : v->size;
        memcpy(b + lo, src, hi - lo);
        src += hi - lo;
    }
    *out = b;
    return 0;
}

/* Set E's shape from V. */
static void shape(lvl_src *e, const cn_pdelta_var *v)
{
    e->type = v->type, e->ndims = v->ndims, e->count = v->count, e->size = v->size;
    memcpy(e->dims, v->dims, sizeof e->dims);
}

static int apply(cairn_ctx *ctx, const cn_pindex *link, uint32_t rank, const cn_pdelta *d,
                 api_rvars *cur, api_rvars *inc, api_rvars *nx)
{
    CN_FAIL_IF(d->rank != rank || d->generation != link->generation ||
                   d->parent != link->parent,
               &ctx->err, CAIRN_ECORRUPT, "the delta record of rank %u names rank %u, "
               "generation %lld, parent %lld", rank, d->rank, (long long)d->generation,
               (long long)d->parent);
    nx->src = calloc((size_t)d->nvars + inc->n + 1, sizeof *nx->src);
    CN_FAIL_IF(!nx->src, &ctx->err, CAIRN_ENOMEM, "no memory");
    nx->cap = (size_t)d->nvars + inc->n + 1;
    for (uint32_t i = 0; i < d->nvars; i++) {
        const cn_pdelta_var *v = &d->v[i];
        CN_FAIL_IF(find(nx, v->name, CN_KIND_VAR), &ctx->err, CAIRN_ECORRUPT,
                   "'%s' is listed twice in its delta record", v->name);
        lvl_src *m = find(inc, v->name, CN_KIND_VAR), *e = &nx->src[nx->n];
        if (!v->delta) {
            CN_FAIL_IF(!m || m->size != v->size, &ctx->err, CAIRN_ECORRUPT,
                       "'%s' is stored whole with %llu bytes, its delta record says %llu",
                       v->name, (unsigned long long)(m ? m->size : 0),
                       (unsigned long long)v->size);
            *e = *m;
            m->name = NULL, m->ptr = NULL; /* moved */
        } else {
            uint8_t *b = NULL;
            CN_TRY(patch(ctx, v, d->block, find(cur, v->name, CN_KIND_VAR), m, &b));
            *e = (lvl_src){.name = strdup(v->name), .kind = CN_KIND_VAR, .ptr = b,
                           .codec = CZ_RAW};
            if (!e->name) {
                free(b);
                return cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
            }
            if (m) {
                free((void *)m->name), free((void *)m->ptr);
                m->name = NULL, m->ptr = NULL;
            }
        }
        shape(e, v);
        nx->n++;
    }
    for (size_t i = 0; i < inc->n; i++) { /* routed files: the increment's; nothing else */
        lvl_src *m = &inc->src[i];
        if (!m->name || (m->kind == CN_KIND_VAR && strcmp(m->name, CN_PDELTA_NAME) == 0))
            continue;
        CN_FAIL_IF(m->kind != CN_KIND_FILE, &ctx->err, CAIRN_ECORRUPT,
                   "'%s' is stored but not in its delta record", m->name);
        nx->src[nx->n++] = *m;
        m->name = NULL, m->ptr = NULL;
    }
    return 0;
}

int api_pfs_apply(cairn_ctx *ctx, const cn_pindex *link, uint32_t rank, api_rvars *cur,
                  api_rvars *inc)
{
    lvl_src *rec = find(inc, CN_PDELTA_NAME, CN_KIND_VAR);
    cn_pdelta d = {0};
    int rc = rec ? cn_pdelta_decode(rec->ptr, rec->size, &d, &ctx->err)
                 : cn_fail(&ctx->err, CAIRN_ECORRUPT, "no delta record");
    api_rvars nx = {0};
    if (rc == 0)
        rc = apply(ctx, link, rank, &d, cur, inc, &nx);
    cn_pdelta_free(&d);
    if (rc < 0) {
        api_rvars_free(&nx);
        cn_err_prefix(&ctx->err, "rank %u: ", rank);
        return rc;
    }
    api_rvars_free(cur);
    *cur = nx;
    return 0;
}
