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
    "Usage: cairn ls [--base DIR] [--config FILE] [--pfs DIR] [--job ID] [--json]\n"
    "       cairn ls --fti FILE | --scr PREFIX | --veloc FILE [--job ID] [--pfs DIR] [--json]\n"
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
    CLI_COMPAT_HELP
    "      --json          print one JSON document instead of the table\n"
    "                      (docs/json.md: cairn.ls, cairn.ls.job)\n"
    "  -h, --help          show this help\n"
    "\n"
    "ls exits 0 when it could list (whatever the statuses), 3 for no such job or\n"
    "a job without generations or a base without a cairn directory.\n";

typedef cli_pfs_gen pfs_gen;
typedef cli_gen_sum gen_sum;
#define STATUS_NAME cli_gen_status_name
#define at_pfs cli_at_pfs

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

/* Generation R of job view V as a JSON object (docs/json.md, cairn.ls.job). */
static json_t *gen_json(const cli_jobview *v, const cli_gen_row *r)
{
    const gen_sum *s = r->s;
    const pfs_gen *pg = r->p;
    uint32_t lv = cli_row_level(r);
    json_t *o = json_object();
    json_object_set_new(o, "gen", json_integer(r->id));
    json_object_set_new(o, "level", cli_json_int_or_null(lv > 0, lv));
    json_object_set_new(o, "kind", !s || s->parent == -2 ? json_null()
                                   : json_string(s->parent >= 0 ? "incr" : "full"));
    json_object_set_new(o, "parent", cli_json_int_or_null(s && s->parent >= 0, s ? s->parent : 0));
    json_object_set_new(o, "nodes_complete", json_integer(s ? (int64_t)s->nodes_complete : 0));
    json_object_set_new(o, "nodes_seen", json_integer((int64_t)v->j.nnodes));
    json_object_set_new(o, "nodes_listed", cli_json_int_or_null(s && s->nnodes, s ? s->nnodes : 0));
    json_object_set_new(o, "ranks_ok", json_integer(s ? (int64_t)s->ranks_ok : 0));
    json_object_set_new(o, "ranks", cli_json_int_or_null(s && s->nranks, s ? s->nranks : 0));
    json_object_set_new(o, "bytes", json_integer(s ? (int64_t)s->bytes : 0));
    json_object_set_new(o, "state_bytes", cli_json_int_or_null(s && s->raw, s ? (int64_t)s->raw : 0));
    json_object_set_new(o, "changed", s && s->raw ? json_real((double)s->delta / (double)s->raw)
                                                  : json_null());
    double sec = s && s->labeled && s->seconds > 0 ? s->seconds : pg ? pg->seconds : 0;
    json_object_set_new(o, "seconds", sec > 0 ? json_real(sec) : json_null());
    json_t *pj = json_null();
    if (pg) {
        pj = json_object();
        json_object_set_new(pj, "complete", json_boolean(pg->complete));
        json_object_set_new(pj, "files", cli_json_int_or_null(pg->complete, pg->nfiles));
        json_object_set_new(pj, "bytes", cli_json_int_or_null(pg->complete, (int64_t)pg->stored));
        json_object_set_new(pj, "state_bytes", cli_json_int_or_null(pg->complete, (int64_t)pg->raw));
        json_object_set_new(pj, "parent", cli_json_int_or_null(pg->complete && pg->parent >= 0,
                                                               pg->parent));
    }
    json_object_set_new(o, "pfs", pj);
    json_object_set_new(o, "status", json_string(STATUS_NAME[s ? s->status : CLI_GEN_PFS]));
    json_object_set_new(o, "label", json_string(s && s->labeled ? s->label
                                                : pg && pg->complete ? pg->label : ""));
    return o;
}

static int ls_job(const char *verb, const cli_store *st, const char *config, const char *job,
                  bool json)
{
    cli_jobview v;
    double cost[5] = {0}; /* seconds of the newest generation at each level */
    int rc = cli_jobview_open(verb, st, job, &v);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (json) {
        json_t *d = cli_json_doc("cairn.ls.job"), *gens = json_array();
        json_object_set_new(d, "job", json_string(v.j.name));
        cli_json_bytes(d, "store", st->path);
        if (st->pfs[0])
            cli_json_bytes(d, "pfs", st->pfs);
        else
            json_object_set_new(d, "pfs", json_null());
        for (size_t i = 0; i < v.nrows; i++)
            json_array_append_new(gens, gen_json(&v, &v.row[i]));
        json_object_set_new(d, "generations", gens);
        cli_jobview_close(&v);
        return cli_json_print(d);
    }
    cli_table t;
    cli_table_init(&t, "rrlrrrrrlll");
    const char *head[] = {"GEN",     "LEVEL", "KIND", "NODES",  "RANKS", "BYTES",
                          "SECONDS", "CHANGED", "PFS", "STATUS", "LABEL"};
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
        cli_table_add(&t, "%s", head[i]);
    for (size_t i = 0; i < v.nrows; i++) {
        const pfs_gen *pg = v.row[i].p;
        const gen_sum *s = v.row[i].s;
        cli_table_add(&t, "%lld", (long long)v.row[i].id);
        if (s) {
            add_local_cells(&t, &v.j, s, pg);
        } else {
            for (int c = 0; c < 5; c++)
                cli_table_add(&t, c == 0 && at_pfs(NULL, pg) ? "4" : "-");
            add_seconds_cell(&t, pg->seconds);
            cli_table_add(&t, "-");
        }
        add_pfs_cell(&t, pg);
        cli_table_add(&t, "%s", STATUS_NAME[s ? s->status : CLI_GEN_PFS]);
        cli_table_add(&t, "%s", s && s->labeled ? s->label : pg && pg->complete ? pg->label : "");
        int lv = at_pfs(s, pg) ? CAIRN_LEVEL_PFS : s && s->status == CLI_GEN_COMPLETE ? (int)s->level : 0;
        double sec = s && s->labeled && s->seconds > 0 ? s->seconds : pg ? pg->seconds : 0;
        if (lv >= 1 && lv <= 4 && !(cost[lv] > 0))
            cost[lv] = sec;
    }
    cli_jobview_close(&v);
    cli_table_print(&t, stdout);
    cli_table_free(&t);
    ls_intervals(st, config, cost);
    return CLI_EXIT_OK;
}

/* One row of the job list: job NAME, its node-local view J (NULL: only on
 * the PFS) and its PFS generations PFS[0..NPFS-1], both newest first; a
 * table row of T, or an object appended to ARR. */
static void job_row(cli_table *t, json_t *arr, const char *name, const cli_job *j,
                    const pfs_gen *pfs, size_t npfs)
{
    size_t ng = j ? j->ngens : 0, g = 0, p = 0, gens = ng;
    gen_sum *all = j ? cli_gen_summarize(j) : NULL, s = {0};
    while (g < ng && all[g].status != CLI_GEN_COMPLETE && all[g].status != CLI_GEN_PARTIAL)
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
    bool any = pfs_newer || g < ng;
    int64_t newest = pfs_newer ? pfs[p].id : g < ng ? j->gen[g] : -1;
    uint32_t level = pfs_newer || (g < ng && at_pfs(&s, same)) ? (uint32_t)CAIRN_LEVEL_PFS : s.level;
    uint64_t bytes = pfs_newer ? pfs[p].stored : s.bytes;
    const char *status = pfs_newer ? STATUS_NAME[CLI_GEN_PFS] : g < ng ? STATUS_NAME[s.status]
                         : gens ? "none complete" : "no generations";
    if (arr) {
        json_t *o = json_object();
        json_object_set_new(o, "job", json_string(name));
        json_object_set_new(o, "nodes", json_integer(j ? (int64_t)j->nnodes : 0));
        json_object_set_new(o, "generations", json_integer((int64_t)gens));
        json_object_set_new(o, "newest", cli_json_int_or_null(any, newest));
        json_object_set_new(o, "level", cli_json_int_or_null(any, level));
        json_object_set_new(o, "bytes", cli_json_int_or_null(any, (int64_t)bytes));
        json_object_set_new(o, "status", json_string(status));
        json_array_append_new(arr, o);
        return;
    }
    char hb[32];
    cli_table_add(t, "%s", name);
    cli_table_add(t, "%zu", j ? j->nnodes : 0);
    cli_table_add(t, "%zu", gens);
    if (any) {
        cli_table_add(t, "%lld", (long long)newest);
        cli_table_add(t, "%u", level);
        cli_table_add(t, "%s", cli_human(bytes, hb, sizeof hb));
    } else {
        for (int c = 0; c < 3; c++)
            cli_table_add(t, "-");
    }
    cli_table_add(t, "%s", status);
}

static int ls_all(const char *verb, const cli_store *st, bool json)
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
    json_t *arr = json ? json_array() : NULL;
    cli_table t;
    cli_table_init(&t, "lrrrrrl");
    const char *head[] = {"JOB", "NODES", "GENS", "NEWEST", "LEVEL", "BYTES", "STATUS"};
    for (size_t i = 0; i < 7; i++)
        cli_table_add(&t, "%s", head[i]);
    for (size_t a = 0, b = 0; a < jobs.n || b < pjobs.n;) { /* both sorted: merge */
        int cmp = a == jobs.n ? 1 : b == pjobs.n ? -1 : strverscmp(jobs.v[a], pjobs.v[b]);
        const char *name = cmp <= 0 ? jobs.v[a] : pjobs.v[b];
        pfs_gen *pfs = NULL;
        size_t npfs = cmp >= 0 ? cli_pfs_list(st, name, &pfs) : 0;
        a += cmp <= 0;
        b += cmp >= 0;
        cli_job j;
        if (cmp > 0) {
            job_row(&t, arr, name, NULL, pfs, npfs);
        } else if (cli_job_open(verb, st, name, &j) != CLI_EXIT_OK) {
            rc = cli_exit_worst(rc, CLI_EXIT_ERROR);
            cli_job_close(&j);
        } else {
            job_row(&t, arr, name, &j, pfs, npfs);
            cli_job_close(&j);
        }
        free(pfs);
    }
    if (arr) {
        json_t *d = cli_json_doc("cairn.ls");
        cli_json_bytes(d, "store", st->path);
        if (st->pfs[0])
            cli_json_bytes(d, "pfs", st->pfs);
        else
            json_object_set_new(d, "pfs", json_null());
        json_object_set_new(d, "jobs", arr);
        rc = cli_exit_worst(rc, cli_json_print(d));
    } else {
        cli_table_print(&t, stdout);
    }
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
        {"help", no_argument, NULL, 'h'},       {"json", no_argument, NULL, 'J'},
        CLI_COMPAT_OPTIONS,                     {NULL, 0, NULL, 0},
    };
    const char *verb = argv[0], *base = NULL, *config = NULL, *job = NULL, *pfs = NULL;
    bool json = false;
    cli_compat cc = {.fd = -1};
    int c;
    while ((c = getopt_long(argc, argv, ":b:c:j:p:h", opts, NULL)) != -1) {
        switch (c) {
        case 'J': json = true; break;
        case 'b': base = optarg; break;
        case 'c': config = optarg; break;
        case 'p': pfs = optarg; break;
        case 'j': job = optarg; break;
        case 'h': return cli_help(verb);
        default: {
            int r = cli_compat_opt(verb, &cc, c, argv);
            if (r >= 0)
                return r;
        }
        }
    }
    if (optind < argc)
        return cli_usage_error(verb, "unexpected argument '%s'", argv[optind]);
    cli_store st = {.fd = -1};
    int rc = cli_compat_apply(verb, &cc, &config, &job);
    if (rc == CLI_EXIT_OK)
        rc = cli_store_open(verb, base, config, &st);
    if (rc == CLI_EXIT_OK)
        rc = cli_store_pfs(verb, pfs, &st);
    if (rc == CLI_EXIT_OK)
        rc = job ? ls_job(verb, &st, config, job, json) : ls_all(verb, &st, json);
    cli_store_close(&st);
    cli_compat_close(&cc);
    return rc;
}
