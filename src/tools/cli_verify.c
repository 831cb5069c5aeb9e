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
 *                        completed; restart skips it), or a PFS generation
 *                        without its index
 *   PARTIAL path         the manifests list nodes whose directories are not
 *                        visible here (ls: "3/3 of 4", partial)
 * then a summary line. The job's generations on the PFS (cli_pfs.c) follow
 * its node-local ones (cli_verify_job.c). A named file is recognised by its
 * first bytes (cli_file_kind): checkpoint, manifest, parity, PFS aggregated
 * file or index. Exit status: 4 if anything is corrupt, else 3 if anything
 * is missing, else 1 on another error, else 0. On a terminal a progress
 * line (progress.c) counts the bytes checked. This file: the verb, the
 * report lines and tallies, and the checks of one file.
 */
#include "tools/tools.h"
#include "compress/compress.h"
#include "levels/parity/parity.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

const char cli_verify_usage[] =
    "Usage: cairn verify [--base DIR] [--config FILE] [--pfs DIR] [--job ID [--gen N]] [--json]\n"
    "       cairn verify --fti FILE | --scr PREFIX | --veloc FILE [--job ID] [--gen N] [--json]\n"
    "       cairn verify [--json] FILE...\n"
    "\n"
    "Check checkpoint data against its checksums. With FILEs, each recognised by its\n"
    "first bytes: a checkpoint file (header, entry table, every data block, every\n"
    "compressed frame decoded and checked against its raw checksum), manifest,\n"
    "parity file, PFS aggregated file (agg-*.cz: header, tables, every group\n"
    "checksum, every frame decoded; and its size and checksum against the index\n"
    "beside it, if any) or PFS index. Otherwise every generation (or generation N)\n"
    "of job ID, or of every job, on every node directory visible here: the\n"
    "manifest decodes; each rank file it lists exists, has the size and header\n"
    "checksum the manifest records, every block checksum matches and every\n"
    "compressed frame decodes; so does the level-3 parity file; then the job's\n"
    "generations on the PFS (level 4): the index, and every aggregated file it\n"
    "lists against it, decoded. One line per file:\n"
    "  OK path | CORRUPT path: reason | MISSING path\n"
    "Notes that do not change the exit status: LEFTOVER (a *.tmp file of an\n"
    "interrupted write), UNLISTED (a rank file the manifest does not list),\n"
    "INCOMPLETE (a generation no node has a manifest for, or a PFS generation\n"
    "without its index: it never completed), PARTIAL (the manifests list nodes\n"
    "whose directories are not visible here, as 'cairn ls' shows 3/3 of 4; on a\n"
    "cluster each node sees only its own). A summary line follows. On a terminal,\n"
    "a progress line on stderr counts the bytes checked; piped, there is none.\n"
    "\n"
    "Options:\n"
    "  -b, --base DIR      node-local base directory (default: CAIRN_BASE, else\n"
    "                      store.base of --config, else /dev/shm)\n"
    "  -c, --config FILE   read store.base and pfs.dir from this INI file\n"
    "  -p, --pfs DIR       the PFS directory (default: pfs.dir of --config, else\n"
    "                      CAIRN_PFS_DIR; with none, level 4 is not checked)\n"
    "  -j, --job ID        verify job ID (default: every job)\n"
    "  -g, --gen N         verify only generation N (needs --job)\n"
    CLI_COMPAT_HELP
    "      --json          print one JSON document instead of the lines (docs/json.md,\n"
    "                      cairn.verify); the exit status is the same\n"
    "  -h, --help          show this help\n";

typedef cli_vstate vstate;

static int vstatus(const vstate *v)
{
    if (v->corrupt)
        return CLI_EXIT_CORRUPT;
    if (v->missing)
        return CLI_EXIT_MISSING;
    return v->errors ? CLI_EXIT_ERROR : CLI_EXIT_OK;
}

/* With --json: the line of PATH as an object of V->files; else false. */
static bool jline(vstate *v, const char *path, const char *result, const char *reason,
                  uint64_t bytes)
{
    if (!v->files)
        return false;
    json_t *o = json_object();
    cli_json_bytes(o, "path", path);
    json_object_set_new(o, "result", json_string(result));
    if (reason)
        cli_json_bytes(o, "reason", reason);
    else
        json_object_set_new(o, "reason", json_null());
    json_object_set_new(o, "bytes", json_integer((json_int_t)bytes));
    json_array_append_new(v->files, o);
    return true;
}

void cli_vok(vstate *v, const char *path, uint64_t bytes)
{
    cli_progress_hide(&v->progress);
    if (!jline(v, path, "ok", NULL, bytes))
        printf("OK %s\n", path);
    v->ok++;
    cli_progress_add(&v->progress, bytes);
}

void cli_vnote(vstate *v, const char *kind, const char *dir, const char *name, const char *why)
{
    char path[CLI_PATH_MAX + 256];
    if (name)
        cli_path_join(path, sizeof path, dir, name);
    else
        snprintf(path, sizeof path, "%s", dir);
    cli_progress_hide(&v->progress);
    v->notes++;
    if (v->jnotes) {
        json_t *o = json_object();
        json_object_set_new(o, "kind", json_string(kind));
        cli_json_bytes(o, "path", path);
        if (why)
            cli_json_bytes(o, "why", why);
        else
            json_object_set_new(o, "why", json_null());
        json_array_append_new(v->jnotes, o);
        return;
    }
    printf("%s %s%s%s\n", kind, path, why ? ": " : "", why ? why : "");
}

/* The text line "HEAD PATH[: WHY]", or its --json object. */
static void fail_line(vstate *v, const char *head, const char *path, const char *why,
                      uint64_t bytes)
{
    char result[16];
    size_t i = 0;
    for (; head[i] && i < sizeof result - 1; i++)
        result[i] = (char)(head[i] | 0x20); /* "CORRUPT" -> "corrupt" */
    result[i] = 0;
    if (jline(v, path, result, why, bytes))
        return;
    if (why)
        printf("%s %s: %s\n", head, path, why);
    else
        printf("%s %s\n", head, path);
}

/* Report the failure RC (message in ERR) for PATH under the right heading. */
void cli_vfail(vstate *v, const char *path, int rc, const cn_err *err, uint64_t bytes)
{
    cli_progress_hide(&v->progress);
    cli_progress_add(&v->progress, bytes);
    switch (cli_exit_for(rc)) {
    case CLI_EXIT_MISSING:
        fail_line(v, "MISSING", path, NULL, bytes);
        v->missing++;
        break;
    case CLI_EXIT_CORRUPT:
        fail_line(v, "CORRUPT", path, cli_msg_after(err, path), bytes);
        v->corrupt++;
        break;
    default:
        if (rc == CAIRN_EUNSAFE || rc == -ELOOP) { /* planted link or foreign file */
            fail_line(v, "CORRUPT", path, cli_msg_after(err, path), bytes);
            v->corrupt++;
            break;
        }
        fail_line(v, "ERROR", path, cli_msg_after(err, path), bytes);
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

uint64_t cli_file_bytes(int dirfd, const char *name)
{
    struct stat st;
    return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? (uint64_t)st.st_size : 0;
}

void cli_verify_ckpt(vstate *v, int dirfd, const char *name, const char *path,
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
    uint64_t bytes = r ? r->file_size : cli_file_bytes(dirfd, name);
    if (rc < 0)
        cli_vfail(v, path, rc, &err, bytes);
    else
        cli_vok(v, path, bytes);
}

void cli_verify_parity(vstate *v, int dirfd, const char *name, const char *path)
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
    if (rc < 0)
        cli_vfail(v, path, rc, &err, (uint64_t)st.st_size);
    else
        cli_vok(v, path, (uint64_t)st.st_size);
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
        cli_vfail(v, path, rc, &err, len);
        return;
    }
    cn_manifest_free(&m);
    cli_vok(v, path, len);
}

/* --json: the one document (docs/json.md, cairn.verify) for V, whose exit
 * status is RC; JOBS: a job's generations were verified, not named files. */
static int json_summary(vstate *v, bool jobs, int rc)
{
    json_t *d = cli_json_doc("cairn.verify"), *sum = json_object();
    json_object_set_new(d, "files", v->files);
    json_object_set_new(d, "notes", v->jnotes);
    v->files = v->jnotes = NULL;
    json_object_set_new(sum, "jobs", cli_json_int_or_null(jobs, (int64_t)v->jobs));
    json_object_set_new(sum, "generations", cli_json_int_or_null(jobs, (int64_t)v->gens));
    json_object_set_new(sum, "files",
                        json_integer((json_int_t)(v->ok + v->corrupt + v->missing + v->errors)));
    json_object_set_new(sum, "ok", json_integer((json_int_t)v->ok));
    json_object_set_new(sum, "corrupt", json_integer((json_int_t)v->corrupt));
    json_object_set_new(sum, "missing", json_integer((json_int_t)v->missing));
    json_object_set_new(sum, "errors", json_integer((json_int_t)v->errors));
    json_object_set_new(sum, "notes", json_integer((json_int_t)v->notes));
    json_object_set_new(d, "summary", sum);
    json_object_set_new(d, "exit_status", json_integer(rc));
    int prc = cli_json_print(d);
    return prc == CLI_EXIT_OK ? rc : cli_exit_worst(rc, prc);
}

static int verify_files(vstate *v, int n, char **paths)
{
    uint64_t total = 0;
    for (int i = 0; i < n; i++)
        total += cli_file_bytes(AT_FDCWD, paths[i]);
    cli_progress_start(&v->progress, v->verb, NULL, total);
    for (int i = 0; i < n; i++) {
        cn_err err = {0};
        int kind, rc = cli_file_kind(paths[i], &kind, &err);
        uint64_t bytes = cli_file_bytes(AT_FDCWD, paths[i]);
        if (rc == CAIRN_EUNSAFE) { /* a link named on the command line: not corruption */
            cli_progress_hide(&v->progress);
            fail_line(v, "ERROR", paths[i], cli_msg_after(&err, paths[i]), bytes);
            v->errors++;
        } else if (rc < 0)
            cli_vfail(v, paths[i], rc, &err, bytes);
        else if (kind == CLI_FILE_MANIFEST)
            verify_manifest_file(v, paths[i]);
        else if (kind == CLI_FILE_CKPT)
            cli_verify_ckpt(v, AT_FDCWD, paths[i], paths[i], NULL, NULL);
        else if (kind == CLI_FILE_PARITY)
            cli_verify_parity(v, AT_FDCWD, paths[i], paths[i]);
        else if (kind == CLI_FILE_AGG || kind == CLI_FILE_PINDEX) {
            if ((rc = cli_pfs_check_file(paths[i], kind, &err)) < 0)
                cli_vfail(v, paths[i], rc, &err, bytes);
            else
                cli_vok(v, paths[i], bytes);
        } else
            cli_vfail(v, paths[i], CAIRN_ECORRUPT,
                      &(cn_err){CAIRN_ECORRUPT, "not a file cairn writes (checkpoint file, "
                                                "manifest, parity file, PFS file or index)"},
                      bytes);
    }
    cli_progress_end(&v->progress);
    if (v->files)
        return json_summary(v, false, vstatus(v));
    printf("verify: %d file%s: %zu ok, %zu corrupt, %zu missing", n, n == 1 ? "" : "s", v->ok,
           v->corrupt, v->missing);
    if (v->errors)
        printf(", %zu unreadable", v->errors);
    printf("\n");
    return vstatus(v);
}

int cli_verify(int argc, char **argv)
{
    static const struct option opts[] = {
        {"base", required_argument, NULL, 'b'}, {"config", required_argument, NULL, 'c'},
        {"job", required_argument, NULL, 'j'},  {"gen", required_argument, NULL, 'g'},
        {"pfs", required_argument, NULL, 'p'},  {"help", no_argument, NULL, 'h'},
        {"json", no_argument, NULL, 'J'},       CLI_COMPAT_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    const char *verb = argv[0], *base = NULL, *config = NULL, *job = NULL, *pfs = NULL;
    int64_t gen = -1;
    bool json = false;
    cli_compat cc = {.fd = -1};
    int c;
    while ((c = getopt_long(argc, argv, ":b:c:j:g:p:h", opts, NULL)) != -1) {
        switch (c) {
        case 'J': json = true; break;
        case 'b': base = optarg; break;
        case 'c': config = optarg; break;
        case 'p': pfs = optarg; break;
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
        default: {
            int r = cli_compat_opt(verb, &cc, c, argv);
            if (r >= 0)
                return r;
        }
        }
    }
    vstate v = {.verb = verb};
    if (optind < argc && (base || config || job || gen >= 0 || pfs || cc.kind))
        return cli_usage_error(verb, "give FILEs or --base/--config/--pfs/--job/--gen, not both");
    if (optind == argc && gen >= 0 && !job && !cc.kind)
        return cli_usage_error(verb, "--gen needs --job");
    if (json) {
        v.files = json_array();
        v.jnotes = json_array();
    }
    if (optind < argc)
        return verify_files(&v, argc - optind, argv + optind);
    cli_store st = {.fd = -1};
    int rc = cli_compat_apply(verb, &cc, &config, &job);
    if (rc == CLI_EXIT_OK)
        rc = cli_store_open(verb, base, config, &st);
    if (rc == CLI_EXIT_OK)
        rc = cli_store_pfs(verb, pfs, &st);
    if (rc != CLI_EXIT_OK) {
        cli_store_close(&st);
        cli_compat_close(&cc);
        json_decref(v.files);
        json_decref(v.jnotes);
        return rc;
    }
    cli_progress_start(&v.progress, verb, NULL, 0);
    if (job)
        rc = cli_verify_job(&v, &st, job, gen, true);
    else if (st.fd < 0) {
        cli_error(verb, "no checkpoints: %s does not exist", st.path);
        rc = CLI_EXIT_MISSING;
    } else {
        cli_names jobs;
        rc = cli_job_names(verb, &st, &jobs);
        for (size_t i = 0; i < jobs.n; i++)
            rc = cli_exit_worst(rc, cli_verify_job(&v, &st, jobs.v[i], -1, false));
        if (jobs.n == 0) {
            cli_error(verb, "no jobs under %s", st.path);
            rc = cli_exit_worst(rc, CLI_EXIT_MISSING);
        }
        cli_names_free(&jobs);
    }
    cli_store_close(&st);
    cli_compat_close(&cc);
    cli_progress_end(&v.progress);
    if (v.files)
        return json_summary(&v, true, cli_exit_worst(rc, vstatus(&v)));
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
