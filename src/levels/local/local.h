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
 */
#ifndef CAIRN_LEVELS_LOCAL_H
#define CAIRN_LEVELS_LOCAL_H

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

#endif /* CAIRN_LEVELS_LOCAL_H */
