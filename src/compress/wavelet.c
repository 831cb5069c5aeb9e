/*
 * wavelet.c - the wavelet codec's encoder (Sasaki et al., section 3, with
 * cairn's error guarantee): transform, quantize, encode, check, correct,
 * then a lossless pass. The payload format is in wavelet_impl.h; the
 * decoder in wavelet_dec.c.
 *
 * Steps:
 *  1. The input becomes doubles; a NaN or Inf is replaced by the previous
 *     finite value (0 at first) so it poisons no coefficient, and is put
 *     back exactly by step 5.
 *  2. Haar transform (wavelet_xform.c): one level as in the paper when the
 *     guarantee is off; with it, levels until the low block is small (each
 *     level re-transforms the previous low block; this shrinks the exact low
 *     values from 1/2^D of the elements to a handful).
 *  3. The coarsest low block is stored exactly (in the element type); each
 *     level's high coefficients are quantized and encoded (wavelet_quant.c).
 *  4. Error budget: an element is its low value plus or minus one
 *     coefficient of each of the 2^D - 1 high blocks of every level, so if a
 *     coefficient of level l is off by at most e_l, the element is off by at
 *     most sum_l (2^D_l - 1) e_l. cairn gives each level a share of the bound
 *     proportional to its number of coefficients (which minimises the code
 *     bits), less a margin of a few units in the last place of the largest
 *     value for the rounding of the transform and of floats.
 *  5. The encoder rebuilds the array exactly as the decoder will
 *     (wl_reconstruct on the stored values) and checks every element in
 *     double precision against the input: any element farther than the
 *     bound (rounding), and every NaN / Inf, becomes an exception that
 *     stores its exact bits. Without the guarantee only NaN / Inf do.
 *  6. The body goes through zstd, zlib or nothing (opts.lossless). If the
 *     payload would not be smaller than the input, the input is stored
 *     verbatim instead, so a payload never exceeds WL_HDR + raw bytes.
 *
 * Ownership: the caller owns SRC, DST and RECON; the working arrays (two
 * doubles per element and the body) are allocated and freed per call.
 */
#include "compress/wavelet_impl.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

#include <zlib.h>
#include <zstd.h>

#define WL_ZSTD_LEVEL 3
#define WL_ZLIB_LEVEL 6

const cz_wavelet_opts cz_wavelet_defaults = {CZ_Q_MOUNTAIN, 0, 64, true, true, CZ_ZSTD};

size_t cz_wavelet_bound(size_t raw_len)
{
    return WL_HDR + raw_len;
}

/* The shape as three dimensions (leading 1s) and its element count; false if invalid. */
static bool shape_ok(const cz_shape *sh, uint64_t d3[3], size_t *count)
{
    if (!sh || (sh->type != CAIRN_FLOAT && sh->type != CAIRN_DOUBLE) || sh->ndims < 1 ||
        sh->ndims > 3 || !(sh->bound > 0) || !(sh->bound <= DBL_MAX))
        return false;
    size_t es = cairn_type_size((cairn_type)sh->type);
    uint64_t n = 1;
    d3[0] = d3[1] = d3[2] = 1;
    for (int k = 0; k < sh->ndims; k++) {
        uint64_t d = sh->dims[k];
        if (d == 0 || n > SIZE_MAX / es / d)
            return false;
        n *= d;
        d3[3 - sh->ndims + k] = d;
    }
    *count = (size_t)n;
    return true;
}

static bool opts_ok(const cz_wavelet_opts *o)
{
    return o && (o->quantizer == CZ_Q_SIMPLE || o->quantizer == CZ_Q_MOUNTAIN) &&
           o->divisions >= 0 && (uint32_t)o->divisions <= WL_MAX_DIV && o->bins >= 1 &&
           o->bins <= (int)WL_MAX_BINS &&
           (o->lossless == CZ_RAW || o->lossless == CZ_ZLIB || o->lossless == CZ_ZSTD);
}

/* A growable byte buffer (the body). */
typedef struct wl_buf {
    uint8_t *p;
    size_t len, cap;
} wl_buf;

static bool buf_reserve(wl_buf *b, size_t more)
{
    if (more <= b->cap - b->len)
        return true;
    size_t cap = b->cap * 2 > b->len + more ? b->cap * 2 : b->len + more;
    uint8_t *p = realloc(b->p, cap);
    if (!p)
        return false;
    b->p = p;
    b->cap = cap;
    return true;
}

/* Step 1: SRC into C as doubles, NaN/Inf replaced; returns max |x| over finite x. */
static double load(uint8_t type, const uint8_t *src, size_t count, double *c)
{
    size_t es = cairn_type_size((cairn_type)type);
    double prev = 0, big = 0;
    for (size_t i = 0; i < count; i++) {
        double x = wl_get(type, src + i * es);
        if (fabs(x) <= DBL_MAX) {
            prev = x;
            big = fabs(x) > big ? fabs(x) : big;
        }
        c[i] = prev;
    }
    return big;
}

/* Step 3: the low block and every level's section into B; C becomes what decode rebuilds. */
static int quantize(const wl_plan *pl, const cz_shape *sh, const cz_wavelet_opts *o, double big,
                    double *c, double *tmp, wl_buf *b)
{
    size_t es = cairn_type_size((cairn_type)sh->type), nlow = pl->lv[pl->levels - 1].nlow;
    double weight = 0;
    for (int l = 0; l < pl->levels; l++)
        weight += (double)((1 << pl->lv[l].active) - 1) * (double)(pl->lv[l].nin - pl->lv[l].nlow);
    double margin = big * (sh->type == CAIRN_FLOAT ? 0x1p-21 : 0x1p-48);
    double avail = sh->bound - margin;
    for (size_t i = 0; i < nlow; i++) {
        c[i] = wl_round(sh->type, c[i]);
        wl_put(sh->type, b->p + b->len + i * es, c[i]);
    }
    b->len += nlow * es;
    for (int l = pl->levels - 1; l >= 0; l--) {
        const wl_level *v = &pl->lv[l];
        size_t nh = v->nin - v->nlow, len = 0;
        wl_qopt q = {sh->type, o->quantizer, o->divisions, o->bins, o->encode, o->guarantee, 0};
        if (!o->guarantee)
            q.e = sh->bound / (double)((1 << v->active) - 1 + (v->active == 0));
        else if (avail > 0 && weight > 0)
            q.e = avail / weight * (double)nh;
        if (wl_quant_level(&q, c + v->nlow, nh, b->p + b->len, &len, (uint8_t *)tmp) != 0)
            return -1;
        b->len += len;
    }
    return 0;
}

static void put_varint(wl_buf *b, uint64_t v)
{
    for (; v >= 0x80; v >>= 7)
        b->p[b->len++] = (uint8_t)(v | 0x80);
    b->p[b->len++] = (uint8_t)v;
}

/* Step 5: compare RECON with SRC, correct it, append the exceptions to B. */
static int correct(const cz_shape *sh, bool guarantee, const uint8_t *src, size_t count,
                   uint8_t *recon, wl_buf *b, double *max_err)
{
    size_t es = cairn_type_size((cairn_type)sh->type), nx = 0, capx = 0, *idx = NULL;
    double worst = 0;
    int rc = 0;
    for (size_t i = 0; i < count; i++) {
        double x = wl_get(sh->type, src + i * es), y = wl_get(sh->type, recon + i * es);
        double err = fabs(x - y);
        bool finite = fabs(x) <= DBL_MAX;
        if (finite && (!guarantee || err <= sh->bound)) {
            err = err == err ? err : INFINITY; /* without the guarantee: NaN from overflow */
            worst = err > worst ? err : worst;
            continue;
        }
        if (nx == capx) {
            capx = capx ? 2 * capx : 64;
            size_t *grown = realloc(idx, capx * sizeof *idx);
            if (!grown) {
                rc = -1;
                goto out;
            }
            idx = grown;
        }
        idx[nx++] = i;
        memcpy(recon + i * es, src + i * es, es);
    }
    if (!buf_reserve(b, 8 + nx * (10 + es))) {
        rc = -1;
        goto out;
    }
    cn_put_u64(b->p + b->len, nx);
    b->len += 8;
    for (size_t k = 0; k < nx; k++)
        put_varint(b, idx[k] - (k ? idx[k - 1] + 1 : 0));
    for (size_t k = 0; k < nx; k++, b->len += es)
        memcpy(b->p + b->len, src + idx[k] * es, es);
    *max_err = worst;
out:
    free(idx);
    return rc;
}

/* Step 6: the lossless pass of BODY into DST (CAP bytes); 0 if it does not fit. */
static size_t squeeze(int lossless, const wl_buf *body, uint8_t *dst, size_t cap)
{
    size_t worst = lossless == CZ_ZSTD   ? ZSTD_compressBound(body->len)
                   : lossless == CZ_ZLIB ? (size_t)compressBound((uLong)body->len)
                                         : body->len;
    if (lossless != CZ_RAW && cap < worst) {
        /* the libraries may want more room than the result takes: go through a buffer */
        uint8_t *tmp = malloc(worst);
        size_t out = tmp ? squeeze(lossless, body, tmp, worst) : 0;
        if (out > cap)
            out = 0;
        if (out)
            memcpy(dst, tmp, out);
        free(tmp);
        return out;
    }
    if (lossless == CZ_ZSTD) {
        size_t out = ZSTD_compress(dst, cap, body->p, body->len, WL_ZSTD_LEVEL);
        return ZSTD_isError(out) ? 0 : out;
    }
    if (lossless == CZ_ZLIB) {
        uLongf out = (uLongf)cap;
        if (compress2(dst, &out, body->p, (uLong)body->len, WL_ZLIB_LEVEL) != Z_OK)
            return 0;
        return (size_t)out;
    }
    if (body->len > cap)
        return 0;
    memcpy(dst, body->p, body->len);
    return body->len; /* never 0: the exception count is always there */
}

static void put_header(uint8_t *p, const cz_shape *sh, const cz_wavelet_opts *o, int lossless,
                       uint8_t flags, int levels, size_t body_len)
{
    memset(p, 0, WL_HDR);
    p[0] = WL_MAGIC;
    p[1] = WL_VERSION;
    p[2] = sh->type;
    p[3] = sh->ndims;
    p[4] = (uint8_t)lossless;
    p[5] = flags;
    p[6] = (uint8_t)levels;
    for (int k = 0; k < sh->ndims; k++)
        cn_put_u64(p + 8 + 8 * k, sh->dims[k]);
    uint64_t bits;
    memcpy(&bits, &sh->bound, sizeof bits);
    cn_put_u64(p + 32, bits);
    cn_put_u64(p + 40, body_len);
    cn_put_u32(p + 48, (uint32_t)o->divisions);
    cn_put_u32(p + 52, (uint32_t)o->bins);
    cn_put_u64(p + WL_HDR_SUM, cn_hash(p, WL_HDR_SUM));
}

size_t cz_wavelet_encode(const cz_shape *sh, const cz_wavelet_opts *o, const void *src,
                         uint8_t *dst, size_t cap, void *recon, double *max_err)
{
    uint64_t d3[3];
    size_t count;
    if (max_err)
        *max_err = 0;
    if (!shape_ok(sh, d3, &count) || !opts_ok(o) || !src || !dst || !recon || cap < WL_HDR)
        return 0;
    size_t es = cairn_type_size((cairn_type)sh->type), raw_len = count * es;
    wl_plan pl;
    wl_plan_init(&pl, d3, o->guarantee ? wl_auto_levels(d3) : 1);
    size_t body_cap = 8 + pl.lv[pl.levels - 1].nlow * es;
    for (int l = 0; l < pl.levels; l++)
        body_cap += wl_section_max(sh->type, o->encode, pl.lv[l].nin - pl.lv[l].nlow);
    double *c = malloc(count * sizeof *c), *tmp = malloc(count * sizeof *tmp), err = 0;
    wl_buf body = {malloc(body_cap), 0, body_cap};
    size_t out = 0;
    if (!c || !tmp || !body.p)
        goto done;
    double big = load(sh->type, src, count, c);
    wl_forward(&pl, c, tmp);
    if (quantize(&pl, sh, o, big, c, tmp, &body) != 0)
        goto done;
    wl_reconstruct(&pl, c, tmp, sh->type, recon);
    if (correct(sh, o->guarantee, src, count, recon, &body, &err) != 0)
        goto done;
    uint8_t flags = (uint8_t)((o->guarantee ? WL_F_GUARANTEE : 0) | (o->encode ? WL_F_ENCODE : 0) |
                              (o->quantizer == CZ_Q_MOUNTAIN ? WL_F_MOUNTAIN : 0));
    size_t room = (cap < WL_HDR + raw_len ? cap : WL_HDR + raw_len - 1) - WL_HDR;
    if (body.len <= wl_body_limit(count, es))
        out = squeeze(o->lossless, &body, dst + WL_HDR, room);
    if (out) {
        put_header(dst, sh, o, o->lossless, flags, pl.levels, body.len);
        out += WL_HDR;
        if (max_err)
            *max_err = err;
    } else if (cap >= WL_HDR + raw_len) { /* verbatim: exact, never larger */
        put_header(dst, sh, o, CZ_RAW, flags | WL_F_VERBATIM, 0, raw_len);
        memcpy(dst + WL_HDR, src, raw_len);
        memcpy(recon, src, raw_len);
        out = WL_HDR + raw_len;
    }
done:
    free(c);
    free(tmp);
    free(body.p);
    return out;
}
