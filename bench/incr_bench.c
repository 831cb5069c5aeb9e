/*
 * incr_bench.c - incremental checkpoints (incr.mode = on) against full ones,
 * after Jitsumoto et al., Tables 3 and 4: two real MPI programs checkpoint at
 * level 3 on emulated nodes, once storing every generation whole (CP) and
 * once storing only the blocks that changed (ICP); then the block size, the
 * hashing speed, and xdelta3 (the paper's tool) on the same data.
 *
 *   CAIRN_RANKS_PER_NODE=1 CAIRN_SET_SIZE=8 CAIRN_EC_M=2 \
 *   scripts/mpirun.sh 8 build/bench/incr_bench [--reps N] [--mat-n N] [--mat-rows N]
 *       [--lu-n N] [--lu-iters N] [--lu-max-changed P] [--blocks K,K,..] [--sweep-reps N]
 *       [--hash-mib N] [--hash-reps N] [--xdelta-reps N] [--xdelta PROG] [--auto 0|1]
 *       [--settle-ms N]
 *
 * Workloads (incr_apps.h; each rank its own emulated node, one encoding set
 * when the ranks fit in erasure.set_size), restarted from their initial
 * state for every series below:
 *   mat  C = A x B, N = --mat-n (2400: rows of 19200 bytes, so most rows of C
 *        start inside a 4 KiB block); each rank owns N/P rows of A and C and
 *        all of B; an interval computes the next --mat-rows (3) rows of C:
 *        0.1 % of the rank's protected memory (A, B, C, state: 57.6 MB).
 *   lu   SSOR on a 3-D grid in the manner of NPB LU, --lu-n^3 points (72^3)
 *        of 5 unknowns per rank, --lu-iters (1) iterations per interval: u
 *        and rsd change at every point, frct and kap never; ~62 % of the
 *        4 KiB blocks change per interval (48.3 MB per rank).
 * The bytes a program changed in an interval are counted exactly by the
 * benchmark, byte for byte against a copy of the protected memory taken at
 * the previous checkpoint (never by asking cairn); so are the blocks that
 * hold them, and every increment must store exactly those blocks.
 *
 * 1. CP vs ICP. Per workload two series of one checkpoint of the initial
 *    state and then --reps intervals, each followed by cairn_checkpoint at
 *    level 3 (compress.codec = none: compression would blur what is being
 *    measured): incr.mode = off, then on (other incr.* at their defaults,
 *    except incr.max_changed = --lu-max-changed for lu, 100 by default,
 *    because lu changes more than the default 50 % and would otherwise be
 *    stored whole; a short run with the default shows it). Per checkpoint:
 *    stored bytes (cairn_generations, checked against the rank files'
 *    sizes), parity bytes (the parity.ec files of the generation on every
 *    node), and time (cairn_checkpoint, slowest rank, after a barrier).
 *    Figures use the --reps checkpoints after the intervals; ICP figures
 *    only those written incremental (parent >= 0). After the ICP series the
 *    memory is scrambled and cairn_restart of its last generation must
 *    bring back every byte (applying the chain).
 * 2. Block size (mat): a series per incr.block_size in --blocks (KiB) at
 *    level 1, a full checkpoint then --sweep-reps incremental ones: bytes
 *    the increments store (their blocks) / bytes really changed, the
 *    checkpoint time, incr_hash over the rank's memory with 1 thread
 *    (rank 0 alone, the others asleep), and the hash table (16 B a block).
 *    The recommended size is the largest with stored / changed <= 1.1.
 * 3. incr_hash over --hash-mib MiB (1 thread, the library's default block)
 *    against memcpy of the same buffer, rank 0 alone, medians.
 * 4. xdelta3: rank 0's protected memory dumped raw before and after one
 *    interval (two consecutive generations) to files on the RAM disk;
 *    `xdelta3 -e -s OLD NEW DELTA` timed (process included) --xdelta-reps
 *    times, its delta decoded once and checked. Against it, cairn on the
 *    same rank alone (a context over MPI_COMM_SELF, level 1, one compressor
 *    thread, codec none): the memory alternates OLD, NEW, OLD, ... and each
 *    checkpoint after the first is incremental over the same changed
 *    blocks: its time (hash + diff + store) and stored bytes.
 * With --auto 1, each workload also runs CP and ICP for 2 intervals with the
 * default codec (compress.codec unset): the sizes that compression gives.
 * Between checkpoints the ranks sleep --settle-ms (100) so the background
 * removal of pruned generations does not run into the next timed call.
 *
 * Output, from rank 0 (MB = 10^6 bytes; sizes are per generation over all
 * ranks; times are medians over the checkpoints or repetitions):
 *   bench: incr.{mat,lu}.size V MB ratio=R vs full      mean ICP increment / mean CP generation
 *   bench: incr.{mat,lu}.parity V MB ratio=R vs full    same for parity.ec bytes
 *   bench: incr.{mat,lu}.time V s ratio=R vs full       median ICP / median CP checkpoint time
 *   bench: incr.mat.bytes V MB ratio=R vs changed       increment's blocks / bytes changed
 *   bench: incr.block.best S KiB ratio=R vs changed     largest block with R <= 1.1 (or
 *                                                       the smallest, if none: a # line says so)
 *   bench: incr.hash V GB/s ratio=R vs memcpy           hash GB/s / memcpy GB/s
 *   bench: incr.xdelta.{mat,lu}.size V MB ratio=R vs cairn
 *   bench: incr.xdelta.{mat,lu}.time V s ratio=R vs cairn
 * Lines starting with '#' are details for people. Any inconsistency (a
 * restart that differs, stored bytes that disagree with the files, an
 * increment that stores other blocks than those that changed, a wrong
 * product, a solver that diverges, xdelta3 failing or its delta not
 * decoding to NEW) aborts the job instead of printing a figure.
 *
 * This file owns main, the options and the globals; the rest is in
 * bench/incr/ (incr_bench.h lists who does what), the two workloads in
 * incr_apps.h.
 */
#include "incr/incr_bench.h"
#include "incr_apps.h"

int g_rank = 0, g_size = 1, g_rpn = 1;
uint32_t g_def_block;  /* the library's default incr.block_size */
long g_settle_us = 100000;
char g_job[64], g_base[4096];

/* ---- options -------------------------------------------------------------- */

static void usage(void)
{
    fprintf(stderr,
            "usage: incr_bench [--reps N] [--mat-n N] [--mat-rows N] [--lu-n N] [--lu-iters N]\n"
            "                  [--lu-max-changed P] [--blocks K,K,..] [--sweep-reps N]\n"
            "                  [--hash-mib N] [--hash-reps N] [--xdelta-reps N] [--xdelta PROG]\n"
            "                  [--auto 0|1] [--settle-ms N]\n");
}

static void parse_blocks(const char *s, opts *o)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    o->nblocks = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (o->nblocks == MAX_BLOCKS)
            die("--blocks: at most %d sizes", MAX_BLOCKS);
        long k = parse_long(t, "--blocks", 1, CN_MAX_INCR_BLOCK >> 10);
        if ((k & (k - 1)) != 0 || (k << 10) < (long)CN_MIN_INCR_BLOCK)
            die("--blocks: %ld KiB is not a power of two in %u..%u KiB", k,
                CN_MIN_INCR_BLOCK >> 10, CN_MAX_INCR_BLOCK >> 10);
        o->blocks[o->nblocks++] = k << 10;
    }
    if (o->nblocks == 0)
        die("--blocks: no size given");
}

static void parse_opts(int argc, char **argv, opts *o)
{
    *o = (opts){.reps = 5, .sweep_reps = 3, .hash_reps = 5, .xdelta_reps = 3, .auto_codec = 1,
                .mat_n = 2400, .mat_rows = 3, .lu_n = 72, .lu_iters = 1, .lu_max_changed = 100,
                .hash_mib = 256, .xdelta = "xdelta3", .settle_ms = 100};
    parse_blocks("1,2,4,8,16,64,256,1024", o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage();
            exit(0);
        } else if (i + 1 < argc && strcmp(a, "--reps") == 0) {
            o->reps = (int)parse_long(argv[++i], a, 1, MAX_REPS);
        } else if (i + 1 < argc && strcmp(a, "--mat-n") == 0) {
            o->mat_n = parse_long(argv[++i], a, 64, 16384);
        } else if (i + 1 < argc && strcmp(a, "--mat-rows") == 0) {
            o->mat_rows = parse_long(argv[++i], a, 1, 16384);
        } else if (i + 1 < argc && strcmp(a, "--lu-n") == 0) {
            o->lu_n = parse_long(argv[++i], a, 4, 512);
        } else if (i + 1 < argc && strcmp(a, "--lu-iters") == 0) {
            o->lu_iters = parse_long(argv[++i], a, 1, 1000);
        } else if (i + 1 < argc && strcmp(a, "--lu-max-changed") == 0) {
            o->lu_max_changed = parse_long(argv[++i], a, 0, 100);
        } else if (i + 1 < argc && strcmp(a, "--blocks") == 0) {
            parse_blocks(argv[++i], o);
        } else if (i + 1 < argc && strcmp(a, "--sweep-reps") == 0) {
            o->sweep_reps = (int)parse_long(argv[++i], a, 1, MAX_REPS);
        } else if (i + 1 < argc && strcmp(a, "--hash-mib") == 0) {
            o->hash_mib = parse_long(argv[++i], a, 1, 1L << 16);
        } else if (i + 1 < argc && strcmp(a, "--hash-reps") == 0) {
            o->hash_reps = (int)parse_long(argv[++i], a, 1, MAX_REPS);
        } else if (i + 1 < argc && strcmp(a, "--xdelta-reps") == 0) {
            o->xdelta_reps = (int)parse_long(argv[++i], a, 1, MAX_REPS);
        } else if (i + 1 < argc && strcmp(a, "--xdelta") == 0) {
            o->xdelta = argv[++i];
        } else if (i + 1 < argc && strcmp(a, "--auto") == 0) {
            o->auto_codec = (int)parse_long(argv[++i], a, 0, 1);
        } else if (i + 1 < argc && strcmp(a, "--settle-ms") == 0) {
            o->settle_ms = parse_long(argv[++i], a, 0, 10000);
        } else {
            usage();
            die("unknown or incomplete option '%s'", a);
        }
    }
}

/* Rank 0 alone: incr_hash over a buffer against memcpy of it; GB/s of both. */

int main(int argc, char **argv)
{
    bench_prog = "incr_bench";
    opts o;
    parse_opts(argc, argv, &o);
    g_settle_us = o.settle_ms * 1000;

    check_mpi(MPI_Init(&argc, &argv), "MPI_Init");
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    bench_rank = g_rank;

    g_rpn = (int)env_long("CAIRN_RANKS_PER_NODE", 0);
    long set_size = env_long("CAIRN_SET_SIZE", 8), m = env_long("CAIRN_EC_M", 2);
    if (g_rpn < 1)
        die("needs emulated nodes: CAIRN_RANKS_PER_NODE=1 (each rank its own node)");
    int nodes = (g_size + g_rpn - 1) / g_rpn;
    if (nodes <= m)
        die("level 3 with m = %ld needs more than %ld nodes, this job has %d", m, m, nodes);
    if ((size_t)o.mat_n < (size_t)g_size)
        die("--mat-n %ld: fewer rows than ranks", o.mat_n);
    const char *base = getenv("CAIRN_BASE");
    snprintf(g_base, sizeof g_base, "%s", base && base[0] ? base : "/dev/shm");
    const char *job = getenv("CAIRN_JOB");
    if (job && job[0]) {
        snprintf(g_job, sizeof g_job, "%s", job);
    } else {
        long pid = (long)getpid();
        check_mpi(MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD), "MPI_Bcast");
        snprintf(g_job, sizeof g_job, "incr-bench-%ld", pid);
    }

    /* The library's defaults, as a context loads them. */
    set_env("CAIRN_INCR_BLOCK", NULL);
    set_env("CAIRN_INCR_FULL_EVERY", NULL);
    set_env("CAIRN_INCR_MAX_CHANGED", NULL);
    cn_config cfg;
    cn_err err = {0};
    if (cn_config_load(&cfg, NULL, &err) != 0)
        die("configuration: %s", err.msg);
    g_def_block = cfg.incr_block;

    if (g_rank == 0) {
        printf("# incr: %d ranks on %d emulated nodes (%d per node), %ld encoding set(s) of at "
               "most %ld, m = %ld; %ld core(s); base %s\n",
               g_size, nodes, g_rpn, (nodes + set_size - 1) / set_size, set_size, m,
               sysconf(_SC_NPROCESSORS_ONLN), g_base);
        printf("# the ranks share the cores: times compare work within this run, not a "
               "cluster's; each time is the slowest rank's\n");
        printf("# library defaults: incr.block_size %u KiB, incr.full_every %d, "
               "incr.max_changed %d%%\n",
               g_def_block >> 10, cfg.incr_full_every, cfg.incr_max_changed);
        fflush(stdout);
    }

    double hash_gbs = 0, memcpy_gbs = 0;
    if (g_rank == 0)
        hash_vs_memcpy(&o, &hash_gbs, &memcpy_gbs);
    quiet_barrier();

    static rec cp[MAX_REPS + 1], icp[MAX_REPS + 1];
    work w;
    mat_setup(&w, g_rank, g_size, (size_t)o.mat_n, (size_t)o.mat_rows);
    w.prev = app_alloc(w.bytes);
    uint64_t all = sum_u64(w.bytes);
    if (g_rank == 0) {
        printf("# mat: C = A x B, N = %ld, %zu rows of A and C per rank, %ld rows of C per "
               "interval; %.4f MB protected per rank (%.4f MB all ranks); rows of %ld bytes\n",
               o.mat_n, g_mat.nloc, o.mat_rows, (double)w.bytes / MB, (double)all / MB,
               o.mat_n * 8);
        fflush(stdout);
    }
    wres mat = measure(&w, &o, -1, cp, icp);
    long best = -1;
    double best_ratio = 0;
    int found = block_sweep(&w, &o, &best, &best_ratio);
    mat_free();
    free(w.prev);

    lu_setup(&w, g_rank, g_size, (int)o.lu_n, (int)o.lu_iters);
    w.prev = app_alloc(w.bytes);
    all = sum_u64(w.bytes);
    if (g_rank == 0) {
        printf("# lu: SSOR (omega %.1f), %ld^3 points per rank x %d unknowns, global grid %ld x "
               "%ld x %ld, %ld iteration(s) per interval; %.4f MB protected per rank (%.4f MB all "
               "ranks): u and rsd change, frct and kap do not\n",
               LU_OMEGA, o.lu_n, LU_C, o.lu_n, o.lu_n, o.lu_n * g_size, o.lu_iters,
               (double)w.bytes / MB, (double)all / MB);
        fflush(stdout);
    }
    wres lu = measure(&w, &o, o.lu_max_changed, cp, icp);
    lu_policy(&w, cfg.incr_max_changed);
    lu_free();
    free(w.prev);

    if (g_rank == 0)
        summary(&mat, &lu, found, best, best_ratio, hash_gbs, memcpy_gbs);
    check_mpi(MPI_Finalize(), "MPI_Finalize");
    return 0;
}
