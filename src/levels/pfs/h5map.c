/*
 * h5map.c - a routed HDF5 file split for level 4, the byte side: the map
 * record that says how to put the file back, the skeleton cut out of the
 * file, and the file rebuilt from skeleton and datasets. Needs no libhdf5:
 * restart rebuilds a file on any build (h5split.c finds the datasets).
 *
 * The map record (every integer little-endian):
 *    0 "CAIRNH5M"  8 u32 version (1)  12 u32 n (datasets)
 *   16 u64 file size  24 u64 XXH3-64 of the whole file (taken at checkpoint)
 *   32 u64 skeleton bytes (file size minus the datasets' bytes)
 *   40 u16 name length, u16 0, u32 0   48 the routed file's name (no NUL)
 *   then n dataset records, by offset: u64 offset, u64 size, u16 name
 *     length, u16 0, u32 0, the dataset's path (no NUL)
 *   last u64: XXH3-64 of every byte before it.
 * Invariants checked on parse: datasets nonempty, in increasing offset,
 * disjoint, inside the file; their bytes and the skeleton's add up to the
 * file size; names 1..CAIRN_NAME_MAX bytes without NUL, unique (the file name
 * a flat name as routed files have); no byte left over.
 *
 * Rebuild: the skeleton's bytes fill the gaps between the datasets in order,
 * so any split is lossless; the whole-file checksum then proves the parts
 * were the right ones.
 *
 * Ownership: a cz_h5map owns its dataset array and names (one allocation);
 * encode's output is the caller's.
 */
#include "levels/pfs/agg_impl.h"

#include <stdlib.h>
#include <string.h>

#define MAP_VERSION 1
#define MAP_HDR 48
#define MAP_DSET 24
static const uint8_t map_magic[8] = {'C', 'A', 'I', 'R', 'N', 'H', '5', 'M'};

int cz_h5map_encode(const char *file, const uint8_t *p, uint64_t len, const cz_h5_dset *d,
                    size_t n, uint8_t **out, size_t *outlen, cn_err *err)
{
    CN_FAIL_IF(!cn_name_ok(file), err, CAIRN_EINVAL, "HDF5 map: bad file name");
    CN_FAIL_IF(n > UINT32_MAX, err, CAIRN_EINVAL, "HDF5 map: %zu datasets", n);
    size_t fl = strlen(file), total = MAP_HDR + fl + 8;
    uint64_t data = 0;
    for (size_t i = 0; i < n; i++) {
        size_t nl = strlen(d[i].name);
        CN_FAIL_IF(nl == 0 || nl > CAIRN_NAME_MAX || d[i].size == 0 ||
                       d[i].offset > len || d[i].size > len - d[i].offset ||
                       (i && d[i].offset < d[i - 1].offset + d[i - 1].size),
                   err, CAIRN_EINVAL, "HDF5 map of '%s': dataset %zu out of place", file, i);
        total += MAP_DSET + nl;
        data += d[i].size;
    }
    uint8_t *b = calloc(1, total);
    CN_FAIL_IF(!b, err, CAIRN_ENOMEM, "no memory for the map of '%s'", file);
    memcpy(b, map_magic, 8);
    cn_put_u32(b + 8, MAP_VERSION);
    cn_put_u32(b + 12, (uint32_t)n);
    cn_put_u64(b + 16, len);
    cn_put_u64(b + 24, cn_hash(p, (size_t)len));
    cn_put_u64(b + 32, len - data);
    cn_put_u16(b + 40, (uint16_t)fl);
    memcpy(b + MAP_HDR, file, fl);
    uint8_t *q = b + MAP_HDR + fl;
    for (size_t i = 0; i < n; i++) {
        size_t nl = strlen(d[i].name);
        cn_put_u64(q, d[i].offset);
        cn_put_u64(q + 8, d[i].size);
        cn_put_u16(q + 16, (uint16_t)nl);
        memcpy(q + MAP_DSET, d[i].name, nl);
        q += MAP_DSET + nl;
    }
    cn_put_u64(q, cn_hash(b, total - 8));
    *out = b;
    *outlen = total;
    return 0;
}

#define BAD(cond, ...) CN_FAIL_IF(cond, err, CAIRN_ECORRUPT, "HDF5 map: " __VA_ARGS__)

static int cmp_name(const void *ctx, size_t a, size_t b)
{
    const cz_h5_ext *d = ctx;
    return strcmp(d[a].name, d[b].name);
}

static int names_unique(const cz_h5map *m, cn_err *err)
{
    size_t *idx = malloc((m->n ? m->n : 1) * sizeof *idx);
    CN_FAIL_IF(!idx, err, CAIRN_ENOMEM, "no memory to check %u names", m->n);
    for (size_t i = 0; i < m->n; i++)
        idx[i] = i;
    int rc = cz_agg_sort(idx, m->n, cmp_name, m->d) ? cn_fail(err, CAIRN_ENOMEM, "no memory")
                                                    : 0;
    for (size_t i = 1; rc == 0 && i < m->n; i++)
        if (strcmp(m->d[idx[i - 1]].name, m->d[idx[i]].name) == 0)
            rc = cn_fail(err, CAIRN_ECORRUPT, "HDF5 map: dataset '%s' twice",
                         m->d[idx[i]].name);
    free(idx);
    return rc;
}

int cz_h5map_parse(const uint8_t *p, size_t len, cz_h5map **out, cn_err *err)
{
    *out = NULL;
    BAD(len < MAP_HDR + 8, "%zu bytes: truncated", len);
    BAD(memcmp(p, map_magic, 8) != 0, "no CAIRNH5M magic");
    CN_FAIL_IF(cn_get_u32(p + 8) != MAP_VERSION, err, CAIRN_EFORMAT,
               "HDF5 map: version %u, this build reads %u", cn_get_u32(p + 8), MAP_VERSION);
    BAD(cn_get_u64(p + len - 8) != cn_hash(p, len - 8), "checksum mismatch");
    uint32_t n = cn_get_u32(p + 12);
    uint16_t fl = cn_get_u16(p + 40);
    BAD(cn_get_u16(p + 42) || cn_get_u32(p + 44), "reserved bytes set");
    BAD(n > (len - MAP_HDR - 8) / (MAP_DSET + 1), "%u datasets cannot fit in %zu bytes", n, len);
    /* one block: the struct, the datasets, then every name with its NUL */
    size_t need = sizeof(cz_h5map) + (size_t)n * sizeof(cz_h5_ext) + len;
    cz_h5map *m = calloc(1, need);
    CN_FAIL_IF(!m, err, CAIRN_ENOMEM, "no memory for a map of %u datasets", n);
    m->d = (cz_h5_ext *)(m + 1);
    char *names = (char *)(m->d + n);
    m->n = n;
    m->size = cn_get_u64(p + 16);
    m->sum = cn_get_u64(p + 24);
    m->skel = cn_get_u64(p + 32);
    cn_rd r = {.p = p, .len = len - 8, .off = MAP_HDR};
    int rc = 0;
    const uint8_t *fn = cn_rd_take(&r, fl);
    if (!fn || fl == 0 || fl > CAIRN_NAME_MAX)
        rc = cn_fail(err, CAIRN_ECORRUPT, "HDF5 map: file name of %u bytes", fl);
    if (rc == 0) {
        memcpy(m->file, fn, fl);
        if (!cn_name_ok(m->file) || strlen(m->file) != fl)
            rc = cn_fail(err, CAIRN_ECORRUPT, "HDF5 map: bad file name");
    }
    uint64_t end = 0, data = 0;
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        const uint8_t *h = cn_rd_take(&r, MAP_DSET);
        uint16_t nl = h ? cn_get_u16(h + 16) : 0;
        const uint8_t *name = h ? cn_rd_take(&r, nl) : NULL;
        if (!h || !name) {
            rc = cn_fail(err, CAIRN_ECORRUPT, "HDF5 map: truncated in dataset %u", i);
            break;
        }
        cz_h5_ext *x = &m->d[i];
        x->offset = cn_get_u64(h);
        x->size = cn_get_u64(h + 8);
        if (cn_get_u16(h + 18) || cn_get_u32(h + 20))
            rc = cn_fail(err, CAIRN_ECORRUPT, "HDF5 map: dataset %u: reserved bytes set", i);
        else if (nl == 0 || nl > CAIRN_NAME_MAX || memchr(name, 0, nl))
            rc = cn_fail(err, CAIRN_ECORRUPT, "HDF5 map: dataset %u: bad name", i);
        else if (x->size == 0 || x->offset < end || x->offset > m->size ||
                 x->size > m->size - x->offset)
            rc = cn_fail(err, CAIRN_ECORRUPT,
                         "HDF5 map: dataset %u (%llu bytes at %llu) out of place in a file of "
                         "%llu bytes", i, (unsigned long long)x->size,
                         (unsigned long long)x->offset, (unsigned long long)m->size);
        if (rc)
            break;
        memcpy(names, name, nl);
        names[nl] = '\0';
        x->name = names;
        names += nl + 1;
        end = x->offset + x->size;
        data += x->size;
    }
    if (rc == 0 && r.off != r.len)
        rc = cn_fail(err, CAIRN_ECORRUPT, "HDF5 map: %zu stray bytes", r.len - r.off);
    if (rc == 0 && data + m->skel != m->size)
        rc = cn_fail(err, CAIRN_ECORRUPT,
                     "HDF5 map: datasets (%llu) and skeleton (%llu bytes) do not make the file "
                     "(%llu)", (unsigned long long)data, (unsigned long long)m->skel,
                     (unsigned long long)m->size);
    if (rc == 0)
        rc = names_unique(m, err);
    if (rc) {
        free(m);
        return rc;
    }
    *out = m;
    return 0;
}

void cz_h5map_free(cz_h5map *m) { free(m); }

long cz_h5map_find(const cz_h5map *m, const char *name)
{
    for (uint32_t i = 0; i < m->n; i++)
        if (strcmp(m->d[i].name, name) == 0)
            return (long)i;
    return -1;
}

void cz_h5_skeleton(const uint8_t *p, uint64_t len, const cz_h5_dset *d, size_t n,
                    uint8_t *skel)
{
    uint64_t at = 0;
    for (size_t i = 0; i <= n; i++) {
        uint64_t next = i < n ? d[i].offset : len;
        memcpy(skel, p + at, (size_t)(next - at));
        skel += next - at;
        at = i < n ? d[i].offset + d[i].size : len;
    }
}

int cz_h5_join(const cz_h5map *m, const uint8_t *skel, uint64_t skel_len,
               const uint8_t *const *data, const uint64_t *len, uint8_t *out, cn_err *err)
{
    CN_FAIL_IF(!skel || skel_len != m->skel, err, CAIRN_ECORRUPT,
               "routed file '%s': its skeleton is %s (%llu bytes, the map says %llu)", m->file,
               skel ? "of the wrong size" : "missing", (unsigned long long)skel_len,
               (unsigned long long)m->skel);
    uint64_t at = 0, from = 0;
    for (uint32_t i = 0; i <= m->n; i++) {
        uint64_t next = i < m->n ? m->d[i].offset : m->size;
        memcpy(out + at, skel + from, (size_t)(next - at));
        from += next - at;
        if (i == m->n)
            break;
        CN_FAIL_IF(!data[i] || len[i] != m->d[i].size, err, CAIRN_ECORRUPT,
                   "routed file '%s': dataset '%s' is %s", m->file, m->d[i].name,
                   data[i] ? "of the wrong size" : "missing");
        memcpy(out + next, data[i], (size_t)m->d[i].size);
        at = next + m->d[i].size;
    }
    CN_FAIL_IF(cn_hash(out, (size_t)m->size) != m->sum, err, CAIRN_ECORRUPT,
               "routed file '%s' rebuilt from its skeleton and %u datasets does not match the "
               "checksum taken at checkpoint: a part is corrupt", m->file, m->n);
    return 0;
}
