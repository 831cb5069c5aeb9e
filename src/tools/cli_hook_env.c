/*
 * cli_hook_env.c - `cairn hook`: reading the hooks' environment (as root,
 * before anything is opened) into a cli_hookrun. Slurm sets SLURM_JOB_ID,
 * SLURM_JOB_UID and SLURMD_NODENAME; other schedulers set the CAIRN_* ones,
 * which win. Every value is checked here: a bad one is logged ("...; nothing
 * done") and the hook exits 0 without touching anything. The node is named
 * by the library's rule (cn_node_name of job.node), the base is store.base
 * (CAIRN_BASE, else the configuration file's, else /dev/shm), the PFS is
 * pfs.dir (CAIRN_PFS_DIR). Owns nothing but the log descriptor it opens
 * (CAIRN_HOOK_LOG, O_APPEND, never through a symlink), kept for the run.
 */
#include "tools/tools.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* "1048576", "64K", "1.5G", "1P" (powers of 1024, as numfmt --from=iec): 0 or -1. */
static int parse_size(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || v < 0 || *s == '-' || *s == '+' || *s == ' ')
        return -1;
    const char *units = "KMGTPE", *u = *end ? strchr(units, *end) : NULL;
    if (*end && (!u || end[1]))
        return -1;
    for (int i = 0; u && i <= u - units; i++)
        v *= 1024;
    if (v >= 18446744073709551615.0)
        return -1;
    *out = (uint64_t)v;
    if ((double)*out < v)
        (*out)++;
    return 0;
}

/* Fill H from the environment. 0 ok; otherwise the status to exit with (logged). */
int cli_hook_read_env(cli_hookrun *h)
{
    const char *job = getenv("CAIRN_JOB"), *uid = getenv("CAIRN_JOB_UID"), *v;
    if (!job || !*job)
        job = getenv("SLURM_JOB_ID");
    if (!uid || !*uid)
        uid = getenv("SLURM_JOB_UID");
    const char *log = getenv("CAIRN_HOOK_LOG");
    if (log && *log)
        h->logfd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW, 0600);
    cn_err err = {0};
    if (cn_config_load(&h->cfg, NULL, &err) < 0)
        return cli_hook_bad_env(h, "cannot name this node (cairn config --node): %s", err.msg);
    cn_node_name(h->cfg.node, h->node, NULL);
    if (!job || !*job)
        return cli_hook_bad_env(h, "no job id: set SLURM_JOB_ID or CAIRN_JOB");
    snprintf(h->job, sizeof h->job, "%.*s", (int)sizeof h->job - 1, job);
    if (!cn_id_ok(job))
        return cli_hook_bad_env(h, "job id '%.80s' is not 1-63 of A-Z a-z 0-9 . _ -", job);
    if (!cn_id_ok(h->node))
        return cli_hook_bad_env(h, "node name '%s' is not 1-63 of A-Z a-z 0-9 . _ -", h->node);
    if (uid && *uid) {
        char *end;
        errno = 0;
        unsigned long u = strtoul(uid, &end, 10);
        if (*end || errno || uid[0] < '0' || uid[0] > '9' || u >= (uid_t)-1)
            return cli_hook_bad_env(h, "uid '%.40s' is not a number", uid);
        h->uid = (uid_t)u;
    } else {
        h->uid = getuid();
    }
    if (geteuid() != 0 && geteuid() != h->uid)
        return cli_hook_bad_env(h, "running as uid %u, the hook can act only for itself, not "
                                "for uid %u: run it as root", (unsigned)geteuid(),
                                (unsigned)h->uid);
    struct passwd *pw = getpwuid(h->uid);
    h->gid = pw ? pw->pw_gid : (gid_t)h->uid;
    /* store.base: CAIRN_BASE, else the configuration file's, else /dev/shm (as the library). */
    snprintf(h->base, sizeof h->base, "%s", h->cfg.base[0] ? h->cfg.base : "/dev/shm");
    snprintf(h->userdir, sizeof h->userdir, "%s/cairn-%u", h->base, (unsigned)h->uid);
    snprintf(h->jobdir, sizeof h->jobdir, "%s/%s", h->userdir, h->job);
    snprintf(h->nodedir, sizeof h->nodedir, "%s/%s", h->jobdir, h->node);
    v = getenv("CAIRN_HOOK_NEED");
    if (parse_size(v && *v ? v : "0", &h->need) < 0)
        return cli_hook_bad_env(h, "CAIRN_HOOK_NEED='%.40s' is not a size (bytes, K, M, G, T)",
                                v);
    h->restart_from = getenv("CAIRN_RESTART_FROM");
    if (h->restart_from && !*h->restart_from)
        h->restart_from = NULL;
    if (h->prolog && h->restart_from) {
        if (!cn_id_ok(h->restart_from))
            return cli_hook_bad_env(h, "CAIRN_RESTART_FROM='%.80s' is not a job id",
                                    h->restart_from);
        if (!h->cfg.pfs_dir[0])
            return cli_hook_bad_env(h, "CAIRN_RESTART_FROM needs CAIRN_PFS_DIR (the PFS)");
    }
    v = getenv("CAIRN_HOOK_DRAIN_TIMEOUT");
    h->drain_timeout = 300;
    if (v && *v) {
        char *end;
        long t = strtol(v, &end, 10);
        if (*end || t <= 0 || t > 86400 * 7)
            return cli_hook_bad_env(h, "CAIRN_HOOK_DRAIN_TIMEOUT='%.40s' is not a number of "
                                    "seconds", v);
        h->drain_timeout = (int)t;
    }
    v = getenv("CAIRN_HOOK_FLUSH_WAIT");
    h->flush_wait = 60;
    if (v && *v) {
        char *end;
        long t = strtol(v, &end, 10);
        if (*end || t < 0 || t > 86400 * 7)
            return cli_hook_bad_env(h, "CAIRN_HOOK_FLUSH_WAIT='%.40s' is not a number of "
                                    "seconds", v);
        h->flush_wait = (int)t;
    }
    v = getenv("CAIRN_HOOK_UNFLUSHED");
    if (v && *v && strcmp(v, "keep") != 0 && strcmp(v, "drain") != 0)
        return cli_hook_bad_env(h, "CAIRN_HOOK_UNFLUSHED='%.40s' is not keep or drain", v);
    h->unflushed_drain = v && strcmp(v, "drain") == 0;
    ssize_t n = readlink("/proc/self/exe", h->self, sizeof h->self - 1);
    h->self[n > 0 ? n : 0] = '\0';
    return -1;
}

