/*
 * interval.c - cairn_need_checkpoint: is a checkpoint due, and at which level?
 *
 * Each level L = 1..4 has a clock (api_need, api.h): the wall time and the
 * calls of cairn_need_checkpoint since the last checkpoint complete at level
 * L or above (checkpoint.c calls api_need_done), or since cairn_init. Level
 * L is due once its interval has passed:
 *   ckpt.every_L = N        N calls, this one counted;
 *   ckpt.every_L = a time   that much wall time;
 *   else, with ckpt.auto = on and fail.mtbf_L = M: Daly's T(C, M) of wall
 *   time (cn_daly_interval), C the cost of a level-L checkpoint: the mean of
 *   the last API_NEED_COSTS measured in this run; before the first, the
 *   seconds recorded with the newest complete generation at level L
 *   (cairn_gen_info.seconds, read once, on the first call); else the cost of
 *   the nearest lower level known (a lower bound: a level-L checkpoint
 *   writes level 1 too, so the first one comes early, never late); else
 *   nothing is known, and the lowest such level is due at once, to be
 *   measured, while higher ones wait for it.
 * The answer is the highest due level the job can checkpoint at
 * (api_level_usable): never level 4 without pfs.dir, 2 on one node, 3 with
 * too few nodes per set; a level configured for nothing is warned once.
 *
 * Cost: the wall time of cairn_checkpoint on rank 0, entry to return, which
 * is what the application waits. With cairnd that is the level-1 write and
 * the hand-over; the daemons' work overlaps the computation and is no cost in
 * Young/Daly's sense (a protection that arrives later is not modelled).
 *
 * Collective: rank 0's clock decides. One MPI_Allreduce carries its answer
 * and every rank's argument check, so every rank returns the same level, or
 * the same error, in one round; a refused call changes no clock.
 */
#include "api/api.h"

#include <stdio.h>
#include <string.h>

void api_need_start(cairn_ctx *ctx)
{
    memset(&ctx->need, 0, sizeof ctx->need);
    double now = MPI_Wtime();
    for (int l = 1; l <= 4; l++)
        ctx->need.since[l] = now;
}

void api_need_done(cairn_ctx *ctx, int level, double seconds)
{
    api_need *n = &ctx->need;
    if (level < 1 || level > 4)
        return;
    double now = MPI_Wtime();
    for (int l = 1; l <= level; l++) {
        n->since[l] = now;
        n->iters[l] = 0;
    }
    if (seconds > 0)
        n->cost[level][n->ncost[level]++ % API_NEED_COSTS] = seconds;
}

/* The cost of a level-LEVEL checkpoint as far as known (0: unknown); FROM
 * gets the level it was measured or recorded at, PRIOR whether recorded. */
static double cost_of(const api_need *n, int level, int *from, bool *prior)
{
    for (int l = level; l >= 1; l--) {
        *from = l;
        *prior = false;
        long k = n->ncost[l] < API_NEED_COSTS ? n->ncost[l] : API_NEED_COSTS;
        if (k > 0) {
            double sum = 0;
            for (long i = 0; i < k; i++)
                sum += n->cost[l][i];
            return sum / (double)k;
        }
        *prior = true;
        if (n->prior[l] > 0)
            return n->prior[l];
    }
    return 0;
}

/* Level LEVEL's automatic interval in seconds (logged when it changes), or
 * 0 when no cost is known. */
static double auto_interval(cairn_ctx *ctx, int level)
{
    api_need *n = &ctx->need;
    int from = level;
    bool prior = false;
    double cost = cost_of(n, level, &from, &prior);
    double t = cn_daly_interval(cost, ctx->cfg.mtbf[level]);
    if (t > 0 && t != n->shown[level]) {
        n->shown[level] = t;
        char src[96];
        if (from != level)
            snprintf(src, sizeof src, "of level %d, none known at level %d yet", from, level);
        else
            snprintf(src, sizeof src, "%s", prior ? "recorded with the newest generation"
                                                  : "measured in this run");
        cn_info("ckpt.auto: level %d every %.6f s (Daly: cost %.17g s %s, fail.mtbf_%d = "
                "%.17g s)", level, t, cost, src, level, ctx->cfg.mtbf[level]);
    }
    return t;
}

/* Rank 0: the highest due level, with the calls of this one counted. */
static int decide(cairn_ctx *ctx)
{
    api_need *n = &ctx->need;
    const cn_config *c = &ctx->cfg;
    double now = MPI_Wtime();
    int due = 0;
    bool measuring = false; /* a lower automatic level is due at once, to measure it */
    for (int l = 1; l <= 4; l++) {
        cn_err why = {0};
        cn_interval iv = c->ckpt_every[l];
        bool set = iv.iters > 0 || iv.seconds > 0;
        bool automatic = !set && c->ckpt_auto && c->mtbf[l] > 0;
        if ((!set && !automatic) || api_level_usable(ctx, l, &why) < 0) {
            if ((set || automatic) && !n->warned)
                cn_warn("%s_%d is set, but level %d is never due in this job: %s",
                        set ? "ckpt.every" : "fail.mtbf", l, l, why.msg);
            continue;
        }
        if (automatic) {
            iv.seconds = auto_interval(ctx, l);
            if (iv.seconds <= 0) {
                if (!measuring)
                    due = l;
                measuring = true;
                continue;
            }
        }
        if ((iv.iters > 0 && n->iters[l] >= iv.iters) ||
            (iv.seconds > 0 && now - n->since[l] >= iv.seconds))
            due = l;
    }
    n->warned = true;
    return due;
}

/* First call with ckpt.auto = on (rank 0's): the costs recorded with the
 * complete generations, newest first, as each level's prior. Collective. */
static void read_priors(cairn_ctx *ctx)
{
    int on = ctx->cfg.ckpt_auto;
    ctx->need.primed = true;
    if (MPI_Bcast(&on, 1, MPI_INT, 0, ctx->comm) != MPI_SUCCESS || !on)
        return;
    enum { MAX_GENS = 64 };
    cairn_gen_info g[MAX_GENS];
    int count = 0;
    if (cairn_generations(ctx, g, MAX_GENS, &count) < 0) {
        if (ctx->rank == 0)
            cn_warn("ckpt.auto: no recorded costs (%s); measuring them", ctx->msg);
        count = 0;
    }
    for (int i = 0; i < count && i < MAX_GENS; i++) {
        int l = g[i].level;
        if (l >= 1 && l <= 4 && g[i].seconds > 0 && ctx->need.prior[l] <= 0)
            ctx->need.prior[l] = g[i].seconds;
    }
    cn_err_clear(&ctx->err);
    ctx->msg[0] = '\0';
}

CAIRN_EXPORT int cairn_need_checkpoint(cairn_ctx *ctx, int *level)
{
    if (!ctx)
        return CAIRN_EINVAL;
    cn_err_clear(&ctx->err);
    ctx->msg[0] = '\0';
    api_need *n = &ctx->need;
    if (!n->primed)
        read_priors(ctx);
    int rc = level ? 0 : cn_fail(&ctx->err, CAIRN_EINVAL, "need_checkpoint: level is NULL");
    for (int l = 1; l <= 4; l++)
        n->iters[l]++; /* this call, taken back if it is refused */
    int in[2] = {ctx->rank == 0 ? decide(ctx) : 0, rc < 0}, out[2] = {0, 0};
    if (MPI_Allreduce(in, out, 2, MPI_INT, MPI_MAX, ctx->comm) != MPI_SUCCESS)
        rc = cn_fail(&ctx->err, CAIRN_EMPI, "need_checkpoint: MPI_Allreduce failed");
    if (rc < 0 || out[1]) {
        for (int l = 1; l <= 4; l++)
            n->iters[l]--;
        return api_agree(ctx, rc);
    }
    *level = out[0];
    return 0;
}
