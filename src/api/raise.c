/*
 * raise.c - a generation complete at level 1 raised to level 2 or 3: the
 * partner copy or the parity through the ring, then the manifests marked.
 *
 * Called by cairn_checkpoint (synchronous mode, every rank) and by cairnd
 * (one rank per node) with the same collective discipline: node leaders do
 * the work, everyone agrees. A failure leaves the generation at level 1.
 */
#include "api/api.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int raise_leader(cairn_ctx *ctx, int level, int genfd, const char *gen_path)
{
    cn_manifest m = {0};
    int rc = api_read_manifest(ctx, genfd, &m);
    if (rc == 0)
        rc = level == CAIRN_LEVEL_PARTNER ? api_partner_copy(ctx, genfd, &m)
                                          : api_encode(ctx, genfd, gen_path, &m);
    cn_manifest_free(&m);
    return rc;
}

int api_raise(cairn_ctx *ctx, long id, int level)
{
    char gen[64], gen_path[4500];
    cn_gen_dirname(gen, sizeof gen, id);
    snprintf(gen_path, sizeof gen_path, "%s/%s", ctx->node_path, gen);
    int genfd = -1, rc = 0;
    if (ctx->node_rank == 0)
        rc = genfd = cn_dir_open(ctx->nodefd, gen, false, &ctx->err);
    rc = api_agree(ctx, rc < 0 ? rc : 0);
    if (rc == 0)
        rc = api_agree(ctx, ctx->node_rank == 0 ? raise_leader(ctx, level, genfd, gen_path) : 0);
    double seconds = ctx->timing ? api_ckpt_seconds(ctx) : -1; /* cairnd: kept */
    if (rc == 0)
        rc = api_agree(ctx, ctx->node_rank == 0 ? api_set_manifest_level(ctx, genfd, level,
                                                                         seconds)
                                                : 0);
    if (genfd >= 0)
        close(genfd);
    if (rc < 0) {
        char msg[sizeof ctx->msg];
        snprintf(msg, sizeof msg, "level %d failed, generation %ld kept at level 1: %.1000s",
                 level, id, ctx->msg);
        memcpy(ctx->msg, msg, sizeof msg);
    }
    return rc;
}
