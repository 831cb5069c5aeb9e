/*
 * api_restart.h - the restart's part of src/api's contract (included by
 * api.h, never on its own): the pass that picks a generation and restores
 * it, and the choice between levels 1-3 and the PFS that cairn_restart and
 * cairn_restart_query share (restart.c). Split from api.h only to keep that
 * file readable; the types it uses (cairn_ctx, api_gen) come from api.h
 * before the include.
 */
#ifndef CAIRN_API_RESTART_H
#define CAIRN_API_RESTART_H

/*
 * Restart (restart.c). A pass over the generations picks one and does with
 * it what an api_want says: restore everything (cairn_restart), one variable
 * (cairn_restart_var) or describe one (cairn_var_query).
 */
enum { API_WANT_ALL, API_WANT_VAR, API_WANT_INFO };
typedef struct api_want {
    int what;
    const char *name;             /* VAR, INFO: the variable */
    cairn_var_info *info;         /* INFO: filled from this rank's generation */
} api_want;
/* Collective: rebuild lost nodes (api_recover), stage in from the PFS when it
 * holds something newer or nothing else can, then pick generation ID (or the
 * newest usable, CAIRN_LATEST) and do W with it; *GOT gets its id. */
int api_restart_pass(cairn_ctx *ctx, long id, const api_want *w, long *got);
/* Collective: the restart's choice between levels 1-3 and the PFS, once
 * the recovery (api_recover, or api_recover_plan for the query) gave RC
 * (0 or CAIRN_ELOST) and WHOLE (the generation levels 1-3 make whole, -1
 * none): the newest PFS generation <= BOUND (only ID unless CAIRN_LATEST)
 * to read instead, when levels 1-3 lost theirs, give none or an older one;
 * else -1. *PRC: MPI failures. */
long api_pfs_instead(cairn_ctx *ctx, long id, long bound, int rc, long whole, int *prc);
/* Collective: ctx->msg says that LOST (the message of api_recover's
 * CAIRN_ELOST) is final: the PFS holds no copy, or a damaged one (noted). */
void api_loss_message(cairn_ctx *ctx, const char *lost);
/* The restart notes (layout, PFS layout, lost) cleared, for ids <= BOUND. */
void api_notes_reset(cairn_ctx *ctx, long bound);
/* One candidate tried: 0 taken, or an agreed failure (CAIRN_ECORRUPT or
 * CAIRN_ENOENT make a CAIRN_LATEST pick go on to older ones); *BROKEN the
 * oldest broken link, -1 none, API_FINAL: a failure that is not the
 * generation's (no older one is tried). */
#define API_FINAL (-2L)
typedef int (*api_try_fn)(cairn_ctx *ctx, const api_gen *g, const api_gen *all, int n,
                          long *broken, void *arg);
/* Collective: the candidates of the inventory G[0..N-1] common to every rank,
 * newest <= BOUND first (only ID itself unless ID is CAIRN_LATEST), tried
 * with TRY_GEN until one is taken (*GOT); when none is, the code says why
 * (CAIRN_ECORRUPT, CAIRN_ELOST, CAIRN_EMISMATCH, or CAIRN_ENOENT for none at
 * all). Agreed. */
int api_pick(cairn_ctx *ctx, long id, long bound, const api_gen *g, int n, api_try_fn try_gen,
             void *arg, long *got);

#endif /* CAIRN_API_RESTART_H */
