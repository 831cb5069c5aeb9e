/*
 * codec.c - the Cauchy Reed-Solomon codec: k data shards, m parity shards,
 * over GF(2^w) (w = 8, or 16 for sets above 256 shards).
 *
 * The code is X = cauchy_good_general_coding_matrix(k, m, w) (m x k, from
 * Jerasure): PARITY[r] = sum over p of X[r][p] * DATA[p]. Everything here is
 * "apply a coefficient matrix to some shards", done by one of three kernels
 * (codec_kernels.h): encode applies X, the ring's column update applies one
 * column of X, and decode applies rows derived below from X and the erasures.
 *
 * Decode: take as sources the first k surviving shards in index order - the
 * s = k - e surviving data shards, then e surviving parity shards P (e = lost
 * data shards, set E). Those parity rows give B d_E = p_P + X[P][S] d_S
 * (minus is plus in GF(2^w)), with B = X[P][E], an e x e submatrix of a
 * Cauchy matrix and so always invertible; hence d_E = B^-1 (p_P + X[P][S] d_S).
 * A lost parity shard r is X[r] d with each lost d_j replaced by its row, so
 * every lost shard is rebuilt in one pass over the sources, and only an e x e
 * matrix is inverted (not k x k as jerasure_make_decoding_matrix does).
 *
 * Memory: ec_codec_new allocates the codec (matrix, ISA-L tables, bitmatrix
 * schedule); nothing else outlives a call. A codec is immutable after
 * creation, so any number of threads may use one at once.
 */
#include "erasure/codec_kernels.h"

#include <stdlib.h>
#include <string.h>

const char *ec_kernel_name(int kernel)
{
    switch (kernel) {
    case EC_KERNEL_AUTO:
        return "auto";
    case EC_KERNEL_ISAL:
        return "isal";
    case EC_KERNEL_MATRIX:
        return "matrix";
    case EC_KERNEL_BITMATRIX:
        return "bitmatrix";
    default:
        return "unknown";
    }
}

void ec_codec_free(ec_codec *c)
{
    if (!c)
        return;
    free(c->matrix);
    free(c->isal_tbls);
    free(c->isal_cols);
    ec__bm_sched_free(c->sched);
    free(c);
}

int ec_codec_new(int k, int m, int w, int kernel, ec_codec **out, cn_err *err)
{
    CN_FAIL_IF(!out, err, CAIRN_EINVAL, "erasure: no codec to return");
    *out = NULL;
    CN_FAIL_IF(w != 8 && w != 16, err, CAIRN_EINVAL, "erasure: w = %d: must be 8 or 16", w);
    int max = w == 8 ? 256 : EC_MAX_SHARDS;
    CN_FAIL_IF(k < 1 || m < 1 || k > max || m > max || k + m > max, err, CAIRN_EINVAL,
               "erasure: k = %d, m = %d: need k >= 1, m >= 1 and k + m <= %d at w = %d", k, m,
               max, w);
    CN_FAIL_IF(kernel < EC_KERNEL_AUTO || kernel > EC_KERNEL_BITMATRIX, err, CAIRN_EINVAL,
               "erasure: unknown kernel %d", kernel);
    if (kernel == EC_KERNEL_AUTO)
        kernel = w == 8 ? EC_KERNEL_ISAL : EC_KERNEL_MATRIX;
    CN_FAIL_IF(kernel == EC_KERNEL_ISAL && w != 8, err, CAIRN_ENOTSUP,
               "erasure: the isal kernel works in GF(2^8) only, not w = %d", w);
    CN_FAIL_IF(ec__fields_init() < 0, err, CAIRN_ENOMEM, "erasure: cannot set up GF(2^w)");

    ec_codec *c = calloc(1, sizeof *c);
    CN_FAIL_IF(!c, err, CAIRN_ENOMEM, "erasure: out of memory");
    *c = (ec_codec){.k = k, .m = m, .w = w, .kernel = kernel, .align = 8};
    int rc = 0;
    if (!(c->matrix = cauchy_good_general_coding_matrix(k, m, w)))
        rc = CAIRN_ENOMEM;
    else if (kernel == EC_KERNEL_ISAL)
        rc = ec__isal_init(c);
    else if (kernel == EC_KERNEL_BITMATRIX) {
        c->align = (size_t)w * EC_BM_PACKET;
        if (!(c->sched = ec__bm_sched_new(w, c->matrix, m, k, true)))
            rc = CAIRN_ENOMEM;
    }
    if (rc < 0) {
        ec_codec_free(c);
        return cn_fail(err, rc, "erasure: out of memory setting up a k = %d, m = %d codec", k, m);
    }
    *out = c;
    return 0;
}

int ec_codec_kernel(const ec_codec *c) { return c->kernel; }

int ec_codec_form(const ec_codec *c)
{
    return c->kernel == EC_KERNEL_BITMATRIX ? EC_FORM_BITMATRIX : EC_FORM_MATRIX;
}

size_t ec_codec_align(const ec_codec *c) { return c->align; }

/* OUT (NOUT shards) = ROWS (NOUT x NSRC) * SRC, or += when ACCUMULATE. */
static int apply(const ec_codec *c, const int *rows, const uint8_t *tbls, const ec__sched *sched,
                 int nout, int nsrc, const uint8_t *const *src, uint8_t *const *out, size_t len,
                 bool accumulate)
{
    if (len == 0)
        return 0;
    switch (c->kernel) {
    case EC_KERNEL_ISAL: {
        uint8_t *own = tbls ? NULL : ec__isal_tables(rows, nout, nsrc);
        if (!tbls && !own)
            return CAIRN_ENOMEM;
        ec__isal_apply(tbls ? tbls : own, nout, nsrc, src, out, len, accumulate);
        free(own);
        return 0;
    }
    case EC_KERNEL_BITMATRIX: {
        /* A smart schedule may read outputs: accumulating needs a plain one. */
        ec__sched *own = sched ? NULL : ec__bm_sched_new(c->w, rows, nout, nsrc, !accumulate);
        if (!sched && !own)
            return CAIRN_ENOMEM;
        ec__bm_run(sched ? sched : own, src, out, len, accumulate);
        ec__bm_sched_free(own);
        return 0;
    }
    default:
        return ec__gf_apply(c->w, rows, nout, nsrc, src, out, len, accumulate);
    }
}

int ec_encode(const ec_codec *c, const uint8_t *const *data, uint8_t *const *parity, size_t len)
{
    if (!c || !data || !parity || len % c->align)
        return CAIRN_EINVAL;
    return apply(c, c->matrix, c->isal_tbls, c->sched, c->m, c->k, data, parity, len, false);
}

int ec_encode_column(const ec_codec *c, int col, const uint8_t *data, uint8_t *const *parity,
                     size_t len, bool first)
{
    if (!c || !data || !parity || col < 0 || col >= c->k || len % c->align)
        return CAIRN_EINVAL;
    int rows[EC_MAX_SHARDS];
    for (int r = 0; r < c->m; r++)
        rows[r] = c->matrix[r * c->k + col];
    const uint8_t *tbls = c->isal_cols ? c->isal_cols + 32 * (size_t)c->m * col : NULL;
    return apply(c, rows, tbls, NULL, c->m, 1, &data, parity, len, !first);
}

/*
 * Sources and rows rebuilding the LOST shards listed in ERASED[0..NE): SRC_IDS
 * gets the k source shard ids, ROWS (NE x k) the coefficients over them.
 */
static int decode_rows(const ec_codec *c, const bool *lost, const int *erased, int ne,
                       int *src_ids, int *rows, cn_err *err)
{
    const int k = c->k, m = c->m, w = c->w, *X = c->matrix;
    int ns = 0, nd = 0;
    for (int id = 0; id < k + m && ns < k; id++)
        if (!lost[id])
            src_ids[ns++] = id;
    int *pos = malloc(sizeof(int) * (size_t)k); /* source index of data j, or -(lost index)-1 */
    int *E = malloc(sizeof(int) * (size_t)k);
    int *B = malloc(sizeof(int) * (size_t)m * m), *Bi = malloc(sizeof(int) * (size_t)m * m);
    int *A = malloc(sizeof(int) * (size_t)m * k); /* rows of the lost data shards */
    int rc = 0;
    if (!pos || !E || !B || !Bi || !A) {
        rc = cn_fail(err, CAIRN_ENOMEM, "erasure: decode: out of memory");
        goto out;
    }
    for (int j = 0; j < k; j++) {
        pos[j] = lost[j] ? -nd - 1 : j - nd;
        if (lost[j])
            E[nd++] = j;
    }
    if (nd > 0) {
        const int s = k - nd; /* parity sources are src_ids[s..k) */
        for (int a = 0; a < nd; a++)
            for (int b = 0; b < nd; b++)
                B[a * nd + b] = X[(src_ids[s + a] - k) * k + E[b]];
        if (jerasure_invert_matrix(B, Bi, nd, w) < 0) {
            rc = cn_fail(err, CAIRN_EINVAL, "erasure: decode: singular submatrix");
            goto out;
        }
        memset(A, 0, sizeof(int) * (size_t)nd * k);
        for (int b = 0; b < nd; b++)
            for (int a = 0; a < nd; a++) {
                int coef = Bi[b * nd + a];
                const int *xr = X + (src_ids[s + a] - k) * k;
                A[b * k + s + a] = coef;
                for (int j = 0; j < k; j++)
                    if (pos[j] >= 0)
                        A[b * k + pos[j]] ^= galois_single_multiply(coef, xr[j], w);
            }
    }
    for (int t = 0; t < ne; t++) {
        int *row = rows + (size_t)t * k, id = erased[t];
        if (id < k) {
            memcpy(row, A + (size_t)(-pos[id] - 1) * k, sizeof(int) * (size_t)k);
            continue;
        }
        memset(row, 0, sizeof(int) * (size_t)k);
        const int *xr = X + (id - k) * k;
        for (int j = 0; j < k; j++) {
            if (pos[j] >= 0) {
                row[pos[j]] ^= xr[j];
                continue;
            }
            const int *aj = A + (size_t)(-pos[j] - 1) * k;
            for (int q = 0; q < k; q++)
                row[q] ^= galois_single_multiply(xr[j], aj[q], w);
        }
    }
out:
    free(pos);
    free(E);
    free(B);
    free(Bi);
    free(A);
    return rc;
}

int ec_decode(const ec_codec *c, uint8_t *const *shards, const int *erased, int nerased,
              size_t len, cn_err *err)
{
    CN_FAIL_IF(!c || !shards || nerased < 0 || (nerased > 0 && !erased), err, CAIRN_EINVAL,
               "erasure: decode: bad arguments");
    CN_FAIL_IF(nerased > c->m, err, CAIRN_ECORRUPT,
               "erasure: %d of %d shards lost, more than the %d parity shards can rebuild",
               nerased, c->k + c->m, c->m);
    CN_FAIL_IF(len % c->align, err, CAIRN_EINVAL,
               "erasure: decode: shard length %zu is not a multiple of %zu", len, c->align);
    if (nerased == 0)
        return 0;
    bool lost[EC_MAX_SHARDS] = {false};
    for (int t = 0; t < nerased; t++) {
        int id = erased[t];
        CN_FAIL_IF(id < 0 || id >= c->k + c->m, err, CAIRN_EINVAL,
                   "erasure: decode: shard %d out of range (k + m = %d)", id, c->k + c->m);
        CN_FAIL_IF(lost[id], err, CAIRN_EINVAL, "erasure: decode: shard %d listed twice", id);
        lost[id] = true;
    }
    int src_ids[EC_MAX_SHARDS];
    int *rows = malloc(sizeof(int) * (size_t)nerased * c->k);
    CN_FAIL_IF(!rows, err, CAIRN_ENOMEM, "erasure: decode: out of memory");
    int rc = decode_rows(c, lost, erased, nerased, src_ids, rows, err);
    if (rc == 0) {
        const uint8_t *src[EC_MAX_SHARDS];
        uint8_t *out[EC_MAX_SHARDS];
        for (int j = 0; j < c->k; j++)
            src[j] = shards[src_ids[j]];
        for (int t = 0; t < nerased; t++)
            out[t] = shards[erased[t]];
        rc = apply(c, rows, NULL, NULL, nerased, c->k, src, out, len, false);
        if (rc < 0)
            cn_fail(err, rc, "erasure: decode: out of memory");
    }
    free(rows);
    return rc;
}

int ec_codec_k(const ec_codec *c) { return c->k; }
int ec_codec_m(const ec_codec *c) { return c->m; }
int ec_codec_w(const ec_codec *c) { return c->w; }
