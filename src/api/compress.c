/*
 * compress.c - which codec stores each variable on the way out.
 *
 * Out: a variable's codec is its own (cairn_protect_codec) or the configured
 * default (compress.codec). "auto" samples the variable (src/compress
 * choose.c) against this rank's storage bandwidth, as measured by the last
 * checkpoint, and keeps the pick for compress.resample checkpoints. Routed
 * files are stored raw. A float/double variable with an error bound goes to
 * a lossy codec (its own, else lossy.mode's; "auto" samples both), unless
 * it names a lossless one; a relative bound becomes absolute against the
 * variable's value range at this checkpoint. An fpzip variable of 2 or 3
 * dimensions is given its shape.
 *
 * The way back is chain.c's.
 */
#include "api/api.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int api_threads(const cairn_ctx *ctx)
{
    return ctx->cfg.z_threads ? ctx->cfg.z_threads : ctx->cores_per_rank;
}

/* The absolute bound of V now: its own, or relative to its finite range. */
static double abs_bound(const api_var *v)
{
    if (v->bound > 0 || v->rel_bound <= 0)
        return v->bound;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < v->count; i++) {
        double x = v->type == CAIRN_FLOAT ? (double)((const float *)v->ptr)[i]
                                          : ((const double *)v->ptr)[i];
        if (isfinite(x)) {
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
    }
    double range = hi > lo ? hi - lo : 0;
    double b = v->rel_bound * range;
    /* a constant (or all non-finite) field: any bound is met exactly; keep
     * it tiny but representable */
    return b > 0 && isfinite(b) ? b : v->rel_bound * (isfinite(hi) && hi != 0 ? fabs(hi) : 1.0);
}

/* The lossy codec for V (shape SH), or -1 to store it losslessly. */
static int lossy_codec(cairn_ctx *ctx, api_var *v, const cz_shape *sh, const cz_env *env)
{
    if (v->codec >= 0 && v->codec != CZ_AUTO && !cz_is_lossy(v->codec))
        return -1; /* the application named a lossless codec */
    if (cz_is_lossy(v->codec))
        return v->codec;
    if (ctx->cfg.lossy_mode != 0)
        return ctx->cfg.lossy_mode == 1 ? CZ_WAVELET : CZ_PREDICT;
    if (v->chosen < 0 || !cz_is_lossy(v->chosen) ||
        ctx->nckpt - v->chosen_at >= ctx->cfg.z_resample) {
        v->chosen = cz_choose_lossy(v->ptr, sh, env, &v->chosen_ratio);
        v->chosen_at = ctx->nckpt;
        cn_debug("'%s': lossy auto picked %s (sampled ratio %.3f)", v->name,
                 cz_codec_name(v->chosen), v->chosen_ratio);
    }
    return v->chosen;
}

void api_codecs(cairn_ctx *ctx, lvl_src *src, size_t n, cz_opts *z)
{
    *z = (cz_opts){.buf_size = ctx->cfg.z_buffer, .threads = api_threads(ctx),
                   .level = ctx->cfg.z_level};
    cz_env env = {.storage_bps = ctx->storage_bps, .threads = z->threads, .level = z->level,
                  .buf_size = z->buf_size};
    int def = ctx->cfg.codec == CN_CODEC_AUTO ? CZ_AUTO : ctx->cfg.codec;
    for (size_t i = 0; i < n; i++) {
        api_var *v = &ctx->vars[i];
        src[i].codec = CZ_RAW;
        if (v->kind != CN_KIND_VAR || src[i].size == 0)
            continue;
        double bound = abs_bound(v);
        if (bound > 0) {
            cz_shape *sh = &src[i].shape;
            *sh = (cz_shape){.type = src[i].type, .ndims = (uint8_t)(v->ndims ? v->ndims : 1),
                             .bound = bound};
            for (int d = 0; d < v->ndims; d++)
                sh->dims[d] = v->dims[d];
            if (v->ndims == 0)
                sh->dims[0] = v->count;
            src[i].error_bound = bound;
            int id = lossy_codec(ctx, v, sh, &env);
            if (id >= 0) {
                src[i].codec = (uint8_t)id;
                continue;
            }
        }
        int id = v->codec >= 0 ? v->codec : def;
        if (id != CZ_AUTO && !cz_codec_accepts(id, src[i].type))
            id = CZ_ZSTD; /* a float-only default for a variable of integers */
        if (id == CZ_AUTO) {
            if (v->chosen < 0 || cz_is_lossy(v->chosen) ||
                ctx->nckpt - v->chosen_at >= ctx->cfg.z_resample) {
                v->chosen = cz_choose(src[i].ptr, src[i].size, src[i].type, &env,
                                      &v->chosen_ratio);
                v->chosen_at = ctx->nckpt;
                cn_debug("'%s': auto picked %s (sampled ratio %.3f)", v->name,
                         cz_codec_name(v->chosen), v->chosen_ratio);
            }
            id = v->chosen;
        }
        src[i].codec = (uint8_t)id;
        if (id == CZ_FPZIP && v->ndims >= 2) { /* fpzip predicts along every dimension */
            src[i].shape = (cz_shape){.type = src[i].type, .ndims = (uint8_t)v->ndims};
            for (int d = 0; d < v->ndims; d++)
                src[i].shape.dims[d] = v->dims[d];
        }
    }
}

void api_codecs_learn(cairn_ctx *ctx, const lvl_written *w)
{
    ctx->nckpt++;
    if (w->stored < (1u << 20) || w->write_s <= 0)
        return; /* too little to time */
    double bps = (double)w->stored / w->write_s;
    ctx->storage_bps = 0.5 * ctx->storage_bps + 0.5 * bps;
}
