/*
 * trace.c - an LD_PRELOAD tracer of the file-system operations a program makes
 * under some directories: the recorder behind the crash-state test
 * (tests/crash/README.md, tests/crash/crashstates.py).
 *
 *   CRASH_TRACE=FILE CRASH_ROOTS=DIR[:DIR...] LD_PRELOAD=build/tests/crash/libtrace.so PROGRAM
 *
 * Every successful call that changes a file or a directory under one of the
 * ROOTS, or makes one durable, is appended to FILE as one text line; the bytes
 * of each write go to FILE.data and the line names their offset there. The
 * library calls libc (and libpmem) through the PLT, so interposing the
 * exported symbols sees every call it makes. Traced: open/open64/openat/
 * openat64/creat, write/pwrite/pwrite64/writev/pwritev, ftruncate, fallocate,
 * posix_fallocate, rename/renameat/renameat2, mkdir/mkdirat, unlink/unlinkat,
 * rmdir, fsync/fdatasync/syncfs/sync/sync_file_range, dup/dup2/dup3, close;
 * stdio's fopen/fclose, and libpmem's pmem_map_file/pmem_unmap/pmem_msync/
 * pmem_persist/pmem_memcpy_nodrain/pmem_drain (trace_pmem.c: a mapping's
 * bytes are recorded as a write when they are made durable).
 *
 * Lines (paths last, absolute, as resolved at the time of the call):
 *   open FD CREATED TRUNC ISDIR PATH     write FD OFF LEN DATAOFF
 *   trunc FD LEN    grow FD LEN (fallocate)    falloc_keep FD OFF LEN (keeps the size)
 *   fsync FD | fdatasync FD | sfr FD | syncfs FD | sync    close FD    dup OLDFD NEWFD
 *   mkdir PATH    rmdir PATH    unlink PATH    rename OLD\tNEW    exchange A\tB
 *   pmem ADDR LEN PATH (a mapping)    mflush ADDR OFF LEN DATAOFF (bytes made durable)
 *   munmap ADDR
 * A mutex orders the lines of concurrent threads; the tracer owns its fd
 * table (which fds are under a root) and the two output files. This file:
 * the outputs and the libc calls; trace_pmem.c: stdio and libpmem.
 */
#include "trace.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


pthread_mutex_t tr_mu = PTHREAD_MUTEX_INITIALIZER;
static int log_fd = -2, data_fd = -1; /* -2: not opened yet */
static off_t data_off;
static char roots[8][PATH_MAX];
static int nroots;
unsigned char tr_fds[TR_MAXFD];

REAL(int, open, const char *, int, ...)
REAL(int, open64, const char *, int, ...)
REAL(int, openat, int, const char *, int, ...)
REAL(int, openat64, int, const char *, int, ...)
REAL(int, creat, const char *, mode_t)
REAL(ssize_t, write, int, const void *, size_t)
REAL(ssize_t, pwrite, int, const void *, size_t, off_t)
REAL(ssize_t, pwrite64, int, const void *, size_t, off_t)
REAL(ssize_t, writev, int, const struct iovec *, int)
REAL(ssize_t, pwritev, int, const struct iovec *, int, off_t)
REAL(int, ftruncate, int, off_t)
REAL(int, fallocate, int, int, off_t, off_t)
REAL(int, posix_fallocate, int, off_t, off_t)
REAL(int, rename, const char *, const char *)
REAL(int, renameat, int, const char *, int, const char *)
REAL(int, renameat2, int, const char *, int, const char *, unsigned)
REAL(int, mkdir, const char *, mode_t)
REAL(int, mkdirat, int, const char *, mode_t)
REAL(int, unlink, const char *)
REAL(int, unlinkat, int, const char *, int)
REAL(int, rmdir, const char *)
REAL(int, fsync, int)
REAL(int, fdatasync, int)
REAL(int, syncfs, int)
REAL(void, sync, void)
REAL(int, sync_file_range, int, off_t, off_t, unsigned)
REAL(int, close, int)
REAL(int, dup, int)
REAL(int, dup2, int, int)
REAL(int, dup3, int, int, int)

/* Open the outputs and read the roots, once (under tr_mu). 0 when tracing is on. */
int tr_setup(void)
{
    if (log_fd != -2)
        return log_fd >= 0 ? 0 : -1;
    log_fd = -1;
    const char *t = getenv("CRASH_TRACE"), *r = getenv("CRASH_ROOTS");
    if (!t || !r)
        return -1;
    char data[PATH_MAX];
    snprintf(data, sizeof data, "%s.data", t);
    int fd = get_open()(t, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    data_fd = get_open()(data, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0 || data_fd < 0) {
        fprintf(stderr, "trace: cannot open %s or %s\n", t, data);
        abort(); /* a trace that silently records nothing would prove nothing */
    }
    data_off = lseek(data_fd, 0, SEEK_END);
    for (const char *p = r; *p && nroots < 8;) {
        const char *e = strchr(p, ':');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n && n < PATH_MAX) {
            memcpy(roots[nroots], p, n);
            roots[nroots][n] = '\0';
            while (n > 1 && roots[nroots][n - 1] == '/')
                roots[nroots][--n] = '\0';
            nroots++;
        }
        p += n + (e ? 1 : 0);
    }
    log_fd = fd;
    return 0;
}

int tr_under_root(const char *path)
{
    for (int i = 0; i < nroots; i++) {
        size_t n = strlen(roots[i]);
        if (strncmp(path, roots[i], n) == 0 && (path[n] == '/' || path[n] == '\0'))
            return 1;
    }
    return 0;
}

/* The absolute path of NAME relative to DIRFD (AT_FDCWD or a directory fd). */
void tr_resolve(int dirfd, const char *name, char *out, size_t len)
{
    char dir[PATH_MAX] = "";
    if (name[0] == '/') {
        snprintf(out, len, "%s", name);
        return;
    }
    if (dirfd == AT_FDCWD) {
        if (!getcwd(dir, sizeof dir))
            dir[0] = '\0';
    } else {
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
        ssize_t n = readlink(link, dir, sizeof dir - 1);
        dir[n > 0 ? n : 0] = '\0';
    }
    snprintf(out, len, "%s/%s", dir, name);
}

void tr_emit(const char *fmt, ...)
{
    char line[2 * PATH_MAX + 128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof line - 2)
        n = sizeof line - 2;
    line[n++] = '\n';
    if (get_write()(log_fd, line, (size_t)n) != n)
        abort();
}

/* Append LEN bytes to the data file; return their offset there. */
off_t tr_put_data(const struct iovec *iov, int cnt, size_t len)
{
    off_t at = data_off;
    for (int i = 0; i < cnt; i++) {
        const char *p = iov[i].iov_base;
        size_t left = iov[i].iov_len;
        while (left > 0) {
            ssize_t w = get_write()(data_fd, p, left);
            if (w <= 0)
                abort();
            p += w;
            left -= (size_t)w;
        }
    }
    data_off += (off_t)len;
    return at;
}

int tr_is_tracked(int fd)
{
    return fd >= 0 && fd < TR_MAXFD && tr_fds[fd];
}

void tr_after_open(int dirfd, const char *path, int flags, int existed, int fd)
{
    if (fd < 0 || fd >= TR_MAXFD)
        return;
    pthread_mutex_lock(&tr_mu);
    tr_fds[fd] = 0;
    if (tr_setup() == 0) {
        char abs[PATH_MAX];
        tr_resolve(dirfd, path, abs, sizeof abs);
        if (tr_under_root(abs)) {
            struct stat st;
            int isdir = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
            tr_fds[fd] = 1;
            tr_emit("open %d %d %d %d %s", fd, (flags & O_CREAT) && !existed,
                 (flags & O_TRUNC) && !isdir, isdir, abs);
        }
    }
    pthread_mutex_unlock(&tr_mu);
}

int tr_exists_at(int dirfd, const char *path)
{
    struct stat st;
    return fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static mode_t mode_arg(int flags, va_list ap)
{
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

/* The open family: note whether the entry existed, call, record the fd. */
#define OPEN_LIKE(name, dirfd, ...)                                                                \
    {                                                                                              \
        va_list ap;                                                                                \
        va_start(ap, flags);                                                                       \
        mode_t m = mode_arg(flags, ap);                                                            \
        va_end(ap);                                                                                \
        int existed = (flags & O_CREAT) ? tr_exists_at(dirfd, path) : 1;                              \
        int fd = get_##name()(__VA_ARGS__, flags, m);                                              \
        int e = errno;                                                                             \
        tr_after_open(dirfd, path, flags, existed, fd);                                               \
        errno = e;                                                                                 \
        return fd;                                                                                 \
    }
int open(const char *path, int flags, ...) OPEN_LIKE(open, AT_FDCWD, path)
int open64(const char *path, int flags, ...) OPEN_LIKE(open64, AT_FDCWD, path)
int openat(int dirfd, const char *path, int flags, ...) OPEN_LIKE(openat, dirfd, dirfd, path)
int openat64(int dirfd, const char *path, int flags, ...) OPEN_LIKE(openat64, dirfd, dirfd, path)
int creat(const char *path, mode_t mode)
{
    int existed = tr_exists_at(AT_FDCWD, path);
    int fd = get_creat()(path, mode);
    int e = errno;
    tr_after_open(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, existed, fd);
    errno = e;
    return fd;
}

/* A write of LEN bytes at OFF (-1: the fd's position before the call). */
void tr_log_write(int fd, const struct iovec *iov, int cnt, ssize_t done, off_t off)
{
    if (done <= 0 || !tr_is_tracked(fd))
        return;
    pthread_mutex_lock(&tr_mu);
    if (tr_setup() == 0) {
        struct iovec part[64];
        int n = 0;
        size_t left = (size_t)done;
        for (int i = 0; i < cnt && left > 0 && n < 64; i++, n++) {
            part[n] = iov[i];
            if (part[n].iov_len > left)
                part[n].iov_len = left;
            left -= part[n].iov_len;
        }
        off_t at = tr_put_data(part, n, (size_t)done);
        tr_emit("write %d %lld %lld %lld", fd, (long long)off, (long long)done, (long long)at);
    }
    pthread_mutex_unlock(&tr_mu);
}

ssize_t write(int fd, const void *buf, size_t len)
{
    off_t pos = tr_is_tracked(fd) ? lseek(fd, 0, SEEK_CUR) : -1;
    ssize_t r = get_write()(fd, buf, len);
    int e = errno;
    struct iovec v = {(void *)buf, len};
    tr_log_write(fd, &v, 1, r, pos);
    errno = e;
    return r;
}
ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
    ssize_t r = get_pwrite()(fd, buf, len, off);
    int e = errno;
    struct iovec v = {(void *)buf, len};
    tr_log_write(fd, &v, 1, r, off);
    errno = e;
    return r;
}
ssize_t pwrite64(int fd, const void *buf, size_t len, off_t off)
{
    ssize_t r = get_pwrite64()(fd, buf, len, off);
    int e = errno;
    struct iovec v = {(void *)buf, len};
    tr_log_write(fd, &v, 1, r, off);
    errno = e;
    return r;
}
ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    off_t pos = tr_is_tracked(fd) ? lseek(fd, 0, SEEK_CUR) : -1;
    ssize_t r = get_writev()(fd, iov, cnt);
    int e = errno;
    tr_log_write(fd, iov, cnt, r, pos);
    errno = e;
    return r;
}
ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    ssize_t r = get_pwritev()(fd, iov, cnt, off);
    int e = errno;
    tr_log_write(fd, iov, cnt, r, off);
    errno = e;
    return r;
}

/* One line about a tracked fd, when the call succeeded. */
static int fd_op(int rc, int fd, const char *fmt, long long a, long long b)
{
    int e = errno;
    if (rc == 0 && tr_is_tracked(fd)) {
        pthread_mutex_lock(&tr_mu);
        if (tr_setup() == 0)
            tr_emit(fmt, fd, a, b);
        pthread_mutex_unlock(&tr_mu);
    }
    errno = e;
    return rc;
}

int ftruncate(int fd, off_t len)
{
    return fd_op(get_ftruncate()(fd, len), fd, "trunc %d %lld", (long long)len, 0);
}
/* fallocate without FALLOC_FL_KEEP_SIZE (mode 0) can only grow the file: a
 * truncate to OFF+LEN when that is longer (the replayer keeps the larger size).
 * KEEP_SIZE alone changes nothing a reader sees; any other mode (punching
 * holes, zeroing, collapsing) is logged as falloc_other, which the replayer
 * refuses to model rather than get wrong. */
int fallocate(int fd, int mode, off_t off, off_t len)
{
    int rc = get_fallocate()(fd, mode, off, len);
    if (mode == FALLOC_FL_KEEP_SIZE)
        return fd_op(rc, fd, "falloc_keep %d %lld %lld", (long long)off, (long long)len);
    if (mode != 0)
        return fd_op(rc, fd, "falloc_other %d %lld %lld", (long long)mode, (long long)off);
    return fd_op(rc, fd, "grow %d %lld %lld", (long long)(off + len), 0);
}
int posix_fallocate(int fd, off_t off, off_t len)
{
    int rc = get_posix_fallocate()(fd, off, len);
    return fd_op(rc == 0 ? 0 : -1, fd, "grow %d %lld %lld", (long long)(off + len), 0) == 0 ? 0 : rc;
}
int fsync(int fd)
{
    return fd_op(get_fsync()(fd), fd, "fsync %d", 0, 0);
}
int fdatasync(int fd)
{
    return fd_op(get_fdatasync()(fd), fd, "fdatasync %d", 0, 0);
}
int sync_file_range(int fd, off_t off, off_t n, unsigned flags)
{
    return fd_op(get_sync_file_range()(fd, off, n, flags), fd, "sfr %d", 0, 0);
}
int syncfs(int fd)
{
    int rc = get_syncfs()(fd);
    int e = errno;
    if (rc == 0) {
        pthread_mutex_lock(&tr_mu);
        if (tr_setup() == 0)
            tr_emit("syncfs %d", fd);
        pthread_mutex_unlock(&tr_mu);
    }
    errno = e;
    return rc;
}
void sync(void)
{
    get_sync()();
    pthread_mutex_lock(&tr_mu);
    if (tr_setup() == 0)
        tr_emit("sync");
    pthread_mutex_unlock(&tr_mu);
}
int close(int fd)
{
    int was = tr_is_tracked(fd);
    int rc = get_close()(fd);
    int e = errno;
    if (was) {
        pthread_mutex_lock(&tr_mu);
        tr_fds[fd] = 0;
        if (tr_setup() == 0)
            tr_emit("close %d", fd);
        pthread_mutex_unlock(&tr_mu);
    }
    errno = e;
    return rc;
}

static int after_dup(int old, int nfd)
{
    int e = errno;
    if (nfd >= 0 && nfd < TR_MAXFD && nfd != old) {
        pthread_mutex_lock(&tr_mu);
        int was = tr_fds[nfd];
        tr_fds[nfd] = (unsigned char)tr_is_tracked(old);
        if (tr_setup() == 0 && was)
            tr_emit("close %d", nfd);
        if (tr_setup() == 0 && tr_fds[nfd])
            tr_emit("dup %d %d", old, nfd);
        pthread_mutex_unlock(&tr_mu);
    }
    errno = e;
    return nfd;
}
int dup(int old)
{
    return after_dup(old, get_dup()(old));
}
int dup2(int old, int nfd)
{
    return after_dup(old, get_dup2()(old, nfd));
}
int dup3(int old, int nfd, int flags)
{
    return after_dup(old, get_dup3()(old, nfd, flags));
}

/* A directory operation on one or two paths, logged when it succeeded under a root. */
static int path_op(int rc, const char *op, int d1, const char *p1, int d2, const char *p2)
{
    int e = errno;
    if (rc == 0) {
        pthread_mutex_lock(&tr_mu);
        if (tr_setup() == 0) {
            char a[PATH_MAX], b[PATH_MAX] = "";
            tr_resolve(d1, p1, a, sizeof a);
            if (p2)
                tr_resolve(d2, p2, b, sizeof b);
            if (tr_under_root(a) || (p2 && tr_under_root(b)))
                tr_emit(p2 ? "%s %s\t%s" : "%s %s", op, a, b);
        }
        pthread_mutex_unlock(&tr_mu);
    }
    errno = e;
    return rc;
}

/* tr_resolve() reads the directory fd's link after the call: a rename of the
 * directory itself by the same call cannot happen (the paths name entries in it). */
int rename(const char *a, const char *b)
{
    return path_op(get_rename()(a, b), "rename", AT_FDCWD, a, AT_FDCWD, b);
}
int renameat(int da, const char *a, int db, const char *b)
{
    return path_op(get_renameat()(da, a, db, b), "rename", da, a, db, b);
}
int renameat2(int da, const char *a, int db, const char *b, unsigned flags)
{
    /* RENAME_NOREPLACE is a rename that succeeded; RENAME_EXCHANGE swaps two entries. */
    return path_op(get_renameat2()(da, a, db, b, flags), (flags & 2) ? "exchange" : "rename", da,
                   a, db, b);
}
int mkdir(const char *p, mode_t m)
{
    return path_op(get_mkdir()(p, m), "mkdir", AT_FDCWD, p, 0, NULL);
}
int mkdirat(int d, const char *p, mode_t m)
{
    return path_op(get_mkdirat()(d, p, m), "mkdir", d, p, 0, NULL);
}
int unlink(const char *p)
{
    return path_op(get_unlink()(p), "unlink", AT_FDCWD, p, 0, NULL);
}
int unlinkat(int d, const char *p, int flags)
{
    return path_op(get_unlinkat()(d, p, flags), (flags & AT_REMOVEDIR) ? "rmdir" : "unlink", d, p,
                   0, NULL);
}
int rmdir(const char *p)
{
    return path_op(get_rmdir()(p), "rmdir", AT_FDCWD, p, 0, NULL);
}

