/*
 * incr.c - incremental checkpoints on the way out (after Jitsumoto et al.,
 * section 2.3): store only the blocks that changed since the parent.
 *
 * The parent of a checkpoint at level L is the newest generation at level L
 * or above that this context wrote or restored (ctx->incr[L]); so every link
 * of a level-3 chain has parity of its own and a lost node's chain can be
 * rebuilt link by link by decoding, while level-1 checkpoints in between
 * still diff against the newest generation. The plan, collectively:
 *   1. agree on the parent (none: incr.mode off, no table yet, a different
 *      block size, or a chain of incr.full_every generations already);
 *   2. hash every variable in blocks (XXH3-128; a hint skips it) and diff
 *      against the parent's hashes of the same variable;
 *   3. sum changed and total blocks over all ranks: more than
 *      incr.max_changed percent makes the generation full after all.
 * Once codecs and bounds are chosen, api_incr_mark stores whole a lossy
 * variable whose parent was stored within a looser bound than it is now (its
 * unchanged blocks would keep the parent's error). Routed files are always
 * stored whole. After the generation completes, its hashes (and each
 * variable's bound) become the table of the levels it reached
 * (api_incr_commit).
 *
 * Ownership: the plan owns its arrays until api_incr_commit takes the hash
 * arrays into a table; api_plan_free frees what is left.
 */
#include "core/core.h"
#include "levels/local/local.h"

#include <stdlib.h>
#include <string.h>

static int table_level(int level) { return level > 3 ? 3 : level; }

void api_incr_reset(cairn_ctx *ctx)
{
    for (int l = 1; l <= 3; l++) {
        incr_tab_unref(ctx->incr[l]);
        ctx->incr[l] = NULL;
    }
}

void api_plan_free(api_plan *p)
{
    for (size_t i = 0; i < p->n; i++) {
        if (p->hash)
            free(p->hash[i]);
        if (p->stored_hash && p->stored_hash[i] != (p->hash ? p->hash[i] : NULL))
            free(p->stored_hash[i]);
        if (p->runs)
            free(p->runs[i]);
    }
    free(p->hash), free(p->stored_hash), free(p->nstored_hash);
    free(p->runs), free(p->nruns), free(p->delta), free(p->bound);
    incr_tab_unref(p->pt);
    memset(p, 0, sizeof *p);
}

/* The parent every rank can use: the table of LEVEL, if its chain can grow. */
static int agree_parent(cairn_ctx *ctx, int level, const incr_tab **parent)
{
    const incr_tab *t = ctx->incr[table_level(level)];
    long mine = t && t->block == ctx->cfg.incr_block &&
                        t->depth + 1 < (uint32_t)ctx->cfg.incr_full_every
                    ? (long)t->gen
                    : -1;
    long lo = mine, hi = mine;
    if (MPI_Allreduce(&mine, &lo, 1, MPI_LONG, MPI_MIN, ctx->comm) != MPI_SUCCESS ||
        MPI_Allreduce(&mine, &hi, 1, MPI_LONG, MPI_MAX, ctx->comm) != MPI_SUCCESS)
        return cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allreduce failed");
    if (lo != hi)
        cn_warn("ranks disagree on the parent generation (%ld..%ld): writing a full one", lo, hi);
    *parent = lo == hi && lo >= 0 ? t : NULL;
    return 0;
}

static int alloc_plan(api_plan *p, size_t n)
{
    p->n = n;
    size_t k = n ? n : 1;
    p->hash = calloc(k, sizeof *p->hash);
    p->stored_hash = calloc(k, sizeof *p->stored_hash);
    p->nstored_hash = calloc(k, sizeof *p->nstored_hash);
    p->runs = calloc(k, sizeof *p->runs);
    p->nruns = calloc(k, sizeof *p->nruns);
    p->delta = calloc(k, sizeof *p->delta);
    p->bound = calloc(k, sizeof *p->bound);
    return p->hash && p->stored_hash && p->nstored_hash && p->runs && p->nruns && p->delta &&
                   p->bound
               ? 0
               : -1;
}

/* Hash variable I (unless a hint says what it holds) and diff it against the
 * parent's table PT. LAST_ID: the context's newest generation. */
static int plan_var(cairn_ctx *ctx, api_plan *p, size_t i, const incr_tab *pt, long last_id)
{
    api_var *v = &ctx->vars[i];
    int hint = v->hint;
    v->hint = -1;
    if (v->kind != CN_KIND_VAR)
        return 0; /* routed files: whole, no hashes */
    uint64_t size = (uint64_t)v->count * cairn_type_size(v->type);
    uint64_t nb = cn_incr_nblocks(size, p->block);
    if (nb > UINT32_MAX)
        return 0; /* too many blocks to list: whole, no hashes */
    const incr_var *pv = pt ? incr_tab_find(pt, v->name) : NULL;
    p->blocks += nb;
    if (hint == CAIRN_CHANGED) {
        p->changed += nb; /* whole, hashes unknown */
        return 0;
    }
    if (hint == CAIRN_UNCHANGED && pv && pv->size == size && pt->gen == last_id) {
        p->delta[i] = true; /* no runs: every block as in the parent */
        if (pv->hash && !(p->hash[i] = malloc(sizeof(cn_h128) * nb)))
            return cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory for block hashes");
        if (pv->hash)
            memcpy(p->hash[i], pv->hash, sizeof(cn_h128) * nb);
        return 0;
    }
    if (nb && !(p->hash[i] = malloc(sizeof(cn_h128) * nb)))
        return cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory for %llu block hashes",
                       (unsigned long long)nb);
    incr_hash(v->ptr, size, p->block, api_threads(ctx), p->hash[i]);
    if (!pv || !pv->hash) { /* new to the chain, or its parent's hashes unknown: whole */
        p->changed += nb;
        return 0;
    }
    uint64_t changed = 0;
    p->runs[i] = malloc(sizeof(cn_run) * incr_max_runs(nb));
    if (!p->runs[i])
        return cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory for runs");
    p->nruns[i] = incr_diff(pv->hash, pv->size, p->hash[i], size, p->block, p->runs[i], &changed);
    p->delta[i] = true;
    p->changed += changed;
    return 0;
}

/* The hashes each entry records: all of a full one's, the runs' of a delta. */
static int stored_hashes(cairn_ctx *ctx, api_plan *p)
{
    for (size_t i = 0; i < p->n; i++) {
        if (!p->hash[i])
            continue;
        if (!p->delta[i]) {
            p->stored_hash[i] = p->hash[i];
            p->nstored_hash[i] = (uint32_t)cn_incr_nblocks(
                (uint64_t)ctx->vars[i].count * cairn_type_size(ctx->vars[i].type), p->block);
            continue;
        }
        uint64_t k = 0;
        for (uint32_t r = 0; r < p->nruns[i]; r++)
            k += p->runs[i][r].count;
        if (k == 0)
            continue;
        if (!(p->stored_hash[i] = malloc(sizeof(cn_h128) * k)))
            return cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory for block hashes");
        k = 0;
        for (uint32_t r = 0; r < p->nruns[i]; r++)
            for (uint32_t b = 0; b < p->runs[i][r].count; b++)
                p->stored_hash[i][k++] = p->hash[i][p->runs[i][r].first + b];
        p->nstored_hash[i] = (uint32_t)k;
    }
    return 0;
}

int api_incr_plan(cairn_ctx *ctx, long id, int level, api_plan *p)
{
    memset(p, 0, sizeof *p);
    p->parent = -1;
    p->base = id;
    if (ctx->cfg.incr_mode == 0) {
        for (size_t i = 0; i < ctx->nvars; i++)
            ctx->vars[i].hint = -1;
        return 0;
    }
    p->block = ctx->cfg.incr_block;
    const incr_tab *pt = NULL;
    CN_TRY(api_agree(ctx, agree_parent(ctx, level, &pt)));
    int rc = alloc_plan(p, ctx->nvars) == 0 ? 0 : cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    for (size_t i = 0; i < ctx->nvars && rc == 0; i++)
        rc = plan_var(ctx, p, i, pt, ctx->last_id);
    CN_TRY(api_agree(ctx, rc));
    uint64_t mine[2] = {p->changed, p->blocks}, all[2] = {0, 0};
    if (MPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, ctx->comm) != MPI_SUCCESS)
        return api_agree(ctx, cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allreduce failed"));
    bool pays = pt && all[0] * 100 <= (uint64_t)ctx->cfg.incr_max_changed * all[1];
    if (pt && !pays && ctx->rank == 0) /* the generation's info line is checkpoint.c's */
        cn_debug("generation %ld: %llu of %llu blocks changed, more than incr.max_changed = "
                "%d%%: written full",
                id, (unsigned long long)all[0], (unsigned long long)all[1],
                ctx->cfg.incr_max_changed);
    if (pays) {
        p->pt = incr_tab_ref(ctx->incr[table_level(level)]); /* the table pt points to */
        p->parent = pt->gen;
        p->base = pt->base;
        p->depth = pt->depth + 1;
    } else {
        for (size_t i = 0; i < p->n; i++) { /* every variable whole (known hashes kept) */
            p->delta[i] = false;
            free(p->runs[i]);
            p->runs[i] = NULL;
            p->nruns[i] = 0;
        }
    }
    return api_agree(ctx, stored_hashes(ctx, p));
}

/*
 * The blocks of variable I that a delta leaves to the parent hold the
 * parent's stored values, within the parent's bound of the true ones: they
 * may stay only if that bound is no looser than the one S is stored within
 * now (a relative bound whose range shrank, a bound tightened or removed).
 * Else the variable is stored whole, with every block's hash.
 */
static void whole_if_looser(api_plan *p, size_t i, const lvl_src *s)
{
    const incr_var *pv = p->delta[i] ? incr_tab_find(p->pt, s->name) : NULL;
    p->bound[i] = s->error_bound;
    if (!pv || pv->bound <= s->error_bound)
        return;
    p->delta[i] = false;
    free(p->runs[i]);
    p->runs[i] = NULL;
    p->nruns[i] = 0;
    if (p->stored_hash[i] != p->hash[i])
        free(p->stored_hash[i]);
    p->stored_hash[i] = p->hash[i];
    p->nstored_hash[i] = p->hash[i] ? (uint32_t)cn_incr_nblocks(s->size, p->block) : 0;
}

void api_incr_mark(api_plan *p, lvl_src *src, size_t n)
{
    for (size_t i = 0; i < n && p->block && i < p->n; i++) {
        whole_if_looser(p, i, &src[i]);
        src[i].flags = p->delta[i] ? CN_ENTRY_DELTA : 0;
        src[i].runs = p->runs[i];
        src[i].nruns = p->nruns[i];
        src[i].hashes = p->stored_hash[i];
        src[i].nhash = p->nstored_hash[i];
    }
}

void api_incr_commit(cairn_ctx *ctx, api_plan *p, long id, int reached)
{
    if (!p->block)
        return;
    incr_tab *t = incr_tab_new(id, p->base, p->depth, p->block);
    for (size_t i = 0; t && i < ctx->nvars; i++) {
        const api_var *v = &ctx->vars[i];
        if (v->kind != CN_KIND_VAR)
            continue;
        if (p->stored_hash[i] == p->hash[i])
            p->stored_hash[i] = NULL; /* the same array: the table takes it */
        cn_h128 *h = p->hash[i];
        p->hash[i] = NULL;
        if (incr_tab_add(t, v->name, (uint64_t)v->count * cairn_type_size(v->type), p->bound[i],
                         h) < 0) {
            incr_tab_unref(t);
            t = NULL;
        }
    }
    if (!t) { /* out of memory: the next checkpoints are full */
        cn_warn("no memory for the block-hash table of generation %ld", id);
        api_incr_reset(ctx);
        return;
    }
    incr_tab_seal(t);
    for (int l = 1; l <= 3; l++) {
        if (l > table_level(reached))
            break;
        incr_tab_unref(ctx->incr[l]);
        ctx->incr[l] = incr_tab_ref(t);
    }
    incr_tab_unref(t);
}
