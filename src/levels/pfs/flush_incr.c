/*
 * flush_incr.c - level 4 increments: a generation node-local storage holds
 * as changes to its parent goes to the PFS as those changes, a chain there
 * too, when that is safe; otherwise flush.c materializes it full.
 *
 * The plan (collective over the node leaders). Generation G goes as an
 * increment only if, on every rank, node-local storage holds G as an
 * increment of the same parent P (with P's files still there), and the PFS
 * holds P complete (index written) as the newest generation of this job and
 * rank count below G, flushed from those very node-local files of P: its
 * index records their source fingerprint (the sum over ranks of a hash of
 * each rank file's header checksum, cn_pindex_source), and the leaders sum
 * P's now. So G's changes, diffed against node-local P, apply to exactly
 * the bytes the PFS holds for P; a P rewritten since (a restart that went
 * back, a replaced id), staged in from the PFS or flushed by another layout
 * fails the match, and G goes full. P's chain on the PFS must have every
 * index down to its full base, and fewer than incr.full_every links, so a
 * PFS chain ends with a full generation at the node-local rule (it is never
 * longer than the node-local chain it follows). With pfs.every = k the
 * node-local parent of a flushed generation is usually not on the PFS: it
 * then goes full. The increment is always against P, the PFS parent, never
 * a node-local link that would cover only part of the way.
 *
 * The state of a rank (flush.c's format) for an increment holds the rank's
 * delta record (CN_PDELTA_NAME, src/levels/pfs/pdelta.c: every variable of G with
 * its size, shape and runs), then each variable's stored bytes: the blocks
 * of its runs one after another (typed as the variable when they divide into
 * its elements, else bytes), or all of it when G stores it whole; routed
 * files whole. Only G's own rank file is read and verified: no chain is
 * applied, which is what makes an increment cheap to flush.
 *
 * Ownership: the states are the caller's (api_state_free).
 */
#include "core/core.h"
#include "levels/pfs/pfs.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Node 0: may generation ID go as changes to PARENT, whose node-local files'
 * fingerprint is SOURCE? *BASE: the chain's full generation. */
static bool pfs_parent_ok(cairn_ctx *ctx, int jobfd, long id, long parent, uint64_t source,
                          long *base)
{
    cn_pindex x;
    cn_err err = {0};
    long p = lvl_pfs_newest(jobfd, ctx->job, id - 1, (uint32_t)ctx->nranks, &x, NULL, &err);
    if (p < 0)
        return false;
    const char *why = NULL;
    if (p != parent)
        why = "is not the newest there";
    else if (x.source == 0 || x.source != source)
        why = "was flushed from other node-local files";
    *base = x.base;
    cn_pindex *links = NULL;
    int n = 0; /* P's chain on the PFS below P */
    if (!why && lvl_pfs_links(jobfd, &x, &links, &n, &err) < 0)
        why = "has a chain that does not hold together";
    else if (!why && n + 2 > ctx->cfg.incr_full_every)
        why = "ends a chain of incr.full_every generations";
    lvl_pfs_links_free(links, n);
    cn_pindex_free(&x);
    if (why)
        cn_debug("generation %ld goes to the PFS full: its parent %ld %s", id, parent, why);
    return why == NULL;
}

int api_flush_plan(cairn_ctx *ctx, int jobfd, long id, api_pfs_plan *plan)
{
    *plan = (api_pfs_plan){.parent = -1, .base = id};
    /* sum: fingerprints of G's and P's files; lim: min parent, -max parent,
     * every rank's P there (reduced with MIN) */
    uint64_t sum[3] = {0, 0, 0}, all[3] = {0, 0, 0}; /* ... and G's bytes of state */
    long lim[3] = {LONG_MAX, LONG_MAX, 1}, lo[3] = {0, 0, 0};
    int rc = 0;
    for (int r = 0; rc == 0 && r < ctx->nranks; r++) {
        if ((int)ctx->rank_node[r] != ctx->node)
            continue;
        api_gen *g = NULL;
        int n = 0;
        rc = api_local_gens(ctx, r, &g, &n);
        const api_gen *x = rc == 0 ? api_gen_find(g, n, id) : NULL;
        const api_gen *px = x && x->parent >= 0 ? api_gen_find(g, n, x->parent) : NULL;
        long parent = x ? x->parent : -1;
        lim[0] = parent < lim[0] ? parent : lim[0];
        lim[1] = -parent < lim[1] ? -parent : lim[1];
        lim[2] &= px != NULL;
        sum[0] += x ? cn_pindex_source((uint32_t)r, x->header_sum) : 0;
        sum[1] += px ? cn_pindex_source((uint32_t)r, px->header_sum) : 0;
        sum[2] += x ? x->raw : 0;
        free(g);
    }
    if (rc < 0) /* materialize says what is missing; go full */
        cn_err_clear(&ctx->err), lim[2] = 0;
    if (MPI_Allreduce(sum, all, 3, MPI_UINT64_T, MPI_SUM, ctx->leaders) != MPI_SUCCESS ||
        MPI_Allreduce(lim, lo, 3, MPI_LONG, MPI_MIN, ctx->leaders) != MPI_SUCCESS)
        return cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allreduce among node leaders failed");
    long parent = lo[0];
    bool agreed = lo[0] == -lo[1] && lo[0] >= 0 && lo[2];
    long dec[3] = {0, -1, id}; /* incr, parent, base: node 0 decides */
    if (ctx->node == 0 && agreed && jobfd >= 0 &&
        pfs_parent_ok(ctx, jobfd, id, parent, all[1], &dec[2]))
        dec[0] = 1, dec[1] = parent;
    if (MPI_Bcast(dec, 3, MPI_LONG, 0, ctx->leaders) != MPI_SUCCESS)
        return cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Bcast among node leaders failed");
    *plan = (api_pfs_plan){.incr = dec[0] == 1, .parent = dec[0] ? dec[1] : -1,
                           .base = dec[0] ? dec[2] : id, .source = all[0], .raw = all[2]};
    return 0;
}

/* The member a variable's stored bytes travel as: typed as E when they
 * divide into its elements, else bytes. */
static api_member stream_member(const cn_entry *e, uint64_t stream)
{
    size_t ts = cairn_type_size(e->type);
    bool typed = ts > 0 && stream % ts == 0;
    uint64_t count = typed ? stream / ts : stream;
    return (api_member){.kind = CN_KIND_VAR, .type = typed ? e->type : CAIRN_BYTE, .ndims = 1,
                        .dims = {count}, .count = count, .size = stream, .name = e->name};
}

/* The delta record of C (the rank's generation) into *OUT. */
static int record_of(cairn_ctx *ctx, const cn_ckpt *c, uint8_t **out, size_t *len)
{
    cn_pdelta d = {.rank = c->h.rank, .block = c->h.incr_block, .generation = c->h.generation,
                   .parent = c->h.parent};
    d.v = calloc(c->h.nentries + 1, sizeof *d.v);
    CN_FAIL_IF(!d.v, &ctx->err, CAIRN_ENOMEM, "no memory");
    for (uint32_t i = 0; i < c->h.nentries; i++) {
        const cn_entry *e = &c->e[i];
        if (e->kind != CN_KIND_VAR)
            continue;
        cn_pdelta_var *v = &d.v[d.nvars++];
        snprintf(v->name, sizeof v->name, "%s", e->name);
        v->delta = e->flags & CN_ENTRY_DELTA;
        v->type = e->type, v->ndims = e->ndims;
        memcpy(v->dims, e->dims, sizeof v->dims);
        v->count = e->count, v->size = e->raw_size;
        v->nruns = v->delta ? e->nruns : 0;
        v->runs = v->delta ? e->runs : NULL; /* borrowed */
    }
    int rc = cn_pdelta_encode(&d, out, len, &ctx->err);
    free(d.v);
    return rc;
}

int api_flush_delta(cairn_ctx *ctx, int rank, long id, const api_pfs_plan *plan,
                    api_state *out)
{
    api_gen *g = NULL;
    int n = 0;
    CN_TRY(api_local_gens(ctx, rank, &g, &n));
    const api_gen *x = api_gen_find(g, n, id);
    cn_ckpt *c = NULL;
    int rc = x ? api_chain_link(ctx, rank, x, &c)
               : cn_fail(&ctx->err, CAIRN_ENOENT, "rank %d: generation %ld is not complete on "
                         "node %s", rank, id, ctx->node_name);
    free(g);
    CN_TRY(rc);
    uint32_t ne = c->h.nentries;
    const cn_entry *clash = cn_ckpt_find(c, CN_PDELTA_NAME); /* a reserved variable name */
    if (c->h.parent != plan->parent || c->h.incr_block == 0 ||
        (clash && clash->kind == CN_KIND_VAR))
        rc = cn_fail(&ctx->err, CAIRN_ECORRUPT, "rank %d: generation %ld is not an increment "
                     "of generation %ld that level 4 can store as one", rank, id,
                     plan->parent);
    uint8_t *rec = NULL, **data = NULL;
    size_t reclen = 0;
    api_member *m = NULL;
    cz_dest *d = NULL, **dest = NULL;
    uint32_t *nd = NULL;
    if (rc == 0)
        rc = record_of(ctx, c, &rec, &reclen);
    if (rc == 0) {
        m = calloc(ne + 1, sizeof *m), data = calloc(ne + 1, sizeof *data);
        d = calloc(ne + 1, sizeof *d), dest = calloc(ne + 1, sizeof *dest);
        nd = calloc(ne + 1, sizeof *nd);
        if (!m || !data || !d || !dest || !nd)
            rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory for rank %d", rank);
    }
    size_t nm = 0;
    int *at = rc == 0 ? calloc(ne + 1, sizeof *at) : NULL; /* entry i's member, or -1 */
    if (rc == 0 && !at)
        rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory for rank %d", rank);
    if (rc == 0)
        m[nm++] = (api_member){.kind = CN_KIND_VAR, .type = CAIRN_BYTE, .ndims = 1,
                               .dims = {reclen}, .count = reclen, .size = reclen,
                               .name = CN_PDELTA_NAME};
    for (uint32_t i = 0; rc == 0 && i < ne; i++) {
        const cn_entry *e = &c->e[i];
        uint64_t stream = cn_entry_stream(e, c->h.incr_block);
        at[i] = -1;
        if (e->kind == CN_KIND_FILE) {
            m[nm] = (api_member){.kind = CN_KIND_FILE, .type = e->type, .count = e->count,
                                 .size = e->raw_size, .name = e->name};
            at[i] = (int)nm++;
        } else if (!(e->flags & CN_ENTRY_DELTA)) {
            m[nm] = (api_member){.kind = CN_KIND_VAR, .type = e->type, .ndims = e->ndims,
                                 .count = e->count, .size = e->raw_size, .name = e->name};
            memcpy(m[nm].dims, e->dims, sizeof m[nm].dims);
            at[i] = (int)nm++;
        } else if (stream > 0) { /* no member when nothing of it changed */
            m[nm] = stream_member(e, stream);
            at[i] = (int)nm++;
        }
    }
    api_state st = {0};
    if (rc == 0)
        rc = api_state_build(ctx, rank, m, nm, &st, data);
    if (rc == 0) {
        memcpy(data[0], rec, reclen);
        for (uint32_t i = 0; i < ne; i++) { /* decoded into place, once, checked */
            const cn_entry *e = &c->e[i];
            uint64_t stream = cn_entry_stream(e, c->h.incr_block);
            bool file = e->kind == CN_KIND_FILE;
            d[i] = (cz_dest){at[i] >= 0 && !file ? data[at[i]] : NULL, stream};
            dest[i] = &d[i];
            nd[i] = 1;
            if (file) /* routed files are stored raw: copied as flush.c does */
                memcpy(data[at[i]], c->map + e->offset, e->raw_size);
        }
        rc = cz_decode_ckpt(c, (const cz_dest *const *)dest, nd, api_threads(ctx), &ctx->err);
    }
    free(rec), free(m), free(data), free(d), free(dest), free(nd), free(at);
    cn_ckpt_close(c);
    if (rc < 0) {
        api_state_free(&st);
        return rc;
    }
    *out = st;
    return 0;
}
