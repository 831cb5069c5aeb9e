/*
 * cli_hook_prolog.c - the prolog's side that runs as the job's user (forked
 * and dropped by cli_hook.c), given the checked <base>/cairn-<uid>:
 *
 *   <job>/<node>           made 0700 (or checked: the user's, not a link;
 *                          a wrong mode is set to 0700 through the fd)
 *   <node>/stage/cairn-<uid>/<prev>/gen-<G>/   with CAIRN_RESTART_FROM=<prev>:
 *                          the newest complete PFS generation of job <prev>
 *                          and every link of its chain (lvl_pfs_newest and
 *                          lvl_pfs_chain: the library's own index decoder and
 *                          chain walk), which cairn_restart reads instead of
 *                          the PFS (src/levels/pfs/stagein.c).
 *
 * A generation is copied into .staging-<G> (its index last) and renamed into
 * place whole, and only if it fits the free space; if one link of a chain
 * cannot be staged, none is left (an older link alone would look like the
 * newest generation). A stage-in that fails is logged, not fatal: the
 * restart then reads the PFS. Everything is opened relative to directory
 * descriptors, never through a symlink. Nothing here runs as root.
 */
#include "tools/tools.h"
#include "levels/pfs/pfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_hook_dir(const cli_hookrun *h, int dirfd, const char *name, const char *path, bool create)
{
    if (create && mkdirat(dirfd, name, 0700) != 0 && errno != EEXIST) {
        cli_hook_node(h, "cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        struct stat st;
        if (e == ENOENT && !create)
            return -ENOENT;
        if ((e == ELOOP || e == ENOTDIR) && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISLNK(st.st_mode))
            cli_hook_node(h, "%s is a symlink; refusing it (someone planted it?)", path);
        else if (e == ELOOP || e == ENOTDIR)
            cli_hook_node(h, "%s is not a directory", path);
        else
            cli_hook_node(h, "cannot open %s: %s", path, strerror(e));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_uid != geteuid()) {
        cli_hook_node(h, "%s is owned by uid %u, not by the job's user %u", path,
                      (unsigned)st.st_uid, (unsigned)geteuid());
        close(fd);
        return -1;
    }
    if ((st.st_mode & 07777) != 0700 && fchmod(fd, 0700) != 0) {
        cli_hook_node(h, "cannot set the mode of %s to 700: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* ---- stage-in ---------------------------------------------------------------- */

/* Copy the regular file NAME from SRC to a new file in DST. 0 or -errno. */
static int copy_file(int src, int dst, const char *name)
{
    int in = openat(src, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (in < 0)
        return -errno;
    int out = openat(dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (out < 0) {
        int e = errno;
        close(in);
        return -e;
    }
    static char buf[1 << 20];
    int rc = 0;
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = n < 0 ? -errno : 0;
            break;
        }
        for (ssize_t off = 0; off < n && rc == 0;) {
            ssize_t w = write(out, buf + off, (size_t)(n - off));
            if (w < 0 && errno != EINTR)
                rc = -errno;
            off += w > 0 ? w : 0;
        }
        if (rc)
            break;
    }
    if (close(out) != 0 && rc == 0)
        rc = -errno;
    close(in);
    return rc;
}

/* The regular files of directory FD (not "index"), and their total size. */
static int list_files(int fd, char ***names, int *n, uint64_t *bytes)
{
    int dup_fd = dup(fd);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
        if (dup_fd >= 0)
            close(dup_fd);
        return -errno;
    }
    *names = NULL, *n = 0, *bytes = 0;
    int cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        struct stat st;
        if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        *bytes += (uint64_t)st.st_size;
        if (strcmp(de->d_name, CN_PINDEX_NAME) == 0)
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **more = cli_alloc((size_t)cap * sizeof *more);
            if (*n)
                memcpy(more, *names, (size_t)*n * sizeof *more);
            free(*names);
            *names = more;
        }
        (*names)[(*n)++] = cli_strdup(de->d_name);
    }
    closedir(d);
    return 0;
}

/* Is generation GEN (a directory name) under DSTFD staged whole (its index there)? */
static bool staged(int dstfd, const char *gen)
{
    int fd = openat(dstfd, gen, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    bool yes = fd >= 0 && fstatat(fd, CN_PINDEX_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
               S_ISREG(st.st_mode);
    if (fd >= 0)
        close(fd);
    return yes;
}

/* Copy PFS generation G from SRCFD into DSTFD (index last, renamed into place). 0, or -1 (logged). */
static int stage_gen(const cli_hookrun *h, int srcfd, int dstfd, const char *dst, long g)
{
    const char *prev = h->restart_from;
    char gen[64], tmp[80], a[32], b[32];
    cn_gen_dirname(gen, sizeof gen, g);
    snprintf(tmp, sizeof tmp, ".staging-%ld", g);
    if (staged(dstfd, gen)) {
        cli_hook_log(h, "info", "generation %ld of job %s is staged already", g, prev);
        return 0;
    }
    int sfd = openat(srcfd, gen, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    char **names = NULL;
    int n = 0, rc = sfd < 0 ? -errno : 0, tfd = -1;
    uint64_t bytes = 0, room = cli_hook_free(dstfd);
    cn_err err = {0};
    if (rc == 0)
        rc = list_files(sfd, &names, &n, &bytes);
    if (rc == 0 && bytes > room) {
        cli_hook_log(h, "warning", "generation %ld of job %s (%sB) does not fit in %sB: not staged",
                     g, prev, cli_hook_size(bytes, a, sizeof a), cli_hook_size(room, b, sizeof b));
        rc = 1;
    }
    if (rc == 0 && (cn_rmtree_at(dstfd, tmp, &err) < 0 || mkdirat(dstfd, tmp, 0700) != 0))
        rc = -(errno ? errno : EIO);
    if (rc == 0 && (tfd = openat(dstfd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        rc = -errno;
    for (int i = 0; rc == 0 && i < n; i++)
        rc = copy_file(sfd, tfd, names[i]);
    if (rc == 0)
        rc = copy_file(sfd, tfd, CN_PINDEX_NAME); /* last: it makes the copy a generation */
    if (rc == 0 && (cn_rmtree_at(dstfd, gen, &err) < 0 || renameat(dstfd, tmp, dstfd, gen) != 0))
        rc = -(errno ? errno : EIO);
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (tfd >= 0)
        close(tfd);
    if (sfd >= 0)
        close(sfd);
    if (rc == 0) {
        cli_hook_log(h, "info", "staged generation %ld of job %s in (%sB)", g, prev,
                     cli_hook_size(bytes, a, sizeof a));
        return 0;
    }
    cn_rmtree_at(dstfd, tmp, &err);
    if (rc < 0)
        cli_hook_log(h, "warning", "cannot stage generation %ld of job %s into %s (%s); the "
                     "restart will read the PFS", g, prev, dst, strerror(-rc));
    return -1;
}

/* Stage in the newest complete PFS generation of job CAIRN_RESTART_FROM, with its chain. */
static int stage_in(const cli_hookrun *h, int nodefd)
{
    const char *prev = h->restart_from;
    char src[4500], path[4600], user[64];
    cn_user_dirname(user, sizeof user);
    snprintf(src, sizeof src, "%s/%s/%s", h->cfg.pfs_dir, user, prev);
    cn_err err = {0};
    int srcfd = lvl_pfs_open(h->cfg.pfs_dir, prev, false, &err);
    long g = -1;
    if (srcfd >= 0) {
        cn_pindex x;
        g = lvl_pfs_newest(srcfd, prev, LONG_MAX, 0, &x, NULL, &err);
        if (g >= 0)
            cn_pindex_free(&x);
    }
    if (g < 0) {
        cli_hook_log(h, "warning", "job %s has no complete generation in %s: nothing staged%s%s",
                     prev, src, err.msg[0] ? " - " : "", err.msg);
        if (srcfd >= 0)
            close(srcfd);
        return 0;
    }
    long *chain = NULL;
    int n = 0;
    if (lvl_pfs_chain(srcfd, g, &chain, &n, &err) < 0) {
        cli_hook_log(h, "warning", "generation %ld of job %s in %s: its chain does not read (%s): "
                     "nothing staged; the restart will read the PFS", g, prev, src, err.msg);
        close(srcfd);
        return 0;
    }
    snprintf(path, sizeof path, "%s/stage", h->nodedir);
    int stagefd = cli_hook_dir(h, nodefd, "stage", path, true);
    snprintf(path, sizeof path, "%s/stage/%s", h->nodedir, user);
    int ufd = stagefd >= 0 ? cli_hook_dir(h, stagefd, user, path, true) : -1;
    snprintf(path, sizeof path, "%s/stage/%s/%s", h->nodedir, user, prev);
    int dstfd = ufd >= 0 ? cli_hook_dir(h, ufd, prev, path, true) : -1;
    int rc = dstfd >= 0 ? 0 : 1;
    for (int i = n - 1; rc == 0 && i >= 0; i--) { /* the full base first */
        if (stage_gen(h, srcfd, dstfd, path, chain[i]) == 0)
            continue;
        for (int j = 0; j < n; j++) { /* all of the chain or none */
            char gen[64];
            cn_gen_dirname(gen, sizeof gen, chain[j]);
            cn_rmtree_at(dstfd, gen, &err);
        }
        break;
    }
    char top[64];
    cn_gen_dirname(top, sizeof top, g);
    if (dstfd >= 0 && !staged(dstfd, top))
        unlinkat(ufd, prev, AT_REMOVEDIR); /* no empty stage directory left behind */
    free(chain);
    for (int fd = 0, fds[] = {srcfd, stagefd, ufd, dstfd}; fd < 4; fd++)
        if (fds[fd] >= 0)
            close(fds[fd]);
    return rc;
}

int cli_hook_prolog_user(const cli_hookrun *h, int userfd)
{
    int jobfd = cli_hook_dir(h, userfd, h->job, h->jobdir, true);
    if (jobfd < 0)
        return 1;
    int nodefd = cli_hook_dir(h, jobfd, h->node, h->nodedir, true);
    close(jobfd);
    if (nodefd < 0)
        return 1;
    int rc = h->restart_from ? stage_in(h, nodefd) : 0;
    if (rc == 0) {
        char a[32];
        cli_hook_log(h, "info", "ready: %s (%sB free)", h->nodedir,
                     cli_hook_size(cli_hook_free(nodefd), a, sizeof a));
    }
    close(nodefd);
    return rc;
}
