/*
 * codes_rc.c - the predictive codec's entropy stage for quantization codes
 * in payload version 2 (decoded by predict.c; contract in lossy.h): an
 * adaptive binary range coder with context modelling, in place of Huffman +
 * zstd. Version 3 writes rANS instead (codes_ans.c: as small within 4-12%
 * on EGM96, and 3-4 times as fast to decode); the encoder stays for the
 * tests, which build version 2 payloads with it.
 *
 * Why: on smooth fields at loose bounds nearly every code is the zero
 * residual (98.6% on EGM96 at 1e-2 of the range). Huffman spends at least
 * one bit on each, and zstd over that bitstream recovers only part of it;
 * an adaptive binary model spends a few hundredths of a bit on each, and
 * follows the statistics as they change from one interpolation level to the
 * next (EGM96, the same codes: 12.9 KB against 20.0 KB at 1e-2 of the range,
 * 74.6 KB against 95.5 KB at 1e-3).
 *
 * Binarization of a code c (q = c - PZ_RADIUS; c = 0 an exception):
 *   bit  c != PZ_RADIUS             context: the magnitude classes (0, 1, 2,
 *                                   3+) of the previous code's q and of the
 *                                   code one row up (cz_rows; 0 in a run's
 *                                   first row), and whether the code before
 *                                   the previous one was a zero residual
 *   k = floor(log2(|q|)) (0..14): k ones then a zero, contexts per position
 *        and whether the previous q was zero; 15 ones and no zero: an
 *        exception (c = 0), nothing follows;
 *   bit  q < 0                      context: sign of the previous q (-, 0, +)
 *   the low k bits of |q|, most significant first: the first with a
 *        context per k, the rest at probability one half.
 * Probabilities are 16-bit, each the mean of a fast and a slow estimate
 * (updated by 1/16 and 1/256 of the distance): the fast one follows the
 * statistics from one interpolation level to the next, the slow one is
 * precise within a level; both are kept to 32 bits, so a long run of zero
 * residuals costs next to nothing (about 2^-16 bit each once adapted). On
 * EGM96 the row context and the two rates save 4.6% at 1e-2 of the range.
 * The coder: 32-bit range, 64-bit low with a cache byte and a count of
 * pending 0xff bytes for carry propagation; the decoder reads the same
 * bytes in lockstep. Encoder and decoder run the same model code (one
 * always-inline function with an ENC switch), so they cannot drift.
 *
 * Stream: the coder's bytes, nothing else (the count of codes is the
 * caller's); the decoder reads exactly the bytes the encoder wrote. A
 * damaged stream decodes to other codes, or fails when the decoder would
 * read past the end or stop short of it; the frame checksum over the
 * reconstruction catches the rest.
 *
 * Ownership: the caller owns every buffer; nothing is allocated.
 */
#include "compress/predict_impl.h"

#define RC_BITS 16
#define RC_ONE (1u << RC_BITS)
#define RC_FAST 4
#define RC_SLOW 8
#define RC_TOP (1u << 24)
#define RC_KMAX 15

/* A probability of a zero bit: the mean of a fast and a slow estimate. */
typedef struct rc_prob {
    uint32_t fast, slow;        /* 16.16 fixed point, so that both reach 1 - 2^-16 */
} rc_prob;

typedef struct rc_model {
    rc_prob zero[32];           /* c != PZ_RADIUS: previous and up classes, zero before */
    rc_prob sign[3];            /* by the previous sign */
    rc_prob pre[2][RC_KMAX];    /* unary prefix, by previous-zero and position */
    rc_prob top[RC_KMAX];       /* first mantissa bit, by k */
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
    rc_prob *p = (rc_prob *)m;
    for (size_t i = 0; i < sizeof *m / sizeof *p; i++)
        p[i] = (rc_prob){1u << 31, 1u << 31};
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

/* Code (ENC) or decode bit B with probability *P (of a zero) and adapt.
 * Without branches on the bit (it is data: a branch would mispredict). */
__attribute__((always_inline)) static inline unsigned rc_bit(rc_coder *r, rc_prob *p,
                                                             unsigned b, bool enc)
{
    uint32_t p16 = ((p->fast >> 16) + (p->slow >> 16)) >> 1;
    uint32_t bound = (r->range >> RC_BITS) * (p16 ? p16 : 1); /* 1..RC_ONE - 1 */
    if (!enc)
        b = r->code >= bound;
    uint32_t mask = 0u - (uint32_t)b; /* all ones for a one */
    if (enc)
        r->low += bound & mask;
    else
        r->code -= bound & mask;
    r->range = b ? r->range - bound : bound;
    uint32_t f = b ? 0 : UINT32_MAX, s = f; /* the estimates move toward F */
    p->fast = b ? p->fast - (p->fast >> RC_FAST) : p->fast + ((f - p->fast) >> RC_FAST);
    p->slow = b ? p->slow - (p->slow >> RC_SLOW) : p->slow + ((s - p->slow) >> RC_SLOW);
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

/* q of code C (0 for an exception). */
static inline int q_of(uint16_t c)
{
    return c ? (int)c - PZ_RADIUS : 0;
}

/* Code (ENC) code C, or decode one, given the previous q Q1, the one before
 * Q2 and the code one row up UP (q values); returns the code. */
__attribute__((always_inline)) static inline int code_one(rc_coder *r, rc_model *m, unsigned c,
                                                          int q1, int q2, int up, bool enc)
{
    int q = (int)c - PZ_RADIUS;
    rc_prob *pz = &m->zero[mag_class(q1) * 4 + mag_class(up) + 16 * (q2 != 0)];
    if (!rc_bit(r, pz, enc ? c != PZ_RADIUS : 0, enc))
        return PZ_RADIUS;
    uint32_t v = enc ? (uint32_t)(q < 0 ? -q : q) : 0; /* |q| >= 1 */
    int k = 0;
    rc_prob *pre = m->pre[q1 == 0];
    if (enc) {
        k = c == 0 ? RC_KMAX : 31 - __builtin_clz(v); /* an exception: all ones */
        for (int j = 0; j < k; j++)
            rc_bit(r, &pre[j], 1, true);
        if (k == RC_KMAX)
            return 0;
        rc_bit(r, &pre[k], 0, true);
    } else {
        while (rc_bit(r, &pre[k], 0, false))
            if (++k == RC_KMAX)
                return 0;
    }
    unsigned neg = rc_bit(r, &m->sign[q1 < 0 ? 0 : q1 == 0 ? 1 : 2], enc ? q < 0 : 0, enc);
    uint32_t got = 1;
    for (int j = k - 1; j >= 0; j--) {
        unsigned bit = enc ? (v >> j) & 1 : 0;
        bit = j == k - 1 ? rc_bit(r, &m->top[k], bit, enc) : rc_direct(r, bit, enc);
        got = got << 1 | bit;
    }
    return (neg ? -(int)got : (int)got) + PZ_RADIUS;
}

/* The model run over CODES[0..N) in runs ROWS[0..NROWS): coded into R (ENC)
 * or decoded from it. Returns 0, or -1 if the runs do not add up to N. */
__attribute__((always_inline)) static inline int run(rc_coder *r, uint16_t *codes, size_t n,
                                                     const cz_rows *rows, size_t nrows, bool enc)
{
    rc_model m;
    model_init(&m);
    int q1 = 0, q2 = 0;
    size_t i = 0;
    for (size_t s = 0; s < nrows; s++) {
        if (rows[s].count > n - i || rows[s].width == 0)
            return -1;
        size_t end = i + (size_t)rows[s].count, w = (size_t)rows[s].width;
        size_t first_up = w < end - i ? i + w : end; /* codes from here have one up */
        for (; i < end; i++) {
            int up = i >= first_up ? q_of(codes[i - w]) : 0;
            int c = code_one(r, &m, enc ? codes[i] : 0, q1, q2, up, enc);
            if (!enc)
                codes[i] = (uint16_t)c;
            q2 = q1;
            q1 = q_of((uint16_t)c);
        }
    }
    return i == n ? 0 : -1;
}

size_t cz_rc_encode(const uint16_t *codes, size_t n, const cz_rows *rows, size_t nrows,
                    uint8_t *dst, size_t cap)
{
    rc_coder r = {.range = 0xffffffffu, .pending = 1, .dst = dst, .cap = cap};
    if (run(&r, (uint16_t *)codes, n, rows, nrows, true) != 0) /* the encoder only reads CODES */
        return 0;
    for (int i = 0; i < 5; i++)
        shift_low(&r);
    return r.full ? 0 : r.pos;
}

int cz_rc_decode(const uint8_t *src, size_t len, uint16_t *codes, size_t n, const cz_rows *rows,
                 size_t nrows)
{
    rc_coder r = {.range = 0xffffffffu, .src = src, .len = len};
    for (int i = 0; i < 5; i++)
        r.code = r.code << 8 | get_byte(&r);
    if (run(&r, codes, n, rows, nrows, false) != 0 || r.bad || r.pos != len)
        return -1;
    return 0;
}
