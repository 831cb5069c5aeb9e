/*
 * cli_prune.c - `cairn prune`: remove generations by hand, the ones cairn
 * never removes itself: those newer than the newest one a run restored or
 * wrote (an abandoned timeline; automatic only with store.prune_abandoned =
 * on) and those a job of another layout wrote (a restart on another rank
 * count refuses them, and refuses to write over them).
 *
 * Generations are named (--gen N, repeatable) or everything above an id
 * (--above N); --abandoned takes the "abandoned-gen-*" directories a run set
 * aside (an abandoned timeline, see cn_set_aside). Each one goes from every node directory of the job visible
 * here and from the PFS (pfs.dir of the configuration, or CAIRN_PFS_DIR):
 * renamed aside first (so a half-removed generation never looks like one),
 * then removed, never through a symlink. --dry-run lists and removes nothing.
 * A PFS generation that a generation staying there needs (an increment's
 * parent, down to its full base) is not removed: prune says which one needs
 * it and exits 1.
 * A real cluster shows each node only its own directory: run it on every
 * node (the PFS part once is enough; again is harmless).
 * Daemons (cairnd) may serve the job and be at work on a generation it
 * removes: before removing anything, prune holds the daemon of every node
 * directory it sees (HOLD, cli_daemon.c, as the library does; they finish the
 * generation they are at, then start nothing), and releases them at the end.
 * With no daemon listening it removes at once, as ever; a daemon that will
 * not pause within 30 x daemon.timeout makes it remove nothing (exit 1).
 */
#include "tools/tools.h"
#include "levels/levels.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cli_prune_usage[] =
    "Usage: cairn prune --job ID (--gen N ... | --above N | --abandoned) [--dry-run]\n"
    "                   [--base DIR] [--config FILE]\n"
    "\n"
    "Remove generations of job ID by hand, from every node directory visible here\n"
    "and from the PFS (pfs.dir of --config, or CAIRN_PFS_DIR). cairn never removes\n"
    "these itself: generations newer than the newest one a run restored or wrote\n"
    "(an abandoned timeline; unless store.prune_abandoned = on) and generations a\n"
    "job of another layout wrote (a restart on another rank count refuses them,\n"
    "and refuses to checkpoint over them). Each generation directory is renamed\n"
    "aside, then removed. A PFS generation that another one staying there is\n"
    "stored as changes to (its chain needs it) is not removed. On a cluster, run\n"
    "it on every node. If daemons (cairnd)\n"
    "serve the job, prune first holds them (each finishes the generation it is at,\n"
    "then starts nothing) and releases them when done; if they do not pause within\n"
    "30 x daemon.timeout, nothing is removed.\n"
    "\n"
    "Options:\n"
    "  -j, --job ID        the job\n"
    "  -g, --gen N         remove generation N (repeat for more)\n"
    "  -a, --above N       remove every generation newer than N\n"
    "  -A, --abandoned     remove the abandoned-gen-* directories a run set aside:\n"
    "                      generations newer than one it restored and then wrote\n"
    "  -n, --dry-run       print what would be removed, remove nothing\n"
    "  -b, --base DIR      node-local base directory (default: CAIRN_BASE, else\n"
    "                      store.base of --config, else /dev/shm)\n"
    "  -c, --config FILE   read store.base, pfs.dir and daemon.timeout from this\n"
    "                      INI file\n"
    "  -h, --help          show this help\n"
    "\n"
    "prune exits 0 when it removed (or would remove) at least one directory, 3 when\n"
    "no generation matched, 1 when a removal failed or the daemons would not hold.\n";

#define MAX_GENS 256
#define PRUNE_TIMEOUT_S 10 /* daemon.timeout's default, if the configuration does not load */

typedef struct pick {
    long gen[MAX_GENS];
    int n;
    long above;                   /* -1: none */
    bool abandoned;               /* the abandoned-gen-* directories too */
    bool dry;
} pick;

static bool picked(const pick *p, long id)
{
    if (p->above >= 0 && id > p->above)
        return true;
    for (int i = 0; i < p->n; i++)
        if (p->gen[i] == id)
            return true;
    return false;
}

/* Remove directory NAME under DIRFD (printed as PATH/NAME). 1 removed, 0 failed. */
static int remove_dir(const char *verb, int dirfd, const char *path, const char *name, bool dry)
{
    char aside[400];
    printf("%s %s/%s\n", dry ? "would remove" : "removed", path, name);
    if (dry)
        return 1;
    snprintf(aside, sizeof aside, ".trash-%s.%d", name, (int)getpid());
    cn_err err = {0};
    if (renameat(dirfd, name, dirfd, aside) != 0) {
        cli_error(verb, "cannot move %s/%s aside: %s", path, name, strerror(errno));
        return 0;
    }
    if (cn_rmtree_at(dirfd, aside, &err) < 0) {
        cli_error(verb, "%s/%s: %s", path, aside, err.msg);
        return 0;
    }
    return 1;
}

static bool going(void *arg, long id) { return picked(arg, id); }

/* Generations of DIRFD (a node or, with PFS, the PFS job directory) that P
 * picks. On the PFS, a generation that the chain of one that stays needs
 * (an increment's parent, down to its full base) is refused. */
static void prune_dir(const char *verb, int dirfd, const char *path, const pick *p, bool pfs,
                      int *done, int *failed)
{
    long *ids = NULL;
    int n = 0;
    cn_err err = {0};
    if (cn_gen_list(dirfd, &ids, &n, &err) < 0) {
        cli_error(verb, "%s: %s", path, err.msg);
        (*failed)++;
        return;
    }
    for (int i = 0; i < n; i++) {
        char name[64];
        cn_gen_dirname(name, sizeof name, ids[i]);
        if (!picked(p, ids[i]))
            continue;
        long by = pfs ? lvl_pfs_needed(dirfd, ids[i], going, (void *)p) : -1;
        if (by >= 0) {
            cli_error(verb, "%s/%s: not removed: PFS generation %ld is stored as changes to it "
                      "(its chain needs it); remove %ld too", path, name, by, by);
            (*failed)++;
            continue;
        }
        remove_dir(verb, dirfd, path, name, p->dry) ? (*done)++ : (*failed)++;
    }
    free(ids);
    int fd = p->abandoned ? cn_dir_listing_fd(dirfd) : -1;
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (fd >= 0 && !d)
        close(fd);
    for (struct dirent *de; d && (de = readdir(d)) != NULL;)
        if (strncmp(de->d_name, CN_ABANDONED_PREFIX, strlen(CN_ABANDONED_PREFIX)) == 0 &&
            strlen(de->d_name) < 256)
            remove_dir(verb, dirfd, path, de->d_name, p->dry) ? (*done)++ : (*failed)++;
    if (d)
        closedir(d);
}

static int parse_id(const char *verb, const char *s, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || !end || *end || end == s || v < 0)
        return cli_usage_error(verb, "'%.40s' is not a generation id", s);
    *out = v;
    return CLI_EXIT_OK;
}

int cli_prune(int argc, char **argv)
{
    static const struct option opts[] = {
        {"job", required_argument, NULL, 'j'},  {"gen", required_argument, NULL, 'g'},
        {"above", required_argument, NULL, 'a'}, {"dry-run", no_argument, NULL, 'n'},
        {"abandoned", no_argument, NULL, 'A'},
        {"base", required_argument, NULL, 'b'}, {"config", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0},
    };
    const char *verb = argv[0], *base = NULL, *config = NULL, *job = NULL;
    pick p = {.above = -1};
    int c, rc;
    while ((c = getopt_long(argc, argv, ":j:g:a:Anb:c:h", opts, NULL)) != -1) {
        switch (c) {
        case 'j': job = optarg; break;
        case 'g':
            if (p.n == MAX_GENS)
                return cli_usage_error(verb, "at most %d --gen", MAX_GENS);
            if ((rc = parse_id(verb, optarg, &p.gen[p.n++])) != CLI_EXIT_OK)
                return rc;
            break;
        case 'a':
            if ((rc = parse_id(verb, optarg, &p.above)) != CLI_EXIT_OK)
                return rc;
            break;
        case 'A': p.abandoned = true; break;
        case 'n': p.dry = true; break;
        case 'b': base = optarg; break;
        case 'c': config = optarg; break;
        case 'h': return cli_help(verb);
        default: return cli_getopt_fail(verb, c, argv);
        }
    }
    if (optind < argc)
        return cli_usage_error(verb, "unexpected argument '%s'", argv[optind]);
    if (!job)
        return cli_usage_error(verb, "name the job with --job ID");
    if (!p.n && p.above < 0 && !p.abandoned)
        return cli_usage_error(verb, "name the generations: --gen N (repeatable), --above N "
                                     "or --abandoned");
    cli_store st;
    rc = cli_store_open(verb, base, config, &st);
    if (rc != CLI_EXIT_OK)
        return rc;
    int done = 0, failed = 0;
    cli_job j;
    int jrc = cli_job_open(verb, &st, job, &j);
    if (jrc == CLI_EXIT_USAGE) {
        cli_store_close(&st);
        return jrc;
    }
    /* Hold the job's daemons (none may be at work on what goes) until the end. */
    int *held = jrc == CLI_EXIT_OK ? cli_alloc((j.nnodes ? j.nnodes : 1) * sizeof *held) : NULL;
    size_t nheld = 0;
    if (jrc == CLI_EXIT_OK && !p.dry) {
        cn_config cfg;
        cn_err ignored = {0};
        int timeout_s = 30 * (cn_config_load(&cfg, config, &ignored) == 0 ? cfg.daemon_timeout
                                                                           : PRUNE_TIMEOUT_S);
        if (cli_daemon_hold(verb, &j, timeout_s * 1000, held, &nheld) != CLI_EXIT_OK) {
            cli_error(verb, "nothing removed: the daemons may be at work on it");
            free(held);
            cli_job_close(&j);
            cli_store_close(&st);
            return CLI_EXIT_ERROR;
        }
        if (nheld)
            printf("held cairnd on %zu node(s) of job %s\n", nheld, job);
    }
    for (size_t i = 0; jrc == CLI_EXIT_OK && i < j.nnodes; i++)
        prune_dir(verb, j.node[i].fd, j.node[i].path, &p, false, &done, &failed);
    cn_err err = {0};
    int jobfd = st.pfs[0] ? lvl_pfs_open(st.pfs, job, false, &err) : -1;
    if (jobfd >= 0) {
        char path[CLI_PATH_MAX], user[32];
        cn_user_dirname(user, sizeof user);
        snprintf(path, sizeof path, "%.2000s/%s/%s", st.pfs, user, job);
        prune_dir(verb, jobfd, path, &p, true, &done, &failed);
        close(jobfd);
    } else if (st.pfs[0] && jobfd != -ENOENT) {
        cli_error(verb, "PFS: %s", err.msg);
        failed++;
    }
    if (jrc == CLI_EXIT_OK) { /* the daemons go on */
        cli_daemon_release(held, j.nnodes);
        free(held);
        cli_job_close(&j);
    }
    cli_store_close(&st);
    if (failed)
        return CLI_EXIT_ERROR;
    if (!done) {
        cli_error(verb, "no generation of job %s matched", job);
        return CLI_EXIT_MISSING;
    }
    return CLI_EXIT_OK;
}
