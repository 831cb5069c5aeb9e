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
 *   rounds   in round t every reader handles its t-th stored rank, twice
 *            (remap_move.c): a survey (read, verified, every frame decoded,
 *            its blocks checked and learnt by all), a check that the stored
 *            blocks cover every element of every new block exactly once, and
 *            only then the move: the pieces (overlaps of stored and new
 *            blocks) in one MPI_Alltoallw a round, straight into protected
 *            memory.
 * Every refusal comes before protected memory is written, so it leaves it
 * unchanged. A replicated variable is stored rank 0's copy, as a block
 * covering the whole of a 1-D array that every new rank asks for whole.
 *
 * Memory per rank: one stored rank's remapped variables decoded (a PFS
 * file's ranks' when reading the PFS; a raw node-local one is lent from its
 * mapped file), decoded ones held from the survey for the move up to the
 * size of its own blocks, and a bit per element of its blocks.
 * Ownership: all buffers are this file's and freed before it returns.
 */
#include "remap/remap_impl.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Collective: the protected variables to remap, the same on every rank. */
static int gather_vars(rm_state *p)
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
    p->es = calloc(nv ? nv : 1, sizeof *p->es);
    p->dst = calloc(nv ? nv : 1, sizeof *p->dst);
    p->nb = calloc((size_t)ctx->size * nv + 1, sizeof *p->nb);
    p->seen = calloc(nv ? nv : 1, sizeof *p->seen);
    p->me = calloc(RM_STRIDE(nv), sizeof *p->me);
    p->cnt = calloc(3 * (size_t)ctx->size, sizeof *p->cnt);
    p->types = calloc(2 * (size_t)ctx->size, sizeof *p->types);
    p->pt = calloc(nv ? nv : 1, sizeof *p->pt);
    p->pd = calloc(nv ? nv : 1, sizeof *p->pd);
    p->pl = calloc(nv ? nv : 1, sizeof *p->pl);
    rc = p->es && p->dst && p->nb && p->seen && p->me && p->cnt && p->types && p->pt &&
                 p->pd && p->pl
             ? 0 : cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    rm_box *mine = calloc(nv ? nv : 1, sizeof *mine), g;
    if (rc == 0 && !mine)
        rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    for (size_t i = 0; rc == 0 && i < nv; i++) {
        const api_var *v = p->vars.v[i];
        p->es[i] = cairn_type_size(v->type);
        p->dst[i] = v->ptr;
        p->room += v->count * p->es[i];
        rm_new_box(v, &g, &mine[i]);
        p->seen[i] = calloc(v->count / 8 + 1, 1);
        if (!p->seen[i])
            rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory to remap '%s'", v->name);
    }
    rc = api_agree(ctx, rc);
    if (rc == 0 && MPI_Allgather(mine, (int)(sizeof *mine * nv), MPI_BYTE, p->nb,
                                 (int)(sizeof *mine * nv), MPI_BYTE, ctx->comm) != MPI_SUCCESS)
        rc = api_agree(ctx, cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allgather failed"));
    free(mine);
    return rc;
}

static void remap_free(rm_state *p)
{
    for (size_t i = 0; p->seen && i < p->vars.n; i++)
        free(p->seen[i]);
    for (size_t t = 0; p->held && t < p->rounds; t++)
        rm_rank_free(&p->held[t], p->vars.n);
    free(p->vars.v), free(p->es), free(p->dst), free(p->nb), free(p->seen), free(p->recs);
    free(p->me), free(p->held), free(p->cnt), free(p->types), free(p->pt), free(p->pd);
    free(p->pl);
}

/* Collective: restore from SRC, stored rank r read by rank OWNER[r]. */
static int remap_from(cairn_ctx *ctx, const rm_source *src, const int *owner)
{
    rm_state p = {.ctx = ctx, .src = src};
    api_layout_str(p.was, sizeof p.was, (int)src->nranks, (int)src->nnodes);
    api_layout_str(p.now, sizeof p.now, ctx->nranks, ctx->nnodes);
    int rc = gather_vars(&p); /* agreed, as every step below */
    long *list = rc == 0 ? malloc(sizeof *list * (src->nranks + 1)) : NULL;
    if (rc == 0)
        rc = api_agree(ctx, list ? 0 : cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory"));
    if (rc == 0) {
        int *per = calloc((size_t)ctx->size, sizeof *per);
        for (uint32_t r = 0; r < src->nranks; r++) {
            if (owner[r] == ctx->rank)
                list[p.nlist++] = r;
            if (per && ++per[owner[r]] > (int)p.rounds)
                p.rounds = (size_t)per[owner[r]];
        }
        p.list = list;
        p.recs = calloc(p.rounds * (size_t)ctx->size * RM_STRIDE(p.vars.n) + 1, sizeof *p.recs);
        p.held = calloc(p.rounds + 1, sizeof *p.held);
        rc = api_agree(ctx, per && p.recs && p.held ? 0
                                                    : cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory"));
        free(per);
    }
    rm_reader *rd = NULL;
    if (rc == 0)
        rc = api_agree(ctx, p.nlist ? rm_reader_open(ctx, src, &p.vars, &rd) : 0);
    if (rc == 0)
        rc = rm_survey(&p, rd);
    if (rc == 0)
        rc = api_agree(ctx, rm_check(&p));
    if (rc == 0) { /* routed files are not remapped: none is restored */
        api_routes_end(ctx);
        rc = api_agree(ctx, api_staging_empty(ctx));
    }
    if (rc == 0)
        rc = rm_move(&p, rd);
    rm_reader_close(rd);
    free(list);
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
        /* damaged: the PFS copy may do, unless the pieces had started to land */
        if (rc != CAIRN_ECORRUPT || pfs.gen < 0 || strstr(ctx->msg, RM_PARTLY))
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
