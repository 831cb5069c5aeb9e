/*
 * cli_disk.c - the CLI's view of node-local storage.
 *
 *   <base>/cairn-<uid>/<job>/<node>/gen-<id>/rank-<r>.ckpt
 *   <base>/cairn-<uid>/<job>/<node>/gen-<id>/manifest
 *
 * The base directory is shared (e.g. /dev/shm) and is opened as a plain path;
 * everything below it (the user directory, jobs, nodes, generations) is
 * opened with cn_dir_open, which refuses symlinks, foreign owners and loose
 * modes, and every file is opened relative to such a checked directory. An
 * entry that fails those checks is reported and skipped, never followed.
 *
 * A job's node directories are the ones visible here: on one machine with
 * emulated nodes that is every node, on a real cluster only this node's.
 * Names in a job or node directory that are not node directories or
 * generations (sockets, routed files) are ignored.
 *
 * Level 4 lives elsewhere, in <pfs>/cairn-<uid>/<job>/gen-<id>/: the PFS
 * directory is --pfs DIR, else pfs.dir of --config, else CAIRN_PFS_DIR. Node
 * manifests do not record it, so with none of those the verbs say in one
 * line that level 4 is not shown (cli_store_pfs).
 */
#include "tools/tools.h"
#include "compress/compress.h"
#include "levels/pfs/pfs.h"
#include "levels/parity/parity.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_store_open(const char *verb, const char *base, const char *config, cli_store *s)
{
    s->fd = -1;
    s->path[0] = '\0';
    s->pfs[0] = '\0';
    cn_config cfg;
    cn_err err = {0};
    int crc = cn_config_load(&cfg, config, &err);
    if (crc < 0 && !base) {
        cli_error(verb, "%s", err.msg);
        return CLI_EXIT_ERROR;
    }
    if (crc == 0)
        snprintf(s->pfs, sizeof s->pfs, "%s", cfg.pfs_dir);
    if (!base)
        base = cfg.base;
    if (strlen(base) > 4095) {
        cli_error(verb, "base directory path too long");
        return CLI_EXIT_ERROR;
    }
    char user[32];
    cn_user_dirname(user, sizeof user);
    cli_path_join(s->path, sizeof s->path, base, user);
    int basefd = cn_dir_open_path(base, &err);
    if (basefd < 0) {
        cli_error(verb, "%s", err.msg);
        return basefd == -ENOENT ? CLI_EXIT_MISSING : CLI_EXIT_ERROR;
    }
    s->fd = cn_dir_open(basefd, user, false, &err);
    close(basefd);
    if (s->fd == -ENOENT) {
        s->fd = -1;
        return CLI_EXIT_OK;
    }
    if (s->fd < 0) {
        s->fd = -1;
        cli_error(verb, "%s/%s", base, err.msg);
        return CLI_EXIT_ERROR;
    }
    return CLI_EXIT_OK;
}

int cli_store_pfs(const char *verb, const char *pfs, cli_store *s)
{
    if (pfs) {
        cn_err err = {0};
        int fd = cn_dir_open_path(pfs, &err);
        if (fd < 0) {
            cli_error(verb, "--pfs: %s", err.msg);
            return CLI_EXIT_ERROR;
        }
        close(fd);
        if (strlen(pfs) >= sizeof s->pfs) {
            cli_error(verb, "--pfs: path too long");
            return CLI_EXIT_ERROR;
        }
        snprintf(s->pfs, sizeof s->pfs, "%s", pfs);
    }
    if (!s->pfs[0])
        cli_error(verb, "no PFS directory known (--pfs DIR, pfs.dir of --config or "
                        "CAIRN_PFS_DIR): level 4 not shown");
    return CLI_EXIT_OK;
}

void cli_store_close(cli_store *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
}

static int cmp_names(const void *a, const void *b)
{
    return strverscmp(*(char *const *)a, *(char *const *)b);
}

int cli_names_read(int dirfd, cli_names *out, cn_err *err)
{
    out->v = NULL;
    out->n = 0;
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return cn_fail_errno(err, errno, "cannot open directory");
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        close(fd);
        return cn_fail_errno(err, e, "cannot list directory");
    }
    size_t cap = 0;
    struct dirent *de;
    errno = 0;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (out->n == cap) {
            cap = cap ? 2 * cap : 16;
            char **v = cli_alloc(cap * sizeof *v);
            if (out->n)
                memcpy(v, out->v, out->n * sizeof *v);
            free(out->v);
            out->v = v;
        }
        out->v[out->n++] = cli_strdup(de->d_name);
    }
    int e = errno;
    closedir(d);
    if (e) {
        cli_names_free(out);
        return cn_fail_errno(err, e, "cannot list directory");
    }
    if (out->n)
        qsort(out->v, out->n, sizeof *out->v, cmp_names);
    return 0;
}

void cli_names_free(cli_names *names)
{
    for (size_t i = 0; i < names->n; i++)
        free(names->v[i]);
    free(names->v);
    names->v = NULL;
    names->n = 0;
}

/* Is NAME under DIRFD a directory (not following a symlink)? */
static bool is_dir_at(int dirfd, const char *name)
{
    struct stat st;
    return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

static bool is_symlink_at(int dirfd, const char *name)
{
    struct stat st;
    return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

int cli_job_names(const char *verb, const cli_store *s, cli_names *out)
{
    cn_err err = {0};
    out->v = NULL;
    out->n = 0;
    if (s->fd < 0)
        return CLI_EXIT_OK;
    cli_names all;
    if (cli_names_read(s->fd, &all, &err) < 0) {
        cli_error(verb, "%s: %s", s->path, err.msg);
        return CLI_EXIT_ERROR;
    }
    out->v = cli_alloc((all.n ? all.n : 1) * sizeof *out->v);
    for (size_t i = 0; i < all.n; i++) {
        if (is_symlink_at(s->fd, all.v[i]))
            cli_error(verb, "%s/%s is a symlink; skipped", s->path, all.v[i]);
        else if (is_dir_at(s->fd, all.v[i]) && cn_id_ok(all.v[i]))
            out->v[out->n++] = cli_strdup(all.v[i]);
    }
    cli_names_free(&all);
    return CLI_EXIT_OK;
}

static int cmp_gen_desc(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Add NODE's generation ids to J's list (kept unique after the final sort). */
static void collect_gens(cli_job *j, const cli_node *node, size_t *cap)
{
    cli_names names;
    cn_err err = {0};
    if (cli_names_read(node->fd, &names, &err) < 0) {
        cli_error(NULL, "%s: %s", node->path, err.msg);
        return;
    }
    for (size_t i = 0; i < names.n; i++) {
        int64_t id = cn_parse_gen_dirname(names.v[i]);
        if (id < 0)
            continue;
        if (j->ngens == *cap) {
            *cap = *cap ? 2 * *cap : 16;
            int64_t *g = cli_alloc(*cap * sizeof *g);
            if (j->ngens)
                memcpy(g, j->gen, j->ngens * sizeof *g);
            free(j->gen);
            j->gen = g;
        }
        j->gen[j->ngens++] = id;
    }
    cli_names_free(&names);
}

int cli_job_open(const char *verb, const cli_store *s, const char *name, cli_job *j)
{
    memset(j, 0, sizeof *j);
    j->fd = -1;
    if (!cn_id_ok(name))
        return cli_usage_error(verb, "'%.80s' is not a job id (1-63 of A-Z a-z 0-9 . _ -)",
                               name);
    snprintf(j->name, sizeof j->name, "%s", name);
    cli_path_join(j->path, sizeof j->path, s->path, name);
    if (s->fd < 0) {
        cli_error(verb, "no such job '%s': %s does not exist", name, s->path);
        return CLI_EXIT_MISSING;
    }
    cn_err err = {0};
    j->fd = cn_dir_open(s->fd, name, false, &err);
    if (j->fd < 0) {
        int rc = j->fd;
        j->fd = -1;
        if (rc == -ENOENT) {
            cli_error(verb, "no such job '%s' under %s", name, s->path);
            return CLI_EXIT_MISSING;
        }
        cli_error(verb, "%s/%s", s->path, err.msg);
        return CLI_EXIT_ERROR;
    }
    cli_names names;
    if (cli_names_read(j->fd, &names, &err) < 0) {
        cli_error(verb, "%s: %s", j->path, err.msg);
        return CLI_EXIT_ERROR;
    }
    j->node = cli_alloc((names.n ? names.n : 1) * sizeof *j->node);
    size_t cap = 0;
    for (size_t i = 0; i < names.n; i++) {
        const char *nn = names.v[i];
        if (is_symlink_at(j->fd, nn)) {
            cli_error(verb, "%s/%s is a symlink; skipped", j->path, nn);
            continue;
        }
        if (!is_dir_at(j->fd, nn) || !cn_id_ok(nn))
            continue;
        int fd = cn_dir_open(j->fd, nn, false, &err);
        if (fd < 0) {
            cli_error(verb, "%s/%s; skipped", j->path, err.msg);
            continue;
        }
        cli_node *node = &j->node[j->nnodes++];
        snprintf(node->name, sizeof node->name, "%s", nn);
        cli_path_join(node->path, sizeof node->path, j->path, nn);
        node->fd = fd;
        collect_gens(j, node, &cap);
    }
    cli_names_free(&names);
    if (j->ngens) {
        qsort(j->gen, j->ngens, sizeof *j->gen, cmp_gen_desc);
        size_t u = 1;
        for (size_t i = 1; i < j->ngens; i++)
            if (j->gen[i] != j->gen[u - 1])
                j->gen[u++] = j->gen[i];
        j->ngens = u;
    }
    return CLI_EXIT_OK;
}

void cli_job_close(cli_job *j)
{
    for (size_t i = 0; i < j->nnodes; i++)
        close(j->node[i].fd);
    if (j->fd >= 0)
        close(j->fd);
    free(j->node);
    free(j->gen);
    memset(j, 0, sizeof *j);
    j->fd = -1;
}

int cli_gen_open(const cli_node *node, int64_t gen, cn_err *err)
{
    char name[32];
    cn_gen_dirname(name, sizeof name, gen);
    int fd = cn_dir_open(node->fd, name, false, err);
    if (fd == -ENOENT)
        return cn_fail(err, CAIRN_ENOENT, "missing");
    return fd; /* the message names the directory relative to the node */
}

int cli_manifest_load(int genfd, const char *job, int64_t gen, const char *node_name,
                      cn_manifest *m, cn_err *err)
{
    memset(m, 0, sizeof *m);
    uint8_t *buf = NULL;
    size_t len = 0;
    int rc = cn_read_small(genfd, CN_MANIFEST_NAME, CLI_MANIFEST_MAX, &buf, &len, err);
    if (rc == -ENOENT)
        return cn_fail(err, CAIRN_ENOENT, "missing");
    if (rc == -ELOOP)
        return cn_fail(err, CAIRN_ECORRUPT, "is a symlink");
    if (rc == CAIRN_EUNSAFE)
        return cn_fail(err, CAIRN_ECORRUPT, "is not a regular file");
    if (rc < 0)
        return rc;
    rc = cn_manifest_decode(buf, len, m, err);
    free(buf);
    if (rc < 0)
        return rc;
    if (strcmp(m->job, job) != 0)
        rc = cn_fail(err, CAIRN_ECORRUPT, "manifest of job '%s' in job '%s'", m->job, job);
    else if (m->generation != gen)
        rc = cn_fail(err, CAIRN_ECORRUPT, "manifest of generation %lld in gen-%lld",
                     (long long)m->generation, (long long)gen);
    else if (node_name && strcmp(m->node_name, node_name) != 0)
        rc = cn_fail(err, CAIRN_ECORRUPT, "manifest of node '%s' in node '%s'", m->node_name,
                     node_name);
    if (rc < 0)
        cn_manifest_free(m);
    return rc;
}

long cli_parse_rank_filename(const char *name)
{
    if (strncmp(name, "rank-", 5) != 0)
        return -1;
    const char *p = name + 5;
    if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] != '.'))
        return -1;
    long r = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        r = r * 10 + (*p - '0');
        if (r >= (long)CN_MAX_RANKS)
            return -1;
    }
    return strcmp(p, ".ckpt") == 0 ? r : -1;
}

bool cli_is_tmp(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && strcmp(name + n - 4, ".tmp") == 0;
}

int cli_file_kind(const char *path, int *kind, cn_err *err)
{
    *kind = CLI_FILE_OTHER;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT)
            return cn_fail(err, CAIRN_ENOENT, "%s: no such file", path);
        if (e == ELOOP)
            return cn_fail(err, CAIRN_EUNSAFE, "%s: is a symlink; give the file it points to",
                           path);
        return cn_fail_errno(err, e, "%s: cannot open", path);
    }
    uint8_t magic[8];
    ssize_t n = read(fd, magic, sizeof magic);
    int e = errno;
    close(fd);
    if (n < 0)
        return cn_fail_errno(err, e, "%s: cannot read", path);
    /* The first 7 bytes name the kind; the 8th is the format generation,
     * which the decoders check (and report as a version mismatch). */
    if (n == 8 && memcmp(magic, CN_CKPT_MAGIC, 7) == 0)
        *kind = CLI_FILE_CKPT;
    else if (n == 8 && memcmp(magic, CN_MANIFEST_MAGIC, 7) == 0)
        *kind = CLI_FILE_MANIFEST;
    else if (n == 8 && memcmp(magic, CN_PARITY_MAGIC, 7) == 0)
        *kind = CLI_FILE_PARITY;
    else if (n == 8 && memcmp(magic, CN_PINDEX_MAGIC, 7) == 0)
        *kind = CLI_FILE_PINDEX;
    else if (n == 8 && memcmp(magic, cz_agg_magic, 8) == 0) /* its version follows */
        *kind = CLI_FILE_AGG;
    return 0;
}
