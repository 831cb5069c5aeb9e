/*
 * cli_pfs.c - the CLI and level 4: checking and printing the two kinds of
 * file a flush writes to the parallel file system,
 *   <pfs>/cairn-<uid>/<job>/gen-<G>/agg-<i>.cz  aggregated files (src/levels/pfs/agg*.c)
 *   <pfs>/cairn-<uid>/<job>/gen-<G>/index       the index, written last (src/levels/pfs/pindex.c)
 * with the library's own readers: lvl_pfs_index (cn_pindex_decode),
 * lvl_pfs_map (size and XXH3 against the index), cz_agg_open (header,
 * tables and every group checksum) and cz_agg_read (every frame decoded and
 * checked against its raw checksum), then every routed HDF5 file level 4
 * split by dataset rebuilt and checked against its whole-file checksum
 * (cz_h5_parts_join). File i must hold exactly the ranks
 * [i * group, min((i + 1) * group, nranks)) the index gives it.
 * Used by `cairn verify` (a file on its own, or a job's generations, with
 * cli_verify.c's report lines) and `cairn inspect`. Memory: a file is mapped
 * read-only for the call only; an index's files array is freed here.
 */
#include "tools/tools.h"
#include "compress/compress.h"
#include "levels/pfs/pfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define INDEX_MAX cn_pindex_size(CN_MAX_RANKS)

/* Drop a leading "PREFIX: " from ERR's message (the report line names the file). */
static void strip(cn_err *err, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(err->msg, prefix, n) == 0 && err->msg[n] == ':' && err->msg[n + 1] == ' ')
        memmove(err->msg, err->msg + n + 2, strlen(err->msg + n + 2) + 1);
}

typedef struct agg_walk {
    uint32_t first, end; /* the ranks the file must hold; end 0: any */
    uint32_t bad_rank;
    bool bad;
    uint32_t lo, hi;     /* the ranks seen */
    cz_h5_parts *h5;     /* parts of split HDF5 routed files, to rebuild */
    cn_err *err;
} agg_walk;

static int walk_var(void *arg, const cz_agg_var *v)
{
    agg_walk *w = arg;
    if (w->end && (v->rank < w->first || v->rank >= w->end)) {
        w->bad = true;
        w->bad_rank = v->rank;
        return 1;
    }
    w->lo = v->rank < w->lo ? v->rank : w->lo;
    w->hi = v->rank + 1 > w->hi ? v->rank + 1 : w->hi;
    return v->kind > CN_KIND_FILE ? cz_h5_parts_keep(w->h5, v, w->err) : 0;
}

/* cz_h5_parts_join callback: the file was rebuilt and its checksum matched. */
static int drop_file(void *arg, const char *name, uint8_t *data, uint64_t size)
{
    (void)arg, (void)name, (void)size;
    free(data);
    return 0;
}

/* Parse and decode the aggregated file MAP[0..LEN), and rebuild every split
 * HDF5 routed file in it (its whole-file checksum checked); it must hold
 * only ranks [FIRST, END) (END 0: any). */
static int agg_check(const uint8_t *map, size_t len, uint32_t first, uint32_t end, cn_err *err)
{
    cz_agg_file *f = NULL;
    agg_walk w = {.first = first, .end = end, .lo = UINT32_MAX, .h5 = cz_h5_parts_new(),
                  .err = err};
    int rc = w.h5 ? cz_agg_open(map, len, &f, err) : cn_fail(err, CAIRN_ENOMEM, "no memory");
    if (rc == 0)
        rc = cz_agg_read(f, walk_var, &w, err);
    cz_agg_close(f);
    for (uint32_t r = w.lo; rc == 0 && !w.bad && r < w.hi; r++)
        rc = cz_h5_parts_join(w.h5, r, drop_file, NULL, err);
    cz_h5_parts_free(w.h5);
    if (w.bad)
        return cn_fail(err, CAIRN_ECORRUPT, "holds rank %u; the index gives it ranks %u-%u",
                       w.bad_rank, first, end - 1);
    return rc < 0 ? rc : 0;
}

/* Map the regular file NAME under DIRFD read-only (*MAP, *LEN; munmap it). */
static int map_file(int dirfd, const char *name, uint8_t **map, size_t *len, cn_err *err)
{
    *map = NULL;
    *len = 0;
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 && errno == ENOENT)
        return cn_fail(err, CAIRN_ENOENT, "no such file");
    if (fd < 0 && errno == ELOOP)
        return cn_fail(err, CAIRN_EUNSAFE, "is a symlink; give the file it points to");
    if (fd < 0)
        return cn_fail_errno(err, errno, "cannot open");
    struct stat st;
    int rc = 0;
    void *p = MAP_FAILED;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
        rc = cn_fail(err, CAIRN_ECORRUPT, "not a regular file, or empty");
    else if ((p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED)
        rc = cn_fail_errno(err, errno, "cannot map");
    close(fd);
    *map = rc == 0 ? p : NULL;
    *len = rc == 0 ? (size_t)st.st_size : 0;
    return rc;
}

/* The directory part of PATH into DIR and its last component into BASE. */
static void split_path(const char *path, char *dir, size_t dlen, char *base, size_t blen)
{
    const char *slash = strrchr(path, '/');
    snprintf(dir, dlen, "%.*s", slash ? (int)(slash == path ? 1 : slash - path) : 1,
             slash ? path : ".");
    snprintf(base, blen, "%s", slash ? slash + 1 : path);
}

/* Read and decode the index NAME under DIRFD; its directory is DIRNAME (a
 * "gen-<G>" directory must hold generation G's index). */
static int index_read(int dirfd, const char *name, const char *dirname, cn_pindex *x, cn_err *err)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    int rc = cn_read_small(dirfd, name, INDEX_MAX, &buf, &len, err);
    if (rc == -ENOENT)
        return cn_fail(err, CAIRN_ENOENT, "no such file");
    if (rc == 0)
        rc = cn_pindex_decode(buf, len, x, err);
    free(buf);
    const char *slash = strrchr(dirname, '/');
    int64_t g = cn_parse_gen_dirname(slash ? slash + 1 : dirname);
    if (rc == 0 && g >= 0 && x->generation != g) {
        cn_pindex_free(x);
        rc = cn_fail(err, CAIRN_ECORRUPT, "index of generation %lld in gen-%lld",
                     (long long)x->generation, (long long)g);
    }
    return rc;
}

int cli_pfs_check_file(const char *path, int kind, cn_err *err)
{
    char dir[CLI_PATH_MAX], name[CLI_PATH_MAX];
    split_path(path, dir, sizeof dir, name, sizeof name);
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0)
        return cn_fail_errno(err, errno, "%s: cannot open", dir);
    cn_pindex x;
    int rc;
    if (kind == CLI_FILE_PINDEX) {
        if ((rc = index_read(dirfd, name, dir, &x, err)) == 0)
            cn_pindex_free(&x);
        close(dirfd);
        return rc;
    }
    uint8_t *map;
    size_t len;
    rc = map_file(dirfd, name, &map, &len, err);
    unsigned f = 0;
    uint64_t sum = 0;
    char own[32] = "";
    cn_err ignored = {0};
    if (sscanf(name, "agg-%u", &f) == 1)
        cn_agg_filename(own, sizeof own, f);
    bool indexed = rc == 0 && strcmp(own, name) == 0 && /* one the index names */
                   index_read(dirfd, CN_PINDEX_NAME, dir, &x, &ignored) == 0;
    close(dirfd);
    uint32_t first = 0, end = 0;
    if (indexed) { /* the index beside it says what it must be */
        if (f >= x.nfiles)
            rc = cn_fail(err, CAIRN_ECORRUPT, "the index beside it lists %u files", x.nfiles);
        else if (x.files[f].size != len)
            rc = cn_fail(err, CAIRN_ECORRUPT, "size does not match the index beside it");
        else if ((rc = cz_agg_sum(map, len, &sum, err)) == 0 && sum != x.files[f].sum)
            rc = cn_fail(err, CAIRN_ECORRUPT, "checksum does not match the index beside it");
        else
            cn_pindex_file_ranks(&x, f, &first, &end);
        cn_pindex_free(&x);
    }
    if (rc == 0)
        rc = agg_check(map, len, first, end, err);
    if (map)
        munmap(map, len);
    return rc;
}

/* Verify PFS generation ID under JOBFD (its directory GPATH). */
static void verify_gen(cli_vstate *v, int jobfd, const char *gpath, const char *job, long id)
{
    char ipath[CLI_PATH_MAX + 16], gname[32];
    cn_gen_dirname(gname, sizeof gname, id);
    cli_path_join(ipath, sizeof ipath, gpath, CN_PINDEX_NAME);
    cn_pindex x;
    cn_err err = {0};
    int rc = lvl_pfs_index(jobfd, id, &x, &err);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "PFS generation %ld", id);
    strip(&err, prefix);
    if (rc == -ENOENT || rc == CAIRN_ENOENT) {
        cli_vnote(v, "INCOMPLETE", gpath, NULL,
                  "no index (a flush that did not finish; never restored)");
        return;
    }
    if (rc == 0 && strcmp(x.job, job) != 0) {
        rc = cn_fail(&err, CAIRN_ECORRUPT, "index of job '%s' in job '%s'", x.job, job);
        cn_pindex_free(&x);
    }
    if (rc < 0) {
        cli_vfail(v, ipath, rc, &err, 0);
        return;
    }
    cn_pindex *links = NULL;
    int n = 0;
    if (lvl_pfs_links(jobfd, &x, &links, &n, &err) < 0) {
        cn_err why = {0};
        cn_fail(&why, CAIRN_ECORRUPT, "stored as changes since generation %lld, a chain from "
                "%lld: %s", (long long)x.parent, (long long)x.base, err.msg);
        cli_vfail(v, ipath, CAIRN_ECORRUPT, &why, 0);
        cn_err_clear(&err);
    } else {
        cli_vok(v, ipath, cn_pindex_size(x.nfiles));
    }
    lvl_pfs_links_free(links, n);
    int genfd = cn_dir_open(jobfd, gname, false, &err);
    for (uint32_t f = 0; genfd >= 0 && f < x.nfiles; f++) {
        char name[32], fpath[CLI_PATH_MAX + 32];
        cn_agg_filename(name, sizeof name, f);
        cli_path_join(fpath, sizeof fpath, gpath, name);
        const uint8_t *map = NULL;
        uint32_t first, end;
        cn_pindex_file_ranks(&x, f, &first, &end);
        rc = lvl_pfs_map(genfd, name, &x.files[f], &map, &err);
        if (rc == 0)
            rc = agg_check(map, x.files[f].size, first, end, &err);
        lvl_pfs_unmap(map, &x.files[f]);
        if (rc < 0) {
            strip(&err, name);
            cli_vfail(v, fpath, rc, &err, x.files[f].size);
        } else {
            cli_vok(v, fpath, x.files[f].size);
        }
    }
    if (genfd < 0)
        cli_vfail(v, gpath, genfd, &err, 0);
    else
        close(genfd);
    cn_pindex_free(&x);
}

/* Open JOB's PFS directory of ST (-1 if none); its path into PATH. */
static int open_job(const cli_store *st, const char *job, char *path, size_t len, cn_err *err)
{
    char user[32];
    cn_user_dirname(user, sizeof user);
    snprintf(path, len, "%s/%s/%s", st->pfs, user, job);
    return st->pfs[0] ? lvl_pfs_open(st->pfs, job, false, err) : -ENOENT;
}

size_t cli_pfs_verify_job(cli_vstate *v, const cli_store *st, const char *job, int64_t gen,
                          const int64_t *seen, size_t nseen)
{
    char jpath[CLI_PATH_MAX];
    cn_err err = {0};
    int jobfd = open_job(st, job, jpath, sizeof jpath, &err);
    long *ids = NULL;
    int n = 0;
    if (jobfd < 0) {
        if (jobfd != -ENOENT && jobfd != CAIRN_ENOENT) /* not missing: unsafe, unreadable */
            cli_vfail(v, jpath, jobfd, &err, 0);
        return 0;
    }
    if (cn_gen_list(jobfd, &ids, &n, &err) < 0)
        cli_vfail(v, jpath, CAIRN_EIO, &err, 0);
    size_t found = 0;
    for (int i = 0; i < n; i++) {
        if (gen >= 0 && ids[i] != gen)
            continue;
        found++;
        bool counted = false;
        for (size_t k = 0; k < nseen && !counted; k++)
            counted = seen[k] == ids[i];
        v->gens += !counted;
        char gname[32], gpath[CLI_PATH_MAX + 32];
        cn_gen_dirname(gname, sizeof gname, ids[i]);
        cli_path_join(gpath, sizeof gpath, jpath, gname);
        verify_gen(v, jobfd, gpath, job, ids[i]);
    }
    free(ids);
    close(jobfd);
    return found;
}

void cli_pfs_job_names(const cli_store *st, cli_names *out)
{
    out->v = NULL;
    out->n = 0;
    cn_err err = {0};
    char user[32];
    cn_user_dirname(user, sizeof user);
    int base = st->pfs[0] ? cn_dir_open_path(st->pfs, &err) : -1;
    int fd = base >= 0 ? cn_dir_open(base, user, false, &err) : -1;
    cli_names all = {0};
    if (fd >= 0 && cli_names_read(fd, &all, &err) == 0) {
        out->v = cli_alloc((all.n ? all.n : 1) * sizeof *out->v);
        for (size_t i = 0; i < all.n; i++) {
            struct stat sb;
            if (cn_id_ok(all.v[i]) && fstatat(fd, all.v[i], &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
                S_ISDIR(sb.st_mode))
                out->v[out->n++] = cli_strdup(all.v[i]);
        }
    }
    cli_names_free(&all);
    if (fd >= 0)
        close(fd);
    if (base >= 0)
        close(base);
}

bool cli_pfs_has_job(const cli_store *st, const char *job)
{
    char jpath[CLI_PATH_MAX];
    cn_err err = {0};
    int jobfd = open_job(st, job, jpath, sizeof jpath, &err);
    if (jobfd >= 0)
        close(jobfd);
    return jobfd >= 0;
}

uint64_t cli_pfs_job_bytes(const cli_store *st, const char *job, int64_t gen)
{
    char jpath[CLI_PATH_MAX];
    cn_err err = {0};
    int jobfd = open_job(st, job, jpath, sizeof jpath, &err);
    if (jobfd < 0)
        return 0;
    const struct timespec always = {0, 0};
    long *ids = NULL;
    int n = 0;
    uint64_t sum = 0;
    cn_gen_list(jobfd, &ids, &n, &err);
    for (int i = 0; i < n; i++) {
        char gname[32];
        cn_gen_dirname(gname, sizeof gname, ids[i]);
        int fd = gen < 0 || ids[i] == gen ? cn_dir_open(jobfd, gname, false, &err) : -1;
        if (fd >= 0) {
            sum += cli_bytes_since(fd, &always, 0);
            close(fd);
        }
    }
    free(ids);
    close(jobfd);
    return sum;
}

#define FIELD "%-17s"

static void print_index(const char *path, const cn_pindex *x)
{
    char a[32], b[32];
    printf(FIELD "%s\n", "file:", path);
    printf(FIELD "PFS index (level 4), format version %u\n", "kind:", x->version);
    printf(FIELD "%s\n", "job:", x->job);
    printf(FIELD "%lld\n", "generation:", (long long)x->generation);
    printf(FIELD "%u on %u nodes, %u per file\n", "ranks:", x->nranks, x->nnodes,
           x->group);
    printf(FIELD "%s\n", "scheme:", cz_agg_scheme_name((int)x->scheme));
    if (x->parent >= 0)
        printf(FIELD "incr <- %lld: only what changed since PFS generation %lld (a chain from "
               "%lld)\n", "chain:", (long long)x->parent, (long long)x->parent,
               (long long)x->base);
    else
        printf(FIELD "full\n", "chain:");
    printf(FIELD "%s of state in %s (%u file%s)\n", "bytes:", cli_human(x->raw, a, sizeof a),
           cli_human(x->stored, b, sizeof b), x->nfiles, x->nfiles == 1 ? "" : "s");
    printf(FIELD "index valid; files not checked (use cairn verify)\n\n", "checked:");
    cli_table t;
    cli_table_init(&t, "rlrll");
    const char *head[] = {"FILE", "NAME", "SIZE", "CHECKSUM", "RANKS"};
    for (size_t i = 0; i < 5; i++)
        cli_table_add(&t, "%s", head[i]);
    for (uint32_t f = 0; f < x->nfiles; f++) {
        char name[32];
        uint32_t first, end;
        cn_agg_filename(name, sizeof name, f);
        cn_pindex_file_ranks(x, f, &first, &end);
        cli_table_add(&t, "%u", f);
        cli_table_add(&t, "%s", name);
        cli_table_add(&t, "%llu", (unsigned long long)x->files[f].size);
        cli_table_add(&t, "0x%016llx", (unsigned long long)x->files[f].sum);
        cli_table_add(&t, end - first > 1 ? "%u-%u" : "%u", first, end - 1);
    }
    cli_table_print(&t, stdout);
    cli_table_free(&t);
}

static void print_agg(const char *path, const cz_agg_file *f, size_t len)
{
    char a[32];
    size_t n = cz_agg_count(f);
    printf(FIELD "%s\n", "file:", path);
    printf(FIELD "aggregated file (level 4), scheme %s\n", "kind:",
           cz_agg_scheme_name(cz_agg_scheme_of(f)));
    printf(FIELD "%s (%zu bytes)\n", "file size:", cli_human(len, a, sizeof a), len);
    printf(FIELD "%zu\n", "variables:", n);
    printf(FIELD "header, tables and group checksums valid; frames not decoded (use cairn "
                 "verify)\n", "checked:");
    if (n == 0)
        return;
    putchar('\n');
    cli_table t;
    cli_table_init(&t, "rllllrr");
    const char *head[] = {"RANK", "NAME", "KIND", "TYPE", "DIMS", "COUNT", "BYTES"};
    for (size_t i = 0; i < 7; i++)
        cli_table_add(&t, "%s", head[i]);
    for (size_t i = 0; i < n; i++) {
        cz_agg_var v;
        cz_agg_info(f, i, &v);
        char dims[96] = "-";
        for (int d = 0, k = 0; d < v.ndims && d < CAIRN_MAX_DIMS; d++)
            k += snprintf(dims + k, sizeof dims - (size_t)k, "%s%llu", d ? "x" : "",
                          (unsigned long long)v.dims[d]);
        cli_table_add(&t, "%u", v.rank);
        cli_table_add(&t, "%s", v.name);
        cli_table_add(&t, "%s", v.kind == CN_KIND_VAR && !strcmp(v.name, CN_LAYOUT_NAME)
                                    ? "layout" /* cairn's own */
                                    : cz_agg_kind_name(v.kind));
        cli_table_add(&t, "%s", cli_type_name(v.type));
        cli_table_add(&t, "%s", dims);
        cli_table_add(&t, "%llu", (unsigned long long)v.count);
        cli_table_add(&t, "%llu", (unsigned long long)v.size);
    }
    cli_table_print(&t, stdout);
    cli_table_free(&t);
}

int cli_pfs_inspect(const char *path, int kind, cn_err *err)
{
    char dir[CLI_PATH_MAX], name[CLI_PATH_MAX];
    split_path(path, dir, sizeof dir, name, sizeof name);
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0)
        return cn_fail_errno(err, errno, "%s: cannot open", dir);
    int rc;
    if (kind == CLI_FILE_PINDEX) {
        cn_pindex x;
        if ((rc = index_read(dirfd, name, dir, &x, err)) == 0) {
            print_index(path, &x);
            cn_pindex_free(&x);
        }
        close(dirfd);
        return rc;
    }
    uint8_t *map;
    size_t len;
    cz_agg_file *f = NULL;
    rc = map_file(dirfd, name, &map, &len, err);
    close(dirfd);
    if (rc == 0 && (rc = cz_agg_open(map, len, &f, err)) == 0)
        print_agg(path, f, len);
    cz_agg_close(f);
    if (map)
        munmap(map, len);
    return rc;
}
