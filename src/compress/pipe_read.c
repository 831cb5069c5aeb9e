/*
 * pipe_read.c - the read pipeline: stored frames back into memory.
 *
 * The write pipeline run backwards. First every frame header of every stream
 * is parsed and checked (codec, type, sizes adding up to the stream's
 * frame_raw and its stored size, destinations adding up too), so that a
 * malformed stream is refused before any destination is touched. Then the
 * frames are decoded in parallel, each by one thread, straight into place
 * when it falls inside one destination, else through the thread's buffer
 * and scattered. Each decoded frame is checked against its raw checksum.
 * Every worker's buffers are allocated before the first frame decodes, so a
 * lack of memory there also fails with every destination untouched.
 *
 * Ownership: the frame list and per-thread buffers live for one cz_read.
 */
#include "compress/compress.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct job {
    cz_frame f;
    const cz_stream *s;
    uint64_t roff;        /* offset of the frame's bytes in the stream's decoded bytes */
    uint32_t d0;          /* the destination holding byte ROFF, which starts at ... */
    uint64_t d0_start;    /* ... this offset of the stream (a delta has many) */
} job;

typedef struct reader {
    job *j;
    size_t nj, next;
    size_t max_raw;
    int rc;
    cn_err *err;
    pthread_mutex_t mu;
} reader;

/* Count and check the frames of S; append them to J (NULL: count only). */
static int scan(const cz_stream *s, job *j, size_t *nj, cn_err *err)
{
    uint64_t dest = 0, roff = 0, at = 0, d0_start = 0;
    uint32_t d0 = 0;
    for (uint32_t d = 0; d < s->ndest; d++)
        dest += s->dest[d].len;
    CN_FAIL_IF(dest != s->frame_raw, err, CAIRN_ECORRUPT,
               "'%s': %llu bytes to restore, frames hold %llu", s->name,
               (unsigned long long)dest, (unsigned long long)s->frame_raw);
    while (at < s->stored_size) {
        cz_frame f;
        size_t used;
        int rc = cz_frame_parse(s->stored + at, (size_t)(s->stored_size - at), s->codec, &f,
                                &used, err);
        if (rc < 0) {
            cn_err_prefix(err, "'%s' at stored byte %llu: ", s->name, (unsigned long long)at);
            return rc;
        }
        /* CAIRN_BYTE: a pack of variables of several types */
        CN_FAIL_IF((f.type != s->type && f.type != CAIRN_BYTE) || f.raw_len > s->frame_raw - roff,
                   err, CAIRN_ECORRUPT,
                   "'%s': frame at stored byte %llu does not fit the variable", s->name,
                   (unsigned long long)at);
        while (d0 + 1 < s->ndest && d0_start + s->dest[d0].len <= roff)
            d0_start += s->dest[d0++].len;
        if (j)
            j[*nj] = (job){f, s, roff, d0, d0_start};
        (*nj)++;
        roff += f.raw_len;
        at += used;
    }
    CN_FAIL_IF(roff != s->frame_raw, err, CAIRN_ECORRUPT,
               "'%s': frames decode to %llu bytes, expected %llu", s->name,
               (unsigned long long)roff, (unsigned long long)s->frame_raw);
    return 0;
}

/* Decode one frame into place, or via TMP and scatter. */
static int decode_job(const job *jb, uint8_t *tmp, uint8_t *scratch, cn_err *err)
{
    const cz_stream *s = jb->s;
    uint64_t end = jb->roff + jb->f.raw_len;
    const cz_dest *d0 = s->ndest ? &s->dest[jb->d0] : NULL;
    if (d0 && d0->ptr && end <= jb->d0_start + d0->len) /* inside one destination */
        return cz_frame_decode(&jb->f, (uint8_t *)d0->ptr + (jb->roff - jb->d0_start), scratch,
                               err);
    CN_TRY(cz_frame_decode(&jb->f, tmp, scratch, err));
    uint64_t start = jb->d0_start;
    for (uint32_t d = jb->d0; d < s->ndest && start < end; d++) {
        uint64_t dend = start + s->dest[d].len;
        uint64_t lo = jb->roff > start ? jb->roff : start, hi = end < dend ? end : dend;
        if (lo < hi && s->dest[d].ptr)
            memcpy((uint8_t *)s->dest[d].ptr + (lo - start), tmp + (lo - jb->roff),
                   (size_t)(hi - lo));
        start = dend;
    }
    return 0;
}

/* One decoding thread and its buffers (max_raw bytes each). */
typedef struct worker {
    reader *r;
    uint8_t *tmp, *scratch;
    pthread_t tid;
} worker;

static void *decode_loop(void *arg)
{
    worker *w = arg;
    reader *r = w->r;
    cn_err local = {0};
    int rc = 0;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        if (rc < 0 && r->rc == 0) {
            r->rc = rc;
            *r->err = local;
        }
        size_t k = r->rc == 0 && r->next < r->nj ? r->next++ : r->nj;
        pthread_mutex_unlock(&r->mu);
        if (k == r->nj)
            break;
        rc = decode_job(&r->j[k], w->tmp, w->scratch, &local);
        if (rc < 0)
            cn_err_prefix(&local, "'%s': ", r->j[k].s->name);
    }
    return NULL;
}

#define MAX_WORKERS 256

int cz_read(const cz_stream *s, uint32_t n, int threads, cn_err *err)
{
    size_t nj = 0;
    for (uint32_t i = 0; i < n; i++)
        CN_TRY(scan(&s[i], NULL, &nj, err));
    reader r = {.err = err};
    r.j = malloc((nj ? nj : 1) * sizeof *r.j);
    CN_FAIL_IF(!r.j, err, CAIRN_ENOMEM, "no memory for %zu frames", nj);
    for (uint32_t i = 0; i < n; i++)
        scan(&s[i], r.j, &r.nj, err); /* checked above */
    for (size_t k = 0; k < r.nj; k++)
        if (r.j[k].f.raw_len > r.max_raw)
            r.max_raw = r.j[k].f.raw_len;
    /* THREADS workers (at least 1, at most one per frame), the calling thread first. */
    size_t want = threads < 1 ? 1 : threads > MAX_WORKERS ? MAX_WORKERS : (size_t)threads;
    want = want > r.nj ? (r.nj ? r.nj : 1) : want;
    worker *w = calloc(want, sizeof *w);
    size_t nw = 0;
    for (; w && nw < want; nw++) { /* every buffer before any frame decodes */
        w[nw] = (worker){.r = &r, .tmp = malloc(r.max_raw ? r.max_raw : 1),
                         .scratch = malloc(r.max_raw ? r.max_raw : 1)};
        if (!w[nw].tmp || !w[nw].scratch) {
            free(w[nw].tmp), free(w[nw].scratch);
            break;
        }
    }
    if (nw == 0) {
        free(w), free(r.j);
        return cn_fail(err, CAIRN_ENOMEM, "no memory to decompress (%zu bytes)",
                       2 * (size_t)r.max_raw);
    }
    pthread_mutex_init(&r.mu, NULL);
    size_t started = 1;
    for (; started < nw; started++)
        if (pthread_create(&w[started].tid, NULL, decode_loop, &w[started]) != 0)
            break;
    decode_loop(&w[0]);
    for (size_t i = 1; i < started; i++)
        pthread_join(w[i].tid, NULL);
    for (size_t i = 0; i < nw; i++)
        free(w[i].tmp), free(w[i].scratch);
    pthread_mutex_destroy(&r.mu);
    free(w);
    free(r.j);
    return r.rc;
}
