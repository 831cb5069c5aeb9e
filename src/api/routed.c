/*
 * routed.c - routed files: files the application writes itself, taken into
 * a generation (cairn_route_file), with SCR's semantics (SCR_Route_file).
 *
 * A name is routed for the next checkpoint only: that checkpoint holds
 * exactly the files routed since the previous checkpoint or restart, and
 * every checkpoint call that gets past its argument checks ends the routes,
 * whether it completes or fails (a routed file never written fails that one
 * checkpoint, by name, and no later one). Local calls, no communication.
 *
 * Owns the routed entries of the variable table (kind CN_KIND_FILE, added
 * and removed here only) and the staging directory <node>/files/rank-<r>/
 * (ctx->filesfd), which cairn empties: after a checkpoint completes (its
 * files are in the generation), and when cairn_restart puts the restored
 * generation's files there, so that it then holds exactly those.
 */
#include "api/api.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int set_msg(cairn_ctx *ctx, int rc)
{
    snprintf(ctx->msg, sizeof ctx->msg, "%s", ctx->err.msg);
    return rc;
}

/* 0 if NAME can be a routed file's name, else CAIRN_EINVAL saying why. */
static int bad_name(cairn_ctx *ctx, const char *what, const char *name)
{
    cn_err *err = &ctx->err;
    if (!name)
        return cn_fail(err, CAIRN_EINVAL, "%s: no name (NULL)", what);
    if (!*name)
        return cn_fail(err, CAIRN_EINVAL, "%s: the name is empty", what);
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return cn_fail(err, CAIRN_EINVAL, "%s: '%s' is not a file name", what, name);
    if (strnlen(name, CAIRN_NAME_MAX + 1) > CAIRN_NAME_MAX)
        return cn_fail(err, CAIRN_EINVAL, "%s: the name '%.40s...' is longer than %d bytes", what,
                       name, CAIRN_NAME_MAX);
    if (strchr(name, '/'))
        return cn_fail(err, CAIRN_EINVAL, "%s: routed file names are flat: '%s' contains '/'",
                       what, name);
    if (strcmp(name, API_LAYOUT_NAME) == 0)
        return cn_fail(err, CAIRN_EINVAL, "%s: '%s' is a name cairn keeps for itself", what,
                       name);
    return 0;
}

CAIRN_EXPORT int cairn_route_file(cairn_ctx *ctx, const char *name, char *path, size_t path_len)
{
    if (!ctx)
        return CAIRN_EINVAL;
    api_enter(ctx);
    if (bad_name(ctx, "route_file", name) < 0)
        return set_msg(ctx, CAIRN_EINVAL);
    if (!path)
        return set_msg(ctx, cn_fail(&ctx->err, CAIRN_EINVAL, "route_file '%s': NULL path buffer",
                                    name));
    api_var *v = api_var_find(ctx, name);
    if (v && v->kind != CN_KIND_FILE)
        return set_msg(ctx, cn_fail(&ctx->err, CAIRN_EINVAL,
                                    "route_file '%s': the name is a protected variable", name));
    int n = snprintf(path, path_len, "%s/%s", ctx->files_path, name);
    if (n < 0 || (size_t)n >= path_len)
        return set_msg(ctx, cn_fail(&ctx->err, CAIRN_EINVAL,
                                    "route_file '%s': path buffer too small (%d bytes needed)",
                                    name, n + 1));
    if (v)
        return 0; /* routed already */
    if (!(v = api_var_add(ctx, name)))
        return set_msg(ctx, cn_fail(&ctx->err, CAIRN_ENOMEM, "route_file '%s': out of memory",
                                    name));
    v->kind = CN_KIND_FILE;
    v->type = CAIRN_BYTE;
    return 0;
}

CAIRN_EXPORT int cairn_unroute_file(cairn_ctx *ctx, const char *name)
{
    if (!ctx)
        return CAIRN_EINVAL;
    api_enter(ctx);
    if (bad_name(ctx, "unroute_file", name) < 0)
        return set_msg(ctx, CAIRN_EINVAL);
    api_var *v = api_var_find(ctx, name);
    if (!v || v->kind != CN_KIND_FILE)
        return set_msg(ctx, cn_fail(&ctx->err, CAIRN_EINVAL,
                                    "unroute_file: '%s' is %s", name,
                                    v ? "a protected variable, not a routed file"
                                      : "not routed for the next checkpoint"));
    api_var_remove(ctx, v);
    return 0;
}

