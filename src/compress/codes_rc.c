/*
 * codes_rc.c - the predictive codec's entropy stage for quantization codes
 * (used by predict.c; contract in compress.h): an adaptive binary range
 * coder with context modelling, in place of Huffman + zstd.
 *
 * Why: on smooth fields at loose bounds nearly every code is the zero
 * residual (98.6% on EGM96 at 1e-2 of the range). Huffman spends at least
 * one bit on each, and zstd over that bitstream recovers only part of it;
 * an adaptive binary model spends a few hundredths of a bit on each, and
 * follows the statistics as they change from one interpolation level to the
 * next (EGM96: 13.6 KB against 20.0 KB at 1e-2, 80 KB against 95 KB at
 * 1e-3).
 *
 * Binarization of a code c (q = c - PZ_RADIUS; c = 0 an exception):
 *   bit  c != PZ_RADIUS             context: the magnitude classes (0, 1, 2,
 *                                   3+) of the two previous codes' q
 *   bit  c == 0 (exception)         one context
 *   bit  q < 0                      context: sign of the previous q (-, 0, +)
 *   m = |q| - 1, k = floor(log2(m + 1)) (0..14):
 *        k ones then a zero (no zero after 15 ones: invalid), contexts per
 *        position and whether the previous q was zero;
 *        the low k bits of m + 1, most significant first: the first with a
 *        context per k, the rest at probability one half.
 * Probabilities are 16-bit, updated by 1/64 of the distance (shift 6): a
 * long run of zero residuals costs about 0.0014 bit each.
 * The coder: 32-bit range, 64-bit low with a cache byte and a count of
 * pending 0xff bytes for carry propagation; the decoder reads the same
 * bytes in lockstep. Encoder and decoder run the same model code (one
 * always-inline function with an ENC switch), so they cannot drift.
 *
 * Stream: the coder's bytes, nothing else (the count of codes is the
 * caller's); the decoder reads exactly the bytes the encoder wrote. A
 * damaged stream decodes to other codes, or fails when the decoder would
 * read past the end or stop short of it, or a unary prefix runs out; the frame
 * checksum over the reconstruction catches the rest.
 *
 * Ownership: the caller owns every buffer; nothing is allocated.
 */
#include "compress/predict_impl.h"

#define RC_BITS 16
#define RC_ONE (1u << RC_BITS)
#define RC_SHIFT 6
#define RC_TOP (1u << 24)
#define RC_KMAX 15

typedef struct rc_model {
    uint16_t zero[16];          /* c != PZ_RADIUS, by the two previous classes */
    uint16_t exc;               /* c == 0 */
    uint16_t sign[3];           /* by the previous sign */
    uint16_t pre[2][RC_KMAX];   /* unary prefix, by previous-zero and position */
    uint16_t top[RC_KMAX];      /* first mantissa bit, by k */
} rc_model;

typedef struct rc_coder {
    /* encoder */
    uint64_t low;
    uint8_t cache;
    uint64_t pending;           /* bytes after the cache: the cache, then 0xff ones */
    uint8_t *dst;
    size_t cap, pos;
    bool full;                  /* DST too small */
    /* decoder */
    uint32_t code;
    const uint8_t *src;
    size_t len;
    bool bad;                   /* read past the end */
    uint32_t range;
} rc_coder;

static void model_init(rc_model *m)
{
    uint16_t *p = (uint16_t *)m;
    for (size_t i = 0; i < sizeof *m / sizeof *p; i++)
        p[i] = RC_ONE / 2;
}

static inline void put_byte(rc_coder *r, uint8_t b)
{
    if (r->pos < r->cap)
        r->dst[r->pos++] = b;
    else
        r->full = true;
}

static inline void shift_low(rc_coder *r)
{
    if ((uint32_t)r->low < 0xff000000u || (r->low >> 32) != 0) {
        uint8_t carry = (uint8_t)(r->low >> 32);
        uint8_t b = r->cache;
        for (; r->pending; r->pending--) {
            put_byte(r, (uint8_t)(b + carry));
            b = 0xff;
        }
        r->cache = (uint8_t)(r->low >> 24);
    }
    r->pending++;
    r->low = (r->low & 0x00ffffffu) << 8;
}

static inline uint8_t get_byte(rc_coder *r)
{
    if (r->pos < r->len)
        return r->src[r->pos++];
    r->bad = true;
    return 0;
}

/* Code (ENC) or decode bit *B with probability *P (of a zero) and adapt. */
__attribute__((always_inline)) static inline unsigned rc_bit(rc_coder *r, uint16_t *p,
                                                             unsigned b, bool enc)
{
    uint32_t bound = (r->range >> RC_BITS) * *p;
    if (enc) {
        if (b == 0) {
            r->range = bound;
        } else {
            r->low += bound;
            r->range -= bound;
        }
    } else {
        if (r->code < bound) {
            r->range = bound;
            b = 0;
        } else {
            r->code -= bound;
            r->range -= bound;
            b = 1;
        }
    }
    if (b == 0)
        *p = (uint16_t)(*p + ((RC_ONE - *p) >> RC_SHIFT));
    else
        *p = (uint16_t)(*p - (*p >> RC_SHIFT));
    while (r->range < RC_TOP) {
        r->range <<= 8;
        if (enc)
            shift_low(r);
        else
            r->code = r->code << 8 | get_byte(r);
    }
    return b;
}

/* Code (ENC) or decode bit B at probability one half. */
__attribute__((always_inline)) static inline unsigned rc_direct(rc_coder *r, unsigned b,
                                                                bool enc)
{
    r->range >>= 1;
    if (enc) {
        if (b)
            r->low += r->range;
    } else {
        b = r->code >= r->range;
        if (b)
            r->code -= r->range;
    }
    while (r->range < RC_TOP) {
        r->range <<= 8;
        if (enc)
            shift_low(r);
        else
            r->code = r->code << 8 | get_byte(r);
    }
    return b;
}

static inline int mag_class(int q)
{
    int a = q < 0 ? -q : q;
    return a > 3 ? 3 : a;
}

/* The model run over CODES[0..N): coded into R (ENC) or decoded from it.
 * Returns 0, or -1 if the decoder met an invalid prefix. */
__attribute__((always_inline)) static inline int run(rc_coder *r, uint16_t *codes, size_t n,
                                                     bool enc)
{
    rc_model m;
    model_init(&m);
    int q1 = 0, q2 = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned c = enc ? codes[i] : 0;
        int q = (int)c - PZ_RADIUS;
        uint16_t *pz = &m.zero[mag_class(q1) * 4 + mag_class(q2)];
        if (!rc_bit(r, pz, enc ? c != PZ_RADIUS : 0, enc)) {
            q = 0;
            c = PZ_RADIUS;
        } else if (rc_bit(r, &m.exc, enc ? c == 0 : 0, enc)) {
            q = 0; /* an exception: predicts like a zero residual */
            c = 0;
        } else {
            unsigned neg = rc_bit(r, &m.sign[q1 < 0 ? 0 : q1 == 0 ? 1 : 2], enc ? q < 0 : 0, enc);
            uint32_t v = enc ? (uint32_t)(q < 0 ? -q : q) : 0; /* m + 1 = |q| >= 1 */
            int k = 0;
            if (enc)
                while ((v >> (k + 1)) != 0)
                    k++;
            uint16_t *pre = m.pre[q1 == 0];
            if (enc) {
                for (int j = 0; j < k; j++)
                    rc_bit(r, &pre[j], 1, true);
                rc_bit(r, &pre[k], 0, true);
            } else {
                while (rc_bit(r, &pre[k], 0, false))
                    if (++k == RC_KMAX)
                        return -1;
            }
            uint32_t got = 1;
            for (int j = k - 1; j >= 0; j--) {
                unsigned bit = enc ? (v >> j) & 1 : 0;
                bit = j == k - 1 ? rc_bit(r, &m.top[k], bit, enc) : rc_direct(r, bit, enc);
                got = got << 1 | bit;
            }
            q = neg ? -(int)got : (int)got;
            c = (unsigned)(q + PZ_RADIUS);
        }
        if (!enc)
            codes[i] = (uint16_t)c;
        q2 = q1;
        q1 = q;
    }
    return 0;
}

size_t cz_rc_encode(const uint16_t *codes, size_t n, uint8_t *dst, size_t cap)
{
    rc_coder r = {.range = 0xffffffffu, .pending = 1, .dst = dst, .cap = cap};
    (void)run(&r, (uint16_t *)codes, n, true); /* the encoder only reads CODES */
    for (int i = 0; i < 5; i++)
        shift_low(&r);
    return r.full ? 0 : r.pos;
}

int cz_rc_decode(const uint8_t *src, size_t len, uint16_t *codes, size_t n)
{
    rc_coder r = {.range = 0xffffffffu, .src = src, .len = len};
    for (int i = 0; i < 5; i++)
        r.code = r.code << 8 | get_byte(&r);
    if (run(&r, codes, n, false) != 0 || r.bad || r.pos != len)
        return -1;
    return 0;
}
