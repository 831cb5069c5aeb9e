/*
 * cli_verify_job.c - `cairn verify --job`: a job's generations on every node
 * directory visible here (then, by cli_pfs.c, on the PFS).
 *
 * For each generation, each node's manifest is loaded and checked against the
 * directory it lies in and against the other nodes' manifests (one rank map,
 * no node claimed twice); every rank file it lists and the parity file are
 * verified in full (cli_verify.c); names the manifest does not account for
 * are noted (LEFTOVER, UNLISTED), and so are generations no node completed
 * (INCOMPLETE) and nodes the manifests list that are not visible here
 * (PARTIAL, as `cairn ls` counts them: on a cluster each node sees its own).
 * Lines and tallies go through cli_vok/cli_vfail/cli_vnote.
 */
#include "tools/tools.h"
#include "levels/parity/parity.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Notes for the names in GENFD the manifest does not account for. */
static void note_strays(cli_vstate *v, int genfd, const char *gpath, const cn_manifest *m)
{
    cli_names names;
    if (cli_names_read(genfd, &names, NULL) < 0)
        return;
    for (size_t i = 0; i < names.n; i++) {
        const char *nm = names.v[i];
        long r = cli_parse_rank_filename(nm);
        bool listed = false;
        for (uint32_t k = 0; m && r >= 0 && k < m->nlocal && !listed; k++)
            listed = m->local[k].rank == (uint32_t)r;
        if (cli_is_tmp(nm))
            cli_vnote(v, "LEFTOVER", gpath, nm, NULL);
        else if (r >= 0 && m && !listed)
            cli_vnote(v, "UNLISTED", gpath, nm, NULL);
    }
    cli_names_free(&names);
}

/* The manifests of one generation must agree on the job's shape, and no two
 * node directories may claim the same node. A disagreeing one is marked
 * corrupt (MRC, MERR) and freed. */
static void check_agree(const cli_job *j, cn_manifest *m, int *mrc, cn_err *merr)
{
    size_t ref = j->nnodes;
    for (size_t i = 0; i < j->nnodes; i++) {
        if (mrc[i] < 0)
            continue;
        if (ref == j->nnodes) {
            ref = i;
            continue;
        }
        const cn_manifest *a = &m[ref], *b = &m[i];
        bool same = a->nranks == b->nranks && a->nnodes == b->nnodes &&
                    memcmp(a->rank_node, b->rank_node, 4 * (size_t)a->nranks) == 0;
        int rc = 0;
        if (!same)
            rc = cn_fail(&merr[i], CAIRN_ECORRUPT, "rank map disagrees with node %s's manifest",
                         j->node[ref].name);
        for (size_t k = ref; rc == 0 && k < i; k++)
            if (mrc[k] == 0 && m[k].node == b->node)
                rc = cn_fail(&merr[i], CAIRN_ECORRUPT, "claims node index %u, as %s does",
                             b->node, j->node[k].name);
        if (rc < 0) {
            cn_manifest_free(&m[i]);
            mrc[i] = rc;
        }
    }
}

/* A PARTIAL note when the manifests (M, MRC) of generation GNAME list more
 * nodes than J has visible here, as `cairn ls` counts them ("3/3 of 4"). */
static void note_partial(cli_vstate *v, const cli_job *j, const char *gname, const cn_manifest *m,
                         const int *mrc)
{
    size_t ref = 0, claimed = 0;
    while (ref < j->nnodes && mrc[ref] < 0)
        ref++;
    if (ref == j->nnodes || m[ref].nnodes <= j->nnodes)
        return;
    const cn_manifest *r = &m[ref];
    bool *have = cli_alloc(r->nnodes * sizeof *have);
    for (size_t i = 0; i < j->nnodes; i++)
        if (mrc[i] == 0 && m[i].node < r->nnodes && !have[m[i].node])
            have[m[i].node] = true, claimed++;
    char list[512] = "", ranks[256];
    size_t n = 0;
    if (claimed == j->nnodes) /* every visible node is known: name the others */
        for (uint32_t k = 0; k < r->nnodes && n + 300 < sizeof list; k++) {
            if (have[k])
                continue;
            cli_node_ranks(r, k, ranks, sizeof ranks);
            n += (size_t)snprintf(list + n, sizeof list - n, "%snode %u (rank%s %s)",
                                  n ? ", " : "", k, strpbrk(ranks, "-,") ? "s" : "", ranks);
        }
    if (!list[0])
        snprintf(list, sizeof list, "%zu nodes", (size_t)r->nnodes - j->nnodes);
    free(have);
    char why[sizeof list + 64];
    snprintf(why, sizeof why, "%zu of %u nodes visible here; not seen: %s", j->nnodes, r->nnodes,
             list);
    cli_vnote(v, "PARTIAL", j->path, gname, why);
}

/* Verify generation GEN of J on every visible node. EXPLICIT: asked for by --gen. */
static void verify_gen(cli_vstate *v, const cli_job *j, int64_t gen, bool explicit)
{
    int *fds = cli_alloc(j->nnodes * sizeof *fds);
    int *mrc = cli_alloc(j->nnodes * sizeof *mrc);
    cn_manifest *m = cli_alloc(j->nnodes * sizeof *m);
    cn_err *merr = cli_alloc(j->nnodes * sizeof *merr);
    size_t with_manifest = 0;
    v->gens++;
    for (size_t i = 0; i < j->nnodes; i++) {
        fds[i] = cli_gen_open(&j->node[i], gen, &merr[i]);
        mrc[i] = fds[i] < 0 ? fds[i]
                            : cli_manifest_load(fds[i], j->name, gen, j->node[i].name, &m[i],
                                                &merr[i]);
        if (mrc[i] != CAIRN_ENOENT)
            with_manifest++;
    }
    check_agree(j, m, mrc, merr);
    char gname[32];
    cn_gen_dirname(gname, sizeof gname, gen);
    for (size_t i = 0; i < j->nnodes; i++) {
        char gpath[CLI_PATH_MAX], mpath[CLI_PATH_MAX + 16];
        cli_path_join(gpath, sizeof gpath, j->node[i].path, gname);
        cli_path_join(mpath, sizeof mpath, gpath, CN_MANIFEST_NAME);
        if (with_manifest == 0 && !explicit) {
            /* Never completed anywhere: not data loss, restart skips it. */
            if (fds[i] >= 0) {
                cli_vnote(v, "INCOMPLETE", gpath, NULL, "no manifest on any node");
                note_strays(v, fds[i], gpath, NULL);
            }
        } else if (fds[i] < 0) {
            cli_vfail(v, gpath, fds[i], &merr[i], 0);
        } else if (mrc[i] < 0) {
            cli_vfail(v, mpath, mrc[i], &merr[i], 0);
            note_strays(v, fds[i], gpath, NULL);
        } else {
            for (uint32_t k = 0; k < m[i].nlocal; k++) {
                char rname[32], rpath[CLI_PATH_MAX + 32];
                cn_rank_filename(rname, sizeof rname, m[i].local[k].rank);
                cli_path_join(rpath, sizeof rpath, gpath, rname);
                cli_verify_ckpt(v, fds[i], rname, rpath, &m[i], &m[i].local[k]);
            }
            char ppath[CLI_PATH_MAX + 16];
            cli_path_join(ppath, sizeof ppath, gpath, CN_PARITY_NAME);
            cli_verify_parity(v, fds[i], CN_PARITY_NAME, ppath);
            note_strays(v, fds[i], gpath, &m[i]);
        }
    }
    note_partial(v, j, gname, m, mrc);
    for (size_t i = 0; i < j->nnodes; i++) {
        if (mrc[i] == 0)
            cn_manifest_free(&m[i]);
        if (fds[i] >= 0)
            close(fds[i]);
    }
    free(fds);
    free(mrc);
    free(m);
    free(merr);
}

/* Bytes verify_job reads of J's generation GEN (every one if < 0): the rank
 * files the manifests list and the parity files. Quiet: for the progress line. */
static uint64_t job_bytes(const cli_job *j, int64_t gen)
{
    uint64_t sum = 0;
    for (size_t g = 0; g < j->ngens; g++)
        for (size_t i = 0; (gen < 0 || j->gen[g] == gen) && i < j->nnodes; i++) {
            cn_err err = {0};
            cn_manifest m;
            int fd = cli_gen_open(&j->node[i], j->gen[g], &err);
            if (fd < 0)
                continue;
            if (cli_manifest_load(fd, j->name, j->gen[g], j->node[i].name, &m, &err) == 0) {
                for (uint32_t k = 0; k < m.nlocal; k++)
                    sum += m.local[k].file_size;
                cn_manifest_free(&m);
            }
            sum += cli_file_bytes(fd, CN_PARITY_NAME);
            close(fd);
        }
    return sum;
}

int cli_verify_job(cli_vstate *v, const cli_store *st, const char *job, int64_t gen, bool alone)
{
    cli_job j;
    struct stat sb; /* a job only on the PFS (every node wiped) has no directory here */
    bool pfs = cli_pfs_has_job(st, job);
    bool local = !pfs || (st->fd >= 0 && fstatat(st->fd, job, &sb, AT_SYMLINK_NOFOLLOW) == 0);
    memset(&j, 0, sizeof j);
    j.fd = -1;
    int rc = local ? cli_job_open(v->verb, st, job, &j) : CLI_EXIT_OK;
    if (rc != CLI_EXIT_OK) {
        cli_job_close(&j);
        return rc;
    }
    v->jobs++;
    if (alone && v->progress.on)
        v->progress.total = job_bytes(&j, gen) + cli_pfs_job_bytes(st, job, gen);
    bool found = false;
    for (size_t g = 0; g < j.ngens; g++) {
        if (gen >= 0 && j.gen[g] != gen)
            continue;
        found = true;
        verify_gen(v, &j, j.gen[g], gen >= 0);
    }
    found |= cli_pfs_verify_job(v, st, job, gen, j.gen, j.ngens) > 0;
    if (gen >= 0 && !found) {
        cli_error(v->verb, "job '%s' has no generation %lld", job, (long long)gen);
        rc = CLI_EXIT_MISSING;
    } else if (!found) {
        cli_error(v->verb, "job '%s' has no generations in %s", job, j.path);
        rc = CLI_EXIT_MISSING;
    }
    cli_job_close(&j);
    return rc;
}
