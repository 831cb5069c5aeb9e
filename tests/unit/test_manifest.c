/*
 * test_manifest.c - the node manifest (manifest.c). The name and error
 * helpers are test_names.c.
 *
 * Manifests are encoded with cn_manifest_encode, which does not validate
 * (but for a label and seconds it could not write), so a test can encode a
 * bad manifest with a valid checksum and see the decoder reject it for the
 * right reason. Three versions are read: 3 (cairn 0.2.0), 4 (label,
 * seconds) and 5 (flags: CN_MF_PFS), each written back in its own version.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"

/* Job of 4 ranks on 2 nodes (ranks 0,2 on node 0; 1,3 on node 1), as seen by node 1. */
static uint32_t rank_node4[] = {0, 1, 0, 1};
static cn_manifest_rank local4[] = {{1, 8192, 0x1111222233334444ull, 1 << 20, 4096},
                                    {3, 12288, 0xfedcba9876543210ull, 3 << 20, 3 << 20}};

/* An incremental generation 12 of the chain 8..12, asked for level 3. */
static cn_manifest sample(void)
{
    cn_manifest m = {.version = CN_MANIFEST_VERSION, .level = 1, .target = 3, .generation = 12,
                     .parent = 10, .base = 8, .nranks = 4, .nnodes = 2, .node = 1,
                     .nlocal = 2, .rank_node = rank_node4, .local = local4, .seconds = 0.75};
    strcpy(m.job, "slurm-1234");
    strcpy(m.node_name, "node-b");
    strcpy(m.label, "step 12 ~ before the storm");
    return m;
}

static uint8_t *encode(const cn_manifest *m, size_t *len)
{
    uint8_t *buf = NULL;
    cn_err err = {0};
    assert_int_equal(cn_manifest_encode(m, &buf, len, &err), 0);
    assert_non_null(buf);
    return buf;
}

/* Decode a private copy of exactly LEN bytes (so ASan sees over-reads). */
static int decode(const uint8_t *buf, size_t len, cn_manifest *m, cn_err *err)
{
    uint8_t *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, buf, len);
    int rc = cn_manifest_decode(copy, len, m, err);
    free(copy);
    if (rc < 0) {
        assert_null(m->rank_node);
        assert_null(m->local);
    }
    return rc;
}

static void expect_reject(const cn_manifest *m, int code, const char *what)
{
    size_t len;
    uint8_t *buf = encode(m, &len);
    cn_manifest out;
    cn_err err = {0};
    assert_int_equal(decode(buf, len, &out, &err), code);
    if (!strstr(err.msg, what))
        fail_msg("message '%s' lacks '%s'", err.msg, what);
    free(buf);
}

static void check_equal(const cn_manifest *a, const cn_manifest *b)
{
    assert_int_equal(a->version, b->version ? b->version : CN_MANIFEST_VERSION);
    assert_string_equal(a->label, b->version == CN_MANIFEST_VERSION_OLD ? "" : b->label);
    assert_true(a->seconds == (b->version == CN_MANIFEST_VERSION_OLD ? 0 : b->seconds));
    if (b->version && b->version < 5) /* no flags: level 4 alone went to the PFS */
        assert_int_equal(a->flags, b->target == CAIRN_LEVEL_PFS ? CN_MF_PFS : 0);
    else
        assert_int_equal(a->flags, b->flags);
    assert_int_equal(a->level, b->level);
    assert_int_equal(a->target, b->target);
    assert_int_equal(a->generation, b->generation);
    assert_int_equal(a->parent, b->parent);
    assert_int_equal(a->base, b->base);
    assert_int_equal(a->nranks, b->nranks);
    assert_int_equal(a->nnodes, b->nnodes);
    assert_int_equal(a->node, b->node);
    assert_int_equal(a->nlocal, b->nlocal);
    assert_string_equal(a->job, b->job);
    assert_string_equal(a->node_name, b->node_name);
    for (uint32_t i = 0; i < b->nranks; i++)
        assert_int_equal(a->rank_node[i], b->rank_node[i]);
    for (uint32_t i = 0; i < b->nlocal; i++) {
        assert_int_equal(a->local[i].rank, b->local[i].rank);
        assert_int_equal(a->local[i].file_size, b->local[i].file_size);
        assert_int_equal(a->local[i].header_sum, b->local[i].header_sum);
        assert_int_equal(a->local[i].raw, b->local[i].raw);
        assert_int_equal(a->local[i].delta, b->local[i].delta);
    }
}

/* ---- manifest ------------------------------------------------------- */

static void test_manifest_round_trip(void **state)
{
    (void)state;
    cn_manifest m = sample();
    size_t len;
    uint8_t *buf = encode(&m, &len);
    /* magic, 7 u32, generation, job, node name, parent, base, label, seconds, flags,
     * rank map, locals, checksum */
    assert_int_equal(len, 8 + 28 + 8 + 64 + 64 + 16 + 64 + 8 + 4 + 4 * 4 + 36 * 2 + 8);
    assert_int_equal(len, cn_manifest_size(4, 2));
    assert_memory_equal(buf, CN_MANIFEST_MAGIC, 8);
    cn_manifest out;
    cn_err err = {0};
    assert_int_equal(decode(buf, len, &out, &err), 0);
    check_equal(&out, &m);
    cn_manifest_free(&out);
    assert_null(out.rank_node);
    cn_manifest_free(NULL);
    free(buf);

    /* One rank, one node; a long job id and level 4. */
    uint32_t one_node[] = {0};
    cn_manifest_rank one_local[] = {{0, CN_DATA_ALIGN, 42, 0, 0}};
    cn_manifest s = {.level = 4, .target = 4, .flags = CN_MF_PFS, .generation = 0,
                     .parent = -1, .base = 0, .nranks = 1, .nnodes = 1, .node = 0, .nlocal = 1,
                     .rank_node = one_node, .local = one_local};
    memset(s.job, 'j', CN_JOB_MAX);
    strcpy(s.node_name, "n0");
    buf = encode(&s, &len);
    assert_int_equal(decode(buf, len, &out, &err), 0);
    check_equal(&out, &s);
    assert_int_equal(strlen(out.job), CN_JOB_MAX);
    cn_manifest_free(&out);
    free(buf);

    /* No local ranks (a node listed with none of its ranks committed here). */
    m = sample();
    m.nlocal = 0;
    buf = encode(&m, &len);
    assert_int_equal(decode(buf, len, &out, &err), 0);
    check_equal(&out, &m);
    cn_manifest_free(&out);
    free(buf);
}

static void test_manifest_every_flip_and_truncation_fails(void **state)
{
    (void)state;
    cn_manifest m = sample();
    size_t len;
    uint8_t *buf = encode(&m, &len);
    static const uint8_t masks[] = {0x01, 0x80, 0xff};
    for (size_t off = 0; off < len; off++) {
        for (size_t k = 0; k < sizeof masks; k++) {
            buf[off] ^= masks[k];
            cn_manifest out;
            cn_err err = {0};
            int rc = decode(buf, len, &out, &err);
            buf[off] ^= masks[k];
            if (rc != CAIRN_ECORRUPT && rc != CAIRN_EFORMAT)
                fail_msg("flip 0x%02x at byte %zu: rc %d", masks[k], off, rc);
        }
    }
    for (size_t n = 0; n < len; n++) {
        cn_manifest out;
        int rc = decode(buf, n, &out, NULL);
        if (rc != CAIRN_ECORRUPT)
            fail_msg("truncated to %zu bytes: rc %d", n, rc);
    }
    cn_manifest out;
    assert_int_equal(decode(buf, len, &out, NULL), 0);
    cn_manifest_free(&out);
    free(buf);
}

static void test_manifest_bad_fields(void **state)
{
    (void)state;
    cn_manifest m;
    uint32_t map[4];
    cn_manifest_rank loc[2];
#define MF_CASE(stmt, code, what)                                                                 \
    do {                                                                                          \
        m = sample();                                                                             \
        memcpy(map, rank_node4, sizeof map);                                                      \
        memcpy(loc, local4, sizeof loc);                                                          \
        m.rank_node = map;                                                                        \
        m.local = loc;                                                                            \
        stmt;                                                                                     \
        expect_reject(&m, code, what);                                                            \
    } while (0)
    MF_CASE(loc[0].rank = 0, CAIRN_ECORRUPT, "bad entry for rank 0"); /* rank 0 is on node 0 */
    MF_CASE(map[3] = 0, CAIRN_ECORRUPT, "bad entry for rank 3");     /* map moves rank 3 */
    MF_CASE(loc[1].rank = 1, CAIRN_ECORRUPT, "bad entry for rank 1"); /* not ascending */
    MF_CASE(loc[1].rank = 4, CAIRN_ECORRUPT, "bad entry for rank 4"); /* out of range */
    MF_CASE(loc[0].file_size = CN_HEADER_SIZE - 1, CAIRN_ECORRUPT, "bad entry for rank 1");
    MF_CASE(map[2] = 2, CAIRN_ECORRUPT, "rank 2 on bad node 2");
    MF_CASE((map[0] = 1, map[2] = 1), CAIRN_ECORRUPT, "node 0 has no ranks");
    MF_CASE(m.level = 0, CAIRN_ECORRUPT, "bad level 0");
    MF_CASE(m.level = 5, CAIRN_ECORRUPT, "bad level 5");
    MF_CASE(m.generation = -3, CAIRN_ECORRUPT, "bad generation");
    MF_CASE(m.node = 2, CAIRN_ECORRUPT, "bad rank/node counts");
    MF_CASE((m.nnodes = 5, m.node = 0), CAIRN_ECORRUPT, "bad rank/node counts");
    MF_CASE(m.job[0] = '.', CAIRN_ECORRUPT, "bad job or node name");
    MF_CASE(m.node_name[0] = '\0', CAIRN_ECORRUPT, "bad job or node name");
    MF_CASE(strcpy(m.node_name, "a/b"), CAIRN_ECORRUPT, "bad job or node name");
    MF_CASE(m.target = 0, CAIRN_ECORRUPT, "asked for 0");
    MF_CASE(m.target = 5, CAIRN_ECORRUPT, "asked for 5");
    MF_CASE(m.parent = 12, CAIRN_ECORRUPT, "bad chain"); /* its own parent */
    MF_CASE(m.base = 11, CAIRN_ECORRUPT, "bad chain");   /* base newer than the parent */
    MF_CASE(m.parent = -2, CAIRN_ECORRUPT, "bad chain");
    MF_CASE((m.parent = -1, m.base = 8), CAIRN_ECORRUPT, "bad chain"); /* full: base is itself */
    MF_CASE(loc[0].delta = loc[0].raw + 1, CAIRN_ECORRUPT, "bad entry for rank 1");
#undef MF_CASE

    /* Counts that do not match the length: the encoder sizes the buffer from
     * the counts, so shrink nranks after encoding and reseal by hand. */
    m = sample();
    size_t len;
    uint8_t *buf = encode(&m, &len);
    cn_put_u32(buf + 16, 3); /* nranks */
    cn_put_u64(buf + len - 8, cn_hash(buf, len - 8));
    cn_manifest out;
    cn_err err = {0};
    assert_int_equal(decode(buf, len, &out, &err), CAIRN_ECORRUPT);
    assert_non_null(strstr(err.msg, "does not match its counts"));
    cn_put_u32(buf + 16, 4);
    cn_put_u32(buf + 32, 7); /* target */
    cn_put_u64(buf + len - 8, cn_hash(buf, len - 8));
    assert_int_equal(decode(buf, len, &out, &err), CAIRN_ECORRUPT);
    assert_non_null(strstr(err.msg, "asked for 7"));
    cn_put_u32(buf + 32, 3);
    cn_put_u32(buf + 8, CN_MANIFEST_VERSION + 1); /* version */
    cn_put_u64(buf + len - 8, cn_hash(buf, len - 8));
    assert_int_equal(decode(buf, len, &out, &err), CAIRN_EFORMAT);
    assert_non_null(strstr(err.msg, "manifest format version 6"));
    cn_put_u32(buf + 8, CN_MANIFEST_VERSION);
    cn_put_u32(buf + 260, 2); /* flags: a bit no version defines */
    cn_put_u64(buf + len - 8, cn_hash(buf, len - 8));
    assert_int_equal(decode(buf, len, &out, &err), CAIRN_ECORRUPT);
    assert_non_null(strstr(err.msg, "unknown flags 0x2"));
    cn_put_u32(buf + 260, CN_MF_PFS);
    cn_put_u64(buf + len - 8, cn_hash(buf, len - 8));
    assert_int_equal(decode(buf, len, &out, &err), 0);
    assert_int_equal(out.flags, CN_MF_PFS);
    cn_manifest_free(&out);
    free(buf);
}

/* Versions 3 (cairn 0.2.0, no label or seconds) and 4 (no flags) are read
 * and written back as they were; version 4's label and seconds are checked
 * byte by byte. */
static void test_manifest_versions(void **state)
{
    (void)state;
    cn_manifest m = sample(), out;
    m.version = CN_MANIFEST_VERSION_OLD;
    size_t len, len2;
    uint8_t *buf = encode(&m, &len), *again = NULL;
    assert_int_equal(len, cn_manifest_size(4, 2) - 76);
    assert_int_equal(cn_get_u32(buf + 8), 3);
    cn_err err = {0};
    assert_int_equal(decode(buf, len, &out, &err), 0);
    check_equal(&out, &m); /* label "", seconds 0 */
    assert_int_equal(cn_manifest_encode(&out, &again, &len2, &err), 0);
    assert_int_equal(len2, len);
    assert_memory_equal(again, buf, len);
    cn_manifest_free(&out);
    free(again), free(buf);

    /* Version 4 (no flags): asked for level 4, it reads as owed to the PFS; it
     * is written back as it was, flags or not. */
    for (uint32_t target = 3; target <= 4; target++) {
        m = sample();
        m.version = 4, m.target = target;
        buf = encode(&m, &len);
        assert_int_equal(len, cn_manifest_size(4, 2) - 4);
        assert_int_equal(decode(buf, len, &out, &err), 0);
        check_equal(&out, &m);
        assert_int_equal(out.flags, target == 4 ? CN_MF_PFS : 0);
        assert_int_equal(cn_manifest_encode(&out, &again, &len2, &err), 0);
        assert_int_equal(len2, len);
        assert_memory_equal(again, buf, len);
        cn_manifest_free(&out);
        free(again), free(buf);
    }

    /* Version 5: a pfs.every generation asked for level 3 is owed to the PFS. */
    m = sample();
    m.flags = CN_MF_PFS;
    buf = encode(&m, &len);
    assert_int_equal(cn_get_u32(buf + 260), CN_MF_PFS);
    assert_int_equal(decode(buf, len, &out, &err), 0);
    check_equal(&out, &m);
    cn_manifest_free(&out);
    free(buf);

    /* Version 5: every label byte printable, zeros after it; seconds finite, >= 0. */
    m = sample();
    buf = encode(&m, &len);
    size_t at = 8 + 28 + 8 + 64 + 64 + 16;
    assert_string_equal((const char *)buf + at, "step 12 ~ before the storm");
    static const struct { size_t off; uint8_t byte; const char *why; } bad[] = {
        {0, 0x1f, "bad label"}, {3, 0x7f, "bad label"}, {5, 0xe9, "bad label"},
        {40, 'x', "bad label"}, {63, 'x', "bad label"},
        {64 + 7, 0x80, "bad seconds"}, {64 + 7, 0x7f, "bad seconds"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t keep = buf[at + bad[i].off], k7 = buf[at + 64 + 6];
        buf[at + bad[i].off] = bad[i].byte;
        if (bad[i].byte == 0x7f && bad[i].off == 64 + 7)
            buf[at + 64 + 6] = 0xf0; /* exponent all ones: Inf */
        cn_put_u64(buf + len - 8, cn_hash(buf, len - 8));
        assert_int_equal(decode(buf, len, &out, &err), CAIRN_ECORRUPT);
        if (!strstr(err.msg, bad[i].why))
            fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, bad[i].why);
        buf[at + bad[i].off] = keep, buf[at + 64 + 6] = k7;
    }
    cn_put_u64(buf + len - 8, cn_hash(buf, len - 8));
    assert_int_equal(decode(buf, len, &out, &err), 0);
    assert_true(out.seconds == 0.75);
    cn_manifest_free(&out);
    free(buf);

    /* The encoder writes no label or seconds it could not read back, nor
     * another version. */
    m = sample();
    m.label[2] = '\n';
    assert_int_equal(cn_manifest_encode(&m, &buf, &len, &err), CAIRN_EINVAL);
    m = sample();
    m.seconds = -1;
    assert_int_equal(cn_manifest_encode(&m, &buf, &len, &err), CAIRN_EINVAL);
    m = sample();
    m.version = 2;
    assert_int_equal(cn_manifest_encode(&m, &buf, &len, &err), CAIRN_EINVAL);
    m = sample();
    m.flags = 2;
    assert_int_equal(cn_manifest_encode(&m, &buf, &len, &err), CAIRN_EINVAL);
    assert_true(cn_label_ok("") && cn_label_ok("a b~!"));
    char longest[CAIRN_LABEL_MAX + 2];
    memset(longest, 'L', sizeof longest - 1), longest[sizeof longest - 1] = '\0';
    assert_false(cn_label_ok(longest));
    longest[CAIRN_LABEL_MAX] = '\0';
    assert_true(cn_label_ok(longest));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_manifest_round_trip),
        cmocka_unit_test(test_manifest_every_flip_and_truncation_fails),
        cmocka_unit_test(test_manifest_bad_fields),
        cmocka_unit_test(test_manifest_versions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
