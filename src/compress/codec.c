/*
 * codec.c - the codec registry (ids, names, which types each takes) and the
 * frame: a 24-byte header + payload, the unit the pipelines compress and
 * decompress (layout in compress.h).
 *
 * A frame is never trusted: cz_frame_parse checks every header field (zero
 * fields zero, lengths in range and consistent, codec the entry's own or
 * RAW, raw length a whole number of elements, payload inside the buffer)
 * before anything reads the payload, and cz_frame_decode checks that the
 * codec produced exactly raw_len bytes and that their XXH3-64 is raw_sum.
 * Encoding falls back to a RAW frame (a plain copy) whenever the codec fails
 * or would not shrink the buffer, so a frame is never larger than
 * CZ_FRAME_HDR + raw_len.
 *
 * Ownership: the caller owns every buffer; the table is static and const,
 * so everything here may be called from any thread.
 */
#include "compress/codec_impl.h"

#include <string.h>

/* Lossy decoders need no scratch: their payloads describe themselves. */
static int wavelet_decode(uint8_t type, const uint8_t *src, size_t n, uint8_t *dst,
                          size_t raw_len, uint8_t *scratch)
{
    (void)scratch;
    return cz_wavelet_decode(type, src, n, dst, raw_len);
}

static int predict_decode(uint8_t type, const uint8_t *src, size_t n, uint8_t *dst,
                          size_t raw_len, uint8_t *scratch)
{
    (void)scratch;
    return cz_predict_decode(type, src, n, dst, raw_len);
}

static const cz_codec codecs[CZ_NCODECS - 1] = {
    {CZ_ZLIB, "zlib", false, false, cz_zlib_bound, cz_zlib_encode, cz_zlib_decode},
    {CZ_ZSTD, "zstd", false, false, cz_zstd_bound, cz_zstd_encode, cz_zstd_decode},
    {CZ_LZ4, "lz4", false, false, cz_lz4_bound, cz_lz4_encode, cz_lz4_decode},
    {CZ_SHUF_ZSTD, "shuffle-zstd", false, false, cz_zstd_bound, cz_shuf_zstd_encode,
     cz_shuf_zstd_decode},
    {CZ_SHUF_LZ4, "shuffle-lz4", false, false, cz_lz4_bound, cz_shuf_lz4_encode,
     cz_shuf_lz4_decode},
    {CZ_FPZIP, "fpzip", true, false, cz_fpzip_bound, cz_fpzip_encode, cz_fpzip_decode},
    {CZ_WAVELET, "wavelet", true, true, cz_wavelet_bound, NULL, wavelet_decode},
    {CZ_PREDICT, "predict", true, true, cz_predict_bound, NULL, predict_decode},
};

/* ---- registry ------------------------------------------------------------ */

const cz_codec *cz_codec_get(int id)
{
    if (id <= CZ_RAW || id >= CZ_NCODECS)
        return NULL;
    return &codecs[id - 1];
}

int cz_codec_parse(const char *name)
{
    if (!name)
        return -1;
    if (strcmp(name, "none") == 0)
        return CZ_RAW;
    if (strcmp(name, "auto") == 0)
        return CZ_AUTO;
    for (int i = 0; i < CZ_NCODECS - 1; i++)
        if (strcmp(name, codecs[i].name) == 0)
            return codecs[i].id;
    return -1;
}

const char *cz_codec_name(int id)
{
    if (id == CZ_RAW)
        return "none";
    if (id == CZ_AUTO)
        return "auto";
    const cz_codec *c = cz_codec_get(id);
    return c ? c->name : "?";
}

/* Any real type for RAW and for AUTO (which resolves to a codec that takes
 * the type, or RAW); float/double only for floats_only codecs. */
bool cz_codec_accepts(int id, uint8_t type)
{
    if (cairn_type_size((cairn_type)type) == 0)
        return false;
    if (id == CZ_RAW || id == CZ_AUTO)
        return true;
    const cz_codec *c = cz_codec_get(id);
    if (!c)
        return false;
    return !c->floats_only || type == CAIRN_FLOAT || type == CAIRN_DOUBLE;
}

const char *cz_codec_list(void)
{
    return "none, zlib, zstd, lz4, shuffle-zstd, shuffle-lz4, fpzip, wavelet, predict, auto";
}

/* ---- frames -------------------------------------------------------------- */

size_t cz_frame_bound(size_t n)
{
    size_t most = n;
    for (int i = 0; i < CZ_NCODECS - 1; i++) {
        size_t b = codecs[i].bound(n);
        if (b > most)
            most = b;
    }
    return CZ_FRAME_HDR + most;
}

static void put_header(uint8_t *p, uint8_t codec, uint8_t type, uint32_t raw_len,
                       uint32_t stored_len, uint64_t raw_sum)
{
    p[0] = codec;
    p[1] = type;
    cn_put_u16(p + 2, 0);
    cn_put_u32(p + 4, raw_len);
    cn_put_u32(p + 8, stored_len);
    cn_put_u32(p + 12, 0);
    cn_put_u64(p + 16, raw_sum);
}

void cz_frame_raw_header(uint8_t *dst, uint8_t type, uint32_t n, uint64_t sum)
{
    put_header(dst, CZ_RAW, type, n, n, sum);
}

/* The frame of SRC[0..N-1] (checksum SUM) whose payload codec C wrote as
 * STORED bytes at DST + CZ_FRAME_HDR; a raw frame when that did not shrink it. */
static size_t finish(const cz_codec *c, uint8_t type, const uint8_t *src, size_t n,
                     uint8_t *dst, size_t stored, uint64_t sum)
{
    if (!c || stored == 0 || stored >= n) {
        memcpy(dst + CZ_FRAME_HDR, src, n);
        put_header(dst, CZ_RAW, type, (uint32_t)n, (uint32_t)n, sum);
        return CZ_FRAME_HDR + n;
    }
    put_header(dst, c->id, type, (uint32_t)n, (uint32_t)stored, sum);
    return CZ_FRAME_HDR + stored;
}

/* Returns 0 (no frame) when N is 0, above CZ_MAX_BUF or not a whole number
 * of elements of TYPE: such buffers cannot be framed. */
size_t cz_frame_encode(int id, uint8_t type, int level, const uint8_t *src, size_t n,
                       uint8_t *dst, uint8_t *scratch)
{
    size_t es = cairn_type_size((cairn_type)type);
    if (n == 0 || n > CZ_MAX_BUF || es == 0 || n % es)
        return 0;
    uint64_t sum = cn_hash(src, n);
    const cz_codec *c = cz_codec_accepts(id, type) ? cz_codec_get(id) : NULL;
    size_t stored = 0;
    if (c && c->encode)
        stored = c->encode(type, level, src, n, dst + CZ_FRAME_HDR, c->bound(n), scratch);
    return finish(c, type, src, n, dst, stored, sum);
}

size_t cz_frame_encode_shaped(int id, const cz_shape *sh, int level, const uint8_t *src,
                              size_t n, uint8_t *dst, uint8_t *scratch)
{
    if (id != CZ_FPZIP || sh->ndims < 2 || !cz_codec_accepts(id, sh->type))
        return cz_frame_encode(id, sh->type, level, src, n, dst, scratch);
    size_t es = cairn_type_size((cairn_type)sh->type);
    if (n == 0 || n > CZ_MAX_BUF || es == 0 || n % es)
        return 0;
    const cz_codec *c = cz_codec_get(id);
    size_t stored = cz_fpzip_encode_shape(sh->type, sh->ndims, sh->dims, src, n,
                                          dst + CZ_FRAME_HDR, c->bound(n), scratch);
    return finish(c, sh->type, src, n, dst, stored, cn_hash(src, n));
}

/* Do the N bytes at A and the N bytes at B overlap? */
static bool overlap(const uint8_t *a, const uint8_t *b, size_t n)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return x < y + n && y < x + n;
}

size_t cz_frame_encode_lossy(int id, const cz_shape *sh, const uint8_t *src, size_t n,
                             uint8_t *dst, uint8_t *recon, double *max_err)
{
    size_t es = cairn_type_size((cairn_type)sh->type);
    *max_err = 0;
    if (n == 0 || n > CZ_MAX_BUF || es == 0 || n % es)
        return 0;
    size_t stored = 0, cap = cz_frame_bound(n) - CZ_FRAME_HDR;
    /* a RECON over SRC would hide the error from the codec's own check:
     * then the frame is raw (exact) */
    if (overlap(src, recon, n))
        stored = 0;
    else if (id == CZ_WAVELET)
        stored = cz_wavelet_encode(sh, &cz_wavelet_defaults, src, dst + CZ_FRAME_HDR, cap,
                                   recon, max_err);
    else if (id == CZ_PREDICT)
        stored = cz_predict_encode(sh, src, dst + CZ_FRAME_HDR, cap, recon, max_err);
    if (stored == 0 || stored >= n || !(*max_err <= sh->bound)) {
        *max_err = 0;
        memcpy(dst + CZ_FRAME_HDR, src, n);
        put_header(dst, CZ_RAW, sh->type, (uint32_t)n, (uint32_t)n, cn_hash(src, n));
        return CZ_FRAME_HDR + n;
    }
    put_header(dst, (uint8_t)id, sh->type, (uint32_t)n, (uint32_t)stored, cn_hash(recon, n));
    return CZ_FRAME_HDR + stored;
}

int cz_frame_parse(const uint8_t *p, size_t len, int want_codec, cz_frame *f, size_t *used,
                   cn_err *err)
{
    CN_FAIL_IF(len < CZ_FRAME_HDR, err, CAIRN_ECORRUPT, "frame header truncated (%zu bytes)",
               len);
    cz_frame fr = {
        .codec = p[0],
        .type = p[1],
        .raw_len = cn_get_u32(p + 4),
        .stored_len = cn_get_u32(p + 8),
        .raw_sum = cn_get_u64(p + 16),
        .payload = p + CZ_FRAME_HDR,
    };
    CN_FAIL_IF(cn_get_u16(p + 2) != 0 || cn_get_u32(p + 12) != 0, err, CAIRN_ECORRUPT,
               "frame header has nonzero reserved fields");
    size_t es = cairn_type_size((cairn_type)fr.type);
    CN_FAIL_IF(es == 0, err, CAIRN_ECORRUPT, "frame has unknown element type %u", fr.type);
    CN_FAIL_IF(fr.codec != CZ_RAW && (fr.codec != want_codec || !cz_codec_get(fr.codec)), err,
               CAIRN_ECORRUPT, "frame codec %u (%s) where %s was expected", fr.codec,
               cz_codec_name(fr.codec), cz_codec_name(want_codec));
    CN_FAIL_IF(!cz_codec_accepts(fr.codec, fr.type), err, CAIRN_ECORRUPT,
               "frame codec %s does not take element type %s", cz_codec_name(fr.codec),
               cn_type_name(fr.type));
    CN_FAIL_IF(fr.raw_len == 0 || fr.raw_len > CZ_MAX_BUF || fr.raw_len % es, err,
               CAIRN_ECORRUPT, "frame raw length %u is not 1..%u bytes of %zu-byte elements",
               fr.raw_len, CZ_MAX_BUF, es);
    if (fr.codec == CZ_RAW)
        CN_FAIL_IF(fr.stored_len != fr.raw_len, err, CAIRN_ECORRUPT,
                   "raw frame stores %u bytes of %u", fr.stored_len, fr.raw_len);
    else
        CN_FAIL_IF(fr.stored_len == 0 || fr.stored_len >= fr.raw_len, err, CAIRN_ECORRUPT,
                   "compressed frame stores %u bytes for %u raw", fr.stored_len, fr.raw_len);
    CN_FAIL_IF(fr.stored_len > len - CZ_FRAME_HDR, err, CAIRN_ECORRUPT,
               "frame payload of %u bytes runs past the %zu bytes available", fr.stored_len,
               len - CZ_FRAME_HDR);
    *f = fr;
    *used = CZ_FRAME_HDR + (size_t)fr.stored_len;
    return 0;
}

int cz_frame_decode(const cz_frame *f, uint8_t *dst, uint8_t *scratch, cn_err *err)
{
    CN_FAIL_IF(f->raw_len == 0 || f->raw_len > CZ_MAX_BUF || f->stored_len > f->raw_len, err,
               CAIRN_ECORRUPT, "frame lengths out of range (%u stored, %u raw)", f->stored_len,
               f->raw_len);
    if (f->codec == CZ_RAW) {
        CN_FAIL_IF(f->stored_len != f->raw_len, err, CAIRN_ECORRUPT,
                   "raw frame stores %u bytes of %u", f->stored_len, f->raw_len);
        memcpy(dst, f->payload, f->raw_len);
    } else {
        const cz_codec *c = cz_codec_get(f->codec);
        CN_FAIL_IF(!c, err, CAIRN_ECORRUPT, "frame has unknown codec %u", f->codec);
        CN_FAIL_IF(c->decode(f->type, f->payload, f->stored_len, dst, f->raw_len, scratch) != 0,
                   err, CAIRN_ECORRUPT,
                   "%s frame payload (%u bytes) is malformed or does not decode to the %u "
                   "bytes its header says",
                   c->name, f->stored_len, f->raw_len);
    }
    CN_FAIL_IF(cn_hash(dst, f->raw_len) != f->raw_sum, err, CAIRN_ECORRUPT,
               "frame decodes to data that fails its checksum (%s, %u bytes)",
               cz_codec_name(f->codec), f->raw_len);
    return 0;
}
