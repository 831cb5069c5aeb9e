/*
 * remap.c - restart onto another rank count or node layout.
 *
 * When no generation of this run's layout can be restored and every
 * protected variable is distributed (a block of a global array) or
 * replicated, restart.c hands over here. Plan, the same on every rank:
 *   source   the newest generation of another layout (or the one asked for)
 *            that this run's nodes hold whole on node-local storage (every
 *            stored rank's file listed by the manifest of a node directory of
 *            this run), or the PFS copy when it is newer or the only one;
 *   readers  each stored rank is read by one rank of this run: node-local by
 *            a rank of the node whose directory holds it (the node's stored
 *            ranks spread over its ranks in order), the PFS by rank
 *            (file % size) for each aggregated file;
 *   rounds   in round t every reader decodes its t-th stored rank (verified:
 *            remap_read.c), checks its stored blocks against the protected
 *            variables, and all ranks learn every reader's blocks
 *            (MPI_Allgather); each reader cuts the overlap of each stored block
 *            with each rank's new block, and the pieces travel in one
 *            MPI_Alltoallw whose datatypes are those overlaps (subarrays), from
 *            the decoded stored block straight into the receivers' scratch
 *            copies of their blocks (no packing); receivers mark every element
 *            received (twice: the stored blocks overlap).
 * Only when every round succeeded on every rank and every element of every
 * block was received exactly once are the scratch copies copied into
 * protected memory: a failed remap leaves it unchanged. A replicated variable
 * is stored rank 0's copy, as a block covering the whole of a 1-D array that
 * every new rank asks for whole.
 *
 * Memory per rank: one stored rank's remapped variables (a PFS file's ranks'
 * when reading the PFS), its own blocks once more (and a bit per element).
 * Ownership: all buffers are this file's and freed before it returns.
 */
#include "api/remap_impl.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct box {
    uint64_t s[3], c[3];
} box;

#define REC_HEAD 2 /* rc, stored rank (or -1) */
#define REC_VAR 6  /* start[3], count[3] */

/* ---- boxes ----------------------------------------------------------------- */

static bool overlap(const box *a, const box *b, box *o)
{
    for (int d = 0; d < 3; d++) {
        uint64_t lo = a->s[d] > b->s[d] ? a->s[d] : b->s[d];
        uint64_t ha = a->s[d] + a->c[d], hb = b->s[d] + b->c[d], hi = ha < hb ? ha : hb;
        if (hi <= lo)
            return false;
        o->s[d] = lo, o->c[d] = hi - lo;
    }
    return true;
}

/* Offset in elements of global point P in a buffer holding box B in C order. */
static uint64_t offset_in(const box *b, uint64_t p0, uint64_t p1, uint64_t p2)
{
    return ((p0 - b->s[0]) * b->c[1] + (p1 - b->s[1])) * b->c[2] + (p2 - b->s[2]);
}

/* Set bits AT .. AT + N - 1 of SEEN; false if one was set already. */
static bool mark_run(uint8_t *seen, uint64_t at, uint64_t n)
{
    bool fresh = true;
    for (; n && at % 8; at++, n--) { /* head, bit by bit */
        fresh &= !(seen[at / 8] & (1u << (at % 8)));
        seen[at / 8] |= (uint8_t)(1u << (at % 8));
    }
    uint8_t *p = seen + at / 8;
    for (uint64_t b = 0; b < n / 8; b++) /* whole bytes */
        fresh &= p[b] == 0;
    memset(p, 0xff, n / 8);
    for (at += n / 8 * 8, n %= 8; n; at++, n--) { /* tail */
        fresh &= !(seen[at / 8] & (1u << (at % 8)));
        seen[at / 8] |= (uint8_t)(1u << (at % 8));
    }
    return fresh;
}

/* Mark O's elements received in SEEN (bits over box B), a run of the last
 * dimension at a time; false if one was already. */
static bool mark_box(uint8_t *seen, const box *b, const box *o)
{
    bool fresh = true;
    for (uint64_t i = 0; i < o->c[0]; i++)
        for (uint64_t j = 0; j < o->c[1]; j++)
            fresh &= mark_run(seen, offset_in(b, o->s[0] + i, o->s[1] + j, o->s[2]), o->c[2]);
    return fresh;
}

/* V's global shape (3-D, leading dimensions 1) and this rank's block of it. */
static void new_box(const api_var *v, box *g, box *b)
{
    for (int d = 0; d < 3; d++)
        g->s[d] = 0, g->c[d] = 1, b->s[d] = 0, b->c[d] = 1;
    if (v->dist == API_DIST_REPLICATED) {
        g->c[2] = b->c[2] = v->count;
        return;
    }
    for (int d = 0; d < v->bdims; d++) {
        int at = 3 - v->bdims + d;
        g->c[at] = v->global[d];
        b->s[at] = v->start[d], b->c[at] = v->bcount[d];
    }
}

/* ---- the rounds ---------------------------------------------------------------- */

typedef struct remap {
    cairn_ctx *ctx;
    const rm_source *src;
    rm_vars vars;
    size_t *es;                   /* element size per variable */
    box *gshape;                  /* per variable */
    box *nb;                      /* [rank * nv + i]: every rank's new block */
    uint8_t **stage;              /* per variable: this rank's block, scratch */
    uint8_t **seen;               /* per variable: elements received */
    int64_t *recs;                /* a round's blocks of every reader */
    int64_t *me;                  /* ... this rank's */
    int *cnt;                     /* a round's Alltoallw counts and (zero) displacements */
    MPI_Datatype *types;          /* ... its send and receive types */
    MPI_Datatype *pt;             /* per variable: a piece's subarray, */
    MPI_Aint *pd;                 /* ... address */
    int *pl;                      /* ... and count (1) */
    char was[96], now[96];
} remap;

/* Reader: the blocks of stored rank R (decoded in RK) as boxes into REC,
 * after checking them against the protected variables. */
static int stored_blocks(remap *p, uint32_t r, const rm_rank *rk, int64_t *rec)
{
    cairn_ctx *ctx = p->ctx;
    for (size_t i = 0; i < p->vars.n; i++) {
        const api_var *v = p->vars.v[i];
        int64_t *b = rec + REC_VAR * i;
        memset(b, 0, sizeof *b * REC_VAR);
        const char *why = NULL;
        api_block sb = {0};
        int f = rk->layout ? api_layout_find(rk->layout, rk->layout_len, v->name, &sb)
                           : CAIRN_ENOENT;
        if (f == CAIRN_ECORRUPT)
            return cn_fail(&ctx->err, CAIRN_ECORRUPT, "generation %ld: stored rank %u: its "
                           "layout record does not parse", p->src->gen, r);
        if (v->dist == API_DIST_REPLICATED && r != 0)
            continue; /* rank 0's copy only */
        if (!rk->data[i])
            why = "does not store it";
        else if (rk->type[i] != (int)v->type)
            why = "stores it with another type";
        else if (v->dist == API_DIST_REPLICATED && rk->count[i] != v->count)
            why = "stores another element count";
        else if (v->dist == API_DIST_BLOCK && f != 0)
            why = "stores it without a block (cairn_protect_block)";
        else if (v->dist == API_DIST_BLOCK && sb.dist != API_DIST_BLOCK)
            why = "stores it replicated, not as a block";
        else if (v->dist == API_DIST_BLOCK && sb.ndims != v->bdims)
            why = "stores a block of another number of dimensions";
        for (int d = 0; !why && v->dist == API_DIST_BLOCK && d < v->bdims; d++)
            why = sb.global[d] != v->global[d] ? "stores a block of another global shape" : NULL;
        uint64_t vol = 1;
        for (int d = 0; !why && v->dist == API_DIST_BLOCK && d < sb.ndims; d++)
            vol *= sb.count[d];
        if (!why && v->dist == API_DIST_BLOCK && vol != rk->count[i])
            why = "stores a block whose size is not its element count";
        if (why)
            return cn_fail(&ctx->err, CAIRN_EMISMATCH, "variable '%s': generation %ld was "
                           "written by %s; this run has %s: stored rank %u %s", v->name,
                           p->src->gen, p->was, p->now, r, why);
        box g = {0}, nb = {0};
        new_box(v, &g, &nb);
        if (v->dist == API_DIST_REPLICATED) {
            b[3] = b[4] = 1, b[5] = (int64_t)v->count;
            continue;
        }
        for (int d = 0; d < 3; d++)
            b[d] = 0, b[3 + d] = 1;
        for (int d = 0; d < sb.ndims; d++) {
            b[3 - sb.ndims + d] = (int64_t)sb.start[d];
            b[6 - sb.ndims + d] = (int64_t)sb.count[d];
        }
    }
    return 0;
}

static box rec_box(const int64_t *b)
{
    box x;
    for (int d = 0; d < 3; d++)
        x.s[d] = (uint64_t)b[d], x.c[d] = (uint64_t)b[3 + d];
    return x;
}

/*
 * The datatype of what moves between a stored rank (boxes REC) and new rank
 * Q's blocks: for each variable, the overlap of the two as a subarray of the
 * buffer it lives in (BUFS[i] holding the stored box when SEND, else this
 * rank's block), all in one struct of absolute addresses (MPI_BOTTOM), so
 * pieces go straight from the decoded stored block into the scratch copy of
 * the new one, with no packing. *COUNT 0 (and MPI_BYTE) when nothing overlaps.
 */
static int piece_type(const remap *p, const int64_t *rec, int q, bool send, void *const *bufs,
                      MPI_Datatype *out, int *count)
{
    size_t nv = p->vars.n;
    int k = 0, rc = 0;
    *out = MPI_BYTE, *count = 0;
    for (size_t i = 0; i < nv && rc == 0; i++) {
        box sb = rec_box(rec + REC_VAR * i), o;
        const box *nb = &p->nb[(size_t)q * nv + i];
        if (!overlap(&sb, nb, &o))
            continue;
        const box *in = send ? &sb : nb;
        int sizes[3], sub[3], starts[3];
        for (int d = 0; d < 3; d++) {
            if (in->c[d] > INT_MAX)
                return cn_fail(&p->ctx->err, CAIRN_ENOTSUP, "remap: '%s': a block of more "
                               "than %d elements in a dimension", p->vars.v[i]->name, INT_MAX);
            sizes[d] = (int)in->c[d], sub[d] = (int)o.c[d], starts[d] = (int)(o.s[d] - in->s[d]);
        }
        MPI_Datatype el, box_t;
        MPI_Aint at;
        if (MPI_Type_contiguous((int)p->es[i], MPI_BYTE, &el) != MPI_SUCCESS)
            return cn_fail(&p->ctx->err, CAIRN_EMPI, "MPI_Type_contiguous failed");
        if (MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_C, el, &box_t) !=
                MPI_SUCCESS ||
            MPI_Get_address(bufs[i], &at) != MPI_SUCCESS)
            rc = cn_fail(&p->ctx->err, CAIRN_EMPI, "MPI_Type_create_subarray failed");
        MPI_Type_free(&el);
        if (rc < 0)
            break;
        p->pt[k] = box_t, p->pd[k] = at, p->pl[k] = 1;
        k++;
    }
    if (rc == 0 && k > 0) {
        if (MPI_Type_create_struct(k, p->pl, p->pd, p->pt, out) != MPI_SUCCESS ||
            MPI_Type_commit(out) != MPI_SUCCESS)
            rc = cn_fail(&p->ctx->err, CAIRN_EMPI, "MPI_Type_create_struct failed");
        else
            *count = 1;
    }
    for (int x = 0; x < k; x++)
        MPI_Type_free(&p->pt[x]);
    return rc;
}

/* One round: this rank reads stored rank R (-1: none) with RD. Agreed. */
static int round_once(remap *p, rm_reader *rd, long r)
{
    cairn_ctx *ctx = p->ctx;
    size_t nv = p->vars.n, stride = REC_HEAD + REC_VAR * nv;
    int size = ctx->size;
    int64_t *me = p->me;
    rm_rank rk = {0};
    memset(me, 0, sizeof *me * stride);
    int rc = 0;
    if (r >= 0)
        rc = rm_read(rd, (uint32_t)r, &rk);
    if (rc == 0 && r >= 0)
        rc = stored_blocks(p, (uint32_t)r, &rk, me + REC_HEAD);
    me[0] = rc, me[1] = r;
    if (MPI_Allgather(me, (int)stride, MPI_INT64_T, p->recs, (int)stride, MPI_INT64_T,
                      ctx->comm) != MPI_SUCCESS)
        rc = rc ? rc : cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allgather failed");
    if ((rc = api_agree(ctx, rc)) < 0)
        goto out;
    int *sc = p->cnt, *rcv = sc + size, *zero = sc + 2 * size;
    MPI_Datatype *st = p->types, *rt = p->types + size;
    for (int q = 0; q < size; q++)
        st[q] = rt[q] = MPI_BYTE, sc[q] = rcv[q] = zero[q] = 0;
    for (int q = 0; rc == 0 && q < size; q++) {
        const int64_t *rec = p->recs + (size_t)q * stride;
        if (r >= 0)
            rc = piece_type(p, me + REC_HEAD, q, true, rk.data, &st[q], &sc[q]);
        if (rc == 0 && rec[1] >= 0)
            rc = piece_type(p, rec + REC_HEAD, ctx->rank, false, (void *const *)p->stage,
                            &rt[q], &rcv[q]);
    }
    if ((rc = api_agree(ctx, rc)) == 0 &&
        MPI_Alltoallw(MPI_BOTTOM, sc, zero, st, MPI_BOTTOM, rcv, zero, rt, ctx->comm) !=
            MPI_SUCCESS)
        rc = cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Alltoallw failed");
    for (int q = 0; q < size; q++) {
        if (sc[q])
            MPI_Type_free(&st[q]);
        if (rcv[q])
            MPI_Type_free(&rt[q]);
    }
    for (int q = 0; rc == 0 && q < size; q++) { /* every element received once */
        const int64_t *rec = p->recs + (size_t)q * stride;
        for (size_t i = 0; rec[1] >= 0 && i < nv && rc == 0; i++) {
            box sb = rec_box(rec + REC_HEAD + REC_VAR * i), o;
            const box *mb = &p->nb[(size_t)ctx->rank * nv + i];
            if (overlap(&sb, mb, &o) && !mark_box(p->seen[i], mb, &o))
                rc = cn_fail(&ctx->err, CAIRN_EMISMATCH, "variable '%s': the stored blocks of "
                             "generation %ld overlap (stored rank %lld's and another's)",
                             p->vars.v[i]->name, p->src->gen, (long long)rec[1]);
        }
    }
    rc = api_agree(ctx, rc);
out:
    rm_rank_free(&rk, nv);
    return rc;
}

/* Every element of every block received? */
static int covered(remap *p)
{
    for (size_t i = 0; i < p->vars.n; i++) {
        const api_var *v = p->vars.v[i];
        uint64_t got = 0;
        for (uint64_t k = 0; k < v->count / 8; k++)
            got += (uint64_t)__builtin_popcount(p->seen[i][k]);
        for (uint64_t k = v->count / 8 * 8; k < v->count; k++)
            got += (p->seen[i][k / 8] >> (k % 8)) & 1u;
        if (got != v->count)
            return cn_fail(&p->ctx->err, CAIRN_EMISMATCH, "variable '%s': the stored blocks of "
                           "generation %ld cover %llu of the %zu elements of this rank's block%s",
                           v->name, p->src->gen, (unsigned long long)got, v->count,
                           v->dist == API_DIST_REPLICATED ? " (stored rank 0's copy)" : "");
    }
    return 0;
}

/* Collective: the protected variables to remap, the same on every rank. */
static int gather_vars(remap *p)
{
    cairn_ctx *ctx = p->ctx;
    size_t nv = 0;
    p->vars.v = calloc(ctx->nvars ? ctx->nvars : 1, sizeof *p->vars.v);
    int rc = p->vars.v ? 0 : cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    uint64_t h[2] = {0, 0};
    for (size_t i = 0; rc == 0 && i < ctx->nvars; i++) {
        api_var *v = &ctx->vars[i];
        if (v->kind != CN_KIND_VAR)
            continue;
        p->vars.v[nv++] = v;
        uint64_t d[2 + 2 * CAIRN_MAX_DIMS] = {(uint64_t)v->type, (uint64_t)v->dist};
        for (int k = 0; k < CAIRN_MAX_DIMS && v->dist == API_DIST_BLOCK; k++)
            d[2 + k] = k < v->bdims ? v->global[k] : 0;
        if (v->dist == API_DIST_REPLICATED)
            d[2] = v->count;
        h[0] = h[0] * 1099511628211ull ^ cn_hash(v->name, strlen(v->name));
        h[0] = h[0] * 1099511628211ull ^ cn_hash(d, sizeof d);
    }
    p->vars.n = nv;
    h[1] = ~h[0];
    uint64_t mx[2] = {0, 0};
    if (MPI_Allreduce(h, mx, 2, MPI_UINT64_T, MPI_MAX, ctx->comm) != MPI_SUCCESS)
        rc = rc ? rc : cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allreduce failed");
    if (rc == 0 && (mx[0] != h[0] || mx[1] != h[1]))
        rc = cn_fail(&ctx->err, CAIRN_EINVAL, "restart onto another layout: the ranks protect "
                     "different variables (names, types, global shapes or replicated ones "
                     "differ)");
    rc = api_agree(ctx, rc);
    CN_TRY(rc);
    p->es = calloc(nv, sizeof *p->es);
    p->gshape = calloc(nv, sizeof *p->gshape);
    p->nb = calloc((size_t)ctx->size * nv, sizeof *p->nb);
    p->stage = calloc(nv, sizeof *p->stage);
    p->seen = calloc(nv, sizeof *p->seen);
    p->recs = calloc((size_t)ctx->size * (REC_HEAD + REC_VAR * nv), sizeof *p->recs);
    p->me = calloc(REC_HEAD + REC_VAR * nv, sizeof *p->me);
    p->cnt = calloc(3 * (size_t)ctx->size, sizeof *p->cnt);
    p->types = calloc(2 * (size_t)ctx->size, sizeof *p->types);
    p->pt = calloc(nv ? nv : 1, sizeof *p->pt);
    p->pd = calloc(nv ? nv : 1, sizeof *p->pd);
    p->pl = calloc(nv ? nv : 1, sizeof *p->pl);
    rc = p->es && p->gshape && p->nb && p->stage && p->seen && p->recs && p->me && p->cnt &&
                 p->types && p->pt && p->pd && p->pl
             ? 0 : cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    box *mine = calloc(nv ? nv : 1, sizeof *mine);
    if (rc == 0 && !mine)
        rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    for (size_t i = 0; rc == 0 && i < nv; i++) {
        const api_var *v = p->vars.v[i];
        p->es[i] = cairn_type_size(v->type);
        new_box(v, &p->gshape[i], &mine[i]);
        p->stage[i] = malloc(v->count * p->es[i] + 1);
        p->seen[i] = calloc(v->count / 8 + 1, 1);
        if (!p->stage[i] || !p->seen[i])
            rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory for a copy of '%s'", v->name);
    }
    rc = api_agree(ctx, rc);
    if (rc == 0 && MPI_Allgather(mine, (int)(sizeof *mine * nv), MPI_BYTE, p->nb,
                                 (int)(sizeof *mine * nv), MPI_BYTE, ctx->comm) != MPI_SUCCESS)
        rc = api_agree(ctx, cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allgather failed"));
    free(mine);
    return rc;
}

static void remap_free(remap *p)
{
    for (size_t i = 0; i < p->vars.n; i++) {
        if (p->stage)
            free(p->stage[i]);
        if (p->seen)
            free(p->seen[i]);
    }
    free(p->vars.v), free(p->es), free(p->gshape), free(p->nb), free(p->stage), free(p->seen);
    free(p->recs), free(p->me), free(p->cnt), free(p->types), free(p->pt), free(p->pd);
    free(p->pl);
}

/* Collective: restore from SRC, stored rank r read by rank OWNER[r]. */
static int remap_from(cairn_ctx *ctx, const rm_source *src, const int *owner)
{
    remap p = {.ctx = ctx, .src = src};
    api_layout_str(p.was, sizeof p.was, (int)src->nranks, (int)src->nnodes);
    api_layout_str(p.now, sizeof p.now, ctx->nranks, ctx->nnodes);
    int rc = gather_vars(&p); /* agreed, as every step below */
    long *list = rc == 0 ? malloc(sizeof *list * (src->nranks + 1)) : NULL;
    if (rc == 0)
        rc = api_agree(ctx, list ? 0 : cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory"));
    size_t nlist = 0, rounds = 0;
    if (rc == 0) {
        int *per = calloc((size_t)ctx->size, sizeof *per);
        for (uint32_t r = 0; r < src->nranks; r++) {
            if (owner[r] == ctx->rank)
                list[nlist++] = r;
            if (per && ++per[owner[r]] > (int)rounds)
                rounds = (size_t)per[owner[r]];
        }
        rc = api_agree(ctx, per ? 0 : cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory"));
        free(per);
    }
    rm_reader *rd = NULL;
    if (rc == 0)
        rc = api_agree(ctx, nlist ? rm_reader_open(ctx, src, &p.vars, &rd) : 0);
    for (size_t t = 0; rc == 0 && t < rounds; t++)
        rc = round_once(&p, rd, t < nlist ? list[t] : -1);
    rm_reader_close(rd);
    free(list);
    if (rc == 0)
        rc = api_agree(ctx, covered(&p));
    if (rc == 0) { /* routed files are not remapped: none is restored */
        api_routes_end(ctx);
        rc = api_agree(ctx, api_staging_empty(ctx));
    }
    if (rc == 0)
        for (size_t i = 0; i < p.vars.n; i++)
            if (p.vars.v[i]->count)
                memcpy(p.vars.v[i]->ptr, p.stage[i], p.vars.v[i]->count * p.es[i]);
    remap_free(&p);
    return rc;
}

/* Collective: restore from SRC (node-local with OWNER, else the PFS). */
static int run_source(cairn_ctx *ctx, const rm_source *src, const int *owner, long *got)
{
    int *pfs_owner = NULL, rc = 0;
    if (src->where == RM_PFS) {
        pfs_owner = malloc(sizeof *pfs_owner * src->nranks);
        rc = pfs_owner ? 0 : cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
        for (uint32_t r = 0; pfs_owner && r < src->nranks; r++)
            pfs_owner[r] = (int)((r / src->group) % (uint32_t)ctx->size);
        CN_TRY(api_agree(ctx, rc));
        owner = pfs_owner;
    }
    rc = remap_from(ctx, src, owner);
    free(pfs_owner);
    CN_TRY(rc);
    char was[96], now[96];
    api_layout_str(was, sizeof was, (int)src->nranks, (int)src->nnodes);
    api_layout_str(now, sizeof now, ctx->nranks, ctx->nnodes);
    if (ctx->rank == 0)
        cn_info("restored generation %ld of %s onto %s (remapped from %s)", src->gen, was, now,
                src->where == RM_LOCAL ? "node-local storage" : "the PFS");
    api_incr_reset(ctx);
    ctx->last_id = src->gen;
    *got = src->gen;
    ctx->msg[0] = '\0';
    return 0;
}

int api_remap(cairn_ctx *ctx, long id, long *got)
{
    long bound = id == CAIRN_LATEST ? LONG_MAX : id;
    cn_err_clear(&ctx->err);
    long mine = ctx->node_rank == 0 ? rm_local_newest(ctx, bound) : -1, g = -1;
    if (MPI_Allreduce(&mine, &g, 1, MPI_LONG, MPI_MAX, ctx->comm) != MPI_SUCCESS)
        return api_agree(ctx, cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allreduce failed"));
    if (id != CAIRN_LATEST && g != id)
        g = -1;
    rm_source pfs, loc = {0};
    CN_TRY(rm_pfs_plan(ctx, bound, &pfs));
    if (id != CAIRN_LATEST && pfs.gen != id)
        pfs.gen = -1;
    if (g < 0 && pfs.gen < 0)
        return 1; /* nothing of another layout: not ours to answer */
    int *owner = NULL, rc = 0;
    uint32_t missing = 0, first = 0;
    if (g >= 0) {
        CN_TRY(rm_local_plan(ctx, g, &loc, &owner));
        for (uint32_t r = loc.nranks; r-- > 0;)
            if (owner[r] < 0)
                missing++, first = r;
    }
    if (g >= 0 && missing == 0 && g >= pfs.gen) {
        rc = run_source(ctx, &loc, owner, got);
        free(owner);
        if (rc != CAIRN_ECORRUPT || pfs.gen < 0) /* damaged: the PFS copy may do */
            return rc;
        if (ctx->rank == 0)
            cn_warn("generation %ld on node-local storage cannot be remapped (%s); remapping "
                    "PFS generation %ld", g, ctx->msg, pfs.gen);
        return run_source(ctx, &pfs, NULL, got);
    }
    free(owner);
    if (pfs.gen >= 0)
        return run_source(ctx, &pfs, NULL, got);
    char was[96], now[96];
    api_layout_str(was, sizeof was, (int)loc.nranks, (int)loc.nnodes);
    api_layout_str(now, sizeof now, ctx->nranks, ctx->nnodes);
    char hint[160] = "";
    if (loc.level >= CAIRN_LEVEL_PARTNER) /* copies or parity: lost nodes can be rebuilt */
        snprintf(hint, sizeof hint, " (level %d: rebuild lost nodes first with cairn rebuild "
                 "--np %u under the layout that wrote it)", loc.level, loc.nranks);
    rc = cn_fail(&ctx->err, CAIRN_ELOST, "generation %ld was written by %s; this run has %s: "
                 "%u stored ranks (rank %u the first) are on nodes not in this run or lost from "
                 "their node's storage, and the PFS holds no copy to remap%s", g, was, now,
                 missing, first, hint);
    return api_agree(ctx, rc);
}
