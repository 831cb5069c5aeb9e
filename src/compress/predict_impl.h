/*
 * predict_impl.h - what the predictive codec's files share (internal to
 * src/compress): the quantizer and the one step that codes or decodes an
 * element, used by every predictor in both directions, so that encoder and
 * decoder run the same arithmetic by construction.
 *
 *   predict.c          payload format, sections (rANS, codes_ans.c; range coder of
 *                      version 2; Huffman, zstd), entry points, non-finite exceptions,
 *                      and the Lorenzo predictor (memory order)
 *   predict_interp.c   the multilevel interpolation predictor (SZ3 order)
 *
 * Quantization (SZ's): the code of x predicted as p is q + PZ_RADIUS with
 * q = round((x - p) / s), decoded as x' = p + q * s (s ~ 2e; then rounded to
 * float for CAIRN_FLOAT), or 0 for an exception: x stored exactly. Later
 * predictions use x' as stored (x for an exception, 0 if x is not finite,
 * so that NaN and Inf poison nothing). The interpolation predictor reads
 * them from the output array itself, so a non-finite x is 0 there until
 * pz_fixup puts it back after the last element.
 *
 * Encoder and decoder must compute every x' identically. They run the same
 * code, and its floating-point operations are exact or exactly rounded
 * (IEEE 754) whatever the compiler contracts: predictors use additions,
 * subtractions and multiplications by powers of two (exact, so an FMA
 * fusing one into an add rounds once either way; the subnormal range
 * aside), and the step s is 2e rounded down to 38 significant bits
 * (pz_step_of), so that q * s is exact for |q| < 2^15 and pred + q * s
 * rounds once, fused or not. -std=c11 keeps GCC from contracting anyway,
 * the pragma below clang; a mismatch would still fail the frame checksum.
 */
#ifndef CAIRN_PREDICT_IMPL_H
#define CAIRN_PREDICT_IMPL_H

#include "compress/compress.h"

#include <math.h>
#include <string.h>

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#define PZ_RADIUS 32768      /* codes 1..65535: q = code - PZ_RADIUS */

enum pz_predictor { PZ_LORENZO = 0, PZ_INTERP = 1 };

typedef struct pz_ctx {
    uint64_t n0, n1, n2, count;   /* (1, 1, d0) or (1, d0, d1) or (d0, d1, d2) */
    size_t es;
    bool fl;                      /* CAIRN_FLOAT */
    double bound, step, inv_step; /* step = pz_step_of(bound); inv_step (encoder) 1 / step */
    bool level_bounds;            /* interpolation: tighter bounds at coarse levels
                                   * (payload version 2; predict_interp.c) */
    /* encoder: SRC in, OUT (the reconstruction) and CODES out, EXC appended,
     * ERR the largest error; decoder: CODES and EXC in, OUT written */
    const uint8_t *src;
    uint8_t *out;
    uint16_t *codes;
    size_t seq;                   /* codes produced / consumed so far */
    uint8_t *exc;
    size_t nexc, exc_cap;         /* decoder: EXC_CAP exceptions available */
    double err;
    bool bad;                     /* decoder: an exception too many */
    struct pz_fixes *fixes;       /* the non-finite exceptions (predict_run's) */
} pz_ctx;

/* Non-finite exceptions: OUT holds 0 there until pz_fixup (predictors read
 * their neighbours from OUT); each is IDX, and K the exception's number.
 * Kept apart from pz_ctx, so that the predictors' local copy of the context
 * never escapes into a call and stays in registers. */
typedef struct pz_fixes {
    struct pz_fix {
        size_t idx, k;
    } *v;
    size_t n, cap;
    bool nomem;
} pz_fixes;

/* Note a non-finite exception at IDX, exception number K (pz_step's cold
 * path): F->nomem if out of memory. */
void pz_note_fix(pz_fixes *f, size_t idx, size_t k);
/* C's output's non-finite exceptions restored (from SRC encoding, EXC
 * decoding); the list freed. */
void pz_fixup(pz_ctx *c, bool enc);

/* The quantizer's step for BOUND: 2 * BOUND with its 15 lowest mantissa
 * bits cleared (<= 2 * BOUND), or 0 when unusable (not finite and > 0). */
static inline double pz_step_of(double bound)
{
    double s = 2 * bound;
    if (!(s > 0) || !isfinite(s))
        return 0;
    uint64_t b;
    memcpy(&b, &s, 8);
    b &= ~(uint64_t)0x7fff;
    memcpy(&s, &b, 8);
    return s;
}

static inline double pz_load(const uint8_t *p, bool fl)
{
    if (fl) {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    double d;
    memcpy(&d, p, 8);
    return d;
}

/* V as stored: rounded to float for CAIRN_FLOAT. */
static inline double pz_round(double v, bool fl)
{
    return fl ? (double)(float)v : v;
}

static inline void pz_store(uint8_t *p, double v, bool fl)
{
    if (fl) {
        float f = (float)v;
        memcpy(p, &f, 4);
    } else {
        memcpy(p, &v, 8);
    }
}

/*
 * Code (ENC) or decode element IDX, predicted as PRED; returns the value its
 * later neighbours are predicted from: x' as stored, or for an exception x
 * itself, or 0 if x is not finite.
 * Encoder: q = round((x - pred) / step); the code is q + PZ_RADIUS when q
 * is in range and x' = pred + q * step (as stored) is within the bound,
 * else 0 and x is kept exactly. Decoder: the inverse.
 */
__attribute__((always_inline)) static inline double pz_step(pz_ctx *c, size_t idx,
                                                             double pred, bool enc)
{
    const size_t es = c->fl ? 4 : 8; /* c->es, but known where c->fl is */
    uint8_t *o = c->out + idx * es;
    if (enc) {
        const uint8_t *s = c->src + idx * es;
        double v = pz_load(s, c->fl);
        double r = (v - pred) * c->inv_step;
        if (fabs(r) < PZ_RADIUS - 2) {
            /* half away from zero, without a branch on the residual's sign */
            int code = (int)(r + copysign(0.5, r)) + PZ_RADIUS;
            double xr = pz_round(pred + (double)(code - PZ_RADIUS) * c->step, c->fl);
            double e = fabs(v - xr);
            if (e <= c->bound) {
                c->codes[c->seq++] = (uint16_t)code;
                pz_store(o, xr, c->fl);
                c->err = e > c->err ? e : c->err;
                return xr;
            }
        }
        c->codes[c->seq++] = 0;
        memcpy(c->exc + c->nexc++ * es, s, es);
        if (isfinite(v)) {
            memcpy(o, s, es);
            return v;
        }
        pz_store(o, 0, c->fl);
        pz_note_fix(c->fixes, idx, c->nexc - 1);
        return 0;
    }
    uint16_t code = c->codes[c->seq++];
    if (code == 0) {
        if (c->nexc == c->exc_cap) {
            c->bad = true;
            return 0;
        }
        double v = pz_load(c->exc + c->nexc++ * es, c->fl);
        if (isfinite(v)) {
            memcpy(o, c->exc + (c->nexc - 1) * es, es);
            return v;
        }
        pz_store(o, 0, c->fl);
        pz_note_fix(c->fixes, idx, c->nexc - 1);
        return 0;
    }
    double xr = pz_round(pred + (double)(code - PZ_RADIUS) * c->step, c->fl);
    pz_store(o, xr, c->fl);
    return xr;
}

/* Run a predictor over every element, coding (ENC) or decoding; 0 or -1
 * (allocation failure, or c->bad). The codes come in the predictor's order. */
int pz_lorenzo(pz_ctx *c, bool enc);
int pz_interp(pz_ctx *c, bool enc);

/* The runs of rows in which pz_interp visits C's elements (the range
 * coder's context; see cz_rows) into ROWS (PZ_MAX_ROWS); returns how many. */
#define PZ_MAX_ROWS (1 + 3 * 64)
size_t pz_interp_rows(const pz_ctx *c, cz_rows *rows);

#endif /* CAIRN_PREDICT_IMPL_H */
