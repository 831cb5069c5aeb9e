/*
 * manifest.c - reading and writing node manifests for the api layer, and the
 * one test of whether a manifest was written by a job of this job's layout
 * (same ranks, nodes and rank -> node map), and so whether a generation id
 * may be written over. The format itself is in src/common/format.c.
 */
#include "core/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int api_read_manifest(cairn_ctx *ctx, int genfd, cn_manifest *m)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    int rc = cn_read_small(genfd, CN_MANIFEST_NAME, 64u << 20, &buf, &len, &ctx->err);
    if (rc == 0)
        rc = cn_manifest_decode(buf, len, m, &ctx->err);
    free(buf);
    return rc;
}

int api_write_manifest(cairn_ctx *ctx, int genfd, const cn_manifest *m)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    int rc = cn_manifest_encode(m, &buf, &len, &ctx->err);
    if (rc == 0)
        rc = cn_write_atomic(genfd, CN_MANIFEST_NAME, buf, len, &ctx->err);
    free(buf);
    return rc;
}

int api_set_manifest_level(cairn_ctx *ctx, int genfd, int level, double seconds)
{
    cn_manifest m;
    CN_TRY(api_read_manifest(ctx, genfd, &m));
    m.level = (uint32_t)level;
    if (seconds >= 0)
        m.seconds = seconds;
    int rc = api_write_manifest(ctx, genfd, &m);
    cn_manifest_free(&m);
    return rc;
}

bool api_same_layout(const cairn_ctx *ctx, const cn_manifest *m)
{
    return m->nranks == (uint32_t)ctx->nranks && m->nnodes == (uint32_t)ctx->nnodes &&
           memcmp(m->rank_node, ctx->rank_node, sizeof *m->rank_node * (size_t)ctx->nranks) == 0;
}

void api_layout_str(char *buf, size_t len, int nranks, int nnodes)
{
    snprintf(buf, len, "%d rank%s on %d node%s", nranks, nranks == 1 ? "" : "s", nnodes,
             nnodes == 1 ? "" : "s");
}

int api_may_replace(cairn_ctx *ctx, long id)
{
    char gen[64];
    cn_gen_dirname(gen, sizeof gen, id);
    cn_err ignored = {0};
    int genfd = cn_dir_open(ctx->nodefd, gen, false, &ignored);
    if (genfd < 0)
        return 0;
    cn_manifest m;
    cn_err saved = ctx->err;
    int rc = api_read_manifest(ctx, genfd, &m);
    ctx->err = saved;
    close(genfd);
    if (rc < 0)
        return 0; /* no manifest (a checkpoint that died) or one that does not read */
    if (strcmp(m.job, ctx->job) != 0 || !api_same_layout(ctx, &m)) {
        char was[96], now[96];
        api_layout_str(was, sizeof was, (int)m.nranks, (int)m.nnodes);
        api_layout_str(now, sizeof now, ctx->nranks, ctx->nnodes);
        rc = cn_fail(&ctx->err, CAIRN_EMISMATCH,
                     "generation %ld exists in %s, written by %s%s; this run has %s: it is not "
                     "replaced (use another generation id or job id, or remove it with cairn "
                     "prune)", id, ctx->node_path, was,
                     m.nranks == (uint32_t)ctx->nranks && m.nnodes == (uint32_t)ctx->nnodes
                         ? " (another rank -> node map)" : "",
                     now);
    }
    cn_manifest_free(&m);
    return rc;
}

bool api_manifest_of(const cairn_ctx *ctx, const cn_manifest *m, long id, int node)
{
    return m->generation == id && strcmp(m->job, ctx->job) == 0 && m->node == (uint32_t)node &&
           api_same_layout(ctx, m);
}
