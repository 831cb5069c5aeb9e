/*
 * local_z.c - level 1 with compression: the rank file's data section comes
 * out of the compression pipeline (src/compress/pipe.c) in order, entry by
 * entry, and is checksummed per block as it is stored.
 *
 * Compressed sizes are known only once written, so the table space in front
 * of the data is reserved for the most every entry could store (its frames
 * at worst; a few bytes per MiB); the table actually written is shorter and
 * the gap stays zero. Entries are placed one after another, each aligned.
 * Raw entries in the same file pass through the pipeline uncompressed.
 *
 * A pack (small variables of one codec sharing frames) is stored under its
 * first member, so one entry's stream may be far longer than its own bound:
 * its block checksums grow as it is stored (block_sums is reallocated), and
 * the reservations (the mapped file, the table space) are checked, never
 * trusted: an overrun fails the write instead of writing past them.
 *
 * Ownership: the caller's entry table E is filled in place (its block_sums
 * arrays may be reallocated; cn_entries_free frees them).
 */
#include "levels/local/local_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <libpmem.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

typedef struct zw {
    lvl_sink *s;
    const cn_header *h;
    cn_entry *e;
    int64_t cur;             /* entry being stored, -1 before the first */
    uint64_t pos;            /* next file offset */
    uint64_t blk_fill;       /* bytes in the current checksum block */
    uint64_t reserve;        /* bytes of file reserved (the mapping's size) */
    uint32_t cap;            /* block_sums slots of the current entry */
    uint32_t *slots;         /* per entry: the slots lvl_plan_layout allocated */
    bool nomem;              /* a block_sums array could not grow */
    XXH3_state_t *st;
    uint64_t done, half;     /* bytes stored; when the mid-write fault fires */
} zw;

static void finish_block(zw *w)
{
    if (w->cur >= 0 && w->blk_fill) {
        cn_entry *e = &w->e[w->cur];
        if (e->nblocks == w->cap) { /* a pack's owner stores more than its own bound */
            uint32_t cap = w->cap ? 2 * w->cap : 16;
            uint64_t *sums = realloc(e->block_sums, sizeof *sums * cap);
            if (!sums) {
                w->nomem = true;
                w->blk_fill = 0;
                return;
            }
            e->block_sums = sums;
            w->cap = cap;
        }
        e->block_sums[e->nblocks++] = XXH3_64bits_digest(w->st);
        w->blk_fill = 0;
    }
}

/* Stream LEN stored bytes of entry ITEM through the block checksums. */
static void hash_into_blocks(zw *w, const uint8_t *p, size_t len)
{
    uint32_t bs = w->h->block_size;
    while (len) {
        if (w->blk_fill == 0)
            XXH3_64bits_reset(w->st);
        size_t take = bs - w->blk_fill < len ? (size_t)(bs - w->blk_fill) : len;
        XXH3_64bits_update(w->st, p, take);
        w->blk_fill += take;
        p += take;
        len -= take;
        if (w->blk_fill == bs)
            finish_block(w);
    }
}

static int store(void *arg, uint32_t item, const void *buf, size_t len, cn_err *err)
{
    zw *w = arg;
    if ((int64_t)item != w->cur) {
        finish_block(w);
        w->cur = item;
        w->pos = cn_align_up(w->pos, CN_ENTRY_ALIGN);
        w->e[item].offset = w->pos;
        w->e[item].stored_size = 0;
        w->cap = w->slots[item];
        w->e[item].nblocks = 0;
    }
    if (w->s->map && (w->pos > w->reserve || len > w->reserve - w->pos))
        return cn_fail(err, CAIRN_EIO, "%s: '%s' stores more than the %llu bytes reserved",
                       w->s->path, w->e[item].name, (unsigned long long)w->reserve);
    CN_TRY(lvl_sink_put(w->s, buf, len, w->pos, err));
    hash_into_blocks(w, buf, len);
    if (w->nomem)
        return cn_fail(err, CAIRN_ENOMEM, "no memory for the block checksums of '%s'",
                       w->e[item].name);
    w->pos += len;
    w->e[item].stored_size += len;
    uint64_t before = w->done;
    w->done += len;
    if (before < w->half && w->done >= w->half)
        cn_fault_point("ckpt.write", w->h->generation, (int)w->h->rank);
    return 0;
}

/*
 * A delta source as a pipeline item: its runs become spans of its memory,
 * and a lossy codec sees the gathered blocks as one flat array (the blocks
 * are whole elements: incr_block is a power of two of at least 1 KiB).
 */
static int delta_item(const lvl_src *src, uint32_t block, cz_item *it, cz_span **span,
                      cz_shape *flat, cn_err *err)
{
    *span = calloc(src->nruns ? src->nruns : 1, sizeof **span);
    CN_FAIL_IF(!*span, err, CAIRN_ENOMEM, "no memory for the changed blocks");
    uint64_t total = 0;
    for (uint32_t r = 0; r < src->nruns; r++) {
        uint64_t lo = (uint64_t)src->runs[r].first * block;
        uint64_t hi = lo + (uint64_t)src->runs[r].count * block;
        hi = hi < src->size ? hi : src->size;
        (*span)[r] = (cz_span){(const uint8_t *)src->ptr + lo, hi - lo};
        total += hi - lo;
    }
    it->span = *span;
    it->nspan = src->nruns;
    it->size = total;
    if (cz_is_lossy(src->codec)) {
        *flat = src->shape;
        flat->ndims = 1;
        memset(flat->dims, 0, sizeof flat->dims);
        flat->dims[0] = total / cairn_type_size((cairn_type)src->type);
        it->shape = flat;
    }
    return 0;
}

/* Run the pipeline; then place the entries that stored nothing. */
static int put_data_z(zw *w, const lvl_src *src, uint32_t n, const cz_opts *z, cz_stats *st,
                      cn_err *err)
{
    cz_item *items = calloc(n ? n : 1, sizeof *items);
    cz_span **spans = calloc(n ? n : 1, sizeof *spans);
    cz_shape *flat = calloc(n ? n : 1, sizeof *flat);
    w->slots = calloc(n ? n : 1, sizeof *w->slots);
    int rc = items && spans && flat && w->slots
                 ? 0 : cn_fail(err, CAIRN_ENOMEM, "no memory for the compression plan");
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        items[i] = (cz_item){.ptr = src[i].ptr, .size = src[i].size, .type = src[i].type,
                             .codec = src[i].codec,
                             .shape = cz_is_lossy(src[i].codec) ||
                                              (src[i].codec == CZ_FPZIP && src[i].shape.ndims >= 2)
                                          ? &src[i].shape : NULL};
        if (src[i].flags & CN_ENTRY_DELTA)
            rc = delta_item(&src[i], w->h->incr_block, &items[i], &spans[i], &flat[i], err);
        w->slots[i] = w->e[i].nblocks;
        w->e[i].nblocks = 0;
        w->e[i].stored_size = 0;
        w->e[i].offset = 0;
        w->half += items[i].size / 2;
    }
    if (rc == 0)
        rc = cz_write(items, n, z, store, w, st, err);
    finish_block(w);
    if (rc == 0 && w->nomem)
        rc = cn_fail(err, CAIRN_ENOMEM, "no memory for block checksums");
    uint64_t end = w->h->data_offset;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        cn_entry *e = &w->e[i];
        e->codec = items[i].codec; /* an empty item (a delta of no blocks) is stored raw */
        e->flags = (uint8_t)((e->flags & CN_ENTRY_DELTA) | (items[i].packed ? CN_ENTRY_PACKED : 0));
        e->frame_raw = items[i].frame_raw;
        e->max_error = items[i].max_error;
        if (items[i].stored == 0)
            e->offset = cn_align_up(end, CN_ENTRY_ALIGN);
        end = e->offset + e->stored_size;
    }
    if (rc == 0 && w->done < w->half) /* compressed well below half the raw bytes */
        cn_fault_point("ckpt.write", w->h->generation, (int)w->h->rank);
    for (uint32_t i = 0; spans && i < n; i++)
        free(spans[i]);
    free(spans);
    free(flat);
    free(items);
    free(w->slots);
    w->slots = NULL;
    w->pos = end > w->pos ? end : w->pos;
    return rc;
}

static int open_sink(int genfd, const char *tmp, lvl_sink *s, int io, uint64_t max_size,
                     size_t *mapped, cn_err *err)
{
    if (io == CN_IO_PMEM) {
        s->map = pmem_map_file(s->path, (size_t)max_size, PMEM_FILE_CREATE | PMEM_FILE_EXCL,
                               0600, mapped, &s->is_pmem);
        if (!s->map)
            return cn_fail_errno(err, errno, "%s: libpmem cannot map %llu bytes", s->path,
                                 (unsigned long long)max_size);
        return 0;
    }
    s->fd = openat(genfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (s->fd < 0)
        return cn_fail_errno(err, errno, "%s: cannot create", s->path);
    return 0;
}

/* Persist and close; the file ends where the header says. */
static int close_sink(int genfd, const char *tmp, lvl_sink *s, size_t mapped, uint64_t size,
                      int rc, cn_err *err)
{
    if (s->map) {
        if (rc == 0 && s->is_pmem)
            pmem_drain();
        else if (rc == 0 && pmem_msync(s->map, mapped) != 0)
            rc = cn_fail_errno(err, errno, "%s: cannot persist", s->path);
        pmem_unmap(s->map, mapped);
        s->map = NULL;
        if (rc == 0) { /* drop the unused tail of the reservation */
            s->fd = openat(genfd, tmp, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
            if (s->fd < 0)
                return cn_fail_errno(err, errno, "%s: cannot reopen", s->path);
        }
    }
    if (s->fd < 0)
        return rc;
    if (rc == 0 && ftruncate(s->fd, (off_t)size) != 0)
        rc = cn_fail_errno(err, errno, "%s: cannot size to %llu bytes", s->path,
                           (unsigned long long)size);
    if (rc == 0 && fdatasync(s->fd) != 0)
        rc = cn_fail_errno(err, errno, "%s: cannot sync", s->path);
    if (close(s->fd) != 0 && rc == 0)
        rc = cn_fail_errno(err, errno, "%s: cannot close", s->path);
    s->fd = -1;
    return rc;
}

int lvl_write_z(int genfd, const char *tmp, lvl_sink *s, cn_header *h, cn_entry *e,
                const lvl_src *src, uint32_t n, int io, const cz_opts *z, lvl_written *out,
                cn_err *err)
{
    zw w = {.s = s, .h = h, .e = e, .cur = -1, .pos = h->data_offset, .reserve = h->file_size};
    w.st = XXH3_createState();
    CN_FAIL_IF(!w.st, err, CAIRN_ENOMEM, "no memory for a hash state");
    size_t mapped = 0;
    int rc = open_sink(genfd, tmp, s, io, h->file_size, &mapped, err);
    if (rc == 0)
        rc = put_data_z(&w, src, n, z, &out->z, err);
    h->file_size = w.pos;
    h->table_size = cn_table_size(e, n); /* actual block counts: within the reservation */
    if (rc == 0 && CN_HEADER_SIZE + h->table_size > h->data_offset)
        rc = cn_fail(err, CAIRN_EIO, "%s: the entry table (%llu bytes) outgrew its reservation",
                     s->path, (unsigned long long)h->table_size);
    if (rc == 0)
        rc = lvl_put_meta(s, h, e, err);
    if (s->map || s->fd >= 0)
        rc = close_sink(genfd, tmp, s, mapped, h->file_size, rc, err);
    XXH3_freeState(w.st);
    out->raw = out->z.raw;
    out->stored = out->z.stored;
    out->write_s = out->z.write_s;
    return rc;
}
