/*
 * cli_verify.c - `cairn verify`: check every byte of checkpoints against
 * their checksums, either of named files or of a job's generations.
 *
 * For a job, each generation on each visible node directory: the manifest
 * decodes and belongs there; each rank file it lists exists, has the size and
 * header checksum the manifest gives, has a valid header and table, names
 * the right job, generation and rank, and every data block matches its
 * checksum (cn_ckpt_verify), and every compressed frame decodes to bytes
 * that match its raw checksum (cz_decode_ckpt). One line per file on stdout:
 *   OK path | CORRUPT path: reason | MISSING path
 * and notes that do not change the exit status:
 *   LEFTOVER path        a *.tmp file (an interrupted write)
 *   UNLISTED path        a rank file the manifest does not list
 *   INCOMPLETE path      a generation no node has a manifest for (never
 *                        completed; restart skips it)
 * then a summary line. Exit status: 4 if anything is corrupt, else 3 if
 * anything is missing, else 1 on another error, else 0.
 */
#include "tools/tools.h"
#include "compress/compress.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

const char cli_verify_usage[] =
    "Usage: cairn verify [--base DIR] [--config FILE] [--job ID [--gen N]]\n"
    "       cairn verify FILE...\n"
    "\n"
    "Check checkpoint data against its checksums. With FILEs: each checkpoint file\n"
    "(header, entry table, every data block, every compressed frame decoded and\n"
    "checked against its raw checksum), manifest or parity file. Otherwise\n"
    "every generation (or generation N) of job ID, or of every job, on every node\n"
    "directory visible here: the manifest decodes; each rank file it lists exists,\n"
    "has the size and header checksum the manifest records, every block\n"
    "checksum matches and every compressed frame decodes; so does the level-3\n"
    "parity file. One line per file:\n"
    "  OK path | CORRUPT path: reason | MISSING path\n"
    "Notes that do not change the exit status: LEFTOVER (a *.tmp file of an\n"
    "interrupted write), UNLISTED (a rank file the manifest does not list),\n"
    "INCOMPLETE (a generation no node has a manifest for: it never completed).\n"
    "A summary line follows.\n"
    "\n"
    "Options:\n"
    "  -b, --base DIR      node-local base directory (default: CAIRN_BASE, else\n"
    "                      store.base of --config, else /dev/shm)\n"
    "  -c, --config FILE   read store.base from this INI file\n"
    "  -j, --job ID        verify job ID (default: every job)\n"
    "  -g, --gen N         verify only generation N (needs --job)\n"
    "  -h, --help          show this help\n";

typedef struct vstate {
    const char *verb;
    size_t ok, corrupt, missing, errors, notes, gens, jobs;
} vstate;

static int vstatus(const vstate *v)
{
    if (v->corrupt)
        return CLI_EXIT_CORRUPT;
    if (v->missing)
        return CLI_EXIT_MISSING;
    return v->errors ? CLI_EXIT_ERROR : CLI_EXIT_OK;
}

/* Report the failure RC (message in ERR) for PATH under the right heading. */
static void report_fail(vstate *v, const char *path, int rc, const cn_err *err)
{
    switch (cli_exit_for(rc)) {
    case CLI_EXIT_MISSING:
        printf("MISSING %s\n", path);
        v->missing++;
        break;
    case CLI_EXIT_CORRUPT:
        printf("CORRUPT %s: %s\n", path, cli_msg_after(err, path));
        v->corrupt++;
        break;
    default:
        if (rc == CAIRN_EUNSAFE || rc == -ELOOP) { /* planted link or foreign file */
            printf("CORRUPT %s: %s\n", path, cli_msg_after(err, path));
            v->corrupt++;
            break;
        }
        printf("ERROR %s: %s\n", path, cli_msg_after(err, path));
        v->errors++;
    }
}

/* Check the header of C against what the manifest and the directory say. */
static int check_context(const cn_ckpt *c, const cn_manifest *m, const cn_manifest_rank *r,
                         cn_err *err)
{
    const cn_header *h = &c->h;
    CN_FAIL_IF(h->file_size != r->file_size, err, CAIRN_ECORRUPT,
               "size %llu bytes, manifest says %llu", (unsigned long long)h->file_size,
               (unsigned long long)r->file_size);
    CN_FAIL_IF(h->header_sum != r->header_sum, err, CAIRN_ECORRUPT,
               "header checksum 0x%016llx, manifest says 0x%016llx",
               (unsigned long long)h->header_sum, (unsigned long long)r->header_sum);
    CN_FAIL_IF(strcmp(h->job, m->job) != 0 || h->generation != m->generation ||
                   h->rank != r->rank || h->nranks != m->nranks,
               err, CAIRN_ECORRUPT, "header names job '%s' generation %lld rank %u of %u",
               h->job, (long long)h->generation, h->rank, h->nranks);
    return 0;
}

/* Verify one checkpoint file NAME under DIRFD; M and R (may be NULL) give
 * what the manifest expects of it. */
static void verify_ckpt(vstate *v, int dirfd, const char *name, const char *path,
                        const cn_manifest *m, const cn_manifest_rank *r)
{
    cn_err err = {0};
    cn_ckpt *c = NULL;
    int rc = cn_ckpt_open(dirfd, name, path, &c, &err);
    if (rc == -ELOOP)
        cn_fail(&err, rc, "is a symlink; refusing to follow it");
    if (rc == 0 && m)
        rc = check_context(c, m, r, &err);
    if (rc == 0)
        rc = cn_ckpt_verify(c, path, &err);
    if (rc == 0 && (rc = cz_decode_ckpt(c, NULL, NULL, 1, &err)) < 0)
        cn_err_prefix(&err, "%s: ", path);
    cn_ckpt_close(c);
    if (rc < 0)
        report_fail(v, path, rc, &err);
    else {
        printf("OK %s\n", path);
        v->ok++;
    }
}

/* Verify parity file NAME under DIRFD (PATH in messages), if it exists. */
static void verify_parity(vstate *v, int dirfd, const char *name, const char *path)
{
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return; /* levels 1 and 2 have none */
    cn_err err = {0};
    struct stat st;
    int rc = 0;
    void *map = MAP_FAILED;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 24)
        rc = cn_fail(&err, CAIRN_ECORRUPT, "not a parity file");
    else if ((map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED)
        rc = cn_fail_errno(&err, errno, "cannot map");
    close(fd);
    cn_parity p;
    if (rc == 0 && (rc = cn_parity_check(map, (size_t)st.st_size, path, &p, &err)) == 0)
        cn_parity_free(&p);
    if (map != MAP_FAILED)
        munmap(map, (size_t)st.st_size);
    if (rc < 0) {
        report_fail(v, path, rc, &err);
    } else {
        printf("OK %s\n", path);
        v->ok++;
    }
}

static void verify_manifest_file(vstate *v, const char *path)
{
    cn_err err = {0};
    uint8_t *buf;
    size_t len;
    cn_manifest m;
    int rc = cn_read_small(AT_FDCWD, path, CLI_MANIFEST_MAX, &buf, &len, &err);
    if (rc == 0) {
        rc = cn_manifest_decode(buf, len, &m, &err);
        free(buf);
    }
    if (rc < 0) {
        report_fail(v, path, rc, &err);
        return;
    }
    cn_manifest_free(&m);
    printf("OK %s\n", path);
    v->ok++;
}

static int verify_files(vstate *v, int n, char **paths)
{
    for (int i = 0; i < n; i++) {
        cn_err err = {0};
        int kind, rc = cli_file_kind(paths[i], &kind, &err);
        if (rc == CAIRN_EUNSAFE) { /* a link named on the command line: not corruption */
            printf("ERROR %s: %s\n", paths[i], cli_msg_after(&err, paths[i]));
            v->errors++;
        } else if (rc < 0)
            report_fail(v, paths[i], rc, &err);
        else if (kind == CLI_FILE_MANIFEST)
            verify_manifest_file(v, paths[i]);
        else if (kind == CLI_FILE_CKPT)
            verify_ckpt(v, AT_FDCWD, paths[i], paths[i], NULL, NULL);
        else if (kind == CLI_FILE_PARITY)
            verify_parity(v, AT_FDCWD, paths[i], paths[i]);
        else
            report_fail(v, paths[i], CAIRN_ECORRUPT,
                        &(cn_err){CAIRN_ECORRUPT,
                                  "not a cairn checkpoint file, manifest or parity file"});
    }
    printf("verify: %d file%s: %zu ok, %zu corrupt, %zu missing", n, n == 1 ? "" : "s", v->ok,
           v->corrupt, v->missing);
    if (v->errors)
        printf(", %zu unreadable", v->errors);
    printf("\n");
    return vstatus(v);
}

/* Notes for the names in GENFD the manifest does not account for. */
static void note_strays(vstate *v, int genfd, const char *gpath, const cn_manifest *m)
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
        if (cli_is_tmp(nm)) {
            printf("LEFTOVER %s/%s\n", gpath, nm);
            v->notes++;
        } else if (r >= 0 && m && !listed) {
            printf("UNLISTED %s/%s\n", gpath, nm);
            v->notes++;
        }
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

/* Verify generation GEN of J on every visible node. EXPLICIT: asked for by --gen. */
static void verify_gen(vstate *v, const cli_job *j, int64_t gen, bool explicit)
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
                printf("INCOMPLETE %s: no manifest on any node\n", gpath);
                v->notes++;
                note_strays(v, fds[i], gpath, NULL);
            }
        } else if (fds[i] < 0) {
            report_fail(v, gpath, fds[i], &merr[i]);
        } else if (mrc[i] < 0) {
            report_fail(v, mpath, mrc[i], &merr[i]);
            note_strays(v, fds[i], gpath, NULL);
        } else {
            for (uint32_t k = 0; k < m[i].nlocal; k++) {
                char rname[32], rpath[CLI_PATH_MAX + 32];
                cn_rank_filename(rname, sizeof rname, m[i].local[k].rank);
                cli_path_join(rpath, sizeof rpath, gpath, rname);
                verify_ckpt(v, fds[i], rname, rpath, &m[i], &m[i].local[k]);
            }
            char ppath[CLI_PATH_MAX + 16];
            cli_path_join(ppath, sizeof ppath, gpath, CN_PARITY_NAME);
            verify_parity(v, fds[i], CN_PARITY_NAME, ppath);
            note_strays(v, fds[i], gpath, &m[i]);
        }
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

static int verify_job(vstate *v, const cli_store *st, const char *job, int64_t gen)
{
    cli_job j;
    int rc = cli_job_open(v->verb, st, job, &j);
    if (rc != CLI_EXIT_OK) {
        cli_job_close(&j);
        return rc;
    }
    v->jobs++;
    bool found = gen < 0;
    for (size_t g = 0; g < j.ngens; g++) {
        if (gen >= 0 && j.gen[g] != gen)
            continue;
        found = true;
        verify_gen(v, &j, j.gen[g], gen >= 0);
    }
    if (gen >= 0 && !found) {
        cli_error(v->verb, "job '%s' has no generation %lld", job, (long long)gen);
        rc = CLI_EXIT_MISSING;
    } else if (j.ngens == 0) {
        cli_error(v->verb, "job '%s' has no generations in %s", job, j.path);
        rc = CLI_EXIT_MISSING;
    }
    cli_job_close(&j);
    return rc;
}

int cli_verify(int argc, char **argv)
{
    static const struct option opts[] = {
        {"base", required_argument, NULL, 'b'}, {"config", required_argument, NULL, 'c'},
        {"job", required_argument, NULL, 'j'},  {"gen", required_argument, NULL, 'g'},
        {"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0},
    };
    const char *verb = argv[0], *base = NULL, *config = NULL, *job = NULL;
    int64_t gen = -1;
    int c;
    while ((c = getopt_long(argc, argv, ":b:c:j:g:h", opts, NULL)) != -1) {
        switch (c) {
        case 'b': base = optarg; break;
        case 'c': config = optarg; break;
        case 'j': job = optarg; break;
        case 'g': {
            char *end;
            errno = 0;
            long long n = strtoll(optarg, &end, 10);
            if (!*optarg || *end || errno || n < 0)
                return cli_usage_error(verb, "--gen wants a generation number, not '%s'", optarg);
            gen = n;
            break;
        }
        case 'h': return cli_help(verb);
        default: return cli_getopt_fail(verb, c, argv);
        }
    }
    vstate v = {.verb = verb};
    if (optind < argc) {
        if (base || config || job || gen >= 0)
            return cli_usage_error(verb, "give FILEs or --base/--config/--job/--gen, not both");
        return verify_files(&v, argc - optind, argv + optind);
    }
    if (gen >= 0 && !job)
        return cli_usage_error(verb, "--gen needs --job");
    cli_store st;
    int rc = cli_store_open(verb, base, config, &st);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (job)
        rc = verify_job(&v, &st, job, gen);
    else if (st.fd < 0) {
        cli_error(verb, "no checkpoints: %s does not exist", st.path);
        rc = CLI_EXIT_MISSING;
    } else {
        cli_names jobs;
        rc = cli_job_names(verb, &st, &jobs);
        for (size_t i = 0; i < jobs.n; i++)
            rc = cli_exit_worst(rc, verify_job(&v, &st, jobs.v[i], -1));
        if (jobs.n == 0) {
            cli_error(verb, "no jobs under %s", st.path);
            rc = cli_exit_worst(rc, CLI_EXIT_MISSING);
        }
        cli_names_free(&jobs);
    }
    cli_store_close(&st);
    size_t files = v.ok + v.corrupt + v.missing + v.errors;
    printf("verify: %zu job%s, %zu generation%s, %zu file%s: %zu ok, %zu corrupt, %zu missing",
           v.jobs, v.jobs == 1 ? "" : "s", v.gens, v.gens == 1 ? "" : "s", files,
           files == 1 ? "" : "s", v.ok, v.corrupt, v.missing);
    if (v.errors)
        printf(", %zu unreadable", v.errors);
    if (v.notes)
        printf(", %zu note%s", v.notes, v.notes == 1 ? "" : "s");
    printf("\n");
    return cli_exit_worst(rc, vstatus(&v));
}
