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
 */
#include "api/api.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct node_state {
    int64_t parent;     /* the generation's parent as this node knows it, -2 unknown */
    int32_t data_ok;    /* manifest valid, every rank file verified */
    int32_t parity_ok;  /* parity.ec valid and verified */
    int32_t partner_ok; /* partner/ copy of the previous node verified */
    int32_t level;      /* highest level this node's files claim, 0 if none */
    int32_t foreign;    /* written by a job of another rank/node layout */
    int32_t present;    /* 0 no directory of it, 1 one without a manifest, 2 with one */
} node_state;

/* Newest generation id <= BOUND with a directory on this node, or -1. */
static long local_newest(cairn_ctx *ctx, long bound)
{
    int fd = cn_dir_listing_fd(ctx->nodefd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    long best = -1;
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        int64_t g = cn_parse_gen_dirname(de->d_name);
        if (g >= 0 && g <= bound && g > best)
            best = (long)g;
    }
    closedir(d);
    return best;
}

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

/* What this node holds of generation ID. PIN receives its parity if valid. */
static node_state examine(cairn_ctx *ctx, long id, lvl_parity_in *pin)
{
    node_state st = {.parent = -2};
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
        }
        cn_manifest_free(&m);
        close(pfd);
    }
    close(genfd);
    return st;
}

/* Can generation ID be made whole from ALL? 0 yes, 1 not a level that can
 * rebuild (level 1), CAIRN_ELOST with a message when too much is lost. */
static int decide(cairn_ctx *ctx, long id, const node_state *all, int level)
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
static void note_level1_loss(cairn_ctx *ctx, long id, const node_state *all)
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

/* Write the manifest of a rebuilt member from the set description. */
static int write_rebuilt_manifest(cairn_ctx *ctx, int genfd, const cn_parity *p, int level)
{
    const cn_pmember *me = &p->members[ctx->set_member];
    cn_manifest m = {.level = (uint32_t)level, .target = p->target, .generation = p->generation,
                     .parent = p->parent, .base = p->base, .nranks = p->nranks,
                     .nnodes = p->nnodes, .node = me->node, .nlocal = me->nlocal,
                     .rank_node = p->rank_node, .local = me->local};
    memcpy(m.job, p->job, sizeof m.job);
    memcpy(m.node_name, me->node_name, sizeof m.node_name);
    return api_write_manifest(ctx, genfd, &m);
}

typedef struct dec_io {
    lvl_payload *payload;     /* survivors */
    const lvl_parity_in *pin; /* survivors */
    lvl_payload_out *pout;    /* lost */
    lvl_parity_out *parout;   /* lost */
} dec_io;

static int dec_read(void *arg, uint64_t off, void *buf, size_t len, cn_err *err)
{
    (void)err;
    lvl_payload_read(((dec_io *)arg)->payload, off, buf, len);
    return 0;
}

static int dec_read_parity(void *arg, int stripe, int row, uint64_t off, void *buf, size_t len,
                           cn_err *err)
{
    (void)stripe, (void)err;
    memcpy(buf, lvl_parity_row(((dec_io *)arg)->pin, row) + off, len);
    return 0;
}

static int dec_write_data(void *arg, uint64_t off, const void *buf, size_t len, cn_err *err)
{
    return lvl_payload_write(((dec_io *)arg)->pout, off, buf, len, err);
}

static int dec_write_parity(void *arg, int stripe, int row, uint64_t off, const void *buf,
                            size_t len, cn_err *err)
{
    (void)stripe;
    return lvl_parity_write(((dec_io *)arg)->parout, row, off, buf, len, err);
}

/* Share the set description from the first intact member of the set. */
static int share_description(cairn_ctx *ctx, const bool *lost, const lvl_parity_in *pin,
                             cn_parity *p)
{
    int root = 0;
    while (root < ctx->set_n && lost[root])
        root++;
    int len = root == ctx->set_member ? (int)cn_get_u32(pin->map + 12) : 0;
    if (MPI_Bcast(&len, 1, MPI_INT, root, ctx->set_comm) != MPI_SUCCESS)
        return cn_fail(&ctx->err, CAIRN_EMPI, "sharing the set description failed");
    uint8_t *buf = malloc((size_t)len);
    CN_FAIL_IF(!buf, &ctx->err, CAIRN_ENOMEM, "no memory");
    if (root == ctx->set_member)
        memcpy(buf, pin->map, (size_t)len);
    int rc = MPI_Bcast(buf, len, MPI_BYTE, root, ctx->set_comm) == MPI_SUCCESS
                 ? cn_parity_decode(buf, (size_t)len, p, &ctx->err)
                 : cn_fail(&ctx->err, CAIRN_EMPI, "sharing the set description failed");
    free(buf);
    return rc;
}

/* Level 3: decode this node's set if it has losses. */
static int rebuild_set(cairn_ctx *ctx, long id, const node_state *all, lvl_parity_in *pin)
{
    int first = api_set_first(ctx->set, ctx->nnodes, ctx->nsets);
    bool lost[EC_MAX_SHARDS] = {0}, any = false;
    for (int i = 0; i < ctx->set_n; i++)
        any |= lost[i] = !all[first + i].data_ok || !all[first + i].parity_ok;
    if (!any)
        return 0;
    char gen[64], gen_path[4500];
    cn_gen_dirname(gen, sizeof gen, id);
    snprintf(gen_path, sizeof gen_path, "%s/%s", ctx->node_path, gen);
    bool me_lost = lost[ctx->set_member];
    cn_parity p = {0};
    int rc = share_description(ctx, lost, pin, &p), genfd = -1;
    ec_codec *codec = NULL;
    dec_io io = {.pin = pin};
    if (rc == 0) {
        int kernel = p.form == EC_FORM_BITMATRIX                ? EC_KERNEL_BITMATRIX
                     : ctx->cfg.ec_kernel == EC_KERNEL_BITMATRIX ? EC_KERNEL_AUTO
                                                                 : ctx->cfg.ec_kernel;
        rc = ec_codec_new((int)(p.n - p.m), (int)p.m, (int)p.w, kernel, &codec, &ctx->err);
    }
    if (rc == 0 && (genfd = cn_dir_open(ctx->nodefd, gen, me_lost, &ctx->err)) < 0)
        rc = genfd;
    const cn_pmember *me = rc == 0 ? &p.members[ctx->set_member] : NULL;
    if (rc == 0 && !me_lost)
        rc = lvl_payload_open(genfd, me->local, me->nlocal, &io.payload, &ctx->err);
    if (rc == 0 && me_lost) {
        p.member = (uint32_t)ctx->set_member;
        rc = lvl_payload_create(genfd, me->local, me->nlocal, &io.pout, &ctx->err);
        if (rc == 0)
            rc = lvl_parity_create(genfd, &p, &io.parout, &ctx->err);
    }
    int worst = rc;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MIN, ctx->set_comm);
    if (rc == 0 && worst < 0)
        rc = api_echo(ctx, worst, "another member of set %d failed", ctx->set);
    if (rc == 0) {
        ec_ring_io rio = {dec_read, dec_write_parity, dec_read_parity, dec_write_data, &io};
        rc = ec_ring_decode(ctx->set_comm, codec, p.chunk, ctx->cfg.ec_block, lost, &rio,
                            &ctx->err);
    }
    if (rc == 0 && me_lost) {
        rc = lvl_payload_commit(io.pout, gen_path, &ctx->err);
        io.pout = NULL;
        if (rc == 0)
            rc = lvl_parity_commit(io.parout, genfd, &ctx->err);
        io.parout = NULL;
        if (rc == 0)
            rc = write_rebuilt_manifest(ctx, genfd, &p, (int)p.level);
        if (rc == 0)
            cn_warn("rebuilt %s by decoding (set %d)", gen_path, ctx->set);
    }
    lvl_payload_abort(io.pout);
    lvl_parity_abort(io.parout, genfd);
    lvl_payload_close(io.payload);
    ec_codec_free(codec);
    cn_parity_free(&p);
    if (genfd >= 0)
        close(genfd);
    return rc;
}

/* Level 2: the successor of every lost node sends its copy back. */
static int restore_from_partner(cairn_ctx *ctx, long id, const node_state *all)
{
    int next = (ctx->node + 1) % ctx->nnodes, prev = (ctx->node + ctx->nnodes - 1) % ctx->nnodes;
    char gen[64];
    cn_gen_dirname(gen, sizeof gen, id);
    int rc = 0;
    size_t block = ctx->cfg.ec_block;
    uint8_t *buf = malloc(block);
    if (!buf)
        return cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    if (!all[prev].data_ok) { /* send my copy of prev back to it */
        int genfd = cn_dir_open(ctx->nodefd, gen, false, &ctx->err);
        int pfd = genfd >= 0 ? cn_dir_open(genfd, "partner", false, &ctx->err) : -1;
        uint8_t *mf = NULL;
        size_t mlen = 0;
        cn_manifest m = {0};
        lvl_payload *pl = NULL;
        rc = pfd < 0 ? pfd : cn_read_small(pfd, CN_MANIFEST_NAME, 64u << 20, &mf, &mlen, &ctx->err);
        if (rc == 0)
            rc = cn_manifest_decode(mf, mlen, &m, &ctx->err);
        if (rc == 0)
            rc = lvl_payload_open(pfd, m.local, m.nlocal, &pl, &ctx->err);
        uint64_t hdr[2] = {rc == 0 ? mlen : 0, rc == 0 ? lvl_payload_size(pl) : 0};
        MPI_Send(hdr, 2, MPI_UINT64_T, prev, 1, ctx->leaders);
        if (rc == 0)
            MPI_Send(mf, (int)mlen, MPI_BYTE, prev, 2, ctx->leaders);
        for (uint64_t off = 0; rc == 0 && off < hdr[1]; off += block) {
            size_t n = hdr[1] - off < block ? (size_t)(hdr[1] - off) : block;
            lvl_payload_read(pl, off, buf, n);
            MPI_Send(buf, (int)n, MPI_BYTE, prev, 3, ctx->leaders);
        }
        lvl_payload_close(pl);
        cn_manifest_free(&m);
        free(mf);
        if (pfd >= 0)
            close(pfd);
        if (genfd >= 0)
            close(genfd);
    }
    if (!all[ctx->node].data_ok) { /* receive mine from next */
        uint64_t hdr[2];
        MPI_Recv(hdr, 2, MPI_UINT64_T, next, 1, ctx->leaders, MPI_STATUS_IGNORE);
        uint8_t *mf = hdr[0] ? malloc(hdr[0]) : NULL;
        cn_manifest m = {0};
        lvl_payload_out *out = NULL;
        int genfd = -1;
        if (!hdr[0])
            rc = cn_fail(&ctx->err, CAIRN_ELOST, "node %d could not send the partner copy", next);
        else
            MPI_Recv(mf, (int)hdr[0], MPI_BYTE, next, 2, ctx->leaders, MPI_STATUS_IGNORE);
        if (rc == 0)
            rc = cn_manifest_decode(mf, hdr[0], &m, &ctx->err);
        if (rc == 0 && (genfd = cn_dir_open(ctx->nodefd, gen, true, &ctx->err)) < 0)
            rc = genfd;
        if (rc == 0)
            rc = lvl_payload_create(genfd, m.local, m.nlocal, &out, &ctx->err);
        for (uint64_t off = 0; hdr[0] && off < hdr[1]; off += block) {
            size_t n = hdr[1] - off < block ? (size_t)(hdr[1] - off) : block;
            MPI_Recv(buf, (int)n, MPI_BYTE, next, 3, ctx->leaders, MPI_STATUS_IGNORE);
            if (rc == 0)
                rc = lvl_payload_write(out, off, buf, n, &ctx->err);
        }
        if (rc == 0) {
            rc = lvl_payload_commit(out, gen, &ctx->err);
            out = NULL;
        }
        if (rc == 0)
            rc = cn_write_atomic(genfd, CN_MANIFEST_NAME, mf, hdr[0], &ctx->err);
        lvl_payload_abort(out);
        cn_manifest_free(&m);
        free(mf);
        if (genfd >= 0)
            close(genfd);
    }
    free(buf);
    return rc;
}

/* Leaders: agree on a code over the leaders' communicator. */
static int leaders_agree(cairn_ctx *ctx, int rc)
{
    int worst = rc;
    if (MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MIN, ctx->leaders) != MPI_SUCCESS)
        return cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allreduce among node leaders failed");
    if (rc == 0 && worst < 0)
        return api_echo(ctx, worst, "rebuild failed on another node");
    return rc;
}

/* Leaders: make generation ID whole given every node's state. */
static int rebuild(cairn_ctx *ctx, long id, const node_state *all, int level, lvl_parity_in *pin)
{
    if (level >= CAIRN_LEVEL_ERASURE)
        return leaders_agree(ctx, rebuild_set(ctx, id, all, pin));
    int rc = leaders_agree(ctx, restore_from_partner(ctx, id, all));
    if (rc < 0)
        return rc;
    char gen[64];
    cn_gen_dirname(gen, sizeof gen, id);
    int genfd = cn_dir_open(ctx->nodefd, gen, false, &ctx->err);
    cn_manifest m = {0};
    rc = genfd < 0 ? genfd : api_read_manifest(ctx, genfd, &m);
    rc = leaders_agree(ctx, rc);
    if (rc == 0) /* make every partner copy anew: the lost nodes held some */
        rc = leaders_agree(ctx, api_partner_copy(ctx, genfd, &m));
    cn_manifest_free(&m);
    if (genfd >= 0)
        close(genfd);
    return rc;
}

/* What one recovery learned of one generation. */
typedef struct link_fate {
    long id, parent;
    int rc;             /* make_whole's result */
} link_fate;

#define FATES_MAX 256

/*
 * Leaders: make generation ID whole (examine every node, decide, rebuild).
 * Returns 0 when it is whole (*PARENT: its parent, -1 if full), 1 when it is
 * at level 1 with losses (nothing to rebuild from), 2 when it was written by
 * a job of another layout (for restart to refuse), CAIRN_ELOST with a
 * message when too much is lost, or another error.
 */
static int make_whole(cairn_ctx *ctx, long id, node_state *all, long *parent)
{
    lvl_parity_in pin = {0};
    node_state st = examine(ctx, id, &pin);
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
    else if ((rc = decide(ctx, id, all, level)) == 0)
        rc = rebuild(ctx, id, all, level, &pin);
    else if (rc == 1)
        note_level1_loss(ctx, id, all);
    lvl_parity_close(&pin);
    if (rc == 0 && *parent == -2)
        *parent = -1; /* whole, yet nobody names a parent: cannot happen; stop here */
    return rc;
}

/* Make ID whole, and every link of its chain; memoized in F (N entries). *BROKEN
 * receives the link that could not be made whole. */
static int make_chain_whole(cairn_ctx *ctx, long id, node_state *all, link_fate *f, int *n,
                            long *broken)
{
    int rc = 0;
    for (long link = id; link >= 0 && rc == 0;) {
        link_fate *known = NULL;
        for (int i = 0; i < *n && !known; i++)
            known = f[i].id == link ? &f[i] : NULL;
        long parent = -1;
        if (known) {
            rc = known->rc;
            parent = known->parent;
            if (rc != 0)
                cn_fail(&ctx->err, rc < 0 ? rc : CAIRN_ELOST,
                        "generation %ld cannot be made whole (see above)", link);
        } else {
            rc = make_whole(ctx, link, all, &parent);
            if (*n < FATES_MAX)
                f[(*n)++] = (link_fate){link, parent, rc};
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

/* Leaders: the recovery loop over candidate generations, newest first. */
static int recover_leader(cairn_ctx *ctx, long id, long *chosen)
{
    long bound = id == CAIRN_LATEST ? LONG_MAX : id;
    node_state *all = malloc(sizeof *all * (size_t)ctx->nnodes);
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
        rc = make_chain_whole(ctx, cand, all, fates, &nfates, &broken);
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
    /* A replaced node may have lost its directory under this very context. */
    int rc = api_agree(ctx, api_reopen_dirs(ctx));
    if (rc < 0)
        return rc;
    rc = ctx->node_rank == 0 ? recover_leader(ctx, id, &got) : 0;
    rc = api_agree(ctx, rc);
    if (MPI_Bcast(&got, 1, MPI_LONG, 0, ctx->comm) != MPI_SUCCESS && rc == 0)
        rc = CAIRN_EMPI;
    *chosen = got;
    return rc;
}
