/*
 * test_codec.c - the CRS codec (src/erasure/codec*.c), every kernel:
 *
 *   - every erasure pattern of 1..m shards (data and parity) for k = 2..8,
 *     m = 1..4, rebuilt bit-exact, at shard sizes that are and are not
 *     multiples of the bitmatrix packet and of EC_SLICE; the bitmatrix form
 *     at aligned sizes (one unit and an odd multiple) and rejecting others;
 *   - the ISA-L kernel's parity equal byte for byte to the matrix form's, and
 *     the matrix form equal to a byte-at-a-time reference (GF(2^8), GF(2^16));
 *   - the ring's column update, accumulated over all columns from any
 *     starting column, equal to ec_encode;
 *   - m + 1 erasures -> CAIRN_ECORRUPT; bad arguments -> CAIRN_EINVAL /
 *     CAIRN_ENOTSUP; w = 16 with k + m > 256 (k = 300, m = 2); m = 8;
 *   - shards not 16-byte aligned relative to each other, and threads sharing
 *     one codec.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jerasure/cauchy.h>
#include <jerasure/galois.h>

#include "erasure/erasure.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void fill_random(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rnd();
}

/* k + m shards of LEN bytes, each 64-byte aligned, at OFFSET into its block. */
typedef struct shards {
    int k, m;
    size_t len;
    uint8_t *block[EC_MAX_SHARDS];
    uint8_t *s[EC_MAX_SHARDS];
} shards;

static shards *shards_new(int k, int m, size_t len, size_t offset)
{
    shards *sh = calloc(1, sizeof *sh);
    assert_non_null(sh);
    sh->k = k;
    sh->m = m;
    sh->len = len;
    for (int i = 0; i < k + m; i++) {
        sh->block[i] = aligned_alloc(64, (len + offset + 63) / 64 * 64 + 64);
        assert_non_null(sh->block[i]);
        sh->s[i] = sh->block[i] + offset;
        fill_random(sh->s[i], len);
    }
    return sh;
}

static void shards_free(shards *sh)
{
    for (int i = 0; i < sh->k + sh->m; i++)
        free(sh->block[i]);
    free(sh);
}

static ec_codec *codec(int k, int m, int w, int kernel)
{
    ec_codec *c = NULL;
    cn_err err = {0};
    int rc = ec_codec_new(k, m, w, kernel, &c, &err);
    if (rc != 0)
        fail_msg("ec_codec_new(%d, %d, %d, %s): %d %s", k, m, w, ec_kernel_name(kernel), rc,
                 err.msg);
    return c;
}

static int encode(const ec_codec *c, shards *sh)
{
    return ec_encode(c, (const uint8_t *const *)sh->s, sh->s + sh->k, sh->len);
}

/* Every pattern of 1..m erased shards: scribble, decode, compare. */
static void check_all_patterns(const ec_codec *c, shards *sh)
{
    int n = sh->k + sh->m;
    size_t len = sh->len;
    uint8_t *orig = malloc(len * n);
    assert_non_null(orig);
    for (int i = 0; i < n; i++)
        memcpy(orig + len * i, sh->s[i], len);
    for (unsigned mask = 1; mask < (1u << n); mask++) {
        int erased[EC_MAX_SHARDS], ne = 0;
        for (int i = 0; i < n; i++)
            if (mask & (1u << i))
                erased[ne++] = i;
        if (ne > sh->m)
            continue;
        for (int t = 0; t < ne; t++)
            memset(sh->s[erased[t]], 0xa5 ^ t, len);
        cn_err err = {0};
        int rc = ec_decode(c, sh->s, erased, ne, len, &err);
        if (rc != 0)
            fail_msg("decode mask %#x: %d %s", mask, rc, err.msg);
        for (int i = 0; i < n; i++)
            if (memcmp(sh->s[i], orig + len * i, len) != 0)
                fail_msg("%s k=%d m=%d len=%zu mask %#x: shard %d differs",
                         ec_kernel_name(ec_codec_kernel(c)), sh->k, sh->m, len, mask, i);
    }
    free(orig);
}

/* Column updates from START around all k columns give ec_encode's parity. */
static void check_columns(const ec_codec *c, shards *sh, int start)
{
    int k = sh->k, m = sh->m;
    uint8_t *par[EC_MAX_SHARDS];
    for (int r = 0; r < m; r++) {
        par[r] = malloc(sh->len ? sh->len : 1);
        assert_non_null(par[r]);
        memset(par[r], 0x5a, sh->len);
    }
    for (int i = 0; i < k; i++) {
        int p = (start + i) % k;
        assert_int_equal(ec_encode_column(c, p, sh->s[p], par, sh->len, i == 0), 0);
    }
    for (int r = 0; r < m; r++) {
        if (memcmp(par[r], sh->s[k + r], sh->len) != 0)
            fail_msg("%s k=%d m=%d len=%zu start %d: column updates differ from encode (row %d)",
                     ec_kernel_name(ec_codec_kernel(c)), k, m, sh->len, start, r);
        free(par[r]);
    }
}

static void check_too_many(const ec_codec *c, shards *sh)
{
    int erased[EC_MAX_SHARDS];
    for (int i = 0; i <= sh->m; i++)
        erased[i] = i;
    cn_err err = {0};
    assert_int_equal(ec_decode(c, sh->s, erased, sh->m + 1, sh->len, &err), CAIRN_ECORRUPT);
    assert_int_equal(err.code, CAIRN_ECORRUPT);
    assert_non_null(strstr(err.msg, "lost"));
}

/* ---- every pattern, every kernel ----------------------------------- */

static void run_kernel(int kernel)
{
    for (int k = 2; k <= 8; k++) {
        for (int m = 1; m <= 4; m++) {
            ec_codec *c = codec(k, m, 8, kernel);
            size_t a = ec_codec_align(c);
            /* Matrix forms: tiny, not a multiple of 16 / of the packet, and
             * across an EC_SLICE boundary. Bitmatrix: one unit, 3 units. */
            size_t sizes[3] = {8, 4104, EC_SLICE + 4104};
            int nsizes = 3;
            if (kernel == EC_KERNEL_BITMATRIX) {
                assert_int_equal(a, 8 * 2048);
                sizes[0] = a;
                sizes[1] = 3 * a;
                nsizes = 2;
            } else {
                assert_int_equal(a, 8);
            }
            for (int z = 0; z < nsizes; z++) {
                shards *sh = shards_new(k, m, sizes[z], 0);
                assert_int_equal(encode(c, sh), 0);
                check_all_patterns(c, sh);
                check_columns(c, sh, 0);
                check_columns(c, sh, k - 1);
                check_too_many(c, sh);
                shards_free(sh);
            }
            if (kernel == EC_KERNEL_BITMATRIX) {
                /* Lengths that are not whole coding units are refused. */
                shards *sh = shards_new(k, m, a + 8, 0);
                assert_int_equal(encode(c, sh), CAIRN_EINVAL);
                assert_int_equal(ec_encode_column(c, 0, sh->s[0], sh->s + k, a / 2, true),
                                 CAIRN_EINVAL);
                int e = 0;
                cn_err err = {0};
                assert_int_equal(ec_decode(c, sh->s, &e, 1, a + 8, &err), CAIRN_EINVAL);
                shards_free(sh);
            } else {
                shards *sh = shards_new(k, m, 12, 0);
                assert_int_equal(encode(c, sh), CAIRN_EINVAL);
                shards_free(sh);
            }
            ec_codec_free(c);
        }
    }
}

static void test_isal_patterns(void **state) { run_kernel(EC_KERNEL_ISAL); }
static void test_matrix_patterns(void **state) { run_kernel(EC_KERNEL_MATRIX); }
static void test_bitmatrix_patterns(void **state) { run_kernel(EC_KERNEL_BITMATRIX); }

/* ---- same bytes ------------------------------------------------------ */

/* PARITY computed a symbol at a time with Jerasure's single multiply. */
static void reference_encode(int k, int m, int w, shards *sh, uint8_t **parity)
{
    int *X = cauchy_good_general_coding_matrix(k, m, w);
    assert_non_null(X);
    for (int r = 0; r < m; r++) {
        memset(parity[r], 0, sh->len);
        for (int p = 0; p < k; p++) {
            int coef = X[r * k + p];
            if (w == 8) {
                for (size_t i = 0; i < sh->len; i++)
                    parity[r][i] ^= (uint8_t)galois_single_multiply(sh->s[p][i], coef, 8);
            } else {
                for (size_t i = 0; i < sh->len; i += 2) {
                    int v = sh->s[p][i] | sh->s[p][i + 1] << 8;
                    int y = galois_single_multiply(v, coef, 16);
                    parity[r][i] ^= (uint8_t)y;
                    parity[r][i + 1] ^= (uint8_t)(y >> 8);
                }
            }
        }
    }
    free(X);
}

static void test_isal_equals_matrix(void **state)
{
    for (int k = 1; k <= 16; k++) {
        for (int m = 1; m <= 4; m++) {
            ec_codec *ci = codec(k, m, 8, EC_KERNEL_ISAL);
            ec_codec *cm = codec(k, m, 8, EC_KERNEL_MATRIX);
            assert_int_equal(ec_codec_form(ci), EC_FORM_MATRIX);
            assert_int_equal(ec_codec_form(cm), EC_FORM_MATRIX);
            shards *si = shards_new(k, m, EC_SLICE + 264, 0);
            shards *sm = shards_new(k, m, si->len, 0);
            for (int p = 0; p < k; p++)
                memcpy(sm->s[p], si->s[p], si->len);
            assert_int_equal(encode(ci, si), 0);
            assert_int_equal(encode(cm, sm), 0);
            for (int r = 0; r < m; r++)
                if (memcmp(si->s[k + r], sm->s[k + r], si->len) != 0)
                    fail_msg("k=%d m=%d: ISA-L parity row %d differs from the matrix form", k,
                             m, r);
            if (k <= 4) {
                uint8_t *ref[4];
                for (int r = 0; r < m; r++)
                    assert_non_null(ref[r] = malloc(si->len));
                reference_encode(k, m, 8, si, ref);
                for (int r = 0; r < m; r++) {
                    assert_memory_equal(ref[r], sm->s[k + r], si->len);
                    free(ref[r]);
                }
            }
            shards_free(si);
            shards_free(sm);
            ec_codec_free(ci);
            ec_codec_free(cm);
        }
    }
}

static void test_many_parity(void **state)
{
    /* m > 4: ISA-L and the matrix form work slice by slice; still equal. */
    int k = 10, m = 8;
    ec_codec *ci = codec(k, m, 8, EC_KERNEL_ISAL), *cm = codec(k, m, 8, EC_KERNEL_MATRIX);
    shards *si = shards_new(k, m, 2 * EC_SLICE + 520, 0), *sm = shards_new(k, m, si->len, 0);
    for (int p = 0; p < k; p++)
        memcpy(sm->s[p], si->s[p], si->len);
    assert_int_equal(encode(ci, si), 0);
    assert_int_equal(encode(cm, sm), 0);
    for (int r = 0; r < m; r++)
        assert_memory_equal(si->s[k + r], sm->s[k + r], si->len);
    check_columns(ci, si, 3);
    int erased[8] = {0, 2, 4, 6, 8, 9, 11, 17};
    for (int t = 0; t < 8; t++)
        memset(si->s[erased[t]], 0x33, si->len);
    cn_err err = {0};
    assert_int_equal(ec_decode(ci, si->s, erased, 8, si->len, &err), 0);
    for (int i = 0; i < k + m; i++)
        assert_memory_equal(si->s[i], sm->s[i], si->len);
    shards_free(si);
    shards_free(sm);
    ec_codec_free(ci);
    ec_codec_free(cm);
}

static void test_bitmatrix_is_another_code(void **state)
{
    ec_codec *cb = codec(4, 2, 8, EC_KERNEL_BITMATRIX), *cm = codec(4, 2, 8, EC_KERNEL_MATRIX);
    assert_int_equal(ec_codec_form(cb), EC_FORM_BITMATRIX);
    shards *sb = shards_new(4, 2, ec_codec_align(cb), 0);
    shards *sm = shards_new(4, 2, sb->len, 0);
    for (int p = 0; p < 4; p++)
        memcpy(sm->s[p], sb->s[p], sb->len);
    assert_int_equal(encode(cb, sb), 0);
    assert_int_equal(encode(cm, sm), 0);
    /* Row 0 of the matrix is all ones (plain XOR in both forms); row 1 is not. */
    assert_memory_equal(sb->s[4], sm->s[4], sb->len);
    assert_true(memcmp(sb->s[5], sm->s[5], sb->len) != 0);
    shards_free(sb);
    shards_free(sm);
    ec_codec_free(cb);
    ec_codec_free(cm);
}

/* ---- GF(2^16) -------------------------------------------------------- */

static void test_w16(void **state)
{
    /* k + m > 256: only w = 16 can do it; AUTO picks the matrix kernel. */
    ec_codec *c = codec(300, 2, 16, EC_KERNEL_AUTO);
    assert_int_equal(ec_codec_kernel(c), EC_KERNEL_MATRIX);
    shards *sh = shards_new(300, 2, 1032, 0);
    assert_int_equal(encode(c, sh), 0);
    uint8_t *ref[2];
    for (int r = 0; r < 2; r++)
        assert_non_null(ref[r] = malloc(sh->len));
    reference_encode(300, 2, 16, sh, ref);
    for (int r = 0; r < 2; r++) {
        assert_memory_equal(ref[r], sh->s[300 + r], sh->len);
        free(ref[r]);
    }
    static const int pats[][2] = {{0, 299}, {17, 300}, {300, 301}, {150, 301}, {5, -1}};
    uint8_t *orig = malloc(sh->len * 302);
    assert_non_null(orig);
    for (int i = 0; i < 302; i++)
        memcpy(orig + sh->len * i, sh->s[i], sh->len);
    for (size_t t = 0; t < sizeof pats / sizeof pats[0]; t++) {
        int ne = pats[t][1] < 0 ? 1 : 2;
        for (int e = 0; e < ne; e++)
            memset(sh->s[pats[t][e]], 0, sh->len);
        cn_err err = {0};
        assert_int_equal(ec_decode(c, sh->s, pats[t], ne, sh->len, &err), 0);
        for (int i = 0; i < 302; i++)
            assert_memory_equal(sh->s[i], orig + sh->len * i, sh->len);
    }
    free(orig);
    check_columns(c, sh, 123);
    check_too_many(c, sh);
    shards_free(sh);
    ec_codec_free(c);

    /* Every pattern at w = 16, matrix and bitmatrix kernels. */
    for (int kernel = EC_KERNEL_MATRIX; kernel <= EC_KERNEL_BITMATRIX; kernel++) {
        c = codec(5, 3, 16, kernel);
        sh = shards_new(5, 3, kernel == EC_KERNEL_MATRIX ? EC_SLICE + 1032 : 16 * 2048, 0);
        assert_int_equal(encode(c, sh), 0);
        check_all_patterns(c, sh);
        check_columns(c, sh, 2);
        shards_free(sh);
        ec_codec_free(c);
    }
}

/* ---- arguments ------------------------------------------------------- */

static void test_arguments(void **state)
{
    ec_codec *c = NULL;
    cn_err err = {0};
    assert_int_equal(ec_codec_new(4, 2, 16, EC_KERNEL_ISAL, &c, &err), CAIRN_ENOTSUP);
    assert_null(c);
    assert_int_equal(ec_codec_new(0, 2, 8, EC_KERNEL_AUTO, &c, &err), CAIRN_EINVAL);
    assert_int_equal(ec_codec_new(2, 0, 8, EC_KERNEL_AUTO, &c, &err), CAIRN_EINVAL);
    assert_int_equal(ec_codec_new(250, 7, 8, EC_KERNEL_AUTO, &c, &err), CAIRN_EINVAL);
    assert_int_equal(ec_codec_new(1000, 25, 16, EC_KERNEL_MATRIX, &c, &err), CAIRN_EINVAL);
    assert_int_equal(ec_codec_new(4, 2, 12, EC_KERNEL_MATRIX, &c, &err), CAIRN_EINVAL);
    assert_int_equal(ec_codec_new(4, 2, 8, 9, &c, &err), CAIRN_EINVAL);
    assert_null(c);
    ec_codec_free(NULL);

    c = codec(250, 6, 8, EC_KERNEL_AUTO);
    assert_int_equal(ec_codec_kernel(c), EC_KERNEL_ISAL);
    ec_codec_free(c);
    assert_string_equal(ec_kernel_name(EC_KERNEL_AUTO), "auto");
    assert_string_equal(ec_kernel_name(EC_KERNEL_ISAL), "isal");
    assert_string_equal(ec_kernel_name(EC_KERNEL_MATRIX), "matrix");
    assert_string_equal(ec_kernel_name(EC_KERNEL_BITMATRIX), "bitmatrix");

    c = codec(3, 2, 8, EC_KERNEL_MATRIX);
    shards *sh = shards_new(3, 2, 64, 0);
    assert_int_equal(encode(c, sh), 0);
    int dup[2] = {1, 1}, range[1] = {5}, neg[1] = {-1};
    assert_int_equal(ec_decode(c, sh->s, dup, 2, 64, &err), CAIRN_EINVAL);
    assert_int_equal(ec_decode(c, sh->s, range, 1, 64, &err), CAIRN_EINVAL);
    assert_int_equal(ec_decode(c, sh->s, neg, 1, 64, &err), CAIRN_EINVAL);
    assert_int_equal(ec_decode(c, sh->s, dup, 0, 64, &err), 0); /* nothing lost */
    assert_int_equal(ec_encode_column(c, 3, sh->s[0], sh->s + 3, 64, true), CAIRN_EINVAL);
    assert_int_equal(ec_encode_column(c, -1, sh->s[0], sh->s + 3, 64, true), CAIRN_EINVAL);
    assert_int_equal(ec_encode(c, (const uint8_t *const *)sh->s, sh->s + 3, 0), 0);
    shards_free(sh);
    ec_codec_free(c);
}

/* ---- alignment and threads ------------------------------------------- */

static void test_misaligned(void **state)
{
    /* Data shards at offset 8, parity at offset 0 (and the reverse): GF-Complete
     * needs equal alignment modulo 16, so the matrix kernel copies. */
    for (int kernel = EC_KERNEL_ISAL; kernel <= EC_KERNEL_BITMATRIX; kernel++) {
        ec_codec *c = codec(4, 3, 8, kernel);
        size_t len = kernel == EC_KERNEL_BITMATRIX ? 2 * ec_codec_align(c) : 2 * EC_SLICE + 40;
        shards *a = shards_new(4, 3, len, 0), *b = shards_new(4, 3, len, 8);
        for (int i = 0; i < 7; i++)
            if (i % 2)
                b->s[i] -= 8; /* odd shards back at offset 0 */
        for (int p = 0; p < 4; p++)
            memcpy(b->s[p], a->s[p], len);
        assert_int_equal(encode(c, a), 0);
        assert_int_equal(encode(c, b), 0);
        for (int r = 0; r < 3; r++)
            assert_memory_equal(a->s[4 + r], b->s[4 + r], len);
        check_all_patterns(c, b);
        check_columns(c, b, 1);
        shards_free(a);
        for (int i = 0; i < 7; i++)
            b->s[i] = b->block[i];
        shards_free(b);
        ec_codec_free(c);
    }
}

typedef struct job {
    const ec_codec *c;
    int k, m, fails;
    size_t len;
    unsigned seed;
} job;

static void *thread_main(void *arg)
{
    job *j = arg;
    uint8_t *s[16], *par[8];
    for (int i = 0; i < j->k + j->m; i++)
        s[i] = malloc(j->len);
    for (int r = 0; r < j->m; r++)
        par[r] = malloc(j->len);
    for (int it = 0; it < 20; it++) {
        for (int i = 0; i < j->k; i++)
            for (size_t b = 0; b < j->len; b++)
                s[i][b] = (uint8_t)(b * 31 + i * 7 + it + j->seed);
        ec_encode(j->c, (const uint8_t *const *)s, s + j->k, j->len);
        for (int p = 0; p < j->k; p++)
            ec_encode_column(j->c, p, s[p], par, j->len, p == 0);
        for (int r = 0; r < j->m; r++)
            j->fails += memcmp(par[r], s[j->k + r], j->len) != 0;
        int erased[2] = {it % j->k, j->k + it % j->m};
        memset(s[erased[0]], 0, j->len);
        memset(s[erased[1]], 0, j->len);
        ec_decode(j->c, s, erased, 2, j->len, NULL);
        for (int r = 0; r < j->m; r++)
            j->fails += memcmp(par[r], s[j->k + r], j->len) != 0;
        for (size_t b = 0; b < j->len; b++)
            j->fails += s[erased[0]][b] != (uint8_t)(b * 31 + erased[0] * 7 + it + j->seed);
    }
    for (int i = 0; i < j->k + j->m; i++)
        free(s[i]);
    for (int r = 0; r < j->m; r++)
        free(par[r]);
    return NULL;
}

static void test_threads(void **state)
{
    for (int kernel = EC_KERNEL_ISAL; kernel <= EC_KERNEL_BITMATRIX; kernel++) {
        ec_codec *c = codec(6, 3, 8, kernel);
        pthread_t t[4];
        job jobs[4];
        for (int i = 0; i < 4; i++) {
            jobs[i] = (job){c, 6, 3, 0, 2 * ec_codec_align(c) * (kernel == EC_KERNEL_BITMATRIX ? 1 : 4096),
                            (unsigned)i};
            assert_int_equal(pthread_create(&t[i], NULL, thread_main, &jobs[i]), 0);
        }
        for (int i = 0; i < 4; i++) {
            pthread_join(t[i], NULL);
            assert_int_equal(jobs[i].fails, 0);
        }
        ec_codec_free(c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_isal_patterns),
        cmocka_unit_test(test_matrix_patterns),
        cmocka_unit_test(test_bitmatrix_patterns),
        cmocka_unit_test(test_isal_equals_matrix),
        cmocka_unit_test(test_many_parity),
        cmocka_unit_test(test_bitmatrix_is_another_code),
        cmocka_unit_test(test_w16),
        cmocka_unit_test(test_arguments),
        cmocka_unit_test(test_misaligned),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
