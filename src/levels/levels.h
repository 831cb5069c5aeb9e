/*
 * levels.h - the contract of src/levels: where a rank's checkpoint lands and
 * how it is read back, level by level. No MPI here: the api layer decides
 * what is written where and agrees across ranks; levels move bytes.
 *
 *   local.c   level 1: one checkpoint file per rank in a node-local generation
 *             directory, written with plain write() or through libpmem, made
 *             durable and renamed into place (atomic commit of the file).
 *   local_z.c the same file when variables are compressed: the data section
 *             comes out of the compression pipeline (src/compress).
 *   payload.c a node's payload for levels 2 and 3: its rank files of one
 *             generation read as one byte stream (zero-padded past the end),
 *             and the same stream written back into rank files on rebuild.
 *   parity.c  level 3: the node's parity file (rows it holds for its set),
 *             written in pieces, checksummed, committed atomically; read back
 *             and verified for decoding.
 *   pfs_stage.c  level 4 without MPI: a generation written node by node, committed
 *             by the last node (the epilog's flush);
 *   pfs.c     level 4: generation directories on the parallel file system,
 *             aggregated files written through a throttle, the index, prune.
 */
#ifndef CAIRN_LEVELS_H
#define CAIRN_LEVELS_H

#include "common/common.h"
#include "compress/compress.h"

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

/* ---- parity files (parity.c) ------------------------------------------ */

typedef struct lvl_parity_out lvl_parity_out;

/* Start GENFD/parity.ec.tmp for META (copied; row sums filled at commit). */
int lvl_parity_create(int genfd, const cn_parity *meta, lvl_parity_out **out, cn_err *err);
/* Store LEN bytes at OFF of row ROW. */
int lvl_parity_write(lvl_parity_out *o, int row, uint64_t off, const void *buf, size_t len,
                     cn_err *err);
/* Checksum the rows, write the metadata, persist, rename. Frees O either way. */
int lvl_parity_commit(lvl_parity_out *o, int genfd, cn_err *err);
void lvl_parity_abort(lvl_parity_out *o, int genfd);

typedef struct lvl_parity_in {
    cn_parity meta;
    const uint8_t *map; /* the whole file, read-only */
    size_t size;
} lvl_parity_in;

/* Map, validate and verify (every row block checksum) GENFD/parity.ec. */
int lvl_parity_open(int genfd, const char *path_for_msg, lvl_parity_in *in, cn_err *err);
void lvl_parity_close(lvl_parity_in *in);
static inline const uint8_t *lvl_parity_row(const lvl_parity_in *in, int row)
{
    return in->map + in->meta.data_offset + (uint64_t)row * in->meta.chunk;
}

/* ---- level 4: the parallel file system (pfs.c) ------------------------- */
/* Open <PFS_DIR>/cairn-<uid>/<JOB> (creating it, 0700, with CREATE). fd or < 0;
 * CAIRN_ECONFIG when PFS_DIR is empty. */
int lvl_pfs_open(const char *pfs_dir, const char *job, bool create, cn_err *err);
/* Read and decode generation ID's index under JOBFD (CAIRN_ENOENT: none yet). */
int lvl_pfs_index(int jobfd, long id, cn_pindex *x, cn_err *err);
/* The chain below X (an index read under JOBFD): the index of every link X
 * needs, its parent down to its full base, oldest (the base) first, in a
 * malloc'd *LINKS of *N (none for a full X; lvl_pfs_links_free). The one walk
 * of a PFS chain in cairn: restart, flush, query, verify and the prolog's
 * stage-in all go through it. Every link must hold together with X: the same
 * job, rank count and base, generations going down, the last one X's base.
 * CAIRN_ECORRUPT names the first link that does not ("its link G is missing
 * (...)", "... damaged (...)", "... does not continue its chain ..."). */
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
/* After a flush by a run of NRANKS ranks whose newest generation is NEWEST:
 * keep the KEEP newest complete generations of JOB and NRANKS up to NEWEST,
 * remove the older ones and older directories without an index; those above
 * NEWEST only with ABANDONED. Never another rank count's, nor a damaged index,
 * nor a link of the chain of a generation that stays. Removing is renaming to
 * CN_TRASH_PREFIX (the caller empties the trash, in the background). */
void lvl_pfs_prune(int jobfd, const char *job, uint32_t nranks, long newest, int keep,
                   bool abandoned);
/* A generation written node by node without MPI (pfs_stage.c): the part
 * <job>/.part-gen-<ID>/ opened (created, durable). Each node writes its ranks'
 * files there (lvl_pfs_create, group 1), then its record (atomic). Commit:
 * after node ME's record, if all NNODES records are there and no live claim,
 * claim, check every record and file, write the index, rename the part to
 * gen-<ID> and sync the job directory; *OUT gets the index (cn_pindex_free)
 * when this node committed. 1: ID is complete on the PFS (by this node: OUT
 * set; or another); 0: not yet, WHY says what is missing; < 0 failed (the
 * claim withdrawn). Prune: parts of generations <= NEWEST are removed. */
int lvl_pfs_stage_open(int jobfd, long id, cn_err *err);
int lvl_pfs_stage_record(int stagefd, const cn_pnode *rec, cn_err *err);
int lvl_pfs_stage_commit(int jobfd, long id, const char *job, uint32_t me, uint32_t nnodes,
                         cn_pindex *out, char *why, size_t len, cn_err *err);
void lvl_pfs_stage_prune(int jobfd, long newest);
typedef struct lvl_pfs_file lvl_pfs_file;
/* Start NAME.tmp under GENFD, written at most MIB_PER_S MiB/s (0: no limit). */
int lvl_pfs_create(int genfd, const char *name, int mib_per_s, lvl_pfs_file **out, cn_err *err);
/* Append (a cz_agg_sink: ARG is the lvl_pfs_file). */
int lvl_pfs_append(void *arg, const void *buf, size_t len, cn_err *err);
/* Sync, rename to NAME; *OUT gets size and XXH3-64. Frees F either way. */
int lvl_pfs_commit(lvl_pfs_file *f, int genfd, cn_pfile *out, cn_err *err);
void lvl_pfs_abort(lvl_pfs_file *f, int genfd);
/* Map NAME under GENFD read-only after checking its size and checksum against PF.
 * lvl_pfs_map_part: its size only, for a reader of part of it that verifies
 * what it reads by the file's own checksums (cz_agg_open_flags, CZ_AGG_LAZY). */
int lvl_pfs_map(int genfd, const char *name, const cn_pfile *pf, const uint8_t **map,
                cn_err *err);
int lvl_pfs_map_part(int genfd, const char *name, const cn_pfile *pf, const uint8_t **map,
                     cn_err *err);
void lvl_pfs_unmap(const uint8_t *map, const cn_pfile *pf);

#endif /* CAIRN_LEVELS_H */
