/*
 * fuzz_wavelet.c - libFuzzer target for the wavelet lossy codec
 * (cz_wavelet_decode and cz_wavelet_encode; src/compress/wavelet*.c).
 *
 * Input: one selector byte, then bytes.
 *   - bit 7 clear: decode. Bytes 1..4 are the raw length (little-endian,
 *     taken modulo FUZZ_MAX_RAW + 1), the rest is the payload. The type is
 *     float or double by bit 0, or any type ((selector >> 1) & 15) if bit 6
 *     is set. If bit 5 is set, the harness rewrites the header's checksum
 *     so that mutated headers reach the checks behind it. A payload that
 *     decodes must decode again to the same bytes.
 *   - bit 7 set: round trip. Bytes 1..6 pick the type, dimensions, options
 *     and bound; the rest is the data, read as floats or doubles (every bit
 *     pattern: NaN, Inf, denormals, huge values). Encoding must succeed;
 *     decoding must give back recon byte for byte, NaN / Inf bit-exact,
 *     max_err the true maximum and, with the guarantee, every element
 *     within the bound.
 * Buffers are allocated at their exact sizes so the sanitizers see any
 * overrun.
 */
#include "compress/wavelet_impl.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_RAW (1u << 20)

static void decode(uint8_t sel, const uint8_t *p, size_t len)
{
    if (len < 4)
        return;
    size_t raw = cn_get_u32(p) % (FUZZ_MAX_RAW + 1);
    uint8_t type = sel & 0x40 ? (sel >> 1) & 15 : sel & 1 ? CAIRN_DOUBLE : CAIRN_FLOAT;
    len -= 4;
    uint8_t *pay = malloc(len ? len : 1), *out = malloc(raw ? raw : 1);
    uint8_t *again = malloc(raw ? raw : 1);
    if (!pay || !out || !again)
        abort();
    memcpy(pay, p + 4, len);
    if (sel & 0x20 && len >= WL_HDR)
        cn_put_u64(pay + WL_HDR_SUM, cn_hash(pay, WL_HDR_SUM));
    if (cz_wavelet_decode(type, pay, len, out, raw) == 0 &&
        (cz_wavelet_decode(type, pay, len, again, raw) != 0 || memcmp(out, again, raw) != 0))
        abort();
    free(pay);
    free(out);
    free(again);
}

static double get(uint8_t type, const uint8_t *p)
{
    if (type == CAIRN_FLOAT) {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    double d;
    memcpy(&d, p, 8);
    return d;
}

static void round_trip(const uint8_t *p, size_t len)
{
    static const double bounds[] = {1e-300, 1e-12, 1e-6, 1e-3, 0.1, 1, 1e3, 1e300, DBL_MAX};
    static const int divs[] = {0, 0, 0, 1, 2, 4, 16, 128, 1000, 65535};
    static const int lossless[] = {CZ_ZSTD, CZ_ZLIB, CZ_RAW};
    if (len < 7)
        return;
    uint8_t f = p[0];
    cz_shape sh = {.type = f & 1 ? CAIRN_DOUBLE : CAIRN_FLOAT,
                   .ndims = (uint8_t)(1 + (f >> 1) % 3)};
    cz_wavelet_opts o = {f & 8 ? CZ_Q_MOUNTAIN : CZ_Q_SIMPLE, divs[p[1] % 10], 1 + p[2] % 128,
                         !(f & 16), (f & 96) != 96, lossless[(p[3] >> 4) % 3]};
    size_t es = cairn_type_size((cairn_type)sh.type), n = (len - 7) / es;
    if (n > FUZZ_MAX_RAW / es)
        n = FUZZ_MAX_RAW / es;
    if (n == 0)
        return;
    uint64_t d2 = 1 + p[4] % 16, d1 = 1 + p[5] % 16;
    if (sh.ndims == 3 && n / (d1 * d2) == 0)
        sh.ndims = 2;
    if (sh.ndims == 2 && n / d2 == 0)
        sh.ndims = 1;
    sh.dims[0] = sh.ndims == 1 ? n : sh.ndims == 2 ? n / d2 : n / (d1 * d2);
    if (sh.ndims >= 2)
        sh.dims[sh.ndims - 1] = d2;
    if (sh.ndims == 3)
        sh.dims[1] = d1;
    size_t count = 1;
    for (int k = 0; k < sh.ndims; k++)
        count *= sh.dims[k];
    const uint8_t *src = p + 7;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < count; i++) {
        double x = get(sh.type, src + i * es);
        if (isfinite(x)) {
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
    }
    sh.bound = bounds[(p[3] & 15) % 9];
    if (p[3] & 8 && hi > lo && (hi - lo) * 1e-3 > 0 && (hi - lo) * 1e-3 <= DBL_MAX)
        sh.bound = (hi - lo) * 1e-3; /* relative to the range */
    size_t raw = count * es, cap = cz_wavelet_bound(raw);
    uint8_t *in = malloc(raw), *pay = malloc(cap), *recon = malloc(raw), *out = malloc(raw);
    if (!in || !pay || !recon || !out)
        abort();
    memcpy(in, src, raw);
    double max_err = -1;
    size_t plen = cz_wavelet_encode(&sh, &o, in, pay, cap, recon, &max_err);
    if (plen == 0 || plen > cap || cz_wavelet_decode(sh.type, pay, plen, out, raw) != 0 ||
        memcmp(out, recon, raw) != 0)
        abort();
    double worst = 0;
    for (size_t i = 0; i < count; i++) {
        double x = get(sh.type, in + i * es), y = get(sh.type, out + i * es);
        if (!isfinite(x)) {
            if (memcmp(in + i * es, out + i * es, es) != 0)
                abort();
            continue;
        }
        double err = fabs(x - y);
        err = isnan(err) ? INFINITY : err;
        if (o.guarantee && !(err <= sh.bound))
            abort();
        worst = err > worst ? err : worst;
    }
    if (!(worst == max_err))
        abort();
    free(in);
    free(pay);
    free(recon);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] & 0x80)
        round_trip(data + 1, size - 1);
    else
        decode(data[0], data + 1, size - 1);
    return 0;
}
