/*
 * codec_float.c - codecs for typed arrays: byte shuffle (then zstd or lz4)
 * and fpzip's lossless floating-point predictor.
 *
 * Shuffle: for element size s, byte j of every element is gathered into
 * plane j (the HDF5/blosc filter), so the slowly varying high bytes of
 * numbers sit together and compress. Bytes past the last whole element are
 * copied as they are. Element size 1 (bytes, int8) is plain zstd/lz4. The
 * shuffled copy lives in the caller's SCRATCH, on the way in and out.
 *
 * fpzip (float/double only): the payload is
 *     u64 XXH3-64 of the fpzip stream | fpzip stream (its own header first)
 * holding one array at full precision, nf = 1: 1-D (nx = elements, ny = nz
 * = 1), or the frame's 2-D or 3-D shape when the pipeline knows it
 * (cz_fpzip_encode_shape: nx the fastest varying dimension), so that fpzip
 * predicts each value from its neighbours in every dimension (EGM96's geoid,
 * 721 x 1440 floats in 1 MiB frames: 1.77x against 1.57x as one row). The
 * decoder takes any nx x ny x nz that makes the frame's element count.
 * Three guards, because libfpzip was written to read trusted data:
 *   - the hash is checked before libfpzip sees a byte, so damage never
 *     reaches its decoder, which trusts its input: fed crafted streams
 *     directly, libfpzip 1.3.0 segfaults within a minute of fuzzing (in
 *     RCqsmodel::decode). A stream made to match its hash still gets in:
 *     fpzip frames are safe against damage, not against a forger;
 *   - the stream is read through fmemopen(): fpzip's memory reader has no
 *     end and would read past the payload, its FILE reader stops at EOF;
 *   - the stream's header must name exactly the frame's type and element
 *     count (nx * ny * nz, each >= 1) before fpzip_read may write into DST.
 * Encoding decodes the stream again (into SCRATCH) and compares it with the
 * input; anything not bit-exact is stored raw (returns 0). fpzip predicts
 * with floating-point arithmetic, so both directions run under the default
 * floating-point environment (round to nearest, no flush-to-zero): what an
 * application built with -ffast-math (FTZ/DAZ) writes decodes anywhere, and
 * the other way round. fpzip allocates 3-6x the buffer (its prediction
 * front spans a 1-D array's whole row), per call.
 *
 * Threads: shuffle, zstd and lz4 keep no state. libfpzip keeps none either,
 * except its global fpzip_errno, which every call writes and we never read
 * (a benign race). Threads must use different buffers.
 *
 * Ownership: the caller owns every buffer; nothing is kept past a call.
 */
#include "compress/codec_impl.h"

#include <fenv.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <fpzip.h>

/* ---- byte shuffle -------------------------------------------------------- */

static size_t elem_size(uint8_t type)
{
    size_t s = cairn_type_size((cairn_type)type);
    return s ? s : 1;
}

/*
 * Plane-major copy of CNT elements of S (<= 8) bytes, a tile of TILE
 * elements at a time: gather the tile's bytes plane by plane into a small
 * local array, then copy each plane's run out whole (and the reverse). With
 * S a constant (inlined from shuffle()) GCC and clang vectorise both loops at
 * -O2: about 1-2 GB/s for S = 4, 8 and far more for S = 2 on the test box,
 * against 0.5-0.8 GB/s for the naive double loop.
 */
#define TILE 32

static inline void shuffle_s(const uint8_t *restrict src, size_t cnt, size_t s,
                             uint8_t *restrict dst)
{
    size_t i = 0;
    for (; i + TILE <= cnt; i += TILE) {
        uint8_t t[8][TILE];
        for (size_t k = 0; k < TILE; k++)
            for (size_t j = 0; j < s; j++)
                t[j][k] = src[(i + k) * s + j];
        for (size_t j = 0; j < s; j++)
            memcpy(dst + j * cnt + i, t[j], TILE);
    }
    for (; i < cnt; i++)
        for (size_t j = 0; j < s; j++)
            dst[j * cnt + i] = src[i * s + j];
}

static inline void unshuffle_s(const uint8_t *restrict src, size_t cnt, size_t s,
                               uint8_t *restrict dst)
{
    size_t i = 0;
    for (; i + TILE <= cnt; i += TILE) {
        uint8_t t[8][TILE];
        for (size_t j = 0; j < s; j++)
            memcpy(t[j], src + j * cnt + i, TILE);
        for (size_t k = 0; k < TILE; k++)
            for (size_t j = 0; j < s; j++)
                dst[(i + k) * s + j] = t[j][k];
    }
    for (; i < cnt; i++)
        for (size_t j = 0; j < s; j++)
            dst[i * s + j] = src[j * cnt + i];
}

/* Shuffle (or with UNDO, unshuffle) N bytes of S-byte elements SRC -> DST. */
static void shuffle(const uint8_t *src, size_t n, size_t s, uint8_t *dst, bool undo)
{
    size_t cnt = n / s;
    switch (s) {
    case 2:
        undo ? unshuffle_s(src, cnt, 2, dst) : shuffle_s(src, cnt, 2, dst);
        break;
    case 4:
        undo ? unshuffle_s(src, cnt, 4, dst) : shuffle_s(src, cnt, 4, dst);
        break;
    case 8:
        undo ? unshuffle_s(src, cnt, 8, dst) : shuffle_s(src, cnt, 8, dst);
        break;
    default: /* no cairn type has other sizes; kept general */
        for (size_t i = 0; i < cnt; i++)
            for (size_t j = 0; j < s; j++) {
                if (undo)
                    dst[i * s + j] = src[j * cnt + i];
                else
                    dst[j * cnt + i] = src[i * s + j];
            }
        break;
    }
    memcpy(dst + cnt * s, src + cnt * s, n - cnt * s);
}

/* Shuffle, then the byte codec ENC; or the byte codec DEC, then unshuffle. */
typedef size_t (*byte_enc)(uint8_t, int, const uint8_t *, size_t, uint8_t *, size_t, uint8_t *);
typedef int (*byte_dec)(uint8_t, const uint8_t *, size_t, uint8_t *, size_t, uint8_t *);

static size_t shuf_encode(byte_enc enc, uint8_t type, int level, const uint8_t *src, size_t n,
                          uint8_t *dst, size_t cap, uint8_t *scratch)
{
    size_t s = elem_size(type);
    if (s == 1)
        return enc(type, level, src, n, dst, cap, scratch);
    shuffle(src, n, s, scratch, false);
    return enc(type, level, scratch, n, dst, cap, NULL);
}

static int shuf_decode(byte_dec dec, uint8_t type, const uint8_t *src, size_t n, uint8_t *dst,
                       size_t raw_len, uint8_t *scratch)
{
    size_t s = elem_size(type);
    if (s == 1)
        return dec(type, src, n, dst, raw_len, scratch);
    CN_TRY(dec(type, src, n, scratch, raw_len, NULL));
    shuffle(scratch, raw_len, s, dst, true);
    return 0;
}

size_t cz_shuf_zstd_encode(uint8_t type, int level, const uint8_t *src, size_t n, uint8_t *dst,
                           size_t cap, uint8_t *scratch)
{
    return shuf_encode(cz_zstd_encode, type, level, src, n, dst, cap, scratch);
}

int cz_shuf_zstd_decode(uint8_t type, const uint8_t *src, size_t n, uint8_t *dst,
                        size_t raw_len, uint8_t *scratch)
{
    return shuf_decode(cz_zstd_decode, type, src, n, dst, raw_len, scratch);
}

size_t cz_shuf_lz4_encode(uint8_t type, int level, const uint8_t *src, size_t n, uint8_t *dst,
                          size_t cap, uint8_t *scratch)
{
    return shuf_encode(cz_lz4_encode, type, level, src, n, dst, cap, scratch);
}

int cz_shuf_lz4_decode(uint8_t type, const uint8_t *src, size_t n, uint8_t *dst,
                       size_t raw_len, uint8_t *scratch)
{
    return shuf_decode(cz_lz4_decode, type, src, n, dst, raw_len, scratch);
}

/* ---- fpzip --------------------------------------------------------------- */

#define FPZ_SUM 8 /* our hash in front of fpzip's stream */

/* fpzip's type for TYPE and the element count of N bytes, or -1. */
static int fpz_shape(uint8_t type, size_t n, int *count)
{
    size_t s = type == CAIRN_FLOAT ? 4 : type == CAIRN_DOUBLE ? 8 : 0;
    if (!s || n == 0 || n % s || n / s > INT_MAX)
        return -1;
    *count = (int)(n / s);
    return s == 4 ? FPZIP_TYPE_FLOAT : FPZIP_TYPE_DOUBLE;
}

size_t cz_fpzip_bound(size_t raw_len)
{
    return raw_len + 1024;
}

/* Read the fpzip stream STREAM[0..LEN-1] into DST, checking that it holds
 * exactly COUNT elements of fpzip type FT. Caller has set the FP environment. */
static int fpz_read(const uint8_t *stream, size_t len, int ft, int count, uint8_t *dst)
{
    FILE *f = fmemopen((void *)stream, len, "r");
    if (!f)
        return -1;
    FPZ *z = fpzip_read_from_file(f);
    int rc = -1;
    if (z && fpzip_read_header(z) && z->type == ft && z->prec == 0 && z->nx >= 1 &&
        z->ny >= 1 && z->nz >= 1 && z->nf == 1 &&
        (uint64_t)z->nx * (uint64_t)z->ny * (uint64_t)z->nz == (uint64_t)count &&
        fpzip_read(z, dst) != 0)
        rc = 0;
    if (z)
        fpzip_read_close(z);
    fclose(f);
    return rc;
}

/* Encode with fpzip's NX (fastest) x NY x NZ = the element count of N. */
static size_t fpz_encode(uint8_t type, int nx, int ny, int nz, const uint8_t *src, size_t n,
                         uint8_t *dst, size_t cap, uint8_t *scratch)
{
    int count, ft = fpz_shape(type, n, &count);
    if (ft < 0 || nx < 1 || ny < 1 || nz < 1 ||
        (uint64_t)nx * (uint64_t)ny * (uint64_t)nz != (uint64_t)count)
        return 0;
    /* Only a payload smaller than N is worth keeping. */
    size_t room = cap < n ? cap : n;
    if (room <= FPZ_SUM)
        return 0;
    fenv_t env;
    if (fegetenv(&env) != 0 || fesetenv(FE_DFL_ENV) != 0)
        return 0;
    size_t len = 0;
    FPZ *z = fpzip_write_to_buffer(dst + FPZ_SUM, room - FPZ_SUM);
    if (z) {
        z->type = ft;
        z->prec = 0;
        z->nx = nx;
        z->ny = ny;
        z->nz = nz;
        z->nf = 1;
        if (fpzip_write_header(z))
            len = fpzip_write(z, src);
        fpzip_write_close(z);
    }
    /* Keep it only if it decodes bit-exact. */
    if (len && (fpz_read(dst + FPZ_SUM, len, ft, count, scratch) != 0 ||
                memcmp(scratch, src, n) != 0))
        len = 0;
    fesetenv(&env);
    if (!len)
        return 0;
    cn_put_u64(dst, cn_hash(dst + FPZ_SUM, len));
    return FPZ_SUM + len;
}

size_t cz_fpzip_encode(uint8_t type, int level, const uint8_t *src, size_t n, uint8_t *dst,
                       size_t cap, uint8_t *scratch)
{
    (void)level;
    int count;
    if (fpz_shape(type, n, &count) < 0)
        return 0;
    return fpz_encode(type, count, 1, 1, src, n, dst, cap, scratch);
}

size_t cz_fpzip_encode_shape(uint8_t type, int ndims, const uint64_t *dims, const uint8_t *src,
                             size_t n, uint8_t *dst, size_t cap, uint8_t *scratch)
{
    int d[3] = {1, 1, 1}; /* nx, ny, nz: fastest first */
    if (ndims < 1 || ndims > 3)
        return 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[ndims - 1 - i] < 1 || dims[ndims - 1 - i] > INT_MAX)
            return 0;
        d[i] = (int)dims[ndims - 1 - i];
    }
    return fpz_encode(type, d[0], d[1], d[2], src, n, dst, cap, scratch);
}

int cz_fpzip_decode(uint8_t type, const uint8_t *src, size_t n, uint8_t *dst, size_t raw_len,
                    uint8_t *scratch)
{
    int count, ft = fpz_shape(type, raw_len, &count);
    if (ft < 0 || n <= FPZ_SUM || cn_get_u64(src) != cn_hash(src + FPZ_SUM, n - FPZ_SUM))
        return -1;
    fenv_t env;
    if (fegetenv(&env) != 0 || fesetenv(FE_DFL_ENV) != 0)
        return -1;
    int rc = fpz_read(src + FPZ_SUM, n - FPZ_SUM, ft, count, dst);
    fesetenv(&env);
    return rc;
}
