/*
 * cli_rebuild.c - `cairn rebuild`: rebuilding needs every node's daemon or
 * rank at once (it decodes across nodes), so this verb launches the MPI
 * program cairn-rebuild (installed beside cairn) with the job's rank count,
 * through CAIRN_LAUNCHER if set (e.g. "srun"), else mpirun. On a terminal it
 * runs the launcher as a child instead of becoming it, and shows the bytes
 * written into the job's node directories since it started (progress.c);
 * the launcher's output passes through unchanged.
 */
#include "tools/tools.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cli_rebuild_usage[] =
    "Usage: cairn rebuild --np RANKS [--gen N] [--config FILE]\n"
    "\n"
    "Rebuild what lost or replaced nodes are missing of the newest generation\n"
    "that can be made whole (or of generation N): from partner copies (level 2)\n"
    "or by decoding parity (level 3); lost copies and parity are made anew.\n"
    "Nothing is restored. Runs cairn-rebuild on RANKS ranks (the job's rank\n"
    "count) with $CAIRN_LAUNCHER (e.g. \"srun\"), else mpirun; the job is named\n"
    "by CAIRN_JOB and node emulation by CAIRN_RANKS_PER_NODE / CAIRN_NODE, as\n"
    "for the job itself. Exit status as listed below; 4 means more nodes were\n"
    "lost than the generation's level survives. On a terminal, a progress line on\n"
    "stderr shows the bytes written into the job's node directories (this\n"
    "machine's) and the rate; piped, there is none.\n"
    "\n"
    "Options:\n"
    "  -n, --np RANKS      ranks of the job\n"
    "  -g, --gen N         rebuild generation N only\n"
    "  -c, --config FILE   the job's configuration file\n"
    "  -h, --help          show this help\n";

/* The job's directory <base>/cairn-<uid>/<job> on this machine, by the
 * job's configuration (CONFIG, CAIRN_*): fd, or -1 (quietly: progress only). */
static int job_dir(const char *config)
{
    cn_config cfg;
    cn_err err = {0};
    if (cn_config_load(&cfg, config, &err) < 0)
        return -1;
    const char *job = cfg.job[0] ? cfg.job : getenv("SLURM_JOB_ID");
    char user[32], path[CLI_PATH_MAX];
    cn_user_dirname(user, sizeof user);
    if (!job || !cn_id_ok(job) ||
        snprintf(path, sizeof path, "%s/%s/%s", cfg.base, user, job) >= (int)sizeof path)
        return -1;
    int fd = cn_dir_open_path(path, &err);
    return fd < 0 ? -1 : fd;
}

typedef struct rebuild_watch {
    int jobfd;
    struct timespec since;
} rebuild_watch;

/* cli_progress_tick: the bytes written under the job's directory since the start. */
static void rebuild_tick(cli_progress *p, const char *line, void *arg)
{
    const rebuild_watch *w = arg;
    if (!line && w->jobfd >= 0) /* node / gen-G / partner: 3 levels */
        cli_progress_set(p, cli_bytes_since(w->jobfd, &w->since, 3));
}

int cli_rebuild(int argc, char **argv)
{
    static const struct option opts[] = {
        {"np", required_argument, NULL, 'n'},
        {"gen", required_argument, NULL, 'g'},
        {"config", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *verb = argv[0], *np = NULL, *gen = NULL, *config = NULL;
    int c;
    while ((c = getopt_long(argc, argv, ":n:g:c:h", opts, NULL)) != -1) {
        switch (c) {
        case 'n': np = optarg; break;
        case 'g': gen = optarg; break;
        case 'c': config = optarg; break;
        case 'h': return cli_help(verb);
        default: return cli_getopt_fail(verb, c, argv);
        }
    }
    if (optind < argc)
        return cli_usage_error(verb, "unexpected argument '%s'", argv[optind]);
    if (!np || atoi(np) < 1)
        return cli_usage_error(verb, "give the job's rank count with --np RANKS");
    /* cairn-rebuild sits beside this binary. */
    char self[PATH_MAX], prog[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    char *slash = strrchr(self, '/');
    snprintf(prog, sizeof prog, "%.*s/cairn-rebuild", slash ? (int)(slash - self) : 1,
             slash ? self : ".");
    char *args[64];
    int k = 0;
    char launcher[512];
    snprintf(launcher, sizeof launcher, "%s", getenv("CAIRN_LAUNCHER") ? getenv("CAIRN_LAUNCHER")
                                                                        : "mpirun");
    for (char *tok = strtok(launcher, " "); tok && k < 48; tok = strtok(NULL, " "))
        args[k++] = tok;
    args[k++] = "-n";
    args[k++] = (char *)np;
    args[k++] = prog;
    if (gen)
        args[k++] = "--gen", args[k++] = (char *)gen;
    if (config)
        args[k++] = "--config", args[k++] = (char *)config;
    args[k] = NULL;
    fflush(stdout);
    cli_progress p;
    cli_progress_start(&p, verb, NULL, 0);
    if (p.on) {
        rebuild_watch w = {.jobfd = job_dir(config)};
        cli_progress_clock(&w.since);
        int rc = cli_progress_run(args, &p, rebuild_tick, &w);
        rebuild_tick(&p, NULL, &w);
        cli_progress_end(&p);
        if (w.jobfd >= 0)
            close(w.jobfd);
        if (rc >= 0)
            return rc;
    }
    execvp(args[0], args);
    cli_error(verb, "cannot run %s: %s", args[0], strerror(errno));
    return CLI_EXIT_ERROR;
}
