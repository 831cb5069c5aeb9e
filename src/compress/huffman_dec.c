/*
 * huffman_dec.c - the decoder of the canonical Huffman code of 16-bit
 * symbols (stream format in huffman.c; contract in compress.h).
 *
 * The table is hostile input. Symbols must be strictly ascending and in
 * range, lengths in 1..HUFF_MAXLEN, and the code complete (Kraft sum
 * exactly 1), so every bit pattern decodes. Codes of up to HUFF_FAST bits
 * come from one lookup; longer ones from a canonical search by length. The
 * reader never touches a byte past the stream: it loads 8 bytes at a time
 * while that is in bounds and assembles the tail byte by byte. The stream
 * must end exactly with the last code's byte.
 *
 * Ownership: the caller owns every buffer; the decoding tables live on the
 * heap for the duration of a call (no shared state).
 */
#include "compress/huffman_impl.h"

#include <stdlib.h>

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
    huff_first_codes(d->count, d->first);
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
