/*
 * inventory.c - cairn_generations: the generations this run can restore,
 * newest first: those every rank holds at levels 1-3 (the inventory,
 * src/core/inventory.c), at level 4 when the PFS has them too, and those
 * only the PFS holds (a direct level-4 checkpoint, nodes wiped or pruned),
 * from their index. Rank 0 reads the PFS; the ranks walk down both lists
 * together. A PFS generation counts when its index reads and it is this
 * job's, of this rank count (as a restart takes it).
 */
#include "api/api.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What cairn_gen_info takes from a PFS index (rank 0's, broadcast). */
typedef struct pfs_gen {
    long id; /* -1: none */
    long parent, base;
    uint64_t raw, stored;
    double seconds;
    char label[CAIRN_LABEL_MAX + 1];
} pfs_gen;

/* Collective: the newest generation <= BOUND complete on the PFS (rank 0
 * reads it under PFSFD) into *P on every rank. */
static int pfs_below(const cairn_ctx *ctx, int pfsfd, long bound, pfs_gen *p)
{
    memset(p, 0, sizeof *p);
    p->id = -1;
    cn_pindex x;
    cn_err ignored = {0};
    if (ctx->rank == 0 && pfsfd >= 0 &&
        (p->id = lvl_pfs_newest(pfsfd, ctx->job, bound, (uint32_t)ctx->nranks, &x, NULL,
                                &ignored)) >= 0) {
        p->parent = x.parent, p->base = x.base, p->raw = x.raw, p->stored = x.stored;
        p->seconds = x.seconds;
        memcpy(p->label, x.label, sizeof p->label);
        cn_pindex_free(&x);
    }
    return MPI_Bcast(p, sizeof *p, MPI_BYTE, 0, ctx->comm) == MPI_SUCCESS ? 0 : CAIRN_EMPI;
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
    if (ctx->rank == 0 && ctx->cfg.pfs_dir[0]) {
        cn_err ignored = {0};
        pfsfd = lvl_pfs_open(ctx->cfg.pfs_dir, ctx->job, false, &ignored);
    }
    pfs_gen p = {.id = -1};
    bool fetch = true; /* P is used up (or not read yet): read the PFS below BOUND */
    for (long bound = 0x7fffffffffffffffL; rc == 0;) {
        long id = api_common_below(ctx, g, n, bound, &rc);
        if (rc < 0 || (fetch && (rc = pfs_below(ctx, pfsfd, bound, &p)) < 0) ||
            (id < 0 && p.id < 0))
            break;
        fetch = p.id >= id; /* listed now; else still the PFS's newest below the next bound */
        cairn_gen_info *out = found < max ? &info[found] : NULL;
        if (p.id > id && out) { /* on the PFS alone: its index says it all */
            *out = (cairn_gen_info){.id = p.id, .level = CAIRN_LEVEL_PFS, .nranks = ctx->nranks,
                                    .bytes = p.stored, .parent = p.parent, .base = p.base,
                                    .raw = p.raw, .delta = p.parent < 0 ? p.raw : 0,
                                    .seconds = p.seconds};
            memcpy(out->label, p.label, sizeof out->label);
        }
        if (p.id > id) {
            found++;
            bound = p.id - 1;
            continue;
        }
        const api_gen *mine = api_gen_find(g, n, id);
        uint64_t bytes[3] = {mine->file_size, mine->raw, mine->delta}, total[3] = {0, 0, 0};
        int level = mine->level, min_level = 0;
        api_gen first = *mine; /* rank 0's label and seconds are the generation's */
        if (MPI_Allreduce(bytes, total, 3, MPI_UINT64_T, MPI_SUM, ctx->comm) != MPI_SUCCESS ||
            MPI_Allreduce(&level, &min_level, 1, MPI_INT, MPI_MIN, ctx->comm) != MPI_SUCCESS ||
            MPI_Bcast(&first, sizeof first, MPI_BYTE, 0, ctx->comm) != MPI_SUCCESS)
            rc = CAIRN_EMPI;
        if (out) { /* manifests stop at 3: the PFS says 4 */
            *out = (cairn_gen_info){.id = id, .level = p.id == id ? CAIRN_LEVEL_PFS : min_level,
                                    .nranks = ctx->nranks, .bytes = total[0],
                                    .parent = mine->parent, .base = mine->base, .raw = total[1],
                                    .delta = total[2], .seconds = first.seconds};
            memcpy(out->label, first.label, sizeof out->label);
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
