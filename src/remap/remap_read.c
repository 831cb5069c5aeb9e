/*
 * remap_read.c - a remapping restart's reader: one stored rank's variables
 * (those being remapped, and its layout record) decoded into memory.
 *
 * Node-local (levels 1-3): the rank's file of the generation in this node's
 * directory, and those of its chain's ancestors, each checked against its
 * node manifest (written by the old layout: its rank count, this job) and
 * every block checksum (cn_ckpt_verify); then the chain is applied link by
 * link into scratch buffers (api_chain_apply: every frame decoded and
 * checked against its raw checksum). A variable its newest link stores raw
 * and whole is not copied at all: its bytes are lent from the verified
 * mapping, which the rm_rank keeps open (no scratch buffer, no page faults).
 * PFS (level 4): the aggregated file that holds the rank, its size and
 * checksum checked against the index, every group verified by the format
 * before decoding; the variables of the file's ranks that are remapped are
 * kept until the reader moves on to another file. A PFS generation stored as
 * an increment is read for the file's ranks through its chain (pfsread.c).
 *
 * Ownership: the reader owns its mapped files and the kept copies; rm_read
 * hands the caller buffers (and lent mappings) it then owns (rm_rank_free).
 */
#include "remap/remap_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct kept {             /* PFS: one variable of one rank of the loaded file */
    uint32_t rank;
    int var;                      /* index in the remapped variables, or -1: layout record */
    int type;
    uint64_t count, size;
    void *data;
} kept;

struct rm_reader {
    cairn_ctx *ctx;
    rm_source src;
    const rm_vars *vars;
    int genfd;                    /* PFS: the generation's directory */
    int jobfd;
    cn_pindex x;
    long file;                    /* PFS: the loaded file, -1 none */
    kept *k;
    size_t nk, cap;
    int rc;
};

void rm_rank_free(rm_rank *r, size_t n)
{
    for (size_t i = 0; r->data && i < n; i++)
        if (!r->mapped || !r->mapped[i])
            free(r->data[i]);
    free(r->data), free(r->type), free(r->count), free(r->mapped), free(r->layout);
    if (r->chain.n > 0)
        api_chain_close(&r->chain);
    memset(r, 0, sizeof *r);
}

static int rank_alloc(cairn_ctx *ctx, rm_rank *r, size_t n)
{
    memset(r, 0, sizeof *r);
    r->data = calloc(n ? n : 1, sizeof *r->data);
    r->type = calloc(n ? n : 1, sizeof *r->type);
    r->count = calloc(n ? n : 1, sizeof *r->count);
    r->mapped = calloc(n ? n : 1, sizeof *r->mapped);
    if (!r->data || !r->type || !r->count || !r->mapped) {
        rm_rank_free(r, n);
        return cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    }
    return 0;
}

static int var_index(const rm_vars *vars, const char *name)
{
    for (size_t i = 0; i < vars->n; i++)
        if (strcmp(vars->v[i]->name, name) == 0)
            return (int)i;
    return strcmp(name, API_LAYOUT_NAME) == 0 ? -1 : -2;
}

/* ---- node-local ---------------------------------------------------------- */

/* Open and verify RANK's file of generation GEN in this node's directory. */
static int open_link(rm_reader *rd, long gen, uint32_t rank, cn_ckpt **out)
{
    cairn_ctx *ctx = rd->ctx;
    char dir[64], name[64], path[4600];
    cn_gen_dirname(dir, sizeof dir, gen);
    cn_rank_filename(name, sizeof name, rank);
    snprintf(path, sizeof path, "%s/%s/%s", ctx->node_path, dir, name);
    int genfd = cn_dir_open(ctx->nodefd, dir, false, &ctx->err);
    CN_TRY(genfd);
    cn_manifest m;
    int rc = api_read_manifest(ctx, genfd, &m);
    if (rc < 0) {
        close(genfd);
        cn_err_prefix(&ctx->err, "%s/%s/%s: ", ctx->node_path, dir, CN_MANIFEST_NAME);
        return rc;
    }
    const cn_manifest_rank *me = NULL;
    for (uint32_t i = 0; i < m.nlocal; i++)
        me = m.local[i].rank == rank ? &m.local[i] : me;
    if (strcmp(m.job, ctx->job) != 0 || m.nranks != rd->src.nranks || m.generation != gen || !me)
        rc = cn_fail(&ctx->err, CAIRN_ECORRUPT, "%s/%s/%s does not list rank %u of generation "
                     "%ld of %u ranks", ctx->node_path, dir, CN_MANIFEST_NAME, rank, gen,
                     rd->src.nranks);
    uint64_t sum = me ? me->header_sum : 0;
    cn_manifest_free(&m);
    const cn_header want = {.header_sum = sum, .generation = gen, .rank = rank,
                            .nranks = rd->src.nranks};
    if (rc == 0)
        rc = lvl_rank_file_open(genfd, name, path, &want, false, out, &ctx->err);
    close(genfd);
    return rc;
}

/* RANK's chain of generation src.gen, oldest link first, every link verified. */
static int open_chain(rm_reader *rd, uint32_t rank, api_chain *ch)
{
    cairn_ctx *ctx = rd->ctx;
    cn_ckpt *links[API_CHAIN_MAX];
    int n = 0, rc = 0;
    for (long g = rd->src.gen; g >= 0 && rc == 0;) {
        if (n == API_CHAIN_MAX)
            rc = cn_fail(&ctx->err, CAIRN_ECORRUPT, "generation %ld: a chain of more than %d "
                         "links", rd->src.gen, API_CHAIN_MAX);
        else if ((rc = open_link(rd, g, rank, &links[n])) == 0) {
            const cn_header *h = &links[n]->h;
            const cn_header *next = n > 0 ? &links[n - 1]->h : NULL;
            n++;
            if (next && (next->base != h->base || next->incr_block != h->incr_block))
                rc = cn_fail(&ctx->err, CAIRN_ECORRUPT, "generation %lld does not continue "
                             "generation %lld", (long long)next->generation,
                             (long long)h->generation);
            if (h->parent >= g)
                rc = cn_fail(&ctx->err, CAIRN_ECORRUPT, "generation %ld: its chain loops", g);
            g = (long)h->parent;
        }
    }
    memset(ch, 0, sizeof *ch);
    ch->broken = -1;
    if (rc == 0 && !(ch->link = calloc((size_t)n, sizeof *ch->link)))
        rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    if (rc < 0) {
        for (int i = 0; i < n; i++)
            cn_ckpt_close(links[i]);
        return rc;
    }
    for (int i = 0; i < n; i++) /* oldest first */
        ch->link[i] = links[n - 1 - i];
    ch->n = n;
    return 0;
}

static int read_local(rm_reader *rd, uint32_t rank, rm_rank *out)
{
    cairn_ctx *ctx = rd->ctx;
    size_t nv = rd->vars->n;
    api_chain ch;
    CN_TRY(open_chain(rd, rank, &ch));
    const cn_ckpt *newest = ch.link[ch.n - 1];
    void **ptrs = calloc(newest->h.nentries ? newest->h.nentries : 1, sizeof *ptrs);
    int rc = ptrs ? rank_alloc(ctx, out, nv) : cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    for (uint32_t i = 0; rc == 0 && i < newest->h.nentries; i++) {
        const cn_entry *e = &newest->e[i];
        int k = e->kind == CN_KIND_VAR ? var_index(rd->vars, e->name) : -2;
        if (k == -2)
            continue;
        if (k >= 0 && e->codec == CN_CODEC_RAW && !(e->flags & CN_ENTRY_DELTA) &&
            e->stored_size == e->raw_size) { /* verified as it is stored: lend it */
            out->data[k] = (void *)(newest->map + e->offset), out->mapped[k] = true;
            out->type[k] = e->type, out->count[k] = e->count;
            continue;
        }
        void *buf = malloc(e->raw_size ? e->raw_size : 1);
        if (!buf) {
            rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory for '%s' of stored rank %u",
                         e->name, rank);
            break;
        }
        ptrs[i] = buf;
        if (k >= 0) {
            out->data[k] = buf, out->type[k] = e->type, out->count[k] = e->count;
        } else {
            out->layout = buf, out->layout_len = e->raw_size;
        }
    }
    if (rc == 0)
        rc = api_chain_apply(ctx, &ch, ptrs);
    if (rc < 0) {
        char dir[64], name[64];
        cn_gen_dirname(dir, sizeof dir, rd->src.gen);
        cn_rank_filename(name, sizeof name, rank);
        if (!strstr(ctx->err.msg, name))
            cn_err_prefix(&ctx->err, "%s/%s/%s: ", ctx->node_path, dir, name);
        if (ptrs && !out->data) /* rank_alloc failed: the buffers are only in PTRS */
            for (uint32_t i = 0; i < newest->h.nentries; i++)
                free(ptrs[i]);
        rm_rank_free(out, nv);
    }
    free(ptrs);
    if (rc == 0)
        out->chain = ch; /* the lent variables' mappings */
    else
        api_chain_close(&ch);
    return rc;
}

/* ---- PFS ----------------------------------------------------------------- */

static void drop_kept(rm_reader *rd)
{
    for (size_t i = 0; i < rd->nk; i++)
        free(rd->k[i].data);
    rd->nk = 0;
    rd->file = -1;
}

/* cz_agg_read callback: keep what the remap needs of the file's ranks. */
static int keep(void *arg, const cz_agg_var *v)
{
    rm_reader *rd = arg;
    int k = v->kind == CN_KIND_VAR ? var_index(rd->vars, v->name) : -2;
    if (k == -2)
        return 0;
    if (rd->nk == rd->cap) {
        size_t cap = rd->cap ? 2 * rd->cap : 16;
        kept *n = realloc(rd->k, cap * sizeof *n);
        if (!n)
            return rd->rc = cn_fail(&rd->ctx->err, CAIRN_ENOMEM, "no memory");
        rd->k = n, rd->cap = cap;
    }
    void *data = malloc(v->size ? v->size : 1);
    if (!data)
        return rd->rc = cn_fail(&rd->ctx->err, CAIRN_ENOMEM, "no memory for '%s'", v->name);
    memcpy(data, v->data, v->size);
    rd->k[rd->nk++] = (kept){v->rank, k, v->type, v->count, v->size, data};
    return 0;
}

typedef struct range {
    uint32_t lo, hi;
} range;

static bool in_range(void *arg, uint32_t rank)
{
    const range *r = arg;
    return rank >= r->lo && rank < r->hi;
}

/* File F's ranks of an increment: applied through its chain (pfsread.c),
 * then kept as from a file of a full generation. */
static int load_chain(rm_reader *rd, uint32_t f)
{
    cairn_ctx *ctx = rd->ctx;
    range rg = {f * rd->x.group, f * rd->x.group + rd->x.group};
    rg.hi = rg.hi < rd->x.nranks ? rg.hi : rd->x.nranks;
    api_rvars *out = calloc(rd->x.nranks, sizeof *out);
    CN_FAIL_IF(!out, &ctx->err, CAIRN_ENOMEM, "no memory");
    rd->rc = 0;
    int rc = api_pfs_read(ctx, rd->jobfd, &rd->x, in_range, &rg, out);
    for (uint32_t r = rg.lo; r < rg.hi; r++)
        for (size_t i = 0; rc == 0 && i < out[r].n; i++) {
            const lvl_src *s = &out[r].src[i];
            cz_agg_var v = {.rank = r, .name = s->name, .kind = s->kind, .type = s->type,
                            .ndims = s->ndims, .count = s->count, .size = s->size,
                            .data = s->ptr};
            keep(rd, &v);
            rc = rd->rc;
        }
    for (uint32_t r = 0; r < rd->x.nranks; r++)
        api_rvars_free(&out[r]);
    free(out);
    if (rc < 0) {
        cn_err_prefix(&ctx->err, "job %s: ", rd->src.job);
        drop_kept(rd);
        return rc;
    }
    rd->file = f;
    return 0;
}

static int load_file(rm_reader *rd, uint32_t f)
{
    cairn_ctx *ctx = rd->ctx;
    drop_kept(rd);
    if (rd->x.parent >= 0)
        return load_chain(rd, f);
    char name[64];
    cn_agg_filename(name, sizeof name, f);
    const uint8_t *map = NULL;
    cz_agg_file *af = NULL;
    rd->rc = 0;
    int rc = lvl_pfs_map(rd->genfd, name, &rd->x.files[f], &map, &ctx->err);
    if (rc == 0)
        rc = cz_agg_open(map, rd->x.files[f].size, &af, &ctx->err);
    if (rc == 0)
        rc = cz_agg_read(af, keep, rd, &ctx->err);
    if (rc != 0 && rd->rc < 0)
        rc = rd->rc;
    cz_agg_close(af);
    if (map)
        lvl_pfs_unmap(map, &rd->x.files[f]);
    if (rc < 0) {
        cn_err_prefix(&ctx->err, "PFS generation %ld of job %s, %s: ", rd->src.gen, rd->src.job,
                      name);
        drop_kept(rd);
        return rc;
    }
    rd->file = f;
    return 0;
}

static int read_pfs(rm_reader *rd, uint32_t rank, rm_rank *out)
{
    uint32_t f = rank / rd->x.group;
    if (rd->file != (long)f)
        CN_TRY(load_file(rd, f));
    CN_TRY(rank_alloc(rd->ctx, out, rd->vars->n));
    for (size_t i = 0; i < rd->nk; i++) { /* hand the rank's copies over */
        kept *k = &rd->k[i];
        if (k->rank != rank || !k->data)
            continue;
        if (k->var >= 0 && !out->data[k->var]) {
            out->data[k->var] = k->data, out->type[k->var] = k->type;
            out->count[k->var] = k->count;
            k->data = NULL;
        } else if (k->var < 0 && !out->layout) {
            out->layout = k->data, out->layout_len = k->size;
            k->data = NULL;
        }
    }
    return 0;
}

/* ---- the reader ------------------------------------------------------------ */

int rm_reader_open(cairn_ctx *ctx, const rm_source *src, const rm_vars *vars, rm_reader **out)
{
    rm_reader *rd = calloc(1, sizeof *rd);
    CN_FAIL_IF(!rd, &ctx->err, CAIRN_ENOMEM, "no memory");
    *rd = (rm_reader){.ctx = ctx, .src = *src, .vars = vars, .genfd = -1, .jobfd = -1,
                      .file = -1};
    int rc = 0;
    if (src->where == RM_PFS) {
        char dir[64];
        cn_gen_dirname(dir, sizeof dir, src->gen);
        rd->jobfd = rc = api_pfs_source(ctx, src->job, src->gen, &ctx->err);
        if (rc >= 0)
            rc = lvl_pfs_index(rd->jobfd, src->gen, &rd->x, &ctx->err);
        if (rc >= 0 && (rd->x.nranks != src->nranks || rd->x.group == 0))
            rc = cn_fail(&ctx->err, CAIRN_ECORRUPT, "PFS generation %ld changed under the "
                         "restart", src->gen);
        if (rc >= 0)
            rd->genfd = rc = cn_dir_open(rd->jobfd, dir, false, &ctx->err);
        rc = rc < 0 ? rc : 0;
    }
    if (rc < 0) {
        rm_reader_close(rd);
        return rc;
    }
    *out = rd;
    return 0;
}

int rm_read(rm_reader *rd, uint32_t rank, rm_rank *out)
{
    memset(out, 0, sizeof *out);
    return rd->src.where == RM_PFS ? read_pfs(rd, rank, out) : read_local(rd, rank, out);
}

void rm_reader_rewind(rm_reader *rd)
{
    if (rd)
        drop_kept(rd);
}

void rm_reader_close(rm_reader *rd)
{
    if (!rd)
        return;
    drop_kept(rd);
    free(rd->k);
    if (rd->src.where == RM_PFS)
        cn_pindex_free(&rd->x);
    if (rd->genfd >= 0)
        close(rd->genfd);
    if (rd->jobfd >= 0)
        close(rd->jobfd);
    free(rd);
}
