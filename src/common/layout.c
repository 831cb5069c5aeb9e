/*
 * layout.c - the layout record: which block of a global array each
 * distributed variable of a rank holds, and which variables are replicated
 * (cairn_protect_block, cairn_protect_replicated). It travels as one raw
 * entry of every rank file (CN_LAYOUT_NAME) and is read back only by a
 * restart onto another rank count or node layout (src/remap/remap*.c).
 *
 * The record, little-endian:
 *   u32 version (1), u32 nvars, then per variable:
 *   u16 name length (1..CAIRN_NAME_MAX), the name (no NUL), u8 dist (1 block,
 *   2 replicated), u8 type (a cairn_type), u8 ndims (1..3), u8 0,
 *   u64 global[3], u64 start[3], u64 count[3]
 * (unused dimensions 0; a replicated variable: ndims 1, global = count = its
 * element count, start 0). Nothing may follow the last variable.
 *
 * Ownership: cn_layout_encode's buffer is the caller's to free.
 */
#include "common/common.h"

#include <stdlib.h>
#include <string.h>

#define REC_FIXED (4 + 9 * 8)

size_t cn_layout_size(const char *const *names, size_t n)
{
    size_t size = 8;
    for (size_t i = 0; i < n; i++)
        size += 2 + strlen(names[i]) + REC_FIXED;
    return size;
}

int cn_layout_encode(const char *const *names, const cn_block *b, size_t n, uint8_t **out,
                     size_t *len, cn_err *err)
{
    size_t size = cn_layout_size(names, n);
    uint8_t *p = calloc(1, size);
    if (!p)
        return cn_fail(err, CAIRN_ENOMEM, "out of memory for the layout record");
    cn_put_u32(p, 1);
    cn_put_u32(p + 4, (uint32_t)n);
    uint8_t *q = p + 8;
    for (size_t i = 0; i < n; i++) {
        size_t nl = strlen(names[i]);
        cn_put_u16(q, (uint16_t)nl);
        memcpy(q + 2, names[i], nl);
        q += 2 + nl;
        q[0] = (uint8_t)b[i].dist;
        q[1] = (uint8_t)b[i].type;
        q[2] = (uint8_t)b[i].ndims;
        for (int d = 0; d < CN_LAYOUT_DIMS; d++) {
            cn_put_u64(q + 4 + 8 * d, b[i].global[d]);
            cn_put_u64(q + 28 + 8 * d, b[i].start[d]);
            cn_put_u64(q + 52 + 8 * d, b[i].count[d]);
        }
        q += REC_FIXED;
    }
    *out = p;
    *len = size;
    return 0;
}

/* Variable I of the record at P (LEN bytes), whose entry starts at *AT: its
 * name (NAME, NL bytes) and description, *AT moved past it. */
static int entry(const uint8_t *p, size_t len, uint32_t i, size_t *at, const uint8_t **name,
                 size_t *nl, cn_block *b, cn_err *err)
{
    if (len - *at < 2)
        return cn_fail(err, CAIRN_ECORRUPT, "layout record: truncated at variable %u", i);
    *nl = cn_get_u16(p + *at);
    if (*nl == 0 || *nl > CAIRN_NAME_MAX)
        return cn_fail(err, CAIRN_ECORRUPT, "layout record: variable %u: bad name length %zu",
                       i, *nl);
    if (len - *at - 2 < *nl + REC_FIXED)
        return cn_fail(err, CAIRN_ECORRUPT, "layout record: truncated at variable %u", i);
    *name = p + *at + 2;
    const uint8_t *q = *name + *nl;
    *at += 2 + *nl + REC_FIXED;
    if (memchr(*name, '\0', *nl))
        return cn_fail(err, CAIRN_ECORRUPT, "layout record: variable %u: bad name (a NUL)", i);
    if (q[0] != CN_DIST_BLOCK && q[0] != CN_DIST_REPLICATED)
        return cn_fail(err, CAIRN_ECORRUPT, "layout record: variable %u: bad dist %u", i, q[0]);
    if (q[2] < 1 || q[2] > CN_LAYOUT_DIMS || q[3] != 0)
        return cn_fail(err, CAIRN_ECORRUPT, "layout record: variable %u: bad dims %u", i, q[2]);
    memset(b, 0, sizeof *b);
    b->dist = q[0], b->type = q[1], b->ndims = q[2];
    for (int d = 0; d < CN_LAYOUT_DIMS; d++) {
        b->global[d] = cn_get_u64(q + 4 + 8 * d);
        b->start[d] = cn_get_u64(q + 28 + 8 * d);
        b->count[d] = cn_get_u64(q + 52 + 8 * d);
        bool used = d < b->ndims;
        if ((used && (b->start[d] > b->global[d] || b->count[d] > b->global[d] - b->start[d])) ||
            (!used && (b->global[d] || b->start[d] || b->count[d])))
            return cn_fail(err, CAIRN_ECORRUPT, "layout record: variable %u: bad extent in "
                           "dimension %d", i, d);
    }
    return 0;
}

int cn_layout_find(const uint8_t *p, size_t len, const char *name, cn_block *b, cn_err *err)
{
    if (len < 8)
        return cn_fail(err, CAIRN_ECORRUPT, "layout record: truncated header");
    if (cn_get_u32(p) != 1)
        return cn_fail(err, CAIRN_ECORRUPT, "layout record: bad version %u", cn_get_u32(p));
    uint32_t n = cn_get_u32(p + 4);
    size_t at = 8, want = name ? strlen(name) : 0;
    int found = CAIRN_ENOENT;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *nm = NULL;
        size_t nl = 0;
        cn_block one;
        CN_TRY(entry(p, len, i, &at, &nm, &nl, &one, err));
        if (name && found != 0 && nl == want && memcmp(nm, name, nl) == 0) {
            *b = one;
            found = 0;
        }
    }
    if (at != len)
        return cn_fail(err, CAIRN_ECORRUPT, "layout record: %zu bytes of trailing garbage",
                       len - at);
    if (found != 0 && name)
        cn_fail(err, CAIRN_ENOENT, "layout record: no variable '%s'", name);
    return name ? found : 0;
}
