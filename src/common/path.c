/*
 * path.c - safe directories and atomic small files on node-local storage.
 *
 * Node-local bases such as /dev/shm are shared by every user of a node, so
 * nothing here follows a symlink: directories are created with mkdirat(0700)
 * and opened with O_NOFOLLOW | O_DIRECTORY, then checked to be owned by us
 * with no group/other access. Every later path is opened relative to such a
 * checked directory fd. Removal walks with unlinkat and never leaves a
 * checked directory through a link.
 */
#include "common/common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool cn_name_ok(const char *name)
{
    if (!name || !*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return false;
    size_t n = strnlen(name, CAIRN_NAME_MAX + 1);
    return n <= CAIRN_NAME_MAX && !strchr(name, '/');
}

int cn_dir_open(int dirfd, const char *name, bool create, cn_err *err)
{
    if (create && mkdirat(dirfd, name, 0700) != 0 && errno != EEXIST)
        return cn_fail_errno(err, errno, "cannot create directory %s", name);
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (e == ELOOP || e == ENOTDIR) {
            struct stat st;
            if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
                return cn_fail(err, CAIRN_EUNSAFE, "%s is a symlink; refusing to follow it", name);
            return cn_fail(err, CAIRN_EUNSAFE, "%s is not a directory", name);
        }
        return cn_fail_errno(err, e, "cannot open directory %s", name);
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return cn_fail_errno(err, e, "cannot stat %s", name);
    }
    if (st.st_uid != geteuid()) {
        close(fd);
        return cn_fail(err, CAIRN_EUNSAFE, "%s is owned by uid %u, not by this user (uid %u)",
                       name, (unsigned)st.st_uid, (unsigned)geteuid());
    }
    if (st.st_mode & 077) {
        close(fd);
        return cn_fail(err, CAIRN_EUNSAFE, "%s has mode %03o; it must be 0700", name,
                       (unsigned)(st.st_mode & 0777));
    }
    return fd;
}

int cn_dir_open_path(const char *path, cn_err *err)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return cn_fail_errno(err, errno, "cannot open directory %s", path);
    return fd;
}

int cn_rmtree_at(int dfd, const char *name, cn_err *err)
{
    if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
        return 0;
    if (errno != EISDIR && errno != EPERM)
        return cn_fail_errno(err, errno, "cannot remove %s", name);
    int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return cn_fail_errno(err, errno, "cannot open %s for removal", name);
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        close(fd);
        return cn_fail_errno(err, e, "cannot list %s", name);
    }
    int rc = 0;
    struct dirent *de;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        rc = cn_rmtree_at(dirfd(d), de->d_name, err);
    }
    closedir(d);
    if (rc == 0 && unlinkat(dfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
        rc = cn_fail_errno(err, errno, "cannot remove directory %s", name);
    return rc;
}

int cn_dir_sync(int dirfd, cn_err *err)
{
    if (fsync(dirfd) != 0 && errno != EINVAL)
        return cn_fail_errno(err, errno, "cannot sync directory");
    return 0;
}

int cn_read_small(int dirfd, const char *name, size_t max, uint8_t **out, size_t *len,
                  cn_err *err)
{
    *out = NULL;
    *len = 0;
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return cn_fail_errno(err, errno, "cannot open %s", name);
    struct stat st;
    int rc = 0;
    uint8_t *buf = NULL;
    if (fstat(fd, &st) != 0) {
        rc = cn_fail_errno(err, errno, "cannot stat %s", name);
    } else if (!S_ISREG(st.st_mode)) {
        rc = cn_fail(err, CAIRN_EUNSAFE, "%s is not a regular file", name);
    } else if ((uint64_t)st.st_size > max) {
        rc = cn_fail(err, CAIRN_ECORRUPT, "%s is %lld bytes, more than the %zu allowed", name,
                     (long long)st.st_size, max);
    } else if (!(buf = malloc((size_t)st.st_size + 1))) {
        rc = cn_fail(err, CAIRN_ENOMEM, "no memory to read %s", name);
    } else {
        size_t got = 0;
        while (got < (size_t)st.st_size) {
            ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) {
                rc = r < 0 ? cn_fail_errno(err, errno, "cannot read %s", name)
                           : cn_fail(err, CAIRN_ECORRUPT, "%s shrank while being read", name);
                break;
            }
            got += (size_t)r;
        }
        *len = got;
    }
    close(fd);
    if (rc < 0) {
        free(buf);
        *len = 0;
        return rc;
    }
    *out = buf;
    return 0;
}

int cn_pwrite_all(int fd, const void *buf, size_t len, uint64_t off, const char *what,
                  cn_err *err)
{
    const uint8_t *p = buf;
    while (len > 0) {
        ssize_t w = pwrite(fd, p, len, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return cn_fail_errno(err, errno, "%s: write failed", what);
        p += w;
        off += (uint64_t)w;
        len -= (size_t)w;
    }
    return 0;
}

int cn_write_atomic(int dirfd, const char *name, const void *buf, size_t len, cn_err *err)
{
    char tmp[CAIRN_NAME_MAX + 8];
    snprintf(tmp, sizeof tmp, "%s.tmp", name);
    unlinkat(dirfd, tmp, 0);
    int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return cn_fail_errno(err, errno, "cannot create %s", tmp);
    int rc = cn_pwrite_all(fd, buf, len, 0, tmp, err);
    if (rc == 0 && fdatasync(fd) != 0)
        rc = cn_fail_errno(err, errno, "cannot sync %s", tmp);
    if (close(fd) != 0 && rc == 0)
        rc = cn_fail_errno(err, errno, "cannot close %s", tmp);
    if (rc == 0 && renameat(dirfd, tmp, dirfd, name) != 0)
        rc = cn_fail_errno(err, errno, "cannot rename %s to %s", tmp, name);
    if (rc < 0) {
        unlinkat(dirfd, tmp, 0);
        return rc;
    }
    return cn_dir_sync(dirfd, err);
}

int cn_gen_dirname(char *buf, size_t len, int64_t gen)
{
    int n = snprintf(buf, len, CN_GEN_PREFIX "%lld", (long long)gen);
    return (n < 0 || (size_t)n >= len) ? CAIRN_EINVAL : 0;
}

int cn_trash_gen(int dirfd, int64_t id)
{
    char gen[64], trash[128];
    cn_gen_dirname(gen, sizeof gen, id);
    snprintf(trash, sizeof trash, "%s%s.%d", CN_TRASH_PREFIX, gen, (int)getpid());
    return renameat(dirfd, gen, dirfd, trash) == 0 ? 0 : -errno;
}

int cn_user_dirname(char *buf, size_t len)
{
    int n = snprintf(buf, len, "cairn-%u", (unsigned)geteuid());
    return (n < 0 || (size_t)n >= len) ? CAIRN_EINVAL : 0;
}

static int cmp_id_desc(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x < y) - (x > y);
}

int cn_gen_list(int dirfd, long **ids, int *n, cn_err *err)
{
    *ids = NULL;
    *n = 0;
    int fd = cn_dir_listing_fd(dirfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return cn_fail(err, CAIRN_EIO, "cannot list the generations of a directory");
    }
    size_t cap = 0, cnt = 0;
    long *v = NULL;
    int rc = 0;
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        int64_t id = cn_parse_gen_dirname(de->d_name);
        if (id < 0 || id > (int64_t)0x7fffffffffffffffLL)
            continue;
        if (cnt == cap) {
            long *nv = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof *v);
            if (!nv) {
                rc = cn_fail(err, CAIRN_ENOMEM, "no memory");
                break;
            }
            v = nv;
        }
        v[cnt++] = (long)id;
    }
    closedir(d);
    if (rc < 0) {
        free(v);
        return rc;
    }
    if (cnt)
        qsort(v, cnt, sizeof *v, cmp_id_desc);
    *ids = v;
    *n = (int)cnt;
    return 0;
}

int cn_rank_filename(char *buf, size_t len, uint32_t rank)
{
    int n = snprintf(buf, len, "rank-%u.ckpt", rank);
    return (n < 0 || (size_t)n >= len) ? CAIRN_EINVAL : 0;
}

int cn_set_aside(int dirfd, int64_t id, char *out, size_t len, cn_err *err)
{
    return cn_set_aside_as(dirfd, id, CN_ABANDONED_PREFIX, out, len, err);
}

int cn_set_aside_as(int dirfd, int64_t id, const char *prefix, char *out, size_t len,
                    cn_err *err)
{
    char name[64];
    cn_gen_dirname(name, sizeof name, id);
    for (int n = 0; n < 1000; n++) {
        int w = n ? snprintf(out, len, "%s%s.%d", prefix, name, n)
                  : snprintf(out, len, "%s%s", prefix, name);
        if (w < 0 || (size_t)w >= len)
            return cn_fail(err, CAIRN_EINVAL, "name too long");
        int r = renameat2(dirfd, name, dirfd, out, RENAME_NOREPLACE);
        if (r != 0 && (errno == EINVAL || errno == ENOSYS)) { /* a file system without it */
            struct stat st;
            if (fstatat(dirfd, out, &st, AT_SYMLINK_NOFOLLOW) == 0)
                errno = EEXIST;
            else
                r = renameat(dirfd, name, dirfd, out);
        }
        if (r == 0)
            return 0;
        if (errno != EEXIST)
            return cn_fail_errno(err, errno, "cannot set %s aside as %s", name, out);
    }
    return cn_fail(err, CAIRN_EIO, "cannot set %s aside: 1000 copies set aside exist", name);
}

int64_t cn_parse_gen_dirname(const char *name)
{
    size_t pl = strlen(CN_GEN_PREFIX);
    if (strncmp(name, CN_GEN_PREFIX, pl) != 0)
        return -1;
    const char *d = name + pl;
    if (!*d || (d[0] == '0' && d[1]))
        return -1;
    int64_t v = 0; /* every id of 0..INT64_MAX (LONG_MAX, what the API takes): 19 digits */
    for (; *d; d++) {
        if (*d < '0' || *d > '9')
            return -1;
        int digit = *d - '0';
        if (v > (INT64_MAX - digit) / 10)
            return -1; /* above INT64_MAX: no id of ours */
        v = v * 10 + digit;
    }
    return v;
}

int cn_dir_listing_fd(int dirfd)
{
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}
