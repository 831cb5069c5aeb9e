/*
 * test_names.c - the small name and error helpers every path and message
 * goes through: ids, entry names, generation directory names,
 * cairn_strerror, cn_type_name and cn_err.
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

/* ---- names ---------------------------------------------------------- */

static void test_parse_gen_dirname(void **state)
{
    (void)state;
    assert_int_equal(cn_parse_gen_dirname("gen-0"), 0);
    assert_int_equal(cn_parse_gen_dirname("gen-12"), 12);
    assert_int_equal(cn_parse_gen_dirname("gen-999999999999999999"), 999999999999999999ll);
    /* every id the API takes (long: up to LONG_MAX), a nanosecond timestamp among them */
    assert_int_equal(cn_parse_gen_dirname("gen-1000000000000000000"), 1000000000000000000ll);
    assert_int_equal(cn_parse_gen_dirname("gen-1700000000000000000"), 1700000000000000000ll);
    assert_int_equal(cn_parse_gen_dirname("gen-9223372036854775807"), INT64_MAX);
    static const char *const bad[] = {"gen-012", "gen-", "gen-1x", "gen--1", "gen-+1", "gen- 1",
                                      "gen-1 ", "gen-9223372036854775808", "gen-9999999999999999999",
                                      "gen-18446744073709551616", "gen-10000000000000000000",
                                      "gen-00000000000000000001", "gen", "",
                                      "Gen-1", "xgen-1", "manifest", "gen-0x1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (cn_parse_gen_dirname(bad[i]) != -1)
            fail_msg("'%s' parsed as %lld", bad[i], (long long)cn_parse_gen_dirname(bad[i]));

    char buf[32];
    assert_int_equal(cn_gen_dirname(buf, sizeof buf, 12), 0);
    assert_string_equal(buf, "gen-12");
    assert_int_equal(cn_parse_gen_dirname(buf), 12);
    assert_int_equal(cn_gen_dirname(buf, 6, 12), CAIRN_EINVAL);
    assert_int_equal(cn_gen_dirname(buf, sizeof buf, INT64_MAX), 0); /* round trip */
    assert_string_equal(buf, "gen-9223372036854775807");
    assert_int_equal(cn_parse_gen_dirname(buf), INT64_MAX);
    assert_int_equal(cn_rank_filename(buf, sizeof buf, 7), 0);
    assert_string_equal(buf, "rank-7.ckpt");
    assert_int_equal(cn_rank_filename(buf, 11, 7), CAIRN_EINVAL);
}

static void test_id_ok(void **state)
{
    (void)state;
    char id[CN_JOB_MAX + 2];
    memset(id, 'a', sizeof id);
    id[CN_JOB_MAX] = '\0';
    assert_true(cn_id_ok(id));
    id[CN_JOB_MAX] = 'a';
    id[CN_JOB_MAX + 1] = '\0';
    assert_false(cn_id_ok(id));
    static const char *const good[] = {"a", "0", "job-1.a_B", "x.", "-"};
    static const char *const bad[] = {"",    ".hidden", ".",        "..", "a/b",
                                      "a b", "a\n",     "\xc3\xa9", "a:b"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (!cn_id_ok(good[i]))
            fail_msg("'%s' refused", good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (cn_id_ok(bad[i]))
            fail_msg("'%s' accepted", bad[i]);
}

static void test_name_ok(void **state)
{
    (void)state;
    char name[CAIRN_NAME_MAX + 2];
    memset(name, 'n', sizeof name);
    name[CAIRN_NAME_MAX] = '\0';
    assert_true(cn_name_ok(name));
    name[CAIRN_NAME_MAX] = 'n';
    name[CAIRN_NAME_MAX + 1] = '\0';
    assert_false(cn_name_ok(name));
    assert_true(cn_name_ok("a"));
    assert_true(cn_name_ok(".hidden"));
    assert_true(cn_name_ok("..."));
    assert_true(cn_name_ok("a b:c"));
    assert_false(cn_name_ok(NULL));
    assert_false(cn_name_ok(""));
    assert_false(cn_name_ok("."));
    assert_false(cn_name_ok(".."));
    assert_false(cn_name_ok("a/b"));
    assert_false(cn_name_ok("/"));
}

/* ---- errors --------------------------------------------------------- */

static void test_strerror(void **state)
{
    (void)state;
    /* The values are pinned: they are part of the ABI. */
    assert_int_equal(CAIRN_EINVAL, -1001);
    assert_int_equal(CAIRN_ECORRUPT, -1006);
    assert_int_equal(CAIRN_EUNSAFE, -1010);
    assert_int_equal(CAIRN_EFORMAT, -1013);
    assert_int_equal(CAIRN_ELOST, -1014);
    static const struct {
        int code;
        const char *msg;
    } table[] = {
#define X(name, value, msg) {name, msg},
        CAIRN_ERROR_LIST(X)
#undef X
    };
    size_t n = sizeof table / sizeof table[0];
    assert_int_equal(n, 14);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(table[i].code, -1001 - (int)i);
        assert_string_equal(cairn_strerror(table[i].code), table[i].msg);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(table[i].msg, table[j].msg);
    }
    assert_string_equal(cairn_strerror(CAIRN_ECORRUPT), "checkpoint data is corrupt");
    assert_string_equal(cairn_strerror(0), "success");
    assert_string_equal(cairn_strerror(-ENOENT), strerror(ENOENT));
    assert_string_equal(cairn_strerror(-ENOENT), "No such file or directory");
    assert_string_equal(cairn_strerror(-5000), "unknown error");
    assert_string_equal(cairn_strerror(1), "unknown error");
}

/* Element types are named in messages, never numbered. */
static void test_type_name(void **state)
{
    (void)state;
    assert_string_equal(cn_type_name(CAIRN_BYTE), "byte");
    assert_string_equal(cn_type_name(CAIRN_INT16), "int16");
    assert_string_equal(cn_type_name(CAIRN_UINT8), "uint8");
    assert_string_equal(cn_type_name(CAIRN_FLOAT), "float");
    assert_string_equal(cn_type_name(CAIRN_DOUBLE), "double");
    assert_string_equal(cn_type_name(11), "unknown");
    assert_string_equal(cn_type_name(-1), "unknown");
}

static void test_cn_err(void **state)
{
    (void)state;
    cn_err err = {0};
    assert_int_equal(cn_fail(&err, CAIRN_EINVAL, "bad %s %d", "x", 3), CAIRN_EINVAL);
    assert_int_equal(err.code, CAIRN_EINVAL);
    assert_string_equal(err.msg, "bad x 3");
    cn_err_prefix(&err, "rank %d: ", 2);
    assert_string_equal(err.msg, "rank 2: bad x 3");
    assert_int_equal(cn_fail_errno(&err, EACCES, "open %s", "f"), -EACCES);
    assert_string_equal(err.msg, "open f: Permission denied");
    assert_int_equal(cn_fail_errno(&err, ENOSPC, "w"), CAIRN_ENOSPC);
    assert_int_equal(cn_fail_errno(&err, EDQUOT, "w"), CAIRN_ENOSPC);
    assert_int_equal(cn_fail_errno(NULL, EIO, "w"), -EIO);
    cn_err_clear(&err);
    assert_int_equal(err.code, 0);
    assert_string_equal(err.msg, "");
    /* A message longer than the buffer is cut, not overrun. */
    char big[2 * CN_MSG_MAX];
    memset(big, 'm', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    cn_fail(&err, CAIRN_EIO, "%s", big);
    assert_int_equal(strlen(err.msg), CN_MSG_MAX - 1);
    cn_err_prefix(&err, "p: ");
    assert_int_equal(strlen(err.msg), CN_MSG_MAX - 1);
    assert_memory_equal(err.msg, "p: mmm", 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_gen_dirname),
        cmocka_unit_test(test_id_ok),
        cmocka_unit_test(test_name_ok),
        cmocka_unit_test(test_strerror),
        cmocka_unit_test(test_type_name),
        cmocka_unit_test(test_cn_err),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
