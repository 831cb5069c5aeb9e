/*
 * prune.c - which generations a node keeps after a checkpoint.
 *
 * Kept, among the generations up to the one just written: the store.keep
 * newest restorable ones, the newest restorable one at each level 2 and 3
 * (so a policy of "every 4th at level 3" never loses its only level-3 copy
 * to newer level-1 ones), the parents of the next checkpoints at each level
 * (ctx->incr), and every generation any of these needs: its incremental
 * chain down to the full generation it starts with. A generation is
 * restorable here when its manifest decodes and so is its parent's. Dropped:
 * the rest, but only generations this job and layout wrote (by their
 * manifest) or that have no manifest at all (a checkpoint that died): one of
 * another layout, or whose manifest does not read, is never touched. Newer
 * than the one just written (an abandoned timeline) are removed only with
 * store.prune_abandoned = on; by default a complete one is set aside as
 * "abandoned-gen-<id>" (cn_set_aside), kept but never restored in place of
 * this run's newer data (an incomplete one, a checkpoint that died, goes).
 * Before a checkpoint writes an id that exists (the run started afresh, or
 * went back), the same is done to that id and every newer one
 * (API_PRUNE_AT): the old complete generation is set aside, not replaced.
 * Node 0's leader does the same on the PFS (lvl_pfs_abandon, by
 * src/api/checkpoint.c). So an old chain goes once newer generations at every
 * level no longer need it. With a daemon the two halves split: the library
 * drops the newer ones when it writes a generation, cairnd the older ones
 * after raising it (a newer one may be on its way to cairnd then), and the
 * newest generation asked for at each level is kept too, raised or not: it
 * may be the parent the library diffs its next increment against.
 *
 * Dropping is a rename to ".trash-*" now (the name is free at once) and the
 * removal in a background thread (trash.c), off the critical path. Run by
 * each node leader on its own node's directory.
 */
#include "core/core.h"
#include "levels/local/local.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct pgen {
    long id, parent;
    int level, target;            /* reached, and asked for (1..3) */
    bool complete, restorable, keep;
    bool mine;                    /* may go: its manifest says this job and layout, or it has
                                   * none at all (a checkpoint that died before it) */
} pgen;

static int cmp_pgen_desc(const void *a, const void *b)
{
    long x = ((const pgen *)a)->id, y = ((const pgen *)b)->id;
    return (x < y) - (x > y);
}

/* G sorted newest first (cmp_pgen_desc): a binary search. */
static pgen *find(pgen *g, size_t n, long id)
{
    pgen key = {.id = id};
    return bsearch(&key, g, n, sizeof *g, cmp_pgen_desc);
}

/* Read what prune needs of generation G's manifest. */
static void examine(cairn_ctx *ctx, pgen *g)
{
    char name[64];
    cn_gen_dirname(name, sizeof name, g->id);
    cn_err saved = ctx->err, err = {0};
    int genfd = cn_dir_open(ctx->nodefd, name, false, &err);
    cn_manifest m;
    int rc = genfd >= 0 ? api_read_manifest(ctx, genfd, &m) : genfd;
    if (rc == 0) {
        g->complete = g->mine = api_manifest_of(ctx, &m, g->id, ctx->node);
        g->parent = (long)m.parent;
        g->level = (int)m.level;
        g->target = api_local_level(ctx, (int)m.target);
        cn_manifest_free(&m);
    } else {
        g->mine = genfd >= 0 && ctx->err.code == -ENOENT; /* no manifest was written */
    }
    ctx->err = saved; /* an unreadable manifest only makes G incomplete, and not ours to drop */
    if (genfd >= 0)
        close(genfd);
}

/* Keep G and every generation its chain needs. */
static void keep_chain(pgen *g, size_t n, pgen *x)
{
    for (; x && !x->keep; x = x->parent >= 0 ? find(g, n, x->parent) : NULL)
        x->keep = true;
}

bool api_prune(cairn_ctx *ctx, long id, int what)
{
    /* Every gen-* entry (a parent not seen would make its child look
     * unrestorable, and be dropped); if they cannot all be listed, nothing. */
    long *ids = NULL;
    int nids = 0;
    cn_err lerr = {0};
    pgen *g = NULL;
    if (cn_gen_list(ctx->nodefd, &ids, &nids, &lerr) < 0 ||
        !(g = calloc(nids ? (size_t)nids : 1, sizeof *g))) {
        cn_warn("prune: %s: cannot list its generations (%s); nothing pruned", ctx->node_path,
                lerr.msg[0] ? lerr.msg : "no memory");
        free(ids);
        return false;
    }
    size_t n = (size_t)nids;
    for (size_t i = 0; i < n; i++)
        g[i] = (pgen){.id = ids[i], .parent = -1};
    free(ids);
    if (!n) {
        free(g);
        return false;
    }
    qsort(g, n, sizeof *g, cmp_pgen_desc);
    for (size_t i = n; i-- > 0;) { /* oldest first: a parent is decided before its child */
        examine(ctx, &g[i]);
        pgen *p = g[i].parent >= 0 ? find(g, n, g[i].parent) : NULL;
        g[i].restorable = g[i].complete && (g[i].parent < 0 || (p && p->restorable));
    }
    int kept = 0;
    bool at_level[4] = {false}, at_target[4] = {false};
    for (size_t i = 0; i < n; i++) {
        if (g[i].id > id || !g[i].restorable)
            continue;
        bool newest_at = false;
        for (int l = 2; l <= 3; l++) {
            if (g[i].level >= l && !at_level[l])
                newest_at = at_level[l] = true;
            if (g[i].target >= l && !at_target[l]) /* may be a parent cairnd still raises */
                newest_at = at_target[l] = true;
        }
        if (kept < ctx->cfg.keep || newest_at)
            keep_chain(g, n, &g[i]);
        kept++;
    }
    for (int l = 1; l <= 3; l++)
        if (ctx->incr[l])
            keep_chain(g, n, find(g, n, (long)ctx->incr[l]->gen));
    int trashed = 0;
    bool at = what & API_PRUNE_AT; /* ID itself is set aside too (no id + 1: ID may be LONG_MAX) */
    long below = at ? id - 1 : id; /* the newest id kept in place */
    for (size_t i = 0; i < n; i++) {
        bool newer = g[i].id > below;
        if (!g[i].mine || (!newer ? g[i].keep || !(what & API_PRUNE_OLDER)
                                  : !(what & API_PRUNE_NEWER)))
            continue;
        if (newer && g[i].complete && !ctx->cfg.prune_abandoned) {
            /* An abandoned timeline: set aside, where no restart takes it
             * in place of this run's newer data, and kept. */
            char aside[128];
            cn_err err = {0};
            if (cn_set_aside(ctx->nodefd, g[i].id, aside, sizeof aside, &err) < 0)
                cn_warn("prune: %s: %s", ctx->node_path, err.msg);
            else if (ctx->node == 0 && !at)
                cn_warn("generation %ld is newer than generation %ld this run wrote (the "
                        "restart took an older one): set aside as %s on every node, never "
                        "restored; remove it with 'cairn prune --abandoned' (or set "
                        "store.prune_abandoned = on)", g[i].id, id, aside);
            else if (ctx->node == 0)
                cn_warn("generation %ld is not older than generation %ld this run is writing "
                        "(a fresh start, or a restart from an older one): set aside as %s on "
                        "every node, never restored; remove it with 'cairn prune --abandoned' "
                        "(or set store.prune_abandoned = on)", g[i].id, id, aside);
            continue;
        }
        int moved = cn_trash_gen(ctx->nodefd, g[i].id);
        if (moved == 0)
            trashed++;
        else
            cn_warn("prune: cannot move %s/" CN_GEN_PREFIX "%ld aside: %s", ctx->node_path,
                    g[i].id, strerror(-moved));
    }
    free(g);
    if (trashed)
        api_trash_empty(ctx, false);
    return true; /* the PFS's abandoned timeline: the caller's (src/api/checkpoint.c) */
}
