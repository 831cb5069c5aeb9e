/*
 * cli_prune.c - `cairn prune`: remove generations by hand, the ones cairn
 * never removes itself: those newer than the newest one a run restored or
 * wrote (an abandoned timeline; automatic only with store.prune_abandoned =
 * on) and those a job of another layout wrote (a restart on another rank
 * count refuses them, and refuses to write over them).
 *
 * Generations are named (--gen N, repeatable) or everything above an id
 * (--above N); --abandoned takes the "abandoned-gen-*" directories a run set
 * aside (an abandoned timeline, see cn_set_aside). Each one goes from every
 * node directory of the job visible here and from the PFS (pfs.dir of the
 * configuration, or CAIRN_PFS_DIR): renamed aside first (so a half-removed
 * generation never looks like one), then removed, newest first, never
 * through a symlink. --dry-run lists and removes nothing.
 * Prune plans before it removes, for every directory (each node's and the
 * PFS's): a generation that one which stays is stored as changes to (its
 * parent in the manifest on a node, in the index on the PFS) is refused,
 * unless --with-dependents, which removes those too (down every chain) and
 * lists them. The parents of the running application's next checkpoints
 * (published in <node>/app.lock, common/live.c) and their chains are never
 * removed. Any refusal: nothing is removed anywhere, exit 1.
 * A real cluster shows each node only its own directory: run it on every
 * node (the PFS part once is enough; again is harmless).
 * Before it plans, prune holds what may be at work on the job: the running
 * application (the write lock of app.lock: its leader finishes the
 * checkpoint or restart it is in and starts none until prune ends), then
 * the daemons (cairnd) of every node directory it sees (HOLD, cli_daemon.c,
 * as the library does; they finish the generation they are at, then start
 * nothing); both are released at the end. With nothing running it removes at
 * once; an application or a daemon that will not pause within 30 x
 * daemon.timeout makes it remove nothing (exit 1).
 */
#include "tools/tools.h"
#include "levels/pfs/pfs.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cli_prune_usage[] =
    "Usage: cairn prune --job ID (--gen N ... | --above N | --abandoned)\n"
    "                   [--with-dependents] [--dry-run] [--base DIR] [--config FILE]\n"
    "\n"
    "Remove generations of job ID by hand, from every node directory visible here\n"
    "and from the PFS (pfs.dir of --config, or CAIRN_PFS_DIR). cairn never removes\n"
    "these itself: generations newer than the newest one a run restored or wrote\n"
    "(an abandoned timeline; unless store.prune_abandoned = on) and generations a\n"
    "job of another layout wrote (a restart on another rank count refuses them,\n"
    "and refuses to checkpoint over them). Each generation directory is renamed\n"
    "aside, then removed. On a cluster, run it on every node.\n"
    "\n"
    "A generation that another one staying is stored as changes to (an\n"
    "increment's parent, down to its full base; on node-local storage and on the\n"
    "PFS) is not removed, unless --with-dependents: then those go too, and are\n"
    "listed. Neither is the generation the running application's next checkpoint\n"
    "diffs against, nor any generation its chain needs. Any refusal: nothing is\n"
    "removed, exit 1.\n"
    "\n"
    "If the application runs, prune first holds it (it finishes the checkpoint or\n"
    "restart it is in, and starts none until prune is done); if daemons (cairnd)\n"
    "serve the job, prune then holds them (each finishes the generation it is at,\n"
    "then starts nothing). Both go on when prune is done; if either does not pause\n"
    "within 30 x daemon.timeout, nothing is removed.\n"
    "\n"
    "Options:\n"
    "  -j, --job ID        the job\n"
    "  -g, --gen N         remove generation N (repeat for more)\n"
    "  -a, --above N       remove every generation newer than N\n"
    "  -A, --abandoned     remove the abandoned-gen-* directories a run set aside:\n"
    "                      generations newer than one it restored and then wrote\n"
    "  -D, --with-dependents\n"
    "                      also remove every generation stored as changes to one\n"
    "                      that goes (listed); never the running application's\n"
    "  -n, --dry-run       print what would be removed, remove nothing\n"
    "  -b, --base DIR      node-local base directory (default: CAIRN_BASE, else\n"
    "                      store.base of --config, else /dev/shm)\n"
    "  -c, --config FILE   read store.base, pfs.dir and daemon.timeout from this\n"
    "                      INI file\n"
    "  -h, --help          show this help\n"
    "\n"
    "prune exits 0 when it removed (or would remove) at least one directory, 3 when\n"
    "no generation matched, 1 when a removal failed or was refused, or the\n"
    "application or the daemons would not hold.\n";

#define MAX_GENS 256
#define PRUNE_TIMEOUT_S 10 /* daemon.timeout's default, if the configuration does not load */

typedef struct pick {
    long gen[MAX_GENS];
    int n;
    long above;                   /* -1: none */
    bool abandoned;               /* the abandoned-gen-* directories too */
    bool dry;
    bool dependents;              /* --with-dependents */
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

/* One directory prune works on: a node's, or the PFS job directory, and what
 * goes from it (the plan, made for every directory before anything goes). */
typedef struct gdir {
    const char *path, *node;      /* node: its name; NULL for the PFS */
    int fd;
    long *ids, *parent;           /* newest first; parent -1: full, or not known */
    int n;
    bool *go;
    long *root;                   /* of a dependent: the picked generation it needs; else -1 */
    int live;                     /* node: <node>/app.lock (common/live.c), -1 none */
    bool alive, held;             /* an application runs on it; prune holds it */
    long pid, need[3];            /* its pid, the parents of its next checkpoints */
} gdir;

static int find_id(const gdir *d, long id)
{
    for (int i = 0; i < d->n; i++)
        if (d->ids[i] == id)
            return i;
    return -1;
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

/* The generations of D and the parent of each (its manifest on a node, its
 * index on the PFS; -1 when it is full or says nothing that reads). */
static int list_dir(const char *verb, const char *job, gdir *d)
{
    cn_err err = {0};
    if (cn_gen_list(d->fd, &d->ids, &d->n, &err) < 0) {
        cli_error(verb, "%s: %s", d->path, err.msg);
        return -1;
    }
    size_t k = (size_t)d->n + 1;
    d->parent = cli_alloc(k * sizeof *d->parent);
    d->root = cli_alloc(k * sizeof *d->root);
    d->go = cli_alloc(k * sizeof *d->go);
    for (int i = 0; i < d->n; i++) {
        d->parent[i] = d->root[i] = -1;
        d->go[i] = false;
        cn_err ignored = {0};
        if (!d->node) {
            cn_pindex x;
            if (lvl_pfs_index(d->fd, d->ids[i], &x, &ignored) == 0) {
                d->parent[i] = x.parent;
                cn_pindex_free(&x);
            }
            continue;
        }
        char name[64];
        cn_gen_dirname(name, sizeof name, d->ids[i]);
        int genfd = cn_dir_open(d->fd, name, false, &ignored);
        cn_manifest m;
        if (genfd >= 0 && cli_manifest_load(genfd, job, d->ids[i], d->node, &m, &ignored) == 0) {
            d->parent[i] = (long)m.parent;
            cn_manifest_free(&m);
        }
        if (genfd >= 0)
            close(genfd);
    }
    return 0;
}

/* The plan for D: what P picks, and with --with-dependents every generation
 * stored as changes to one that goes. Refused (printed; the count returned):
 * a generation a kept one is stored as changes to, and any link of the chain
 * the running application's next checkpoint diffs against. */
static int plan_dir(const char *verb, gdir *d, const pick *p)
{
    int refused = 0;
    for (int i = 0; i < d->n; i++)
        d->go[i] = picked(p, d->ids[i]);
    for (int i = d->n; i-- > 0;) { /* oldest first: a parent is decided before its child */
        int j = d->parent[i] >= 0 ? find_id(d, d->parent[i]) : -1;
        if (d->go[i] || j < 0 || !d->go[j] || !p->dependents)
            continue;
        d->go[i] = true;
        d->root[i] = d->root[j] >= 0 ? d->root[j] : d->ids[j];
    }
    for (int i = 0; i < d->n; i++) { /* a kept child: its parent stays */
        int j = d->parent[i] >= 0 ? find_id(d, d->parent[i]) : -1;
        if (d->go[i] || j < 0 || !d->go[j])
            continue;
        char name[64];
        cn_gen_dirname(name, sizeof name, d->ids[j]);
        cli_error(verb, "%s/%s: not removed: %sgeneration %ld is stored as changes to it (its "
                  "chain needs it); remove %ld too, or pass --with-dependents", d->path, name,
                  d->node ? "" : "PFS ", d->ids[i], d->ids[i]);
        refused++;
    }
    for (int l = 0; d->alive && l < 3; l++) { /* the running application's parents */
        bool seen = false;
        for (int e = 0; e < l; e++)
            seen |= d->need[e] == d->need[l];
        if (d->need[l] < 0 || seen)
            continue;
        int hops = 0;
        for (int k = find_id(d, d->need[l]); k >= 0 && hops <= d->n; hops++) {
            if (d->go[k]) {
                char name[64];
                cn_gen_dirname(name, sizeof name, d->ids[k]);
                cli_error(verb, "%s/%s: not removed: the running application (pid %ld) diffs "
                          "its next checkpoint at level %d against generation %ld%s", d->path,
                          name, d->pid, l + 1, d->need[l],
                          d->ids[k] == d->need[l] ? "" : ", whose chain needs it");
                refused++;
            }
            k = d->parent[k] >= 0 ? find_id(d, d->parent[k]) : -1;
        }
    }
    return refused;
}

/* Remove what the plan of D says (newest first: a chain is never left broken
 * half-way), then with --abandoned its abandoned-gen-* directories. */
static void prune_dir(const char *verb, const gdir *d, const pick *p, int *done, int *failed)
{
    for (int i = 0; i < d->n; i++) {
        if (!d->go[i])
            continue;
        char name[64];
        cn_gen_dirname(name, sizeof name, d->ids[i]);
        if (d->root[i] >= 0)
            printf("%s/%s: %s too: stored as changes to generation %ld, whose chain needs %ld "
                   "(--with-dependents)\n", d->path, name, p->dry ? "would go" : "goes",
                   d->parent[i], d->root[i]);
        remove_dir(verb, d->fd, d->path, name, p->dry) ? (*done)++ : (*failed)++;
    }
    int fd = p->abandoned ? cn_dir_listing_fd(d->fd) : -1;
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (fd >= 0 && !dir)
        close(fd);
    for (struct dirent *de; dir && (de = readdir(dir)) != NULL;)
        if (strncmp(de->d_name, CN_ABANDONED_PREFIX, strlen(CN_ABANDONED_PREFIX)) == 0 &&
            strlen(de->d_name) < 256)
            remove_dir(verb, d->fd, d->path, de->d_name, p->dry) ? (*done)++ : (*failed)++;
    if (dir)
        closedir(dir);
}

/* Node D: is an application running on it? Unless DRY, hold it (it finishes
 * the checkpoint or restart it is in, within TIMEOUT_MS, and starts none
 * until prune ends); then read the parents it published. 0, or -1 (printed):
 * it did not leave its checkpoint in time. */
static int hold_app(const char *verb, gdir *d, bool dry, int timeout_ms)
{
    d->live = cn_live_open(d->fd, !dry); /* made, so that an application starting now waits */
    if (d->live < 0)
        return 0;
    if (!dry) {
        int rc = cn_live_lock(d->live, CN_LIVE_BUSY, true, 0);
        if (rc == -EAGAIN) {
            printf("waiting for the application on node %s to finish its checkpoint\n", d->node);
            fflush(stdout);
            rc = cn_live_lock(d->live, CN_LIVE_BUSY, true, timeout_ms);
        }
        if (rc == -EAGAIN) {
            cli_error(verb, "the application on node %s did not finish its checkpoint in time",
                      d->node);
            return -1;
        }
        if (rc < 0) { /* no OFD locks here: the parents count while their pid lives */
            cli_error(verb, "%s/%s: cannot lock it (%s): the application is not held; the "
                      "parents it names count while its process lives", d->path, CN_LIVE_NAME,
                      strerror(-rc));
            d->alive = cn_live_read(d->live, &d->pid, d->need) == 0 && d->pid > 0 &&
                       (kill((pid_t)d->pid, 0) == 0 || errno == EPERM);
            return 0;
        }
        d->held = true;
    }
    d->alive = cn_live_taken(d->live, CN_LIVE_ALIVE) &&
               cn_live_read(d->live, &d->pid, d->need) == 0;
    return 0;
}

static void free_dir(gdir *d)
{
    free(d->ids), free(d->parent), free(d->go), free(d->root);
    if (d->live >= 0)
        close(d->live); /* the application goes on */
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
        {"abandoned", no_argument, NULL, 'A'},  {"with-dependents", no_argument, NULL, 'D'},
        {"base", required_argument, NULL, 'b'}, {"config", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0},
    };
    const char *verb = argv[0], *base = NULL, *config = NULL, *job = NULL;
    pick p = {.above = -1};
    int c, rc;
    while ((c = getopt_long(argc, argv, ":j:g:a:ADnb:c:h", opts, NULL)) != -1) {
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
        case 'D': p.dependents = true; break;
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
    cli_job j;
    int jrc = cli_job_open(verb, &st, job, &j);
    if (jrc == CLI_EXIT_USAGE) {
        cli_store_close(&st);
        return jrc;
    }
    size_t nnodes = jrc == CLI_EXIT_OK ? j.nnodes : 0, nd = 0;
    gdir *d = cli_alloc((nnodes + 1) * sizeof *d);
    int *held = cli_alloc((nnodes + 1) * sizeof *held);
    size_t nheld = 0;
    bool daemons = false; /* held: to be released */
    cn_config cfg;
    cn_err ignored = {0};
    int timeout_s = 30 * (cn_config_load(&cfg, config, &ignored) == 0 ? cfg.daemon_timeout
                                                                       : PRUNE_TIMEOUT_S);
    int failed = 0, done = 0, apps = 0;
    for (size_t i = 0; i < nnodes; i++) /* the application first: it may need its daemon */
        d[nd++] = (gdir){.path = j.node[i].path, .node = j.node[i].name, .fd = j.node[i].fd,
                         .live = -1};
    for (size_t i = 0; !failed && i < nd; i++) {
        failed += hold_app(verb, &d[i], p.dry, timeout_s * 1000) < 0;
        apps += d[i].alive && d[i].held;
    }
    if (apps)
        printf("held the running application on %d node(s) of job %s\n", apps, job);
    if (!failed && nnodes && !p.dry) { /* then the daemons: none may be at work on what goes */
        failed = cli_daemon_hold(verb, &j, timeout_s * 1000, held, &nheld) != CLI_EXIT_OK;
        daemons = !failed;
        if (!failed && nheld)
            printf("held cairnd on %zu node(s) of job %s\n", nheld, job);
    }
    char pfs_path[CLI_PATH_MAX];
    cn_err err = {0};
    int jobfd = !failed && st.pfs[0] ? lvl_pfs_open(st.pfs, job, false, &err) : -1;
    if (jobfd >= 0) {
        char user[32];
        cn_user_dirname(user, sizeof user);
        snprintf(pfs_path, sizeof pfs_path, "%.2000s/%s/%s", st.pfs, user, job);
        d[nd++] = (gdir){.path = pfs_path, .fd = jobfd, .live = -1};
    } else if (!failed && st.pfs[0] && jobfd != -ENOENT) {
        cli_error(verb, "PFS: %s", err.msg);
        failed++;
    }
    /* The plan, for every directory, before anything goes. */
    for (size_t i = 0; !failed && i < nd; i++)
        failed += list_dir(verb, job, &d[i]) < 0;
    int refused = 0;
    for (size_t i = 0; !failed && i < nd; i++)
        refused += plan_dir(verb, &d[i], &p);
    if (refused)
        cli_error(verb, "nothing removed: %d generation director%s must stay", refused,
                  refused == 1 ? "y" : "ies");
    else if (failed)
        cli_error(verb, "nothing removed");
    for (size_t i = 0; !failed && !refused && i < nd; i++)
        prune_dir(verb, &d[i], &p, &done, &failed);
    for (size_t i = 0; i < nd; i++) /* the application and the daemons go on */
        free_dir(&d[i]);
    if (daemons)
        cli_daemon_release(held, nnodes);
    free(held), free(d);
    if (jobfd >= 0)
        close(jobfd);
    if (jrc == CLI_EXIT_OK)
        cli_job_close(&j);
    cli_store_close(&st);
    if (failed || refused)
        return CLI_EXIT_ERROR;
    if (!done) {
        cli_error(verb, "no generation of job %s matched", job);
        return CLI_EXIT_MISSING;
    }
    return CLI_EXIT_OK;
}
