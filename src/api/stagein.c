/*
 * stagein.c - level 4 on the way back: a PFS generation split back to the
 * ranks, as node-local files, so that restart proceeds as from level 1.
 *
 * The first rank finds the newest complete PFS generation (its index decodes
 * and names this job) and tells everyone. Then each node leader reads the
 * aggregated files that hold its ranks (size checked against the index,
 * header, table and trailer by their checksums, every compressed group by
 * its checksum before anything of it is decoded; only the units that hold
 * its ranks' bytes are decoded, a raw unit verified by its frame checksum:
 * a node reads only its share of a file), rebuilds every routed HDF5 file
 * level 4 split by dataset (skeleton and datasets joined, the whole file's
 * checksum checked: src/compress/h5agg.c), writes each of its ranks a full
 * rank file (raw, no chain: a PFS generation is full) into a fresh gen-<G>/,
 * and writes the node
 * manifest (level 1, target 4). A generation can come back to a job of the
 * same rank count on any node layout. Nothing node-local is touched before
 * every leader has read its files.
 *
 * Generations of another rank count are passed over (and noted, for
 * restart's CAIRN_EMISMATCH), and a node-local generation another layout
 * wrote is never written over. After a restore from node-local storage,
 * api_pfs_check reads the newest PFS generation back and warns if it is
 * damaged: the fallback the job counts on would fail it.
 *
 * Ownership: the variables of one leader's ranks are copied out of the mapped
 * files and freed when the rank files are written.
 */
#include "api/api.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct rank_vars {
    lvl_src *src;
    size_t n, cap;
} rank_vars;

typedef struct collect {
    cairn_ctx *ctx;
    rank_vars *local;             /* by application rank; only this node's are used */
    cz_h5_parts *h5;              /* parts of split HDF5 routed files, all local ranks */
    int rc;
} collect;

/* cz_agg_read_some filter: a variable of this node's ranks? */
static bool on_node(void *arg, const cz_agg_var *v)
{
    const cairn_ctx *ctx = ((collect *)arg)->ctx;
    return v->rank < (uint32_t)ctx->nranks && (int)ctx->rank_node[v->rank] == ctx->node;
}

/* A free entry at the end of RV (count not advanced), or NULL. */
static lvl_src *next_src(rank_vars *rv)
{
    if (rv->n == rv->cap) {
        size_t cap = rv->cap ? 2 * rv->cap : 8;
        lvl_src *s = realloc(rv->src, cap * sizeof *s);
        if (!s)
            return NULL;
        rv->src = s, rv->cap = cap;
    }
    memset(&rv->src[rv->n], 0, sizeof rv->src[rv->n]);
    return &rv->src[rv->n];
}

/* cz_agg_read_some callback (CZ_AGG_GIVE, on_node): keep the variables of
 * this node's ranks; their data is handed over, not copied. */
static int keep_var(void *arg, const cz_agg_var *v)
{
    collect *c = arg;
    cairn_ctx *ctx = c->ctx;
    void *data = (void *)v->data; /* ours (CZ_AGG_GIVE) */
    if (v->rank >= (uint32_t)ctx->nranks || (int)ctx->rank_node[v->rank] != ctx->node) {
        free(data); /* on_node let it through: not expected */
        return 0;
    }
    if (v->kind > CN_KIND_FILE) { /* joined into its routed file once all are read */
        c->rc = cz_h5_parts_keep(c->h5, v, &ctx->err);
        free(data);
        return c->rc;
    }
    rank_vars *rv = &c->local[v->rank];
    lvl_src *s = next_src(rv);
    char *name = s ? strdup(v->name) : NULL;
    if (!name) {
        free(data);
        return c->rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory for '%s'", v->name);
    }
    s->name = name, s->kind = v->kind, s->type = v->type, s->ndims = v->ndims;
    for (int d = 0; d < CAIRN_MAX_DIMS; d++)
        s->dims[d] = v->dims[d];
    s->count = v->count, s->size = v->size, s->ptr = data, s->codec = CZ_RAW;
    rv->n++;
    return 0;
}

static void free_vars(rank_vars *rv)
{
    for (size_t i = 0; i < rv->n; i++) {
        free((void *)rv->src[i].name);
        free((void *)rv->src[i].ptr);
    }
    free(rv->src);
    memset(rv, 0, sizeof *rv);
}

/* cz_h5_parts_join callback: a rebuilt routed file joins its rank's entries. */
static int add_file(void *arg, const char *name, uint8_t *data, uint64_t size)
{
    rank_vars *rv = ((void **)arg)[0];
    cairn_ctx *ctx = ((void **)arg)[1];
    for (size_t i = 0; i < rv->n; i++)
        if (rv->src[i].kind == CN_KIND_FILE && strcmp(rv->src[i].name, name) == 0) {
            free(data);
            return cn_fail(&ctx->err, CAIRN_ECORRUPT, "routed file '%s' stored twice", name);
        }
    lvl_src *s = next_src(rv);
    char *n = s ? strdup(name) : NULL;
    if (!n) {
        free(data);
        return cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory for '%s'", name);
    }
    *s = (lvl_src){.name = n, .kind = CN_KIND_FILE, .type = CAIRN_BYTE, .count = size,
                   .size = size, .ptr = data, .codec = CZ_RAW};
    rv->n++;
    return 0;
}

/* Every split HDF5 routed file of this node's ranks rebuilt from C->h5. */
static int join_files(cairn_ctx *ctx, collect *c)
{
    int rc = 0;
    for (int r = 0; rc == 0 && r < ctx->nranks; r++) {
        if ((int)ctx->rank_node[r] != ctx->node)
            continue;
        void *arg[2] = {&c->local[r], ctx};
        rc = cz_h5_parts_join(c->h5, (uint32_t)r, add_file, arg, &ctx->err);
    }
    return rc;
}

/* Read the files of X holding this node's ranks into C->local. */
static int read_files(cairn_ctx *ctx, int jobfd, const cn_pindex *x, collect *c)
{
    char gen[64];
    cn_gen_dirname(gen, sizeof gen, x->generation);
    int genfd = cn_dir_open(jobfd, gen, false, &ctx->err);
    CN_TRY(genfd);
    int rc = 0;
    for (uint32_t f = 0; rc == 0 && f < x->nfiles; f++) {
        uint32_t lo = f * x->group, hi = lo + x->group < x->nranks ? lo + x->group : x->nranks;
        bool mine = false;
        for (uint32_t r = lo; r < hi; r++)
            mine |= (int)ctx->rank_node[r] == ctx->node;
        if (!mine)
            continue;
        char name[64];
        cn_agg_filename(name, sizeof name, f);
        const uint8_t *map = NULL;
        cz_agg_file *af = NULL;
        rc = lvl_pfs_map_part(genfd, name, &x->files[f], &map, &ctx->err);
        if (rc == 0) /* only what this node decodes is verified, by its own checksums */
            rc = cz_agg_open_flags(map, x->files[f].size, CZ_AGG_LAZY, &af, &ctx->err);
        if (rc == 0)
            rc = cz_agg_read_some(af, on_node, keep_var, c, CZ_AGG_GIVE, /* others' units */
                                  &ctx->err);                       /* are not decoded */
        if (rc != 0 && c->rc < 0)
            rc = c->rc;
        cz_agg_close(af);
        lvl_pfs_unmap(map, &x->files[f]);
        if (rc < 0)
            cn_err_prefix(&ctx->err, "PFS generation %lld, %s: ", (long long)x->generation, name);
    }
    close(genfd);
    if (rc == 0 && (rc = join_files(ctx, c)) < 0)
        cn_err_prefix(&ctx->err, "PFS generation %lld: ", (long long)x->generation);
    return rc;
}

/* Write this node's rank files and manifest of generation ID (index X) from C. */
static int write_local(cairn_ctx *ctx, long id, const cn_pindex *x, collect *c)
{
    char gen[64], gen_path[4500];
    cn_gen_dirname(gen, sizeof gen, id);
    snprintf(gen_path, sizeof gen_path, "%s/%s", ctx->node_path, gen);
    CN_TRY(api_may_replace(ctx, id));
    CN_TRY(cn_rmtree_at(ctx->nodefd, gen, &ctx->err));
    int genfd = cn_dir_open(ctx->nodefd, gen, true, &ctx->err);
    CN_TRY(genfd);
    cn_manifest m = {.level = CAIRN_LEVEL_LOCAL, .target = CAIRN_LEVEL_PFS, .flags = CN_MF_PFS,
                     .generation = id, .parent = -1, .base = id, .nranks = (uint32_t)ctx->nranks,
                     .nnodes = (uint32_t)ctx->nnodes, .node = (uint32_t)ctx->node,
                     .nlocal = (uint32_t)ctx->node_size, .rank_node = ctx->rank_node};
    memcpy(m.job, ctx->job, sizeof m.job);
    memcpy(m.node_name, ctx->node_name, sizeof m.node_name);
    memcpy(m.label, x->label, sizeof m.label);
    m.seconds = x->seconds;
    m.local = calloc((size_t)ctx->node_size, sizeof *m.local);
    int rc = m.local ? 0 : cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    uint32_t k = 0;
    for (int r = 0; rc == 0 && r < ctx->nranks; r++) {
        if ((int)ctx->rank_node[r] != ctx->node)
            continue;
        cn_header proto = {.level = CAIRN_LEVEL_LOCAL, .generation = id, .rank = (uint32_t)r,
                           .nranks = (uint32_t)ctx->nranks, .node = (uint32_t)ctx->node,
                           .nnodes = (uint32_t)ctx->nnodes, .block_size = ctx->cfg.block_size,
                           .parent = -1, .base = id, .incr_block = 0};
        memcpy(proto.job, ctx->job, sizeof proto.job);
        char name[64];
        cn_rank_filename(name, sizeof name, (uint32_t)r);
        cz_opts z = {.buf_size = ctx->cfg.z_buffer, .threads = 0, .level = ctx->cfg.z_level};
        lvl_written w = {0};
        rank_vars *rv = &c->local[r];
        rc = lvl_local_write(genfd, gen_path, name, &proto, rv->src, (uint32_t)rv->n,
                             CN_IO_WRITE, &z, &w, &ctx->err);
        if (rc == 0 && k < m.nlocal)
            m.local[k++] = (cn_manifest_rank){(uint32_t)r, w.file_size, w.header_sum, w.full,
                                              w.full};
        free_vars(rv);
    }
    if (rc == 0)
        rc = cn_dir_sync(genfd, &ctx->err);
    if (rc == 0)
        rc = api_write_manifest(ctx, genfd, &m);
    free(m.local);
    close(genfd);
    if (rc < 0) {
        cn_err ignored = {0};
        cn_rmtree_at(ctx->nodefd, gen, &ignored);
    }
    return rc;
}

/* The stage copy of JOB's generations cairn-prolog made on this node, or -1. */
static int open_stage(cairn_ctx *ctx, const char *job, char *path, size_t len)
{
    snprintf(path, len, "%s/stage", ctx->node_path);
    cn_err ignored = {0};
    return lvl_pfs_open(path, job, false, &ignored);
}

int api_pfs_source(cairn_ctx *ctx, const char *job, long id, cn_err *err)
{
    char stage[sizeof ctx->node_path + 16], index[80];
    int fd = open_stage(ctx, job, stage, sizeof stage);
    cn_gen_dirname(index, sizeof index - 8, id);
    strcat(index, "/index"); /* staged whole or not at all (renamed into place) */
    if (fd >= 0 && id >= 0 && faccessat(fd, index, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
        return fd;
    if (fd >= 0)
        close(fd);
    return lvl_pfs_open(ctx->cfg.pfs_dir, job, false, err);
}

long api_pfs_find(cairn_ctx *ctx, const char *job, long bound, uint32_t nranks, cn_pindex *x,
                  lvl_pfs_skip *skip, cn_err *err)
{
    char stage[sizeof ctx->node_path + 16];
    int fds[2] = {open_stage(ctx, job, stage, sizeof stage), -1};
    if (ctx->cfg.pfs_dir[0])
        fds[1] = lvl_pfs_open(ctx->cfg.pfs_dir, job, false, err);
    long best = -1;
    for (int i = 0; i < 2; i++) {
        if (fds[i] < 0)
            continue;
        cn_pindex y;
        lvl_pfs_skip s;
        cn_err ignored = {0};
        long g = lvl_pfs_newest(fds[i], job, bound, nranks, &y, &s, i ? err : &ignored);
        close(fds[i]);
        if (skip && (i == 1 || fds[1] < 0)) /* the PFS says what it passed over */
            *skip = s;
        if (g > best) {
            if (best >= 0)
                cn_pindex_free(x);
            *x = y, best = g;
        } else if (g >= 0) {
            cn_pindex_free(&y);
        }
    }
    return best;
}

/* Where api_pfs_source finds generation ID of JOB, for messages. */
static void source_path(cairn_ctx *ctx, const char *job, long id, char *out, size_t len)
{
    char user[64];
    cn_user_dirname(user, sizeof user);
    cn_err ignored = {0};
    int fd = api_pfs_source(ctx, job, id, &ignored), staged = 0;
    if (fd >= 0) {
        struct stat a, b;
        char stage[sizeof ctx->node_path + 16];
        int sfd = open_stage(ctx, job, stage, sizeof stage);
        staged = sfd >= 0 && fstat(fd, &a) == 0 && fstat(sfd, &b) == 0 &&
                 a.st_ino == b.st_ino && a.st_dev == b.st_dev;
        if (sfd >= 0)
            close(sfd);
        close(fd);
    }
    snprintf(out, len, "%.4200s%s/%s/%s", staged ? ctx->node_path : ctx->cfg.pfs_dir,
             staged ? "/stage" : "", user, job);
}

/* Rank 0: the newest complete generation <= BOUND of JOB and this run's rank
 * count, or -1. What it passes over is noted for restart: a newer generation
 * of another rank count (ctx->pfs_note), a damaged index (api_note_lost). */
static long newest_of(cairn_ctx *ctx, const char *job, long bound)
{
    cn_err err = {0};
    cn_pindex x;
    lvl_pfs_skip skip = {.damaged = -1, .foreign = -1};
    long id = api_pfs_find(ctx, job, bound, (uint32_t)ctx->nranks, &x, &skip, &err);
    if (id >= 0)
        cn_pindex_free(&x);
    if (skip.foreign > id && !ctx->pfs_note[0]) {
        char was[96], now[96];
        api_layout_str(was, sizeof was, (int)skip.nranks, (int)skip.nnodes);
        api_layout_str(now, sizeof now, ctx->nranks, ctx->nnodes);
        snprintf(ctx->pfs_note, sizeof ctx->pfs_note,
                 "PFS generation %ld%s%s was written by %s; this run has %s", skip.foreign,
                 strcmp(job, ctx->job) ? " of job " : "", strcmp(job, ctx->job) ? job : "", was,
                 now);
        cn_info("%s", ctx->pfs_note);
    }
    if (skip.damaged > id)
        api_note_lost(ctx, skip.damaged, CAIRN_ECORRUPT, "%s", skip.why);
    return id;
}

long api_pfs_newest(cairn_ctx *ctx, long bound, int *rc)
{
    long id = -1;
    *rc = 0;
    if (!ctx->cfg.pfs_dir[0] && !ctx->cfg.restart_from[0])
        return -1;
    char job[CN_JOB_MAX + 1];
    snprintf(job, sizeof job, "%s", ctx->job);
    if (ctx->rank == 0) {
        id = newest_of(ctx, job, bound);
        if (id < 0 && ctx->cfg.restart_from[0]) { /* a new job restarting an earlier one */
            snprintf(job, sizeof job, "%s", ctx->cfg.restart_from);
            id = newest_of(ctx, job, bound);
        }
    }
    if (MPI_Bcast(&id, 1, MPI_LONG, 0, ctx->comm) != MPI_SUCCESS ||
        MPI_Bcast(job, sizeof job, MPI_CHAR, 0, ctx->comm) != MPI_SUCCESS ||
        MPI_Bcast(ctx->pfs_note, sizeof ctx->pfs_note, MPI_CHAR, 0, ctx->comm) != MPI_SUCCESS)
        *rc = cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Bcast failed");
    memcpy(ctx->pfs_job, job, sizeof job);
    return id;
}

static int stage_leader(cairn_ctx *ctx, long id)
{
    collect c = {ctx, calloc((size_t)ctx->nranks, sizeof *c.local), cz_h5_parts_new(), 0};
    if (!c.local || !c.h5) {
        free(c.local);
        cz_h5_parts_free(c.h5);
        return cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    }
    cn_pindex x = {0};
    int jobfd = api_pfs_source(ctx, ctx->pfs_job, id, &ctx->err);
    int rc = jobfd < 0 ? jobfd : lvl_pfs_index(jobfd, id, &x, &ctx->err);
    if (rc == 0 && (x.nranks != (uint32_t)ctx->nranks || strcmp(x.job, ctx->pfs_job) != 0))
        rc = cn_fail(&ctx->err, CAIRN_EMISMATCH, "PFS generation %ld is of job %s with %u ranks",
                     id, x.job, x.nranks);
    if (rc == 0)
        rc = read_files(ctx, jobfd, &x, &c);
    int worst = rc;
    if (MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MIN, ctx->leaders) != MPI_SUCCESS)
        rc = worst = cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allreduce among node leaders failed");
    if (rc == 0 && worst < 0)
        rc = api_echo(ctx, worst, "reading the PFS failed on another node");
    if (rc == 0)
        rc = write_local(ctx, id, &x, &c);
    for (int r = 0; r < ctx->nranks; r++)
        free_vars(&c.local[r]);
    free(c.local);
    cz_h5_parts_free(c.h5);
    cn_pindex_free(&x);
    if (jobfd >= 0)
        close(jobfd);
    return rc;
}

int api_stage_in(cairn_ctx *ctx, long id)
{
    return api_agree(ctx, ctx->node_rank == 0 ? stage_leader(ctx, id) : 0);
}

/* Node leader: check the files of PFS generation ID (of ctx->pfs_job) that
 * this node answers for (those whose first rank is here), warning of damage. */
static void check_leader(cairn_ctx *ctx, long id, long restored)
{
    cn_err err = {0};
    cn_pindex x = {0};
    char gen[64];
    cn_gen_dirname(gen, sizeof gen, id);
    int jobfd = api_pfs_source(ctx, ctx->pfs_job, id, &err);
    int genfd = -1;
    if (jobfd >= 0 && lvl_pfs_index(jobfd, id, &x, &err) == 0)
        genfd = cn_dir_open(jobfd, gen, false, &err);
    for (uint32_t f = 0; genfd >= 0 && f < x.nfiles; f++) {
        uint32_t first = f * x.group;
        if (first >= (uint32_t)ctx->nranks || (int)ctx->rank_node[first] != ctx->node)
            continue;
        char name[64];
        cn_agg_filename(name, sizeof name, f);
        const uint8_t *map = NULL;
        cn_err why = {0};
        if (lvl_pfs_map(genfd, name, &x.files[f], &map, &why) < 0) {
            char where[4400];
            source_path(ctx, ctx->pfs_job, id, where, sizeof where);
            cn_warn("the PFS copy of generation %ld is damaged: %s/%s/%s; %s", id, where, gen,
                    why.msg,
                    id == restored ? "generation restored from node-local storage, which holds "
                                     "it intact; only a newer flush makes the PFS a usable "
                                     "fallback again"
                                   : "it is the newest PFS generation: losing more nodes than "
                                     "levels 1-3 survive would lose the checkpoint");
        }
        lvl_pfs_unmap(map, &x.files[f]);
    }
    if (err.msg[0] && err.code != -ENOENT)
        cn_warn("the PFS copy of generation %ld cannot be checked: %s", id, err.msg);
    cn_pindex_free(&x);
    if (genfd >= 0)
        close(genfd);
    if (jobfd >= 0)
        close(jobfd);
}

void api_pfs_check(cairn_ctx *ctx, long id)
{
    int rc = 0;
    cn_err saved = ctx->err;
    long p = api_pfs_newest(ctx, id, &rc);
    if (rc == 0 && p >= 0 && ctx->node_rank == 0)
        check_leader(ctx, p, id);
    ctx->err = saved;
}
