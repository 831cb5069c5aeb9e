/*
 * z_bench.c - the compression layer (src/compress) on three in-memory data
 * sets: every codec against zlib -6, the write pipeline against its slowest
 * stage and against compress-then-write, and the automatic choice against
 * the best fixed codec, all measured in the same run.
 *
 *   scripts/mpirun.sh 1 build/bench/z_bench [--size MiB] [--reps N] [--warmup N]
 *       [--heat-steps N] [--scale-size MiB] [--egm96 PATH] [--pipe-codec NAME]
 *   build/bench/z_bench --heat-only FILE [--size MiB] [--heat-steps N]
 *
 * One rank (MPI only for bench.h's die); files go to $CAIRN_BASE (default
 * /dev/shm), a fresh file per run, unlinked after it.
 *
 * Data sets:
 *   heat    examples/heat's field: its 5-point Jacobi update and fixed cells
 *           (top edge 1, other edges 0, a disc of 2) on a SIDE x SIDE grid of
 *           doubles, SIDE = sqrt(SIZE / 8), after --heat-steps steps (default
 *           1600: about the share of cells still exactly 0 that the demo's
 *           1024 x 1024 field has after its 400 steps; printed). Only cells
 *           that can be nonzero yet are updated, which changes no bit:
 *           --heat-only writes the field for `cmp` against examples/heat --out
 *           (--size 8 is the demo's 1024 x 1024).
 *   egm96   proj-data's EGM96 geoid grid (721 x 1440 big-endian float32 after
 *           a 40-byte header) as host floats; skipped with a note if absent.
 *   random  SIZE MiB of xorshift bytes (CAIRN_UINT8): incompressible.
 *
 * Sections (figures are medians over --reps repetitions; a ratio is the
 * median of per-repetition ratios of runs made side by side; pipeline and
 * auto runs come after --warmup discarded repetitions):
 *   codec     1 MiB frames, one thread, cz_frame_encode then cz_frame_parse +
 *             cz_frame_decode (checksum included, as on restart); ratio is
 *             raw / stored with frame headers; MB/s are 1e6 raw bytes per
 *             second. Every decode is compared with the data. Then egm96
 *             through cz_write with fpzip as a plain array and with its 2-D
 *             shape (frames of whole rows), both read back and compared.
 *   pipeline  heat through cz_write (zstd, 2 threads, 1 MiB buffers) into a
 *             file, against its slowest stage run alone (compress: the same
 *             cz_write into a sink that drops the bytes; write: the same
 *             frames pwritten one by one) and against the serial way (encode
 *             everything in one thread into memory, then write it). Then a
 *             table over buffer sizes and thread counts on the middle
 *             --scale-size MiB of heat.
 *   auto      per data set, the checkpoint time (cz_write into a file, 2
 *             threads, 1 MiB) with cz_choose's pick against raw and every
 *             fixed codec; auto's time includes the time cz_choose took
 *             (sampling and choosing); the storage bandwidth cz_choose is
 *             told is this run's pwrite of the raw data set into a file. The same choice
 *             against a 10x slower store is reported as a model only (eq. 3
 *             of the paper with this run's compress times and sizes).
 * Every file a pipeline wrote is read back once per codec and data set and
 * decoded with cz_read; a mismatch aborts the run.
 *
 * Output: `bench: NAME VALUE UNIT ratio=R vs BASELINE` lines:
 *   codec.SET.CODEC.{ratio x, comp MB/s, decomp MB/s}   vs zlib6,
 *   codec.egm96.fpzip.shape x (through cz_write with its 2-D shape) vs fpzip_1d,
 *   pipeline.time s vs slowest, pipeline.serial s vs serial,
 *   pipeline.buffer.best KiB vs 1MiB, codec.auto.SET s vs best_fixed (per data
 *   set), then codec.auto s vs best_fixed (summed over the sets).
 * Lines starting with '#' are details.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mpi.h>

#include "bench_data.h"
#include "compress/compress.h"

#define MAX_REPS 100
#define BUF ((uint32_t)MIB)   /* the pipeline buffer of every section but the table */
#define THREADS 2             /* this machine's cores */
#define MAX_SETS 3
#define MAX_METHODS 16
#define SLOW 10.0             /* the modelled store is this much slower */

typedef struct dset {
    const char *name;
    uint8_t *p;
    size_t size;
    uint8_t type;
} dset;

/* Frames encoded back to back in memory, as the serial way stores them. */
typedef struct frames {
    uint8_t *buf;
    size_t *len;      /* each frame's size */
    size_t n, used;   /* frames, bytes */
    size_t size;      /* raw bytes it has room for */
    uint32_t bs;      /* in buffers of this size */
} frames;

static struct {
    int reps, warmup;
    const char *base;
    unsigned seq;     /* for fresh file names */
    uint8_t *dst;     /* decode target, the largest data set's size */
    uint8_t *back;    /* a file read back */
    size_t back_cap;
    uint8_t *scratch; /* CZ_MAX_BUF */
} g;

/* ---- small helpers ------------------------------------------------------- */

static double med(const double *v, int n) { return median(v, n); }

static void tmp_path(char *path, size_t cap)
{
    int n = snprintf(path, cap, "%s/zbench-%d-%u.tmp", g.base, (int)getpid(), g.seq++);
    if (n < 0 || (size_t)n >= cap)
        die("CAIRN_BASE path too long");
}

static int open_new(const char *path)
{
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0)
        die("open %s: %s", path, strerror(errno));
    return fd;
}

static void pwrite_all(int fd, const uint8_t *p, size_t len, uint64_t off, const char *path)
{
    while (len > 0) {
        ssize_t w = pwrite(fd, p, len, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            die("pwrite %s: %s", path, w < 0 ? strerror(errno) : "wrote nothing");
        p += w;
        len -= (size_t)w;
        off += (uint64_t)w;
    }
}

static void close_file(int fd, const char *path)
{
    if (fdatasync(fd) != 0)
        die("fdatasync %s: %s", path, strerror(errno));
    if (close(fd) != 0)
        die("close %s: %s", path, strerror(errno));
}

static void unlink_file(const char *path)
{
    if (unlink(path) != 0)
        die("unlink %s: %s", path, strerror(errno));
}

/* ---- frames, files, pipelines ---------------------------------------------- */

static void frames_alloc(frames *f, size_t size, uint32_t bs)
{
    size_t nf = (size + bs - 1) / bs;
    f->buf = xmalloc(nf * cz_frame_bound(bs));
    f->len = xmalloc(nf * sizeof *f->len);
    f->n = f->used = 0;
    f->size = size, f->bs = bs;
}

static void frames_free(frames *f)
{
    free(f->buf);
    free(f->len);
}

/* Encode D in BS-byte buffers, one thread, into F. Returns seconds. */
static double encode_all(frames *f, const dset *d, int codec, int level, uint32_t bs)
{
    if (d->size > f->size || bs < f->bs)
        die("%s: %zu bytes in %u-byte buffers do not fit frames made for %zu in %u", d->name,
            d->size, bs, f->size, f->bs);
    double t0 = now();
    f->n = f->used = 0;
    for (size_t off = 0; off < d->size; off += bs) {
        size_t len = d->size - off < bs ? d->size - off : bs;
        size_t k = cz_frame_encode(codec, d->type, level, d->p + off, len, f->buf + f->used,
                                   g.scratch);
        if (k == 0)
            die("%s: %s: cz_frame_encode of %zu bytes made no frame", d->name,
                cz_codec_name(codec), len);
        f->len[f->n++] = k;
        f->used += k;
    }
    return now() - t0;
}

/* Decode F (frames of CODEC) into g.dst and compare with D. Returns seconds. */
static double decode_all(const frames *f, const dset *d, int codec)
{
    cn_err err = {0};
    size_t at = 0, out = 0;
    double t0 = now();
    for (size_t i = 0; i < f->n; i++) {
        cz_frame fr;
        size_t used;
        if (cz_frame_parse(f->buf + at, f->used - at, codec, &fr, &used, &err) != 0)
            die("%s: %s frame %zu: %s", d->name, cz_codec_name(codec), i, err.msg);
        if (out + fr.raw_len > d->size)
            die("%s: %s frames decode to more than %zu bytes", d->name, cz_codec_name(codec),
                d->size);
        if (cz_frame_decode(&fr, g.dst + out, g.scratch, &err) != 0)
            die("%s: %s frame %zu: %s", d->name, cz_codec_name(codec), i, err.msg);
        at += used;
        out += fr.raw_len;
    }
    double t = now() - t0;
    if (out != d->size || at != f->used || memcmp(g.dst, d->p, d->size) != 0)
        die("%s: %s: decoded data differ from the original", d->name, cz_codec_name(codec));
    return t;
}

/* pwrite F's frames one by one into a fresh file. Returns seconds. */
static double write_frames(const frames *f)
{
    char path[PATH_MAX];
    tmp_path(path, sizeof path);
    double t0 = now();
    int fd = open_new(path);
    uint64_t off = 0;
    for (size_t i = 0; i < f->n; i++) {
        pwrite_all(fd, f->buf + off, f->len[i], off, path);
        off += f->len[i];
    }
    close_file(fd, path);
    double t = now() - t0;
    unlink_file(path);
    return t;
}

/* pwrite D's raw bytes into a fresh file. Returns seconds. */
static double write_raw(const dset *d)
{
    char path[PATH_MAX];
    tmp_path(path, sizeof path);
    double t0 = now();
    int fd = open_new(path);
    pwrite_all(fd, d->p, d->size, 0, path);
    close_file(fd, path);
    double t = now() - t0;
    unlink_file(path);
    return t;
}

typedef struct fsink {
    int fd;
    uint64_t off;
    const char *path;
} fsink;

static int sink_file(void *arg, uint32_t item, const void *buf, size_t len, cn_err *err)
{
    fsink *s = arg;
    const uint8_t *p = buf;
    while (len > 0) {
        ssize_t w = pwrite(s->fd, p, len, (off_t)s->off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return cn_fail_errno(err, w < 0 ? errno : EIO, "pwrite %s", s->path);
        p += w;
        len -= (size_t)w;
        s->off += (uint64_t)w;
    }
    return 0;
}

static int sink_drop(void *arg, uint32_t item, const void *buf, size_t len, cn_err *err)
{
    return 0;
}

/* Stored bytes appended to g.back; ARG is the fill. */
static int sink_back(void *arg, uint32_t item, const void *buf, size_t len, cn_err *err)
{
    size_t *at = arg;
    if (*at + len > g.back_cap)
        return cn_fail(err, CAIRN_ENOSPC, "z_bench: read-back buffer full");
    memcpy(g.back + *at, buf, len);
    *at += len;
    return 0;
}

/* fpzip through the write pipeline on the 2-D set D (ROWS x COLS): as a
 * plain array, then with its shape; each read back and compared. */
static void fpzip_shape_section(const dset *d, uint32_t rows, uint32_t cols)
{
    cz_shape sh = {.type = d->type, .ndims = 2, .dims = {rows, cols}};
    cz_opts o = {.buf_size = BUF, .threads = THREADS, .level = 0};
    double ratio[2];
    for (int k = 0; k < 2; k++) {
        cz_item it = {.ptr = d->p, .size = d->size, .type = d->type, .codec = CZ_FPZIP,
                      .shape = k ? &sh : NULL};
        size_t at = 0;
        cn_err err = {0};
        if (cz_write(&it, 1, &o, sink_back, &at, NULL, &err) != 0)
            die("fpzip %s: %s", d->name, err.msg);
        cz_dest dst = {g.dst, d->size};
        cz_stream s = {.stored = g.back, .stored_size = it.stored, .codec = CZ_FPZIP,
                       .type = d->type, .frame_raw = it.frame_raw, .dest = &dst, .ndest = 1,
                       .name = d->name};
        if (cz_read(&s, 1, THREADS, &err) != 0 || memcmp(g.dst, d->p, d->size) != 0)
            die("fpzip %s: the %s stream does not read back", d->name, k ? "shaped" : "plain");
        ratio[k] = (double)d->size / (double)it.stored;
    }
    printf("# fpzip %s: %u x %u through cz_write (1 MiB buffers, frames of whole rows with "
           "the shape): as a plain array %.3fx, with its 2-D shape %.3fx; both read back "
           "bit-exact\n", d->name, rows, cols, ratio[0], ratio[1]);
    printf("bench: codec.%s.fpzip.shape %.3f x ratio=%.2f vs fpzip_1d\n", d->name, ratio[1],
           ratio[1] / ratio[0]);
    fflush(stdout);
}

/* Read PATH back and check that it restores D: raw bytes, or cz_read. */
static void verify_file(const char *path, const dset *d, const cz_item *it)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0)
        die("%s: %s", path, strerror(errno));
    size_t len = (size_t)sb.st_size, got = 0;
    if (len != it->stored || len > g.back_cap)
        die("%s: %zu bytes, cz_write reported %llu", path, len,
            (unsigned long long)it->stored);
    while (got < len) {
        ssize_t r = read(fd, g.back + got, len - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            die("read %s: %s", path, r < 0 ? strerror(errno) : "short");
        got += (size_t)r;
    }
    close(fd);
    const char *what = cz_codec_name(it->codec);
    if (it->codec == CZ_RAW) {
        if (len != d->size || memcmp(g.back, d->p, len) != 0)
            die("%s: %s: the raw file differs from the data", d->name, what);
        return;
    }
    for (size_t k = 0; k < d->size; k++) /* no byte of the target right by chance */
        g.dst[k] = (uint8_t)~d->p[k];
    cz_dest dest = {g.dst, d->size};
    cz_stream s = {.stored = g.back, .stored_size = len, .codec = it->codec, .type = d->type,
                   .frame_raw = it->frame_raw, .dest = &dest, .ndest = 1, .name = d->name};
    cn_err err = {0};
    if (it->packed || it->frame_raw != d->size)
        die("%s: %s: cz_write says packed=%d frame_raw=%llu for one item of %zu bytes", d->name,
            what, it->packed, (unsigned long long)it->frame_raw, d->size);
    if (cz_read(&s, 1, THREADS, &err) != 0)
        die("%s: %s: cz_read of the written file: %s", d->name, what, err.msg);
    if (memcmp(g.dst, d->p, d->size) != 0)
        die("%s: %s: the file decodes to data that differ from the original", d->name, what);
}

/* cz_write of D with CODEC into a fresh file (open to close). Returns seconds. */
static double pipe_file(const dset *d, int codec, const cz_opts *o, bool verify, cz_stats *st)
{
    char path[PATH_MAX];
    tmp_path(path, sizeof path);
    cz_item it = {.ptr = d->p, .size = d->size, .type = d->type, .codec = (uint8_t)codec};
    cn_err err = {0};
    double t0 = now();
    fsink s = {open_new(path), 0, path};
    if (cz_write(&it, 1, o, sink_file, &s, st, &err) != 0)
        die("%s: cz_write (%s) into %s: %s", d->name, cz_codec_name(codec), path, err.msg);
    close_file(s.fd, path);
    double t = now() - t0;
    if (s.off != it.stored || s.off != st->stored)
        die("%s: %s: sink got %llu bytes, cz_write reports %llu", d->name,
            cz_codec_name(codec), (unsigned long long)s.off, (unsigned long long)it.stored);
    if (verify)
        verify_file(path, d, &it);
    unlink_file(path);
    return t;
}

/* cz_write of D with CODEC into a sink that drops the bytes. Returns seconds. */
static double pipe_drop(const dset *d, int codec, const cz_opts *o, cz_stats *st)
{
    cz_item it = {.ptr = d->p, .size = d->size, .type = d->type, .codec = (uint8_t)codec};
    cn_err err = {0};
    double t0 = now();
    if (cz_write(&it, 1, o, sink_drop, NULL, st, &err) != 0)
        die("%s: cz_write (%s): %s", d->name, cz_codec_name(codec), err.msg);
    return now() - t0;
}

/* ---- codec table ------------------------------------------------------------ */

typedef struct zcodec {
    int id, level;
    char label[32];
} zcodec;

/* zlib -6 first (the baseline), then every other codec that takes TYPE, and
 * zstd at level 3 after zstd's default. */
static int codec_list(uint8_t type, zcodec *c)
{
    int n = 0;
    c[n++] = (zcodec){CZ_ZLIB, 6, "zlib"};
    for (int id = CZ_ZLIB + 1; id < CZ_NCODECS; id++) {
        if (!cz_codec_accepts(id, type) || cz_is_lossy(id)) /* lossy: bench/lossy_bench.c */
            continue;
        c[n] = (zcodec){id, 0, ""};
        snprintf(c[n].label, sizeof c[n].label, "%s", cz_codec_name(id));
        n++;
        if (id == CZ_ZSTD)
            c[n++] = (zcodec){CZ_ZSTD, 3, "zstd3"};
    }
    return n;
}

static void codec_section(const dset *d, frames *f)
{
    zcodec c[MAX_METHODS];
    int nc = codec_list(d->type, c), reps = g.reps;
    static double ct[MAX_METHODS][MAX_REPS], dt[MAX_METHODS][MAX_REPS];
    static double cs[MAX_METHODS][MAX_REPS], ds[MAX_METHODS][MAX_REPS];
    double ratio[MAX_METHODS];
    for (int r = 0; r < reps; r++)
        for (int k = 0; k < nc; k++) {
            ct[k][r] = encode_all(f, d, c[k].id, c[k].level, BUF);
            ratio[k] = (double)d->size / (double)f->used;
            dt[k][r] = decode_all(f, d, c[k].id);
            cs[k][r] = (double)d->size / 1e6 / ct[k][r];
            ds[k][r] = (double)d->size / 1e6 / dt[k][r];
        }
    printf("# codec %s: %.2f MiB of %s in 1 MiB frames, one thread, median of %d; zlib at "
           "level 6, others at their default (zstd 1), zstd3 = zstd at level 3\n",
           d->name, (double)d->size / MIB, d->type == CAIRN_DOUBLE  ? "double"
                                           : d->type == CAIRN_FLOAT ? "float"
                                                                    : "uint8",
           reps);
    printf("#   %-13s %8s %10s %12s\n", "codec", "ratio", "comp MB/s", "decomp MB/s");
    for (int k = 0; k < nc; k++)
        printf("#   %-13s %8.3f %10.0f %12.0f\n", c[k].label, ratio[k], med(cs[k], reps),
               med(ds[k], reps));
    for (int k = 0; k < nc; k++) {
        printf("bench: codec.%s.%s.ratio %.3f x ratio=%.2f vs zlib6\n", d->name, c[k].label,
               ratio[k], ratio[k] / ratio[0]);
        printf("bench: codec.%s.%s.comp %.0f MB/s ratio=%.2f vs zlib6\n", d->name, c[k].label,
               med(cs[k], reps), med_ratio(cs[k], cs[0], reps));
        printf("bench: codec.%s.%s.decomp %.0f MB/s ratio=%.2f vs zlib6\n", d->name, c[k].label,
               med(ds[k], reps), med_ratio(ds[k], ds[0], reps));
    }
    fflush(stdout);
}

/* ---- pipeline ---------------------------------------------------------------- */

typedef struct ptimes {
    double pipe[MAX_REPS], comp[MAX_REPS], write[MAX_REPS], slowest[MAX_REPS];
} ptimes;

/*
 * The table: pipelined, compress-only and write-only times of D with CODEC
 * for every buffer size in BUFS (THREADS threads) and every thread count in
 * THR (1 MiB buffers). Each repetition runs every configuration once, so
 * drift on a shared machine hits them alike.
 */
static void pipe_table(const dset *d, int codec, const uint32_t *bufs, int nb, const int *thr,
                       int nt, ptimes *pt, double *ratio)
{
    frames fb[MAX_METHODS];
    int one_mib = -1;
    for (int b = 0; b < nb; b++) {
        frames_alloc(&fb[b], d->size, bufs[b]);
        encode_all(&fb[b], d, codec, 0, bufs[b]);
        ratio[b] = (double)d->size / (double)fb[b].used;
        if (bufs[b] == BUF)
            one_mib = b;
    }
    if (one_mib < 0)
        die("the table has no 1 MiB buffer");
    for (int r = -g.warmup; r < g.reps; r++) {
        for (int c = 0; c < nb + nt; c++) {
            cz_opts o = {.buf_size = c < nb ? bufs[c] : BUF, .threads = c < nb ? THREADS
                                                                             : thr[c - nb]};
            const frames *f = &fb[c < nb ? c : one_mib];
            cz_stats st;
            double tc = pipe_drop(d, codec, &o, &st);
            double tw = write_frames(f);
            double tp = pipe_file(d, codec, &o, r == 0, &st);
            if (st.stored != f->used)
                die("%s: %s: the pipeline stored %llu bytes, the same frames one by one %zu",
                    d->name, cz_codec_name(codec), (unsigned long long)st.stored, f->used);
            if (r < 0)
                continue;
            pt[c].comp[r] = tc, pt[c].write[r] = tw, pt[c].pipe[r] = tp;
            pt[c].slowest[r] = tc > tw ? tc : tw;
        }
    }
    for (int b = 0; b < nb; b++)
        frames_free(&fb[b]);
}

static void pipeline_section(const dset *heat, int codec, size_t scale_size)
{
    int reps = g.reps;
    const char *cn = cz_codec_name(codec);
    cz_opts o = {.buf_size = BUF, .threads = THREADS, .level = 0};

    /* The headline: pipelined vs slowest stage vs the serial way, side by side. */
    frames f;
    frames_alloc(&f, heat->size, BUF);
    double tp[MAX_REPS], tc[MAX_REPS], tw[MAX_REPS], tsc[MAX_REPS], slow[MAX_REPS],
        serial[MAX_REPS];
    cz_stats st;
    for (int r = -g.warmup; r < reps; r++) {
        double c = pipe_drop(heat, codec, &o, &st);
        double sc = encode_all(&f, heat, codec, 0, BUF);
        double w = write_frames(&f);
        double p = pipe_file(heat, codec, &o, r == 0, &st);
        if (st.stored != f.used)
            die("heat: the pipeline stored %llu bytes, the serial way %zu",
                (unsigned long long)st.stored, f.used);
        if (r < 0)
            continue;
        tc[r] = c, tsc[r] = sc, tw[r] = w, tp[r] = p;
        slow[r] = c > w ? c : w;
        serial[r] = sc + w;
    }
    printf("# pipeline: heat (%.2f MiB), %s (ratio %.2f), %d threads, 1 MiB buffers, a fresh "
           "file in %s per run; median of %d after %d warm-up\n",
           (double)heat->size / MIB, cn, (double)heat->size / (double)f.used, THREADS, g.base,
           reps, g.warmup);
    printf("#   compress only (cz_write, %d threads, sink drops)  %.3f s\n", THREADS,
           med(tc, reps));
    printf("#   write only (the same frames, pwrite each)       %.3f s\n", med(tw, reps));
    printf("#   slowest stage                                   %.3f s\n", med(slow, reps));
    printf("#   pipelined (cz_write into the file)              %.3f s\n", med(tp, reps));
    printf("#   serial: compress in one thread into memory %.3f s + write %.3f s = %.3f s\n",
           med(tsc, reps), med(tw, reps), med(serial, reps));
    printf("#   the pool's speedup (serial compress / compress only): %.2fx on %d threads\n",
           med_ratio(tsc, tc, reps), THREADS);
    printf("bench: pipeline.time %.3f s ratio=%.2f vs slowest\n", med(tp, reps),
           med_ratio(tp, slow, reps));
    printf("bench: pipeline.serial %.3f s ratio=%.2f vs serial\n", med(tp, reps),
           med_ratio(tp, serial, reps));
    fflush(stdout);
    frames_free(&f);

    /* The table: buffer sizes at THREADS threads, then thread counts at 1 MiB. */
    if (scale_size > heat->size)
        scale_size = heat->size / 8 * 8;
    size_t off = (heat->size - scale_size) / 2 / 8 * 8;
    dset mid = {"heat-mid", heat->p + off, scale_size, heat->type};
    static const uint32_t bufs[] = {1u << 10, 4u << 10, 16u << 10, 64u << 10, 256u << 10,
                                    1u << 20, 4u << 20};
    static const int thr[] = {0, 1, 2, 4};
    enum { NB = sizeof bufs / sizeof bufs[0], NT = sizeof thr / sizeof thr[0] };
    static ptimes pt[NB + NT];
    double ratio[NB];
    pipe_table(&mid, codec, bufs, NB, thr, NT, pt, ratio);
    int one_mib = 0, best = 0;
    for (int b = 0; b < NB; b++) {
        if (bufs[b] == BUF)
            one_mib = b;
        if (med(pt[b].pipe, reps) < med(pt[best].pipe, reps))
            best = b;
    }
    printf("# pipeline table: the middle %.0f MiB of heat, %s; median of %d after %d warm-up, "
           "every configuration once per repetition; vs slowest = pipelined / max(compress "
           "only, write only)\n",
           (double)scale_size / MIB, cn, reps, g.warmup);
    printf("#   %8s %7s %6s %12s %11s %9s %11s %9s\n", "buffer", "threads", "ratio",
           "pipelined s", "compress s", "write s", "vs slowest", "vs 1 MiB");
    for (int c = 0; c < NB + NT; c++) {
        const ptimes *p = &pt[c];
        int b = c < NB ? c : one_mib;
        printf("#   %4u KiB %7d %6.2f %12.4f %11.4f %9.4f %11.2f %9.2f\n", bufs[b] >> 10,
               c < NB ? THREADS : thr[c - NB], ratio[b], med(p->pipe, reps), med(p->comp, reps),
               med(p->write, reps), med_ratio(p->pipe, p->slowest, reps),
               med_ratio(p->pipe, pt[one_mib].pipe, reps));
    }
    printf("bench: pipeline.buffer.best %u KiB ratio=%.2f vs 1MiB\n", bufs[best] >> 10,
           med_ratio(pt[best].pipe, pt[one_mib].pipe, reps));
    fflush(stdout);
}

/* ---- automatic choice ---------------------------------------------------------- */

typedef struct aresult {
    double auto_s, best_s; /* medians */
} aresult;

/* Modelled pipelined time (eq. 3): the slower of compress / threads and write. */
static double model(double compress_s, double stored, double bps)
{
    double w = stored / bps, c = compress_s / THREADS;
    return c > w ? c : w;
}

static aresult auto_section(const dset *d)
{
    int reps = g.reps;
    cz_opts o = {.buf_size = BUF, .threads = THREADS, .level = 0};

    /* The store's bandwidth, as cz_choose is told it. */
    double traw[MAX_REPS];
    for (int r = -g.warmup; r < reps; r++) {
        double t = write_raw(d);
        if (r >= 0)
            traw[r] = t;
    }
    double bps = (double)d->size / med(traw, reps);
    cz_env env = {.storage_bps = bps, .threads = THREADS, .level = 0, .buf_size = BUF};

    /* Methods: raw, every fixed codec, then auto (the last). */
    int id[MAX_METHODS], nm = 0;
    id[nm++] = CZ_RAW;
    for (int c = CZ_ZLIB; c < CZ_NCODECS; c++)
        if (cz_codec_accepts(c, d->type) && !cz_is_lossy(c))
            id[nm++] = c;
    int nfixed = nm, am = nm++;
    static double t[MAX_METHODS][MAX_REPS], cs[MAX_METHODS][MAX_REPS];
    double stored[MAX_METHODS] = {0}, tchoose[MAX_REPS], sampled = 1;
    int pick[MAX_REPS];
    bool verified[CZ_NCODECS] = {false};
    for (int r = -g.warmup; r < reps; r++) {
        for (int i = 0; i < nm; i++) {
            int m = (i + (r < 0 ? 0 : r)) % nm; /* rotate the order from rep to rep */
            int codec = id[m < nfixed ? m : 0];
            double tc = 0;
            if (m == am) {
                double t0 = now();
                codec = cz_choose(d->p, d->size, d->type, NULL, &env, &sampled);
                tc = now() - t0;
            }
            cz_stats st;
            double tp = pipe_file(d, codec, &o, r >= 0 && !verified[codec], &st);
            if (r < 0)
                continue;
            verified[codec] = true;
            t[m][r] = tp + tc; /* auto's time includes sampling and choosing */
            cs[m][r] = st.compress_s;
            if (m == am)
                tchoose[r] = tc, pick[r] = codec;
            else
                stored[m] = (double)st.stored;
        }
    }

    int best = 0;
    for (int m = 1; m < nfixed; m++)
        if (med(t[m], reps) < med(t[best], reps))
            best = m;
    double slow_bps = bps / SLOW, mod_fast[MAX_METHODS], mod_slow[MAX_METHODS];
    int mbest = 0;
    for (int m = 0; m < nfixed; m++) {
        double c = m == 0 ? 0 : med(cs[m], reps);
        mod_fast[m] = model(c, stored[m], bps);
        mod_slow[m] = model(c, stored[m], slow_bps);
        if (mod_slow[m] < mod_slow[mbest])
            mbest = m;
    }

    printf("# auto %s: store B = %.2f GB/s (pwrite of the raw %.2f MiB into a fresh file, "
           "median); %d threads, 1 MiB buffers, median of %d after %d warm-up\n",
           d->name, bps / 1e9, (double)d->size / MIB, THREADS, reps, g.warmup);
    printf("#   %-13s %9s %11s %10s %12s %15s\n", "codec", "time s", "stored MiB", "vs best",
           "model(B) s", "model(B/10) s");
    for (int m = 0; m < nfixed; m++)
        printf("#   %-13s %9.4f %11.2f %10.2f %12.4f %15.4f%s\n", cz_codec_name(id[m]),
               med(t[m], reps), stored[m] / MIB, med_ratio(t[m], t[best], reps), mod_fast[m],
               mod_slow[m], m == best ? "  <- best fixed" : "");
    char picks[256] = "";
    size_t at = 0;
    for (int r = 0; r < reps && at < sizeof picks - 32; r++)
        at += (size_t)snprintf(picks + at, sizeof picks - at, "%s%s", r ? " " : "",
                               cz_codec_name(pick[r]));
    printf("#   %-13s %9.4f %11s %10.2f   cz_choose picked: %s (sampled stored/raw %.3f); "
           "cz_choose took %.2f ms (median, included in its time)\n",
           "auto", med(t[am], reps), "", med_ratio(t[am], t[best], reps), picks, sampled,
           1e3 * med(tchoose, reps));
    /* Modelled only: the same choice against a store SLOW times slower. */
    cz_env slow_env = env;
    slow_env.storage_bps = slow_bps;
    int slow_pick = cz_choose(d->p, d->size, d->type, NULL, &slow_env, NULL);
    int sp = 0;
    for (int m = 0; m < nfixed; m++)
        if (id[m] == slow_pick)
            sp = m;
    printf("#   modelled, not measured: with a store at B/%.0f = %.0f MB/s (NVMe, a loaded PFS) "
           "cz_choose picks %s; eq. 3 with this run's compress times and sizes gives it "
           "%.4f s, the best fixed there is %s at %.4f s (ratio %.2f), raw %.4f s\n",
           SLOW, slow_bps / 1e6, cz_codec_name(slow_pick), mod_slow[sp],
           cz_codec_name(id[mbest]), mod_slow[mbest], mod_slow[sp] / mod_slow[mbest],
           mod_slow[0]);
    printf("bench: codec.auto.%s %.4f s ratio=%.2f vs best_fixed\n", d->name, med(t[am], reps),
           med_ratio(t[am], t[best], reps));
    fflush(stdout);
    return (aresult){med(t[am], reps), med(t[best], reps)};
}

/* ---- main ------------------------------------------------------------------------ */

static void usage(void)
{
    fprintf(stderr,
            "usage: z_bench [--size MiB] [--reps N] [--warmup N] [--heat-steps N]\n"
            "               [--scale-size MiB] [--egm96 PATH] [--pipe-codec NAME]\n"
            "       z_bench --heat-only FILE [--size MiB] [--heat-steps N]\n");
}

int main(int argc, char **argv)
{
    bench_prog = "z_bench";
    long size_mib = 64, reps = 5, warmup = 1, steps = 1600, scale_mib = 16;
    const char *egm = EGM96_DEFAULT, *heat_only = NULL;
    int pipe_codec = CZ_ZSTD;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage();
            return 0;
        } else if (i + 1 < argc && strcmp(a, "--size") == 0) {
            size_mib = parse_long(argv[++i], a, 1, 4096);
        } else if (i + 1 < argc && strcmp(a, "--reps") == 0) {
            reps = parse_long(argv[++i], a, 1, MAX_REPS);
        } else if (i + 1 < argc && strcmp(a, "--warmup") == 0) {
            warmup = parse_long(argv[++i], a, 0, 100);
        } else if (i + 1 < argc && strcmp(a, "--heat-steps") == 0) {
            steps = parse_long(argv[++i], a, 0, 1000000);
        } else if (i + 1 < argc && strcmp(a, "--scale-size") == 0) {
            scale_mib = parse_long(argv[++i], a, 1, 4096);
        } else if (i + 1 < argc && strcmp(a, "--egm96") == 0) {
            egm = argv[++i];
        } else if (i + 1 < argc && strcmp(a, "--heat-only") == 0) {
            heat_only = argv[++i];
        } else if (i + 1 < argc && strcmp(a, "--pipe-codec") == 0) {
            pipe_codec = cz_codec_parse(argv[++i]);
            if (pipe_codec <= CZ_RAW || pipe_codec >= CZ_NCODECS ||
                !cz_codec_accepts(pipe_codec, CAIRN_DOUBLE))
                die("--pipe-codec: expected a codec that takes doubles (%s), got '%s'",
                    cz_codec_list(), argv[i]);
        } else {
            usage();
            die("unknown or incomplete option '%s'", a);
        }
    }
    if (!heat_only && scale_mib > size_mib)
        die("--scale-size %ld MiB is larger than --size %ld MiB", scale_mib, size_mib);

    check_mpi(MPI_Init(&argc, &argv), "MPI_Init");
    int nranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &bench_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks != 1)
        die("runs on one rank (it measures one process's pool), not %d", nranks);
    g.reps = (int)reps, g.warmup = (int)warmup;
    g.base = getenv("CAIRN_BASE");
    if (!g.base || !g.base[0])
        g.base = "/dev/shm";

    long side = 1;
    while ((side + 1) * (side + 1) * 8 <= size_mib * (long)MIB)
        side++;
    if (heat_only) {
        double *u = heat_field(side, steps);
        FILE *f = fopen(heat_only, "wb");
        size_t n = (size_t)side * (size_t)side;
        if (!f || fwrite(u, sizeof *u, n, f) != n || fclose(f) != 0)
            die("%s: %s", heat_only, strerror(errno));
        printf("# heat: %ld x %ld after %ld steps written to %s\n", side, side, steps, heat_only);
        free(u);
        check_mpi(MPI_Finalize(), "MPI_Finalize");
        return 0;
    }

    printf("# z: 1 rank, %d pool threads, files in %s, %d reps after %d warm-up\n", THREADS,
           g.base, g.reps, g.warmup);
    dset sets[MAX_SETS];
    int ns = 0;
    double t0 = now();
    double *u = heat_field(side, steps);
    double t_heat = now() - t0;
    sets[ns++] = (dset){"heat", (uint8_t *)u, (size_t)side * (size_t)side * sizeof *u,
                        CAIRN_DOUBLE};
    uint32_t rows = 0, cols = 0;
    float *egv = load_egm96(egm, &rows, &cols);
    bool have_egm = egv != NULL;
    if (have_egm)
        sets[ns++] = (dset){"egm96", (uint8_t *)egv, (size_t)rows * cols * sizeof *egv,
                            CAIRN_FLOAT};
    size_t rsize = (size_t)size_mib * MIB;
    uint8_t *rnd = xmalloc(rsize);
    fill(rnd, rsize, 0);
    sets[ns++] = (dset){"random", rnd, rsize, CAIRN_UINT8};

    size_t most = 0;
    for (int s = 0; s < ns; s++)
        most = sets[s].size > most ? sets[s].size : most;
    g.dst = xmalloc(most);
    g.back_cap = (most / BUF + 1) * cz_frame_bound(BUF) + (4u << 20);
    g.back = xmalloc(g.back_cap);
    g.scratch = xmalloc(CZ_MAX_BUF);
    /* How the heat field compares with the demo's own checkpoint. */
    double *demo = heat_field(1024, 400);
    dset dd = {"heat-demo", (uint8_t *)demo, 1024 * 1024 * sizeof *demo, CAIRN_DOUBLE};
    frames f;
    frames_alloc(&f, most > dd.size ? most : dd.size, BUF);
    encode_all(&f, &dd, CZ_ZSTD, 0, BUF);
    double demo_ratio = (double)dd.size / (double)f.used;
    encode_all(&f, &sets[0], CZ_ZSTD, 0, BUF);
    printf("# heat: %ld x %ld doubles (%.2f MiB) after %ld steps (%.1f s): %.1f%% of cells "
           "exactly 0, zstd ratio %.2f; the demo's field (1024 x 1024, 400 steps): %.1f%%, "
           "zstd ratio %.2f\n",
           side, side, (double)sets[0].size / MIB, steps, t_heat,
           100 * zero_share(u, (size_t)side * (size_t)side),
           (double)sets[0].size / (double)f.used, 100 * zero_share(demo, 1024 * 1024),
           demo_ratio);
    free(demo);
    if (have_egm)
        printf("# egm96: %s, %u x %u float32 (%.2f MiB), big-endian converted to host\n", egm,
               rows, cols, (double)sets[1].size / MIB);
    else
        printf("# egm96: %s missing (apt install proj-data)\n", egm);
    printf("# random: %.2f MiB of xorshift bytes (uint8)\n", (double)rsize / MIB);
    fflush(stdout);

    for (int s = 0; s < ns; s++)
        codec_section(&sets[s], &f);
    frames_free(&f);
    if (have_egm)
        fpzip_shape_section(&sets[1], rows, cols);

    pipeline_section(&sets[0], pipe_codec, (size_t)scale_mib * MIB);

    double sum_auto = 0, sum_best = 0;
    for (int s = 0; s < ns; s++) {
        aresult a = auto_section(&sets[s]);
        sum_auto += a.auto_s;
        sum_best += a.best_s;
    }
    printf("# auto: all %d data sets (sum of the medians)\n", ns);
    printf("bench: codec.auto %.4f s ratio=%.2f vs best_fixed\n", sum_auto, sum_auto / sum_best);
    fflush(stdout);

    for (int s = 0; s < ns; s++)
        free(sets[s].p);
    free(g.dst);
    free(g.back);
    free(g.scratch);
    check_mpi(MPI_Finalize(), "MPI_Finalize");
    return 0;
}
