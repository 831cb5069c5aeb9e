/*
 * test_pindex.c - the index of a generation on the PFS (pindex.c): round
 * trip, every flipped bit and truncation refused, and fields that are
 * individually plausible but inconsistent refused with a valid checksum;
 * version 1 (cairn 0.2.0, without label and seconds) read and re-encoded as it
 * was.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "levels/pfs/pfs.h"

static cn_pfile files3[] = {{1000, 0x1111}, {2000, 0x2222}, {500, 0x3333}};

/* 8 ranks in groups of 3: 3 files. */
static cn_pindex sample(void)
{
    cn_pindex x = {.version = CN_PINDEX_VERSION, .scheme = 2, .generation = 42, .nranks = 8,
                   .nnodes = 4, .group = 3, .nfiles = 3, .raw = 123456, .stored = 3500,
                   .seconds = 12.5, .parent = -1, .base = 42, .source = 0x5eed, .files = files3};
    strcpy(x.job, "job-7");
    strcpy(x.label, "converged");
    return x;
}

static uint8_t *encode(const cn_pindex *x, size_t *len)
{
    uint8_t *buf = NULL;
    assert_int_equal(cn_pindex_encode(x, &buf, len, NULL), 0);
    assert_int_equal(*len, cn_pindex_size(x->nfiles));
    return buf;
}

static void test_round_trip(void **state)
{
    (void)state;
    cn_pindex x = sample(), y;
    size_t len;
    uint8_t *buf = encode(&x, &len);
    cn_err err = {0};
    assert_int_equal(cn_pindex_decode(buf, len, &y, &err), 0);
    assert_int_equal(y.generation, 42);
    assert_string_equal(y.job, "job-7");
    assert_int_equal(y.nranks, 8);
    assert_int_equal(y.nnodes, 4);
    assert_int_equal(y.group, 3);
    assert_int_equal(y.nfiles, 3);
    assert_int_equal(y.scheme, 2);
    assert_int_equal(y.raw, 123456);
    assert_int_equal(y.stored, 3500);
    assert_memory_equal(y.files, files3, sizeof files3);
    assert_string_equal(y.label, "converged");
    assert_true(y.seconds == 12.5);
    assert_int_equal(y.parent, -1);
    assert_int_equal(y.base, 42);
    assert_int_equal(y.source, 0x5eed);
    cn_pindex_free(&y);
    free(buf);

    /* Version 3: an increment names its parent and base, base <= parent < generation. */
    x.parent = 40, x.base = 37;
    buf = encode(&x, &len);
    assert_int_equal(cn_pindex_decode(buf, len, &y, &err), 0);
    assert_int_equal(y.parent, 40);
    assert_int_equal(y.base, 37);
    cn_pindex_free(&y);
    free(buf);
    long bad[][2] = {{42, 37}, {40, 41}, {-2, 42}, {-1, 41}, {40, -1}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        x.parent = bad[i][0], x.base = bad[i][1];
        assert_int_equal(cn_pindex_encode(&x, &buf, &len, &err), CAIRN_EINVAL);
    }
    x.parent = -1, x.base = 42;

    /* Version 1: no label or seconds; read, and written back byte for byte. */
    x.version = CN_PINDEX_VERSION_OLD;
    uint8_t *old = NULL, *again = NULL;
    size_t olen = 0, alen = 0;
    assert_int_equal(cn_pindex_encode(&x, &old, &olen, &err), 0);
    assert_int_equal(olen, len - 72 - 24);
    assert_int_equal(cn_pindex_decode(old, olen, &y, &err), 0);
    assert_int_equal(y.version, CN_PINDEX_VERSION_OLD);
    assert_string_equal(y.label, "");
    assert_true(y.seconds == 0);
    assert_int_equal(y.parent, -1); /* older versions: every generation full */
    assert_int_equal(y.base, 42);
    assert_int_equal(cn_pindex_encode(&y, &again, &alen, &err), 0);
    assert_int_equal(alen, olen);
    assert_memory_equal(again, old, olen);
    cn_pindex_free(&y);
    free(old), free(again);
    x.version = CN_PINDEX_VERSION + 1;
    assert_int_equal(cn_pindex_encode(&x, &old, &olen, &err), CAIRN_EINVAL);
    x.version = 2, x.parent = 40, x.base = 37; /* no chain before version 3 */
    assert_int_equal(cn_pindex_encode(&x, &old, &olen, &err), CAIRN_EINVAL);
    x = sample(), x.label[1] = '\t';
    assert_int_equal(cn_pindex_encode(&x, &old, &olen, &err), CAIRN_EINVAL);
    assert_int_equal(cn_pindex_nfiles(8, 3), 3);
    assert_int_equal(cn_pindex_nfiles(9, 3), 3);
    assert_int_equal(cn_pindex_nfiles(1, 32), 1);
}

static void test_every_flip_and_truncation_fails(void **state)
{
    (void)state;
    cn_pindex x = sample(), y;
    size_t len;
    uint8_t *buf = encode(&x, &len);
    for (size_t off = 0; off < len; off++)
        for (int bit = 0; bit < 8; bit++) {
            buf[off] ^= (uint8_t)(1u << bit);
            int rc = cn_pindex_decode(buf, len, &y, NULL);
            buf[off] ^= (uint8_t)(1u << bit);
            if (rc != CAIRN_ECORRUPT && rc != CAIRN_EFORMAT)
                fail_msg("bit %d of byte %zu flipped: rc %d", bit, off, rc);
            assert_null(y.files);
        }
    for (size_t n = 0; n < len; n++)
        assert_int_equal(cn_pindex_decode(buf, n, &y, NULL), CAIRN_ECORRUPT);
    free(buf);
}

/* X re-encoded (valid checksum) must be refused with a message containing WHY. */
static void refused(const cn_pindex *x, const char *why)
{
    size_t len;
    uint8_t *buf = encode(x, &len);
    cn_pindex y;
    cn_err err = {0};
    int rc = cn_pindex_decode(buf, len, &y, &err);
    if (rc != CAIRN_ECORRUPT || !strstr(err.msg, why))
        fail_msg("expected '%s', got rc %d: %s", why, rc, err.msg);
    free(buf);
}

static void test_inconsistent_fields(void **state)
{
    (void)state;
    cn_pindex x = sample();
    x.nfiles = 2; /* 8 ranks in groups of 3 need 3 */
    refused(&x, "inconsistent counts");
    x = sample(), x.group = 0;
    refused(&x, "inconsistent counts");
    x = sample(), x.nnodes = 9;
    refused(&x, "inconsistent counts");
    x = sample(), x.scheme = 7;
    refused(&x, "inconsistent counts");
    x = sample(), x.stored = 3499;
    refused(&x, "do not add up");
    cn_pfile zero[] = {{1000, 1}, {0, 2}, {2500, 3}};
    x = sample(), x.files = zero;
    refused(&x, "bad size of file 1");
    x = sample(), strcpy(x.job, "../x");
    refused(&x, "bad job id");
    x = sample(), x.generation = -3, x.base = -3;
    refused(&x, "inconsistent counts");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_every_flip_and_truncation_fails),
        cmocka_unit_test(test_inconsistent_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
