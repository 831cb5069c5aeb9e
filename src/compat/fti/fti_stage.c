/*
 * fti_stage.c - the restart's copy of the checkpoint, so that FTI_RecoverVar,
 * FTI_GetStoredSize and FTI_Realloc are local, as in FTI: each rank recovers
 * its variables in its own order, or only some of them.
 *
 * cairn's restore calls are collective. So FTI_Init, on a restart (itself
 * collective), reads the checkpoint once: first the layer's index of each
 * rank's variables ("fti-index", fti_index.c), then every variable it lists
 * into memory of the layer's own, protected under its name for one
 * cairn_restart (which verifies every checksum, rebuilds lost nodes or stages
 * in from the PFS first, and decodes everything before it writes). From then
 * on a variable is handed out by memcpy and its copy freed; the rest goes at
 * FTI_RecoverVarFinalize, the first checkpoint or FTI_Finalize. The cost is
 * memory: until recovered, the checkpoint's data are held twice at most.
 *
 * A checkpoint without an index (written by an older layer) leaves known_ok
 * 0: FTI_RecoverVar then falls back to cairn_restart_var, collective.
 *
 * Owns cfti.known (the index entries and the staged copies).
 */
#include "fti_impl.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void free_known(void)
{
    for (int i = 0; i < cfti.nknown; i++)
        free(cfti.known[i].data);
    free(cfti.known);
    cfti.known = NULL;
    cfti.nknown = 0;
    cfti.staged = 0;
}

cfti_entry *cfti_known_find(int id)
{
    for (int i = 0; i < cfti.nknown; i++)
        if (cfti.known[i].id == id)
            return &cfti.known[i];
    return NULL;
}

void cfti_stage_drop(void)
{
    for (int i = 0; i < cfti.nknown; i++) {
        free(cfti.known[i].data);
        cfti.known[i].data = NULL;
    }
    cfti.staged = 0;
}

void cfti_known_from_vars(void)
{
    free_known();
    cfti.known = calloc((size_t)cfti.nvars + 1, sizeof *cfti.known);
    cfti.known_ok = cfti.known != NULL;
    if (!cfti.known)
        return;
    for (int i = 0; i < cfti.nvars; i++)
        cfti.known[i] = (cfti_entry){.id = cfti.vars[i].id, .ctype = cfti.vars[i].ctype,
                                     .elems = cfti.vars[i].elems};
    cfti.nknown = cfti.nvars;
}

/* Every rank's verdict: 0 if all are OK, else the lowest failing rank's
 * message in MSG on every rank and FTI_NREC. */
static int agree(int ok, char *msg, size_t len)
{
    int bad = ok ? INT_MAX : cfti.rank;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MIN, cfti.comm);
    if (bad == INT_MAX)
        return 0;
    MPI_Bcast(msg, (int)len, MPI_CHAR, bad, cfti.comm);
    return FTI_NREC;
}

void cfti_stage_in(long gen)
{
    free_known();
    cfti.known_ok = 0;
    cfti.stage_rc = 0;
    cfti.stage_msg[0] = '\0';
    cairn_var_info info;
    int rc = cairn_var_query(cfti.ctx, gen, CFTI_INDEX_NAME, &info);
    if (rc == CAIRN_ENOENT) {
        cfti_say(FTI_DBUG, "checkpoint without the layer's index: FTI_RecoverVar is collective");
        return;
    }
    char msg[CFTI_MSG_MAX] = "";
    int64_t *words = NULL;
    if (rc == 0) {
        words = malloc(info.bytes ? info.bytes : 1);
        rc = !words ? CAIRN_ENOMEM
             : info.type != CAIRN_INT64
                 ? CAIRN_EMISMATCH
                 : cairn_protect(cfti.ctx, CFTI_INDEX_NAME, words, CAIRN_INT64, info.count, 0,
                                 NULL);
        int ok = rc == 0;
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, cfti.comm);
        rc = ok ? cairn_restart_var(cfti.ctx, gen, CFTI_INDEX_NAME, NULL) : CAIRN_ENOMEM;
        /* stays protected for the restart below: a rank with no variable of its own
         * still restores something (cairn refuses a restart with nothing protected) */
    }
    if (rc != 0)
        snprintf(msg, sizeof msg, "cannot read the checkpoint's index: %s: %s",
                 cairn_strerror(rc), cairn_errmsg(cfti.ctx));
    int ok = rc == 0 && cfti_index_decode(words, info.count, &cfti.known, &cfti.nknown, msg,
                                          sizeof msg) == 0;
    /* every listed variable into memory of its own, protected under its name */
    char name[32];
    for (int i = 0; ok && i < cfti.nknown; i++) {
        cfti_entry *e = &cfti.known[i];
        size_t bytes = e->elems * cairn_type_size(e->ctype);
        e->data = malloc(bytes ? bytes : 1);
        cfti_name(e->id, name);
        if (!e->data)
            ok = 0, snprintf(msg, sizeof msg, "rank %d: out of memory for variable %d (%zu "
                             "bytes)", cfti.rank, e->id, bytes);
        else if ((rc = cairn_protect(cfti.ctx, name, e->data, e->ctype, e->elems, 0, NULL)))
            ok = 0, snprintf(msg, sizeof msg, "rank %d: variable %d: %s", cfti.rank, e->id,
                             cairn_errmsg(cfti.ctx));
    }
    if (agree(ok, msg, sizeof msg) == 0) {
        rc = cairn_restart(cfti.ctx, gen, NULL);
        if (rc != 0)
            snprintf(msg, sizeof msg, "cannot recover generation %ld: %s: %s", gen,
                     cairn_strerror(rc), cairn_errmsg(cfti.ctx));
        ok = rc == 0;
    } else {
        ok = 0;
    }
    for (int i = 0; i < cfti.nknown; i++) {
        cfti_name(cfti.known[i].id, name);
        cairn_unprotect(cfti.ctx, name); /* the application protects its own */
    }
    cairn_unprotect(cfti.ctx, CFTI_INDEX_NAME);
    free(words);
    if (!ok) {
        free_known();
        cfti.known_ok = 1; /* an index was there: no collective fallback */
        cfti.stage_rc = FTI_NREC;
        snprintf(cfti.stage_msg, sizeof cfti.stage_msg, "%s", msg);
        cfti_say(FTI_EROR, "%s", msg);
        return;
    }
    cfti.known_ok = 1;
    cfti.staged = 1;
}

int cfti_stage_recover_all(long gen)
{
    char msg[CFTI_MSG_MAX] = "";
    int ok = 1;
    for (int i = 0; ok && i < cfti.nvars; i++) {
        cfti_var *v = &cfti.vars[i];
        cfti_entry *e = cfti_known_find(v->id);
        size_t want = v->elems * cairn_type_size(v->ctype);
        if (!e || !e->data)
            ok = 0, snprintf(msg, sizeof msg, "cannot recover generation %ld: rank %d: variable "
                             "%d is not in it%s", gen, cfti.rank, v->id,
                             e ? " any more (recovered or released already)" : "");
        else if (e->elems * cairn_type_size(e->ctype) != want)
            ok = 0, snprintf(msg, sizeof msg, "cannot recover generation %ld: rank %d: variable "
                             "%d: the protected size (%zu bytes) does not match the stored one "
                             "(%zu bytes)", gen, cfti.rank, v->id, want,
                             e->elems * cairn_type_size(e->ctype));
    }
    if (agree(ok, msg, sizeof msg) != 0) {
        cfti_say(FTI_EROR, "%s", msg);
        return FTI_NREC;
    }
    for (int i = 0; i < cfti.nvars; i++) {
        cfti_var *v = &cfti.vars[i];
        cfti_entry *e = cfti_known_find(v->id);
        memcpy(v->ptr, e->data, v->elems * cairn_type_size(v->ctype));
    }
    cfti_stage_drop();
    return FTI_SCES;
}
