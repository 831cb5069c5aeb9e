/*
 * fti_index.c - the layer's index of one rank's checkpoint: which FTI ids it
 * holds, each with cairn's element type and count. FTI_Checkpoint stores it
 * with every checkpoint as the cairn variable "fti-index" (int64 words); on a
 * restart FTI_Init reads it back first, so that it knows which variables to
 * read for this rank (fti_stage.c) and their sizes before the application
 * protects anything.
 *
 * Words: MAGIC, N, then N times (id, cairn type, element count). cairn has
 * checksummed the words, but the decoder trusts nothing: a bad magic, a count
 * that does not fit, an id outside int or listed twice, an unknown type or a
 * size beyond what memory can hold is refused with a message (the fuzz target
 * tests/fuzz/fuzz_fti_index.c holds it to that).
 *
 * Pure functions, no MPI, no state; the caller owns what they allocate.
 */
#include "fti_impl.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int cfti_index_encode(const cfti_entry *e, int n, int64_t **words, size_t *nwords)
{
    size_t len = 2 + 3 * (size_t)(n > 0 ? n : 0);
    int64_t *w = malloc(len * sizeof *w);
    if (!w)
        return -1;
    w[0] = CFTI_INDEX_MAGIC;
    w[1] = n;
    for (int i = 0; i < n; i++) {
        w[2 + 3 * i] = e[i].id;
        w[3 + 3 * i] = (int64_t)e[i].ctype;
        w[4 + 3 * i] = (int64_t)e[i].elems;
    }
    *words = w;
    *nwords = len;
    return 0;
}

static int cmp_id(const void *a, const void *b)
{
    int x = ((const cfti_entry *)a)->id, y = ((const cfti_entry *)b)->id;
    return (x > y) - (x < y);
}

int cfti_index_decode(const int64_t *words, size_t nwords, cfti_entry **out, int *nout,
                      char *msg, size_t msg_len)
{
    *out = NULL;
    *nout = 0;
    if (nwords < 2 || words[0] != CFTI_INDEX_MAGIC)
        return snprintf(msg, msg_len, "fti-index: bad magic (not the FTI layer's index)"), -1;
    int64_t n = words[1];
    if (n < 0 || n > CFTI_INDEX_MAX || (size_t)n != (nwords - 2) / 3 || (nwords - 2) % 3 != 0)
        return snprintf(msg, msg_len, "fti-index: count %lld does not match its %zu words",
                        (long long)n, nwords), -1;
    cfti_entry *e = calloc((size_t)n + 1, sizeof *e);
    if (!e)
        return snprintf(msg, msg_len, "fti-index: out of memory for %lld entries", (long long)n),
               -1;
    for (int64_t i = 0; i < n; i++) {
        int64_t id = words[2 + 3 * i], type = words[3 + 3 * i], elems = words[4 + 3 * i];
        size_t tsize = type >= 0 && type <= 64 ? cairn_type_size((cairn_type)type) : 0;
        if (id < INT_MIN || id > INT_MAX || tsize == 0 || elems < 0 ||
            (uint64_t)elems > (uint64_t)(SIZE_MAX / 2) / tsize) {
            snprintf(msg, msg_len, "fti-index: entry %lld: bad id %lld, type %lld or count %lld",
                     (long long)i, (long long)id, (long long)type, (long long)elems);
            free(e);
            return -1;
        }
        e[i] = (cfti_entry){.id = (int)id, .ctype = (cairn_type)type, .elems = (size_t)elems};
    }
    qsort(e, (size_t)n, sizeof *e, cmp_id);
    for (int64_t i = 1; i < n; i++)
        if (e[i].id == e[i - 1].id) {
            snprintf(msg, msg_len, "fti-index: id %d listed twice", e[i].id);
            free(e);
            return -1;
        }
    *out = e;
    *nout = (int)n;
    return 0;
}
