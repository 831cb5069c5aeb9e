/*
 * common.h - the contract of src/common, the layer every other part of cairn
 * stands on. It depends on nothing but libc, xxHash and inih: no MPI.
 *
 *   errors   cn_err carries a code and a detailed message up the stack;
 *            CN_FAIL / CN_TRY keep error paths one line.
 *   log      one line per message to stderr, prefixed with rank and host.
 *   hash     XXH3-64 checksums of blocks, tables and headers.
 *   paths    directories created mode 0700 and opened without following
 *            symlinks; names checked before they touch a path.
 *   bytes    little-endian encoders and a bounds-checked reader.
 *   format   (format.h) the on-disk checkpoint file (format.c), the node manifest
 *            (manifest.c), the layout record (layout.c), and a reader that maps
 *            a checkpoint file and validates it (ckread.c). The formats of
 *            levels 3 and 4 are their levels' own: levels/parity/parity.h (the
 *            parity file), levels/pfs/pfs.h (the PFS index, delta and node records).
 *   config   the key table, INI + environment loading (config.c).
 *   period   checkpoint intervals and durations parsed, Daly's formula (period.c).
 *   proto    the line protocol of the node daemon's socket (proto.c).
 *   fault    named fault points for failure-injection tests (fault.c).
 *
 * Ownership: functions that allocate say so; the matching _free accepts NULL.
 */
#ifndef CAIRN_COMMON_H
#define CAIRN_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Non-MPI objects are compiled with -DCAIRN_NO_MPI (see Makefile). */
#include "cairn.h"

/* ---- errors ------------------------------------------------------------ */

#define CN_MSG_MAX 1024

typedef struct cn_err {
    int code;              /* 0 or a negative cairn code / -errno */
    char msg[CN_MSG_MAX];  /* detailed message, "" if none */
} cn_err;

/* Record CODE and a formatted message in ERR (may be NULL); return CODE. */
int cn_fail(cn_err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* As cn_fail, with ": strerror(errno_value)" appended; returns -errno_value
 * mapped to CAIRN_ENOSPC for ENOSPC/EDQUOT. */
int cn_fail_errno(cn_err *err, int errno_value, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void cn_err_clear(cn_err *err);
/* Name of element type TYPE (enum cairn_type): "double"; "unknown" if none. */
const char *cn_type_name(int type);
/* Put a formatted prefix in front of ERR's message. */
void cn_err_prefix(cn_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define CN_FAIL_IF(cond, err, code, ...)                                                          \
    do {                                                                                          \
        if (cond)                                                                                 \
            return cn_fail((err), (code), __VA_ARGS__);                                           \
    } while (0)

#define CN_TRY(expr)                                                                              \
    do {                                                                                          \
        int cn_rc_ = (expr);                                                                      \
        if (cn_rc_ < 0)                                                                           \
            return cn_rc_;                                                                        \
    } while (0)

/* ---- logging ----------------------------------------------------------- */

enum cn_log_level { CN_LOG_ERROR = 0, CN_LOG_WARN = 1, CN_LOG_INFO = 2, CN_LOG_DEBUG = 3 };

void cn_log_setup(int level, const char *prefix); /* prefix e.g. "rank 3 host n1" */
void cn_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define cn_error(...) cn_log(CN_LOG_ERROR, __VA_ARGS__)
#define cn_warn(...) cn_log(CN_LOG_WARN, __VA_ARGS__)
#define cn_info(...) cn_log(CN_LOG_INFO, __VA_ARGS__)
#define cn_debug(...) cn_log(CN_LOG_DEBUG, __VA_ARGS__)
/* BYTES as "512 B", "1.5 KiB", "108 KiB", "4.0 MiB" into BUF (at least 16 bytes). */
const char *cn_human(uint64_t bytes, char *buf, size_t len);

/* ---- hash -------------------------------------------------------------- */

uint64_t cn_hash(const void *data, size_t len); /* XXH3-64, seed 0 */

/* ---- paths ------------------------------------------------------------- */

/* True if NAME is a plain file name: 1..CAIRN_NAME_MAX bytes, no '/', not "." or "..". */
bool cn_name_ok(const char *name);

/*
 * Open (creating if missing, mode 0700) directory NAME under DIRFD without
 * following symlinks, and check it is a directory owned by the effective user
 * with no group/other permissions. Returns an O_DIRECTORY fd or a negative
 * code (CAIRN_EUNSAFE for a symlink, foreign owner or loose mode).
 */
int cn_dir_open(int dirfd, const char *name, bool create, cn_err *err);

/* Open an absolute or relative directory PATH (no create, no ownership check
 * of the path itself beyond it being a directory). Returns fd or -errno. */
int cn_dir_open_path(const char *path, cn_err *err);

/* Remove NAME under DIRFD recursively, never following symlinks. Missing is OK. */
int cn_rmtree_at(int dirfd, const char *name, cn_err *err);

/* A new descriptor of directory DIRFD with a position of its own, for
 * listing it (fdopendir): a dup() would share the position with every other
 * dup, and two threads listing at once would each miss entries. -errno. */
int cn_dir_listing_fd(int dirfd);

/* fsync a directory fd (persist renames in it). */
int cn_dir_sync(int dirfd, cn_err *err);

/* ---- bytes ------------------------------------------------------------- */

static inline void cn_put_u16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void cn_put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline void cn_put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint16_t cn_get_u16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t cn_get_u32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}
static inline uint64_t cn_get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* Bounds-checked sequential reader: reads past the end set BAD and yield 0. */
typedef struct cn_rd {
    const uint8_t *p;
    size_t len, off;
    bool bad;
} cn_rd;
const uint8_t *cn_rd_take(cn_rd *r, size_t n); /* NULL (and bad) if fewer than n left */
uint8_t cn_rd_u8(cn_rd *r);
uint16_t cn_rd_u16(cn_rd *r);
uint32_t cn_rd_u32(cn_rd *r);
uint64_t cn_rd_u64(cn_rd *r);

#include "common/format.h" /* the on-disk formats and their reader */

/* ---- naming of things on node-local storage ---------------------------- */
/*
 *  <base>/cairn-<uid>/<job>/<node>/gen-<id>/rank-<r>.ckpt     checkpoint files
 *  <base>/cairn-<uid>/<job>/<node>/gen-<id>/manifest           node manifest
 *  <base>/cairn-<uid>/<job>/<node>/files/rank-<r>/<name>       routed files
 */
#define CN_GEN_PREFIX "gen-"
#define CN_MANIFEST_NAME "manifest"
int cn_gen_dirname(char *buf, size_t len, int64_t gen);        /* "gen-%lld" */
int cn_user_dirname(char *buf, size_t len);                     /* "cairn-<euid>" */
/* The ids of the "gen-<id>" entries of directory DIRFD (node-local or PFS),
 * newest first, in a malloc'd *IDS. */
int cn_gen_list(int dirfd, long **ids, int *n, cn_err *err);
/* A pruned generation is renamed "<prefix><name>.<pid>" in its directory,
 * node-local or PFS, and removed in the background (src/levels/local/trash.c).
 * cn_trash_gen renames generation ID under DIRFD so: 0, or -errno. */
#define CN_TRASH_PREFIX ".trash-"
int cn_trash_gen(int dirfd, int64_t id);
int cn_rank_filename(char *buf, size_t len, uint32_t rank);     /* "rank-%u.ckpt" */
/* Parse "gen-<id>"; returns id >= 0 or -1. */
int64_t cn_parse_gen_dirname(const char *name);
/* An abandoned timeline (generations newer than the one a run restored and
 * then wrote past) is set aside, never removed on its own: "gen-<id>" under
 * DIRFD becomes "abandoned-gen-<id>" (or "abandoned-gen-<id>.<n>" if that is
 * taken), which no restart, daemon or prune reads; `cairn prune --abandoned`
 * removes it. OUT gets the new name. */
#define CN_ABANDONED_PREFIX "abandoned-"
int cn_set_aside(int dirfd, int64_t id, char *out, size_t len, cn_err *err);
/* A PFS generation whose index is there but does not read (checksum, EIO),
 * when a flush rewrites its id: never removed (it may be the only copy a
 * human can still salvage), set aside as "damaged-gen-<id>[.<n>]", which no
 * restart, daemon or prune reads. */
#define CN_DAMAGED_PREFIX "damaged-"
/* cn_set_aside with another PREFIX (CN_ABANDONED_PREFIX, CN_DAMAGED_PREFIX). */
int cn_set_aside_as(int dirfd, int64_t id, const char *prefix, char *out, size_t len,
                    cn_err *err);

/* ---- when to checkpoint (period.c) ------------------------------------- */

/* A checkpoint interval: every ITERS calls of cairn_need_checkpoint, or every
 * SECONDS of wall time; both 0: off. */
typedef struct cn_interval {
    long iters;
    double seconds;
} cn_interval;
#define CN_PERIOD_MAX_ITERS 1000000000L
#define CN_PERIOD_MAX_SECONDS 1e10
/* Parse V: "" (off), "N" (iterations; only with ITERS_OK) or a time "N" or
 * "N.F" followed by s, m, h or d. NULL with *OUT filled, or the problem
 * ("is not a duration: ..."); *OUT is then off. */
const char *cn_interval_parse(const char *v, bool iters_ok, cn_interval *out);
/* Daly's higher-order optimum compute time between checkpoints of COST
 * seconds under a mean time between failures of MTBF seconds; 0 unless both
 * are > 0. */
double cn_daly_interval(double cost, double mtbf);
/* "1.5 s", "42 min", "3.2 h", "12 d" (3 significant digits) into BUF. */
const char *cn_seconds_str(char *buf, size_t len, double seconds);

/* ---- configuration (config.c) ------------------------------------------ */

enum cn_io_mode { CN_IO_AUTO = 0, CN_IO_WRITE = 1, CN_IO_PMEM = 2 };

typedef struct cn_config {
    char base[4096];         /* store.base */
    int keep;                /* store.keep */
    int prune_abandoned;     /* store.prune_abandoned: 0 off, 1 on */
    uint32_t block_size;     /* store.block_size */
    int io;                  /* store.io: enum cn_io_mode */
    char job[CN_JOB_MAX + 1];  /* job.id ("" = from SLURM_JOB_ID or generated) */
    char node[CN_JOB_MAX + 1]; /* job.node ("" = from ranks_per_node or hostname) */
    int ranks_per_node;      /* job.ranks_per_node (0 = by node name) */
    char restart_from[CN_JOB_MAX + 1]; /* job.restart_from ("" = none) */
    int set_size;            /* erasure.set_size */
    int ec_m;                /* erasure.m */
    int ec_w;                /* erasure.w */
    int ec_kernel;           /* erasure.kernel: enum ec_kernel (src/erasure) */
    uint32_t ec_block;       /* erasure.block_size */
    int codec;               /* compress.codec: cz_id, or CN_CODEC_AUTO */
    uint32_t z_buffer;       /* compress.buffer */
    int z_threads;           /* compress.threads (0 = auto) */
    int z_level;             /* compress.level */
    int z_bandwidth;         /* compress.bandwidth, MiB/s */
    int z_resample;          /* compress.resample */
    int lossy_mode;          /* lossy.mode: 0 auto, then CZ_WAVELET, CZ_PREDICT in order */
    int incr_mode;           /* incr.mode: 0 off, 1 on */
    uint32_t incr_block;     /* incr.block_size */
    int incr_full_every;     /* incr.full_every */
    int incr_max_changed;    /* incr.max_changed, percent */
    char pfs_dir[4096];      /* pfs.dir ("" = no level 4) */
    int pfs_every;           /* pfs.every */
    int pfs_keep;            /* pfs.keep */
    int pfs_group;           /* pfs.group, ranks per aggregated file */
    int pfs_scheme;          /* pfs.scheme: enum cz_agg_scheme (levels/pfs/pfs.h) */
    uint32_t pfs_block;      /* pfs.block */
    int pfs_bandwidth;       /* pfs.bandwidth, MiB/s (0 = unthrottled) */
    int pfs_direct;          /* pfs.direct: 0 off, 1 on (the default: a synchronous level 4 from memory) */
    int pfs_parity;          /* pfs.parity: 0 auto, 1 on, 2 off (a synchronous level 4's
                              * partner or parity copy) */
    int daemon_use;          /* daemon.use: 0 auto, 1 off */
    int daemon_timeout;      /* daemon.timeout, seconds */
    int daemon_boost_after;  /* daemon.boost_after, seconds (0: never idle priority) */
    int daemon_share;        /* daemon.share, percent of a busy CPU against one session */
    int daemon_burst;        /* daemon.burst, seconds of daemon.share saved for a burst */
    int log_level;           /* log.level: enum cn_log_level */
    cn_interval ckpt_every[5]; /* ckpt.every_<L>, L = 1..4 ([0] unused): off, iterations or time */
    int ckpt_auto;           /* ckpt.auto: 0 off, 1 on (Young/Daly intervals) */
    double mtbf[5];          /* fail.mtbf_<L> in seconds, L = 1..4 ([0] unused); 0 unset */
} cn_config;

/* compress.codec's words, index = codec id; the last one, "auto", is this: */
#define CN_CODEC_AUTO 7
extern const char *const cn_codec_words[];

/* Defaults, then PATH, then CAIRN_* environment overrides. A NULL PATH
 * means the file CAIRN_CONFIG_FILE names, if it is set and not empty, else
 * none; errors in that file say "CAIRN_CONFIG_FILE: " first. */
#define CN_CONFIG_FILE_ENV "CAIRN_CONFIG_FILE"
int cn_config_load(cn_config *cfg, const char *path, cn_err *err);
/* Print the key reference (Markdown table) to F. */
void cn_config_reference(void *file /* FILE* */);
/* A hash of the keys a node daemon must share with the job it serves
 * (store.base and .keep, erasure.*, pfs.*): the library refuses a daemon
 * whose key differs. */
uint64_t cn_config_daemon_key(const cn_config *cfg);

/* ---- daemon protocol (proto.c) ----------------------------------------- */
/*
 * The library, the CLI and cairnd talk over the node's Unix socket
 * (<node dir>/cairnd.sock) in lines of at most CN_PROTO_LINE bytes including
 * the '\n', words separated by one space. Requests and their replies:
 *   HELLO <version> <job> <node> <key>  -> OK <pid> | ERR <text>
 *   GEN <id> <level> <flush>            -> OK | ERR <text>
 *   FLUSH                               -> OK
 *   DRAIN <seconds>                     -> DONE <gen> <what> <bytes> | ERR <text>
 *   STATUS                              -> STATUS <pid> <queued> <busy> <done> <flushed>
 *   STOP                                -> OK
 *   HOLD                                -> OK, once no daemon of the job works on
 *                                          a generation; none starts one until
 *                                          every HOLD's client has disconnected
 * <key> is cn_config_daemon_key as 16 lower-case hex digits; <level> 1..3 is
 * the node-local level to raise generation <id> to, <flush> 0/1 whether to
 * write it to the PFS; <what> is flushed, present (already on the PFS) or
 * none (<gen> -1: no complete generation). Integers are canonical decimal
 * (no sign, no leading zero; -1 only where it means "none"), so a parsed
 * line formats back to the same bytes.
 */
#define CN_PROTO_LINE 512
#define CN_PROTO_VERSION 2
enum cn_req_kind { CN_REQ_HELLO = 1, CN_REQ_GEN, CN_REQ_FLUSH, CN_REQ_DRAIN, CN_REQ_STATUS,
                   CN_REQ_STOP, CN_REQ_HOLD };
typedef struct cn_req {
    int kind;                     /* enum cn_req_kind */
    uint32_t version;             /* HELLO */
    char job[CN_JOB_MAX + 1];     /* HELLO: cn_id_ok */
    char node[CN_JOB_MAX + 1];    /* HELLO: cn_id_ok */
    uint64_t key;                 /* HELLO */
    int64_t gen;                  /* GEN: >= 0 */
    int level;                    /* GEN: 1..3 */
    int flush;                    /* GEN: 0 or 1 */
    uint32_t seconds;             /* DRAIN: 1..86400 */
} cn_req;
enum cn_rep_kind { CN_REP_OK = 1, CN_REP_ERR, CN_REP_DONE, CN_REP_STATUS };
typedef struct cn_rep {
    int kind;                     /* enum cn_rep_kind */
    int64_t pid;                  /* OK (-1: none given), STATUS; >= 1 when given */
    char text[CN_PROTO_LINE];     /* ERR: printable ASCII, 1..CN_PROTO_LINE - 6 bytes */
    int64_t gen;                  /* DONE: >= -1 */
    char what[16];                /* DONE: "flushed", "present" or "none" */
    uint64_t bytes;               /* DONE */
    int64_t queued;               /* STATUS: >= 0 */
    int busy;                     /* STATUS: 0 or 1 */
    int64_t done, flushed;        /* STATUS: newest generation raised / flushed, -1 none */
} cn_rep;
/* Parse LINE[0..LEN-1] (without its '\n'); hostile input. 0 or CAIRN_EFORMAT
 * with a message naming what is wrong; *OUT is zeroed first. */
int cn_req_parse(const char *line, size_t len, cn_req *out, cn_err *err);
int cn_rep_parse(const char *line, size_t len, cn_rep *out, cn_err *err);
/* Format into BUF (CN_PROTO_LINE bytes) with the '\n'; returns the length,
 * or -1 if the fields are out of range. ERR text is sanitized (non-printable
 * bytes become '?', cut to fit). */
int cn_req_format(const cn_req *r, char *buf);
int cn_rep_format(const cn_rep *r, char *buf);
/* Read one line from socket FD into BUF (CN_PROTO_LINE), without the '\n',
 * waiting at most TIMEOUT_MS in total (-1 forever). Reads byte by byte past
 * nothing: a line is all the peer sent before waiting for an answer. Returns
 * its length, or CAIRN_EIO (peer closed, timeout, too long) with a message. */
int cn_line_read(int fd, char *buf, int timeout_ms, cn_err *err);
/* Write LEN bytes of BUF to socket FD (no SIGPIPE); 0 or CAIRN_EIO. */
int cn_line_write(int fd, const char *buf, size_t len, cn_err *err);
/* The daemon's socket NAME in directory DIRFD (sock.c). cn_sock_connect
 * refuses a file that is not a socket of this user; cn_sock_listen removes a
 * dead daemon's socket first and fails with CAIRN_ESTATE if one answers;
 * cn_sock_peer_ok: is the peer of FD this user? */
#define CN_SOCK_NAME "cairnd.sock"
int cn_sock_connect(int dirfd, const char *name, cn_err *err);
int cn_sock_listen(int dirfd, const char *name, cn_err *err);
bool cn_sock_peer_ok(int fd);

/* ---- the running application's mark (live.c) --------------------------- */
/* <node>/app.lock: the pid of the application that runs on the node
 * directory and the parents of its next checkpoints (levels 1..3, -1 none);
 * OFD locks on byte CN_LIVE_ALIVE (held by the application while it lives)
 * and CN_LIVE_BUSY (the application's while it checkpoints or restarts,
 * `cairn prune`'s while it removes). */
#define CN_LIVE_NAME "app.lock"
enum { CN_LIVE_ALIVE = 0, CN_LIVE_BUSY = 1 };
int cn_live_open(int nodefd, bool create);           /* fd, or -errno */
/* Lock SLOT (read or WRITE), trying for TIMEOUT_MS: 0, -EAGAIN (taken), -errno. */
int cn_live_lock(int fd, int slot, bool write, int timeout_ms);
void cn_live_unlock(int fd, int slot);
bool cn_live_taken(int fd, int slot);                 /* does another holder lock SLOT? */
int cn_live_write(int fd, long pid, const long parent[3]);
int cn_live_read(int fd, long *pid, long parent[3]);  /* CAIRN_ECORRUPT if it does not parse */

/* ---- fault injection (fault.c) ----------------------------------------- */
/*
 * CAIRN_FAULT="POINT[:gen=N][:rank=R][:after_us=U]" makes the process kill
 * itself with SIGKILL when it reaches POINT (for the given generation and
 * rank, or any), or U microseconds after it; with :until=PATH (last) it waits
 * there until PATH exists instead. Used by tests and drills to crash at a
 * precise instant, or to hold one process back. Points: ckpt.begin (cairn_checkpoint entered),
 * ckpt.write (half-way through a rank's data), ckpt.commit (rank file renamed,
 * before the ranks agree), ckpt.manifest (all committed, before this node's
 * manifest is written), daemon.gen (a node leader about to hand a generation
 * to its cairnd), cairnd.gen (a daemon about to work on a generation;
 * rank = its node), cairnd.offer (a daemon with work queued, about to offer
 * it to the others; gen = the newest queued), pfs.index (a flush to the PFS whose files are written,
 * before the first node leader writes its index: in cairnd, or in the
 * application when it flushes itself).
 */
void cn_fault_point(const char *point, int64_t gen, int rank);
/* Would POINT wait here now (a spec with :until=PATH that matches GEN and
 * RANK, PATH not there yet)? For a loop that must go on serving meanwhile. */
bool cn_fault_waiting(const char *point, int64_t gen, int rank);

#endif /* CAIRN_COMMON_H */
