/*
 * huffman.c - canonical Huffman coding of 16-bit symbols (the entropy stage
 * of the predictive lossy codec, predict.c; contract in compress.h).
 *
 * Stream (integers little-endian):
 *   u32 nsym                 distinct symbols (0 only when there are no symbols)
 *   nsym x { varint gap, u8 len }   symbols ascending, gap = sym - prev - 1
 *                            (prev starts at -1); len 1..HUFF_MAXLEN, omitted
 *                            when nsym == 1 (a lone symbol costs no bits)
 *   bits                     codes MSB-first, zero-padded to a byte; the
 *                            stream ends exactly at the last code's byte
 *
 * Encoder: frequencies, optimal lengths by Moffat-Katajainen's in-place
 * algorithm over the frequency-sorted symbols, lengths above HUFF_MAXLEN cut
 * and the Kraft sum repaired by lengthening the shortest codes that keep it
 * (as miniz does), then canonical codes ordered by (length, symbol). The
 * exact output size is known before writing, so CAP is checked once.
 *
 * Decoder: the table is hostile input. Symbols must be strictly ascending
 * and in range, lengths in 1..HUFF_MAXLEN, and the code complete (Kraft sum
 * exactly 1), so every bit pattern decodes. Codes of up to HUFF_FAST bits
 * come from one lookup; longer ones from a canonical search by length. The
 * reader never touches a byte past the stream: it loads 8 bytes at a time
 * while that is in bounds and assembles the tail byte by byte.
 *
 * Ownership: the caller owns every buffer; work tables live on the heap for
 * the duration of a call (no shared state, any number of threads).
 */
#include "compress/compress.h"

#include <stdlib.h>
#include <string.h>

#define HUFF_NSYM 65536
#define HUFF_MAXLEN 24
#define HUFF_FAST 12

size_t cz_huff_bound(size_t n)
{
    size_t nsym = n < HUFF_NSYM ? n : HUFF_NSYM;
    if (n > (SIZE_MAX - 8 - 4 - 4 * HUFF_NSYM) / 4)
        return SIZE_MAX;
    return 4 + 4 * nsym + (n * HUFF_MAXLEN + 7) / 8 + 8;
}

/* ---- code lengths ---------------------------------------------------------- */

typedef struct huff_sf {
    uint64_t freq;
    uint32_t sym;
} huff_sf;

static int cmp_sf(const void *a, const void *b)
{
    const huff_sf *x = a, *y = b;
    if (x->freq != y->freq)
        return x->freq < y->freq ? -1 : 1;
    return x->sym < y->sym ? -1 : x->sym > y->sym;
}

/* Moffat & Katajainen, "In-place calculation of minimum-redundancy codes"
 * (1995): A[0..n-1] ascending frequencies in, code lengths out (n >= 2). */
static void min_redundancy(uint64_t *A, size_t n)
{
    size_t root = 0, leaf = 2, next;
    A[0] += A[1];
    for (next = 1; next < n - 1; next++) {
        if (leaf >= n || A[root] < A[leaf]) {
            A[next] = A[root];
            A[root++] = next;
        } else {
            A[next] = A[leaf++];
        }
        if (leaf >= n || (root < next && A[root] < A[leaf])) {
            A[next] += A[root];
            A[root++] = next;
        } else {
            A[next] += A[leaf++];
        }
    }
    A[n - 2] = 0;
    for (size_t i = n - 2; i-- > 0;)
        A[i] = A[A[i]] + 1;
    size_t avbl = 1, used = 0;
    uint64_t dpth = 0;
    ptrdiff_t r = (ptrdiff_t)n - 2, nx = (ptrdiff_t)n - 1;
    while (avbl > 0) {
        while (r >= 0 && A[r] == dpth) {
            used++;
            r--;
        }
        while (avbl > used) {
            A[nx--] = dpth;
            avbl--;
        }
        avbl = 2 * used;
        dpth++;
        used = 0;
    }
}

/* Code lengths for the NS symbols of SF (sorted by ascending frequency) into
 * LEN[sym]; at most HUFF_MAXLEN bits. NS >= 2. Returns -1 on allocation failure. */
static int build_lengths(const huff_sf *sf, size_t ns, uint8_t *len)
{
    uint64_t *A = malloc(ns * sizeof *A);
    if (!A)
        return -1;
    for (size_t i = 0; i < ns; i++)
        A[i] = sf[i].freq;
    min_redundancy(A, ns);
    uint64_t count[HUFF_MAXLEN + 1] = {0};
    for (size_t i = 0; i < ns; i++)
        count[A[i] > HUFF_MAXLEN ? HUFF_MAXLEN : A[i]]++;
    free(A);
    /* Kraft sum in units of 2^-MAXLEN; cutting lengths made it exceed 1. */
    uint64_t total = 0;
    for (int l = 1; l <= HUFF_MAXLEN; l++)
        total += count[l] << (HUFF_MAXLEN - l);
    while (total > (1ull << HUFF_MAXLEN)) {
        count[HUFF_MAXLEN]--;
        for (int l = HUFF_MAXLEN - 1; l > 0; l--) {
            if (count[l]) {
                count[l]--;
                count[l + 1] += 2;
                break;
            }
        }
        total--;
    }
    /* Longest codes to the rarest symbols (SF is ascending by frequency). */
    size_t i = 0;
    for (int l = HUFF_MAXLEN; l >= 1; l--)
        for (uint64_t c = 0; c < count[l]; c++)
            len[sf[i++].sym] = (uint8_t)l;
    return 0;
}

/* First canonical code of each length, from the count of codes per length. */
static void first_codes(const uint32_t *count, uint32_t *first)
{
    uint32_t code = 0;
    first[0] = 0;
    for (int l = 1; l <= HUFF_MAXLEN; l++) {
        code = (code + count[l - 1]) << 1;
        first[l] = code;
    }
}

/* ---- encoder --------------------------------------------------------------- */

static size_t put_varint(uint8_t *p, uint32_t v)
{
    size_t i = 0;
    while (v >= 0x80) {
        p[i++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[i++] = (uint8_t)v;
    return i;
}

static int cmp_u16(const void *a, const void *b)
{
    return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

size_t cz_huff_encode(const uint16_t *sym, size_t n, uint8_t *dst, size_t cap)
{
    size_t out = 0, ns = 0;
    /* Only the entries of symbols that occur are touched (the calloc'd
     * pages of the others are never faulted in), so small inputs are cheap. */
    uint64_t *freq = calloc(HUFF_NSYM, sizeof *freq);
    uint8_t *len = malloc(HUFF_NSYM);
    uint32_t *code = malloc(HUFF_NSYM * sizeof *code);
    uint16_t *used = malloc((n < HUFF_NSYM ? (n ? n : 1) : HUFF_NSYM) * sizeof *used);
    huff_sf *sf = NULL;
    if (!freq || !len || !code || !used)
        goto done;
    for (size_t i = 0; i < n; i++)
        if (freq[sym[i]]++ == 0)
            used[ns++] = sym[i];
    qsort(used, ns, sizeof *used, cmp_u16);
    if (!(sf = malloc((ns ? ns : 1) * sizeof *sf)))
        goto done;
    for (size_t i = 0; i < ns; i++) {
        sf[i] = (huff_sf){freq[used[i]], used[i]};
        len[used[i]] = 0;
    }
    if (ns >= 2) {
        qsort(sf, ns, sizeof *sf, cmp_sf);
        if (build_lengths(sf, ns, len) != 0)
            goto done;
    }
    /* Exact size: header, table, bits. */
    uint64_t bits = 0;
    size_t tab = 0;
    uint8_t tmp[8];
    for (size_t i = 0; i < ns; i++) {
        uint32_t s = used[i];
        bits += freq[s] * len[s];
        tab += put_varint(tmp, i ? s - used[i - 1] - 1u : s) + (ns >= 2);
    }
    size_t need = 4 + tab + (size_t)((bits + 7) / 8);
    if (need > cap)
        goto done;
    /* Table, and canonical codes by (length, symbol). */
    uint8_t *p = dst;
    cn_put_u32(p, (uint32_t)ns);
    p += 4;
    uint32_t count[HUFF_MAXLEN + 1] = {0}, next[HUFF_MAXLEN + 1];
    for (size_t i = 0; i < ns; i++) {
        uint32_t s = used[i];
        p += put_varint(p, i ? s - used[i - 1] - 1u : s);
        if (ns >= 2)
            *p++ = len[s];
        count[len[s]]++;
    }
    count[0] = 0;
    first_codes(count, next);
    for (size_t i = 0; i < ns; i++)
        if (len[used[i]])
            code[used[i]] = (next[len[used[i]]]++ << 8) | len[used[i]];
    /* Bits, MSB-first through a left-aligned 64-bit accumulator. */
    if (ns >= 2) {
        uint64_t acc = 0;
        unsigned nb = 0;
        for (size_t i = 0; i < n; i++) {
            uint32_t c = code[sym[i]];
            unsigned l = c & 0xff;
            acc |= (uint64_t)(c >> 8) << (64 - nb - l);
            nb += l;
            if (nb >= 32) {
                p[0] = (uint8_t)(acc >> 56);
                p[1] = (uint8_t)(acc >> 48);
                p[2] = (uint8_t)(acc >> 40);
                p[3] = (uint8_t)(acc >> 32);
                p += 4;
                acc <<= 32;
                nb -= 32;
            }
        }
        for (; nb > 0; nb = nb > 8 ? nb - 8 : 0) {
            *p++ = (uint8_t)(acc >> 56);
            acc <<= 8;
        }
    }
    out = (size_t)(p - dst);
done:
    free(freq);
    free(len);
    free(code);
    free(used);
    free(sf);
    return out;
}

/* ---- decoder --------------------------------------------------------------- */

typedef struct huff_dec {
    uint32_t fast[1u << HUFF_FAST];    /* sym << 8 | len, or 0: longer code */
    uint32_t count[HUFF_MAXLEN + 1];
    uint32_t first[HUFF_MAXLEN + 1];   /* first canonical code of each length */
    uint32_t offset[HUFF_MAXLEN + 1];  /* index in SORTED of that code */
    uint16_t sorted[HUFF_NSYM];        /* symbols by (length, symbol) */
} huff_dec;

/* Up to 64 bits of SRC[0..LEN) from bit POS on, MSB-aligned, zeros past the end. */
static inline uint64_t peek_tail(const uint8_t *src, size_t len, uint64_t pos)
{
    size_t b = (size_t)(pos >> 3);
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | (b + (size_t)i < len ? src[b + (size_t)i] : 0);
    return v << (pos & 7);
}

static inline uint64_t peek_fast(const uint8_t *src, uint64_t pos)
{
    uint64_t v;
    memcpy(&v, src + (pos >> 3), 8);
    return __builtin_bswap64(v) << (pos & 7);
}

/* Decode one symbol from the MSB-aligned bits V; sets *L to its length, or
 * returns -1 (cannot happen for a complete code, kept as a guard). */
static inline int decode_one(const huff_dec *d, uint64_t v, unsigned *l)
{
    uint32_t e = d->fast[v >> (64 - HUFF_FAST)];
    if (e) {
        *l = e & 0xff;
        return (int)(e >> 8);
    }
    for (unsigned k = HUFF_FAST + 1; k <= HUFF_MAXLEN; k++) {
        uint32_t c = (uint32_t)(v >> (64 - k)) - d->first[k];
        if (c < d->count[k]) {
            *l = k;
            return d->sorted[d->offset[k] + c];
        }
    }
    return -1;
}

int cz_huff_decode(const uint8_t *src, size_t len, uint16_t *sym, size_t n)
{
    cn_rd r = {src, len, 0, false};
    uint32_t ns = cn_rd_u32(&r);
    if (r.bad || ns > HUFF_NSYM || (ns == 0) != (n == 0))
        return -1;
    if (ns == 0)
        return r.off == len ? 0 : -1;
    huff_dec *d = calloc(1, sizeof *d);
    uint8_t *lens = malloc(ns);
    uint16_t *syms = malloc(ns * sizeof *syms);
    int rc = -1;
    if (!d || !lens || !syms)
        goto done;
    /* Table: ascending symbols, lengths in range, complete code. */
    uint64_t s = 0, kraft = 0;
    for (uint32_t i = 0; i < ns; i++) {
        uint64_t gap = 0;
        for (int sh = 0;; sh += 7) {
            uint8_t b = cn_rd_u8(&r);
            if (r.bad || sh > 14)
                goto done;
            gap |= (uint64_t)(b & 0x7f) << sh;
            if (!(b & 0x80))
                break;
        }
        s = (i == 0 ? 0 : s + 1) + gap;
        if (s >= HUFF_NSYM)
            goto done;
        syms[i] = (uint16_t)s;
        lens[i] = ns >= 2 ? cn_rd_u8(&r) : 0;
        if (r.bad || (ns >= 2 && (lens[i] < 1 || lens[i] > HUFF_MAXLEN)))
            goto done;
        if (ns >= 2)
            kraft += 1ull << (HUFF_MAXLEN - lens[i]);
    }
    if (ns == 1) {
        if (r.off != len)
            goto done;
        for (size_t i = 0; i < n; i++)
            sym[i] = syms[0];
        rc = 0;
        goto done;
    }
    if (kraft != (1ull << HUFF_MAXLEN))
        goto done;
    for (uint32_t i = 0; i < ns; i++)
        d->count[lens[i]]++;
    first_codes(d->count, d->first);
    uint32_t pos[HUFF_MAXLEN + 1], acc = 0;
    for (int l = 1; l <= HUFF_MAXLEN; l++) {
        d->offset[l] = acc;
        pos[l] = acc;
        acc += d->count[l];
    }
    for (uint32_t i = 0; i < ns; i++) /* syms ascending: stable by symbol */
        d->sorted[pos[lens[i]]++] = syms[i];
    for (int l = 1; l <= HUFF_FAST; l++)
        for (uint32_t j = 0; j < d->count[l]; j++) {
            uint32_t c = (d->first[l] + j) << (HUFF_FAST - l);
            uint32_t e = (uint32_t)d->sorted[d->offset[l] + j] << 8 | (uint32_t)l;
            for (uint32_t f = 0; f < (1u << (HUFF_FAST - l)); f++)
                d->fast[c + f] = e;
        }
    /* Bits. */
    const uint8_t *bits = src + r.off;
    size_t blen = len - r.off;
    uint64_t total = (uint64_t)blen * 8, bp = 0;
    size_t i = 0;
    while (i < n) {
        /* Symbols decodable without bounds checks: every load in bounds. */
        size_t safe = blen >= 8 && (bp >> 3) < blen - 8 ? (size_t)((blen - 8 - (bp >> 3)) * 8 / HUFF_MAXLEN) : 0;
        if (safe > n - i)
            safe = n - i;
        size_t end = i + safe;
        for (; i < end; i++) {
            unsigned l;
            int v = decode_one(d, peek_fast(bits, bp), &l);
            if (v < 0)
                goto done;
            sym[i] = (uint16_t)v;
            bp += l;
        }
        if (safe == 0) {
            unsigned l;
            int v = decode_one(d, peek_tail(bits, blen, bp), &l);
            if (v < 0 || bp + l > total)
                goto done;
            sym[i++] = (uint16_t)v;
            bp += l;
        }
    }
    /* The stream ends with the last code's byte. */
    rc = (bp + 7) / 8 == blen ? 0 : -1;
done:
    free(d);
    free(lens);
    free(syms);
    return rc;
}
