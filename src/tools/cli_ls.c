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
 */
#include "tools/tools.h"
#include "levels/levels.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char cli_ls_usage[] =
    "Usage: cairn ls [--base DIR] [--config FILE] [--job ID]\n"
    "\n"
    "Without --job, list the jobs under <base>/cairn-<uid>: visible node directories,\n"
    "generations, and the newest complete generation with its level and size.\n"
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
    "PFS tells whether the generation is on the parallel file system (level 4,\n"
    "pfs.dir of the configuration or CAIRN_PFS_DIR): its aggregated files and\n"
    "their bytes once its index is written, 'incomplete' before; a generation\n"
    "only there has STATUS pfs-only.\n"
    "\n"
    "Options:\n"
    "  -b, --base DIR      node-local base directory (default: CAIRN_BASE, else\n"
    "                      store.base of --config, else /dev/shm)\n"
    "  -c, --config FILE   read store.base from this INI file\n"
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
    uint32_t nfiles;
    uint64_t stored;
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
        *g = (pfs_gen){.id = ids[i]};
        if (lvl_pfs_index(jobfd, ids[i], &x, &err) == 0) {
            g->complete = strcmp(x.job, job) == 0;
            g->nfiles = x.nfiles;
            g->stored = x.stored;
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

static void add_local_cells(cli_table *t, const cli_job *j, const gen_sum *s)
{
    char hb[32], of[32] = "";
    if (s->nnodes && s->nnodes != j->nnodes)
        snprintf(of, sizeof of, " of %u", s->nnodes);
    if (s->level)
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

static int ls_job(const char *verb, const cli_store *st, const char *job)
{
    cli_job j;
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
            add_local_cells(&t, &j, s);
        } else {
            for (int c = 0; c < 5; c++)
                cli_table_add(&t, "-");
            add_seconds_cell(&t, pg->seconds);
            cli_table_add(&t, "-");
        }
        add_pfs_cell(&t, pg);
        cli_table_add(&t, "%s", STATUS_NAME[s ? s->status : ST_PFS]);
        cli_table_add(&t, "%s", s && s->labeled ? s->label : pg && pg->complete ? pg->label : "");
    }
    free(all);
    free(pfs);
    cli_table_print(&t, stdout);
    cli_table_free(&t);
    cli_job_close(&j);
    return CLI_EXIT_OK;
}

static int ls_all(const char *verb, const cli_store *st)
{
    if (st->fd < 0) {
        cli_error(verb, "no checkpoints: %s does not exist", st->path);
        return CLI_EXIT_MISSING;
    }
    cli_names jobs;
    int rc = cli_job_names(verb, st, &jobs);
    if (rc != CLI_EXIT_OK)
        return rc;
    cli_table t;
    cli_table_init(&t, "lrrrrrl");
    const char *head[] = {"JOB", "NODES", "GENS", "NEWEST", "LEVEL", "BYTES", "STATUS"};
    for (size_t i = 0; i < 7; i++)
        cli_table_add(&t, "%s", head[i]);
    for (size_t i = 0; i < jobs.n; i++) {
        cli_job j;
        if (cli_job_open(verb, st, jobs.v[i], &j) != CLI_EXIT_OK) {
            rc = cli_exit_worst(rc, CLI_EXIT_ERROR);
            cli_job_close(&j);
            continue;
        }
        /* The newest generation that is complete (or complete as far as we see). */
        gen_sum *all = summarize_all(&j), s = {0};
        size_t g;
        for (g = 0; g < j.ngens; g++)
            if (all[g].status == ST_COMPLETE || all[g].status == ST_PARTIAL)
                break;
        if (g < j.ngens)
            s = all[g];
        free(all);
        char hb[32];
        cli_table_add(&t, "%s", j.name);
        cli_table_add(&t, "%zu", j.nnodes);
        cli_table_add(&t, "%zu", j.ngens);
        if (g < j.ngens) {
            cli_table_add(&t, "%lld", (long long)j.gen[g]);
            cli_table_add(&t, "%u", s.level);
            cli_table_add(&t, "%s", cli_human(s.bytes, hb, sizeof hb));
            cli_table_add(&t, "%s", STATUS_NAME[s.status]);
        } else {
            for (int c = 0; c < 3; c++)
                cli_table_add(&t, "-");
            cli_table_add(&t, "%s", j.ngens ? "none complete" : "no generations");
        }
        cli_job_close(&j);
    }
    cli_table_print(&t, stdout);
    cli_table_free(&t);
    cli_names_free(&jobs);
    return rc;
}

int cli_ls(int argc, char **argv)
{
    static const struct option opts[] = {
        {"base", required_argument, NULL, 'b'}, {"config", required_argument, NULL, 'c'},
        {"job", required_argument, NULL, 'j'},  {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *verb = argv[0], *base = NULL, *config = NULL, *job = NULL;
    int c;
    while ((c = getopt_long(argc, argv, ":b:c:j:h", opts, NULL)) != -1) {
        switch (c) {
        case 'b': base = optarg; break;
        case 'c': config = optarg; break;
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
        rc = job ? ls_job(verb, &st, job) : ls_all(verb, &st);
    cli_store_close(&st);
    return rc;
}
