/*
 * materialize.c - a rank's generation made a state for the flush (the state's
 * layout is in flush.c): its chain verified and applied into the state's
 * buffer, but for what a full generation's file can lend as it is: variables
 * stored raw (their bytes in place, with the file's block checksums) and
 * variables stored compressed lossless whole (their frames, which the writer
 * takes as they are: agg_lend.c). Every byte lent was verified against the
 * file's block checksums when api_chain_open opened the link, in the mapping
 * it is lent from: a damaged file fails there, and is not copied to the PFS.
 * Used by the flush (flush.c) and the epilog's flush from one node
 * (flushnode.c). The state owns what it lends from: the chain's mappings
 * stay open until api_state_free.
 */
#include "core/core.h"
#include "levels/pfs/pfs.h"

#include <stdlib.h>
#include <string.h>

typedef api_state state;

/* May entry E of a generation's only link be lent (its raw bytes in place)? */
static bool lendable(const cn_entry *e)
{
    return e->codec == CN_CODEC_RAW && !(e->flags & (CN_ENTRY_PACKED | CN_ENTRY_DELTA)) &&
           e->stored_size == e->raw_size;
}

/* May it be lent as its frames (a variable of its own, compressed lossless)? */
static bool lendable_frames(const cn_entry *e)
{
    const cz_codec *c = cz_codec_get(e->codec);
    return e->kind == CN_KIND_VAR && e->codec != CN_CODEC_RAW && c && !c->lossy &&
           !(e->flags & (CN_ENTRY_PACKED | CN_ENTRY_DELTA)) && e->frame_raw == e->raw_size &&
           e->stored_size > 0;
}

/* Rank RANK's generation ID rebuilt from its chain into *OUT: the variables
 * a full generation stores raw are lent from its verified file (no copy; the
 * state keeps the file open), those it stores compressed lossless whole are
 * lent as their frames, the rest copied or decoded. */
int api_materialize(cairn_ctx *ctx, int rank, long id, state *out)
{
    api_gen *g = NULL;
    int n = 0;
    CN_TRY(api_local_gens(ctx, rank, &g, &n));
    const api_gen *x = api_gen_find(g, n, id);
    api_chain ch = {0};
    int rc = x ? api_chain_open(ctx, rank, x, g, n, &ch)
               : cn_fail(&ctx->err, CAIRN_ENOENT, "rank %d: generation %ld is not complete on "
                         "node %s", rank, id, ctx->node_name);
    const cn_ckpt *c = rc == 0 ? ch.link[ch.n - 1] : NULL;
    uint32_t ne = c ? c->h.nentries : 0;
    api_member *m = c ? calloc(ne + 1, sizeof *m) : NULL;
    uint8_t **data = c ? calloc(ne + 1, sizeof *data) : NULL;
    void **ptrs = c ? calloc(ne + 1, sizeof *ptrs) : NULL;
    if (rc == 0 && (!m || !data || !ptrs))
        rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory to materialize rank %d", rank);
    for (uint32_t i = 0; rc == 0 && i < ne; i++) {
        const cn_entry *e = &c->e[i];
        m[i] = (api_member){.kind = e->kind, .type = e->type, .ndims = e->ndims,
                            .count = e->count, .size = e->raw_size, .name = e->name};
        memcpy(m[i].dims, e->dims, sizeof m[i].dims);
        if (ch.n == 1 && lendable(e))
            m[i].lent = (api_lent){c->map + e->offset, e->block_sums, c->h.block_size, 0, 0};
        else if (ch.n == 1 && lendable_frames(e))
            m[i].lent = (api_lent){c->map + e->offset, NULL, 0, e->codec, e->stored_size};
    }
    state st = {0};
    if (rc == 0)
        rc = api_state_build(ctx, rank, m, ne, &st, data);
    bool decode = false;
    for (uint32_t i = 0; rc == 0 && i < ne; i++) {
        const cn_entry *e = &c->e[i];
        if (!data[i])
            continue; /* lent */
        if (e->kind == CN_KIND_FILE) /* routed files whole (split if HDF5 in write_file) */
            memcpy(data[i], c->map + e->offset, e->raw_size);
        else
            ptrs[i] = data[i], decode = true;
    }
    if (rc == 0 && decode)
        rc = api_chain_apply(ctx, &ch, ptrs);
    if (rc == 0 && st.lent) { /* the state keeps the mapping its members point into */
        st.chain = malloc(sizeof *st.chain);
        if (st.chain)
            *st.chain = ch, ch = (api_chain){0};
        else
            rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory to materialize rank %d", rank);
    }
    api_chain_close(&ch);
    free(ptrs), free(data), free(m);
    free(g);
    if (rc < 0) {
        api_state_free(&st);
        return rc;
    }
    *out = st;
    return 0;
}
