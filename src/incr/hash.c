/*
 * hash.c - block hashes and diffs for incremental checkpoints.
 *
 * Hashing is one read pass over the variable at memory speed (XXH3-128);
 * large variables are split into equal ranges of whole blocks, one per
 * thread, so a rank with spare cores hashes faster than it could copy. The
 * diff is a linear walk that merges changed blocks into runs, which become
 * both the entry's run list on disk and the spans the compression pipeline
 * gathers.
 */
#include "incr/incr.h"

#include <pthread.h>
#include <xxhash.h>

#define THREAD_MIN (4u << 20) /* smaller ranges are not worth a thread */

typedef struct range {
    const uint8_t *p;
    uint64_t size, first, last; /* blocks [first, last) of a variable of SIZE bytes */
    uint32_t block;
    cn_h128 *out;
} range;

static void *hash_range(void *arg)
{
    const range *r = arg;
    for (uint64_t b = r->first; b < r->last; b++) {
        uint64_t off = b * r->block;
        size_t len = (size_t)(r->size - off < r->block ? r->size - off : r->block);
        XXH128_hash_t h = XXH3_128bits(r->p + off, len);
        r->out[b] = (cn_h128){h.low64, h.high64};
    }
    return NULL;
}

void incr_hash(const void *p, uint64_t size, uint32_t block, int threads, cn_h128 *out)
{
    uint64_t nb = cn_incr_nblocks(size, block);
    if (threads > 16)
        threads = 16;
    if ((uint64_t)threads > size / THREAD_MIN)
        threads = (int)(size / THREAD_MIN);
    if (threads < 1)
        threads = 1;
    range r[16];
    pthread_t tid[16];
    bool started[16] = {false};
    for (int t = 0; t < threads; t++) {
        r[t] = (range){p, size, nb * (uint64_t)t / (uint64_t)threads,
                       nb * (uint64_t)(t + 1) / (uint64_t)threads, block, out};
        if (t > 0)
            started[t] = pthread_create(&tid[t], NULL, hash_range, &r[t]) == 0;
    }
    hash_range(&r[0]);
    for (int t = 1; t < threads; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        else
            hash_range(&r[t]); /* no thread: do its share here */
    }
}

/* Length of block B of a variable of SIZE bytes. */
static uint64_t block_len(uint64_t b, uint64_t size, uint32_t block)
{
    uint64_t off = b * block;
    return off >= size ? 0 : size - off < block ? size - off : block;
}

uint32_t incr_diff(const cn_h128 *prev, uint64_t prev_size, const cn_h128 *cur, uint64_t size,
                   uint32_t block, cn_run *runs, uint64_t *changed)
{
    uint64_t nb = cn_incr_nblocks(size, block), pnb = cn_incr_nblocks(prev_size, block);
    uint32_t n = 0;
    *changed = 0;
    for (uint64_t b = 0; b < nb; b++) {
        bool same = prev && b < pnb && block_len(b, prev_size, block) == block_len(b, size, block) &&
                    prev[b].lo == cur[b].lo && prev[b].hi == cur[b].hi;
        if (same)
            continue;
        (*changed)++;
        if (n > 0 && runs[n - 1].first + runs[n - 1].count == b)
            runs[n - 1].count++;
        else
            runs[n++] = (cn_run){(uint32_t)b, 1};
    }
    return n;
}

uint64_t incr_run_bytes(const cn_run *runs, uint32_t n, uint64_t size, uint32_t block)
{
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t lo = (uint64_t)runs[i].first * block;
        uint64_t hi = lo + (uint64_t)runs[i].count * block;
        bytes += (hi < size ? hi : size) - (lo < size ? lo : size);
    }
    return bytes;
}
