/*
 * flushnode.c - level 4 from one node, without MPI: the epilog's flush when
 * the job's daemons are gone (cairnd --flush-node, run as the job's user by
 * `cairn flush-node`).
 *
 * A context of this node alone (no communicator: nothing here calls MPI)
 * reads the node manifest of generation G (which ranks this node holds, the
 * job's rank -> node map), materializes each of its ranks as the MPI flush
 * does (api_materialize: the chain verified and applied) and writes one PFS
 * file per rank (index group 1: file i holds rank i) through the same
 * aggregation writer (api_write_file), into the part <job>/.part-gen-<G>/;
 * then this node's record, and the commit attempt (levels/pfs_stage.c): the
 * node that finds every node's record there writes the index and renames the
 * part to gen-<G>, then prunes the PFS as a flush does. Always a full
 * generation: an increment would need every node's plan agreed.
 * The context, states and descriptors are owned here and freed on return.
 */
#include "core/core.h"
#include "levels/pfs/pfs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A context of NODE of JOB: its existing node directory (never created). */
static int open_ctx(const cn_config *cfg, const char *job, const char *node, cairn_ctx **out,
                    cn_err *err)
{
    cairn_ctx *ctx = calloc(1, sizeof *ctx);
    CN_FAIL_IF(!ctx, err, CAIRN_ENOMEM, "out of memory");
    ctx->nodefd = ctx->filesfd = ctx->dfd = ctx->hold_fd = ctx->live_fd = -1;
    ctx->comm = ctx->node_comm = ctx->leaders = ctx->set_comm = MPI_COMM_NULL;
    ctx->last_id = -1;
    ctx->size = ctx->node_size = 1;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    ctx->cores_per_rank = cores > 0 ? (int)cores : 1;
    ctx->cfg = *cfg;
    snprintf(ctx->job, sizeof ctx->job, "%s", job);
    snprintf(ctx->node_name, sizeof ctx->node_name, "%s", node);
    char user[64];
    cn_user_dirname(user, sizeof user);
    int fd = cn_dir_open_path(cfg->base, err), next;
    const char *walk[] = {user, job, node};
    for (int i = 0; fd >= 0 && i < 3; i++, fd = next) {
        next = cn_dir_open(fd, walk[i], false, err);
        close(fd);
    }
    if (fd < 0) {
        free(ctx);
        return cn_err_prefix(err, "node directory %s/%s/%s/%s: ", cfg->base, user, job, node),
               fd;
    }
    ctx->nodefd = fd;
    snprintf(ctx->node_path, sizeof ctx->node_path, "%s/%s/%s/%s", cfg->base, user, job, node);
    *out = ctx;
    return 0;
}

/* The job layout from this node's manifest M of generation ID. */
static int take_layout(cairn_ctx *ctx, const cn_manifest *m, long id)
{
    CN_FAIL_IF(strcmp(m->job, ctx->job) != 0 || strcmp(m->node_name, ctx->node_name) != 0 ||
                   m->generation != id,
               &ctx->err, CAIRN_ECORRUPT, "%s: the manifest of generation %ld names job %s, "
               "node %s, generation %lld", ctx->node_path, id, m->job, m->node_name,
               (long long)m->generation);
    ctx->rank_node = malloc(sizeof *ctx->rank_node * m->nranks);
    CN_FAIL_IF(!ctx->rank_node, &ctx->err, CAIRN_ENOMEM, "out of memory");
    memcpy(ctx->rank_node, m->rank_node, sizeof *ctx->rank_node * m->nranks);
    ctx->nranks = (int)m->nranks;
    ctx->nnodes = (int)m->nnodes;
    ctx->node = (int)m->node;
    return 0;
}

/* This node's ranks of generation ID as files of the part STAGEFD; REC
 * (with M's layout) gets what was written. */
static int write_ranks(cairn_ctx *ctx, int stagefd, const cn_manifest *m, long id, cn_pnode *rec)
{
    *rec = (cn_pnode){.scheme = (uint32_t)ctx->cfg.pfs_scheme, .generation = id,
                      .nranks = m->nranks, .nnodes = m->nnodes, .node = m->node,
                      .nlocal = m->nlocal, .seconds = m->seconds,
                      .map = cn_hash(m->rank_node, sizeof *m->rank_node * m->nranks)};
    memcpy(rec->job, m->job, sizeof rec->job);
    memcpy(rec->label, m->label, sizeof rec->label);
    rec->rank = calloc(m->nlocal ? m->nlocal : 1, sizeof *rec->rank);
    api_state *st = calloc(m->nranks, sizeof *st);
    int rc = rec->rank && st ? 0 : cn_fail(&ctx->err, CAIRN_ENOMEM, "out of memory");
    CN_FAIL_IF(rc == 0 && m->nlocal == 0, &ctx->err, CAIRN_ECORRUPT,
               "%s: the manifest of generation %ld names no rank", ctx->node_path, id);
    for (uint32_t i = 0; rc == 0 && i < m->nlocal; i++) {
        uint32_t r = m->local[i].rank;
        uint64_t out[3] = {0, 0, 0};
        rc = api_materialize(ctx, (int)r, id, &st[r]);
        if (rc == 0)
            rc = api_write_file(ctx, stagefd, 1, (int)r, st, NULL, out);
        api_state_free(&st[r]);
        rec->rank[i] = (cn_pnode_rank){.rank = r, .file = {out[0], out[1]}, .raw = out[2],
                                       .source = cn_pindex_source(r, m->local[i].header_sum)};
    }
    free(st);
    return rc;
}

int api_flush_node(const cn_config *cfg, const char *job, const char *node, long id, char *why,
                   size_t len, cn_err *err)
{
    why[0] = '\0';
    cairn_ctx *ctx = NULL;
    CN_TRY(open_ctx(cfg, job, node, &ctx, err));
    char gen[64];
    cn_gen_dirname(gen, sizeof gen, id);
    cn_manifest m = {0};
    int genfd = cn_dir_open(ctx->nodefd, gen, false, &ctx->err), jobfd = -1, stagefd = -1;
    int rc = genfd < 0 ? genfd : api_read_manifest(ctx, genfd, &m);
    if (genfd < 0 || rc < 0)
        cn_err_prefix(&ctx->err, "%s/%s: ", ctx->node_path, gen);
    if (genfd >= 0)
        close(genfd);
    if (rc == 0)
        rc = take_layout(ctx, &m, id);
    if (rc == 0) {
        jobfd = lvl_pfs_open(cfg->pfs_dir, job, true, &ctx->err);
        rc = jobfd < 0 ? jobfd : 0;
    }
    cn_pindex x = {0};
    cn_err none = {0};
    if (rc == 0 && lvl_pfs_index(jobfd, id, &x, &none) == 0) { /* there already */
        if (strcmp(x.job, job) == 0) {
            snprintf(why, len, "generation %ld is on the PFS already", id);
            rc = 1;
        }
        cn_pindex_free(&x);
    }
    if (rc == 0) {
        stagefd = lvl_pfs_stage_open(jobfd, id, &ctx->err);
        rc = stagefd < 0 ? stagefd : 0;
    }
    cn_pnode rec = {0};
    if (rc == 0)
        rc = write_ranks(ctx, stagefd, &m, id, &rec);
    if (rc == 0) /* the files' names durable before the record names them */
        rc = cn_dir_sync(stagefd, &ctx->err);
    if (rc == 0)
        rc = lvl_pfs_stage_record(stagefd, &rec, &ctx->err);
    cn_pnode_free(&rec);
    if (stagefd >= 0)
        close(stagefd);
    if (rc == 0)
        rc = lvl_pfs_stage_commit(jobfd, id, job, m.node, m.nnodes, &x, why, len, &ctx->err);
    if (rc == 1 && x.files) { /* this node committed: the PFS pruned as after a flush */
        cn_debug("generation %ld on the PFS from %u nodes: %u ranks, %llu -> %llu bytes", id,
                 x.nnodes, x.nranks, (unsigned long long)x.raw, (unsigned long long)x.stored);
        snprintf(why, len, "committed generation %ld (%u ranks from %u nodes)", id, x.nranks,
                 x.nnodes);
        lvl_pfs_prune(jobfd, job, x.nranks, id, cfg->pfs_keep, false);
        api_trash_empty_pfs(ctx, jobfd);
        cn_pindex_free(&x);
    }
    if (rc < 0)
        *err = ctx->err;
    cn_manifest_free(&m);
    /* api_ctx_free (src/api) without the daemon and the live mark, which
     * this context never has: the PFS trash waited for, then freed. */
    api_trash_wait(ctx);
    api_incr_reset(ctx);
    api_ctx_release(ctx);
    if (jobfd >= 0)
        close(jobfd);
    return rc;
}
