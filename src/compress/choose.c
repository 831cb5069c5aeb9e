/*
 * choose.c - automatic codec choice, per variable, from a model of the work
 * a checkpoint does. No clock is read: the same data and settings always give
 * the same choice, whatever else the machine is doing (a choice timed on a
 * sample flipped with the load of the moment).
 *
 * The model's inputs:
 *   - the ratio delta of each candidate, measured on samples at fixed places
 *     (SAMPLES pieces spread evenly over the variable; a lossy variable: a
 *     slab of whole rows from its middle);
 *   - its CPU work, counted from fixed costs: compressing S bytes takes
 *     S * (A + B * delta) core-nanoseconds (a pass over the input and one
 *     over what it emits: zeros compress ten times faster than noisy
 *     floats), zlib and zstd scaled by their level; a lossy codec costs a
 *     fixed time per element. A flush (level 4) decodes a lossy variable
 *     again, at the decoder's costs of the same form (a lossless one goes to
 *     the PFS as its frames: its stored bytes are read back and written);
 *   - the job (cz_env): the level-1 bandwidth B (compress.bandwidth), the
 *     compressor threads, what a stored byte costs beyond its level-1 write
 *     (partner copy, parity, the flush's read back and PFS write: byte_s,
 *     from the levels the job uses), whether the job flushes (a lossy
 *     variable decoded), and the node-local space (max_ratio).
 * A candidate's time for S bytes, C its core-seconds (compress, and a lossy
 * one's decode when the job flushes):
 *     T = max(C / threads, delta S / B, (C + delta S / B) / threads)
 *         + delta S * byte_s + overflow
 * The first term is the paper's pipelined time (equations 2-3) with both
 * stages' CPU charged to the threads, as writing to a RAM disk is CPU work on
 * the same cores (a flush's decode is counted there too: it is CPU work of
 * the same checkpoint, and so T stays a function of C and delta alone).
 * A worker that has only a share of a core (cz_env.core: cairnd's flush, at
 * daemon.share of its host) takes C / core core-seconds of wall time for it;
 * B is measured as it is, so the write is not scaled.
 * OVERFLOW charges the stored bytes that would not fit in the node-local
 * space (delta above max_ratio) as if written at 1 KB/s, so a pick that fits
 * always wins over one that does not. T grows with delta and with
 * C, and ties go to the smaller work, then the smaller ratio: a candidate both
 * larger and slower than another is never picked. Storing raw costs S / B +
 * S * byte_s; a codec must beat it by MARGIN (5%) to be picked.
 * Candidates are sampled cheapest first; one whose T at delta = 0 (its CPU
 * work alone) cannot beat the best so far is not sampled: its cost is that
 * lower bound (cz_model.stored 0).
 *
 * The costs are single-thread CPU times (CLOCK_THREAD_CPUTIME_ID, so the load
 * of the moment hardly moves them) measured once on the test box in 1 MiB
 * frames of zeros, sparse and smooth doubles, bench_data.h's heat field
 * (after 100 and 1600 steps), EGM96 floats and noise (lossless), and of EGM96
 * and smooth 2-D and 3-D fields at bounds 1e-2..1e-5 of their range (lossy),
 * fitted and rounded; they rank the codecs and set them against B, which is
 * all the choice needs. Measured there, for instance: lz4 0.16 ns/B on zeros,
 * 1.08 on heat (stored/raw 0.71); shuffle-lz4 0.39 and 0.93 (0.64); zlib 4.7
 * and 18.5 (0.55); predict 1.5-5.7 ns/B (about 20 ns per element), wavelet
 * 3.5-28 ns/B (about 60). Noise runs faster than the fit (the codecs give up
 * early), which only overprices a codec that cannot beat raw there anyway.
 *
 * Ownership: sample buffers live for one call.
 */
#include "compress/compress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SAMPLES 6
#define SAMPLE_MAX (64u << 10)
#define LOSSY_SAMPLE (256u << 10)
#define MARGIN 0.95
#define OVERFLOW_BPS 1e3 /* what a byte that does not fit costs */

/* Compress and decode costs by codec id: core-ns per raw byte A + B * delta
 * (lossless), core-ns per element (lossy: A only). */
typedef struct cost {
    double a, b;
} cost;
static const cost COMP[CZ_NCODECS] = {
    [CZ_ZLIB] = {4, 45},          [CZ_ZSTD] = {0.3, 1.6},      [CZ_LZ4] = {0.15, 1.3},
    [CZ_SHUF_ZSTD] = {0.6, 1.1},  [CZ_SHUF_LZ4] = {0.45, 0.7}, [CZ_FPZIP] = {3.6, 20},
    [CZ_WAVELET] = {60, 0},       [CZ_PREDICT] = {20, 0},
};
static const cost DEC[CZ_NCODECS] = {
    [CZ_ZLIB] = {2.8, 2},         [CZ_ZSTD] = {0.15, 1},       [CZ_LZ4] = {0.13, 0.15},
    [CZ_SHUF_ZSTD] = {0.75, 0.15}, [CZ_SHUF_LZ4] = {0.7, 0},   [CZ_FPZIP] = {2.2, 10},
    [CZ_WAVELET] = {40, 0},       [CZ_PREDICT] = {15, 0},
};
/* zlib's speed at levels 1..9 against level 6 (its default). */
static const double ZLIB_LEVEL[10] = {1, 3.0, 2.6, 2.2, 1.5, 1.2, 1, 0.85, 0.5, 0.35};

/* Core-seconds of table T for codec ID over SIZE bytes of TYPE at RATIO. */
static double work(const cost *t, int id, uint8_t type, uint64_t size, double ratio)
{
    if (id <= CZ_RAW || id >= CZ_NCODECS)
        return 0;
    if (cz_is_lossy(id)) {
        size_t es = cairn_type_size((cairn_type)type);
        return 1e-9 * t[id].a * (double)(size / (es ? es : 1));
    }
    return 1e-9 * (t[id].a + t[id].b * ratio) * (double)size;
}

static double comp_s(const cz_env *env, int id, uint8_t type, uint64_t size, double ratio)
{
    double s = work(COMP, id, type, size, ratio);
    if (id == CZ_ZLIB)
        s /= ZLIB_LEVEL[env->level <= 0 ? 6 : env->level > 9 ? 9 : env->level];
    else if ((id == CZ_ZSTD || id == CZ_SHUF_ZSTD) && env->level > 1)
        s /= pow(0.75, (env->level > 19 ? 19 : env->level) - 1);
    return s;
}

static double dec_s(const cz_env *env, int id, uint8_t type, uint64_t size, double ratio)
{
    return env->flush && cz_is_lossy(id) ? work(DEC, id, type, size, ratio) : 0;
}

double cz_model_cpu(const cz_env *env, int id, uint8_t type, uint64_t size, double ratio)
{
    return comp_s(env, id, type, size, ratio) + dec_s(env, id, type, size, ratio);
}

double cz_env_cores(const cz_env *env)
{
    return (env->threads > 0 ? env->threads : 1) * (env->core > 0 ? env->core : 1);
}

double cz_model_cost(const cz_env *env, int id, uint8_t type, uint64_t size, double ratio)
{
    double threads = env->threads > 0 ? env->threads : 1, s = (double)size;
    double stored = ratio * s, tw = stored / env->storage_bps;
    /* the CPU at the share of a core the threads have; the write at B, which
     * was measured as it is (on a RAM disk, CPU work at that share already) */
    double tz = cz_model_cpu(env, id, type, size, ratio) / (env->core > 0 ? env->core : 1);
    double t = tz / threads > tw ? tz / threads : tw;
    t = (tz + tw) / threads > t ? (tz + tw) / threads : t;
    double over = env->max_ratio > 0 && ratio > env->max_ratio ? (ratio - env->max_ratio) * s : 0;
    return t + stored * env->byte_s + over / OVERFLOW_BPS;
}

int cz_pick(const cz_model *m)
{
    int best = -1;
    for (int id = CZ_RAW + 1; id < CZ_NCODECS; id++) {
        if (!(m->cost[id] < INFINITY))
            continue;
        if (best < 0 || m->cost[id] < m->cost[best] ||
            (m->cost[id] == m->cost[best] &&
             (m->cpu[id] < m->cpu[best] ||
              (m->cpu[id] == m->cpu[best] && m->stored[id] < m->stored[best]))))
            best = id;
    }
    if (m->cost[CZ_RAW] < INFINITY && (best < 0 || !(m->cost[best] < MARGIN * m->cost[CZ_RAW])))
        return CZ_RAW;
    return best < 0 ? CZ_RAW : best;
}

/* Candidate ids of CANDS[0..N-1] ordered by their least CPU work (on zeros). */
static void by_speed(const cz_env *env, uint8_t type, int *cands, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && cz_model_cpu(env, cands[j], type, 1u << 20, 0) <
                                     cz_model_cpu(env, cands[j - 1], type, 1u << 20, 0); j--) {
            int t = cands[j];
            cands[j] = cands[j - 1];
            cands[j - 1] = t;
        }
}

static void model_init(cz_model *m)
{
    for (int id = 0; id < CZ_NCODECS; id++) {
        m->cost[id] = INFINITY;
        m->cpu[id] = 0;
        m->stored[id] = 0;
    }
}

/* The cost of candidate ID with STORED of SAMPLED bytes, into M; the best so far in *BEST_T. */
static void enter(cz_model *m, const cz_env *env, int id, uint8_t type, uint64_t size,
                  uint64_t stored, uint64_t sampled, double *best_t)
{
    double ratio = (double)stored / (double)sampled;
    m->cpu[id] = cz_model_cpu(env, id, type, size, ratio);
    m->stored[id] = ratio * (double)size;
    m->cost[id] = cz_model_cost(env, id, type, size, ratio);
    if (m->cost[id] < *best_t)
        *best_t = m->cost[id];
}

/* A candidate not worth sampling: its lower bound (delta = 0). */
static bool ruled_out(cz_model *m, const cz_env *env, int id, uint8_t type, uint64_t size,
                      double best_t)
{
    double lb = cz_model_cost(env, id, type, size, 0);
    if (lb < best_t)
        return false;
    m->cost[id] = lb;
    m->cpu[id] = cz_model_cpu(env, id, type, size, 0);
    return true;
}

/* Bytes of one row of SH's slowest dimension. */
static uint64_t row_bytes(const cz_shape *sh)
{
    uint64_t row = cairn_type_size((cairn_type)sh->type);
    for (int d = 1; d < sh->ndims; d++)
        row *= sh->dims[d];
    return row;
}

void cz_model_lossless(const void *p, uint64_t size, uint8_t type, const cz_shape *sh,
                       const cz_env *env, cz_model *m)
{
    model_init(m);
    m->cost[CZ_RAW] = cz_model_cost(env, CZ_RAW, type, size, 1.0);
    m->stored[CZ_RAW] = (double)size;
    size_t es = cairn_type_size(type) ? cairn_type_size(type) : 1;
    uint64_t len = env->buf_size < SAMPLE_MAX ? env->buf_size : SAMPLE_MAX;
    if (len > size)
        len = size;
    len = len / es * es;
    if (len == 0 || env->storage_bps <= 0)
        return;
    int nsamp = size / len >= SAMPLES ? SAMPLES : (int)(size / len);
    uint8_t *frame = malloc(cz_frame_bound((size_t)len)), *scratch = malloc((size_t)len);
    int cands[CZ_NCODECS], n = 0;
    for (int id = CZ_RAW + 1; id < CZ_NCODECS; id++)
        if (cz_codec_accepts(id, type) && !cz_is_lossy(id))
            cands[n++] = id;
    by_speed(env, type, cands, n);
    double best_t = m->cost[CZ_RAW];
    /* fpzip sees whole rows of a 2-D or 3-D array, as the pipeline gives it */
    bool rows = sh && sh->ndims >= 2 && row_bytes(sh) <= len;
    uint64_t row = rows ? row_bytes(sh) : es, rlen = len / row * row;
    for (int i = 0; frame && scratch && i < n; i++) {
        int id = cands[i];
        if (ruled_out(m, env, id, type, size, best_t))
            continue;
        bool shaped = id == CZ_FPZIP && rows;
        uint64_t take = shaped ? rlen : len, stored = 0;
        for (int k = 0; k < nsamp; k++) {
            uint64_t off = nsamp > 1 ? (size - take) / (uint64_t)(nsamp - 1) * (uint64_t)k : 0;
            off -= off % (shaped ? row : es);
            const uint8_t *src = (const uint8_t *)p + off;
            if (shaped) {
                cz_shape slab = *sh;
                slab.dims[0] = take / row;
                stored += cz_frame_encode_shaped(id, &slab, env->level, src, (size_t)take,
                                                 frame, scratch);
            } else {
                stored += cz_frame_encode(id, type, env->level, src, (size_t)take, frame,
                                          scratch);
            }
        }
        enter(m, env, id, type, size, stored, take * (uint64_t)nsamp, &best_t);
    }
    free(frame);
    free(scratch);
}

void cz_model_lossy(const void *p, const cz_shape *sh, const cz_env *env, cz_model *m)
{
    model_init(m);
    size_t es = cairn_type_size((cairn_type)sh->type);
    uint64_t row = row_bytes(sh), count = 1;
    for (int d = 0; d < sh->ndims; d++)
        count *= sh->dims[d];
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
    if (len == 0 || env->storage_bps <= 0)
        return;
    const uint8_t *src = (const uint8_t *)p + (total - len) / 2 / row * row;
    uint8_t *dst = malloc(cz_frame_bound((size_t)len)), *recon = malloc((size_t)len);
    int cands[2] = {CZ_WAVELET, CZ_PREDICT};
    by_speed(env, sh->type, cands, 2);
    double best_t = INFINITY;
    for (int i = 0; dst && recon && i < 2; i++) {
        if (ruled_out(m, env, cands[i], sh->type, total, best_t))
            continue;
        double err;
        size_t n = cz_frame_encode_lossy(cands[i], &slab, src, (size_t)len, dst, recon, &err);
        if (n)
            enter(m, env, cands[i], sh->type, total, n, len, &best_t);
    }
    free(dst);
    free(recon);
}

int cz_choose(const void *p, uint64_t size, uint8_t type, const cz_shape *sh, const cz_env *env,
              double *ratio)
{
    cz_model m;
    cz_model_lossless(p, size, type, sh, env, &m);
    int id = cz_pick(&m);
    if (ratio)
        *ratio = size && m.stored[id] > 0 ? m.stored[id] / (double)size : 1.0;
    return id;
}

int cz_choose_lossy(const void *p, const cz_shape *sh, const cz_env *env, double *ratio)
{
    cz_model m;
    cz_model_lossy(p, sh, env, &m);
    int id = cz_pick(&m);
    if (id == CZ_RAW) /* neither sampled (no memory): the faster one */
        id = CZ_PREDICT;
    uint64_t total = cairn_type_size((cairn_type)sh->type);
    for (int d = 0; d < sh->ndims; d++)
        total *= sh->dims[d];
    if (ratio)
        *ratio = total && m.stored[id] > 0 ? m.stored[id] / (double)total : 1.0;
    return id;
}
