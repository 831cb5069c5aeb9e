/*
 * fti_impl.h - the internals shared by the FTI layer's files (not installed).
 *
 *   fti_conf.c    FTI's configuration file: read and check it, turn it into
 *                 cairn settings (an INI text), record the restart state in it
 *                 (its contract, without MPI, in fti_conf.h: the cairn CLI
 *                 links fti_conf.c too)
 *   fti_init.c    FTI_Init / FTI_Finalize / FTI_Status, the types, FTI_Protect
 *   fti_ckpt.c    FTI_Checkpoint / FTI_Snapshot / FTI_Recover / FTI_RecoverVar /
 *                 FTI_GetStoredSize / FTI_Realloc
 *
 * The layer uses cairn's public API only (cairn.h). Its state is one
 * process-wide cfti_state, as FTI's own is: FTI has one context per process.
 * Internal names carry the prefix cfti_ and hidden visibility; only FTI's
 * names are exported (FTI_EXPORT).
 */
#ifndef CAIRN_FTI_IMPL_H
#define CAIRN_FTI_IMPL_H

#include <cairn.h>
#include <stddef.h>

#include "fti.h"
#include "fti_conf.h"

#define FTI_EXPORT __attribute__((visibility("default")))

#define CFTI_FIRST_USER_TYPE 11 /* FTI's basic types are 0..10 */
_Static_assert(CFTI_ID_MAX == FTI_BUFS, "fti_conf.h's id buffer is FTI's");

/* One protected variable, as FTI_Protect gave it. */
typedef struct cfti_var {
    int id;
    void *ptr;
    long count;
    FTIT_type type;
} cfti_var;

typedef struct cfti_state {
    cairn_ctx *ctx; /* NULL: not initialized */
    MPI_Comm comm;
    int rank;
    int reco;            /* FTI_Status() */
    long plan_gen;       /* generation a restart recovers, -1 none */
    int plan_level, plan_rebuild, plan_lost, plan_fti_id;
    long cur_gen;        /* newest generation of this run: recovered or written; -1 none */
    long last_gen;       /* highest generation id of the job: new ones go above */
    int ckpt_cnt;        /* id of FTI_Snapshot's next checkpoint */
    int file_flow;       /* the configuration file's [restart] section names the job */
    int file_failure;    /* the failure value the file holds */
    char cfg_path[4096];
    char job[64];
    int keep_last, verbosity;
    cfti_var *vars;
    int nvars, cap;
} cfti_state;

extern cfti_state cfti;

/* Print on rank 0 only: "cairn-fti: warning: ..." to stderr for FTI_WARN and
 * FTI_EROR, "cairn-fti: ..." to stdout for FTI_INFO (verbosity <= 2) and
 * FTI_DBUG (verbosity 1). */
void cfti_say(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* cairn variable name of FTI id ID. */
void cfti_name(int id, char name[32]);

/* The protected variable ID, or NULL. */
cfti_var *cfti_var_find(int id);

#endif /* CAIRN_FTI_IMPL_H */
