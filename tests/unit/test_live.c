/*
 * test_live.c - the running application's mark (src/common/live.c): the
 * locks cairn prune relies on to see and hold an application, between two
 * open file descriptions as between two processes, and the parents' record.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"

static int tmpdir(char *path, size_t len)
{
    snprintf(path, len, "/tmp/cairn-live.XXXXXX");
    assert_non_null(mkdtemp(path));
    int fd = open(path, O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    return fd;
}

static void cleanup(int dirfd, const char *path)
{
    unlinkat(dirfd, CN_LIVE_NAME, 0);
    close(dirfd);
    rmdir(path);
}

static void test_locks(void **state)
{
    (void)state;
    char path[64];
    int dirfd = tmpdir(path, sizeof path);
    assert_int_equal(cn_live_open(dirfd, false), -ENOENT); /* no application ever ran */
    int app = cn_live_open(dirfd, true), prune = cn_live_open(dirfd, false);
    assert_true(app >= 0 && prune >= 0);
    assert_false(cn_live_taken(prune, CN_LIVE_ALIVE)); /* the file, but nobody alive */
    assert_int_equal(cn_live_lock(app, CN_LIVE_ALIVE, false, 0), 0);
    assert_true(cn_live_taken(prune, CN_LIVE_ALIVE));
    /* a checkpoint under way: prune cannot hold the application yet */
    assert_int_equal(cn_live_lock(app, CN_LIVE_BUSY, false, 0), 0);
    assert_int_equal(cn_live_lock(prune, CN_LIVE_BUSY, true, 30), -EAGAIN);
    cn_live_unlock(app, CN_LIVE_BUSY);
    assert_int_equal(cn_live_lock(prune, CN_LIVE_BUSY, true, 0), 0);
    /* held: the next checkpoint waits, and is still alive to prune */
    assert_int_equal(cn_live_lock(app, CN_LIVE_BUSY, false, 30), -EAGAIN);
    assert_true(cn_live_taken(prune, CN_LIVE_ALIVE));
    close(prune); /* prune done: the application goes on */
    assert_int_equal(cn_live_lock(app, CN_LIVE_BUSY, false, 0), 0);
    close(app); /* the application ends, however: its locks go with it */
    prune = cn_live_open(dirfd, false);
    assert_false(cn_live_taken(prune, CN_LIVE_ALIVE));
    close(prune);
    cleanup(dirfd, path);
}

static void test_record(void **state)
{
    (void)state;
    char path[64];
    int dirfd = tmpdir(path, sizeof path);
    int fd = cn_live_open(dirfd, true);
    const long want[3] = {9223372036854775807L, 12, -1};
    long got[3] = {0}, pid = 0;
    assert_int_equal(cn_live_write(fd, 4242, (const long[3]){1, 2, 3}), 0);
    assert_int_equal(cn_live_write(fd, 77, want), 0); /* rewritten in place, shorter or not */
    assert_int_equal(cn_live_read(fd, &pid, got), 0);
    assert_int_equal(pid, 77);
    assert_memory_equal(got, want, sizeof want);
    assert_int_equal(ftruncate(fd, 0), 0);
    assert_int_equal(pwrite(fd, "cairn-live 1\npid x\n", 19, 0), 19);
    assert_int_equal(cn_live_read(fd, &pid, got), CAIRN_ECORRUPT);
    close(fd);
    /* a symlink in its place is never followed */
    unlinkat(dirfd, CN_LIVE_NAME, 0);
    assert_int_equal(symlinkat("/etc/passwd", dirfd, CN_LIVE_NAME), 0);
    assert_int_equal(cn_live_open(dirfd, true), -ELOOP);
    cleanup(dirfd, path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_locks),
        cmocka_unit_test(test_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
