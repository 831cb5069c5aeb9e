/*
 * pdelta.c - what one rank's variables went through in a PFS generation
 * stored as an increment (level 4, index version 3 with a parent).
 *
 * Such a generation's aggregated files hold, for each rank, a member named
 * CN_PDELTA_NAME (this record), and one member per variable: its whole bytes,
 * or for a variable stored as changes the bytes of the blocks its runs list,
 * one after another. Every variable of the rank at that generation is listed,
 * so one missing from the record disappeared; routed files are members of
 * their own, always whole. Layout, every integer little-endian:
 *   "CAIRNPD" 0x01 | u32 version | u32 rank | u32 block | u32 nvars
 *   | i64 generation | i64 parent
 *   | nvars x { u8 flags (1: changes) | u8 type | u8 ndims | u8 namelen
 *     | u32 nruns | u64 dims[3] | u64 count | u64 size | name
 *     | nruns x (u32 first block, u32 blocks) }
 *   | u64 XXH3-64 of all before
 * Runs ascend and do not overlap, and end within the variable's blocks; a
 * whole variable has none. The decoder treats its input as hostile (a fuzz
 * target: tests/fuzz/fuzz_pdelta.c).
 */
#include "levels/pfs/pfs.h"

#include <stdlib.h>
#include <string.h>

const uint8_t CN_PDELTA_MAGIC[8] = {'C', 'A', 'I', 'R', 'N', 'P', 'D', 0x01};
#define PD_FIXED (8 + 4 * 4 + 8 + 8)
#define PD_VAR (4 + 4 + 8 * CAIRN_MAX_DIMS + 8 + 8)

static size_t var_len(const cn_pdelta_var *v)
{
    return PD_VAR + strlen(v->name) + (size_t)v->nruns * 8;
}

uint64_t cn_pdelta_stream(const cn_pdelta_var *v, uint32_t block)
{
    return v->delta ? cn_runs_stream(v->runs, v->nruns, v->size, block) : v->size;
}

/* Every field of V (hostile) against the record's BLOCK. */
static int check_var(const cn_pdelta_var *v, uint32_t block, cn_err *err)
{
    CN_FAIL_IF(!cn_name_ok(v->name), err, CAIRN_ECORRUPT, "delta record: bad variable name");
    CN_FAIL_IF(v->type > CAIRN_DOUBLE || v->ndims > CAIRN_MAX_DIMS, err, CAIRN_ECORRUPT,
               "delta record: '%s': bad type or dims", v->name);
    uint64_t prod = 1;
    for (int d = 0; d < v->ndims; d++)
        CN_FAIL_IF(__builtin_mul_overflow(prod, v->dims[d], &prod), err, CAIRN_ECORRUPT,
                   "delta record: '%s': dims overflow", v->name);
    for (int d = v->ndims; d < CAIRN_MAX_DIMS; d++)
        CN_FAIL_IF(v->dims[d] != 0, err, CAIRN_ECORRUPT, "delta record: '%s': unused dim set",
                   v->name);
    uint64_t raw;
    CN_FAIL_IF((v->ndims > 0 && prod != v->count) ||
                   __builtin_mul_overflow(v->count, (uint64_t)cairn_type_size(v->type), &raw) ||
                   raw != v->size || raw > (1ull << 56),
               err, CAIRN_ECORRUPT, "delta record: '%s': sizes disagree with count and type",
               v->name);
    CN_FAIL_IF(!v->delta && v->nruns, err, CAIRN_ECORRUPT,
               "delta record: '%s': runs on a whole variable", v->name);
    uint64_t nb = cn_incr_nblocks(v->size, block), end = 0;
    for (uint32_t r = 0; r < v->nruns; r++) {
        uint64_t first = v->runs[r].first, stop = first + v->runs[r].count;
        CN_FAIL_IF(v->runs[r].count == 0 || first < end || stop > nb, err, CAIRN_ECORRUPT,
                   "delta record: '%s': run %u (blocks %llu..%llu) out of order or beyond its "
                   "%llu blocks", v->name, r, (unsigned long long)first,
                   (unsigned long long)stop, (unsigned long long)nb);
        end = stop;
    }
    return 0;
}

static bool block_ok(uint32_t b)
{
    return b >= CN_MIN_INCR_BLOCK && b <= CN_MAX_INCR_BLOCK && (b & (b - 1)) == 0;
}

int cn_pdelta_encode(const cn_pdelta *d, uint8_t **out, size_t *len, cn_err *err)
{
    CN_FAIL_IF(!block_ok(d->block) || d->parent < 0 || d->parent >= d->generation, err,
               CAIRN_EINVAL, "delta record: bad block size or chain");
    size_t n = PD_FIXED + 8;
    for (uint32_t i = 0; i < d->nvars; i++) {
        CN_TRY(check_var(&d->v[i], d->block, err));
        n += var_len(&d->v[i]);
    }
    uint8_t *b = malloc(n), *p = b;
    CN_FAIL_IF(!b, err, CAIRN_ENOMEM, "no memory for a delta record");
    memcpy(p, CN_PDELTA_MAGIC, 8), p += 8;
    cn_put_u32(p, CN_PDELTA_VERSION), p += 4;
    cn_put_u32(p, d->rank), p += 4;
    cn_put_u32(p, d->block), p += 4;
    cn_put_u32(p, d->nvars), p += 4;
    cn_put_u64(p, (uint64_t)d->generation), p += 8;
    cn_put_u64(p, (uint64_t)d->parent), p += 8;
    for (uint32_t i = 0; i < d->nvars; i++) {
        const cn_pdelta_var *v = &d->v[i];
        size_t nl = strlen(v->name);
        p[0] = v->delta ? 1 : 0, p[1] = v->type, p[2] = v->ndims, p[3] = (uint8_t)nl;
        cn_put_u32(p + 4, v->nruns), p += 8;
        for (int k = 0; k < CAIRN_MAX_DIMS; k++)
            cn_put_u64(p, v->dims[k]), p += 8;
        cn_put_u64(p, v->count), p += 8;
        cn_put_u64(p, v->size), p += 8;
        memcpy(p, v->name, nl), p += nl;
        for (uint32_t r = 0; r < v->nruns; r++) {
            cn_put_u32(p, v->runs[r].first), p += 4;
            cn_put_u32(p, v->runs[r].count), p += 4;
        }
    }
    cn_put_u64(p, cn_hash(b, n - 8));
    *out = b;
    *len = n;
    return 0;
}

/* One variable record at R into V (runs allocated). */
static int read_var(cn_rd *r, cn_pdelta_var *v, uint32_t block, cn_err *err)
{
    const uint8_t *h = cn_rd_take(r, 8);
    CN_FAIL_IF(!h || h[0] > 1, err, CAIRN_ECORRUPT, "delta record: bad variable record");
    v->delta = h[0] == 1, v->type = h[1], v->ndims = h[2];
    uint32_t nl = h[3], nruns = cn_get_u32(h + 4);
    for (int k = 0; k < CAIRN_MAX_DIMS; k++)
        v->dims[k] = cn_rd_u64(r);
    v->count = cn_rd_u64(r);
    v->size = cn_rd_u64(r);
    const uint8_t *name = cn_rd_take(r, nl);
    CN_FAIL_IF(r->bad || !name || nl == 0 || nl > CAIRN_NAME_MAX ||
                   memchr(name, 0, nl) != NULL || nruns > (r->len - r->off) / 8,
               err, CAIRN_ECORRUPT, "delta record: truncated variable record");
    memcpy(v->name, name, nl);
    v->name[nl] = '\0';
    v->runs = nruns ? malloc(sizeof *v->runs * nruns) : NULL;
    CN_FAIL_IF(nruns && !v->runs, err, CAIRN_ENOMEM, "no memory for a delta record");
    v->nruns = nruns;
    for (uint32_t k = 0; k < nruns; k++) {
        v->runs[k].first = cn_rd_u32(r);
        v->runs[k].count = cn_rd_u32(r);
    }
    return check_var(v, block, err);
}

int cn_pdelta_decode(const uint8_t *buf, size_t len, cn_pdelta *d, cn_err *err)
{
    memset(d, 0, sizeof *d);
    CN_FAIL_IF(len < PD_FIXED + 8 || memcmp(buf, CN_PDELTA_MAGIC, 7) != 0, err, CAIRN_ECORRUPT,
               "not a cairn delta record (bad magic or truncated)");
    cn_rd r = {.p = buf, .len = len - 8, .off = 8};
    d->version = cn_rd_u32(&r);
    CN_FAIL_IF(buf[7] != CN_PDELTA_MAGIC[7] || d->version != CN_PDELTA_VERSION, err,
               CAIRN_EFORMAT, "delta record format version %u; this build reads version %d",
               d->version, CN_PDELTA_VERSION);
    CN_FAIL_IF(cn_hash(buf, len - 8) != cn_get_u64(buf + len - 8), err, CAIRN_ECORRUPT,
               "delta record checksum mismatch");
    d->rank = cn_rd_u32(&r);
    d->block = cn_rd_u32(&r);
    uint32_t nvars = cn_rd_u32(&r);
    d->generation = (int64_t)cn_rd_u64(&r);
    d->parent = (int64_t)cn_rd_u64(&r);
    CN_FAIL_IF(!block_ok(d->block) || d->parent < 0 || d->parent >= d->generation ||
                   nvars > (r.len - r.off) / PD_VAR,
               err, CAIRN_ECORRUPT, "delta record: bad block size, chain or count");
    d->v = calloc(nvars ? nvars : 1, sizeof *d->v);
    CN_FAIL_IF(!d->v, err, CAIRN_ENOMEM, "no memory for a delta record");
    int rc = 0;
    for (uint32_t i = 0; i < nvars && rc == 0; i++) {
        d->nvars = i + 1;
        rc = read_var(&r, &d->v[i], d->block, err);
    }
    if (rc == 0 && r.off != r.len)
        rc = cn_fail(err, CAIRN_ECORRUPT, "delta record: %zu bytes after its variables",
                     r.len - r.off);
    if (rc < 0)
        cn_pdelta_free(d);
    return rc;
}

void cn_pdelta_free(cn_pdelta *d)
{
    for (uint32_t i = 0; d->v && i < d->nvars; i++)
        free(d->v[i].runs);
    free(d->v);
    d->v = NULL;
    d->nvars = 0;
}
