/*
 * probe.c - the PFS's write bandwidth, measured rather than assumed
 * (pfs.bandwidth 0): level 4's codec model weighs compression against it.
 *
 * A probe file is created in a directory (O_EXCL, a random name, unlinked
 * at once so that nothing is left behind even by a crash), BYTES of
 * pseudo-random data (a compressing file system cannot shrink them) written
 * in 4 MiB pieces, each one's writeback started at once (as level 4's writer
 * starts its files'), then fsync()ed, and timed from the first write to the
 * end of the sync; then the file is emptied and written again, and the
 * faster pass counts. One pass read what a moment gave, not what the file
 * system gives: on a virtual machine that hands freed memory back to its
 * host, a job's first writes into a RAM disk may fault every page in from
 * the host; 4 writers probing once there read 385-905 MiB/s each where their
 * checkpoints wrote at about 1300, and in one bench run low enough that the
 * model compressed: the level-4 checkpoint took 3.9 times the direct write
 * (issue 31). Taken once per job by each writer on the first writer's host,
 * all at once, in the job's PFS directory (share.c), by rank 0 alone against
 * the node directory for api_pfs_as_fast (direct.c), and by `cairn config
 * --probe-pfs DIR`. No MPI here.
 * Ownership: the buffer and descriptor live for one call.
 */
#include "levels/pfs/pfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PIECE (4u << 20)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int lvl_pfs_probe(int dirfd, uint64_t bytes, double *bps, cn_err *err)
{
    uint64_t x = (uint64_t)getpid() * 0x9E3779B97F4A7C15ull ^ (uint64_t)(now_s() * 1e9);
    char name[64];
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 8; tries++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        snprintf(name, sizeof name, ".cairn-probe-%016llx", (unsigned long long)x);
        fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    CN_FAIL_IF(fd < 0, err, CAIRN_EIO, "cannot create a probe file: %s", strerror(errno));
    unlinkat(dirfd, name, 0); /* the bytes stay until close, the name goes now */
    uint64_t *buf = malloc(PIECE);
    if (!buf) {
        close(fd);
        return cn_fail(err, CAIRN_ENOMEM, "no memory for the probe");
    }
    for (size_t i = 0; i < PIECE / 8; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = x;
    }
    int rc = 0;
    double best = 0;
    for (int pass = 0; rc == 0 && pass < LVL_PFS_PROBE_PASSES; pass++) {
        if (pass > 0 && ftruncate(fd, 0) != 0) /* its pages freed: written anew */
            rc = cn_fail_errno(err, errno, "probe truncate");
        double t0 = now_s();
        for (uint64_t done = 0; rc == 0 && done < bytes;) {
            size_t n = bytes - done < PIECE ? (size_t)(bytes - done) : PIECE;
            ssize_t k = pwrite(fd, buf, n, (off_t)done);
            if (k <= 0 && errno != EINTR)
                rc = cn_fail_errno(err, k < 0 ? errno : ENOSPC, "probe write");
            if (k > 0) /* its writeback started as it grows, as level 4's writer does (pfs.c) */
                sync_file_range(fd, (off_t)done, k, SYNC_FILE_RANGE_WRITE);
            done += k > 0 ? (uint64_t)k : 0;
        }
        if (rc == 0 && fsync(fd) != 0)
            rc = cn_fail_errno(err, errno, "probe fsync");
        double t = now_s() - t0;
        if (rc == 0 && (pass == 0 || t < best))
            best = t;
    }
    close(fd);
    free(buf);
    if (rc == 0)
        *bps = (double)bytes / (best > 1e-6 ? best : 1e-6);
    return rc;
}
