/*
 * fti_impl.h - the internals shared by the FTI layer's files (not installed).
 *
 *   fti_conf.c    FTI's configuration file: read and check it, turn it into
 *                 cairn settings (an INI text), record the restart state in it
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

#define FTI_EXPORT __attribute__((visibility("default")))

#define CFTI_PATH_MAX 180 /* longest directory the layer hands cairn (one INI line) */
#define CFTI_MSG_MAX 1024
#define CFTI_INI_MAX 2048 /* the generated cairn settings */
#define CFTI_FIRST_USER_TYPE 11 /* FTI's basic types are 0..10 */

/* What FTI's configuration file says (only the keys the layer maps). */
typedef struct cfti_conf {
    char ckpt_dir[CFTI_PATH_MAX + 1]; /* absolute; "" not given */
    char glbl_dir[CFTI_PATH_MAX + 1];
    int head, node_size, group_size, local_test; /* -1: not given */
    int ckpt_l[5];                               /* minutes per level 1..4; <= 0: none */
    int inline_l[5];                             /* levels 2..4 */
    int keep_last, keep_l4, verbosity;
    int dcp, dcp_block; /* enable_dcp, dCP_Block_Size */
    int failure;        /* [restart] failure: 0 fresh, 1 restart, 2 restart from the kept one */
    char exec_id[FTI_BUFS]; /* [restart] exec_id */
} cfti_conf;

/* Defaults for a run without a configuration file. */
void cfti_conf_defaults(cfti_conf *c);

/* Read and check FTI's configuration file PATH into C. 0, or -1 with MSG
 * ("config.fti:12: node_size: 'x' is not an integer"). Keys FTI knows but
 * cairn has no use for are accepted; keys FTI does not know are warned
 * about (stderr), once each. Reads only. */
int cfti_conf_read(const char *path, cfti_conf *c, char *msg, size_t msg_len);

/* The cairn settings (INI text) for C, with job id JOB ("" leaves cairn's own
 * rule). 0, or -1 with MSG. */
int cfti_conf_ini(const cfti_conf *c, const char *job, char *ini, size_t ini_len, char *msg,
                  size_t msg_len);

/* Set [restart] failure = FAILURE and exec_id = EXEC_ID in file PATH, leaving
 * every other line as it is (written to a temporary file, then renamed). 0,
 * or -1 with MSG. */
int cfti_conf_mark(const char *path, int failure, const char *exec_id, char *msg,
                   size_t msg_len);

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
