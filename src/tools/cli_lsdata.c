/*
 * cli_lsdata.c - a job's generations as `cairn ls` and `cairn report` see
 * them: each node-local generation summarized over the node directories
 * visible here (manifests decoded, rank files present with their size; no
 * data read), the job's generations on the PFS (their indexes), and both
 * merged newest first (cli_jobview). The statuses are those of cli_ls.c's
 * head comment. Whoever opens a view closes it.
 */
#include "tools/tools.h"
#include "levels/pfs/pfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const cli_gen_status_name[] = {"complete", "partial",  "incomplete", "broken-chain",
                                           "corrupt",  "pfs-only"};

/* The job's generations on the PFS (ST->pfs), newest first. Allocates *OUT. */
size_t cli_pfs_list(const cli_store *st, const char *job, cli_pfs_gen **out)
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
        cli_pfs_gen *g = &(*out)[i];
        *g = (cli_pfs_gen){.id = ids[i], .parent = -1};
        if (lvl_pfs_index(jobfd, ids[i], &x, &err) == 0) {
            g->complete = strcmp(x.job, job) == 0;
            g->nfiles = x.nfiles;
            g->nranks = x.nranks;
            g->stored = x.stored;
            g->parent = x.parent;
            g->seconds = x.seconds;
            g->raw = x.raw;
            memcpy(g->label, x.label, sizeof g->label);
            cn_pindex_free(&x);
        }
    }
    free(ids);
    close(jobfd);
    return (size_t)n;
}

/* Count (without a manifest) the rank files in GENFD and their bytes. */
static void count_unlisted(int genfd, cli_gen_sum *s)
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
static void sum_node(const cli_job *j, const cli_node *node, int64_t gen, cli_gen_sum *s)
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

static void summarize(const cli_job *j, int64_t gen, cli_gen_sum *s)
{
    memset(s, 0, sizeof *s);
    s->parent = -2;
    for (size_t i = 0; i < j->nnodes; i++)
        sum_node(j, &j->node[i], gen, s);
    if (s->corrupt)
        s->status = CLI_GEN_CORRUPT;
    else if (s->nnodes && s->nodes_complete >= s->nnodes && s->ranks_ok == s->nranks)
        s->status = CLI_GEN_COMPLETE;
    else if (s->nnodes && s->nodes_complete == j->nnodes && j->nnodes < s->nnodes)
        s->status = CLI_GEN_PARTIAL;
    else
        s->status = CLI_GEN_INCOMPLETE;
}

/* Summarize every generation of J (newest first); an incremental one whose
 * parent is not complete (or partial) is a broken chain. Allocates. */
cli_gen_sum *cli_gen_summarize(const cli_job *j)
{
    cli_gen_sum *s = cli_alloc(sizeof *s * (j->ngens ? j->ngens : 1));
    for (size_t g = j->ngens; g-- > 0;) { /* oldest first: parents before children */
        summarize(j, j->gen[g], &s[g]);
        if (s[g].parent < 0 || (s[g].status != CLI_GEN_COMPLETE && s[g].status != CLI_GEN_PARTIAL))
            continue;
        size_t p = g + 1;
        while (p < j->ngens && j->gen[p] != s[g].parent)
            p++;
        if (p == j->ngens || (s[p].status != CLI_GEN_COMPLETE && s[p].status != CLI_GEN_PARTIAL))
            s[g].status = CLI_GEN_BROKEN;
    }
    return s;
}

/* Has the generation of S (may be NULL) reached level 4: complete on the PFS (P)? */
bool cli_at_pfs(const cli_gen_sum *s, const cli_pfs_gen *p)
{
    return p && p->complete && (!s || !s->nranks || s->nranks == p->nranks);
}

uint32_t cli_row_level(const cli_gen_row *r)
{
    if (cli_at_pfs(r->s, r->p))
        return CAIRN_LEVEL_PFS;
    return r->s ? r->s->level : 0;
}

int cli_jobview_open(const char *verb, const cli_store *st, const char *job, cli_jobview *v)
{
    memset(v, 0, sizeof *v);
    v->j.fd = -1;
    v->npfs = cli_pfs_list(st, job, &v->pfs);
    struct stat sb; /* a job only on the PFS (every node wiped) has no directory here */
    bool local = !v->npfs || (st->fd >= 0 && fstatat(st->fd, job, &sb, AT_SYMLINK_NOFOLLOW) == 0);
    int rc = local ? cli_job_open(verb, st, job, &v->j) : CLI_EXIT_MISSING;
    if (rc != CLI_EXIT_OK && !(v->npfs && rc == CLI_EXIT_MISSING)) {
        cli_jobview_close(v);
        return rc;
    }
    if (!local)
        snprintf(v->j.name, sizeof v->j.name, "%s", job);
    if (v->j.ngens == 0 && v->npfs == 0) {
        cli_error(verb, "job '%s' has no generations in %s", job, v->j.path);
        cli_jobview_close(v);
        return CLI_EXIT_MISSING;
    }
    v->sum = cli_gen_summarize(&v->j);
    v->row = cli_alloc(sizeof *v->row * (v->j.ngens + v->npfs));
    const cli_job *j = &v->j;
    for (size_t g = 0, p = 0; g < j->ngens || p < v->npfs;) { /* both lists newest first */
        int64_t id = g < j->ngens && (p == v->npfs || j->gen[g] >= v->pfs[p].id) ? j->gen[g]
                                                                                 : v->pfs[p].id;
        cli_gen_row *r = &v->row[v->nrows++];
        r->id = id;
        r->p = p < v->npfs && v->pfs[p].id == id ? &v->pfs[p++] : NULL;
        r->s = g < j->ngens && j->gen[g] == id ? &v->sum[g++] : NULL;
    }
    return CLI_EXIT_OK;
}

void cli_jobview_close(cli_jobview *v)
{
    cli_job_close(&v->j);
    free(v->sum);
    free(v->pfs);
    free(v->row);
    memset(v, 0, sizeof *v);
    v->j.fd = -1;
}
