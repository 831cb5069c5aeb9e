/*
 * api_pfs.h - level 4's part of src/api's contract (included by api.h, never
 * on its own): the flush to the PFS (flush.c, flush_incr.c, fetch.c) and the
 * way back (pfsread.c, pfsapply.c, stagein.c). Split from api.h only to keep
 * that file readable; the types it uses (cairn_ctx, lvl_src, cn_pindex,
 * api_chain) come from api.h before the include.
 */
#ifndef CAIRN_API_PFS_H
#define CAIRN_API_PFS_H

/*
 * Level 4 (flush.c, stagein.c). api_flush is collective: generation ID,
 * complete on node-local storage, to the PFS (node leaders do the work).
 * api_pfs_newest: the newest complete PFS generation <= BOUND of this job
 * and rank count, or -1 (collective; the first rank reads, *RC gets MPI
 * failures); with none and job.restart_from set, that job's, and
 * ctx->pfs_job says whose. Generations of another rank count are passed
 * over (ctx->pfs_note says so), and so are damaged ones (api_note_lost). A
 * copy staged on node-local storage by cairn-prolog
 * (<node>/stage/cairn-<uid>/<job>) is read first.
 * api_stage_in: collective, PFS generation ID (of ctx->pfs_job) back onto
 * node-local storage as a full level-1 generation of this job.
 */
int api_flush(cairn_ctx *ctx, long id);
/* As api_flush, always full (bench/l4_bench.c: an increment against the same
 * generation flushed full). */
int api_flush_full(cairn_ctx *ctx, long id);
/* A member's bytes lent from a verified rank file (DATA NULL: not lent),
 * with that file's block checksums: SUMS[b] is the XXH3-64 of bytes
 * [b * SUM_BLOCK, (b + 1) * SUM_BLOCK) of DATA, checked when it was opened. */
typedef struct api_lent {
    const uint8_t *data;
    const uint64_t *sums;
    uint64_t sum_block;
} api_lent;
/* A rank's generation materialized for a flush (layout in flush.c): META
 * bytes of records, then the data, LEN in all. A member may be lent instead:
 * LENT[i] (member i of the records) points at its bytes in the verified
 * mapping of CHAIN, which the state keeps open, and BUF holds none of them.
 * Only a state its own node writes is lent (never sent: flush.c). */
typedef struct api_state {
    uint8_t *buf;
    uint64_t len, meta;
    api_lent *lent;               /* NULL, or one per member (data NULL: in BUF) */
    struct api_chain *chain;      /* owned; NULL unless a member is lent */
} api_state;
/* A state's LEN bytes, zeroed (fetch.c); freed by api_state_free (S->buf of
 * S->len bytes, S->lent and S->chain; NULL accepted, set to NULL). */
void *api_state_alloc(uint64_t len);
void api_state_free(api_state *s);
/* One member of a state: a variable (or part of one) or routed file of RANK. */
typedef struct api_member {
    uint8_t kind, type, ndims;
    uint64_t dims[CAIRN_MAX_DIMS], count, size;
    const char *name;
    api_lent lent;                /* its SIZE bytes, lent (see api_state); data NULL: copied */
} api_member;
/* A state of RANK holding members M[0..N-1] (flush.c): records written, the
 * data zeroed; DATA[i] receives where member i's SIZE bytes go (NULL for a
 * lent member: the state points at M[i].lent.data). */
int api_state_build(cairn_ctx *ctx, int rank, const api_member *m, size_t n, api_state *out,
                    uint8_t **data);
/* Rank RANK's generation ID (of this node) rebuilt from its chain, verified,
 * into *OUT (flush.c): what a full flush writes of it. */
int api_materialize(cairn_ctx *ctx, int rank, long id, api_state *out);
/* Aggregate file F (ranks [F * GROUP, ...), of ctx->nranks) from the states ST
 * through levels/pfs.c under GENFD (flush.c); OUT: size, XXH3-64, raw bytes.
 * FETCH NULL: every state is this node's own, nothing to wait for. */
struct api_fetch;
int api_write_file(cairn_ctx *ctx, int genfd, int group, int f, const api_state *st,
                   struct api_fetch *fetch, uint64_t *out);
/* The epilog's flush (flushnode.c), no MPI: this node's ranks of generation
 * ID, written full into the PFS part of ID with this node's record, then the
 * part committed if every node's record is there. CFG, JOB and NODE as a
 * daemon's. 1 committed (by this node or another), 0 written but not yet
 * committable (WHY says what is missing), < 0 failed (ERR). */
int api_flush_node(const cn_config *cfg, const char *job, const char *node, long id, char *why,
                   size_t len, cn_err *err);
/*
 * Level 4 increments (flush_incr.c). The plan, collective over the node
 * leaders (node 0 reads the PFS at JOBFD): generation ID goes to the PFS as
 * changes to PARENT when node-local storage holds it as an increment of
 * PARENT on every rank, the PFS holds PARENT complete (index written) as the
 * newest of this job and rank count below ID, flushed from the same
 * node-local files (its source fingerprint), with its chain's indexes all
 * there and shorter than incr.full_every; otherwise full. SOURCE: the
 * fingerprint of generation ID's node-local files, for its index.
 */
typedef struct api_pfs_plan {
    bool incr;
    long parent, base;            /* incr: the PFS chain; else -1 and ID */
    uint64_t source;
    uint64_t raw;                 /* bytes of state of generation ID, all ranks */
} api_pfs_plan;
int api_flush_plan(cairn_ctx *ctx, int jobfd, long id, api_pfs_plan *plan);
/* RANK's generation ID as the changes since PLAN->parent: the delta record
 * (CN_PDELTA_NAME) and each variable's changed blocks (or whole bytes). */
int api_flush_delta(cairn_ctx *ctx, int rank, long id, const api_pfs_plan *plan,
                    api_state *out);
/* The states' way to their aggregators, overlapped with writing (fetch.c).
 * Start: collective over the leaders; ST[r] set for this node's ranks on
 * entry, and for the ranks of the groups it aggregates on return, their
 * metadata there and their data arriving. Ready (a cz_agg_opts.ready): waits
 * until bytes [P, P + LEN) of a state's data are there. End: waits for every
 * transfer, frees the fetch (NULL accepted). */
typedef struct api_fetch api_fetch;
int api_fetch_start(cairn_ctx *ctx, int group, api_state *st, api_fetch **out);
int api_fetch_ready(void *fetch, const void *p, size_t len);
int api_fetch_end(api_fetch *f);
long api_pfs_newest(cairn_ctx *ctx, long bound, int *rc);
/* Variables of one rank read back from the PFS (pfsread.c), names and data
 * owned (api_rvars_free). */
typedef struct api_rvars {
    lvl_src *src;
    size_t n, cap;
} api_rvars;
void api_rvars_free(api_rvars *rv);
/* Collective-free: the variables of the ranks WANT (with ARG) picks of the
 * PFS generation whose index is X (at JOBFD), applied through its chain from
 * its full base if it is an increment, into OUT[rank] (X->nranks entries; on
 * failure emptied). A link missing or damaged: CAIRN_ECORRUPT naming it. */
int api_pfs_read(cairn_ctx *ctx, int jobfd, const cn_pindex *x, bool (*want)(void *, uint32_t),
                 void *arg, api_rvars *out);
/* Rank RANK's variables CUR at the parent of increment LINK, with what LINK
 * stores for it (INC), become its variables at LINK (pfsapply.c). */
int api_pfs_apply(cairn_ctx *ctx, const cn_pindex *link, uint32_t rank, api_rvars *cur,
                  api_rvars *inc);
int api_stage_in(cairn_ctx *ctx, long id);
/* Collective (pfsrestore.c): every rank reads its own variables and routed
 * files of PFS generation ID (this context's pfs_job) and, once every rank
 * has them and they match what is protected, restores them; nothing
 * node-local is written. Codes as api_stage_in's. */
int api_pfs_restore(cairn_ctx *ctx, long id);
/* Collective-free: the directory (an fd) holding PFS generation ID of
 * ctx->pfs_job, its index in *X (cn_pindex_free), checked to be of this
 * job's rank count; a negative code on failure. */
int api_pfs_open_gen(cairn_ctx *ctx, long id, cn_pindex *x);
/* Where to read JOB's generation ID of the PFS (an fd of the job's
 * directory): the copy cairn-prolog staged in this node's directory
 * (<node>/stage/cairn-<uid>/<job>) if it holds ID and every link of its
 * chain (each staged whole: index last), else pfs.dir. A stage that failed
 * or holds another generation is not a reason to miss what the PFS has. */
int api_pfs_source(cairn_ctx *ctx, const char *job, long id, cn_err *err);
/* The newest complete generation <= BOUND of JOB (and of NRANKS ranks unless
 * 0) in this node's stage copy or on the PFS, whichever is newer; its index
 * in *X; -1 if none. SKIP (may be NULL): what the PFS passed over. */
long api_pfs_find(cairn_ctx *ctx, const char *job, long bound, uint32_t nranks, cn_pindex *x,
                  lvl_pfs_skip *skip, cn_err *err);
/* Collective, after a restore of generation ID from node-local storage: the
 * newest PFS generation <= ID (this job's, else job.restart_from's) is read
 * back and its files' sizes and checksums checked (each file by one node
 * leader); damage is warned, naming the file. Never fails. */
void api_pfs_check(cairn_ctx *ctx, long id);

#endif /* CAIRN_API_PFS_H */
