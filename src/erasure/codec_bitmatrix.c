/*
 * codec_bitmatrix.c - EC_KERNEL_BITMATRIX: Cauchy Reed-Solomon as Jerasure's
 * bitmatrix form, XORs only.
 *
 * Each GF(2^w) coefficient becomes a w x w bit matrix, so ROWS (nout x nsrc)
 * becomes a (nout * w) x (nsrc * w) matrix over GF(2). Each shard is cut into
 * coding units of w packets of EC_BM_PACKET bytes; output packet b of a unit
 * is the XOR of the source packets whose bits are set in bit row b. Jerasure
 * turns the bitmatrix into a schedule (jerasure_smart_bitmatrix_to_schedule
 * reuses earlier output packets to save XORs). The schedule is copied into a
 * flat array (Jerasure allocates each operation separately) and run here,
 * unit by unit, rather than by jerasure_schedule_encode, which updates global
 * byte counters and so is not safe to call from several threads.
 *
 * This is a different code from the matrix form (the bytes of a shard are not
 * GF(2^w) symbols here), hence EC_FORM_BITMATRIX. Decoding needs no separate
 * path: the bitmatrix of a product is the product of the bitmatrices, so the
 * decode rows codec.c derives in GF(2^w) are simply scheduled like X.
 *
 * Packet size: 2048 bytes keeps one unit of every shard (k + m shards of w
 * packets: 160 KiB at k = 8, m = 2, w = 8) within L2 and measured at least
 * as fast as 1024 and 4096 (bench/ec_bench).
 */
#include "erasure/codec_kernels.h"

#include <stdlib.h>
#include <string.h>

enum { OP_COPY = 0, OP_XOR = 1, OP_ZERO = 2 };

typedef struct bm_op {
    int32_t sdev, spkt; /* source: device (sources, then outputs) and packet */
    int32_t ddev, dpkt; /* destination: output device (>= nsrc) and packet */
    int32_t kind;
} bm_op;

struct ec__sched {
    int w, nsrc, nout;
    size_t nops;
    bm_op ops[];
};

ec__sched *ec__bm_sched_new(int w, const int *rows, int nout, int nsrc, bool smart)
{
    /* Jerasure's prototypes are not const-correct; it reads ROWS only. */
    int *bm = jerasure_matrix_to_bitmatrix(nsrc, nout, w, (int *)rows);
    if (!bm)
        return NULL;
    int **js = smart ? jerasure_smart_bitmatrix_to_schedule(nsrc, nout, w, bm)
                     : jerasure_dumb_bitmatrix_to_schedule(nsrc, nout, w, bm);
    free(bm);
    if (!js)
        return NULL;
    size_t n = 0;
    while (js[n][0] >= 0)
        n++;
    size_t npk = (size_t)nout * w;
    bool *written = calloc(npk, sizeof *written);
    ec__sched *s = malloc(sizeof *s + (n + npk) * sizeof(bm_op));
    if (!written || !s) {
        free(written);
        free(s);
        jerasure_free_schedule(js);
        return NULL;
    }
    *s = (ec__sched){.w = w, .nsrc = nsrc, .nout = nout};
    for (size_t i = 0; i < n; i++)
        written[(size_t)(js[i][2] - nsrc) * w + js[i][3]] = true;
    /* An all-zero bit row gets no operation from Jerasure: zero it first,
     * before any later row might be derived from it. (Cauchy rows have no
     * such rows; this only keeps the schedule total.) */
    for (size_t p = 0; p < npk; p++)
        if (!written[p])
            s->ops[s->nops++] = (bm_op){0, 0, nsrc + (int32_t)(p / w), (int32_t)(p % w), OP_ZERO};
    for (size_t i = 0; i < n; i++)
        s->ops[s->nops++] = (bm_op){js[i][0], js[i][1], js[i][2], js[i][3],
                                    js[i][4] ? OP_XOR : OP_COPY};
    free(written);
    jerasure_free_schedule(js);
    return s;
}

void ec__bm_sched_free(ec__sched *s) { free(s); }

void ec__bm_run(const ec__sched *s, const uint8_t *const *src, uint8_t *const *out, size_t len,
                bool accumulate)
{
    const size_t pk = EC_BM_PACKET, unit = (size_t)s->w * pk;
    ec__simd_clean(); /* galois_region_xor is legacy SSE */
    for (size_t off = 0; off < len; off += unit) {
        for (size_t i = 0; i < s->nops; i++) {
            const bm_op *op = &s->ops[i];
            uint8_t *d = out[op->ddev - s->nsrc] + off + (size_t)op->dpkt * pk;
            if (op->kind == OP_ZERO) {
                if (!accumulate)
                    memset(d, 0, pk);
                continue;
            }
            const uint8_t *a = op->sdev < s->nsrc ? src[op->sdev] : out[op->sdev - s->nsrc];
            a += off + (size_t)op->spkt * pk;
            if (op->kind == OP_XOR || accumulate)
                galois_region_xor((char *)a, (char *)d, (int)pk);
            else
                memcpy(d, a, pk);
        }
    }
}
