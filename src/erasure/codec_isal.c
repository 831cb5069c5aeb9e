/*
 * codec_isal.c - EC_KERNEL_ISAL: ISA-L's erasure-code kernels (SSE / AVX2 /
 * AVX-512, chosen by ISA-L at run time) applied to Jerasure's matrix.
 *
 * ISA-L works in GF(2^8) with the polynomial 0x11d, the same field as
 * Jerasure / GF-Complete at w = 8, so the same coefficients give the same
 * parity bytes (tests/unit/test_codec.c checks it): the kernel changes speed,
 * never the format. ec_init_tables expands each coefficient into 32 bytes of
 * nibble tables; ec_encode_data computes OUT = ROWS * SRC,
 * ec_encode_data_update adds one source's products into the outputs
 * (out[i] ^= rows[i][j] * src[j]).
 *
 * ISA-L computes at most 4-6 outputs per pass over the sources, so with more
 * outputs it rereads them: then it runs over EC_SLICE slices (kept in cache,
 * as the matrix form does); otherwise over pieces of up to 1 GiB (ISA-L takes
 * lengths as int).
 */
#include "erasure/codec_kernels.h"

#include <isa-l/erasure_code.h>
#include <stdlib.h>
#include <string.h>

#define ISAL_PIECE ((size_t)1 << 30)
#define ISAL_ONE_PASS 4 /* outputs ISA-L surely computes in one pass */
#define ISAL_MAX_SHARDS 256 /* w = 8 */

uint8_t *ec__isal_tables(const int *rows, int nout, int nsrc)
{
    size_t n = (size_t)nout * nsrc;
    uint8_t *coef = malloc(n);
    uint8_t *tbls = malloc(32 * n);
    if (!coef || !tbls) {
        free(coef);
        free(tbls);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        coef[i] = (uint8_t)rows[i];
    ec_init_tables(nsrc, nout, coef, tbls);
    free(coef);
    return tbls;
}

int ec__isal_init(ec_codec *c)
{
    size_t tb = 32 * (size_t)c->m; /* one column's tables */
    if (!(c->isal_tbls = ec__isal_tables(c->matrix, c->m, c->k)) ||
        !(c->isal_cols = malloc(tb * c->k)))
        return CAIRN_ENOMEM;
    /* isal_tbls is [row][column][32]; a column alone is [row][32]. */
    for (int p = 0; p < c->k; p++)
        for (int r = 0; r < c->m; r++)
            memcpy(c->isal_cols + tb * p + 32 * (size_t)r,
                   c->isal_tbls + 32 * ((size_t)r * c->k + p), 32);
    return 0;
}

void ec__isal_apply(const uint8_t *tbls, int nout, int nsrc, const uint8_t *const *src,
                    uint8_t *const *out, size_t len, bool accumulate)
{
    /* ISA-L's prototypes are not const-correct; it writes only the outputs. */
    unsigned char *s[ISAL_MAX_SHARDS], *o[ISAL_MAX_SHARDS];
    unsigned char *t = (unsigned char *)tbls;
    size_t piece = nout > ISAL_ONE_PASS ? EC_SLICE : ISAL_PIECE;
    for (size_t off = 0; off < len; off += piece) {
        int n = (int)(len - off < piece ? len - off : piece);
        for (int j = 0; j < nsrc; j++)
            s[j] = (unsigned char *)src[j] + off;
        for (int i = 0; i < nout; i++)
            o[i] = out[i] + off;
        if (!accumulate) {
            ec_encode_data(n, nsrc, nout, t, s, o);
            continue;
        }
        for (int j = 0; j < nsrc; j++)
            ec_encode_data_update(n, nsrc, nout, j, t, s[j], o);
    }
    ec__simd_clean(); /* ISA-L may leave the upper vector state dirty */
}
