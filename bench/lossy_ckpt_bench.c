/*
 * lossy_ckpt_bench.c - the predictive lossy mode measured at the checkpoint
 * (issue 18, part 3): EGM96 written by a real cairn_checkpoint at level 1
 * into a fresh tmpfs directory, its ratio counted over every byte of the
 * generation's files (rank file and node manifest), against ZFP's fixed-
 * accuracy stream at the same bound, in the same run.
 *
 *   scripts/mpirun.sh 1 build/bench/lossy_ckpt_bench [--reps N] [--warmup N]
 *       [--egm96 PATH] [--dir DIR]
 *
 * One rank, one compressor thread (compress.threads = 1), lossy.mode
 * predict, the bound relative to the value range (cairn_protect_bound_rel).
 * Each repetition, for each bound: a new job directory under DIR (default
 * /dev/shm); cairn_init, cairn_checkpoint(1, level 1) timed (compress + the
 * files written and committed); every regular file under the generation's
 * directory counted; cairn_finalize; a second context restarts from it
 * (cairn_restart timed: read, check, decode) into zeroed memory, and every
 * element must be within the bound of the original (the run aborts
 * otherwise); the job directory is removed. ZFP (serial, fixed accuracy,
 * tolerance = the same absolute bound; no container, its stream is the
 * stored size) is encoded and decoded from memory, checked the same way.
 *
 * Output (medians of --reps after --warmup; ratios of per-repetition
 * figures for speeds; the same speeds by the process's CPU time, which other
 * load on the machine disturbs less, on '#' lines):
 *   bench: lossy.ckpt.ratio.E.egm96   raw / generation bytes   vs zfp ratio
 *   bench: lossy.ckpt.comp.E.egm96    MB/s of the checkpoint    vs zfp compress
 *   bench: lossy.ckpt.decomp.E.egm96  MB/s of the restart       vs zfp decompress
 * with SZ3's published figures for the same field beside them as '#'
 * lines (quoted from issue 18, not measured here: no SZ3 is installed).
 */
#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mpi.h>
#include <zfp.h>

#include "bench_data.h"

#define MAX_REPS 50
#define NAME "egm96"

static const double rel_bounds[] = {1e-2, 1e-3, 1e-4};
static const char *const rel_names[] = {"1e-2", "1e-3", "1e-4"};
/* SZ3 3.x, EGM96, bound relative to the range, one thread (issue 18). */
static const double sz3_ratio[] = {294, 41.2, 11.2}, sz3_comp[] = {181, 119, 114};
enum { NB = 3 };

typedef struct res {
    double ratio[MAX_REPS], comp[MAX_REPS], decomp[MAX_REPS];
    double zratio[MAX_REPS], zcomp[MAX_REPS], zdecomp[MAX_REPS];
    double ccomp[MAX_REPS], cdecomp[MAX_REPS], zccomp[MAX_REPS], zcdecomp[MAX_REPS]; /* CPU */
    uint64_t bytes, rank_bytes, files;
} res;

/* CPU seconds of the process so far (every thread): less disturbed than the
 * wall clock by other work on the machine. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- files ---------------------------------------------------------------- */

/* Sum of the sizes of the regular files under PATH (recursively); *FILES
 * counts them. With LIST, each is printed as a '#' line. */
static uint64_t tree_bytes(const char *path, uint64_t *files, uint64_t *rank_bytes, bool list)
{
    DIR *d = opendir(path);
    if (!d)
        die("opendir %s: %s", path, strerror(errno));
    uint64_t sum = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        struct stat st;
        if (lstat(p, &st) != 0)
            die("stat %s: %s", p, strerror(errno));
        if (S_ISDIR(st.st_mode)) {
            sum += tree_bytes(p, files, rank_bytes, list);
        } else if (S_ISREG(st.st_mode)) {
            sum += (uint64_t)st.st_size;
            ++*files;
            if (strstr(e->d_name, ".ckpt"))
                *rank_bytes += (uint64_t)st.st_size;
            if (list)
                printf("#     %8lld bytes  %s\n", (long long)st.st_size, p);
        }
    }
    closedir(d);
    return sum;
}

static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(p);
        else
            unlink(p);
    }
    closedir(d);
    rmdir(path);
}

/* The directory of generation 1 of JOB under BASE (one emulated node). */
static void gen_dir(const char *base, const char *job, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s/cairn-%u/%s/node0/gen-1", base, (unsigned)getuid(), job);
    if (n < 0 || (size_t)n >= cap)
        die("directory name too long: %s", base);
    struct stat st;
    if (stat(out, &st) != 0 || !S_ISDIR(st.st_mode))
        die("generation directory %s not found after the checkpoint", out);
}

/* ---- checks ---------------------------------------------------------------- */

static void check_bound(const float *x, const float *y, size_t n, double bound,
                        const char *what)
{
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i])) {
            if (memcmp(&x[i], &y[i], 4) != 0)
                die("%s: element %zu is %g, restored as %g (non-finite must be exact)", what,
                    i, x[i], y[i]);
            continue;
        }
        double d = fabs((double)x[i] - (double)y[i]);
        if (!(d <= bound))
            die("%s: element %zu is %.9g, restored as %.9g: error %.3g > bound %.6g", what, i,
                x[i], y[i], d, bound);
    }
}

/* ---- cairn: one checkpoint and one restart --------------------------------- */

static void cairn_once(const char *base, const char *job, float *v, float *back,
                       const uint64_t dims[2], double rel, double bound, res *r, int rep,
                       bool list)
{
    size_t n = (size_t)dims[0] * dims[1], raw = n * 4;
    size_t sd[2] = {(size_t)dims[0], (size_t)dims[1]};
    setenv("CAIRN_JOB", job, 1);
    cairn_ctx *ctx = NULL;
    check_cairn(cairn_init(MPI_COMM_WORLD, NULL, &ctx), ctx, "cairn_init");
    check_cairn(cairn_protect(ctx, NAME, v, CAIRN_FLOAT, n, 2, sd), ctx, "cairn_protect");
    check_cairn(cairn_protect_bound_rel(ctx, NAME, rel), ctx, "cairn_protect_bound_rel");
    check_cairn(cairn_protect_codec(ctx, NAME, "predict"), ctx, "cairn_protect_codec");
    double t0 = now(), c0 = cpu_now();
    check_cairn(cairn_checkpoint(ctx, 1, 1), ctx, "cairn_checkpoint");
    double tc = now() - t0, cc = cpu_now() - c0;
    check_cairn(cairn_finalize(ctx), NULL, "cairn_finalize");

    char gd[4096];
    gen_dir(base, job, gd, sizeof gd);
    uint64_t files = 0, rank_bytes = 0;
    uint64_t bytes = tree_bytes(gd, &files, &rank_bytes, list);

    memset(back, 0, raw);
    ctx = NULL;
    check_cairn(cairn_init(MPI_COMM_WORLD, NULL, &ctx), ctx, "cairn_init (restart)");
    check_cairn(cairn_protect(ctx, NAME, back, CAIRN_FLOAT, n, 2, sd), ctx, "cairn_protect");
    check_cairn(cairn_protect_bound_rel(ctx, NAME, rel), ctx, "cairn_protect_bound_rel");
    long got = -1;
    t0 = now(), c0 = cpu_now();
    check_cairn(cairn_restart(ctx, CAIRN_LATEST, &got), ctx, "cairn_restart");
    double td = now() - t0, cd = cpu_now() - c0;
    check_cairn(cairn_finalize(ctx), NULL, "cairn_finalize (restart)");
    if (got != 1)
        die("cairn_restart restored generation %ld, not 1", got);
    check_bound(v, back, n, bound, "cairn restart");

    if (rep >= 0) {
        r->ratio[rep] = (double)raw / (double)bytes;
        r->comp[rep] = (double)raw / 1e6 / tc;
        r->decomp[rep] = (double)raw / 1e6 / td;
        r->ccomp[rep] = (double)raw / 1e6 / cc;
        r->cdecomp[rep] = (double)raw / 1e6 / cd;
        r->bytes = bytes;
        r->rank_bytes = rank_bytes;
        r->files = files;
    }
}

/* ---- ZFP, fixed accuracy, from memory -------------------------------------- */

static size_t zfp_run(float *v, float *back, const uint64_t dims[2], double tol, uint8_t *buf,
                      size_t cap, double *tc, double *td, double *cc, double *cd)
{
    zfp_field *f = zfp_field_2d(v, zfp_type_float, dims[1], dims[0]);
    zfp_stream *zs = zfp_stream_open(NULL);
    bitstream *bs = stream_open(buf, cap);
    if (!f || !zs || !bs)
        die("zfp: out of memory");
    zfp_stream_set_accuracy(zs, tol);
    zfp_stream_set_bit_stream(zs, bs);
    zfp_stream_rewind(zs);
    double t0 = now(), c0 = cpu_now();
    size_t len = zfp_compress(zs, f);
    *tc = now() - t0, *cc = cpu_now() - c0;
    if (len == 0)
        die("zfp_compress failed (tolerance %g)", tol);
    zfp_field_set_pointer(f, back);
    zfp_stream_rewind(zs);
    t0 = now(), c0 = cpu_now();
    if (zfp_decompress(zs, f) == 0)
        die("zfp_decompress failed (tolerance %g)", tol);
    *td = now() - t0, *cd = cpu_now() - c0;
    zfp_stream_close(zs);
    stream_close(bs);
    zfp_field_free(f);
    return len;
}

/* ---- main ------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    bench_prog = "lossy_ckpt_bench";
    long reps = 3, warmup = 1;
    const char *egm = EGM96_DEFAULT, *dir = "/dev/shm";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 < argc && strcmp(a, "--reps") == 0)
            reps = parse_long(argv[++i], a, 1, MAX_REPS);
        else if (i + 1 < argc && strcmp(a, "--warmup") == 0)
            warmup = parse_long(argv[++i], a, 0, 100);
        else if (i + 1 < argc && strcmp(a, "--egm96") == 0)
            egm = argv[++i];
        else if (i + 1 < argc && strcmp(a, "--dir") == 0)
            dir = argv[++i];
        else
            die("usage: lossy_ckpt_bench [--reps N] [--warmup N] [--egm96 PATH] [--dir DIR] "
                "(not '%s')", a);
    }
    check_mpi(MPI_Init(&argc, &argv), "MPI_Init");
    int nranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &bench_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks != 1)
        die("runs on one rank (it measures one thread), not %d", nranks);

    uint32_t rows = 0, cols = 0;
    float *v = load_egm96(egm, &rows, &cols);
    if (!v) {
        printf("# lossy.ckpt: %s missing (apt install proj-data): skipped\n", egm);
        check_mpi(MPI_Finalize(), "MPI_Finalize");
        return 0;
    }
    const uint64_t dims[2] = {rows, cols};
    size_t n = (size_t)rows * cols, raw = 4 * n;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i])) {
            lo = v[i] < lo ? v[i] : lo;
            hi = v[i] > hi ? v[i] : hi;
        }
    float *back = xmalloc(raw);
    size_t cap = 2 * raw + (1 << 20);
    uint8_t *zbuf = xmalloc(cap);

    char base[4096];
    snprintf(base, sizeof base, "%s/cairn-lossyckpt.XXXXXX", dir);
    if (!mkdtemp(base))
        die("mkdtemp %s: %s", base, strerror(errno));
    setenv("CAIRN_BASE", base, 1);
    setenv("CAIRN_COMPRESS_THREADS", "1", 1);
    setenv("CAIRN_LOSSY", "predict", 1);
    setenv("CAIRN_RANKS_PER_NODE", "1", 1);
    unsetenv("CAIRN_CONFIG_FILE");

    printf("# lossy.ckpt: egm96 %u x %u float32 (%.2f MiB), range %.6g; one rank, "
           "compress.threads 1, lossy.mode predict, bound = E x range; a real level-1 "
           "cairn_checkpoint into %s, ratio = raw / every byte of the generation's files; "
           "comp = raw MB / checkpoint s, decomp = raw MB / restart s (every element checked "
           "against the bound); zfp %s fixed accuracy, stream bytes, from memory; median of %ld "
           "after %ld warm-up\n",
           rows, cols, (double)raw / MIB, hi - lo, dir, ZFP_VERSION_STRING, reps, warmup);
    static res r[NB];
    for (long rep = -warmup; rep < reps; rep++)
        for (int bi = 0; bi < NB; bi++) {
            double bound = rel_bounds[bi] * (hi - lo);
            char job[64];
            snprintf(job, sizeof job, "lossyckpt-%d-%ld", bi, rep + warmup);
            int slot = rep < 0 ? -1 : (int)rep;
            bool list = rep == 0;
            if (list)
                printf("# %s:\n", rel_names[bi]);
            cairn_once(base, job, v, back, dims, rel_bounds[bi], bound, &r[bi], slot, list);
            char jd[4200];
            snprintf(jd, sizeof jd, "%s/cairn-%u/%s", base, (unsigned)getuid(), job);
            remove_tree(jd);
            double tc, td, cc, cd;
            memset(back, 0, raw);
            size_t zlen = zfp_run(v, back, dims, bound, zbuf, cap, &tc, &td, &cc, &cd);
            check_bound(v, back, n, bound * (1 + 1e-6), "zfp");
            if (slot >= 0) {
                r[bi].zratio[slot] = (double)raw / (double)zlen;
                r[bi].zcomp[slot] = (double)raw / 1e6 / tc;
                r[bi].zdecomp[slot] = (double)raw / 1e6 / td;
                r[bi].zccomp[slot] = (double)raw / 1e6 / cc;
                r[bi].zcdecomp[slot] = (double)raw / 1e6 / cd;
            }
        }
    remove_tree(base);

    int nr = (int)reps;
    for (int bi = 0; bi < NB; bi++) {
        res *x = &r[bi];
        double ratio = median(x->ratio, nr), zr = median(x->zratio, nr);
        printf("# %s: generation %llu bytes in %llu files (rank file %llu); zfp ratio %.2f; "
               "cairn %.1f / %.1f MB/s, zfp %.1f / %.1f MB/s (compress / decompress, under "
               "whatever load the machine has)\n",
               rel_names[bi], (unsigned long long)x->bytes, (unsigned long long)x->files,
               (unsigned long long)x->rank_bytes, zr, median(x->comp, nr),
               median(x->decomp, nr), median(x->zcomp, nr), median(x->zdecomp, nr));
        printf("# %s: by CPU time (every thread of the process; less disturbed by other load): "
               "cairn %.1f / %.1f MB/s, zfp %.1f / %.1f MB/s, ratio %.2f / %.2f vs zfp\n",
               rel_names[bi], median(x->ccomp, nr), median(x->cdecomp, nr),
               median(x->zccomp, nr), median(x->zcdecomp, nr), med_ratio(x->ccomp, x->zccomp, nr),
               med_ratio(x->cdecomp, x->zcdecomp, nr));
        printf("# SZ3 3.x (issue 18, published, not measured here): ratio %.1f, compress %.0f "
               "MB/s, one thread\n",
               sz3_ratio[bi], sz3_comp[bi]);
        printf("bench: lossy.ckpt.ratio.%s.egm96 %.2f x ratio=%.2f vs zfp\n", rel_names[bi],
               ratio, ratio / zr);
        printf("bench: lossy.ckpt.comp.%s.egm96 %.1f MB/s ratio=%.2f vs zfp\n", rel_names[bi],
               median(x->comp, nr), med_ratio(x->comp, x->zcomp, nr));
        printf("bench: lossy.ckpt.decomp.%s.egm96 %.1f MB/s ratio=%.2f vs zfp\n", rel_names[bi],
               median(x->decomp, nr), med_ratio(x->decomp, x->zdecomp, nr));
    }
    fflush(stdout);
    free(v);
    free(back);
    free(zbuf);
    check_mpi(MPI_Finalize(), "MPI_Finalize");
    return 0;
}
