/*
 * rankfiles.h - the checkpoints a benchmark's MPI runs left, loaded back for
 * an analysis without MPI (agg_bench, h5_bench): every job under BASE
 * (BASE/cairn-<uid>/<job>/<node>/gen-<id>/rank-<r>.ckpt) is one application;
 * its newest generation's rank files are verified and decoded (cn_ckpt_*,
 * cz_decode_ckpt; routed files taken as they are), giving each rank's
 * variables as a restart would see them. Also a sink into a growing buffer
 * (the staging buffer of a flush). Header-only, on top of bench.h; the
 * loaded variables live until the program exits.
 */
#ifndef CAIRN_RANKFILES_H
#define CAIRN_RANKFILES_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "bench.h"

#include "compress/compress.h"
#include "levels/pfs/pfs.h"

#define MAX_APPS 8
#define MAX_RANKS 1024

typedef struct rankset {
    cz_agg_var *v;
    size_t n;
    uint64_t raw;
} rankset;

typedef struct app {
    char job[CN_JOB_MAX + 1];
    int64_t gen;
    char path[MAX_RANKS][512];     /* rank file of the newest generation, by rank */
    uint32_t nranks;
    rankset r[MAX_RANKS];
    uint64_t raw;
} app;

static app *apps[MAX_APPS];
static int napps;

static app *app_of(const char *job)
{
    for (int i = 0; i < napps; i++)
        if (!strcmp(apps[i]->job, job))
            return apps[i];
    if (napps == MAX_APPS)
        die("more than %d jobs under the base", MAX_APPS);
    app *a = calloc(1, sizeof *a);
    if (!a)
        die("out of memory");
    snprintf(a->job, sizeof a->job, "%s", job);
    a->gen = -1;
    return apps[napps++] = a;
}

/* BASE/cairn-<uid>/<job>/<node>/gen-<id>/rank-<r>.ckpt: DEPTH 0 is BASE. */
static void scan(const char *dir, int depth, const char *job, int64_t gen)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (depth == 4) {
            unsigned r;
            char tail[8];
            if (sscanf(de->d_name, "rank-%u.%7s", &r, tail) == 2 && !strcmp(tail, "ckpt")) {
                app *a = app_of(job);
                if (r >= MAX_RANKS)
                    die("rank %u: at most %d ranks", r, MAX_RANKS);
                if (gen > a->gen) { /* a newer generation: start over */
                    a->gen = gen;
                    a->nranks = 0;
                    memset(a->path, 0, sizeof a->path);
                }
                if (gen == a->gen) {
                    snprintf(a->path[r], sizeof a->path[r], "%s", path);
                    if (r + 1 > a->nranks)
                        a->nranks = r + 1;
                }
            }
            continue;
        }
        if (depth == 3) {
            int64_t g = cn_parse_gen_dirname(de->d_name);
            if (g >= 0)
                scan(path, 4, job, g);
            continue;
        }
        scan(path, depth + 1, depth == 1 ? de->d_name : job, gen);
    }
    closedir(d);
}

/* Decode rank file PATH into S: every variable whole, routed files copied. */
static void load_rank(const char *path, rankset *s)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    *slash = '\0';
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        die("cannot open %s: %s", dir, strerror(errno));
    cn_ckpt *c = NULL;
    cn_err err = {0};
    if (cn_ckpt_open(fd, slash + 1, path, &c, &err) || cn_ckpt_verify(c, path, &err))
        die("%s: %s", path, err.msg);
    close(fd);
    uint32_t n = c->h.nentries;
    cz_dest *dst = calloc(n ? n : 1, sizeof *dst);
    const cz_dest **dp = calloc(n ? n : 1, sizeof *dp);
    uint32_t *nd = calloc(n ? n : 1, sizeof *nd);
    s->v = calloc(n ? n : 1, sizeof *s->v);
    if (!dst || !dp || !nd || !s->v)
        die("out of memory");
    for (uint32_t i = 0; i < n; i++) {
        const cn_entry *e = &c->e[i];
        if (e->flags & CN_ENTRY_DELTA)
            die("%s: '%s' is an increment (run with incremental checkpoints off)", path, e->name);
        uint8_t *p = malloc(e->raw_size ? e->raw_size : 1);
        if (!p)
            die("out of memory");
        if (e->kind == CN_KIND_FILE) {
            memcpy(p, c->map + e->offset, e->raw_size);
        } else {
            dst[i] = (cz_dest){.ptr = p, .len = e->raw_size};
            dp[i] = &dst[i];
            nd[i] = 1;
        }
        char *name = strdup(e->name);
        if (!name)
            die("out of memory");
        s->v[i] = (cz_agg_var){.rank = c->h.rank, .name = name, .kind = e->kind, .type = e->type,
                               .ndims = e->ndims, .count = e->count, .size = e->raw_size,
                               .data = p};
        memcpy(s->v[i].dims, e->dims, sizeof e->dims);
        s->raw += e->raw_size;
    }
    if (cz_decode_ckpt(c, dp, nd, 0, &err))
        die("%s: %s", path, err.msg);
    s->n = n;
    free(dst);
    free(dp);
    free(nd);
    cn_ckpt_close(c);
}

/* A sink into a growing buffer (the staging buffer of a flush). */
typedef struct stage {
    uint8_t *p;
    size_t len, cap;
} stage;

static int stage_sink(void *arg, const void *buf, size_t len, cn_err *err)
{
    stage *s = arg;
    (void)err;
    if (s->len + len > s->cap) {
        s->cap = 2 * (s->len + len);
        if (!(s->p = realloc(s->p, s->cap)))
            die("out of memory");
    }
    memcpy(s->p + s->len, buf, len);
    s->len += len;
    return 0;
}

/* Scan BASE and load every application's ranks; prints one '#' line each. */
static void load_apps(const char *base)
{
    scan(base, 0, NULL, -1);
    if (!napps)
        die("no checkpoints under %s", base);
    for (int k = 0; k < napps; k++) {
        app *a = apps[k];
        size_t nv = 0;
        for (uint32_t r = 0; r < a->nranks; r++) {
            if (!a->path[r][0])
                die("%s: generation %lld has no file of rank %u", a->job, (long long)a->gen, r);
            load_rank(a->path[r], &a->r[r]);
            a->raw += a->r[r].raw;
            nv += a->r[r].n;
        }
        printf("# %s: %u ranks, generation %lld, %.1f MB of variables (%zu of them)\n", a->job,
               a->nranks, (long long)a->gen, a->raw / 1e6, nv);
    }
}

#endif /* CAIRN_RANKFILES_H */
