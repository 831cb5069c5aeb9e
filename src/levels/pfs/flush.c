/*
 * flush.c - level 4 on the way out: a complete generation to the PFS, N->M.
 *
 * Run by node leaders over ctx->leaders (the rest of the ranks wait in the
 * final agreement). The ranks are cut into groups of consecutive ranks: a
 * node's (pfs.group 0, the default: one writer per node, nothing sent), or
 * pfs.group's; group i becomes the aggregated file agg-<i>.cz, written by
 * the leader of the node of the group's first rank (its aggregator).
 *   1. every leader materializes each of its ranks: the generation's chain
 *      verified and applied (chain.c) into one buffer, a "state" (below),
 *      but for a full generation's variables stored raw (lent in place) or
 *      compressed lossless whole (lent as their verified frames, which the
 *      writer takes as they are: agg_lend.c);
 *      or, for an increment (flush_incr.c), only its own link's changes;
 *   2. states travel to their aggregators (fetch.c: sizes and metadata
 *      first, then the data in pieces, not waited for);
 *   3. each aggregator merges its groups' variables (agg.c: the
 *      pfs.scheme) and writes them through the throttle (pfs.c),
 *      waiting for each piece of data only when it needs it: fetching,
 *      compressing and writing overlap (the write on a thread of its own);
 *      a routed file that is HDF5 goes in as its datasets, skeleton and map
 *      (h5agg.c), so equal datasets of the ranks merge;
 *   4. sizes and checksums are summed to the first leader, which writes the
 *      index last (the generation is complete from then on), syncs the job
 *      directory (the new entry durable before anything older goes) and
 *      prunes the PFS to pfs.keep generations (of this rank count, none
 *      newer than this one unless store.prune_abandoned: pfs.c).
 * A generation id on the PFS that another rank count wrote is never
 * replaced: the flush fails with CAIRN_EMISMATCH. One whose index does not
 * read is set aside as damaged-gen-<id> (logged), never removed.
 * A generation node-local storage holds as an increment goes to the PFS as
 * an increment too when its parent is there as it was diffed against
 * (flush_incr.c decides, collectively); otherwise it is materialized full.
 *
 * A state (in memory only, between leaders of one job), metadata first so
 * that it can travel ahead of the data:
 *   u32 nvars | u32 0 | u64 meta (bytes before the data)
 *   | nvars x { u32 rank | u8 kind | u8 type | u8 ndims | u8 namelen
 *     | u64 dims[3] | u64 count | u64 size | name + NUL, zero-padded to 8 }
 *   | nvars x { data, zero-padded to 8 }
 * Ownership: states are owned by the leader that built or received them and
 * freed when its files are written.
 */
#include "core/core.h"
#include "levels/pfs/pfs.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REC_HDR 48
#define STATE_HDR 16

typedef api_state state;

static uint64_t pad8(uint64_t n) { return (n + 7) & ~(uint64_t)7; }

int api_state_build(cairn_ctx *ctx, int rank, const api_member *m, size_t n, api_state *out,
                    uint8_t **data)
{
    uint64_t meta = STATE_HDR, len = 0;
    bool lends = false;
    for (size_t i = 0; i < n; i++) {
        meta += REC_HDR + pad8(strlen(m[i].name) + 1);
        len += m[i].lent.data ? 0 : pad8(m[i].size);
        lends |= m[i].lent.data != NULL;
    }
    len += meta;
    uint8_t *buf = api_state_alloc(len);
    api_lent *lent = lends ? calloc(n ? n : 1, sizeof *lent) : NULL;
    if (buf && lends && !lent)
        api_state_free(&(state){.buf = buf, .len = len}), buf = NULL;
    CN_FAIL_IF(!buf || n > UINT32_MAX, &ctx->err, CAIRN_ENOMEM,
               "no memory to materialize rank %d (%llu bytes)", rank, (unsigned long long)len);
    uint8_t *p = buf, *dp = buf + meta;
    cn_put_u32(p, (uint32_t)n);
    cn_put_u64(p + 8, meta);
    p += STATE_HDR;
    for (size_t i = 0; i < n; i++) {
        size_t nl = strlen(m[i].name);
        cn_put_u32(p, (uint32_t)rank);
        p[4] = m[i].kind, p[5] = m[i].type, p[6] = m[i].ndims, p[7] = (uint8_t)nl;
        for (int d = 0; d < CAIRN_MAX_DIMS; d++)
            cn_put_u64(p + 8 + 8 * d, m[i].dims[d]);
        cn_put_u64(p + 32, m[i].count);
        cn_put_u64(p + 40, m[i].size);
        memcpy(p + REC_HDR, m[i].name, nl);
        p += REC_HDR + pad8(nl + 1);
        if (m[i].lent.data) {
            lent[i] = m[i].lent;
            data[i] = NULL;
        } else {
            data[i] = dp;
            dp += pad8(m[i].size);
        }
    }
    *out = (state){buf, len, meta, lent, NULL};
    return 0;
}

/* Parse state S (built by a leader of this job) into V[*N..]: its metadata
 * only (the data may still be on its way; fetch.c). */
static int parse_state(cairn_ctx *ctx, const state *s, cz_agg_var *v, size_t cap, size_t *n)
{
    cn_rd r = {.p = s->buf, .len = s->meta};
    uint32_t cnt = cn_rd_u32(&r);
    cn_rd_u32(&r);
    bool bad = cn_rd_u64(&r) != s->meta;
    uint64_t at = s->meta; /* the next variable's data */
    for (uint32_t i = 0; i < cnt && !r.bad && !bad; i++) {
        const uint8_t *h = cn_rd_take(&r, REC_HDR);
        if (!h || *n == cap)
            break;
        cz_agg_var *x = &v[(*n)++];
        memset(x, 0, sizeof *x);
        x->rank = cn_get_u32(h);
        x->kind = h[4], x->type = h[5], x->ndims = h[6];
        for (int d = 0; d < CAIRN_MAX_DIMS; d++)
            x->dims[d] = cn_get_u64(h + 8 + 8 * d);
        x->count = cn_get_u64(h + 32);
        x->size = cn_get_u64(h + 40);
        x->name = (const char *)cn_rd_take(&r, pad8((uint64_t)h[7] + 1));
        if (s->lent && s->lent[i].data && s->lent[i].codec) { /* level 1's frames */
            x->frames = s->lent[i].data;
            x->frames_len = s->lent[i].stored;
            x->fcodec = s->lent[i].codec;
        } else if (s->lent && s->lent[i].data) { /* lent: not in the buffer */
            x->data = s->lent[i].data;
            x->sums = s->lent[i].sums; /* verified: the file's own frames' checksums */
            x->sum_block = s->lent[i].sum_block;
        } else {
            bad |= x->size > s->len - at || pad8(x->size) > s->len - at;
            x->data = bad ? NULL : s->buf + at;
            at += bad ? 0 : pad8(x->size);
        }
        if (!x->name || x->name[h[7]] != '\0')
            r.bad = true;
    }
    CN_FAIL_IF(bad || r.bad || r.off != r.len || at != s->len, &ctx->err, CAIRN_EMPI,
               "a node sent a malformed state");
    return 0;
}

static uint32_t state_nvars(const state *s) { return s->meta >= 4 ? cn_get_u32(s->buf) : 0; }

/* A lent state made whole (its lent members copied into a buffer of its
 * own), to be sent to another node's aggregator. */
static int own_state(cairn_ctx *ctx, state *s)
{
    if (!s->lent)
        return 0;
    size_t cap = state_nvars(s), n = 0;
    cz_agg_var *v = malloc(sizeof *v * (cap ? cap : 1));
    CN_FAIL_IF(!v, &ctx->err, CAIRN_ENOMEM, "no memory");
    int rc = parse_state(ctx, s, v, cap, &n);
    uint64_t len = s->meta;
    for (size_t i = 0; i < n; i++)
        len += pad8(v[i].size);
    state w = {api_state_alloc(len), len, s->meta, NULL, NULL};
    if (rc == 0 && !w.buf)
        rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory for a state (%llu bytes)",
                     (unsigned long long)len);
    if (rc == 0) {
        memcpy(w.buf, s->buf, s->meta);
        uint8_t *dp = w.buf + s->meta;
        for (size_t i = 0; rc == 0 && i < n; i++) {
            if (v[i].frames)
                rc = cz_agg_unframe(v[i].frames, v[i].frames_len, v[i].fcodec, v[i].type, dp,
                                    v[i].size, &ctx->err);
            else
                memcpy(dp, v[i].data, v[i].size);
            dp += pad8(v[i].size);
        }
    }
    if (rc == 0) {
        api_state_free(s);
        *s = w;
    } else {
        api_state_free(&w);
    }
    free(v);
    return rc;
}

/* The aggregator (node index = leaders rank) of file F. */
static int aggregator(const cairn_ctx *ctx, int group, int f)
{
    return (int)ctx->rank_node[(size_t)f * (size_t)group];
}

/* The bytes/s an aggregator writes to the PFS, as the codec model takes it:
 * pfs.bandwidth (its throttle), or when unthrottled the PFS's bandwidth as
 * probed once per job (api_pfs_probe_share), or if that failed
 * compress.bandwidth (the PFS taken as fast as level-1 storage). */
static double pfs_bps(const cairn_ctx *ctx)
{
    if (ctx->cfg.pfs_bandwidth == 0 && ctx->pfs_probed > 0)
        return ctx->pfs_probed;
    int mib = ctx->cfg.pfs_bandwidth > 0 ? ctx->cfg.pfs_bandwidth : ctx->cfg.z_bandwidth;
    return (double)mib * 1048576.0;
}

/* Step 3: aggregate file F (ranks [F * group, ...)) from the states ST;
 * FETCH NULL: every state is this node's own (flushnode.c, direct.c). The
 * codecs of variables modelled alone are kept in ctx->pfs_memo (when
 * api_pfs_gen_open made it: not the epilog's). */
int api_write_file(cairn_ctx *ctx, int genfd, int group, int f, const state *st,
                   api_fetch *fetch, uint64_t *out /* size, sum, raw */)
{
    int lo = f * group, hi = lo + group < ctx->nranks ? lo + group : ctx->nranks;
    size_t cap = 0, n = 0;
    for (int r = lo; r < hi; r++)
        cap += state_nvars(&st[r]);
    cz_agg_var *v = malloc(sizeof *v * (cap ? cap : 1));
    CN_FAIL_IF(!v, &ctx->err, CAIRN_ENOMEM, "no memory");
    int rc = 0;
    for (int r = lo; rc == 0 && r < hi; r++)
        rc = parse_state(ctx, &st[r], v, cap, &n);
    for (size_t i = 0; rc == 0 && fetch && i < n; i++) /* the HDF5 split reads routed files first */
        if (v[i].kind == CN_KIND_FILE)
            rc = api_fetch_ready(fetch, v[i].data, (size_t)v[i].size);
    char name[64];
    cn_agg_filename(name, sizeof name, (uint32_t)f);
    cz_h5_split h5 = {0}; /* routed HDF5 files: by dataset (src/levels/pfs/h5agg.c) */
    if (rc == 0)
        rc = cz_h5_split_vars(v, n, &h5, &ctx->err);
    lvl_pfs_file *file = NULL;
    if (rc == 0)
        rc = lvl_pfs_create(genfd, name, ctx->cfg.pfs_bandwidth, &file, &ctx->err);
    cz_agg_opts o = {.scheme = ctx->cfg.pfs_scheme, .block = ctx->cfg.pfs_block,
                     .level = ctx->cfg.z_level, .threads = api_threads(ctx),
                     .core = ctx->core_share,
                     .bps = pfs_bps(ctx), .raw = ctx->cfg.codec == CZ_RAW,
                     .ready = fetch ? api_fetch_ready : NULL,
                     .ready_arg = fetch, .memo = ctx->pfs_memo};
    cz_agg_stats s = {0};
    if (rc == 0)
        rc = cz_agg_write(h5.v, h5.n, &o, lvl_pfs_append, file, &s, &ctx->err);
    cn_pfile pf = {0};
    if (rc == 0) {
        rc = lvl_pfs_commit(file, genfd, s.sum, &pf, &ctx->err);
    } else if (file) {
        lvl_pfs_abort(file, genfd);
    }
    if (rc == 0) {
        out[0] = pf.size, out[1] = pf.sum, out[2] = s.raw;
        cn_debug("%s: ranks %d..%d, %llu -> %llu bytes (%s; the model's CPU %.2f core(s) at "
                 "%.0f MiB/s, %u codec(s) sampled%s; %u HDF5 files split into %u datasets and "
                 "%llu skeleton bytes)",
                 name, lo, hi - 1, (unsigned long long)s.raw, (unsigned long long)pf.size,
                 cz_agg_scheme_name(s.scheme),
                 cz_env_cores(&(cz_env){.threads = o.threads, .core = o.core}),
                 o.bps / 1048576.0, s.modelled, o.memo ? ", the others kept" : "", h5.files,
                 h5.datasets,
                 (unsigned long long)h5.skel);
    }
    cz_h5_split_free(&h5);
    free(v);
    return rc < 0 ? (cn_err_prefix(&ctx->err, "PFS %s: ", name), rc) : 0;
}

/* The label and seconds of generation ID for its index: from this node's
 * manifest, the seconds measured now in a checkpoint (rank 0 is the first
 * leader; cairnd keeps the manifest's). */
static void label_of(cairn_ctx *ctx, long id, cn_pindex *x)
{
    if (ctx->timing) /* a checkpoint's own (a direct one has no manifest) */
        memcpy(x->label, ctx->gen_label, sizeof x->label);
    char gen[64];
    cn_gen_dirname(gen, sizeof gen, id);
    cn_err saved = ctx->err;
    cn_manifest m;
    int genfd = cn_dir_open(ctx->nodefd, gen, false, &ctx->err);
    if (genfd >= 0 && api_read_manifest(ctx, genfd, &m) == 0) {
        memcpy(x->label, m.label, sizeof x->label);
        x->seconds = m.seconds;
        cn_manifest_free(&m);
    }
    if (genfd >= 0)
        close(genfd);
    ctx->err = saved;
    if (ctx->timing)
        x->seconds = MPI_Wtime() - ctx->ckpt_t0;
}

/* Step 4, first leader: the index, then prune. */
int api_pfs_write_index(cairn_ctx *ctx, int jobfd, int genfd, long id, int group, int nfiles,
                       const uint64_t *sum, const api_pfs_plan *plan)
{
    cn_pindex x = {.scheme = (uint32_t)ctx->cfg.pfs_scheme, .generation = id,
                   .nranks = (uint32_t)ctx->nranks, .nnodes = (uint32_t)ctx->nnodes,
                   .group = (uint32_t)group, .nfiles = (uint32_t)nfiles,
                   .parent = plan->incr ? plan->parent : -1, .base = plan->incr ? plan->base : id,
                   .source = plan->source};
    memcpy(x.job, ctx->job, sizeof x.job);
    label_of(ctx, id, &x);
    x.files = calloc((size_t)nfiles, sizeof *x.files);
    CN_FAIL_IF(!x.files, &ctx->err, CAIRN_ENOMEM, "no memory");
    for (int f = 0; f < nfiles; f++) {
        x.files[f] = (cn_pfile){sum[3 * f], sum[3 * f + 1]};
        x.stored += sum[3 * f];
        x.raw += sum[3 * f + 2];
    }
    if (plan->incr) /* the files hold the changes: raw is the state's, as for a full one */
        x.raw = plan->raw;
    uint8_t *buf = NULL;
    size_t len = 0;
    int rc = cn_pindex_encode(&x, &buf, &len, &ctx->err);
    if (rc == 0) /* the files' names durable before the index names them (one sync for all) */
        rc = cn_dir_sync(genfd, &ctx->err);
    if (rc == 0)
        rc = cn_write_atomic(genfd, CN_PINDEX_NAME, buf, len, &ctx->err);
    free(buf);
    if (rc == 0) /* the new generation's entry durable before any older one goes */
        rc = cn_dir_sync(jobfd, &ctx->err);
    if (rc == 0) {
        cn_debug("generation %ld on the PFS%s: %d ranks in %d files, %llu -> %llu bytes", id,
                 plan->incr ? " (changes since its parent)" : "", ctx->nranks, nfiles,
                 (unsigned long long)x.raw, (unsigned long long)x.stored);
        lvl_pfs_prune(jobfd, ctx->job, (uint32_t)ctx->nranks, id, ctx->cfg.pfs_keep,
                      ctx->cfg.prune_abandoned);
        api_trash_empty_pfs(ctx, jobfd); /* in the background: these, and a crash's */
    }
    free(x.files);
    return rc;
}

/* Collective over the leaders: agree on RC (another leader's failure echoed).
 * A leader done first naps (its node's work may still need the cores). */
static int leaders_agree(cairn_ctx *ctx, int rc, const char *what)
{
    int worst = rc;
    if (api_allreduce_napping(&rc, &worst, 1, MPI_INT, MPI_MIN, ctx->leaders) != 0)
        return cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allreduce among node leaders failed");
    return rc == 0 && worst < 0 ? api_echo(ctx, worst, "%s failed on another node", what) : rc;
}

/* First leader: may generation ID on the PFS (JOBFD) be replaced? Not when
 * another rank count's run wrote it: that may be its only copy. One whose
 * index is there but does not read (checksum, EIO) is whose, nobody can tell:
 * as the prune keeps it, so does the flush, set aside (CN_DAMAGED_PREFIX),
 * out of the way of the new one and of every restart, never removed. */
static int may_replace(cairn_ctx *ctx, int jobfd, long id)
{
    cn_pindex x;
    cn_err why = {0};
    if (lvl_pfs_index(jobfd, id, &x, &why) < 0) {
        if (why.code == CAIRN_ENOENT || why.code == -ENOENT)
            return 0; /* none, or no index: an unfinished flush */
        char aside[128];
        cn_err err = {0};
        if (cn_set_aside_as(jobfd, id, CN_DAMAGED_PREFIX, aside, sizeof aside, &err) < 0)
            return cn_fail(&ctx->err, CAIRN_EIO, "%s; it cannot be set aside (%s): it is not "
                           "replaced", why.msg, err.msg);
        cn_warn("%s: set aside as %s in the PFS job directory (kept, never restored; remove it "
                "by hand once nothing in it is of use), generation %ld is flushed anew",
                why.msg, aside, id);
        return cn_dir_sync(jobfd, &ctx->err);
    }
    int rc = 0;
    if (x.nranks != (uint32_t)ctx->nranks || strcmp(x.job, ctx->job) != 0) {
        char was[96], now[96];
        api_layout_str(was, sizeof was, (int)x.nranks, (int)x.nnodes);
        api_layout_str(now, sizeof now, ctx->nranks, ctx->nnodes);
        rc = cn_fail(&ctx->err, CAIRN_EMISMATCH,
                     "PFS generation %ld exists, written by %s; this run has %s: it is not "
                     "replaced (use another generation id or job id, or remove it with cairn "
                     "prune)", id, was, now);
    }
    cn_pindex_free(&x);
    return rc;
}

/* Ranks per file when every node writes its own ranks' files: the ranks of
 * a node when each node holds one run of as many consecutive ranks, else 1. */
static int node_group(const cairn_ctx *ctx)
{
    int k = 0;
    for (int r = 0; r < ctx->nranks; r++)
        k += ctx->rank_node[r] == ctx->rank_node[0];
    for (int r = 0; r < ctx->nranks; r++)
        if (ctx->nranks % k != 0 || ctx->rank_node[r] != ctx->rank_node[r - r % k])
            return 1;
    return k;
}

/* Collective over the leaders: the ranks per file. One writer per node
 * (node_group) unless pfs.group asks for N->M; then too when the generation
 * goes to the PFS raw: every variable of every rank is lent (level 1 stored
 * it raw, whatever codec setting led there), pfs.scheme is auto and the PFS
 * is no slower than level-1 storage. No codec would pay on the PFS either
 * and merging across nodes would only move the bytes. */
static int flush_group(cairn_ctx *ctx, const state *st, int *group)
{
    const cn_config *c = &ctx->cfg;
    int raw = c->pfs_scheme == CZ_AGG_AUTO &&
              (c->pfs_bandwidth == 0 || c->pfs_bandwidth >= c->z_bandwidth);
    for (int r = 0; r < ctx->nranks; r++)
        if ((int)ctx->rank_node[r] == ctx->node)
            raw &= st[r].len == st[r].meta; /* every member lent */
    int all = raw;
    CN_FAIL_IF(MPI_Allreduce(&raw, &all, 1, MPI_INT, MPI_LAND, ctx->leaders) != MPI_SUCCESS,
               &ctx->err, CAIRN_EMPI, "MPI_Allreduce among node leaders failed");
    *group = all || c->pfs_group == 0 ? node_group(ctx) : c->pfs_group;
    *group = *group < ctx->nranks ? *group : ctx->nranks;
    return 0;
}

int api_pfs_gen_open(cairn_ctx *ctx, long id, bool leaders, bool made, int *jobfd, int *genfd)
{
    bool first = leaders ? ctx->node == 0 : ctx->rank == 0, make = first && !made;
    char gen[64];
    cn_gen_dirname(gen, sizeof gen, id);
    int rc = 0;
    if (make) { /* a fresh directory: an older flush of ID is invalid now */
        *jobfd = lvl_pfs_open(ctx->cfg.pfs_dir, ctx->job, true, &ctx->err);
        rc = *jobfd < 0 ? *jobfd : may_replace(ctx, *jobfd, id);
        if (rc == 0)
            rc = cn_rmtree_at(*jobfd, gen, &ctx->err);
        if (rc == 0)
            *genfd = rc = cn_dir_open(*jobfd, gen, true, &ctx->err);
    }
    rc = rc < 0 ? rc : 0;
    if (!made) /* the others nap while the first works */
        rc = leaders ? leaders_agree(ctx, rc, "creating the PFS directory")
                     : api_agree_napping(ctx, rc);
    if (rc != 0)
        return rc;
    if (!make) {
        *jobfd = lvl_pfs_open(ctx->cfg.pfs_dir, ctx->job, false, &ctx->err);
        *genfd = *jobfd < 0 ? *jobfd : cn_dir_open(*jobfd, gen, false, &ctx->err);
        rc = *genfd < 0 ? *genfd : 0;
    }
    if (leaders && (rc = leaders_agree(ctx, rc, "opening the PFS directory")) != 0)
        return rc;
    api_pfs_probe_share(ctx, *genfd, leaders, first); /* collective */
    if (!ctx->pfs_memo) /* NULL still: every file samples its variables */
        ctx->pfs_memo = cz_agg_memo_new(ctx->cfg.z_resample);
    cz_agg_memo_tick(ctx->pfs_memo);
    return rc;
}

void api_pfs_free(cairn_ctx *ctx)
{
    cz_agg_memo_free(ctx->pfs_memo);
    ctx->pfs_memo = NULL;
}

static int flush_leader(cairn_ctx *ctx, long id, bool full)
{
    int group = 1, nfiles = 0;
    int jobfd = -1, genfd = -1;
    int rc = api_pfs_gen_open(ctx, id, true, false, &jobfd, &genfd);
    api_pfs_plan plan = {.parent = -1, .base = id};
    if (rc == 0) /* collective: changes since the PFS parent, or full */
        rc = api_flush_plan(ctx, jobfd, id, &plan);
    if (full)
        plan.incr = false, plan.parent = -1, plan.base = id;
    state *st = calloc((size_t)ctx->nranks, sizeof *st);
    if (rc == 0 && !st)
        rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    for (int r = 0; rc == 0 && r < ctx->nranks; r++)
        if ((int)ctx->rank_node[r] == ctx->node)
            rc = plan.incr ? api_flush_delta(ctx, r, id, &plan, &st[r])
                           : api_materialize(ctx, r, id, &st[r]);
    rc = leaders_agree(ctx, rc, "materializing the generation");
    if (rc == 0)
        rc = flush_group(ctx, st, &group);
    for (int r = 0; rc == 0 && r < ctx->nranks; r++) /* lent states are never sent */
        if ((int)ctx->rank_node[r] == ctx->node &&
            aggregator(ctx, group, r / group) != ctx->node)
            rc = own_state(ctx, &st[r]);
    rc = leaders_agree(ctx, rc, "materializing the generation");
    nfiles = (int)cn_pindex_nfiles((uint32_t)ctx->nranks, (uint32_t)group);
    uint64_t *sum = calloc(3 * (size_t)nfiles, sizeof *sum), *total = NULL;
    if (ctx->node == 0)
        total = calloc(3 * (size_t)nfiles, sizeof *total);
    if (rc == 0 && (!sum || (ctx->node == 0 && !total)))
        rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    api_fetch *fetch = NULL;
    if (rc == 0)
        rc = api_fetch_start(ctx, group, st, &fetch); /* agreed */
    for (int f = 0; rc == 0 && f < nfiles; f++)
        if (aggregator(ctx, group, f) == ctx->node)
            rc = api_write_file(ctx, genfd, group, f, st, fetch, &sum[3 * f]);
    int ended = api_fetch_end(fetch); /* every transfer done before the states go */
    rc = rc < 0 ? rc : ended;
    for (int r = 0; st && r < ctx->nranks; r++)
        api_state_free(&st[r]);
    free(st);
    rc = leaders_agree(ctx, rc, "writing to the PFS");
    if (rc == 0 && MPI_Reduce(sum, total, 3 * nfiles, MPI_UINT64_T, MPI_SUM, 0, ctx->leaders) !=
                       MPI_SUCCESS)
        rc = cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Reduce among node leaders failed");
    if (rc == 0 && ctx->node == 0) {
        cn_fault_point("pfs.index", id, ctx->rank); /* files written, the index not yet */
        rc = api_pfs_write_index(ctx, jobfd, genfd, id, group, nfiles, total, &plan);
    }
    free(sum);
    free(total);
    if (genfd >= 0)
        close(genfd);
    if (jobfd >= 0)
        close(jobfd);
    return rc;
}

static int flush(cairn_ctx *ctx, long id, bool full)
{
    int rc = ctx->node_rank == 0 ? flush_leader(ctx, id, full) : 0;
    rc = api_agree_napping(ctx, rc); /* the other ranks nap: the cores are the leaders' */
    if (rc < 0) {
        char msg[sizeof ctx->msg];
        snprintf(msg, sizeof msg, "level 4 failed, generation %ld kept on node-local storage: "
                 "%.1000s", id, ctx->msg);
        memcpy(ctx->msg, msg, sizeof msg);
    }
    return rc;
}

int api_flush(cairn_ctx *ctx, long id) { return flush(ctx, id, false); }

int api_flush_full(cairn_ctx *ctx, long id) { return flush(ctx, id, true); }
