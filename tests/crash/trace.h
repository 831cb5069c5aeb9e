/*
 * trace.h - the contract between the two files of the crash-state tracer
 * (trace.c: outputs, fd table, libc calls; trace_pmem.c: stdio and libpmem).
 * Every tr_ function takes tr_mu itself unless its name says _locked; the
 * outputs and the fd table belong to trace.c.
 */
#ifndef CAIRN_CRASH_TRACE_H
#define CAIRN_CRASH_TRACE_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

#define TR_HIDDEN __attribute__((visibility("hidden")))
#define TR_MAXFD 65536

/* The real function NAME (the next definition after this library). */
#define REAL(ret, name, ...)                                                                       \
    static ret (*real_##name)(__VA_ARGS__);                                                        \
    static ret (*get_##name(void))(__VA_ARGS__)                                                    \
    {                                                                                              \
        if (!real_##name)                                                                          \
            real_##name = (ret(*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name);                            \
        return real_##name;                                                                        \
    }


TR_HIDDEN extern pthread_mutex_t tr_mu;      /* orders the lines and guards tr_fds */
TR_HIDDEN extern unsigned char tr_fds[TR_MAXFD]; /* fds opened under a root */

/* Under tr_mu: open the outputs once; 0 when tracing is on. */
TR_HIDDEN int tr_setup(void);
/* Under tr_mu: append one line. */
TR_HIDDEN void tr_emit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Under tr_mu: append LEN bytes (CNT pieces) to the data file; their offset there. */
TR_HIDDEN off_t tr_put_data(const struct iovec *iov, int cnt, size_t len);
TR_HIDDEN int tr_under_root(const char *path);
/* The absolute path of NAME relative to DIRFD (AT_FDCWD or a directory fd). */
TR_HIDDEN void tr_resolve(int dirfd, const char *name, char *out, size_t len);
TR_HIDDEN int tr_is_tracked(int fd);
TR_HIDDEN int tr_exists_at(int dirfd, const char *path);
/* After an open of PATH (FLAGS; EXISTED before the call) gave FD: track and log it. */
TR_HIDDEN void tr_after_open(int dirfd, const char *path, int flags, int existed, int fd);
/* DONE bytes of IOV written to FD at OFF: log them when FD is tracked. */
TR_HIDDEN void tr_log_write(int fd, const struct iovec *iov, int cnt, ssize_t done, off_t off);
#endif
