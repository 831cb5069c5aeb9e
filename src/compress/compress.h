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
 * (N->M aggregation for level 4, which composes these codecs, is
 * src/levels/pfs: agg*.c, h5*.c, declared in levels/pfs/pfs.h.)
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
    CZ_PREDICT = 8,      /* lossy within a bound: prediction + rANS */
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
    double core;          /* the share of a core each thread can count on (0: a whole one):
                           * CPU work takes 1/core times as long; the write is at
                           * storage_bps as it is (cairnd's flush, at daemon.share) */
    int level;            /* codec level (zlib/zstd) */
    uint32_t buf_size;    /* pipeline buffer */
    double byte_s;        /* seconds a stored byte costs beyond its level-1 write: its partner
                           * copy, its parity (levels 2, 3), its read back and PFS write for a
                           * flush (4: lossless frames go as they are) */
    bool flush;           /* level 4: a flush decodes a lossy variable again */
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
/* The cores ENV's work runs on: threads (at least 1) times their share of a core. */
double cz_env_cores(const cz_env *env);
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
 * decoded. DEST NULL, or DEST[i] NULL: decode and check, keep nothing.
 * DEST[i] == &cz_skip: entry i is left alone (a caller that checked it
 * already); a pack is decoded unless all its entries are skipped, the
 * skipped ones' bytes dropped. Routed files (CN_KIND_FILE) are left to the
 * caller.
 */
extern const cz_dest cz_skip;
int cz_decode_ckpt(const cn_ckpt *c, const cz_dest *const *dest, const uint32_t *ndest,
                   int threads, cn_err *err);

#endif /* CAIRN_COMPRESS_H */
