/*
 * live.c - the running application's mark in its node directory, which
 * `cairn prune` reads and holds (and nothing else does).
 *
 * <node>/app.lock (CN_LIVE_NAME) is a small text file the node leader of a
 * running application keeps open:
 *   cairn-live 1
 *   pid <pid>
 *   parents <L1> <L2> <L3>
 * the generations its next checkpoint at level 1, 2 and 3 diffs against
 * (-1: none; a full one). Two open-file-description locks (F_OFD_*) on it
 * say the rest, and vanish with the process, however it ends:
 *   byte 0 (CN_LIVE_ALIVE): read-locked by the application from cairn_init
 *     to cairn_finalize: the parents are live only while someone holds it;
 *   byte 1 (CN_LIVE_BUSY): read-locked by the application while a
 *     checkpoint or a restart works on the node directory (and changes the
 *     parents), write-locked by prune while it removes: so prune holds the
 *     application (its next checkpoint waits), and reads parents that hold.
 * The file is opened relative to the node directory's descriptor, never
 * through a symlink. Who owns what: the caller owns the descriptor.
 */
#include "common/common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int cn_live_open(int nodefd, bool create)
{
    int fd = openat(nodefd, CN_LIVE_NAME,
                    O_RDWR | O_NOFOLLOW | O_CLOEXEC | (create ? O_CREAT : 0), 0600);
    return fd < 0 ? -errno : fd;
}

static struct flock slot_lock(int slot, short type)
{
    return (struct flock){.l_type = type, .l_whence = SEEK_SET, .l_start = slot, .l_len = 1};
}

int cn_live_lock(int fd, int slot, bool write, int timeout_ms)
{
    struct flock fl = slot_lock(slot, write ? F_WRLCK : F_RDLCK);
    struct timespec nap = {0, 10 * 1000000L};
    for (int waited = 0;; waited += 10) {
        if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
            return 0;
        if (errno != EAGAIN && errno != EACCES && errno != EINTR)
            return -errno;
        if (waited >= timeout_ms)
            return -EAGAIN;
        nanosleep(&nap, NULL);
    }
}

void cn_live_unlock(int fd, int slot)
{
    struct flock fl = slot_lock(slot, F_UNLCK);
    fcntl(fd, F_OFD_SETLK, &fl);
}

bool cn_live_taken(int fd, int slot)
{
    struct flock fl = slot_lock(slot, F_WRLCK);
    return fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
}

int cn_live_write(int fd, long pid, const long parent[3])
{
    char buf[160];
    int n = snprintf(buf, sizeof buf, "cairn-live 1\npid %ld\nparents %ld %ld %ld\n", pid,
                     parent[0], parent[1], parent[2]);
    if (n < 0 || (size_t)n >= sizeof buf)
        return CAIRN_EINVAL;
    if (pwrite(fd, buf, (size_t)n, 0) != n || ftruncate(fd, n) != 0)
        return -errno;
    return 0;
}

int cn_live_read(int fd, long *pid, long parent[3])
{
    char buf[161];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n < 0)
        return -errno;
    buf[n] = '\0';
    if (sscanf(buf, "cairn-live 1\npid %ld\nparents %ld %ld %ld\n", pid, &parent[0], &parent[1],
               &parent[2]) != 4)
        return CAIRN_ECORRUPT;
    return 0;
}
