/*
 * fuzz_h5map.c - libFuzzer target for the map record of a routed HDF5 file
 * split at level 4 (cz_h5map_parse in src/levels/pfs/h5map.c), read back from
 * every aggregated file that holds one before the file is rebuilt.
 *
 * Each input is tried as given and resealed (the checksum in its last 8 bytes
 * recomputed), so that mutations get past the checksum to the other checks.
 * A refused record must say why (a negative code and a message). A record
 * that parses must hold its invariants (datasets in order, disjoint, inside
 * the file, adding up with the skeleton to the file size; every name found
 * at its own index), and, when the file it describes is small, rebuilding
 * from a skeleton and datasets of exactly the sizes it gives must stay in
 * bounds and fail only on the whole-file checksum (the sanitizers watch).
 */
#include "compress/compress.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "levels/pfs/pfs.h"

int fuzz_parse(const uint8_t *data, size_t size, cn_err *err)
{
    cz_h5map *m = NULL;
    int rc = cz_h5map_parse(data, size, &m, err);
    cz_h5map_free(m);
    return rc;
}

/* One record, as given. */
static void one(const uint8_t *data, size_t size)
{
    cn_err err = {0};
    cz_h5map *m = NULL;
    if (cz_h5map_parse(data, size, &m, &err) != 0) {
        if (err.code >= 0 || !err.msg[0] || m)
            abort();
        return;
    }
    uint64_t end = 0, sum = m->skel;
    for (uint32_t i = 0; i < m->n; i++) {
        const cz_h5_ext *x = &m->d[i];
        if (x->size == 0 || x->offset < end || x->offset + x->size > m->size ||
            cz_h5map_find(m, x->name) != (long)i)
            abort();
        end = x->offset + x->size;
        sum += x->size;
    }
    if (sum != m->size)
        abort();
    if (m->size <= (1u << 20)) {
        uint8_t *skel = calloc(1, m->skel + 1), *out = malloc(m->size + 1);
        const uint8_t **d = calloc(m->n + 1, sizeof *d);
        uint64_t *len = calloc(m->n + 1, sizeof *len);
        if (skel && out && d && len) {
            for (uint32_t i = 0; i < m->n; i++)
                d[i] = calloc(1, m->d[i].size), len[i] = m->d[i].size;
            int rc = cz_h5_join(m, skel, m->skel, d, len, out, &err);
            if (rc != 0 && (rc != CAIRN_ECORRUPT || !strstr(err.msg, "checksum")))
                abort();
            for (uint32_t i = 0; i < m->n; i++)
                free((void *)d[i]);
        }
        free(skel), free(out), free(d), free(len);
    }
    cz_h5map_free(m);
}

/* The input as given, then resealed (its last 8 bytes made the checksum of the rest), so
 * that mutations reach the checks behind the checksum. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_resealed(data, size, one);
}
