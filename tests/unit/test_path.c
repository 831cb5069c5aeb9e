/*
 * test_path.c - safe directories and small files (path.c) under a fresh
 * mkdtemp directory per test: symlinks planted where a directory should be,
 * loose modes, foreign owners, trees with links out of them, and atomic
 * replacement of small files.
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
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"

typedef struct fixture {
    char path[64];
    int fd; /* the temporary directory */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    strcpy(f->path, "/tmp/cairn-test-path-XXXXXX");
    if (!mkdtemp(f->path) || (f->fd = open(f->path, O_RDONLY | O_DIRECTORY)) < 0) {
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    close(f->fd);
    int rc = cn_rmtree_at(AT_FDCWD, f->path, NULL);
    free(f);
    return rc;
}

static void put_file(int dirfd, const char *name, const char *text)
{
    int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

static void expect_file(int dirfd, const char *name, const char *text)
{
    char buf[256] = {0};
    int fd = openat(dirfd, name, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(read(fd, buf, sizeof buf - 1), (ssize_t)strlen(text));
    close(fd);
    assert_string_equal(buf, text);
}

static bool exists(int dirfd, const char *name)
{
    struct stat st;
    return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static void expect_unsafe(int dirfd, const char *name, const char *what)
{
    cn_err err = {0};
    assert_int_equal(cn_dir_open(dirfd, name, true, &err), CAIRN_EUNSAFE);
    assert_int_equal(err.code, CAIRN_EUNSAFE);
    if (!strstr(err.msg, what))
        fail_msg("message '%s' lacks '%s'", err.msg, what);
    assert_int_equal(cn_dir_open(dirfd, name, false, &err), CAIRN_EUNSAFE);
}

/* ---- cn_dir_open ---------------------------------------------------- */

static void test_dir_open_creates_0700(void **state)
{
    fixture *f = *state;
    cn_err err = {0};
    mode_t old = umask(0);
    int fd = cn_dir_open(f->fd, "d", true, &err);
    umask(old);
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0700);
    assert_int_equal(st.st_uid, geteuid());
    /* The fd is the directory: create through it and find the file by name. */
    put_file(fd, "inside", "x");
    assert_true(exists(f->fd, "d/inside"));
    close(fd);

    fd = cn_dir_open(f->fd, "d", true, &err); /* exists already */
    assert_true(fd >= 0);
    close(fd);
    fd = cn_dir_open(f->fd, "d", false, &err);
    assert_true(fd >= 0);
    assert_int_equal(cn_dir_sync(fd, &err), 0);
    close(fd);

    assert_int_equal(cn_dir_open(f->fd, "missing", false, &err), -ENOENT);
    assert_false(exists(f->fd, "missing"));
    assert_int_equal(cn_dir_open(f->fd, "no/such/parent", true, &err), -ENOENT);

    fd = cn_dir_open_path(f->path, &err);
    assert_true(fd >= 0);
    assert_true(exists(fd, "d/inside"));
    close(fd);
    assert_int_equal(cn_dir_open_path("/nonexistent-cairn-dir", &err), -ENOENT);
}

static void test_dir_open_refuses_symlink(void **state)
{
    fixture *f = *state;
    assert_int_equal(mkdirat(f->fd, "target", 0700), 0);
    put_file(f->fd, "target/keep", "precious");
    char target[128];
    snprintf(target, sizeof target, "%s/target", f->path);
    assert_int_equal(symlinkat(target, f->fd, "link"), 0);
    expect_unsafe(f->fd, "link", "symlink");
    /* The target is untouched: same mode, same single file. */
    struct stat st;
    assert_int_equal(fstatat(f->fd, "target", &st, 0), 0);
    assert_int_equal(st.st_mode & 07777, 0700);
    expect_file(f->fd, "target/keep", "precious");

    /* A dangling link is not followed to create its target. */
    snprintf(target, sizeof target, "%s/made-by-link", f->path);
    assert_int_equal(symlinkat(target, f->fd, "dangling"), 0);
    expect_unsafe(f->fd, "dangling", "symlink");
    assert_false(exists(f->fd, "made-by-link"));

    /* A regular file where the directory should be. */
    put_file(f->fd, "plain", "");
    expect_unsafe(f->fd, "plain", "not a directory");
}

static void test_dir_open_refuses_loose_mode(void **state)
{
    fixture *f = *state;
    static const mode_t modes[] = {0755, 0750, 0701, 0702};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        char name[16];
        snprintf(name, sizeof name, "d%zu", i);
        assert_int_equal(mkdirat(f->fd, name, 0700), 0);
        assert_int_equal(fchmodat(f->fd, name, modes[i], 0), 0);
        char want[32];
        snprintf(want, sizeof want, "has mode %03o", (unsigned)modes[i]);
        expect_unsafe(f->fd, name, want);
        /* Refusing does not repair: the mode is left as found. */
        struct stat st;
        assert_int_equal(fstatat(f->fd, name, &st, 0), 0);
        assert_int_equal(st.st_mode & 07777, modes[i]);
    }
}

static void test_dir_open_refuses_foreign_owner(void **state)
{
    fixture *f = *state;
    uid_t other = geteuid() == 65534 ? 65533 : 65534;
    assert_int_equal(mkdirat(f->fd, "theirs", 0700), 0);
    if (fchownat(f->fd, "theirs", other, other, 0) != 0) {
        assert_int_equal(errno, EPERM);
        skip(); /* not root */
    }
    char want[32];
    snprintf(want, sizeof want, "owned by uid %u", (unsigned)other);
    expect_unsafe(f->fd, "theirs", want);
}

/* ---- cn_rmtree_at --------------------------------------------------- */

static void test_rmtree_does_not_follow_links(void **state)
{
    fixture *f = *state;
    int d = f->fd;
    assert_int_equal(mkdirat(d, "outside", 0700), 0);
    put_file(d, "outside/keep", "keep me");
    assert_int_equal(mkdirat(d, "outside/sub", 0700), 0);
    put_file(d, "outside/sub/deep", "me too");

    assert_int_equal(mkdirat(d, "tree", 0700), 0);
    assert_int_equal(mkdirat(d, "tree/a", 0700), 0);
    assert_int_equal(mkdirat(d, "tree/a/b", 0755), 0);
    assert_int_equal(mkdirat(d, "tree/empty", 0700), 0);
    put_file(d, "tree/top", "1");
    put_file(d, "tree/a/b/leaf", "2");
    char outside[128];
    snprintf(outside, sizeof outside, "%s/outside", f->path);
    assert_int_equal(symlinkat(outside, d, "tree/a/dirlink"), 0);
    assert_int_equal(symlinkat("../../outside/keep", d, "tree/a/filelink"), 0);
    assert_int_equal(symlinkat("/nonexistent", d, "tree/dangling"), 0);

    cn_err err = {0};
    assert_int_equal(cn_rmtree_at(d, "tree", &err), 0);
    assert_false(exists(d, "tree"));
    expect_file(d, "outside/keep", "keep me");
    expect_file(d, "outside/sub/deep", "me too");

    /* Missing is fine; a plain file or a lone symlink is removed. */
    assert_int_equal(cn_rmtree_at(d, "tree", &err), 0);
    put_file(d, "file", "x");
    assert_int_equal(cn_rmtree_at(d, "file", &err), 0);
    assert_false(exists(d, "file"));
    assert_int_equal(symlinkat(outside, d, "link"), 0);
    assert_int_equal(cn_rmtree_at(d, "link", &err), 0);
    assert_false(exists(d, "link"));
    expect_file(d, "outside/keep", "keep me");
}

/* ---- small files ---------------------------------------------------- */

static void test_write_atomic_read_small(void **state)
{
    fixture *f = *state;
    int d = f->fd;
    uint8_t data[1000];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 13 + 5);
    cn_err err = {0};
    assert_int_equal(cn_write_atomic(d, "m", data, sizeof data, &err), 0);
    assert_false(exists(d, "m.tmp"));
    struct stat st;
    assert_int_equal(fstatat(d, "m", &st, 0), 0);
    assert_int_equal(st.st_mode & 07777, 0600);

    uint8_t *buf = NULL;
    size_t len = 0;
    assert_int_equal(cn_read_small(d, "m", sizeof data, &buf, &len, &err), 0);
    assert_int_equal(len, sizeof data);
    assert_memory_equal(buf, data, sizeof data);
    free(buf);

    /* One byte over the limit is refused, with nothing returned. */
    buf = (uint8_t *)1;
    assert_int_equal(cn_read_small(d, "m", sizeof data - 1, &buf, &len, &err), CAIRN_ECORRUPT);
    assert_null(buf);
    assert_int_equal(len, 0);
    assert_non_null(strstr(err.msg, "m is 1000 bytes, more than the 999 allowed"));

    /* Replacing: new contents, stale .tmp swept away. */
    put_file(d, "m.tmp", "stale");
    assert_int_equal(cn_write_atomic(d, "m", "short", 5, &err), 0);
    assert_false(exists(d, "m.tmp"));
    assert_int_equal(cn_read_small(d, "m", 100, &buf, &len, &err), 0);
    assert_int_equal(len, 5);
    assert_memory_equal(buf, "short", 5);
    free(buf);

    /* A symlink planted as the .tmp is replaced, not written through. */
    put_file(d, "victim", "untouched");
    assert_int_equal(symlinkat("victim", d, "n.tmp"), 0);
    assert_int_equal(cn_write_atomic(d, "n", "new", 3, &err), 0);
    expect_file(d, "victim", "untouched");
    expect_file(d, "n", "new");

    /* Empty files read as zero bytes. */
    assert_int_equal(cn_write_atomic(d, "empty", "", 0, &err), 0);
    assert_int_equal(cn_read_small(d, "empty", 10, &buf, &len, &err), 0);
    assert_non_null(buf);
    assert_int_equal(len, 0);
    free(buf);
}

static void test_read_small_refuses_non_regular(void **state)
{
    fixture *f = *state;
    int d = f->fd;
    uint8_t *buf = NULL;
    size_t len = 0;
    cn_err err = {0};
    assert_int_equal(mkdirat(d, "dir", 0700), 0);
    assert_int_equal(cn_read_small(d, "dir", 1 << 20, &buf, &len, &err), CAIRN_EUNSAFE);
    assert_string_equal(err.msg, "dir is not a regular file");
    assert_null(buf);

    put_file(d, "real", "secret");
    assert_int_equal(symlinkat("real", d, "link"), 0);
    assert_int_equal(cn_read_small(d, "link", 1 << 20, &buf, &len, &err), -ELOOP);
    assert_null(buf);
    assert_int_equal(cn_read_small(d, "missing", 1 << 20, &buf, &len, &err), -ENOENT);
    assert_null(buf);
    assert_int_equal(len, 0);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_dir_open_creates_0700),
        T(test_dir_open_refuses_symlink),
        T(test_dir_open_refuses_loose_mode),
        T(test_dir_open_refuses_foreign_owner),
        T(test_rmtree_does_not_follow_links),
        T(test_write_atomic_read_small),
        T(test_read_small_refuses_non_regular),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
