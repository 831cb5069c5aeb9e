/*
 * pfsrestore.c - level 4 straight back into protected memory.
 *
 * Each rank reads its own variables and routed files of the PFS generation
 * (pfsread.c: every part checked by its checksum before it is used, an
 * increment through its chain from its full base). The ranks agree that
 * every one of them has its share and that it matches what is protected
 * (the same check as a node-local restore's, api_match); only then do the
 * routed files go back into files/rank-<r>/ and the variables into protected
 * memory. So a generation that fails anywhere changes nothing, and restart
 * tries an older one as it does after a failed stage-in.
 *
 * Nothing node-local is written: the PFS keeps the generation (its durable
 * copy), and the next checkpoint is a full one, as it is after a restore of
 * a staged copy (stored whole, with no chain). A restart that asks about one
 * variable, or for one, stages the generation in instead (stagein.c), so the
 * calls after it read node-local files rather than the PFS again.
 *
 * Ownership: the rank's variables are read into buffers owned here, freed
 * before return.
 */
#include "core/core.h"
#include "levels/pfs/pfs.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The routed files of the N entries of SRC (those of kind CN_KIND_FILE) put
 * in files/rank-<r>/, which then holds exactly those (api_files_restore). */
static int api_files_restore_src(cairn_ctx *ctx, const lvl_src *src, size_t n)
{
    api_routes_end(ctx);
    CN_TRY(api_staging_empty(ctx));
    for (size_t i = 0; i < n; i++)
        if (src[i].kind == CN_KIND_FILE)
            CN_TRY(cn_write_atomic(ctx->filesfd, src[i].name, src[i].ptr, src[i].size,
                                   &ctx->err));
    return 0;
}

/* api_pfs_read filter: this rank alone. */
static bool is_me(void *arg, uint32_t rank) { return rank == (uint32_t)((cairn_ctx *)arg)->rank; }

/* api_stored_fn over read variables. */
static void read_entry(void *arg, size_t i, api_stored *out)
{
    const lvl_src *s = &((const api_rvars *)arg)->src[i];
    *out = (api_stored){s->name, s->kind, s->type, s->count};
}

/* Does RV hold every protected variable, each of its size? */
static int match(cairn_ctx *ctx, long id, const api_rvars *rv)
{
    CN_TRY(api_match(ctx, id, (uint32_t)ctx->rank, NULL, rv->n, read_entry, (void *)rv));
    for (size_t i = 0; i < rv->n; i++) {
        const lvl_src *s = &rv->src[i];
        const api_var *v = s->kind == CN_KIND_VAR ? api_var_find(ctx, s->name) : NULL;
        if (v && v->kind == CN_KIND_VAR && s->size != v->count * cairn_type_size(v->type))
            return cn_fail(&ctx->err, CAIRN_ECORRUPT,
                           "PFS generation %ld: variable '%s' of rank %d holds %llu bytes, not "
                           "%zu", id, s->name, ctx->rank, (unsigned long long)s->size,
                           v->count * cairn_type_size(v->type));
    }
    return 0;
}

int api_pfs_restore(cairn_ctx *ctx, long id)
{
    api_rvars *all = calloc((size_t)ctx->nranks, sizeof *all);
    int rc = all ? 0 : cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    cn_pindex x = {0};
    int jobfd = rc < 0 ? rc : api_pfs_open_gen(ctx, id, &x);
    if (jobfd >= 0) {
        rc = api_pfs_read(ctx, jobfd, &x, is_me, ctx, all);
        close(jobfd);
    } else if (rc == 0) {
        rc = jobfd;
    }
    cn_pindex_free(&x);
    api_rvars *mine = all ? &all[ctx->rank] : NULL;
    rc = api_agree(ctx, rc);
    if (rc == 0)
        rc = api_agree(ctx, match(ctx, id, mine));
    if (rc == 0) /* agreed: a rank whose files fail leaves the others' memory alone */
        rc = api_agree(ctx, api_files_restore_src(ctx, mine->src, mine->n));
    for (size_t i = 0; rc == 0 && i < mine->n; i++) {
        const lvl_src *s = &mine->src[i];
        api_var *v = s->kind == CN_KIND_VAR ? api_var_find(ctx, s->name) : NULL;
        if (v && v->kind == CN_KIND_VAR && s->size > 0)
            memcpy(v->ptr, s->ptr, s->size);
    }
    if (rc == 0)
        api_incr_reset(ctx); /* no parent on this node: the next checkpoint is full */
    if (all)
        api_rvars_free(mine);
    free(all);
    return rc;
}
