/*
 * cli_hook_epilog.c - the epilog's side that runs as the job's user (forked
 * and dropped by cli_hook.c), given the checked <base>/cairn-<uid>.
 *
 * If cairnd serves the job on this node (its socket is in the node's
 * directory), `cairn drain --job J --timeout T` and `cairn stop --job J` run
 * as this user (this program, exec'd: the same code path as by hand). Then
 * the rule: nothing that is not safely on the PFS is deleted. The node's
 * directory is removed only if no complete generation in it (a manifest is
 * there) is newer than the newest complete generation of the job on the PFS
 * (lvl_pfs_newest), or if the job has no PFS (pfs.dir unset: node-local
 * checkpoints end with the job).
 *
 * When no daemon drained (none served, or the drain failed: daemons
 * SIGKILLed leave a stale socket) and such a generation G is here, the
 * epilog flushes it itself, as the user: `cairn flush --node-only --gen G`
 * (cairnd --flush-node, the library's level-4 code without MPI) writes this
 * node's ranks of G to <pfs>/cairn-<uid>/<job>/.part-gen-<G>/ with a record
 * of this node; the node that finds every node's record there commits the
 * generation (index, rename to gen-<G>: levels/pfs/pfs_stage.c). Every node's
 * epilog runs at about the same time, so this one then waits, polling at
 * most CAIRN_HOOK_FLUSH_WAIT seconds (default 60), until the PFS holds a
 * complete generation >= G; then the rule above removes the directory.
 * If the flush fails or the wait ends first (a node's data is gone, or its
 * epilog did not run), the directory is kept, the log says why and how to
 * recover it, and CAIRN_HOOK_UNFLUSHED chooses: keep (default; the node
 * stays in service, status 0) or drain (status 1).
 *
 * Removal goes through directory descriptors (cn_rmtree_at: never through a
 * link); a link in place of the node's directory is removed, not followed.
 * The job's directory goes with its last node directory.
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Run this program as `cairn VERB --job J [ARGS]` (as the user already); its
 * status, its output (stdout and stderr, lines joined by "; ") in OUT. */
static int run_cli(const cli_hookrun *h, char *const argv[], char *out, size_t len)
{
    int p[2];
    out[0] = '\0';
    if (!h->self[0] || pipe2(p, O_CLOEXEC) != 0) {
        snprintf(out, len, "cannot run %.1000s: %s", h->self[0] ? h->self : "cairn", strerror(errno));
        return 1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 1);
        dup2(p[1], 2);
        setenv("CAIRN_BASE", h->base, 1);
        execv(h->self, argv);
        fprintf(stderr, "cannot run %s: %s\n", h->self, strerror(errno));
        _exit(1);
    }
    close(p[1]);
    size_t n = 0;
    for (;;) {
        char buf[4096];
        ssize_t r = read(p[0], buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        for (ssize_t i = 0; i < r && n + 3 < len; i++) {
            if (buf[i] != '\n')
                out[n++] = buf[i];
            else
                out[n++] = ';', out[n++] = ' ';
        }
    }
    close(p[0]);
    while (n > 0 && (out[n - 1] == ' ' || out[n - 1] == ';'))
        n--;
    out[n] = '\0';
    int st = 0;
    if (pid < 0)
        return 1;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

/* The daemons of the job, if one serves this node: drain, then stop them.
 * True if the drain succeeded (a daemon served and flushed). */
static bool drain_and_stop(const cli_hookrun *h, int nodefd)
{
    struct stat st;
    if (fstatat(nodefd, CN_SOCK_NAME, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISSOCK(st.st_mode))
        return false;
    char t[32], job[CN_JOB_MAX + 1], out[2048];
    snprintf(t, sizeof t, "%d", h->drain_timeout);
    snprintf(job, sizeof job, "%s", h->job);
    char *drain[] = {"cairn", "drain", "--job", job, "--timeout", t, NULL};
    int rc = run_cli(h, drain, out, sizeof out);
    char prefix[CN_JOB_MAX + 32];
    snprintf(prefix, sizeof prefix, "drained job %s: ", h->job);
    const char *colon = strstr(out, ": ");
    if (rc == 0)
        cli_hook_log(h, "info", "%s", strncmp(out, prefix, strlen(prefix)) == 0
                                          ? out + strlen(prefix) : out);
    else if (rc == 3)
        cli_hook_log(h, "warning", "drain: %s", colon ? colon + 2 : out);
    else
        cli_hook_log(h, "warning", "drain failed (status %d): %s", rc, out);
    char *stop[] = {"cairn", "stop", "--job", job, NULL};
    if (run_cli(h, stop, out, sizeof out) != 0)
        cli_hook_log(h, "warning", "stop failed: %s", out);
    return rc == 0;
}

/* The newest complete node-local generation under NODEFD newer than ABOVE, or -1. */
static long newest_unflushed(int nodefd, long above)
{
    long *ids = NULL, found = -1;
    int n = 0;
    cn_err err = {0};
    if (cn_gen_list(nodefd, &ids, &n, &err) < 0)
        return -1;
    for (int i = 0; i < n && found < 0 && ids[i] > above; i++) {
        char gen[64];
        struct stat st;
        cn_gen_dirname(gen, sizeof gen, ids[i]);
        int g = openat(nodefd, gen, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (g < 0)
            continue;
        /* Its manifest is written last: a generation a restart can take. A
         * manifest that does not read is kept too (kept rather than lost). */
        if (fstatat(g, CN_MANIFEST_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
            found = ids[i];
        close(g);
    }
    free(ids);
    return found;
}

/* Keep the node's directory (NODEFD)? 0 remove it; 1 keep (logged). */
static int must_keep(const cli_hookrun *h, int nodefd, long *kept, long *on_pfs)
{
    *kept = *on_pfs = -1;
    if (!h->cfg.pfs_dir[0]) {
        if (newest_unflushed(nodefd, -1) >= 0)
            cli_hook_log(h, "info", "no PFS (pfs.dir unset): this job's node-local checkpoints "
                         "end with it");
        return 0;
    }
    cn_err err = {0};
    int pfd = lvl_pfs_open(h->cfg.pfs_dir, h->job, false, &err);
    if (pfd >= 0) {
        cn_pindex x;
        *on_pfs = lvl_pfs_newest(pfd, h->job, LONG_MAX, 0, &x, NULL, &err);
        if (*on_pfs >= 0)
            cn_pindex_free(&x);
        close(pfd);
    }
    *kept = newest_unflushed(nodefd, *on_pfs);
    return *kept >= 0;
}

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* No daemon left to drain, generation KEPT not on the PFS: flush this node's
 * part of it as the user (`cairn flush --node-only`: the library's level-4
 * code, no MPI), then wait at most CAIRN_HOOK_FLUSH_WAIT seconds for the
 * other nodes' parts (their epilogs run at the same time) until the PFS holds
 * a complete generation >= KEPT. Returns must_keep's answer after it; WHY
 * gets the reason a generation is still kept. */
static int flush_here(const cli_hookrun *h, int nodefd, long *kept, long *on_pfs, char *why,
                      size_t len)
{
    char job[CN_JOB_MAX + 1], node[CN_JOB_MAX + 1], gen[32], out[2048];
    snprintf(job, sizeof job, "%s", h->job);
    snprintf(node, sizeof node, "%s", h->node);
    snprintf(gen, sizeof gen, "%ld", *kept);
    char *flush[] = {"cairn", "flush", "--node-only", "--job", job, "--gen", gen,
                     "--node", node, NULL};
    long want = *kept;
    int rc = run_cli(h, flush, out, sizeof out);
    if (rc == 0 || rc == 3) {
        cli_hook_log(h, "info", "flush of generation %ld without daemons: %s", want, out);
    } else {
        cli_hook_log(h, "warning", "flush of generation %ld without daemons failed (status "
                     "%d): %s", want, rc, out);
        snprintf(why, len, "the flush from this node failed: %.1500s", out);
        return must_keep(h, nodefd, kept, on_pfs);
    }
    double end = mono() + h->flush_wait;
    int keep;
    while ((keep = must_keep(h, nodefd, kept, on_pfs)) && *on_pfs < want && mono() < end) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (keep && *on_pfs < want)
        snprintf(why, len, "%s within CAIRN_HOOK_FLUSH_WAIT=%ds; %.1500s",
                 rc == 0 ? "it did not show on the PFS" : "the other nodes' parts did not come",
                 h->flush_wait, out);
    return keep;
}

/* Does directory FD hold a directory? */
static bool has_subdir(int fd)
{
    int d2 = dup(fd);
    DIR *d = d2 >= 0 ? fdopendir(d2) : NULL;
    if (!d) {
        if (d2 >= 0)
            close(d2);
        return true; /* cannot tell: keep it */
    }
    bool yes = false;
    struct dirent *de;
    while (!yes && (de = readdir(d)) != NULL) {
        struct stat st;
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
            fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
            yes = true;
    }
    closedir(d);
    return yes;
}

int cli_hook_epilog_user(const cli_hookrun *h, int userfd)
{
    int jobfd = cli_hook_dir(h, userfd, h->job, h->jobdir, false);
    if (jobfd == -ENOENT) {
        cli_hook_log(h, "info", "nothing to do: no %s", h->jobdir);
        return 0;
    }
    if (jobfd < 0)
        return 1;
    struct stat st;
    int nodefd = -1;
    cn_err err = {0};
    int there = fstatat(jobfd, h->node, &st, AT_SYMLINK_NOFOLLOW);
    if (there == 0 && !S_ISDIR(st.st_mode)) {
        cli_hook_log(h, "warning", "%s is %s; removing the link only", h->nodedir,
                     S_ISLNK(st.st_mode) ? "a symlink" : "not a directory");
        if (unlinkat(jobfd, h->node, 0) != 0 && errno != ENOENT) {
            close(jobfd);
            return cli_hook_node(h, "cannot remove the link %s", h->nodedir);
        }
    } else if (there == 0 || errno != ENOENT) {
        nodefd = cli_hook_dir(h, jobfd, h->node, h->nodedir, false);
        if (nodefd < 0 && nodefd != -ENOENT) {
            close(jobfd);
            return 1;
        }
    }
    if (nodefd >= 0) {
        bool served = drain_and_stop(h, nodefd);
        long kept, on_pfs;
        char why[2048] = "";
        int keep = must_keep(h, nodefd, &kept, &on_pfs);
        if (keep && !served)
            keep = flush_here(h, nodefd, &kept, &on_pfs, why, sizeof why);
        if (keep) {
            char newest[64] = "none";
            if (on_pfs >= 0)
                snprintf(newest, sizeof newest, "generation %ld", on_pfs);
            const char *how = h->unflushed_drain ? "; CAIRN_HOOK_UNFLUSHED=drain" : "";
            cli_hook_log(h, "err", "kept %s: its generation %ld is not on the PFS (newest complete "
                         "there: %s)%s%s, nothing of it was deleted. To recover it, run the next "
                         "job as CAIRN_JOB=%s on this node (it restarts from this copy), or flush "
                         "it: this epilog again on every node of the job, or cairn start --job "
                         "%s, then cairn drain --job %s%s", h->nodedir, kept, newest,
                         why[0] ? ": " : "", why, h->job, h->job, h->job, how);
            close(nodefd);
            close(jobfd);
            return h->unflushed_drain
                       ? cli_hook_node(h, "generation %ld of %s is only on this node", kept, h->job)
                       : 0;
        }
        close(nodefd);
        if (cn_rmtree_at(jobfd, h->node, &err) < 0) {
            close(jobfd);
            return cli_hook_node(h, "cannot remove %s: %s", h->nodedir, err.msg);
        }
    }
    /* The job directory goes with its last node (the daemons' log and pid file too). */
    if (!has_subdir(jobfd) && cn_rmtree_at(userfd, h->job, &err) < 0)
        cli_hook_log(h, "warning", "cannot remove %s: %s", h->jobdir, err.msg);
    close(jobfd);
    cli_hook_log(h, "info", "cleaned up %s", h->nodedir);
    return 0;
}
