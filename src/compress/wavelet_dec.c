/*
 * wavelet_dec.c - the wavelet codec's decoder (format in wavelet_impl.h).
 *
 * The payload is hostile until proven otherwise. Before anything is
 * allocated the header must hold: its checksum, magic and version, the
 * caller's type, 1..3 dimensions each >= 1 (unused ones 0) whose product of
 * elements is exactly RAW_LEN bytes, a finite positive bound, a known
 * lossless pass and flags, 1..WL_MAX_LEVELS levels (0 and no lossless pass
 * if verbatim), and a body length within wl_body_limit of the shape. Every allocation is then
 * bounded by RAW_LEN. The body must decompress to exactly that length and be
 * consumed exactly: each section's counts are checked against the shape
 * (read_level), every code against its table, every exception index
 * against the element count. Only then is DST written: the same
 * wl_reconstruct the encoder ran, then the exceptions' exact bits.
 *
 * Ownership: the caller owns SRC and DST; working arrays are freed here.
 */
#include "compress/wavelet_impl.h"

#include <float.h>
#include <stdlib.h>

#include <zlib.h>
#include <zstd.h>

typedef struct wl_hdr {
    uint8_t type, lossless, flags;
    int levels;
    uint64_t d3[3];
    size_t count, body_len;
} wl_hdr;

/* Parse and check the header of SRC[0..N) against TYPE and RAW_LEN. */
static int parse_header(uint8_t type, const uint8_t *src, size_t n, size_t raw_len, wl_hdr *h)
{
    if (!src || n < WL_HDR || src[0] != WL_MAGIC || src[1] != WL_VERSION || src[2] != type ||
        (type != CAIRN_FLOAT && type != CAIRN_DOUBLE) || src[3] < 1 || src[3] > 3 || src[7] ||
        cn_get_u64(src + WL_HDR_SUM) != cn_hash(src, WL_HDR_SUM))
        return -1;
    size_t es = cairn_type_size((cairn_type)type);
    int ndims = src[3];
    uint64_t count = 1;
    h->d3[0] = h->d3[1] = h->d3[2] = 1;
    for (int k = 0; k < 3; k++) {
        uint64_t d = cn_get_u64(src + 8 + 8 * k);
        if (k >= ndims) {
            if (d != 0)
                return -1;
            continue;
        }
        if (d == 0 || d > raw_len / es / count)
            return -1;
        count *= d;
        h->d3[3 - ndims + k] = d;
    }
    uint64_t bits = cn_get_u64(src + 32);
    double bound;
    memcpy(&bound, &bits, sizeof bound);
    h->type = type;
    h->lossless = src[4];
    h->flags = src[5];
    h->levels = src[6];
    h->count = (size_t)count;
    uint64_t body_len = cn_get_u64(src + 40);
    if (count * es != raw_len || !(bound > 0) || !(bound <= DBL_MAX) || (h->flags & ~WL_F_ALL) ||
        (h->lossless != CZ_RAW && h->lossless != CZ_ZLIB && h->lossless != CZ_ZSTD) ||
        cn_get_u32(src + 48) > WL_MAX_DIV || cn_get_u32(src + 52) < 1 ||
        cn_get_u32(src + 52) > WL_MAX_BINS)
        return -1;
    if (h->flags & WL_F_VERBATIM) {
        if (h->levels != 0 || h->lossless != CZ_RAW || body_len != raw_len)
            return -1;
    } else if (h->levels < 1 || h->levels > WL_MAX_LEVELS ||
               body_len > wl_body_limit(h->count, es)) {
        return -1;
    }
    h->body_len = (size_t)body_len;
    return 0;
}

/* Undo the lossless pass: *BODY is SRC itself (CZ_RAW) or a new buffer (*OWNED). */
static int unsqueeze(const wl_hdr *h, const uint8_t *src, size_t n, const uint8_t **body,
                     uint8_t **owned)
{
    *owned = NULL;
    if (h->lossless == CZ_RAW) {
        *body = src;
        return n == h->body_len ? 0 : -1;
    }
    uint8_t *b = malloc(h->body_len ? h->body_len : 1);
    if (!b)
        return -1;
    *owned = b;
    *body = b;
    if (h->lossless == CZ_ZSTD) {
        unsigned long long declared = ZSTD_getFrameContentSize(src, n);
        if (declared != h->body_len)
            return -1;
        size_t out = ZSTD_decompress(b, h->body_len, src, n);
        return !ZSTD_isError(out) && out == h->body_len ? 0 : -1;
    }
    uLongf out = (uLongf)h->body_len;
    uLong in = (uLong)n;
    return uncompress2(b, &out, src, &in) == Z_OK && out == h->body_len && in == n ? 0 : -1;
}

/* Bytes of Q codes of BITS bits each, without overflow. */
static size_t code_bytes(uint64_t q, unsigned bits)
{
    return (size_t)(q / 8 * bits + (q % 8 * bits + 7) / 8);
}

/* Read one level's section (wavelet_quant.c) from R into H[0..NH); 0, or -1 if malformed. */
static int read_level(cn_rd *r, uint8_t type, bool encode, double *h, size_t nh)
{
    size_t es = cairn_type_size((cairn_type)type);
    if (!encode) {
        const uint8_t *v = cn_rd_take(r, nh * es);
        if (!v)
            return -1;
        for (size_t i = 0; i < nh; i++)
            h[i] = wl_get(type, v + i * es);
        return 0;
    }
    uint32_t m = cn_rd_u32(r);
    uint64_t q = cn_rd_u64(r);
    if (r->bad || m > nh || m > WL_MAX_DIV || q > nh || (m == 0 && q > 0))
        return -1;
    unsigned bits = wl_bits(m);
    size_t bmlen = (nh + 7) / 8, clen = code_bytes(q, bits);
    const uint8_t *tab = cn_rd_take(r, m * es), *bm = cn_rd_take(r, bmlen);
    const uint8_t *codes = cn_rd_take(r, clen), *ex = cn_rd_take(r, (size_t)(nh - q) * es);
    if (r->bad)
        return -1;
    uint64_t ones = 0;
    for (size_t i = 0; i < bmlen; i++)
        ones += (unsigned)__builtin_popcount(bm[i]);
    if (ones != q || (nh % 8 && bm[bmlen - 1] >> (nh % 8)))
        return -1;
    const uint8_t *cp = codes;
    uint64_t acc = 0;
    unsigned nacc = 0;
    uint32_t mask = (uint32_t)((1u << bits) - 1);
    for (size_t i = 0; i < nh; i++) {
        if (bm[i >> 3] >> (i & 7) & 1) {
            for (; nacc < bits; nacc += 8)
                acc |= (uint64_t)*cp++ << nacc;
            uint32_t code = (uint32_t)acc & mask;
            acc >>= bits;
            nacc -= bits;
            if (code >= m)
                return -1;
            h[i] = wl_get(type, tab + (size_t)code * es);
        } else {
            h[i] = wl_get(type, ex);
            ex += es;
        }
    }
    return acc == 0 && cp == codes + clen ? 0 : -1;
}

static bool rd_varint(cn_rd *r, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned s = 0; s < 64; s += 7) {
        uint8_t b = cn_rd_u8(r);
        if (r->bad || (s == 63 && b > 1))
            return false;
        x |= (uint64_t)(b & 0x7f) << s;
        if (!(b & 0x80)) {
            *v = x;
            return true;
        }
    }
    return false;
}

/* Walk the exceptions at R: check them, and if DST is given, apply them. */
static int exceptions(cn_rd *r, size_t count, size_t es, uint8_t *dst)
{
    uint64_t nx = cn_rd_u64(r);
    if (r->bad || nx > count)
        return -1;
    cn_rd gaps = *r;
    size_t next = 0;
    for (uint64_t k = 0; k < nx; k++) {
        uint64_t gap;
        if (!rd_varint(r, &gap) || gap >= count - next)
            return -1;
        next += (size_t)gap + 1;
    }
    const uint8_t *val = cn_rd_take(r, (size_t)nx * es);
    if (!val)
        return -1;
    next = 0;
    for (uint64_t k = 0; dst && k < nx; k++) {
        uint64_t gap = 0;
        rd_varint(&gaps, &gap);
        next += (size_t)gap;
        memcpy(dst + next * es, val + k * es, es);
        next++;
    }
    return 0;
}

int cz_wavelet_decode(uint8_t type, const uint8_t *src, size_t n, void *dst, size_t raw_len)
{
    wl_hdr h;
    if (!dst || parse_header(type, src, n, raw_len, &h) != 0)
        return -1;
    if (h.flags & WL_F_VERBATIM) {
        if (n - WL_HDR != raw_len)
            return -1;
        memcpy(dst, src + WL_HDR, raw_len);
        return 0;
    }
    size_t es = cairn_type_size((cairn_type)type);
    const uint8_t *body = NULL;
    uint8_t *owned = NULL;
    double *c = NULL, *tmp = NULL;
    int rc = -1;
    if (unsqueeze(&h, src + WL_HDR, n - WL_HDR, &body, &owned) != 0)
        goto out;
    c = malloc(h.count * sizeof *c);
    tmp = malloc(h.count * sizeof *tmp);
    if (!c || !tmp)
        goto out;
    wl_plan pl;
    wl_plan_init(&pl, h.d3, h.levels);
    cn_rd r = {body, h.body_len, 0, false};
    size_t nlow = pl.lv[pl.levels - 1].nlow;
    const uint8_t *low = cn_rd_take(&r, nlow * es);
    if (!low)
        goto out;
    for (size_t i = 0; i < nlow; i++)
        c[i] = wl_get(type, low + i * es);
    for (int l = pl.levels - 1; l >= 0; l--) {
        const wl_level *v = &pl.lv[l];
        if (read_level(&r, type, h.flags & WL_F_ENCODE, c + v->nlow, v->nin - v->nlow) != 0)
            goto out;
    }
    cn_rd ex = r;
    if (exceptions(&r, h.count, es, NULL) != 0 || r.off != r.len)
        goto out;
    wl_reconstruct(&pl, c, tmp, type, dst);
    exceptions(&ex, h.count, es, dst);
    rc = 0;
out:
    free(owned);
    free(c);
    free(tmp);
    return rc;
}
