/*
 * fti_impl.h - the internals shared by the FTI layer's files (not installed).
 *
 *   fti_conf.c    FTI's configuration file: read and check it, turn it into
 *                 cairn settings (an INI text), record the restart state in it
 *                 (its contract, without MPI, in fti_conf.h: the cairn CLI
 *                 links fti_conf.c too)
 *   fti_init.c    FTI_Init / FTI_Finalize / FTI_Status, FTI_Protect
 *   fti_ckpt.c    FTI_Checkpoint / FTI_Snapshot / FTI_Recover / FTI_RecoverVar /
 *                 FTI_GetStoredSize / FTI_Realloc
 *   fti_stage.c   the restart's copy of the checkpoint: read once by FTI_Init,
 *                 handed out by variable (FTI_RecoverVar is local, any order)
 *   fti_index.c   the layer's index of a checkpoint (stored with it as cairn
 *                 variable "fti-index"): encode and decode (fuzzed)
 *   fti_types.c   the data types, attributes, HDF5 names, string ids
 *   fti_more.c    FTI_GetConfig, the iCP calls, the calls not honoured, the C
 *                 side of the Fortran module
 *   fti_mod.f90   module fti, FTI's Fortran interface (libcairn-fti-fortran)
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
    fti_id_t type;
    cairn_type ctype; /* as stored: CTYPE x ELEMS */
    size_t elems;
} cfti_var;

/* One variable of a checkpoint, as its index tells (fti_index.c). */
typedef struct cfti_entry {
    int id;
    cairn_type ctype;
    size_t elems;
    void *data; /* fti_stage.c: the restart's copy, until recovered; else NULL */
} cfti_entry;

#define CFTI_INDEX_NAME "fti-index"
#define CFTI_INDEX_MAGIC 0x4346544949584631LL /* "CFTIIXF1" */
#define CFTI_INDEX_MAX 1000000                 /* variables one index may list */

/* The index of N entries as int64 words into *WORDS (malloc'd, *NWORDS). 0,
 * or -1 (out of memory). */
int cfti_index_encode(const cfti_entry *e, int n, int64_t **words, size_t *nwords);
/* Decode NWORDS int64 words into *E (malloc'd; data NULL) and *N. 0, or -1
 * with MSG (a bad magic, count, id twice, type or size). */
int cfti_index_decode(const int64_t *words, size_t nwords, cfti_entry **e, int *n, char *msg,
                      size_t msg_len);

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
    /* What the newest checkpoint holds for this rank (this run's, else the
     * restart's): FTI_GetStoredSize; data set while staged for a restart. */
    cfti_entry *known;
    int nknown;
    int known_ok;  /* 1 known is valid; 0 no index (a checkpoint without one) */
    int staged;    /* 1 the restart's data are in known[].data */
    int stage_rc;  /* FTI_NREC when staging failed: FTI_Recover / FTI_RecoverVar say so */
    char stage_msg[CFTI_MSG_MAX];
} cfti_state;

extern cfti_state cfti;

/* Print on rank 0 only: "cairn-fti: warning: ..." to stderr for FTI_WARN and
 * FTI_EROR, "cairn-fti: ..." to stdout for FTI_INFO (verbosity <= 2) and
 * FTI_DBUG (verbosity 1). */
void cfti_say(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Once per process and KEY: "cairn-fti: rank R: KEY: WHY" on stderr. */
void cfti_once(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* cairn variable name of FTI id ID. */
void cfti_name(int id, char name[32]);

/* The protected variable ID, or NULL. */
cfti_var *cfti_var_find(int id);

/* Bytes of one element of type T, 0 if T is no type (fti_types.c). The
 * cairn type it is stored as (CAIRN_BYTE for composite and opaque types). */
int cfti_type_size(fti_id_t t);
cairn_type cfti_type_ctype(fti_id_t t);

/* fti_stage.c. Collective: on a restart of generation GEN, read every
 * variable the checkpoint holds for this rank into memory (or note that it
 * has no index). Sets known/staged/stage_rc. */
void cfti_stage_in(long gen);
/* Local: the staged entry of ID, or NULL. */
cfti_entry *cfti_known_find(int id);
/* Local: free what is staged (the recovery is over). */
void cfti_stage_drop(void);
/* Local: KNOWN becomes this rank's protected variables (a checkpoint was
 * taken); frees what was staged. */
void cfti_known_from_vars(void);
/* fti_more.c: the C side of the Fortran module (fti_mod.f90); exported. */
int FTI_Init_fort_wrapper(const char *configFile, MPI_Fint *comm);
int FTI_SetAttribute_fort_wrapper(int id, const char *name, int ndims, const int64_t *counts,
                                  int flag);

/* Collective, staged: copy every protected variable from the staged copy,
 * checked first on every rank. FTI_SCES, or FTI_NREC (said, memory unchanged). */
int cfti_stage_recover_all(long gen);

#endif /* CAIRN_FTI_IMPL_H */
