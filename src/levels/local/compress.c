/*
 * compress.c - which codec stores each variable on the way out.
 *
 * Out: a variable's codec is its own (cairn_protect_codec) or the configured
 * default (compress.codec). Routed files are stored raw. A float/double
 * variable with an error bound goes to a lossy codec (its own, else
 * lossy.mode's), unless it names a lossless one; a relative bound becomes
 * absolute against the variable's value range at this checkpoint. "auto"
 * (lossless, or lossy.mode = auto for a bounded variable) takes the pick
 * that codec_vote.c made for the whole job at this checkpoint, from the
 * model of src/compress/choose.c with the job's figures below (api_codec_env).
 * An fpzip variable of 2 or 3 dimensions is given its shape.
 *
 * The way back is chain.c's.
 */
#include "core/core.h"
#include "levels/local/local.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

/* Assumed figures of the model (docs/user-guide.md, "Compression"): the interconnect of a
 * node (a 100 Gb/s link, shared by its ranks) and the Reed-Solomon encoding
 * speed per parity row (bytes/s on one core). */
#define NET_BPS 12.5e9
#define EC_BPS 2e9

int api_threads(const cairn_ctx *ctx)
{
    return ctx->cfg.z_threads ? ctx->cfg.z_threads : ctx->cores_per_rank;
}

/* Lanes of the min/max scans: independent running minima and maxima, so
 * that the scan is not one chain of dependent comparisons (4x faster). */
#define LANES 16

/* The least and greatest of P[0..N), NaNs skipped (a comparison with a NaN
 * is false); +-Inf counted, for the caller to see. */
#define MINMAX(T, p, n, lo_out, hi_out)                                          \
    do {                                                                         \
        T lo_[LANES], hi_[LANES];                                                \
        for (int k = 0; k < LANES; k++) {                                        \
            lo_[k] = INFINITY;                                                   \
            hi_[k] = -INFINITY;                                                  \
        }                                                                        \
        size_t i_ = 0;                                                           \
        for (; i_ + LANES <= (n); i_ += LANES)                                   \
            for (int k = 0; k < LANES; k++) {                                    \
                T x = (p)[i_ + k];                                               \
                lo_[k] = x < lo_[k] ? x : lo_[k];                                \
                hi_[k] = x > hi_[k] ? x : hi_[k];                                \
            }                                                                    \
        for (; i_ < (n); i_++) {                                                 \
            lo_[0] = (p)[i_] < lo_[0] ? (p)[i_] : lo_[0];                        \
            hi_[0] = (p)[i_] > hi_[0] ? (p)[i_] : hi_[0];                        \
        }                                                                        \
        for (int k = 1; k < LANES; k++) {                                        \
            lo_[0] = lo_[k] < lo_[0] ? lo_[k] : lo_[0];                          \
            hi_[0] = hi_[k] > hi_[0] ? hi_[k] : hi_[0];                          \
        }                                                                        \
        *(lo_out) = lo_[0];                                                      \
        *(hi_out) = hi_[0];                                                      \
    } while (0)

/* The least and greatest finite values of V (lo > hi if it has none). */
static void finite_range(const api_var *v, double *lo, double *hi)
{
    if (v->type == CAIRN_FLOAT) {
        float l, h;
        MINMAX(float, (const float *)v->ptr, v->count, &l, &h);
        *lo = l;
        *hi = h;
    } else {
        MINMAX(double, (const double *)v->ptr, v->count, lo, hi);
    }
    if (isfinite(*lo) && isfinite(*hi))
        return; /* no infinity among them: the common case, one pass */
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t i = 0; i < v->count; i++) {
        double x = v->type == CAIRN_FLOAT ? (double)((const float *)v->ptr)[i]
                                          : ((const double *)v->ptr)[i];
        if (isfinite(x)) {
            *lo = x < *lo ? x : *lo;
            *hi = x > *hi ? x : *hi;
        }
    }
}

/* The absolute bound of V now: its own, or relative to its finite range
 * (a pass over the data). */
static double abs_bound(const api_var *v)
{
    if (v->bound > 0 || v->rel_bound <= 0)
        return v->bound;
    double lo, hi;
    finite_range(v, &lo, &hi);
    double range = hi > lo ? hi - lo : 0;
    double b = v->rel_bound * range;
    /* a constant (or all non-finite) field: any bound is met exactly; keep
     * it tiny but representable */
    return b > 0 && isfinite(b) ? b : v->rel_bound * (isfinite(hi) && hi != 0 ? fabs(hi) : 1.0);
}

/* V's array shape (1-D without dims) with bound BOUND. */
static cz_shape shape_of(const api_var *v, double bound)
{
    cz_shape sh = {.type = (uint8_t)v->type, .ndims = (uint8_t)(v->ndims ? v->ndims : 1),
                   .bound = bound};
    for (int d = 0; d < v->ndims; d++)
        sh.dims[d] = v->dims[d];
    if (v->ndims == 0)
        sh.dims[0] = v->count;
    return sh;
}

int api_codec_of(const cairn_ctx *ctx, const api_var *v, cz_shape *sh)
{
    if (sh)
        memset(sh, 0, sizeof *sh);
    if (v->kind != CN_KIND_VAR || v->count == 0)
        return CZ_RAW;
    bool bounded = v->bound > 0 || v->rel_bound > 0; /* abs_bound(v) > 0 */
    bool named_lossless = v->codec >= 0 && v->codec != CZ_AUTO && !cz_is_lossy(v->codec);
    if (bounded && !named_lossless) {
        if (sh)
            *sh = shape_of(v, abs_bound(v));
        if (cz_is_lossy(v->codec))
            return v->codec;
        if (ctx->cfg.lossy_mode != 0)
            return ctx->cfg.lossy_mode == 1 ? CZ_WAVELET : CZ_PREDICT;
        return API_AUTO_LOSSY;
    }
    int def = ctx->cfg.codec == CN_CODEC_AUTO ? CZ_AUTO : ctx->cfg.codec;
    int id = v->codec >= 0 ? v->codec : def;
    if (id != CZ_AUTO && !cz_codec_accepts(id, (uint8_t)v->type))
        id = CZ_ZSTD; /* a float-only default for a variable of integers */
    if (sh && v->ndims >= 2 && (v->type == CAIRN_FLOAT || v->type == CAIRN_DOUBLE))
        *sh = shape_of(v, 0); /* for fpzip */
    if (sh)
        sh->bound = abs_bound(v); /* recorded with the entry: a named lossless codec keeps it */
    return id == CZ_AUTO ? API_AUTO_LOSSLESS : id;
}

/* Is level L one this job can checkpoint at? */
static bool usable(const cairn_ctx *ctx, int l)
{
    cn_err ignored = {0};
    return api_level_usable(ctx, l, &ignored) == 0;
}

unsigned api_job_levels(const cairn_ctx *ctx, int level)
{
    unsigned mask = ctx->levels_seen | 1u << level;
    for (int l = 1; l <= 4; l++)
        if (ctx->cfg.ckpt_every[l].iters > 0 || ctx->cfg.ckpt_every[l].seconds > 0 ||
            (ctx->cfg.ckpt_auto && ctx->cfg.mtbf[l] > 0))
            mask |= 1u << l;
    if (ctx->cfg.pfs_dir[0] && ctx->cfg.pfs_every > 0)
        mask |= 1u << CAIRN_LEVEL_PFS;
    for (int l = 2; l <= 4; l++)
        if ((mask & 1u << l) && !usable(ctx, l))
            mask &= ~(1u << l);
    return mask;
}

void api_codec_env(const cairn_ctx *ctx, unsigned levels, cz_env *env)
{
    double b = (double)ctx->cfg.z_bandwidth * (1 << 20);
    double net = NET_BPS / (ctx->node_size > 0 ? ctx->node_size : 1);
    *env = (cz_env){.storage_bps = b, .threads = api_threads(ctx), .level = ctx->cfg.z_level,
                    .buf_size = ctx->cfg.z_buffer};
    bool l2 = false, l3 = false;
    for (int l = 2; l <= 4; l++) {
        if (!(levels & 1u << l))
            continue;
        int local = api_local_level(ctx, l);
        l2 |= local == CAIRN_LEVEL_PARTNER;
        l3 |= local == CAIRN_LEVEL_ERASURE;
        env->flush |= l == CAIRN_LEVEL_PFS;
    }
    int m = ctx->cfg.ec_m, k = ctx->set_n - m > 0 ? ctx->set_n - m : 1;
    if (l2) /* read, sent, written by the partner */
        env->byte_s += 2 / b + 1 / net;
    if (l3) /* read, m partial parity rows passed on, m multiply-adds, m/k parity written */
        env->byte_s += 1 / b + m / net + m / EC_BPS + (double)m / k / b;
    /* Read back, and written to the PFS as it is (lossless frames: agg_lend.c)
     * at pfs.bandwidth, or as probed, or (neither known yet) at level 1's. */
    double pfs = ctx->cfg.pfs_bandwidth > 0 ? (double)ctx->cfg.pfs_bandwidth * (1 << 20)
                 : ctx->pfs_probed > 0     ? ctx->pfs_probed
                                           : b;
    if (env->flush)
        env->byte_s += 1 / b + 1 / pfs;
    /* Node-local space: this rank's share of what is free must hold the
     * generation (and its copy and parity) beside the kept ones. */
    struct statvfs sv;
    if (fstatvfs(ctx->nodefd, &sv) != 0)
        return;
    double free_b = (double)sv.f_bavail * (double)sv.f_frsize /
                    (ctx->node_size > 0 ? ctx->node_size : 1);
    double raw = 0, copies = 1 + (l2 ? 1 : 0) + (l3 ? (double)m / k : 0);
    for (size_t i = 0; i < ctx->nvars; i++)
        if (ctx->vars[i].kind == CN_KIND_VAR)
            raw += (double)ctx->vars[i].count * (double)cairn_type_size(ctx->vars[i].type);
    if (raw > 0 && raw * copies > free_b)
        env->max_ratio = free_b / (raw * copies) > 1e-6 ? free_b / (raw * copies) : 1e-6;
}

void api_codecs(cairn_ctx *ctx, lvl_src *src, size_t n, cz_opts *z)
{
    *z = (cz_opts){.buf_size = ctx->cfg.z_buffer, .threads = api_threads(ctx),
                   .level = ctx->cfg.z_level};
    for (size_t i = 0; i < n; i++) {
        api_var *v = &ctx->vars[i];
        src[i].codec = CZ_RAW;
        if (v->kind != CN_KIND_VAR || src[i].size == 0)
            continue;
        int id = api_codec_of(ctx, v, &src[i].shape);
        bool lossy = id == API_AUTO_LOSSY || cz_is_lossy(id);
        if (id == API_AUTO_LOSSY || id == API_AUTO_LOSSLESS) {
            /* codec_vote.c picked it for this checkpoint; a variable it did
             * not see (none is expected) is modelled here, alone */
            if (v->chosen < 0 || cz_is_lossy(v->chosen) != lossy) {
                cz_env env;
                api_codec_env(ctx, api_job_levels(ctx, CAIRN_LEVEL_LOCAL), &env);
                v->chosen = lossy ? cz_choose_lossy(v->ptr, &src[i].shape, &env, &v->chosen_ratio)
                                  : cz_choose(v->ptr, src[i].size, src[i].type, &src[i].shape,
                                              &env, &v->chosen_ratio);
                v->chosen_at = ctx->nckpt;
            }
            id = v->chosen;
        }
        if (src[i].shape.bound > 0)
            src[i].error_bound = src[i].shape.bound;
        src[i].codec = (uint8_t)id;
    }
}

void api_codecs_learn(cairn_ctx *ctx, const lvl_written *w)
{
    (void)w;
    ctx->nckpt++;
}
