/*
 * pfsread.c - the variables of some ranks of a PFS generation, read back:
 * for a full generation from its own files, for an increment through its
 * chain on the PFS, applied from the full base on.
 *
 * One link: the aggregated files that hold a wanted rank are mapped (size
 * checked against the index), opened lazily (header, table and trailer by
 * their checksums, every compressed group by its checksum before anything
 * of it is decoded; a raw unit by its frame checksum), and only the wanted
 * ranks' units are decoded; routed HDF5 files split at level 4 are joined
 * back (src/levels/pfs/h5agg.c, the whole file's checksum checked).
 * A chain: every link's index is read first, newest to oldest, and must hold
 * together (same job and rank count, each naming the next as its parent,
 * one base, which is full); a link missing or damaged is CAIRN_ECORRUPT
 * naming it, never CAIRN_ENOENT, before any data is read. Then the base is
 * read and each increment applied in turn, rank by rank, by its delta record
 * (src/levels/pfs/pdelta.c): a variable stored whole replaces the parent's, one
 * stored as changes takes the parent's bytes, resized, with its runs'
 * blocks written over them (every block it does not store must have the same
 * length in the parent), one not listed is gone; routed files come from the
 * increment. So every block ends up holding the newest link that stored it.
 *
 * Ownership: the caller's api_rvars get the variables (names and data owned
 * by them; api_rvars_free).
 */
#include "core/core.h"
#include "levels/pfs/pfs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct collect {
    cairn_ctx *ctx;
    uint32_t nranks;              /* of the generation (a remap reads another count's) */
    api_rvars *out;               /* by its rank; only wanted ones are filled */
    bool (*want)(void *arg, uint32_t rank);
    void *arg;
    cz_h5_parts *h5;              /* parts of split HDF5 routed files, all wanted ranks */
    int rc;
} collect;

/* cz_agg_read_some filter: a variable of a wanted rank? */
static bool wanted(void *arg, const cz_agg_var *v)
{
    const collect *c = arg;
    return v->rank < c->nranks && c->want(c->arg, v->rank);
}

/* A free entry at the end of RV (count not advanced), or NULL. */
static lvl_src *next_src(api_rvars *rv)
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

/* cz_agg_read_some callback (CZ_AGG_GIVE, wanted): keep the variables of
 * the wanted ranks; their data is handed over, not copied. */
static int keep_var(void *arg, const cz_agg_var *v)
{
    collect *c = arg;
    cairn_ctx *ctx = c->ctx;
    void *data = (void *)v->data; /* ours (CZ_AGG_GIVE) */
    if (!wanted(c, v)) {
        free(data); /* the filter let it through: not expected */
        return 0;
    }
    if (v->kind > CN_KIND_FILE) { /* joined into its routed file once all are read */
        c->rc = cz_h5_parts_keep(c->h5, v, &ctx->err);
        free(data);
        return c->rc;
    }
    api_rvars *rv = &c->out[v->rank];
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

void api_rvars_free(api_rvars *rv)
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
    api_rvars *rv = ((void **)arg)[0];
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

/* One link X: the files holding wanted ranks into C->out. */
static int read_link(cairn_ctx *ctx, int jobfd, const cn_pindex *x, collect *c)
{
    char gen[64];
    cn_gen_dirname(gen, sizeof gen, x->generation);
    int genfd = cn_dir_open(jobfd, gen, false, &ctx->err);
    if (genfd < 0) /* its index was just read: the directory is there, or damaged */
        return genfd == -ENOENT ? cn_fail(&ctx->err, CAIRN_ECORRUPT, "%s is missing", gen)
                                : genfd;
    int rc = 0;
    for (uint32_t f = 0; rc == 0 && f < x->nfiles; f++) {
        if (!cn_pindex_file_holds(x, f, c->want, c->arg))
            continue;
        char name[64];
        cn_agg_filename(name, sizeof name, f);
        const uint8_t *map = NULL;
        cz_agg_file *af = NULL;
        rc = lvl_pfs_map_part(genfd, name, &x->files[f], &map, &ctx->err);
        if (rc == CAIRN_ENOENT) /* a file the index lists is gone: damage */
            rc = cn_fail(&ctx->err, CAIRN_ECORRUPT, "%s is missing", name);
        if (rc == 0) /* only what is decoded here is verified, by its own checksums */
            rc = cz_agg_open_flags(map, x->files[f].size, CZ_AGG_LAZY, &af, &ctx->err);
        if (rc == 0)
            rc = cz_agg_read_some(af, wanted, keep_var, c, CZ_AGG_GIVE, &ctx->err);
        if (rc != 0 && c->rc < 0)
            rc = c->rc;
        cz_agg_close(af);
        lvl_pfs_unmap(map, &x->files[f]);
        if (rc < 0)
            cn_err_prefix(&ctx->err, "%s: ", name);
    }
    close(genfd);
    for (uint32_t r = 0; rc == 0 && r < c->nranks; r++) {
        if (!c->want(c->arg, r))
            continue;
        void *arg[2] = {&c->out[r], ctx};
        rc = cz_h5_parts_join(c->h5, r, add_file, arg, &ctx->err);
    }
    return rc;
}

static int read_one(cairn_ctx *ctx, int jobfd, const cn_pindex *x,
                    bool (*want)(void *, uint32_t), void *arg, api_rvars *out)
{
    collect c = {ctx, x->nranks, out, want, arg, cz_h5_parts_new(), 0};
    CN_FAIL_IF(!c.h5, &ctx->err, CAIRN_ENOMEM, "no memory");
    int rc = read_link(ctx, jobfd, x, &c);
    cz_h5_parts_free(c.h5);
    return rc;
}

int api_pfs_read(cairn_ctx *ctx, int jobfd, const cn_pindex *x, bool (*want)(void *, uint32_t),
                 void *arg, api_rvars *out)
{
    if (x->parent < 0) {
        int rc = read_one(ctx, jobfd, x, want, arg, out);
        if (rc < 0)
            cn_err_prefix(&ctx->err, "PFS generation %lld, ", (long long)x->generation);
        return rc;
    }
    cn_pindex *links = NULL;
    int n = 0;
    int rc = lvl_pfs_links(jobfd, x, &links, &n, &ctx->err);
    uint32_t nr = x->nranks;
    api_rvars *next = rc == 0 ? calloc(nr, sizeof *next) : NULL;
    if (rc == 0 && !next)
        rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    long at = -1; /* the link being read, once the chain holds together */
    if (rc == 0)
        at = links[0].generation;
    if (rc == 0)
        rc = read_one(ctx, jobfd, &links[0], want, arg, out);
    for (int i = 1; rc == 0 && i <= n; i++) { /* the increments, oldest first, then X */
        const cn_pindex *link = i < n ? &links[i] : x;
        at = link->generation;
        rc = read_one(ctx, jobfd, link, want, arg, next);
        for (uint32_t r = 0; rc == 0 && r < nr; r++)
            if (want(arg, r))
                rc = api_pfs_apply(ctx, link, r, &out[r], &next[r]);
        for (uint32_t r = 0; r < nr; r++)
            api_rvars_free(&next[r]);
    }
    if (rc < 0) {
        for (uint32_t r = 0; r < nr; r++)
            api_rvars_free(&out[r]);
        if (at >= 0 && at != x->generation)
            cn_err_prefix(&ctx->err, "PFS generation %lld (changes since %lld, a chain from "
                          "%lld) needs generation %ld: ", (long long)x->generation,
                          (long long)x->parent, (long long)x->base, at);
        else
            cn_err_prefix(&ctx->err, "PFS generation %lld (changes since %lld, a chain from "
                          "%lld), ", (long long)x->generation, (long long)x->parent,
                          (long long)x->base);
    }
    free(next);
    lvl_pfs_links_free(links, n);
    return rc;
}
