/*
 * layout.c - distributed and replicated variables.
 *
 * cairn_protect_block says which block of a global array a variable holds on
 * this rank; cairn_protect_replicated that every rank holds the same value.
 * Both are kept in the variable table (api_var.dist and the block) and go to
 * disk with every checkpoint as one extra entry of each rank file, the record
 * API_LAYOUT_NAME: raw bytes, so every level carries it unchanged (partner
 * copies, parity, the PFS aggregation and its stage-in) and a cairn that
 * does not know it restores the generation as before (stored variables that
 * are not protected are ignored). Read back only by a remapping restart.
 *
 * The record's format and parser are src/common/layout.c (fuzzed by
 * tests/fuzz/fuzz_layout.c); this file fills it from the variable table.
 *
 * Ownership: api_layout_encode's buffer is the caller's to free.
 */
#include "api/api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int set_msg(cairn_ctx *ctx, int rc)
{
    snprintf(ctx->msg, sizeof ctx->msg, "%s", ctx->err.msg);
    return rc;
}

CAIRN_EXPORT int cairn_protect_block(cairn_ctx *ctx, const char *name, int ndims,
                                     const size_t *global, const size_t *start,
                                     const size_t *count)
{
    if (!ctx)
        return CAIRN_EINVAL;
    api_var *v = api_var_for(ctx, name, "protect_block");
    if (!v)
        return CAIRN_EINVAL;
    if (ndims == 0) {
        v->dist = API_DIST_NONE;
        return 0;
    }
    if (ndims < 0 || ndims > CAIRN_MAX_DIMS || !global || !start || !count)
        return set_msg(ctx, cn_fail(&ctx->err, CAIRN_EINVAL,
                                    "protect_block '%s': ndims must be 0..%d, with GLOBAL, "
                                    "START and COUNT", name, CAIRN_MAX_DIMS));
    size_t prod = 1;
    for (int d = 0; d < ndims; d++) {
        if (global[d] == 0 || start[d] > global[d] || count[d] > global[d] - start[d])
            return set_msg(ctx, cn_fail(&ctx->err, CAIRN_EINVAL,
                                        "protect_block '%s': dimension %d: start %zu + count "
                                        "%zu is outside the global extent %zu",
                                        name, d, start[d], count[d], global[d]));
        if (__builtin_mul_overflow(prod, count[d], &prod))
            prod = SIZE_MAX;
    }
    if (prod != v->count)
        return set_msg(ctx, cn_fail(&ctx->err, CAIRN_EINVAL,
                                    "protect_block '%s': the block holds %zu elements, the "
                                    "variable %zu", name, prod, v->count));
    v->dist = API_DIST_BLOCK;
    v->bdims = ndims;
    for (int d = 0; d < CAIRN_MAX_DIMS; d++) {
        v->global[d] = d < ndims ? global[d] : 0;
        v->start[d] = d < ndims ? start[d] : 0;
        v->bcount[d] = d < ndims ? count[d] : 0;
    }
    return 0;
}

CAIRN_EXPORT int cairn_protect_replicated(cairn_ctx *ctx, const char *name)
{
    if (!ctx)
        return CAIRN_EINVAL;
    api_var *v = api_var_for(ctx, name, "protect_replicated");
    if (!v)
        return CAIRN_EINVAL;
    v->dist = API_DIST_REPLICATED;
    return 0;
}

int api_layout_encode(const cairn_ctx *ctx, uint8_t **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    size_t n = 0;
    for (size_t i = 0; i < ctx->nvars; i++)
        n += ctx->vars[i].kind == CN_KIND_VAR && ctx->vars[i].dist != API_DIST_NONE;
    if (n == 0)
        return 0;
    const char **names = calloc(n, sizeof *names);
    cn_block *b = calloc(n, sizeof *b);
    int rc = names && b ? 0 : CAIRN_ENOMEM;
    for (size_t i = 0, k = 0; rc == 0 && i < ctx->nvars; i++) {
        const api_var *v = &ctx->vars[i];
        if (v->kind != CN_KIND_VAR || v->dist == API_DIST_NONE)
            continue;
        bool block = v->dist == API_DIST_BLOCK;
        names[k] = v->name;
        b[k] = (cn_block){.dist = v->dist, .type = v->type, .ndims = block ? v->bdims : 1};
        for (int d = 0; d < CN_LAYOUT_DIMS; d++) {
            b[k].global[d] = block ? v->global[d] : d == 0 ? v->count : 0;
            b[k].start[d] = block ? v->start[d] : 0;
            b[k].count[d] = block ? v->bcount[d] : d == 0 ? v->count : 0;
        }
        k++;
    }
    cn_err err = {0};
    if (rc == 0)
        rc = cn_layout_encode(names, b, n, out, len, &err);
    free(names);
    free(b);
    return rc;
}

