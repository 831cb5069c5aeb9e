/*
 * local.c - level 1: write one rank's checkpoint file to node-local storage.
 *
 * Layout (common.h): header, entry table, data from the next 64-byte boundary
 * (format 4; format 3 files, read elsewhere, had it at a page). Data goes out
 * first, one checksum block at a time: each block is hashed and then copied
 * while it is still in cache, so checksumming costs no extra pass over
 * memory. The table and header, which hold those checksums, go last, at the
 * front of the file. Then the file is made durable (fdatasync, or libpmem's
 * persist/msync) and renamed from NAME.tmp to NAME; the caller syncs the
 * directory when every file of the generation is in.
 *
 * Two ways to move the bytes: plain pwrite(), or libpmem (map the file,
 * memcpy with pmem_memcpy_nodrain on real persistent memory, then drain or
 * msync as libpmem says the mapping needs). The caller picks one; see
 * lvl_local_probe_io for the automatic choice.
 */
#include "levels/local/local_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <libpmem.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

uint64_t lvl_src_stream(const lvl_src *src, uint32_t incr_block)
{
    if (!(src->flags & CN_ENTRY_DELTA))
        return src->size;
    return cn_runs_stream(src->runs, src->nruns, src->size, incr_block);
}

/* Most bytes SRC can store: its stream, or the stream's frames at worst. */
static uint64_t stored_bound(const lvl_src *src, uint32_t incr_block)
{
    uint64_t n = lvl_src_stream(src, incr_block);
    if (src->codec == CZ_RAW)
        return n;
    return n + CZ_FRAME_HDR * (n / CZ_MIN_BUF + 1);
}

/* Copy SRC's runs and hashes into E (the entry table owns its arrays). */
static int copy_chain(cn_entry *e, const lvl_src *src, cn_err *err)
{
    e->flags = src->flags & CN_ENTRY_DELTA;
    if (src->nruns && !(e->runs = malloc(sizeof *e->runs * src->nruns)))
        return cn_fail(err, CAIRN_ENOMEM, "no memory for runs");
    if (src->nhash && !(e->hashes = malloc(sizeof *e->hashes * src->nhash)))
        return cn_fail(err, CAIRN_ENOMEM, "no memory for block hashes");
    if (src->nruns)
        memcpy(e->runs, src->runs, sizeof *e->runs * src->nruns);
    if (src->nhash)
        memcpy(e->hashes, src->hashes, sizeof *e->hashes * src->nhash);
    e->nruns = src->nruns;
    e->nhash = src->nhash;
    return 0;
}

int lvl_plan_layout(cn_header *h, const lvl_src *src, uint32_t n, cn_entry **out, cn_err *err)
{
    cn_entry *e = calloc(n ? n : 1, sizeof *e);
    CN_FAIL_IF(!e, err, CAIRN_ENOMEM, "no memory for the entry table");
    for (uint32_t i = 0; i < n; i++) {
        if (copy_chain(&e[i], &src[i], err) < 0) {
            cn_entries_free(e, n);
            return err->code;
        }
        snprintf(e[i].name, sizeof e[i].name, "%s", src[i].name);
        e[i].kind = src[i].kind;
        e[i].type = src[i].type;
        e[i].ndims = src[i].ndims;
        e[i].codec = src[i].codec;
        memcpy(e[i].dims, src[i].dims, sizeof e[i].dims);
        e[i].count = src[i].count;
        e[i].raw_size = src[i].size;
        e[i].stored_size = stored_bound(&src[i], h->incr_block); /* exact for raw entries */
        e[i].error_bound = src[i].error_bound;
        e[i].nblocks = (uint32_t)((e[i].stored_size + h->block_size - 1) / h->block_size);
        if (e[i].nblocks && !(e[i].block_sums = calloc(e[i].nblocks, 8))) {
            cn_entries_free(e, n);
            return cn_fail(err, CAIRN_ENOMEM, "no memory for block checksums");
        }
    }
    h->nentries = n;
    h->table_size = cn_table_size(e, n);
    h->data_offset = cn_align_up(CN_HEADER_SIZE + h->table_size, CN_ENTRY_ALIGN);
    uint64_t off = h->data_offset;
    for (uint32_t i = 0; i < n; i++) {
        off = cn_align_up(off, CN_ENTRY_ALIGN);
        e[i].offset = off;
        off += e[i].stored_size;
    }
    h->file_size = off;
    *out = e;
    return 0;
}

int lvl_sink_put(lvl_sink *s, const void *buf, size_t len, uint64_t off, cn_err *err)
{
    if (!s->map)
        return cn_pwrite_all(s->fd, buf, len, off, s->path, err);
    if (s->is_pmem)
        pmem_memcpy_nodrain(s->map + off, buf, len);
    else
        memcpy(s->map + off, buf, len);
    return 0;
}

/* One checksum block: where it comes from, where it goes, where its sum goes. */
typedef struct blk {
    const uint8_t *p;
    size_t len;
    uint64_t off;
    uint64_t *sum;
} blk;

/*
 * Checksums cost a pass over the data unless it is in cache. Without a spare
 * core the writer hashes each block right after copying it, from cache. With
 * one (LVL_IO_HASH_THREAD), a hasher thread runs at most HASH_LEAD blocks
 * ahead of the writer, so each block is read from memory once (by the hasher)
 * and copied from cache (by the writer), and hashing overlaps the write.
 */
#define HASH_LEAD 4

typedef struct hasher {
    blk *b;
    size_t n;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t hashed, written; /* blocks done by each side */
    bool stop;
} hasher;

static void *hash_blocks(void *arg)
{
    hasher *hs = arg;
    for (size_t k = 0; k < hs->n; k++) {
        pthread_mutex_lock(&hs->mu);
        while (!hs->stop && k >= hs->written + HASH_LEAD)
            pthread_cond_wait(&hs->cv, &hs->mu);
        bool stop = hs->stop;
        pthread_mutex_unlock(&hs->mu);
        if (stop)
            break;
        *hs->b[k].sum = cn_hash(hs->b[k].p, hs->b[k].len);
        pthread_mutex_lock(&hs->mu);
        hs->hashed = k + 1;
        pthread_cond_broadcast(&hs->cv);
        pthread_mutex_unlock(&hs->mu);
    }
    return NULL;
}

static void hasher_mark(hasher *hs, size_t written, bool stop)
{
    pthread_mutex_lock(&hs->mu);
    hs->written = written;
    hs->stop = hs->stop || stop;
    pthread_cond_broadcast(&hs->cv);
    pthread_mutex_unlock(&hs->mu);
}

static int write_blocks(lvl_sink *s, const cn_header *h, blk *b, size_t n, hasher *hs, cn_err *err)
{
    uint64_t total = h->file_size - h->data_offset, done = 0;
    bool fault_fired = false;
    for (size_t k = 0; k < n; k++) {
        if (hs) { /* wait until the block is hashed: then it is in cache */
            pthread_mutex_lock(&hs->mu);
            while (hs->hashed <= k)
                pthread_cond_wait(&hs->cv, &hs->mu);
            pthread_mutex_unlock(&hs->mu);
        }
        int rc = lvl_sink_put(s, b[k].p, b[k].len, b[k].off, err);
        if (!hs) /* the copy just pulled the block into cache: hash it there */
            *b[k].sum = cn_hash(b[k].p, b[k].len);
        if (hs)
            hasher_mark(hs, k + 1, rc < 0);
        CN_TRY(rc);
        done += b[k].len;
        if (!fault_fired && done * 2 >= total) {
            fault_fired = true;
            cn_fault_point("ckpt.write", h->generation, (int)h->rank);
        }
    }
    return 0;
}

/* Hash and store every block of every entry; fire the mid-write fault point. */
static int put_data(lvl_sink *s, const cn_header *h, cn_entry *e, const lvl_src *src, uint32_t n,
                    cn_err *err)
{
    size_t nb = 0;
    for (uint32_t i = 0; i < n; i++)
        nb += e[i].nblocks;
    blk *b = malloc((nb ? nb : 1) * sizeof *b);
    CN_FAIL_IF(!b, err, CAIRN_ENOMEM, "no memory for the block list");
    size_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < e[i].nblocks; j++, k++) {
            uint64_t off = (uint64_t)j * h->block_size;
            b[k] = (blk){(const uint8_t *)src[i].ptr + off,
                         (size_t)(e[i].stored_size - off < h->block_size ? e[i].stored_size - off
                                                                         : h->block_size),
                         e[i].offset + off, &e[i].block_sums[j]};
        }
    hasher hs = {.b = b, .n = nb};
    pthread_t tid;
    bool threaded = s->hash_thread && nb > HASH_LEAD && pthread_mutex_init(&hs.mu, NULL) == 0;
    if (threaded && pthread_cond_init(&hs.cv, NULL) != 0) {
        pthread_mutex_destroy(&hs.mu);
        threaded = false;
    }
    if (threaded && pthread_create(&tid, NULL, hash_blocks, &hs) != 0) {
        pthread_cond_destroy(&hs.cv);
        pthread_mutex_destroy(&hs.mu);
        threaded = false;
    }
    int rc = write_blocks(s, h, b, nb, threaded ? &hs : NULL, err);
    if (threaded) {
        hasher_mark(&hs, nb, true);
        pthread_join(tid, NULL);
        pthread_cond_destroy(&hs.cv);
        pthread_mutex_destroy(&hs.mu);
    }
    free(b);
    return rc;
}

int lvl_put_meta(lvl_sink *s, cn_header *h, const cn_entry *e, cn_err *err)
{
    uint8_t *meta = calloc(1, CN_HEADER_SIZE + h->table_size);
    CN_FAIL_IF(!meta, err, CAIRN_ENOMEM, "no memory for the table");
    cn_table_encode(e, h->nentries, meta + CN_HEADER_SIZE);
    h->table_sum = cn_hash(meta + CN_HEADER_SIZE, h->table_size);
    cn_header_encode(h, meta);
    int rc = lvl_sink_put(s, meta, CN_HEADER_SIZE + h->table_size, 0, err);
    free(meta);
    return rc;
}

static int write_plain(int genfd, const char *tmp, lvl_sink *s, cn_header *h, cn_entry *e,
                       const lvl_src *src, uint32_t n, cn_err *err)
{
    s->fd = openat(genfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (s->fd < 0)
        return cn_fail_errno(err, errno, "%s: cannot create", s->path);
    /* The size first: trailing alignment padding (e.g. before an empty last
     * entry) is never written, but the file must still end where the header
     * says. On tmpfs this allocates nothing. */
    int rc = ftruncate(s->fd, (off_t)h->file_size) == 0
                 ? 0
                 : cn_fail_errno(err, errno, "%s: cannot size to %llu bytes", s->path,
                                 (unsigned long long)h->file_size);
    if (rc == 0)
        rc = put_data(s, h, e, src, n, err);
    if (rc == 0)
        rc = lvl_put_meta(s, h, e, err);
    if (rc == 0 && fdatasync(s->fd) != 0)
        rc = cn_fail_errno(err, errno, "%s: cannot sync", s->path);
    if (close(s->fd) != 0 && rc == 0)
        rc = cn_fail_errno(err, errno, "%s: cannot close", s->path);
    return rc;
}

static int write_pmem(lvl_sink *s, cn_header *h, cn_entry *e, const lvl_src *src, uint32_t n,
                      cn_err *err)
{
    size_t mapped = 0;
    s->map = pmem_map_file(s->path, (size_t)h->file_size, PMEM_FILE_CREATE | PMEM_FILE_EXCL,
                           0600, &mapped, &s->is_pmem);
    if (!s->map)
        return cn_fail_errno(err, errno, "%s: libpmem cannot map %llu bytes", s->path,
                             (unsigned long long)h->file_size);
    int rc = put_data(s, h, e, src, n, err);
    if (rc == 0)
        rc = lvl_put_meta(s, h, e, err);
    if (rc == 0 && s->is_pmem)
        pmem_drain();
    else if (rc == 0 && pmem_msync(s->map, mapped) != 0)
        rc = cn_fail_errno(err, errno, "%s: cannot persist", s->path);
    pmem_unmap(s->map, mapped);
    return rc;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int lvl_local_write(int genfd, const char *gen_path, const char *name, const cn_header *proto,
                    const lvl_src *src, uint32_t n, int io, const cz_opts *z, lvl_written *out,
                    cn_err *err)
{
    double t0 = now();
    bool compressed = false; /* or gathered from runs: either way through the pipeline */
    for (uint32_t i = 0; i < n; i++)
        compressed |= src[i].codec != CZ_RAW || (src[i].flags & CN_ENTRY_DELTA);
    char tmp[CAIRN_NAME_MAX + 8], path[4096 + 2 * CAIRN_NAME_MAX];
    snprintf(tmp, sizeof tmp, "%s.tmp", name);
    snprintf(path, sizeof path, "%s/%s", gen_path, tmp);
    cn_header h = *proto;
    h.version = CN_FORMAT_VERSION;
    cn_entry *e = NULL;
    CN_TRY(lvl_plan_layout(&h, src, n, &e, err));

    unlinkat(genfd, tmp, 0); /* a leftover of a crashed write */
    lvl_sink s = {.fd = -1, .path = path, .hash_thread = io & LVL_IO_HASH_THREAD};
    io &= ~LVL_IO_HASH_THREAD;
    memset(out, 0, sizeof *out);
    int rc;
    if (compressed)
        rc = lvl_write_z(genfd, tmp, &s, &h, e, src, n, io, z, out, err);
    else if (io == CN_IO_PMEM)
        rc = write_pmem(&s, &h, e, src, n, err);
    else
        rc = write_plain(genfd, tmp, &s, &h, e, src, n, err);
    cn_entries_free(e, n);
    if (rc == 0 && renameat(genfd, tmp, genfd, name) != 0)
        rc = cn_fail_errno(err, errno, "%s: cannot rename into place", path);
    if (rc < 0) {
        unlinkat(genfd, tmp, 0);
        return rc;
    }
    out->file_size = h.file_size;
    out->header_sum = h.header_sum;
    for (uint32_t i = 0; i < n; i++)
        out->full += src[i].size;
    if (!compressed) {
        for (uint32_t i = 0; i < n; i++)
            out->raw += src[i].size;
        out->stored = out->raw;
        out->write_s = now() - t0;
    }
    return 0;
}

int lvl_local_probe_io(const char *dir_path)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/.pmem-probe.%d", dir_path, (int)getpid());
    size_t mapped = 0;
    int is_pmem = 0;
    void *map = pmem_map_file(path, 4096, PMEM_FILE_CREATE | PMEM_FILE_EXCL, 0600, &mapped,
                              &is_pmem);
    unlink(path);
    if (!map)
        return CN_IO_WRITE;
    pmem_unmap(map, mapped);
    return is_pmem ? CN_IO_PMEM : CN_IO_WRITE;
}
