/*
 * fti_ckpt.c - checkpoint and recovery calls of the FTI layer: FTI_Checkpoint,
 * FTI_Snapshot, FTI_Recover, FTI_RecoverVar, FTI_GetStoredSize, FTI_Realloc.
 *
 * FTI's checkpoint ids are the application's (FTI_Snapshot numbers its own
 * 1, 2, ... and goes on after a restart from the recovered id + 1); cairn's
 * generation ids must grow. A checkpoint is generation ID when ID is above
 * every generation of the job, else the next one up; its label, "FTI
 * checkpoint ID", keeps FTI's id for the restart and `cairn ls`.
 *
 * On a restart the first FTI_Snapshot recovers; if that fails it says so and
 * returns FTI_NREC once, and the run goes on without it (FTI would abort, or
 * try again at every iteration). Afterwards
 * FTI_Snapshot asks cairn_need_checkpoint, which counts iterations against
 * the intervals ckpt_l1..ckpt_l4 became (ckpt.every_<L> = <minutes>m) and
 * names the highest level due, as FTI picks it.
 *
 * Every checkpoint also stores the layer's index of each rank's variables
 * ("fti-index", fti_index.c), which a restart reads first (fti_stage.c).
 * FTI_Checkpoint, FTI_Snapshot and FTI_Recover are collective, and every
 * rank gets the same result, so the state in cfti stays the same on every
 * rank; FTI_RecoverVar, FTI_GetStoredSize and FTI_Realloc are local, served
 * from what FTI_Init read (a checkpoint without an index: collective, as
 * before). Messages of collective calls come from rank 0 (cfti_say), of local
 * ones from the rank. Owns the index words of the checkpoint being written.
 */
#include "fti_impl.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* FTI's "not initialized" answer. */
static int uninitialized(const char *call)
{
    cfti_say(FTI_WARN, "%s: FTI is not initialized", call);
    return FTI_NSCS;
}

FTI_EXPORT int FTI_Checkpoint(int id, int level)
{
    if (!cfti.ctx)
        return uninitialized("FTI_Checkpoint");
    if (level == FTI_L4_H5_SINGLE) {
        cfti_once("FTI_Checkpoint", "level FTI_L4_H5_SINGLE (one HDF5 file for all ranks) is "
                  "not supported: checkpoint at FTI_L4 instead");
        return FTI_NSCS;
    }
    if (level >= FTI_L1_DCP && level <= FTI_L4_DCP) /* differential: incr.mode decides here */
        level -= FTI_L1_DCP - FTI_L1;
    if (level < 1 || level > 4) {
        cfti_say(FTI_WARN, "FTI_Checkpoint(%d, %d): the level must be 1, 2, 3 or 4", id, level);
        return FTI_NSCS;
    }
    /* the index of this rank's variables goes with the checkpoint */
    cfti_entry *e = calloc((size_t)cfti.nvars + 1, sizeof *e);
    int64_t *words = NULL;
    size_t nwords = 0;
    for (int i = 0; e && i < cfti.nvars; i++)
        e[i] = (cfti_entry){.id = cfti.vars[i].id, .ctype = cfti.vars[i].ctype,
                            .elems = cfti.vars[i].elems};
    int irc = e && cfti_index_encode(e, cfti.nvars, &words, &nwords) == 0
                  ? cairn_protect(cfti.ctx, CFTI_INDEX_NAME, words, CAIRN_INT64, nwords, 0, NULL)
                  : CAIRN_ENOMEM;
    free(e);
    MPI_Allreduce(MPI_IN_PLACE, &irc, 1, MPI_INT, MPI_MIN, cfti.comm);
    if (irc != 0) {
        cairn_unprotect(cfti.ctx, CFTI_INDEX_NAME);
        free(words);
        cfti_say(FTI_WARN, "checkpoint %d (L%d) failed: out of memory for its index", id, level);
        return FTI_NSCS;
    }
    long gen = id > cfti.last_gen ? id : cfti.last_gen + 1;
    char label[CAIRN_LABEL_MAX + 1];
    snprintf(label, sizeof label, "FTI checkpoint %d", id);
    int rc = cairn_label(cfti.ctx, label);
    double t0 = MPI_Wtime();
    if (rc == 0)
        rc = cairn_checkpoint(cfti.ctx, gen, level);
    double t = MPI_Wtime() - t0;
    cairn_unprotect(cfti.ctx, CFTI_INDEX_NAME);
    free(words);
    cfti.last_gen = gen; /* even a failed generation's id is not used again */
    if (rc != 0) {
        cfti_say(FTI_WARN, "checkpoint %d (L%d) failed: %s: %s", id, level, cairn_strerror(rc),
                 cairn_errmsg(cfti.ctx));
        return FTI_NSCS;
    }
    cfti.cur_gen = gen;
    cfti_known_from_vars(); /* the newest checkpoint; a restart's copy is not needed now */
    if (id >= cfti.ckpt_cnt)
        cfti.ckpt_cnt = id + 1;
    if (cfti.file_flow && cfti.file_failure != 1) {
        char msg[CFTI_MSG_MAX];
        if (cfti.rank == 0 &&
            cfti_conf_mark(cfti.cfg_path, 1, cfti.job, msg, sizeof msg) != 0)
            cfti_say(FTI_WARN, "cannot record failure = 1: %s; to restart this run, set "
                     "CAIRN_JOB=%s", msg, cfti.job);
        cfti.file_failure = 1;
    }
    cfti_say(FTI_INFO, "checkpoint %d (L%d, generation %ld) taken in %.2f s", id, level, gen, t);
    return FTI_DONE;
}

FTI_EXPORT int FTI_Recover(void)
{
    if (!cfti.ctx)
        return uninitialized("FTI_Recover");
    long gen = cfti.reco ? cfti.plan_gen : cfti.cur_gen;
    if (gen < 0) {
        cfti_say(FTI_WARN, "FTI_Recover: there is no checkpoint to recover");
        return FTI_NSCS;
    }
    long restored = gen;
    int rc = 0;
    if (cfti.reco && cfti.stage_rc) {
        cfti_say(FTI_EROR, "%s", cfti.stage_msg); /* FTI_Init could not read it */
        return FTI_NREC;
    }
    if (cfti.reco && cfti.staged) {
        if ((rc = cfti_stage_recover_all(gen)) != FTI_SCES)
            return rc;
    } else {
        rc = cairn_restart(cfti.ctx, gen, &restored);
    }
    if (rc != 0) {
        cfti_say(FTI_EROR, "cannot recover generation %ld: %s: %s", gen, cairn_strerror(rc),
                 cairn_errmsg(cfti.ctx));
        return FTI_NREC;
    }
    if (cfti.reco)
        cfti_say(FTI_INFO, "recovered checkpoint %d from level %d (generation %ld)",
                 cfti.plan_fti_id, cfti.plan_level, restored);
    else
        cfti_say(FTI_INFO, "recovered generation %ld", restored);
    cfti.reco = 0;
    cfti.cur_gen = restored;
    return FTI_SCES;
}

FTI_EXPORT int FTI_Snapshot(void)
{
    if (!cfti.ctx)
        return uninitialized("FTI_Snapshot");
    if (cfti.reco) {
        int rc = FTI_Recover();
        if (rc != FTI_SCES) { /* said once: the run goes on, the checkpoint stays as it is */
            cfti_say(FTI_EROR, "FTI_Snapshot: recovery failed; going on without it");
            cfti.reco = 0;
        }
        return rc;
    }
    int level = 0, rc = cairn_need_checkpoint(cfti.ctx, &level);
    if (rc != 0) {
        cfti_say(FTI_WARN, "FTI_Snapshot: %s: %s", cairn_strerror(rc), cairn_errmsg(cfti.ctx));
        return FTI_NSCS;
    }
    if (level == 0)
        return FTI_SCES;
    return FTI_Checkpoint(cfti.ckpt_cnt, level);
}

FTI_EXPORT int FTI_RecoverVar(int id)
{
    if (!cfti.ctx)
        return uninitialized("FTI_RecoverVar");
    if (!cfti.reco)
        return FTI_SCES; /* not a restart: nothing to do, as in FTI */
    cfti_var *v = cfti_var_find(id);
    if (!v) {
        fprintf(stderr, "cairn-fti: warning: rank %d: FTI_RecoverVar(%d): variables must be "
                "protected before they can be recovered\n", cfti.rank, id);
        return FTI_NREC;
    }
    if (cfti.stage_rc) {
        fprintf(stderr, "cairn-fti: error: rank %d: FTI_RecoverVar(%d): %s\n", cfti.rank, id,
                cfti.stage_msg);
        return FTI_NREC;
    }
    char name[32];
    cfti_name(id, name);
    if (!cfti.known_ok) { /* a checkpoint without the layer's index: collective */
        int rc = cairn_restart_var(cfti.ctx, cfti.plan_gen, name, NULL);
        if (rc != 0) {
            cfti_say(FTI_EROR, "FTI_RecoverVar(%d): %s: %s", id, cairn_strerror(rc),
                     cairn_errmsg(cfti.ctx));
            return FTI_NREC;
        }
        return FTI_SCES;
    }
    cfti_entry *e = cfti_known_find(id);
    size_t want = v->elems * cairn_type_size(v->ctype);
    size_t have = e ? e->elems * cairn_type_size(e->ctype) : 0;
    if (!e || !e->data || want != have) {
        fprintf(stderr, "cairn-fti: warning: rank %d: FTI_RecoverVar(%d): %s (%zu bytes "
                "protected, %zu stored)\n", cfti.rank, id,
                !e        ? "checkpoint " "holds no such variable for this rank"
                : !e->data ? "already recovered, or released by FTI_RecoverVarFinalize"
                           : "the sizes do not match",
                want, have);
        return FTI_NREC;
    }
    memcpy(v->ptr, e->data, want);
    free(e->data); /* handed out: its copy goes */
    e->data = NULL;
    return FTI_SCES;
}

FTI_EXPORT int FTI_RecoverVarInit(void) { return cfti.ctx ? FTI_SCES : FTI_NSCS; }

FTI_EXPORT int FTI_RecoverVarFinalize(void)
{
    if (!cfti.ctx)
        return FTI_NSCS;
    if (cfti.reco && cfti.known_ok)
        cfti_stage_drop(); /* what was not recovered is released */
    return FTI_SCES;
}

/* Bytes variable ID holds in the generation GEN, 0 if none. Collective: for
 * a checkpoint without the layer's index only. */
static long stored_size(long gen, int id)
{
    if (gen < 0)
        return 0;
    if (cfti.known_ok) {
        cfti_entry *e = cfti_known_find(id);
        return e ? (long)(e->elems * cairn_type_size(e->ctype)) : 0;
    }
    char name[32];
    cfti_name(id, name);
    cairn_var_info info;
    int rc = cairn_var_query(cfti.ctx, gen, name, &info);
    if (rc == CAIRN_ENOENT)
        return 0;
    if (rc != 0) {
        cfti_say(FTI_WARN, "stored size of variable %d: %s: %s", id, cairn_strerror(rc),
                 cairn_errmsg(cfti.ctx));
        return 0;
    }
    return (long)info.bytes;
}

FTI_EXPORT int32_t FTI_GetStoredSize(int id)
{
    if (!cfti.ctx) {
        uninitialized("FTI_GetStoredSize");
        return 0;
    }
    long bytes = stored_size(cfti.cur_gen, id);
    return bytes > INT32_MAX ? INT32_MAX : (int32_t)bytes; /* FTI 1.6's type */
}

FTI_EXPORT void *FTI_Realloc(int id, void *ptr)
{
    if (!cfti.ctx) {
        uninitialized("FTI_Realloc");
        return ptr;
    }
    if (!cfti.reco) {
        fprintf(stderr, "cairn-fti: warning: rank %d: FTI_Realloc(%d): this is not a recovery; "
                "memory is not reallocated\n", cfti.rank, id);
        return ptr;
    }
    cfti_var *v = cfti_var_find(id);
    long bytes = stored_size(cfti.plan_gen, id);
    int tsize = v ? cfti_type_size(v->type) : 0;
    if (!v || bytes <= 0 || bytes % tsize != 0 || bytes / tsize > INT32_MAX) {
        fprintf(stderr, "cairn-fti: warning: rank %d: FTI_Realloc(%d): %s\n", cfti.rank, id,
                !v ? "the variable is not protected" : "no stored size fits the type");
        return ptr;
    }
    void *p = realloc(ptr, (size_t)bytes);
    if (!p) {
        fprintf(stderr, "cairn-fti: error: rank %d: FTI_Realloc(%d): out of memory for %ld "
                "bytes\n", cfti.rank, id, bytes);
        return NULL;
    }
    FTI_Protect(id, p, (int32_t)(bytes / tsize), v->type); /* says why if it fails */
    return p;
}
