/*
 * format.h - the on-disk formats of src/common (format.c, manifest.c,
 * layout.c, ckread.c): rank file header and entry table, node manifest,
 * layout record, and the checkpoint file reader (the parity file's format is
 * in levels/parity/parity.h, the PFS records' in levels/pfs/pfs.h). Part of
 * common.h, which includes it where its types are needed; include common.h.
 */
#ifndef CAIRN_COMMON_FORMAT_H
#define CAIRN_COMMON_FORMAT_H
/* ---- format ------------------------------------------------------------ */
/*
 * A rank's checkpoint file (one per rank per generation):
 *   [header, CN_HEADER_SIZE bytes][entry table][pad to 64][data ...]
 * (version 3 padded the table to a 4 KiB page: a small file, such as a
 * highly compressed lossy one, spent most of its bytes on that padding).
 * Every integer is little-endian. Integrity is a chain: each data block has an
 * XXH3-64 in the table, the table's XXH3-64 is in the header, and the header
 * ends with the XXH3-64 of its other bytes (the file's checksum, also stored in
 * the node manifest). Changing any byte breaks the chain somewhere.
 */
#define CN_FORMAT_VERSION 4 /* rank files. 2: codecs, packed entries; 3: incremental chains;
                             * 4: data at CN_ENTRY_ALIGN after the table, not at a page */
#define CN_FORMAT_VERSION_OLD 3 /* the oldest rank file read (data page-aligned) */
#define CN_PARITY_VERSION 3 /* parity files (levels/parity/pfile.c) */
#define CN_HEADER_SIZE 256
#define CN_JOB_MAX 63 /* job ids and node names: at most 63 bytes */
#define CN_DATA_ALIGN 4096 /* version 3 rank files' data; parity files' rows */
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
    uint64_t data_offset;  /* first data byte, after the table (and the table space
                            * reserved for a compressed write): CN_ENTRY_ALIGN-aligned,
                            * page-aligned in version 3 */
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

/* Manifest versions: 3 (written by cairn 0.2.0: the checkpoint format's
 * number), 4 (adds the generation's label and the seconds its checkpoint
 * took) and 5 (adds flags). All are read; an encoded manifest keeps the
 * version it has (0 means the current one), so one read and written back
 * stays as it was. */
#define CN_MANIFEST_VERSION 5
#define CN_MANIFEST_VERSION_OLD 3 /* the oldest read */
/* Manifest flags (version 5). CN_MF_PFS: the generation goes to the PFS (it
 * was asked for level 4, or it is a pfs.every-th checkpoint): until the PFS
 * holds it with its index, a flush of it is owed (cairnd resumes it). Read
 * from versions 3 and 4 as set when the target is level 4. */
#define CN_MF_PFS 1u
#define CN_MF_KNOWN CN_MF_PFS
/* A generation label: up to CAIRN_LABEL_MAX printable ASCII bytes (0x20-0x7e);
 * "" is no label. Stored NUL-padded in CAIRN_LABEL_MAX + 1 bytes. */
bool cn_label_ok(const char *s);
/* Copy the NUL-padded label field at P (CAIRN_LABEL_MAX + 1 bytes) into OUT;
 * false unless it is canonical (zeros after the label) and cn_label_ok. */
bool cn_get_label(const uint8_t *p, char out[CAIRN_LABEL_MAX + 1]);

typedef struct cn_manifest {
    uint32_t version;           /* _OLD..CN_MANIFEST_VERSION; 0 = current */
    uint32_t level;             /* the level the generation reached */
    uint32_t target;            /* the level it was asked for */
    int64_t generation;
    int64_t parent, base;       /* as in the rank files' headers */
    uint32_t nranks, nnodes, node;
    uint32_t nlocal;
    char job[CN_JOB_MAX + 1];
    char node_name[CN_JOB_MAX + 1];
    char label[CAIRN_LABEL_MAX + 1]; /* version 4: cairn_label of rank 0, "" none */
    double seconds;             /* version 4: wall time of its checkpoint, 0 unknown */
    uint32_t flags;             /* version 5: CN_MF_* (see above) */
    uint32_t *rank_node;        /* nranks entries */
    cn_manifest_rank *local;    /* nlocal entries, ascending rank */
} cn_manifest;

/* Encoded size of a current-version manifest of NRANKS ranks, NLOCAL of them
 * on its node. */
size_t cn_manifest_size(uint32_t nranks, uint32_t nlocal);
/* Encode into a malloc'd buffer (*OUT, *LEN). */
int cn_manifest_encode(const cn_manifest *m, uint8_t **out, size_t *len, cn_err *err);
/* Parse and validate; allocates arrays in M (free with cn_manifest_free). */
int cn_manifest_decode(const uint8_t *buf, size_t len, cn_manifest *m, cn_err *err);
void cn_manifest_free(cn_manifest *m);

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

/*
 * The layout record (layout.c): one raw entry CN_LAYOUT_NAME of every rank
 * file of a job with distributed or replicated variables, each variable's
 * block of its global array. cn_layout_encode: N variables (NAMES, B) into a
 * malloc'd *OUT of *LEN bytes. cn_layout_find: parse the whole record at P
 * (LEN bytes) and give variable NAME's description in *B: 0, CAIRN_ENOENT if
 * absent, CAIRN_ECORRUPT (saying why) if the record does not parse; with NAME
 * NULL only check it.
 */
#define CN_LAYOUT_NAME ".cairn.layout"
#define CN_LAYOUT_DIMS 3
#define CN_DIST_BLOCK 1
#define CN_DIST_REPLICATED 2
typedef struct cn_block {
    int dist;                     /* CN_DIST_BLOCK or CN_DIST_REPLICATED */
    int type;                     /* cairn_type */
    int ndims;                    /* 1..3; a replicated variable 1 (its element count) */
    uint64_t global[CN_LAYOUT_DIMS], start[CN_LAYOUT_DIMS], count[CN_LAYOUT_DIMS];
} cn_block;
size_t cn_layout_size(const char *const *names, size_t n);
int cn_layout_encode(const char *const *names, const cn_block *b, size_t n, uint8_t **out,
                     size_t *len, cn_err *err);
int cn_layout_find(const uint8_t *p, size_t len, const char *name, cn_block *b, cn_err *err);

/* Read a whole small file NAME under DIRFD into a malloc'd buffer (max MAX bytes). */
int cn_read_small(int dirfd, const char *name, size_t max, uint8_t **out, size_t *len,
                  cn_err *err);
/* pwrite all LEN bytes of BUF at OFF (retrying short writes and EINTR);
 * errors name WHAT. */
int cn_pwrite_all(int fd, const void *buf, size_t len, uint64_t off, const char *what,
                  cn_err *err);
/* Write BUF atomically as NAME under DIRFD: NAME.tmp, fsync, rename, dir fsync. */
int cn_write_atomic(int dirfd, const char *name, const void *buf, size_t len, cn_err *err);

#endif /* CAIRN_COMMON_FORMAT_H */
