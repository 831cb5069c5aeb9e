/*
 * pnode.c - a node's record in a PFS generation being written without MPI
 * (the epilog's flush, src/levels/pfs/flushnode.c; the commit, src/levels/pfs/pfs_stage.c).
 *
 * Each node of a job writes the files of its own ranks (one per rank: the
 * index's group 1) into <job>/.part-gen-<G>/ and then this record,
 * node-<k>.done, naming what it wrote. Once every node's record is there, one
 * node builds the generation's index from them. Layout, little-endian:
 *   "CAIRNPN" 0x01 | u32 version | u32 scheme | i64 generation | job[64]
 *   | u32 nranks | u32 nnodes | u32 node | u32 nlocal | u64 map (cn_hash of
 *   the job's rank -> node map, u32 each) | label[64] | f64 seconds
 *   | nlocal x (u32 rank | u32 0 | u64 size | u64 XXH3-64 | u64 raw
 *     | u64 source, cn_pindex_source of the rank's node-local file)
 *   | u64 XXH3-64 of all before
 * Ranks ascend. The decoder treats its input as hostile (a fuzz target:
 * tests/fuzz/fuzz_pnode.c); the caller owns the record's rank array.
 */
#include "levels/pfs/pfs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const uint8_t CN_PNODE_MAGIC[8] = {'C', 'A', 'I', 'R', 'N', 'P', 'N', 0x01};
#define PN_FIXED (8 + 4 + 4 + 8 + (CN_JOB_MAX + 1) + 4 * 4 + 8 + (CAIRN_LABEL_MAX + 1) + 8)
#define PN_RANK 40

static size_t size_of(uint32_t nlocal) { return PN_FIXED + (size_t)nlocal * PN_RANK + 8; }

int cn_pnode_encode(const cn_pnode *x, uint8_t **out, size_t *len, cn_err *err)
{
    CN_FAIL_IF(!cn_label_ok(x->label) || !isfinite(x->seconds) || x->seconds < 0, err,
               CAIRN_EINVAL, "node record: bad label or seconds");
    size_t n = size_of(x->nlocal);
    uint8_t *b = calloc(1, n), *p = b;
    CN_FAIL_IF(!b, err, CAIRN_ENOMEM, "no memory for a node record");
    memcpy(p, CN_PNODE_MAGIC, 8), p += 8;
    cn_put_u32(p, CN_PNODE_VERSION), p += 4;
    cn_put_u32(p, x->scheme), p += 4;
    cn_put_u64(p, (uint64_t)x->generation), p += 8;
    memcpy(p, x->job, strnlen(x->job, CN_JOB_MAX)), p += CN_JOB_MAX + 1;
    cn_put_u32(p, x->nranks), p += 4;
    cn_put_u32(p, x->nnodes), p += 4;
    cn_put_u32(p, x->node), p += 4;
    cn_put_u32(p, x->nlocal), p += 4;
    cn_put_u64(p, x->map), p += 8;
    memcpy(p, x->label, strnlen(x->label, CAIRN_LABEL_MAX)), p += CAIRN_LABEL_MAX + 1;
    uint64_t bits;
    memcpy(&bits, &x->seconds, 8);
    cn_put_u64(p, bits), p += 8;
    for (uint32_t i = 0; i < x->nlocal; i++) {
        const cn_pnode_rank *r = &x->rank[i];
        cn_put_u32(p, r->rank), p += 8;
        cn_put_u64(p, r->file.size), p += 8;
        cn_put_u64(p, r->file.sum), p += 8;
        cn_put_u64(p, r->raw), p += 8;
        cn_put_u64(p, r->source), p += 8;
    }
    cn_put_u64(p, cn_hash(b, n - 8));
    *out = b;
    *len = n;
    return 0;
}

int cn_pnode_decode(const uint8_t *buf, size_t len, cn_pnode *x, cn_err *err)
{
    memset(x, 0, sizeof *x);
    CN_FAIL_IF(len < PN_FIXED + 8 || memcmp(buf, CN_PNODE_MAGIC, 7) != 0, err, CAIRN_ECORRUPT,
               "not a cairn node record (bad magic or truncated)");
    cn_rd r = {.p = buf, .len = len, .off = 8};
    uint32_t version = cn_rd_u32(&r);
    CN_FAIL_IF(buf[7] != CN_PNODE_MAGIC[7] || version != CN_PNODE_VERSION, err, CAIRN_EFORMAT,
               "node record format version %u; this build reads version %d", version,
               CN_PNODE_VERSION);
    CN_FAIL_IF(cn_hash(buf, len - 8) != cn_get_u64(buf + len - 8), err, CAIRN_ECORRUPT,
               "node record checksum mismatch");
    x->scheme = cn_rd_u32(&r);
    x->generation = (int64_t)cn_rd_u64(&r);
    const uint8_t *job = cn_rd_take(&r, CN_JOB_MAX + 1);
    x->nranks = cn_rd_u32(&r);
    x->nnodes = cn_rd_u32(&r);
    x->node = cn_rd_u32(&r);
    x->nlocal = cn_rd_u32(&r);
    x->map = cn_rd_u64(&r);
    const uint8_t *label = cn_rd_take(&r, CAIRN_LABEL_MAX + 1);
    uint64_t bits = cn_rd_u64(&r);
    memcpy(&x->seconds, &bits, 8);
    CN_FAIL_IF(r.bad, err, CAIRN_ECORRUPT, "node record: bad fixed part");
    CN_FAIL_IF(!cn_get_id(job, x->job), err, CAIRN_ECORRUPT, "node record: bad job id");
    CN_FAIL_IF(!cn_get_label(label, x->label), err, CAIRN_ECORRUPT,
               "node record: bad label (printable ASCII, NUL-padded)");
    CN_FAIL_IF(!isfinite(x->seconds) || x->seconds < 0, err, CAIRN_ECORRUPT,
               "node record: bad seconds");
    CN_FAIL_IF(x->generation < 0 || x->nranks == 0 || x->nnodes == 0 || x->nnodes > x->nranks ||
                   x->node >= x->nnodes || x->nlocal == 0 || x->nlocal > x->nranks ||
                   x->scheme > 4,
               err, CAIRN_ECORRUPT, "node record: inconsistent counts");
    CN_FAIL_IF(len != size_of(x->nlocal), err, CAIRN_ECORRUPT,
               "node record: length %zu does not match its %u ranks", len, x->nlocal);
    x->rank = calloc(x->nlocal, sizeof *x->rank);
    CN_FAIL_IF(!x->rank, err, CAIRN_ENOMEM, "no memory for a node record");
    for (uint32_t i = 0; i < x->nlocal; i++) {
        cn_pnode_rank *k = &x->rank[i];
        k->rank = cn_rd_u32(&r);
        uint32_t zero = cn_rd_u32(&r);
        k->file.size = cn_rd_u64(&r);
        k->file.sum = cn_rd_u64(&r);
        k->raw = cn_rd_u64(&r);
        k->source = cn_rd_u64(&r);
        const char *why = zero != 0 ? "nonzero padding"
                          : k->rank >= x->nranks || (i > 0 && k->rank <= x->rank[i - 1].rank)
                              ? "ranks out of range or not ascending"
                          : k->file.size == 0 ? "empty file" : NULL;
        if (why) {
            uint32_t rank = k->rank;
            cn_pnode_free(x);
            return cn_fail(err, CAIRN_ECORRUPT, "node record: rank %u: %s", rank, why);
        }
    }
    return 0;
}

void cn_pnode_free(cn_pnode *x)
{
    free(x->rank);
    x->rank = NULL;
}

int cn_pnode_filename(char *buf, size_t len, uint32_t node)
{
    return snprintf(buf, len, "node-%u.done", node);
}

int cn_pstage_dirname(char *buf, size_t len, int64_t gen)
{
    return snprintf(buf, len, CN_PSTAGE_PREFIX "%lld", (long long)gen);
}
