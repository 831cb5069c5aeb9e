/*
 * direct.c - level 4 straight from memory (pfs.direct = on): FTI's inline
 * level 4, for a synchronous level-4 checkpoint.
 *
 * Collective over the job's ranks. Every rank writes its protected variables
 * from the application's memory (lent to the writer, never copied) to a PFS
 * file of its own, all ranks at once: file i holds rank i (index group 1),
 * through the writer a flush uses (api_write_file: the pfs.scheme's codecs
 * where the model says they pay, a checksum over every frame, the file synced
 * and renamed into place). Sizes and checksums are gathered to rank 0, which
 * writes the index last: the generation is complete on the PFS once every
 * file is, and the PFS is pruned as after a flush. The PFS directory of the
 * generation is made by rank 0 first: before the checkpoint's first
 * reduction when none is there (api_pfs_gen_try), else made fresh with an
 * agreement (api_pfs_gen_open: never over another rank count's generation).
 * The ranks wait for each other twice: the gather, and the agreement after
 * the index. Nothing of the generation goes to
 * node-local storage: a restart takes it from the PFS, and node-local
 * generations (and the increments' parent) stay as they were. Its index has
 * no source fingerprint, so no flush increment takes it as a parent.
 * The caller (src/api/checkpoint.c) decides when this path is taken; with
 * cairnd serving the job it asks api_pfs_as_fast first.
 * Each rank keeps the codec the model picked for each of its variables
 * (ctx->pfs_memo, as every level-4 writer) for compress.resample level-4
 * checkpoints, as level 1 keeps its vote's, rather than sampling them in
 * every file.
 * Ownership: the states and descriptors live for one call; rank 0's gather
 * buffer (ctx->pfs_files) is the context's.
 */
#include "core/core.h"
#include "levels/pfs/pfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* This rank's variables as a state whose members all point at the
 * application's memory. */
static int own_vars(cairn_ctx *ctx, api_state *st)
{
    api_member *m = calloc(ctx->nvars + 1, sizeof *m);
    uint8_t **data = calloc(ctx->nvars + 1, sizeof *data);
    int rc = m && data ? 0 : cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    for (size_t i = 0; rc == 0 && i < ctx->nvars; i++) {
        const api_var *v = &ctx->vars[i];
        uint64_t size = (uint64_t)v->count * cairn_type_size(v->type);
        m[i] = (api_member){.kind = v->kind, .type = (uint8_t)v->type,
                            .ndims = (uint8_t)v->ndims, .count = v->count, .size = size,
                            .name = v->name, .lent = {size ? v->ptr : NULL, NULL, 0}};
        for (int d = 0; d < v->ndims && d < CAIRN_MAX_DIMS; d++)
            m[i].dims[d] = v->dims[d];
    }
    if (rc == 0)
        rc = api_state_build(ctx, ctx->rank, m, ctx->nvars, st, data);
    free(data);
    free(m);
    return rc;
}

bool api_pfs_gen_try(cairn_ctx *ctx, long id)
{
    char gen[64];
    cn_gen_dirname(gen, sizeof gen, id);
    cn_err ignored = {0}; /* api_pfs_gen_open meets it again, and says it */
    int jobfd = lvl_pfs_open(ctx->cfg.pfs_dir, ctx->job, true, &ignored);
    bool made = jobfd >= 0 && mkdirat(jobfd, gen, 0700) == 0;
    if (jobfd >= 0)
        close(jobfd);
    return made;
}

void api_pfs_gen_drop(cairn_ctx *ctx, long id)
{
    char gen[64];
    cn_gen_dirname(gen, sizeof gen, id);
    cn_err ignored = {0};
    int jobfd = lvl_pfs_open(ctx->cfg.pfs_dir, ctx->job, false, &ignored);
    if (jobfd >= 0 && unlinkat(jobfd, gen, AT_REMOVEDIR) == 0)
        cn_debug("PFS %s, made for a straight level 4, removed: the checkpoint goes by level 1",
                 gen);
    else /* not empty: not only the one made */
        cn_debug("PFS %s, made for a straight level 4, stays: %s", gen,
                 jobfd < 0 ? ignored.msg : strerror(errno));
    if (jobfd >= 0)
        close(jobfd);
}

bool api_pfs_direct_ready(cairn_ctx *ctx)
{
    if (!ctx->pfs_files)
        ctx->pfs_files = calloc(4 * (size_t)ctx->nranks, sizeof *ctx->pfs_files);
    return ctx->pfs_files != NULL;
}

int api_flush_direct(cairn_ctx *ctx, long id, bool made, uint64_t *stored)
{
    int jobfd = -1, genfd = -1, n = ctx->nranks;
    int rc = api_pfs_gen_open(ctx, id, false, made, &jobfd, &genfd);
    api_state *st = calloc((size_t)n, sizeof *st);
    uint64_t mine[4] = {0}; /* this rank's file: size, sum, raw bytes; whether it failed */
    if (rc == 0 && !st)
        rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    if (rc == 0)
        rc = own_vars(ctx, &st[ctx->rank]);
    if (rc == 0)
        rc = api_write_file(ctx, genfd, 1, ctx->rank, st, NULL, mine);
    if (st)
        api_state_free(&st[ctx->rank]);
    free(st);
    /* One gather to rank 0, napping, of every file and whether its rank
     * failed (the agreement at the end says why): no wait in between. */
    mine[3] = rc != 0;
    if (api_gather_napping(mine, ctx->pfs_files, 4, MPI_UINT64_T, 0, ctx->comm) != 0)
        rc = cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Gather failed");
    *stored = 0;
    uint64_t *f = ctx->pfs_files, failed = 0;
    for (int r = 0; rc == 0 && ctx->rank == 0 && r < n; r++) {
        failed |= f[4 * r + 3];
        memmove(&f[3 * r], &f[4 * r], 3 * sizeof *f); /* size, sum, raw: the index's rows */
        *stored += f[3 * r];
    }
    if (rc == 0 && ctx->rank == 0 && !failed) {
        cn_fault_point("pfs.index", id, ctx->rank); /* files written, the index not yet */
        api_pfs_plan plan = {.parent = -1, .base = id};
        rc = api_pfs_write_index(ctx, jobfd, genfd, id, 1, n, f, &plan);
    }
    if (genfd >= 0)
        close(genfd);
    if (jobfd >= 0)
        close(jobfd);
    return api_agree_napping(ctx, rc);
}

/* Rank 0's answer for api_pfs_as_fast: 1 yes, 0 no. Both probes are of one
 * writer alone, so that they compare alike (the codec model's figure is each
 * writer's share: share.c). */
static int as_fast(cairn_ctx *ctx)
{
    cn_err err = {0};
    struct stat pfs, local;
    double bps = (double)ctx->cfg.pfs_bandwidth * 1048576.0, local_bps = 0;
    int jobfd = lvl_pfs_open(ctx->cfg.pfs_dir, ctx->job, true, &err), yes = 0;
    if (jobfd < 0 || fstat(jobfd, &pfs) != 0 || fstat(ctx->nodefd, &local) != 0)
        goto out;
    if (pfs.st_dev == local.st_dev) {
        cn_debug("level 4 with cairnd: the PFS directory is on node-local storage's file "
                 "system, so each rank writes it straight (a copy from level 1 would write the "
                 "same device twice)");
        yes = 1;
        goto out;
    }
    if (bps <= 0 && lvl_pfs_probe(jobfd, LVL_PFS_PROBE_BYTES, &bps, &err) < 0)
        goto out;
    if (lvl_pfs_probe(ctx->nodefd, LVL_PFS_PROBE_BYTES, &local_bps, &err) < 0)
        goto out;
    yes = bps >= local_bps;
    cn_debug("level 4 with cairnd: the PFS writes %.0f MiB/s, node-local storage %.0f MiB/s: "
             "%s", bps / 1048576.0, local_bps / 1048576.0,
             yes ? "each rank writes it straight" : "level 1, then the daemons' flush");
out:
    if (err.msg[0])
        cn_warn("level 4 with cairnd: %s; level 1, then the daemons' flush", err.msg);
    if (jobfd >= 0)
        close(jobfd);
    return yes;
}

bool api_pfs_as_fast(cairn_ctx *ctx)
{
    if (ctx->pfs_as_fast == 0) {
        int yes = ctx->rank == 0 ? as_fast(ctx) : 0, all = 0; /* rank 0's answer */
        if (api_allreduce_napping(&yes, &all, 1, MPI_INT, MPI_MAX, ctx->comm) != 0)
            all = 0;
        ctx->pfs_as_fast = all > 0 ? 1 : -1;
    }
    return ctx->pfs_as_fast > 0;
}
