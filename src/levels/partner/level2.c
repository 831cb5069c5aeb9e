/*
 * level2.c - level 2: a copy of each node's files of a generation on the next
 * node (node i -> node (i + 1) mod nnodes), in gen-<id>/partner/.
 *
 * Run by node leaders over ctx->leaders. Every leader sends its manifest and
 * payload to its successor and receives its predecessor's at the same time
 * (MPI_Sendrecv, block by block, so memory stays bounded). What is sent is
 * verified as it is read (header against the manifest, every block against
 * its checksum, in the same pass): a damaged rank file is reported and no
 * leader commits a copy. A copy is committed only after every file verifies
 * against the copied manifest.
 */
#include "core/core.h"
#include "levels/local/local.h"
#include "levels/partner/partner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PARTNER_DIR "partner"

static int sendrecv_bytes(cairn_ctx *ctx, const void *out, int nout, int to, void *in, int nin,
                          int from)
{
    if (MPI_Sendrecv(out, nout, MPI_BYTE, to, 0, in, nin, MPI_BYTE, from, 0, ctx->leaders,
                     MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return cn_fail(&ctx->err, CAIRN_EMPI, "partner copy: MPI_Sendrecv failed");
    return 0;
}

/* Stream this node's payload to TO while receiving FROM's into COPY, in
 * TOTAL / block steps (the same count on every leader). */
static int stream(cairn_ctx *ctx, lvl_payload *mine, lvl_payload_out *copy,
                  uint64_t their_size, uint64_t total, int to, int from)
{
    size_t block = ctx->cfg.ec_block;
    uint8_t *sb = malloc(block), *rb = malloc(block);
    int rc = (!sb || !rb) ? cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory") : 0;
    uint64_t my_size = lvl_payload_size(mine);
    /* A local error (a damaged block here, a write error) must not stop the
     * exchange the neighbours wait on: zeros go out after it, and nothing is
     * committed anywhere (api_partner_copy agrees first). */
    for (uint64_t off = 0; sb && rb && off < total; off += block) {
        int ns = (int)(off < my_size ? (my_size - off < block ? my_size - off : block) : 0);
        int nr = (int)(off < their_size ? (their_size - off < block ? their_size - off : block)
                                        : 0);
        int rrc = rc == 0 ? lvl_payload_read_checked(mine, off, sb, (size_t)ns, &ctx->err) : -1;
        if (rrc < 0) {
            rc = rc ? rc : rrc;
            memset(sb, 0, (size_t)ns);
        }
        int mpi = sendrecv_bytes(ctx, sb, ns, to, rb, nr, from);
        if (mpi < 0)
            return free(sb), free(rb), mpi;
        if (rc == 0 && nr)
            rc = lvl_payload_write(copy, off, rb, (size_t)nr, &ctx->err);
    }
    free(sb);
    free(rb);
    return rc;
}

int api_partner_copy(cairn_ctx *ctx, int genfd, const cn_manifest *m)
{
    int to = (ctx->node + 1) % ctx->nnodes, from = (ctx->node + ctx->nnodes - 1) % ctx->nnodes;
    uint8_t *mine = NULL, *theirs = NULL;
    size_t mine_len = 0;
    int their_len = 0, rc = cn_read_small(genfd, CN_MANIFEST_NAME, 64u << 20, &mine, &mine_len,
                                          &ctx->err);
    int my_len = rc == 0 ? (int)mine_len : 0;
    /* Every step below is collective with the neighbours: keep going on
     * failure with empty messages, and report the first error. */
    int rc2 = sendrecv_bytes(ctx, &my_len, sizeof my_len, to, &their_len, sizeof their_len, from);
    rc = rc ? rc : rc2;
    theirs = malloc(their_len > 0 ? (size_t)their_len : 1);
    rc2 = sendrecv_bytes(ctx, mine, my_len, to, theirs, theirs ? their_len : 0, from);
    rc = rc ? rc : rc2;
    cn_manifest pm = {0};
    lvl_payload *payload = NULL;
    lvl_payload_out *copy = NULL;
    int dirfd = -1;
    uint64_t their_size = 0;
    if (rc == 0)
        rc = cn_manifest_decode(theirs, (size_t)their_len, &pm, &ctx->err);
    for (uint32_t i = 0; rc == 0 && i < pm.nlocal; i++)
        their_size += pm.local[i].file_size;
    if (rc == 0)
        rc = lvl_payload_open(genfd, m->local, m->nlocal, &payload, &ctx->err);
    if (rc == 0) { /* never copy damaged data as if it were good */
        char gen[64], gen_path[sizeof ctx->node_path + 64];
        cn_gen_dirname(gen, sizeof gen, m->generation);
        snprintf(gen_path, sizeof gen_path, "%s/%s", ctx->node_path, gen);
        rc = lvl_payload_verify(payload, m->local, gen_path, &ctx->err);
    }
    if (rc == 0 && (dirfd = cn_dir_open(genfd, PARTNER_DIR, true, &ctx->err)) < 0)
        rc = dirfd;
    if (rc == 0)
        rc = lvl_payload_create(dirfd, pm.local, pm.nlocal, &copy, &ctx->err);
    /* Every leader streams the same number of blocks (the largest payload's),
     * and only if every leader got this far. */
    uint64_t mine2[2] = {payload ? lvl_payload_size(payload) : 0, rc == 0 ? 0u : 1u}, all[2];
    if (MPI_Allreduce(mine2, all, 2, MPI_UINT64_T, MPI_MAX, ctx->leaders) != MPI_SUCCESS)
        all[1] = 1, rc = rc ? rc : cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allreduce failed");
    if (rc == 0 && all[1])
        rc = api_echo(ctx, CAIRN_EIO, "partner copy failed on another node");
    if (rc == 0)
        rc = stream(ctx, payload, copy, their_size, all[0], to, from);
    /* Commit only if every leader sent verified data and stored what it got. */
    int worst = rc;
    if (all[1] == 0 &&
        MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MIN, ctx->leaders) != MPI_SUCCESS)
        worst = rc = rc ? rc : cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allreduce failed");
    if (rc == 0 && worst < 0)
        rc = api_echo(ctx, worst, "partner copy failed on another node");
    if (rc == 0) {
        rc = lvl_payload_commit(copy, "partner copy", &ctx->err);
        copy = NULL;
    }
    if (rc == 0)
        rc = cn_write_atomic(dirfd, CN_MANIFEST_NAME, theirs, (size_t)their_len, &ctx->err);
    lvl_payload_abort(copy);
    lvl_payload_close(payload);
    cn_manifest_free(&pm);
    if (dirfd >= 0)
        close(dirfd);
    free(mine);
    free(theirs);
    return rc;
}
