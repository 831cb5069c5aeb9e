/*
 * sock.c - the node daemon's Unix socket: cairnd listens on NAME in the
 * job's node-local directory, the library and the CLI connect to it.
 *
 * Paths go through /proc/self/fd/<dirfd>/NAME, so they stay short (sun_path
 * is 108 bytes) and resolve inside a directory already checked by
 * cn_dir_open (ours, mode 0700, no symlink). Both ends check the other's
 * user: the client that the socket file is ours, the daemon the peer's
 * credentials (SO_PEERCRED). The caller owns the returned descriptors.
 */
#include "common/common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int sock_addr(int dirfd, const char *name, struct sockaddr_un *a, cn_err *err)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    int n = snprintf(a->sun_path, sizeof a->sun_path, "/proc/self/fd/%d/%s", dirfd, name);
    if (n < 0 || (size_t)n >= sizeof a->sun_path)
        return cn_fail(err, CAIRN_EINVAL, "socket name %s is too long", name);
    return 0;
}

int cn_sock_connect(int dirfd, const char *name, cn_err *err)
{
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return cn_fail_errno(err, errno, "no daemon socket %s", name);
    if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid())
        return cn_fail(err, CAIRN_EUNSAFE, "%s is not a socket of this user (uid %u); refusing it",
                       name, (unsigned)geteuid());
    struct sockaddr_un a;
    CN_TRY(sock_addr(dirfd, name, &a, err));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return cn_fail_errno(err, errno, "socket");
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        int e = errno;
        close(fd);
        return cn_fail_errno(err, e, "cannot connect to %s", name);
    }
    return fd;
}

int cn_sock_listen(int dirfd, const char *name, cn_err *err)
{
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (!S_ISSOCK(st.st_mode))
            return cn_fail(err, CAIRN_EUNSAFE, "%s exists and is not a socket", name);
        cn_err ignored = {0};
        int live = cn_sock_connect(dirfd, name, &ignored);
        if (live >= 0) {
            close(live);
            return cn_fail(err, CAIRN_ESTATE, "a daemon already listens on %s", name);
        }
        if (unlinkat(dirfd, name, 0) != 0) /* a dead daemon's */
            return cn_fail_errno(err, errno, "cannot remove the stale socket %s", name);
    }
    struct sockaddr_un a;
    CN_TRY(sock_addr(dirfd, name, &a, err));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return cn_fail_errno(err, errno, "socket");
    mode_t old = umask(077);
    int rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    umask(old);
    if (rc != 0 || listen(fd, 64) != 0) {
        int e = errno;
        close(fd);
        return cn_fail_errno(err, e, "cannot listen on %s", name);
    }
    return fd;
}

bool cn_sock_peer_ok(int fd)
{
    struct ucred cred;
    socklen_t len = sizeof cred;
    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid == geteuid();
}
