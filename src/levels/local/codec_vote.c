/*
 * codec_vote.c - "auto" picks one codec per variable for the whole job.
 *
 * Ranks that hold the same kind of data should store it alike (side by side,
 * one rank's file of 385 KB and another's raw 64 MB for the same array is a
 * waste nobody chose). So the choice is collective, made at the start of a
 * checkpoint (api_codecs_choose, before any rank file is written):
 *   1. any rank with an auto variable due for a choice (never chosen, chosen
 *      compress.resample checkpoints ago, or the levels the job uses changed)
 *      makes every rank choose (an all-reduce of one flag);
 *   2. each rank models each of its auto variables (src/compress choose.c:
 *      sampled ratios, fixed codec speeds, this job's levels and space): a
 *      cost, a CPU work and stored bytes per candidate codec;
 *   3. the variables are identified by rank 0's list: a key per variable
 *      (hash of its name, its type, lossy or not), broadcast; each rank adds
 *      its figures into rank 0's slots and one all-reduce sums them
 *      (integers, nanoseconds and bytes, saturating, so every rank gets the
 *      same sums bit for bit);
 *   4. every rank picks from the sums (cz_pick) for the variables in rank 0's
 *      list, and from its own model for any other (still deterministic).
 * The model reads no clock, so the pick depends only on the data and the
 * settings. The time this takes is part of the checkpoint's seconds.
 *
 * Ownership: every array lives for one call.
 */
#include "core/core.h"
#include "levels/local/local.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define F 3 /* figures per codec: cost (ns), cpu (ns), stored (bytes) */

typedef struct pending {
    api_var *v;
    uint64_t key;
    bool lossy;
    cz_model m;
    int slot;                   /* in rank 0's list, -1 none */
} pending;

static uint64_t key_of(const api_var *v, bool lossy)
{
    return cn_hash(v->name, strlen(v->name)) ^ ((uint64_t)v->type << 56) ^
           ((uint64_t)lossy << 63);
}

/* Is V auto (API_AUTO_LOSSY or API_AUTO_LOSSLESS), else 0? */
static int auto_kind(const cairn_ctx *ctx, const api_var *v)
{
    int id = api_codec_of(ctx, v, NULL);
    return id == API_AUTO_LOSSY || id == API_AUTO_LOSSLESS ? id : 0;
}

static uint64_t to_u64(double x, double scale)
{
    double v = x * scale + 0.5;
    return !(x < INFINITY) ? UINT64_MAX : v < 1.8e19 ? (uint64_t)v : UINT64_MAX - 1;
}

static void sat_add(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const uint64_t *a = in;
    uint64_t *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = b[i] > UINT64_MAX - a[i] ? UINT64_MAX : b[i] + a[i];
}

static int cmp_key(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Rank 0's keys to every rank (*KEYS, *N); each P[i].slot found in them. */
static int share_keys(cairn_ctx *ctx, pending *p, size_t np, uint64_t **keys, int *n)
{
    int cnt = (int)np;
    if (MPI_Bcast(&cnt, 1, MPI_INT, 0, ctx->comm) != MPI_SUCCESS)
        return cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Bcast failed");
    *n = cnt;
    *keys = calloc(cnt ? (size_t)cnt : 1, sizeof **keys);
    if (!*keys) /* the others wait in the broadcast: fail after it */
        cnt = 0;
    for (int i = 0; *keys && ctx->rank == 0 && i < cnt; i++)
        (*keys)[i] = p[i].key;
    uint64_t dummy;
    int rc = MPI_Bcast(*keys ? (void *)*keys : &dummy, *keys ? cnt : 0, MPI_UINT64_T, 0,
                       ctx->comm);
    if (!*keys)
        return cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory for the codec votes");
    if (rc != MPI_SUCCESS)
        return cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Bcast failed");
    /* sorted copy with original slots, to find ours */
    uint64_t(*sorted)[2] = malloc(sizeof *sorted * (size_t)(cnt ? cnt : 1));
    if (!sorted)
        return cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory for the codec votes");
    for (int i = 0; i < cnt; i++)
        sorted[i][0] = (*keys)[i], sorted[i][1] = (uint64_t)i;
    qsort(sorted, (size_t)cnt, sizeof *sorted, cmp_key);
    for (size_t i = 0; i < np; i++) {
        uint64_t(*hit)[2] = bsearch(&p[i].key, sorted, (size_t)cnt, sizeof *sorted, cmp_key);
        p[i].slot = hit ? (int)(*hit)[1] : -1;
    }
    free(sorted);
    return 0;
}

/* Steps 2-4 for the NP variables of P; RC so far (the vote runs regardless,
 * so that no rank is left waiting). */
static int vote(cairn_ctx *ctx, pending *p, size_t np, int rc)
{
    uint64_t *keys = NULL, *sum = NULL;
    int n = 0;
    int mrc = share_keys(ctx, p, rc == 0 ? np : 0, &keys, &n);
    rc = rc ? rc : mrc;
    size_t len = (size_t)n * CZ_NCODECS * F;
    sum = calloc(len ? len : 1, sizeof *sum);
    if (!sum && rc == 0)
        rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory for the codec votes");
    for (size_t i = 0; sum && rc == 0 && i < np; i++) {
        if (p[i].slot < 0)
            continue;
        uint64_t *s = &sum[(size_t)p[i].slot * CZ_NCODECS * F];
        for (int c = 0; c < CZ_NCODECS; c++) {
            s[F * c] = to_u64(p[i].m.cost[c], 1e9);
            s[F * c + 1] = to_u64(p[i].m.cpu[c], 1e9);
            s[F * c + 2] = to_u64(p[i].m.stored[c], 1);
        }
    }
    /* a rank that failed contributes nothing, but takes part */
    if (sum && rc != 0)
        memset(sum, 0, len * sizeof *sum);
    MPI_Op op;
    if (MPI_Op_create(sat_add, 1, &op) != MPI_SUCCESS) {
        rc = rc ? rc : cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Op_create failed");
    } else {
        uint64_t dummy = 0;
        if (MPI_Allreduce(MPI_IN_PLACE, sum ? (void *)sum : &dummy, sum ? (int)len : 0,
                          MPI_UINT64_T, op, ctx->comm) != MPI_SUCCESS)
            rc = rc ? rc : cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allreduce failed");
        MPI_Op_free(&op);
    }
    for (size_t i = 0; rc == 0 && i < np; i++) {
        cz_model agreed = p[i].m;
        if (p[i].slot >= 0) {
            const uint64_t *s = &sum[(size_t)p[i].slot * CZ_NCODECS * F];
            for (int c = 0; c < CZ_NCODECS; c++) {
                agreed.cost[c] = s[F * c] == UINT64_MAX ? INFINITY : (double)s[F * c];
                agreed.cpu[c] = (double)s[F * c + 1];
                agreed.stored[c] = (double)s[F * c + 2];
            }
        }
        int id = cz_pick(&agreed);
        if (p[i].lossy && !cz_is_lossy(id))
            id = CZ_PREDICT; /* no lossy candidate modelled (out of memory) */
        api_var *v = p[i].v;
        uint64_t size = (uint64_t)v->count * cairn_type_size(v->type);
        v->chosen = id;
        v->chosen_at = ctx->nckpt;
        v->chosen_ratio = size && p[i].m.stored[id] > 0 ? p[i].m.stored[id] / (double)size : 1;
        cn_debug("'%s': auto picked %s for the job%s (this rank's sampled ratio %.3f, "
                 "modelled %.6f s)",
                 v->name, cz_codec_name(id), p[i].slot < 0 ? " (alone: not on rank 0)" : "",
                 v->chosen_ratio, p[i].m.cost[id]);
    }
    free(keys);
    free(sum);
    return rc;
}

int api_codecs_choose(cairn_ctx *ctx, int level)
{
    unsigned levels = api_job_levels(ctx, level);
    int due = 0, any = 0;
    for (size_t i = 0; i < ctx->nvars && !due; i++) {
        api_var *v = &ctx->vars[i];
        int kind = auto_kind(ctx, v);
        due = kind && (v->chosen < 0 || cz_is_lossy(v->chosen) != (kind == API_AUTO_LOSSY) ||
                       ctx->nckpt - v->chosen_at >= ctx->cfg.z_resample ||
                       levels != ctx->levels_seen);
    }
    if (MPI_Allreduce(&due, &any, 1, MPI_INT, MPI_LOR, ctx->comm) != MPI_SUCCESS)
        return api_agree(ctx, cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allreduce failed"));
    ctx->levels_seen = levels;
    if (!any)
        return 0;
    double t0 = MPI_Wtime();
    cz_env env;
    api_codec_env(ctx, levels, &env);
    pending *p = calloc(ctx->nvars ? ctx->nvars : 1, sizeof *p);
    int rc = p ? 0 : cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory for the codec votes");
    size_t np = 0;
    for (size_t i = 0; p && i < ctx->nvars; i++) {
        api_var *v = &ctx->vars[i];
        int kind = auto_kind(ctx, v);
        if (!kind)
            continue;
        cz_shape sh;
        api_codec_of(ctx, v, &sh); /* its shape and bound: a pass over a relative bound's data */
        pending *x = &p[np++];
        x->v = v;
        x->lossy = kind == API_AUTO_LOSSY;
        x->key = key_of(v, x->lossy);
        uint64_t size = (uint64_t)v->count * cairn_type_size(v->type);
        if (x->lossy)
            cz_model_lossy(v->ptr, &sh, &env, &x->m);
        else
            cz_model_lossless(v->ptr, size, (uint8_t)v->type, &sh, &env, &x->m);
    }
    rc = vote(ctx, p, np, rc);
    if (ctx->rank == 0)
        cn_debug("auto: %zu variable(s) modelled and agreed in %.6f s (levels 0x%x)", np,
                 MPI_Wtime() - t0, levels);
    free(p);
    return api_agree(ctx, rc);
}
