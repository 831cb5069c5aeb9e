/*
 * work.c - cairnd's main thread: the daemons agree on what to do, then do it
 * together.
 *
 * Every tick each daemon offers what it has (the oldest queued generation
 * worth working on: behind, the newest full one comes before older ones it
 * supersedes, which are passed over unless owed a flush; a drain or flush
 * asked for, a stop) in one non-blocking MPI_Iallreduce (MIN), polled with
 * short sleeps so that idle daemons leave the cores to the application (the
 * work itself runs at idle priority: prio.c). The agreed generation goes
 * first, on every daemon at once, whether or not its own GEN has arrived
 * yet: the library sends GEN only once the generation is complete at level 1
 * on every node. For it:
 *   1. the node's manifest gives the job layout (api_dctx_layout);
 *   2. flush it to the PFS if asked (flush.c): first, as the copy the
 *      checkpoint asked for, so that it is complete as early as it can be;
 *   3. raise to its level (raise.c), unless its parent in an incremental
 *      chain is below that level (then it stays at level 1, with a warning)
 *      or a newer full generation is queued for that level on every node
 *      (then raising it is wasted: the daemons are behind, catch up);
 *   4. prune the generations older than it (prune.c).
 * A HOLD anywhere comes first: while one is held (work.c agrees on it each
 * tick) no daemon starts anything, so the library may remove or rewrite
 * generation directories without a daemon reading or writing them half-way.
 * With the queue empty, a drain flushes the newest generation complete on
 * every node unless the PFS has it already, and answers the waiting clients;
 * a flush does the same without an answer; a stop ends the loop, after a
 * drain if it came as SIGTERM (a scheduler ending the job ends the daemons'
 * step before its epilog could ask for one).
 */
#include "daemon/daemon.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TICK_MS 25

void d_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The work thread: a flush begins or ends (a burst is for flushes: prio.c). */
static void set_flushing(d_state *st, bool on)
{
    pthread_mutex_lock(&st->mu);
    st->flushing = on;
    pthread_mutex_unlock(&st->mu);
    d_prio_update(st);
}

void d_ask(d_state *st)
{
    d_lock(st);
    st->ask = true;
    pthread_cond_signal(&st->asked);
    pthread_mutex_unlock(&st->mu);
}

/* One idle tick: TICK_MS, or until the socket thread handles a request (a
 * generation handed over starts at once, not a tick later). */
static void idle_tick(d_state *st)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += TICK_MS * 1000000L;
    ts.tv_sec += ts.tv_nsec / 1000000000L, ts.tv_nsec %= 1000000000L;
    pthread_mutex_lock(&st->mu);
    while (!st->ask && pthread_cond_timedwait(&st->asked, &st->mu, &ts) == 0)
        ;
    st->ask = false;
    pthread_mutex_unlock(&st->mu);
}

/* MIN over the daemons of V[0..N-1], sleeping while others catch up. */
int d_agree_min(cairn_ctx *ctx, int64_t *v, int n)
{
    MPI_Request req;
    if (MPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_INT64_T, MPI_MIN, ctx->comm, &req) != MPI_SUCCESS)
        return CAIRN_EMPI;
    for (int done = 0;;) {
        if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return CAIRN_EMPI;
        if (done)
            return 0;
        d_sleep_ms(1);
    }
}

int d_read_manifest(cairn_ctx *ctx, int64_t id, cn_manifest *m)
{
    char gen[64];
    cn_gen_dirname(gen, sizeof gen, id);
    int fd = cn_dir_open(ctx->nodefd, gen, false, &ctx->err);
    if (fd < 0)
        return fd;
    int rc = api_read_manifest(ctx, fd, m);
    close(fd);
    if (rc == 0 && strcmp(m->job, ctx->job) != 0) {
        cn_manifest_free(m);
        rc = cn_fail(&ctx->err, CAIRN_ECONFIG, "%s belongs to job %s", gen, m->job);
    }
    return rc;
}

void d_set_busy(d_state *st, int busy, int64_t done, int64_t flushed)
{
    pthread_mutex_lock(&st->mu);
    st->busy = busy;
    if (done > st->done)
        st->done = done;
    if (flushed > st->flushed)
        st->flushed = flushed;
    while (st->nqueue && st->queue[0].id <= st->done)
        memmove(st->queue, st->queue + 1, --st->nqueue * sizeof *st->queue);
    pthread_mutex_unlock(&st->mu);
}

/* Generation ID's parent on this node is at LEVEL or above (or it has none). */
static int parent_ok(cairn_ctx *ctx, const cn_manifest *m, int level)
{
    if (m->parent < 0)
        return 0;
    cn_manifest p;
    int rc = d_read_manifest(ctx, m->parent, &p);
    if (rc == 0 && (int)p.level < level)
        rc = cn_fail(&ctx->err, CAIRN_ESTATE, "its parent, generation %lld, is at level %u",
                     (long long)m->parent, p.level);
    if (rc == 0)
        cn_manifest_free(&p);
    return rc;
}

/* Is raising ID to LEVEL wasted work: the newest generation queued here is
 * newer, full (nothing newer can depend on ID) and asked for at LEVEL or
 * above? Then ID would be pruned as soon as that one is raised. */
static bool superseded(d_state *st, cairn_ctx *ctx, int64_t id, int level)
{
    pthread_mutex_lock(&st->mu);
    d_gen last = st->nqueue ? st->queue[st->nqueue - 1] : (d_gen){-1, 0, 0, 0};
    pthread_mutex_unlock(&st->mu);
    cn_manifest m;
    if (last.id <= id || api_local_level(ctx, last.level) < level ||
        d_read_manifest(ctx, last.id, &m) != 0) {
        cn_err_clear(&ctx->err);
        return false;
    }
    bool full = m.parent < 0;
    cn_manifest_free(&m);
    return full;
}

/* Is the newest queued generation G full (nothing newer queued can need an
 * older one)? Its manifest is read once per hand-over (work thread only; a
 * generation handed over again, rewritten, is queued anew at another time). */
static bool newest_full(d_state *st, cairn_ctx *ctx, d_gen g)
{
    if (g.id == st->seen.id && g.queued == st->seen.queued)
        return st->seen_full;
    cn_manifest m;
    if (d_read_manifest(ctx, g.id, &m) != 0) {
        cn_err_clear(&ctx->err);
        return false; /* not yet readable here: look again next tick */
    }
    st->seen = g;
    st->seen_full = m.parent < 0;
    cn_manifest_free(&m);
    return st->seen_full;
}

/* What this daemon offers to work on next: the oldest queued generation
 * unless the newest queued one is full and at its level or above, and it is
 * owed no flush: then raising it is wasted work (it would be pruned once the
 * newest is raised), so the newest generation goes first, and the older
 * ones go with it (d_set_busy drops what is at or below the one done). A
 * flush owed is never passed over: that generation is offered, and work_gen
 * flushes it (its raise skipped when superseded). -1: nothing (every id of
 * 0..INT64_MAX is one the API takes).
 * The daemons agree on the MIN of their offers, so a generation is passed
 * over only where every daemon that holds it passes it over; and one that a
 * daemon has not been handed yet cannot be: its node leader hands over G
 * before checkpoint G returns, so a daemon holds G + 1 only once every other
 * holds G (or is done with it), and offers G or less. */
static int64_t next_offer(d_state *st, cairn_ctx *ctx)
{
    pthread_mutex_lock(&st->mu);
    d_gen last = st->nqueue ? st->queue[st->nqueue - 1] : (d_gen){-1, 0, 0, 0};
    int64_t oldest = st->nqueue ? st->queue[0].id : -1;
    bool several = st->nqueue > 1;
    pthread_mutex_unlock(&st->mu);
    if (!several || !newest_full(st, ctx, last))
        return oldest;
    pthread_mutex_lock(&st->mu);
    int64_t offer = -1;
    for (size_t i = 0; i < st->nqueue && offer < 0; i++) {
        d_gen g = st->queue[i];
        if (g.id > last.id)
            break; /* queued since: the next tick looks again */
        if (g.id == last.id || g.flush || g.level == CAIRN_LEVEL_PFS || g.level > last.level)
            offer = g.id;
    }
    pthread_mutex_unlock(&st->mu);
    return offer;
}

static void work_gen(d_state *st, cairn_ctx *ctx, int64_t id)
{
    int64_t v[2] = {0, 0};
    pthread_mutex_lock(&st->mu);
    for (size_t i = 0; i < st->nqueue; i++)
        if (st->queue[i].id == id)
            v[0] = -st->queue[i].level, v[1] = -st->queue[i].flush;
    st->busy = 1;
    pthread_mutex_unlock(&st->mu);
    if (d_agree_min(ctx, v, 2) != 0) {
        cn_error("MPI failed while agreeing on generation %lld", (long long)id);
        return;
    }
    const char *delay = getenv("CAIRN_DAEMON_DELAY_MS"); /* tests: hold each generation */
    if (delay)
        d_sleep_ms(atol(delay));
    cn_fault_point("cairnd.gen", id, ctx->rank); /* drills: a daemon dies here */
    int level = (int)-v[0], flush = (int)-v[1] || level == CAIRN_LEVEL_PFS;
    cn_manifest m = {0};
    bool have = d_read_manifest(ctx, id, &m) == 0;
    int rc = api_dctx_layout(ctx, have ? &m : NULL);
    int nlocal = rc == 0 ? 0 : -1;
    for (int r = 0; rc == 0 && r < ctx->nranks; r++)
        nlocal += (int)ctx->rank_node[r] == ctx->node;
    if (d_prio_place(st, ctx, nlocal) != 0)
        cn_warn("MPI failed while placing the work on CPUs");
    int64_t flushed = -1;
    if (rc == 0) {
        level = api_local_level(ctx, level);
        /* the PFS copy first: it is what the checkpoint asked for, and the
         * parity raised after it only speeds up a rebuild */
        if (flush)
            set_flushing(st, true);
        if (flush && api_flush(ctx, (long)id) == 0) {
            flushed = id;
            if (ctx->rank == 0)
                cn_info("generation %lld flushed to the PFS", (long long)id);
        } else if (flush)
            cn_warn("%s", ctx->msg);
        if (flush)
            set_flushing(st, false);
        int64_t need = -(int64_t)((int)m.level < level); /* on any node: all raise it again */
        if (d_agree_min(ctx, &need, 1) != 0)
            need = 0;
        int64_t skip = need && superseded(st, ctx, id, level); /* on every node: skip */
        if (d_agree_min(ctx, &skip, 1) != 0)
            skip = 0;
        if (skip && ctx->rank == 0) /* info: one line per generation, daemon 0's */
            cn_info("generation %lld not raised: a newer full one is queued", (long long)id);
        if (level > CAIRN_LEVEL_LOCAL && need && !skip) {
            rc = api_agree(ctx, parent_ok(ctx, &m, level));
            rc = rc < 0 ? rc : api_raise(ctx, (long)id, level);
            if (rc < 0)
                cn_warn("generation %lld stays at level %u: %s", (long long)id, m.level,
                        ctx->msg);
            else if (ctx->rank == 0)
                cn_info("generation %lld raised to level %d", (long long)id, level);
        }
        api_prune(ctx, (long)id, API_PRUNE_OLDER);
    } else {
        cn_warn("generation %lld left as it is: %s", (long long)id, ctx->msg);
    }
    if (have)
        cn_manifest_free(&m);
    d_set_busy(st, 0, id, flushed);
}

/* The node directory afresh: it may have been wiped and made again (a
 * replaced node restarted into it) since the last piece of work. */
static int reopen(cairn_ctx *ctx)
{
    if (ctx->nodefd >= 0)
        close(ctx->nodefd);
    ctx->nodefd = -1;
    return api_open_node_dir(ctx);
}

void d_run(d_state *st, cairn_ctx *ctx)
{
    for (;;) {
        pthread_mutex_lock(&st->mu);
        if (d_signalled)
            st->stop = 2; /* SIGTERM: the scheduler ends the job; save what can be saved */
        int64_t v[5] = {INT64_MAX, -st->stop, -!!st->ndrain, -!!st->flush_asked, -!!st->holds};
        size_t ndrain = st->ndrain;
        int nflush = st->flush_asked;
        size_t nqueue = st->nqueue;
        int64_t newest = nqueue ? st->queue[nqueue - 1].id : -1;
        pthread_mutex_unlock(&st->mu);
        /* tests: the daemons take nothing until the application is done
         * (cairnd.offer:until=PATH), but still agree each tick, so that a
         * HOLD, drain or stop asked meanwhile is answered */
        bool held_back = nqueue && cn_fault_waiting("cairnd.offer", newest, ctx->rank);
        /* v[0]: the offer as id + INT64_MIN (INT64_MIN..-1), so that the MIN is the
         * oldest offer and INT64_MAX, none, is above every id (up to INT64_MAX) */
        int64_t offer = held_back ? -1 : next_offer(st, ctx);
        v[0] = offer < 0 ? INT64_MAX : offer + INT64_MIN;
        if (d_agree_min(ctx, v, 5) != 0) {
            cn_error("MPI failed between the daemons; stopping");
            return;
        }
        pthread_mutex_lock(&st->mu); /* a drain, stop or hold that one daemon was asked */
        st->waited = v[1] || v[2] || v[4]; /* for: all work at normal priority (prio.c) */
        pthread_mutex_unlock(&st->mu);
        if (v[4]) { /* held: every daemon is between two pieces of work, and stays so */
            d_hold_answer(st);
            d_sleep_ms(TICK_MS);
            continue;
        }
        if ((v[0] != INT64_MAX || v[2] || v[3]) && reopen(ctx) != 0)
            cn_warn("%s", ctx->err.msg);
        if (v[0] != INT64_MAX)
            work_gen(st, ctx, v[0] - INT64_MIN);
        else if (v[2] || v[3])
            d_drain(st, ctx, ndrain, nflush);
        else if (v[1] && v[1] < -1 && ctx->cfg.pfs_dir[0]) {
            cn_info("terminated: draining the newest complete generation to the PFS first");
            d_drain(st, ctx, 0, 0);
            return;
        } else if (v[1])
            return;
        else
            idle_tick(st);
    }
}
