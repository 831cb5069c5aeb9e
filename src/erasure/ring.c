/*
 * ring.c - the pipelined ring encode of the rotated layout (MPI), and what
 * encode and decode share (geometry, agreement). The decode is in
 * ring_decode.c, the layout in erasure.h.
 *
 * Encode. Member x works, at step s = 0..n-1 of a block, on stripe
 * t = (x - s - m) mod n: for s < k it is stripe t's data column s (its own
 * chunk s), so it multiplies its block of chunk s by column s of the coding
 * matrix and adds it to the m partial-parity rows it received from x - 1
 * (s = 0: it starts them); for s >= k it is the holder of row s - k, which is
 * now final, and stores it. It then passes the rows still needed to x + 1,
 * which works on the same stripe at step s + 1. Every member is busy at every
 * step (a ring reduce-scatter) and each link carries one message per step, so
 * a member's time is n * nb steps whatever n is, for a chunk of nb blocks.
 *
 * Double buffering. Taken block by block, step s of x waits for step s - 1 of
 * x - 1, so compute and transfer would alternate. Blocks therefore go in
 * pairs (lanes; a triple for the last three of an odd count): steps
 * interleave as (b, s), (b+1, s), (b, s+1), ... and while the partial parity
 * of one lane travels to x + 1, x works on the other; a step costs
 * max(compute, transfer) instead of their sum. A chunk shorter than two
 * blocks is cut in two blocks so that there are always two lanes. Each lane
 * has two row buffers (the one received into, the one worked on and sent);
 * the next data block is read while messages are in flight, and long column
 * updates are cut into slices between which MPI progresses the transfers.
 *
 * Decode. Every member holds exactly one shard of every stripe, so each lost
 * member leaves every stripe one shard short. Each stripe is decoded by a
 * survivor, round-robin, so the work spreads over the n - e survivors: the
 * decoder's own shard and the first k - 1 other surviving shards (data before
 * parity) go to it, it calls ec_decode and sends the rebuilt shards to their
 * lost owners. A survivor thus receives about k - 1 shards of a chunk per
 * stripe it decodes and a lost member n, so per member the traffic is
 * about one payload whatever n is (decoding at a lost member would funnel
 * n payloads into it). Stripes go in rounds of one per survivor, block by
 * block, each round a gather, the decodes and a scatter; blocking phases are
 * enough for a rare operation.
 *
 * Errors. A failing callback or codec call does not stop the protocol (the
 * others would wait forever): the member goes on with zeros and reports at
 * the end, where an all-reduce agrees on the code and the failing member's
 * message. An MPI failure does stop it. Messages use tags EC_TAG_* on COMM;
 * callers give the ring a communicator of its own.
 *
 * Depends on erasure.h (the codec, the layout), common.h and MPI. Buffers are
 * allocated here and freed before returning.
 */
#include "erasure/ring_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int ec__mpi_fail(cn_err *err, int mrc, const char *what)
{
    char s[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(mrc, s, &len);
    return cn_fail(err, CAIRN_EMPI, "%s failed: %s", what, s);
}

#define NAP_MAX_NS 250000L /* g->nap: a waiting member's longest nap */

/* Test REQ[0..N-1] until all complete, with naps growing from 1 us. */
static int wait_napping(int n, MPI_Request *req, MPI_Status *st)
{
    for (long ns = 1000;; ns = ns < NAP_MAX_NS / 2 ? 2 * ns : NAP_MAX_NS) {
        int done = 0, mrc = MPI_Testall(n, req, &done, st);
        if (mrc != MPI_SUCCESS || done)
            return mrc;
        nanosleep(&(struct timespec){.tv_nsec = ns}, NULL);
    }
}

int ec__waitall(const ring_geo *g, int n, MPI_Request *req, MPI_Status *st)
{
    return g->nap ? wait_napping(n, req, st) : MPI_Waitall(n, req, st);
}

int ec__allreduce(const ring_geo *g, const void *in, void *out, int count, MPI_Datatype type,
                  MPI_Op op)
{
    if (!g->nap)
        return MPI_Allreduce(in, out, count, type, op, g->comm);
    MPI_Request req;
    int mrc = MPI_Iallreduce(in, out, count, type, op, g->comm, &req);
    return mrc != MPI_SUCCESS ? mrc : wait_napping(1, &req, MPI_STATUSES_IGNORE);
}

/*
 * Collective: every member returns the lowest code any member had, with the
 * message of the lowest-ranked member that had it ("member X: ...").
 */
int ec__ring_agree(const ring_geo *g, int rc, cn_err *err)
{
    int rank = 0, global = rc;
    MPI_Comm_rank(g->comm, &rank);
    MPI_TRY(ec__allreduce(g, &rc, &global, 1, MPI_INT, MPI_MIN), "MPI_Allreduce");
    if (global == 0)
        return 0;
    int mine = rc == global ? rank : INT_MAX, root = 0;
    char msg[CN_MSG_MAX];
    snprintf(msg, sizeof msg, "%s", err && err->msg[0] ? err->msg : cairn_strerror(rc));
    MPI_TRY(MPI_Allreduce(&mine, &root, 1, MPI_INT, MPI_MIN, g->comm), "MPI_Allreduce");
    MPI_TRY(MPI_Bcast(msg, sizeof msg, MPI_CHAR, root, g->comm), "MPI_Bcast");
    msg[sizeof msg - 1] = '\0';
    return cn_fail(err, global, "member %d: %s", root, msg);
}


/*
 * Collective: check the arguments on every member and that all members
 * passed the same ones. Fills G. Returns the same code on every member.
 */
int ec__ring_geo_setup(MPI_Comm comm, const ec_codec *c, uint64_t chunk, size_t block,
                       bool nap, ring_geo *g, cn_err *err)
{
    memset(g, 0, sizeof *g);
    g->comm = comm;
    g->nap = nap;
    MPI_TRY(MPI_Comm_size(comm, &g->n), "MPI_Comm_size");
    MPI_TRY(MPI_Comm_rank(comm, &g->x), "MPI_Comm_rank");
    int rc = 0;
    if (!c) {
        rc = cn_fail(err, CAIRN_EINVAL, "ring: no codec");
    } else if (g->n < 2) {
        rc = cn_fail(err, CAIRN_EINVAL, "ring: a set needs at least 2 members, not %d", g->n);
    } else {
        g->align = ec_codec_align(c);
        int m = ec_codec_m(c);
        if (ec_codec_k(c) + m != g->n)
            rc = cn_fail(err, CAIRN_EINVAL,
                         "ring: the codec does not fit a set of %d members (k + m must be %d)",
                         g->n, g->n);
        g->m = m;
        g->k = g->n - m;
    }
    if (rc == 0 && (g->align == 0 || chunk % g->align != 0))
        rc = cn_fail(err, CAIRN_EINVAL, "ring: chunk %llu is not a multiple of %zu bytes",
                     (unsigned long long)chunk, g->align);
    if (rc == 0) {
        /* A multiple of align, at least one unit, at most half the chunk
         * (rounded up), and m rows of it must fit one MPI message (int count). */
        size_t cap = (size_t)INT_MAX / (size_t)g->m / g->align * g->align;
        size_t blk = block / g->align * g->align;
        if (blk == 0)
            blk = g->align;
        if (blk > cap)
            blk = cap;
        if (chunk > 0 && blk > chunk / 2) /* two blocks at least: two lanes */
            blk = (size_t)(chunk / 2 + g->align - 1) / g->align * g->align;
        g->blk = blk;
        g->chunk = chunk;
        g->nb = chunk == 0 ? 0 : (chunk + blk - 1) / blk;
        if (g->k > 0 && chunk > UINT64_MAX / (uint64_t)g->k)
            rc = cn_fail(err, CAIRN_EINVAL, "ring: chunk %llu too large",
                         (unsigned long long)chunk);
    }
    CN_TRY(ec__ring_agree(g, rc, err));

    /* Same geometry everywhere: max of v and of -v gives max and min at once. */
    int64_t v[4] = {(int64_t)g->chunk, (int64_t)g->blk, g->m, ec_codec_form(c)}, mm[8], r[8];
    for (int i = 0; i < 4; i++) {
        mm[i] = v[i];
        mm[4 + i] = -v[i];
    }
    MPI_TRY(ec__allreduce(g, mm, r, 8, MPI_INT64_T, MPI_MAX), "MPI_Allreduce");
    for (int i = 0; i < 4; i++)
        if (r[i] != -r[4 + i])
            return cn_fail(err, CAIRN_EINVAL,
                           "ring: members disagree on the %s (%lld on some, %lld on others)",
                           (const char *[]){"chunk size", "block size", "parity count m",
                                            "codec form"}[i],
                           (long long)-r[4 + i], (long long)r[i]);
    return 0;
}

uint8_t *ec__ring_buf(size_t len)
{
    size_t a = (len + RING_MEM_ALIGN - 1) / RING_MEM_ALIGN * RING_MEM_ALIGN;
    return aligned_alloc(RING_MEM_ALIGN, a ? a : RING_MEM_ALIGN);
}

/* ---- encode ------------------------------------------------------------ */

/* One unit of a member's work: step S of block B, in lane LANE. */
typedef struct ring_item {
    uint64_t b;
    int s, lane;
} ring_item;

/* Lanes of the group of blocks starting at BASE: pairs, the last three together. */
static int group_lanes(const ring_geo *g, uint64_t base)
{
    uint64_t left = g->nb - base;
    return left == 3 ? 3 : left >= 2 ? 2 : (int)left;
}

/* Order: blocks in groups; within a group, step by step, lane by lane. */
static bool item_next(const ring_geo *g, ring_item *it)
{
    uint64_t base = it->b - (uint64_t)it->lane;
    int lanes = group_lanes(g, base);
    if (it->lane + 1 < lanes) {
        it->lane++;
        it->b++;
        return true;
    }
    it->b = base;
    it->lane = 0;
    if (it->s + 1 < g->n) {
        it->s++;
        return true;
    }
    it->s = 0;
    it->b = base + (uint64_t)lanes;
    return it->b < g->nb;
}

/* First row still travelling when the receiver is at step S. */
static int rows_lo(const ring_geo *g, int s) { return s > g->k ? s - g->k : 0; }

typedef struct ring_lane {
    uint8_t *buf[2];         /* m rows each; step s works in buf[s & 1] */
    MPI_Request rreq, sreq;  /* receive for the next step; send of the last */
} ring_lane;

typedef struct ring_enc {
    ring_geo g;
    const ec_codec *c;
    const ec_ring_io *io;
    ring_lane lane[RING_LANES];
    uint8_t *data;           /* the current item's data block */
    int lrc;                 /* first local (callback or codec) error */
    cn_err lerr;
} ring_enc;

static void local_fail(ring_enc *e, int rc, const cn_err *why)
{
    if (e->lrc == 0 && rc < 0) {
        e->lrc = rc;
        e->lerr = *why;
        if (!e->lerr.msg[0])
            snprintf(e->lerr.msg, sizeof e->lerr.msg, "%s", cairn_strerror(rc));
    }
}

static int progress(ring_enc *e)
{
    MPI_Request r[2 * RING_LANES];
    for (int l = 0; l < RING_LANES; l++) {
        r[2 * l] = e->lane[l].rreq;
        r[2 * l + 1] = e->lane[l].sreq;
    }
    MPI_Status st[2 * RING_LANES]; /* not MPI_STATUSES_IGNORE: MPICH + GCC warn */
    int flag = 0;
    int mrc = MPI_Testall(2 * RING_LANES, r, &flag, st);
    if (mrc == MPI_SUCCESS && flag) /* all completed: the requests were freed */
        for (int l = 0; l < RING_LANES; l++)
            e->lane[l].rreq = e->lane[l].sreq = MPI_REQUEST_NULL;
    return mrc;
}

/* Read this member's block B of chunk S into data (zeros after an error). */
static void read_block(ring_enc *e, const ring_item *it)
{
    size_t len = block_len(&e->g, it->b);
    uint64_t off = (uint64_t)it->s * e->g.chunk + it->b * e->g.blk;
    if (e->lrc == 0) {
        cn_err why;
        cn_err_clear(&why);
        int rc = e->io->read(e->io->arg, off, e->data, len, &why);
        if (rc < 0)
            local_fail(e, rc, &why);
    }
    if (e->lrc != 0)
        memset(e->data, 0, len);
}

/* The column update of one item, in slices with MPI progress between them. */
static int column_update(ring_enc *e, const ring_item *it, uint8_t *rowbuf, size_t len, cn_err *err)
{
    const ring_geo *g = &e->g;
    size_t slice = RING_PROGRESS_SLICE / g->align * g->align;
    if (slice == 0)
        slice = g->align;
    uint8_t *rows[EC_MAX_SHARDS];
    for (size_t off = 0; off < len; off += slice) {
        size_t n = len - off < slice ? len - off : slice;
        for (int r = 0; r < g->m; r++)
            rows[r] = rowbuf + (size_t)r * len + off;
        if (e->lrc == 0) {
            int rc = ec_encode_column(e->c, it->s, e->data + off, rows, n, it->s == 0);
            if (rc < 0) {
                cn_err why;
                cn_fail(&why, rc, "ring: column update failed: %s", cairn_strerror(rc));
                local_fail(e, rc, &why);
            }
        }
        if (off + n < len)
            MPI_TRY(progress(e), "MPI_Testall");
    }
    return 0;
}

static int run_item(ring_enc *e, const ring_item *it, cn_err *err)
{
    const ring_geo *g = &e->g;
    ring_lane *L = &e->lane[it->lane];
    int s = it->s, tag = EC_TAG_RING + it->lane;
    int left = (g->x + g->n - 1) % g->n, right = (g->x + 1) % g->n;
    size_t len = block_len(g, it->b);
    uint8_t *rows = L->buf[s & 1];

    if (s > 0)
        MPI_TRY(ec__waitall(g, 1, &L->rreq, MPI_STATUSES_IGNORE), "MPI_Wait (ring receive)");
    if (s < g->k) {
        CN_TRY(column_update(e, it, rows, len, err));
    } else if (e->lrc == 0) {
        int r = s - g->k, t = ((g->x - s - g->m) % g->n + g->n) % g->n;
        cn_err why;
        cn_err_clear(&why);
        int rc = e->io->write_parity(e->io->arg, t, r, it->b * g->blk, rows + (size_t)r * len,
                                     len, &why);
        if (rc < 0)
            local_fail(e, rc, &why);
    }
    /* The other buffer was sent at step s - 1: once that is done, the next
     * step's rows can arrive in it while this one's go out. */
    MPI_TRY(ec__waitall(g, 1, &L->sreq, MPI_STATUSES_IGNORE), "MPI_Wait (ring send)");
    if (s + 1 < g->n) {
        int lo = rows_lo(g, s + 1), count = (g->m - lo) * (int)len;
        uint8_t *next = L->buf[(s + 1) & 1];
        MPI_TRY(MPI_Irecv(next + (size_t)lo * len, count, MPI_BYTE, left, tag, g->comm, &L->rreq),
                "MPI_Irecv");
        MPI_TRY(MPI_Isend(rows + (size_t)lo * len, count, MPI_BYTE, right, tag, g->comm,
                          &L->sreq),
                "MPI_Isend");
    }
    return 0;
}

/* Cancel and release whatever is still in flight after an MPI failure. */
static bool abandon(ring_enc *e)
{
    bool clean = true;
    for (int l = 0; l < RING_LANES; l++) {
        MPI_Request *rq[2] = {&e->lane[l].rreq, &e->lane[l].sreq};
        for (int i = 0; i < 2; i++) {
            if (*rq[i] == MPI_REQUEST_NULL)
                continue;
            if (i == 0)
                MPI_Cancel(rq[i]);
            MPI_Request_free(rq[i]);
            clean = false;
        }
    }
    return clean;
}

int ec_ring_encode(MPI_Comm comm, const ec_codec *c, uint64_t chunk, size_t block,
                   const ec_ring_io *io, cn_err *err)
{
    cn_err local;
    if (!err)
        err = &local;
    cn_err_clear(err);
    ring_enc e;
    memset(&e, 0, sizeof e);
    e.c = c;
    e.io = io;
    CN_TRY(ec__ring_geo_setup(comm, c, chunk, block, io && io->nap, &e.g, err));
    const ring_geo *g = &e.g;
    int rc = 0;
    if (!io || !io->read || !io->write_parity)
        rc = cn_fail(err, CAIRN_EINVAL, "ring: encode needs read and write_parity callbacks");
    for (int l = 0; l < RING_LANES; l++)
        e.lane[l].rreq = e.lane[l].sreq = MPI_REQUEST_NULL;
    bool alloc = true;
    int lanes = g->nb % 2 && g->nb > 1 ? 3 : 2;
    if (rc == 0 && g->nb > 0) {
        for (int l = 0; l < lanes; l++)
            for (int i = 0; i < 2; i++)
                alloc &= (e.lane[l].buf[i] = ec__ring_buf((size_t)g->m * g->blk)) != NULL;
        alloc &= (e.data = ec__ring_buf(g->blk)) != NULL;
        if (!alloc)
            rc = cn_fail(err, CAIRN_ENOMEM, "ring: out of memory for %d x %zu-byte buffers",
                         2 * lanes + 1, (size_t)g->m * g->blk);
    }
    rc = ec__ring_agree(g, rc, err);

    bool clean = true;
    if (rc == 0 && g->nb > 0) {
        ring_item it = {0, 0, 0};
        read_block(&e, &it);
        for (bool more = true; more && rc == 0;) {
            ring_item next = it;
            more = item_next(g, &next);
            rc = run_item(&e, &it, err);
            if (rc == 0 && more && next.s < g->k)
                read_block(&e, &next); /* while this step's messages travel */
            it = next;
        }
        if (rc != 0) {
            clean = abandon(&e);
        } else {
            cn_err_clear(err);
            if (e.lrc != 0)
                *err = e.lerr;
            rc = ec__ring_agree(g, e.lrc, err);
        }
    }
    if (clean) { /* else MPI may still touch them: leave them be */
        for (int l = 0; l < RING_LANES; l++)
            for (int i = 0; i < 2; i++)
                free(e.lane[l].buf[i]);
        free(e.data);
    }
    return rc;
}

