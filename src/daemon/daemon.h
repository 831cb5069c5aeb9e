/*
 * daemon.h - the contract of src/daemon: cairnd, one per node, an MPI
 * program of its own (its communicator carries the ring and the flush).
 *
 *   cairnd.c  main: arguments, configuration, the node's name, the context
 *             (dctx.c), generations left half-done by a previous daemon
 *             queued again, then serve and work until told to stop.
 *   serve.c   the socket thread: accepts the node's ranks and the CLI on
 *             <node dir>/cairnd.sock (same user only), answers at once, and
 *             queues the work for the main thread.
 *   drain.c   the newest complete generation to the PFS on request; the
 *             generations a dead daemon left behind, queued again.
 *   work.c    the main thread: every tick the daemons agree (a non-blocking
 *             MPI_Iallreduce, so an idle daemon sleeps) on the next thing to
 *             do, the oldest generation a newer full one does not make
 *             wasted work: raise it, flush it, prune; then
 *             drains and flushes asked for by the CLI; then stop. While a
 *             client holds them (HOLD: the library is about to remove or
 *             rewrite generation directories) they all do nothing at all.
 *   prio.c    the work at idle CPU and I/O priority unless someone waits for
 *             it, on the cores the ranks of the host do not use.
 *   dctx.c    the daemon's context (a cairn_ctx of src/api): one rank per
 *             node, doing the node leaders' part of levels 2-4 for a job it
 *             did not start; the job's layout adopted from a manifest.
 *
 * The state below is shared by the two threads under MU; only the main
 * thread calls MPI.
 */
#ifndef CAIRN_DAEMON_H
#define CAIRN_DAEMON_H

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/types.h>
#include <stdint.h>

#include "api/api.h"

typedef struct d_gen {
    int64_t id;
    int level;                   /* 1..3, or 4: the highest local level, and flush */
    int flush;
    double queued;               /* d_now() when it was queued */
} d_gen;

typedef struct d_prio {          /* prio.c's, under its MU (boost_after, work_tid: fixed) */
    pthread_mutex_t mu;
    int boost_after;             /* daemon.boost_after, seconds */
    int idle_nice;               /* the autogroup's nice while idle (daemon.share) */
    pid_t work_tid;              /* the main thread */
    pid_t *others;               /* threads left as they are (socket thread, MPI's) */
    size_t nothers;
    bool started, cpu_idle;      /* SCHED_IDLE usable: a thread can leave it again */
    bool own_group;              /* a session (autogroup) of its own: its weight is ours */
    bool warned;
    atomic_int lent;             /* d_lock gave the work thread normal priority */
    int idle;                    /* applied: 1 idle, 0 normal, -1 not yet (or lent) */
    double applied;              /* d_now() of the last application */
    cpu_set_t cpus, pinned;      /* the CPUs the daemon may use; those the work is on */
    int64_t *gather;             /* 2 per daemon, for d_prio_place */
    /* the burst budget (CPU seconds): earned at RATE, spent by the process's
     * CPU time, within -CAP..CAP (prio.c's bank) */
    double share, burst;         /* daemon.share as a fraction; daemon.burst, seconds */
    double rate, cap, credit;
    double banked, banked_cpu;   /* d_now() and the process's CPU time when last counted */
    bool bursting;               /* at normal priority for the budget alone */
} d_prio;

typedef struct d_state {
    pthread_mutex_t mu;
    d_gen *queue;                /* ascending ids, none <= done */
    size_t nqueue, capqueue;
    int64_t done, flushed;       /* newest generation worked on / on the PFS, -1 none */
    int busy;
    bool flushing;               /* work.c: a generation is on its way to the PFS */
    int stop;                    /* 1 STOP: finish the queue, then exit; 2 SIGTERM/SIGINT:
                                  * the same, then drain to the PFS (if one is set) */
    int flush_asked;             /* FLUSH requests since the last flush */
    double flush_since;          /* d_now() when the oldest of them came */
    bool waited;                 /* a drain, stop or hold waits on some daemon (work.c agrees) */
    pthread_cond_t asked;        /* the socket thread handled a request: an idle tick ends */
    bool ask;                    /* (its flag, so that no signal is lost) */
    int *drain_fds;              /* DRAIN clients waiting for DONE (dup'd, owned here) */
    size_t ndrain;
    int holds;                   /* connected clients that sent HOLD */
    int *hold_fds;               /* of them, those waiting for the OK (dup'd, owned here) */
    size_t nhold;
    /* HELLO must match these */
    char job[CN_JOB_MAX + 1], node[CN_JOB_MAX + 1];
    uint64_t key;
    /* the socket thread */
    int listen_fd, wake[2];
    int dirfd;                   /* the node directory, the socket thread's own */
    pthread_t thread;
    bool serving;
    d_gen seen;                  /* work.c's: the newest queued generation last looked at, */
    bool seen_full;              /* and whether it is full */
    d_prio prio;
} d_state;

extern volatile sig_atomic_t d_signalled;

/* Queue generation ID (unless done or queued already). Takes MU. */
void d_enqueue(d_state *st, int64_t id, int level, int flush);
/* serve.c: listen on the node directory's socket; then (once every daemon
 * listens, so that one answering means all do) start the thread. */
int d_serve_start(d_state *st, int nodefd, cn_err *err);
int d_serve_go(d_state *st, cn_err *err);
/* Stop the thread, remove the socket, close every client. */
void d_serve_stop(d_state *st, int nodefd);
/* Called once every daemon has agreed to hold (no work in progress, none
 * started until no HOLD is left): answer OK to the clients waiting. */
void d_hold_answer(d_state *st);
/* work.c: the main loop, until a stop is agreed. */
void d_run(d_state *st, cairn_ctx *ctx);
/* work.c, shared with drain.c: MIN over the daemons, sleeping while waiting;
 * generation ID's manifest on this node (of this job); mark the state idle
 * with DONE and FLUSHED (-1: unchanged); sleep. */
int d_agree_min(cairn_ctx *ctx, int64_t *v, int n);
int d_read_manifest(cairn_ctx *ctx, int64_t id, cn_manifest *m);
void d_set_busy(d_state *st, int busy, int64_t done, int64_t flushed);
void d_sleep_ms(long ms);
/* work.c: the socket thread handled a request: end the work thread's idle tick. */
void d_ask(d_state *st);
/* drain.c: flush the newest generation complete on every node unless the
 * PFS has it; answer the first NDRAIN waiting DRAIN clients, forget NFLUSH
 * FLUSH requests. */
void d_drain(d_state *st, cairn_ctx *ctx, size_t ndrain, int nflush);
/* drain.c: queue the generations of this node a dead daemon left below the
 * level they were written for (newer than any raised one), and the newest
 * one owed to the PFS that is not there (unless a newer one is). */
void d_resume(d_state *st, cairn_ctx *ctx);
/* prio.c: monotonic seconds. */
double d_now(void);
/* prio.c: before the socket thread starts, on the main thread: what the
 * host allows (SCHED_IDLE, CPUs), for NDAEMONS daemons, boosted after
 * BOOST_AFTER seconds, SHARE percent of a CPU while idle; CAIRN_ENOMEM. */
int d_prio_init(d_state *st, int boost_after, int share, int burst, int ndaemons, cn_err *err);
/* prio.c: the autogroup nice whose weight is SHARE percent against one
 * session at nice 0 (19 for 0; 0 for 50). */
int d_prio_share_nice(int share);
/* prio.c: once the socket thread runs: the threads there are now stay as
 * they are; the work goes to the priority d_prio_update chooses. */
void d_prio_start(d_state *st);
/* prio.c, the socket thread (and d_prio_start, and the work thread as a
 * flush begins and ends), MU not held: idle priority unless someone waits
 * for the work (drain, hold, stop, a queue or flush older than boost_after)
 * or a flush spends the daemon's savings (daemon.burst), until they are
 * spent. */
void d_prio_update(d_state *st);
/* prio.c, the socket thread: how long it may poll before d_prio_update is
 * due (shorter while a burst spends savings). */
int d_prio_poll_ms(const d_state *st);
/* prio.c: take MU from the socket thread; if the work thread holds it, lend
 * that normal priority first (it may be preempted at idle priority). */
void d_lock(d_state *st);
/* prio.c, collective over the daemons: the work to the CPUs the NLOCAL ranks
 * of this node (-1 unknown) and those of the host's other nodes leave spare. */
int d_prio_place(d_state *st, cairn_ctx *ctx, int nlocal);
void d_prio_free(d_state *st);

/* This daemon's node (GIVEN, else the library's rule: cn_node_name) into NODE,
 * and the log's prefix "cairnd JOB node NODE" (cairnd.c). */
void d_node_log(const cn_config *cfg, const char *job, const char *given,
                char node[CN_JOB_MAX + 1]);
/* cairnd --flush-node (flushnode.c): the epilog's flush of this node's part,
 * MPI never initialized; the exit status. */
int d_flush_node_main(int argc, char **argv);

/* A daemon's context (dctx.c), collective over the daemons' COMM (one rank
 * per node): configuration CFG, job JOB, this node's name NODE; its node
 * directory opened. api_dctx_layout: adopt the job layout of manifest M
 * (this node's, of the generation about to be worked on; NULL if it has
 * none), reordering the daemons so that rank = node index. */
int api_dctx_open(MPI_Comm comm, const cn_config *cfg, const char *job, const char *node,
                  cairn_ctx **out, cn_err *err);
int api_dctx_layout(cairn_ctx *ctx, const cn_manifest *m);

#endif /* CAIRN_DAEMON_H */
