/*
 * local.h - the contract of src/levels/local, level 1: one checkpoint file per
 * rank in a node-local generation directory, and a node's rank files read and
 * written back as one byte stream (the payload levels 2 and 3 protect). No MPI:
 * src/api decides what is written where and agrees across ranks; this level
 * moves bytes. Called by src/api (checkpoint, restart) and by levels 2-4
 * (partner copies, parity, the PFS readers' lvl_src). Outside this folder only
 * this header is included (local_internal.h is the folder's own).
 *
 *   local.c      level 1: the rank file, written with plain write() or through
 *                libpmem, made durable and renamed into place (atomic commit).
 *   local_z.c    the same file when variables are compressed: the data section
 *                comes out of the compression pipeline (src/compress).
 *   payload.c    a node's payload for levels 2 and 3: its rank files of one
 *                generation read as one byte stream (zero-padded past the end),
 *                and the same stream written back into rank files on rebuild.
 * The collective half (over a cairn_ctx of src/api, built with mpicc):
 *   compress.c   codecs per variable (configured or auto's pick) on the way out;
 *   codec_vote.c ... auto's pick, modelled per rank and agreed by the job.
 *   incr.c       incremental checkpoints on the way out: the parent, block
 *                hashes, the diff, full or incremental (agreed), the tables.
 *   chain.c      the way back: a generation's chain verified, decoded once
 *                (checked, into buffers kept for the restore), then copied
 *                into protected memory; the tables rebuilt.
 *   prune.c      which generations a node keeps (chains, levels, store.keep);
 *   trash.c      ... and the pruned ones removed in the background (also
 *                on the PFS, for levels/pfs).
 */
#ifndef CAIRN_LEVELS_LOCAL_H
#define CAIRN_LEVELS_LOCAL_H

#include "common/common.h"
#include "compress/compress.h"
#include "incr/incr.h"

/* One thing to store: a protected variable or a routed file's contents. */
typedef struct lvl_src {
    const char *name;
    uint8_t kind;                  /* enum cn_kind */
    uint8_t type;                  /* cairn_type */
    uint8_t ndims;
    uint64_t dims[CAIRN_MAX_DIMS];
    uint64_t count;                /* elements */
    double error_bound;
    uint8_t codec;                 /* enum cz_id: CZ_RAW or a codec (never CZ_AUTO) */
    cz_shape shape;                /* lossy codecs: shape and the absolute bound; fpzip:
                                    * the shape if 2-D or 3-D (ndims 0: none) */
    const void *ptr;               /* the bytes (borrowed for the call) */
    uint64_t size;                 /* count * type size */
    /* Incremental chains (the header's incr_block is nonzero), borrowed: */
    uint8_t flags;                 /* CN_ENTRY_DELTA: store only the blocks of RUNS */
    const cn_run *runs;
    uint32_t nruns;
    const cn_h128 *hashes;         /* NHASH block hashes recorded with the entry */
    uint32_t nhash;
} lvl_src;

/* What a committed rank file looks like, for the node manifest. */
typedef struct lvl_written {
    uint64_t file_size;
    uint64_t header_sum;
    uint64_t full;                 /* bytes of the variables */
    uint64_t raw, stored;          /* of which the file holds (all, or the changed
                                    * blocks), and the bytes that took once encoded */
    double write_s;                /* time spent writing (excluding compression) */
    cz_stats z;                    /* the compression pipeline's figures, if it ran */
} lvl_written;

/*
 * Write the rank file NAME in the generation directory GENFD (path GEN_PATH,
 * used for libpmem and messages): header fields from PROTO (level,
 * generation, rank, nranks, node, nnodes, block_size, job, parent, base,
 * incr_block), entries from SRC[0..N-1], data checksummed per block as it is
 * copied. When any source has a codec or is a delta, the data goes through
 * the compression pipeline with options Z (local_z.c; a delta's runs are
 * gathered from its memory) and is checksummed as it is stored. IO is CN_IO_WRITE
 * or CN_IO_PMEM, optionally ORed with LVL_IO_HASH_THREAD to checksum in a
 * second thread (worth it only when this rank has a core to spare). The file appears under NAME only complete and durable; on
 * failure no NAME or NAME.tmp is left behind and an existing NAME is kept.
 */
#define LVL_IO_HASH_THREAD 0x100

int lvl_local_write(int genfd, const char *gen_path, const char *name, const cn_header *proto,
                    const lvl_src *src, uint32_t n, int io, const cz_opts *z, lvl_written *out,
                    cn_err *err);

/*
 * Decide how CN_IO_AUTO writes in directory DIR_PATH: CN_IO_PMEM if libpmem
 * maps a file there as real persistent memory, else CN_IO_WRITE (measured
 * faster on tmpfs and page-cache file systems; see docs/user-guide.md, "Level 1").
 */
int lvl_local_probe_io(const char *dir_path);

/* ---- payloads (payload.c) -------------------------------------------- */

typedef struct lvl_payload lvl_payload;

/* Map the rank files LOCAL[0..N-1] (ascending rank) under GENFD read-only. */
int lvl_payload_open(int genfd, const cn_manifest_rank *local, uint32_t n, lvl_payload **out,
                     cn_err *err);
uint64_t lvl_payload_size(const lvl_payload *p);
/* Check P's files from now on, for levels 2 and 3, which protect only what
 * verifies: each file's header against its manifest entry in LOCAL and its
 * table now (CAIRN_ECORRUPT); every data block and padding gap later, by
 * lvl_payload_read_checked. GEN_PATH names the directory in messages. */
int lvl_payload_verify(lvl_payload *p, const cn_manifest_rank *local, const char *gen_path,
                       cn_err *err);
/* Copy LEN bytes at OFF of the concatenation into BUF; zeros past its end.
 * Unchecked (see lvl_payload_read_checked). */
void lvl_payload_read(const lvl_payload *p, uint64_t off, void *buf, size_t len);
/* The same, after lvl_payload_verify succeeded (else CAIRN_EINVAL): every
 * block the range touches is hashed the first time (then copied from cache:
 * one pass over the data) and a mismatch fails with CAIRN_ECORRUPT naming
 * the file, entry and block, BUF then undefined. */
int lvl_payload_read_checked(lvl_payload *p, uint64_t off, void *buf, size_t len, cn_err *err);
void lvl_payload_close(lvl_payload *p);

typedef struct lvl_payload_out lvl_payload_out;

/* Create empty NAME.tmp files for the rank files LOCAL[0..N-1] under GENFD. */
int lvl_payload_create(int genfd, const cn_manifest_rank *local, uint32_t n,
                       lvl_payload_out **out, cn_err *err);
/* Store LEN bytes at OFF of the concatenation (bytes past its end are dropped). */
int lvl_payload_write(lvl_payload_out *o, uint64_t off, const void *buf, size_t len,
                      cn_err *err);
/* Verify every rebuilt file (header checksum as listed, all blocks) and rename
 * it into place; on failure remove them. Frees O either way. */
int lvl_payload_commit(lvl_payload_out *o, const char *gen_path, cn_err *err);
void lvl_payload_abort(lvl_payload_out *o);

/* ---- the collective half: the way out and back of node-local generations ----
 * (codec choice, incremental plan, chains, prune, trash; over a cairn_ctx of
 * src/api, built with mpicc; cairn_ctx and api_gen are src/api's). */

struct api_gen;

/* Codecs (compress.c; api_var is src/api's protected variable): resolve every source's codec (configured, per
 * variable, or the pick of api_codecs_choose) and the pipeline options. */
void api_codecs(cairn_ctx *ctx, lvl_src *src, size_t n, cz_opts *z);
/* After a level-1 write: count it (compress.resample). */
void api_codecs_learn(cairn_ctx *ctx, const lvl_written *w);
/* V's codec: a cz_id, or API_AUTO_LOSSLESS / API_AUTO_LOSSY ("auto", to be
 * picked); SH gets its shape when it is lossy or a 2-3 D float/double array
 * (else ndims 0), and the absolute bound (0 none) in every case: a pass over
 * the data for a bound relative to its range. SH NULL: the codec alone, no
 * pass. */
#define API_AUTO_LOSSLESS (-2)
#define API_AUTO_LOSSY (-3)
struct api_var;
int api_codec_of(const cairn_ctx *ctx, const struct api_var *v, cz_shape *sh);
/* The levels (bits 1 << L) a checkpoint at LEVEL makes auto weigh: LEVEL,
 * those of the choice before (ctx->levels_seen), ckpt.every_<L> (and
 * fail.mtbf_<L> with ckpt.auto), 4 with pfs.every; only usable ones. */
unsigned api_job_levels(const cairn_ctx *ctx, int level);
/* The model's figures for this job at LEVELS (compress.c: bandwidth, threads,
 * what a stored byte costs at levels 2-4, node-local space). */
void api_codec_env(const cairn_ctx *ctx, unsigned levels, cz_env *env);
/* Collective, before a checkpoint at LEVEL writes its rank files (codec_vote.c):
 * when some rank has an "auto" variable to choose for (never chosen, chosen
 * compress.resample checkpoints ago, or the levels changed), every rank
 * models all its "auto" variables and the ranks agree a pick per variable
 * name and kind (their modelled costs summed). Agreed (only MPI can fail). */
int api_codecs_choose(cairn_ctx *ctx, int level);
int api_threads(const cairn_ctx *ctx); /* compressor (and hashing) threads per rank */

/*
 * Incremental checkpoints, the way out (incr.c). api_incr_plan is collective:
 * it picks the parent of a checkpoint at LEVEL (ctx->incr[LEVEL], if incr.mode
 * is on and its chain is short enough; ranks agree), hashes every variable
 * (unless hinted), diffs against the parent and decides, over all ranks,
 * whether the increment pays. The plan then marks the sources: full entries
 * with their hashes, delta entries with runs and the runs' hashes.
 */
typedef struct api_plan {
    int64_t parent, base;         /* -1 and the id for a full generation */
    uint32_t depth;               /* generations before it in its chain */
    uint32_t block;               /* incr.block_size, 0 when incremental is off */
    size_t n;
    cn_h128 **hash;               /* per variable: every block's hash, NULL unknown */
    cn_h128 **stored_hash;        /* per variable: the hashes recorded with the entry */
    uint32_t *nstored_hash;
    cn_run **runs;                /* per variable: changed blocks (delta entries) */
    uint32_t *nruns;
    bool *delta;                  /* per variable: stored as a delta */
    double *bound;                /* per variable: the bound it is stored within (0: exact) */
    incr_tab *pt;                 /* the parent's table (a reference), NULL: full */
    uint64_t changed, blocks;     /* this rank's changed and total blocks */
} api_plan;
int api_incr_plan(cairn_ctx *ctx, long id, int level, api_plan *plan);
/* Fill the incremental fields of SRC[0..N-1] (the context's variables, their
 * codecs and bounds chosen) from PLAN; a lossy delta whose parent's bound is
 * looser than SRC's is stored whole instead. */
void api_incr_mark(api_plan *plan, lvl_src *src, size_t n);
/* After generation ID completed at level REACHED: its hashes become the
 * parent table of levels 1..REACHED. Takes the plan's hash arrays. */
void api_incr_commit(cairn_ctx *ctx, api_plan *plan, long id, int reached);
void api_plan_free(api_plan *plan);
/* Drop every table (incr.mode off, or a restart into another chain). */
void api_incr_reset(cairn_ctx *ctx);

/* Open a rank file and check it against the node manifest (header sum, generation, rank,
 * ranks; with CHAIN parent and base too), then verify it whole; *OUT NULL on failure. */
int lvl_rank_file_open(int genfd, const char *name, const char *path, const cn_header *want,
                       bool chain, cn_ckpt **out, cn_err *err);

/*
 * The way back (chain.c). A chain: generation G and its ancestors down to
 * the full generation they diff against, as this rank's files.
 */
typedef struct api_chain {
    int n;                        /* links, oldest (the full generation) first */
    cn_ckpt **link;
    long broken;                  /* on failure: the generation whose file broke, else -1 */
    bool checked;                 /* api_chain_check decoded every frame */
    void **kept;                  /* by the newest link's entry index: the variable as G holds
                                   * it, decoded by the check (owned; NULL: not kept) */
} api_chain;
struct api_gen;
/* Collective-free: open and verify every link of G's chain for RANK (of this
 * node; G and its ancestors from RANK's inventory list ALL[0..N-1]). */
int api_chain_open(cairn_ctx *ctx, int rank, const struct api_gen *g, const struct api_gen *all,
                   int n, api_chain *ch);
void api_chain_close(api_chain *ch);
/* Collective-free: open and fully verify RANK's file of G alone (its own
 * link, not its ancestors), as api_chain_open verifies each link. */
int api_chain_link(cairn_ctx *ctx, int rank, const struct api_gen *g, cn_ckpt **out);
/* Every protected variable (or only ONLY, if not NULL) must be in the newest
 * link with its type and count. Restoring everything with no variable
 * protected, of a generation that holds variables for this rank, is
 * CAIRN_ESTATE (one of routed files only restores them). */
int api_chain_match(cairn_ctx *ctx, const api_chain *ch, const char *only);
/* The same check over any list of N stored entries of RANK in generation
 * GEN: AT(ARG, i, out) describes the i-th. */
typedef struct api_stored {
    const char *name;
    uint8_t kind, type;
    uint64_t count;
} api_stored;
typedef void (*api_stored_fn)(void *arg, size_t i, api_stored *out);
int api_match(cairn_ctx *ctx, long long gen, uint32_t rank, const char *only, size_t n,
              api_stored_fn at, void *arg);
/* Fill INFO with the newest link's variable NAME; CAIRN_ENOENT without it. */
int api_chain_describe(cairn_ctx *ctx, const api_chain *ch, const char *name,
                       cairn_var_info *info);
/* Decode every frame of every link and check it: what can still fail once
 * the links verified, found before anything is written (restart runs it,
 * agreed, before api_chain_restore). Each protected variable the restore
 * will write (all, or only ONLY) that has a compressed frame in the chain is
 * rebuilt, link by link, into a buffer of its size in G kept in ch->kept
 * (the memory budget: at most the size of the variables restored); one
 * without memory for it is decoded and dropped, and decoded again by the
 * restore. Raw entries need no decode: cn_ckpt_verify checked them. */
int api_chain_check(cairn_ctx *ctx, api_chain *ch, const char *only);
/* Decode the chain into PTRS (by the newest link's entry index: a buffer of
 * that entry's raw_size, or NULL to check and drop), link by link. */
int api_chain_apply(cairn_ctx *ctx, const api_chain *ch, void *const *ptrs);
/* Collective: restore protected memory from the verified chain (routed
 * files from its newest link first, agreed), then rebuild ctx->incr for a
 * generation at LEVEL. With ONLY, only that protected variable (no files).
 * After api_chain_check: kept variables are copied, raw ones copied from
 * the files, and only the frames of the others decoded (once more). */
int api_chain_restore(cairn_ctx *ctx, const api_chain *ch, int level, const char *only);

/* Pruned generations are renamed to "<prefix><name>.<pid>" and removed in
 * the background. api_trash_empty starts that removal (after waiting for the
 * previous one); with WAIT it also waits for it. api_trash_empty_pfs does the
 * same in the PFS job directory JOBFD (on a thread of its own). trash.c. */
#define API_TRASH_PREFIX CN_TRASH_PREFIX
void api_trash_empty(cairn_ctx *ctx, bool wait);
void api_trash_empty_pfs(cairn_ctx *ctx, int jobfd);
/* Wait for both removals, if running (cairn_finalize; l4_bench, so that its
 * baselines run on a quiet machine). */
void api_trash_wait(cairn_ctx *ctx);
/* Node leader: drop the generations this node no longer needs after writing
 * generation ID (prune.c): WHAT says which of those older than ID and those
 * newer (an abandoned timeline: only with store.prune_abandoned). Only
 * generations whose manifest says this job and layout wrote them, or with no
 * manifest at all, are ever dropped. True when this node's generations were
 * listed and weighed (none there, or no listing: false); then with NEWER the
 * caller does the same on the PFS (src/api/checkpoint.c). */
#define API_PRUNE_OLDER 1
#define API_PRUNE_NEWER 2
#define API_PRUNE_AT 4 /* with NEWER: ID itself too (before writing it: a fresh start) */
bool api_prune(cairn_ctx *ctx, long id, int what);

#endif /* CAIRN_LEVELS_LOCAL_H */
