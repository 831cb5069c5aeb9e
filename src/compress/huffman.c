/*
 * huffman.c - canonical Huffman coding of 16-bit symbols (the entropy stage
 * of the predictive lossy codec, predict.c; contract in compress.h): the
 * stream format and the encoder. The decoder is huffman_dec.c.
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
 * Ownership: the caller owns every buffer; work tables live on the heap for
 * the duration of a call (no shared state, any number of threads).
 */
#include "compress/huffman_impl.h"

#include <stdlib.h>

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
    huff_first_codes(count, next);
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
