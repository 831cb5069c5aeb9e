/*
 * ring_decode.c - the set decode (MPI): rebuild the shards of lost members,
 * stripe by stripe at the survivors, as described in ring.c. Buffers are
 * allocated here and freed before returning.
 */
#include "erasure/ring_internal.h"

/* ---- decode ------------------------------------------------------------ */

#define RING_DECODE_MEM (32u << 20) /* n blocks: a decoder's shards, a survivor's sends */

typedef struct ring_dec {
    ring_geo g;              /* g.blk, g.nb: the decode block, at most RING_DECODE_MEM / n */
    const ec_codec *c;
    const ec_ring_io *io;
    const bool *lost;
    int count, nsurv;
    int *lostlist;           /* the lost members, ascending */
    int *surv;               /* the survivors, ascending: surv[i] decodes stripe t0 + i */
    bool *sel;               /* by shard index: the k shards the decoder works from */
    int *erased;             /* the other shard indexes */
    uint8_t *shards;         /* a decoder's n shards of one block */
    uint8_t *sendbuf;        /* a survivor's shard per stripe of the round */
    uint8_t *recvbuf;        /* a lost member's rebuilt shard per stripe of the round */
    MPI_Request *req;
    MPI_Status *st;          /* not MPI_STATUSES_IGNORE: MPICH + GCC warn */
    int lrc;
    cn_err lerr;
} ring_dec;

/* Shard index of member Y in stripe T: data column p, or k + parity row r. */
static int shard_of(const ring_geo *g, int t, int y)
{
    int p = ec_data_column(g->n, g->m, t, y);
    return p >= 0 ? p : g->k + ((y - t) % g->n + g->n) % g->n;
}

static int shard_member(const ring_geo *g, int t, int idx)
{
    return idx < g->k ? ec_data_member(g->n, g->m, t, idx)
                      : ec_parity_holder(g->n, t, idx - g->k);
}

/* The k shards stripe T's decoder DEC works from: its own, then the first
 * k - 1 other surviving ones (data before parity). Fills sel and erased (the
 * m others, the lost ones among them); returns the erased count. */
static int dec_select(ring_dec *d, int t, int dec)
{
    const ring_geo *g = &d->g;
    int own = shard_of(g, t, dec), chosen = 1, ne = 0;
    for (int idx = 0; idx < g->n; idx++) {
        if (idx == own) {
            d->sel[idx] = true;
            continue;
        }
        d->sel[idx] = chosen < g->k && !d->lost[shard_member(g, t, idx)];
        if (d->sel[idx])
            chosen++;
        else
            d->erased[ne++] = idx;
    }
    return ne;
}

static void dec_fail(ring_dec *d, int rc, const cn_err *why)
{
    if (d->lrc == 0 && rc < 0) {
        d->lrc = rc;
        d->lerr = *why;
        if (!d->lerr.msg[0])
            snprintf(d->lerr.msg, sizeof d->lerr.msg, "%s", cairn_strerror(rc));
    }
}

/* Read this member's shard IDX of stripe T (block at OFF, LEN bytes) into BUF. */
static void dec_read(ring_dec *d, int t, int idx, uint64_t off, uint8_t *buf, size_t len)
{
    const ring_geo *g = &d->g;
    if (d->lrc == 0) {
        cn_err why;
        cn_err_clear(&why);
        int rc = idx < g->k
                     ? d->io->read(d->io->arg, (uint64_t)idx * g->chunk + off, buf, len, &why)
                     : d->io->read_parity(d->io->arg, t, idx - g->k, off, buf, len, &why);
        if (rc < 0)
            dec_fail(d, rc, &why);
    }
    if (d->lrc != 0)
        memset(buf, 0, len);
}

/* Store this member's rebuilt shard IDX of stripe T. */
static void dec_store(ring_dec *d, int t, int idx, uint64_t off, const uint8_t *buf, size_t len)
{
    const ring_geo *g = &d->g;
    if (d->lrc != 0)
        return;
    cn_err why;
    cn_err_clear(&why);
    int rc = idx < g->k
                 ? d->io->write_data(d->io->arg, (uint64_t)idx * g->chunk + off, buf, len, &why)
                 : d->io->write_parity(d->io->arg, t, idx - g->k, off, buf, len, &why);
    if (rc < 0)
        dec_fail(d, rc, &why);
}

/* One round (stripes T0 .. T0 + nsurv - 1, stripe t decoded by surv[t - T0]) of one block. */
static int dec_round(ring_dec *d, int t0, uint64_t off, size_t len, cn_err *err)
{
    const ring_geo *g = &d->g;
    int tn = t0 + d->nsurv < g->n ? t0 + d->nsurv : g->n, nreq = 0;
    bool me_lost = d->lost[g->x];

    /* Gather: the chosen shards of each stripe to its decoder. */
    for (int t = t0; t < tn; t++) {
        int dec = d->surv[t - t0], mine = shard_of(g, t, g->x);
        if (me_lost)
            continue;
        dec_select(d, t, dec);
        if (dec == g->x) {
            dec_read(d, t, mine, off, d->shards + (size_t)mine * len, len);
            for (int idx = 0; idx < g->n; idx++)
                if (d->sel[idx] && idx != mine)
                    MPI_TRY(MPI_Irecv(d->shards + (size_t)idx * len, (int)len, MPI_BYTE,
                                      shard_member(g, t, idx), EC_TAG_GATHER, g->comm,
                                      &d->req[nreq++]),
                            "MPI_Irecv");
        } else if (d->sel[mine]) {
            uint8_t *buf = d->sendbuf + (size_t)(t - t0) * len;
            dec_read(d, t, mine, off, buf, len);
            MPI_TRY(MPI_Isend(buf, (int)len, MPI_BYTE, dec, EC_TAG_GATHER, g->comm,
                              &d->req[nreq++]),
                    "MPI_Isend");
        }
    }
    MPI_TRY(ec__waitall(&d->g, nreq, d->req, d->st), "MPI_Waitall (decode gather)");

    /* Decode; send the rebuilt shards to their lost owners. */
    nreq = 0;
    for (int t = t0; t < tn; t++) {
        int dec = d->surv[t - t0];
        if (dec == g->x) {
            uint8_t *sh[EC_MAX_SHARDS];
            for (int idx = 0; idx < g->n; idx++)
                sh[idx] = d->shards + (size_t)idx * len;
            int ne = dec_select(d, t, dec);
            if (d->lrc == 0) {
                cn_err why;
                cn_err_clear(&why);
                int rc = ec_decode(d->c, sh, d->erased, ne, len, &why);
                if (rc < 0)
                    dec_fail(d, rc, &why);
            }
            for (int j = 0; j < d->count; j++) {
                int y = d->lostlist[j];
                MPI_TRY(MPI_Isend(sh[shard_of(g, t, y)], (int)len, MPI_BYTE, y, EC_TAG_SCATTER,
                                  g->comm, &d->req[nreq++]),
                        "MPI_Isend");
            }
        } else if (me_lost) {
            MPI_TRY(MPI_Irecv(d->recvbuf + (size_t)(t - t0) * len, (int)len, MPI_BYTE, dec,
                              EC_TAG_SCATTER, g->comm, &d->req[nreq++]),
                    "MPI_Irecv");
        }
    }
    MPI_TRY(ec__waitall(&d->g, nreq, d->req, d->st), "MPI_Waitall (decode scatter)");
    if (me_lost)
        for (int t = t0; t < tn; t++)
            dec_store(d, t, shard_of(g, t, g->x), off, d->recvbuf + (size_t)(t - t0) * len,
                      len);
    return 0;
}

/* Collective: check that every member passed the same LOST; list it in D. */
static int dec_lost(ring_dec *d, cn_err *err)
{
    const ring_geo *g = &d->g;
    size_t n = (size_t)g->n;
    uint8_t *mine = calloc(n, 1), *any = calloc(n, 1), *every = calloc(n, 1);
    int rc = 0;
    if (!mine || !any || !every || !d->lostlist || !d->surv || !d->sel || !d->erased)
        rc = cn_fail(err, CAIRN_ENOMEM, "ring: out of memory");
    else if (!d->lost || !d->io || !d->io->read || !d->io->write_parity ||
             !d->io->read_parity || !d->io->write_data)
        rc = cn_fail(err, CAIRN_EINVAL, "ring: decode needs the lost array and four callbacks");
    else
        for (size_t y = 0; y < n; y++)
            mine[y] = d->lost[y] ? 1 : 0;
    rc = ec__ring_agree(g, rc, err);
    if (rc == 0) {
        int m1 = MPI_Allreduce(mine, any, g->n, MPI_UNSIGNED_CHAR, MPI_BOR, g->comm);
        int m2 = MPI_Allreduce(mine, every, g->n, MPI_UNSIGNED_CHAR, MPI_BAND, g->comm);
        if (m1 != MPI_SUCCESS || m2 != MPI_SUCCESS)
            rc = ec__mpi_fail(err, m1 != MPI_SUCCESS ? m1 : m2, "MPI_Allreduce");
        else if (memcmp(any, every, n) != 0)
            rc = cn_fail(err, CAIRN_EINVAL, "ring: members disagree on which members are lost");
    }
    free(mine);
    free(any);
    free(every);
    if (rc != 0)
        return rc;

    char names[256] = "";
    size_t used = 0;
    for (int y = 0; y < g->n; y++) {
        if (!d->lost[y]) {
            d->surv[d->nsurv++] = y;
            continue;
        }
        d->lostlist[d->count++] = y;
        if (used < sizeof names) {
            int w = snprintf(names + used, sizeof names - used, "%s%d", used ? ", " : "", y);
            used += w > 0 ? (size_t)w : 0;
        }
    }
    if (used >= sizeof names)
        snprintf(names + sizeof names - 5, 5, "...");
    if (d->count > g->m)
        return cn_fail(err, CAIRN_ECORRUPT, "%d members lost (%s), at most %d can be rebuilt",
                       d->count, names, g->m);
    return 0;
}

int ec_ring_decode(MPI_Comm comm, const ec_codec *c, uint64_t chunk, size_t block,
                   const bool *lost, const ec_ring_io *io, cn_err *err)
{
    cn_err local;
    if (!err)
        err = &local;
    cn_err_clear(err);
    ring_dec d;
    memset(&d, 0, sizeof d);
    d.c = c;
    d.io = io;
    d.lost = lost;
    CN_TRY(ec__ring_geo_setup(comm, c, chunk, block, io && io->nap, &d.g, err));
    ring_geo *g = &d.g;
    size_t n = (size_t)g->n;
    d.lostlist = malloc(sizeof *d.lostlist * n);
    d.surv = malloc(sizeof *d.surv * n);
    d.sel = malloc(sizeof *d.sel * n);
    d.erased = malloc(sizeof *d.erased * n);
    int rc = dec_lost(&d, err);
    bool inflight = false;
    if (rc == 0 && d.count > 0 && g->nb > 0) {
        /* A decoder holds n shards of a block, a survivor sends up to n: bound
         * the block by memory. */
        size_t cap = RING_DECODE_MEM / n / g->align * g->align;
        if (g->blk > cap) {
            g->blk = cap > 0 ? cap : g->align;
            g->nb = (g->chunk + g->blk - 1) / g->blk;
        }
        bool me_lost = lost[g->x];
        if (me_lost) {
            d.recvbuf = ec__ring_buf(n * g->blk);
        } else {
            d.shards = ec__ring_buf(n * g->blk);
            d.sendbuf = ec__ring_buf(n * g->blk);
        }
        d.req = malloc(sizeof *d.req * 2 * n);
        d.st = malloc(sizeof *d.st * 2 * n);
        if ((me_lost ? !d.recvbuf : !d.shards || !d.sendbuf) || !d.req || !d.st)
            rc = cn_fail(err, CAIRN_ENOMEM, "ring: out of memory for decode buffers");
        rc = ec__ring_agree(g, rc, err);
        if (rc == 0) {
            for (uint64_t b = 0; rc == 0 && b < g->nb; b++)
                for (int t0 = 0; rc == 0 && t0 < g->n; t0 += d.nsurv)
                    rc = dec_round(&d, t0, b * g->blk, block_len(g, b), err);
            if (rc == 0) {
                cn_err_clear(err);
                if (d.lrc != 0)
                    *err = d.lerr;
                rc = ec__ring_agree(g, d.lrc, err);
            } else {
                inflight = true; /* an MPI call failed: requests may be pending */
            }
        }
    }
    if (!inflight) { /* else MPI may still touch them: leave them be */
        free(d.shards);
        free(d.sendbuf);
        free(d.recvbuf);
        free(d.req);
        free(d.st);
    }
    free(d.lostlist);
    free(d.surv);
    free(d.sel);
    free(d.erased);
    return rc;
}
