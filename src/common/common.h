/*
 * common.h - the contract of src/common, the layer every other part of cairn
 * stands on. It depends on nothing but libc, xxHash and inih: no MPI.
 *
 *   errors   cn_err carries a code and a detailed message up the stack;
 *            CN_FAIL / CN_TRY keep error paths one line.
 *   log      one line per message to stderr, prefixed with rank and host.
 *   hash     XXH3-64 checksums of blocks, tables and headers.
 *   paths    directories created mode 0700 and opened without following
 *            symlinks; names checked before they touch a path.
 *   bytes    little-endian encoders and a bounds-checked reader.
 *   format   the on-disk checkpoint file (format.c), the node manifest
 *            (manifest.c), the parity file's metadata (pfile.c), the index of
 *            a PFS generation (pindex.c), and a reader that maps a checkpoint
 *            file and validates it (ckread.c).
 *   config   the key table, INI + environment loading (config.c).
 *   proto    the line protocol of the node daemon's socket (proto.c).
 *   fault    named fault points for failure-injection tests (fault.c).
 *
 * Ownership: functions that allocate say so; the matching _free accepts NULL.
 */
#ifndef CAIRN_COMMON_H
#define CAIRN_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Non-MPI objects are compiled with -DCAIRN_NO_MPI (see Makefile). */
#include "cairn.h"

/* ---- errors ------------------------------------------------------------ */

#define CN_MSG_MAX 1024

typedef struct cn_err {
    int code;              /* 0 or a negative cairn code / -errno */
    char msg[CN_MSG_MAX];  /* detailed message, "" if none */
} cn_err;

/* Record CODE and a formatted message in ERR (may be NULL); return CODE. */
int cn_fail(cn_err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* As cn_fail, with ": strerror(errno_value)" appended; returns -errno_value
 * mapped to CAIRN_ENOSPC for ENOSPC/EDQUOT. */
int cn_fail_errno(cn_err *err, int errno_value, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void cn_err_clear(cn_err *err);
/* Put a formatted prefix in front of ERR's message. */
void cn_err_prefix(cn_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define CN_FAIL_IF(cond, err, code, ...)                                                          \
    do {                                                                                          \
        if (cond)                                                                                 \
            return cn_fail((err), (code), __VA_ARGS__);                                           \
    } while (0)

#define CN_TRY(expr)                                                                              \
    do {                                                                                          \
        int cn_rc_ = (expr);                                                                      \
        if (cn_rc_ < 0)                                                                           \
            return cn_rc_;                                                                        \
    } while (0)

/* ---- logging ----------------------------------------------------------- */

enum cn_log_level { CN_LOG_ERROR = 0, CN_LOG_WARN = 1, CN_LOG_INFO = 2, CN_LOG_DEBUG = 3 };

void cn_log_setup(int level, const char *prefix); /* prefix e.g. "rank 3 host n1" */
void cn_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define cn_error(...) cn_log(CN_LOG_ERROR, __VA_ARGS__)
#define cn_warn(...) cn_log(CN_LOG_WARN, __VA_ARGS__)
#define cn_info(...) cn_log(CN_LOG_INFO, __VA_ARGS__)
#define cn_debug(...) cn_log(CN_LOG_DEBUG, __VA_ARGS__)

/* ---- hash -------------------------------------------------------------- */

uint64_t cn_hash(const void *data, size_t len); /* XXH3-64, seed 0 */

/* ---- paths ------------------------------------------------------------- */

/* True if NAME is a plain file name: 1..CAIRN_NAME_MAX bytes, no '/', not "." or "..". */
bool cn_name_ok(const char *name);

/*
 * Open (creating if missing, mode 0700) directory NAME under DIRFD without
 * following symlinks, and check it is a directory owned by the effective user
 * with no group/other permissions. Returns an O_DIRECTORY fd or a negative
 * code (CAIRN_EUNSAFE for a symlink, foreign owner or loose mode).
 */
int cn_dir_open(int dirfd, const char *name, bool create, cn_err *err);

/* Open an absolute or relative directory PATH (no create, no ownership check
 * of the path itself beyond it being a directory). Returns fd or -errno. */
int cn_dir_open_path(const char *path, cn_err *err);

/* Remove NAME under DIRFD recursively, never following symlinks. Missing is OK. */
int cn_rmtree_at(int dirfd, const char *name, cn_err *err);

/* A new descriptor of directory DIRFD with a position of its own, for
 * listing it (fdopendir): a dup() would share the position with every other
 * dup, and two threads listing at once would each miss entries. -errno. */
int cn_dir_listing_fd(int dirfd);

/* fsync a directory fd (persist renames in it). */
int cn_dir_sync(int dirfd, cn_err *err);

/* ---- bytes ------------------------------------------------------------- */

static inline void cn_put_u16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void cn_put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline void cn_put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint16_t cn_get_u16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t cn_get_u32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}
static inline uint64_t cn_get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* Bounds-checked sequential reader: reads past the end set BAD and yield 0. */
typedef struct cn_rd {
    const uint8_t *p;
    size_t len, off;
    bool bad;
} cn_rd;
const uint8_t *cn_rd_take(cn_rd *r, size_t n); /* NULL (and bad) if fewer than n left */
uint8_t cn_rd_u8(cn_rd *r);
uint16_t cn_rd_u16(cn_rd *r);
uint32_t cn_rd_u32(cn_rd *r);
uint64_t cn_rd_u64(cn_rd *r);

/* ---- format ------------------------------------------------------------ */
/*
 * A rank's checkpoint file (one per rank per generation):
 *   [header, CN_HEADER_SIZE bytes][entry table][pad to 4096][data ...]
 * Every integer is little-endian. Integrity is a chain: each data block has an
 * XXH3-64 in the table, the table's XXH3-64 is in the header, and the header
 * ends with the XXH3-64 of its other bytes (the file's checksum, also stored in
 * the node manifest). Changing any byte breaks the chain somewhere.
 */
#define CN_FORMAT_VERSION 3 /* 2: codecs, packed entries; 3: incremental chains */
#define CN_HEADER_SIZE 256
#define CN_JOB_MAX 63 /* job ids and node names: at most 63 bytes */
#define CN_DATA_ALIGN 4096
#define CN_ENTRY_ALIGN 64
#define CN_MAX_ENTRIES (1u << 20)
#define CN_MIN_BLOCK (4u << 10)
#define CN_MAX_BLOCK (1u << 30)
#define CN_MAX_RANKS (1u << 24)
#define CN_MIN_INCR_BLOCK (1u << 10) /* incremental block sizes: powers of two in this range */
#define CN_MAX_INCR_BLOCK (64u << 20)

extern const uint8_t CN_CKPT_MAGIC[8];     /* "CAIRNCK" 0x01 */
extern const uint8_t CN_MANIFEST_MAGIC[8]; /* "CAIRNMF" 0x01 */

enum cn_kind { CN_KIND_VAR = 0, CN_KIND_FILE = 1 };
/* Codec ids belong to src/compress (enum cz_id); common checks their range.
 * A codec other than RAW means the stored bytes are frames (compress.h). */
enum cn_codec { CN_CODEC_RAW = 0, CN_CODEC_LOSSY = 7, CN_CODEC_COUNT = 9 }; /* ids >= LOSSY are lossy */
/* Entry flag: a small variable aggregated into the frames of the nearest
 * preceding entry without the flag (its pack owner): it stores no bytes of its
 * own; its raw bytes follow the owner's (and earlier members') in the owner's
 * decoded frames. */
#define CN_ENTRY_PACKED 0x01
/* Entry flag: an incremental entry (the header names a parent generation).
 * It stores only the blocks of incr_block bytes listed in its runs, one
 * after another; every other block is as in the parent generation. */
#define CN_ENTRY_DELTA 0x02

/* A run of consecutive blocks (of the header's incr_block bytes). */
typedef struct cn_run {
    uint32_t first, count;
} cn_run;

/* An XXH3-128 block hash (the change detector of incremental checkpoints). */
typedef struct cn_h128 {
    uint64_t lo, hi;
} cn_h128;

typedef struct cn_entry {
    char name[CAIRN_NAME_MAX + 1];
    uint8_t kind;          /* enum cn_kind */
    uint8_t type;          /* cairn_type (CAIRN_BYTE for files) */
    uint8_t ndims;         /* 0..3 */
    uint8_t codec;         /* enum cn_codec */
    uint8_t flags;         /* CN_ENTRY_PACKED or 0 */
    uint64_t dims[CAIRN_MAX_DIMS];
    uint64_t count;        /* elements (bytes for files) */
    uint64_t raw_size;     /* bytes before encoding: count * type size */
    uint64_t stored_size;  /* bytes in the data section */
    uint64_t frame_raw;    /* compressed: bytes its frames decode to (own + packed members') */
    uint64_t offset;       /* file offset of the stored bytes */
    double error_bound;    /* 0 = lossless */
    double max_error;      /* largest |x - x'| measured when stored (0 = exact) */
    uint32_t nblocks;      /* ceil(stored_size / block_size) */
    uint64_t *block_sums;  /* nblocks checksums; owned by the entry table */
    /* Incremental chains (header incr_block != 0; else all zero): */
    uint32_t nruns;        /* CN_ENTRY_DELTA: the stored blocks, ascending, apart */
    cn_run *runs;          /* owned by the entry table */
    uint32_t nhash;        /* 0 (hashes unknown), or one per stored block: every block
                            * of the variable for a full entry, the runs' for a delta */
    cn_h128 *hashes;       /* XXH3-128 of each raw block; owned by the entry table */
} cn_entry;

typedef struct cn_header {
    uint32_t version;
    uint32_t level;
    int64_t generation;
    uint32_t rank, nranks;
    uint32_t node, nnodes;
    uint32_t block_size;   /* power of two in [CN_MIN_BLOCK, CN_MAX_BLOCK] */
    uint32_t nentries;
    uint64_t table_size;   /* bytes of the entry table */
    uint64_t data_offset;  /* first data byte: page aligned, after the table (and the
                            * table space reserved for a compressed write) */
    uint64_t file_size;
    uint64_t table_sum;    /* XXH3-64 of the table bytes */
    uint64_t header_sum;   /* XXH3-64 of header bytes [0, CN_HEADER_SIZE - 8) */
    char job[CN_JOB_MAX + 1];
    /* Incremental chains: a full generation has parent -1 and base = its own
     * generation; an incremental one the generation it diffs against and the
     * full generation its chain starts at (base <= parent < generation). */
    int64_t parent, base;
    uint32_t incr_block;   /* block size of runs and hashes; 0: no hashes kept */
} cn_header;

/* True if S is a valid job id or node name: 1..63 of [A-Za-z0-9._-], no leading '.'. */
bool cn_id_ok(const char *s);
/* Node names (node.c): the one rule of the library, cairnd, the CLI and the
 * hooks. cn_node_name: CONFIGURED (job.node) if not empty, else
 * SLURMD_NODENAME if set, else the full hostname (not cut at a dot), mapped
 * by cn_node_map; *FROM (if FROM) names the source ("job.node",
 * "SLURMD_NODENAME", "hostname"). cn_node_map: NAME if it is a valid id, else
 * NAME with its invalid characters as '_', cut to 54, plus '-' and 8 hex
 * digits of its hash, so distinct names stay distinct. */
void cn_node_name(const char *configured, char out[CN_JOB_MAX + 1], const char **from);
void cn_node_map(const char *name, char out[CN_JOB_MAX + 1]);
/* A host's identity, to tell hosts apart: full hostname and kernel boot id. */
#define CN_HOST_MAX 255
typedef struct cn_host {
    char name[CN_HOST_MAX + 1];
    char boot[40];
} cn_host;
void cn_host_ident(cn_host *h);
bool cn_host_same(const cn_host *a, const cn_host *b);
/* Copy a fixed 64-byte NUL-padded id field (zeros after the id: one encoding
 * per id); false if it is not a valid id. */
bool cn_get_id(const uint8_t *p, char out[CN_JOB_MAX + 1]);
uint64_t cn_align_up(uint64_t v, uint64_t a);

/* Bytes of E's own stored stream once decoded: its raw size, or for a delta
 * entry the bytes of the blocks of INCR_BLOCK its runs list (the variable's
 * last block may be short). */
uint64_t cn_entry_stream(const cn_entry *e, uint32_t incr_block);
/* Bytes the runs RUNS[0..NRUNS-1] of blocks of INCR_BLOCK cover in a variable
 * of SIZE bytes (the last block clipped). */
uint64_t cn_runs_stream(const cn_run *runs, uint32_t nruns, uint64_t size,
                        uint32_t incr_block);
/* Blocks of INCR_BLOCK bytes in SIZE bytes (0 for 0). */
uint64_t cn_incr_nblocks(uint64_t size, uint32_t incr_block);
/* Check a generation's chain fields (see cn_header); messages name WHAT. */
int cn_chain_check(int64_t gen, int64_t parent, int64_t base, uint32_t incr_block,
                   const char *what, cn_err *err);

/* Encoded size of a table of N entries (including block checksums). */
size_t cn_table_size(const cn_entry *e, uint32_t n);
/* Fill OUT (cn_table_size bytes). */
void cn_table_encode(const cn_entry *e, uint32_t n, uint8_t *out);
/* Parse and validate a table against H (which must already be valid);
 * allocates *OUT (free with cn_entries_free). */
int cn_table_decode(const uint8_t *buf, size_t len, const cn_header *h, cn_entry **out,
                    cn_err *err);
void cn_entries_free(cn_entry *e, uint32_t n);

/* Fill OUT[CN_HEADER_SIZE] from H and set H->header_sum. */
void cn_header_encode(cn_header *h, uint8_t *out);
/* Parse and validate a header (magic, version, checksum, every field). */
int cn_header_decode(const uint8_t *buf, size_t len, cn_header *h, cn_err *err);

/*
 * The node manifest: written by a node's leader after every rank of the job
 * committed a generation. It names the job-wide rank -> node map, the
 * generation's place in its incremental chain, and, for the ranks of this
 * node, each checkpoint file's size and checksum and the bytes it holds.
 */
typedef struct cn_manifest_rank {
    uint32_t rank;
    uint64_t file_size;
    uint64_t header_sum;
    uint64_t raw;               /* bytes of the rank's variables and files at this generation */
    uint64_t delta;             /* of which this generation stores (raw, if full) */
} cn_manifest_rank;

typedef struct cn_manifest {
    uint32_t version;
    uint32_t level;             /* the level the generation reached */
    uint32_t target;            /* the level it was asked for */
    int64_t generation;
    int64_t parent, base;       /* as in the rank files' headers */
    uint32_t nranks, nnodes, node;
    uint32_t nlocal;
    char job[CN_JOB_MAX + 1];
    char node_name[CN_JOB_MAX + 1];
    uint32_t *rank_node;        /* nranks entries */
    cn_manifest_rank *local;    /* nlocal entries, ascending rank */
} cn_manifest;

/* Encoded size of a manifest of NRANKS ranks, NLOCAL of them on its node. */
size_t cn_manifest_size(uint32_t nranks, uint32_t nlocal);
/* Encode into a malloc'd buffer (*OUT, *LEN). */
int cn_manifest_encode(const cn_manifest *m, uint8_t **out, size_t *len, cn_err *err);
/* Parse and validate; allocates arrays in M (free with cn_manifest_free). */
int cn_manifest_decode(const uint8_t *buf, size_t len, cn_manifest *m, cn_err *err);
void cn_manifest_free(cn_manifest *m);

/*
 * A parity file (level 3; pfile.c): one per node per generation, holding the
 * parity rows this node keeps for its encoding set, and a description of the
 * whole set, identical in every member's file, from which any survivor can
 * rebuild a lost member: every member's node, node name, payload size and rank
 * files (rank, size, header checksum), and the job's rank -> node map.
 *   [metadata, meta_size bytes, ending in its XXH3-64][pad to 4096][rows]
 * Row i (0..m-1) is parity row i of stripe (member - i) mod n, `chunk` bytes,
 * checksummed per block of block_size in the metadata.
 */
extern const uint8_t CN_PARITY_MAGIC[8]; /* "CAIRNPF" 0x01 */
#define CN_PARITY_NAME "parity.ec"

typedef struct cn_pmember {
    uint32_t node;                  /* node index in the job */
    char node_name[CN_JOB_MAX + 1];
    uint64_t payload;               /* bytes: its rank files, concatenated by rank */
    uint32_t nlocal;
    cn_manifest_rank *local;        /* its rank files, ascending rank */
} cn_pmember;

typedef struct cn_parity {
    uint32_t version, level, target;
    int64_t generation;
    int64_t parent, base;           /* the generation's chain, as in its manifests */
    char job[CN_JOB_MAX + 1];
    uint32_t nranks, nnodes;
    uint32_t *rank_node;            /* nranks entries */
    uint32_t set, n, m, w, form;    /* set index; members; parity rows; GF(2^w); enum ec_form */
    uint32_t member;                /* whose file this is (0..n-1) */
    uint64_t chunk;                 /* bytes per shard */
    uint32_t block_size;            /* checksum block */
    cn_pmember *members;            /* n entries */
    uint64_t *row_sums;             /* m * ceil(chunk / block_size) checksums */
    uint64_t data_offset, file_size;
} cn_parity;

uint32_t cn_parity_nblocks(const cn_parity *p);
/* Encode metadata into a malloc'd buffer; sets data_offset and file_size. */
int cn_parity_encode(cn_parity *p, uint8_t **out, size_t *len, cn_err *err);
/* Parse and validate the metadata at the start of BUF (LEN bytes: the whole
 * file, or at least the metadata). Allocates arrays in P (cn_parity_free). */
int cn_parity_decode(const uint8_t *buf, size_t len, cn_parity *p, cn_err *err);
void cn_parity_free(cn_parity *p);
/* Decode MAP (a whole parity file of SIZE bytes) and verify its size, padding
 * and every row block checksum; messages start with PATH. */
int cn_parity_check(const uint8_t *map, size_t size, const char *path, cn_parity *p, cn_err *err);

/*
 * The index of a generation flushed to the PFS (level 4; pindex.c), written
 * after its aggregated files: file i holds ranks [i * group, (i + 1) * group).
 */
extern const uint8_t CN_PINDEX_MAGIC[8]; /* "CAIRNPX" 0x01 */
#define CN_PINDEX_VERSION 1
#define CN_PINDEX_NAME "index"

typedef struct cn_pfile {
    uint64_t size;                  /* bytes of the aggregated file */
    uint64_t sum;                   /* XXH3-64 of all of them */
} cn_pfile;

typedef struct cn_pindex {
    uint32_t version;
    uint32_t scheme;                /* enum cz_agg_scheme the files were merged with */
    int64_t generation;
    char job[CN_JOB_MAX + 1];
    uint32_t nranks, nnodes;        /* of the job that wrote it */
    uint32_t group, nfiles;         /* ranks per file; ceil(nranks / group) */
    uint64_t raw, stored;           /* bytes of state; bytes of the files */
    cn_pfile *files;                /* nfiles entries */
} cn_pindex;

size_t cn_pindex_size(uint32_t nfiles);
uint32_t cn_pindex_nfiles(uint32_t nranks, uint32_t group);
int cn_pindex_encode(const cn_pindex *x, uint8_t **out, size_t *len, cn_err *err);
/* Parse and validate (hostile input); allocates X->files (cn_pindex_free). */
int cn_pindex_decode(const uint8_t *buf, size_t len, cn_pindex *x, cn_err *err);
void cn_pindex_free(cn_pindex *x);
int cn_agg_filename(char *buf, size_t len, uint32_t file); /* "agg-%06u.cz" */

/* ---- checkpoint file reader (ckread.c) --------------------------------- */

typedef struct cn_ckpt {
    const uint8_t *map;   /* read-only mapping of the whole file */
    size_t size;
    cn_header h;
    cn_entry *e;          /* h.nentries entries */
    bool owns_map;        /* mapped by cn_ckpt_open (unmapped on close) */
} cn_ckpt;

/* Map file NAME under DIRFD and validate header and table (not the data).
 * PATH_FOR_MSG names the file in messages. Allocates *OUT. */
int cn_ckpt_open(int dirfd, const char *name, const char *path_for_msg, cn_ckpt **out,
                 cn_err *err);
/* Same checks over a buffer the caller owns (used by the fuzz target). */
int cn_ckpt_parse(const uint8_t *buf, size_t len, const char *path_for_msg, cn_ckpt **out,
                  cn_err *err);
/* Check every block checksum of every entry. */
int cn_ckpt_verify(const cn_ckpt *c, const char *path_for_msg, cn_err *err);
void cn_ckpt_close(cn_ckpt *c);
const cn_entry *cn_ckpt_find(const cn_ckpt *c, const char *name);

/* Read a whole small file NAME under DIRFD into a malloc'd buffer (max MAX bytes). */
int cn_read_small(int dirfd, const char *name, size_t max, uint8_t **out, size_t *len,
                  cn_err *err);
/* pwrite all LEN bytes of BUF at OFF (retrying short writes and EINTR);
 * errors name WHAT. */
int cn_pwrite_all(int fd, const void *buf, size_t len, uint64_t off, const char *what,
                  cn_err *err);
/* Write BUF atomically as NAME under DIRFD: NAME.tmp, fsync, rename, dir fsync. */
int cn_write_atomic(int dirfd, const char *name, const void *buf, size_t len, cn_err *err);

/* ---- naming of things on node-local storage ---------------------------- */
/*
 *  <base>/cairn-<uid>/<job>/<node>/gen-<id>/rank-<r>.ckpt     checkpoint files
 *  <base>/cairn-<uid>/<job>/<node>/gen-<id>/manifest           node manifest
 *  <base>/cairn-<uid>/<job>/<node>/files/rank-<r>/<name>       routed files
 */
#define CN_GEN_PREFIX "gen-"
#define CN_MANIFEST_NAME "manifest"
int cn_gen_dirname(char *buf, size_t len, int64_t gen);        /* "gen-%lld" */
int cn_user_dirname(char *buf, size_t len);                     /* "cairn-<euid>" */
/* The ids of the "gen-<id>" entries of directory DIRFD (node-local or PFS),
 * newest first, in a malloc'd *IDS. */
int cn_gen_list(int dirfd, long **ids, int *n, cn_err *err);
int cn_rank_filename(char *buf, size_t len, uint32_t rank);     /* "rank-%u.ckpt" */
/* Parse "gen-<id>"; returns id >= 0 or -1. */
int64_t cn_parse_gen_dirname(const char *name);
/* An abandoned timeline (generations newer than the one a run restored and
 * then wrote past) is set aside, never removed on its own: "gen-<id>" under
 * DIRFD becomes "abandoned-gen-<id>" (or "abandoned-gen-<id>.<n>" if that is
 * taken), which no restart, daemon or prune reads; `cairn prune --abandoned`
 * removes it. OUT gets the new name. */
#define CN_ABANDONED_PREFIX "abandoned-"
int cn_set_aside(int dirfd, int64_t id, char *out, size_t len, cn_err *err);

/* ---- configuration (config.c) ------------------------------------------ */

enum cn_io_mode { CN_IO_AUTO = 0, CN_IO_WRITE = 1, CN_IO_PMEM = 2 };

typedef struct cn_config {
    char base[4096];         /* store.base */
    int keep;                /* store.keep */
    int prune_abandoned;     /* store.prune_abandoned: 0 off, 1 on */
    uint32_t block_size;     /* store.block_size */
    int io;                  /* store.io: enum cn_io_mode */
    char job[CN_JOB_MAX + 1];  /* job.id ("" = from SLURM_JOB_ID or generated) */
    char node[CN_JOB_MAX + 1]; /* job.node ("" = from ranks_per_node or hostname) */
    int ranks_per_node;      /* job.ranks_per_node (0 = by node name) */
    char restart_from[CN_JOB_MAX + 1]; /* job.restart_from ("" = none) */
    int set_size;            /* erasure.set_size */
    int ec_m;                /* erasure.m */
    int ec_w;                /* erasure.w */
    int ec_kernel;           /* erasure.kernel: enum ec_kernel (src/erasure) */
    uint32_t ec_block;       /* erasure.block_size */
    int codec;               /* compress.codec: cz_id, or CN_CODEC_AUTO */
    uint32_t z_buffer;       /* compress.buffer */
    int z_threads;           /* compress.threads (0 = auto) */
    int z_level;             /* compress.level */
    int z_bandwidth;         /* compress.bandwidth, MiB/s */
    int z_resample;          /* compress.resample */
    int lossy_mode;          /* lossy.mode: 0 auto, then CZ_WAVELET, CZ_PREDICT in order */
    int incr_mode;           /* incr.mode: 0 off, 1 on */
    uint32_t incr_block;     /* incr.block_size */
    int incr_full_every;     /* incr.full_every */
    int incr_max_changed;    /* incr.max_changed, percent */
    char pfs_dir[4096];      /* pfs.dir ("" = no level 4) */
    int pfs_every;           /* pfs.every */
    int pfs_keep;            /* pfs.keep */
    int pfs_group;           /* pfs.group, ranks per aggregated file */
    int pfs_scheme;          /* pfs.scheme: enum cz_agg_scheme (src/compress) */
    uint32_t pfs_block;      /* pfs.block */
    int pfs_bandwidth;       /* pfs.bandwidth, MiB/s (0 = unthrottled) */
    int daemon_use;          /* daemon.use: 0 auto, 1 off */
    int daemon_timeout;      /* daemon.timeout, seconds */
    int log_level;           /* log.level: enum cn_log_level */
} cn_config;

/* compress.codec's words, index = codec id; the last one, "auto", is this: */
#define CN_CODEC_AUTO 7
extern const char *const cn_codec_words[];

/* Defaults, then PATH (may be NULL), then CAIRN_* environment overrides. */
int cn_config_load(cn_config *cfg, const char *path, cn_err *err);
/* Print the key reference (Markdown table) to F. */
void cn_config_reference(void *file /* FILE* */);
/* A hash of the keys a node daemon must share with the job it serves
 * (store.base and .keep, erasure.*, pfs.*): the library refuses a daemon
 * whose key differs. */
uint64_t cn_config_daemon_key(const cn_config *cfg);

/* ---- daemon protocol (proto.c) ----------------------------------------- */
/*
 * The library, the CLI and cairnd talk over the node's Unix socket
 * (<node dir>/cairnd.sock) in lines of at most CN_PROTO_LINE bytes including
 * the '\n', words separated by one space. Requests and their replies:
 *   HELLO <version> <job> <node> <key>  -> OK <pid> | ERR <text>
 *   GEN <id> <level> <flush>            -> OK | ERR <text>
 *   FLUSH                               -> OK
 *   DRAIN <seconds>                     -> DONE <gen> <what> <bytes> | ERR <text>
 *   STATUS                              -> STATUS <pid> <queued> <busy> <done> <flushed>
 *   STOP                                -> OK
 *   HOLD                                -> OK, once no daemon of the job works on
 *                                          a generation; none starts one until
 *                                          every HOLD's client has disconnected
 * <key> is cn_config_daemon_key as 16 lower-case hex digits; <level> 1..3 is
 * the node-local level to raise generation <id> to, <flush> 0/1 whether to
 * write it to the PFS; <what> is flushed, present (already on the PFS) or
 * none (<gen> -1: no complete generation). Integers are canonical decimal
 * (no sign, no leading zero; -1 only where it means "none"), so a parsed
 * line formats back to the same bytes.
 */
#define CN_PROTO_LINE 512
#define CN_PROTO_VERSION 2
enum cn_req_kind { CN_REQ_HELLO = 1, CN_REQ_GEN, CN_REQ_FLUSH, CN_REQ_DRAIN, CN_REQ_STATUS,
                   CN_REQ_STOP, CN_REQ_HOLD };
typedef struct cn_req {
    int kind;                     /* enum cn_req_kind */
    uint32_t version;             /* HELLO */
    char job[CN_JOB_MAX + 1];     /* HELLO: cn_id_ok */
    char node[CN_JOB_MAX + 1];    /* HELLO: cn_id_ok */
    uint64_t key;                 /* HELLO */
    int64_t gen;                  /* GEN: >= 0 */
    int level;                    /* GEN: 1..3 */
    int flush;                    /* GEN: 0 or 1 */
    uint32_t seconds;             /* DRAIN: 1..86400 */
} cn_req;
enum cn_rep_kind { CN_REP_OK = 1, CN_REP_ERR, CN_REP_DONE, CN_REP_STATUS };
typedef struct cn_rep {
    int kind;                     /* enum cn_rep_kind */
    int64_t pid;                  /* OK (-1: none given), STATUS; >= 1 when given */
    char text[CN_PROTO_LINE];     /* ERR: printable ASCII, 1..CN_PROTO_LINE - 6 bytes */
    int64_t gen;                  /* DONE: >= -1 */
    char what[16];                /* DONE: "flushed", "present" or "none" */
    uint64_t bytes;               /* DONE */
    int64_t queued;               /* STATUS: >= 0 */
    int busy;                     /* STATUS: 0 or 1 */
    int64_t done, flushed;        /* STATUS: newest generation raised / flushed, -1 none */
} cn_rep;
/* Parse LINE[0..LEN-1] (without its '\n'); hostile input. 0 or CAIRN_EFORMAT
 * with a message naming what is wrong; *OUT is zeroed first. */
int cn_req_parse(const char *line, size_t len, cn_req *out, cn_err *err);
int cn_rep_parse(const char *line, size_t len, cn_rep *out, cn_err *err);
/* Format into BUF (CN_PROTO_LINE bytes) with the '\n'; returns the length,
 * or -1 if the fields are out of range. ERR text is sanitized (non-printable
 * bytes become '?', cut to fit). */
int cn_req_format(const cn_req *r, char *buf);
int cn_rep_format(const cn_rep *r, char *buf);
/* Read one line from socket FD into BUF (CN_PROTO_LINE), without the '\n',
 * waiting at most TIMEOUT_MS in total (-1 forever). Reads byte by byte past
 * nothing: a line is all the peer sent before waiting for an answer. Returns
 * its length, or CAIRN_EIO (peer closed, timeout, too long) with a message. */
int cn_line_read(int fd, char *buf, int timeout_ms, cn_err *err);
/* Write LEN bytes of BUF to socket FD (no SIGPIPE); 0 or CAIRN_EIO. */
int cn_line_write(int fd, const char *buf, size_t len, cn_err *err);
/* The daemon's socket NAME in directory DIRFD (sock.c). cn_sock_connect
 * refuses a file that is not a socket of this user; cn_sock_listen removes a
 * dead daemon's socket first and fails with CAIRN_ESTATE if one answers;
 * cn_sock_peer_ok: is the peer of FD this user? */
#define CN_SOCK_NAME "cairnd.sock"
int cn_sock_connect(int dirfd, const char *name, cn_err *err);
int cn_sock_listen(int dirfd, const char *name, cn_err *err);
bool cn_sock_peer_ok(int fd);

/* ---- fault injection (fault.c) ----------------------------------------- */
/*
 * CAIRN_FAULT="POINT[:gen=N][:rank=R][:after_us=U]" makes the process kill
 * itself with SIGKILL when it reaches POINT (for the given generation and
 * rank, or any), or U microseconds after it. Used by tests and drills to
 * crash at a precise instant. Points: ckpt.begin (cairn_checkpoint entered),
 * ckpt.write (half-way through a rank's data), ckpt.commit (rank file renamed,
 * before the ranks agree), ckpt.manifest (all committed, before this node's
 * manifest is written), cairnd.gen (a daemon about to work on a generation;
 * rank = its node).
 */
void cn_fault_point(const char *point, int64_t gen, int rank);

#endif /* CAIRN_COMMON_H */
