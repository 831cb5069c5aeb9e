/*
 * recover.c - make a generation whole again after node losses.
 *
 * Node leaders examine the newest generation on any node: does this node
 * hold it intact (manifest, every rank file verified), its parity (level 3),
 * its partner copy of the previous node (level 2)? The states are gathered,
 * so every leader takes the same decision:
 *   - nothing lost: done;
 *   - level 3 and at most m members of every set lost (a corrupt file counts
 *     as lost): each set with losses decodes around its ring; lost members get
 *     their rank files, manifest and parity back, so the generation is fully
 *     protected again;
 *   - level 2 and every lost node's successor holds its copy: the copies are
 *     sent back and all partner copies are made anew;
 *   - otherwise CAIRN_ELOST naming generation, set and nodes; with
 *     CAIRN_LATEST the next older generation is tried (an older one may have
 *     been written at a higher level). A level-1 generation that a wiped
 *     node no longer holds is noted as lost for restart (api_note_lost);
 *   - a generation another layout wrote is passed over (CAIRN_LATEST).
 * An incremental generation is whole only when every link of its chain is:
 * the links are made whole one by one, from the generation down to the full
 * one its chain starts with (each link decoded with its own parity); a link
 * that cannot be makes the generation unusable, and the message names it.
 * Nothing is changed before the decision; rebuilt files are committed only
 * after they verify against the checksums the survivors hold.
 * Examining is examine.c, rebuilding rebuild.c. Dry (api_recover_plan, for
 * cairn_restart_query): the same examination and decisions, nothing
 * rebuilt; what would be is reported instead.
 */
#include "core/core.h"
#include "levels/parity/parity.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Newest generation id <= BOUND with a directory on this node, or -1. */
static long local_newest(cairn_ctx *ctx, long bound)
{
    long *ids = NULL, best = -1;
    int n = 0;
    cn_err ignored = {0};
    if (cn_gen_list(ctx->nodefd, &ids, &n, &ignored) < 0)
        return -1;
    for (int i = 0; i < n && best < 0; i++) /* newest first */
        if (ids[i] <= bound)
            best = ids[i];
    free(ids);
    return best;
}

/* What one recovery learned of one generation. */
typedef struct link_fate {
    long id, parent;
    int rc;             /* make_whole's result */
    int rebuild;        /* dry: 0, or the level (2, 3) it would be rebuilt at */
    bool lost_here;     /* dry: this node would get files of it back */
    int level;          /* the level its nodes claim */
    uint64_t lost_raw;  /* dry: bytes of state of the nodes that would get them back */
    double seconds;     /* its label and seconds, from a node that holds them */
    char label[CAIRN_LABEL_MAX + 1];
} link_fate;

#define FATES_MAX API_CHAIN_MAX

/* Dry: bytes of state of the nodes of ALL that lost generation ID's files, as
 * the survivors' descriptions give them (partner copies, parity sets). Over
 * the leaders; LEVEL 2 or 3. */
static uint64_t lost_raw(cairn_ctx *ctx, const api_node_state *all, int level,
                         const lvl_parity_in *pin)
{
    uint64_t mine = 0, sum = 0;
    int prev = (ctx->node + ctx->nnodes - 1) % ctx->nnodes;
    if (level == CAIRN_LEVEL_PARTNER && !all[prev].data_ok)
        mine = all[ctx->node].prev_raw; /* my copy of the previous node's */
    if (level >= CAIRN_LEVEL_ERASURE && all[ctx->node].parity_ok && pin->map) {
        int first = api_set_first(ctx->set, ctx->nnodes, ctx->nsets), root = -1;
        for (int i = 0; i < ctx->set_n && root < 0; i++)
            root = all[first + i].data_ok && all[first + i].parity_ok ? i : -1;
        for (int i = 0; root == ctx->set_member && i < ctx->set_n; i++) /* the set's first intact */
            for (uint32_t j = 0; !all[first + i].data_ok && j < pin->meta.members[i].nlocal; j++)
                mine += pin->meta.members[i].local[j].raw;
    }
    if (MPI_Allreduce(&mine, &sum, 1, MPI_UINT64_T, MPI_SUM, ctx->leaders) != MPI_SUCCESS)
        return 0;
    return sum;
}

/*
 * Leaders: make generation ID whole (examine every node, decide, rebuild).
 * Returns 0 when it is whole (*PARENT: its parent, -1 if full), 1 when it is
 * at level 1 with losses (nothing to rebuild from), 2 when it was written by
 * a job of another layout (for restart to refuse), CAIRN_ELOST with a
 * message when too much is lost, or another error. DRY: rebuild nothing; F
 * says what would be (and the level, label and seconds, dry or not).
 */
static int make_whole(cairn_ctx *ctx, long id, api_node_state *all, long *parent, bool dry,
                      link_fate *f)
{
    lvl_parity_in pin = {0};
    api_node_state st = api_examine(ctx, id, &pin);
    if (MPI_Allgather(&st, (int)sizeof st, MPI_BYTE, all, (int)sizeof st, MPI_BYTE,
                      ctx->leaders) != MPI_SUCCESS) {
        lvl_parity_close(&pin);
        return cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allgather among node leaders failed");
    }
    int level = 0, intact = 0, protected = 0, foreign = 0;
    *parent = -2;
    for (int x = 0; x < ctx->nnodes; x++) {
        level = all[x].level > level ? all[x].level : level;
        *parent = all[x].parent > *parent ? all[x].parent : *parent;
    }
    for (int x = 0; x < ctx->nnodes; x++) {
        intact += all[x].data_ok;
        protected += level == CAIRN_LEVEL_ERASURE   ? all[x].parity_ok
                     : level == CAIRN_LEVEL_PARTNER ? all[x].partner_ok
                                                    : 1;
        foreign += all[x].foreign;
    }
    int rc;
    if (foreign)
        rc = 2;
    else if (intact == ctx->nnodes && (protected == ctx->nnodes || level < CAIRN_LEVEL_PARTNER))
        rc = 0;
    else if ((rc = api_decide(ctx, id, all, level)) == 0 && dry) {
        f->rebuild = level;
        f->lost_here = !st.data_ok;
        f->lost_raw = lost_raw(ctx, all, level, &pin);
    } else if (rc == 0)
        rc = api_rebuild_gen(ctx, id, all, level, &pin);
    else if (rc == 1)
        api_note_level1_loss(ctx, id, all);
    lvl_parity_close(&pin);
    f->level = level;
    for (int x = ctx->nnodes; x-- > 0;) /* an intact node's, else any */
        if (all[x].labeled && (all[x].data_ok || !f->label[0])) {
            memcpy(f->label, all[x].label, sizeof f->label);
            f->seconds = all[x].seconds;
        }
    if (rc == 0 && *parent == -2)
        *parent = -1; /* whole, yet nobody names a parent: cannot happen; stop here */
    return rc;
}

/* Make ID whole, and every link of its chain; memoized in F (N entries). *BROKEN
 * receives the link that could not be made whole. DRY (not NULL): nothing is
 * rebuilt, and DRY says what would be. */
static int make_chain_whole(cairn_ctx *ctx, long id, api_node_state *all, link_fate *f, int *n,
                            long *broken, api_recovery *dry)
{
    int rc = 0;
    if (dry)
        memset(dry, 0, sizeof *dry);
    for (long link = id; link >= 0 && rc == 0;) {
        link_fate *known = NULL;
        for (int i = 0; i < *n && !known; i++)
            known = f[i].id == link ? &f[i] : NULL;
        long parent = -1;
        link_fate mine = {.id = link};
        if (known) {
            rc = known->rc;
            parent = known->parent;
            mine = *known;
            if (rc != 0)
                cn_fail(&ctx->err, rc < 0 ? rc : CAIRN_ELOST,
                        "generation %ld cannot be made whole (see above)", link);
        } else {
            rc = make_whole(ctx, link, all, &parent, dry != NULL, &mine);
            mine.parent = parent, mine.rc = rc;
            if (*n < FATES_MAX)
                f[(*n)++] = mine;
        }
        if (rc == 0 && dry && dry->nchain == API_CHAIN_MAX)
            rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "generation %ld: a chain of more than %d "
                         "links", id, API_CHAIN_MAX);
        if (rc == 0 && dry) {
            if (link == id) {
                dry->level = mine.level, dry->lost_raw = mine.lost_raw;
                dry->seconds = mine.seconds;
                memcpy(dry->label, mine.label, sizeof dry->label);
            }
            dry->chain[dry->nchain++] = (api_link){link, parent};
            dry->rebuild = mine.rebuild > dry->rebuild ? mine.rebuild : dry->rebuild;
            dry->lost_here |= mine.lost_here;
        }
        if (rc != 0)
            *broken = link;
        else
            link = parent;
    }
    if (rc != 0 && *broken != id && (rc == CAIRN_ELOST || rc == 1))
        cn_err_prefix(&ctx->err, "generation %ld needs generation %ld of its chain: ", id,
                      *broken);
    return rc;
}

/* Leaders: the recovery loop over candidate generations <= BOUND, newest
 * first (only ID unless it is CAIRN_LATEST). DRY: see api_recover_plan. */
static int recover_leader(cairn_ctx *ctx, long id, long bound, long *chosen, api_recovery *dry)
{
    api_node_state *all = malloc(sizeof *all * (size_t)ctx->nnodes);
    link_fate *fates = malloc(sizeof *fates * FATES_MAX);
    int nfates = 0;
    if (!all || !fates) {
        free(all), free(fates);
        return cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    }
    int rc = 0, first_loss = 0;
    char first_msg[CN_MSG_MAX] = "";
    *chosen = -1;
    for (;;) {
        long mine = local_newest(ctx, bound), cand = -1, broken = -1;
        if (MPI_Allreduce(&mine, &cand, 1, MPI_LONG, MPI_MAX, ctx->leaders) != MPI_SUCCESS) {
            rc = cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allreduce among node leaders failed");
            break;
        }
        if (cand < 0 || (id != CAIRN_LATEST && cand != id))
            break;
        rc = make_chain_whole(ctx, cand, all, fates, &nfates, &broken, dry);
        if (rc == 0) {
            *chosen = cand;
            break;
        }
        if (rc == 2) { /* another layout's: restart refuses it; an older one may be ours */
            rc = 0;
            if (id != CAIRN_LATEST)
                break;
            bound = cand - 1;
            continue;
        }
        if ((rc != CAIRN_ELOST && rc != 1) || id != CAIRN_LATEST) {
            rc = rc == 1 ? 0 : rc;
            break;
        }
        if (rc == CAIRN_ELOST && !first_loss) {
            first_loss = rc;
            snprintf(first_msg, sizeof first_msg, "%s", ctx->err.msg);
        }
        if (rc == CAIRN_ELOST)
            cn_warn("%s; trying an older generation", ctx->err.msg);
        rc = 0;
        bound = cand - 1;
    }
    free(all);
    free(fates);
    if (rc == 0 && *chosen < 0 && first_loss) {
        rc = first_loss;
        snprintf(ctx->err.msg, sizeof ctx->err.msg, "%s", first_msg);
    }
    return rc;
}

int api_recover(cairn_ctx *ctx, long id, long *chosen)
{
    long got = -1;
    long bound = id == CAIRN_LATEST ? LONG_MAX : id;
    int rc = ctx->node_rank == 0 ? recover_leader(ctx, id, bound, &got, NULL) : 0;
    rc = api_agree(ctx, rc);
    if (MPI_Bcast(&got, 1, MPI_LONG, 0, ctx->comm) != MPI_SUCCESS && rc == 0)
        rc = CAIRN_EMPI;
    *chosen = got;
    return rc;
}

int api_recover_plan(cairn_ctx *ctx, long bound, api_recovery *r)
{
    long got = -1;
    int rc = 0;
    memset(r, 0, sizeof *r);
    if (ctx->node_rank == 0) {
        rc = recover_leader(ctx, CAIRN_LATEST, bound, &got, r);
        int here = rc == 0 && got >= 0 && r->lost_here, lost = 0;
        if (MPI_Allreduce(&here, &lost, 1, MPI_INT, MPI_SUM, ctx->leaders) != MPI_SUCCESS)
            rc = rc ? rc : cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allreduce among leaders failed");
        r->nodes_lost = lost;
        if (got < 0)
            memset(r, 0, sizeof *r);
    }
    r->id = got;
    rc = api_agree(ctx, rc);
    bool here = r->lost_here; /* every rank of a node: its leader's */
    if (MPI_Bcast(r, sizeof *r, MPI_BYTE, 0, ctx->comm) != MPI_SUCCESS ||
        MPI_Bcast(&here, sizeof here, MPI_BYTE, 0, ctx->node_comm) != MPI_SUCCESS)
        rc = rc ? rc : api_agree(ctx, cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Bcast failed"));
    r->lost_here = here;
    return rc;
}
