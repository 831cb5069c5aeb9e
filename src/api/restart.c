/*
 * restart.c - restore protected memory from a generation.
 *
 * Choose: the newest generation every rank can use (inventory.c), or the one
 * asked for. Verify: every rank maps its files of the generation's chain
 * (chain.c), checks each header against its manifest, every block checksum,
 * and that each protected variable is there with the same type and element
 * count; ranks agree; every frame is decoded once and checked (chain.c,
 * api_chain_check), the variables to restore rebuilt into buffers the check
 * keeps, never into protected memory; ranks agree. Only then copy: routed
 * files back into files/rank-<r>/, then variables into protected memory
 * (memcpy of what the check kept; raw entries, and any variable it had no
 * memory for, applied from the files link by link). A corrupt or missing
 * file makes the generation unusable, and every generation whose chain
 * needs it; with CAIRN_LATEST the newest older one that does not is tried,
 * with a warning naming the link that broke.
 * A generation only the PFS holds (newer than levels 1-3 give back) is
 * restored straight from it (pfsrestore.c), checked as thoroughly, or for
 * one variable or a description staged in first (stagein.c).
 * When nothing can be restored the code says why (why_none): a checkpoint
 * that exists but is damaged or lost is CAIRN_ECORRUPT or CAIRN_ELOST, one
 * of another layout CAIRN_EMISMATCH, and CAIRN_ENOENT only means that there
 * is none at all. After a restore from node-local storage the newest PFS
 * generation is read back, and damage to it warned (api_pfs_check).
 */
#include "api/api.h"
#include "remap/remap.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* api_recover after the node directories are reopened: a replaced node may
 * have lost its directory under this very context. Collective, agreed. */
static int recover(cairn_ctx *ctx, long id, long *chosen)
{
    int rc = api_agree(ctx, api_reopen_dirs(ctx));
    return rc < 0 ? rc : api_recover(ctx, id, chosen);
}

/*
 * One attempt at generation G for W: open and verify its whole chain
 * everywhere, then (agreed at each step) compare, decode-check and restore
 * what W asks for, or describe W's variable. *BROKEN receives the oldest link
 * some rank found broken (every candidate from there up the chain needs it),
 * else -1.
 */
static int try_generation(cairn_ctx *ctx, const api_gen *g, const api_gen *all, int n,
                          long *broken, void *arg)
{
    const api_want *w = arg;
    api_chain ch = {0};
    int rc = api_chain_open(ctx, ctx->rank, g, all, n, &ch);
    /* The oldest broken link as the largest LONG_MAX - link (none: -1), so that
     * a broken link LONG_MAX (an id the API takes) is no "none". */
    long mine = ch.broken >= 0 ? LONG_MAX - ch.broken : -1, high = -1;
    int level = g->level, min_level = g->level;
    if (MPI_Allreduce(&mine, &high, 1, MPI_LONG, MPI_MAX, ctx->comm) != MPI_SUCCESS ||
        MPI_Allreduce(&level, &min_level, 1, MPI_INT, MPI_MIN, ctx->comm) != MPI_SUCCESS)
        rc = rc ? rc : cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allreduce failed");
    *broken = high < 0 ? -1 : LONG_MAX - high;
    rc = api_agree(ctx, rc); /* unusable first: a mismatch with a corrupt generation is moot */
    if (rc == 0 && w->what == API_WANT_INFO) {
        rc = api_agree(ctx, api_chain_describe(ctx, &ch, w->name, w->info));
        *broken = rc < 0 ? API_FINAL : -1; /* the generation is fine: no older one instead */
    } else {
        const char *only = w->what == API_WANT_VAR ? w->name : NULL;
        if (rc == 0)
            rc = api_agree(ctx, api_chain_match(ctx, &ch, only));
        if (rc == 0) /* every frame decodes, on every rank, before anything is written;
                      * the decoded variables are kept for the restore to copy */
            rc = api_agree(ctx, api_chain_check(ctx, &ch, only));
        if (rc == 0)
            rc = api_agree(ctx, api_chain_restore(ctx, &ch, min_level, only));
    }
    api_chain_close(&ch);
    return rc;
}

void api_loss_message(cairn_ctx *ctx, const char *lost)
{
    int has = ctx->lost_code != 0, any = 0;
    MPI_Allreduce(&has, &any, 1, MPI_INT, MPI_MAX, ctx->comm);
    char note[sizeof ctx->lost_note] = "";
    if (any) {
        api_agree(ctx, has ? cn_fail(&ctx->err, ctx->lost_code, "%s", ctx->lost_note) : 0);
        snprintf(note, sizeof note, "%.1000s", ctx->msg);
    }
    snprintf(ctx->msg, sizeof ctx->msg, "%.700s%s%.300s", lost,
             any ? "; also: " : "; no PFS generation to fall back on", note);
    cn_err_clear(&ctx->err);
}

long api_pfs_instead(cairn_ctx *ctx, long id, long bound, int rc, long whole, int *prc)
{
    long p = api_pfs_newest(ctx, bound, prc);
    if (*prc < 0 || p < 0 || (id != CAIRN_LATEST && p != id) || (rc == 0 && whole >= p))
        return -1; /* levels 1-3 give as much, or the PFS has nothing (else) */
    return p;      /* levels 1-3 lost it (CAIRN_ELOST), give nothing, or an older one */
}

/*
 * Level 4: when the PFS holds a newer generation than levels 1-3 can give
 * back (RC and WHOLE from api_recover), or the one asked for that they
 * cannot (api_pfs_instead: the choice the query makes too), restore it
 * straight from the PFS if DIRECT (*RESTORED: its id), else stage it in,
 * and say so (*STAGED). Returns RC otherwise; when RC is CAIRN_ELOST its
 * message also says what the PFS could not give.
 */
static int from_pfs(cairn_ctx *ctx, long id, int rc, long whole, bool direct, bool *staged,
                    long *restored)
{
    if (rc < 0 && rc != CAIRN_ELOST)
        return rc;
    char lost[sizeof ctx->msg] = "";
    if (rc < 0)
        snprintf(lost, sizeof lost, "%s", ctx->msg);
    long bound = id == CAIRN_LATEST ? 0x7fffffffffffffffL : id;
    for (;;) {
        int prc = 0;
        long p = api_pfs_instead(ctx, id, bound, rc, whole, &prc);
        if (prc < 0)
            return api_agree(ctx, prc);
        if (p < 0) {
            if (rc < 0) /* the PFS cannot make up for it: the loss, and any PFS damage */
                api_loss_message(ctx, lost);
            return rc;
        }
        if (ctx->rank == 0 && strcmp(ctx->pfs_job, ctx->job) != 0) {
            cn_warn("restoring generation %ld of job %s from the PFS (level 4): this job (%s) "
                    "has none of its own", p, ctx->pfs_job, ctx->job);
        } else if (ctx->rank == 0) {
            if (rc < 0)
                cn_warn("restoring generation %ld from the PFS (level 4): %s", p, ctx->msg);
            else if (whole >= 0)
                cn_warn("restoring generation %ld from the PFS (level 4): levels 1-3 hold "
                        "generation %ld at best", p, whole);
            else
                cn_warn("restoring generation %ld from the PFS (level 4): node-local storage "
                        "holds none", p);
        }
        cn_err_clear(&ctx->err);
        int src = direct ? api_pfs_restore(ctx, p) : api_stage_in(ctx, p);
        *staged = src == 0;
        if (src == 0 && direct)
            *restored = p;
        if (src == CAIRN_ECORRUPT || src == CAIRN_ENOENT || src == CAIRN_EFORMAT)
            api_note_lost(ctx, p, src == CAIRN_EFORMAT ? src : CAIRN_ECORRUPT, "%s", ctx->msg);
        if (src == 0 || id != CAIRN_LATEST || (src != CAIRN_ECORRUPT && src != CAIRN_ENOENT))
            return src;
        if (ctx->rank == 0) /* a damaged PFS generation: an older one may do */
            cn_warn("PFS generation %ld is unusable (%s); trying an older one", p, ctx->msg);
        bound = p - 1;
    }
}

/*
 * Collective: nothing can be restored, and no candidate failed its checks.
 * Say why, the same on every rank: a generation that exists but is damaged
 * or lost (CAIRN_ECORRUPT, CAIRN_ELOST, noted by the inventory, recovery
 * and the PFS), else one of another layout (CAIRN_EMISMATCH), else
 * CAIRN_ENOENT: nothing was ever checkpointed.
 */
static int why_none(cairn_ctx *ctx, long id)
{
    bool noted = ctx->lost_code && (id == CAIRN_LATEST || ctx->lost_id == id);
    int rc = api_agree(ctx, noted ? cn_fail(&ctx->err, ctx->lost_code, "%s", ctx->lost_note)
                                  : 0);
    if (rc < 0)
        return rc;
    const char *note = ctx->layout_note[0] ? ctx->layout_note : ctx->pfs_note;
    rc = api_agree(ctx, note[0] ? cn_fail(&ctx->err, CAIRN_EMISMATCH, "%s", note) : 0);
    if (rc < 0)
        return rc;
    if (id == CAIRN_LATEST)
        cn_fail(&ctx->err, CAIRN_ENOENT, "no checkpoint of job %s in %s%s%s", ctx->job,
                ctx->node_path, ctx->cfg.pfs_dir[0] ? " nor on the PFS in " : "",
                ctx->cfg.pfs_dir);
    else
        cn_fail(&ctx->err, CAIRN_ENOENT, "generation %ld of job %s is not complete in %s", id,
                ctx->job, ctx->node_path);
    return api_agree(ctx, CAIRN_ENOENT);
}

/* Does generation ID's chain (in ALL[0..N-1]) include generation LINK? */
static bool chain_has(const api_gen *all, int n, long id, long link)
{
    for (const api_gen *x = api_gen_find(all, n, id); x; x = api_gen_find(all, n, x->parent))
        if (x->id == link)
            return true;
    return false;
}

int api_pick(cairn_ctx *ctx, long id, long bound, const api_gen *g, int n, api_try_fn try_gen,
             void *arg, long *got)
{
    int rc = 0, skipped = 0; /* code of the newest generation skipped, if any */
    char skipped_msg[sizeof ctx->msg] = "";
    *got = -1;
    for (;;) {
        long cand = api_common_below(ctx, g, n, bound, &rc);
        if (rc < 0)
            break;
        if (cand < 0 || (id != CAIRN_LATEST && cand != id)) {
            if (!skipped)
                return why_none(ctx, id); /* agreed, message and all */
            /* nothing older: report what broke the newest; a generation that
             * exists but cannot be used is never "no checkpoint" */
            rc = skipped == CAIRN_ENOENT ? CAIRN_ECORRUPT : skipped;
            cn_fail(&ctx->err, rc, "no usable generation; %.990s", skipped_msg);
            break;
        }
        long broken = -1;
        rc = try_gen(ctx, api_gen_find(g, n, cand), g, n, &broken, arg); /* agreed */
        if (rc == 0) {
            *got = cand;
            return 0;
        } else if (id == CAIRN_LATEST && (rc == CAIRN_ECORRUPT || rc == CAIRN_ENOENT) &&
                   broken != API_FINAL) {
            if (ctx->rank == 0)
                cn_warn("generation %ld is unusable (%s); trying an older one", cand, ctx->msg);
            if (!skipped) {
                skipped = rc;
                snprintf(skipped_msg, sizeof skipped_msg, "generation %ld: %.900s", cand, ctx->msg);
            }
            rc = 0;
            bound = cand - 1;
            while (broken >= 0 && rc == 0) { /* skip the candidates that need the broken link */
                long next = api_common_below(ctx, g, n, bound, &rc);
                int needs = next >= 0 && chain_has(g, n, next, broken), all = 0;
                if (rc < 0 || next < 0 ||
                    MPI_Allreduce(&needs, &all, 1, MPI_INT, MPI_LAND, ctx->comm) != MPI_SUCCESS ||
                    !all)
                    break;
                bound = next - 1;
            }
            continue;
        }
        return rc; /* agreed, with the failing rank's message */
    }
    if (rc == CAIRN_EMPI && !ctx->err.msg[0])
        cn_fail(&ctx->err, rc, "MPI failed while choosing a generation");
    return api_agree(ctx, rc);
}

/* The notes of a pass over generations <= BOUND, cleared. */
void api_notes_reset(cairn_ctx *ctx, long bound)
{
    ctx->layout_note[0] = ctx->pfs_note[0] = '\0';
    ctx->lost_code = 0, ctx->lost_id = -1;
    ctx->lost_bound = bound;
}

int api_restart_pass(cairn_ctx *ctx, long id, const api_want *w, long *got)
{
    long all = 0x7fffffffffffffffL, bound = id == CAIRN_LATEST ? all : id;
    api_notes_reset(ctx, bound);
    long whole = -1; /* rebuild lost nodes first (levels 2 and 3) */
    bool staged = false;
    long restored = -1; /* straight from the PFS (what restores everything) */
    int rc = recover(ctx, id, &whole);
    CN_TRY(from_pfs(ctx, id, rc, whole, w->what == API_WANT_ALL, &staged, &restored));
    api_gen *g = NULL;
    int n = 0;
    *got = restored;
    rc = restored >= 0 ? 0 : api_agree(ctx, api_local_gens(ctx, ctx->rank, &g, &n));
    if (rc == 0 && restored < 0)
        rc = api_pick(ctx, id, bound, g, n, try_generation, (void *)w, got);
    free(g);
    if (rc < 0)
        return rc;
    if (ctx->lost_code && ctx->lost_id > *got) /* never an older one without a word */
        cn_warn("generation %ld exists but cannot be restored (%s); %s generation %ld",
                ctx->lost_id, ctx->lost_note, w->what == API_WANT_INFO ? "using" : "restored",
                *got);
    if (!staged && w->what == API_WANT_ALL) /* is the PFS still a fallback? */
        api_pfs_check(ctx, *got);
    if (w->what != API_WANT_INFO)
        ctx->last_id = *got;
    ctx->msg[0] = '\0'; /* a generation skipped on the way is no failure of the call */
    return 0;
}

static int restart(cairn_ctx *ctx, long id, long *restored_id);

CAIRN_EXPORT int cairn_restart(cairn_ctx *ctx, long id, long *restored_id)
{
    if (!ctx)
        return CAIRN_EINVAL;
    api_enter(ctx);
    api_live_begin(ctx); /* node leader: not while cairn prune removes (live.c) */
    int rc = restart(ctx, id, restored_id);
    api_live_end(ctx); /* the parents it set (ctx->incr) published */
    return rc;
}

static int restart(cairn_ctx *ctx, long id, long *restored_id)
{
    int rc = id < 0 && id != CAIRN_LATEST
                 ? cn_fail(&ctx->err, CAIRN_EINVAL, "restart: bad generation id %ld", id)
                 : 0;
    CN_TRY(api_agree(ctx, rc));
    long got = -1;
    const api_want all = {API_WANT_ALL, NULL, NULL};
    rc = api_restart_pass(ctx, id, &all, &got);
    /* Refused for another layout's generation (not for a variable that does not
     * match one of this layout: the notes are what why_none reported), with
     * every variable distributed or replicated on every rank: remap. */
    bool note = (ctx->layout_note[0] && strstr(ctx->msg, ctx->layout_note)) ||
                (ctx->pfs_note[0] && strstr(ctx->msg, ctx->pfs_note));
    int remap[2] = {api_remap_applies(ctx), -(int)note};
    if (rc == CAIRN_EMISMATCH && MPI_Allreduce(MPI_IN_PLACE, remap, 2, MPI_INT, MPI_MIN,
                                               ctx->comm) == MPI_SUCCESS &&
        remap[0] && remap[1] < 0) {
        /* another layout's generation, every variable distributed or replicated */
        char refusal[sizeof ctx->msg];
        memcpy(refusal, ctx->msg, sizeof refusal);
        int mrc = api_remap(ctx, id, &got);
        if (mrc == 1) /* nothing of another layout after all: the refusal stands */
            memcpy(ctx->msg, refusal, sizeof refusal);
        else
            rc = mrc;
    }
    CN_TRY(rc);
    if (restored_id)
        *restored_id = got;
    if (ctx->rank == 0) /* one line per job; each rank's at debug */
        cn_info("restored generation %ld: %d ranks", got, ctx->nranks);
    cn_debug("restored generation %ld", got);
    return 0;
}

CAIRN_EXPORT int cairn_rebuild(cairn_ctx *ctx, long id, long *rebuilt_id)
{
    if (!ctx)
        return CAIRN_EINVAL;
    api_enter(ctx);
    int rc = id < 0 && id != CAIRN_LATEST
                 ? cn_fail(&ctx->err, CAIRN_EINVAL, "rebuild: bad generation id %ld", id)
                 : 0;
    CN_TRY(api_agree(ctx, rc));
    long got = -1;
    CN_TRY(recover(ctx, id, &got));
    if (rebuilt_id)
        *rebuilt_id = got;
    return 0;
}
