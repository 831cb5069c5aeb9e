/*
 * pipe.c - the write pipeline: variables in, frames out, in order.
 *
 * The paper's two ring queues (section 3.1), one slot per buffer in flight:
 * the calling thread fills slots (a piece of a large variable is referenced
 * in place; small variables of one codec and type are copied together into
 * the slot's buffer, the paper's write aggregation, section 3.2) and marks
 * them READY; pool threads take READY slots in order, compress them into the
 * slot's output and mark them DONE; the calling thread hands DONE slots to
 * the sink strictly in order and empties them. Filling, compressing and
 * writing overlap, so the checkpoint takes about as long as its slowest
 * stage (equation 3). Raw variables skip the pool: their slots are DONE as
 * soon as they are filled, and the sink reads the application's memory.
 * A lossy variable is cut into slabs of whole rows of its slowest dimension,
 * so each frame is itself a 1-3 D array (rows wider than a buffer: cut flat);
 * its slabs are up to LOSSY_PIECE (or the buffer, if larger), not one buffer,
 * since every slab restarts the prediction and the coder's adaptation and
 * carries its own headers: at high ratios those fixed costs are what is
 * stored (a slot's buffers grow to such a slab when one comes, and stay);
 * so is an fpzip variable with a 2-D or 3-D shape, which fpzip then predicts
 * along every dimension (and which is never packed with others).
 *
 * Ownership: slots and threads live for one cz_write call.
 */
#include "compress/compress.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RAW_PIECE (4u << 20) /* raw variables reach the sink in pieces of this */
#define LOSSY_PIECE (8u << 20) /* lossy slabs: at most this, or the buffer if larger */

enum { EMPTY, READY, BUSY, DONE };

typedef struct task {
    uint32_t item;          /* the item (pack owner) whose stream this extends */
    uint32_t last;          /* > item for a pack: items item..last share the buffer */
    const uint8_t *at;      /* the raw bytes in place, or NULL: gather them from the
                             * item's spans, starting at span SPAN, byte SPAN_OFF */
    uint32_t span;
    uint64_t span_off;
    size_t len;             /* raw bytes */
    uint8_t type;           /* the frame's type: CAIRN_BYTE for a pack of mixed types */
    bool flat;              /* lossy, rows wider than a buffer: encode as 1-D */
    bool pack;              /* whole small items item..last, copied together */
} task;

typedef struct slot {
    int state;
    const uint8_t *src;     /* raw bytes: the item's memory or `in` */
    size_t len;
    const uint8_t *out;     /* what goes to the sink */
    size_t out_len;
    double max_error;       /* lossy frames: the largest error */
    uint8_t *in, *frame, *scratch;
    size_t in_cap;          /* bytes of IN: the buffer, or a gathered lossy slab */
    size_t scratch_cap;     /* bytes of SCRATCH (FRAME: cz_frame_bound of it): the buffer,
                             * or a lossy slab (its reconstruction) */
} slot;

typedef struct pipe {
    cz_item *items;
    const cz_opts *o;
    task *t;
    size_t nt;
    slot *s;
    int nslots;
    size_t filled;          /* tasks filled by the caller */
    size_t *queue;          /* filled tasks that need compressing, in order */
    size_t queued, taken;   /* appended by the caller, taken by the pool */
    bool stop;
    double compress_s;
    pthread_mutex_t mu;
    pthread_cond_t ready, done;
} pipe_t;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Does the codec look at the element type (filters, float predictors)? */
static bool typed(int codec)
{
    return codec == CZ_SHUF_ZSTD || codec == CZ_SHUF_LZ4 || codec == CZ_FPZIP;
}

/* An fpzip item whose frames get their shape (whole rows, as a lossy one's). */
static bool shaped(const cz_item *it)
{
    return it->codec == CZ_FPZIP && it->shape && !it->span && it->shape->ndims >= 2;
}

/* Cut in whole rows: lossy items and shaped fpzip ones. */
static bool by_rows(const cz_item *it)
{
    return cz_is_lossy(it->codec) || shaped(it);
}

static bool is_small(const cz_item *it, uint32_t buf)
{
    return it->codec != CZ_RAW && !by_rows(it) && it->size > 0 && it->size <= buf / 2;
}

/* Bytes of one row of a lossy or shaped item's slowest dimension. */
static uint64_t row_bytes(const cz_item *it)
{
    uint64_t row = cairn_type_size((cairn_type)it->type);
    for (int d = 1; d < it->shape->ndims; d++)
        row *= it->shape->dims[d];
    return row;
}

/* Bytes per task for IT (not packed): raw variables in big pieces, a lossy
 * or shaped one in whole rows (*FLAT when a row is wider than a buffer),
 * others BUF. */
static uint64_t piece_of(const cz_item *it, uint32_t buf, bool *flat)
{
    *flat = false;
    if (it->codec == CZ_RAW)
        return RAW_PIECE;
    if (!by_rows(it))
        return buf;
    uint64_t row = row_bytes(it), cap = buf;
    if (cz_is_lossy(it->codec) && cap < LOSSY_PIECE)
        cap = LOSSY_PIECE;
    *flat = row > cap;
    return *flat ? cap : cap / row * row;
}

/* Copy LEN bytes of IT's spans, from span SPAN at byte OFF, into DST. */
static void gather(const cz_item *it, uint32_t span, uint64_t off, size_t len, uint8_t *dst)
{
    for (; len > 0; span++, off = 0) {
        size_t take = (size_t)(it->span[span].len - off < len ? it->span[span].len - off : len);
        memcpy(dst, (const uint8_t *)it->span[span].ptr + off, take);
        dst += take;
        len -= take;
    }
}

/* IT's bytes into DST (SIZE bytes): a pack member's share of the buffer. */
static void copy_item(const cz_item *it, uint8_t *dst)
{
    if (it->span)
        gather(it, 0, 0, (size_t)it->size, dst);
    else
        memcpy(dst, it->ptr, (size_t)it->size);
}

/* Tasks of a spanned item: raw ones reference each span in place, in pieces
 * of at most PIECE; others are PIECE bytes of the stream, gathered. */
static size_t plan_spans(const cz_item *it, uint32_t i, uint64_t piece, bool flat, task *t)
{
    size_t nt = 0;
    if (it->codec == CZ_RAW) {
        for (uint32_t k = 0; k < it->nspan; k++)
            for (uint64_t off = 0; off < it->span[k].len; off += piece) {
                uint64_t len = it->span[k].len - off < piece ? it->span[k].len - off : piece;
                t[nt++] = (task){.item = i, .last = i, .at = (const uint8_t *)it->span[k].ptr + off,
                                 .span = k, .span_off = off, .len = (size_t)len,
                                 .type = it->type, .flat = flat};
            }
        return nt;
    }
    uint32_t k = 0;
    uint64_t in_span = 0;
    for (uint64_t off = 0; off < it->size; off += piece) {
        uint64_t len = it->size - off < piece ? it->size - off : piece;
        t[nt++] = (task){.item = i, .last = i, .span = k, .span_off = in_span,
                         .len = (size_t)len, .type = it->type, .flat = flat};
        for (uint64_t adv = len; adv > 0;) { /* move the cursor past this task */
            uint64_t step = it->span[k].len - in_span < adv ? it->span[k].len - in_span : adv;
            adv -= step;
            in_span += step;
            if (in_span == it->span[k].len && k + 1 < it->nspan)
                k++, in_span = 0;
        }
    }
    return nt;
}

/* Cut the items into tasks; mark packs. Returns the task count. */
static size_t plan(cz_item *items, uint32_t n, uint32_t buf, task *t)
{
    size_t nt = 0;
    for (uint32_t i = 0; i < n;) {
        cz_item *it = &items[i];
        it->packed = false;
        it->stored = 0;
        if (it->size == 0)
            it->codec = CZ_RAW; /* nothing to compress */
        it->frame_raw = it->codec == CZ_RAW ? 0 : it->size;
        if (is_small(it, buf)) {
            uint32_t j = i + 1;
            uint64_t total = it->size;
            uint8_t type = it->type;
            while (j < n && is_small(&items[j], buf) && items[j].codec == it->codec &&
                   (items[j].type == it->type || !typed(it->codec)) &&
                   total + items[j].size <= buf) {
                if (items[j].type != type)
                    type = CAIRN_BYTE;
                total += items[j].size;
                items[j].packed = true;
                items[j].stored = 0;
                items[j].frame_raw = 0;
                j++;
            }
            it->frame_raw = total;
            t[nt++] = (task){.item = i, .last = j - 1, .len = (size_t)total, .type = type,
                             .pack = true};
            i = j;
            continue;
        }
        bool flat;
        uint64_t piece = piece_of(it, buf, &flat);
        if (it->span)
            nt += plan_spans(it, i, piece, flat, t + nt);
        else
            for (uint64_t off = 0; off < it->size; off += piece)
                t[nt++] = (task){.item = i, .last = i, .at = (const uint8_t *)it->ptr + off,
                                 .len = (size_t)(it->size - off < piece ? it->size - off : piece),
                                 .type = it->type, .flat = flat};
        it->max_error = 0;
        i++;
    }
    return nt;
}

static size_t count_tasks(const cz_item *items, uint32_t n, uint32_t buf)
{
    size_t nt = 0;
    for (uint32_t i = 0; i < n; i++) {
        bool flat;
        const cz_item *it = &items[i];
        uint64_t piece = piece_of(it, buf, &flat);
        nt += (size_t)((it->size + piece - 1) / piece); /* packs need fewer */
        for (uint32_t k = 0; it->span && it->codec == CZ_RAW && k < it->nspan; k++)
            nt += 1; /* raw pieces also end at every span's end */
    }
    return nt;
}

static void compress_slot(pipe_t *p, slot *s, const task *t)
{
    const cz_item *it = &p->items[t->item];
    double t0 = now();
    s->max_error = 0;
    if (cz_is_lossy(it->codec)) {
        cz_shape slab = *it->shape; /* this frame's rows */
        size_t es = cairn_type_size((cairn_type)it->type);
        if (t->flat) {
            slab.ndims = 1;
            memset(slab.dims, 0, sizeof slab.dims);
            slab.dims[0] = s->len / es;
        } else {
            slab.dims[0] = s->len / row_bytes(it);
        }
        /* the reconstruction goes to SCRATCH, never IN: a gathered slab (a
         * delta's changed blocks) is the source in IN, and the codec reads the
         * source again after reconstructing, to measure and correct the error */
        s->out_len = cz_frame_encode_lossy(it->codec, &slab, s->src, s->len, s->frame,
                                           s->scratch, &s->max_error);
    } else if (shaped(it) && !t->flat && !t->pack) {
        cz_shape slab = *it->shape;
        slab.dims[0] = s->len / row_bytes(it);
        s->out_len = cz_frame_encode_shaped(it->codec, &slab, p->o->level, s->src, s->len,
                                            s->frame, s->scratch);
    } else {
        s->out_len = cz_frame_encode(it->codec, t->type, p->o->level, s->src, s->len, s->frame,
                                     s->scratch);
    }
    s->out = s->frame;
    double dt = now() - t0;
    pthread_mutex_lock(&p->mu);
    p->compress_s += dt;
    pthread_mutex_unlock(&p->mu);
}

static void *worker(void *arg)
{
    pipe_t *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->taken >= p->queued)
            pthread_cond_wait(&p->ready, &p->mu);
        if (p->stop)
            break;
        size_t k = p->queue[p->taken++];
        slot *s = &p->s[k % p->nslots];
        s->state = BUSY;
        pthread_mutex_unlock(&p->mu);
        compress_slot(p, s, &p->t[k]);
        pthread_mutex_lock(&p->mu);
        s->state = DONE;
        pthread_cond_broadcast(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Grow *BUF (*CAP bytes) to LEN bytes; false if out of memory. */
static bool grow(uint8_t **buf, size_t *cap, size_t len)
{
    if (len <= *cap)
        return true;
    uint8_t *b = realloc(*buf, len);
    if (!b)
        return false;
    *buf = b;
    *cap = len;
    return true;
}

/* Fill the slot of task K (the caller's stage; the slot is EMPTY, so no
 * worker touches it): 0, or CAIRN_ENOMEM when a lossy slab larger than the
 * slot's buffers cannot have them grown. Only lossy slabs exceed the buffer:
 * FRAME and SCRATCH (their reconstruction) grow to them, and IN too when the
 * slab is gathered there. */
static int fill(pipe_t *p, size_t k, cn_err *err)
{
    const task *t = &p->t[k];
    slot *s = &p->s[k % p->nslots];
    const cz_item *it = &p->items[t->item];
    if (t->len > s->scratch_cap) {
        uint8_t *frame = realloc(s->frame, cz_frame_bound(t->len));
        if (frame)
            s->frame = frame;
        CN_FAIL_IF(!frame || !grow(&s->scratch, &s->scratch_cap, t->len), err, CAIRN_ENOMEM,
                   "no memory for a lossy slab of %zu bytes", t->len);
    }
    CN_FAIL_IF(!t->at && !grow(&s->in, &s->in_cap, t->len), err, CAIRN_ENOMEM,
               "no memory for a lossy slab of %zu bytes", t->len);
    s->len = t->len;
    s->max_error = 0;
    if (t->pack) { /* small items: gathered into the slot's buffer */
        size_t at = 0;
        for (uint32_t i = t->item; i <= t->last; i++) {
            copy_item(&p->items[i], s->in + at);
            at += (size_t)p->items[i].size;
        }
        s->src = s->in;
    } else if (t->at) {
        s->src = t->at;
    } else {
        gather(it, t->span, t->span_off, t->len, s->in);
        s->src = s->in;
    }
    if (it->codec == CZ_RAW) {
        s->out = s->src;
        s->out_len = s->len;
    }
    return 0;
}

static int alloc_slots(pipe_t *p, uint32_t buf, cn_err *err)
{
    p->s = calloc((size_t)p->nslots, sizeof *p->s);
    CN_FAIL_IF(!p->s, err, CAIRN_ENOMEM, "no memory for the compression queue");
    for (int i = 0; i < p->nslots; i++) {
        slot *s = &p->s[i];
        s->in = malloc(buf);
        s->scratch = malloc(buf);
        s->frame = malloc(cz_frame_bound(buf));
        s->in_cap = s->scratch_cap = buf;
        CN_FAIL_IF(!s->in || !s->scratch || !s->frame, err, CAIRN_ENOMEM,
                   "no memory for %d compression buffers of %u bytes", p->nslots, buf);
    }
    return 0;
}

static void free_slots(pipe_t *p)
{
    for (int i = 0; p->s && i < p->nslots; i++) {
        free(p->s[i].in);
        free(p->s[i].scratch);
        free(p->s[i].frame);
    }
    free(p->s);
}

/* The caller's loop: keep the queue full, drain it in order. */
static int run(pipe_t *p, int threads, cz_sink sink, void *arg, cz_stats *st, cn_err *err)
{
    int rc = 0;
    for (size_t w = 0; w < p->nt && rc == 0; w++) {
        pthread_mutex_lock(&p->mu);
        while (p->filled < p->nt && p->filled < w + (size_t)p->nslots) {
            size_t k = p->filled;
            pthread_mutex_unlock(&p->mu);
            if ((rc = fill(p, k, err)) != 0)
                return rc; /* cz_write stops the pool */
            bool raw = p->items[p->t[k].item].codec == CZ_RAW;
            if (!raw && threads == 0)
                compress_slot(p, &p->s[k % p->nslots], &p->t[k]);
            pthread_mutex_lock(&p->mu);
            p->s[k % p->nslots].state = raw || threads == 0 ? DONE : READY;
            if (!raw && threads > 0)
                p->queue[p->queued++] = k;
            p->filled++;
            pthread_cond_broadcast(&p->ready);
        }
        slot *s = &p->s[w % p->nslots];
        while (s->state != DONE)
            pthread_cond_wait(&p->done, &p->mu);
        pthread_mutex_unlock(&p->mu);
        const task *t = &p->t[w];
        double t0 = now();
        rc = sink(arg, t->item, s->out, s->out_len, err);
        st->write_s += now() - t0;
        p->items[t->item].stored += s->out_len;
        if (s->max_error > p->items[t->item].max_error)
            p->items[t->item].max_error = s->max_error;
        st->stored += s->out_len;
        pthread_mutex_lock(&p->mu);
        s->state = EMPTY;
        pthread_mutex_unlock(&p->mu);
    }
    return rc;
}

int cz_write(cz_item *items, uint32_t n, const cz_opts *o, cz_sink sink, void *arg,
             cz_stats *stats, cn_err *err)
{
    cz_stats st = {0};
    double t0 = now();
    uint32_t buf = o->buf_size / 8 * 8; /* a whole number of any element */
    CN_FAIL_IF(buf < CZ_MIN_BUF || buf > CZ_MAX_BUF || o->threads < 0 || o->threads > 256, err,
               CAIRN_EINVAL, "compression buffer %u bytes / %d threads out of range",
               o->buf_size, o->threads);
    for (uint32_t i = 0; i < n; i++) {
        CN_FAIL_IF(items[i].codec != CZ_RAW && !cz_codec_accepts(items[i].codec, items[i].type),
                   err, CAIRN_EINVAL, "codec %s cannot store type %s",
                   cz_codec_name(items[i].codec), cn_type_name(items[i].type));
        CN_FAIL_IF(cz_is_lossy(items[i].codec) &&
                       (!items[i].shape || items[i].shape->type != items[i].type ||
                        items[i].shape->ndims < 1 || items[i].shape->ndims > CAIRN_MAX_DIMS ||
                        !(items[i].shape->bound > 0) ||
                        (items[i].span && items[i].shape->ndims != 1)),
                   err, CAIRN_EINVAL, "lossy codec %s without a shape and bound",
                   cz_codec_name(items[i].codec));
        uint64_t cells = 1;
        for (int d = 0; items[i].shape && d < items[i].shape->ndims && d < CAIRN_MAX_DIMS; d++)
            cells *= items[i].shape->dims[d];
        CN_FAIL_IF(shaped(&items[i]) &&
                       (items[i].shape->type != items[i].type ||
                        items[i].shape->ndims > CAIRN_MAX_DIMS ||
                        cells * cairn_type_size((cairn_type)items[i].type) != items[i].size),
                   err, CAIRN_EINVAL, "item %u: its shape does not hold its %llu bytes of %s", i,
                   (unsigned long long)items[i].size, cn_type_name(items[i].type));
        uint64_t spanned = 0;
        for (uint32_t k = 0; items[i].span && k < items[i].nspan; k++)
            spanned += items[i].span[k].len;
        CN_FAIL_IF(items[i].span && spanned != items[i].size, err, CAIRN_EINVAL,
                   "item %u: spans hold %llu bytes, its size is %llu", i,
                   (unsigned long long)spanned, (unsigned long long)items[i].size);
        st.raw += items[i].size;
    }
    pipe_t p = {.items = items, .o = o};
    size_t max_tasks = count_tasks(items, n, buf) + 1;
    p.t = malloc(max_tasks * sizeof *p.t);
    p.queue = malloc(max_tasks * sizeof *p.queue);
    if (!p.t || !p.queue) {
        free(p.t);
        free(p.queue);
        return cn_fail(err, CAIRN_ENOMEM, "no memory for the compression plan");
    }
    p.nt = plan(items, n, buf, p.t);
    int threads = o->threads;
    p.nslots = threads ? 2 * threads + 2 : 2;
    if (p.nslots > CZ_QUEUE_MAX)
        p.nslots = CZ_QUEUE_MAX;
    pthread_t tid[256];
    int started = 0;
    int rc = alloc_slots(&p, buf, err);
    if (rc == 0) {
        pthread_mutex_init(&p.mu, NULL);
        pthread_cond_init(&p.ready, NULL);
        pthread_cond_init(&p.done, NULL);
        for (; started < threads; started++)
            if (pthread_create(&tid[started], NULL, worker, &p) != 0)
                break;
        if (threads > 0 && started == 0)
            threads = 0; /* no pool: compress in this thread */
        rc = run(&p, threads, sink, arg, &st, err);
        pthread_mutex_lock(&p.mu);
        p.stop = true;
        pthread_cond_broadcast(&p.ready);
        pthread_mutex_unlock(&p.mu);
        for (int i = 0; i < started; i++)
            pthread_join(tid[i], NULL);
        pthread_cond_destroy(&p.done);
        pthread_cond_destroy(&p.ready);
        pthread_mutex_destroy(&p.mu);
    }
    free_slots(&p);
    free(p.t);
    free(p.queue);
    st.compress_s = p.compress_s;
    st.total_s = now() - t0;
    if (stats)
        *stats = st;
    return rc;
}
