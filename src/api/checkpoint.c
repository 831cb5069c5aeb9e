/*
 * checkpoint.c - write one generation, all ranks together.
 *
 * Commit protocol (a crash at any instant leaves the previous complete
 * generation restorable):
 *   1. the node leader clears and creates <node>/gen-<id>/ (refused when
 *      another layout wrote it: api_may_replace) and syncs <node>, so that
 *      the new entry is durable before step 4 trashes an older generation
 *      (tests/crash: without it a crash can keep the removal and lose the
 *      new generation's name, leaving nothing); when generation ID or
 *      newer ones exist (a fresh start, or a restart from an older one),
 *      the complete ones are set aside first, as abandoned-gen-<id>
 *      (prune.c, API_PRUNE_AT; removed with store.prune_abandoned), never
 *      replaced in place, on node-local storage and the PFS;      agree
 *   2. every rank writes rank-<r>.ckpt atomically (levels/local); agree
 *   3. every node leader syncs the directory and writes the node manifest
 *      (sizes and checksums of its ranks' files, the rank -> node map); agree
 *   4. node leaders prune (prune.c): keep the store.keep newest complete
 *      generations, the newest at each higher level and every generation
 *      they need; newer ones (an abandoned timeline) only with
 *      store.prune_abandoned, and never another layout's.
 * Levels 2-4 (raise.c, flush.c) come between steps 3 and 4. With cairnd
 * serving every node (daemon.c) the generation is handed to it after step 3
 * instead: the call returns at level 1 and the daemons raise, flush and
 * prune the older generations in the background. The library never removes
 * or rewrites a generation directory while a daemon may be at work on it:
 * when it replaces an id (generations at or above it exist: the job went
 * back) and whenever it works synchronously, its node leaders hold the
 * daemons first (HOLD, daemon.c), until the checkpoint returns.
 * Step 2 is preceded by auto's codec choice (codec_vote.c), one pick per
 * variable for all ranks, when one is due.
 * With incr.mode on, step 2 is preceded by the plan (incr.c): the parent,
 * the block hashes, the diff, full or incremental, agreed by all ranks; and
 * the generation's hashes become the parent of later checkpoints at the end.
 * A generation is complete only when every node holds its manifest; restart
 * never offers one that is not. On failure after step 1 the partial
 * generation is removed.
 * Routed files (routed.c): those routed for this checkpoint are written in
 * step 2 like variables; once past check_args the call ends the routes,
 * completed or not, and a generation complete at level 1 has its staged
 * copies removed from files/rank-<r>/. The label (cairn_label) works the
 * same way: rank 0's goes into every manifest of the generation, and the
 * call clears it. So do the seconds the checkpoint took, as rank 0 measures
 * them from the call's start after each agreement: to level 1 in step 3,
 * then again once a higher level (raise.c) or the PFS copy is done.
 * When to checkpoint (interval.c): the level a generation is complete at
 * restarts cairn_need_checkpoint's clocks of that level and those below, and
 * the call's wall time (what the application waited) is that level's cost.
 */
#include "api/api.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *level_name(int level)
{
    static const char *const names[] = {"?", "local", "partner", "erasure", "pfs"};
    return level >= 1 && level <= 4 ? names[level] : "?";
}

/* Node leader: api_prune (levels/local), then with API_PRUNE_NEWER node 0's
 * leader does the same on the PFS: the abandoned timeline above the newest id
 * kept in place (ID, or ID - 1 with API_PRUNE_AT) set aside there too. */
static void prune(cairn_ctx *ctx, long id, int what)
{
    if (!api_prune(ctx, id, what))
        return;
    if ((what & API_PRUNE_NEWER) && ctx->node == 0 && ctx->cfg.pfs_dir[0]) {
        long below = (what & API_PRUNE_AT) ? id - 1 : id;
        cn_err err = {0};
        int jobfd = lvl_pfs_open(ctx->cfg.pfs_dir, ctx->job, false, &err);
        if (jobfd >= 0) {
            lvl_pfs_abandon(jobfd, ctx->job, (uint32_t)ctx->nranks, below,
                            ctx->cfg.prune_abandoned);
            close(jobfd);
        }
    }
}

/* Collective: local argument checks, then make sure all ranks asked for the
 * same thing; rank 0's label becomes the generation's (ctx->gen_label). */
static int check_args(cairn_ctx *ctx, long id, int level)
{
    cn_err *err = &ctx->err;
    int rc = 0;
    if (id < 0)
        rc = cn_fail(err, CAIRN_EINVAL, "checkpoint id %ld is negative", id);
    else if (id <= ctx->last_id)
        rc = cn_fail(err, CAIRN_EINVAL, "checkpoint id %ld is not above the last one (%ld)", id,
                     ctx->last_id);
    else
        rc = api_level_usable(ctx, level, err);
    /* One MPI_Allreduce (MIN) for the common case: the failures, the id and
     * level and their negations (the maxima), then rank 0's label in words
     * (every other rank gives the largest word). */
    enum { LW = (sizeof ctx->label + sizeof(long) - 1) / sizeof(long), N = 5 + LW };
    long in[N], out[N];
    in[0] = rc, in[1] = rc ? 0 : id, in[2] = rc ? 0 : -id, in[3] = level, in[4] = -(long)level;
    for (int i = 5; i < N; i++)
        in[i] = ctx->rank == 0 ? 0 : LONG_MAX;
    if (ctx->rank == 0)
        memcpy(&in[5], ctx->label, sizeof ctx->label);
    if (MPI_Allreduce(in, out, N, MPI_LONG, MPI_MIN, ctx->comm) != MPI_SUCCESS)
        return api_agree(ctx, cn_fail(err, CAIRN_EMPI, "MPI_Allreduce failed"));
    if (out[0] < 0) /* every rank knows: the failing one's message to all */
        return api_agree(ctx, rc);
    if (out[1] != -out[2] || out[3] != -out[4])
        return api_agree(ctx, cn_fail(err, CAIRN_EINVAL,
                                      "ranks disagree: ids %ld..%ld, levels %ld..%ld", out[1],
                                      -out[2], out[3], -out[4]));
    memcpy(ctx->gen_label, &out[5], sizeof ctx->gen_label);
    ctx->gen_label[sizeof ctx->gen_label - 1] = '\0';
    return 0;
}

/* Map routed files read-only so they are written like variables. */
static int collect_sources(cairn_ctx *ctx, long id, lvl_src *src, size_t *maplen)
{
    for (size_t i = 0; i < ctx->nvars; i++) {
        api_var *v = &ctx->vars[i];
        lvl_src *s = &src[i];
        memset(s, 0, sizeof *s);
        s->name = v->name;
        s->kind = v->kind;
        s->type = (uint8_t)v->type;
        s->ndims = (uint8_t)v->ndims;
        for (int d = 0; d < v->ndims; d++)
            s->dims[d] = v->dims[d];
        s->error_bound = v->bound;
        if (v->kind == CN_KIND_VAR) {
            s->count = v->count;
            s->size = v->count * cairn_type_size(v->type);
            s->ptr = v->ptr;
            continue;
        }
        int fd = openat(ctx->filesfd, v->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0 && errno == ENOENT)
            return cn_fail(&ctx->err, -ENOENT, "routed file '%s' was routed for checkpoint %ld "
                           "but never written (no file at %s/%s)", v->name, id,
                           ctx->files_path, v->name);
        if (fd < 0)
            return cn_fail_errno(&ctx->err, errno, "routed file %s/%s", ctx->files_path,
                                 v->name);
        if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            close(fd);
            return cn_fail(&ctx->err, CAIRN_EINVAL, "routed file %s/%s is not a regular file",
                           ctx->files_path, v->name);
        }
        s->count = s->size = (uint64_t)st.st_size;
        maplen[i] = (size_t)st.st_size;
        if (st.st_size > 0) {
            void *p = mmap(NULL, maplen[i], PROT_READ, MAP_PRIVATE, fd, 0);
            if (p == MAP_FAILED) {
                close(fd);
                maplen[i] = 0;
                return cn_fail_errno(&ctx->err, errno, "cannot map routed file %s", v->name);
            }
            s->ptr = p;
        }
        close(fd);
    }
    return 0;
}

static int write_rank_file(cairn_ctx *ctx, long id, int level, int genfd, const char *gen_path,
                           api_plan *plan, lvl_written *out)
{
    lvl_src *src = calloc(ctx->nvars + 1, sizeof *src);
    size_t *maplen = calloc(ctx->nvars ? ctx->nvars : 1, sizeof *maplen);
    uint8_t *layout = NULL; /* the record of distributed and replicated variables (layout.c) */
    size_t layout_len = 0;
    int rc = (!src || !maplen) ? cn_fail(&ctx->err, CAIRN_ENOMEM, "out of memory") : 0;
    if (rc == 0 && api_layout_encode(ctx, &layout, &layout_len) < 0)
        rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "out of memory");
    if (rc == 0)
        rc = collect_sources(ctx, id, src, maplen);
    if (rc == 0) {
        cn_header proto = {.level = (uint32_t)level, .generation = id,
                           .rank = (uint32_t)ctx->rank, .nranks = (uint32_t)ctx->nranks,
                           .node = (uint32_t)ctx->node, .nnodes = (uint32_t)ctx->nnodes,
                           .block_size = ctx->cfg.block_size, .parent = plan->parent,
                           .base = plan->base, .incr_block = plan->block};
        memcpy(proto.job, ctx->job, sizeof proto.job);
        char name[64];
        cn_rank_filename(name, sizeof name, (uint32_t)ctx->rank);
        int io = ctx->io | (ctx->hash_thread ? LVL_IO_HASH_THREAD : 0);
        cz_opts z;
        api_codecs(ctx, src, ctx->nvars, &z);
        api_incr_mark(plan, src, ctx->nvars);
        size_t n = ctx->nvars;
        if (layout) /* raw and whole in every generation, full or incremental */
            src[n++] = (lvl_src){.name = API_LAYOUT_NAME, .kind = CN_KIND_VAR,
                                 .type = CAIRN_UINT8, .count = layout_len, .codec = CZ_RAW,
                                 .ptr = layout, .size = layout_len};
        rc = lvl_local_write(genfd, gen_path, name, &proto, src, (uint32_t)n, io, &z, out,
                             &ctx->err);
        if (rc == 0)
            api_codecs_learn(ctx, out);
    }
    for (size_t i = 0; src && maplen && i < ctx->nvars; i++)
        if (maplen[i])
            munmap((void *)src[i].ptr, maplen[i]);
    free(src);
    free(maplen);
    free(layout);
    return rc;
}

double api_ckpt_seconds(cairn_ctx *ctx)
{
    double s = ctx->rank == 0 ? MPI_Wtime() - ctx->ckpt_t0 : 0;
    if (MPI_Bcast(&s, 1, MPI_DOUBLE, 0, ctx->comm) != MPI_SUCCESS || !(s >= 0))
        s = 0; /* unknown */
    return s;
}

/* Is generation ID (this context's NCKPT-th checkpoint) flushed to the PFS? */
static bool to_pfs(const cairn_ctx *ctx, int level)
{
    return level == CAIRN_LEVEL_PFS ||
           (ctx->cfg.pfs_dir[0] && ctx->cfg.pfs_every > 0 && ctx->nckpt % ctx->cfg.pfs_every == 0);
}

/* Node leader: sync the generation directory and write the node manifest,
 * with the label and the SECONDS so far; FLAGS CN_MF_PFS if it goes to the
 * PFS (to_pfs), which cairnd reads to resume a flush a dead daemon owed. */
static int write_manifest(cairn_ctx *ctx, long id, int target, uint32_t flags,
                          const api_plan *plan, int genfd, const lvl_written *w, double seconds)
{
    enum { F = 5 };
    uint64_t mine[F] = {(uint64_t)ctx->rank, w->file_size, w->header_sum, w->full, w->raw};
    uint64_t *all = NULL;
    if (ctx->node_rank == 0 && !(all = malloc(sizeof mine * (size_t)ctx->node_size)))
        return cn_fail(&ctx->err, CAIRN_ENOMEM, "out of memory");
    if (MPI_Gather(mine, F, MPI_UINT64_T, all, F, MPI_UINT64_T, 0, ctx->node_comm) !=
        MPI_SUCCESS) {
        free(all);
        return cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Gather on the node failed");
    }
    if (ctx->node_rank != 0)
        return 0;
    int rc = cn_dir_sync(genfd, &ctx->err);
    cn_manifest m = {.level = CAIRN_LEVEL_LOCAL, .target = (uint32_t)target, .flags = flags,
                     .generation = id, .parent = plan->parent, .base = plan->base,
                     .nranks = (uint32_t)ctx->nranks, .nnodes = (uint32_t)ctx->nnodes,
                     .node = (uint32_t)ctx->node, .nlocal = (uint32_t)ctx->node_size,
                     .rank_node = ctx->rank_node};
    memcpy(m.job, ctx->job, sizeof m.job);
    memcpy(m.node_name, ctx->node_name, sizeof m.node_name);
    memcpy(m.label, ctx->gen_label, sizeof m.label);
    m.seconds = seconds;
    m.local = calloc((size_t)ctx->node_size, sizeof *m.local);
    if (!m.local)
        rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "out of memory");
    for (int i = 0; rc == 0 && i < ctx->node_size; i++) { /* node ranks ascend (split key) */
        const uint64_t *r = &all[F * i];
        m.local[i] = (cn_manifest_rank){(uint32_t)r[0], r[1], r[2], r[3], r[4]};
    }
    if (rc == 0) {
        cn_fault_point("ckpt.manifest", id, ctx->rank);
        rc = api_write_manifest(ctx, genfd, &m);
    }
    free(m.local);
    free(all);
    return rc;
}

/* Does pfs.direct apply to a checkpoint at LEVEL as configured: on, to the
 * PFS, incr.mode off (the PFS's increments come from level 1's chain)? */
static bool direct_wanted(const cairn_ctx *ctx, int level)
{
    return ctx->cfg.pfs_direct && ctx->cfg.pfs_dir[0] && !ctx->cfg.incr_mode &&
           to_pfs(ctx, level);
}

/* What the ranks learn from the reduction a generation begins with. */
typedef struct begun {
    bool again;  /* generations at or above the id exist (hold_if_back) */
    bool direct; /* no rank rules out a straight level 4 (goes_direct) */
    bool made;   /* rank 0 made the id's PFS directory (api_pfs_gen_try) */
} begun;

/* Collective: are there generations at or above ID on some node or on the
 * PFS (the job went back: a restart from an older generation, a new run)?
 * Then they are set aside (write_generation), and cairnd may
 * have them queued or be at work on them: every node leader holds its daemons
 * (api_daemon_hold) for the rest of this checkpoint, which replaces ID and
 * may prune those. B->again says so. The same reduction answers whether a
 * rank rules out a straight write at LEVEL (routed files or distributed
 * variables, which level 1 records; rank 0 without memory to gather the
 * files), and whether rank 0, having seen no generation at or above ID, made
 * ID's PFS directory for one (B->made: then no rank waits for it again). */
static int hold_if_back(cairn_ctx *ctx, long id, int level, begun *b)
{
    int mine = 0, nodirect = 0, made = 0;
    for (size_t i = 0; i < ctx->nvars; i++)
        nodirect |= ctx->vars[i].kind != CN_KIND_VAR || ctx->vars[i].dist != API_DIST_NONE;
    bool wanted = ctx->rank == 0 && !nodirect && direct_wanted(ctx, level);
    if (wanted)
        nodirect = !api_pfs_direct_ready(ctx);
    if (ctx->node_rank == 0) {
        long *ids = NULL;
        int n = 0;
        cn_err ignored = {0};
        cn_gen_list(ctx->nodefd, &ids, &n, &ignored);
        for (int i = 0; i < n; i++)
            mine |= ids[i] >= id;
        free(ids), ids = NULL, n = 0;
        int jobfd = ctx->node == 0 && ctx->cfg.pfs_dir[0]
                        ? lvl_pfs_open(ctx->cfg.pfs_dir, ctx->job, false, &ignored)
                        : -1;
        if (jobfd >= 0 && cn_gen_list(jobfd, &ids, &n, &ignored) == 0)
            mine |= n > 0 && ids[0] >= id; /* newest first */
        free(ids);
        if (jobfd >= 0)
            close(jobfd);
        if (wanted && !mine && !nodirect && (!ctx->async || ctx->pfs_as_fast > 0))
            made = api_pfs_gen_try(ctx, id);
    }
    int in[3] = {mine, nodirect, made}, any[3];
    if (MPI_Allreduce(in, any, 3, MPI_INT, MPI_MAX, ctx->comm) != MPI_SUCCESS)
        return api_agree(ctx, cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allreduce failed"));
    *b = (begun){.again = any[0], .direct = !any[1], .made = any[2]};
    if (!b->again) /* nothing held: every rank knows it already */
        return 0;
    return api_agree_napping(ctx, ctx->node_rank == 0 ? api_daemon_hold(ctx) : 0);
}

/* Collective: every manifest of generation ID (at LEVEL) gets the seconds
 * the checkpoint has taken so far. */
static int stamp_seconds(cairn_ctx *ctx, long id, int level)
{
    double seconds = api_ckpt_seconds(ctx);
    char gen[64];
    cn_gen_dirname(gen, sizeof gen, id);
    int rc = 0;
    if (ctx->node_rank == 0) {
        int genfd = cn_dir_open(ctx->nodefd, gen, false, &ctx->err);
        rc = genfd < 0 ? genfd : api_set_manifest_level(ctx, genfd, level, seconds);
        if (genfd >= 0)
            close(genfd);
    }
    return api_agree(ctx, rc);
}

/* Rank 0's one line for generation ID, complete on every rank (log.level
 * info), with the total bytes over all ranks: "generation 7 complete at
 * level 3 (erasure): 8 ranks, 12 MiB in 0.412 s". */
static void log_total(cairn_ctx *ctx, long id, const char *how, uint64_t total, double t0)
{
    char size[32];
    cn_info("generation %ld complete at level %s: %d ranks, %s in %.3f s", id, how, ctx->nranks,
            cn_human(total, size, sizeof size), MPI_Wtime() - t0);
}

/* Collective: log_total, W's bytes summed over the ranks. */
static void log_complete(cairn_ctx *ctx, long id, const char *how, const lvl_written *w,
                         double t0)
{
    uint64_t mine = w->file_size, total = 0;
    if (MPI_Reduce(&mine, &total, 1, MPI_UINT64_T, MPI_SUM, 0, ctx->comm) == MPI_SUCCESS &&
        ctx->rank == 0)
        log_total(ctx, id, how, total, t0);
}

/* Collective: does this checkpoint at LEVEL go straight to the PFS
 * (levels/pfs/direct.c)? When direct_wanted, no rank rules it out (DIRECT,
 * from hold_if_back's reduction), and either no cairnd serves the job or the
 * PFS writes at least as fast as node-local storage (api_pfs_as_fast: then
 * the daemons' flush from level 1 would only write the same bytes a second
 * time, and the checkpoint blocks no longer going straight). */
static bool goes_direct(cairn_ctx *ctx, int level, bool direct)
{
    if (!direct || !direct_wanted(ctx, level))
        return false;
    api_daemon_connect(ctx); /* a daemon started since */
    return !ctx->async || api_pfs_as_fast(ctx);
}

/* Generation ID straight to the PFS (goes_direct; MADE: its directory is
 * there); *REACHED as below. */
static int write_direct(cairn_ctx *ctx, long id, bool made, int *reached, double t0)
{
    for (size_t i = 0; i < ctx->nvars; i++)
        ctx->vars[i].hint = -1; /* a hint is for one checkpoint; none diffs against this one */
    uint64_t stored = 0; /* the job's, on rank 0 */
    CN_TRY(api_flush_direct(ctx, id, made, &stored));
    ctx->last_id = id;
    *reached = CAIRN_LEVEL_PFS;
    if (ctx->rank == 0)
        log_total(ctx, id, "4 (pfs, direct)", stored, t0);
    return 0;
}

/* Does a synchronous level-4 checkpoint keep the copy at LOCAL (2 or 3)
 * too? pfs.parity; auto: while it cost at most half of the PFS copy at the
 * job's previous one (rank 0's times, so every rank answers alike), the
 * first one and every 8th skipped one keeping it to measure again. Always
 * with incr.mode on: the chains of increments are kept per level, and a
 * level-4 one's parent is the level below's. */
static bool keep_parity(cairn_ctx *ctx, int local)
{
    if (local <= CAIRN_LEVEL_LOCAL || ctx->cfg.pfs_parity == 1 || ctx->cfg.incr_mode)
        return true;
    if (ctx->cfg.pfs_parity == 2)
        return false;
    int keep = ctx->l4_pfs_s <= 0 || ctx->l4_raise_s <= 0.5 * ctx->l4_pfs_s ||
               ctx->l4_skipped >= 8;
    if (MPI_Bcast(&keep, 1, MPI_INT, 0, ctx->comm) != MPI_SUCCESS)
        keep = 1;
    ctx->l4_skipped = keep ? 0 : ctx->l4_skipped + 1;
    if (!keep && ctx->rank == 0)
        cn_debug("level %d skipped at this level-4 checkpoint (pfs.parity auto): it took %.3f s "
                 "at the last one, the PFS copy %.3f s", local, ctx->l4_raise_s, ctx->l4_pfs_s);
    return keep;
}

/* The generation, once the arguments are checked (cairn_checkpoint). *REACHED
 * gets the level it is complete at (0 none; 4 once on the PFS or handed to
 * cairnd for it): what cairn_need_checkpoint's clocks restart for. */
static int write_generation(cairn_ctx *ctx, long id, int level, int *reached)
{
    double t0 = MPI_Wtime();
    cn_fault_point("ckpt.begin", id, ctx->rank);
    api_live_begin(ctx); /* node leader: waits while cairn prune holds the node (live.c) */

    char gen[64], gen_path[4500];
    cn_gen_dirname(gen, sizeof gen, id);
    snprintf(gen_path, sizeof gen_path, "%s/%s", ctx->node_path, gen);
    begun b = {0};
    int rc = hold_if_back(ctx, id, level, &b);
    if (rc == 0 && !b.again && goes_direct(ctx, level, b.direct)) /* a rewrite goes by level 1 */
        return write_direct(ctx, id, b.made, reached, t0);
    if (b.made && ctx->rank == 0) /* by level 1 after all */
        api_pfs_gen_drop(ctx, id);
    if (rc == 0 && ctx->node_rank == 0) /* never over another layout's generation (manifest.c) */
        rc = api_may_replace(ctx, id);
    if (rc == 0 && ctx->node_rank == 0 && b.again) /* ID and newer ones exist: set them aside */
        prune(ctx, id, API_PRUNE_NEWER | API_PRUNE_AT);
    if (rc == 0 && ctx->node_rank == 0) /* rewriting an id invalidates the old generation first */
        rc = cn_rmtree_at(ctx->nodefd, gen, &ctx->err);
    if (rc == 0 && ctx->node_rank == 0) {
        int fd = cn_dir_open(ctx->nodefd, gen, true, &ctx->err);
        rc = fd < 0 ? fd : close(fd);
        if (rc == 0)
            rc = cn_dir_sync(ctx->nodefd, &ctx->err);
    }
    CN_TRY(api_agree(ctx, rc));

    api_plan plan;
    rc = api_incr_plan(ctx, id, level, &plan); /* collective: parent, hashes, diff */
    if (rc == 0)
        rc = api_codecs_choose(ctx, level); /* collective: auto's picks, alike on every rank */
    int genfd = rc < 0 ? rc : cn_dir_open(ctx->nodefd, gen, false, &ctx->err);
    lvl_written w = {0};
    rc = genfd < 0 ? genfd : write_rank_file(ctx, id, level, genfd, gen_path, &plan, &w);
    if (rc == 0)
        cn_fault_point("ckpt.commit", id, ctx->rank);
    rc = api_agree(ctx, rc);
    double seconds = rc == 0 ? api_ckpt_seconds(ctx) : 0; /* to level 1 */
    if (rc == 0)
        rc = api_agree(ctx, write_manifest(ctx, id, level, to_pfs(ctx, level) ? CN_MF_PFS : 0,
                                           &plan, genfd, &w, seconds));
    if (rc < 0) {
        api_plan_free(&plan);
        if (genfd >= 0)
            close(genfd);
        if (ctx->node_rank == 0) {
            cn_err ignored = {0};
            cn_rmtree_at(ctx->nodefd, gen, &ignored);
        }
        return rc;
    }
    /* Complete at level 1 from here on: a failure above keeps it. */
    ctx->last_id = id;
    *reached = CAIRN_LEVEL_LOCAL;
    close(genfd);
    int local = api_local_level(ctx, level);
    api_daemon_connect(ctx); /* a daemon started since */
    if (ctx->async && api_daemon_gen(ctx, id, local, to_pfs(ctx, level)) == 0) {
        api_incr_commit(ctx, &plan, id, local); /* cairnd raises in order, parents first */
        api_plan_free(&plan);
        if (ctx->node_rank == 0 && b.again) /* held: nothing newer otherwise */
            prune(ctx, id, API_PRUNE_NEWER);
        *reached = to_pfs(ctx, level) ? CAIRN_LEVEL_PFS : level;
        char how[64];
        snprintf(how, sizeof how, "1; cairnd takes it to level %d%s", local,
                 to_pfs(ctx, level) ? " and the PFS" : "");
        log_complete(ctx, id, how, &w, t0);
        return 0;
    }
    /* Synchronously. Daemons may still live (one refused the generation, only
     * some nodes have one, another configuration): none may work on what this
     * raises, flushes or prunes, so they are held (at once if none answers). */
    int held = ctx->node_rank == 0 ? api_daemon_hold(ctx) : 0;
    rc = api_agree_napping(ctx, held);
    if (rc == 0 && to_pfs(ctx, level) && !keep_parity(ctx, local))
        local = CAIRN_LEVEL_LOCAL; /* level 1 and the PFS */
    double t1 = MPI_Wtime(); /* where the seconds went: a debug line below */
    if (rc == 0 && local > CAIRN_LEVEL_LOCAL)
        rc = api_raise(ctx, id, local);
    if (rc == 0)
        *reached = local;
    api_incr_commit(ctx, &plan, id, rc == 0 ? local : CAIRN_LEVEL_LOCAL);
    api_plan_free(&plan);
    double t2 = MPI_Wtime();
    if (rc == 0 && to_pfs(ctx, level))
        rc = api_flush(ctx, id); /* before pruning: the chain it materializes stays */
    if (ctx->rank == 0)
        cn_debug("generation %ld: level 1 in %.3f s, level %d in %.3f s, the PFS in %.3f s", id,
                 t1 - t0, local, t2 - t1, MPI_Wtime() - t2);
    if (rc == 0 && to_pfs(ctx, level) && ctx->rank == 0) { /* keep_parity's measure */
        ctx->l4_pfs_s = MPI_Wtime() - t2;
        if (local > CAIRN_LEVEL_LOCAL)
            ctx->l4_raise_s = t2 - t1;
    }
    if (rc == 0 && to_pfs(ctx, level)) /* the seconds with the PFS copy */
        rc = stamp_seconds(ctx, id, local);
    if (ctx->node_rank == 0 && held == 0)
        prune(ctx, id, API_PRUNE_OLDER | API_PRUNE_NEWER);
    if (rc < 0)
        return rc;
    *reached = to_pfs(ctx, level) ? CAIRN_LEVEL_PFS : level;
    char how[32];
    snprintf(how, sizeof how, "%d (%s)", level, level_name(level));
    log_complete(ctx, id, how, &w, t0);
    return 0;
}

CAIRN_EXPORT int cairn_checkpoint(cairn_ctx *ctx, long id, int level)
{
    if (!ctx)
        return CAIRN_EINVAL;
    api_enter(ctx);
    double began = MPI_Wtime(); /* the cost the application pays (interval.c) */
    CN_TRY(check_args(ctx, id, level)); /* refused: the routes and the label stay */
    ctx->ckpt_t0 = MPI_Wtime();
    ctx->timing = true;
    int reached = 0;
    int rc = write_generation(ctx, id, level, &reached);
    ctx->timing = false;
    ctx->label[0] = '\0'; /* a label is for one checkpoint, as a route */
    if (reached)
        api_need_done(ctx, reached, rc == 0 ? MPI_Wtime() - began : 0);
    api_daemon_release(ctx); /* the daemons, if it held them (write_generation) */
    api_live_end(ctx);       /* the next parents published, cairn prune let in */
    /* Routes are for this checkpoint only (routed.c), taken in or not. Once
     * the generation is complete, its files are in it: the staged copies go. */
    api_routes_end(ctx);
    if (ctx->last_id == id && api_staging_empty(ctx) < 0)
        cn_warn("generation %ld holds the routed files, but their staged copies stay: %s", id,
                ctx->err.msg);
    return rc;
}
