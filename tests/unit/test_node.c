/*
 * test_node.c - node names (node.c): the rule job.node, else SLURMD_NODENAME,
 * else the full hostname; names that are not valid ids mapped to valid ones
 * that stay distinct; host identities. The MPI side (two hosts, one name
 * claimed on two hosts, the hooks) is tests/mpi/run_nodes.sh.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"

static void map(const char *in, char out[CN_JOB_MAX + 1])
{
    memset(out, 'x', CN_JOB_MAX + 1);
    cn_node_map(in, out);
    assert_true(cn_id_ok(out));
}

static void test_valid_names_unchanged_dots_kept(void **state)
{
    (void)state;
    char a[CN_JOB_MAX + 1], b[CN_JOB_MAX + 1];
    map("n1.rack-a", a);
    map("n1.rack-b", b);
    assert_string_equal(a, "n1.rack-a"); /* not cut at the first dot */
    assert_string_equal(b, "n1.rack-b");
    map("node_07-x", a);
    assert_string_equal(a, "node_07-x");
}

static void test_mapped_names_valid_and_distinct(void **state)
{
    (void)state;
    char a[CN_JOB_MAX + 1], b[CN_JOB_MAX + 1], c[CN_JOB_MAX + 1];
    map("n1 rack/a", a);
    map("n1 rack:a", b);
    map("n1_rack_a", c);
    assert_int_equal(strncmp(a, "n1_rack_a-", 10), 0);
    assert_int_equal(strlen(a), 9 + 1 + 8);
    assert_string_not_equal(a, b); /* same characters once mapped: the hash tells them apart */
    assert_string_not_equal(a, c); /* a valid name and a mapped one with the same stem */
    map(".hidden", a);
    assert_int_equal(strncmp(a, "_hidden-", 8), 0);
    map("n\xc5\x93ud", a); /* UTF-8 */
    assert_int_equal(strncmp(a, "n__ud-", 6), 0);
}

static void test_long_names_cut_with_hash(void **state)
{
    (void)state;
    char l1[200], l2[200], a[CN_JOB_MAX + 1], b[CN_JOB_MAX + 1];
    memset(l1, 'h', sizeof l1 - 1);
    l1[sizeof l1 - 1] = '\0';
    memcpy(l2, l1, sizeof l1);
    l2[150] = 'g'; /* differs far beyond what is kept */
    map(l1, a);
    map(l2, b);
    assert_int_equal(strlen(a), CN_JOB_MAX);
    assert_string_not_equal(a, b);
    char s63[64], s64[65];
    memset(s63, 'a', 63), s63[63] = '\0';
    memset(s64, 'a', 64), s64[64] = '\0';
    map(s63, a);
    assert_string_equal(a, s63); /* 63 is allowed as is */
    map(s64, a);
    assert_int_equal(strlen(a), CN_JOB_MAX);
    assert_string_not_equal(a, s63);
}

static void test_rule_order(void **state)
{
    (void)state;
    char out[CN_JOB_MAX + 1], host[CN_HOST_MAX + 1] = "", want[CN_JOB_MAX + 1];
    const char *from = NULL;
    setenv("SLURMD_NODENAME", "sn-3", 1);
    cn_node_name("emu-1", out, &from);
    assert_string_equal(out, "emu-1");
    assert_string_equal(from, "job.node");
    cn_node_name("", out, &from);
    assert_string_equal(out, "sn-3");
    assert_string_equal(from, "SLURMD_NODENAME");
    setenv("SLURMD_NODENAME", "sn 3", 1); /* mapped like a hostname */
    cn_node_name(NULL, out, &from);
    assert_int_equal(strncmp(out, "sn_3-", 5), 0);
    setenv("SLURMD_NODENAME", "", 1); /* set but empty: as unset */
    cn_node_name(NULL, out, &from);
    assert_string_equal(from, "hostname");
    unsetenv("SLURMD_NODENAME");
    cn_node_name(NULL, out, &from);
    assert_string_equal(from, "hostname");
    assert_int_equal(gethostname(host, sizeof host - 1), 0);
    cn_node_map(host, want);
    assert_string_equal(out, want); /* the whole hostname, mapped */
}

static void test_host_ident(void **state)
{
    (void)state;
    cn_host a, b;
    cn_host_ident(&a);
    cn_host_ident(&b);
    assert_true(cn_host_same(&a, &b));
    assert_true(a.name[0] != '\0');
    assert_int_equal(strlen(a.boot), 36); /* Linux: a UUID */
    b.boot[0] ^= 1; /* same hostname, another boot: another host */
    assert_false(cn_host_same(&a, &b));
    cn_host_ident(&b);
    b.name[0] = b.name[0] == 'z' ? 'y' : 'z'; /* another hostname, same boot id */
    assert_false(cn_host_same(&a, &b));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_names_unchanged_dots_kept),
        cmocka_unit_test(test_mapped_names_valid_and_distinct),
        cmocka_unit_test(test_long_names_cut_with_hash),
        cmocka_unit_test(test_rule_order),
        cmocka_unit_test(test_host_ident),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
