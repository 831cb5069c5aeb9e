/*
 * protect.c - the variable table: what the next checkpoint stores (and the
 * label it gets, cairn_label).
 *
 * Local calls, no communication. The table holds names, types, shapes and
 * borrowed pointers; it never owns or copies protected memory. Routed files
 * live in the same table (kind CN_KIND_FILE) so a name means one thing;
 * routed.c adds and removes those.
 */
#include "api/api.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int set_msg(cairn_ctx *ctx, int rc)
{
    snprintf(ctx->msg, sizeof ctx->msg, "%s", ctx->err.msg);
    return rc;
}

CAIRN_EXPORT int cairn_protect(cairn_ctx *ctx, const char *name, void *ptr, cairn_type type,
                               size_t count, int ndims, const size_t *dims)
{
    if (!ctx)
        return CAIRN_EINVAL;
    cn_err *err = &ctx->err;
    api_enter(ctx);
    if (!cn_name_ok(name) || strcmp(name, API_LAYOUT_NAME) == 0 ||
        strcmp(name, CN_PDELTA_NAME) == 0)
        return set_msg(ctx, cn_fail(err, CAIRN_EINVAL, "protect: bad name (1..%d bytes, no '/', "
                                    "not %s or %s)", CAIRN_NAME_MAX, API_LAYOUT_NAME,
                                    CN_PDELTA_NAME));
    if (cairn_type_size(type) == 0 || (int)type < 0)
        return set_msg(ctx, cn_fail(err, CAIRN_EINVAL, "protect '%s': unknown type %d", name,
                                    (int)type));
    if (!ptr && count > 0)
        return set_msg(ctx, cn_fail(err, CAIRN_EINVAL, "protect '%s': NULL pointer", name));
    if (ndims < 0 || ndims > CAIRN_MAX_DIMS || (ndims > 0 && !dims))
        return set_msg(ctx, cn_fail(err, CAIRN_EINVAL, "protect '%s': ndims must be 0..%d", name,
                                    CAIRN_MAX_DIMS));
    size_t prod = 1, bytes;
    for (int d = 0; d < ndims; d++)
        if (__builtin_mul_overflow(prod, dims[d], &prod))
            prod = SIZE_MAX;
    if (ndims > 0 && prod != count)
        return set_msg(ctx, cn_fail(err, CAIRN_EINVAL,
                                    "protect '%s': dims multiply to %zu, count is %zu", name,
                                    prod, count));
    if (__builtin_mul_overflow(count, cairn_type_size(type), &bytes))
        return set_msg(ctx, cn_fail(err, CAIRN_EINVAL, "protect '%s': size overflows", name));
    api_var *v = api_var_find(ctx, name);
    if (v && v->kind != CN_KIND_VAR)
        return set_msg(ctx, cn_fail(err, CAIRN_EINVAL, "protect '%s': name is a routed file",
                                    name));
    double bound = v ? v->bound : 0.0, rel_bound = v ? v->rel_bound : 0.0;
    int codec = v ? v->codec : -1;
    if (!v && !(v = api_var_add(ctx, name)))
        return set_msg(ctx, cn_fail(err, CAIRN_ENOMEM, "protect '%s': out of memory", name));
    v->codec = codec >= 0 && codec != CZ_AUTO && !cz_codec_accepts(codec, (uint8_t)type)
                   ? -1 /* the new type cannot keep it */
                   : codec;
    v->chosen = -1;
    if (v->count != count)
        v->dist = API_DIST_NONE; /* a block no longer its size (cairn_protect_block) */
    v->kind = CN_KIND_VAR;
    v->type = type;
    v->ptr = ptr;
    v->count = count;
    v->ndims = ndims;
    memset(v->dims, 0, sizeof v->dims);
    for (int d = 0; d < ndims; d++)
        v->dims[d] = dims[d];
    bool fp = type == CAIRN_FLOAT || type == CAIRN_DOUBLE;
    v->bound = fp ? bound : 0.0;
    v->rel_bound = fp ? rel_bound : 0.0;
    if (!fp && cz_is_lossy(v->codec))
        v->codec = -1;
    return 0;
}

CAIRN_EXPORT int cairn_unprotect(cairn_ctx *ctx, const char *name)
{
    if (!ctx)
        return CAIRN_EINVAL;
    api_enter(ctx);
    api_var *v = name ? api_var_find(ctx, name) : NULL;
    if (!v)
        return set_msg(ctx, cn_fail(&ctx->err, CAIRN_EINVAL, "unprotect: '%s' is not protected",
                                    name ? name : "(null)"));
    *v = ctx->vars[--ctx->nvars];
    return 0;
}

api_var *api_var_for(cairn_ctx *ctx, const char *name, const char *what)
{
    api_enter(ctx);
    api_var *v = name ? api_var_find(ctx, name) : NULL;
    if (!v || v->kind != CN_KIND_VAR) {
        set_msg(ctx, cn_fail(&ctx->err, CAIRN_EINVAL, "%s: '%s' is not a protected variable",
                             what, name ? name : "(null)"));
        return NULL;
    }
    return v;
}

/* Both bound setters: absolute (REL false) or relative to the value range. */
static int set_bound(cairn_ctx *ctx, const char *name, double bound, bool rel)
{
    if (!ctx)
        return CAIRN_EINVAL;
    api_var *v = api_var_for(ctx, name, "protect_bound");
    if (!v)
        return CAIRN_EINVAL;
    if (v->type != CAIRN_FLOAT && v->type != CAIRN_DOUBLE)
        return set_msg(ctx, cn_fail(&ctx->err, CAIRN_EINVAL,
                                    "protect_bound '%s': only float and double may be lossy",
                                    name));
    if (!isfinite(bound) || bound < 0 || (rel && bound >= 1))
        return set_msg(ctx, cn_fail(&ctx->err, CAIRN_EINVAL,
                                    "protect_bound '%s': bound must be finite and >= 0%s", name,
                                    rel ? " and below 1" : ""));
    v->bound = rel ? 0.0 : bound;
    v->rel_bound = rel ? bound : 0.0;
    v->chosen = -1;
    if (bound == 0 && cz_is_lossy(v->codec))
        v->codec = -1; /* lossless again: back to the configured codec */
    return 0;
}

CAIRN_EXPORT int cairn_protect_bound(cairn_ctx *ctx, const char *name, double bound)
{
    return set_bound(ctx, name, bound, false);
}

CAIRN_EXPORT int cairn_protect_bound_rel(cairn_ctx *ctx, const char *name, double rel_bound)
{
    return set_bound(ctx, name, rel_bound, true);
}

CAIRN_EXPORT int cairn_protect_codec(cairn_ctx *ctx, const char *name, const char *codec)
{
    if (!ctx)
        return CAIRN_EINVAL;
    api_var *v = api_var_for(ctx, name, "protect_codec");
    if (!v)
        return CAIRN_EINVAL;
    int id = codec ? cz_codec_parse(codec) : -1;
    if (codec && id < 0)
        return set_msg(ctx, cn_fail(&ctx->err, CAIRN_EINVAL,
                                    "protect_codec '%s': unknown codec '%s' (one of: auto, %s)",
                                    name, codec, cz_codec_list()));
    if (id >= 0 && id != CZ_AUTO && !cz_codec_accepts(id, (uint8_t)v->type))
        return set_msg(ctx, cn_fail(&ctx->err, CAIRN_EINVAL,
                                    "protect_codec '%s': %s takes only float and double", name,
                                    codec));
    if (cz_is_lossy(id) && v->bound == 0 && v->rel_bound == 0)
        return set_msg(ctx, cn_fail(&ctx->err, CAIRN_EINVAL,
                                    "protect_codec '%s': %s is lossy; give the variable an error "
                                    "bound first (cairn_protect_bound)",
                                    name, codec));
    v->codec = id;
    v->chosen = -1;
    return 0;
}

CAIRN_EXPORT int cairn_protect_hint(cairn_ctx *ctx, const char *name, int what)
{
    if (!ctx)
        return CAIRN_EINVAL;
    api_var *v = api_var_for(ctx, name, "protect_hint");
    if (!v)
        return CAIRN_EINVAL;
    if (what != CAIRN_UNCHANGED && what != CAIRN_CHANGED)
        return set_msg(ctx, cn_fail(&ctx->err, CAIRN_EINVAL,
                                    "protect_hint '%s': %d is neither CAIRN_UNCHANGED nor "
                                    "CAIRN_CHANGED",
                                    name, what));
    v->hint = what;
    return 0;
}

CAIRN_EXPORT int cairn_label(cairn_ctx *ctx, const char *label)
{
    if (!ctx)
        return CAIRN_EINVAL;
    api_enter(ctx);
    if (!label) {
        ctx->label[0] = '\0';
        return 0;
    }
    size_t n = strnlen(label, CAIRN_LABEL_MAX + 1);
    if (n == 0 || n > CAIRN_LABEL_MAX || !cn_label_ok(label))
        return set_msg(ctx, cn_fail(&ctx->err, CAIRN_EINVAL,
                                    "label: %s (1..%d printable ASCII bytes; NULL clears it)",
                                    n == 0                  ? "empty"
                                    : n > CAIRN_LABEL_MAX ? "too long"
                                                            : "a byte is not printable ASCII",
                                    CAIRN_LABEL_MAX));
    memcpy(ctx->label, label, n + 1);
    return 0;
}
