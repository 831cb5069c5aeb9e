/*
 * inventory.c - cairn_generations: the generations every rank can restore
 * (the inventory, src/core/inventory.c), with their level: level 4 from the
 * PFS index, since node manifests stop at level 3.
 */
#include "api/api.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Rank 0: is generation ID of this job and rank count complete on the PFS
 * (its index, under PFSFD, decodes)? Node manifests never record level 4. */
static int on_pfs(const cairn_ctx *ctx, int pfsfd, long id)
{
    cn_pindex x;
    cn_err ignored = {0};
    if (pfsfd < 0 || lvl_pfs_index(pfsfd, id, &x, &ignored) < 0)
        return 0;
    int yes = strcmp(x.job, ctx->job) == 0 && x.nranks == (uint32_t)ctx->nranks;
    cn_pindex_free(&x);
    return yes;
}

CAIRN_EXPORT int cairn_generations(cairn_ctx *ctx, cairn_gen_info *info, int max, int *count)
{
    if (!ctx)
        return CAIRN_EINVAL;
    api_enter(ctx);
    int rc = (!count || max < 0 || (max > 0 && !info))
                 ? cn_fail(&ctx->err, CAIRN_EINVAL, "generations: bad output arguments")
                 : 0;
    CN_TRY(api_agree(ctx, rc));
    api_gen *g = NULL;
    int n = 0;
    rc = api_agree(ctx, api_local_gens(ctx, ctx->rank, &g, &n));
    int found = 0, pfsfd = -1;
    if (ctx->rank == 0 && ctx->cfg.pfs_dir[0]) { /* manifests stop at 3: the PFS says 4 */
        cn_err ignored = {0};
        pfsfd = lvl_pfs_open(ctx->cfg.pfs_dir, ctx->job, false, &ignored);
    }
    for (long bound = 0x7fffffffffffffffL; rc == 0;) {
        long id = api_common_below(ctx, g, n, bound, &rc);
        if (id < 0 || rc < 0)
            break;
        const api_gen *mine = api_gen_find(g, n, id);
        uint64_t bytes[3] = {mine->file_size, mine->raw, mine->delta}, total[3] = {0, 0, 0};
        int level[2] = {mine->level, -on_pfs(ctx, pfsfd, id)}, min_level[2] = {0, 0};
        api_gen first = *mine; /* rank 0's label and seconds are the generation's */
        if (MPI_Allreduce(bytes, total, 3, MPI_UINT64_T, MPI_SUM, ctx->comm) != MPI_SUCCESS ||
            MPI_Allreduce(level, min_level, 2, MPI_INT, MPI_MIN, ctx->comm) != MPI_SUCCESS ||
            MPI_Bcast(&first, sizeof first, MPI_BYTE, 0, ctx->comm) != MPI_SUCCESS)
            rc = CAIRN_EMPI;
        min_level[0] = min_level[1] < 0 ? CAIRN_LEVEL_PFS : min_level[0];
        if (found < max) {
            info[found] = (cairn_gen_info){.id = id, .level = min_level[0], .nranks = ctx->nranks,
                                           .bytes = total[0], .parent = mine->parent,
                                           .base = mine->base, .raw = total[1],
                                           .delta = total[2], .seconds = first.seconds};
            memcpy(info[found].label, first.label, sizeof info[found].label);
        }
        found++;
        bound = id - 1;
    }
    free(g);
    if (pfsfd >= 0)
        close(pfsfd);
    if (rc < 0)
        return api_agree(ctx, rc == CAIRN_EMPI && !ctx->err.msg[0]
                                  ? cn_fail(&ctx->err, rc, "generations: MPI failed")
                                  : rc);
    *count = found;
    return 0;
}
