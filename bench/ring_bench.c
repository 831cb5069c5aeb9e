/*
 * ring_bench.c - the pipelined ring encode (ec_ring_encode) at a fixed
 * payload per member as the set grows, and a model of it for sets of 8 to
 * 1024 nodes with a core each (the paper's Fig. 6: encode time stays flat).
 *
 *   scripts/mpirun.sh NP build/bench/ring_bench [--size MiB] [--members 2,4,8,16]
 *       [--m M] [--model-m M] [--block BYTES] [--reps N] [--kernel auto|isal|matrix|bitmatrix]
 *
 * Measured runs. For each member count n (<= NP), ranks 0..n-1 form a set
 * and encode SIZE MiB each (xorshift data, read and parity stored by memcpy
 * callbacks, as from a mapped checkpoint file) with M parity rows; the other
 * ranks sleep (a non-blocking barrier polled every 2 ms), so n = 2 has a
 * core per member and larger n are emulated members sharing the machine's
 * cores. A run's time is the slowest member's, the figure the median of REPS
 * after one warm-up. With the cores shared, the comparable figure is the time
 * per byte of total work (n * SIZE):
 *   bench: ec.ring.nN T s ratio=R vs n2      R = (T_N / N) / (T_2 / 2)
 * and, as a detail, the time of ec_ring_decode with members 0..m-1 lost.
 *
 * Model. Rank 0 measures, per block, the compute of one ring step (read the
 * block from the payload + ec_encode_column into m rows) and the store of a
 * final row (memcpy); ranks 0 and 1 measure the transfer of the m rows (half
 * a ping-pong); each for block sizes from 1 KiB to BLOCK, doubling, and
 * interpolated between (the lower quartile of single-block samples: the
 * modelled node is dedicated, this machine is shared). It then replays
 * ring.c's schedule on one member of a set of n identical nodes (by symmetry
 * every member's timeline is the same): the items in ring.c's order (blocks
 * in pairs, the last three together; step by step, lane by lane), each
 * starting when the member is free and its partial parity has arrived from
 * the left, each send leaving when the link is free.
 * Transfers overlap compute (a NIC moves the bytes); "serial" charges them to
 * the CPU as well, as shared memory on one machine does. With the payload per
 * node fixed, chunk = SIZE / (n - m): n * nb steps of a shrinking block, so
 * the time stays flat as n grows. Sets above 256 members need GF(2^16), so
 * those use the w = 16 matrix kernel's measured compute.
 *   model: ec.ring.model.n1024 T s ratio=R vs n8
 * (a "model:" line, not "bench:": a figure computed from the measured costs,
 * not measured itself).
 * Lines starting with '#' are details for people.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "erasure/erasure.h"
#include "bench.h"

#define MIB ((size_t)1 << 20)
#define MAX_RUNS 16
#define MAX_REPS 100

static int rank, np;

/* A barrier that sleeps instead of spinning, so waiting ranks leave the cores
 * to the ones at work. */
static void polite_barrier(void)
{
    MPI_Request r;
    if (MPI_Ibarrier(MPI_COMM_WORLD, &r) != MPI_SUCCESS)
        die("MPI_Ibarrier failed");
    for (int done = 0;;) {
        MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        nanosleep(&(struct timespec){0, 2000000}, NULL);
    }
}

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/* ---- the measured ring ------------------------------------------------- */

typedef struct mem_io {
    const uint8_t *payload;
    uint64_t size;
    uint8_t *parity;   /* m rows of chunk */
    uint64_t chunk;
    uint8_t *restored; /* decode: where a lost member's payload goes */
} mem_io;

static int io_read(void *arg, uint64_t off, void *buf, size_t len, cn_err *err)
{
    mem_io *s = arg;
    size_t have = off < s->size ? (size_t)(s->size - off < len ? s->size - off : len) : 0;
    memcpy(buf, s->payload + off, have);
    memset((uint8_t *)buf + have, 0, len - have);
    return 0;
}

static int io_read_parity(void *arg, int stripe, int row, uint64_t off, void *buf, size_t len,
                          cn_err *err)
{
    mem_io *s = arg;
    memcpy(buf, s->parity + (size_t)row * s->chunk + off, len);
    return 0;
}

static int io_write_data(void *arg, uint64_t off, const void *buf, size_t len, cn_err *err)
{
    mem_io *s = arg;
    memcpy(s->restored + off, buf, len);
    return 0;
}

static int io_write_parity(void *arg, int stripe, int row, uint64_t off, const void *buf,
                           size_t len, cn_err *err)
{
    mem_io *s = arg;
    memcpy(s->parity + (size_t)row * s->chunk + off, buf, len);
    return 0;
}

/*
 * Encode on ranks 0..n-1 REPS times after a warm-up; median of the slowest
 * member's time. Then the same for a decode of the first m members (*DEC).
 */
static double measure_ring(int n, int m, int kernel, size_t block, int reps, const uint8_t *payload,
                           size_t size, uint64_t *chunk_out, double *dec)
{
    MPI_Comm set;
    MPI_Comm_split(MPI_COMM_WORLD, rank < n ? 0 : MPI_UNDEFINED, rank, &set);
    double t[MAX_REPS], td[MAX_REPS];
    if (rank < n) {
        MPI_Comm_set_errhandler(set, MPI_ERRORS_RETURN);
        ec_codec *c = NULL;
        cn_err err;
        if (ec_codec_new(n - m, m, n > 256 ? 16 : 8, kernel, &c, &err) != 0)
            die("ec_codec_new(k=%d, m=%d): %s", n - m, m, err.msg);
        uint64_t k = (uint64_t)(n - m), chunk = align_up((size + k - 1) / k, ec_codec_align(c));
        mem_io io = {payload, size, malloc((size_t)m * chunk), chunk, NULL};
        if (rank < m)
            io.restored = malloc((size_t)(n - m) * chunk);
        if (!io.parity || (rank < m && !io.restored))
            die("out of memory");
        memset(io.parity, 1, (size_t)m * chunk); /* fault the pages in */
        if (io.restored)
            memset(io.restored, 1, (size_t)(n - m) * chunk);
        ec_ring_io rio = {io_read, io_write_parity, io_read_parity, io_write_data, &io, false};
        for (int r = -1; r < reps; r++) {
            MPI_Barrier(set);
            double t0 = now();
            int rc = ec_ring_encode(set, c, chunk, block, &rio, &err);
            double dt = now() - t0, worst = 0;
            if (rc != 0)
                die("ec_ring_encode: %s", err.msg);
            MPI_Allreduce(&dt, &worst, 1, MPI_DOUBLE, MPI_MAX, set);
            if (r >= 0)
                t[r] = worst;
        }
        bool lost[EC_MAX_SHARDS] = {false};
        for (int y = 0; y < m; y++)
            lost[y] = true;
        for (int r = -1; r < reps; r++) {
            MPI_Barrier(set);
            double t0 = now();
            int rc = ec_ring_decode(set, c, chunk, block, lost, &rio, &err);
            double dt = now() - t0, worst = 0;
            if (rc != 0)
                die("ec_ring_decode: %s", err.msg);
            MPI_Allreduce(&dt, &worst, 1, MPI_DOUBLE, MPI_MAX, set);
            if (r >= 0)
                td[r] = worst;
        }
        *dec = median(td, reps);
        *chunk_out = chunk;
        free(io.restored);
        free(io.parity);
        ec_codec_free(c);
        MPI_Comm_free(&set);
    }
    polite_barrier();
    return rank < n ? median(t, reps) : 0;
}

/* ---- the model --------------------------------------------------------- */

/* Seconds against bytes, measured at doubling sizes, linear in between. */
#define CURVE_MAX 32
typedef struct curve {
    int n;
    double len[CURVE_MAX], t[CURVE_MAX];
} curve;

static double at(const curve *c, double len)
{
    int i = 1;
    while (i < c->n - 1 && len > c->len[i])
        i++;
    double t = c->t[i - 1] +
               (c->t[i] - c->t[i - 1]) * (len - c->len[i - 1]) / (c->len[i] - c->len[i - 1]);
    return t > 0 ? t : 0;
}

/*
 * Model inputs are the lower quartile of single-block samples: this machine
 * is shared (and virtual), and the quartile ignores the slices when another
 * process had the core, which a dedicated node would not see.
 */
#define SAMPLES 2048

static double quartile(double *t, size_t n)
{
    qsort(t, n, sizeof *t, cmp_double);
    return t[n / 4];
}

/* Per block of LEN: read from the payload + column update into m rows. */
static double time_compute(const ec_codec *c, int k, int m, const uint8_t *payload, size_t size,
                           size_t len)
{
    uint8_t *data = aligned_alloc(64, len), *rows = aligned_alloc(64, (size_t)m * len);
    double *t = malloc(sizeof *t * SAMPLES);
    if (!data || !rows || !t)
        die("out of memory");
    uint8_t *par[EC_MAX_SHARDS];
    for (int r = 0; r < m; r++)
        par[r] = rows + (size_t)r * len;
    size_t nblk = size / len, ns = 0;
    for (int pass = 0; ns < SAMPLES; pass++)
        for (size_t i = 0; i < nblk && ns < SAMPLES; i++) {
            double t0 = now();
            memcpy(data, payload + i * len, len);
            if (ec_encode_column(c, (int)(i % (size_t)k), data, par, len, i % (size_t)k == 0))
                die("ec_encode_column failed");
            if (pass > 0 || i >= 16) /* the first few warm up */
                t[ns++] = now() - t0;
        }
    double med = quartile(t, ns);
    free(data);
    free(rows);
    free(t);
    return med;
}

/* Per block of LEN: store a final row (memcpy into a large parity file image). */
static double time_store(uint8_t *big, size_t size, size_t len)
{
    uint8_t *row = aligned_alloc(64, len);
    double *t = malloc(sizeof *t * SAMPLES);
    if (!row || !t)
        die("out of memory");
    memset(row, 7, len);
    size_t nblk = size / len, ns = 0;
    for (int pass = 0; ns < SAMPLES; pass++)
        for (size_t i = 0; i < nblk && ns < SAMPLES; i++) {
            double t0 = now();
            memcpy(big + i * len, row, len);
            if (pass > 0 || i >= 16)
                t[ns++] = now() - t0;
        }
    double med = quartile(t, ns);
    free(row);
    free(t);
    return med;
}

/* One-way time of LEN bytes between ranks 0 and 1 (half a ping-pong). */
static double time_transfer(size_t len)
{
    uint8_t *buf = aligned_alloc(64, len);
    int iters = len >= (1u << 20) ? 100 : 400;
    double *t = malloc(sizeof *t * (size_t)iters);
    if (!buf || !t)
        die("out of memory");
    memset(buf, 1, len);
    for (int i = -50; i < iters; i++) { /* the first 50 warm up */
        double t0 = now();
        if (rank == 0) {
            MPI_Send(buf, (int)len, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)len, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int)len, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)len, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
        if (i >= 0)
            t[i] = (now() - t0) / 2;
    }
    double med = quartile(t, (size_t)iters);
    free(buf);
    free(t);
    return med;
}

typedef struct costs {
    curve compute, store, transfer; /* transfer: against the message (m rows) */
} costs;

/*
 * Replay ring.c's schedule for one member of a set of N identical nodes and
 * return its encode time. Block size and grouping as in ring.c (align 8).
 */
static double simulate(int n, int m, uint64_t size, size_t block, const costs *cs, bool serial,
                       uint64_t *chunk_out, uint64_t *nb_out)
{
    int k = n - m;
    uint64_t chunk = align_up((size + (uint64_t)k - 1) / (uint64_t)k, 8);
    uint64_t blk = block / 8 * 8;
    if (blk > chunk / 2)
        blk = align_up(chunk / 2, 8);
    if (blk == 0)
        blk = 8;
    uint64_t nb = (chunk + blk - 1) / blk;
    *chunk_out = chunk;
    *nb_out = nb;
    double cpu = 0, link = 0;
    for (uint64_t base = 0; base < nb;) {
        uint64_t left = nb - base;
        int lanes = left == 3 ? 3 : left >= 2 ? 2 : 1;
        double arrive[3] = {0, 0, 0};
        for (int s = 0; s < n; s++)
            for (int l = 0; l < lanes; l++) {
                uint64_t b = base + (uint64_t)l;
                double len = (double)(chunk - b * blk < blk ? chunk - b * blk : blk);
                double start = cpu > arrive[l] || s == 0 ? cpu : arrive[l];
                cpu = start + at(s < k ? &cs->compute : &cs->store, len);
                if (s + 1 < n) {
                    int lo = s + 1 > k ? s + 1 - k : 0;
                    double x = at(&cs->transfer, (double)(m - lo) * len);
                    double leave = cpu > link ? cpu : link;
                    arrive[l] = link = leave + x;
                    if (serial)
                        cpu += x;
                }
            }
        base += (uint64_t)lanes;
    }
    return cpu;
}

static void parse_members(const char *s, int *out, int *count)
{
    *count = 0;
    for (const char *p = s; *p && *count < MAX_RUNS;) {
        char *end = NULL;
        long v = strtol(p, &end, 10);
        if (end == p || v < 2 || v > EC_MAX_SHARDS)
            die("--members: bad list '%s'", s);
        out[(*count)++] = (int)v;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            die("--members: bad list '%s'", s);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    bench_rank = rank;
    bench_prog = "ring_bench";
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    size_t size = 64 * MIB, block = 64 << 10;
    int m = 1, model_m = 2, reps = 3, kernel = EC_KERNEL_AUTO, members[MAX_RUNS], nruns = 0;
    parse_members("2,4,8,16", members, &nruns);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            die("%s needs a value", a);
        if (!strcmp(a, "--size"))
            size = (size_t)parse_long(v, a, 1, 65536) * MIB;
        else if (!strcmp(a, "--members"))
            parse_members(v, members, &nruns);
        else if (!strcmp(a, "--m"))
            m = (int)parse_long(v, a, 1, 64);
        else if (!strcmp(a, "--model-m"))
            model_m = (int)parse_long(v, a, 1, 64);
        else if (!strcmp(a, "--block"))
            block = (size_t)parse_long(v, a, 4096, 1 << 30);
        else if (!strcmp(a, "--reps"))
            reps = (int)parse_long(v, a, 1, MAX_REPS);
        else if (!strcmp(a, "--kernel")) {
            kernel = -1;
            for (int kn = EC_KERNEL_AUTO; kn <= EC_KERNEL_BITMATRIX; kn++)
                if (!strcmp(v, ec_kernel_name(kn)))
                    kernel = kn;
            if (kernel < 0)
                die("--kernel: unknown kernel '%s'", v);
        } else
            die("unknown option %s", a);
        i++;
    }
    if (np < 2)
        die("needs at least 2 ranks (the n = 2 baseline and the ping-pong)");
    if (members[0] != 2)
        die("--members must start with 2 (the baseline)");

    uint8_t *payload = malloc(size);
    if (!payload)
        die("out of memory for %zu MiB", size / MIB);
    fill(payload, size, rank);

    /* ---- measured runs ---- */
    double t_run[MAX_RUNS] = {0}, t_dec[MAX_RUNS] = {0};
    uint64_t chunk_run[MAX_RUNS] = {0};
    if (rank == 0)
        printf("# ring encode: %zu MiB per member, m=%d, block %zu, kernel %s, median of %d; "
               "%d ranks on this machine\n",
               size / MIB, m, block, ec_kernel_name(kernel), reps, np);
    for (int i = 0; i < nruns; i++) {
        int n = members[i];
        if (n > np || n <= m) {
            if (rank == 0)
                printf("# skipped n=%d: %s\n", n, n > np ? "more members than ranks" : "n <= m");
            continue;
        }
        t_run[i] = measure_ring(n, m, kernel, block, reps, payload, size, &chunk_run[i], &t_dec[i]);
        if (rank != 0)
            continue;
        double per = t_run[i] / ((double)n * (double)size);
        printf("# ec.ring.n%d: %.3f s, chunk %llu, %.3f ns per byte of total work "
               "(%.2f GB/s of payload); decode of %d lost: %.3f s (%.2fx encode)\n",
               n, t_run[i], (unsigned long long)chunk_run[i], per * 1e9, 1e-9 / per, m,
               t_dec[i], t_dec[i] / t_run[i]);
        if (i > 0 && t_run[0] > 0)
            printf("bench: ec.ring.n%d %.3f s ratio=%.2f vs n2\n", n, t_run[i],
                   per / (t_run[0] / (2.0 * (double)size)));
        fflush(stdout);
    }

    /* ---- model inputs: per-block compute, store, transfer ---- */
    costs cs8[2], cs16;      /* cs8[0]: m = 1 (the model check), cs8[1]: model_m */
    int mm[2] = {1, model_m};
    memset(cs8, 0, sizeof cs8);
    memset(&cs16, 0, sizeof cs16);
    int npts = 0;
    double lens[CURVE_MAX];
    for (size_t len = 1024; len < block && npts < CURVE_MAX - 1; len *= 2)
        lens[npts++] = (double)len;
    lens[npts++] = (double)block;
    if (rank == 0) {
        cn_err err;
        for (int v = 0; v < 3; v++) {
            int mv = v == 2 ? model_m : mm[v], w = v == 2 ? 16 : 8;
            int k = v == 2 ? 1024 - model_m : 8;
            curve *cv = v == 2 ? &cs16.compute : &cs8[v].compute;
            ec_codec *c = NULL;
            if (ec_codec_new(k, mv, w, v == 2 ? EC_KERNEL_MATRIX : kernel, &c, &err) != 0)
                die("ec_codec_new(k=%d, m=%d, w=%d): %s", k, mv, w, err.msg);
            size_t align = ec_codec_align(c);
            cv->n = npts;
            for (int j = 0; j < npts; j++) {
                size_t len = (size_t)align_up((uint64_t)lens[j], align);
                cv->len[j] = (double)len;
                cv->t[j] = time_compute(c, k, mv, payload, size, len);
            }
            ec_codec_free(c);
        }
        uint8_t *big = malloc(size);
        if (!big)
            die("out of memory");
        memset(big, 1, size); /* not 0: malloc + memset 0 becomes calloc, untouched pages */
        cs8[0].store.n = npts;
        for (int j = 0; j < npts; j++) {
            cs8[0].store.len[j] = lens[j];
            cs8[0].store.t[j] = time_store(big, size, (size_t)lens[j]);
        }
        free(big);
        cs8[1].store = cs16.store = cs8[0].store;
    }
    polite_barrier();
    if (rank <= 1) {
        for (int v = 0; v < 2; v++) {
            cs8[v].transfer.n = npts;
            for (int j = 0; j < npts; j++) {
                cs8[v].transfer.len[j] = (double)mm[v] * lens[j];
                cs8[v].transfer.t[j] = time_transfer((size_t)mm[v] * (size_t)lens[j]);
            }
        }
        cs16.transfer = cs8[1].transfer;
    }
    polite_barrier();

    if (rank == 0) {
        for (int v = 0; v < 2; v++) {
            printf("# model inputs m=%d (us per block of", mm[v]);
            for (int j = 0; j < npts; j++)
                printf(" %.0fK", lens[j] / 1024);
            printf("):\n#   compute");
            for (int j = 0; j < npts; j++)
                printf(" %.1f", cs8[v].compute.t[j] * 1e6);
            printf("\n#   store  ");
            for (int j = 0; j < npts; j++)
                printf(" %.1f", cs8[v].store.t[j] * 1e6);
            printf("\n#   transfer of m rows");
            for (int j = 0; j < npts; j++)
                printf(" %.1f", cs8[v].transfer.t[j] * 1e6);
            printf("\n");
        }
        printf("#   compute, m=%d, w=16 matrix kernel (sets above 256):", model_m);
        for (int j = 0; j < npts; j++)
            printf(" %.1f", cs16.compute.t[j] * 1e6);
        printf("\n");

        uint64_t chunk, nb;
        if (t_run[0] > 0) {
            double ov = simulate(2, 1, size, block, &cs8[0], false, &chunk, &nb);
            double se = simulate(2, 1, size, block, &cs8[0], true, &chunk, &nb);
            printf("# model check n=2 m=1: %.3f s overlapped, %.3f s serial; measured %.3f s "
                   "(%.2fx the overlapped model)\n",
                   ov, se, t_run[0], t_run[0] / ov);
            printf("#   (here MPI moves the bytes with the members' CPUs, and only inside "
                   "MPI calls: rendezvous handshakes wait for the peer's next call; a NIC "
                   "would not)\n");
        }
        double t8 = 0, t8w8 = 0, t1024 = 0, t1024w8 = 0;
        printf("# model, %zu MiB per node, m=%d, block %zu, one core per node "
               "(n > 256: w=16):\n",
               size / MIB, model_m, block);
        for (int n = 8; n <= 1024; n *= 2) {
            const costs *c = n > 256 ? &cs16 : &cs8[1];
            double t = simulate(n, model_m, size, block, c, false, &chunk, &nb);
            double ts = simulate(n, model_m, size, block, c, true, &chunk, &nb);
            double tw8 = simulate(n, model_m, size, block, &cs8[1], false, &chunk, &nb);
            printf("#   n=%5d  chunk %9llu  blocks %5llu  steps %7llu  %.3f s  "
                   "(serial %.3f s, w=8 costs %.3f s)\n",
                   n, (unsigned long long)chunk, (unsigned long long)nb,
                   (unsigned long long)(nb * (uint64_t)n), t, ts, tw8);
            if (n == 8)
                t8 = t, t8w8 = tw8;
            if (n == 1024)
                t1024 = t, t1024w8 = tw8;
        }
        printf("# model n1024/n8 with w=8 costs throughout (the pipeline alone): %.2f\n",
               t1024w8 / t8w8);
        printf("model: ec.ring.model.n1024 %.3f s ratio=%.2f vs n8\n", t1024, t1024 / t8);
        fflush(stdout);
    }
    free(payload);
    MPI_Finalize();
    return 0;
}
