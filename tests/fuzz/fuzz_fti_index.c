/*
 * fuzz_fti_index.c - libFuzzer target for the FTI layer's checkpoint index
 * decoder (src/compat/fti/fti_index.c: cfti_index_decode), which reads the
 * "fti-index" variable a restart gets back from a checkpoint.
 *
 * fti_index.c is compiled into this target (included below) without MPI: it
 * calls none. The input is taken as int64 words (its trailing bytes
 * dropped). Contracts, or the target aborts: a refusal comes with a message
 * and leaves no entries; an accepted index has sorted, distinct ids, types
 * cairn knows and sizes that fit in memory, and encodes back to the same
 * words once sorted by id (the encoder writes what the decoder reads).
 */
#include "../../src/compat/fti/fti_index.c"

#include "common/common.h"
#include "fuzz.h"

static int decode(const uint8_t *data, size_t size, cfti_entry **e, int *n, char *msg,
                  size_t len)
{
    size_t nwords = size / sizeof(int64_t);
    int64_t *w = malloc(nwords ? nwords * sizeof *w : 1);
    if (!w)
        return snprintf(msg, len, "fuzz: out of memory"), -1;
    memcpy(w, data, nwords * sizeof *w);
    int rc = cfti_index_decode(w, nwords, e, n, msg, len);
    free(w);
    return rc;
}

int fuzz_parse(const uint8_t *data, size_t size, cn_err *err)
{
    cfti_entry *e;
    int n;
    char msg[CFTI_MSG_MAX] = "";
    if (decode(data, size, &e, &n, msg, sizeof msg) != 0)
        return cn_fail(err, CAIRN_EFORMAT, "%s", msg);
    free(e);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cfti_entry *e = NULL;
    int n = -1;
    char msg[CFTI_MSG_MAX] = "";
    if (decode(data, size, &e, &n, msg, sizeof msg) != 0) {
        if (!msg[0] || e || n != 0)
            abort();
        return 0;
    }
    for (int i = 0; i < n; i++)
        if ((i > 0 && e[i].id <= e[i - 1].id) || cairn_type_size(e[i].ctype) == 0 ||
            e[i].elems > SIZE_MAX / 2 / cairn_type_size(e[i].ctype))
            abort();
    int64_t *w;
    size_t nw;
    if (cfti_index_encode(e, n, &w, &nw) == 0) {
        cfti_entry *back;
        int nback;
        if (cfti_index_decode(w, nw, &back, &nback, msg, sizeof msg) != 0 || nback != n ||
            memcmp(back, e, (size_t)n * sizeof *e) != 0)
            abort();
        free(back);
        free(w);
    }
    free(e);
    return 0;
}
