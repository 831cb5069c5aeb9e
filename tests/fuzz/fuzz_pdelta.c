/*
 * fuzz_pdelta.c - libFuzzer target for the delta record of a PFS generation
 * stored as an increment (cn_pdelta_decode in pdelta.c).
 *
 * Each input is tried twice: as given, and with its trailing checksum
 * rewritten to match, so that mutations reach the checks of every field. A
 * record that decodes must re-encode to exactly the input bytes and keep the
 * decoder's promises (runs ascending within the variable's blocks), or the
 * target aborts. A failed decode must leave nothing allocated.
 */
#include "common/common.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "levels/pfs/pfs.h"

static void try_decode(const uint8_t *buf, size_t len)
{
    cn_pdelta d;
    cn_err err;
    if (cn_pdelta_decode(buf, len, &d, &err) == 0) {
        uint8_t *out = NULL;
        size_t n = 0;
        if (cn_pdelta_encode(&d, &out, &n, NULL) != 0 || n != len || memcmp(out, buf, len) != 0)
            abort();
        free(out);
        for (uint32_t i = 0; i < d.nvars; i++) {
            const cn_pdelta_var *v = &d.v[i];
            uint64_t end = 0;
            for (uint32_t r = 0; r < v->nruns; r++) {
                if (v->runs[r].first < end || v->runs[r].count == 0)
                    abort();
                end = (uint64_t)v->runs[r].first + v->runs[r].count;
            }
            if (end > cn_incr_nblocks(v->size, d.block) ||
                cn_pdelta_stream(v, d.block) > v->size)
                abort();
        }
    } else if (d.v || err.code >= 0 || !err.msg[0]) {
        abort();
    }
    cn_pdelta_free(&d);
}

int fuzz_parse(const uint8_t *data, size_t size, cn_err *err)
{
    cn_pdelta d;
    int rc = cn_pdelta_decode(data, size, &d, err);
    cn_pdelta_free(&d);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_resealed(data, size, try_decode);
}
