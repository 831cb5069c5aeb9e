/*
 * remap_move.c - the rounds of a remap (remap.c plans them): what the stored
 * blocks are, whether they cover this run's blocks, and the pieces moved.
 *
 *   survey   in round t every reader reads its t-th stored rank (verified,
 *            every frame decoded: remap_read.c), checks its stored blocks
 *            against the protected variables, and all ranks learn every
 *            reader's blocks (MPI_Allgather). A stored rank is held for the
 *            move when its variables are lent from its mapped file (raw,
 *            node-local), or are decoded and fit in the room a scratch copy
 *            of this rank's blocks would take, or it is the last one this
 *            rank reads (from the PFS: in the last file it reads); else it
 *            is dropped and read again by the move.
 *   check    each rank marks the overlap of every stored block with its own
 *            blocks: every element must be covered exactly once (the stored
 *            blocks may neither overlap nor leave a gap), before anything is
 *            written.
 *   move     round by round again, last round first, each reader (its
 *            stored rank held, or read once more and found unchanged) cuts
 *            the overlap of each stored block with each rank's new block, and
 *            the pieces travel in one MPI_Alltoallw whose datatypes are those
 *            overlaps (subarrays), from the stored block straight into the
 *            receivers' protected memory: no packing, no scratch copy of the
 *            new blocks.
 * So every refusal (a damaged file, a variable that does not match, blocks
 * that overlap or leave a gap) comes before protected memory is touched, as
 * a plain restart's (chain.c) do; what can still fail during the move (out
 * of memory decoding a round again, MPI, a file changed under the restart)
 * says that protected memory may be partly overwritten.
 *
 * Memory per rank, as when the new blocks had a scratch copy: the stored
 * rank being decoded (a PFS file's ranks' when reading the PFS; lent ones
 * cost none), held ones up to the size of this rank's blocks, a bit per
 * element of its blocks.
 * Ownership: rm_state's buffers are remap.c's; held ranks are freed by the
 * move (or by remap.c on failure).
 */
#include "remap/remap_impl.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- boxes ----------------------------------------------------------------- */

static bool overlap(const rm_box *a, const rm_box *b, rm_box *o)
{
    for (int d = 0; d < 3; d++) {
        uint64_t lo = a->s[d] > b->s[d] ? a->s[d] : b->s[d];
        uint64_t ha = a->s[d] + a->c[d], hb = b->s[d] + b->c[d], hi = ha < hb ? ha : hb;
        if (hi <= lo)
            return false;
        o->s[d] = lo, o->c[d] = hi - lo;
    }
    return true;
}

/* Offset in elements of global point P in a buffer holding box B in C order. */
static uint64_t offset_in(const rm_box *b, uint64_t p0, uint64_t p1, uint64_t p2)
{
    return ((p0 - b->s[0]) * b->c[1] + (p1 - b->s[1])) * b->c[2] + (p2 - b->s[2]);
}

/* Set bits AT .. AT + N - 1 of SEEN; false if one was set already. */
static bool mark_run(uint8_t *seen, uint64_t at, uint64_t n)
{
    bool fresh = true;
    for (; n && at % 8; at++, n--) { /* head, bit by bit */
        fresh &= !(seen[at / 8] & (1u << (at % 8)));
        seen[at / 8] |= (uint8_t)(1u << (at % 8));
    }
    uint8_t *p = seen + at / 8;
    for (uint64_t b = 0; b < n / 8; b++) /* whole bytes */
        fresh &= p[b] == 0;
    memset(p, 0xff, n / 8);
    for (at += n / 8 * 8, n %= 8; n; at++, n--) { /* tail */
        fresh &= !(seen[at / 8] & (1u << (at % 8)));
        seen[at / 8] |= (uint8_t)(1u << (at % 8));
    }
    return fresh;
}

/* Mark O's elements covered in SEEN (bits over box B), a run of the last
 * dimension at a time; false if one was already. */
static bool mark_box(uint8_t *seen, const rm_box *b, const rm_box *o)
{
    bool fresh = true;
    for (uint64_t i = 0; i < o->c[0]; i++)
        for (uint64_t j = 0; j < o->c[1]; j++)
            fresh &= mark_run(seen, offset_in(b, o->s[0] + i, o->s[1] + j, o->s[2]), o->c[2]);
    return fresh;
}

/* V's global shape (3-D, leading dimensions 1) and this rank's block of it. */
void rm_new_box(const api_var *v, rm_box *g, rm_box *b)
{
    for (int d = 0; d < 3; d++)
        g->s[d] = 0, g->c[d] = 1, b->s[d] = 0, b->c[d] = 1;
    if (v->dist == API_DIST_REPLICATED) {
        g->c[2] = b->c[2] = v->count;
        return;
    }
    for (int d = 0; d < v->bdims; d++) {
        int at = 3 - v->bdims + d;
        g->c[at] = v->global[d];
        b->s[at] = v->start[d], b->c[at] = v->bcount[d];
    }
}

/* Reader: the blocks of stored rank R (decoded in RK) as boxes into REC,
 * after checking them against the protected variables. */
static int stored_blocks(rm_state *p, uint32_t r, const rm_rank *rk, int64_t *rec)
{
    cairn_ctx *ctx = p->ctx;
    for (size_t i = 0; i < p->vars.n; i++) {
        const api_var *v = p->vars.v[i];
        int64_t *b = rec + RM_REC_VAR * i;
        memset(b, 0, sizeof *b * RM_REC_VAR);
        const char *why = NULL;
        api_block sb = {0};
        int f = rk->layout ? api_layout_find(rk->layout, rk->layout_len, v->name, &sb)
                           : CAIRN_ENOENT;
        if (f == CAIRN_ECORRUPT)
            return cn_fail(&ctx->err, CAIRN_ECORRUPT, "generation %ld: stored rank %u: its "
                           "layout record does not parse", p->src->gen, r);
        if (v->dist == API_DIST_REPLICATED && r != 0)
            continue; /* rank 0's copy only */
        if (!rk->data[i])
            why = "does not store it";
        else if (rk->type[i] != (int)v->type)
            why = "stores it with another type";
        else if (v->dist == API_DIST_REPLICATED && rk->count[i] != v->count)
            why = "stores another element count";
        else if (v->dist == API_DIST_BLOCK && f != 0)
            why = "stores it without a block (cairn_protect_block)";
        else if (v->dist == API_DIST_BLOCK && sb.dist != API_DIST_BLOCK)
            why = "stores it replicated, not as a block";
        else if (v->dist == API_DIST_BLOCK && sb.ndims != v->bdims)
            why = "stores a block of another number of dimensions";
        for (int d = 0; !why && v->dist == API_DIST_BLOCK && d < v->bdims; d++)
            why = sb.global[d] != v->global[d] ? "stores a block of another global shape" : NULL;
        uint64_t vol = 1;
        for (int d = 0; !why && v->dist == API_DIST_BLOCK && d < sb.ndims; d++)
            vol *= sb.count[d];
        if (!why && v->dist == API_DIST_BLOCK && vol != rk->count[i])
            why = "stores a block whose size is not its element count";
        if (why)
            return cn_fail(&ctx->err, CAIRN_EMISMATCH, "variable '%s': generation %ld was "
                           "written by %s; this run has %s: stored rank %u %s", v->name,
                           p->src->gen, p->was, p->now, r, why);
        rm_box g = {0}, nb = {0};
        rm_new_box(v, &g, &nb);
        if (v->dist == API_DIST_REPLICATED) {
            b[3] = b[4] = 1, b[5] = (int64_t)v->count;
            continue;
        }
        for (int d = 0; d < 3; d++)
            b[d] = 0, b[3 + d] = 1;
        for (int d = 0; d < sb.ndims; d++) {
            b[3 - sb.ndims + d] = (int64_t)sb.start[d];
            b[6 - sb.ndims + d] = (int64_t)sb.count[d];
        }
    }
    return 0;
}

static rm_box rec_box(const int64_t *b)
{
    rm_box x;
    for (int d = 0; d < 3; d++)
        x.s[d] = (uint64_t)b[d], x.c[d] = (uint64_t)b[3 + d];
    return x;
}

/*
 * The datatype of what moves between a stored rank (boxes REC) and new rank
 * Q's blocks: for each variable, the overlap of the two as a subarray of the
 * buffer it lives in (BUFS[i] holding the stored box when SEND, else this
 * rank's block), all in one struct of absolute addresses (MPI_BOTTOM), so
 * pieces go straight from the stored block (lent or decoded) into protected
 * memory, with no packing. *COUNT 0 (and MPI_BYTE) when nothing overlaps.
 */
static int piece_type(const rm_state *p, const int64_t *rec, int q, bool send, void *const *bufs,
                      MPI_Datatype *out, int *count)
{
    size_t nv = p->vars.n;
    int k = 0, rc = 0;
    *out = MPI_BYTE, *count = 0;
    for (size_t i = 0; i < nv && rc == 0; i++) {
        rm_box sb = rec_box(rec + RM_REC_VAR * i), o;
        const rm_box *nb = &p->nb[(size_t)q * nv + i];
        if (!overlap(&sb, nb, &o))
            continue;
        const rm_box *in = send ? &sb : nb;
        int sizes[3], sub[3], starts[3]; /* int-sized: rm_check */
        for (int d = 0; d < 3; d++)
            sizes[d] = (int)in->c[d], sub[d] = (int)o.c[d], starts[d] = (int)(o.s[d] - in->s[d]);
        MPI_Datatype el, box_t;
        MPI_Aint at;
        if (MPI_Type_contiguous((int)p->es[i], MPI_BYTE, &el) != MPI_SUCCESS)
            return cn_fail(&p->ctx->err, CAIRN_EMPI, "MPI_Type_contiguous failed");
        if (MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_C, el, &box_t) !=
                MPI_SUCCESS ||
            MPI_Get_address(bufs[i], &at) != MPI_SUCCESS)
            rc = cn_fail(&p->ctx->err, CAIRN_EMPI, "MPI_Type_create_subarray failed");
        MPI_Type_free(&el);
        if (rc < 0)
            break;
        p->pt[k] = box_t, p->pd[k] = at, p->pl[k] = 1;
        k++;
    }
    if (rc == 0 && k > 0) {
        if (MPI_Type_create_struct(k, p->pl, p->pd, p->pt, out) != MPI_SUCCESS ||
            MPI_Type_commit(out) != MPI_SUCCESS)
            rc = cn_fail(&p->ctx->err, CAIRN_EMPI, "MPI_Type_create_struct failed");
        else
            *count = 1;
    }
    for (int x = 0; x < k; x++)
        MPI_Type_free(&p->pt[x]);
    return rc;
}

/* Every element of every block covered? */
static int covered(rm_state *p)
{
    for (size_t i = 0; i < p->vars.n; i++) {
        const api_var *v = p->vars.v[i];
        uint64_t got = 0;
        for (uint64_t k = 0; k < v->count / 8; k++)
            got += (uint64_t)__builtin_popcount(p->seen[i][k]);
        for (uint64_t k = v->count / 8 * 8; k < v->count; k++)
            got += (p->seen[i][k / 8] >> (k % 8)) & 1u;
        if (got != v->count)
            return cn_fail(&p->ctx->err, CAIRN_EMISMATCH, "variable '%s': the stored blocks of "
                           "generation %ld cover %llu of the %zu elements of this rank's block%s",
                           v->name, p->src->gen, (unsigned long long)got, v->count,
                           v->dist == API_DIST_REPLICATED ? " (stored rank 0's copy)" : "");
    }
    return 0;
}

/* ---- the rounds ---------------------------------------------------------------- */

/* Hold stored rank RK (this rank's round T) from the survey for the move,
 * instead of reading it again? Lent variables cost nothing; decoded ones
 * are held while they fit in ROOM (what a scratch copy of this rank's
 * blocks would take), and the last stored rank this rank reads is held
 * anyway: it is still in memory when the survey ends, and the move starts
 * with it. From the PFS, so are the other ranks of the last file it reads
 * (the reader holds that file's ranks anyway: reading one again would
 * decode the whole file again). */
static bool hold(rm_state *p, const rm_rank *rk, size_t t)
{
    uint64_t n = 0;
    for (size_t i = 0; i < p->vars.n; i++)
        if (rk->data[i] && !rk->mapped[i])
            n += rk->count[i] * p->es[i];
    if (t + 1 == p->nlist)
        return true;
    if (p->src->where == RM_PFS &&
        p->list[t] / p->src->group == p->list[p->nlist - 1] / p->src->group)
        return true;
    if (n > p->room)
        return false;
    p->room -= n;
    return true;
}

/* Survey round T: this rank reads its T-th stored rank (if any); every rank
 * learns every reader's blocks into recs. Agreed. */
static int survey_round(rm_state *p, rm_reader *rd, size_t t)
{
    cairn_ctx *ctx = p->ctx;
    size_t nv = p->vars.n, stride = RM_STRIDE(nv);
    long r = t < p->nlist ? p->list[t] : -1;
    int64_t *me = p->me;
    rm_rank rk = {0};
    memset(me, 0, sizeof *me * stride);
    int rc = r >= 0 ? rm_read(rd, (uint32_t)r, &rk) : 0;
    if (rc == 0 && r >= 0)
        rc = stored_blocks(p, (uint32_t)r, &rk, me + RM_REC_HEAD);
    me[0] = rc, me[1] = r;
    if (MPI_Allgather(me, (int)stride, MPI_INT64_T, p->recs + t * (size_t)ctx->size * stride,
                      (int)stride, MPI_INT64_T, ctx->comm) != MPI_SUCCESS)
        rc = rc ? rc : cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allgather failed");
    rc = api_agree(ctx, rc);
    if (rc == 0 && r >= 0 && hold(p, &rk, t)) {
        free(rk.layout);
        rk.layout = NULL, rk.layout_len = 0;
        p->held[t] = rk;
    } else {
        rm_rank_free(&rk, nv);
    }
    return rc;
}

int rm_survey(rm_state *p, rm_reader *rd)
{
    for (size_t t = 0; t < p->rounds; t++)
        CN_TRY(survey_round(p, rd, t));
    return 0;
}

/* Can a piece of box B be a subarray (MPI counts are int)? */
static int int_sized(const rm_state *p, const rm_box *b, size_t i)
{
    for (int d = 0; d < 3; d++)
        if (b->c[d] > INT_MAX)
            return cn_fail(&p->ctx->err, CAIRN_ENOTSUP, "remap: '%s': a block of more than %d "
                           "elements in a dimension", p->vars.v[i]->name, INT_MAX);
    return 0;
}

int rm_check(rm_state *p)
{
    cairn_ctx *ctx = p->ctx;
    size_t nv = p->vars.n, stride = RM_STRIDE(nv);
    for (size_t i = 0; i < nv; i++)
        CN_TRY(int_sized(p, &p->nb[(size_t)ctx->rank * nv + i], i));
    for (size_t x = 0; x < p->rounds * (size_t)ctx->size; x++) {
        const int64_t *rec = p->recs + x * stride;
        for (size_t i = 0; rec[1] >= 0 && i < nv; i++) {
            rm_box sb = rec_box(rec + RM_REC_HEAD + RM_REC_VAR * i), o;
            const rm_box *mb = &p->nb[(size_t)ctx->rank * nv + i];
            CN_TRY(int_sized(p, &sb, i));
            if (overlap(&sb, mb, &o) && !mark_box(p->seen[i], mb, &o))
                return cn_fail(&ctx->err, CAIRN_EMISMATCH, "variable '%s': the stored blocks "
                               "of generation %ld overlap (stored rank %lld's and another's)",
                               p->vars.v[i]->name, p->src->gen, (long long)rec[1]);
        }
    }
    return covered(p);
}

/* Move round T: this rank's T-th stored rank (held, else read again and
 * found as the survey saw it) sends its pieces, and every rank receives its
 * own into protected memory. Agreed; *MOVED once pieces may have landed. */
static int move_round(rm_state *p, rm_reader *rd, size_t t, bool *moved)
{
    cairn_ctx *ctx = p->ctx;
    size_t nv = p->vars.n, stride = RM_STRIDE(nv);
    int size = ctx->size;
    const int64_t *recs = p->recs + t * (size_t)size * stride;
    const int64_t *mine = recs + (size_t)ctx->rank * stride;
    long r = t < p->nlist ? p->list[t] : -1;
    rm_rank rk = p->held[t];
    memset(&p->held[t], 0, sizeof p->held[t]);
    int rc = 0;
    if (r >= 0 && !rk.data) {
        rc = rm_read(rd, (uint32_t)r, &rk);
        if (rc == 0)
            rc = stored_blocks(p, (uint32_t)r, &rk, p->me + RM_REC_HEAD);
        if (rc == 0 && memcmp(p->me + RM_REC_HEAD, mine + RM_REC_HEAD,
                              sizeof *mine * RM_REC_VAR * nv) != 0)
            rc = cn_fail(&ctx->err, CAIRN_ECORRUPT, "generation %ld: stored rank %ld changed "
                         "under the restart", p->src->gen, r);
    }
    int *sc = p->cnt, *rcv = sc + size, *zero = sc + 2 * size;
    MPI_Datatype *st = p->types, *rt = p->types + size;
    for (int q = 0; q < size; q++)
        st[q] = rt[q] = MPI_BYTE, sc[q] = rcv[q] = zero[q] = 0;
    if ((rc = api_agree(ctx, rc)) < 0) /* agreed once: its message stands */
        goto out;
    for (int q = 0; rc == 0 && q < size; q++) {
        const int64_t *rec = recs + (size_t)q * stride;
        if (r >= 0)
            rc = piece_type(p, mine + RM_REC_HEAD, q, true, rk.data, &st[q], &sc[q]);
        if (rc == 0 && rec[1] >= 0)
            rc = piece_type(p, rec + RM_REC_HEAD, ctx->rank, false, p->dst, &rt[q], &rcv[q]);
    }
    if ((rc = api_agree(ctx, rc)) < 0)
        goto out;
    *moved = true;
    if (MPI_Alltoallw(MPI_BOTTOM, sc, zero, st, MPI_BOTTOM, rcv, zero, rt, ctx->comm) !=
        MPI_SUCCESS)
        rc = cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Alltoallw failed");
    rc = api_agree(ctx, rc);
out:
    for (int q = 0; q < size; q++) {
        if (sc[q])
            MPI_Type_free(&st[q]);
        if (rcv[q])
            MPI_Type_free(&rt[q]);
    }
    rm_rank_free(&rk, nv);
    return rc;
}

int rm_move(rm_state *p, rm_reader *rd)
{
    bool moved = false;
    rm_reader_rewind(rd);
    int rc = 0;
    for (size_t t = p->rounds; rc == 0 && t-- > 0;) /* the last surveyed first: see hold */
        rc = move_round(p, rd, t, &moved);
    if (rc < 0 && moved) { /* the agreed message, the same on every rank */
        cairn_ctx *ctx = p->ctx;
        char was[sizeof ctx->msg];
        memcpy(was, ctx->msg, sizeof was);
        snprintf(ctx->msg, sizeof ctx->msg, "%s: %.*s", RM_PARTLY,
                 (int)(sizeof ctx->msg - sizeof RM_PARTLY - 2), was);
    }
    return rc;
}
