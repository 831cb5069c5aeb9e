/*
 * l1_bench.c - level-1 checkpoint bandwidth against a plain write() of the
 * same bytes into the same file system, and against memcpy (the ceiling).
 *
 *   scripts/mpirun.sh NP build/bench/l1_bench [--size MiB] [--reps N]
 *       [--warmup N] [--io auto|write|pmem] [--label LABEL] [--headline]
 *
 * Every rank protects one buffer of SIZE MiB (xorshift data, one CAIRN_UINT8
 * variable). Each repetition runs the three methods back to back, always in
 * the same order (memcpy, write, cairn), so drift on a shared machine hits
 * all of them alike. Each method is bracketed by barriers; its time is the
 * slowest rank's; its bandwidth is NP * SIZE / time. A figure is the median
 * over repetitions; a ratio is the median over repetitions of the per-
 * repetition ratio (the methods of one repetition ran side by side).
 *
 *   memcpy  memcpy into a second, pre-faulted buffer.
 *   write   open(O_CREAT|O_TRUNC) + write() loop + fdatasync + close of the
 *           same bytes into $CAIRN_BASE (the tmpfs cairn writes to); the file
 *           is unlinked after timing.
 *   cairn   cairn_checkpoint(id++, CAIRN_LEVEL_LOCAL) with CAIRN_KEEP=1, so
 *           each checkpoint also prunes the previous generation (part of the
 *           real cost).
 *
 * Two warm-up repetitions (--warmup) are run and discarded: on a virtual
 * machine the first touch of memory the guest never used before is several
 * times slower, and the working set (two files on the RAM disk) reaches its
 * high-water mark only in the second repetition.
 *
 * Before every repetition one word of every 4 KiB page of the data changes,
 * so a checkpoint never finds a block unchanged since the last one: this
 * measures full checkpoints even once incremental checkpoints exist.
 *
 * Output, from rank 0 (LABEL defaults to npNP.SIZEM.IO):
 *   bench: l1.write.LABEL V GB/s ratio=R vs write
 *   bench: l1.write.LABEL V GB/s ratio=R vs memcpy
 *   bench: l1.memcpy.LABEL V GB/s ratio=R vs write
 * and, with --headline, the same two l1.write lines without the label.
 * Lines starting with '#' are details for people.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "bench.h"
#include "cairn.h"

#define MIB ((size_t)1 << 20)
#define MAX_REPS 1000
#define WRITE_MAX ((size_t)1 << 30) /* largest single write() request */

enum { M_MEMCPY, M_WRITE, M_CAIRN, N_METHODS };
static const char *const method_name[N_METHODS] = {"memcpy", "write", "cairn"};

static int g_rank = 0;

static void usage(void)
{
    fprintf(stderr,
            "usage: l1_bench [--size MiB] [--reps N] [--warmup N] [--io auto|write|pmem]\n"
            "                [--label LABEL] [--headline]\n");
}

static double write_baseline(const char *path, const uint8_t *buf, size_t size)
{
    double t0 = now();
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0)
        die("open %s: %s", path, strerror(errno));
    size_t off = 0;
    while (off < size) {
        size_t n = size - off;
        if (n > WRITE_MAX)
            n = WRITE_MAX;
        ssize_t w = write(fd, buf + off, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            die("write %s: %s", path, strerror(errno));
        }
        off += (size_t)w;
    }
    if (fdatasync(fd) != 0)
        die("fdatasync %s: %s", path, strerror(errno));
    if (close(fd) != 0)
        die("close %s: %s", path, strerror(errno));
    double t = now() - t0;
    return t;
}

static double vmin(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        if (v[i] < m)
            m = v[i];
    return m;
}

static double vmax(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        if (v[i] > m)
            m = v[i];
    return m;
}

int main(int argc, char **argv)
{
    long size_mib = 256, reps = 5, warmup = 2;
    const char *io = NULL, *label = NULL;
    int headline = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--headline") == 0) {
            headline = 1;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage();
            return 0;
        } else if (i + 1 < argc && strcmp(a, "--size") == 0) {
            size_mib = parse_long(argv[++i], a, 1, 1L << 20);
        } else if (i + 1 < argc && strcmp(a, "--reps") == 0) {
            reps = parse_long(argv[++i], a, 1, MAX_REPS);
        } else if (i + 1 < argc && strcmp(a, "--warmup") == 0) {
            warmup = parse_long(argv[++i], a, 0, 100);
        } else if (i + 1 < argc && strcmp(a, "--io") == 0) {
            io = argv[++i];
            if (strcmp(io, "auto") != 0 && strcmp(io, "write") != 0 && strcmp(io, "pmem") != 0)
                die("--io: expected auto, write or pmem, got '%s'", io);
        } else if (i + 1 < argc && strcmp(a, "--label") == 0) {
            label = argv[++i];
        } else {
            usage();
            die("unknown or incomplete option '%s'", a);
        }
    }

    /* Configuration goes through the environment cairn_init reads. */
    if (io != NULL && setenv("CAIRN_IO", io, 1) != 0)
        die("setenv CAIRN_IO: %s", strerror(errno));
    if (setenv("CAIRN_KEEP", "1", 1) != 0)
        die("setenv CAIRN_KEEP: %s", strerror(errno));
    const char *io_mode = getenv("CAIRN_IO");
    if (io_mode == NULL || io_mode[0] == '\0')
        io_mode = "auto";
    const char *base = getenv("CAIRN_BASE");
    if (base == NULL || base[0] == '\0')
        base = "/dev/shm";

    check_mpi(MPI_Init(&argc, &argv), "MPI_Init");
    int nranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    bench_rank = g_rank;
    bench_prog = "l1_bench";
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    char label_buf[256];
    if (label == NULL) {
        snprintf(label_buf, sizeof label_buf, "np%d.%ldM.%s", nranks, size_mib, io_mode);
        label = label_buf;
    }

    if ((unsigned long)size_mib > SIZE_MAX / MIB)
        die("--size %ld MiB does not fit in memory", size_mib);
    size_t size = (size_t)size_mib * MIB;

    uint8_t *data = malloc(size);
    uint8_t *copy = malloc(size);
    if (data == NULL || copy == NULL)
        die("cannot allocate 2 x %ld MiB", size_mib);
    fill(data, size, g_rank);
    memset(copy, 0xA5, size); /* pre-fault the memcpy target */

    char wpath[4096];
    int n = snprintf(wpath, sizeof wpath, "%s/l1bench-write-%d-%ld-rank%d.tmp", base,
                     (int)getpid(), (long)time(NULL), g_rank);
    if (n < 0 || (size_t)n >= sizeof wpath)
        die("CAIRN_BASE path too long");

    cairn_ctx *ctx = NULL;
    check_cairn(cairn_init(MPI_COMM_WORLD, NULL, &ctx), NULL, "cairn_init");
    check_cairn(cairn_protect(ctx, "data", data, CAIRN_UINT8, size, 0, NULL), ctx,
                "cairn_protect");

    long total = warmup + reps;
    double *local = calloc((size_t)(N_METHODS * total), sizeof *local);
    double *worst = calloc((size_t)(N_METHODS * total), sizeof *worst);
    if (local == NULL || worst == NULL)
        die("out of memory");

    long id = 0;
    for (long r = 0; r < total; r++) {
        perturb(data, size, (int)r);
        double *t = local + N_METHODS * r;

        check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        double t0 = now();
        memcpy(copy, data, size);
        t[M_MEMCPY] = now() - t0;
        check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");

        check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        t[M_WRITE] = write_baseline(wpath, data, size);
        check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        if (unlink(wpath) != 0)
            die("unlink %s: %s", wpath, strerror(errno));

        check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        t0 = now();
        int rc = cairn_checkpoint(ctx, id, CAIRN_LEVEL_LOCAL);
        t[M_CAIRN] = now() - t0;
        check_cairn(rc, ctx, "cairn_checkpoint");
        id++;
        /* cairn removes pruned generations in a background thread; let it
         * finish (untimed) so it does not slow the next repetition's baselines. */
        usleep(200000);
        check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    }

    check_mpi(MPI_Reduce(local, worst, N_METHODS * (int)total, MPI_DOUBLE, MPI_MAX, 0,
                         MPI_COMM_WORLD),
              "MPI_Reduce");

    if (g_rank == 0) {
        double bw[N_METHODS][MAX_REPS];
        double r_write[MAX_REPS], r_memcpy[MAX_REPS], r_mem_write[MAX_REPS];
        double bytes = (double)nranks * (double)size;
        for (long r = 0; r < reps; r++) {
            const double *t = worst + N_METHODS * (warmup + r);
            for (int m = 0; m < N_METHODS; m++)
                bw[m][r] = bytes / (t[m] > 0 ? t[m] : 1e-9) / 1e9;
            r_write[r] = bw[M_CAIRN][r] / bw[M_WRITE][r];
            r_memcpy[r] = bw[M_CAIRN][r] / bw[M_MEMCPY][r];
            r_mem_write[r] = bw[M_MEMCPY][r] / bw[M_WRITE][r];
        }
        int nr = (int)reps;
        printf("# l1 %s: %d rank(s) x %ld MiB, io=%s, %ld rep(s) after %ld warm-up, "
               "base %s\n",
               label, nranks, size_mib, io_mode, reps, warmup, base);
        for (int m = 0; m < N_METHODS; m++) {
            printf("#   %-6s median %7.2f GB/s  min %7.2f  max %7.2f  (", method_name[m],
                   median(bw[m], nr), vmin(bw[m], nr), vmax(bw[m], nr));
            for (int r = 0; r < nr; r++)
                printf("%s%.2f", r ? " " : "", bw[m][r]);
            printf(")\n");
        }
        double cairn_bw = median(bw[M_CAIRN], nr);
        double memcpy_bw = median(bw[M_MEMCPY], nr);
        double rw = median(r_write, nr), rm = median(r_memcpy, nr);
        double rmw = median(r_mem_write, nr);
        printf("bench: l1.write.%s %.2f GB/s ratio=%.2f vs write\n", label, cairn_bw, rw);
        printf("bench: l1.write.%s %.2f GB/s ratio=%.2f vs memcpy\n", label, cairn_bw, rm);
        printf("bench: l1.memcpy.%s %.2f GB/s ratio=%.2f vs write\n", label, memcpy_bw, rmw);
        if (headline) {
            printf("bench: l1.write %.2f GB/s ratio=%.2f vs write\n", cairn_bw, rw);
            printf("bench: l1.write %.2f GB/s ratio=%.2f vs memcpy\n", cairn_bw, rm);
        }
        fflush(stdout);
    }

    free(local);
    free(worst);
    check_cairn(cairn_finalize(ctx), NULL, "cairn_finalize");
    free(copy);
    free(data);
    check_mpi(MPI_Finalize(), "MPI_Finalize");
    return 0;
}
