/*
 * fuzz_manifest.c - libFuzzer target for the node manifest decoder
 * (cn_manifest_decode in format.c).
 *
 * Each input is tried twice: as given, and with its trailing checksum
 * rewritten to match, so that mutations reach the checks of every field. A
 * manifest that decodes must re-encode to exactly the input bytes and keep the
 * decoder's promises (ranks map to existing nodes, local ranks ascend and live
 * on this node), or the target aborts. A failed decode must leave nothing
 * allocated.
 */
#include "common/common.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

static void check_decoded(const cn_manifest *m, const uint8_t *buf, size_t len)
{
    uint8_t *out = NULL;
    size_t n = 0;
    if (cn_manifest_encode(m, &out, &n, NULL) != 0 || n != len || memcmp(out, buf, len) != 0)
        abort();
    free(out);
    for (uint32_t i = 0; i < m->nranks; i++)
        if (m->rank_node[i] >= m->nnodes)
            abort();
    for (uint32_t i = 0; i < m->nlocal; i++) {
        const cn_manifest_rank *l = &m->local[i];
        if (l->rank >= m->nranks || m->rank_node[l->rank] != m->node ||
            (i > 0 && l->rank <= m->local[i - 1].rank))
            abort();
    }
}

static void try_decode(const uint8_t *buf, size_t len)
{
    cn_manifest m;
    cn_err err;
    if (cn_manifest_decode(buf, len, &m, &err) == 0) {
        check_decoded(&m, buf, len);
    } else if (m.rank_node || m.local || err.code >= 0 || !err.msg[0]) {
        abort();
    }
    cn_manifest_free(&m);
}

int fuzz_parse(const uint8_t *data, size_t size, cn_err *err)
{
    cn_manifest m;
    int rc = cn_manifest_decode(data, size, &m, err);
    cn_manifest_free(&m);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_resealed(data, size, try_decode);
}
