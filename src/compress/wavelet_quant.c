/*
 * wavelet_quant.c - quantization and encoding of one level's high
 * coefficients (the paper's sections 3.2-3.4); wavelet_dec.c reads them back.
 *
 * Range: the simple quantizer (3.2.1) takes [min, max] of the coefficients;
 * the mountain quantizer (3.2.2) makes a histogram of d bins over [min, max]
 * and takes the min and max of the values in the bins holding at least
 * N_high / d values (eq. 2); values outside are stored exactly. The range is
 * cut into n equal divisions and every value in it is replaced by its
 * division's average.
 *
 * n: the caller's (the paper's 1..128), or derived from the error allowance
 * e of one coefficient (divisions == 0): n = ceil(width / 2e), so that a
 * division spans at most 2e. Two additions of cairn's, in derived mode only:
 * the mountain is widened bin by bin while that lowers the estimated size
 * (see WL_CODE_SHRINK), and a range needing more than WL_MAX_DIV divisions
 * is cut to WL_MAX_DIV * 2e around the fullest bin.
 *
 * Guarantee: a division's average is moved (by the least amount) into
 * [max - e, min + e] of its values when that interval exists, and a value
 * is quantized only if |h - average| <= e after the average is rounded to
 * the element type; otherwise it is stored exactly. Without the guarantee
 * (the paper) every value in the range is quantized.
 *
 * Section, with encode: u32 m, u64 q, table of m averages (element type;
 * only the non-empty divisions, in order: a code is the rank of its
 * division), bitmap of nh bits (1 = quantized, LSB first, padding 0), q
 * codes of ceil(log2 m) bits packed LSB first (padding 0), then the nh - q
 * exact values. The paper interleaves exact values and codes; two streams carry
 * the same information and compress better. Without encode, the section is
 * the nh quantized values as elements (the paper's "quantization without
 * encoding").
 *
 * Ownership: the caller's arrays; per-call tables are allocated and freed here.
 */
#include "compress/wavelet_impl.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

/*
 * Size estimate of widen(): a quantized value costs its code width times
 * this (the lossless pass shrinks the codes of a peaked histogram to about
 * a quarter, measured on smooth and noisy 1-3-D fields), an exact one its
 * whole width (it hardly shrinks).
 */
#define WL_CODE_SHRINK 0.25

typedef struct wl_bin {
    uint64_t count;
    double min, max;
} wl_bin;

typedef struct wl_div {
    double sum, min, max;  /* sum becomes the stored average */
    uint64_t count;
    uint32_t rank;
} wl_div;

typedef struct wl_range {
    double lo, hi;
    uint32_t n;            /* 0: nothing is quantized */
} wl_range;

/* Division (or bin) of V in [LO, LO + N / INV], clamped to 0..N-1. */
static inline uint32_t slot(double v, double lo, double inv, uint32_t n)
{
    double f = (v - lo) * inv;
    if (!(f >= 0))
        return 0;
    if (!(f < (double)n))
        return n - 1;
    return (uint32_t)f;
}

static size_t elem_size(uint8_t type)
{
    return type == CAIRN_FLOAT ? 4 : 8;
}

/* Derived mode: widen the mountain [*FIRST, *LAST] while the estimated size drops. */
static void widen(const wl_bin *hist, int d, uint64_t nfin, double step, size_t es, int *first,
                  int *last)
{
    uint64_t pre[WL_MAX_BINS + 1];
    pre[0] = 0;
    for (int b = 0; b < d; b++)
        pre[b + 1] = pre[b] + hist[b].count;
    double best = -1;
    int bi = *first, bj = *last;
    for (int i = *first; i >= 0; i--) {
        if (!hist[i].count)
            continue;
        for (int j = *last; j < d; j++) {
            if (!hist[j].count)
                continue;
            double nd = (hist[j].max - hist[i].min) / step;
            if (!(nd <= WL_MAX_DIV))
                break;
            uint64_t in = pre[j + 1] - pre[i];
            unsigned bits = wl_bits(nd < 1 ? 1 : (uint64_t)ceil(nd));
            double cost = WL_CODE_SHRINK * (double)in * bits + (double)(nfin - in) * 8.0 * es;
            if (best < 0 || cost < best) {
                best = cost;
                bi = i;
                bj = j;
            }
        }
    }
    *first = bi;
    *last = bj;
}

/* Finite min and max of H, and how many values are finite. */
static uint64_t extent(const double *h, size_t nh, double *mn, double *mx)
{
    double lo = INFINITY, hi = -INFINITY;
    size_t nnan = 0;
    for (size_t i = 0; i < nh; i++) { /* NaN fails both comparisons */
        double v = h[i];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
        nnan += v != v;
    }
    uint64_t nfin = nh - nnan;
    if (!(fabs(lo) <= DBL_MAX && fabs(hi) <= DBL_MAX)) { /* an Inf (overflow): the slow way */
        lo = INFINITY;
        hi = -INFINITY;
        nfin = 0;
        for (size_t i = 0; i < nh; i++) {
            double v = h[i];
            if (fabs(v) <= DBL_MAX) {
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
                nfin++;
            }
        }
    }
    *mn = lo;
    *mx = hi;
    return nfin;
}

/* The range to quantize and its number of divisions. */
static void pick_range(const wl_qopt *q, const double *h, size_t nh, wl_range *r)
{
    double mn, mx;
    uint64_t nfin = extent(h, nh, &mn, &mx);
    r->n = 0;
    if (nfin == 0)
        return;
    int d = q->bins < 1 ? 1 : q->bins > (int)WL_MAX_BINS ? (int)WL_MAX_BINS : q->bins;
    wl_bin hist[WL_MAX_BINS];
    for (int b = 0; b < d; b++)
        hist[b] = (wl_bin){0, INFINITY, -INFINITY};
    double inv = mx > mn ? d / (mx - mn) : 0;
    for (size_t i = 0; i < nh; i++) {
        double v = h[i];
        if (!(v >= mn && v <= mx))
            continue;
        wl_bin *b = &hist[slot(v, mn, inv, (uint32_t)d)];
        b->min = v < b->min ? v : b->min;
        b->max = v > b->max ? v : b->max;
        b->count++;
    }
    int peak = 0, first = -1, last = -1;
    for (int b = 0; b < d; b++) {
        if (hist[b].count > hist[peak].count)
            peak = b;
        bool in = q->quantizer == CZ_Q_MOUNTAIN ? hist[b].count * (uint64_t)d >= nfin
                                                : hist[b].count > 0;
        if (in) {
            first = first < 0 ? b : first;
            last = b;
        }
    }
    if (q->divisions > 0) {
        r->lo = hist[first].min;
        r->hi = hist[last].max;
        r->n = (uint32_t)q->divisions > WL_MAX_DIV ? WL_MAX_DIV : (uint32_t)q->divisions;
        return;
    }
    double step = 2 * q->e * (1 - 1e-9); /* a division's width, a hair under 2e */
    if (!(step > 0))
        return;
    size_t es = elem_size(q->type);
    if (q->quantizer == CZ_Q_MOUNTAIN && (hist[last].max - hist[first].min) / step <= WL_MAX_DIV)
        widen(hist, d, nfin, step, es, &first, &last);
    r->lo = hist[first].min;
    r->hi = hist[last].max;
    if (!((r->hi - r->lo) / step <= WL_MAX_DIV)) {
        double c = hist[peak].min / 2 + hist[peak].max / 2, half = WL_MAX_DIV / 2.0 * step;
        r->lo = c - half > r->lo ? c - half : r->lo;
        r->hi = c + half < r->hi ? c + half : r->hi;
    }
    double nd = ceil((r->hi - r->lo) / step); /* NaN (width and step infinite): 1 */
    r->n = !(nd >= 1) ? 1 : nd > WL_MAX_DIV ? WL_MAX_DIV : (uint32_t)nd;
}

size_t wl_section_max(uint8_t type, bool encode, size_t nh)
{
    size_t es = elem_size(type), table = nh < WL_MAX_DIV ? nh : WL_MAX_DIV;
    /* counts, table, bitmap, then a code (<= 2 bytes) or an element per value */
    return encode ? 16 + es * table + nh / 8 + es * nh : es * nh;
}

/*
 * The divisions that hold values: all n of them, or, when the level has
 * fewer values than divisions (coarse levels), only those that occur, found
 * by binary search in their sorted numbers.
 */
typedef struct wl_divs {
    wl_range r;
    double inv;
    wl_div *d;
    uint32_t *keys;  /* sparse: division numbers present, ascending; NULL: dense */
    size_t n;        /* entries of d */
} wl_divs;

static inline wl_div *div_of(const wl_divs *s, double v)
{
    uint32_t k = slot(v, s->r.lo, s->inv, s->r.n);
    if (!s->keys)
        return &s->d[k];
    size_t a = 0, b = s->n; /* k is present: keys[a] <= k < keys[b] */
    while (b - a > 1) {
        size_t mid = a + (b - a) / 2;
        if (s->keys[mid] <= k)
            a = mid;
        else
            b = mid;
    }
    return &s->d[a];
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Set up S over R for H[0..NH): the division entries, empty. */
static int divs_init(wl_divs *s, const wl_range *r, const double *h, size_t nh)
{
    s->r = *r;
    s->inv = r->hi > r->lo ? r->n / (r->hi - r->lo) : 0;
    s->keys = NULL;
    s->n = r->n;
    if (r->n > nh) {
        if (!(s->keys = malloc(nh * sizeof *s->keys)))
            return -1;
        size_t c = 0;
        for (size_t i = 0; i < nh; i++)
            if (h[i] >= r->lo && h[i] <= r->hi)
                s->keys[c++] = slot(h[i], r->lo, s->inv, r->n);
        qsort(s->keys, c, sizeof *s->keys, cmp_u32);
        s->n = 0;
        for (size_t i = 0; i < c; i++)
            if (s->n == 0 || s->keys[i] != s->keys[s->n - 1])
                s->keys[s->n++] = s->keys[i];
    }
    if (!(s->d = malloc((s->n ? s->n : 1) * sizeof *s->d)))
        return -1;
    for (size_t k = 0; k < s->n; k++)
        s->d[k] = (wl_div){0, INFINITY, -INFINITY, 0, 0};
    return 0;
}

int wl_quant_level(const wl_qopt *q, double *h, size_t nh, uint8_t *out, size_t *len,
                   uint8_t *scratch)
{
    size_t es = elem_size(q->type);
    wl_range r = {0, 0, 0};
    if (nh)
        pick_range(q, h, nh, &r);
    wl_divs dv = {.r = r};
    if (r.n && divs_init(&dv, &r, h, nh) != 0) {
        free(dv.keys);
        return -1;
    }
    for (size_t i = 0; r.n && i < nh; i++) {
        double v = h[i];
        if (!(v >= r.lo && v <= r.hi))
            continue;
        wl_div *dd = div_of(&dv, v);
        dd->min = v < dd->min ? v : dd->min;
        dd->max = v > dd->max ? v : dd->max;
        dd->sum += v;
        dd->count++;
    }
    uint32_t m = 0;
    for (size_t k = 0; r.n && k < dv.n; k++) {
        wl_div *dd = &dv.d[k];
        if (!dd->count)
            continue;
        double t = dd->sum / (double)dd->count;
        if (q->guarantee && dd->max - dd->min <= 2 * q->e) {
            t = t < dd->max - q->e ? dd->max - q->e : t;
            t = t > dd->min + q->e ? dd->min + q->e : t;
        }
        dd->sum = wl_round(q->type, t);
        dd->rank = m++;
    }

    uint8_t *p = out, *bm = NULL, *qpos = NULL;
    if (q->encode) {
        cn_put_u32(p, m);
        qpos = p + 4;
        p += 12;
        for (size_t k = 0; r.n && k < dv.n; k++)
            if (dv.d[k].count) {
                wl_put(q->type, p, dv.d[k].sum);
                p += es;
            }
        bm = p;
        memset(bm, 0, (nh + 7) / 8);
        p += (nh + 7) / 8;
    }
    unsigned bits = wl_bits(m);
    uint64_t acc = 0;
    unsigned nacc = 0;
    uint8_t *ex = scratch;
    for (size_t i = 0; i < nh; i++) {
        double v = h[i];
        if (r.n && v >= r.lo && v <= r.hi) {
            const wl_div *dd = div_of(&dv, v);
            if (!q->guarantee || fabs(v - dd->sum) <= q->e) {
                h[i] = dd->sum;
                if (bm) {
                    bm[i >> 3] |= (uint8_t)(1u << (i & 7));
                    acc |= (uint64_t)dd->rank << nacc;
                    for (nacc += bits; nacc >= 8; nacc -= 8, acc >>= 8)
                        *p++ = (uint8_t)acc;
                }
                continue;
            }
        }
        h[i] = wl_round(q->type, v);
        if (bm) {
            wl_put(q->type, ex, h[i]);
            ex += es;
        }
    }
    free(dv.d);
    free(dv.keys);
    if (q->encode) {
        if (nacc)
            *p++ = (uint8_t)acc;
        size_t nex = (size_t)(ex - scratch) / es;
        memcpy(p, scratch, nex * es);
        p += nex * es;
        cn_put_u64(qpos, nh - nex);
    } else {
        for (size_t i = 0; i < nh; i++, p += es)
            wl_put(q->type, p, h[i]);
    }
    *len = (size_t)(p - out);
    return 0;
}
