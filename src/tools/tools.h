/*
 * tools.h - the internal contract of the cairn command-line tool.
 *
 * The CLI is built with -DCAIRN_NO_MPI and linked with src/common (and the
 * compatibility layers' configuration readers, which call no MPI; no MPI
 * library is linked): it reads what the library wrote, it never takes part
 * in a job.
 *
 *   cli.c          main, the verb table, help and version, messages, exit
 *                  statuses, small output helpers (sizes, aligned tables)
 *   cli_disk.c     the node-local store: resolve <base>/cairn-<uid>, walk
 *                  jobs, node and generation directories, load manifests
 *   cli_ls.c       cairn ls       cli_inspect.c  cairn inspect
 *   cli_lsdata.c   a job's generations summarized (ls, report): cli_jobview
 *   cli_verify.c   cairn verify   cli_config.c   cairn config
 *   cli_report.c   cairn report --svg (a picture of a job's generations)
 *   cli_verify_job.c  cairn verify --job: a job's node-local generations
 *   cli_daemon.c   cairn status, flush, drain; finding a job's daemons
 *   cli_start.c    cairn start, stop
 *   cli_flushnode.c  cairn flush --node-only (execs cairnd --flush-node)
 *   cli_drill.c    cairn drill (runs scripts/drill.sh)
 *   cli_prune.c    cairn prune (generations cairn never removes itself)
 *   cli_pfs.c      level 4 files (aggregated files, index): verify, inspect
 *   cli_hook.c     cairn hook prolog|epilog: the root side (base, cairn-<uid>,
 *                  dropping to the job's user); cli_hook_env.c its
 *                  environment; cli_hook_prolog.c the user's
 *                  side of the prolog (directories, stage-in), cli_hook_epilog.c
 *                  of the epilog (drain, stop, keep or remove the node's files)
 *   progress.c     the progress line of long verbs, on a terminal only
 *   cli_json.c     the documents of --json (docs/json.md), with jansson
 *   cli_compat.c   --fti FILE, --scr PREFIX, --veloc FILE: a job found from a
 *                  program's own configuration, by its layer's reader (linked;
 *                  they call no MPI)
 *
 * Adding a verb: one X(...) line in CLI_VERB_LIST below, and in a file of its
 * own `int cli_<name>(int argc, char **argv)` plus `const char
 * cli_<name>_usage[]`. The verb gets argv[0] = its name, parses its options
 * with getopt_long (cli_getopt_fail for the errors, cli_help for --help) and
 * returns an exit status from CLI_EXIT_LIST.
 *
 * Messages: results go to stdout; errors go to stderr as "cairn: VERB: ...".
 * Memory: the tool exits on allocation failure (cli_alloc), so helpers here
 * never return ENOMEM; whoever fills a struct frees it with its _free/_close.
 */
#ifndef CAIRN_TOOLS_H
#define CAIRN_TOOLS_H

#include "common/common.h"

#include <jansson.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

/* ---- exit statuses ------------------------------------------------------ */

/* X(NAME, value, meaning): one list makes the enum, --help and the merge order. */
#define CLI_EXIT_LIST(X)                                                                          \
    X(CLI_EXIT_OK, 0, "success")                                                                  \
    X(CLI_EXIT_ERROR, 1, "error: I/O, bad configuration, unsafe directory, other")               \
    X(CLI_EXIT_USAGE, 2, "usage error: unknown verb or option, missing or bad argument")         \
    X(CLI_EXIT_MISSING, 3, "missing data: no such job, no generations, a missing file")          \
    X(CLI_EXIT_CORRUPT, 4, "corruption: a checksum or format check failed (wins over 3)")

enum cli_exit {
#define CLI_X_EXIT(name, value, meaning) name = value,
    CLI_EXIT_LIST(CLI_X_EXIT)
#undef CLI_X_EXIT
};

/* The more serious of two statuses: corrupt > missing > usage > error > ok. */
int cli_exit_worst(int a, int b);
/* The status for a cairn return code: ENOENT -> missing, ECORRUPT/EFORMAT ->
 * corrupt, other failures -> error, 0 -> ok. */
int cli_exit_for(int rc);
/* Print the exit status table (for help texts). */
void cli_print_exit_codes(FILE *f);

/* ---- verbs -------------------------------------------------------------- */

/* X(name, one-line summary), in the order `cairn --help` lists them. */
#define CLI_VERB_LIST(X)                                                                          \
    X(ls, "list jobs, or the generations of one job, with cheap checks")                         \
    X(inspect, "print a checkpoint, manifest, parity or PFS file (index, agg-*.cz)")            \
    X(verify, "check every checksum of a job's generations, or of files")                        \
    X(report, "draw a job's generations (time, bytes by level, compression) as SVG")            \
    X(rebuild, "rebuild lost nodes' files from partner copies or parity (MPI)")                 \
    X(prune, "remove generations by hand: an abandoned timeline, another layout's")              \
    X(config, "configuration reference, check a file, node name, intervals, PFS speed")         \
    X(start, "start a job's node daemons (cairnd), one per node")                                \
    X(stop, "stop a job's node daemons after their queued work; wait until gone")                \
    X(status, "what each node daemon of a job is doing")                                         \
    X(flush, "have the daemons flush the newest generation to the PFS (--node-only: no daemon)")  \
    X(drain, "flush the newest complete generation to the PFS and wait (epilogs)")              \
    X(drill, "inject failures into a real MPI job, restart, verify (failure drills)")            \
    X(hook, "the scheduler's prolog and epilog, run as root on each node (Slurm)")

#define CLI_X_DECL(name, summary)                                                                 \
    int cli_##name(int argc, char **argv);                                                        \
    extern const char cli_##name##_usage[];
CLI_VERB_LIST(CLI_X_DECL)
#undef CLI_X_DECL

/* ---- messages and option parsing --------------------------------------- */

/* "cairn: VERB: message\n" on stderr. */
void cli_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* cli_error plus "Try 'cairn help VERB'."; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Report getopt_long's return C ('?' or ':', optstring starting with ':'). */
int cli_getopt_fail(const char *verb, int c, char **argv);
/* Print VERB's help (usage text and exit statuses) to stdout; returns CLI_EXIT_OK. */
int cli_help(const char *verb);
/* Reset getopt for a verb's argv (argv[0] = verb name); quiet, own messages. */
void cli_getopt_reset(void);
/* Message of ERR without a leading "PATH: " (the caller prints the path). */
const char *cli_msg_after(const cn_err *err, const char *path);

/* ---- output helpers ----------------------------------------------------- */

void *cli_alloc(size_t n);                /* calloc or exit(CLI_EXIT_ERROR) */
char *cli_strdup(const char *s);          /* strdup or exit */
/* DIR "/" NAME into OUT; exits (status 1) if it does not fit, which cannot
 * happen for paths the store builds (its base is at most 4095 bytes). */
void cli_path_join(char *out, size_t len, const char *dir, const char *name);
/* "0 B", "512 B", "1.5 KiB", "4.0 MiB" ... into BUF (at least 16 bytes). */
const char *cli_human(uint64_t bytes, char *buf, size_t len);
const char *cli_type_name(int type);      /* "double", or "unknown" (cn_type_name) */
const char *cli_level_name(uint32_t level); /* "local", "partner", "erasure", "pfs" */

/* A table printed with aligned columns, two spaces apart. ALIGN holds one
 * character per column, 'l' or 'r'. Cells are added left to right. */
typedef struct cli_table {
    size_t ncols, ncells, cap;
    char **cells;
    const char *align;
} cli_table;

void cli_table_init(cli_table *t, const char *align);
void cli_table_add(cli_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli_table_print(const cli_table *t, FILE *f);
void cli_table_free(cli_table *t);

/* Each level's checkpoint interval as cairn_need_checkpoint computes it from
 * CFG (ckpt.every_<L>, or Young/Daly from COST[L] seconds, else the nearest
 * lower level's, and fail.mtbf_<L>), as a table on F (cli_config.c). */
void cli_intervals(FILE *f, const cn_config *cfg, const double cost[5]);

/* ---- the scheduler hooks (cli_hook*.c) ---------------------------------- */

/* One run of `cairn hook prolog|epilog`, read from the environment by root
 * (cli_hook.c) and handed to the child that is the job's user. */
typedef struct cli_hookrun {
    bool prolog;             /* else the epilog */
    const char *name;        /* "cairn-prolog" or "cairn-epilog", in every log line */
    char job[CN_JOB_MAX + 1], node[CN_JOB_MAX + 1];
    uid_t uid;               /* the job's user */
    gid_t gid;               /* its primary group (its uid if it has no passwd entry) */
    char base[4096];
    char userdir[4200], jobdir[4300], nodedir[4400]; /* for messages only: never opened */
    int logfd;               /* CAIRN_HOOK_LOG (opened by root, O_APPEND), or -1: syslog */
    cn_config cfg;           /* the configuration (pfs.dir: CAIRN_PFS_DIR) */
    uint64_t need;           /* CAIRN_HOOK_NEED, bytes */
    const char *restart_from; /* CAIRN_RESTART_FROM or NULL */
    int drain_timeout;       /* CAIRN_HOOK_DRAIN_TIMEOUT, seconds */
    int flush_wait;          /* CAIRN_HOOK_FLUSH_WAIT, seconds (0: do not wait) */
    bool unflushed_drain;    /* CAIRN_HOOK_UNFLUSHED=drain */
    char self[4096];         /* this program, for `cairn drain` and `cairn stop` */
} cli_hookrun;

/* Fill H (prolog, name and logfd = -1 set) from the environment
 * (cli_hook_env.c): -1 when it is good; else the status to exit with, logged. */
int cli_hook_read_env(cli_hookrun *h);
/* "DATE TIME LEVEL HOOK job J node N: message" to CAIRN_HOOK_LOG, else syslog;
 * LEVEL "info", "warning" or "err"; anything but info also on stderr. */
void cli_hook_log(const cli_hookrun *h, const char *level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Log "...; the node should be drained" (err); returns 1. */
int cli_hook_node(const cli_hookrun *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Log "...; nothing done" (err: the environment is wrong); returns 0. */
int cli_hook_bad_env(const cli_hookrun *h, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* BYTES as numfmt --to=iec prints them ("64K", "1.0P"), into BUF. */
const char *cli_hook_size(uint64_t bytes, char *buf, size_t len);
/* Free bytes for an unprivileged user on DIRFD's file system (0 if unknown). */
uint64_t cli_hook_free(int dirfd);
/* The user's sides, run in a child that is the job's user, with USERFD the
 * checked <base>/cairn-<uid>: the exit status (0 ready, 1 drain the node). */
int cli_hook_prolog_user(const cli_hookrun *h, int userfd);
int cli_hook_epilog_user(const cli_hookrun *h, int userfd);
/* As the user: open NAME under DIRFD (PATH for messages), a directory of the
 * user (not a link; mode set to 0700 if it was not), made if missing and
 * CREATE. fd >= 0; -ENOENT if missing and not CREATE; else -1 after logging
 * why the node should be drained. */
int cli_hook_dir(const cli_hookrun *h, int dirfd, const char *name, const char *path, bool create);

/* cairnd: CAIRN_DAEMON, else next to this program (cli_start.c). */
void cli_daemon_path(char *out, size_t len);
/* cairn flush --node-only (cli_flushnode.c): execs cairnd --flush-node. */
int cli_flush_node(int argc, char **argv);

/* ---- JSON documents (cli_json.c; their fields: docs/json.md) ---------- */

/* The version every document carries in "schema_version": raised when a
 * field changes meaning or goes away (new fields do not raise it). */
#define CLI_JSON_VERSION 1
/* A new object {"schema": SCHEMA, "schema_version": CLI_JSON_VERSION}. */
json_t *cli_json_doc(const char *schema);
/* O[KEY] = VALUE, any bytes: each byte that is not part of valid UTF-8
 * becomes U+FFFD, and then O[KEY_hex] holds every byte of VALUE in hex. */
void cli_json_bytes(json_t *o, const char *key, const char *value);
/* V as a JSON integer, or null when not KNOWN. */
json_t *cli_json_int_or_null(bool known, int64_t v);
/* Print DOC on stdout (one document, a newline after it) and free it. */
int cli_json_print(json_t *doc);

/* ---- a job from a program's configuration (cli_compat.c) -------------- */

/* The getopt values of --fti, --scr, --veloc. */
enum { CLI_COMPAT_FTI = 'F', CLI_COMPAT_SCR = 'S', CLI_COMPAT_VELOC = 'V' };
#define CLI_COMPAT_OPTIONS                                                                        \
    {"fti", required_argument, NULL, CLI_COMPAT_FTI},                                             \
        {"scr", required_argument, NULL, CLI_COMPAT_SCR},                                         \
        {"veloc", required_argument, NULL, CLI_COMPAT_VELOC}
#define CLI_COMPAT_HELP                                                                           \
    "      --fti FILE      the job, base and PFS of FTI configuration file FILE\n"                 \
    "                      (exec_id, ckpt_dir, glbl_dir), as the FTI layer reads it\n"            \
    "      --scr PREFIX    the job, base and PFS of a cairn-scr program with SCR prefix\n"       \
    "                      PREFIX (SCR_JOB_ID or the scheduler's job id, SCR_CACHE_BASE\n"       \
    "                      from the environment or PREFIX/.scrconf), as SCR_Init finds them\n"  \
    "      --veloc FILE    the job, base and PFS of VeloC config file FILE (job.id or\n"          \
    "                      veloc, scratch, persistent), as the VeloC layer reads it\n"

typedef struct cli_compat {
    int kind;                    /* 0 none, CLI_COMPAT_FTI, _SCR, _VELOC */
    const char *arg;             /* the file given */
    int fd;                      /* the settings its layer made (memfd), -1 none */
    char path[64];               /* /proc/self/fd/<fd> */
    char job[CN_JOB_MAX + 1], base[4096], pfs[4096]; /* what they say */
} cli_compat;

/* Record option KIND (ARG); -1, or CLI_EXIT_USAGE if one was given already. */
int cli_compat_set(const char *verb, cli_compat *c, int kind, const char *arg);
/* The default of a getopt switch of a command taking --fti/--scr/--veloc: C
 * (optarg its file) taken into CC, -1: go on; else an exit status to return
 * (a second file, or cli_getopt_fail's for any other C). */
int cli_compat_opt(const char *verb, cli_compat *cc, int c, char **argv);
/* With --fti or --veloc given: *CONFIG (--config given: a usage error)
 * becomes the settings its layer makes, and *JOB, unless --job gave it,
 * their job.id. Nothing given: nothing done. Exit status; messages for VERB. */
int cli_compat_apply(const char *verb, cli_compat *c, const char **config, const char **job);
void cli_compat_close(cli_compat *c);
/* inspect --fti/--veloc: print the job, base and PFS they lead to; closes C. */
int cli_compat_where(const char *verb, cli_compat *c);

/* ---- progress on a terminal (progress.c) ------------------------------- */

/* One verb's progress line on stderr, drawn only if stderr is a terminal. */
typedef struct cli_progress {
    const char *what;  /* "verify" */
    const char *unit;  /* NULL: bytes (rate, time left); else items, e.g. "scenarios" */
    const char *note;  /* shown after the running line, e.g. "waiting for the daemons" */
    uint64_t total;    /* 0: unknown (no percentage, no time left) */
    uint64_t done;
    double t0, last;   /* monotonic seconds: start, last drawing (0: draw at once) */
    bool on, drawn;    /* stderr is a terminal; the line is on it now */
} cli_progress;

void cli_progress_start(cli_progress *p, const char *what, const char *unit, uint64_t total);
void cli_progress_set(cli_progress *p, uint64_t done); /* redraws at most 4 times a second */
void cli_progress_add(cli_progress *p, uint64_t n);
/* Erase the line before writing to stdout (P may be NULL); the next update redraws it. */
void cli_progress_hide(cli_progress *p);
/* Its final form and a newline; nothing if stderr is not a terminal. */
void cli_progress_end(cli_progress *p);
/* The time to give cli_bytes_since for files written from now on. */
void cli_progress_clock(struct timespec *t);
/* Bytes of the regular files under DIRFD (DEPTH levels of subdirectories, no
 * symlink followed) modified at or after SINCE (CLOCK_REALTIME). */
uint64_t cli_bytes_since(int dirfd, const struct timespec *since, int depth);
/* Updates P: with LINE, one line of the child's stdout (no newline); with
 * NULL, about every quarter of a second. */
typedef void (*cli_progress_tick)(cli_progress *p, const char *line, void *arg);
/* Run ARGV (execvp) with its stdout and stderr passed through to ours line
 * by line, P's line erased before each, TICK called as above. Returns the
 * child's exit status (128 + signal if killed), -1 if it could not start. */
int cli_progress_run(char *const argv[], cli_progress *p, cli_progress_tick tick, void *arg);

/* ---- the node-local store (cli_disk.c) --------------------------------- */

/* Longest manifest cn_manifest_decode can accept. */
#define CLI_MANIFEST_MAX cn_manifest_size(CN_MAX_RANKS, CN_MAX_RANKS)
#define CLI_PATH_MAX 4352

typedef struct cli_store {
    char path[CLI_PATH_MAX]; /* <base>/cairn-<uid> */
    int fd;                  /* the checked directory; -1 if it does not exist */
    char pfs[4096];          /* pfs.dir (level 4) from the configuration; "" none */
} cli_store;

/*
 * Find the user directory: BASE if given, else store.base from CONFIG (may be
 * NULL), CAIRN_BASE or the default. A missing user directory is not an error
 * (fd -1). Returns an exit status; messages are printed for VERB.
 */
int cli_store_open(const char *verb, const char *base, const char *config, cli_store *s);
void cli_store_close(cli_store *s);
/*
 * Level 4: PFS (--pfs DIR, must exist) replaces the PFS directory found by
 * cli_store_open (pfs.dir of --config, else CAIRN_PFS_DIR). With none known,
 * one line on stderr says so (level 4 is then not shown). Exit status.
 */
int cli_store_pfs(const char *verb, const char *pfs, cli_store *s);

/* Sorted (version order: node2 before node10) entry names of a directory. */
typedef struct cli_names {
    char **v;
    size_t n;
} cli_names;
int cli_names_read(int dirfd, cli_names *out, cn_err *err);
void cli_names_free(cli_names *names);

/* Job IDs under the store (entries that are directories we own). */
int cli_job_names(const char *verb, const cli_store *s, cli_names *out);

typedef struct cli_node {
    char name[CN_JOB_MAX + 1];
    char path[CLI_PATH_MAX];
    int fd;
} cli_node;

typedef struct cli_job {
    char name[CN_JOB_MAX + 1];
    char path[CLI_PATH_MAX];
    int fd;
    cli_node *node;  /* visible node directories, in name order */
    size_t nnodes;
    int64_t *gen;    /* every generation id on any node, newest first */
    size_t ngens;
} cli_job;

/* Open job NAME of the store and list its nodes and generations. Returns an
 * exit status (CLI_EXIT_MISSING if there is no such job); prints for VERB. */
int cli_job_open(const char *verb, const cli_store *s, const char *name, cli_job *j);
void cli_job_close(cli_job *j);

/* Open generation GEN's directory on NODE: fd, or CAIRN_ENOENT if absent, or
 * another negative code (CAIRN_EUNSAFE for a symlink...). */
int cli_gen_open(const cli_node *node, int64_t gen, cn_err *err);

/*
 * Read and decode the manifest in GENFD, then check it belongs where it lies:
 * job JOB, generation GEN, node NODE_NAME. CAIRN_ENOENT if there is none,
 * CAIRN_ECORRUPT/EFORMAT if it is bad. On success free M with cn_manifest_free.
 */
int cli_manifest_load(int genfd, const char *job, int64_t gen, const char *node_name,
                      cn_manifest *m, cn_err *err);

/* ---- a job's generations, summarized (cli_lsdata.c) ------------------ */

/* A generation's status (cli_ls.c's head comment says what each means). */
enum cli_gen_status {
    CLI_GEN_COMPLETE, CLI_GEN_PARTIAL, CLI_GEN_INCOMPLETE, CLI_GEN_BROKEN, CLI_GEN_CORRUPT,
    CLI_GEN_PFS
};
extern const char *const cli_gen_status_name[]; /* "complete", ... "pfs-only" */

/* A generation directory on the PFS: its index decoded (complete), or not. */
typedef struct cli_pfs_gen {
    int64_t id;
    bool complete;
    uint32_t nfiles, nranks;
    uint64_t raw, stored;         /* bytes of state; bytes of its aggregated files */
    int64_t parent;               /* -1: full; else an increment of this PFS generation */
    double seconds;
    char label[CAIRN_LABEL_MAX + 1];
} cli_pfs_gen;

/* A node-local generation over the node directories visible here. */
typedef struct cli_gen_sum {
    int64_t parent;         /* from the manifests: -1 full, -2 unknown */
    uint64_t raw, delta;    /* bytes of state and of those stored, over the manifests */
    uint32_t level;         /* lowest level among the manifests; 0 if none decoded */
    uint32_t nnodes;        /* nodes the manifests list; 0 if unknown */
    uint32_t nranks;        /* ranks of the job; 0 if unknown */
    size_t nodes_complete;  /* visible nodes with a valid manifest and all their files */
    uint64_t ranks_ok;      /* rank files present with the manifest's size */
    uint64_t bytes;         /* sizes of the rank files present */
    bool corrupt;
    int status;             /* enum cli_gen_status */
    double seconds;         /* from the first manifest that decoded (all say the same) */
    char label[CAIRN_LABEL_MAX + 1];
    bool labeled;           /* a manifest decoded: SECONDS and LABEL known */
} cli_gen_sum;

/* One generation of a job: node-local (S), on the PFS (P), or both. */
typedef struct cli_gen_row {
    int64_t id;
    const cli_gen_sum *s;   /* NULL: only on the PFS */
    const cli_pfs_gen *p;   /* NULL: not on the PFS */
} cli_gen_row;

typedef struct cli_jobview {
    cli_job j;              /* the node-local job (no nodes if only on the PFS) */
    cli_gen_sum *sum;       /* j.ngens entries, as j.gen */
    cli_pfs_gen *pfs;       /* npfs entries, newest first */
    size_t npfs;
    cli_gen_row *row;       /* nrows entries, newest first */
    size_t nrows;
} cli_jobview;

/* The job's generations on the PFS of ST, newest first (allocates *OUT). */
size_t cli_pfs_list(const cli_store *st, const char *job, cli_pfs_gen **out);
/* Summarize every generation of J (as J->gen); an incremental one whose
 * parent is not complete (or partial) is a broken chain. Allocates. */
cli_gen_sum *cli_gen_summarize(const cli_job *j);
/* Has the generation of S (may be NULL) reached level 4: complete on the PFS (P)? */
bool cli_at_pfs(const cli_gen_sum *s, const cli_pfs_gen *p);
/* The level a row reached: 4 once complete on the PFS, else its manifests'; 0 unknown. */
uint32_t cli_row_level(const cli_gen_row *r);
/* Open job JOB of ST (node-local and PFS) and merge its generations: an
 * exit status, CLI_EXIT_MISSING (with a message for VERB) if it has none. */
int cli_jobview_open(const char *verb, const cli_store *st, const char *job, cli_jobview *v);
void cli_jobview_close(cli_jobview *v);

/* "0-3,8,10-11": the ranks of node NODE in M's rank map (cli_inspect.c); LEN >= 64. */
void cli_node_ranks(const cn_manifest *m, uint32_t node, char *buf, size_t len);

/* ---- the node daemons (cli_daemon.c) ----------------------------------- */

/* The job: JOB, else job.id from CONFIG / CAIRN_JOB, else SLURM_JOB_ID. */
int cli_daemon_job(const char *verb, const char *job, const char *config, char out[CN_JOB_MAX + 1]);
/* One request to the daemon of node directory NODEFD, one reply. */
int cli_daemon_ask(int nodefd, const cn_req *req, cn_rep *rep, int timeout_ms, cn_err *err);
/* Hold the daemons of job J before generation directories are removed:
 * HOLD on a connection of its own to the daemon of each node directory of J
 * that has one, answered once every daemon of the job is between two pieces
 * of work (each finishes the generation it is at, within TIMEOUT_MS) and
 * held until the connection closes. FDS[i] (J->nnodes entries) receives node
 * i's connection, -1 where no daemon listens or it died; *HELD counts them.
 * Exit status CLI_EXIT_OK, or CLI_EXIT_ERROR with a message for VERB (a
 * daemon refused or did not pause in time): then none is held. */
int cli_daemon_hold(const char *verb, const cli_job *j, int timeout_ms, int *fds, size_t *held);
/* Close the connections of cli_daemon_hold (FDS[0..N-1], -1 skipped): released. */
void cli_daemon_release(int *fds, size_t n);
/* STATUS of every node of J into STATUS[i] (kind 0: no answer); exit status
 * CLI_EXIT_MISSING (with a message for VERB) if none answers. */
int cli_daemons(const char *verb, const cli_job *j, cn_rep *status, size_t *alive);

/* "rank-<r>.ckpt" -> r, else -1. */
long cli_parse_rank_filename(const char *name);
/* True if NAME ends in ".tmp" (an in-flight write). */
bool cli_is_tmp(const char *name);

/* What a file is, by its first bytes. */
enum cli_file_kind {
    CLI_FILE_CKPT, CLI_FILE_MANIFEST, CLI_FILE_PARITY, CLI_FILE_AGG, CLI_FILE_PINDEX,
    CLI_FILE_OTHER
};
/* Returns 0 and *KIND, or a negative code with ERR set (missing, unreadable). */
int cli_file_kind(const char *path, int *kind, cn_err *err);

/* ---- cairn verify's tally (cli_verify.c), shared with cli_pfs.c -------- */

typedef struct cli_vstate {
    const char *verb;
    size_t ok, corrupt, missing, errors, notes, gens, jobs;
    cli_progress progress; /* bytes checked, on a terminal */
    json_t *files, *jnotes; /* --json: the lines as objects (docs/json.md); else NULL */
} cli_vstate;
/* "OK PATH" / "CORRUPT PATH: why" (MISSING, ERROR) for a file of BYTES bytes. */
void cli_vok(cli_vstate *v, const char *path, uint64_t bytes);
void cli_vfail(cli_vstate *v, const char *path, int rc, const cn_err *err, uint64_t bytes);
/* A note line "KIND DIR[/NAME][: WHY]" (KIND LEFTOVER, INCOMPLETE, PARTIAL ...;
 * NAME and WHY may be NULL): does not change the status. */
void cli_vnote(cli_vstate *v, const char *kind, const char *dir, const char *name,
               const char *why);
/* Verify checkpoint file NAME under DIRFD (PATH in lines); M and R (may be
 * NULL) give what the manifest expects of it. */
void cli_verify_ckpt(cli_vstate *v, int dirfd, const char *name, const char *path,
                     const cn_manifest *m, const cn_manifest_rank *r);
/* Verify parity file NAME under DIRFD (PATH in lines), if it exists. */
void cli_verify_parity(cli_vstate *v, int dirfd, const char *name, const char *path);
/* Size of NAME under DIRFD (a link's own), for progress lines; 0 if none. */
uint64_t cli_file_bytes(int dirfd, const char *name);
/* Verify job JOB's generations (or only GEN): node-local (cli_verify_job.c),
 * then on the PFS. ALONE: the only job verified (the progress line then
 * knows its total). Returns an exit status for what is not a file line. */
int cli_verify_job(cli_vstate *v, const cli_store *st, const char *job, int64_t gen, bool alone);

/* ---- level 4 files (cli_pfs.c) ----------------------------------------- */

/* Verify PFS file PATH of KIND (CLI_FILE_AGG, CLI_FILE_PINDEX) on its own:
 * every checksum, every frame decoded; an aggregated file is also checked
 * against the index beside it, if that decodes. 0 or a code, ERR set. */
int cli_pfs_check_file(const char *path, int kind, cn_err *err);
/* Verify JOB's generations on the PFS of ST (only GEN if >= 0; SEEN[0..NSEEN-1]
 * are generations already counted in V->gens). Returns how many it found. */
size_t cli_pfs_verify_job(cli_vstate *v, const cli_store *st, const char *job, int64_t gen,
                          const int64_t *seen, size_t nseen);
/* Bytes cli_pfs_verify_job would read (for the progress line). */
uint64_t cli_pfs_job_bytes(const cli_store *st, const char *job, int64_t gen);
/* Does the PFS of ST hold a directory of JOB? */
bool cli_pfs_has_job(const cli_store *st, const char *job);
/* The job directories on the PFS of ST (sorted as cli_names_read sorts); none if no PFS. */
void cli_pfs_job_names(const cli_store *st, cli_names *out);
/* Print PFS file PATH of KIND (index: its fields and files; aggregated file:
 * its scheme and variables), after checking it as cli_pfs_check_file does. */
int cli_pfs_inspect(const char *path, int kind, cn_err *err);

#endif /* CAIRN_TOOLS_H */
