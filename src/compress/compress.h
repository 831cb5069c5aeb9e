/*
 * compress.h - the contract of src/compress: lossless codecs behind one
 * interface, the framing of compressed bytes on disk, the automatic choice
 * of a codec per variable, and the pipelines that compress on the way out and
 * decompress on the way back. No MPI, no files: callers hand in memory and a
 * callback that stores bytes.
 *
 *   codec.c       the registry (ids, names, which types a codec takes) and
 *                 the frame: header + payload, checked before it is trusted.
 *   codec_lz.c    general-purpose codecs: zlib (the papers' baseline), zstd, lz4.
 *   codec_float.c codecs for float/double arrays: byte shuffle (then zstd or
 *                 lz4) and fpzip's lossless floating-point predictor.
 *   choose.c      automatic choice: sample a variable's ratio per codec, model
 *                 the checkpoint's work (the paper's equations 2-3 with fixed
 *                 codec speeds, plus what the job's levels do with a stored
 *                 byte), pick the cheapest; incompressible data is stored raw.
 *   pipe.c        the write pipeline: cut into buffers, aggregate small
 *                 variables, compress queue served by a thread pool, write
 *                 queue drained in order.
 *   pipe_read.c   the read pipeline: frames checked first, then decoded in
 *                 parallel, straight into place.
 *   ckpt.c        the read pipeline over a checkpoint file's entries.
 *   agg.c         N->M aggregation for level 4: many ranks' variables merged
 *                 into one file by one of the paper's four schemes (mcrEngine),
 *                 per-type codecs, a second zstd pass where it pays, the
 *                 scheme picked by sampling (AUTO); the file layout is there.
 *   agg_read.c    the aggregated file parsed and verified whole, then decoded
 *                 group by group back into variables.
 *   agg_pipe.c    the aggregated file's write stage, on a thread of its own.
 *   agg_group.c   what both share: scheme names, similarity keys, metadata
 *                 checks, the walk that orders (or interleaves) a group's bytes.
 *   h5split.c     a routed HDF5 file read through libhdf5 (optional): its
 *                 contiguous datasets found, to be aggregated by name and type.
 *   h5map.c       the map of a split routed file (the stored record), the
 *                 skeleton cut out of the file and the file rebuilt from its
 *                 skeleton and datasets (no libhdf5 needed).
 *   h5agg.c       split files as aggregation variables: routed files replaced
 *                 by their parts before cz_agg_write, parts read back joined.
 *
 * Accelerators (designed, not built: this project has no GPU to test on): an
 * accelerator codec is one more cz_codec whose encode/decode submit a buffer
 * to a node-wide service process that owns the device and serves the node's
 * ranks in turn (the paper's section 3.3(b)); the pipeline needs no change,
 * since a codec call is already one buffer on one pool thread, and up to
 * CZ_QUEUE_MAX buffers are in flight to hide the device's copy latency.
 *
 * Ownership: the caller owns every buffer it passes; nothing here keeps a
 * pointer past the call.
 */
#ifndef CAIRN_COMPRESS_H
#define CAIRN_COMPRESS_H

#include "common/common.h"

/* ---- codecs ------------------------------------------------------------- */

/* Codec ids are part of the on-disk format (cn_entry.codec, frame header). */
enum cz_id {
    CZ_RAW = 0,          /* stored as is: no frames */
    CZ_ZLIB = 1,         /* zlib (deflate), level from the codec's options */
    CZ_ZSTD = 2,         /* zstd */
    CZ_LZ4 = 3,          /* lz4 (fast mode) */
    CZ_SHUF_ZSTD = 4,    /* byte shuffle by element size, then zstd */
    CZ_SHUF_LZ4 = 5,     /* byte shuffle by element size, then lz4 */
    CZ_FPZIP = 6,        /* fpzip, lossless (float/double only) */
    CZ_WAVELET = 7,      /* lossy within a bound: the wavelet method (float/double) */
    CZ_PREDICT = 8,      /* lossy within a bound: prediction + range coder */
    CZ_NCODECS = 9
};
_Static_assert((int)CZ_NCODECS == (int)CN_CODEC_COUNT && (int)CZ_WAVELET == (int)CN_CODEC_LOSSY,
               "codec ids as common.h counts them");
/* Lossy codecs store variables that allow an error bound, and only those. */
static inline bool cz_is_lossy(int id) { return id == CZ_WAVELET || id == CZ_PREDICT; }

/* Not a codec: in configuration and cairn_protect_codec, "pick by sampling". */
#define CZ_AUTO 255

typedef struct cz_codec {
    uint8_t id;
    const char *name;          /* as in configuration: "zstd", "shuffle-lz4", ... */
    bool floats_only;          /* takes only CAIRN_FLOAT / CAIRN_DOUBLE */
    bool lossy;                /* encode is NULL: see cz_frame_encode_lossy */
    /* Largest payload encode may produce for RAW_LEN bytes. */
    size_t (*bound)(size_t raw_len);
    /*
     * Compress SRC[0..N-1] (N a multiple of the element size of TYPE) into
     * DST (CAP >= bound(N) bytes), using SCRATCH (N bytes, for filters).
     * Return the payload size, or 0 when the codec failed (the caller then
     * stores the buffer raw).
     */
    size_t (*encode)(uint8_t type, int level, const uint8_t *src, size_t n, uint8_t *dst,
                     size_t cap, uint8_t *scratch);
    /*
     * Decompress payload SRC[0..N-1] into exactly RAW_LEN bytes at DST,
     * using SCRATCH (RAW_LEN bytes). Return 0, or -1 if the payload is
     * malformed or does not decode to exactly RAW_LEN bytes.
     */
    int (*decode)(uint8_t type, const uint8_t *src, size_t n, uint8_t *dst, size_t raw_len,
                  uint8_t *scratch);
} cz_codec;

/* The codec with ID, or NULL if there is none (CZ_RAW has no entry). */
const cz_codec *cz_codec_get(int id);
/* Codec id for NAME ("none", "auto" -> CZ_AUTO, "zlib", ...), or -1. */
int cz_codec_parse(const char *name);
/* Name of ID ("none" for CZ_RAW, "auto" for CZ_AUTO), "?" if unknown. */
const char *cz_codec_name(int id);
/* True if codec ID may store variables of TYPE. */
bool cz_codec_accepts(int id, uint8_t type);
/* "none, zlib, zstd, ..." for messages and --help. */
const char *cz_codec_list(void);

/* The shape of an array stored lossily (see "lossy codecs" below), or by
 * fpzip (bound unused). */
typedef struct cz_shape {
    uint8_t type;          /* CAIRN_FLOAT or CAIRN_DOUBLE */
    uint8_t ndims;         /* 1..3 */
    uint64_t dims[CAIRN_MAX_DIMS]; /* slowest varying first; unused are 0 */
    double bound;          /* absolute error bound, > 0 and finite (lossy codecs) */
} cz_shape;

/* ---- frames ------------------------------------------------------------- */
/*
 * A compressed entry's stored bytes are a sequence of frames, one per
 * pipeline buffer. Each frame is a CZ_FRAME_HDR-byte header followed by its
 * payload (every integer little-endian):
 *   u8  codec       the entry's codec, or CZ_RAW if this buffer did not shrink
 *   u8  type        cairn_type of the elements
 *   u16 zero
 *   u32 raw_len     bytes after decoding (1..CZ_MAX_BUF)
 *   u32 stored_len  payload bytes (<= raw_len)
 *   u32 zero
 *   u64 raw_sum     XXH3-64 of the raw bytes: checked after decoding
 * The stored bytes are also covered by the entry's block checksums, so a
 * damaged frame is found before anything decodes it.
 */
#define CZ_FRAME_HDR 24
#define CZ_MIN_BUF (1u << 10)
#define CZ_MAX_BUF (64u << 20)

typedef struct cz_frame {
    uint8_t codec, type;
    uint32_t raw_len, stored_len;
    uint64_t raw_sum;
    const uint8_t *payload;
} cz_frame;

/*
 * Encode SRC[0..N-1] (N <= CZ_MAX_BUF) as one frame into DST (at least
 * cz_frame_bound(N) bytes) with codec ID (falls back to CZ_RAW when the
 * payload would not be smaller). SCRATCH holds N bytes. Returns the frame's
 * size (header + payload).
 */
/* The header of a raw frame of N bytes of TYPE whose XXH3-64 is SUM, into DST
 * (CZ_FRAME_HDR bytes); its payload, the N bytes, follows it wherever they
 * are (the aggregated writer sends them from the caller's memory). */
void cz_frame_raw_header(uint8_t *dst, uint8_t type, uint32_t n, uint64_t sum);
size_t cz_frame_encode(int id, uint8_t type, int level, const uint8_t *src, size_t n,
                       uint8_t *dst, uint8_t *scratch);
size_t cz_frame_bound(size_t n);
/* The same for an array of shape SH (type, ndims, dims; the bound is unused):
 * fpzip is given its 2-D or 3-D shape; other codecs see bytes. */
size_t cz_frame_encode_shaped(int id, const cz_shape *sh, int level, const uint8_t *src,
                              size_t n, uint8_t *dst, uint8_t *scratch);
/*
 * The same for a lossy codec ID over the array SRC (N bytes) of shape SH:
 * RECON (N bytes, apart from SRC) receives what decoding will give (the
 * frame's raw_sum is over it), *MAX_ERR the largest error. Falls back to a
 * raw frame (and *MAX_ERR = 0) when the payload would not be smaller, or
 * RECON overlaps SRC (the codecs measure the error against SRC after
 * reconstructing). DST holds cz_frame_bound(N) bytes.
 */
size_t cz_frame_encode_lossy(int id, const cz_shape *sh, const uint8_t *src, size_t n,
                             uint8_t *dst, uint8_t *recon, double *max_err);
/* Parse the frame at P (LEN bytes available): header fields in range, payload
 * inside LEN, codec either CZ_RAW or WANT_CODEC. *USED = header + payload. */
int cz_frame_parse(const uint8_t *p, size_t len, int want_codec, cz_frame *f, size_t *used,
                   cn_err *err);
/* Decode F into DST (F->raw_len bytes) and check raw_sum. SCRATCH holds
 * F->raw_len bytes. */
int cz_frame_decode(const cz_frame *f, uint8_t *dst, uint8_t *scratch, cn_err *err);

/* ---- lossy codecs: wavelet, predict and their entropy coders (lossy.h) ---- */
#include "compress/lossy.h"

/* ---- automatic choice (choose.c) ----------------------------------------- */
/*
 * A model of the work each candidate codec makes a checkpoint do: its ratio
 * measured on samples at fixed places, its CPU work from fixed per-codec
 * speeds, the job's storage and levels from ENV. No clock is read, so the
 * same data and ENV always give the same choice. The model: choose.c.
 */
typedef struct cz_env {
    double storage_bps;   /* bytes/s a rank writes to its level-1 store (compress.bandwidth) */
    int threads;          /* compressor threads of the pipeline */
    int level;            /* codec level (zlib/zstd) */
    uint32_t buf_size;    /* pipeline buffer */
    double byte_s;        /* seconds a stored byte costs beyond its level-1 write: its partner
                           * copy, its parity (levels 2, 3), its read back for a flush (4) */
    bool flush;           /* level 4: a flush decodes the variable again */
    double max_ratio;     /* stored/raw above this does not fit in node-local space; 0: no limit */
} cz_env;

/* Per codec id: the model's seconds (INFINITY: not a candidate), CPU
 * core-seconds, and stored bytes (0: not sampled, COST is a lower bound). */
typedef struct cz_model {
    double cost[CZ_NCODECS];
    double cpu[CZ_NCODECS];
    double stored[CZ_NCODECS];
} cz_model;

/* Model codec ID storing SIZE bytes of TYPE at stored/raw RATIO: seconds,
 * and CPU core-seconds (compress, and decode for a flush). Both grow with
 * RATIO. */
double cz_model_cost(const cz_env *env, int id, uint8_t type, uint64_t size, double ratio);
double cz_model_cpu(const cz_env *env, int id, uint8_t type, uint64_t size, double ratio);
/*
 * Fill M for SIZE bytes of TYPE at P: raw and every lossless codec that takes
 * TYPE. SH (may be NULL): the array's shape, which fpzip samples in whole
 * rows. cz_model_lossy: the two lossy codecs on a slab from the middle of the
 * array SH describes (shape and bound); raw is no candidate there.
 */
void cz_model_lossless(const void *p, uint64_t size, uint8_t type, const cz_shape *sh,
                       const cz_env *env, cz_model *m);
void cz_model_lossy(const void *p, const cz_shape *sh, const cz_env *env, cz_model *m);
/*
 * The pick of M: the lowest cost; ties to the lower CPU work, then the fewer
 * stored bytes, then the lower id, so a candidate both larger and slower than
 * another is never the pick; raw (if a candidate) stays unless the pick costs
 * 5% less. CZ_RAW if there is no candidate.
 */
int cz_pick(const cz_model *m);
/* cz_model_lossless + cz_pick; *RATIO (may be NULL): the pick's sampled stored/raw. */
int cz_choose(const void *p, uint64_t size, uint8_t type, const cz_shape *sh, const cz_env *env,
              double *ratio);
/* cz_model_lossy + cz_pick: CZ_WAVELET or CZ_PREDICT. */
int cz_choose_lossy(const void *p, const cz_shape *sh, const cz_env *env, double *ratio);

/* ---- pipelines (pipe.c) --------------------------------------------------- */

/* A piece of memory: an item's bytes may be several, one after another. */
typedef struct cz_span {
    const void *ptr;
    uint64_t len;
} cz_span;

/* One variable on the way out. In: ptr (or spans), size, type, codec (CZ_RAW
 * or a real codec; never CZ_AUTO). Out: how it was stored. */
typedef struct cz_item {
    const void *ptr;
    uint64_t size;
    const cz_span *span;   /* non-NULL: the SIZE bytes are span[0..nspan-1] in order
                            * (ptr unused), e.g. the changed blocks of a variable */
    uint32_t nspan;
    uint8_t type;
    uint8_t codec;
    const cz_shape *shape; /* lossy codecs: the array's shape and bound; fpzip (no spans,
                            * NULL or 2-3 dims): its shape, frames of whole rows */
    /* filled by cz_write: */
    bool packed;          /* aggregated into the frames of the previous owner */
    double max_error;     /* lossy: the largest |x - x'| of any element */
    uint64_t frame_raw;   /* owner: decoded bytes of its frames (its own + members') */
    uint64_t stored;      /* bytes passed to the sink for this item */
} cz_item;

#define CZ_QUEUE_MAX 64   /* buffers in flight, at most */

typedef struct cz_opts {
    uint32_t buf_size;    /* CZ_MIN_BUF..CZ_MAX_BUF */
    int threads;          /* compressor threads; 0 = compress in the calling thread */
    int level;
} cz_opts;

typedef struct cz_stats {
    uint64_t raw, stored;     /* bytes in, bytes out */
    double compress_s;        /* summed over threads */
    double write_s;           /* time inside the sink */
    double total_s;
} cz_stats;

/*
 * Sink: store LEN bytes of item ITEM's stored stream (in order, item by
 * item, never interleaved). A packed item gets no calls.
 */
typedef int (*cz_sink)(void *arg, uint32_t item, const void *buf, size_t len, cn_err *err);

/*
 * Run the write pipeline over ITEMS[0..N-1] in order. CZ_RAW items go to
 * the sink straight from their memory (span by span); compressed ones are
 * cut into buf_size buffers (gathered across spans), and runs of small items
 * with the same codec are aggregated into shared buffers (the later ones
 * marked packed). A lossy item with spans must have a 1-D shape; an fpzip
 * item with a shape is cut in whole rows like a lossy one, never packed. The
 * calling thread fills the compress queue and drains the write queue; the
 * pool compresses. STATS may be NULL.
 */
int cz_write(cz_item *items, uint32_t n, const cz_opts *o, cz_sink sink, void *arg,
             cz_stats *stats, cn_err *err);

/* One stored stream on the way back: its frames, and where the decoded
 * bytes go (DEST[0..NDEST-1] in order, summing to frame_raw; a NULL ptr
 * skips that many bytes). */
typedef struct cz_dest {
    void *ptr;
    uint64_t len;
} cz_dest;

typedef struct cz_stream {
    const uint8_t *stored;
    uint64_t stored_size;
    uint8_t codec;
    uint8_t type;         /* every frame must say this type */
    uint64_t frame_raw;
    const cz_dest *dest;
    uint32_t ndest;
    const char *name;     /* for messages */
} cz_stream;

/*
 * Check every frame header of every stream first (structure, codec, sizes
 * adding up), and only then decode: frames in parallel on THREADS threads
 * (0 = calling thread), each straight into its destination (through a
 * scratch buffer when it spans destinations), each checked against its raw
 * checksum.
 */
int cz_read(const cz_stream *s, uint32_t n, int threads, cn_err *err);

/*
 * The read pipeline over checkpoint C (verified by cn_ckpt_verify): every
 * variable entry's stream (cn_entry_stream bytes: its raw bytes, or a delta's
 * changed blocks) goes to DEST[i][0..NDEST[i]-1], in order (lengths summing to
 * the stream; a NULL ptr skips that many bytes). Frames are decoded first, in
 * parallel on THREADS threads; raw entries are copied only after every frame
 * decoded. DEST NULL, or DEST[i] NULL: decode and check, keep nothing. Routed
 * files (CN_KIND_FILE) are left to the caller.
 */
int cz_decode_ckpt(const cn_ckpt *c, const cz_dest *const *dest, const uint32_t *ndest,
                   int threads, cn_err *err);

/* ---- N->M aggregation (agg*.c) ------------------------------------------ */
/*
 * One aggregator merges the variables of a group of ranks into one file
 * (level 4). Pure library: variables in memory, the file's bytes out through
 * a sink in sequential appends; reading parses a whole file held in memory.
 * Layout and the design of the schemes: agg.c.
 */
enum cz_agg_scheme {            /* the paper's merging schemes; values are on disk */
    CZ_AGG_AGNOSTIC = 0,        /* rank after rank, variables in their order, one stream */
    CZ_AGG_AGNOSTIC_BLOCK = 1,  /* ranks' streams interleaved in blocks of opts.block */
    CZ_AGG_AWARE = 2,           /* variables grouped by similarity key (name, type, kind) across ranks */
    CZ_AGG_AWARE_BLOCK = 3,     /* aware groups, their variables interleaved in blocks */
    CZ_AGG_AUTO = 4             /* not on disk: pick by sampling (the paper's adaptive mcrEngine) */
};
/* Kinds only aggregated files hold (beside CN_KIND_VAR and CN_KIND_FILE): the parts of
 * a routed HDF5 file split for level 4 (h5split.c, h5map.c). Values are on disk. */
enum cz_agg_kind {
    CZ_KIND_H5MAP = 2,          /* the file's map (cz_h5map record); name "map" */
    CZ_KIND_H5SKEL = 3,         /* its skeleton: every byte outside the datasets; name "skeleton" */
    CZ_KIND_H5DATA = 4,         /* one contiguous dataset's bytes; name its path ("/g/x") */
    CZ_KIND_MAX = 4
};
typedef struct cz_agg_var {
    uint32_t rank;               /* application rank */
    const char *name;            /* 1..CAIRN_NAME_MAX bytes ('/' only in CZ_KIND_H5DATA) */
    uint8_t kind;                /* CN_KIND_VAR, CN_KIND_FILE (common.h) or enum cz_agg_kind */
    uint32_t file;               /* H5 kinds: which routed file of the rank (0, 1, ...);
                                  * else 0. Similar variables share (kind, name, type); a
                                  * rank's are told apart by (kind, file, name) */
    uint8_t type;                /* cairn_type */
    uint8_t ndims;
    uint64_t dims[CAIRN_MAX_DIMS];
    uint64_t count;              /* elements (for files: bytes) */
    uint64_t size;               /* bytes */
    const void *data;            /* write: borrowed; read callback: valid during the call only */
    const uint64_t *sums;        /* write, may be NULL: the XXH3-64 of each SUM_BLOCK bytes of
                                  * DATA (the last block shorter), known to match (the caller
                                  * checked them); a raw group then frames those blocks with
                                  * these checksums instead of hashing them again */
    uint64_t sum_block;
} cz_agg_var;
typedef struct cz_agg_opts {
    int scheme;                  /* enum cz_agg_scheme */
    uint32_t block;              /* block schemes: interleaving unit in bytes, rounded down to a
                                  * multiple of 8 (0 = 4096, the paper's best sizes were 1-8 KiB) */
    int level;                   /* codec level for zstd/zlib (0 = codec default) */
    int threads;                 /* compressor threads, 0 = calling thread (unused: one thread) */
    double bps;                  /* bytes/s the file is written at: the codec (raw included), the
                                  * second pass and AUTO's sampling are chosen by choose.c's time
                                  * model against it; 0: the smallest frame wins, whatever its time */
    int (*ready)(void *arg, const void *p, size_t len); /* may be NULL: data still arriving.
                                  * Called before bytes [P, P + LEN) of a variable's data are
                                  * read; returns once they are there (nonzero: the write fails
                                  * with it), so fetching overlaps writing */
    void *ready_arg;
} cz_agg_opts;
typedef struct cz_agg_stats {
    uint64_t raw, stored;        /* variable bytes in, file bytes out */
    int scheme;                  /* the scheme used (AUTO resolved) */
    uint32_t ngroups;
    uint32_t npass2;             /* groups that took the second (zstd) pass */
    uint64_t sampled;            /* AUTO: bytes of the sample each scheme compressed */
    double seconds;              /* whole call, sampling included */
} cz_agg_stats;
typedef int (*cz_agg_sink)(void *arg, const void *buf, size_t len, cn_err *err); /* appends */
/* Write V[0..N-1] (any order; ranks may have differing variable sets and sizes) as one
 * aggregated file through SINK (sequential appends; the sink may throttle). Two variables
 * may not share (rank, kind, name). ST may be NULL. */
int cz_agg_write(const cz_agg_var *v, size_t n, const cz_agg_opts *o, cz_agg_sink sink,
                 void *arg, cz_agg_stats *st, cn_err *err);
/* Parse and verify a whole aggregated file in memory (P, LEN): header, table, every
 * checksum, before anything is trusted. *OUT owns its parse, not P (P must outlive it). */
typedef struct cz_agg_file cz_agg_file;
extern const uint8_t cz_agg_magic[8];  /* "CAIRNAGG": an aggregated file's first bytes */
int cz_agg_open(const uint8_t *p, size_t len, cz_agg_file **out, cn_err *err);
/* As cz_agg_open; with CZ_AGG_LAZY a raw group's bytes are not hashed here: each of its
 * units is verified by its frame's checksum when cz_agg_read(_some) decodes it, so a
 * reader of part of a file touches only that part (compressed groups are still verified
 * whole: no decoder sees unverified bytes). Everything else is checked as by cz_agg_open. */
#define CZ_AGG_LAZY 1u
int cz_agg_open_flags(const uint8_t *p, size_t len, unsigned flags, cz_agg_file **out,
                      cn_err *err);
size_t cz_agg_count(const cz_agg_file *f);                 /* variables */
int cz_agg_info(const cz_agg_file *f, size_t i, cz_agg_var *v); /* metadata, data NULL */
int cz_agg_scheme_of(const cz_agg_file *f);
/* Decode every variable (group by group) and call CB once per variable with data set
 * (in file table order); CB's nonzero return stops and is returned. Memory: the
 * variable being delivered for Agnostic and Aware; a whole group for the block schemes
 * (whose members are interleaved). */
int cz_agg_read(const cz_agg_file *f, int (*cb)(void *arg, const cz_agg_var *v), void *arg,
                cn_err *err);
/* As cz_agg_read, delivering only the variables WANT (with ARG; given metadata, data NULL)
 * says yes to (WANT NULL: all); a unit holding none of them is not decoded, and the
 * others' bytes are not copied (a restore reads only its node's ranks). With FLAGS
 * CZ_AGG_GIVE each delivered variable's data (malloc'd, at least one byte) is the
 * callback's, to free, whatever it returns. */
#define CZ_AGG_GIVE 1u
int cz_agg_read_some(const cz_agg_file *f, bool (*want)(void *arg, const cz_agg_var *v),
                     int (*cb)(void *arg, const cz_agg_var *v), void *arg, unsigned flags,
                     cn_err *err);
void cz_agg_close(cz_agg_file *f);              /* accepts NULL */
const char *cz_agg_scheme_name(int scheme);   /* "agnostic", "agnostic-block", "aware", "aware-block", "auto" */
int cz_agg_scheme_parse(const char *name);    /* -1 if unknown */
const char *cz_agg_kind_name(int kind);       /* "var", "file", "h5map", "h5skel", "h5data" */

/* ---- routed HDF5 files at level 4 (h5split.c, h5map.c) --------------------- */
/*
 * A routed file that is HDF5 is split for level 4 into its contiguous
 * datasets (aggregated across ranks by path and type, compressed per type)
 * and a skeleton (every other byte: superblock, object headers, heaps, chunked,
 * compact and filtered data), plus a map that says where each dataset goes
 * back and holds the whole file's XXH3-64. Restart rebuilds the file from the
 * three and checks that checksum; no libhdf5 is needed for that.
 */
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

#endif /* CAIRN_COMPRESS_H */
