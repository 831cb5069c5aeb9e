/*
 * fuzz_scr_record.c - libFuzzer target for cairn-scr's bypass record
 * (src/compat/scr/scr_record.c): the list of a checkpoint's files written
 * at their own paths (SCR_CACHE_BYPASS=1) that each rank keeps in the
 * generation and reads back on restart. The reader is compiled in (included
 * below; it calls no MPI). Contract: an input is accepted, every entry handed
 * over with an absolute path shorter than SCR_MAX_FILENAME, or refused with a
 * message; never a crash, never a read past the input.
 */
#include <mpi.h> /* scr_impl.h names MPI_Comm; nothing here calls MPI */

#include "../../src/compat/scr/scr_record.c"

#include "common/common.h"
#include "fuzz.h"

cscr_state cscr; /* the layer's state: never used here */

static int entry(const char *path, int owner, long long size, unsigned long long hash,
                 void *arg, char *why, size_t wlen)
{
    (void)hash, (void)why, (void)wlen;
    if (path[0] != '/' || strlen(path) >= SCR_MAX_FILENAME || (owner && size < 0))
        abort();
    ++*(long *)arg;
    return 1;
}

int fuzz_parse(const uint8_t *data, size_t size, cn_err *err)
{
    char why[512] = "";
    long n = 0;
    if (cscr_record_parse((const char *)data, size, entry, &n, why, sizeof why))
        return 0;
    if (!why[0])
        abort(); /* a refusal without a message */
    return cn_fail(err, CAIRN_ECORRUPT, "%s", why);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cn_err err = {0};
    fuzz_parse(data, size, &err);
    return 0;
}
