/*
 * fetch.c - level 4's fetch stage: each rank's materialized state (flush.c)
 * on its way from its node leader to its group's aggregator, overlapped with
 * the aggregator's compression and writing (mcrEngine's pipelined fetch).
 *
 * api_fetch_start, collective over the leaders:
 *   1. sizes: per state sent, its metadata bytes and its whole length;
 *   2. the aggregators allocate every state they receive, and all leaders
 *      agree (a failure here stops the flush before any data moves);
 *   3. the metadata (records, names) travels and is waited for;
 *   4. the data is posted in pieces of PIECE bytes, receives and sends
 *      alike, and not waited for.
 * The aggregator's writer (agg.c) then calls api_fetch_ready
 * before it reads any byte of a variable: it waits for the pieces of that
 * state up to the byte needed, in order, so writing starts as soon as the
 * first piece is in and every later piece arrives while earlier ones are
 * compressed and written. api_fetch_end waits for every transfer still
 * posted (sends to other aggregators; receives a failed write never used).
 * Messages between two leaders match in the order both post them (rank
 * order), so three tags suffice: sizes, metadata, data.
 *
 * Ownership: the states stay the caller's (ST[r].buf of received states is
 * allocated here and freed by the caller, api_state_free); the fetch owns
 * its requests and is freed by api_fetch_end.
 *
 * A state's memory (api_state_alloc) is mapped whole, zeroed, and asks for
 * transparent huge pages: hundreds of MiB are touched once each flush, and
 * a fault per 4 KiB page (with its zeroing and accounting) costs more than
 * the copy that fills it.
 */
#include "core/core.h"
#include "levels/pfs/pfs.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define PIECE (4u << 20) /* bytes per data message: the writer's chunk */

typedef struct rstate {      /* a state received here */
    MPI_Request *req;        /* its data pieces, in order */
    int n, done;             /* pieces; how many are known complete */
} rstate;

struct api_fetch {
    cairn_ctx *ctx;
    api_state *st;
    rstate *in;              /* by rank; req NULL for states not received here */
    MPI_Request *out;        /* data pieces sent from here */
    int nout;
    int last;                /* the rank api_fetch_ready found last: asked first */
};

static int aggregator_of(const cairn_ctx *ctx, int group, int r)
{
    return (int)ctx->rank_node[(size_t)(r / group) * (size_t)group];
}

static int npieces(const api_state *s)
{
    uint64_t data = s->len - s->meta;
    return (int)((data + PIECE - 1) / PIECE);
}

/* Collective over the leaders: agree on RC (another leader's failure echoed). */
static int agree(cairn_ctx *ctx, int rc)
{
    int worst = rc;
    if (api_allreduce_napping(&rc, &worst, 1, MPI_INT, MPI_MIN, ctx->leaders) != 0)
        return cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allreduce among node leaders failed");
    return rc == 0 && worst < 0 ? api_echo(ctx, worst, "the flush exchange failed on another "
                                           "node") : rc;
}

void *api_state_alloc(uint64_t len)
{
    size_t n = len ? (size_t)len : 1;
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, n, MADV_HUGEPAGE); /* a hint: without it, 4 KiB pages */
#endif
    return p;
}

void api_state_free(api_state *s)
{
    if (s->buf)
        munmap(s->buf, s->len ? (size_t)s->len : 1);
    s->buf = NULL;
    if (s->chain)
        api_chain_close(s->chain);
    free(s->chain);
    free(s->lent);
    s->chain = NULL;
    s->lent = NULL;
}

int api_fetch_start(cairn_ctx *ctx, int group, api_state *st, api_fetch **out)
{
    *out = NULL;
    int nr = ctx->nranks, me = ctx->node, mpi = MPI_SUCCESS;
    api_fetch *f = calloc(1, sizeof *f);
    uint64_t *sz = calloc(2 * (size_t)nr, sizeof *sz);
    MPI_Request *req = malloc(sizeof *req * (2 * (size_t)nr + 1));
    int rc = f && sz && req ? 0 : cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    if (f) {
        f->ctx = ctx;
        f->st = st;
        f->in = calloc((size_t)nr, sizeof *f->in);
        if (!rc && !f->in)
            rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    }
    rc = agree(ctx, rc); /* 1: sizes */
    int nq = 0;
    for (int r = 0; rc == 0 && r < nr; r++) {
        int from = (int)ctx->rank_node[r], to = aggregator_of(ctx, group, r);
        if (from == to || (from != me && to != me))
            continue;
        if (from == me) {
            sz[2 * r] = st[r].meta, sz[2 * r + 1] = st[r].len;
            mpi |= MPI_Isend(&sz[2 * r], 2, MPI_UINT64_T, to, 0, ctx->leaders, &req[nq++]);
        } else {
            mpi |= MPI_Irecv(&sz[2 * r], 2, MPI_UINT64_T, from, 0, ctx->leaders, &req[nq++]);
        }
    }
    if (rc == 0)
        mpi |= MPI_Waitall(nq, req, MPI_STATUSES_IGNORE);
    if (rc == 0 && mpi != MPI_SUCCESS)
        rc = cn_fail(&ctx->err, CAIRN_EMPI, "flush: MPI exchange failed");
    for (int r = 0; rc == 0 && r < nr; r++) { /* 2: room for what comes here */
        int from = (int)ctx->rank_node[r], to = aggregator_of(ctx, group, r);
        if (from == to || to != me)
            continue;
        st[r].meta = sz[2 * r], st[r].len = sz[2 * r + 1];
        if (st[r].meta < 16 || st[r].meta > INT32_MAX || st[r].meta > st[r].len ||
            (st[r].len - st[r].meta) / PIECE > INT32_MAX - 1)
            rc = cn_fail(&ctx->err, CAIRN_EMPI, "flush: node %d sent a bad size for rank %d",
                         from, r);
        else if (!(st[r].buf = api_state_alloc(st[r].len)) ||
                 !(f->in[r].req = malloc(sizeof *f->in[r].req * (size_t)(npieces(&st[r]) + 1))))
            rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory for rank %d's state (%llu bytes)",
                         r, (unsigned long long)st[r].len);
    }
    int nout = 0;
    for (int r = 0; r < nr; r++)
        if ((int)ctx->rank_node[r] == me && aggregator_of(ctx, group, r) != me)
            nout += npieces(&st[r]);
    if (rc == 0 && !(f->out = malloc(sizeof *f->out * (size_t)(nout + 1))))
        rc = cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    rc = agree(ctx, rc);
    nq = 0; /* 3: metadata */
    for (int r = 0; rc == 0 && r < nr; r++) {
        int from = (int)ctx->rank_node[r], to = aggregator_of(ctx, group, r);
        if (from == to || (from != me && to != me))
            continue;
        mpi |= from == me ? MPI_Isend(st[r].buf, (int)st[r].meta, MPI_BYTE, to, 1, ctx->leaders,
                                      &req[nq++])
                          : MPI_Irecv(st[r].buf, (int)st[r].meta, MPI_BYTE, from, 1,
                                      ctx->leaders, &req[nq++]);
    }
    if (rc == 0)
        mpi |= MPI_Waitall(nq, req, MPI_STATUSES_IGNORE);
    for (int r = 0; rc == 0 && r < nr; r++) { /* 4: data, not waited for */
        int from = (int)ctx->rank_node[r], to = aggregator_of(ctx, group, r);
        if (from == to || (from != me && to != me))
            continue;
        rstate *in = &f->in[r];
        for (uint64_t off = st[r].meta; off < st[r].len; off += PIECE) {
            int len = (int)(st[r].len - off < PIECE ? st[r].len - off : PIECE);
            if (from == me)
                mpi |= MPI_Isend(st[r].buf + off, len, MPI_BYTE, to, 2, ctx->leaders,
                                 &f->out[f->nout++]);
            else
                mpi |= MPI_Irecv(st[r].buf + off, len, MPI_BYTE, from, 2, ctx->leaders,
                                 &in->req[in->n++]);
        }
    }
    if (rc == 0 && mpi != MPI_SUCCESS)
        rc = cn_fail(&ctx->err, CAIRN_EMPI, "flush: MPI exchange failed");
    free(sz);
    free(req);
    if (rc < 0) {
        api_fetch_end(f);
        return rc;
    }
    *out = f;
    return 0;
}

int api_fetch_ready(void *arg, const void *p, size_t len)
{
    api_fetch *f = arg;
    const uint8_t *q = p;
    for (int k = 0; k < f->ctx->nranks; k++) { /* the last one first: pieces come in runs */
        int r = k == 0 ? f->last : k == f->last ? 0 : k;
        api_state *s = &f->st[r];
        rstate *in = &f->in[r];
        if (!s->buf || q < s->buf + s->meta || q >= s->buf + s->len)
            continue;
        f->last = r;
        if (!in->req) /* this node's own state */
            return 0;
        uint64_t end = (uint64_t)(q - s->buf) + len - s->meta;
        int need = (int)((end + PIECE - 1) / PIECE);
        need = need < in->n ? need : in->n;
        if (need > in->done) {
            if (MPI_Waitall(need - in->done, &in->req[in->done], MPI_STATUSES_IGNORE) !=
                MPI_SUCCESS)
                return cn_fail(&f->ctx->err, CAIRN_EMPI, "flush: receiving rank %d's state "
                               "failed", r);
            in->done = need;
        }
        return 0;
    }
    return 0; /* not a state's data (a buffer of the caller's own) */
}

int api_fetch_end(api_fetch *f)
{
    if (!f)
        return 0;
    int mpi = MPI_SUCCESS;
    for (int r = 0; f->in && r < f->ctx->nranks; r++) {
        rstate *in = &f->in[r];
        if (in->req && in->n > in->done)
            mpi |= MPI_Waitall(in->n - in->done, &in->req[in->done], MPI_STATUSES_IGNORE);
        free(in->req);
    }
    if (f->nout)
        mpi |= MPI_Waitall(f->nout, f->out, MPI_STATUSES_IGNORE);
    int rc = mpi == MPI_SUCCESS ? 0
                                : cn_fail(&f->ctx->err, CAIRN_EMPI, "flush: MPI exchange failed");
    free(f->in);
    free(f->out);
    free(f);
    return rc;
}
