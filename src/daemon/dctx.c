/*
 * dctx.c - the context of a node daemon (cairnd): one rank per node, doing
 * the node leaders' part of levels 2-4 for a job it did not start.
 *
 * The daemons' communicator has one rank per node, but the job's layout
 * (ranks, rank -> node map, node indices) belongs to the application. The
 * daemon learns it from the node manifests of the generation it works on
 * (api_dctx_layout) and reorders its communicator so that rank = node index,
 * as ctx->leaders is in the application; from then on raise.c, flush.c,
 * prune.c and inventory.c run unchanged, with every daemon a node leader.
 * ctx->nranks is the job's rank count, ctx->size the daemon count.
 */
#include "daemon/daemon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int api_dctx_open(MPI_Comm comm, const cn_config *cfg, const char *job, const char *node,
                  cairn_ctx **out, cn_err *err)
{
    *out = NULL;
    cairn_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return cn_fail(err, CAIRN_ENOMEM, "out of memory");
    ctx->nodefd = ctx->filesfd = ctx->dfd = ctx->hold_fd = ctx->live_fd = -1;
    ctx->comm = ctx->node_comm = ctx->leaders = ctx->set_comm = MPI_COMM_NULL;
    ctx->last_id = -1;
    if (MPI_Comm_dup(comm, &ctx->comm) != MPI_SUCCESS ||
        MPI_Comm_dup(MPI_COMM_SELF, &ctx->node_comm) != MPI_SUCCESS) {
        api_ctx_free(ctx);
        return cn_fail(err, CAIRN_EMPI, "MPI_Comm_dup failed");
    }
    MPI_Comm_set_errhandler(ctx->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(ctx->comm, &ctx->rank);
    MPI_Comm_size(ctx->comm, &ctx->size);
    ctx->node_size = 1;
    ctx->cfg = *cfg;
    snprintf(ctx->job, sizeof ctx->job, "%s", job);
    snprintf(ctx->node_name, sizeof ctx->node_name, "%s", node);
    int rc = api_agree(ctx, api_open_node_dir(ctx));
    if (rc < 0) {
        cn_fail(err, rc, "%s", ctx->msg);
        api_ctx_free(ctx);
        return rc;
    }
    ctx->io = cfg->io != CN_IO_AUTO ? cfg->io : lvl_local_probe_io(ctx->node_path);
    *out = ctx;
    return 0;
}

/* Local checks of M against the daemons: is it a layout they can serve? */
static int check_layout(cairn_ctx *ctx, const cn_manifest *m)
{
    if (!m)
        return cn_fail(&ctx->err, CAIRN_ENOENT, "node %s has no manifest of this generation",
                       ctx->node_name);
    if ((int)m->nnodes != ctx->size)
        return cn_fail(&ctx->err, CAIRN_ECONFIG, "the job runs on %u nodes, but %d daemons were "
                       "started (cairn start --nodes %u)", m->nnodes, ctx->size, m->nnodes);
    if (strcmp(m->node_name, ctx->node_name) != 0)
        return cn_fail(&ctx->err, CAIRN_ECONFIG, "manifest of node %s in the directory of %s",
                       m->node_name, ctx->node_name);
    return 0;
}

int api_dctx_layout(cairn_ctx *ctx, const cn_manifest *m)
{
    CN_TRY(api_agree(ctx, check_layout(ctx, m)));
    /* Same map, nodes a permutation? (hash of the map; every node index once) */
    uint64_t h = cn_hash(m->rank_node, sizeof *m->rank_node * m->nranks) ^ m->nranks;
    uint64_t lo = h, hi = h;
    int *seen = calloc((size_t)ctx->size, sizeof *seen), node = (int)m->node;
    int rc = seen ? 0 : cn_fail(&ctx->err, CAIRN_ENOMEM, "out of memory");
    if (api_allreduce_shared(ctx, &h, &lo, 1, MPI_UINT64_T, MPI_MIN, ctx->comm) != 0 ||
        MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, ctx->comm) != MPI_SUCCESS ||
        (seen && MPI_Allgather(&node, 1, MPI_INT, seen, 1, MPI_INT, ctx->comm) != MPI_SUCCESS))
        rc = cn_fail(&ctx->err, CAIRN_EMPI, "agreeing on the job layout failed");
    for (int i = 0; rc == 0 && i < ctx->size; i++) /* m->nnodes == size: checked */
        for (int j = 0; rc == 0 && j < i; j++)
            if (seen[i] == seen[j])
                rc = cn_fail(&ctx->err, CAIRN_ECONFIG, "two daemons serve node %d", seen[i]);
    if (rc == 0 && lo != hi)
        rc = cn_fail(&ctx->err, CAIRN_ECONFIG, "the nodes' manifests disagree on the job layout");
    free(seen);
    CN_TRY(api_agree(ctx, rc));
    bool same = ctx->rank_node && ctx->nranks == (int)m->nranks && ctx->node == node &&
                memcmp(ctx->rank_node, m->rank_node, sizeof *m->rank_node * m->nranks) == 0;
    int all_same = same;
    if (MPI_Allreduce(MPI_IN_PLACE, &all_same, 1, MPI_INT, MPI_LAND, ctx->comm) != MPI_SUCCESS)
        return api_agree(ctx, cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allreduce failed"));
    if (all_same)
        return 0;
    uint32_t *map = malloc(sizeof *map * m->nranks);
    MPI_Comm comm;
    rc = map ? 0 : cn_fail(&ctx->err, CAIRN_ENOMEM, "out of memory");
    if (MPI_Comm_split(ctx->comm, 0, node, &comm) != MPI_SUCCESS) /* rank = node index */
        rc = cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Comm_split by node failed");
    else {
        MPI_Comm_free(&ctx->comm);
        ctx->comm = comm;
        MPI_Comm_set_errhandler(ctx->comm, MPI_ERRORS_RETURN);
        MPI_Comm_rank(ctx->comm, &ctx->rank);
    }
    if (ctx->set_comm != MPI_COMM_NULL)
        MPI_Comm_free(&ctx->set_comm);
    if (ctx->leaders != MPI_COMM_NULL)
        MPI_Comm_free(&ctx->leaders);
    if (rc == 0) {
        memcpy(map, m->rank_node, sizeof *map * m->nranks);
        free(ctx->rank_node);
        ctx->rank_node = map;
        ctx->nranks = (int)m->nranks;
        ctx->nnodes = (int)m->nnodes;
        ctx->node = node;
        rc = api_build_sets(ctx);
    } else {
        free(map);
    }
    return api_agree(ctx, rc);
}
