/*
 * codes_ans.c - the predictive codec's entropy stage for quantization codes
 * from payload version 3 on (used by predict.c; contract in lossy.h): rANS
 * with static frequency tables, one per context, in place of the adaptive
 * binary range coder of version 2 (codes_rc.c, still read).
 *
 * Why: the binary coder spends one adaptive decision per element for the
 * zero residual and 4-6 for the others, each a multiplication, two
 * probability updates and a renormalisation test in a serial chain: on
 * EGM96 its decoder took 8.5 ms at 1e-2 of the range and 25 ms at 1e-4,
 * more than the whole of ZFP's. Here an element is one table lookup and
 * one multiply-add, whatever its code, with two interleaved states; the
 * tables are counted by the encoder and stored (a few hundred bytes).
 *
 * Tokens of a code c (q = c - PZ_RADIUS, z its zigzag: 2q for q >= 0,
 * -2q - 1 below): z itself for z < AN_NDIRECT; else AN_NDIRECT + k - 4 for
 * z in [2^k, 2^(k+1)), k = 4..15, then the k bits of z - 2^k in the extra
 * bits; AN_ESC for an exception (c = 0). Context: the magnitude classes
 * (0, 1, 2, 3+) of the previous code's q and of the code one row up
 * (cz_rows; 0 in a run's first row), and whether the code before the
 * previous one was a zero residual (an exception's q counts as 0): 32
 * contexts, as codes_rc.c's zero decision.
 *
 * Stream (the count of codes is the caller's):
 *   per context 0..31: varint mask of its tokens (bit t: token t occurs),
 *     then for each token in the mask, ascending, varint (frequency - 1);
 *     the frequencies of a context add up to exactly AN_M;
 *   varint A, the bytes of the rANS part (even, >= 8);
 *   rANS: u32 x0, u32 x1 (the decoder's initial states), then u16 words,
 *     all little-endian; element i is decoded from state i % 2; 32-bit
 *     states in [AN_L, 2^32), one 16-bit word read when a state drops
 *     below AN_L; both states end at AN_L;
 *   extra bits to the end: packed least significant bit first, in element
 *     order, zero-padded to a byte.
 * Varints: 7 bits a byte, least significant first, high bit = more.
 * The decoder reads exactly these bytes; anything else (a table that does
 * not add up, a token its context lacks, a state that does not end at
 * AN_L, bytes left over or missing) is -1. The frame checksum over the
 * reconstruction catches the rest.
 *
 * Ownership: the caller owns every buffer; the encoder allocates 2 bytes
 * an element (tokens and contexts) plus its output, the decoder its tables
 * (70 KB), within the call.
 */
#include "compress/predict_impl.h"

#include <stdlib.h>

#define AN_PB 10                 /* frequency bits: tables add up to AN_M */
#define AN_M (1u << AN_PB)
#define AN_L (1u << 16)          /* states in [AN_L, 2^32) */
#define AN_NDIRECT 16            /* tokens 0..15: z itself */
#define AN_KMIN 4
#define AN_KMAX 15
#define AN_ESC (AN_NDIRECT + AN_KMAX - AN_KMIN + 1) /* 28: an exception */
#define AN_NSYM (AN_ESC + 1)
#define AN_NCLS 3                /* level classes: h = 1, 2, 4 and up */
#define AN_G 16                  /* codes in a group */
#define AN_ECTX (32 * AN_NCLS)   /* element contexts */
#define AN_NCTX (AN_ECTX + 4 * AN_NCLS) /* and group contexts */
#define AN_USED_BYTES ((AN_NCTX + 7) / 8)

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

static inline unsigned ctx_of(int q1, int q2, int up)
{
    return (unsigned)(mag_class(q1) * 4 + mag_class(up) + 16 * (q2 != 0));
}

/* ---- tables ---------------------------------------------------------------- */

/* Frequencies F[0..AN_NSYM) adding up to AN_M from counts CNT (not all 0):
 * each counted token at least 1. */
static void normalize(const uint32_t *cnt, uint32_t *f)
{
    uint64_t total = 0;
    for (int t = 0; t < AN_NSYM; t++)
        total += cnt[t];
    int64_t sum = 0;
    for (int t = 0; t < AN_NSYM; t++) {
        f[t] = 0;
        if (cnt[t]) {
            uint64_t v = ((uint64_t)cnt[t] * AN_M + total / 2) / total;
            f[t] = v ? (uint32_t)v : 1;
        }
        sum += f[t];
    }
    while (sum != AN_M) { /* a few steps: rounding and the 1s moved it by < AN_NSYM */
        int best = -1;
        for (int t = 0; t < AN_NSYM; t++)
            if (f[t] > (sum > AN_M ? 1u : 0u) && (best < 0 || cnt[t] > cnt[best]))
                best = t;
        f[best] += sum > AN_M ? (uint32_t)-1 : 1;
        sum += sum > AN_M ? -1 : 1;
    }
}

static uint8_t *put_varint(uint8_t *p, uint8_t *end, uint64_t v)
{
    do {
        if (!p || p == end)
            return NULL;
        *p++ = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return p;
}

/* A varint of at most 64 bits from S (LEN) at *POS; false if malformed. */
static bool get_varint(const uint8_t *s, size_t len, size_t *pos, uint64_t *v)
{
    *v = 0;
    for (int sh = 0; sh < 64; sh += 7) {
        if (*pos >= len)
            return false;
        uint8_t b = s[(*pos)++];
        *v |= (uint64_t)(b & 0x7f) << sh;
        if (!(b & 0x80))
            return sh < 63 || b <= 1;
    }
    return false;
}

/* ---- tokens -------------------------------------------------------------- */

/* Token of code C; *K extra bits *EXTRA. */
static inline unsigned token_of(unsigned c, unsigned *k, uint32_t *extra)
{
    *k = 0;
    *extra = 0;
    if (c == 0)
        return AN_ESC;
    int q = (int)c - PZ_RADIUS;
    uint32_t z = q >= 0 ? 2u * (uint32_t)q : 2u * (uint32_t)-q - 1;
    if (z < AN_NDIRECT)
        return z;
    unsigned kk = 31u - (unsigned)__builtin_clz(z);
    *k = kk;
    *extra = z - (1u << kk);
    return AN_NDIRECT + kk - AN_KMIN;
}

/* Context of the group CODES[G..GE) (less the class's base): PREVZ, the
 * previous group's flag, and whether the codes one row up (W back) are all
 * zero residuals, when the group lies after the run's first row
 * (FIRST_UP) and wholly after them (W >= AN_G); else as if they were not. */
static inline unsigned group_ctx(const uint16_t *codes, size_t g, size_t ge, size_t w,
                                 size_t first_up, unsigned prevz)
{
    unsigned unz = 1;
    if (g >= first_up && w >= AN_G) {
        unz = 0;
        for (size_t j = g; j < ge; j++)
            unz |= codes[j - w] != PZ_RADIUS;
    }
    return prevz + 2 * unz;
}

/* ---- encoder ------------------------------------------------------------- */

typedef struct an_bits {
    uint8_t *p, *end;
    uint64_t acc;
    unsigned n;
    bool full;
} an_bits;

static inline void bits_put(an_bits *b, uint32_t v, unsigned k)
{
    b->acc |= (uint64_t)v << b->n;
    b->n += k;
    while (b->n >= 8) {
        if (b->p < b->end)
            *b->p++ = (uint8_t)b->acc;
        else
            b->full = true;
        b->acc >>= 8;
        b->n -= 8;
    }
}

/* Run ROW of the codes, from element I of N: where it ends, its width, its
 * first element with one a row up, its contexts' bases by level; false if
 * it does not fit. The encoder and the decoder walk runs alike. */
typedef struct an_row {
    size_t end, w, first_up;
    unsigned ebase, gbase;
} an_row;

static bool row_start(const cz_rows *row, size_t i, size_t n, an_row *out)
{
    if (row->count > n - i || row->width == 0)
        return false;
    size_t end = i + (size_t)row->count, w = (size_t)row->width;
    unsigned cls = row->level < AN_NCLS ? (unsigned)row->level : AN_NCLS - 1;
    *out = (an_row){end, w, w < end - i ? i + w : end, 32 * cls, AN_ECTX + 4 * cls};
    return true;
}

size_t cz_ans_encode(const uint16_t *codes, size_t n, const cz_rows *rows, size_t nrows,
                     uint8_t *dst, size_t cap)
{
    /* per symbol (a group's, an element's): context << 8 | token */
    uint16_t *ct = malloc((n + n / AN_G + nrows + 1) * sizeof *ct); /* every symbol */
    size_t wcap = n + n / AN_G + nrows + 4;
    uint16_t *words = malloc(wcap * sizeof *words); /* <= one word a symbol */
    uint8_t *xb = malloc(2 * n + 16);                  /* <= 15 bits an element */
    static const uint32_t zero_cnt[AN_NSYM];
    uint32_t (*cnt)[AN_NSYM] = calloc(AN_NCTX, sizeof *cnt);
    size_t out = 0;
    if (!ct || !words || !xb || !cnt)
        goto done;
    an_bits xw = {xb, xb + 2 * n + 16, 0, 0, false};
    int q1 = 0, q2 = 0;
    unsigned prevz = 0;
    size_t i = 0, ns = 0;
    for (size_t s = 0; s < nrows; s++) {
        an_row rw;
        if (!row_start(&rows[s], i, n, &rw))
            goto done;
        const size_t end = rw.end, w = rw.w, first_up = rw.first_up;
        const unsigned ebase = rw.ebase, gbase = rw.gbase;
        for (size_t g = i; g < end; g = i) {
            size_t ge = end - g < AN_G ? end : g + AN_G;
            unsigned gcx = gbase + group_ctx(codes, g, ge, w, first_up, prevz);
            unsigned nz = 0;
            for (size_t j = g; j < ge; j++)
                nz |= codes[j] != PZ_RADIUS;
            cnt[gcx][nz]++;
            ct[ns++] = (uint16_t)(gcx << 8 | nz);
            prevz = nz;
            if (!nz) {
                i = ge;
                q1 = q2 = 0;
                continue;
            }
            for (; i < ge; i++) {
                int up = i >= first_up ? q_of(codes[i - w]) : 0;
                unsigned k, cx = ebase + ctx_of(q1, q2, up), t;
                uint32_t extra;
                t = token_of(codes[i], &k, &extra);
                if (k)
                    bits_put(&xw, extra, k);
                cnt[cx][t]++;
                ct[ns++] = (uint16_t)(cx << 8 | t);
                q2 = q1;
                q1 = q_of(codes[i]);
            }
        }
    }
    if (i != n)
        goto done;
    bits_put(&xw, 0, 7); /* flush the last partial byte */
    size_t xlen = (size_t)(xw.p - xb);

    uint32_t freq[AN_NCTX][AN_NSYM], cum[AN_NCTX][AN_NSYM];
    uint64_t rcp[AN_NCTX][AN_NSYM]; /* x / f = x * rcp >> 63 for x < 2^32 (error < 2^-31) */
    uint8_t *p = dst, *pend = dst + cap;
    if (cap < AN_USED_BYTES)
        goto done;
    memset(p, 0, AN_USED_BYTES); /* which contexts have a table */
    for (int cx = 0; cx < AN_NCTX; cx++)
        if (memcmp(cnt[cx], zero_cnt, sizeof zero_cnt) != 0)
            p[cx / 8] |= (uint8_t)(1u << cx % 8);
    p += AN_USED_BYTES;
    for (int cx = 0; cx < AN_NCTX; cx++) {
        uint32_t mask = 0;
        if (memcmp(cnt[cx], zero_cnt, sizeof zero_cnt) != 0)
            normalize(cnt[cx], freq[cx]);
        else
            memset(freq[cx], 0, sizeof freq[cx]);
        uint32_t c = 0;
        for (int t = 0; t < AN_NSYM; t++) {
            cum[cx][t] = c;
            c += freq[cx][t];
            mask |= (freq[cx][t] != 0) << t;
            rcp[cx][t] = freq[cx][t] ? ((uint64_t)1 << 63) / freq[cx][t] + 1 : 0;
        }
        if (mask)
            p = put_varint(p, pend, mask);
        for (int t = mask ? __builtin_ctz(mask) + 1 : AN_NSYM; t < AN_NSYM && p; t++)
            if (freq[cx][t]) /* the first token's: the rest of AN_M */
                p = put_varint(p, pend, freq[cx][t] - 1);
    }
    if (!p)
        goto done;

    /* rANS, last element first; words written backwards */
    uint32_t x[2] = {AN_L, AN_L};
    uint16_t *wp = words + wcap;
    for (size_t j = ns; j-- > 0;) {
        unsigned cx = ct[j] >> 8, t = ct[j] & 0xff;
        uint32_t f = freq[cx][t], xs = x[j & 1];
        if ((uint64_t)xs >= ((uint64_t)(AN_L >> AN_PB) << 16) * f) {
            *--wp = (uint16_t)xs;
            xs >>= 16;
        }
        uint32_t q = (uint32_t)(((unsigned __int128)xs * rcp[cx][t]) >> 63);
        x[j & 1] = q * AN_M + (xs - q * f) + cum[cx][t];
    }
    size_t nw = (size_t)(words + wcap - wp), alen = 8 + 2 * nw;
    p = put_varint(p, pend, alen);
    if (!p || (size_t)(pend - p) < alen + xlen)
        goto done;
    cn_put_u32(p, x[0]);
    cn_put_u32(p + 4, x[1]);
    p += 8;
    for (size_t j = 0; j < nw; j++, p += 2)
        cn_put_u16(p, wp[j]);
    if (xlen)
        memcpy(p, xb, xlen);
    out = (size_t)(p + xlen - dst);
done:
    free(ct);
    free(words);
    free(xb);
    free(cnt);
    return out;
}

/* ---- decoder ------------------------------------------------------------- */

typedef struct an_dec {
    uint8_t sym[AN_NCTX][AN_M];          /* token of each slot; AN_NSYM: none */
    uint16_t freq[AN_NCTX][AN_NSYM + 1]; /* [AN_NSYM]: AN_M, the state unchanged */
    uint16_t cum[AN_NCTX][AN_NSYM + 1];
} an_dec;

/* The tables at S (LEN) from *POS into D; false if malformed. */
static bool read_tables(const uint8_t *s, size_t len, size_t *pos, an_dec *d)
{
    if (len < AN_USED_BYTES)
        return false;
    const uint8_t *used = s;
    *pos = AN_USED_BYTES;
    for (int cx = 0; cx < AN_NCTX; cx++) {
        uint64_t mask = 0, v;
        if ((used[cx / 8] >> cx % 8 & 1) &&
            (!get_varint(s, len, pos, &mask) || mask == 0 || mask >> AN_NSYM))
            return false;
        uint32_t sum = 0;
        int first = mask ? __builtin_ctzll(mask) : AN_NSYM;
        for (int t = 0; t <= AN_NSYM; t++)
            d->freq[cx][t] = 0;
        for (int t = first + 1; t < AN_NSYM; t++) {
            if (!(mask >> t & 1))
                continue;
            if (!get_varint(s, len, pos, &v) || v >= AN_M - 1 - sum)
                return false; /* the first token keeps at least 1 */
            d->freq[cx][t] = (uint16_t)(v + 1);
            sum += (uint32_t)v + 1;
        }
        if (mask)
            d->freq[cx][first] = (uint16_t)(AN_M - sum);
        else
            memset(d->sym[cx], AN_NSYM, AN_M);
        uint32_t c = 0;
        for (int t = 0; t < AN_NSYM; t++) {
            d->cum[cx][t] = (uint16_t)c;
            memset(d->sym[cx] + c, t, d->freq[cx][t]);
            c += d->freq[cx][t];
        }
        d->freq[cx][AN_NSYM] = AN_M;
        d->cum[cx][AN_NSYM] = 0;
    }
    return true;
}

/* The rANS part being decoded: states X0 (the next symbol's) and X1, words
 * at A up to AEND (then 2 zero bytes of padding, read but not consumed, so
 * that the read needs no branch); BAD when a word past AEND was needed. */
typedef struct an_rd {
    uint32_t x0, x1;
    const uint8_t *a, *aend;
    unsigned bad;
} an_rd;

/* One symbol in context CX, then the states swap. Without a branch on the
 * renormalisation (it is data). */
__attribute__((always_inline)) static inline unsigned dec_sym(const an_dec *d, an_rd *r,
                                                              unsigned cx)
{
    uint32_t x = r->x0, slot = x & (AN_M - 1);
    unsigned t = d->sym[cx][slot];
    x = d->freq[cx][t] * (x >> AN_PB) + slot - d->cum[cx][t];
    unsigned need = x < AN_L, ok = r->a < r->aend;
    uint32_t more = x << 16 | cn_get_u16(r->a);
    x = need ? more : x;
    r->bad |= need & !ok; /* past the words */
    r->a += 2 * (need & ok);
    r->x0 = r->x1;
    r->x1 = x;
    return t;
}

/* Magnitude class of a token's q (0, 1, 2, 3+; an exception 0) times 4, and
 * 16 for a token of a q != 0: the context's parts from the previous tokens. */
static const uint8_t mag4[AN_NSYM] = {0, 4, 4, 8, 8, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12,
                                      12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 0};

int cz_ans_decode(const uint8_t *src, size_t len, uint16_t *codes, size_t n, const cz_rows *rows,
                  size_t nrows)
{
    an_dec *d = malloc(sizeof *d);
    uint8_t *words = NULL;
    size_t pos = 0;
    uint64_t alen;
    int rc = -1;
    if (!d || !read_tables(src, len, &pos, d) || !get_varint(src, len, &pos, &alen) ||
        alen < 8 || alen % 2 || alen > len - pos || !(words = malloc((size_t)alen + 2)))
        goto done;
    memcpy(words, src + pos, (size_t)alen);
    words[alen] = words[alen + 1] = 0;
    const uint8_t *xb = src + pos + alen, *xend = src + len;
    an_rd r = {cn_get_u32(words), cn_get_u32(words + 4), words + 8, words + alen, 0};
    uint64_t acc = 0;
    unsigned have = 0;
    bool bad = false;
    unsigned t1 = 0, t2 = 0; /* the previous tokens (0 after a zero group) */
    unsigned prevz = 0;
    size_t i = 0;
    for (size_t s = 0; s < nrows && !bad; s++) {
        an_row rw;
        if (!row_start(&rows[s], i, n, &rw))
            goto done;
        const size_t end = rw.end, w = rw.w, first_up = rw.first_up;
        const unsigned ebase = rw.ebase, gbase = rw.gbase;
        for (size_t g = i; g < end; g = i) {
            size_t ge = end - g < AN_G ? end : g + AN_G;
            unsigned t = dec_sym(d, &r, gbase + group_ctx(codes, g, ge, w, first_up, prevz));
            bad |= t > 1;
            prevz = t & 1;
            if (!prevz) {
                for (; i < ge; i++)
                    codes[i] = PZ_RADIUS;
                t1 = t2 = 0;
                continue;
            }
            for (; i < ge; i++) {
                int up = i >= first_up ? q_of(codes[i - w]) : 0;
                unsigned cx = ebase + mag4[t1] + 16 * (t2 != 0 && t2 != AN_ESC);
                t = dec_sym(d, &r, cx + (unsigned)mag_class(up));
                unsigned c;
                if (t < AN_NDIRECT) {
                    c = t & 1 ? PZ_RADIUS - ((t + 1) >> 1) : PZ_RADIUS + (t >> 1);
                } else if (t < AN_ESC) {
                    unsigned k = t - AN_NDIRECT + AN_KMIN;
                    while (have < k && xb < xend) {
                        acc |= (uint64_t)*xb++ << have;
                        have += 8;
                    }
                    bad |= have < k;
                    uint32_t z = (1u << k) + (uint32_t)(acc & ((1u << k) - 1));
                    acc >>= k;
                    have -= have < k ? have : k;
                    bad |= z > 65534;
                    c = z & 1 ? PZ_RADIUS - ((z + 1) >> 1) : PZ_RADIUS + (z >> 1);
                } else {
                    bad |= t == AN_NSYM;
                    t = t == AN_NSYM ? AN_ESC : t;
                    c = 0;
                }
                codes[i] = (uint16_t)c;
                t2 = t1;
                t1 = t;
            }
        }
    }
    /* every byte read: the states back at AN_L, no extra byte unread (at most
     * 7 padding bits, all zero) */
    if (!bad && !r.bad && i == n && r.a == r.aend && r.x0 == AN_L && r.x1 == AN_L && xb == xend &&
        have < 8 && acc == 0)
        rc = 0;
done:
    free(d);
    free(words);
    return rc;
}
