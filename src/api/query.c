/*
 * query.c - cairn_restart_query: what cairn_restart(CAIRN_LATEST) would do,
 * for generations up to a bound, with nothing written (no rebuild, no
 * staging, no pruning, no daemon held or dropped, no protected byte).
 *
 * The restart's steps, each dry:
 *   1. recovery (api_recover_plan): which generation a rebuild would make
 *      whole, at which level and for which nodes; every node verifies its
 *      files of the candidates as a restart's recovery does;
 *   2. the PFS, by restart.c's own choice (api_pfs_instead): its newest
 *      generation (of this rank count; else job.restart_from's) if newer
 *      than what levels 1-3 give, or if they give nothing, or lost more
 *      nodes than they rebuild (CAIRN_ELOST: READY from the PFS, and
 *      UNUSABLE only without a usable PFS copy): the index decoded, and
 *      every aggregated file checked against the index (size, checksum,
 *      group table) by a leader of a node whose ranks it holds; a damaged
 *      one is passed over, as a restart's staging would pass it over;
 *   3. the pick (api_pick, the restart's own loop): the newest generation
 *      every rank can use, every link of its chain opened and every block
 *      checksum verified on every rank; on the nodes step 1 would rebuild,
 *      the chain's links stand in for the files the rebuild would write
 *      (which it verifies against the survivors' checksums).
 * Not looked at: the protected variables (the query may come before any
 * cairn_protect), and whether each compressed frame decodes (only a bug or
 * a crafted file makes a frame that passes its checksums fail to decode;
 * the restart then takes an older generation, so may restore an older id
 * than the query said).
 * The plan says NONE only when a restart would return CAIRN_ENOENT; its
 * UNUSABLE code and message are the restart's.
 */
#include "api/api.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* api_try_fn, dry: verify G's chain on the ranks that hold it on disk. */
static int try_dry(cairn_ctx *ctx, const api_gen *g, const api_gen *all, int n, long *broken,
                   void *arg)
{
    (void)arg;
    bool stand_in = false; /* a link not on disk here yet: the rebuild would write it */
    int depth = 0;
    for (const api_gen *x = g; x && depth <= n; depth++) {
        stand_in |= x->rebuilt;
        x = x->parent >= 0 ? api_gen_find(all, n, x->parent) : NULL;
    }
    api_chain ch = {0};
    int rc = stand_in ? 0 : api_chain_open(ctx, ctx->rank, g, all, n, &ch);
    long mine = ch.broken >= 0 ? ch.broken : LONG_MAX, low = LONG_MAX;
    api_chain_close(&ch);
    if (MPI_Allreduce(&mine, &low, 1, MPI_LONG, MPI_MIN, ctx->comm) != MPI_SUCCESS)
        rc = rc ? rc : cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allreduce failed");
    *broken = low == LONG_MAX ? -1 : low;
    return api_agree(ctx, rc);
}

/* This rank's inventory, with R's chain standing in on a node R would rebuild. */
static int inventory(cairn_ctx *ctx, const api_recovery *r, api_gen **g, int *n)
{
    CN_TRY(api_local_gens(ctx, ctx->rank, g, n));
    if (r->id < 0 || !r->lost_here)
        return 0;
    api_gen *more = realloc(*g, sizeof **g * (size_t)(*n + r->nchain));
    CN_FAIL_IF(!more, &ctx->err, CAIRN_ENOMEM, "out of memory");
    *g = more;
    for (int i = 0; i < r->nchain; i++) {
        api_gen *x = (api_gen *)api_gen_find(*g, *n, r->chain[i].id);
        if (!x) {
            x = &(*g)[(*n)++];
            memset(x, 0, sizeof *x);
        }
        *x = (api_gen){.id = r->chain[i].id, .level = r->level, .parent = r->chain[i].parent,
                       .base = -1, .rebuilt = true, .seconds = r->seconds};
        memcpy(x->label, r->label, sizeof x->label);
    }
    return 0;
}

/* Leaders: the aggregated files of the PFS generation of index X that hold
 * ranks of this node, checked against the index. */
static int link_files_ok(cairn_ctx *ctx, int jobfd, const cn_pindex *x)
{
    char gen[64];
    cn_gen_dirname(gen, sizeof gen, x->generation);
    int genfd = cn_dir_open(jobfd, gen, false, &ctx->err), rc = genfd < 0 ? genfd : 0;
    for (uint32_t f = 0; rc == 0 && f < x->nfiles; f++) {
        if (!cn_pindex_file_holds(x, f, api_rank_on_node, ctx))
            continue;
        char name[64];
        cn_agg_filename(name, sizeof name, f);
        const uint8_t *map = NULL;
        cz_agg_file *af = NULL;
        rc = lvl_pfs_map(genfd, name, &x->files[f], &map, &ctx->err);
        if (rc == 0)
            rc = cz_agg_open(map, x->files[f].size, &af, &ctx->err);
        cz_agg_close(af);
        lvl_pfs_unmap(map, &x->files[f]);
        if (rc < 0)
            cn_err_prefix(&ctx->err, "PFS generation %lld, %s: ", (long long)x->generation, name);
    }
    if (genfd >= 0)
        close(genfd);
    return rc == CAIRN_ENOENT || rc == -ENOENT ? CAIRN_ECORRUPT : rc;
}

/* Leaders: the files of PFS generation ID (of ctx->pfs_job) and, for an
 * increment, of every link of its chain, that hold ranks of this node. */
static int pfs_files_ok(cairn_ctx *ctx, long id)
{
    cn_pindex x = {0}, *links = NULL;
    int n = 0;
    int jobfd = api_pfs_source(ctx, ctx->pfs_job, id, &ctx->err);
    int rc = jobfd < 0 ? jobfd : lvl_pfs_index(jobfd, id, &x, &ctx->err);
    if (rc == 0 && (rc = link_files_ok(ctx, jobfd, &x)) == 0 &&
        (rc = lvl_pfs_links(jobfd, &x, &links, &n, &ctx->err)) < 0)
        cn_err_prefix(&ctx->err, "PFS generation %ld: ", id);
    for (int i = 0; rc == 0 && i < n; i++)
        rc = link_files_ok(ctx, jobfd, &links[i]);
    lvl_pfs_links_free(links, n);
    cn_pindex_free(&x);
    if (jobfd >= 0)
        close(jobfd);
    return rc;
}

/* Leaders: does this node hold generation ID of this job and layout? */
static int holds(cairn_ctx *ctx, long id)
{
    char gen[64];
    cn_gen_dirname(gen, sizeof gen, id);
    cn_err ignored = {0}, saved = ctx->err;
    int genfd = cn_dir_open(ctx->nodefd, gen, false, &ignored), ok = 0;
    cn_manifest m;
    if (genfd >= 0 && api_read_manifest(ctx, genfd, &m) == 0) {
        ok = api_manifest_of(ctx, &m, id, ctx->node);
        cn_manifest_free(&m);
    }
    ctx->err = saved;
    if (genfd >= 0)
        close(genfd);
    return ok;
}

/* Collective, as restart.c's from_pfs: would a restart read a PFS
 * generation (<= BOUND) instead of levels 1-3, after the recovery gave
 * LOCAL (0 or CAIRN_ELOST) and WHOLE? The same choice (api_pfs_instead),
 * with each candidate's files checked where the restart would read them.
 * Its id (and PLAN filled), or -1. *RC: errors that stopped the look. */
static long pfs_plan(cairn_ctx *ctx, long bound, int local, long whole, cairn_restart_plan *plan,
                     int *rc)
{
    for (*rc = 0;;) {
        long p = api_pfs_instead(ctx, CAIRN_LATEST, bound, local, whole, rc);
        if (*rc < 0 || p < 0)
            return -1;
        int ok = api_agree(ctx, ctx->node_rank == 0 ? pfs_files_ok(ctx, p) : 0);
        if (ok == CAIRN_EMPI)
            return *rc = ok, -1;
        if (ok < 0) { /* damaged: a restart's staging fails, notes it and goes older */
            api_note_lost(ctx, p, ok == CAIRN_EFORMAT ? ok : CAIRN_ECORRUPT, "%s", ctx->msg);
            bound = p - 1;
            continue;
        }
        struct {
            uint64_t raw;
            char label[CAIRN_LABEL_MAX + 1];
        } idx = {0};
        if (ctx->rank == 0) { /* the index again, for its bytes and label */
            cn_err err = {0};
            cn_pindex x;
            int jobfd = api_pfs_source(ctx, ctx->pfs_job, p, &err);
            if (jobfd >= 0 && lvl_pfs_index(jobfd, p, &x, &err) == 0) {
                idx.raw = x.raw;
                memcpy(idx.label, x.label, sizeof idx.label);
                cn_pindex_free(&x);
            }
            if (jobfd >= 0)
                close(jobfd);
        }
        int have = ctx->node_rank == 0 ? holds(ctx, p) : 0, held = 0;
        if (MPI_Bcast(&idx, sizeof idx, MPI_BYTE, 0, ctx->comm) != MPI_SUCCESS ||
            MPI_Allreduce(&have, &held, 1, MPI_INT, MPI_SUM, ctx->comm) != MPI_SUCCESS)
            return *rc = api_agree(ctx, cn_fail(&ctx->err, CAIRN_EMPI, "MPI failed")), -1;
        *plan = (cairn_restart_plan){.status = CAIRN_RESTART_READY, .id = p,
                                     .level = CAIRN_LEVEL_PFS, .nodes_lost = ctx->nnodes - held,
                                     .raw = idx.raw};
        memcpy(plan->label, idx.label, sizeof plan->label);
        return p;
    }
}

/* Collective: PLAN for the generation the pick took, GOT, from this rank's
 * inventory G[0..N-1] and the recovery R. */
static int fill_plan(cairn_ctx *ctx, long got, const api_gen *g, int n, const api_recovery *r,
                     cairn_restart_plan *plan)
{
    const api_gen *x = api_gen_find(g, n, got);
    uint64_t raw = x && !x->rebuilt ? x->raw : 0, total = 0;
    int level = x ? x->level : 0, low = 0;
    api_gen first = x ? *x : (api_gen){0};
    if (MPI_Allreduce(&raw, &total, 1, MPI_UINT64_T, MPI_SUM, ctx->comm) != MPI_SUCCESS ||
        MPI_Allreduce(&level, &low, 1, MPI_INT, MPI_MIN, ctx->comm) != MPI_SUCCESS ||
        MPI_Bcast(&first, sizeof first, MPI_BYTE, 0, ctx->comm) != MPI_SUCCESS)
        return api_agree(ctx, cn_fail(&ctx->err, CAIRN_EMPI, "MPI failed"));
    *plan = (cairn_restart_plan){.status = CAIRN_RESTART_READY, .id = got, .level = low,
                                 .rebuild = r->rebuild, .nodes_lost = r->nodes_lost,
                                 .raw = total + (got == r->id ? r->lost_raw : 0)};
    memcpy(plan->label, first.label, sizeof plan->label);
    return 0;
}

CAIRN_EXPORT int cairn_restart_query(cairn_ctx *ctx, long max_id, cairn_restart_plan *plan)
{
    if (!ctx)
        return CAIRN_EINVAL;
    api_enter(ctx);
    int rc = max_id < 0 && max_id != CAIRN_LATEST
                 ? cn_fail(&ctx->err, CAIRN_EINVAL, "restart_query: bad generation id %ld", max_id)
             : !plan ? cn_fail(&ctx->err, CAIRN_EINVAL, "restart_query: plan is NULL")
                     : 0;
    CN_TRY(api_agree(ctx, rc));
    cairn_restart_plan out = {.status = CAIRN_RESTART_NONE, .id = -1};
    long bound = max_id == CAIRN_LATEST ? LONG_MAX : max_id;
    api_notes_reset(ctx, bound);
    api_recovery *r = calloc(1, sizeof *r);
    rc = api_agree(ctx, r ? 0 : cn_fail(&ctx->err, CAIRN_ENOMEM, "out of memory"));
    if (rc < 0) {
        free(r);
        return rc;
    }
    rc = api_recover_plan(ctx, bound, r); /* step 1 */
    long p = -1;
    if (rc == 0 || rc == CAIRN_ELOST) { /* step 2, as restart.c's from_pfs */
        char lost[sizeof ctx->msg] = "";
        if (rc == CAIRN_ELOST)
            snprintf(lost, sizeof lost, "%s", ctx->msg);
        int prc = 0;
        p = pfs_plan(ctx, bound, rc, r->id, &out, &prc);
        if (prc < 0) {
            rc = prc;
        } else if (p >= 0) {
            rc = 0; /* the PFS makes up for what levels 1-3 lost, if they did */
        } else if (rc == CAIRN_ELOST) { /* too much lost, no PFS to make up */
            api_loss_message(ctx, lost);
            out = (cairn_restart_plan){.status = CAIRN_RESTART_UNUSABLE, .code = rc, .id = -1};
            rc = 0;
        }
    }
    if (rc == 0 && p < 0 && out.status == CAIRN_RESTART_NONE) { /* step 3 */
        api_gen *g = NULL;
        int n = 0;
        long got = -1;
        rc = api_agree(ctx, inventory(ctx, r, &g, &n));
        if (rc == 0)
            rc = api_pick(ctx, CAIRN_LATEST, bound, g, n, try_dry, NULL, &got);
        if (rc == 0) {
            rc = fill_plan(ctx, got, g, n, r, &out);
        } else if (rc == CAIRN_ENOENT) {
            rc = 0; /* nothing at all: start fresh */
            ctx->msg[0] = '\0';
        } else if (rc == CAIRN_ECORRUPT || rc == CAIRN_ELOST || rc == CAIRN_EMISMATCH ||
                   rc == CAIRN_EFORMAT) {
            out = (cairn_restart_plan){.status = CAIRN_RESTART_UNUSABLE, .code = rc, .id = -1};
            rc = 0; /* the message stays: why */
        }
        free(g);
    }
    free(r);
    if (rc < 0)
        return rc;
    if (out.status == CAIRN_RESTART_READY)
        ctx->msg[0] = '\0'; /* generations passed over on the way are no failure */
    *plan = out;
    return 0;
}
