/*
 * fuzz_parity.c - libFuzzer target for the parity file reader
 * (cn_parity_decode / cn_parity_check in pfile.c).
 *
 * Each input is tried as given and with its metadata checksum rewritten to
 * match (the metadata length is the u32 at offset 12), so mutations reach the
 * field checks. A file that checks must re-encode to the same metadata bytes,
 * and its members' rank files must sum to their payloads and fit the chunks.
 */
#include "common/common.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "levels/parity/parity.h"

static void check_decoded(cn_parity *p, const uint8_t *buf)
{
    uint8_t *out = NULL;
    size_t n = 0;
    if (cn_parity_encode(p, &out, &n, NULL) != 0 || n != cn_get_u32(buf + 12) ||
        memcmp(out, buf, n) != 0)
        abort();
    free(out);
    for (uint32_t i = 0; i < p->n; i++) {
        uint64_t sum = 0;
        for (uint32_t j = 0; j < p->members[i].nlocal; j++)
            sum += p->members[i].local[j].file_size;
        if (sum != p->members[i].payload || sum > (uint64_t)(p->n - p->m) * p->chunk)
            abort();
    }
}

static void try_check(const uint8_t *buf, size_t len)
{
    cn_parity p;
    cn_err err;
    if (cn_parity_check(buf, len, "fuzz", &p, &err) == 0) {
        check_decoded(&p, buf);
        cn_parity_free(&p);
    }
    if (cn_parity_decode(buf, len, &p, &err) == 0)
        cn_parity_free(&p);
}

int fuzz_parse(const uint8_t *data, size_t size, cn_err *err)
{
    cn_parity p;
    int rc = cn_parity_check(data, size, "seed", &p, err);
    if (rc == 0)
        cn_parity_free(&p);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    try_check(buf, size);
    if (size >= 24) {
        uint32_t n = cn_get_u32(buf + 12);
        if (n >= 24 && n <= size) {
            cn_put_u64(buf + n - 8, cn_hash(buf, n - 8));
            try_check(buf, size);
        }
    }
    free(buf);
    return 0;
}
