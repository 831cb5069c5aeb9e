/*
 * files.c - z_bench's small helpers (medians, files written and removed),
 * frames encoded back to back in memory, and the write pipeline (cz_write)
 * into a file or nowhere, with every file read back and verified; also
 * fpzip through the pipeline with and without its 2-D shape. Owned by
 * z_bench (bench/z_bench.c).
 */
#include "z_bench.h"

/* ---- small helpers ------------------------------------------------------- */

double med(const double *v, int n) { return median(v, n); }

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

void frames_alloc(frames *f, size_t size, uint32_t bs)
{
    size_t nf = (size + bs - 1) / bs;
    f->buf = xmalloc(nf * cz_frame_bound(bs));
    f->len = xmalloc(nf * sizeof *f->len);
    f->n = f->used = 0;
    f->size = size, f->bs = bs;
}

void frames_free(frames *f)
{
    free(f->buf);
    free(f->len);
}

/* Encode D in BS-byte buffers, one thread, into F. Returns seconds. */
double encode_all(frames *f, const dset *d, int codec, int level, uint32_t bs)
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
double decode_all(const frames *f, const dset *d, int codec)
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
double write_frames(const frames *f)
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
double write_raw(const dset *d)
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
void fpzip_shape_section(const dset *d, uint32_t rows, uint32_t cols)
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
double pipe_file(const dset *d, int codec, const cz_opts *o, bool verify, cz_stats *st)
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
double pipe_drop(const dset *d, int codec, const cz_opts *o, cz_stats *st)
{
    cz_item it = {.ptr = d->p, .size = d->size, .type = d->type, .codec = (uint8_t)codec};
    cn_err err = {0};
    double t0 = now();
    if (cz_write(&it, 1, o, sink_drop, NULL, st, &err) != 0)
        die("%s: cz_write (%s): %s", d->name, cz_codec_name(codec), err.msg);
    return now() - t0;
}
