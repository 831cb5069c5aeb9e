/*
 * trace_pmem.c - the crash-state tracer's view of stdio and libpmem (see
 * trace.c for the trace format; trace.h for what the two files share).
 * stdio: libc writes a FILE's buffer with internal calls no interposer sees,
 * so fclose records the file's whole content as one write. libpmem: the file
 * is opened, sized and closed inside pmem_map_file (traced in trace.c as they
 * happen); the mapping is remembered here, and its bytes are recorded when
 * libpmem makes them durable (msync, persist, drain).
 */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <libpmem.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXMAP 64
static struct {
    char *addr;
    size_t len;
} maps[MAXMAP];

REAL(int, open, const char *, int, ...)
REAL(int, close, int)
REAL(void *, pmem_map_file, const char *, size_t, int, mode_t, size_t *, int *)
REAL(int, pmem_unmap, void *, size_t)
REAL(int, pmem_msync, const void *, size_t)
REAL(void, pmem_persist, const void *, size_t)
REAL(void, pmem_drain, void)
REAL(void *, pmem_memcpy_nodrain, void *, const void *, size_t)

REAL(FILE *, fopen, const char *, const char *)
REAL(int, fclose, FILE *)
static int stdio_flags(const char *mode)
{
    int f = strchr(mode, '+') ? O_RDWR : (mode[0] == 'r' ? O_RDONLY : O_WRONLY);
    if (mode[0] == 'w')
        f |= O_CREAT | O_TRUNC;
    if (mode[0] == 'a')
        f |= O_CREAT | O_APPEND;
    return f;
}
FILE *fopen(const char *path, const char *mode)
{
    int flags = stdio_flags(mode);
    int existed = (flags & O_CREAT) ? tr_exists_at(AT_FDCWD, path) : 1;
    FILE *f = get_fopen()(path, mode);
    int e = errno;
    if (f)
        tr_after_open(AT_FDCWD, path, flags, existed, fileno(f));
    errno = e;
    return f;
}
FILE *fopen64(const char *path, const char *mode) __attribute__((alias("fopen")));
int fclose(FILE *f)
{
    int fd = fileno(f);
    if (tr_is_tracked(fd) && fflush(f) == 0) {
        char self[64], *buf = NULL;
        snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
        int rd = get_open()(self, O_RDONLY | O_CLOEXEC);
        off_t n = rd >= 0 ? lseek(rd, 0, SEEK_END) : -1;
        if (n > 0 && (buf = malloc((size_t)n)) && pread(rd, buf, (size_t)n, 0) == n) {
            struct iovec v = {buf, (size_t)n};
            tr_log_write(fd, &v, 1, n, 0);
        }
        free(buf);
        if (rd >= 0)
            get_close()(rd);
    }
    int rc = get_fclose()(f);
    int e = errno;
    if (fd >= 0 && fd < TR_MAXFD && tr_fds[fd]) {
        pthread_mutex_lock(&tr_mu);
        tr_fds[fd] = 0;
        tr_emit("close %d", fd);
        pthread_mutex_unlock(&tr_mu);
    }
    errno = e;
    return rc;
}

void *pmem_map_file(const char *path, size_t len, int flags, mode_t mode, size_t *mapped,
                    int *is_pmem)
{
    size_t got = 0;
    void *m = get_pmem_map_file()(path, len, flags, mode, &got, is_pmem);
    int e = errno;
    if (mapped)
        *mapped = got;
    if (m) {
        pthread_mutex_lock(&tr_mu);
        char abs[PATH_MAX];
        tr_resolve(AT_FDCWD, path, abs, sizeof abs);
        if (tr_setup() == 0 && tr_under_root(abs)) {
            for (int i = 0; i < MAXMAP; i++)
                if (!maps[i].addr) {
                    maps[i].addr = m;
                    maps[i].len = got;
                    tr_emit("pmem %p %zu %s", m, got, abs);
                    break;
                }
        }
        pthread_mutex_unlock(&tr_mu);
    }
    errno = e;
    return m;
}

/* Record ADDR..ADDR+LEN of a traced mapping as bytes made durable. */
static void mflush(const void *addr, size_t len)
{
    pthread_mutex_lock(&tr_mu);
    for (int i = 0; i < MAXMAP; i++) {
        char *b = maps[i].addr;
        if (!b || (const char *)addr < b || (const char *)addr >= b + maps[i].len)
            continue;
        size_t off = (size_t)((const char *)addr - b);
        if (len > maps[i].len - off)
            len = maps[i].len - off;
        struct iovec v = {(void *)addr, len};
        off_t at = tr_put_data(&v, 1, len);
        tr_emit("mflush %p %zu %zu %lld", (void *)b, off, len, (long long)at);
        break;
    }
    pthread_mutex_unlock(&tr_mu);
}

int pmem_msync(const void *addr, size_t len)
{
    int rc = get_pmem_msync()(addr, len);
    if (rc == 0)
        mflush(addr, len);
    return rc;
}
void pmem_persist(const void *addr, size_t len)
{
    get_pmem_persist()(addr, len);
    mflush(addr, len);
}
/* pmem_memcpy_nodrain then pmem_drain: the bytes are durable at the drain. On
 * real persistent memory only (is_pmem); the copies are noted, the drain flushes them. */
static struct {
    void *dst;
    size_t len;
} pending[4096];
static int npending;
void *pmem_memcpy_nodrain(void *dst, const void *src, size_t len)
{
    void *r = get_pmem_memcpy_nodrain()(dst, src, len);
    pthread_mutex_lock(&tr_mu);
    if (npending < 4096)
        pending[npending++].dst = dst, pending[npending - 1].len = len;
    else
        abort(); /* more than the tracer can remember: better no trace than a wrong one */
    pthread_mutex_unlock(&tr_mu);
    return r;
}
void pmem_drain(void)
{
    get_pmem_drain()();
    pthread_mutex_lock(&tr_mu);
    int n = npending;
    npending = 0;
    pthread_mutex_unlock(&tr_mu);
    for (int i = 0; i < n; i++)
        mflush(pending[i].dst, pending[i].len);
}
int pmem_unmap(void *addr, size_t len)
{
    int rc = get_pmem_unmap()(addr, len);
    pthread_mutex_lock(&tr_mu);
    for (int i = 0; i < MAXMAP; i++)
        if (maps[i].addr == addr) {
            maps[i].addr = NULL;
            tr_emit("munmap %p", addr);
        }
    pthread_mutex_unlock(&tr_mu);
    return rc;
}
