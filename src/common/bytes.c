/*
 * bytes.c - checksums and the bounds-checked reader used by every parser of
 * on-disk data. A read past the end marks the reader bad and yields zeros, so
 * a parser reads a whole record and checks `bad` once.
 */
#include "common/common.h"

#include <xxhash.h>

uint64_t cn_hash(const void *data, size_t len) { return XXH3_64bits(data, len); }

const uint8_t *cn_rd_take(cn_rd *r, size_t n)
{
    if (r->bad || n > r->len - r->off) {
        r->bad = true;
        return NULL;
    }
    const uint8_t *p = r->p + r->off;
    r->off += n;
    return p;
}

uint8_t cn_rd_u8(cn_rd *r)
{
    const uint8_t *p = cn_rd_take(r, 1);
    return p ? p[0] : 0;
}

uint16_t cn_rd_u16(cn_rd *r)
{
    const uint8_t *p = cn_rd_take(r, 2);
    return p ? cn_get_u16(p) : 0;
}

uint32_t cn_rd_u32(cn_rd *r)
{
    const uint8_t *p = cn_rd_take(r, 4);
    return p ? cn_get_u32(p) : 0;
}

uint64_t cn_rd_u64(cn_rd *r)
{
    const uint8_t *p = cn_rd_take(r, 8);
    return p ? cn_get_u64(p) : 0;
}
