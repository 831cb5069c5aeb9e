/*
 * choose.c - automatic codec choice, per variable, by sampling.
 *
 * The paper's time model: compressing S bytes costs T_z(S) and then writes
 * delta * S bytes at the storage bandwidth B (equation 2); pipelined, the
 * checkpoint takes the slower of the two (equation 3), with the compress
 * stage shared by the pool's threads. On a RAM disk, writing is CPU work on
 * the same cores as compressing (make bench measured the pipeline at
 * 1.2x its slowest stage there, and lz4 slower than raw although eq. 3 said
 * faster), so the model also charges both stages' CPU time to the threads:
 *     T = max(T_z / threads, delta * S / B, (T_z + delta * S / B) / threads)
 * which is conservative for storage that writes by DMA. For each candidate
 * codec T_z and delta are measured on samples spread over the variable and
 * extrapolated to its size; storing raw costs S / B. A codec must win by a
 * margin (5%) to be picked, so noise does not flip a variable between codecs
 * for nothing, and a codec is dropped as soon as its samples so far show it
 * cannot win (slow codecs cost little to rule out).
 *
 * Ownership: sample buffers live for one call.
 */
#include "compress/compress.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SAMPLES 6
#define SAMPLE_MAX (64u << 10)
#define MARGIN 0.95

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The model's time for a variable of SIZE bytes whose sample compressed in
 * TZ_SAMPLE seconds from SAMPLED bytes to STORED bytes. */
static double model(const cz_env *env, uint64_t size, double tz_sample, uint64_t sampled,
                    uint64_t stored)
{
    double threads = env->threads > 0 ? env->threads : 1;
    double tz = tz_sample * (double)size / (double)sampled;
    double tw = (double)stored / (double)sampled * (double)size / env->storage_bps;
    double t = tz / threads > tw ? tz / threads : tw;
    return (tz + tw) / threads > t ? (tz + tw) / threads : t;
}

#define LOSSY_SAMPLE (256u << 10)

int cz_choose_lossy(const void *p, const cz_shape *sh, const cz_env *env, double *ratio)
{
    size_t es = cairn_type_size((cairn_type)sh->type);
    uint64_t row = es, count = 1;
    for (int d = 0; d < sh->ndims; d++)
        count *= sh->dims[d];
    for (int d = 1; d < sh->ndims; d++)
        row *= sh->dims[d];
    cz_shape slab = *sh;
    uint64_t rows = row > LOSSY_SAMPLE ? 1 : LOSSY_SAMPLE / row;
    if (row > CZ_MAX_BUF / 2) { /* a flat sample */
        slab.ndims = 1;
        memset(slab.dims, 0, sizeof slab.dims);
        slab.dims[0] = (count < LOSSY_SAMPLE / es ? count : LOSSY_SAMPLE / es);
        row = es;
        rows = slab.dims[0];
    } else {
        if (rows > sh->dims[0])
            rows = sh->dims[0];
        slab.dims[0] = rows;
    }
    uint64_t len = rows * row, total = count * es;
    const uint8_t *src = (const uint8_t *)p + (total - len) / 2 / row * row;
    uint8_t *dst = malloc(cz_frame_bound((size_t)len)), *recon = malloc((size_t)len);
    int best = CZ_PREDICT;
    double best_t = 1e300, best_ratio = 1.0;
    for (int id = CZ_WAVELET; dst && recon && id <= CZ_PREDICT; id++) {
        double err, t0 = now();
        size_t n = cz_frame_encode_lossy(id, &slab, src, (size_t)len, dst, recon, &err);
        double t = model(env, total, now() - t0, len, n);
        if (n && t < best_t) {
            best_t = t;
            best = id;
            best_ratio = (double)n / (double)len;
        }
    }
    free(dst);
    free(recon);
    if (ratio)
        *ratio = best_ratio;
    return best;
}

int cz_choose(const void *p, uint64_t size, uint8_t type, const cz_env *env, double *ratio)
{
    if (ratio)
        *ratio = 1.0;
    size_t es = cairn_type_size(type) ? cairn_type_size(type) : 1;
    uint64_t len = env->buf_size < SAMPLE_MAX ? env->buf_size : SAMPLE_MAX;
    if (len > size)
        len = size;
    len = len / es * es;
    if (len == 0 || env->storage_bps <= 0)
        return CZ_RAW;
    int nsamp = size / len >= SAMPLES ? SAMPLES : (int)(size / len);
    uint8_t *frame = malloc(cz_frame_bound((size_t)len)), *scratch = malloc((size_t)len);
    if (!frame || !scratch) {
        free(frame);
        free(scratch);
        return CZ_RAW;
    }
    double best_t = (double)size / env->storage_bps * MARGIN, best_ratio = 1.0;
    int best = CZ_RAW;
    for (int id = 1; id < CZ_NCODECS; id++) {
        if (!cz_codec_accepts(id, type))
            continue;
        if (cz_is_lossy(id))
            continue;
        uint64_t stored = 0;
        int k = 0;
        double t0 = now(), t = 0;
        for (; k < nsamp; k++) {
            uint64_t off = nsamp > 1 ? (size - len) / (uint64_t)(nsamp - 1) * (uint64_t)k : 0;
            off -= off % es;
            stored += cz_frame_encode(id, type, env->level, (const uint8_t *)p + off,
                                      (size_t)len, frame, scratch);
            t = model(env, size, now() - t0, len * (uint64_t)(k + 1), stored);
            if (t >= best_t)
                break; /* cannot win */
        }
        double delta = (double)stored / (double)(len * (uint64_t)(k < nsamp ? k + 1 : nsamp));
        if (k == nsamp && t < best_t) {
            best_t = t;
            best = id;
            best_ratio = delta;
        }
    }
    free(frame);
    free(scratch);
    if (ratio)
        *ratio = best_ratio;
    return best;
}
