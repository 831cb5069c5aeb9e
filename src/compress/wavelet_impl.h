/*
 * wavelet_impl.h - internals of the wavelet codec, shared by its three files
 * (internal to src/compress; the contract is in compress.h):
 *
 *   wavelet.c        the encoder: transform, quantize, check, correct, and
 *                    the final lossless pass.
 *   wavelet_xform.c  the Haar transform (average / half-difference) over
 *                    1-3 dimensions and several levels, forward and inverse;
 *                    the one reconstruction both encoder and decoder run.
 *   wavelet_quant.c  the quantizers (simple, mountain) and the per-level
 *                    section: table, bitmap, packed codes, exact values.
 *   wavelet_dec.c    the decoder: header checks, sections read back.
 *
 * Coefficients are doubles for both element types (a float converts to a
 * double exactly). Every value the decoder will see is rounded to the
 * element type by the encoder too, so both run the same reconstruction on
 * the same doubles and produce the same bytes.
 */
#ifndef CAIRN_WAVELET_IMPL_H
#define CAIRN_WAVELET_IMPL_H

#include "compress/compress.h"

#include <string.h>

/*
 * Payload: a WL_HDR-byte header (little-endian), then the body, after the
 * lossless pass the header names:
 *    0 u8  'W'             8 u64 dims[3]   (slowest first; unused 0)
 *    1 u8  version 1      32 f64 bound
 *    2 u8  type           40 u64 body_len  (bytes before the lossless pass)
 *    3 u8  ndims          48 u32 divisions (as asked: 0 = derived)
 *    4 u8  lossless       52 u32 bins
 *    5 u8  flags (WL_F_*)
 *    6 u8  levels (0 when verbatim)
 *    7 u8  0              56 u64 XXH3-64 of bytes 0..55
 * Body: the coarsest low block (elements), each level's section from the
 * coarsest (wavelet_quant.c), then the exceptions: u64 count, count gaps
 * (LEB128: index - previous index - 1, the first from -1), count elements.
 * A verbatim payload (WL_F_VERBATIM, lossless CZ_RAW) holds the input as is.
 */
#define WL_HDR 64
#define WL_HDR_SUM 56  /* the header's own checksum: a damaged header never decodes */
#define WL_MAGIC 0x57
#define WL_VERSION 1
#define WL_F_GUARANTEE 0x01
#define WL_F_ENCODE 0x02
#define WL_F_MOUNTAIN 0x04
#define WL_F_VERBATIM 0x08
#define WL_F_ALL 0x0f

#define WL_MAX_LEVELS 12
#define WL_MAX_DIV 65535u   /* divisions (and table entries) per level */
#define WL_MAX_BINS 1024    /* histogram bins of the mountain quantizer */

/* Largest body a shape of COUNT elements of ES bytes can have (low block and
 * sections <= 2 es + 1/8 per element, exceptions <= es + 10 per element), or
 * SIZE_MAX if that overflows. Decode allocates no more than this. */
static inline size_t wl_body_limit(size_t count, size_t es)
{
    size_t per = 3 * es + 11;
    if (count > (SIZE_MAX - 64 * (WL_MAX_LEVELS + 2)) / per)
        return SIZE_MAX;
    return count * per + 64 * (WL_MAX_LEVELS + 2);
}

/* ---- transform (wavelet_xform.c) ------------------------------------------ */

typedef struct wl_level {
    uint64_t in[3];      /* shape this level transforms, slowest first */
    size_t nin, nlow;    /* its elements, and of them the low ones: its high
                          * coefficients are c[nlow .. nin) after the transform */
    int active;          /* dimensions of length >= 2: every element is its low
                          * value plus or minus 2^active - 1 high coefficients */
} wl_level;

typedef struct wl_plan {
    int levels;
    size_t count;                  /* elements of the whole array */
    wl_level lv[WL_MAX_LEVELS];    /* lv[0] transforms the array, lv[l] lv[l-1]'s low block */
} wl_plan;

/* Plan LEVELS (1..WL_MAX_LEVELS) levels over DIMS (each >= 1, product fits). */
void wl_plan_init(wl_plan *p, const uint64_t dims[3], int levels);
/* Levels for cairn's guaranteed mode: halve until the low block is small. */
int wl_auto_levels(const uint64_t dims[3]);
/* C[0..count) in natural (row-major) order -> coefficients, coarsest low
 * block first, then each level's high blocks, coarsest level first. TMP
 * holds count doubles. */
void wl_forward(const wl_plan *p, double *c, double *tmp);
/* The inverse: coefficients C (destroyed) -> OUT, count elements of TYPE. */
void wl_reconstruct(const wl_plan *p, double *c, double *tmp, uint8_t type, void *out);

/* ---- quantizer and level section (wavelet_quant.c) ------------------------ */

typedef struct wl_qopt {
    uint8_t type;
    int quantizer;       /* enum cz_quantizer */
    int divisions;       /* n, or 0: derived from E */
    int bins;            /* d */
    bool encode, guarantee;
    double e;            /* largest error one coefficient may carry (guarantee) */
} wl_qopt;

/* Most bytes wl_quant_level writes for NH coefficients. */
size_t wl_section_max(uint8_t type, bool encode, size_t nh);
/*
 * Quantize the NH high coefficients H of one level in place (each becomes
 * the double the decoder will rebuild) and write the level's section to OUT
 * (wl_section_max bytes); *LEN = bytes written. SCRATCH holds NH elements.
 * Returns 0, or -1 when out of memory.
 */
int wl_quant_level(const wl_qopt *q, double *h, size_t nh, uint8_t *out, size_t *len,
                   uint8_t *scratch);

/* Bits of a code for a table of M entries: ceil(log2 M), 0 for M <= 1. */
static inline unsigned wl_bits(uint64_t m)
{
    unsigned b = 0;
    while (b < 32 && ((uint64_t)1 << b) < m)
        b++;
    return b;
}

/* ---- elements ----------------------------------------------------------- */

static inline double wl_get(uint8_t type, const uint8_t *p)
{
    if (type == CAIRN_FLOAT) {
        float f;
        memcpy(&f, p, sizeof f);
        return f;
    }
    double d;
    memcpy(&d, p, sizeof d);
    return d;
}

/* Store V as TYPE (a float conversion rounds to nearest; IEEE overflow to Inf). */
static inline void wl_put(uint8_t type, uint8_t *p, double v)
{
    if (type == CAIRN_FLOAT) {
        float f = (float)v;
        memcpy(p, &f, sizeof f);
    } else {
        memcpy(p, &v, sizeof v);
    }
}

/* V as the decoder will read it back after storing it as TYPE. */
static inline double wl_round(uint8_t type, double v)
{
    return type == CAIRN_FLOAT ? (double)(float)v : v;
}

#endif /* CAIRN_WAVELET_IMPL_H */
