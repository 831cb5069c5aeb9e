/*
 * remap.h - the contract of src/remap: a restart onto another rank count or
 * node layout. When no generation of this run's layout can be restored and
 * every protected variable is distributed or replicated (api_remap_applies,
 * src/api), the stored generation (node-local, or on the PFS through
 * levels/pfs/pfs.h) is read by the ranks that hold it and its blocks moved
 * over MPI into this run's blocks. Called by src/api's restart (restart.c)
 * only; the folder's own header, remap_impl.h, is not included outside it.
 *
 *   remap.c       the plan of a remap and its rounds of pieces over MPI;
 *   remap_plan.c  ... where the stored ranks are read, and by whom;
 *   remap_read.c  ... one stored rank's variables decoded, node-local or PFS;
 *   remap_move.c  ... what the stored blocks are, whether they cover this
 *                 run's blocks, and the pieces moved.
 */
#ifndef CAIRN_REMAP_H
#define CAIRN_REMAP_H

#include "cairn.h"

/* Collective (remap.c): restore generation ID (CAIRN_LATEST: the newest) of
 * another rank count or node layout into this run's blocks. Returns 1 when
 * no generation of another layout exists (the caller keeps its own error),
 * else 0 with *GOT, or an agreed error. */
int api_remap(cairn_ctx *ctx, long id, long *got);

#endif /* CAIRN_REMAP_H */
