/*
 * ring_internal.h - what the ring's encode (ring.c) and decode
 * (ring_decode.c) share: message tags, the agreed geometry of a set, MPI
 * error plumbing. Private to src/erasure; the contract is erasure.h.
 */
#ifndef CAIRN_RING_INTERNAL_H
#define CAIRN_RING_INTERNAL_H

#include "erasure/erasure.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    EC_TAG_RING = 0x4543, /* + lane */
    EC_TAG_GATHER = 0x4550,
    EC_TAG_SCATTER = 0x4551,
};

#define RING_LANES 3 /* at most; 2 but for the last group of an odd count */
#define RING_PROGRESS_SLICE (256u << 10) /* column update between MPI progress calls */
#define RING_MEM_ALIGN 64

/* The set and its geometry, the same on every member once agreed. */
typedef struct ring_geo {
    MPI_Comm comm;
    int n, x, m, k;
    uint64_t chunk;
    size_t blk, align;  /* blk: a multiple of align, at most half the chunk rounded up */
    uint64_t nb;        /* blocks per chunk */
    bool nap;           /* waits nap, not spin (ec_ring_io.nap) */
} ring_geo;

#define MPI_TRY(call, what)                                                                       \
    do {                                                                                          \
        int mrc_ = (call);                                                                        \
        if (mrc_ != MPI_SUCCESS)                                                                  \
            return ec__mpi_fail(err, mrc_, what);                                                     \
    } while (0)

/* Bytes of block B of a chunk (the last one may be shorter). */
static inline size_t block_len(const ring_geo *g, uint64_t b)
{
    uint64_t left = g->chunk - b * g->blk;
    return left < g->blk ? (size_t)left : g->blk;
}

/* CAIRN_EMPI with MPI's description of MRC. */
int ec__mpi_fail(cn_err *err, int mrc, const char *what);
/* Collective: the lowest code of any member, with that member's message. */
int ec__ring_agree(const ring_geo *g, int rc, cn_err *err);
/* Collective: check and agree on the arguments; fills G (NAP: g->nap). */
int ec__ring_geo_setup(MPI_Comm comm, const ec_codec *c, uint64_t chunk, size_t block,
                       bool nap, ring_geo *g, cn_err *err);
/* MPI_Allreduce on G's communicator, napping while it waits if g->nap. */
int ec__allreduce(const ring_geo *g, const void *in, void *out, int count, MPI_Datatype type,
                  MPI_Op op);
/* MPI_Waitall (ST may be MPI_STATUSES_IGNORE), napping while it waits if g->nap. */
int ec__waitall(const ring_geo *g, int n, MPI_Request *req, MPI_Status *st);
/* A RING_MEM_ALIGN-aligned buffer of LEN bytes (free with free). */
uint8_t *ec__ring_buf(size_t len);

#endif /* CAIRN_RING_INTERNAL_H */
