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
 * The record, little-endian:
 *   u32 version (1), u32 nvars, then per variable:
 *   u16 name length, the name (no NUL), u8 dist (1 block, 2 replicated),
 *   u8 type, u8 ndims (1..3), u8 0, u64 global[3], u64 start[3], u64 count[3]
 * (unused dimensions 0; a replicated variable: ndims 1, global = count =
 * its element count, start 0).
 *
 * Ownership: api_layout_encode's buffer is the caller's to free.
 */
#include "api/api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REC_FIXED (4 + 9 * 8)

static int set_msg(cairn_ctx *ctx, int rc)
{
    snprintf(ctx->msg, sizeof ctx->msg, "%s", ctx->err.msg);
    return rc;
}

static api_var *var_of(cairn_ctx *ctx, const char *name, const char *what)
{
    api_var *v = name ? api_var_find(ctx, name) : NULL;
    if (!v || v->kind != CN_KIND_VAR) {
        set_msg(ctx, cn_fail(&ctx->err, CAIRN_EINVAL, "%s: '%s' is not a protected variable",
                             what, name ? name : "(null)"));
        return NULL;
    }
    return v;
}

CAIRN_EXPORT int cairn_protect_block(cairn_ctx *ctx, const char *name, int ndims,
                                     const size_t *global, const size_t *start,
                                     const size_t *count)
{
    if (!ctx)
        return CAIRN_EINVAL;
    api_enter(ctx);
    api_var *v = var_of(ctx, name, "protect_block");
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
    api_enter(ctx);
    api_var *v = var_of(ctx, name, "protect_replicated");
    if (!v)
        return CAIRN_EINVAL;
    v->dist = API_DIST_REPLICATED;
    return 0;
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

int api_layout_encode(const cairn_ctx *ctx, uint8_t **out, size_t *len)
{
    size_t size = 8, n = 0;
    *out = NULL;
    *len = 0;
    for (size_t i = 0; i < ctx->nvars; i++) {
        const api_var *v = &ctx->vars[i];
        if (v->kind == CN_KIND_VAR && v->dist != API_DIST_NONE) {
            size += 2 + strlen(v->name) + REC_FIXED;
            n++;
        }
    }
    if (n == 0)
        return 0;
    uint8_t *p = calloc(1, size);
    if (!p)
        return CAIRN_ENOMEM;
    cn_put_u32(p, 1);
    cn_put_u32(p + 4, (uint32_t)n);
    uint8_t *q = p + 8;
    for (size_t i = 0; i < ctx->nvars; i++) {
        const api_var *v = &ctx->vars[i];
        if (v->kind != CN_KIND_VAR || v->dist == API_DIST_NONE)
            continue;
        size_t nl = strlen(v->name);
        cn_put_u16(q, (uint16_t)nl);
        memcpy(q + 2, v->name, nl);
        q += 2 + nl;
        bool block = v->dist == API_DIST_BLOCK;
        q[0] = (uint8_t)v->dist;
        q[1] = (uint8_t)v->type;
        q[2] = (uint8_t)(block ? v->bdims : 1);
        q[3] = 0;
        for (int d = 0; d < CAIRN_MAX_DIMS; d++) {
            cn_put_u64(q + 4 + 8 * d, block ? v->global[d] : d == 0 ? v->count : 0);
            cn_put_u64(q + 28 + 8 * d, block ? v->start[d] : 0);
            cn_put_u64(q + 52 + 8 * d, block ? v->bcount[d] : d == 0 ? v->count : 0);
        }
        q += REC_FIXED;
    }
    *out = p;
    *len = size;
    return 0;
}

int api_layout_find(const uint8_t *p, size_t len, const char *name, api_block *b)
{
    if (len < 8 || cn_get_u32(p) != 1)
        return CAIRN_ECORRUPT;
    uint32_t n = cn_get_u32(p + 4);
    size_t at = 8, want = strlen(name);
    for (uint32_t i = 0; i < n; i++) {
        if (len - at < 2)
            return CAIRN_ECORRUPT;
        size_t nl = cn_get_u16(p + at);
        if (nl == 0 || nl > CAIRN_NAME_MAX || len - at - 2 < nl + REC_FIXED)
            return CAIRN_ECORRUPT;
        const uint8_t *nm = p + at + 2, *q = nm + nl;
        at += 2 + nl + REC_FIXED;
        if (q[0] < API_DIST_BLOCK || q[0] > API_DIST_REPLICATED || q[2] < 1 ||
            q[2] > CAIRN_MAX_DIMS)
            return CAIRN_ECORRUPT;
        if (nl != want || memcmp(nm, name, nl) != 0)
            continue;
        memset(b, 0, sizeof *b);
        b->dist = q[0], b->type = q[1], b->ndims = q[2];
        for (int d = 0; d < CAIRN_MAX_DIMS; d++) {
            b->global[d] = cn_get_u64(q + 4 + 8 * d);
            b->start[d] = cn_get_u64(q + 28 + 8 * d);
            b->count[d] = cn_get_u64(q + 52 + 8 * d);
            if (d < b->ndims && (b->start[d] > b->global[d] ||
                                 b->count[d] > b->global[d] - b->start[d]))
                return CAIRN_ECORRUPT;
        }
        return 0;
    }
    return CAIRN_ENOENT;
}
