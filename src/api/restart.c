/*
 * restart.c - restore protected memory from a generation.
 *
 * Choose: the newest generation every rank can use (inventory.c), or the one
 * asked for. Verify: every rank maps its file, checks header against the
 * manifest, every block checksum, and that each protected variable is there
 * with the same type and element count; ranks agree. Only then copy: routed
 * files back into files/rank-<r>/, then variables into protected memory. A
 * corrupt or missing file makes the generation unusable; with CAIRN_LATEST
 * the next older one is tried, with a warning naming what broke.
 */
#include "api/api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Open and fully verify this rank's file of generation G. */
static int verify_rank(cairn_ctx *ctx, const api_gen *g, cn_ckpt **out)
{
    char gen[64], name[64], path[4600];
    cn_gen_dirname(gen, sizeof gen, g->id);
    cn_rank_filename(name, sizeof name, (uint32_t)ctx->rank);
    snprintf(path, sizeof path, "%s/%s/%s", ctx->node_path, gen, name);
    int genfd = cn_dir_open(ctx->nodefd, gen, false, &ctx->err);
    if (genfd < 0)
        return genfd;
    int rc = cn_ckpt_open(genfd, name, path, out, &ctx->err);
    close(genfd);
    CN_TRY(rc);
    const cn_header *h = &(*out)->h;
    if (h->header_sum != g->header_sum || h->generation != g->id ||
        h->rank != (uint32_t)ctx->rank || h->nranks != (uint32_t)ctx->size)
        rc = cn_fail(&ctx->err, CAIRN_ECORRUPT, "%s: header does not match the node manifest",
                     path);
    if (rc == 0)
        rc = cn_ckpt_verify(*out, path, &ctx->err);
    if (rc < 0) {
        cn_ckpt_close(*out);
        *out = NULL;
    }
    return rc;
}

/* Every protected variable must be in C with the same type and count. */
static int check_match(cairn_ctx *ctx, const cn_ckpt *c)
{
    for (size_t i = 0; i < ctx->nvars; i++) {
        const api_var *v = &ctx->vars[i];
        const cn_entry *e = cn_ckpt_find(c, v->name);
        if (v->kind == CN_KIND_FILE)
            continue; /* routed files are restored if present */
        if (!e || e->kind != CN_KIND_VAR)
            return cn_fail(&ctx->err, CAIRN_EMISMATCH,
                           "variable '%s' is not in generation %lld", v->name,
                           (long long)c->h.generation);
        if (e->type != (uint8_t)v->type || e->count != v->count)
            return cn_fail(&ctx->err, CAIRN_EMISMATCH,
                           "variable '%s': checkpoint has %llu elements of type %u, "
                           "protected are %zu of type %d",
                           v->name, (unsigned long long)e->count, e->type, v->count,
                           (int)v->type);
    }
    return 0;
}

static int restore(cairn_ctx *ctx, const cn_ckpt *c)
{
    for (uint32_t i = 0; i < c->h.nentries; i++) {
        const cn_entry *e = &c->e[i];
        if (e->kind != CN_KIND_FILE)
            continue;
        CN_TRY(api_file_register(ctx, e->name));
        CN_TRY(cn_write_atomic(ctx->filesfd, e->name, c->map + e->offset, e->stored_size,
                               &ctx->err));
    }
    return api_restore_vars(ctx, c);
}

/* One attempt at generation G: verify everywhere, then restore everywhere. */
static int try_generation(cairn_ctx *ctx, const api_gen *g)
{
    cn_ckpt *c = NULL;
    int rc = verify_rank(ctx, g, &c);
    if (rc == 0)
        rc = check_match(ctx, c);
    rc = api_agree(ctx, rc);
    if (rc == 0)
        rc = api_agree(ctx, restore(ctx, c));
    cn_ckpt_close(c);
    return rc;
}

CAIRN_EXPORT int cairn_restart(cairn_ctx *ctx, long id, long *restored_id)
{
    if (!ctx)
        return CAIRN_EINVAL;
    cn_err_clear(&ctx->err);
    int rc = id < 0 && id != CAIRN_LATEST
                 ? cn_fail(&ctx->err, CAIRN_EINVAL, "restart: bad generation id %ld", id)
                 : 0;
    CN_TRY(api_agree(ctx, rc));
    long whole = -1; /* rebuild lost nodes first (levels 2 and 3) */
    CN_TRY(api_recover(ctx, id, &whole));
    api_gen *g = NULL;
    int n = 0;
    rc = api_agree(ctx, api_local_gens(ctx, &g, &n));
    long bound = id == CAIRN_LATEST ? 0x7fffffffffffffffL : id, got = -1;
    int skipped = 0;               /* code of the newest generation skipped, if any */
    char skipped_msg[sizeof ctx->msg] = "";
    while (rc == 0) {
        long cand = api_common_below(ctx, g, n, bound, &rc);
        if (rc < 0)
            break;
        if (cand < 0 || (id != CAIRN_LATEST && cand != id)) {
            if (skipped) { /* nothing older: report what broke the newest */
                rc = skipped;
                snprintf(ctx->err.msg, sizeof ctx->err.msg, "no usable generation; %.990s",
                         skipped_msg);
                break;
            }
            if (ctx->layout_note[0]) {
                rc = cn_fail(&ctx->err, CAIRN_EMISMATCH, "%s", ctx->layout_note);
                break;
            }
            if (id == CAIRN_LATEST)
                cn_fail(&ctx->err, CAIRN_ENOENT, "no complete checkpoint of job %s in %s",
                        ctx->job, ctx->node_path);
            else
                cn_fail(&ctx->err, CAIRN_ENOENT, "generation %ld of job %s is not complete in %s",
                        id, ctx->job, ctx->node_path);
            rc = CAIRN_ENOENT;
            break;
        }
        rc = try_generation(ctx, api_gen_find(g, n, cand));
        if (rc == 0) {
            got = cand;
        } else if (id == CAIRN_LATEST && (rc == CAIRN_ECORRUPT || rc == CAIRN_ENOENT)) {
            if (ctx->rank == 0)
                cn_warn("generation %ld is unusable (%s); trying an older one", cand, ctx->msg);
            if (!skipped) {
                skipped = rc;
                snprintf(skipped_msg, sizeof skipped_msg, "generation %ld: %.900s", cand, ctx->msg);
            }
            rc = 0;
            bound = cand - 1;
            continue;
        }
        break;
    }
    free(g);
    rc = api_agree(ctx, rc);
    if (rc < 0)
        return rc;
    ctx->last_id = got;
    if (restored_id)
        *restored_id = got;
    cn_info("restored generation %ld", got);
    return 0;
}

CAIRN_EXPORT int cairn_rebuild(cairn_ctx *ctx, long id, long *rebuilt_id)
{
    if (!ctx)
        return CAIRN_EINVAL;
    cn_err_clear(&ctx->err);
    int rc = id < 0 && id != CAIRN_LATEST
                 ? cn_fail(&ctx->err, CAIRN_EINVAL, "rebuild: bad generation id %ld", id)
                 : 0;
    CN_TRY(api_agree(ctx, rc));
    long got = -1;
    CN_TRY(api_recover(ctx, id, &got));
    if (rebuilt_id)
        *rebuilt_id = got;
    return 0;
}
