/*
 * fuzz_ckpt.c - libFuzzer target for the checkpoint file reader
 * (cn_ckpt_parse, cn_ckpt_verify: header and table decoding in format.c).
 *
 * Each input is tried twice: as given, and with file_size, the table checksum
 * and the header checksum rewritten to match it, so that mutations get past
 * the checksums to the checks of every field. A file that parses must satisfy
 * the reader's promises, or the target aborts: every entry lies inside the
 * buffer after data_offset, names are unique, and re-encoding the parsed
 * header and table gives back exactly the bytes that were parsed.
 *
 * The buffer belongs to the caller (cn_ckpt_parse does not take it).
 */
#include "common/common.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

/* Header field offsets, as cn_header_encode lays them out. */
#define OFF_TABLE_SIZE 56
#define OFF_FILE_SIZE 72
#define OFF_TABLE_SUM 80

static void check_parsed(const cn_ckpt *c, const uint8_t *buf, size_t len)
{
    const cn_header *h = &c->h;
    if (c->map != buf || c->size != len || c->owns_map || h->file_size != len)
        abort();
    cn_header again = *h;
    uint8_t hdr[CN_HEADER_SIZE];
    cn_header_encode(&again, hdr);
    if (memcmp(hdr, buf, CN_HEADER_SIZE) != 0 || again.header_sum != h->header_sum)
        abort();
    size_t ts = cn_table_size(c->e, h->nentries);
    if (ts != h->table_size || CN_HEADER_SIZE + ts > h->data_offset || h->data_offset > len)
        abort();
    uint8_t *table = malloc(ts ? ts : 1);
    if (!table)
        abort();
    cn_table_encode(c->e, h->nentries, table);
    if (memcmp(table, buf + CN_HEADER_SIZE, ts) != 0)
        abort();
    free(table);
    for (uint32_t i = 0; i < h->nentries; i++) {
        const cn_entry *e = &c->e[i];
        if (e->offset < h->data_offset || e->offset > len || e->stored_size > len - e->offset ||
            e->raw_size != e->count * cairn_type_size((cairn_type)e->type) ||
            cn_ckpt_find(c, e->name) != e)
            abort();
    }
}

static void try_parse(const uint8_t *buf, size_t len)
{
    cn_ckpt *c = NULL;
    cn_err err;
    if (cn_ckpt_parse(buf, len, "fuzz", &c, &err) != 0) {
        if (c || err.code >= 0 || !err.msg[0])
            abort();
        return;
    }
    check_parsed(c, buf, len);
    int rc = cn_ckpt_verify(c, "fuzz", &err);
    if (rc != 0 && rc != CAIRN_ECORRUPT)
        abort();
    cn_ckpt_close(c);
}

int fuzz_parse(const uint8_t *data, size_t size, cn_err *err)
{
    cn_ckpt *c = NULL;
    int rc = cn_ckpt_parse(data, size, "seed", &c, err);
    if (rc == 0)
        rc = cn_ckpt_verify(c, "seed", err);
    cn_ckpt_close(c);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    try_parse(data, size);
    if (size < CN_HEADER_SIZE)
        return 0;
    uint8_t *fixed = malloc(size);
    if (!fixed)
        return 0;
    memcpy(fixed, data, size);
    cn_put_u64(fixed + OFF_FILE_SIZE, size);
    uint64_t ts = cn_get_u64(fixed + OFF_TABLE_SIZE);
    if (ts <= size - CN_HEADER_SIZE)
        cn_put_u64(fixed + OFF_TABLE_SUM, cn_hash(fixed + CN_HEADER_SIZE, (size_t)ts));
    cn_put_u64(fixed + CN_HEADER_SIZE - 8, cn_hash(fixed, CN_HEADER_SIZE - 8));
    try_parse(fixed, size);
    free(fixed);
    return 0;
}
