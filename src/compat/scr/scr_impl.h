/*
 * scr_impl.h - the inside of cairn-scr (SCR's API over cairn.h): the one
 * process-wide state SCR's handle-less API implies, and the helpers the
 * files of src/compat/scr share. Uses only cairn.h and MPI.
 *
 *   scr_conf.c     SCR parameters (environment, SCR_CONF_FILE, SCR_Config)
 *                  and their mapping onto CAIRN_* settings
 *   scr_conffile.c SCR's configuration file format
 *   scr_init.c     SCR_Init, SCR_Finalize, shared helpers, small calls
 *   scr_output.c   SCR_Start_output / Route_file / Complete_output, checkpoints
 *   scr_restart.c  SCR_Have_restart / Start_restart / Complete_restart, SCR_Current
 *   scr_bypass.c   SCR_CACHE_BYPASS=1: files at their own paths (shared by ranks too),
 *                  the record of them each generation keeps, checked on restart
 *   scr_record.c   that record's format (no MPI; fuzzed by fuzz_scr_record)
 *   scr_jobid.c    the job id SCR's rules give (no MPI; the cairn CLI links it too)
 *   scr_fortran.c  SCR's Fortran interface (scrf.h's calls) over the C API
 *   scr_where.c    for tools: a program's cairn settings from its prefix (scr_where.h)
 *
 * State machine (SCR's): NONE -SCR_Init-> IDLE; IDLE -Start_output-> OUTPUT
 * -Complete_output-> IDLE; IDLE -Start_restart-> RESTART -Complete_restart->
 * IDLE; SCR_Finalize -> NONE. A call out of order fails on every rank and
 * changes nothing. cscr owns the cairn context, its MPI communicator and
 * the route table; strings handed back to the application are copied into
 * its buffers.
 */
#ifndef CAIRN_SCR_IMPL_H
#define CAIRN_SCR_IMPL_H

#include <cairn.h>
#include <stddef.h>

#include "scr.h"

/* scr_jobid.c (no MPI; it compiles without mpi.h, as in the cairn CLI): the job id by
 * SCR's rules, SCR_JOB_ID first (its value VALUE
 * when the caller has it from SCR's parameters, else the environment), then the
 * scheduler's (SLURM_JOB_ID, LSB_JOBID, PBS_JOBID, FLUX_JOB_ID, COBALT_JOBID), else
 * "scr-defjobid-<hash of PREFIX>" (SCR: "defjobid"). SOURCE names where it came from;
 * 0 if it does not fit in LEN. */
int cscr_job_id(const char *value, const char *prefix, char *out, size_t len,
                const char **source);

#ifdef MPI_VERSION /* the rest names MPI's types: only where mpi.h was included */

#define CSCR_API __attribute__((visibility("default")))

enum cscr_phase { CSCR_NONE, CSCR_IDLE, CSCR_OUTPUT, CSCR_RESTART };

/* The settings cairn-scr acts on itself (the rest become CAIRN_* variables). */
typedef struct cscr_conf {
    int level;        /* of every checkpoint: SCR_COPY_TYPE (SINGLE 1, PARTNER 2, XOR/RS 3) */
    int flush;        /* SCR_FLUSH: every flush-th checkpoint (by id) at level 4; 0 never */
    int debug;        /* SCR_DEBUG */
    int always_need;  /* no interval configured anywhere: SCR_Need_checkpoint always says 1 */
    int bypass;       /* SCR_CACHE_BYPASS: datasets' files at their own paths, not in cairn */
    char current[SCR_MAX_FILENAME]; /* SCR_CURRENT: the checkpoint to restart from, "" newest */
} cscr_conf;

/* One file routed in the open output phase. */
typedef struct cscr_route {
    char base[CAIRN_NAME_MAX + 1]; /* its name in the generation: NAME's last component */
    char *final;                   /* where SCR_FLAG_OUTPUT puts it: NAME made absolute */
    char path[SCR_MAX_FILENAME];   /* where the application writes it */
    int bypass;                    /* path is final itself (SCR_CACHE_BYPASS): never removed */
} cscr_route;

typedef struct cscr_state {
    int phase;
    cairn_ctx *ctx;
    MPI_Comm comm; /* a duplicate of MPI_COMM_WORLD, for cairn-scr's own agreements */
    int rank;
    cscr_conf conf;
    long next_id;    /* id of the next checkpoint generation */
    long dataset;    /* SCR's dataset counter, for default names */
    int degraded;    /* levels 2/3 refused for this job's layout: checkpoints at this level */
    /* restart */
    long bound;      /* only generations <= bound are offered (CAIRN_LATEST: any) */
    long have_id;    /* what SCR_Have_restart offered; -1 none */
    char have_name[SCR_MAX_FILENAME];
    int restored;    /* SCR_Start_restart restored have_id */
    int restart_done; /* a restart completed: SCR_Have_restart says 0 from now on */
    char (*byp)[SCR_MAX_FILENAME]; /* the restored checkpoint's bypass files (scr_bypass.c) */
    size_t nbyp, bypcap;
    int current_done; /* SCR_CURRENT / SCR_Current applied */
    /* output */
    char out_name[SCR_MAX_FILENAME];
    int out_flags;
    long out_id;
    cscr_route *routes;
    size_t nroutes, cap;
} cscr_state;

extern cscr_state cscr;

/* scr_init.c */
void cscr_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));   /* rank 0 */
void cscr_debug(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cscr_error(const char *fmt, ...) __attribute__((format(printf, 1, 2))); /* any rank */
int cscr_agree(int ok, const char *why); /* collective: 1 if OK on every rank; else the
                                            lowest failing rank prints its WHY */
int cscr_enter(const char *call, int phase); /* collective: initialized and in PHASE? */
int cscr_staging_dir(char *dir, size_t len); /* local: the directory routed files go to */
void cscr_staging_empty(void);      /* local: remove what that directory holds */
long cscr_newest_known(void);       /* collective: the highest generation id there is, or 0 */

/* scr_conf.c */
int cscr_conf_load(cscr_conf *conf, char *why, size_t wlen); /* local: SCR parameters, set
                                                                 CAIRN_*; 0 and WHY if bad */
const char *cscr_conf_call(const char *config, int *ok); /* SCR_Config's work; OK: it did
                                                            what was asked (Fortran) */
int cscr_absolute(const char *path, char *out, size_t len); /* relative to the working
                                                               directory; 0 if too long */

/* scr_conffile.c */
typedef int (*cscr_kv_fn)(const char *key, size_t klen, const char *value, const char *path,
                          int line, void *arg, char *why, size_t wlen); /* 0 and WHY: stop */
int cscr_conffile_read(const char *path, cscr_kv_fn fn, void *arg, char *why, size_t wlen);
int cscr_is_descriptor(const char *name, size_t len); /* CKPT, STORE, GROUPS */
char *cscr_expand(const char *value); /* $VAR, ${VAR}, quotes; malloc'ed, NULL if no memory */

/* scr_output.c */
int cscr_route_output(const char *name, char *file);
void cscr_output_abandon(void); /* SCR_Finalize inside an output phase */

/* scr_restart.c */
int cscr_route_restart(const char *name, char *file);

/* scr_bypass.c (collective but the route lookup) */
#define CSCR_RECORD ".cairn-scr-bypass" /* a generation's record of its bypass files */
int cscr_bypass_complete(void);   /* the open checkpoint's record, routed in cairn; agreed */
void cscr_shared_explain(void);   /* a discarded dataset: name files routed by several ranks */
int cscr_bypass_load(void);       /* after cairn_restart: read and check the record; agreed */
int cscr_bypass_route(const char *name, char *file); /* local: 1 if NAME is a bypass file */
void cscr_bypass_forget(void);

/* scr_record.c (no MPI) */
typedef int (*cscr_record_fn)(const char *path, int owner, long long size,
                              unsigned long long hash, void *arg, char *why, size_t wlen);
int cscr_file_hash(const char *path, long long *size, unsigned long long *hash); /* 0, -errno */
const char *cscr_record_header(void);
int cscr_record_line(char *out, size_t len, const char *path, int owner, long long size,
                     unsigned long long hash); /* 0 if it does not fit */
int cscr_record_parse(const char *buf, size_t len, cscr_record_fn fn, void *arg, char *why,
                      size_t wlen); /* 1, or 0 with WHY (FN's too) */


/* scr_fortran.c: SCR's Fortran calls, gfortran's names and convention (CHARACTER lengths
 * last, by value). Declared here for the compiler's prototype check only. */
void scr_init_(int *ierr);
void scr_finalize_(int *ierr);
void scr_config_(const char *config, char *val, int *ierr, size_t clen, size_t vlen);
void scr_get_version_(char *version, int *ierr, size_t len);
void scr_should_exit_(int *flag, int *ierr);
void scr_need_checkpoint_(int *flag, int *ierr);
void scr_route_file_(const char *name, char *file, int *ierr, size_t nlen, size_t flen);
void scr_start_checkpoint_(int *ierr);
void scr_complete_checkpoint_(int *valid, int *ierr);
void scr_start_output_(const char *name, int *flags, int *ierr, size_t len);
void scr_complete_output_(int *valid, int *ierr);
void scr_have_restart_(int *flag, char *name, int *ierr, size_t len);
void scr_start_restart_(char *name, int *ierr, size_t len);
void scr_complete_restart_(int *valid, int *ierr);
void scr_current_(const char *name, int *ierr, size_t len);
void scr_delete_(const char *name, int *ierr, size_t len);
void scr_drop_(const char *name, int *ierr, size_t len);

#endif /* MPI_VERSION */
#endif /* CAIRN_SCR_IMPL_H */
