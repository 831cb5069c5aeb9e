/*
 * examine.c - what one node holds of a generation, and whether the nodes
 * together can make it whole (the reading half of recovery; recover.c runs
 * it, rebuild.c acts on it, and nothing here writes).
 *
 * A node holds generation ID intact when its manifest is of this job, node
 * and layout and every rank file it lists verifies (header checksum against
 * the manifest, every block checksum); it may also hold a valid parity file
 * of its set (level 3) and a verified partner copy of the previous node
 * (level 2). The label and seconds of the generation, and the bytes of state
 * of the node's ranks (and of the previous node's, from the partner copy),
 * come from the manifests read on the way.
 */
#include "core/core.h"
#include "levels/parity/parity.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Every rank file a manifest lists, verified under DIRFD. */
static bool files_ok(int dirfd, const cn_manifest *m)
{
    for (uint32_t i = 0; i < m->nlocal; i++) {
        char name[64];
        cn_rank_filename(name, sizeof name, m->local[i].rank);
        cn_ckpt *c = NULL;
        cn_err err = {0};
        bool ok = cn_ckpt_open(dirfd, name, name, &c, &err) == 0 &&
                  c->h.header_sum == m->local[i].header_sum && cn_ckpt_verify(c, name, &err) == 0;
        cn_ckpt_close(c);
        if (!ok) {
            cn_warn("recovery: %s", err.msg[0] ? err.msg : "rank file differs from the manifest");
            return false;
        }
    }
    return true;
}

/* A manifest M of generation ID seen on this node: its label, flags and seconds. */
static void take_label(api_node_state *st, const cn_manifest *m)
{
    if (st->labeled)
        return;
    st->labeled = 1;
    st->flags = m->flags;
    st->seconds = m->seconds;
    memcpy(st->label, m->label, sizeof st->label);
}

static uint64_t raw_of(const cn_manifest *m)
{
    uint64_t raw = 0;
    for (uint32_t i = 0; i < m->nlocal; i++)
        raw += m->local[i].raw;
    return raw;
}

/* What this node holds of generation ID. PIN receives its parity if valid. */
api_node_state api_examine(cairn_ctx *ctx, long id, lvl_parity_in *pin)
{
    api_node_state st;
    memset(&st, 0, sizeof st); /* gathered as bytes: no stray padding */
    st.parent = -2;
    char gen[64];
    cn_gen_dirname(gen, sizeof gen, id);
    cn_err err = {0};
    int genfd = cn_dir_open(ctx->nodefd, gen, false, &err);
    if (genfd < 0)
        return st;
    cn_manifest m = {0};
    cn_err saved = ctx->err;
    int mrc = api_read_manifest(ctx, genfd, &m);
    st.present = mrc == 0 || ctx->err.code != -ENOENT ? 2 : 1;
    ctx->err = saved;
    if (mrc == 0) {
        st.parent = m.generation == id ? m.parent : -2;
        st.level = (int32_t)m.level;
        st.foreign = !api_same_layout(ctx, &m);
        st.data_ok = api_manifest_of(ctx, &m, id, ctx->node) && files_ok(genfd, &m);
        if (st.data_ok) {
            take_label(&st, &m);
            st.raw = raw_of(&m);
        }
    }
    cn_manifest_free(&m);
    char ppath[4600];
    snprintf(ppath, sizeof ppath, "%s/%s/%s", ctx->node_path, gen, CN_PARITY_NAME);
    if (lvl_parity_open(genfd, ppath, pin, &err) == 0) {
        st.parity_ok = pin->meta.generation == id && strcmp(pin->meta.job, ctx->job) == 0 &&
                       pin->meta.set == (uint32_t)ctx->set &&
                       pin->meta.n == (uint32_t)ctx->set_n &&
                       pin->meta.member == (uint32_t)ctx->set_member;
        if (st.parity_ok && (int32_t)pin->meta.level > st.level)
            st.level = (int32_t)pin->meta.level;
        if (st.parity_ok)
            st.parent = pin->meta.parent;
        if (!st.parity_ok)
            lvl_parity_close(pin);
    } else if (err.code != CAIRN_ENOENT) {
        cn_warn("recovery: %s", err.msg);
    }
    int pfd = cn_dir_open(genfd, "partner", false, &err);
    if (pfd >= 0) {
        int prev = (ctx->node + ctx->nnodes - 1) % ctx->nnodes;
        if (api_read_manifest(ctx, pfd, &m) == 0) {
            st.partner_ok = api_manifest_of(ctx, &m, id, prev) && files_ok(pfd, &m);
            if (st.partner_ok && (int32_t)m.level > st.level)
                st.level = (int32_t)m.level;
            if (st.partner_ok) {
                take_label(&st, &m);
                st.prev_raw = raw_of(&m);
            }
        }
        cn_manifest_free(&m);
        close(pfd);
    }
    close(genfd);
    return st;
}

/* Can generation ID be made whole from ALL? 0 yes, 1 not a level that can
 * rebuild (level 1), CAIRN_ELOST with a message when too much is lost. */
int api_decide(cairn_ctx *ctx, long id, const api_node_state *all, int level)
{
    char lost[512] = "";
    int nlost = 0;
    for (int x = 0; x < ctx->nnodes; x++)
        if (!all[x].data_ok) {
            nlost++;
            size_t l = strlen(lost);
            snprintf(lost + l, sizeof lost - l, "%s%d", l ? " " : "", x);
        }
    if (level >= CAIRN_LEVEL_ERASURE) {
        for (int s = 0; s < ctx->nsets; s++) {
            int first = api_set_first(s, ctx->nnodes, ctx->nsets);
            int end = api_set_first(s + 1, ctx->nnodes, ctx->nsets), count = 0;
            char names[256] = "";
            for (int x = first; x < end; x++)
                if (!all[x].data_ok || !all[x].parity_ok) {
                    count++;
                    size_t l = strlen(names);
                    snprintf(names + l, sizeof names - l, "%s%d", l ? " " : "", x);
                }
            if (count > ctx->cfg.ec_m)
                return cn_fail(&ctx->err, CAIRN_ELOST,
                               "generation %ld: encoding set %d lost %d nodes (%s), level 3 "
                               "rebuilds at most erasure.m = %d",
                               id, s, count, names, ctx->cfg.ec_m);
        }
        return 0;
    }
    if (level == CAIRN_LEVEL_PARTNER) {
        for (int x = 0; x < ctx->nnodes; x++) {
            int p = (x + 1) % ctx->nnodes;
            if (!all[x].data_ok && !all[p].partner_ok)
                return cn_fail(&ctx->err, CAIRN_ELOST,
                               "generation %ld: node %d and its partner node %d are both lost "
                               "(lost: %s)",
                               id, x, p, lost);
        }
        return 0;
    }
    (void)nlost;
    return 1; /* level 1: nothing to rebuild from; restart reports what is wrong */
}

/* Generation ID at level 1, not whole: if some node holds it intact and
 * another has no directory of it (wiped or replaced; a checkpoint that died
 * leaves one on every node), it is lost, not unfinished: say so for restart. */
void api_note_level1_loss(cairn_ctx *ctx, long id, const api_node_state *all)
{
    char lost[512] = "";
    int intact = 0;
    for (int x = 0; x < ctx->nnodes; x++) {
        intact += all[x].data_ok;
        if (all[x].present == 0) {
            size_t l = strlen(lost);
            snprintf(lost + l, sizeof lost - l, "%s%d", l ? " " : "", x);
        }
    }
    if (intact && lost[0])
        api_note_lost(ctx, id, CAIRN_ELOST,
                      "generation %ld is lost: it was at level 1 (no copy on another node) and "
                      "node(s) %s no longer hold it", id, lost);
}

