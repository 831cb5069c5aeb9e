/*
 * agg_pipe.c - the write stage of the aggregated-file writer (agg.c) on a
 * thread of its own, so that gathering and compressing the next chunk
 * overlaps writing this one (mcrEngine's pipelining of fetch, compression
 * and write; the pipelined-compression paper's write queue).
 *
 * One slot: cz_agg_pipe_post waits until the unit posted before has been
 * handed to the sink, then posts the new one and returns. A writer that
 * alternates between two buffer sets may therefore refill the set of the
 * unit before last as soon as post returns. The sink is called from the
 * pipe's thread only, in post order, one call at a time. The first failure
 * of the sink is kept and returned by every later post and drain (its
 * message copied into their ERR); units posted after it are dropped.
 *
 * Ownership: the pipe borrows every posted buffer until the next post or
 * drain returns; the caller owns the pipe and stops it.
 */
#include "levels/pfs/agg_impl.h"

#include <pthread.h>
#include <stdlib.h>

struct cz_agg_pipe {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    cz_agg_sink sink;
    void *arg;
    const void *buf;   /* the posted unit; NULL: the slot is empty */
    size_t len;
    bool stop;
    int rc;            /* the sink's first failure */
    cn_err err;
};

static void *run(void *arg)
{
    cz_agg_pipe *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->buf && !p->stop)
            pthread_cond_wait(&p->cv, &p->mu);
        if (!p->buf)
            break;
        const void *buf = p->buf;
        size_t len = p->len;
        bool skip = p->rc != 0;
        pthread_mutex_unlock(&p->mu);
        cn_err err = {0};
        int rc = skip ? 0 : p->sink(p->arg, buf, len, &err);
        pthread_mutex_lock(&p->mu);
        if (rc && !p->rc) {
            p->rc = rc < 0 ? rc : CAIRN_EIO;
            p->err = err;
            if (!p->err.msg[0])
                cn_fail(&p->err, p->rc, "aggregated file: the sink refused %zu bytes", len);
        }
        p->buf = NULL;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

cz_agg_pipe *cz_agg_pipe_start(cz_agg_sink sink, void *arg)
{
    cz_agg_pipe *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->sink = sink;
    p->arg = arg;
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p);
        return NULL;
    }
    if (pthread_cond_init(&p->cv, NULL) != 0) {
        pthread_mutex_destroy(&p->mu);
        free(p);
        return NULL;
    }
    if (pthread_create(&p->thread, NULL, run, p) != 0) {
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        free(p);
        return NULL;
    }
    return p;
}

/* With p->mu held: wait for the slot; the first failure, copied to ERR. */
static int wait_empty(cz_agg_pipe *p, cn_err *err)
{
    while (p->buf)
        pthread_cond_wait(&p->cv, &p->mu);
    if (p->rc && err)
        *err = p->err;
    return p->rc;
}

int cz_agg_pipe_post(cz_agg_pipe *p, const void *buf, size_t len, cn_err *err)
{
    pthread_mutex_lock(&p->mu);
    int rc = wait_empty(p, err);
    if (!rc && len) {
        p->buf = buf;
        p->len = len;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

int cz_agg_pipe_drain(cz_agg_pipe *p, cn_err *err)
{
    pthread_mutex_lock(&p->mu);
    int rc = wait_empty(p, err);
    pthread_mutex_unlock(&p->mu);
    return rc;
}

void cz_agg_pipe_stop(cz_agg_pipe *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    wait_empty(p, NULL);
    p->stop = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
