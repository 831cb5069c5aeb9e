/*
 * cli_ls.c - `cairn ls`: list jobs, or one job's generations, with cheap
 * checks only (manifests decoded, rank files present with the size their
 * manifest gives); no data is read or hashed - that is `cairn verify`.
 *
 * A generation's status, over the node directories visible here:
 *   corrupt     a manifest fails to decode or does not belong where it lies,
 *               or a listed rank file has the wrong size or is not a file
 *   complete    every node the manifest lists has a valid manifest and all
 *               its rank files
 *   partial     complete on every visible node, but the manifest lists more
 *               nodes than are visible (a real cluster shows each node only
 *               its own directory; run ls on every node, or verify there)
 *   incomplete  otherwise: some node lacks the generation, its manifest or a
 *               rank file (an interrupted checkpoint looks like this)
 * Its LEVEL is 4 once its PFS index (of the same rank count) decodes: node
 * manifests stop at 3. The PFS is found by cli_store_pfs; a job or generation
 * only there is listed too (pfs-only).
 */
#include "tools/tools.h"
#include "levels/pfs/pfs.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char cli_ls_usage[] =
    "Usage: cairn ls [--base DIR] [--config FILE] [--pfs DIR] [--job ID]\n"
    "\n"
    "Without --job, list the jobs under <base>/cairn-<uid> and on the PFS: visible\n"
    "node directories, generations, and the newest complete generation with its\n"
    "level and size (a job whose newest one is only on the PFS: STATUS pfs-only).\n"
    "With --job, list that job's generations, newest first:\n"
    "  GEN  LEVEL  KIND  NODES  RANKS  BYTES  SECONDS  CHANGED  PFS  STATUS  LABEL\n"
    "KIND is full, or 'incr <- P' for an incremental generation stored as changes\n"
    "to generation P; CHANGED is the share of the full state it stores itself\n"
    "(100% for a full generation). NODES is complete/seen (nodes holding a\n"
    "complete copy / node directories visible here, plus 'of N' when the manifest\n"
    "lists N nodes); RANKS is rank files present with the right size / ranks of\n"
    "the job; BYTES sums them. SECONDS is the wall time its checkpoint took at its\n"
    "level, LABEL the cairn_label it was given (both from the manifests, or the\n"
    "PFS index; '-' and nothing for generations an older cairn wrote). STATUS is\n"
    "complete, partial (complete on every\n"
    "visible node, but not all nodes are visible here), incomplete (a node lacks\n"
    "the generation, its manifest or a listed rank file), broken-chain (complete,\n"
    "but a generation its chain needs is not) or corrupt (a manifest does not\n"
    "decode or a rank file has the wrong size). Only manifests and file sizes are\n"
    "checked; use 'cairn verify' to check the data. Files named *.tmp are ignored.\n"
    "PFS tells whether the generation is on the parallel file system (level 4):\n"
    "its aggregated files and their bytes once its index is written (and\n"
    "'incr <- P' when it is stored there as the changes since PFS generation P),\n"
    "'incomplete' before; a generation only there has STATUS pfs-only. LEVEL is the highest\n"
    "level the generation reached: 4 once it is complete on the PFS, else the\n"
    "level its node manifests record (1-3). The PFS is --pfs DIR, else pfs.dir of\n"
    "--config, else CAIRN_PFS_DIR (node manifests do not record it); with none of\n"
    "them, one line on stderr says so and level 4 is not shown.\n"
    "With ckpt.every_<L> or ckpt.auto set (--config, CAIRN_CONFIG_FILE or CAIRN_*),\n"
    "a second table gives each level's checkpoint interval as cairn_need_checkpoint\n"
    "computes it, Young/Daly from the SECONDS of the newest generation at that level.\n"
    "\n"
    "Options:\n"
    "  -b, --base DIR      node-local base directory (default: CAIRN_BASE, else\n"
    "                      store.base of --config, else /dev/shm)\n"
    "  -c, --config FILE   read store.base and pfs.dir from this INI file\n"
    "  -p, --pfs DIR       the PFS directory (pfs.dir) to look in for level 4\n"
    "  -j, --job ID        list the generations of job ID\n"
    "  -h, --help          show this help\n"
    "\n"
    "ls exits 0 when it could list (whatever the statuses), 3 for no such job or\n"
    "a job without generations or a base without a cairn directory.\n";

enum gen_status { ST_COMPLETE, ST_PARTIAL, ST_INCOMPLETE, ST_BROKEN, ST_CORRUPT, ST_PFS };
static const char *const STATUS_NAME[] = {"complete", "partial",  "incomplete", "broken-chain",
                                          "corrupt",  "pfs-only"};

/* A generation directory on the PFS: its index decoded, or not. */
typedef struct pfs_gen {
    int64_t id;
    bool complete;
    uint32_t nfiles, nranks;
    uint64_t stored;
    int64_t parent;               /* -1: full; else an increment of this PFS generation */
    double seconds;
    char label[CAIRN_LABEL_MAX + 1];
} pfs_gen;

/* The job's generations on the PFS (ST->pfs), newest first. Allocates *OUT. */
static size_t pfs_list(const cli_store *st, const char *job, pfs_gen **out)
{
    *out = NULL;
    cn_err err = {0};
    int jobfd = st->pfs[0] ? lvl_pfs_open(st->pfs, job, false, &err) : -1;
    long *ids = NULL;
    int n = 0;
    if (jobfd < 0 || cn_gen_list(jobfd, &ids, &n, &err) < 0 || n == 0) {
        if (jobfd >= 0)
            close(jobfd);
        return 0;
    }
    *out = cli_alloc(sizeof **out * (size_t)n);
    for (int i = 0; i < n; i++) {
        cn_pindex x;
        pfs_gen *g = &(*out)[i];
        *g = (pfs_gen){.id = ids[i], .parent = -1};
        if (lvl_pfs_index(jobfd, ids[i], &x, &err) == 0) {
            g->complete = strcmp(x.job, job) == 0;
            g->nfiles = x.nfiles;
            g->nranks = x.nranks;
            g->stored = x.stored;
            g->parent = x.parent;
            g->seconds = x.seconds;
            memcpy(g->label, x.label, sizeof g->label);
            cn_pindex_free(&x);
        }
    }
    free(ids);
    close(jobfd);
    return (size_t)n;
}

typedef struct gen_sum {
    int64_t parent;         /* from the manifests: -1 full, -2 unknown */
    uint64_t raw, delta;    /* bytes of state and of those stored, over the manifests */
    uint32_t level;         /* lowest level among the manifests; 0 if none decoded */
    uint32_t nnodes;        /* nodes the manifests list; 0 if unknown */
    uint32_t nranks;        /* ranks of the job; 0 if unknown */
    size_t nodes_complete;  /* visible nodes with a valid manifest and all their files */
    uint64_t ranks_ok;      /* rank files present with the manifest's size */
    uint64_t bytes;         /* sizes of the rank files present */
    bool corrupt;
    int status;
    double seconds;         /* from the first manifest that decoded (all say the same) */
    char label[CAIRN_LABEL_MAX + 1];
    bool labeled;           /* a manifest decoded: SECONDS and LABEL known */
} gen_sum;

/* Count (without a manifest) the rank files in GENFD and their bytes. */
static void count_unlisted(int genfd, gen_sum *s)
{
    cli_names names;
    if (cli_names_read(genfd, &names, NULL) < 0)
        return;
    for (size_t i = 0; i < names.n; i++) {
        struct stat st;
        if (cli_parse_rank_filename(names.v[i]) >= 0 &&
            fstatat(genfd, names.v[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
            s->bytes += (uint64_t)st.st_size;
    }
    cli_names_free(&names);
}

/* Add generation GEN on NODE to S. */
static void sum_node(const cli_job *j, const cli_node *node, int64_t gen, gen_sum *s)
{
    cn_err err = {0};
    int genfd = cli_gen_open(node, gen, &err);
    if (genfd < 0) {
        if (genfd != CAIRN_ENOENT)
            s->corrupt = true; /* a symlink or foreign directory in its place */
        return;
    }
    cn_manifest m;
    int rc = cli_manifest_load(genfd, j->name, gen, node->name, &m, &err);
    if (rc < 0) {
        if (rc != CAIRN_ENOENT)
            s->corrupt = true;
        count_unlisted(genfd, s);
        close(genfd);
        return;
    }
    if (s->level == 0 || m.level < s->level)
        s->level = m.level;
    if (!s->labeled) {
        s->labeled = true;
        s->seconds = m.seconds;
        memcpy(s->label, m.label, sizeof s->label);
    }
    s->parent = m.parent;
    for (uint32_t i = 0; i < m.nlocal; i++) {
        s->raw += m.local[i].raw;
        s->delta += m.local[i].delta;
    }
    s->nnodes = m.nnodes;
    s->nranks = m.nranks;
    bool whole = true;
    for (uint32_t i = 0; i < m.nlocal; i++) {
        char name[32];
        struct stat st;
        cn_rank_filename(name, sizeof name, m.local[i].rank);
        if (fstatat(genfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            whole = false;
            continue;
        }
        if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size != m.local[i].file_size) {
            s->corrupt = true;
            whole = false;
        } else {
            s->ranks_ok++;
        }
        if (S_ISREG(st.st_mode))
            s->bytes += (uint64_t)st.st_size;
    }
    if (whole)
        s->nodes_complete++;
    cn_manifest_free(&m);
    close(genfd);
}

static void summarize(const cli_job *j, int64_t gen, gen_sum *s)
{
    memset(s, 0, sizeof *s);
    s->parent = -2;
    for (size_t i = 0; i < j->nnodes; i++)
        sum_node(j, &j->node[i], gen, s);
    if (s->corrupt)
        s->status = ST_CORRUPT;
    else if (s->nnodes && s->nodes_complete >= s->nnodes && s->ranks_ok == s->nranks)
        s->status = ST_COMPLETE;
    else if (s->nnodes && s->nodes_complete == j->nnodes && j->nnodes < s->nnodes)
        s->status = ST_PARTIAL;
    else
        s->status = ST_INCOMPLETE;
}

/* Summarize every generation of J (newest first); an incremental one whose
 * parent is not complete (or partial) is a broken chain. Allocates. */
static gen_sum *summarize_all(const cli_job *j)
{
    gen_sum *s = cli_alloc(sizeof *s * (j->ngens ? j->ngens : 1));
    for (size_t g = j->ngens; g-- > 0;) { /* oldest first: parents before children */
        summarize(j, j->gen[g], &s[g]);
        if (s[g].parent < 0 || (s[g].status != ST_COMPLETE && s[g].status != ST_PARTIAL))
            continue;
        size_t p = g + 1;
        while (p < j->ngens && j->gen[p] != s[g].parent)
            p++;
        if (p == j->ngens || (s[p].status != ST_COMPLETE && s[p].status != ST_PARTIAL))
            s[g].status = ST_BROKEN;
    }
    return s;
}

static void add_pfs_cell(cli_table *t, const pfs_gen *p)
{
    char hb[32];
    if (!p)
        cli_table_add(t, "-");
    else if (!p->complete)
        cli_table_add(t, "incomplete");
    else if (p->parent >= 0)
        cli_table_add(t, "%u files, %s, incr <- %lld", p->nfiles,
                      cli_human(p->stored, hb, sizeof hb), (long long)p->parent);
    else
        cli_table_add(t, "%u files, %s", p->nfiles, cli_human(p->stored, hb, sizeof hb));
}

static void add_seconds_cell(cli_table *t, double seconds)
{
    if (seconds > 0)
        cli_table_add(t, "%.3f", seconds);
    else
        cli_table_add(t, "-");
}

/* Has the generation of S (may be NULL) reached level 4: complete on the PFS (P)? */
static bool at_pfs(const gen_sum *s, const pfs_gen *p)
{
    return p && p->complete && (!s || !s->nranks || s->nranks == p->nranks);
}

static void add_local_cells(cli_table *t, const cli_job *j, const gen_sum *s, const pfs_gen *p)
{
    char hb[32], of[32] = "";
    if (s->nnodes && s->nnodes != j->nnodes)
        snprintf(of, sizeof of, " of %u", s->nnodes);
    if (at_pfs(s, p))
        cli_table_add(t, "%d", CAIRN_LEVEL_PFS);
    else if (s->level)
        cli_table_add(t, "%u", s->level);
    else
        cli_table_add(t, "-");
    if (s->parent >= 0)
        cli_table_add(t, "incr <- %lld", (long long)s->parent);
    else
        cli_table_add(t, "%s", s->parent == -1 ? "full" : "-");
    cli_table_add(t, "%zu/%zu%s", s->nodes_complete, j->nnodes, of);
    if (s->nranks)
        cli_table_add(t, "%llu/%u", (unsigned long long)s->ranks_ok, s->nranks);
    else
        cli_table_add(t, "-");
    cli_table_add(t, "%s", cli_human(s->bytes, hb, sizeof hb));
    add_seconds_cell(t, s->seconds);
    if (s->raw)
        cli_table_add(t, "%.3g%%", 100.0 * (double)s->delta / (double)s->raw);
    else
        cli_table_add(t, "-");
}

/* After the table of `cairn ls --job`: with ckpt.every_<L> or ckpt.auto in
 * the configuration (CONFIG, else CAIRN_CONFIG_FILE and CAIRN_*), each
 * level's interval, Young/Daly from COST[L]: the seconds recorded with the
 * newest generation that reached level L. Nothing otherwise. */
static void ls_intervals(const cli_store *st, const char *config, const double cost[5])
{
    cn_config cfg;
    cn_err err = {0};
    if (cn_config_load(&cfg, config, &err) != 0)
        return; /* cli_store_open already read it; ls says nothing more then */
    bool any = cfg.ckpt_auto;
    for (int l = 1; l <= 4; l++)
        any = any || cfg.ckpt_every[l].iters > 0 || cfg.ckpt_every[l].seconds > 0;
    if (!any)
        return;
    if (!cfg.pfs_dir[0] && st->pfs[0])
        snprintf(cfg.pfs_dir, sizeof cfg.pfs_dir, "%s", st->pfs);
    printf("\nwhen to checkpoint (cairn_need_checkpoint; costs: the newest generation "
           "at each level):\n");
    cli_intervals(stdout, &cfg, cost);
}

static int ls_job(const char *verb, const cli_store *st, const char *config, const char *job)
{
    cli_job j;
    double cost[5] = {0}; /* seconds of the newest generation at each level */
    pfs_gen *pfs = NULL;
    size_t npfs = pfs_list(st, job, &pfs);
    struct stat sb; /* a job only on the PFS (every node wiped) has no directory here */
    bool local = !npfs || (st->fd >= 0 && fstatat(st->fd, job, &sb, AT_SYMLINK_NOFOLLOW) == 0);
    memset(&j, 0, sizeof j);
    j.fd = -1;
    int rc = local ? cli_job_open(verb, st, job, &j) : CLI_EXIT_MISSING;
    if (rc != CLI_EXIT_OK && !(npfs && rc == CLI_EXIT_MISSING)) {
        cli_job_close(&j);
        free(pfs);
        return rc;
    }
    if (j.ngens == 0 && npfs == 0) {
        cli_error(verb, "job '%s' has no generations in %s", job, j.path);
        cli_job_close(&j);
        free(pfs);
        return CLI_EXIT_MISSING;
    }
    cli_table t;
    cli_table_init(&t, "rrlrrrrrlll");
    const char *head[] = {"GEN",     "LEVEL", "KIND", "NODES",  "RANKS", "BYTES",
                          "SECONDS", "CHANGED", "PFS", "STATUS", "LABEL"};
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
        cli_table_add(&t, "%s", head[i]);
    gen_sum *all = summarize_all(&j);
    for (size_t g = 0, p = 0; g < j.ngens || p < npfs;) { /* both lists newest first */
        int64_t id = g < j.ngens && (p == npfs || j.gen[g] >= pfs[p].id) ? j.gen[g] : pfs[p].id;
        const pfs_gen *pg = p < npfs && pfs[p].id == id ? &pfs[p++] : NULL;
        const gen_sum *s = g < j.ngens && j.gen[g] == id ? &all[g++] : NULL;
        cli_table_add(&t, "%lld", (long long)id);
        if (s) {
            add_local_cells(&t, &j, s, pg);
        } else {
            for (int c = 0; c < 5; c++)
                cli_table_add(&t, c == 0 && at_pfs(NULL, pg) ? "4" : "-");
            add_seconds_cell(&t, pg->seconds);
            cli_table_add(&t, "-");
        }
        add_pfs_cell(&t, pg);
        cli_table_add(&t, "%s", STATUS_NAME[s ? s->status : ST_PFS]);
        cli_table_add(&t, "%s", s && s->labeled ? s->label : pg && pg->complete ? pg->label : "");
        int lv = at_pfs(s, pg) ? CAIRN_LEVEL_PFS : s && s->status == ST_COMPLETE ? (int)s->level : 0;
        double sec = s && s->labeled && s->seconds > 0 ? s->seconds : pg ? pg->seconds : 0;
        if (lv >= 1 && lv <= 4 && !(cost[lv] > 0))
            cost[lv] = sec;
    }
    free(all);
    free(pfs);
    cli_table_print(&t, stdout);
    cli_table_free(&t);
    cli_job_close(&j);
    ls_intervals(st, config, cost);
    return CLI_EXIT_OK;
}

/* One row of the job list: job NAME, its node-local view J (NULL: only on
 * the PFS) and its PFS generations PFS[0..NPFS-1], both newest first. */
static void job_row(cli_table *t, const char *name, const cli_job *j, const pfs_gen *pfs,
                    size_t npfs)
{
    size_t ng = j ? j->ngens : 0, g = 0, p = 0, gens = ng;
    gen_sum *all = j ? summarize_all(j) : NULL, s = {0};
    while (g < ng && all[g].status != ST_COMPLETE && all[g].status != ST_PARTIAL)
        g++; /* the newest complete (or complete as far as we see) */
    if (g < ng)
        s = all[g];
    free(all);
    while (p < npfs && !at_pfs(NULL, &pfs[p]))
        p++; /* the newest complete on the PFS */
    const pfs_gen *same = NULL; /* the PFS copy of the newest local one */
    for (size_t i = 0; i < npfs; i++) {
        bool local = false;
        for (size_t k = 0; k < ng && !local; k++)
            local = j->gen[k] == pfs[i].id;
        gens += !local;
        if (g < ng && pfs[i].id == j->gen[g])
            same = &pfs[i];
    }
    bool pfs_newer = p < npfs && (g == ng || pfs[p].id > j->gen[g]);
    char hb[32];
    cli_table_add(t, "%s", name);
    cli_table_add(t, "%zu", j ? j->nnodes : 0);
    cli_table_add(t, "%zu", gens);
    if (pfs_newer) {
        cli_table_add(t, "%lld", (long long)pfs[p].id);
        cli_table_add(t, "%d", CAIRN_LEVEL_PFS);
        cli_table_add(t, "%s", cli_human(pfs[p].stored, hb, sizeof hb));
        cli_table_add(t, "%s", STATUS_NAME[ST_PFS]);
    } else if (g < ng) {
        cli_table_add(t, "%lld", (long long)j->gen[g]);
        cli_table_add(t, "%u", at_pfs(&s, same) ? (uint32_t)CAIRN_LEVEL_PFS : s.level);
        cli_table_add(t, "%s", cli_human(s.bytes, hb, sizeof hb));
        cli_table_add(t, "%s", STATUS_NAME[s.status]);
    } else {
        for (int c = 0; c < 3; c++)
            cli_table_add(t, "-");
        cli_table_add(t, "%s", gens ? "none complete" : "no generations");
    }
}

static int ls_all(const char *verb, const cli_store *st)
{
    cli_names jobs, pjobs;
    int rc = cli_job_names(verb, st, &jobs);
    if (rc != CLI_EXIT_OK)
        return rc;
    cli_pfs_job_names(st, &pjobs);
    if (st->fd < 0 && pjobs.n == 0) {
        cli_error(verb, "no checkpoints: %s does not exist", st->path);
        cli_names_free(&jobs);
        return CLI_EXIT_MISSING;
    }
    cli_table t;
    cli_table_init(&t, "lrrrrrl");
    const char *head[] = {"JOB", "NODES", "GENS", "NEWEST", "LEVEL", "BYTES", "STATUS"};
    for (size_t i = 0; i < 7; i++)
        cli_table_add(&t, "%s", head[i]);
    for (size_t a = 0, b = 0; a < jobs.n || b < pjobs.n;) { /* both sorted: merge */
        int cmp = a == jobs.n ? 1 : b == pjobs.n ? -1 : strverscmp(jobs.v[a], pjobs.v[b]);
        const char *name = cmp <= 0 ? jobs.v[a] : pjobs.v[b];
        pfs_gen *pfs = NULL;
        size_t npfs = cmp >= 0 ? pfs_list(st, name, &pfs) : 0;
        a += cmp <= 0;
        b += cmp >= 0;
        cli_job j;
        if (cmp > 0) {
            job_row(&t, name, NULL, pfs, npfs);
        } else if (cli_job_open(verb, st, name, &j) != CLI_EXIT_OK) {
            rc = cli_exit_worst(rc, CLI_EXIT_ERROR);
            cli_job_close(&j);
        } else {
            job_row(&t, name, &j, pfs, npfs);
            cli_job_close(&j);
        }
        free(pfs);
    }
    cli_table_print(&t, stdout);
    cli_table_free(&t);
    cli_names_free(&jobs);
    cli_names_free(&pjobs);
    return rc;
}

int cli_ls(int argc, char **argv)
{
    static const struct option opts[] = {
        {"base", required_argument, NULL, 'b'}, {"config", required_argument, NULL, 'c'},
        {"job", required_argument, NULL, 'j'},  {"pfs", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0},
    };
    const char *verb = argv[0], *base = NULL, *config = NULL, *job = NULL, *pfs = NULL;
    int c;
    while ((c = getopt_long(argc, argv, ":b:c:j:p:h", opts, NULL)) != -1) {
        switch (c) {
        case 'b': base = optarg; break;
        case 'c': config = optarg; break;
        case 'p': pfs = optarg; break;
        case 'j': job = optarg; break;
        case 'h': return cli_help(verb);
        default: return cli_getopt_fail(verb, c, argv);
        }
    }
    if (optind < argc)
        return cli_usage_error(verb, "unexpected argument '%s'", argv[optind]);
    cli_store st;
    int rc = cli_store_open(verb, base, config, &st);
    if (rc == CLI_EXIT_OK)
        rc = cli_store_pfs(verb, pfs, &st);
    if (rc == CLI_EXIT_OK)
        rc = job ? ls_job(verb, &st, config, job) : ls_all(verb, &st);
    cli_store_close(&st);
    return rc;
}
