/*
 * pfs.h - the contract of src/levels/pfs, level 4: generations on the parallel
 * file system, N->M aggregated. Called by src/api (checkpoint, restart, query,
 * the daemons' work), src/remap (a PFS generation read back), the CLI and the
 * scheduler hooks (ls, verify, prune, the prolog's stage-in, the epilog's
 * flush). Outside this folder only this header is included (agg_impl.h is
 * the folder's own).
 *
 * Without MPI (built into the CLI and the fuzz targets too):
 *   pindex.c, pdelta.c, pnode.c  the on-disk records: a generation's index, a
 *                rank's delta record in an increment, a node's record in a
 *                generation written node by node; decoders trust nothing.
 *   pfs.c        generation directories on the PFS, files written through a
 *                throttle, the index, the chain walk, prune.
 *   pfs_stage.c  a generation written node by node, committed by the last node.
 *   agg.c, agg_read.c, agg_pipe.c, agg_group.c, agg_auto.c, agg_table.c,
 *   agg_lend.c   N->M aggregation (agg.h): many ranks' variables merged into
 *                one file by one of mcrEngine's four schemes; read back verified.
 *   h5split.c, h5map.c, h5agg.c  routed HDF5 files split by dataset for the
 *                aggregation and joined back.
 * The collective half (node leaders over a cairn_ctx of src/api, mpicc):
 *   flush.c      level 4 out: a generation materialized (materialize.c),
 *                aggregated N->M and written to the PFS, index last;
 *   flush_incr.c ... or, when its parent is there as it was diffed against,
 *                only its changes: an increment on the PFS;
 *   fetch.c      ... the states' way to their aggregators, overlapped;
 *   flushnode.c  the epilog's flush from one node, no MPI calls.
 *   direct.c     level 4 straight from memory, a file per rank (pfs.direct);
 *   probe.c, share.c  the PFS's write bandwidth: one writer's (no MPI); the ranks' share.
 *   pfsrestore.c level 4 back: each rank's share of a PFS generation read
 *                straight into protected memory (cairn_restart);
 *   stagein.c    ... or split back into node-local rank files (a restart of
 *                one variable, a description); the newest PFS generation;
 *   pfsread.c    ... some ranks' variables read from the PFS, through the
 *                generation's chain there from its full base;
 *   pfsapply.c   ... one link of that chain applied to one rank.
 */
#ifndef CAIRN_LEVELS_PFS_H
#define CAIRN_LEVELS_PFS_H

#include "common/common.h"
#include "compress/compress.h"
#include "levels/local/local.h"

/* The index of a generation flushed to the PFS (level 4; pindex.c), written after its
 * aggregated files: file i holds ranks [i * group, (i + 1) * group). */
extern const uint8_t CN_PINDEX_MAGIC[8]; /* "CAIRNPX" 0x01 */
#define CN_PINDEX_VERSION 3     /* 2 adds label and seconds; 3 the chain (parent, base, source) */
#define CN_PINDEX_VERSION_OLD 1 /* the oldest read; every version read is re-encoded as it was */
#define CN_PINDEX_NAME "index"

typedef struct cn_pfile {
    uint64_t size;                  /* bytes of the aggregated file */
    uint64_t sum;                   /* XXH3-64 of all of them */
} cn_pfile;

typedef struct cn_pindex {
    uint32_t version;               /* CN_PINDEX_VERSION or _OLD; 0 = current */
    uint32_t scheme;                /* enum cz_agg_scheme the files were merged with */
    int64_t generation;
    char job[CN_JOB_MAX + 1];
    uint32_t nranks, nnodes;        /* of the job that wrote it */
    uint32_t group, nfiles;         /* ranks per file; ceil(nranks / group) */
    uint64_t raw, stored;           /* bytes of state; bytes of the files */
    char label[CAIRN_LABEL_MAX + 1];/* version 2: the generation's label, "" none */
    double seconds;                 /* version 2: wall time of its checkpoint, 0 unknown */
    /* Version 3: a generation stored as an increment (parent >= 0) holds only
     * what changed since its parent, a PFS generation of the same job and rank
     * count; base is the full generation its chain starts at (a full one:
     * parent -1, base = generation; versions 1-2 are full). source: a
     * fingerprint of the node-local rank files the flush read (cn_pindex_source),
     * 0 unknown: an increment is flushed only onto a parent whose source is
     * the node-local parent's. */
    int64_t parent, base;
    uint64_t source;
    cn_pfile *files;                /* nfiles entries */
} cn_pindex;
/* A rank's record in a PFS generation stored as an increment (pdelta.c): its variables
 * then, each whole or as the BLOCK-byte blocks its runs list, changed since the parent. */
extern const uint8_t CN_PDELTA_MAGIC[8]; /* "CAIRNPD" 0x01 */
#define CN_PDELTA_VERSION 1
#define CN_PDELTA_NAME ".cairn.delta"    /* the record's member in the aggregated files */

typedef struct cn_pdelta_var {
    char name[CAIRN_NAME_MAX + 1];
    bool delta;                     /* only the blocks of RUNS stored; else whole */
    uint8_t type, ndims;
    uint64_t dims[CAIRN_MAX_DIMS], count, size; /* the variable at this generation */
    uint32_t nruns;
    cn_run *runs;                   /* owned */
} cn_pdelta_var;

typedef struct cn_pdelta {
    uint32_t version, rank, block;
    int64_t generation, parent;
    uint32_t nvars;
    cn_pdelta_var *v;               /* owned */
} cn_pdelta;

/* Bytes of V's member: its size, or for changes the bytes of its runs. */
uint64_t cn_pdelta_stream(const cn_pdelta_var *v, uint32_t block);
int cn_pdelta_encode(const cn_pdelta *d, uint8_t **out, size_t *len, cn_err *err);
/* Parse and validate (hostile input); allocates (cn_pdelta_free, also after a failure). */
int cn_pdelta_decode(const uint8_t *buf, size_t len, cn_pdelta *d, cn_err *err);
void cn_pdelta_free(cn_pdelta *d);

/* One rank's term of a source fingerprint: the fingerprint of a generation
 * is the sum (mod 2^64) of these over its ranks, so node leaders can add up
 * their ranks' in any order. HEADER_SUM: the rank file's, as its manifest says. */
uint64_t cn_pindex_source(uint32_t rank, uint64_t header_sum);

size_t cn_pindex_size(uint32_t nfiles); /* of the current version */
uint32_t cn_pindex_nfiles(uint32_t nranks, uint32_t group);
/* The ranks file F of index X holds: [*FIRST, *END). */
void cn_pindex_file_ranks(const cn_pindex *x, uint32_t f, uint32_t *first, uint32_t *end);
/* Does file F of index X hold a rank WANT(ARG, rank) takes? */
bool cn_pindex_file_holds(const cn_pindex *x, uint32_t f, bool (*want)(void *, uint32_t),
                          void *arg);
int cn_pindex_encode(const cn_pindex *x, uint8_t **out, size_t *len, cn_err *err);
/* Parse and validate (hostile input); allocates X->files (cn_pindex_free). */
int cn_pindex_decode(const uint8_t *buf, size_t len, cn_pindex *x, cn_err *err);
void cn_pindex_free(cn_pindex *x);
int cn_agg_filename(char *buf, size_t len, uint32_t file); /* "agg-%06u.cz" */

/* A node's record in a PFS generation written node by node without MPI (pnode.c: the
 * epilog's flush). In <job>/.part-gen-<G>/ (a name no generation listing takes) each node
 * writes its ranks' files (group 1: agg-<rank>.cz) and then node-<k>.done; the last node to
 * find every record there writes the index and renames the directory to gen-<G>. */
extern const uint8_t CN_PNODE_MAGIC[8]; /* "CAIRNPN" 0x01 */
#define CN_PNODE_VERSION 1
#define CN_PSTAGE_PREFIX ".part-gen-"
typedef struct cn_pnode_rank {
    uint32_t rank;
    cn_pfile file;                  /* its file agg-<rank>.cz: size, XXH3-64 */
    uint64_t raw;                   /* bytes of its state */
    uint64_t source;                /* cn_pindex_source of its node-local file */
} cn_pnode_rank;
typedef struct cn_pnode {
    uint32_t scheme;                /* enum cz_agg_scheme the files were written with */
    int64_t generation;
    char job[CN_JOB_MAX + 1];
    uint32_t nranks, nnodes, node;  /* the job's counts; this node's index */
    uint32_t nlocal;
    uint64_t map;                   /* cn_hash of the rank -> node map (u32 each) */
    char label[CAIRN_LABEL_MAX + 1];
    double seconds;
    cn_pnode_rank *rank;            /* nlocal entries, ascending rank */
} cn_pnode;
int cn_pnode_encode(const cn_pnode *x, uint8_t **out, size_t *len, cn_err *err);
/* Parse and validate (hostile input); allocates X->rank (cn_pnode_free). */
int cn_pnode_decode(const uint8_t *buf, size_t len, cn_pnode *x, cn_err *err);
void cn_pnode_free(cn_pnode *x);
int cn_pnode_filename(char *buf, size_t len, uint32_t node);  /* "node-%u.done" */
int cn_pstage_dirname(char *buf, size_t len, int64_t gen);    /* ".part-gen-%lld" */

#include "levels/pfs/agg.h" /* N->M aggregation: cz_agg_* */

/* ---- routed HDF5 files at level 4 (h5split.c, h5map.c) --------------------- */
/* A routed file that is HDF5 is split for level 4 into its contiguous datasets (aggregated
 * across ranks by path and type, compressed per type) and a skeleton (every other byte:
 * superblock, object headers, heaps, chunked, compact and filtered data), plus a map that says
 * where each dataset goes back and holds the whole file's XXH3-64. Restart rebuilds the file
 * from the three and checks that checksum; no libhdf5 is needed for that. */
typedef struct cz_h5_dset {
    char *name;                  /* path in the file ("/grp/x"), owned by the array */
    uint8_t type;                /* cairn_type the bytes are aggregated as */
    uint8_t ndims;               /* 0..CAIRN_MAX_DIMS (0: a shape cairn cannot hold) */
    uint64_t dims[CAIRN_MAX_DIMS];
    uint64_t count;              /* elements of TYPE */
    uint64_t offset, size;       /* bytes [offset, offset + size) of the file */
} cz_h5_dset;
#define CZ_H5_MIN_DSET 128       /* smaller datasets stay in the skeleton (the paper's 100 B) */
/* Is HDF5 support built in (libhdf5 found at build time)? */
bool cz_h5_available(void);
/* The contiguous datasets of the HDF5 file image P[0..LEN) with storage of at least
 * CZ_H5_MIN_DSET bytes, sorted by offset, disjoint and inside the image, into *OUT
 * (free with cz_h5_dsets_free) and *N. Not HDF5 (no signature at offset 0), not
 * readable by libhdf5, or built without it: 0 with *N = 0, and nothing printed
 * (libhdf5's error stack is silenced for the call). Fails only on lack of memory. */
int cz_h5_scan(const uint8_t *p, size_t len, cz_h5_dset **out, size_t *n, cn_err *err);
void cz_h5_dsets_free(cz_h5_dset *d, size_t n);  /* accepts NULL */

/* The map, parsed: FILE's size and XXH3-64, its skeleton's size, its datasets. */
typedef struct cz_h5_ext {
    const char *name;            /* into the map's own storage */
    uint64_t offset, size;
} cz_h5_ext;
typedef struct cz_h5map {
    char file[CAIRN_NAME_MAX + 1];  /* the routed file's name */
    uint64_t size, sum, skel;
    uint32_t n;
    cz_h5_ext *d;                /* by offset */
} cz_h5map;
/* Encode the map of routed file FILE (image P[0..LEN)) split at D[0..N) (as from
 * cz_h5_scan) into *OUT (malloc'd, caller frees), *OUTLEN bytes. */
int cz_h5map_encode(const char *file, const uint8_t *p, uint64_t len, const cz_h5_dset *d,
                    size_t n, uint8_t **out, size_t *outlen, cn_err *err);
/* Parse and check a whole map record (layout in h5map.c): CAIRN_ECORRUPT or
 * CAIRN_EFORMAT saying why; *OUT owns its parse (cz_h5map_free). */
int cz_h5map_parse(const uint8_t *p, size_t len, cz_h5map **out, cn_err *err);
void cz_h5map_free(cz_h5map *m);                /* accepts NULL */
/* Index of dataset NAME in M, or -1. */
long cz_h5map_find(const cz_h5map *m, const char *name);
/* The skeleton of image P[0..LEN) split at D[0..N): the bytes outside every
 * dataset, in order, into SKEL (LEN minus the datasets' bytes). */
void cz_h5_skeleton(const uint8_t *p, uint64_t len, const cz_h5_dset *d, size_t n,
                    uint8_t *skel);
/* Rebuild M's file into OUT (M->size bytes) from SKEL[0..SKEL_LEN) and dataset i's
 * DATA[i][0..LEN[i]) (NULL: missing), and check the whole file's XXH3-64:
 * CAIRN_ECORRUPT saying which part is missing, of the wrong size, or that the file
 * rebuilt does not match its checksum. */
int cz_h5_join(const cz_h5map *m, const uint8_t *skel, uint64_t skel_len,
               const uint8_t *const *data, const uint64_t *len, uint8_t *out, cn_err *err);

/* Aggregation variables in and out (h5agg.c). Split: a copy of V[0..N) in which every
 * routed file (CN_KIND_FILE) that is HDF5 with datasets to take out is replaced by its
 * map, skeleton and datasets (file numbers 0, 1, ... per rank, in V's order); the rest
 * as given. OUT owns what it made (skeletons, maps, names); the datasets point into
 * V's file bytes, which must outlive OUT. */
typedef struct cz_h5_split {
    cz_agg_var *v;               /* read-only for the caller */
    size_t n;
    uint32_t files, datasets;    /* files split, datasets taken out */
    uint64_t skel;               /* skeleton bytes of the files split */
    void *own;                   /* private */
} cz_h5_split;
int cz_h5_split_vars(const cz_agg_var *v, size_t n, cz_h5_split *out, cn_err *err);
void cz_h5_split_free(cz_h5_split *s);          /* accepts a zeroed or freed one */
/* Join: the HDF5 parts read back (cz_agg_read delivers them among the variables) kept
 * (a copy) by rank; then each split file of one rank rebuilt and checked (cz_h5_join),
 * handed to CB as (name, bytes: malloc'd, CB's to free even when it fails, size). A map,
 * skeleton or dataset missing, stray or corrupt: CAIRN_ECORRUPT naming rank and file. */
typedef struct cz_h5_parts cz_h5_parts;
cz_h5_parts *cz_h5_parts_new(void);             /* NULL: no memory */
int cz_h5_parts_keep(cz_h5_parts *ps, const cz_agg_var *v, cn_err *err);
int cz_h5_parts_join(cz_h5_parts *ps, uint32_t rank,
                     int (*cb)(void *arg, const char *name, uint8_t *data, uint64_t size),
                     void *arg, cn_err *err);
void cz_h5_parts_free(cz_h5_parts *ps);         /* accepts NULL */

/* ---- level 4: the parallel file system (pfs.c) ------------------------- */
/* The write bandwidth of directory DIRFD (probe.c): BYTES of noise written to a probe file
 * (unlinked at once) and synced, timed, LVL_PFS_PROBE_PASSES times (the file emptied in
 * between); *BPS bytes/s of the fastest. */
int lvl_pfs_probe(int dirfd, uint64_t bytes, double *bps, cn_err *err);
#define LVL_PFS_PROBE_BYTES (16u << 20)
#define LVL_PFS_PROBE_PASSES 2 /* the faster counts */
/* Open <PFS_DIR>/cairn-<uid>/<JOB> (creating it, 0700, with CREATE). fd or < 0;
 * CAIRN_ECONFIG when PFS_DIR is empty. */
int lvl_pfs_open(const char *pfs_dir, const char *job, bool create, cn_err *err);
/* Read and decode generation ID's index under JOBFD (CAIRN_ENOENT: none yet). */
int lvl_pfs_index(int jobfd, long id, cn_pindex *x, cn_err *err);
/* The chain below X (an index read under JOBFD): the index of every link X needs, its parent down
 * to its full base, oldest (the base) first, in a malloc'd *LINKS of *N (none for a full X;
 * lvl_pfs_links_free). The one walk of a PFS chain in cairn: restart, flush, query, verify and the
 * prolog's stage-in all go through it. Every link must hold together with X: the same job, rank
 * count and base, generations going down, the last one X's base. CAIRN_ECORRUPT names the first
 * link that does not ("its link G is missing (...)", "... damaged (...)", "... does not continue
 * its chain ..."). */
int lvl_pfs_links(int jobfd, const cn_pindex *x, cn_pindex **links, int *n, cn_err *err);
void lvl_pfs_links_free(cn_pindex *links, int n);
/* Generation ID and the links of its chain (lvl_pfs_links), ID first, down
 * to the full base, as a malloc'd *IDS of *N. */
int lvl_pfs_chain(int jobfd, long id, long **ids, int *n, cn_err *err);
/* What lvl_pfs_newest passed over: the newest generation whose index is there
 * but does not read (-1 none; WHY says what is wrong), and the newest complete
 * one of another rank count (-1 none; its NRANKS and NNODES). */
typedef struct lvl_pfs_skip {
    long damaged, foreign;
    uint32_t nranks, nnodes;
    char why[512];
} lvl_pfs_skip;
/* The newest complete generation <= BOUND of JOB (and of NRANKS ranks, unless
 * 0), its index in *X; -1 if none. SKIP (may be NULL) gets what it passed over. */
long lvl_pfs_newest(int jobfd, const char *job, long bound, uint32_t nranks, cn_pindex *x,
                    lvl_pfs_skip *skip, cn_err *err);
/* A run of NRANKS ranks of JOB wrote generation NEWEST: its complete PFS
 * generations above NEWEST are an abandoned timeline: set aside
 * (cn_set_aside), or with REMOVE removed. Returns how many. */
int lvl_pfs_abandon(int jobfd, const char *job, uint32_t nranks, long newest, bool remove);
/* After a flush by a run of NRANKS ranks whose newest generation is NEWEST: keep the KEEP newest
 * complete generations of JOB and NRANKS up to NEWEST, remove the older ones and older directories
 * without an index; those above NEWEST only with ABANDONED. Never another rank count's, nor a
 * damaged index, nor a link of the chain of a generation that stays. Removing is renaming to
 * CN_TRASH_PREFIX (the caller empties the trash, in the background). */
void lvl_pfs_prune(int jobfd, const char *job, uint32_t nranks, long newest, int keep,
                   bool abandoned);
/* A generation written node by node without MPI (pfs_stage.c): the part <job>/.part-gen-<ID>/
 * opened (created, durable). Each node writes its ranks' files there (lvl_pfs_create, group 1),
 * then its record (atomic). Commit: after node ME's record, if all NNODES records are there and no
 * live claim, claim, check every record and file, write the index, rename the part to gen-<ID> and
 * sync the job directory; *OUT gets the index (cn_pindex_free) when this node committed.
 * 1: ID is complete on the PFS (by this node: OUT set; or another); 0: not yet, WHY says what
 * is missing; < 0 failed (the claim withdrawn). Prune: parts of generations <= NEWEST are removed. */
int lvl_pfs_stage_open(int jobfd, long id, cn_err *err);
int lvl_pfs_stage_record(int stagefd, const cn_pnode *rec, cn_err *err);
int lvl_pfs_stage_commit(int jobfd, long id, const char *job, uint32_t me, uint32_t nnodes,
                         cn_pindex *out, char *why, size_t len, cn_err *err);
void lvl_pfs_stage_prune(int jobfd, long newest);
typedef struct lvl_pfs_file lvl_pfs_file;
/* Start NAME.tmp under GENFD, written at most MIB_PER_S MiB/s (0: no limit). */
int lvl_pfs_create(int genfd, const char *name, int mib_per_s, lvl_pfs_file **out, cn_err *err);
/* Append (a cz_agg_sink: ARG is the lvl_pfs_file). Written in whole pages
 * but the last: up to a page waits, copied, for the next append or the commit. */
int lvl_pfs_append(void *arg, const void *buf, size_t len, cn_err *err);
/* Write what waits, sync, rename to NAME; *OUT gets its size and SUM (cz_agg_stats.sum). Frees F.
 * Not the directory: the index's (or a node record's) writer syncs it, once. */
int lvl_pfs_commit(lvl_pfs_file *f, int genfd, uint64_t sum, cn_pfile *out, cn_err *err);
void lvl_pfs_abort(lvl_pfs_file *f, int genfd);
/* Map NAME under GENFD read-only after checking its size and checksum against PF;
 * lvl_pfs_map_part: its size only (the reader verifies by frames: CZ_AGG_LAZY). */
int lvl_pfs_map(int genfd, const char *name, const cn_pfile *pf, const uint8_t **map,
                cn_err *err);
int lvl_pfs_map_part(int genfd, const char *name, const cn_pfile *pf, const uint8_t **map,
                     cn_err *err);
void lvl_pfs_unmap(const uint8_t *map, const cn_pfile *pf);

/* ---- the collective half (flush*.c, fetch.c, pfs*.c, stagein.c) ---------- */

struct api_chain;
struct api_gen;

/* Level 4 (flush.c, stagein.c). api_flush is collective: generation ID,
 * complete on node-local storage, to the PFS (node leaders do the work).
 * api_pfs_newest: the newest complete PFS generation <= BOUND of this job
 * and rank count, or -1 (collective; the first rank reads, *RC gets MPI
 * failures); with none and job.restart_from set, that job's, and
 * ctx->pfs_job says whose. Generations of another rank count are passed
 * over (ctx->pfs_note says so), and so are damaged ones (api_note_lost). A
 * copy staged on node-local storage by cairn-prolog
 * (<node>/stage/cairn-<uid>/<job>) is read first.
 * api_stage_in: collective, PFS generation ID (of ctx->pfs_job) back onto
 * node-local storage as a full level-1 generation of this job. */
int api_flush(cairn_ctx *ctx, long id);
/* As api_flush, always full (bench/l4_bench.c: an increment against the same one full). */
int api_flush_full(cairn_ctx *ctx, long id);
/* direct.c (pfs.direct), level 4 straight from memory. api_flush_direct:
 * collective, generation ID's variables of every rank written to the PFS, a
 * file per rank, the index last, nothing node-local (MADE: api_pfs_gen_try
 * made the directory; *STORED: the files' bytes, on rank 0). Rank 0 alone,
 * before a checkpoint's first reduction: api_pfs_direct_ready, can it gather
 * the files (ctx->pfs_files); api_pfs_gen_try, ID's directory made if there is
 * none (true); api_pfs_gen_drop, removed when the checkpoint goes by level 1.
 * api_pfs_as_fast: collective, once per context (ctx->pfs_as_fast), does the
 * PFS write at least as fast as node-local storage (the same file system, or
 * pfs.bandwidth or the probe at least the node directory's), so that level 4
 * goes straight to it even with cairnd? */
int api_flush_direct(cairn_ctx *ctx, long id, bool made, uint64_t *stored);
bool api_pfs_direct_ready(cairn_ctx *ctx);
bool api_pfs_gen_try(cairn_ctx *ctx, long id);
void api_pfs_gen_drop(cairn_ctx *ctx, long id);
bool api_pfs_as_fast(cairn_ctx *ctx);
/* Collective over the node leaders (LEADERS) or every rank: generation ID's PFS
 * directory made fresh by the first (never over another rank count's; a damaged one
 * set aside) unless MADE (api_pfs_gen_try), opened by the others; there, once per
 * context, each writer's share of the PFS probed (api_pfs_probe_share: ctx->pfs_probed);
 * ctx->pfs_memo made or ticked. api_pfs_free: what level 4 keeps in CTX (api_ctx_free).
 * Leaders agree on their opens; every rank returns its own. *JOBFD, *GENFD to close. */
int api_pfs_gen_open(cairn_ctx *ctx, long id, bool leaders, bool made, int *jobfd, int *genfd);
void api_pfs_free(cairn_ctx *ctx);
void api_pfs_probe_share(cairn_ctx *ctx, int dirfd, bool leaders, bool first);
/* The flush's last step, which direct.c shares (flush.c), first leader (or
 * rank 0): the index of NFILES files of GROUP ranks with SUM[3 f ..] (size,
 * XXH3-64, raw bytes), written last, then the PFS pruned. */
struct api_pfs_plan;
int api_pfs_write_index(cairn_ctx *ctx, int jobfd, int genfd, long id, int group, int nfiles,
                        const uint64_t *sum, const struct api_pfs_plan *plan);
/* A member's bytes lent from a verified rank file (DATA NULL: not lent),
 * with that file's block checksums: SUMS[b] is the XXH3-64 of bytes
 * [b * SUM_BLOCK, (b + 1) * SUM_BLOCK) of DATA, checked when it was opened.
 * CODEC not raw: DATA is instead STORED bytes of level 1's frames of that
 * (lossless) codec, verified against the file's block checksums when lent,
 * which decode to the member's SIZE bytes (SUMS NULL). */
typedef struct api_lent {
    const uint8_t *data;
    const uint64_t *sums;
    uint64_t sum_block;
    uint8_t codec;
    uint64_t stored;
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
 * through levels/pfs/pfs.c under GENFD (flush.c); OUT: size, XXH3-64, raw bytes.
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

#endif /* CAIRN_LEVELS_PFS_H */
