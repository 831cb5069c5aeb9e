/*
 * remap_impl.h - shared by remap.c (the plan of a remap), remap_move.c (the
 * rounds), remap_plan.c (where the stored generation is read, and by whom)
 * and remap_read.c (one stored rank's variables decoded): a remapping
 * restart's source, what a reader hands over of one stored rank, and the
 * state of the rounds.
 */
#ifndef CAIRN_REMAP_IMPL_H
#define CAIRN_REMAP_IMPL_H

#include "core/core.h"
#include "levels/local/local.h"
#include "levels/parity/parity.h"
#include "levels/pfs/pfs.h"
#include "remap/remap.h"

enum { RM_LOCAL = 1, RM_PFS = 4 };

/* Where the stored generation is read: node-local generation directories of
 * this run's nodes (RM_LOCAL), or the PFS copy of job JOB (RM_PFS). */
typedef struct rm_source {
    int where;
    long gen;
    uint32_t nranks, nnodes;      /* the layout that wrote it */
    int level;                    /* RM_LOCAL: the level its manifests claim */
    char job[CN_JOB_MAX + 1];
    uint32_t group, nfiles;       /* RM_PFS: ranks per aggregated file, files */
} rm_source;

/* The remapped variables: the context's protected ones, in table order. */
typedef struct rm_vars {
    size_t n;
    api_var **v;
} rm_vars;

/* One stored rank as a reader decoded it: for each remapped variable, its
 * stored bytes (NULL if the rank stores none of that name), type, count;
 * and its layout record (NULL if none). All owned; rm_rank_free. A
 * variable stored raw and whole in its newest link is not copied: its DATA
 * points into that link's mapping (MAPPED[i]), which CHAIN holds open. */
typedef struct rm_rank {
    void **data;
    int *type;
    uint64_t *count;
    bool *mapped;
    uint8_t *layout;
    size_t layout_len;
    api_chain chain;              /* node-local: the verified links (n 0: none held) */
} rm_rank;
void rm_rank_free(rm_rank *r, size_t n);

/* Where to read (remap_plan.c). rm_local_newest: node leaders, local: the
 * newest generation <= BOUND of another layout in this node's directory, or
 * -1. rm_local_plan: collective: generation GEN's layout and which rank of
 * this run reads each stored rank (*OWNER, by stored rank; -1: no node of
 * this run holds it), agreed. rm_pfs_plan: collective: the newest PFS
 * generation <= BOUND of another rank count (this job's, else
 * job.restart_from's); SRC->gen -1 if none. */
long rm_local_newest(cairn_ctx *ctx, long bound);
int rm_local_plan(cairn_ctx *ctx, long gen, rm_source *src, int **owner);
int rm_pfs_plan(cairn_ctx *ctx, long bound, rm_source *src);

/* A reader of SRC's stored ranks (remap_read.c); rm_read: stored rank R,
 * fully verified (checksums of every link of its chain, or of the PFS file,
 * every frame decoded) into OUT. Errors in ctx->err. */
typedef struct rm_reader rm_reader;
int rm_reader_open(cairn_ctx *ctx, const rm_source *src, const rm_vars *vars, rm_reader **out);
int rm_read(rm_reader *rd, uint32_t rank, rm_rank *out);
void rm_reader_close(rm_reader *rd);

/* PFS: forget the loaded file, so that the next rm_read reads its ranks
 * again (node-local: nothing to forget). */
void rm_reader_rewind(rm_reader *rd);

/* A box of a global array (leading dimensions 1): start and count. */
typedef struct rm_box {
    uint64_t s[3], c[3];
} rm_box;

/* A remap under way: remap.c sets it up, remap_move.c surveys the stored
 * blocks and moves the pieces. */
typedef struct rm_state {
    cairn_ctx *ctx;
    const rm_source *src;
    rm_vars vars;
    size_t *es;                   /* element size per variable */
    void **dst;                   /* per variable: protected memory (this rank's block) */
    rm_box *nb;                   /* [rank * nv + i]: every rank's new block */
    uint8_t **seen;               /* per variable: elements a stored block covers */
    const long *list;             /* the stored ranks this rank reads, one a round */
    size_t nlist, rounds;
    int64_t *recs;                /* [round * size + rank]: every reader's stored blocks */
    int64_t *me;                  /* scratch: this rank's */
    rm_rank *held;                /* per round: this rank's stored rank kept from the survey */
    uint64_t room;                /* bytes decoded ranks may still be held in */
    int *cnt;                     /* a round's Alltoallw counts and (zero) displacements */
    MPI_Datatype *types;          /* ... its send and receive types */
    MPI_Datatype *pt;             /* per variable: a piece's subarray, */
    MPI_Aint *pd;                 /* ... address */
    int *pl;                      /* ... and count (1) */
    char was[96], now[96];
} rm_state;

/* Record of one stored rank's blocks: rc, stored rank (or -1), then per
 * variable start[3], count[3]. */
#define RM_REC_HEAD 2
#define RM_REC_VAR 6
#define RM_STRIDE(nv) (RM_REC_HEAD + RM_REC_VAR * (nv))

/* rm_new_box: V's global shape G and this rank's block B of it.
 * rm_survey (collective): every round read, its blocks checked and learnt
 * by all. rm_check: this rank's block covered exactly once by the stored
 * blocks. rm_move (collective): every round read again (or held) and its
 * pieces moved into protected memory; once pieces may have landed, a
 * failure's agreed message (ctx->msg) starts with RM_PARTLY. All agreed but
 * rm_check. */
#define RM_PARTLY "protected memory may be partly overwritten"
void rm_new_box(const api_var *v, rm_box *g, rm_box *b);
int rm_survey(rm_state *p, rm_reader *rd);
int rm_check(rm_state *p);
int rm_move(rm_state *p, rm_reader *rd);

#endif /* CAIRN_REMAP_IMPL_H */
