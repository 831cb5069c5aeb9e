/*
 * fuzz_pnode.c - libFuzzer target for the decoder of a node's record in a
 * PFS generation written without MPI (cn_pnode_decode in pnode.c: read back
 * from the PFS by the node that commits the epilog's flush).
 *
 * Each input is tried twice: as given, and with its trailing checksum
 * rewritten to match, so that mutations reach the checks of every field. A
 * record that decodes must re-encode to exactly the input bytes and keep the
 * decoder's promises (ranks ascending and below nranks, node below nnodes,
 * no empty file), or the target aborts. A failed decode must leave nothing
 * allocated.
 */
#include "common/common.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "levels/pfs/pfs.h"

static void try_decode(const uint8_t *buf, size_t len)
{
    cn_pnode x;
    cn_err err;
    if (cn_pnode_decode(buf, len, &x, &err) == 0) {
        uint8_t *out = NULL;
        size_t n = 0;
        if (cn_pnode_encode(&x, &out, &n, NULL) != 0 || n != len || memcmp(out, buf, len) != 0)
            abort();
        free(out);
        if (x.node >= x.nnodes || x.nnodes > x.nranks || x.nlocal == 0)
            abort();
        for (uint32_t i = 0; i < x.nlocal; i++)
            if (x.rank[i].rank >= x.nranks || (i && x.rank[i].rank <= x.rank[i - 1].rank) ||
                x.rank[i].file.size == 0)
                abort();
    } else if (x.rank || err.code >= 0 || !err.msg[0]) {
        abort();
    }
    cn_pnode_free(&x);
}

int fuzz_parse(const uint8_t *data, size_t size, cn_err *err)
{
    cn_pnode x;
    int rc = cn_pnode_decode(data, size, &x, err);
    cn_pnode_free(&x);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_resealed(data, size, try_decode);
}
