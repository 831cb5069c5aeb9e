/*
 * api.h - the contract of src/api, which composes the layers below into the
 * public, collective API of cairn.h: protect, the commit protocol, the
 * query, the scheduling, restart. The context it works in, and the services
 * every level calls (api_agree, manifests, the inventory), are src/core
 * (core/core.h). Each level's own life (write, raise from the level below,
 * verify, restore, rebuild, prune) is its folder's, behind one contract
 * header included here: levels/local/local.h (1), levels/partner/partner.h
 * (2), levels/parity/parity.h (3 and the recovery), levels/pfs/pfs.h (4);
 * the restart onto another rank count is src/remap (remap/remap.h).
 *
 *   ctx.c         cairn_init/finalize: the context set up (src/core) and
 *                 the levels' and daemon's parts of it started and ended.
 *   bind.c        cairn_init_f: cairn_init for bindings (a Fortran handle).
 *   protect.c     the variable table: protect, unprotect, bounds, hints.
 *   routed.c      routed files: route and unroute for the next checkpoint,
 *                 (the staging directory itself: src/core).
 *   checkpoint.c  one generation: write every rank's file, agree, write the
 *                 node manifests, raise the level, prune.
 *   inventory.c   cairn_generations: the inventory (src/core) listed.
 *   layout.c      distributed and replicated variables: declared, and stored
 *                 with each checkpoint as the record API_LAYOUT_NAME.
 *   restart.c     choose, verify and restore a generation; the pass that
 *                 cairn_restart_var and cairn_var_query (restvar.c) share.
 *   query.c       cairn_restart_query: the same choice, nothing written.
 *   raise.c       a generation at level 1 raised to level 2 or 3.
 *   daemon.c      the library's side of cairnd: connect, hand over, fall back.
 *   interval.c    when to checkpoint: per-level clocks, intervals from the
 *                 config or Young/Daly from measured costs.
 *
 * Collective discipline: every public collective function ends each phase
 * with api_agree(), so all ranks return the same code and message.
 */
#ifndef CAIRN_API_H
#define CAIRN_API_H

#include "cairn.h"

#include "core/core.h"
#include "erasure/erasure.h"
#include "levels/local/local.h"
#include "levels/partner/partner.h"
#include "levels/parity/parity.h"
#include "levels/pfs/pfs.h"

/* cairn_need_checkpoint's clocks (interval.c): started by cairn_init; a
 * generation complete at LEVEL restarts those of levels <= LEVEL, and
 * SECONDS > 0 (the checkpoint's wall time) is a cost measured at LEVEL. */
void api_need_start(cairn_ctx *ctx);
void api_need_done(cairn_ctx *ctx, int level, double seconds);

/* Collective (raise.c): generation ID, complete at level 1, to LEVEL (2 or
 * 3): partner copy or parity, then every manifest marked. A failure keeps
 * it at level 1 and says so in ctx->msg. */
int api_raise(cairn_ctx *ctx, long id, int level);
/* Collective, in cairn_checkpoint: rank 0's seconds since ctx->ckpt_t0, the
 * same on every rank. */
double api_ckpt_seconds(cairn_ctx *ctx);

/* Reopen the node directory (and routed files directory): after a node's
 * directory was wiped under a live context, as a replaced node is. */
int api_reopen_dirs(cairn_ctx *ctx);
/* Collective: wait for the trash, close the daemon and the live mark, free
 * the incremental tables, then api_ctx_release (src/core). */
void api_ctx_free(cairn_ctx *ctx);

/* The node daemon (daemon.c). api_daemon_connect: collective; with
 * daemon.use = auto and no daemon yet, look for cairnd on every node: the job
 * turns async only if all nodes have one. api_daemon_gen: collective; hand
 * generation ID (complete at level 1) to the daemons, to raise to LEVEL and
 * flush if FLUSH; on any failure everyone falls back to synchronous mode
 * (warned) and it returns < 0: the caller does the work itself. */
void api_daemon_connect(cairn_ctx *ctx);
int api_daemon_gen(cairn_ctx *ctx, long id, int level, bool flush);
void api_daemon_close(cairn_ctx *ctx);
/* Node leader, local: before it removes or rewrites generation directories,
 * hold the job's daemons (cairnd answers HOLD once none works on a generation,
 * and none starts one until the hold is released); 0 when held or when no
 * daemon answers on this node (then none can be at work here), else < 0 with
 * a message (the daemons did not pause within 30 x daemon.timeout): then the
 * caller must not touch what they may hold. api_daemon_release ends it (also
 * done by api_daemon_close). */
int api_daemon_hold(cairn_ctx *ctx);
void api_daemon_release(cairn_ctx *ctx);

/* The application's mark for cairn prune (live.c), node leaders only (no-ops
 * elsewhere): open it (again, after the node directory changed) and close it;
 * begin/end bracket a checkpoint or restart: begin waits while a prune holds
 * the node (at most 30 x daemon.timeout), end publishes the parents of the
 * next checkpoints (ctx->incr) and lets a prune in. */
void api_live_open(cairn_ctx *ctx);
void api_live_close(cairn_ctx *ctx);
void api_live_begin(cairn_ctx *ctx);
void api_live_end(cairn_ctx *ctx);




/* protect.c: the protected variable NAME for call WHAT (api_enter first), or
 * NULL with the error (CAIRN_EINVAL) set in ctx. api_layout_encode (layout.c):
 * the record API_LAYOUT_NAME for the context's variables in a malloc'd *OUT
 * (*LEN bytes), or *OUT NULL when none is distributed or replicated. The
 * remap itself: remap/remap.h. */
api_var *api_var_for(cairn_ctx *ctx, const char *name, const char *what);
int api_layout_encode(const cairn_ctx *ctx, uint8_t **out, size_t *len);

/* Restart: the pass, the pick, the PFS-or-levels choice (api_restart.h). */
#include "api/api_restart.h"

#endif /* CAIRN_API_H */
