/*
 * test_config.c - cn_config_load and cn_config_reference (src/common/config.c).
 *
 * Each test writes its INI text to a mkstemp file under /tmp, loads it and
 * checks exact values, or the exact error message with its line and key.
 * Setup and teardown clear every CAIRN_* variable the loader reads, so the
 * environment of the test runner cannot leak in.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ini.h>

#include "common/common.h"

static const char *const KEYS[][2] = {
    {"store.base", "CAIRN_BASE"},
    {"store.keep", "CAIRN_KEEP"},
    {"store.prune_abandoned", "CAIRN_PRUNE_ABANDONED"},
    {"store.block_size", "CAIRN_BLOCK_SIZE"},
    {"store.io", "CAIRN_IO"},
    {"job.id", "CAIRN_JOB"},
    {"job.node", "CAIRN_NODE"},
    {"job.ranks_per_node", "CAIRN_RANKS_PER_NODE"},
    {"job.restart_from", "CAIRN_RESTART_FROM"},
    {"erasure.set_size", "CAIRN_SET_SIZE"},
    {"erasure.m", "CAIRN_EC_M"},
    {"erasure.w", "CAIRN_EC_W"},
    {"erasure.kernel", "CAIRN_EC_KERNEL"},
    {"erasure.block_size", "CAIRN_EC_BLOCK"},
    {"compress.codec", "CAIRN_CODEC"},
    {"compress.buffer", "CAIRN_COMPRESS_BUFFER"},
    {"compress.threads", "CAIRN_COMPRESS_THREADS"},
    {"compress.level", "CAIRN_COMPRESS_LEVEL"},
    {"compress.bandwidth", "CAIRN_COMPRESS_BANDWIDTH"},
    {"compress.resample", "CAIRN_COMPRESS_RESAMPLE"},
    {"lossy.mode", "CAIRN_LOSSY"},
    {"incr.mode", "CAIRN_INCR"},
    {"incr.block_size", "CAIRN_INCR_BLOCK"},
    {"incr.full_every", "CAIRN_INCR_FULL_EVERY"},
    {"incr.max_changed", "CAIRN_INCR_MAX_CHANGED"},
    {"pfs.dir", "CAIRN_PFS_DIR"},
    {"pfs.every", "CAIRN_PFS_EVERY"},
    {"pfs.keep", "CAIRN_PFS_KEEP"},
    {"pfs.group", "CAIRN_PFS_GROUP"},
    {"pfs.scheme", "CAIRN_PFS_SCHEME"},
    {"pfs.block", "CAIRN_PFS_BLOCK"},
    {"pfs.bandwidth", "CAIRN_PFS_BANDWIDTH"},
    {"pfs.direct", "CAIRN_PFS_DIRECT"},
    {"pfs.parity", "CAIRN_PFS_PARITY"},
    {"daemon.use", "CAIRN_DAEMON_USE"},
    {"daemon.timeout", "CAIRN_DAEMON_TIMEOUT"},
    {"daemon.boost_after", "CAIRN_DAEMON_BOOST_AFTER"},
    {"daemon.share", "CAIRN_DAEMON_SHARE"},
    {"daemon.burst", "CAIRN_DAEMON_BURST"},
    {"log.level", "CAIRN_LOG_LEVEL"},
    {"ckpt.every_1", "CAIRN_CKPT_EVERY_1"},
    {"ckpt.every_2", "CAIRN_CKPT_EVERY_2"},
    {"ckpt.every_3", "CAIRN_CKPT_EVERY_3"},
    {"ckpt.every_4", "CAIRN_CKPT_EVERY_4"},
    {"ckpt.auto", "CAIRN_CKPT_AUTO"},
    {"fail.mtbf_1", "CAIRN_FAIL_MTBF_1"},
    {"fail.mtbf_2", "CAIRN_FAIL_MTBF_2"},
    {"fail.mtbf_3", "CAIRN_FAIL_MTBF_3"},
    {"fail.mtbf_4", "CAIRN_FAIL_MTBF_4"},
};
#define NKEYS (sizeof KEYS / sizeof KEYS[0])

static int clear_env(void **state)
{
    (void)state;
    for (size_t i = 0; i < NKEYS; i++)
        unsetenv(KEYS[i][1]);
    unsetenv("CAIRN_FAULT");
    unsetenv("CAIRN_CONFIG_FILE");
    return 0;
}

/* Write TEXT to a new file under /tmp; its path goes in PATH (>= 64 bytes). */
static void write_tmp(char *path, const char *text)
{
    strcpy(path, "/tmp/cairn-test-config-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t len = strlen(text);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    assert_int_equal(close(fd), 0);
}

static void assert_defaults(const cn_config *c)
{
    assert_string_equal(c->base, "/dev/shm");
    assert_int_equal(c->keep, 2);
    assert_int_equal(c->block_size, 1u << 20);
    assert_int_equal(c->io, CN_IO_AUTO);
    assert_string_equal(c->job, "");
    assert_string_equal(c->node, "");
    assert_int_equal(c->ranks_per_node, 0);
    assert_int_equal(c->set_size, 8);
    assert_int_equal(c->ec_m, 2);
    assert_int_equal(c->ec_w, 8);
    assert_int_equal(c->ec_kernel, 0);
    assert_int_equal(c->ec_block, 1u << 20);
    assert_int_equal(c->log_level, CN_LOG_WARN);
    for (int l = 1; l <= 4; l++) {
        assert_int_equal(c->ckpt_every[l].iters, 0);
        assert_true(c->ckpt_every[l].seconds == 0);
        assert_true(c->mtbf[l] == 0);
    }
    assert_int_equal(c->ckpt_auto, 0);
}

static void assert_contains(const char *msg, const char *want)
{
    if (!strstr(msg, want))
        fail_msg("message \"%s\"\n  does not contain \"%s\"", msg, want);
}

/* Load TEXT: it must fail with "config <path>:LINE: TAIL", leaving defaults. */
static void expect_file_error(const char *text, int line, const char *tail)
{
    char path[64], want[CN_MSG_MAX];
    cn_config c;
    cn_err err = {0};
    write_tmp(path, text);
    int rc = cn_config_load(&c, path, &err);
    unlink(path);
    assert_int_equal(rc, CAIRN_ECONFIG);
    assert_int_equal(err.code, CAIRN_ECONFIG);
    snprintf(want, sizeof want, "config %s:%d: %s", path, line, tail);
    assert_contains(err.msg, want);
    assert_defaults(&c);
}

/* Load "[SECTION]\nKEY = VALUE" (VALUE on line 2): must fail with KEY: 'VALUE' PROBLEM. */
static void expect_value_error(const char *key, const char *value, const char *problem)
{
    char text[512], tail[512];
    const char *dot = strchr(key, '.');
    snprintf(text, sizeof text, "[%.*s]\n%s = %s\n", (int)(dot - key), key, dot + 1, value);
    snprintf(tail, sizeof tail, "%s: '%s' %s", key, value, problem);
    expect_file_error(text, 2, tail);
}

static void load_ok(const char *text, cn_config *c)
{
    char path[64];
    cn_err err = {0};
    write_tmp(path, text);
    int rc = cn_config_load(c, path, &err);
    unlink(path);
    if (rc != 0)
        fail_msg("load failed: %d %s", rc, err.msg);
}

static void test_defaults(void **state)
{
    (void)state;
    cn_config c;
    cn_err err = {0};
    memset(&c, 0xab, sizeof c);
    assert_int_equal(cn_config_load(&c, NULL, &err), 0);
    assert_defaults(&c);
    assert_int_equal(cn_config_load(&c, NULL, NULL), 0);
    assert_int_equal(cn_config_load(NULL, NULL, &err), CAIRN_EINVAL);
}

static void test_full_file(void **state)
{
    (void)state;
    cn_config c;
    load_ok("; cairn settings\n"
            "# another comment\n"
            "[store]\n"
            "base = /mnt/nvme/ckpt\n"
            "  keep = 9        ; indented, inline comment\n"
            "keep = 5\n" /* given twice: last wins */
            "block_size = 64KiB\n"
            "io = PMEM\n"
            "\n"
            "[job]\n"
            "id = job-42.a_b\n"
            "node : n07\n"
            "ranks_per_node = 1000000\n"
            "[log]\n"
            "level = debug\r\n",
            &c);
    assert_string_equal(c.base, "/mnt/nvme/ckpt");
    assert_int_equal(c.keep, 5);
    assert_int_equal(c.block_size, 65536);
    assert_int_equal(c.io, CN_IO_PMEM);
    assert_string_equal(c.job, "job-42.a_b");
    assert_string_equal(c.node, "n07");
    assert_int_equal(c.ranks_per_node, 1000000);
    assert_int_equal(c.log_level, CN_LOG_DEBUG);

    load_ok("[store]\nblock_size = 4096\nio = write\nkeep = 1000\n[log]\nlevel = error\n", &c);
    assert_int_equal(c.block_size, 4096);
    assert_int_equal(c.io, CN_IO_WRITE);
    assert_int_equal(c.keep, 1000);
    assert_int_equal(c.log_level, CN_LOG_ERROR);
    assert_string_equal(c.base, "/dev/shm");

    const struct { const char *v; uint32_t want; } sizes[] = {
        {"4K", 4096}, {"4k", 4096}, {"2M", 2u << 20}, {"1g", 1u << 30}, {"1GiB", 1u << 30},
        {"8mib", 8u << 20}, {"1048576", 1u << 20},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char text[64];
        snprintf(text, sizeof text, "[store]\nblock_size=%s\n", sizes[i].v);
        load_ok(text, &c);
        assert_int_equal(c.block_size, sizes[i].want);
    }

    char id63[64], text[128];
    memset(id63, 'x', 63);
    id63[63] = '\0';
    snprintf(text, sizeof text, "[job]\nid = %s\nnode =\n", id63);
    load_ok(text, &c);
    assert_string_equal(c.job, id63);
    assert_string_equal(c.node, "");

    load_ok("", &c);
    assert_defaults(&c);
}

static void test_unknown_key(void **state)
{
    (void)state;
    expect_file_error("[store]\nkeep = 3\nfoo = 1\n", 3, "unknown key 'store.foo'");
    expect_file_error("[log]\nLevel = info\n", 2, "unknown key 'log.Level'");
}

static void test_unknown_section(void **state)
{
    (void)state;
    expect_file_error("[store]\nkeep=3\n\n[disk]\nsize = 1\n", 5, "unknown section [disk]");
}

static void test_outside_section(void **state)
{
    (void)state;
    expect_file_error("; top\nkeep = 3\n[store]\n", 2, "key 'keep' outside a section");
}

static void test_bad_int(void **state)
{
    (void)state;
    const char *bad[] = {"abc", "12x", "1.5", "0x10", "--1", "+", "1 2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_value_error("store.keep", bad[i], "is not an integer");
    expect_file_error("[store]\nkeep =\n", 2, "store.keep: '' is not an integer");
    expect_value_error("job.ranks_per_node", "four", "is not an integer");
}

static void test_out_of_range(void **state)
{
    (void)state;
    expect_value_error("store.keep", "0", "is out of range 1..1000");
    expect_value_error("store.keep", "1001", "is out of range 1..1000");
    expect_value_error("store.keep", "-5", "is out of range 1..1000");
    expect_value_error("store.keep", "99999999999999999999", "is out of range 1..1000");
    expect_value_error("job.ranks_per_node", "-1", "is out of range 0..1000000");
    expect_value_error("job.ranks_per_node", "1000001", "is out of range 0..1000000");
}

static void test_bad_size(void **state)
{
    (void)state;
    const char *bad[] = {"1X", "K", "-4K", "1.5M", "1 M", "64KB", "0x1000", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_value_error("store.block_size", bad[i], "is not a size (use e.g. 64K, 1M)");
    expect_value_error("store.block_size", "2G", "is out of range 4K..1G");
    expect_value_error("store.block_size", "2K", "is out of range 4K..1G");
    expect_value_error("store.block_size", "0", "is out of range 4K..1G");
    expect_value_error("store.block_size", "99999999999999999999", "is out of range 4K..1G");
    expect_value_error("store.block_size", "9999999999G", "is out of range 4K..1G");
}

static void test_block_not_pow2(void **state)
{
    (void)state;
    expect_value_error("store.block_size", "3M", "must be a power of two");
    expect_value_error("store.block_size", "12K", "must be a power of two");
    expect_value_error("store.block_size", "5000", "must be a power of two");
}

static void test_bad_enum(void **state)
{
    (void)state;
    expect_value_error("store.io", "fast", "must be one of auto, write, pmem");
    expect_value_error("store.io", "", "must be one of auto, write, pmem");
    expect_value_error("log.level", "verbose", "must be one of error, warn, info, debug");
    expect_value_error("log.level", "2", "must be one of error, warn, info, debug");
    expect_value_error("store.prune_abandoned", "yes", "must be one of off, on");
}

static void test_bad_strings(void **state)
{
    (void)state;
    const char *id_rule = "is not 1-63 of A-Z a-z 0-9 . _ - (no leading '.')";
    expect_value_error("job.id", "a/b", id_rule);
    expect_value_error("job.id", ".hidden", id_rule);
    expect_value_error("job.id", "a b", id_rule);
    expect_value_error("job.node", "n\xc3\xa9", id_rule);
    char id64[65];
    memset(id64, 'x', 64);
    id64[64] = '\0';
    expect_value_error("job.id", id64, "is longer than 63 bytes");
    expect_value_error("store.base", "tmp/ckpt", "is not an absolute path");
    expect_value_error("store.base", "", "is not an absolute path");
    expect_value_error("pfs.dir", "scratch/ckpt", "is not an absolute path");
    expect_value_error("pfs.scheme", "smart",
                       "must be one of agnostic, agnostic-block, aware, aware-block, auto");
}

static void test_syntax_error(void **state)
{
    (void)state;
    expect_file_error("[store]\nkeep = 3\nthis line has no equals\n", 3, "syntax error");
    expect_file_error("[store\nkeep = 3\n", 1, "syntax error");
    /* The first error wins, whichever side found it. */
    expect_file_error("[store]\ngarbage\nkeep = abc\n", 2, "syntax error");
    expect_file_error("[store]\nkeep = abc\ngarbage\n", 2, "store.keep: 'abc' is not an integer");
    expect_file_error("[store]\nkeep = 1\nfoo = 1\nbar = 2\n", 3, "unknown key 'store.foo'");
}

static void test_long_line(void **state)
{
    (void)state;
    char text[1024], tail[64];
    int n = snprintf(text, sizeof text, "[store]\nbase = /");
    memset(text + n, 'd', 600);
    strcpy(text + n + 600, "\nkeep = 3\n");
    snprintf(tail, sizeof tail, "line is longer than %d bytes", INI_MAX_LINE - 2);
    expect_file_error(text, 2, tail);

    /* The limit exactly: "base = /ddd" of INI_MAX_LINE - 2 bytes loads, one more does not. */
    cn_config c;
    int len = INI_MAX_LINE - 2;
    n = snprintf(text, sizeof text, "[store]\nbase = /");
    memset(text + n, 'd', (size_t)(len - 8));
    strcpy(text + n + len - 8, "\nkeep = 3\n");
    load_ok(text, &c);
    assert_int_equal(strlen(c.base), (size_t)(len - 7));
    assert_int_equal(c.keep, 3);
    n = snprintf(text, sizeof text, "[store]\nbase = /");
    memset(text + n, 'd', (size_t)(len - 7));
    strcpy(text + n + len - 7, "\nkeep = 3\n");
    expect_file_error(text, 2, tail);
}

static void test_missing_file(void **state)
{
    (void)state;
    cn_config c;
    cn_err err = {0};
    const char *path = "/tmp/cairn-test-config-does-not-exist.ini";
    unlink(path);
    assert_int_equal(cn_config_load(&c, path, &err), CAIRN_ECONFIG);
    assert_int_equal(err.code, CAIRN_ECONFIG);
    assert_string_equal(err.msg,
                        "config /tmp/cairn-test-config-does-not-exist.ini: cannot open: "
                        "No such file or directory");
    assert_defaults(&c);

    assert_int_equal(cn_config_load(&c, "/tmp", &err), CAIRN_ECONFIG);
    assert_contains(err.msg, "config /tmp: cannot read: Is a directory");
}

static void test_env_overrides_file(void **state)
{
    (void)state;
    cn_config c;
    setenv("CAIRN_BASE", "/mnt/pmem0", 1);
    setenv("CAIRN_KEEP", "7", 1);
    setenv("CAIRN_BLOCK_SIZE", "64K", 1);
    setenv("CAIRN_IO", "pmem", 1);
    setenv("CAIRN_NODE", "emu-3", 1);
    setenv("CAIRN_RANKS_PER_NODE", "4", 1);
    setenv("CAIRN_LOG_LEVEL", "INFO", 1);
    setenv("CAIRN_JOB", "", 1);              /* empty: counts as unset */
    setenv("CAIRN_FAULT", "ckpt.write", 1);  /* not a config key: ignored */
    load_ok("[store]\nbase = /dev/shm/x\nkeep = 3\nblock_size = 4M\nio = write\n"
            "[job]\nid = fromfile\nnode = n1\nranks_per_node = 2\n[log]\nlevel = error\n",
            &c);
    assert_string_equal(c.base, "/mnt/pmem0");
    assert_int_equal(c.keep, 7);
    assert_int_equal(c.block_size, 65536);
    assert_int_equal(c.io, CN_IO_PMEM);
    assert_string_equal(c.job, "fromfile");
    assert_string_equal(c.node, "emu-3");
    assert_int_equal(c.ranks_per_node, 4);
    assert_int_equal(c.log_level, CN_LOG_INFO);
    assert_int_equal(c.prune_abandoned, 0); /* off by default */
    setenv("CAIRN_PRUNE_ABANDONED", "on", 1);
    load_ok("[store]\nprune_abandoned = off\n", &c);
    assert_int_equal(c.prune_abandoned, 1);

    /* Without a file too. */
    setenv("CAIRN_JOB", "envjob", 1);
    cn_err err = {0};
    assert_int_equal(cn_config_load(&c, NULL, &err), 0);
    assert_string_equal(c.job, "envjob");
    assert_int_equal(c.keep, 7);
}

static void test_env_bad_value(void **state)
{
    (void)state;
    const struct { const char *var, *value, *msg; } cases[] = {
        {"CAIRN_KEEP", "x", "environment CAIRN_KEEP: 'x' is not an integer"},
        {"CAIRN_KEEP", " 3", "environment CAIRN_KEEP: ' 3' is not an integer"},
        {"CAIRN_BLOCK_SIZE", "3M", "environment CAIRN_BLOCK_SIZE: '3M' must be a power of two"},
        {"CAIRN_IO", "mmap", "environment CAIRN_IO: 'mmap' must be one of auto, write, pmem"},
        {"CAIRN_JOB", "a/b", "environment CAIRN_JOB: 'a/b' is not 1-63 of"},
        {"CAIRN_BASE", "rel", "environment CAIRN_BASE: 'rel' is not an absolute path"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cn_config c;
        cn_err err = {0};
        setenv(cases[i].var, cases[i].value, 1);
        assert_int_equal(cn_config_load(&c, NULL, &err), CAIRN_ECONFIG);
        assert_int_equal(err.code, CAIRN_ECONFIG);
        assert_contains(err.msg, cases[i].msg);
        assert_defaults(&c);
        unsetenv(cases[i].var);
    }
    /* A long bad value is quoted shortened. */
    char base[4200];
    memset(base, 'a', sizeof base - 1);
    base[sizeof base - 1] = '\0';
    setenv("CAIRN_BASE", base, 1);
    cn_config c;
    cn_err err = {0};
    assert_int_equal(cn_config_load(&c, NULL, &err), CAIRN_ECONFIG);
    assert_contains(err.msg, "aaa...' is longer than 4095 bytes");
}

static void test_env_base_max(void **state)
{
    (void)state;
    char base[4096];
    base[0] = '/';
    memset(base + 1, 'b', sizeof base - 2);
    base[sizeof base - 1] = '\0';
    setenv("CAIRN_BASE", base, 1);
    cn_config c;
    cn_err err = {0};
    assert_int_equal(cn_config_load(&c, NULL, &err), 0);
    assert_string_equal(c.base, base);
}

static void test_reference(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    cn_config_reference(f);
    assert_int_equal(fclose(f), 0);
    assert_contains(buf, "| key | env | type | default | description |");
    assert_contains(buf, "last value");
    for (size_t i = 0; i < NKEYS; i++) {
        char row[128];
        snprintf(row, sizeof row, "| `%s` | `%s` |", KEYS[i][0], KEYS[i][1]);
        assert_contains(buf, row);
    }
    assert_contains(buf, "| integer 1..1000 | `2` |");
    assert_contains(buf, "| size 4K..1G | `1M` |");
    assert_contains(buf, "| one of auto, write, pmem | `auto` |");
    assert_contains(buf, "| one of error, warn, info, debug | `warn` |");
    assert_contains(buf, "| string | `/dev/shm` |");
    /* One table row per key, no more. */
    size_t rows = 0;
    for (const char *p = buf; (p = strstr(p, "\n| `")); p++)
        rows++;
    assert_int_equal(rows, NKEYS);
    free(buf);
}

static void test_when(void **state)
{
    (void)state;
    cn_config c;
    load_ok("[ckpt]\nevery_1 = 3\nevery_2 = 30s\nevery_4 = 1.5h\nauto = ON\n"
            "[fail]\nmtbf_2 = 12h\nmtbf_4 = 7d\n",
            &c);
    assert_int_equal(c.ckpt_every[1].iters, 3);
    assert_true(c.ckpt_every[1].seconds == 0);
    assert_int_equal(c.ckpt_every[2].iters, 0);
    assert_true(c.ckpt_every[2].seconds == 30);
    assert_int_equal(c.ckpt_every[3].iters, 0);
    assert_true(c.ckpt_every[3].seconds == 0);
    assert_true(c.ckpt_every[4].seconds == 5400);
    assert_int_equal(c.ckpt_auto, 1);
    assert_true(c.mtbf[1] == 0 && c.mtbf[2] == 43200 && c.mtbf[3] == 0 && c.mtbf[4] == 604800);
    setenv("CAIRN_CKPT_EVERY_1", "2m", 1); /* the environment wins, as for every key */
    setenv("CAIRN_FAIL_MTBF_3", "1d", 1);
    load_ok("[ckpt]\nevery_1 = 3\n", &c);
    assert_int_equal(c.ckpt_every[1].iters, 0);
    assert_true(c.ckpt_every[1].seconds == 120);
    assert_true(c.mtbf[3] == 86400);

    expect_value_error("ckpt.every_1", "3x", "is not an interval: N iterations, or a time: N "
                       "followed by s, m, h or d (e.g. 100, 30s, 1.5h)");
    expect_value_error("ckpt.every_3", "0", "must be more than 0");
    expect_value_error("ckpt.every_4", "-10s", "is not an interval");
    expect_value_error("ckpt.every_2", "2.5", "is not a whole number of iterations");
    expect_value_error("fail.mtbf_2", "3600", "needs a unit: s, m, h or d (e.g. 12h, 7d)");
    expect_value_error("fail.mtbf_1", "soon", "is not a duration: N followed by s, m, h or d");
    expect_value_error("ckpt.auto", "yes", "must be one of off, on");
}

static void test_when_env_bad(void **state)
{
    (void)state;
    cn_config c;
    cn_err err = {0};
    setenv("CAIRN_CKPT_EVERY_1", "abc", 1);
    assert_int_equal(cn_config_load(&c, NULL, &err), CAIRN_ECONFIG);
    assert_contains(err.msg, "environment CAIRN_CKPT_EVERY_1: 'abc' is not an interval");
    assert_defaults(&c);
    unsetenv("CAIRN_CKPT_EVERY_1");
    /* auto without any failure time: refused, whichever layer set it */
    setenv("CAIRN_CKPT_AUTO", "on", 1);
    assert_int_equal(cn_config_load(&c, NULL, &err), CAIRN_ECONFIG);
    assert_contains(err.msg, "ckpt.auto = on needs fail.mtbf_<L> for at least one level");
    assert_defaults(&c);
    load_ok("[fail]\nmtbf_3 = 2d\n", &c);
    assert_int_equal(c.ckpt_auto, 1);
}

/* CAIRN_CONFIG_FILE names the file when none is given; a given one wins. */
static void test_config_file_env(void **state)
{
    (void)state;
    char named[64], given[64];
    cn_config c;
    cn_err err = {0};
    write_tmp(named, "[store]\nkeep = 5\n[ckpt]\nevery_1 = 4\n");
    write_tmp(given, "[store]\nkeep = 6\n");
    setenv("CAIRN_CONFIG_FILE", named, 1);
    assert_int_equal(cn_config_load(&c, NULL, &err), 0);
    assert_int_equal(c.keep, 5);
    assert_int_equal(c.ckpt_every[1].iters, 4);
    assert_int_equal(cn_config_load(&c, given, &err), 0);
    assert_int_equal(c.keep, 6);
    assert_int_equal(c.ckpt_every[1].iters, 0);
    setenv("CAIRN_KEEP", "9", 1); /* the environment still wins over the named file */
    assert_int_equal(cn_config_load(&c, NULL, &err), 0);
    assert_int_equal(c.keep, 9);
    unsetenv("CAIRN_KEEP");
    setenv("CAIRN_CONFIG_FILE", "", 1); /* empty: unset */
    assert_int_equal(cn_config_load(&c, NULL, &err), 0);
    assert_defaults(&c);
    unlink(named);
    unlink(given);

    /* Errors in the named file say where the file name came from. */
    char want[256];
    write_tmp(named, "[store]\nkeep = 5\n[ckpt]\nevery_2 = often\n");
    setenv("CAIRN_CONFIG_FILE", named, 1);
    assert_int_equal(cn_config_load(&c, NULL, &err), CAIRN_ECONFIG);
    snprintf(want, sizeof want, "CAIRN_CONFIG_FILE: config %s:4: ckpt.every_2: 'often' is not "
             "an interval", named);
    assert_contains(err.msg, want);
    assert_defaults(&c);
    unlink(named);
    assert_int_equal(cn_config_load(&c, NULL, &err), CAIRN_ECONFIG);
    snprintf(want, sizeof want, "CAIRN_CONFIG_FILE: config %s: cannot open: No such file", named);
    assert_contains(err.msg, want);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, clear_env, clear_env)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_defaults),      T(test_full_file),          T(test_unknown_key),
        T(test_unknown_section), T(test_outside_section),  T(test_bad_int),
        T(test_out_of_range),  T(test_bad_size),           T(test_block_not_pow2),
        T(test_bad_enum),      T(test_bad_strings),        T(test_syntax_error),
        T(test_long_line),     T(test_missing_file),       T(test_env_overrides_file),
        T(test_env_bad_value), T(test_env_base_max),       T(test_reference),
        T(test_when),          T(test_when_env_bad),       T(test_config_file_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
