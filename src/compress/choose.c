/*
 * choose.c - automatic codec choice, per variable, by sampling.
 *
 * The paper's time model: compressing S bytes costs T_z(S) and then writes
 * delta * S bytes at the storage bandwidth B (equation 2); pipelined, the
 * checkpoint takes the slower of the two (equation 3), with the compress
 * stage shared by the pool's threads. So for each candidate codec we measure
 * T_z and delta on a few samples spread over the variable, extrapolate to
 * its size, and pick the smallest max(T_z / threads, delta * S / B); storing
 * raw costs S / B. A codec must win by a margin (5%) to be picked, so noise
 * does not flip a variable between codecs for nothing.
 *
 * Ownership: sample buffers live for one call.
 */
#include "compress/compress.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SAMPLES 4
#define SAMPLE_MAX (64u << 10)
#define MARGIN 0.95

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
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
    double threads = env->threads > 0 ? env->threads : 1;
    double best_t = (double)size / env->storage_bps * MARGIN, best_ratio = 1.0;
    int best = CZ_RAW;
    for (int id = 1; id < CZ_NCODECS; id++) {
        if (!cz_codec_accepts(id, type))
            continue;
        uint64_t stored = 0;
        double t0 = now();
        for (int k = 0; k < nsamp; k++) {
            uint64_t off = nsamp > 1 ? (size - len) / (uint64_t)(nsamp - 1) * (uint64_t)k : 0;
            off -= off % es;
            stored += cz_frame_encode(id, type, env->level, (const uint8_t *)p + off,
                                      (size_t)len, frame, scratch);
        }
        double tz = (now() - t0) * (double)size / (double)(len * (uint64_t)nsamp);
        double delta = (double)stored / (double)(len * (uint64_t)nsamp);
        double tw = delta * (double)size / env->storage_bps;
        double t = tz / threads > tw ? tz / threads : tw;
        if (t < best_t) {
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
