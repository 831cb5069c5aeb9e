/*
 * level3.c - level 3: the node's payload (its rank files of a generation)
 * through the encoding ring of its set; the parity rows it holds land in
 * gen-<id>/parity.ec together with a description of the whole set.
 *
 * Run by node leaders only, over ctx->set_comm (one member per node). Each
 * member's description (node, name, payload size, rank files) is gathered so
 * that every parity file can rebuild any member. The chunk is the largest
 * payload of the set divided by k = n - m, rounded up to the codec's
 * alignment: every member is padded to the largest (the paper's scheme).
 * The payload is verified as the ring reads it (levels/local/local.h,
 * lvl_payload_read_checked): a damaged rank file fails the set's encoding,
 * and its parity is never committed.
 */
#include "core/core.h"
#include "erasure/erasure.h"
#include "levels/parity/parity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One member's description: node, name, payload, nlocal, then nlocal
 * (rank, size, sum, raw, delta). */
#define DESC_FIXED (4 + CN_JOB_MAX + 1 + 8 + 4)
#define DESC_RANK 36

static size_t desc_pack(const cairn_ctx *ctx, const cn_manifest *m, uint8_t **out)
{
    size_t n = DESC_FIXED + DESC_RANK * (size_t)m->nlocal;
    uint8_t *b = calloc(1, n);
    if (!b)
        return 0;
    uint64_t payload = 0;
    for (uint32_t i = 0; i < m->nlocal; i++)
        payload += m->local[i].file_size;
    cn_put_u32(b, (uint32_t)ctx->node);
    memcpy(b + 4, ctx->node_name, strnlen(ctx->node_name, CN_JOB_MAX));
    cn_put_u64(b + 4 + CN_JOB_MAX + 1, payload);
    cn_put_u32(b + 12 + CN_JOB_MAX + 1, m->nlocal);
    for (uint32_t i = 0; i < m->nlocal; i++) {
        uint8_t *q = b + DESC_FIXED + DESC_RANK * (size_t)i;
        cn_put_u32(q, m->local[i].rank);
        cn_put_u64(q + 4, m->local[i].file_size);
        cn_put_u64(q + 12, m->local[i].header_sum);
        cn_put_u64(q + 20, m->local[i].raw);
        cn_put_u64(q + 28, m->local[i].delta);
    }
    *out = b;
    return n;
}

static int desc_unpack(const uint8_t *b, size_t n, cn_pmember *mb)
{
    if (n < DESC_FIXED)
        return -1;
    mb->node = cn_get_u32(b);
    memcpy(mb->node_name, b + 4, CN_JOB_MAX);
    mb->node_name[CN_JOB_MAX] = '\0';
    mb->payload = cn_get_u64(b + 4 + CN_JOB_MAX + 1);
    mb->nlocal = cn_get_u32(b + 12 + CN_JOB_MAX + 1);
    if (n != DESC_FIXED + DESC_RANK * (size_t)mb->nlocal)
        return -1;
    mb->local = calloc(mb->nlocal ? mb->nlocal : 1, sizeof *mb->local);
    if (!mb->local)
        return -1;
    for (uint32_t i = 0; i < mb->nlocal; i++) {
        const uint8_t *q = b + DESC_FIXED + DESC_RANK * (size_t)i;
        mb->local[i] = (cn_manifest_rank){cn_get_u32(q), cn_get_u64(q + 4), cn_get_u64(q + 12),
                                          cn_get_u64(q + 20), cn_get_u64(q + 28)};
    }
    return 0;
}

/* Gather every member's description of the set into P->members. */
static int gather_members(cairn_ctx *ctx, const cn_manifest *m, cn_parity *p)
{
    uint8_t *mine = NULL;
    int len = (int)desc_pack(ctx, m, &mine);
    int n = ctx->set_n, *lens = calloc((size_t)n, sizeof *lens), *offs = calloc((size_t)n, sizeof *offs);
    uint8_t *all = NULL;
    int rc = (!mine || !lens || !offs) ? cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory") : 0;
    if (MPI_Allgather(&len, 1, MPI_INT, lens, 1, MPI_INT, ctx->set_comm) != MPI_SUCCESS)
        rc = cn_fail(&ctx->err, CAIRN_EMPI, "gathering the set description failed");
    long total = 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        offs[i] = (int)total;
        total += lens[i];
    }
    if (rc == 0 && !(all = malloc((size_t)total + 1)))
        rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    if (MPI_Allgatherv(mine, len, MPI_BYTE, all, lens, offs, MPI_BYTE, ctx->set_comm) !=
        MPI_SUCCESS)
        rc = cn_fail(&ctx->err, CAIRN_EMPI, "gathering the set description failed");
    p->members = rc == 0 ? calloc((size_t)n, sizeof *p->members) : NULL;
    if (rc == 0 && !p->members)
        rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    for (int i = 0; rc == 0 && i < n; i++)
        if (desc_unpack(all + offs[i], (size_t)lens[i], &p->members[i]) != 0)
            rc = cn_fail(&ctx->err, CAIRN_ECORRUPT, "bad description from set member %d", i);
    free(mine), free(lens), free(offs), free(all);
    return rc;
}

typedef struct enc_io {
    lvl_payload *payload;
    lvl_parity_out *out;
    int n, member;
} enc_io;

/* The payload verified as the ring reads it: a damaged block fails the
 * encoding of the whole set (the ring agrees), so no parity of it is kept. */
static int enc_read(void *arg, uint64_t off, void *buf, size_t len, cn_err *err)
{
    return lvl_payload_read_checked(((enc_io *)arg)->payload, off, buf, len, err);
}

static int enc_write_parity(void *arg, int stripe, int row, uint64_t off, const void *buf,
                            size_t len, cn_err *err)
{
    enc_io *io = arg;
    CN_FAIL_IF(ec_parity_holder(io->n, stripe, row) != io->member, err, CAIRN_EINVAL,
               "ring delivered row %d of stripe %d to member %d", row, stripe, io->member);
    return lvl_parity_write(io->out, row, off, buf, len, err);
}

/* Fill the set-wide fields of a parity description (not members or sums). */
static void describe(const cairn_ctx *ctx, const cn_manifest *m, const ec_codec *codec,
                     uint64_t chunk, cn_parity *p)
{
    p->level = CAIRN_LEVEL_ERASURE;
    p->target = m->target;
    p->generation = m->generation;
    p->parent = m->parent;
    p->base = m->base;
    memcpy(p->job, ctx->job, sizeof p->job);
    p->nranks = (uint32_t)ctx->nranks;
    p->nnodes = (uint32_t)ctx->nnodes;
    p->rank_node = ctx->rank_node;
    p->set = (uint32_t)ctx->set;
    p->n = (uint32_t)ctx->set_n;
    p->m = (uint32_t)ctx->cfg.ec_m;
    p->w = (uint32_t)ctx->cfg.ec_w;
    p->form = (uint32_t)ec_codec_form(codec);
    p->member = (uint32_t)ctx->set_member;
    p->chunk = chunk;
    p->block_size = ctx->cfg.block_size;
}

int api_encode(cairn_ctx *ctx, int genfd, const char *gen_path, const cn_manifest *m)
{
    cn_parity p = {0};
    ec_codec *codec = NULL;
    lvl_payload *payload = NULL;
    lvl_parity_out *out = NULL;
    int k = ctx->set_n - ctx->cfg.ec_m;
    int rc = gather_members(ctx, m, &p);
    if (rc == 0)
        rc = ec_codec_new(k, ctx->cfg.ec_m, ctx->cfg.ec_w, ctx->cfg.ec_kernel, &codec, &ctx->err);
    if (rc == 0)
        rc = lvl_payload_open(genfd, m->local, m->nlocal, &payload, &ctx->err);
    if (rc == 0) /* never encode damaged data into parity as if it were good (enc_read) */
        rc = lvl_payload_verify(payload, m->local, gen_path, &ctx->err);
    uint64_t largest = 0;
    for (int i = 0; rc == 0 && i < ctx->set_n; i++)
        if (p.members[i].payload > largest)
            largest = p.members[i].payload;
    if (rc == 0) {
        uint64_t align = ec_codec_align(codec);
        uint64_t chunk = cn_align_up((largest + (uint64_t)k - 1) / (uint64_t)k, align);
        describe(ctx, m, codec, chunk ? chunk : align, &p);
        rc = lvl_parity_create(genfd, &p, &out, &ctx->err);
    }
    /* The ring is collective: run it only if every member got this far. */
    int worst = rc;
    if (api_allreduce_shared(ctx, &rc, &worst, 1, MPI_INT, MPI_MIN, ctx->set_comm) != 0)
        worst = rc = cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allreduce in the set failed");
    if (rc == 0 && worst < 0)
        rc = api_echo(ctx, worst, "another member of set %d failed", ctx->set);
    if (rc == 0) {
        enc_io io = {payload, out, ctx->set_n, ctx->set_member};
        ec_ring_io rio = {.read = enc_read, .write_parity = enc_write_parity, .arg = &io,
                          .nap = ctx->core_share > 0};
        rc = ec_ring_encode(ctx->set_comm, codec, p.chunk, ctx->cfg.ec_block, &rio, &ctx->err);
        if (rc == 0) {
            rc = lvl_parity_commit(out, genfd, &ctx->err);
            out = NULL;
        }
    }
    if (out)
        lvl_parity_abort(out, genfd);
    if (rc < 0)
        cn_err_prefix(&ctx->err, "%s: level 3: ", gen_path);
    lvl_payload_close(payload);
    ec_codec_free(codec);
    p.rank_node = NULL; /* borrowed from ctx */
    cn_parity_free(&p);
    return rc;
}
