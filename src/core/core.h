/*
 * core.h - the contract of src/core: the context every level works in. The
 * struct cairn_ctx and its variable table (api_var), the collective
 * discipline (api_agree, api_echo), the job/node model and node directory,
 * node manifests, the inventory of generations (api_gen), the routed files'
 * staging directory, and the few checks the levels ask of the job (usable
 * levels, the lost note). Included by every level (src/levels/<level>),
 * src/remap and src/api; it includes no level and nothing of src/api.
 *
 *   ctx.c         api_agree/api_echo, the job/rank/node model (emulated
 *                 nodes), encoding sets, the node-local directories.
 *   services.c    the variable table, the level checks, the lost note, the
 *                 routed files' staging directory, the layout record lookup.
 *   manifest.c    node manifests: read, write, raise the level, match the job.
 *   inventory.c   which generations exist and are complete on every rank.
 *
 * Collective discipline: every public collective function ends each phase
 * with api_agree(), so all ranks return the same code and message.
 */
#ifndef CAIRN_CORE_H
#define CAIRN_CORE_H

#include "cairn.h"

#include <pthread.h>
#include "common/common.h"
#include "incr/incr.h"

typedef struct api_var {
    char name[CAIRN_NAME_MAX + 1];
    uint8_t kind;                 /* CN_KIND_VAR or CN_KIND_FILE (routed file) */
    cairn_type type;
    void *ptr;                    /* borrowed from the application */
    size_t count;
    int ndims;
    size_t dims[CAIRN_MAX_DIMS];
    double bound;                 /* absolute error bound, 0 = lossless */
    double rel_bound;             /* ... or relative to the value range, 0 = none */
    int codec;                    /* cz_id, CZ_AUTO, or -1: compress.codec */
    int chosen;                   /* CZ_AUTO's last pick, -1 none yet */
    long chosen_at;               /* checkpoint count at that pick */
    double chosen_ratio;          /* sampled stored/raw of the pick */
    int hint;                     /* cairn_protect_hint for the next checkpoint, -1 none */
    int dist;                     /* API_DIST_NONE, _BLOCK (cairn_protect_block) or
                                   * _REPLICATED (cairn_protect_replicated) */
    int bdims;                    /* _BLOCK: dimensions of the global array, 1..3 */
    size_t global[CAIRN_MAX_DIMS], start[CAIRN_MAX_DIMS], bcount[CAIRN_MAX_DIMS];
} api_var;
#define API_DIST_NONE 0
#define API_DIST_BLOCK CN_DIST_BLOCK
#define API_DIST_REPLICATED CN_DIST_REPLICATED

/* When to checkpoint (interval.c): the clock of each level L = 1..4 ([0]
 * unused), restarted by a checkpoint complete at level L or above. Rank 0's
 * times decide; the other ranks keep theirs too. */
#define API_NEED_COSTS 4 /* costs averaged per level */
typedef struct api_need {
    double since[5];                /* MPI_Wtime of the level's last checkpoint, or cairn_init */
    long iters[5];                  /* cairn_need_checkpoint calls since then */
    double cost[5][API_NEED_COSTS]; /* the last measured costs (seconds), a ring */
    long ncost[5];                  /* costs measured so far in this run */
    double prior[5];                /* cost recorded with an existing generation; 0 none */
    double shown[5];                /* the automatic interval last logged */
    bool primed;                    /* prior[] read (ckpt.auto, first call) */
    bool warned;                    /* levels configured but impossible: said once */
} api_need;

struct cairn_ctx {
    MPI_Comm comm;                /* duplicate of the application's, errors return */
    MPI_Comm node_comm;           /* the ranks of this (possibly emulated) node */
    int rank, size;               /* in COMM */
    int nranks;                   /* ranks of the job: SIZE in an application; the job's
                                   * in a daemon, whose COMM has one rank per node */
    int node, nnodes;             /* this rank's node index, node count */
    int node_rank, node_size;     /* rank within the node; node_rank 0 leads */
    MPI_Comm leaders;             /* node leaders only (rank = node index), else NULL */
    MPI_Comm set_comm;            /* leaders of this node's encoding set (rank = member) */
    int set, nsets;               /* this node's encoding set and the count of sets */
    int set_member, set_n;        /* member index in the set, members in the set */
    int min_set;                  /* size of the smallest set */
    uint32_t *rank_node;          /* size entries: node index of every rank */
    char node_name[CN_JOB_MAX + 1];
    const char *node_from;        /* where node_name came from (cn_node_name); NULL in a daemon */
    char job[CN_JOB_MAX + 1];
    cn_config cfg;
    int io;                       /* resolved CN_IO_WRITE or CN_IO_PMEM */
    bool hash_thread;             /* a core to spare per rank: checksum in a thread */
    int cores_per_rank;           /* cores of the host / ranks on it, at least 1 */
    double core_share;            /* the share of a core a level-4 writer can count on:
                                   * cairnd's (daemon.share of the host, split among its
                                   * daemons); a rank's when the host has fewer cores
                                   * than ranks; 0: whole cores */
    long nckpt;                   /* checkpoints written by this context */
    unsigned levels_seen;         /* bits 1 << L: the levels auto's last choice weighed
                                   * (api_job_levels), 0 before the first */
    int nodefd;                   /* <base>/cairn-<uid>/<job>/<node> */
    int filesfd;                  /* <node>/files/rank-<r> (routed files) */
    char node_path[4400];
    char files_path[4500];
    api_var *vars;
    size_t nvars, cap;
    long last_id;                 /* newest generation written or restored, -1 none */
    char label[CAIRN_LABEL_MAX + 1]; /* cairn_label for the next checkpoint, "" none */
    char gen_label[CAIRN_LABEL_MAX + 1]; /* the checkpoint being written: rank 0's label */
    double ckpt_t0;               /* its start (MPI_Wtime on rank 0) ... */
    bool timing;                  /* ... while cairn_checkpoint runs */
    char msg[CN_MSG_MAX + 64];    /* last error message (cairn_errmsg) */
    char pfs_job[CN_JOB_MAX + 1]; /* the job api_pfs_newest found a generation of:
                                   * this one, or job.restart_from */
    char layout_note[256];        /* set by the inventory: a generation of another layout */
    double pfs_probed;            /* the PFS's write bytes/s as probed (levels/pfs/probe.c);
                                   * 0 not yet, < 0 failed */
    double l4_raise_s, l4_pfs_s;  /* rank 0: the last synchronous level 4's seconds for its
                                   * parity (or partner) copy and its PFS copy; 0 none */
    int l4_skipped;               /* synchronous level-4 checkpoints since one kept it */
    int pfs_as_fast;              /* api_pfs_as_fast's answer: 0 not asked, 1 yes, -1 no */
    uint64_t *pfs_files;          /* rank 0: a straight level 4's files, 4 words a rank
                                   * (levels/pfs/direct.c), once needed */
    struct cz_agg_memo *pfs_memo; /* level 4's codec picks, kept for compress.resample
                                   * generations (levels/pfs/flush.c, agg_auto.c) */
    char pfs_note[256];           /* set by api_pfs_newest: a PFS generation of another layout */
    int lost_code;                /* restart: CAIRN_ECORRUPT or CAIRN_ELOST when a generation */
    long lost_id, lost_bound;     /* <= lost_bound exists but cannot be used: the newest such */
    char lost_note[CN_MSG_MAX];   /* (api_note_lost), and why */
    bool echo;                    /* ctx->err only echoes another rank's failure */
    pthread_t trash_thread;       /* removes pruned generations in the background */
    bool trash_running;
    pthread_t pfs_trash_thread;   /* the same on the PFS (first leader) */
    bool pfs_trash_running;
    incr_tab *incr[4];            /* [L], L = 1..3: block hashes of the newest generation at
                                   * level >= L written or restored: the next level-L parent */
    api_need need;                /* cairn_need_checkpoint's clocks (interval.c) */
    int dfd;                      /* node leader: socket to cairnd, -1 none */
    int hold_fd;                  /* node leader: a HOLD on the daemons, -1 none */
    int live_fd;                  /* node leader: <node>/app.lock (live.c), -1 none */
    bool live_busy;               /* node leader: CN_LIVE_BUSY read-locked (live.c) */
    bool daemon;                  /* node leader: dfd is a live, accepted connection */
    bool async;                   /* every rank: the job hands levels 2-4 to cairnd */
    bool daemon_warned;           /* said once why the job is not async */
    cn_err err;                   /* scratch for the current call */
};

/*
 * Collective. Agree on RC across ranks: returns the most negative code of any
 * rank's own failure, or if every failure is an echo (api_echo) of one
 * elsewhere, the most negative echo (0 if all succeeded); on failure,
 * ctx->msg becomes "rank R: message" from the lowest failing rank with that
 * code (an original failure before an echo), on every rank.
 */
int api_agree(cairn_ctx *ctx, int rc);
/* api_agree for a collective after node leaders waited for cairnd: its
 * waiting ranks nap (api_allreduce_napping below), leaving the cores to the
 * daemons that have still to answer. api_agree naps too where the cores are
 * shared (ctx->core_share > 0: a daemon, or more ranks than cores): a rank
 * spinning there takes the core from the one it waits for. */
int api_agree_napping(cairn_ctx *ctx, int rc);
/*
 * Collective. MPI_Allreduce of COUNT values, but a rank that waits sleeps
 * (MPI_Iallreduce, tested with a growing nap of at most 0.25 ms) instead of
 * spinning: for the collective after a hand-over to cairnd, whose answer
 * would otherwise wait behind the spinning ranks of its node (prio.c).
 * 0 or CAIRN_EMPI.
 */
int api_allreduce_napping(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op,
                          MPI_Comm comm);
/* The same for MPI_Gather of COUNT values of every rank to ROOT. */
int api_gather_napping(const void *in, void *out, int count, MPI_Datatype type, int root,
                       MPI_Comm comm);
/* MPI_Allreduce, napping where the cores are shared (as api_agree). */
int api_allreduce_shared(const cairn_ctx *ctx, const void *in, void *out, int count,
                         MPI_Datatype type, MPI_Op op, MPI_Comm comm);
/* Every public call on a context starts here: the scratch error and the
 * message cairn_errmsg returns are cleared, so a call that succeeds leaves ""
 * and a failed one's message is its own. */
void api_enter(cairn_ctx *ctx);

/* "8 ranks on 4 nodes" into BUF. */
void api_layout_str(char *buf, size_t len, int nranks, int nnodes);
/* Restart (services.c): generation ID exists but cannot be used (CODE:
 * CAIRN_ECORRUPT or CAIRN_ELOST, and why). Kept if ID is the newest so far
 * and <= ctx->lost_bound; restart reports it when nothing can be restored,
 * instead of CAIRN_ENOENT. Local. */
void api_note_lost(cairn_ctx *ctx, long id, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Can this job checkpoint at LEVEL (1..4)? 0, or CAIRN_EINVAL / CAIRN_ECONFIG
 * with the reason in ERR: level 4 without pfs.dir, level 2 on one node,
 * level 3 with too few nodes in a set (services.c). Local. */
int api_level_usable(const cairn_ctx *ctx, int level, cn_err *err);

/* Encoding sets: nodes split into nsets contiguous sets of nearly equal size. */
int api_set_of(int node, int nnodes, int nsets);
int api_set_first(int set, int nnodes, int nsets);

/* The node-local level a checkpoint at LEVEL reaches: level 4 is also held
 * at the highest of 3 and 2 the job can do. */
int api_local_level(const cairn_ctx *ctx, int level);
/* Node manifests (manifest.c). Read and decode the manifest in GENFD. */
int api_read_manifest(cairn_ctx *ctx, int genfd, cn_manifest *m);
/* Encode M and write it atomically as GENFD/manifest. */
int api_write_manifest(cairn_ctx *ctx, int genfd, const cn_manifest *m);
/* Rewrite this node's manifest with LEVEL (after a higher level completed),
 * and SECONDS unless it is negative. */
int api_set_manifest_level(cairn_ctx *ctx, int genfd, int level, double seconds);
/* Was M written by a job of this job's rank/node layout? */
bool api_same_layout(const cairn_ctx *ctx, const cn_manifest *m);
/* Node leader: may generation ID on this node be written over? Not when a
 * job of another layout (or another job) wrote it: CAIRN_EMISMATCH naming
 * both layouts. One without a readable manifest may. */
int api_may_replace(cairn_ctx *ctx, long id);
/* ... and is it generation ID of this job, for node NODE? */
bool api_manifest_of(const cairn_ctx *ctx, const cn_manifest *m, long id, int node);

/* Record CODE as the echo of a failure elsewhere ("another member failed"),
 * so that api_agree reports the original message instead. Returns CODE. */
int api_echo(cairn_ctx *ctx, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The context's setup (cairn_init, src/api/ctx.c), in order, each step
 * agreed by the caller: the rank -> node model, the job id, the node and
 * routed files directories. api_open_node_dir and api_build_sets are
 * shared with the daemon's context (src/daemon/dctx.c): the node directory
 * <base>/cairn-<uid>/<job>/<node> opened (created) as ctx->nodefd; the
 * leaders' and sets' communicators. api_ctx_release closes and frees what
 * the context owns here (api_ctx_free, src/api, first ends what the levels
 * and the daemon hold). */
int api_node_model(cairn_ctx *ctx);
int api_choose_job(cairn_ctx *ctx);
int api_open_dirs(cairn_ctx *ctx);
int api_open_node_dir(cairn_ctx *ctx);
int api_build_sets(cairn_ctx *ctx);
void api_ctx_release(cairn_ctx *ctx);

/* Distributed and replicated variables: every rank file of a context with
 * such variables holds one more raw entry, API_LAYOUT_NAME (src/api/layout.c
 * writes it). api_layout_find: in a record of LEN bytes at P, variable
 * NAME's description (cn_layout_find, src/common; ndims 1..3; a replicated
 * one is given as 1-D, its element count); 0, CAIRN_ENOENT if absent, or
 * CAIRN_ECORRUPT if the record does not parse. */
#define API_LAYOUT_NAME CN_LAYOUT_NAME
typedef cn_block api_block;
int api_layout_find(const uint8_t *p, size_t len, const char *name, api_block *b);
/* Does the context restore by remapping when the layout differs: at least
 * one variable protected, and every one distributed or replicated? */
bool api_remap_applies(const cairn_ctx *ctx);
/* A rank filter (ARG: the context): is RANK one of this node's? */
bool api_rank_on_node(void *arg, uint32_t rank);

/* Find a protected name; NULL if absent. Append a zeroed entry NAME; NULL
 * when out of memory. */
api_var *api_var_find(cairn_ctx *ctx, const char *name);
api_var *api_var_add(cairn_ctx *ctx, const char *name);
/* Remove entry V of the variable table, keeping the others in order. */
void api_var_remove(cairn_ctx *ctx, api_var *v);
/* Routed files (services.c; src/api/routed.c routes them). api_routes_end:
 * no file is routed any more (each checkpoint past its argument checks ends
 * the routes made for it).
 * api_staging_empty: remove everything in files/rank-<r>/ (after a
 * checkpoint completed: its files are in the generation). api_files_restore:
 * end the routes and make files/rank-<r>/ hold exactly the routed files of
 * checkpoint C (restart). */
void api_routes_end(cairn_ctx *ctx);
int api_staging_empty(cairn_ctx *ctx);
int api_files_restore(cairn_ctx *ctx, const cn_ckpt *c);

/* Collective inventory: ranks' local candidates and their intersection. */
typedef struct api_gen {
    long id;
    int level;
    long parent, base;            /* its chain, from the manifest (-1: full) */
    uint64_t file_size;           /* this rank's file */
    uint64_t header_sum;          /* from the manifest */
    uint64_t raw, delta;          /* this rank's bytes of state, and those it stores */
    double seconds;               /* from the manifest: its checkpoint's seconds */
    char label[CAIRN_LABEL_MAX + 1]; /* ... and label */
    bool rebuilt;                 /* query.c: not on disk; a restart would rebuild it first */
} api_gen;

/* Local: RANK's usable generations (RANK of this node: valid manifest naming
 * it, file of the right size present, and so for every ancestor in its
 * chain), newest first. Allocates *OUT. */
int api_local_gens(cairn_ctx *ctx, int rank, api_gen **out, int *n);
/* Collective: the newest id <= BOUND present in every rank's list, or -1. */
long api_common_below(cairn_ctx *ctx, const api_gen *g, int n, long bound, int *rc);
const api_gen *api_gen_find(const api_gen *g, int n, long id);

#endif /* CAIRN_CORE_H */
