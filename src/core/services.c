/*
 * services.c - the small services of the context that the levels call: the
 * variable table (find, add, remove), which levels this job can do, the
 * restart's note of a generation that exists but cannot be used, the
 * layout record lookup, and the routed files' staging directory
 * files/rank-<r>/ (emptied after a checkpoint, refilled by a restart).
 */
#include "core/core.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

api_var *api_var_find(cairn_ctx *ctx, const char *name)
{
    for (size_t i = 0; i < ctx->nvars; i++)
        if (strcmp(ctx->vars[i].name, name) == 0)
            return &ctx->vars[i];
    return NULL;
}

api_var *api_var_add(cairn_ctx *ctx, const char *name)
{
    if (ctx->nvars == ctx->cap) {
        size_t cap = ctx->cap ? 2 * ctx->cap : 16;
        api_var *v = realloc(ctx->vars, cap * sizeof *v);
        if (!v)
            return NULL;
        ctx->vars = v;
        ctx->cap = cap;
    }
    api_var *v = &ctx->vars[ctx->nvars++];
    memset(v, 0, sizeof *v);
    snprintf(v->name, sizeof v->name, "%s", name);
    v->hint = -1;
    return v;
}

/* Remove entry V of the variable table, keeping the others in order. */
void api_var_remove(cairn_ctx *ctx, api_var *v)
{
    size_t i = (size_t)(v - ctx->vars);
    memmove(v, v + 1, (ctx->nvars - i - 1) * sizeof *v);
    ctx->nvars--;
}

int api_level_usable(const cairn_ctx *ctx, int level, cn_err *err)
{
    int rc = 0;
    if (level < 1 || level > 4)
        rc = cn_fail(err, CAIRN_EINVAL, "level %d does not exist (1..4)", level);
    else if (level == CAIRN_LEVEL_PFS && !ctx->cfg.pfs_dir[0])
        rc = cn_fail(err, CAIRN_ECONFIG, "level 4 (pfs) needs a PFS directory: set pfs.dir "
                     "(or CAIRN_PFS_DIR)");
    else if (level == CAIRN_LEVEL_PARTNER && ctx->nnodes < 2)
        rc = cn_fail(err, CAIRN_ECONFIG, "level 2 needs at least 2 nodes; this job runs on 1");
    else if (level == CAIRN_LEVEL_ERASURE && ctx->min_set <= ctx->cfg.ec_m)
        rc = cn_fail(err, CAIRN_ECONFIG,
                     "level 3 with erasure.m = %d needs more than %d nodes in every encoding "
                     "set; %d nodes in %d set(s) of at most erasure.set_size = %d leave %d in the "
                     "smallest",
                     ctx->cfg.ec_m, ctx->cfg.ec_m, ctx->nnodes, ctx->nsets, ctx->cfg.set_size,
                     ctx->min_set);
    return rc;
}

int api_local_level(const cairn_ctx *ctx, int level)
{
    if (level < CAIRN_LEVEL_PFS)
        return level;
    if (ctx->min_set > ctx->cfg.ec_m)
        return CAIRN_LEVEL_ERASURE;
    return ctx->nnodes >= 2 ? CAIRN_LEVEL_PARTNER : CAIRN_LEVEL_LOCAL;
}

void api_note_lost(cairn_ctx *ctx, long id, int code, const char *fmt, ...)
{
    if (id > ctx->lost_bound || (ctx->lost_code && id <= ctx->lost_id))
        return;
    ctx->lost_code = code;
    ctx->lost_id = id;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->lost_note, sizeof ctx->lost_note, fmt, ap);
    va_end(ap);
}

bool api_rank_on_node(void *arg, uint32_t rank)
{
    const cairn_ctx *ctx = arg;
    return rank < (uint32_t)ctx->nranks && (int)ctx->rank_node[rank] == ctx->node;
}

bool api_remap_applies(const cairn_ctx *ctx)
{
    size_t n = 0;
    for (size_t i = 0; i < ctx->nvars; i++) {
        const api_var *v = &ctx->vars[i];
        if (v->kind != CN_KIND_VAR)
            continue;
        if (v->dist == API_DIST_NONE)
            return false;
        n++;
    }
    return n > 0;
}

int api_layout_find(const uint8_t *p, size_t len, const char *name, api_block *b)
{
    cn_err err = {0};
    return cn_layout_find(p, len, name, b, &err);
}

void api_routes_end(cairn_ctx *ctx)
{
    for (size_t i = ctx->nvars; i-- > 0;)
        if (ctx->vars[i].kind == CN_KIND_FILE)
            api_var_remove(ctx, &ctx->vars[i]);
}

int api_staging_empty(cairn_ctx *ctx)
{
    int fd = cn_dir_listing_fd(ctx->filesfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        int e = fd >= 0 ? errno : -fd;
        if (fd >= 0)
            close(fd);
        return cn_fail_errno(&ctx->err, e, "cannot list the routed files in %s", ctx->files_path);
    }
    int rc = 0;
    for (struct dirent *de; rc == 0 && (de = readdir(d)) != NULL;)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            rc = cn_rmtree_at(ctx->filesfd, de->d_name, &ctx->err);
    closedir(d);
    if (rc < 0)
        cn_err_prefix(&ctx->err, "%s: ", ctx->files_path);
    return rc;
}

int api_files_restore(cairn_ctx *ctx, const cn_ckpt *c)
{
    api_routes_end(ctx);
    CN_TRY(api_staging_empty(ctx));
    for (uint32_t i = 0; i < c->h.nentries; i++) {
        const cn_entry *e = &c->e[i];
        if (e->kind == CN_KIND_FILE)
            CN_TRY(cn_write_atomic(ctx->filesfd, e->name, c->map + e->offset, e->stored_size,
                                   &ctx->err));
    }
    return 0;
}
