/*
 * restvar.c - one variable at a time: cairn_var_query describes a stored
 * variable (so that the application can allocate it before protecting it),
 * cairn_restart_var restores one protected variable.
 *
 * Both are cairn_restart's pass (restart.c): lost nodes rebuilt, a PFS
 * generation staged in when that is what a restart would read, the
 * generation chosen the same way and its chain verified on every rank. Then
 * cairn_var_query reads the variable's entry of this rank's newest link (no
 * frame is decoded, no memory written); cairn_restart_var checks that entry
 * against the protected variable, decodes every frame once (that variable
 * into a buffer the check keeps, chain.c), agrees, and only then copies it
 * into that one variable. Other protected memory and
 * the routed files directory are left as they are.
 * Both are collective: every rank names the same variable (checked).
 */
#include "api/api.h"

#include <stdio.h>
#include <string.h>

/* Collective: NAME valid and the same on every rank (agreed, CAIRN_EINVAL). */
static int same_name(cairn_ctx *ctx, const char *what, const char *name)
{
    int rc = 0;
    if (!name || !cn_name_ok(name))
        rc = cn_fail(&ctx->err, CAIRN_EINVAL, "%s: bad variable name '%s'", what,
                     name ? name : "(null)");
    CN_TRY(api_agree(ctx, rc));
    char first[CAIRN_NAME_MAX + 1] = "";
    snprintf(first, sizeof first, "%s", name);
    if (MPI_Bcast(first, sizeof first, MPI_CHAR, 0, ctx->comm) != MPI_SUCCESS)
        rc = cn_fail(&ctx->err, CAIRN_EMPI, "%s: MPI_Bcast failed", what);
    else if (strcmp(first, name) != 0)
        rc = cn_fail(&ctx->err, CAIRN_EINVAL, "%s: rank %d names '%s', rank 0 '%s'", what,
                     ctx->rank, name, first);
    return api_agree(ctx, rc);
}

static int bad_id(cairn_ctx *ctx, const char *what, long id)
{
    int rc = id < 0 && id != CAIRN_LATEST
                 ? cn_fail(&ctx->err, CAIRN_EINVAL, "%s: bad generation id %ld", what, id)
                 : 0;
    return api_agree(ctx, rc);
}

CAIRN_EXPORT int cairn_var_query(cairn_ctx *ctx, long id, const char *name, cairn_var_info *info)
{
    if (!ctx)
        return CAIRN_EINVAL;
    api_enter(ctx);
    CN_TRY(bad_id(ctx, "var_query", id));
    CN_TRY(same_name(ctx, "var_query", name));
    int rc = info ? 0 : cn_fail(&ctx->err, CAIRN_EINVAL, "var_query '%s': info is NULL", name);
    CN_TRY(api_agree(ctx, rc));
    cairn_var_info got_info;
    const api_want w = {API_WANT_INFO, name, &got_info};
    long got = -1;
    CN_TRY(api_restart_pass(ctx, id, &w, &got));
    *info = got_info;
    return 0;
}

CAIRN_EXPORT int cairn_restart_var(cairn_ctx *ctx, long id, const char *name, long *restored_id)
{
    if (!ctx)
        return CAIRN_EINVAL;
    api_enter(ctx);
    CN_TRY(bad_id(ctx, "restart_var", id));
    CN_TRY(same_name(ctx, "restart_var", name));
    const api_var *v = api_var_find(ctx, name);
    int rc = !v || v->kind != CN_KIND_VAR
                 ? cn_fail(&ctx->err, CAIRN_EINVAL,
                           "restart_var: '%s' is not a protected variable (protect it first: "
                           "cairn_var_query says its type and size)",
                           name)
                 : 0;
    CN_TRY(api_agree(ctx, rc));
    const api_want w = {API_WANT_VAR, name, NULL};
    long got = -1;
    CN_TRY(api_restart_pass(ctx, id, &w, &got));
    if (restored_id)
        *restored_id = got;
    cn_info("restored variable '%s' of generation %ld", name, got);
    return 0;
}
