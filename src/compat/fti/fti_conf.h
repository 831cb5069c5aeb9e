/*
 * fti_conf.h - FTI's configuration file as the FTI layer reads it
 * (fti_conf.c), without MPI: the layer (fti_impl.h includes this) and the
 * cairn CLI (`cairn ls --fti FILE`, src/tools/cli_compat.c) share it, so
 * both find a job where the other put it.
 */
#ifndef CAIRN_FTI_CONF_H
#define CAIRN_FTI_CONF_H

#include <stddef.h>

#define CFTI_ID_MAX 256 /* FTI_BUFS: FTI's limit on paths and ids (fti_impl.h checks) */
#define CFTI_PATH_MAX 180 /* longest directory the layer hands cairn (one INI line) */
#define CFTI_MSG_MAX 1024
#define CFTI_INI_MAX 2048 /* the generated cairn settings */

/* What FTI's configuration file says (every key FTI 1.6 reads). */
typedef struct cfti_conf {
    char ckpt_dir[CFTI_PATH_MAX + 1]; /* absolute; "" not given */
    char glbl_dir[CFTI_PATH_MAX + 1];
    char meta_dir[CFTI_ID_MAX], h5_dir[CFTI_ID_MAX], h5_prefix[CFTI_ID_MAX];
    int head, node_size, group_size, local_test; /* -1: not given */
    int ckpt_l[5];                               /* minutes per level 1..4; <= 0: none */
    int inline_l[5];                             /* levels 2..4 */
    int keep_last, keep_l4, verbosity;
    int dcp, dcp_block; /* enable_dcp, dCP_Block_Size */
    int dcp_mode, dcp_stack, dcp_l4, cached_dcp;
    int staging, keep_heads, ckpt_io, max_sync, h5_enable, h5_keep;
    int block_kb, transfer_mb, ckpt_tag, stage_tag, final_tag, general_tag;
    long gpu_bufsize;
    int inj_rank, inj_index, inj_position, inj_number, inj_frequency;
    int failure;        /* [restart] failure: 0 fresh, 1 restart, 2 restart from the kept one */
    char exec_id[CFTI_ID_MAX]; /* [restart] exec_id */
} cfti_conf;

/* Defaults for a run without a configuration file. */
void cfti_conf_defaults(cfti_conf *c);

/* Read and check FTI's configuration file PATH into C. 0, or -1 with MSG
 * ("config.fti:12: node_size: 'x' is not an integer"; what FTI itself refuses,
 * with FTI's reason). Keys FTI knows but cairn has no use for are accepted;
 * those cairn does differently are warned about (stderr, once each; not by
 * the _quiet form); keys FTI does not know are warned about and ignored.
 * Reads only. */
int cfti_conf_read(const char *path, cfti_conf *c, char *msg, size_t msg_len);
int cfti_conf_read_quiet(const char *path, cfti_conf *c, char *msg, size_t msg_len);

/* The cairn settings (INI text) for C, with job id JOB ("" leaves cairn's own
 * rule). 0, or -1 with MSG. */
int cfti_conf_ini(const cfti_conf *c, const char *job, char *ini, size_t ini_len, char *msg,
                  size_t msg_len);

/* Set [restart] failure = FAILURE and exec_id = EXEC_ID in file PATH, leaving
 * every other line as it is (written to a temporary file, then renamed). 0,
 * or -1 with MSG. */
int cfti_conf_mark(const char *path, int failure, const char *exec_id, char *msg,
                   size_t msg_len);

/* For tools: the cairn settings (INI text, with [job] id) of the run FTI
 * configuration file PATH describes: as cfti_conf_read and cfti_conf_ini
 * make them for FTI_Init, with the job id the file's exec_id (its last or
 * current run; CAIRN_JOB, when set, wins in cairn as it does in FTI_Init).
 * 0, or -1 with MSG; warns on stderr as cfti_conf_read does. */
int cfti_conf_tool_ini(const char *path, char *ini, size_t ini_len, char *msg, size_t msg_len);

#endif /* CAIRN_FTI_CONF_H */
