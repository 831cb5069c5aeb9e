/*
 * cli_hook.c - `cairn hook prolog|epilog`: the scheduler hooks' root side.
 *
 * Slurm (Prolog=/Epilog=, through scripts/slurm/cairn-prolog|-epilog) runs
 * these as root on every node, in a base such as /dev/shm that every user
 * can write. Root therefore never resolves a path inside a directory a user
 * can write, and never acts on a name:
 *
 *   1. the base is opened with O_DIRECTORY|O_NOFOLLOW and checked by fstat
 *      (a directory of root or of the job's user; if others may write it, it
 *      must be sticky, so nobody renames another's entries);
 *   2. <base>/cairn-<uid> is opened relative to that descriptor, O_NOFOLLOW,
 *      and checked by fstat. The prolog makes it if missing (mkdirat 0700, an
 *      open that must find root's own fresh empty directory, then fchown and
 *      fchmod through the descriptor, then a check that the name still is
 *      that directory). An entry that is not a directory of the job's user
 *      (a squatter's directory, a symlink, a file) is set aside with renameat
 *      (which never follows the last component) to a hidden name in the base
 *      that nobody can guess ahead (64 random bits, as the temporary names),
 *      logged, and a fresh directory is made; bounded retries. The job goes
 *      on and the node stays in service. The epilog never creates and leaves
 *      such an entry alone;
 *   3. a child drops to the job's user for good (its groups, setresgid,
 *      setresuid, checked: it cannot become root again) and does everything
 *      below <base>/cairn-<uid> through that directory's descriptor
 *      (cli_hook_prolog.c, cli_hook_epilog.c). Root waits for it.
 *
 * The environment (any scheduler; Slurm sets the SLURM_* ones): job
 * CAIRN_JOB else SLURM_JOB_ID; user CAIRN_JOB_UID else SLURM_JOB_UID else
 * the caller; node by the library's rule (cn_node_name); base store.base
 * (CAIRN_BASE, else CAIRN_CONFIG_FILE's, else /dev/shm); log CAIRN_HOOK_LOG (a file) else syslog; plus CAIRN_HOOK_NEED,
 * CAIRN_RESTART_FROM with CAIRN_PFS_DIR, CAIRN_HOOK_DRAIN_TIMEOUT,
 * CAIRN_HOOK_FLUSH_WAIT and CAIRN_HOOK_UNFLUSHED. Exit 0: ready; 1: drain the node; a bad environment
 * is logged as an error and nothing is done, status 0 (the site's
 * configuration, not the node's fault).
 *
 * CAIRN_HOOK_FAULT=POINT:PROGRAM (tests): at POINT ("made": after mkdirat of
 * cairn-<uid>, before the open; "opened": after the open and check, before
 * fchown/fchmod) root runs PROGRAM POINT PATH and waits. Honoured only for an
 * absolute PROGRAM that root owns and only root can replace (every
 * directory on its path root's, sticky or not writable by others): only root
 * sets a hook's environment, and nobody else can swap the program.
 */
#include "tools/tools.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

const char cli_hook_usage[] =
    "Usage: cairn hook prolog|epilog\n"
    "\n"
    "The scheduler hooks, run as root on every node of a job (Slurm: Prolog= and\n"
    "Epilog= name scripts/slurm/cairn-prolog and cairn-epilog, which run this).\n"
    "prolog makes <base>/cairn-<uid>/<job>/<node> (the job's user's, mode 0700),\n"
    "checks the free space, and stages in the newest complete PFS generation of\n"
    "the job this one restarts, with its chain. epilog drains the job's newest\n"
    "generation to the PFS through its daemons (cairn drain), stops them, and\n"
    "removes the node's directory only if nothing in it is missing from the PFS.\n"
    "\n"
    "Root acts only through directory descriptors it opened and checked; an entry\n"
    "<base>/cairn-<uid> that is not a directory of the job's user is set aside\n"
    "(renamed to <base>/.cairn-aside-<uid>.*) and a fresh one made; everything\n"
    "inside the user's directory is done as the user.\n"
    "\n"
    "Environment:\n"
    "  CAIRN_JOB, else SLURM_JOB_ID          the job id\n"
    "  CAIRN_JOB_UID, else SLURM_JOB_UID     the job's user (else the caller)\n"
    "  CAIRN_NODE, else SLURMD_NODENAME      the node (else the hostname; cairn config --node)\n"
    "  CAIRN_BASE                            node-local base (default /dev/shm)\n"
    "  CAIRN_HOOK_LOG                        log file (default syslog)\n"
    "  CAIRN_HOOK_NEED                       free space the job needs (bytes, K, M, G, T)\n"
    "  CAIRN_RESTART_FROM, CAIRN_PFS_DIR     prolog: stage that job's generation in\n"
    "  CAIRN_HOOK_DRAIN_TIMEOUT              epilog: seconds for the drain (default 300)\n"
    "  CAIRN_HOOK_FLUSH_WAIT                 epilog, no daemon to drain: seconds to wait for\n"
    "                                        the other nodes' parts of its own flush\n"
    "                                        (cairn flush --node-only; default 60, 0: none)\n"
    "  CAIRN_HOOK_UNFLUSHED=keep|drain       epilog, when a generation is not on the PFS:\n"
    "                                        keep it and stay in service (exit 0, default),\n"
    "                                        or keep it and drain the node (exit 1)\n"
    "\n"
    "A job without a PFS (pfs.dir unset) keeps its checkpoints only until its epilog.\n"
    "Exit 0: ready (or nothing to do); 1: the node should be drained. A bad\n"
    "environment is logged and nothing is done, with status 0.\n";

#define ASIDE_TRIES 8

/* ---- messages ------------------------------------------------------------ */

/* One line LEVEL "<hook> job J node N: <message><suffix>" to the hook log (or
 * syslog), and to stderr unless it is only info. */
static void vlog(const cli_hookrun *h, const char *level, const char *suffix, const char *fmt,
                 va_list ap)
{
    char msg[CN_MSG_MAX + 512], line[sizeof msg + 256];
    vsnprintf(msg, sizeof msg, fmt, ap);
    snprintf(line, sizeof line, "%s job %s node %s: %s%s", h->name, h->job[0] ? h->job : "?",
             h->node[0] ? h->node : "?", msg, suffix);
    if (h->logfd >= 0) {
        char stamp[32], out[sizeof line + 64];
        time_t t = time(NULL);
        struct tm tm;
        strftime(stamp, sizeof stamp, "%F %T", localtime_r(&t, &tm));
        int n = snprintf(out, sizeof out, "%s %s %s\n", stamp, level, line);
        if (n > 0 && write(h->logfd, out, (size_t)n < sizeof out ? (size_t)n : sizeof out - 1) < 0)
            fprintf(stderr, "%s\n", line);
    } else {
        int prio = strcmp(level, "info") == 0 ? LOG_INFO
                   : strcmp(level, "warning") == 0 ? LOG_WARNING : LOG_ERR;
        openlog("cairn", 0, LOG_USER);
        syslog(prio, "%s", line);
    }
    if (strcmp(level, "info") != 0)
        fprintf(stderr, "%s\n", line);
}

void cli_hook_log(const cli_hookrun *h, const char *level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(h, level, "", fmt, ap);
    va_end(ap);
}

int cli_hook_node(const cli_hookrun *h, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(h, "err", "; the node should be drained", fmt, ap);
    va_end(ap);
    return 1;
}

int cli_hook_bad_env(const cli_hookrun *h, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(h, "err", "; nothing done", fmt, ap);
    va_end(ap);
    return 0;
}

const char *cli_hook_size(uint64_t bytes, char *buf, size_t len)
{
    /* As numfmt --to=iec: 1023, 1.5K (below 10 of a unit, one decimal), 64K;
     * rounded up, so a size is never shown smaller than it is. */
    static const char units[] = "KMGTPE";
    if (bytes < 1024) {
        snprintf(buf, len, "%llu", (unsigned long long)bytes);
        return buf;
    }
    double v = (double)bytes;
    int u = -1;
    while (v >= 1024 && u < 5)
        v /= 1024, u++;
    double tenths = (double)(long long)(v * 10);
    if (tenths < v * 10)
        tenths += 1;
    if (tenths < 100) {
        snprintf(buf, len, "%.1f%c", tenths / 10, units[u]);
    } else {
        long long whole = (long long)v;
        if ((double)whole < v)
            whole++;
        if (whole >= 1024 && u < 5)
            snprintf(buf, len, "1.0%c", units[u + 1]);
        else
            snprintf(buf, len, "%lld%c", whole, units[u]);
    }
    return buf;
}

uint64_t cli_hook_free(int dirfd)
{
    struct statvfs sv;
    if (fstatvfs(dirfd, &sv) != 0)
        return 0;
    return (uint64_t)sv.f_bavail * sv.f_frsize;
}

/* ---- the fault point (tests) ------------------------------------------- */

/* Is PATH a program only root could have put there (see the top)? */
static bool fault_program_safe(const char *path)
{
    if (path[0] != '/')
        return false;
    int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", path);
    char *save = NULL;
    bool ok = fd >= 0;
    for (char *c = strtok_r(copy, "/", &save); ok && c; c = strtok_r(NULL, "/", &save)) {
        int next = openat(fd, c, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        close(fd);
        fd = next;
        ok = fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == 0;
        if (ok && S_ISDIR(st.st_mode))
            ok = !(st.st_mode & 022) || (st.st_mode & S_ISVTX);
        else if (ok)
            ok = S_ISREG(st.st_mode) && !(st.st_mode & 022) && (st.st_mode & 0100);
    }
    if (fd >= 0)
        close(fd);
    return ok;
}

static void fault(const cli_hookrun *h, const char *point, const char *path)
{
    const char *f = getenv("CAIRN_HOOK_FAULT");
    size_t n = strlen(point);
    if (!f || strncmp(f, point, n) != 0 || f[n] != ':')
        return;
    const char *prog = f + n + 1;
    if (!fault_program_safe(prog)) {
        cli_hook_log(h, "warning", "CAIRN_HOOK_FAULT ignored: %s is not a program only root "
                     "can replace", prog);
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        execl(prog, prog, point, path, (char *)NULL);
        _exit(127);
    }
    int st;
    while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
}

/* ---- the base and <base>/cairn-<uid> ----------------------------------- */

static int open_base(const cli_hookrun *h, int *out)
{
    *out = -1;
    int fd = open(h->base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        if (errno == ELOOP || errno == ENOTDIR) {
            if (lstat(h->base, &st) == 0 && S_ISLNK(st.st_mode))
                return cli_hook_node(h, "the base %s is a symlink; refusing it", h->base);
            return cli_hook_node(h, "the base %s is not a directory", h->base);
        }
        if (errno == ENOENT && !h->prolog)
            return -ENOENT;
        return cli_hook_node(h, "cannot open the base %s: %s", h->base, strerror(errno));
    }
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return cli_hook_node(h, "cannot stat the base %s: %s", h->base, strerror(e));
    }
    if (st.st_uid != 0 && st.st_uid != h->uid) {
        close(fd);
        return cli_hook_node(h, "the base %s is owned by uid %u: only root or the job's user "
                             "may own it", h->base, (unsigned)st.st_uid);
    }
    if ((st.st_mode & 022) && !(st.st_mode & S_ISVTX)) {
        close(fd);
        return cli_hook_node(h, "the base %s has mode %04o: others may write it, so it must be "
                             "sticky (chmod +t, as /dev/shm and /tmp are)", h->base,
                             (unsigned)(st.st_mode & 07777));
    }
    *out = fd;
    return 0;
}

/* A name nobody can guess ahead: PREFIX<uid>.<time>.<64 random bits>, into OUT. */
static void unguessable(const cli_hookrun *h, const char *prefix, char *out, size_t len)
{
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        r = (uint64_t)t.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid() << 32;
    }
    snprintf(out, len, "%s%u.%lld.%016llx", prefix, (unsigned)h->uid, (long long)time(NULL),
             (unsigned long long)r);
}

/* Rename the entry NAME of the base out of the way (never following it), to
 * a name no user can have taken ahead. */
static int set_aside(const cli_hookrun *h, int basefd, const char *name, const char *what)
{
    char aside[128];
    for (int i = 0; i < 8; i++) {
        unguessable(h, ".cairn-aside-", aside, sizeof aside);
        if (renameat2(basefd, name, basefd, aside, RENAME_NOREPLACE) == 0) {
            cli_hook_log(h, "warning", "%s/%s %s: set aside as %s/%s (not followed); a fresh "
                         "directory is made", h->base, name, what, h->base, aside);
            return 0;
        }
        if (errno == ENOENT)
            return 0; /* gone already */
        if (errno != EEXIST)
            break;
    }
    return cli_hook_node(h, "cannot set %s/%s aside (%s): %s", h->base, name, what,
                         strerror(errno));
}

/* Same directory? */
static bool same(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Make <base>/cairn-<uid> (root, in the base): root's fresh empty directory,
 * made under a name of its own, given to the user through its descriptor,
 * then renamed into place without replacing anything (so a prolog of another
 * job of the user never sees it half made). *FD: it, or -1 to look again. */
static int make_user_dir(const cli_hookrun *h, int basefd, const char *name, int *fd)
{
    char tmp[128], tmp_path[sizeof h->base + 128];
    *fd = -1;
    for (int i = 0;; i++) { /* a temporary name nobody can have taken ahead */
        unguessable(h, ".cairn-new-", tmp, sizeof tmp);
        snprintf(tmp_path, sizeof tmp_path, "%s/%s", h->base, tmp);
        if (mkdirat(basefd, tmp, 0700) == 0)
            break;
        if (errno != EEXIST || i == 7)
            return cli_hook_node(h, "cannot create %s: %s", tmp_path, strerror(errno));
    }
    fault(h, "made", tmp_path);
    int d = openat(basefd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (d >= 0 && (fstat(d, &st) != 0 || st.st_uid != geteuid() || st.st_nlink != 2 ||
                   (st.st_mode & 07777) != 0700)) {
        close(d); /* not root's fresh directory */
        d = -1;
    }
    if (d >= 0) {
        fault(h, "opened", tmp_path);
        if (fchown(d, h->uid, h->gid) != 0 || fchmod(d, 0700) != 0) {
            int e = errno;
            close(d);
            unlinkat(basefd, tmp, AT_REMOVEDIR);
            return cli_hook_node(h, "cannot give %s to uid %u: %s", h->userdir, (unsigned)h->uid,
                                 strerror(e));
        }
    }
    struct stat now;
    if (d < 0 || fstatat(basefd, tmp, &now, AT_SYMLINK_NOFOLLOW) != 0 || !same(&st, &now) ||
        renameat2(basefd, tmp, basefd, name, RENAME_NOREPLACE) != 0 ||
        fstatat(basefd, name, &now, AT_SYMLINK_NOFOLLOW) != 0 || !same(&st, &now)) {
        if (d >= 0)
            close(d);
        /* Replaced while being made, or another prolog was first: look again.
         * Whatever is left under the temporary name is removed only if it is
         * an empty directory (never followed), else set aside. */
        if (unlinkat(basefd, tmp, AT_REMOVEDIR) != 0 && errno != ENOENT)
            return set_aside(h, basefd, tmp, "was replaced while being made");
        return 0;
    }
    *fd = d;
    return 0;
}

/* Open (the prolog: and make) <base>/cairn-<uid>. 0 with *OUT, or 0 with
 * *OUT = -1 (the epilog: none, or a squatter's, logged), or 1 (drain). */
static int open_user_dir(const cli_hookrun *h, int basefd, int *out)
{
    char name[64];
    snprintf(name, sizeof name, "cairn-%u", (unsigned)h->uid);
    *out = -1;
    for (int tries = 0; tries < ASIDE_TRIES; tries++) {
        int fd = openat(basefd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        char what[128] = "";
        if (fd >= 0) {
            if (fstat(fd, &st) != 0) {
                int e = errno;
                close(fd);
                return cli_hook_node(h, "cannot stat %s: %s", h->userdir, strerror(e));
            }
            if (st.st_uid == h->uid) {
                if ((st.st_mode & 07777) != 0700 && fchmod(fd, 0700) != 0) {
                    int e = errno;
                    close(fd);
                    return cli_hook_node(h, "cannot set the mode of %s to 700: %s", h->userdir,
                                         strerror(e));
                }
                *out = fd;
                return 0;
            }
            close(fd);
            snprintf(what, sizeof what, "is owned by uid %u, not by the job's user %u",
                     (unsigned)st.st_uid, (unsigned)h->uid);
        } else if (errno == ENOENT) {
            if (!h->prolog) {
                cli_hook_log(h, "info", "nothing to do: no %s", h->userdir);
                return 0;
            }
            int rc = make_user_dir(h, basefd, name, out);
            if (rc != 0 || *out >= 0)
                return rc;
            continue;
        } else if (errno == ELOOP || errno == ENOTDIR) {
            bool link = fstatat(basefd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
            snprintf(what, sizeof what, "%s", link ? "is a symlink" : "is not a directory");
        } else {
            return cli_hook_node(h, "cannot open %s: %s", h->userdir, strerror(errno));
        }
        if (!h->prolog) { /* the epilog never creates: leave it, nothing to clean */
            cli_hook_log(h, "warning", "%s %s: not the job's; nothing done", h->userdir, what);
            return 0;
        }
        int rc = set_aside(h, basefd, name, what);
        if (rc != 0)
            return rc;
    }
    return cli_hook_node(h, "%s was replaced %d times while it was being made; giving up",
                         h->userdir, ASIDE_TRIES);
}

/* ---- the user's side ----------------------------------------------------- */

/* In the child: become the job's user for good. 0, or -1 (logged). */
static int drop_to_user(const cli_hookrun *h)
{
    if (geteuid() != 0)
        return geteuid() == h->uid ? 0 : -1;
    int n = 0;
    gid_t *groups = NULL;
    struct passwd *pw = getpwuid(h->uid);
    if (pw) {
        int cap = 64;
        for (int i = 0; i < 4; i++) {
            groups = cli_alloc((size_t)cap * sizeof *groups);
            n = cap;
            if (getgrouplist(pw->pw_name, h->gid, groups, &n) >= 0)
                break;
            free(groups);
            groups = NULL;
            cap = n > cap ? n : 2 * cap;
            n = 0;
        }
    }
    if (setgroups((size_t)n, groups) != 0 || setresgid(h->gid, h->gid, h->gid) != 0 ||
        setresuid(h->uid, h->uid, h->uid) != 0) {
        free(groups);
        cli_hook_log(h, "err", "cannot become uid %u: %s", (unsigned)h->uid, strerror(errno));
        return -1;
    }
    free(groups);
    uid_t ru, eu, su;
    gid_t rg, eg, sg;
    if (getresuid(&ru, &eu, &su) != 0 || getresgid(&rg, &eg, &sg) != 0 || ru != h->uid ||
        eu != h->uid || su != h->uid || rg != h->gid || eg != h->gid || sg != h->gid ||
        (h->uid != 0 && (setuid(0) == 0 || seteuid(0) == 0))) {
        cli_hook_log(h, "err", "dropped to uid %u, but root could come back; stopping",
                     (unsigned)h->uid);
        return -1;
    }
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    umask(077);
    return 0;
}

/* Run the user's side in a child that is the user; its status. */
static int as_user(const cli_hookrun *h, int userfd)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return cli_hook_node(h, "cannot fork: %s", strerror(errno));
    if (pid == 0) {
        if (drop_to_user(h) < 0)
            _exit(1);
        _exit(h->prolog ? cli_hook_prolog_user(h, userfd) : cli_hook_epilog_user(h, userfd));
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return cli_hook_node(h, "lost the child: %s", strerror(errno));
    if (WIFEXITED(st))
        return WEXITSTATUS(st) ? 1 : 0;
    return cli_hook_node(h, "the hook's user side died of signal %d", WTERMSIG(st));
}

int cli_hook(int argc, char **argv)
{
    const char *verb = "hook";
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
        return cli_help(verb);
    if (argc != 2 || (strcmp(argv[1], "prolog") != 0 && strcmp(argv[1], "epilog") != 0))
        return cli_usage_error(verb, "give prolog or epilog");
    static cli_hookrun hook;
    cli_hookrun *h = &hook;
    h->prolog = strcmp(argv[1], "prolog") == 0;
    h->name = h->prolog ? "cairn-prolog" : "cairn-epilog";
    h->logfd = -1;
    int rc = cli_hook_read_env(h);
    if (rc >= 0)
        return rc;
    int basefd;
    rc = open_base(h, &basefd);
    if (rc == -ENOENT) {
        cli_hook_log(h, "info", "nothing to do: no %s", h->base);
        return 0;
    }
    if (rc != 0)
        return rc;
    if (h->prolog) {
        char a[32], b[32];
        uint64_t free_bytes = cli_hook_free(basefd);
        if (free_bytes < h->need) {
            close(basefd);
            return cli_hook_node(h, "only %sB free in %s; the job needs %sB",
                                 cli_hook_size(free_bytes, a, sizeof a), h->base,
                                 cli_hook_size(h->need, b, sizeof b));
        }
    }
    int userfd;
    rc = open_user_dir(h, basefd, &userfd);
    close(basefd);
    if (rc != 0 || userfd < 0)
        return rc;
    rc = as_user(h, userfd);
    close(userfd);
    return rc;
}
