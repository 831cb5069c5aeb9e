/*
 * test_pfsfile.c - one file written to the PFS (pfs.c: lvl_pfs_create,
 * _append, _commit, _abort): appends cut at page boundaries, the pieces
 * between two cuts staged, must give the file the bytes appended, in order,
 * whatever the sizes of the appends: single bytes, a frame header then its
 * payload, pieces ending one short of a page, on it, one past it, and pieces
 * of several pages. The committed file has the size appended; an aborted one
 * leaves nothing; a file whose appends all fit in the stage is written at the
 * commit.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"
#include "levels/pfs/pfs.h"

static char dir[] = "/tmp/cairn-test-pfsfile.XXXXXX";

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* The whole of NAME under DIRFD; *LEN its size. */
static uint8_t *slurp(int dirfd, const char *name, size_t *len)
{
    int fd = openat(dirfd, name, O_RDONLY);
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    uint8_t *b = malloc((size_t)st.st_size + 1);
    assert_non_null(b);
    assert_int_equal(pread(fd, b, (size_t)st.st_size, 0), st.st_size);
    close(fd);
    *len = (size_t)st.st_size;
    return b;
}

/* Appends of the sizes SIZES[0..N-1] (cycled until TOTAL bytes), from one
 * buffer of numbered bytes; the committed file must hold them all, in order. */
static void round_trip(const char *name, const size_t *sizes, size_t n, size_t total)
{
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(dirfd >= 0);
    uint8_t *src = malloc(total);
    assert_non_null(src);
    for (size_t i = 0; i < total; i++)
        src[i] = (uint8_t)(i * 131 + i / 4093);
    lvl_pfs_file *f = NULL;
    cn_err err = {0};
    assert_int_equal(lvl_pfs_create(dirfd, name, 0, &f, &err), 0);
    size_t at = 0;
    for (size_t k = 0; at < total; k++) {
        size_t len = sizes[k % n] < total - at ? sizes[k % n] : total - at;
        assert_int_equal(lvl_pfs_append(f, src + at, len, &err), 0);
        at += len;
    }
    cn_pfile pf = {0};
    assert_int_equal(lvl_pfs_commit(f, dirfd, 0x5eed, &pf, &err), 0);
    assert_int_equal(pf.size, total);
    assert_int_equal(pf.sum, 0x5eed);
    size_t len = 0;
    uint8_t *got = slurp(dirfd, name, &len);
    assert_int_equal(len, total);
    assert_memory_equal(got, src, total);
    char tmp[80];
    snprintf(tmp, sizeof tmp, "%s.tmp", name);
    assert_int_equal(faccessat(dirfd, tmp, F_OK, 0), -1); /* renamed into place */
    free(got);
    free(src);
    close(dirfd);
}

static void frames(void **state)
{
    (void)state;
    /* cairn's own pattern: the file's header, then frame headers and payloads */
    const size_t s[] = {64, 24, 262144, 24, 262144, 24, 100000, 24, 4 << 20};
    round_trip("frames", s, sizeof s / sizeof *s, 9u << 20);
}

static void awkward(void **state)
{
    (void)state;
    const size_t s[] = {1, 4095, 4096, 4097, 1, 1, 8191, 8192, 8193, 3, 12288, 4094, 2, 65537};
    round_trip("awkward", s, sizeof s / sizeof *s, 3u << 20);
}

static void bytes(void **state)
{
    (void)state;
    const size_t s[] = {1};
    round_trip("bytes", s, 1, 3 * 4096 + 5);
}

static void all_staged(void **state)
{
    (void)state;
    const size_t s[] = {10, 20};
    round_trip("small", s, 2, 100); /* nothing written before the commit */
    const size_t one[] = {4096};
    round_trip("page", one, 1, 4096);
    round_trip("empty", one, 1, 0);
}

static void aborted(void **state)
{
    (void)state;
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(dirfd >= 0);
    lvl_pfs_file *f = NULL;
    cn_err err = {0};
    uint8_t b[5000] = {0};
    assert_int_equal(lvl_pfs_create(dirfd, "gone", 0, &f, &err), 0);
    assert_int_equal(lvl_pfs_append(f, b, sizeof b, &err), 0);
    lvl_pfs_abort(f, dirfd);
    assert_int_equal(faccessat(dirfd, "gone.tmp", F_OK, 0), -1);
    assert_int_equal(faccessat(dirfd, "gone", F_OK, 0), -1);
    close(dirfd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(frames),   cmocka_unit_test(awkward), cmocka_unit_test(bytes),
        cmocka_unit_test(all_staged), cmocka_unit_test(aborted),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
