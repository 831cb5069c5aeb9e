/*
 * partner.h - the contract of src/levels/partner, level 2: a copy of each
 * node's rank files of a generation on the next node (node i -> node
 * (i + 1) mod nnodes), in gen-<id>/partner/ (level2.c). Called by src/api
 * (raise.c, the daemons' work); a lost node's files come back from its
 * partner's copy in src/levels/parity's recovery (rebuild.c), which examines
 * and rebuilds levels 2 and 3 together. Collective half only: it runs on the
 * node leaders over a cairn_ctx (src/api) and is built with mpicc.
 */
#ifndef CAIRN_LEVELS_PARTNER_H
#define CAIRN_LEVELS_PARTNER_H

#include "common/common.h"

/* Level 2 for generation ID, by node leaders (level2.c). M is this node's
 * level-1 manifest. A local result; callers agree. */
int api_partner_copy(cairn_ctx *ctx, int genfd, const cn_manifest *m);

#endif /* CAIRN_LEVELS_PARTNER_H */
