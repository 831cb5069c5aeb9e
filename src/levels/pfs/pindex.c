/*
 * pindex.c - the index of a generation on the parallel file system (level 4).
 *
 * A flushed generation is <pfs.dir>/cairn-<uid>/<job>/gen-<G>/ holding one
 * aggregated file per group of pfs.group consecutive ranks (agg-<i>.cz, the
 * format of src/levels/pfs/agg.c) and this index, written last: the generation
 * is complete only when its index is there and decodes. Layout, every integer
 * little-endian:
 *   "CAIRNPX" 0x01 | u32 version | u32 scheme | i64 generation | job[64]
 *   | u32 nranks | u32 nnodes | u32 group | u32 nfiles | u64 raw | u64 stored
 *   | (version 2:) label[64] | f64 seconds
 *   | (version 3:) i64 parent | i64 base | u64 source
 *   | nfiles x (u64 size, u64 XXH3-64 of the whole file) | u64 XXH3-64 of all before
 * File i holds ranks [i * group, min((i + 1) * group, nranks)). Version 1
 * (cairn 0.2.0) has no label and seconds, version 2 no chain (every
 * generation full); all are read, and each is re-encoded in its own version.
 * In version 3 a generation may be an increment: parent is the PFS generation
 * it changes (-1: full) and base the full one its chain starts at, with
 * base <= parent < generation (src/levels/pfs/pfsread.c applies the chain). The
 * decoder treats its input as hostile (a fuzz target).
 */
#include "levels/pfs/pfs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const uint8_t CN_PINDEX_MAGIC[8] = {'C', 'A', 'I', 'R', 'N', 'P', 'X', 0x01};
#define PX_FIXED (8 + 4 + 4 + 8 + (CN_JOB_MAX + 1) + 4 * 4 + 8 + 8)
#define PX_V2 ((CAIRN_LABEL_MAX + 1) + 8)
#define PX_V3 24
#define PX_FILE 16

static size_t size_of(uint32_t version, uint32_t nfiles)
{
    return PX_FIXED + (version >= 2 ? PX_V2 : 0) + (version >= 3 ? PX_V3 : 0) +
           (size_t)nfiles * PX_FILE + 8;
}

static bool version_read(uint32_t v) { return v >= CN_PINDEX_VERSION_OLD && v <= CN_PINDEX_VERSION; }

/* Full (parent -1, base = generation), or base <= parent < generation. */
static bool chain_ok(int64_t gen, int64_t parent, int64_t base)
{
    return parent == -1 ? base == gen : parent >= 0 && base >= 0 && base <= parent && parent < gen;
}

uint64_t cn_pindex_source(uint32_t rank, uint64_t header_sum)
{
    uint8_t b[12];
    cn_put_u32(b, rank);
    cn_put_u64(b + 4, header_sum);
    return cn_hash(b, sizeof b);
}

size_t cn_pindex_size(uint32_t nfiles) { return size_of(CN_PINDEX_VERSION, nfiles); }

uint32_t cn_pindex_nfiles(uint32_t nranks, uint32_t group)
{
    return group ? (uint32_t)(((uint64_t)nranks + group - 1) / group) : 0;
}

void cn_pindex_file_ranks(const cn_pindex *x, uint32_t f, uint32_t *first, uint32_t *end)
{
    *first = f * x->group;
    *end = *first + x->group < x->nranks ? *first + x->group : x->nranks;
}

bool cn_pindex_file_holds(const cn_pindex *x, uint32_t f, bool (*want)(void *, uint32_t),
                          void *arg)
{
    uint32_t r, end;
    for (cn_pindex_file_ranks(x, f, &r, &end); r < end; r++)
        if (want(arg, r))
            return true;
    return false;
}

int cn_pindex_encode(const cn_pindex *x, uint8_t **out, size_t *len, cn_err *err)
{
    uint32_t version = x->version ? x->version : CN_PINDEX_VERSION;
    CN_FAIL_IF(!version_read(version), err, CAIRN_EINVAL,
               "PFS index: cannot write format version %u", version);
    CN_FAIL_IF(version >= 3 ? !chain_ok(x->generation, x->parent, x->base) : x->parent >= 0,
               err, CAIRN_EINVAL, "PFS index: bad chain (parent %lld, base %lld) in version %u",
               (long long)x->parent, (long long)x->base, version);
    CN_FAIL_IF(version >= 2 && (!cn_label_ok(x->label) || !isfinite(x->seconds) ||
                                x->seconds < 0),
               err, CAIRN_EINVAL, "PFS index: bad label or seconds");
    size_t n = size_of(version, x->nfiles);
    uint8_t *b = calloc(1, n), *p = b;
    CN_FAIL_IF(!b, err, CAIRN_ENOMEM, "no memory for the PFS index");
    memcpy(p, CN_PINDEX_MAGIC, 8), p += 8;
    cn_put_u32(p, version), p += 4;
    cn_put_u32(p, x->scheme), p += 4;
    cn_put_u64(p, (uint64_t)x->generation), p += 8;
    memcpy(p, x->job, strnlen(x->job, CN_JOB_MAX)), p += CN_JOB_MAX + 1;
    cn_put_u32(p, x->nranks), p += 4;
    cn_put_u32(p, x->nnodes), p += 4;
    cn_put_u32(p, x->group), p += 4;
    cn_put_u32(p, x->nfiles), p += 4;
    cn_put_u64(p, x->raw), p += 8;
    cn_put_u64(p, x->stored), p += 8;
    if (version >= 2) {
        uint64_t bits;
        memcpy(p, x->label, strnlen(x->label, CAIRN_LABEL_MAX)), p += CAIRN_LABEL_MAX + 1;
        memcpy(&bits, &x->seconds, 8);
        cn_put_u64(p, bits), p += 8;
    }
    if (version >= 3) {
        cn_put_u64(p, (uint64_t)x->parent), p += 8;
        cn_put_u64(p, (uint64_t)x->base), p += 8;
        cn_put_u64(p, x->source), p += 8;
    }
    for (uint32_t i = 0; i < x->nfiles; i++) {
        cn_put_u64(p, x->files[i].size), p += 8;
        cn_put_u64(p, x->files[i].sum), p += 8;
    }
    cn_put_u64(p, cn_hash(b, n - 8));
    *out = b;
    *len = n;
    return 0;
}

int cn_pindex_decode(const uint8_t *buf, size_t len, cn_pindex *x, cn_err *err)
{
    memset(x, 0, sizeof *x);
    CN_FAIL_IF(len < PX_FIXED + 8 || memcmp(buf, CN_PINDEX_MAGIC, 7) != 0, err, CAIRN_ECORRUPT,
               "not a cairn PFS index (bad magic or truncated)");
    cn_rd r = {.p = buf, .len = len, .off = 8};
    x->version = cn_rd_u32(&r);
    CN_FAIL_IF(buf[7] != CN_PINDEX_MAGIC[7] || !version_read(x->version), err, CAIRN_EFORMAT,
               "PFS index format version %u; this build reads versions %d to %d", x->version,
               CN_PINDEX_VERSION_OLD, CN_PINDEX_VERSION);
    CN_FAIL_IF(cn_hash(buf, len - 8) != cn_get_u64(buf + len - 8), err, CAIRN_ECORRUPT,
               "PFS index checksum mismatch");
    x->scheme = cn_rd_u32(&r);
    x->generation = (int64_t)cn_rd_u64(&r);
    const uint8_t *job = cn_rd_take(&r, CN_JOB_MAX + 1);
    x->nranks = cn_rd_u32(&r);
    x->nnodes = cn_rd_u32(&r);
    x->group = cn_rd_u32(&r);
    x->nfiles = cn_rd_u32(&r);
    x->raw = cn_rd_u64(&r);
    x->stored = cn_rd_u64(&r);
    const uint8_t *label = x->version >= 2 ? cn_rd_take(&r, CAIRN_LABEL_MAX + 1) : NULL;
    uint64_t bits = x->version >= 2 ? cn_rd_u64(&r) : 0;
    memcpy(&x->seconds, &bits, 8);
    x->parent = -1;
    x->base = x->generation;
    if (x->version >= 3) {
        x->parent = (int64_t)cn_rd_u64(&r);
        x->base = (int64_t)cn_rd_u64(&r);
        x->source = cn_rd_u64(&r);
    }
    CN_FAIL_IF(r.bad, err, CAIRN_ECORRUPT, "PFS index: bad fixed part");
    CN_FAIL_IF(!chain_ok(x->generation, x->parent, x->base), err, CAIRN_ECORRUPT,
               "PFS index: bad chain (generation %lld, parent %lld, base %lld)",
               (long long)x->generation, (long long)x->parent, (long long)x->base);
    CN_FAIL_IF(!cn_get_id(job, x->job), err, CAIRN_ECORRUPT, "PFS index: bad job id");
    CN_FAIL_IF(label && !cn_get_label(label, x->label), err, CAIRN_ECORRUPT,
               "PFS index: bad label (printable ASCII, NUL-padded)");
    CN_FAIL_IF(!isfinite(x->seconds) || x->seconds < 0, err, CAIRN_ECORRUPT,
               "PFS index: bad seconds");
    CN_FAIL_IF(x->generation < 0 || x->nranks == 0 || x->nnodes == 0 ||
                   x->nnodes > x->nranks || x->group == 0 || x->scheme > 4 ||
                   x->nfiles != cn_pindex_nfiles(x->nranks, x->group),
               err, CAIRN_ECORRUPT, "PFS index: inconsistent counts");
    CN_FAIL_IF(len != size_of(x->version, x->nfiles), err, CAIRN_ECORRUPT,
               "PFS index: length %zu does not match its %u files", len, x->nfiles);
    x->files = calloc(x->nfiles, sizeof *x->files);
    CN_FAIL_IF(!x->files, err, CAIRN_ENOMEM, "no memory for the PFS index");
    uint64_t total = 0;
    for (uint32_t i = 0; i < x->nfiles; i++) {
        x->files[i].size = cn_rd_u64(&r);
        x->files[i].sum = cn_rd_u64(&r);
        total += x->files[i].size;
        if (x->files[i].size == 0 || total < x->files[i].size) {
            cn_pindex_free(x);
            return cn_fail(err, CAIRN_ECORRUPT, "PFS index: bad size of file %u", i);
        }
    }
    if (total != x->stored) {
        cn_pindex_free(x);
        return cn_fail(err, CAIRN_ECORRUPT, "PFS index: file sizes do not add up");
    }
    return 0;
}

void cn_pindex_free(cn_pindex *x)
{
    free(x->files);
    x->files = NULL;
}

int cn_agg_filename(char *buf, size_t len, uint32_t file)
{
    return snprintf(buf, len, "agg-%06u.cz", file);
}
