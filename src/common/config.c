/*
 * config.c - cairn's settings: one key table drives everything.
 *
 * A setting reaches cn_config in three layers, each overriding the one
 * before: the built-in default, the INI file (parsed by libinih; the one
 * given, else the one CAIRN_CONFIG_FILE names), then the CAIRN_* environment
 * variable; then rules between keys (check_whole). Every key is one row of KEYS below: section,
 * name, environment variable, kind of value with its limits, default as text,
 * the cn_config field it fills, and its description. Defaults, file values
 * and environment values all pass through set_value(), so a default is
 * validated like any other value, and cn_config_reference() prints the
 * documentation from the same rows, so the docs cannot drift.
 *
 * Errors name the source, the line and the key ("config f.ini:7: store.keep:
 * 'abc' is not an integer"); the first one stops loading. inih v55 does not
 * give the handler a line number, so the file goes through a reader that
 * counts lines. That reader also drops leading blanks, so an indented
 * "key = value" is a key and not a continuation of the previous value.
 *
 * Depends on libc, inih, cn_id_ok() (format.c) and cn_interval_parse()
 * (period.c). Allocates nothing; the
 * caller owns the cn_config and the cn_err.
 */
#include "common/common.h"

#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum kind { K_STR, K_INT, K_SIZE, K_ENUM, K_EVERY, K_DURATION };

typedef struct key_def {
    const char *section, *name, *env;
    enum kind kind;
    long long min, max;       /* K_INT, K_SIZE: inclusive range */
    const char *const *words; /* K_ENUM: NULL-terminated; a word's index is its value */
    const char *def;          /* default, as text */
    size_t off, size;         /* the field: char[size] (K_STR), uint32_t (K_SIZE), cn_interval
                               * (K_EVERY), double seconds (K_DURATION), else int */
    /* Rule beyond kind and range: NULL if text V / number N is fine, else the problem. */
    const char *(*check)(const char *v, long long n);
    const char *doc;
} key_def;

#define FIELD(f) .off = offsetof(cn_config, f), .size = sizeof(((cn_config *)0)->f)
#define QUOTE_MAX 80 /* longest value quoted in a message */

static const char *const IO_WORDS[] = {"auto", "write", "pmem", NULL};
static const char *const LOG_WORDS[] = {"error", "warn", "info", "debug", NULL};
static const char *const PFS_SCHEME_WORDS[] = {"agnostic", "agnostic-block", "aware",
                                               "aware-block", "auto", NULL};
static const char *const KERNEL_WORDS[] = {"auto", "isal", "matrix", "bitmatrix", NULL};
static const char *const LOSSY_WORDS[] = {"auto", "wavelet", "predict", NULL};
static const char *const INCR_WORDS[] = {"off", "on", NULL};
static const char *const ON_OFF_WORDS[] = {"off", "on", NULL};
static const char *const DAEMON_WORDS[] = {"auto", "off", NULL};
/* Codec names in src/compress id order (none = 0 ... fpzip = 6), then auto. */
const char *const cn_codec_words[] = {"none",        "zlib",  "zstd", "lz4", "shuffle-zstd",
                                      "shuffle-lz4", "fpzip", "auto", NULL};
_Static_assert(CN_IO_AUTO == 0 && CN_IO_WRITE == 1 && CN_IO_PMEM == 2, "IO_WORDS order");
_Static_assert(CN_LOG_ERROR == 0 && CN_LOG_WARN == 1 && CN_LOG_INFO == 2 && CN_LOG_DEBUG == 3,
               "LOG_WORDS order");

static const char *check_abs(const char *v, long long n)
{
    (void)n;
    return v[0] == '/' ? NULL : "is not an absolute path";
}

static const char *check_abs_or_empty(const char *v, long long n)
{
    return *v ? check_abs(v, n) : NULL;
}

static const char *check_id(const char *v, long long n)
{
    (void)n;
    return !*v || cn_id_ok(v) ? NULL : "is not 1-63 of A-Z a-z 0-9 . _ - (no leading '.')";
}

static const char *check_pow2(const char *v, long long n)
{
    (void)v;
    return (n & (n - 1)) == 0 ? NULL : "must be a power of two";
}

static const char *check_w(const char *v, long long n)
{
    (void)v;
    return n == 8 || n == 16 ? NULL : "must be 8 or 16";
}

static const key_def KEYS[] = {
    {.section = "store", .name = "base", .env = "CAIRN_BASE", .kind = K_STR, .def = "/dev/shm",
     FIELD(base), .check = check_abs,
     .doc = "base directory of node-local storage (RAM disk, NVMe or pmem mount); an absolute "
            "path of at most 4095 bytes"},
    {.section = "store", .name = "keep", .env = "CAIRN_KEEP", .kind = K_INT, .min = 1, .max = 1000,
     .def = "2", FIELD(keep), .doc = "complete generations kept on node-local storage"},
    {.section = "store", .name = "prune_abandoned", .env = "CAIRN_PRUNE_ABANDONED", .kind = K_ENUM,
     .words = ON_OFF_WORDS, .def = "off", FIELD(prune_abandoned),
     .doc = "`on`: a checkpoint also removes this job's generations (node-local and PFS) newer "
            "than the one it wrote, of this layout: the timeline a restart from an older "
            "generation abandoned. `off`: a complete one is set aside as abandoned-gen-<id>, kept "
            "but never restored, until removed by hand (cairn prune --abandoned)"},
    {.section = "store", .name = "block_size", .env = "CAIRN_BLOCK_SIZE", .kind = K_SIZE,
     .min = CN_MIN_BLOCK, .max = CN_MAX_BLOCK, .def = "1M", FIELD(block_size),
     .check = check_pow2, .doc = "checksum block size; a power of two"},
    {.section = "store", .name = "io", .env = "CAIRN_IO", .kind = K_ENUM, .words = IO_WORDS,
     .def = "auto", FIELD(io),
     .doc = "how level-1 files are written: `write` (write(2)), `pmem` (libpmem), `auto` (choose)"},
    {.section = "job", .name = "id", .env = "CAIRN_JOB", .kind = K_STR, .def = "", FIELD(job),
     .check = check_id,
     .doc = "job id naming the checkpoint directory; empty means SLURM_JOB_ID or a generated one. "
            "1-63 of A-Z a-z 0-9 . _ -, not starting with '.'"},
    {.section = "job", .name = "node", .env = "CAIRN_NODE", .kind = K_STR, .def = "", FIELD(node),
     .check = check_id,
     .doc = "this rank's node name; empty means node0, node1, ... by ranks_per_node (emulated), "
            "else SLURMD_NODENAME, else the full hostname (`cairn config --node` prints it). "
            "Same characters as job.id"},
    {.section = "job", .name = "ranks_per_node", .env = "CAIRN_RANKS_PER_NODE", .kind = K_INT,
     .min = 0, .max = 1000000, .def = "0", FIELD(ranks_per_node),
     .doc = "emulate nodes of this many consecutive ranks; 0 means nodes by job.node, "
            "SLURMD_NODENAME or the hostname"},
    {.section = "job", .name = "restart_from", .env = "CAIRN_RESTART_FROM", .kind = K_STR,
     .def = "", FIELD(restart_from), .check = check_id,
     .doc = "a previous job whose newest PFS generation cairn_restart takes when this job has "
            "none of its own (read, on each node, from the copy cairn-prolog staged there if "
            "that holds the generation whole with its chain, else from pfs.dir); empty: none. "
            "Same characters as job.id"},
    {.section = "erasure", .name = "set_size", .env = "CAIRN_SET_SIZE", .kind = K_INT, .min = 2,
     .max = 1024, .def = "8", FIELD(set_size),
     .doc = "nodes per level-3 encoding set; the nodes are split into sets of nearly equal size "
            "no larger than this"},
    {.section = "erasure", .name = "m", .env = "CAIRN_EC_M", .kind = K_INT, .min = 1, .max = 32,
     .def = "2", FIELD(ec_m),
     .doc = "parity shards per encoding set: level 3 survives the loss of any m nodes of a set; "
            "every set needs at least m + 1 nodes"},
    {.section = "erasure", .name = "w", .env = "CAIRN_EC_W", .kind = K_INT, .min = 8, .max = 16,
     .def = "8", FIELD(ec_w), .check = check_w,
     .doc = "Galois field GF(2^w) of the Cauchy Reed-Solomon code: 8, or 16 for sets above 256"},
    {.section = "erasure", .name = "kernel", .env = "CAIRN_EC_KERNEL", .kind = K_ENUM,
     .words = KERNEL_WORDS, .def = "auto", FIELD(ec_kernel),
     .doc = "encoding kernel: `isal` (ISA-L), `matrix` (Jerasure + GF-Complete), `bitmatrix` "
            "(Jerasure's scheduled bitmatrix; a different code), `auto` (fastest available)"},
    {.section = "erasure", .name = "block_size", .env = "CAIRN_EC_BLOCK", .kind = K_SIZE,
     .min = 64 << 10, .max = 4 << 20, .def = "1M", FIELD(ec_block),
     .doc = "size of the blocks that travel the encoding ring"},
    {.section = "compress", .name = "codec", .env = "CAIRN_CODEC", .kind = K_ENUM,
     .words = cn_codec_words, .def = "auto", FIELD(codec),
     .doc = "codec of variables that do not name one (cairn_protect_codec): `auto` picks, per "
            "variable and for every rank alike, the codec that minimises a model of the "
            "checkpoint's work (ratios sampled at fixed places, fixed codec costs, the levels "
            "the job uses; no clock, so the same data and settings give the same pick), `none` "
            "stores raw; `shuffle-*` suit arrays of numbers; `fpzip` takes float/double only "
            "(other variables get `zstd`) and is given a variable's 2-D or 3-D shape"},
    {.section = "compress", .name = "buffer", .env = "CAIRN_COMPRESS_BUFFER", .kind = K_SIZE,
     .min = 1 << 10, .max = 64 << 20, .def = "1M", FIELD(z_buffer),
     .doc = "pipeline buffer: variables are compressed in pieces of this size, and smaller ones "
            "are aggregated into one"},
    {.section = "compress", .name = "threads", .env = "CAIRN_COMPRESS_THREADS", .kind = K_INT,
     .min = 0, .max = 64, .def = "0", FIELD(z_threads),
     .doc = "compressor threads per rank; 0 means the cores of the host divided by its ranks "
            "(at least 1)"},
    {.section = "compress", .name = "level", .env = "CAIRN_COMPRESS_LEVEL", .kind = K_INT,
     .min = 0, .max = 19, .def = "0", FIELD(z_level),
     .doc = "zlib/zstd level; 0 means each codec's default (zlib 6, zstd 1)"},
    {.section = "compress", .name = "bandwidth", .env = "CAIRN_COMPRESS_BANDWIDTH", .kind = K_INT,
     .min = 1, .max = 10000000, .def = "2048", FIELD(z_bandwidth),
     .doc = "a rank's level-1 write bandwidth in MiB/s, as `auto`'s model takes it (fixed, not "
            "measured: a measure would make the pick depend on the load of the moment); set it "
            "to your node-local storage's bandwidth divided by the ranks per node"},
    {.section = "compress", .name = "resample", .env = "CAIRN_COMPRESS_RESAMPLE", .kind = K_INT,
     .min = 1, .max = 1000000, .def = "8", FIELD(z_resample),
     .doc = "`auto` samples a variable again after this many checkpoints (and when it changes, "
            "or the job uses a level it had not)"},
    {.section = "lossy", .name = "mode", .env = "CAIRN_LOSSY", .kind = K_ENUM,
     .words = LOSSY_WORDS, .def = "auto", FIELD(lossy_mode),
     .doc = "how variables with an error bound (cairn_protect_bound) are stored unless they "
            "name a codec: `wavelet` (the Haar wavelet method with a guaranteed bound), `predict` "
            "(Lorenzo or interpolation prediction, an adaptive range coder), `auto` (the cheaper by "
            "compress.codec auto's model, for every rank alike)"},
    {.section = "incr", .name = "mode", .env = "CAIRN_INCR", .kind = K_ENUM,
     .words = INCR_WORDS, .def = "off", FIELD(incr_mode),
     .doc = "incremental checkpoints: `on` stores only the blocks that changed since the "
            "parent generation (the newest at the level asked for or above), `off` stores every "
            "generation whole"},
    {.section = "incr", .name = "block_size", .env = "CAIRN_INCR_BLOCK", .kind = K_SIZE,
     .min = CN_MIN_INCR_BLOCK, .max = CN_MAX_INCR_BLOCK, .def = "4K", FIELD(incr_block),
     .check = check_pow2,
     .doc = "unit of change detection: each variable is hashed (XXH3-128) in blocks of this "
            "size and only changed blocks are stored; a power of two"},
    {.section = "incr", .name = "full_every", .env = "CAIRN_INCR_FULL_EVERY", .kind = K_INT,
     .min = 1, .max = 1000000, .def = "8", FIELD(incr_full_every),
     .doc = "a chain holds at most this many generations: the full one it starts with and the "
            "incremental ones after it (1: every generation full)"},
    {.section = "incr", .name = "max_changed", .env = "CAIRN_INCR_MAX_CHANGED", .kind = K_INT,
     .min = 0, .max = 100, .def = "50", FIELD(incr_max_changed),
     .doc = "a generation in which more than this percentage of all blocks (over all ranks) "
            "changed is written full: the increment no longer pays (`make bench` prints what an "
            "LU-like solver changing about 60% of its blocks stores and spends as increments "
            "against full checkpoints: `incr.lu.size`, `incr.lu.time`)"},
    {.section = "pfs", .name = "dir", .env = "CAIRN_PFS_DIR", .kind = K_STR, .def = "",
     FIELD(pfs_dir), .check = check_abs_or_empty,
     .doc = "level 4: directory on the parallel file system that receives flushed generations "
            "(as `<dir>/cairn-<uid>/<job>/gen-<G>/`); empty: no level 4"},
    {.section = "pfs", .name = "every", .env = "CAIRN_PFS_EVERY", .kind = K_INT, .min = 0,
     .max = 1000000, .def = "0", FIELD(pfs_every),
     .doc = "also flush every Nth checkpoint (by count) to the PFS; 0: only those asked for at "
            "level 4"},
    {.section = "pfs", .name = "keep", .env = "CAIRN_PFS_KEEP", .kind = K_INT, .min = 1,
     .max = 1000, .def = "2", FIELD(pfs_keep), .doc = "complete generations kept on the PFS (those a restart can take), each with every "
            "generation its chain needs there (an increment's parent, down to its full base)"},
    {.section = "pfs", .name = "group", .env = "CAIRN_PFS_GROUP", .kind = K_INT, .min = 1,
     .max = 1000000, .def = "8", FIELD(pfs_group),
     .doc = "ranks per aggregated file: N ranks write M = ceil(N / group) files, each by the "
            "node of the group's first rank. A generation level 1 stored raw goes as it is, "
            "each node writing its own ranks' file in parallel (one per rank if nodes hold "
            "unequal runs of ranks), when pfs.scheme and compress.codec are `auto` and "
            "pfs.bandwidth is 0 or at least compress.bandwidth: no codec would pay on the PFS "
            "either, so merging across nodes would only move the bytes"},
    {.section = "pfs", .name = "scheme", .env = "CAIRN_PFS_SCHEME", .kind = K_ENUM,
     .words = PFS_SCHEME_WORDS, .def = "auto", FIELD(pfs_scheme),
     .doc = "how a group's variables are merged before compression: `aware` groups variables "
            "of the same name, type and kind across ranks, `agnostic` concatenates rank after "
            "rank, `*-block` interleave the members in blocks of pfs.block (block 0 of every "
            "rank, then block 1, ...); `auto` samples all four and keeps the smallest, when the "
            "time model says the sample can pay for itself (else `aware`)"},
    {.section = "pfs", .name = "block", .env = "CAIRN_PFS_BLOCK", .kind = K_SIZE,
     .min = 64, .max = 64 << 20, .def = "4K", FIELD(pfs_block), .check = check_pow2,
     .doc = "the `*-block` schemes interleave the ranks' data in blocks of this size (the "
            "paper's best were 1K-8K)"},
    {.section = "pfs", .name = "bandwidth", .env = "CAIRN_PFS_BANDWIDTH", .kind = K_INT,
     .min = 0, .max = 10000000, .def = "0", FIELD(pfs_bandwidth),
     .doc = "MiB/s each aggregator may write to the PFS (its share of the file system's "
            "bandwidth); 0: unthrottled. Also the bandwidth level 4's codec model weighs "
            "compression against (0: compress.bandwidth's)"},
    {.section = "daemon", .name = "use", .env = "CAIRN_DAEMON_USE", .kind = K_ENUM,
     .words = DAEMON_WORDS, .def = "auto", FIELD(daemon_use),
     .doc = "`auto`: hand levels 2-4 to the node's cairnd when one serves the job on every "
            "node, else work synchronously; `off`: always synchronous"},
    {.section = "daemon", .name = "timeout", .env = "CAIRN_DAEMON_TIMEOUT", .kind = K_INT,
     .min = 1, .max = 3600, .def = "10", FIELD(daemon_timeout),
     .doc = "seconds the library waits for cairnd to answer before it falls back to "
            "synchronous checkpoints"},
    {.section = "daemon", .name = "boost_after", .env = "CAIRN_DAEMON_BOOST_AFTER",
     .kind = K_INT, .min = 0, .max = 86400, .def = "30", FIELD(daemon_boost_after),
     .doc = "cairnd works at idle priority (SCHED_IDLE, I/O class idle, its session's autogroup "
            "at nice 19: it yields every core to the application) until the oldest generation "
            "queued to it, or a `cairn flush`, has waited this many seconds; then, and whenever a drain, a hold or a stop waits "
            "for it, at normal priority. 0: always at normal priority"},
    {.section = "log", .name = "level", .env = "CAIRN_LOG_LEVEL", .kind = K_ENUM,
     .words = LOG_WORDS, .def = "warn", FIELD(log_level),
     .doc = "messages printed to stderr: this level and more severe ones; `info` adds one "
            "line per generation of the job (rank 0's: level, ranks, bytes, time), `debug` "
            "each rank's"},
    {.section = "ckpt", .name = "every_1", .env = "CAIRN_CKPT_EVERY_1", .kind = K_EVERY,
     .def = "", FIELD(ckpt_every[1]),
     .doc = "cairn_need_checkpoint says level 1 is due once this much has passed since the last "
            "checkpoint at level 1 or above (or cairn_init): N iterations (calls of "
            "cairn_need_checkpoint) or a wall time (30s, 5m, 1.5h, 1d). Empty: off, or with "
            "ckpt.auto = on the Young/Daly interval"},
    {.section = "ckpt", .name = "every_2", .env = "CAIRN_CKPT_EVERY_2", .kind = K_EVERY,
     .def = "", FIELD(ckpt_every[2]), .doc = "as ckpt.every_1, for level 2 (partner copy)"},
    {.section = "ckpt", .name = "every_3", .env = "CAIRN_CKPT_EVERY_3", .kind = K_EVERY,
     .def = "", FIELD(ckpt_every[3]), .doc = "as ckpt.every_1, for level 3 (erasure code)"},
    {.section = "ckpt", .name = "every_4", .env = "CAIRN_CKPT_EVERY_4", .kind = K_EVERY,
     .def = "", FIELD(ckpt_every[4]),
     .doc = "as ckpt.every_1, for level 4 (the PFS; never due without pfs.dir)"},
    {.section = "ckpt", .name = "auto", .env = "CAIRN_CKPT_AUTO", .kind = K_ENUM,
     .words = ON_OFF_WORDS, .def = "off", FIELD(ckpt_auto),
     .doc = "`on`: a level without ckpt.every_<L> but with fail.mtbf_<L> is due every T seconds, "
            "T from Daly's formula with C the cost of that level's checkpoints measured in this "
            "run (the mean of the last 4; before the first, the cost recorded with the newest "
            "generation at that level, else a lower level's, else the lowest such level is due "
            "at once to measure it) and M = fail.mtbf_<L>. Needs one fail.mtbf_<L> at least"},
    {.section = "fail", .name = "mtbf_1", .env = "CAIRN_FAIL_MTBF_1", .kind = K_DURATION,
     .def = "", FIELD(mtbf[1]),
     .doc = "for ckpt.auto: mean time between the failures level 1 is for, as this job sees "
            "them: process crashes that leave the nodes' storage intact (30m, 12h, 7d). Empty: "
            "level 1 is never chosen automatically"},
    {.section = "fail", .name = "mtbf_2", .env = "CAIRN_FAIL_MTBF_2", .kind = K_DURATION,
     .def = "", FIELD(mtbf[2]),
     .doc = "as fail.mtbf_1, for level 2: the loss of a node and its storage (a job on N nodes "
            "that each fail every X on average loses one every X / N)"},
    {.section = "fail", .name = "mtbf_3", .env = "CAIRN_FAIL_MTBF_3", .kind = K_DURATION,
     .def = "", FIELD(mtbf[3]),
     .doc = "as fail.mtbf_1, for level 3: losses of nodes that a partner copy does not survive "
            "(a node and its partner), up to erasure.m per set"},
    {.section = "fail", .name = "mtbf_4", .env = "CAIRN_FAIL_MTBF_4", .kind = K_DURATION,
     .def = "", FIELD(mtbf[4]),
     .doc = "as fail.mtbf_1, for level 4: losses of more nodes than level 3 survives, or of the "
            "whole allocation"},
};
#define NKEYS (sizeof KEYS / sizeof KEYS[0])

/* "4K", "1G" or plain bytes. */
static void fmt_size(char *buf, size_t n, long long v)
{
    static const char *const unit[] = {"", "K", "M", "G"};
    int i = 0;
    for (; i < 3 && v > 0 && v % 1024 == 0; i++)
        v /= 1024;
    snprintf(buf, n, "%lld%s", v, unit[i]);
}

/* What K accepts: "1..1000", "4K..1G", "auto, write, pmem", "" for strings. */
static void fmt_accepts(char *buf, size_t n, const key_def *k)
{
    char lo[32], hi[32];
    buf[0] = '\0';
    if (k->kind == K_INT) {
        snprintf(buf, n, "%lld..%lld", k->min, k->max);
    } else if (k->kind == K_SIZE) {
        fmt_size(lo, sizeof lo, k->min);
        fmt_size(hi, sizeof hi, k->max);
        snprintf(buf, n, "%s..%s", lo, hi);
    } else if (k->kind == K_EVERY) {
        snprintf(buf, n, "N, or N followed by s, m, h, d");
    } else if (k->kind == K_DURATION) {
        snprintf(buf, n, "N followed by s, m, h, d");
    } else if (k->kind == K_ENUM) {
        size_t len = 0;
        for (int i = 0; k->words[i] && len < n; i++)
            len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", k->words[i]);
    }
}

/*
 * Base-10 integer, the whole string; with SIZE, no sign and an optional binary
 * K, M, G, KiB, MiB or GiB (any case). Returns 0, -1 (malformed), -2 (too big).
 */
static int parse_num(const char *v, bool size, long long *out)
{
    static const char *const suffix[] = {"", "K", "M", "G", "", "KiB", "MiB", "GiB"};
    const char *digit = v + (!size && (*v == '-' || *v == '+'));
    if (*digit < '0' || *digit > '9')
        return -1; /* strtoll would skip blanks and take signs */
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    bool over = errno == ERANGE;
    for (int i = 0; i < (size ? 8 : 1); i++) {
        if (strcasecmp(end, suffix[i]) == 0) {
            long long unit = 1LL << (10 * (i % 4));
            if (over || n > LLONG_MAX / unit)
                return -2;
            *out = n * unit;
            return 0;
        }
    }
    return -1;
}

/*
 * Parse V as key K and store it in C. On error, put in WHY the quoted value
 * and the problem ("'abc' is not an integer") and return -1.
 */
static int set_value(cn_config *c, const key_def *k, const char *v, char *why, size_t why_len)
{
    char accepts[128], buf[192];
    const char *bad = NULL;
    long long num = 0;
    cn_interval every = {0, 0};
    int rc = 0;
    fmt_accepts(accepts, sizeof accepts, k);
    switch (k->kind) {
    case K_STR:
        if (strlen(v) >= k->size) {
            snprintf(buf, sizeof buf, "is longer than %zu bytes", k->size - 1);
            bad = buf;
        }
        break;
    case K_INT:
    case K_SIZE:
        rc = parse_num(v, k->kind == K_SIZE, &num);
        if (rc == -1) {
            bad = k->kind == K_INT ? "is not an integer" : "is not a size (use e.g. 64K, 1M)";
        } else if (rc == -2 || num < k->min || num > k->max) {
            snprintf(buf, sizeof buf, "is out of range %s", accepts);
            bad = buf;
        }
        break;
    case K_EVERY:
    case K_DURATION:
        bad = cn_interval_parse(v, k->kind == K_EVERY, &every);
        break;
    case K_ENUM:
        for (num = 0; k->words[num] && strcasecmp(v, k->words[num]) != 0; num++)
            ;
        if (!k->words[num]) {
            snprintf(buf, sizeof buf, "must be one of %s", accepts);
            bad = buf;
        }
        break;
    }
    if (!bad && k->check)
        bad = k->check(v, num);
    if (bad) {
        size_t len = strlen(v);
        snprintf(why, why_len, "'%.*s%s' %s", (int)(len > QUOTE_MAX ? QUOTE_MAX : len), v,
                 len > QUOTE_MAX ? "..." : "", bad);
        return -1;
    }
    char *field = (char *)c + k->off;
    if (k->kind == K_STR) {
        memcpy(field, v, strlen(v) + 1);
    } else if (k->kind == K_EVERY) {
        memcpy(field, &every, sizeof every);
    } else if (k->kind == K_DURATION) {
        memcpy(field, &every.seconds, sizeof every.seconds);
    } else if (k->kind == K_SIZE) {
        uint32_t u = (uint32_t)num;
        memcpy(field, &u, sizeof u);
    } else {
        int i = (int)num;
        memcpy(field, &i, sizeof i);
    }
    return 0;
}

/* ---- INI file ------------------------------------------------------------ */

typedef struct parse_state {
    cn_config *cfg;
    FILE *f;
    int line;            /* lines handed to inih so far */
    int err_line;        /* line of the first error found here, 0 if none */
    int read_errno;      /* a read error, 0 if none */
    char why[CN_MSG_MAX / 2];
} parse_state;

/* inih's fgets-like reader: counts lines, rejects over-long ones, drops leading blanks. */
static char *reader(char *buf, int num, void *user)
{
    parse_state *st = user;
    errno = 0;
    if (st->err_line || !fgets(buf, num, st->f)) {
        if (ferror(st->f))
            st->read_errno = errno ? errno : EIO;
        return NULL; /* end of input: inih stops */
    }
    st->line++;
    size_t len = strlen(buf);
    if (len == (size_t)num - 1 && buf[len - 1] != '\n') {
        int ch = getc(st->f);
        if (ch != EOF) {
            snprintf(st->why, sizeof st->why, "line is longer than %d bytes", num - 2);
            st->err_line = st->line;
            return NULL;
        }
    }
    size_t skip = strspn(buf, " \t");
    memmove(buf, buf + skip, len - skip + 1);
    return buf;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
    parse_state *st = user;
    bool known_section = false;
    for (size_t i = 0; i < NKEYS; i++) {
        const key_def *k = &KEYS[i];
        if (strcmp(section, k->section) != 0)
            continue;
        known_section = true;
        if (strcmp(name, k->name) != 0)
            continue;
        char why[CN_MSG_MAX / 2 - 64];
        if (set_value(st->cfg, k, value, why, sizeof why) == 0)
            return 1;
        snprintf(st->why, sizeof st->why, "%s.%s: %s", section, name, why);
        st->err_line = st->line;
        return 0;
    }
    if (!*section)
        snprintf(st->why, sizeof st->why, "key '%.100s' outside a section", name);
    else if (!known_section)
        snprintf(st->why, sizeof st->why, "unknown section [%.100s]", section);
    else
        snprintf(st->why, sizeof st->why, "unknown key '%.100s.%.100s'", section, name);
    st->err_line = st->line;
    return 0;
}

static int load_file(cn_config *c, const char *path, cn_err *err)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return cn_fail(err, CAIRN_ECONFIG, "config %s: cannot open: %s", path, strerror(errno));
    parse_state st = {.cfg = c, .f = f};
    int rc = ini_parse_stream(reader, &st, handler, &st);
    fclose(f);
    if (rc == -2)
        return cn_fail(err, CAIRN_ENOMEM, "config %s: out of memory", path);
    if (st.read_errno)
        return cn_fail(err, CAIRN_ECONFIG, "config %s: cannot read: %s", path,
                       strerror(st.read_errno));
    /* inih reports the first failing line; if it precedes ours, inih found it. */
    if (rc > 0 && (!st.err_line || rc < st.err_line))
        return cn_fail(err, CAIRN_ECONFIG, "config %s:%d: syntax error", path, rc);
    if (st.err_line)
        return cn_fail(err, CAIRN_ECONFIG, "config %s:%d: %s", path, st.err_line, st.why);
    return 0;
}

/* ---- defaults, environment, entry points ---------------------------------- */

static int load_defaults(cn_config *c, cn_err *err)
{
    char why[CN_MSG_MAX / 2];
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < NKEYS; i++)
        if (set_value(c, &KEYS[i], KEYS[i].def, why, sizeof why) < 0)
            return cn_fail(err, CAIRN_ECONFIG, "built-in default of %s.%s: %s", KEYS[i].section,
                           KEYS[i].name, why);
    return 0;
}

static int load_env(cn_config *c, cn_err *err)
{
    char why[CN_MSG_MAX / 2];
    for (size_t i = 0; i < NKEYS; i++) {
        const char *v = getenv(KEYS[i].env);
        if (v && *v && set_value(c, &KEYS[i], v, why, sizeof why) < 0)
            return cn_fail(err, CAIRN_ECONFIG, "environment %s: %s", KEYS[i].env, why);
    }
    return 0;
}

/* Rules between keys, once every layer is in. */
static int check_whole(const cn_config *c, cn_err *err)
{
    bool mtbf = false;
    for (int l = 1; l <= 4; l++)
        mtbf |= c->mtbf[l] > 0;
    if (c->ckpt_auto && !mtbf)
        return cn_fail(err, CAIRN_ECONFIG, "config: ckpt.auto = on needs fail.mtbf_<L> for at "
                       "least one level L (the mean time between the failures level L is for, "
                       "e.g. fail.mtbf_1 = 1d): without one no level is ever due");
    return 0;
}

int cn_config_load(cn_config *cfg, const char *path, cn_err *err)
{
    CN_FAIL_IF(!cfg, err, CAIRN_EINVAL, "cn_config_load: cfg is NULL");
    cn_config c;
    const char *named = getenv(CN_CONFIG_FILE_ENV);
    bool by_env = !path && named && *named;
    int rc = load_defaults(&c, err);
    if (rc == 0 && (path || by_env)) {
        rc = load_file(&c, by_env ? named : path, err);
        if (rc < 0 && by_env)
            cn_err_prefix(err, "%s: ", CN_CONFIG_FILE_ENV);
    }
    if (rc == 0)
        rc = load_env(&c, err);
    if (rc == 0)
        rc = check_whole(&c, err);
    if (rc < 0)
        (void)load_defaults(&c, NULL); /* on error the caller sees defaults, never a mix */
    *cfg = c;
    return rc;
}

void cn_config_reference(void *file)
{
    FILE *f = file;
    fprintf(f, "Each setting is, in increasing priority: the default below, the key in the INI "
               "file given to `cairn_init` (`[section]` then `key = value`; with none given, "
               "the file `%s` names, if set), then the environment "
               "variable (an empty variable counts as unset). In the file, a key given twice "
               "takes its last value; names are case-sensitive, words are not; a line starting "
               "with `;` or `#` is a comment, and so is the rest of a line after ` ;`; a line "
               "holds at most %d bytes (a longer `store.base` must come from `CAIRN_BASE`). "
               "Sizes take a binary suffix: `K`, `M`, `G` (or `KiB`, `MiB`, `GiB`). Times are "
               "a number (`1.5` allowed) and a unit: `s`, `m` (minutes), `h` or `d`.\n\n",
            CN_CONFIG_FILE_ENV, INI_MAX_LINE - 2);
    fprintf(f, "| key | env | type | default | description |\n");
    fprintf(f, "|-----|-----|------|---------|-------------|\n");
    for (size_t i = 0; i < NKEYS; i++) {
        const key_def *k = &KEYS[i];
        static const char *const kinds[] = {"string", "integer", "size", "one of", "interval",
                                            "duration"};
        char accepts[128];
        fmt_accepts(accepts, sizeof accepts, k);
        fprintf(f, "| `%s.%s` | `%s` | %s%s%s | %s%s%s | %s |\n", k->section, k->name, k->env,
                kinds[k->kind], *accepts ? " " : "", accepts, *k->def ? "`" : "",
                *k->def ? k->def : "(empty)", *k->def ? "`" : "", k->doc);
    }
}

uint64_t cn_config_daemon_key(const cn_config *c)
{
    char buf[9000];
    int n = snprintf(buf, sizeof buf, "%s|%d|%d|%d|%d|%d|%u|%s|%d|%d|%d|%u|%d", c->base, c->keep,
                     c->set_size, c->ec_m, c->ec_w, c->ec_kernel, c->ec_block, c->pfs_dir,
                     c->pfs_keep, c->pfs_group, c->pfs_scheme, c->pfs_block, c->pfs_bandwidth);
    return cn_hash(buf, n > 0 && (size_t)n < sizeof buf ? (size_t)n : sizeof buf);
}
