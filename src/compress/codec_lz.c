/*
 * codec_lz.c - the general-purpose codecs: zlib (deflate, the papers'
 * baseline), zstd and lz4, each a thin adapter from the cz_codec contract
 * (compress.h) to the library's one-shot calls.
 *
 * Levels: zlib takes LEVEL clamped to 1..9 (6 when LEVEL <= 0); zstd takes
 * LEVEL clamped to 1..19 (1 when LEVEL <= 0); lz4 has no level (fast mode).
 * Decoding is strict: a payload must decode to exactly RAW_LEN bytes and be
 * consumed whole, or it is malformed (-1); nothing is written past DST +
 * RAW_LEN. Every call is self-contained (no shared state), so any number of
 * threads may call these on different buffers. The type and SCRATCH are
 * unused here: these codecs see bytes.
 *
 * Ownership: the caller owns every buffer; nothing is kept past a call.
 */
#include "compress/codec_impl.h"

#include <limits.h>

#include <lz4.h>
#include <zlib.h>
#include <zstd.h>

/* ---- zlib ---------------------------------------------------------------- */

size_t cz_zlib_bound(size_t raw_len)
{
    return (size_t)compressBound((uLong)raw_len);
}

size_t cz_zlib_encode(uint8_t type, int level, const uint8_t *src, size_t n, uint8_t *dst,
                      size_t cap, uint8_t *scratch)
{
    int lv = level <= 0 ? 6 : level > 9 ? 9 : level;
    uLongf out = (uLongf)cap;
    if (compress2(dst, &out, src, (uLong)n, lv) != Z_OK)
        return 0;
    return (size_t)out;
}

int cz_zlib_decode(uint8_t type, const uint8_t *src, size_t n, uint8_t *dst, size_t raw_len,
                   uint8_t *scratch)
{
    uLongf out = (uLongf)raw_len;
    uLong in = (uLong)n;
    if (uncompress2(dst, &out, src, &in) != Z_OK || out != raw_len || in != n)
        return -1;
    return 0;
}

/* ---- zstd ---------------------------------------------------------------- */

size_t cz_zstd_bound(size_t raw_len)
{
    return ZSTD_compressBound(raw_len);
}

size_t cz_zstd_encode(uint8_t type, int level, const uint8_t *src, size_t n, uint8_t *dst,
                      size_t cap, uint8_t *scratch)
{
    int lv = level <= 0 ? 1 : level > 19 ? 19 : level;
    size_t out = ZSTD_compress(dst, cap, src, n, lv);
    return ZSTD_isError(out) ? 0 : out;
}

int cz_zstd_decode(uint8_t type, const uint8_t *src, size_t n, uint8_t *dst, size_t raw_len,
                   uint8_t *scratch)
{
    unsigned long long declared = ZSTD_getFrameContentSize(src, n);
    if (declared == ZSTD_CONTENTSIZE_ERROR ||
        (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != raw_len))
        return -1;
    size_t out = ZSTD_decompress(dst, raw_len, src, n);
    if (ZSTD_isError(out) || out != raw_len)
        return -1;
    return 0;
}

/* ---- lz4 ----------------------------------------------------------------- */

size_t cz_lz4_bound(size_t raw_len)
{
    if (raw_len > LZ4_MAX_INPUT_SIZE)
        return 0;
    return (size_t)LZ4_compressBound((int)raw_len);
}

size_t cz_lz4_encode(uint8_t type, int level, const uint8_t *src, size_t n, uint8_t *dst,
                     size_t cap, uint8_t *scratch)
{
    if (n > LZ4_MAX_INPUT_SIZE)
        return 0;
    int out = LZ4_compress_default((const char *)src, (char *)dst, (int)n,
                                   cap > INT_MAX ? INT_MAX : (int)cap);
    return out > 0 ? (size_t)out : 0;
}

int cz_lz4_decode(uint8_t type, const uint8_t *src, size_t n, uint8_t *dst, size_t raw_len,
                  uint8_t *scratch)
{
    if (n > INT_MAX || raw_len > LZ4_MAX_INPUT_SIZE)
        return -1;
    int out = LZ4_decompress_safe((const char *)src, (char *)dst, (int)n, (int)raw_len);
    return out >= 0 && (size_t)out == raw_len ? 0 : -1;
}
