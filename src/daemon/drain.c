/*
 * drain.c - the newest complete generation to the PFS when the CLI asks
 * (cairn drain, cairn flush), and the generations a dead daemon left half
 * done (below their level, or owed to the PFS and not there: the manifest's
 * CN_MF_PFS), queued again when a new one starts.
 *
 * "Complete" is what a restart would take: every rank of every node has the
 * generation and its chain (api_local_gens), agreed over the daemons
 * (api_common_below). The application may be gone, so the layout comes from
 * the newest manifest of the node; a node with none has no generation, so
 * then none is complete (DONE -1: cairn drain exits 3).
 */
#include "daemon/daemon.h"
#include "levels/pfs/pfs.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The newest generation complete on every node, or -1 (collective). */
static int newest_complete(cairn_ctx *ctx, long *out)
{
    *out = -1;
    int n = 0;
    long *ids = NULL;
    cn_gen_list(ctx->nodefd, &ids, &n, &ctx->err);
    cn_manifest m = {0};
    bool have = false;
    for (int i = 0; i < n && !have; i++)
        have = d_read_manifest(ctx, ids[i], &m) == 0;
    free(ids);
    cn_err_clear(&ctx->err);
    int64_t everywhere = have; /* a node without any generation: none is complete on all */
    int agreed = d_agree_min(ctx, &everywhere, 1);
    if (agreed != 0 || !everywhere) {
        if (have)
            cn_manifest_free(&m);
        return agreed ? cn_fail(&ctx->err, CAIRN_EMPI, "MPI failed between the daemons") : 0;
    }
    int rc = api_dctx_layout(ctx, have ? &m : NULL);
    if (have)
        cn_manifest_free(&m);
    CN_TRY(rc);
    /* Ids every local rank can restore: the first rank's list, filtered. */
    api_gen *all = NULL;
    int nall = 0, first = 1;
    for (int r = 0; rc == 0 && r < ctx->nranks; r++) {
        if ((int)ctx->rank_node[r] != ctx->node)
            continue;
        api_gen *g = NULL;
        int ng = 0;
        rc = api_local_gens(ctx, r, &g, &ng);
        if (rc == 0 && first) {
            all = g, nall = ng, first = 0;
            continue;
        }
        int k = 0;
        for (int i = 0; rc == 0 && i < nall; i++)
            if (api_gen_find(g, ng, all[i].id))
                all[k++] = all[i];
        nall = k;
        free(g);
    }
    rc = api_agree(ctx, rc);
    if (rc == 0)
        *out = api_common_below(ctx, all, nall, LONG_MAX, &rc);
    free(all);
    return api_agree(ctx, rc);
}

/* Node 0 looks at the PFS index of ID; every daemon learns the answer. */
static int on_pfs(cairn_ctx *ctx, long id, uint64_t *bytes)
{
    uint64_t v[2] = {0, 0}; /* present, stored bytes */
    if (ctx->node == 0) {
        cn_err ignored = {0};
        int jobfd = lvl_pfs_open(ctx->cfg.pfs_dir, ctx->job, false, &ignored);
        cn_pindex x;
        if (jobfd >= 0 && lvl_pfs_index(jobfd, id, &x, &ignored) == 0) {
            v[0] = 1, v[1] = x.stored;
            cn_pindex_free(&x);
        }
        if (jobfd >= 0)
            close(jobfd);
    }
    if (MPI_Bcast(v, 2, MPI_UINT64_T, 0, ctx->comm) != MPI_SUCCESS)
        return CAIRN_EMPI;
    *bytes = v[1];
    return (int)v[0];
}

void d_drain(d_state *st, cairn_ctx *ctx, size_t ndrain, int nflush)
{
    d_set_busy(st, 1, -1, -1);
    cn_err_clear(&ctx->err);
    long id = -1;
    uint64_t bytes = 0;
    const char *what = "none";
    int rc = newest_complete(ctx, &id);
    if (rc == 0 && id >= 0 && !ctx->cfg.pfs_dir[0])
        rc = cn_fail(&ctx->err, CAIRN_ECONFIG, "no PFS directory is configured (pfs.dir)");
    int present = rc == 0 && id >= 0 ? on_pfs(ctx, id, &bytes) : 0;
    if (present < 0)
        rc = present;
    else if (present)
        what = "present";
    else if (rc == 0 && id >= 0 && (rc = api_flush(ctx, id)) == 0 && on_pfs(ctx, id, &bytes) > 0)
        what = "flushed";
    if (rc == 0 && id >= 0 && what[0] == 'n')
        rc = cn_fail(&ctx->err, CAIRN_EIO, "generation %ld flushed but its index is missing", id);
    cn_rep rep = {.kind = rc < 0 ? CN_REP_ERR : CN_REP_DONE, .gen = rc < 0 ? -1 : id,
                  .bytes = bytes};
    snprintf(rep.what, sizeof rep.what, "%s", what);
    snprintf(rep.text, sizeof rep.text, "%.500s", ctx->msg); /* cut to a line */
    if (rc < 0)
        cn_warn("drain: %s", ctx->msg);
    else
        cn_info("drain: generation %ld %s (%llu bytes on the PFS)", id, what,
                (unsigned long long)bytes);
    char line[CN_PROTO_LINE];
    int len = cn_rep_format(&rep, line);
    pthread_mutex_lock(&st->mu);
    for (size_t i = 0; i < ndrain; i++) {
        cn_err ignored = {0};
        if (len > 0)
            cn_line_write(st->drain_fds[i], line, (size_t)len, &ignored);
        close(st->drain_fds[i]);
    }
    if (ndrain) /* the clients that came since wait for the next round */
        memmove(st->drain_fds, st->drain_fds + ndrain,
                (st->ndrain - ndrain) * sizeof *st->drain_fds);
    st->ndrain -= ndrain;
    st->flush_asked -= nflush;
    pthread_mutex_unlock(&st->mu);
    d_set_busy(st, 0, -1, rc == 0 && id >= 0 ? id : -1);
}

/* Does the PFS hold generation ID with its index (this daemon alone looks)? */
static bool pfs_has(cairn_ctx *ctx, long id)
{
    cn_err ignored = {0};
    int jobfd = -1;
    if (ctx->cfg.pfs_dir[0])
        jobfd = lvl_pfs_open(ctx->cfg.pfs_dir, ctx->job, false, &ignored);
    cn_pindex x;
    bool has = jobfd >= 0 && lvl_pfs_index(jobfd, id, &x, &ignored) == 0;
    if (has)
        cn_pindex_free(&x);
    if (jobfd >= 0)
        close(jobfd);
    return has;
}

/* Newest first: queue again the generations a dead daemon left below the
 * level they were written for, down to the newest one it raised (older ones
 * are not worth raising now); and the newest generation owed to the PFS
 * (CN_MF_PFS: asked for level 4, or a pfs.every-th checkpoint) that the PFS
 * does not hold with its index, unless it holds a newer one: the daemon died
 * in its flush or before it, and the application may have written newer
 * generations since (synchronously, or to daemons that died too). */
void d_resume(d_state *st, cairn_ctx *ctx)
{
    int n = 0;
    long *ids = NULL;
    cn_gen_list(ctx->nodefd, &ids, &n, &ctx->err);
    bool raised_seen = false, owed_done = !ctx->cfg.pfs_dir[0];
    for (int i = 0; i < n && !(raised_seen && owed_done); i++) {
        cn_manifest m;
        if (d_read_manifest(ctx, ids[i], &m) != 0)
            continue;
        int level = (int)m.level, target = (int)m.target;
        bool raised = level >= CAIRN_LEVEL_PARTNER, owed = !owed_done && (m.flags & CN_MF_PFS);
        cn_manifest_free(&m);
        if (!owed_done && pfs_has(ctx, ids[i]))
            owed_done = true, owed = false; /* it and older ones: nothing owed */
        if (!raised_seen && !raised && (target >= CAIRN_LEVEL_PARTNER || owed)) {
            cn_info("generation %ld was left at level 1 (asked for %d%s): queued again", ids[i],
                    target, owed ? " and the PFS" : "");
            d_enqueue(st, ids[i], target, owed);
        } else if (owed) {
            cn_info("generation %ld was left at level %d, not on the PFS (asked for %d%s): its "
                    "flush is queued again", ids[i], level, target,
                    target == CAIRN_LEVEL_PFS ? "" : " and the PFS");
            d_enqueue(st, ids[i], target, 1);
        }
        owed_done = owed_done || owed;
        raised_seen = raised_seen || raised;
    }
    free(ids);
    cn_err_clear(&ctx->err);
}
