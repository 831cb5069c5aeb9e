/*
 * fuzz_pindex.c - libFuzzer target for the PFS index decoder
 * (cn_pindex_decode in pindex.c).
 *
 * Each input is tried twice: as given, and with its trailing checksum
 * rewritten to match, so that mutations reach the checks of every field. An
 * index that decodes must re-encode to exactly the input bytes and keep the
 * decoder's promises (file count from ranks and group, sizes adding up), or
 * the target aborts. A failed decode must leave nothing allocated.
 */
#include "common/common.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "levels/pfs/pfs.h"

static void try_decode(const uint8_t *buf, size_t len)
{
    cn_pindex x;
    cn_err err;
    if (cn_pindex_decode(buf, len, &x, &err) == 0) {
        uint8_t *out = NULL;
        size_t n = 0;
        if (cn_pindex_encode(&x, &out, &n, NULL) != 0 || n != len || memcmp(out, buf, len) != 0)
            abort();
        free(out);
        uint64_t total = 0;
        for (uint32_t i = 0; i < x.nfiles; i++)
            total += x.files[i].size;
        if (x.nfiles != cn_pindex_nfiles(x.nranks, x.group) || total != x.stored)
            abort();
    } else if (x.files || err.code >= 0 || !err.msg[0]) {
        abort();
    }
    cn_pindex_free(&x);
}

int fuzz_parse(const uint8_t *data, size_t size, cn_err *err)
{
    cn_pindex x;
    int rc = cn_pindex_decode(data, size, &x, err);
    cn_pindex_free(&x);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_resealed(data, size, try_decode);
}
