/*
 * parity.h - the contract of src/levels/parity, level 3: Reed-Solomon parity
 * of each node's payload (src/levels/local) through the encoding ring of its
 * set (src/erasure), and the recovery of levels 2 and 3: what the nodes hold,
 * whether a generation can be made whole, and the rebuild from partner copies
 * or by decoding. Called by src/api (raise.c, restart, query) and the CLI
 * (the parity file's format). Outside this folder only this header is included.
 *
 *   pfile.c      the parity file's metadata: encoded, and decoded trusting
 *                nothing (no MPI; the CLI and the fuzz target use it).
 *   parity.c     the node's parity file: written in pieces, checksummed,
 *                committed atomically; read back and verified (no MPI).
 *   level3.c     the node's payload through the ring; its rows to parity.ec.
 *   examine.c    what a node holds of a generation; can the nodes rebuild it;
 *   recover.c    ... the recovery: which generation, rebuilt or (dry) not;
 *   rebuild.c    ... rebuild lost nodes from partner copies or by decoding.
 * The last four are the collective half (node leaders over a cairn_ctx of
 * src/api), built with mpicc.
 */
#ifndef CAIRN_LEVELS_PARITY_H
#define CAIRN_LEVELS_PARITY_H

#include "common/common.h"
#include "levels/local/local.h"

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


/* ---- the collective half (level3.c, examine.c, recover.c, rebuild.c) ---- */

/* Level 3 for generation ID, by node leaders (level3.c). M is this node's
 * level-1 manifest. A local result; callers agree. */
int api_encode(cairn_ctx *ctx, int genfd, const char *gen_path, const cn_manifest *m);

/*
 * Collective (recover.c). Make generation ID (or the newest recoverable one
 * with CAIRN_LATEST) whole on every node: rebuild lost nodes' files from
 * partner copies (level 2) or by decoding (level 3). *CHOSEN gets the id, or
 * -1 if no generation exists at all. Fails with CAIRN_ELOST naming the
 * generation, the set and the lost nodes when too many are lost. The caller
 * reopens the node directories first (api_reopen_dirs, src/api: a replaced
 * node may have lost its directory under this very context).
 */
int api_recover(cairn_ctx *ctx, long id, long *chosen);

/*
 * What cairn_restart's recovery would do, nothing written (recover.c, for
 * cairn_restart_query): collective, over generations <= BOUND. ID: the
 * generation it would make whole (-1 none), REBUILD the level (2, 3) at which
 * some link of ID's chain would be rebuilt (0 none: intact), NODES_LOST the
 * nodes that would get files back, LOST_HERE whether this rank's node is one
 * of them, CHAIN ID's links (id, parent; ID first), LEVEL the level ID's
 * nodes claim, LOST_RAW the bytes of state of the nodes that would get ID's
 * files back, LABEL and SECONDS ID's. Returns CAIRN_ELOST (message) when
 * generations exist that cannot be made whole and none older can, as
 * api_recover; nothing is changed.
 */
#define API_CHAIN_MAX 256
typedef struct api_link {
    long id, parent;
} api_link;
typedef struct api_recovery {
    long id;
    int rebuild, nodes_lost, level;
    bool lost_here;
    uint64_t lost_raw;
    double seconds;
    char label[CAIRN_LABEL_MAX + 1];
    int nchain;
    api_link chain[API_CHAIN_MAX];
} api_recovery;
int api_recover_plan(cairn_ctx *ctx, long bound, api_recovery *r);

/* What one node holds of a generation (recover.c examines, every leader
 * gathers every node's; rebuild.c acts on them). */
typedef struct api_node_state {
    int64_t parent;     /* the generation's parent as this node knows it, -2 unknown */
    int32_t data_ok;    /* manifest valid, every rank file verified */
    int32_t parity_ok;  /* parity.ec valid and verified */
    int32_t partner_ok; /* partner/ copy of the previous node verified */
    int32_t level;      /* highest level this node's files claim, 0 if none */
    int32_t foreign;    /* written by a job of another rank/node layout */
    int32_t present;    /* 0 no directory of it, 1 one without a manifest, 2 with one */
    int32_t labeled;    /* a manifest of it decoded here: LABEL, FLAGS and SECONDS are its */
    uint32_t flags;     /* CN_MF_* */
    double seconds;
    uint64_t raw;       /* bytes of state of this node's ranks (data_ok), */
    uint64_t prev_raw;  /* ... and of the previous node's, from the partner copy */
    char label[CAIRN_LABEL_MAX + 1];
} api_node_state;
/* Leaders (examine.c). What this node holds of generation ID (PIN receives
 * its parity if valid; close it with lvl_parity_close). Can generation ID be
 * made whole from ALL at LEVEL: 0 yes, 1 not a level that can rebuild (level
 * 1), CAIRN_ELOST with a message. A level-1 generation some node holds and a
 * wiped one does not: noted as lost for restart (api_note_lost). */
api_node_state api_examine(cairn_ctx *ctx, long id, lvl_parity_in *pin);
int api_decide(cairn_ctx *ctx, long id, const api_node_state *all, int level);
void api_note_level1_loss(cairn_ctx *ctx, long id, const api_node_state *all);
/* Leaders (rebuild.c): make generation ID, decided rebuildable at LEVEL (2 or
 * 3) from ALL (every node's state; PIN this node's parity if valid), whole. */
int api_rebuild_gen(cairn_ctx *ctx, long id, const api_node_state *all, int level,
                    lvl_parity_in *pin);

#endif /* CAIRN_LEVELS_PARITY_H */
