/*
 * cairn.h - the public API of libcairn, a node-local multi-level checkpoint
 * store for MPI applications.
 *
 * This is the only installed header. Handles are opaque; every function
 * returns 0 on success or a negative code: cairn's own codes from the table
 * below (all <= -1000), or -errno for a failed system call. cairn_strerror()
 * names both kinds; cairn_errmsg() returns the last detailed message of a
 * handle ("rank 3: /dev/shm/cairn-0/job/node1/gen-7/rank-3.ckpt: block 12
 * checksum mismatch").
 *
 * Collective calls (marked so below) must be made by every rank of the
 * communicator given to cairn_init, in the same order. They return the same
 * code on every rank: if any rank fails, every rank returns the failing
 * rank's code and message.
 *
 * Memory: cairn never takes ownership of protected memory; the application
 * keeps it valid from cairn_protect until it is unprotected, re-protected or
 * the context is finalized. Strings passed in are copied.
 *
 * The library never exits, aborts or calls MPI_Abort; it only returns errors.
 */
#ifndef CAIRN_H
#define CAIRN_H

#include <stddef.h>
#include <stdint.h>

#ifndef CAIRN_NO_MPI
#include <mpi.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && __GNUC__ >= 4
#define CAIRN_EXPORT __attribute__((visibility("default")))
#else
#define CAIRN_EXPORT
#endif

#define CAIRN_VERSION_MAJOR 0
#define CAIRN_VERSION_MINOR 2
#define CAIRN_VERSION_PATCH 0
#define CAIRN_VERSION_STRING "0.2.0"

/*
 * Error codes, pinned: their values never change between releases.
 * X(NAME, value, message). One list generates the enum and cairn_strerror().
 */
#define CAIRN_ERROR_LIST(X)                                                        \
    X(CAIRN_EINVAL,    -1001, "invalid argument")                                  \
    X(CAIRN_ENOMEM,    -1002, "out of memory")                                     \
    X(CAIRN_ECONFIG,   -1003, "bad configuration")                                 \
    X(CAIRN_ENOTSUP,   -1004, "not supported by this build or configuration")     \
    X(CAIRN_ENOENT,    -1005, "no checkpoint found")                               \
    X(CAIRN_ECORRUPT,  -1006, "checkpoint data is corrupt")                        \
    X(CAIRN_EIO,       -1007, "input/output error")                                \
    X(CAIRN_ENOSPC,    -1008, "no space left on node-local storage")              \
    X(CAIRN_EMPI,      -1009, "MPI error")                                         \
    X(CAIRN_EUNSAFE,   -1010, "unsafe path: symlink, foreign owner or bad mode")  \
    X(CAIRN_EMISMATCH, -1011, "checkpoint does not match the protected variables") \
    X(CAIRN_ESTATE,    -1012, "call out of order")                                 \
    X(CAIRN_EFORMAT,   -1013, "unsupported checkpoint format version")                 \
    X(CAIRN_ELOST,     -1014, "more nodes lost than the checkpoint's level can rebuild")

enum cairn_error {
    CAIRN_OK = 0,
#define CAIRN_X_ENUM(name, value, msg) name = value,
    CAIRN_ERROR_LIST(CAIRN_X_ENUM)
#undef CAIRN_X_ENUM
};

/* Element types of protected variables. Values are part of the on-disk format. */
typedef enum cairn_type {
    CAIRN_BYTE = 0, /* opaque bytes */
    CAIRN_INT8 = 1,
    CAIRN_UINT8 = 2,
    CAIRN_INT16 = 3,
    CAIRN_UINT16 = 4,
    CAIRN_INT32 = 5,
    CAIRN_UINT32 = 6,
    CAIRN_INT64 = 7,
    CAIRN_UINT64 = 8,
    CAIRN_FLOAT = 9,
    CAIRN_DOUBLE = 10,
} cairn_type;

/* Size in bytes of one element of TYPE, or 0 for an unknown type. */
CAIRN_EXPORT size_t cairn_type_size(cairn_type type);

/* Levels (a checkpoint at level L is also held at every lower level). */
#define CAIRN_LEVEL_LOCAL 1   /* node-local storage: survives a process crash */
#define CAIRN_LEVEL_PARTNER 2 /* a copy on the next node: survives one loss per pair */
#define CAIRN_LEVEL_ERASURE 3 /* Reed-Solomon parity: survives m losses per set */
#define CAIRN_LEVEL_PFS 4     /* parallel file system (pfs.dir), aggregated N->M */

#define CAIRN_MAX_DIMS 3
#define CAIRN_NAME_MAX 255     /* longest variable or routed-file name */
#define CAIRN_LATEST (-1L)     /* cairn_restart: the newest restorable generation */
#define CAIRN_LABEL_MAX 63     /* longest generation label (cairn_label) */

typedef struct cairn_ctx cairn_ctx;

/* One generation, as reported by cairn_generations(). */
typedef struct cairn_gen_info {
    long id;          /* generation id given to cairn_checkpoint */
    int level;        /* highest level the generation reached (4: complete on the PFS) */
    int nranks;       /* ranks that wrote it */
    uint64_t bytes;   /* stored bytes, summed over all ranks */
    long parent;      /* incremental: the generation it diffs against; -1 full */
    long base;        /* the full generation its chain starts with (its own id if full) */
    uint64_t raw;     /* bytes of the protected state it restores, summed over all ranks */
    uint64_t delta;   /* of which it stores itself (raw for a full generation; 0 unknown:
                         an increment only on the PFS) */
    double seconds;   /* wall time cairn_checkpoint took to write it at its level (rank 0's
                         measure; levels 2-4 included when done in the call, not when cairnd
                         does them); 0 unknown (written by cairn 0.2.0) */
    char label[CAIRN_LABEL_MAX + 1]; /* cairn_label given for it, "" if none */
} cairn_gen_info;

/* What cairn_restart would do, as reported by cairn_restart_query(). */
#define CAIRN_RESTART_NONE 0     /* nothing of this job was ever checkpointed: start fresh */
#define CAIRN_RESTART_READY 1    /* generation ID can be restored (after the rebuild below) */
#define CAIRN_RESTART_UNUSABLE 2 /* a checkpoint exists but cannot be restored: CODE says why */
typedef struct cairn_restart_plan {
    int status;       /* CAIRN_RESTART_NONE, _READY or _UNUSABLE */
    int code;         /* what cairn_restart would return: 0, or CAIRN_EMISMATCH, CAIRN_ECORRUPT,
                         CAIRN_ELOST, CAIRN_EFORMAT (message in cairn_errmsg) */
    long id;          /* the generation a restart would restore; -1 if none */
    int level;        /* where it would be read from: 1-3 node-local storage, where it is
                         protected at that level; 4 the PFS (staged in first) */
    int rebuild;      /* 0 none; 2 from partner copies; 3 by decoding parity: what the restart
                         rebuilds first (lost files, or lost parity: then NODES_LOST may be 0) */
    int nodes_lost;   /* nodes missing the generation's node-local files (a rebuild gives
                         them back; with level 4, those that do not hold it) */
    uint64_t raw;     /* bytes it restores (variables and routed files), over all ranks */
    char label[CAIRN_LABEL_MAX + 1]; /* its cairn_label, "" if none */
} cairn_restart_plan;

/* One stored variable, as reported by cairn_var_query(). */
typedef struct cairn_var_info {
    cairn_type type;
    size_t count;                  /* elements */
    int ndims;
    size_t dims[CAIRN_MAX_DIMS];
    size_t bytes;                  /* count * cairn_type_size(type): what to allocate */
    uint64_t stored;               /* bytes it takes in the checkpoint (compressed) */
    double error_bound;            /* absolute bound it was stored within; 0 lossless */
} cairn_var_info;

/* cairn_protect_hint: what the application did to a variable since the last checkpoint. */
#define CAIRN_UNCHANGED 0 /* not written: store nothing of it, skip hashing */
#define CAIRN_CHANGED 1   /* rewritten: store it whole, skip hashing */

#ifndef CAIRN_NO_MPI
/*
 * Collective. Create a context over COMM (duplicated internally). CONFIG_PATH
 * names an INI file, or is NULL for the file the environment variable
 * CAIRN_CONFIG_FILE names (if set and not empty), else defaults; CAIRN_*
 * environment variables override both (see docs/user-guide.md, "Configuration",
 * and docs/config-reference.md). On failure *CTX is NULL and cairn_errmsg(NULL)
 * explains.
 */
CAIRN_EXPORT int cairn_init(MPI_Comm comm, const char *config_path, cairn_ctx **ctx);

/*
 * Collective. cairn_init for language bindings: COMM is a Fortran handle
 * (`use mpi`'s integer; mpi_f08's comm%MPI_VAL; mpi4py's comm.py2f()),
 * converted with MPI_Comm_f2c. A handle MPI maps to MPI_COMM_NULL is
 * CAIRN_EINVAL.
 */
CAIRN_EXPORT int cairn_init_f(MPI_Fint comm, const char *config_path, cairn_ctx **ctx);
#endif

/*
 * Local. Protect COUNT elements of TYPE at PTR under NAME (1..CAIRN_NAME_MAX
 * bytes, no '/', unique per rank). NDIMS is 0 (plain array of COUNT) or 1..3,
 * with DIMS[0..NDIMS-1] whose product is COUNT (DIMS[0] slowest varying).
 * Protecting an existing name replaces its pointer, type and shape; its error
 * bound is kept only if the type stays float or double. PTR may be NULL only
 * when COUNT is 0.
 */
CAIRN_EXPORT int cairn_protect(cairn_ctx *ctx, const char *name, void *ptr, cairn_type type,
                               size_t count, int ndims, const size_t *dims);

/* Local. Stop protecting NAME. */
CAIRN_EXPORT int cairn_unprotect(cairn_ctx *ctx, const char *name);

/*
 * Local. Allow lossy storage of float/double variable NAME: every restored
 * element x' is within BOUND of the stored x, |x - x'| <= BOUND (> 0; 0
 * restores lossless). NaN and Inf are stored exactly. The codec is the
 * variable's own lossy one (cairn_protect_codec "wavelet" or "predict") or
 * lossy.mode's; a variable given a lossless codec stays lossless.
 */
CAIRN_EXPORT int cairn_protect_bound(cairn_ctx *ctx, const char *name, double abs_error_bound);

/*
 * Local. As cairn_protect_bound, with the bound relative to the variable's
 * value range at each checkpoint: BOUND * (max - min) over its finite
 * elements (0 <= REL_BOUND < 1; e.g. 1e-3). The absolute bound used is
 * recorded with the checkpoint (cairn inspect shows it).
 */
CAIRN_EXPORT int cairn_protect_bound_rel(cairn_ctx *ctx, const char *name, double rel_bound);

/*
 * Local. Store variable NAME with CODEC: "none" (raw), "auto" (the codec
 * that minimises a model of the checkpoint's work: ratios sampled from the
 * data, fixed codec costs, the levels the job uses; no clock, so the same
 * data and settings give the same pick, and one pick per variable name for
 * all ranks), "zlib", "zstd", "lz4", "shuffle-zstd", "shuffle-lz4" (byte
 * shuffle by element size first), or "fpzip" (float and double only; given
 * the shape of a variable protected with 2 or 3 DIMS): all lossless; or, for
 * a variable with an error bound, "wavelet" or "predict" (lossy within the
 * bound). NULL returns to the configured default (compress.codec, or
 * lossy.mode for a variable with a bound).
 */
CAIRN_EXPORT int cairn_protect_codec(cairn_ctx *ctx, const char *name, const char *codec);

/*
 * Local. With incremental checkpoints (incr.mode = on), tell the next
 * cairn_checkpoint what happened to variable NAME since the last checkpoint
 * (or restart), so that it need not hash it: CAIRN_UNCHANGED (store none of
 * it; trusted, so a variable hinted unchanged that did change restores its
 * old contents) or CAIRN_CHANGED (store it whole). The hint holds for one
 * checkpoint. An unchanged hint that cannot apply (a full generation, a
 * parent other than the last checkpoint, a new size) falls back to hashing.
 */
CAIRN_EXPORT int cairn_protect_hint(cairn_ctx *ctx, const char *name, int what);

/*
 * Local. Declare the protected variable NAME distributed: its memory holds
 * this rank's block of a global array of NDIMS (1..CAIRN_MAX_DIMS)
 * dimensions GLOBAL[0..NDIMS-1] (GLOBAL[0] slowest varying): in each
 * dimension d the elements START[d] .. START[d] + COUNT[d] - 1, stored in C
 * order (COUNT[0] slowest varying). The product of COUNT must be NAME's
 * element count, START[d] + COUNT[d] <= GLOBAL[d], and COUNT[d] may be 0
 * only if the element count is 0. Every rank gives the same GLOBAL; the
 * blocks of all ranks must not overlap and must cover the global array
 * (checked when a restart remaps). NDIMS 0 (the arrays may be NULL) makes
 * NAME not distributed again. The declaration is stored with every
 * checkpoint; it is what lets cairn_restart put the data back on another
 * rank count or node layout (see cairn_restart). A later cairn_protect of
 * NAME keeps it while the element count stays, and drops it otherwise.
 * CAIRN_EINVAL (NAME not a protected variable, bad shape) changes nothing.
 */
CAIRN_EXPORT int cairn_protect_block(cairn_ctx *ctx, const char *name, int ndims,
                                     const size_t *global, const size_t *start,
                                     const size_t *count);

/*
 * Local. Declare the protected variable NAME replicated: every rank holds the
 * same value (a step counter, a time, parameters). When cairn_restart remaps
 * onto another rank count or node layout, every rank receives the copy that
 * rank 0 stored (of the same type and element count). cairn_protect_block
 * with NDIMS 0 undoes it. CAIRN_EINVAL if NAME is not a protected variable.
 */
CAIRN_EXPORT int cairn_protect_replicated(cairn_ctx *ctx, const char *name);

/*
 * Local. Route the file NAME for the next checkpoint and put into PATH
 * (PATH_LEN bytes) its node-local path, <node>/files/rank-<r>/NAME, where the
 * application writes it whole. Semantics of SCR_Route_file:
 * - A route holds for one checkpoint: the next cairn_checkpoint takes in
 *   exactly the files routed since the previous checkpoint or restart, and
 *   ends those routes whether it succeeds or fails (a checkpoint refused for
 *   its arguments changes nothing). Route a file anew for every checkpoint
 *   that should hold it; a file not routed for a generation is not in it.
 * - A routed file that does not exist when the checkpoint runs fails that
 *   checkpoint (-ENOENT, naming the file); the next checkpoint is unaffected.
 * - Once a checkpoint is complete, the directory files/rank-<r>/ is emptied:
 *   the generation holds the files. Write them anew for the next one.
 * - cairn_restart empties the directory, puts there the files the restored
 *   generation holds, and ends all routes. Routing a name then gives the path
 *   of its restored copy if the generation holds it, else a path with no file
 *   (to write, for the next checkpoint). Restored copies stay until the next
 *   checkpoint or restart; cairn_finalize leaves the directory as it is.
 * - At level 4 (the PFS), a file that is HDF5 (or netCDF-4) goes in as its
 *   datasets when cairn is built with libhdf5: every dataset stored
 *   CONTIGUOUS in the file (128 bytes or more) is aggregated with the
 *   datasets of the same path and type of the other ranks and compressed by
 *   type (float and double by the float codecs); the rest of the file
 *   (metadata, attributes, CHUNKED, filtered and COMPACT datasets) is its
 *   skeleton, aggregated as bytes. Restart rebuilds the file byte for byte
 *   and checks the whole file's XXH3-64 taken at checkpoint time
 *   (CAIRN_ECORRUPT naming rank and file if it does not match). Any other
 *   file is stored whole.
 * NAME is a flat file name: 1..CAIRN_NAME_MAX bytes, no '/', not "." or "..",
 * and not the name of a protected variable (CAIRN_EINVAL says which rule).
 * Refused calls change nothing.
 */
CAIRN_EXPORT int cairn_route_file(cairn_ctx *ctx, const char *name, char *path, size_t path_len);

/* Local. NAME is no longer routed for the next checkpoint (CAIRN_EINVAL if it
 * is not routed). A file already written there stays until the next
 * checkpoint or restart empties the directory. */
CAIRN_EXPORT int cairn_unroute_file(cairn_ctx *ctx, const char *name);

/*
 * Collective. Write generation ID (>= 0, greater than any generation this
 * context wrote or restored) at LEVEL. Returns when the generation is
 * complete on every rank; a crash at any instant leaves the previous complete
 * generation restorable. The files routed for it are taken in (see
 * cairn_route_file). Level 1 always; level 2
 * adds a copy of each node's files on the next node; level 3 adds Cauchy
 * Reed-Solomon parity across the nodes of each encoding set (config
 * erasure.*). Levels 2 and 3 copy or encode only data that verifies: every
 * rank file is checked against the node manifest and its block checksums as
 * it is read, and a damaged one (CAIRN_ECORRUPT, naming the file and block)
 * is neither copied nor encoded. If level 2 or 3 fails, the generation stays
 * complete at level 1 and the error says so. Level 4 also writes the generation to the parallel
 * file system (pfs.dir; CAIRN_ECONFIG without it), aggregated N->M, after
 * raising it to the highest of levels 3 and 2 the job can do; so does every
 * pfs.every-th checkpoint.
 * Writing an id that exists never replaces a complete generation in place:
 * that one and every newer one (node-local and PFS; a fresh start, or a run
 * gone back to an older generation) are first set aside as
 * "abandoned-gen-<id>", kept but never restored (removed instead with
 * store.prune_abandoned = on); so a run that declined a restart may start
 * again from id 0 or 1. An incomplete one (a checkpoint that died) is
 * removed. A generation id a job of another layout wrote (node-local or
 * PFS) is refused: CAIRN_EMISMATCH, and it stays.
 * The label given by cairn_label (rank 0's) goes with the generation, and is
 * cleared by any call that gets past the argument checks, as the routes.
 * Afterwards older generations are pruned (store.keep, pfs.keep), only ever
 * this layout's. Newer complete ones (an abandoned timeline: the run
 * restarted from an older generation) are set aside as "abandoned-gen-<id>",
 * kept but never restored, unless store.prune_abandoned = on removes them.
 * With incr.mode = on, a generation stores only the blocks that changed since
 * its parent (the newest generation at LEVEL or above); every incr.full_every
 * generations, or when more than incr.max_changed percent of the blocks
 * changed, it is stored whole. Restart applies the chain. At level 4 an
 * increment goes to the PFS as an increment too when its parent is the
 * newest generation there, flushed from the same node-local files, and its
 * chain there is shorter than incr.full_every; otherwise it goes full. A
 * restore from the PFS applies the chain there from its full base; pfs.keep
 * never removes a generation a kept one needs.
 */
CAIRN_EXPORT int cairn_checkpoint(cairn_ctx *ctx, long id, int level);

/*
 * Collective. Restore every protected variable from generation ID, or from
 * the newest restorable one with CAIRN_LATEST; *RESTORED_ID (may be NULL)
 * receives the id. Protected variables must match the checkpoint in type and
 * element count (CAIRN_EMISMATCH otherwise); stored variables that are not
 * protected are ignored. With no variable protected at all, a generation
 * that holds variables for a rank is CAIRN_ESTATE ("no variable is protected:
 * protect the variables to restore before cairn_restart"); one that holds
 * only routed files (SCR-style applications) restores them. Before the first protected byte is written, on
 * every rank, for every file of the generation's incremental chain: every
 * stored byte is verified against its checksum and the node manifest, and
 * every compressed frame is decoded once into memory of the library's own
 * (kept, then copied into place: no frame is decoded twice) and checked
 * against the checksum of what it must decode to (a lossy variable thus
 * decodes to exactly the values whose error was measured within its bound
 * when stored); then the ranks agree. A corrupt or incomplete newer
 * generation is skipped with a warning when ID is CAIRN_LATEST.
 * On error protected memory is unchanged on every rank, with one exception:
 * if writing it fails after all those checks passed (out of memory,
 * CAIRN_ENOMEM, or a checkpoint file changed by another process during the
 * call, CAIRN_ECORRUPT), the message says "protected memory may be partly
 * overwritten", and then every rank's protected memory is undefined. The generation's routed files are put back in
 * files/rank-<r>/, which then holds nothing else (cairn_route_file).
 * When nothing can be restored, the code says why (cairn_errmsg names what):
 *   CAIRN_ECORRUPT  a generation exists but is damaged (a checksum, a missing
 *                   or truncated file, an unreadable manifest or PFS index),
 *                   on node-local storage or on the PFS;
 *   CAIRN_ELOST     a generation exists but more nodes lost it than its level
 *                   survives, and the PFS holds no usable copy;
 *   CAIRN_EMISMATCH only generations another layout wrote (the message names
 *                   both: "generation 3 was written by 4 ranks on 2 nodes;
 *                   this run has 2 ranks on 1 node"); they are left intact;
 *   CAIRN_ENOENT    no checkpoint of this job at all (nor of job.restart_from
 *                   on the PFS): the only code that means "start fresh".
 * A restore from node-local storage also reads back the newest PFS generation
 * and warns, naming the file, if it is damaged.
 *
 * Restart on another rank count or node layout (a remap). When no generation
 * of this run's layout can be restored (CAIRN_EMISMATCH above), at least one
 * variable is protected, and every protected variable is distributed
 * (cairn_protect_block) or replicated (cairn_protect_replicated), restart
 * remaps the newest generation of another layout (or generation ID) instead
 * of refusing: each rank receives exactly the elements of the global array
 * that fall in its declared block, assembled from the stored blocks (every
 * stored rank's block of that name, same type and global shape), bit-exact
 * (a lossy variable within its stored bound), and each replicated variable
 * gets stored rank 0's copy. Each stored rank file is read by one rank of
 * this run that can see it: node-local storage (levels 1-3, incremental
 * chains applied) when every stored rank's files are on nodes of this run
 * (same node names), else the PFS copy (level 4, job.restart_from honoured),
 * whichever holds the newer generation; lost nodes are not rebuilt first
 * (run `cairn rebuild` on the old layout for that). The stored rank files
 * are read in rounds of one per reading rank, twice: first all are verified
 * and decoded and the stored blocks checked to tile every new block; then
 * the pieces travel over MPI straight from the stored block (decoded, or a
 * raw node-local variable from its mapped file) into protected memory: a
 * rank holds at most one stored rank's decoded state (a PFS aggregated
 * file's ranks when reading the PFS) and, kept from the first reading for
 * the second, decoded stored ranks up to the size of its own blocks.
 * The same promises hold: every checksum verified and every frame decoded
 * before protected memory is written, on every rank, agreed; on error
 * protected memory is unchanged, with the same one exception (a failure
 * while the pieces move, after all that passed: CAIRN_ENOMEM decoding a
 * round again, CAIRN_ECORRUPT for a file changed during the call,
 * CAIRN_EMPI). A remap restores no routed files (the
 * directory files/rank-<r>/ is emptied); the next checkpoint id must exceed
 * the restored one. CAIRN_EMISMATCH, naming the variable and both layouts,
 * when a generation of another layout exists but cannot be remapped: a
 * protected variable neither distributed nor replicated, a stored rank
 * without that variable or its block, another type or global shape, or
 * stored blocks that do not tile the global array. cairn_restart_var,
 * cairn_var_query and cairn_restart_query do not remap: they keep answering
 * CAIRN_EMISMATCH (the query: CAIRN_RESTART_UNUSABLE) for such a generation.
 */
CAIRN_EXPORT int cairn_restart(cairn_ctx *ctx, long id, long *restored_id);

/*
 * Collective. Rebuild what lost or replaced nodes are missing of generation
 * ID (or of the newest generation that can be made whole, with CAIRN_LATEST)
 * from partner copies (level 2) or by decoding parity (level 3), and
 * regenerate lost copies and parity, without restoring anything into memory.
 * *REBUILT_ID (may be NULL) receives the id, -1 if there is no checkpoint.
 * cairn_restart does the same first. Fails with CAIRN_ELOST naming the
 * generation, the set and the nodes when more are lost than the level allows.
 */
CAIRN_EXPORT int cairn_rebuild(cairn_ctx *ctx, long id, long *rebuilt_id);

/*
 * Collective. Fill INFO[0..MAX-1] with the complete generations, newest
 * first; *COUNT receives how many exist (possibly more than MAX). Complete:
 * every rank holds it at levels 1-3, or the PFS holds it (level 4: this
 * job's, of this rank count, its index readable), node-local copies or not
 * (a direct level-4 checkpoint, nodes wiped or replaced). Like a restart,
 * it does not read the data to say so: cairn_restart_query does.
 */
CAIRN_EXPORT int cairn_generations(cairn_ctx *ctx, cairn_gen_info *info, int max, int *count);

/*
 * Collective. Say what cairn_restart(ctx, CAIRN_LATEST) would do, restricted
 * to generations with id <= MAX_ID (CAIRN_LATEST: any), without writing
 * protected memory or any file (no rebuild, staging or pruning; daemons left
 * alone): which generation, from which level, after rebuilding how many lost
 * nodes' files. Unlike cairn_generations, a generation that a rebuild or the
 * PFS can restore counts: it makes the restart's own choice between levels
 * 1-3 and the PFS, so with more nodes lost than levels 1-3 rebuild (what
 * cairn_rebuild fails with CAIRN_ELOST for) the plan is READY at level 4
 * when the PFS holds a usable copy, UNUSABLE (CAIRN_ELOST) only when it
 * does not. Returns 0 with PLAN filled whenever it could look
 * (PLAN->status tells "start fresh", CAIRN_RESTART_NONE, which is exactly a
 * restart's CAIRN_ENOENT, from "a checkpoint exists that this run cannot
 * use", CAIRN_RESTART_UNUSABLE with the restart's code, and then
 * cairn_errmsg says why); an error only when it could not look (CAIRN_EIO,
 * CAIRN_EMPI, ...). It verifies what a restart checks before it picks:
 * manifests and layouts, which nodes hold the files, partner copies and
 * parity, every block checksum of the chosen generation's chain on every
 * node that holds it, the PFS index and the checksums of the PFS files. It
 * neither compares the protected variables (it may come before
 * cairn_protect) nor decodes compressed frames: a frame that passes its
 * checksums but does not decode (only a bug or a crafted file) is found by
 * cairn_restart, which then restores an older generation than the plan said.
 */
CAIRN_EXPORT int cairn_restart_query(cairn_ctx *ctx, long max_id, cairn_restart_plan *plan);

/*
 * Collective. Describe this rank's stored variable NAME of generation ID
 * (CAIRN_LATEST: the one cairn_restart would restore), which need not be
 * protected yet: allocate INFO->bytes, protect, then cairn_restart_var.
 * Every rank names the same NAME (CAIRN_EINVAL otherwise). It chooses the
 * generation as cairn_restart does, and so first rebuilds lost nodes' files
 * and stages in a PFS generation when a restart would (files on node-local
 * storage, never protected memory or the routed files directory), then
 * verifies the chain's checksums. CAIRN_ENOENT (on every rank, naming the
 * rank) if the generation does not hold NAME as a variable for some rank;
 * the other codes as cairn_restart's. INFO->stored is what NAME takes in
 * generation ID's own file: the changed blocks only in an incremental one, 0
 * for a small variable packed into another's compressed frames, the raw size
 * once staged in from the PFS (which stores no error bound: 0 then).
 */
CAIRN_EXPORT int cairn_var_query(cairn_ctx *ctx, long id, const char *name, cairn_var_info *info);

/*
 * Collective. As cairn_restart, restoring only the protected variable NAME
 * (every rank names the same one; CAIRN_EINVAL if it is not protected):
 * the same choice of generation (rebuild and PFS staging first), the same
 * checks (every checksum of the chain, NAME's type and element count, every
 * frame decoded once into the library's memory, agreed, then copied) and the same promise on error; other
 * protected memory and the routed files directory are untouched. Like a
 * restart, it counts as restoring *RESTORED_ID for the next checkpoint's id.
 */
CAIRN_EXPORT int cairn_restart_var(cairn_ctx *ctx, long id, const char *name, long *restored_id);

/*
 * Local. Give the next cairn_checkpoint the label LABEL (1..CAIRN_LABEL_MAX
 * printable ASCII bytes; NULL clears it; anything else is CAIRN_EINVAL and
 * changes nothing), reported by cairn_generations, cairn_restart_query,
 * `cairn ls` and `cairn inspect`. Rank 0's label is the generation's, stored
 * in its manifests and PFS index. A label is for one checkpoint: the next
 * cairn_checkpoint past its argument checks clears it, completed or not.
 */
CAIRN_EXPORT int cairn_label(cairn_ctx *ctx, const char *label);

/*
 * Collective. Count one iteration and say whether a checkpoint is due: *LEVEL
 * receives 0 (none) or the highest level whose interval has passed since
 * that level's last checkpoint (the clocks start at cairn_init; a checkpoint
 * complete at level L restarts the clocks of levels <= L; a level returned
 * but not checkpointed stays due). Intervals come from the config:
 * ckpt.every_<L> = N (iterations: calls of this function) or Ns/Nm/Nh/Nd
 * (wall time), or ckpt.auto = on: each level's interval by the Young/Daly
 * formula from the measured cost of its checkpoints in this run (the wall
 * time of cairn_checkpoint on rank 0) and the failure rates fail.mtbf_<L>
 * (see docs/user-guide.md, "When to checkpoint"). A level this job cannot checkpoint at
 * (4 without pfs.dir, 2 on one node, 3 with too few nodes per set) is never
 * returned. Rank 0 decides; every rank gets the same answer. A NULL LEVEL on
 * any rank is CAIRN_EINVAL on every rank, and the call counts nothing.
 */
CAIRN_EXPORT int cairn_need_checkpoint(cairn_ctx *ctx, int *level);

/* Collective. Free the context; accepts NULL. Checkpoints stay on disk. */
CAIRN_EXPORT int cairn_finalize(cairn_ctx *ctx);

/* Name of error code RC (cairn's own or -errno). Never NULL. */
CAIRN_EXPORT const char *cairn_strerror(int rc);

/* Detailed message of the last call on CTX that failed, "" if the last call
 * succeeded (every call clears it; one exception: a cairn_restart_query whose
 * plan is CAIRN_RESTART_UNUSABLE leaves there why); NULL ctx gives the last
 * init failure. */
CAIRN_EXPORT const char *cairn_errmsg(const cairn_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif /* CAIRN_H */
