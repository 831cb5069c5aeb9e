/*
 * predict_interp.c - the multilevel interpolation predictor of the
 * predictive codec (after SZ3: Zhao et al., ICDE 2021), shared by encoder
 * and decoder through pz_step (predict_impl.h).
 *
 * Order: the first element, then for h = H, H/2, ..., 1 (H the largest
 * power of two below the longest dimension) three passes, one per
 * dimension D, slowest first. Before the passes of level h every point whose
 * coordinates are all multiples of 2h is known; pass D codes the points
 * whose coordinate along D is an odd multiple of h, those along the
 * dimensions before D multiples of h and after D multiples of 2h,
 * predicting each from its known neighbours along D at -3h, -h, +h, +3h:
 * cubic (-1, 9, 9, -1)/16 inside, quadratic (3, 6, -1)/8 or (-1, 6, 3)/8
 * near an end, linear (1, 1)/2 when only -h and +h exist, and past the
 * last point linear extrapolation (3 a - c)/2 or a copy of -h.
 *
 * Per-level error bound (after SZ3 and QoZ), payload version 2 on: level h
 * = 2^l is coded within bound / min(1.1^l, 2), the finest level (h = 1)
 * within the bound itself. The few coarse points are kept more exactly, and
 * every finer point is predicted from them, so its residual is more often
 * the zero code: on EGM96 45% fewer bytes at 1e-2 of the range, on the heat
 * fields 59-95% (10-25% at 1e-3 and 1e-4); the guarantee is unchanged,
 * since every level's bound is within the variable's. Version 1 payloads
 * were coded with the bound at every level (pz_ctx.level_bounds false).
 *
 * Half the points are predicted from neighbours one apart, with weights
 * whose noise gain (sum of squares 0.64) is below Lorenzo's (7 in 3-D), so
 * the quantization error of the neighbours hurts less: on smooth fields
 * nearly every code is the zero residual, which Huffman + zstd store in a
 * fraction of a bit.
 *
 * Memory: none; predictions read the decoded values from the output array
 * itself (float or double, as stored; a non-finite exception is 0 there
 * until pz_fixup).
 */
#include "compress/predict_impl.h"

#include <stdlib.h>

/* Element K of W, the output array: float (FL) or double. */
#define W(k) (fl ? (double)((const float *)w)[k] : ((const double *)w)[k])

/* Prediction of element I of W (position P of N along a dimension,
 * neighbours S elements apart, H positions apart; P >= H). Multipliers are
 * sums of powers of two: see predict_impl.h on contraction. */
static inline __attribute__((always_inline)) double interp(const void *w, size_t i, size_t p,
                                                           size_t n, size_t s, size_t h, bool fl)
{
    double a = W(i - s);
    bool l3 = p >= 3 * h, r1 = p + h < n, r3 = p + 3 * h < n;
    if (r1) {
        double b = W(i + s);
        if (l3 && r3) {
            double t = a + b;
            return (t * 8 + t - (W(i - 3 * s) + W(i + 3 * s))) * 0.0625;
        }
        if (r3)
            return (a * 2 + a + (b * 4 + b * 2) - W(i + 3 * s)) * 0.125;
        if (l3)
            return (a * 4 + a * 2 + (b * 2 + b) - W(i - 3 * s)) * 0.125;
        return (a + b) * 0.5;
    }
    if (l3)
        return (a * 2 + a - W(i - 3 * s)) * 0.5;
    return a;
}

/* Pass D of level H over C's output; returns -1 if the decoder met bad
 * codes. The context is copied to a local so that its fields can live in
 * registers (stores through OUT could alias *CC otherwise). */
static inline __attribute__((always_inline)) int pass(pz_ctx *cc, int dim, size_t h, bool enc,
                                                      bool fl)
{
    pz_ctx c = *cc;
    c.fl = fl; /* the same, but known to the compiler */
    const void *w = c.out;
    const size_t n[3] = {c.n0, c.n1, c.n2};
    const size_t s[3] = {c.n1 * c.n2, c.n2, 1};
    size_t st[3], inc[3];
    for (int e = 0; e < 3; e++) {
        st[e] = e == dim ? h : 0;
        inc[e] = e < dim ? h : 2 * h;
    }
    const size_t sd = s[dim] * h;
    int rc = 0;
    for (size_t i = st[0]; i < n[0] && rc == 0; i += inc[0])
        for (size_t j = st[1]; j < n[1]; j += inc[1]) {
            size_t base = i * s[0] + j * s[1];
            size_t pd = dim == 0 ? i : j; /* position along D for D = 0, 1 */
            for (size_t l = st[2]; l < n[2]; l += inc[2]) {
                size_t idx = base + l;
                double pred = interp(w, idx, dim == 2 ? l : pd, n[dim], sd, h, fl);
                pz_step(&c, idx, pred, enc);
            }
            if (!enc && c.bad) {
                rc = -1;
                break;
            }
        }
    *cc = c;
    return rc;
}

/* Points along a dimension of N from START in steps of INC. */
static uint64_t span(uint64_t n, uint64_t start, uint64_t inc)
{
    return n > start ? (n - start + inc - 1) / inc : 0;
}

size_t pz_interp_rows(const pz_ctx *c, cz_rows *rows)
{
    const uint64_t n[3] = {c->n0, c->n1, c->n2};
    uint64_t most = n[0] > n[1] ? n[0] : n[1];
    most = most > n[2] ? most : n[2];
    uint64_t top = 1;
    while (2 * top < most)
        top *= 2;
    size_t k = 0;
    rows[k++] = (cz_rows){1, 1, 0}; /* the first element */
    uint64_t level = 0;
    while ((uint64_t)1 << level < top)
        level++;
    for (uint64_t h = top; h >= 1; h /= 2, level--)
        for (int dim = 0; dim < 3; dim++) {
            if (n[dim] <= h)
                continue;
            uint64_t cnt[3];
            for (int e = 0; e < 3; e++)
                cnt[e] = span(n[e], e == dim ? h : 0, e < dim ? h : 2 * h);
            uint64_t count = cnt[0] * cnt[1] * cnt[2];
            if (count)
                rows[k++] = (cz_rows){count, cnt[2], level};
        }
    return k;
}

#define LEVEL_ALPHA 1.1 /* level h = 2^l: bound / min(LEVEL_ALPHA^l, LEVEL_BETA) */
#define LEVEL_BETA 2.0

/* Set C's bound and step for level H (2^l) from FULL, the variable's bound. */
static void level_bound(pz_ctx *c, double full, size_t h)
{
    double f = 1;
    for (size_t k = h; c->level_bounds && k > 1 && f < LEVEL_BETA; k /= 2)
        f *= LEVEL_ALPHA;
    f = f < LEVEL_BETA ? f : LEVEL_BETA;
    c->bound = f > 1 ? full / f : full;
    c->step = pz_step_of(c->bound);
    c->inv_step = 1 / c->step;
}

static inline __attribute__((always_inline)) int run(pz_ctx *c, bool enc, bool fl)
{
    size_t most = c->n0 > c->n1 ? c->n0 : c->n1;
    most = most > c->n2 ? most : c->n2;
    size_t top = 1;
    while (2 * top < most)
        top *= 2;
    const double full = c->bound;
    int rc = 0;
    level_bound(c, full, top);
    pz_step(c, 0, 0, enc);
    if (!enc && c->bad)
        rc = -1;
    for (size_t h = top; h >= 1 && rc == 0; h /= 2) {
        level_bound(c, full, h);
        if ((c->n0 > h && pass(c, 0, h, enc, fl) != 0) ||
            (c->n1 > h && pass(c, 1, h, enc, fl) != 0) ||
            (c->n2 > h && pass(c, 2, h, enc, fl) != 0))
            rc = -1;
    }
    level_bound(c, full, 1); /* the variable's bound again */
    return rc;
}

int pz_interp(pz_ctx *c, bool enc)
{
    if (c->fl)
        return enc ? run(c, true, true) : run(c, false, true);
    return enc ? run(c, true, false) : run(c, false, false);
}
