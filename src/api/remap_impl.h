/*
 * remap_impl.h - shared by remap.c (the rounds), remap_plan.c (where the
 * stored generation is read, and by whom) and remap_read.c (one stored
 * rank's variables decoded): a remapping restart's source and what a reader
 * hands over of one stored rank.
 */
#ifndef CAIRN_API_REMAP_IMPL_H
#define CAIRN_API_REMAP_IMPL_H

#include "api/api.h"

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

#endif /* CAIRN_API_REMAP_IMPL_H */
