/*
 * config_keys.c - the table of every setting (one row per key: section, name,
 * environment variable, kind and limits, default, the cn_config field it
 * fills, its documentation) and the per-key rules. config.c loads settings
 * and prints the reference from these rows, so the docs cannot drift.
 */
#include "common/config_impl.h"

#define FIELD(f) .off = offsetof(cn_config, f), .size = sizeof(((cn_config *)0)->f)

static const char *const IO_WORDS[] = {"auto", "write", "pmem", NULL};
static const char *const LOG_WORDS[] = {"error", "warn", "info", "debug", NULL};
static const char *const PFS_SCHEME_WORDS[] = {"agnostic", "agnostic-block", "aware",
                                               "aware-block", "auto", NULL};
static const char *const KERNEL_WORDS[] = {"auto", "isal", "matrix", "bitmatrix", NULL};
static const char *const LOSSY_WORDS[] = {"auto", "wavelet", "predict", NULL};
static const char *const INCR_WORDS[] = {"off", "on", NULL};
static const char *const ON_OFF_WORDS[] = {"off", "on", NULL};
static const char *const DAEMON_WORDS[] = {"auto", "off", NULL};
static const char *const AUTO_ON_OFF_WORDS[] = {"auto", "on", "off", NULL};
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

const key_def cn_config_keys[] = {
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
            "stores raw, the PFS copy too (level 4 compresses nothing either); `shuffle-*` suit arrays of numbers; `fpzip` takes float/double only "
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
            "or the job uses a level it had not); level 4's writers keep their picks for as many "
            "level-4 generations"},
    {.section = "lossy", .name = "mode", .env = "CAIRN_LOSSY", .kind = K_ENUM,
     .words = LOSSY_WORDS, .def = "auto", FIELD(lossy_mode),
     .doc = "how variables with an error bound (cairn_protect_bound) are stored unless they "
            "name a codec: `wavelet` (the Haar wavelet method with a guaranteed bound), `predict` "
            "(Lorenzo or interpolation prediction, a context-modelled rANS coder), `auto` (the cheaper by "
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
    {.section = "pfs", .name = "group", .env = "CAIRN_PFS_GROUP", .kind = K_INT, .min = 0,
     .max = 1000000, .def = "0", FIELD(pfs_group),
     .doc = "ranks per file on the PFS. 0: one writer per node, each node writing its own "
            "ranks' file in parallel, nothing sent between nodes (a file per rank if nodes "
            "hold unequal runs of ranks). N: N->M aggregation, N ranks a file, each written "
            "by the node of its first rank: across nodes, equal variables of the ranks "
            "merge and compress further, at the cost of moving them. A generation level 1 "
            "stored raw goes as it is, one writer per node, whatever the codec setting that "
            "led there, when pfs.scheme is `auto` and pfs.bandwidth is 0 or at least "
            "compress.bandwidth: no codec would pay on the PFS either"},
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
            "compression against; with 0 the model takes the PFS's bandwidth as measured once "
            "per job (16 MiB written and synced in the job's PFS directory, twice: the faster "
            "pass): for a level 4 "
            "straight from memory by every rank on rank 0's host at once, the mean of their "
            "figures (each writer's share), for a flush by its first node leader alone "
            "(`cairn config --probe-pfs DIR` prints one writer's alone); compress.bandwidth's "
            "if that fails"},
    {.section = "pfs", .name = "direct", .env = "CAIRN_PFS_DIRECT", .kind = K_ENUM,
     .words = ON_OFF_WORDS, .def = "on", FIELD(pfs_direct),
     .doc = "`on`: a synchronous level-4 checkpoint (no cairnd serving the job) writes each "
            "rank's variables from its memory straight to the PFS, a file per rank, all ranks "
            "in parallel, checksummed and synced, the index last (FTI's inline level 4): "
            "nothing of that generation on node-local storage, so a restart takes it from the "
            "PFS (the default: a synchronous level 4 waits for the PFS write anyway, and a "
            "node-local copy beside it would write the data twice). `off`: level 1 (and the "
            "parity or partner copy pfs.parity keeps) first, then the flush from it. With "
            "cairnd serving the job and `on`, a level-4 checkpoint goes straight to the PFS "
            "only where the PFS writes at least as fast as node-local storage (the job's PFS "
            "directory on node-local storage's file system, or pfs.bandwidth or a probe of "
            "16 MiB at least what the same probe of the node directory gives, measured once "
            "per context): the daemons' flush from level 1 would then write the same bytes "
            "again; otherwise, and always with `off`, level 1 and the daemons' background "
            "flush. A checkpoint with routed files or distributed variables "
            "(cairn_protect_block), or of a job with incr.mode on (the PFS takes its "
            "increments from level 1's chain), always goes through level 1"},
    {.section = "pfs", .name = "parity", .env = "CAIRN_PFS_PARITY", .kind = K_ENUM,
     .words = AUTO_ON_OFF_WORDS, .def = "auto", FIELD(pfs_parity),
     .doc = "whether a synchronous level-4 checkpoint that goes through level 1 also keeps "
            "the parity (or partner) copy the nodes allow, which rebuilds lost nodes faster "
            "than a read from the PFS. `on`: always; `off`: never (level 1 and the PFS only); "
            "`auto`: kept while it costs at most half of the PFS copy, as the job's previous "
            "synchronous level-4 checkpoint measured both (rank 0's times; the first one "
            "keeps it). Always kept with incr.mode on (its chains are per level), and by "
            "cairnd when it serves the job (in the background)"},
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
            "at the weight daemon.share gives) until the oldest generation "
            "queued to it, or a `cairn flush`, has waited this many seconds; then, and whenever a drain, a hold or a stop waits "
            "for it, or while it spends what it saved (daemon.burst), at normal priority. 0: "
            "always at normal priority"},
    {.section = "daemon", .name = "share", .env = "CAIRN_DAEMON_SHARE", .kind = K_INT,
     .min = 0, .max = 50, .def = "7", FIELD(daemon_share),
     .doc = "while cairnd works at idle priority, the share of the CPU (percent) its session "
            "takes against each other busy session: the application's ranks, or any other load "
            "on the node (its autogroup's nice: 10 gives nice 10, a weight of 110 against 1024). "
            "The background flush keeps going beside busy cores and slows a computing "
            "application by about this much at most. 0: nice 19, the least the kernel gives "
            "(a flush beside busy cores then waits for daemon.boost_after)"},
    {.section = "daemon", .name = "burst", .env = "CAIRN_DAEMON_BURST", .kind = K_INT,
     .min = 0, .max = 3600, .def = "60", FIELD(daemon_burst),
     .doc = "seconds of daemon.share cairnd may save for a flush: each daemon earns "
            "daemon.share percent of its host's CPUs (split among the daemons there) each "
            "second and spends the CPU time it uses, its savings kept within this many seconds' "
            "worth either way; while a flush is under way, queued or asked for and it has "
            "savings, it works at normal priority, until they are spent (then at the idle "
            "weight, the share), so that the PFS copy is done in one burst paid for by the time "
            "the application computed before it (raising parity stays at idle priority). At any "
            "moment since it started it has taken no more than daemon.share of the host plus "
            "its savings, beyond what the idle weight gives. 0: never (idle priority until "
            "daemon.boost_after)"},
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
const size_t cn_config_nkeys = sizeof cn_config_keys / sizeof cn_config_keys[0];
