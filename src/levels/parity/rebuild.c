/*
 * rebuild.c - the writing half of recovery (recover.c decides): generation
 * ID made whole on the nodes that lost it, run by node leaders once every
 * leader agreed that it can be.
 *   level 3  each set with losses decodes around its ring (ec_ring_decode):
 *            lost members get their rank files, parity and manifest back, so
 *            the generation is fully protected again;
 *   level 2  the successor of every lost node sends its partner copy back,
 *            then every partner copy is made anew.
 * A rebuilt manifest keeps the generation's level, label, flags and seconds
 * (from a node that holds them). Rebuilt files are committed only after they verify
 * against the checksums the survivors hold.
 */
#include "core/core.h"
#include "erasure/erasure.h"
#include "levels/parity/parity.h"
#include "levels/partner/partner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The node whose label, flags and seconds a rebuilt manifest takes: an intact one
 * (its own manifest, the newest seconds) if any, else any that read one. */
static const api_node_state *label_source(const cairn_ctx *ctx, const api_node_state *all)
{
    const api_node_state *any = NULL;
    for (int x = 0; x < ctx->nnodes; x++) {
        if (all[x].labeled && all[x].data_ok)
            return &all[x];
        if (all[x].labeled && !any)
            any = &all[x];
    }
    return any;
}

/* Write the manifest of a rebuilt member from the set description. */
static int write_rebuilt_manifest(cairn_ctx *ctx, int genfd, const cn_parity *p, int level,
                                  const api_node_state *all)
{
    const cn_pmember *me = &p->members[ctx->set_member];
    cn_manifest m = {.level = (uint32_t)level, .target = p->target, .generation = p->generation,
                     .parent = p->parent, .base = p->base, .nranks = p->nranks,
                     .nnodes = p->nnodes, .node = me->node, .nlocal = me->nlocal,
                     .rank_node = p->rank_node, .local = me->local};
    memcpy(m.job, p->job, sizeof m.job);
    memcpy(m.node_name, me->node_name, sizeof m.node_name);
    const api_node_state *src = label_source(ctx, all);
    m.flags = p->target == CAIRN_LEVEL_PFS ? CN_MF_PFS : 0;
    if (src) {
        memcpy(m.label, src->label, sizeof m.label);
        m.seconds = src->seconds;
        m.flags = src->flags;
    }
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
static int rebuild_set(cairn_ctx *ctx, long id, const api_node_state *all, lvl_parity_in *pin)
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
        ec_ring_io rio = {dec_read, dec_write_parity, dec_read_parity, dec_write_data, &io,
                          .nap = ctx->core_share > 0};
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
            rc = write_rebuilt_manifest(ctx, genfd, &p, (int)p.level, all);
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
static int restore_from_partner(cairn_ctx *ctx, long id, const api_node_state *all)
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
int api_rebuild_gen(cairn_ctx *ctx, long id, const api_node_state *all, int level,
                    lvl_parity_in *pin)
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
    /* A manifest sent back is the copy made when the generation was still at
     * level 1: now it is at LEVEL again, with the label and seconds it had. */
    const api_node_state *src = label_source(ctx, all);
    if (rc == 0 && !all[ctx->node].data_ok)
        rc = api_set_manifest_level(ctx, genfd, level, src ? src->seconds : -1);
    rc = leaders_agree(ctx, rc);
    cn_manifest_free(&m);
    if (genfd >= 0)
        close(genfd);
    return rc;
}
