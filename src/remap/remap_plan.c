/*
 * remap_plan.c - where a remapping restart reads the stored generation: the
 * newest generation of another layout in the node directories of this run
 * (its node leaders look; every manifest of this job that another layout
 * wrote counts), which stored ranks those directories hold and which rank
 * of this run reads each (a rank of the node that holds it); and the newest
 * PFS generation of another rank count (rank 0 looks, everyone learns).
 * Collective where marked in remap_impl.h; nothing is written.
 *
 * Ownership: rm_local_plan's *OWNER is the caller's to free.
 */
#include "remap/remap_impl.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Leader: does GEN's manifest in this node's directory belong to this job and
 * another layout? M filled (cn_manifest_free) when true. */
static bool other_layout(cairn_ctx *ctx, long gen, cn_manifest *m)
{
    char dir[64];
    cn_gen_dirname(dir, sizeof dir, gen);
    cn_err err = {0};
    int fd = cn_dir_open(ctx->nodefd, dir, false, &err);
    if (fd < 0)
        return false;
    cn_err saved = ctx->err;
    int rc = api_read_manifest(ctx, fd, m);
    ctx->err = saved;
    close(fd);
    if (rc < 0)
        return false;
    if (strcmp(m->job, ctx->job) == 0 && !api_same_layout(ctx, m) && m->generation == gen)
        return true;
    cn_manifest_free(m);
    return false;
}

/* Leader: the newest generation <= BOUND of another layout in this node's directory. */
long rm_local_newest(cairn_ctx *ctx, long bound)
{
    long *ids = NULL, best = -1;
    int n = 0;
    cn_err ignored = {0};
    if (cn_gen_list(ctx->nodefd, &ids, &n, &ignored) < 0)
        return -1;
    for (int i = 0; i < n && best < 0; i++) { /* newest first: the first that fits */
        cn_manifest m;
        if (ids[i] <= bound && other_layout(ctx, ids[i], &m)) {
            best = ids[i];
            cn_manifest_free(&m);
        }
    }
    free(ids);
    return best;
}

/* The stored ranks of node-local generation GEN: who reads which (OWNER, by
 * stored rank: a rank of this run, or -1 if no node of this run holds it),
 * the layout that wrote it. */
int rm_local_plan(cairn_ctx *ctx, long gen, rm_source *src, int **owner)
{
    uint32_t lim[4] = {0, 0, 0, 0}; /* nranks, nnodes, level, -nranks (for the minimum) */
    uint32_t *mine = NULL, nmine = 0;
    cn_manifest m;
    int rc = 0;
    if (ctx->node_rank == 0 && other_layout(ctx, gen, &m)) {
        lim[0] = m.nranks, lim[1] = m.nnodes, lim[2] = UINT32_MAX - m.level;
        lim[3] = UINT32_MAX - m.nranks;
        mine = malloc(sizeof *mine * (m.nlocal ? m.nlocal : 1));
        for (uint32_t i = 0; mine && i < m.nlocal; i++)
            mine[nmine++] = m.local[i].rank;
        if (!mine)
            rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
        cn_manifest_free(&m);
    }
    uint32_t all[4];
    if (MPI_Allreduce(lim, all, 4, MPI_UINT32_T, MPI_MAX, ctx->comm) != MPI_SUCCESS ||
        MPI_Bcast(&nmine, 1, MPI_UINT32_T, 0, ctx->node_comm) != MPI_SUCCESS)
        rc = rc ? rc : cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allreduce failed");
    if (rc == 0 && ctx->node_rank != 0 && !(mine = malloc(sizeof *mine * (nmine ? nmine : 1))))
        rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    if (rc == 0 && MPI_Bcast(mine, (int)nmine, MPI_UINT32_T, 0, ctx->node_comm) != MPI_SUCCESS)
        rc = cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Bcast failed");
    rc = api_agree(ctx, rc);
    if (rc == 0 && (all[0] == 0 || all[0] > CN_MAX_RANKS || UINT32_MAX - all[3] != all[0]))
        rc = api_agree(ctx, cn_fail(&ctx->err, CAIRN_ECORRUPT, "generation %ld: node manifests "
                                    "disagree on its rank count", gen));
    int *own = rc == 0 ? malloc(sizeof *own * all[0]) : NULL;
    if (rc == 0)
        rc = api_agree(ctx, own ? 0 : cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory"));
    if (rc == 0) {
        for (uint32_t r = 0; r < all[0]; r++)
            own[r] = INT_MAX;
        /* the node's stored ranks (ascending) spread over its ranks in order: the
         * k-th of n to node rank k * size / n, so that with blocks in rank order
         * much of what a rank reads is its own */
        for (uint32_t k = 0; k < nmine; k++)
            if (mine[k] < all[0] &&
                (int)((uint64_t)k * (uint64_t)ctx->node_size / nmine) == ctx->node_rank)
                own[mine[k]] = ctx->rank;
        if (MPI_Allreduce(MPI_IN_PLACE, own, (int)all[0], MPI_INT, MPI_MIN, ctx->comm) !=
            MPI_SUCCESS)
            rc = api_agree(ctx, cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allreduce failed"));
        for (uint32_t r = 0; r < all[0]; r++)
            own[r] = own[r] == INT_MAX ? -1 : own[r];
    }
    free(mine);
    if (rc < 0) {
        free(own);
        return rc;
    }
    *src = (rm_source){.where = RM_LOCAL, .gen = gen, .nranks = all[0], .nnodes = all[1],
                       .level = (int)(UINT32_MAX - all[2])};
    memcpy(src->job, ctx->job, sizeof src->job);
    *owner = own;
    return 0;
}

/* Rank 0 looks, everyone learns: the newest PFS generation <= BOUND of this
 * job (else job.restart_from's) written by another rank count; gen -1 none. */
int rm_pfs_plan(cairn_ctx *ctx, long bound, rm_source *src)
{
    memset(src, 0, sizeof *src);
    src->gen = -1;
    if (ctx->rank == 0 && (ctx->cfg.pfs_dir[0] || ctx->cfg.restart_from[0])) {
        const char *jobs[2] = {ctx->job, ctx->cfg.restart_from};
        for (int j = 0; j < 2 && src->gen < 0 && jobs[j][0]; j++) {
            cn_err err = {0};
            cn_pindex x;
            long g = api_pfs_find(ctx, jobs[j], bound, 0, &x, NULL, &err);
            if (g < 0)
                continue;
            if (x.nranks != (uint32_t)ctx->nranks && x.group > 0) {
                *src = (rm_source){.where = RM_PFS, .gen = g, .nranks = x.nranks,
                                   .nnodes = x.nnodes, .level = CAIRN_LEVEL_PFS,
                                   .group = x.group, .nfiles = x.nfiles};
                snprintf(src->job, sizeof src->job, "%s", jobs[j]);
            }
            cn_pindex_free(&x);
        }
    }
    if (MPI_Bcast(src, sizeof *src, MPI_BYTE, 0, ctx->comm) != MPI_SUCCESS)
        return api_agree(ctx, cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Bcast failed"));
    return 0;
}
