/*
 * manifest.c - reading and writing node manifests for the api layer, and the
 * one test of whether a manifest was written by a job of this job's layout
 * (same ranks, nodes and rank -> node map). The format itself is in
 * src/common/format.c.
 */
#include "api/api.h"

#include <stdlib.h>
#include <string.h>

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

int api_set_manifest_level(cairn_ctx *ctx, int genfd, int level)
{
    cn_manifest m;
    CN_TRY(api_read_manifest(ctx, genfd, &m));
    m.level = (uint32_t)level;
    int rc = api_write_manifest(ctx, genfd, &m);
    cn_manifest_free(&m);
    return rc;
}

bool api_same_layout(const cairn_ctx *ctx, const cn_manifest *m)
{
    return m->nranks == (uint32_t)ctx->nranks && m->nnodes == (uint32_t)ctx->nnodes &&
           memcmp(m->rank_node, ctx->rank_node, sizeof *m->rank_node * (size_t)ctx->nranks) == 0;
}

bool api_manifest_of(const cairn_ctx *ctx, const cn_manifest *m, long id, int node)
{
    return m->generation == id && strcmp(m->job, ctx->job) == 0 && m->node == (uint32_t)node &&
           api_same_layout(ctx, m);
}
