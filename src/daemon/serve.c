/*
 * serve.c - cairnd's socket thread. Clients (the node's ranks through the
 * library, and the CLI) send one request line and wait for the answer, so
 * every request is answered at once from the shared state; only DRAIN waits,
 * and the main thread answers it (on a dup of the client's descriptor) when
 * the drain is done, and HOLD, answered once every daemon has agreed to hold
 * (work.c) and held until its client disconnects. A peer of another user is
 * dropped unheard; GEN needs a HELLO that matched this daemon's job, node and
 * configuration first. GEN is answered OK only when the generation is queued
 * (or is being worked on), or is at the level asked for already: one at or
 * below the newest generation the daemons finished is otherwise refused,
 * saying so, and the library raises it itself. The socket thread reads
 * manifests through a directory descriptor of its own (dirfd), never the main
 * thread's. It stays at normal priority (prio.c): it answers at once even
 * while the work waits for a core; each request, and a timer once a second,
 * lets it change the work's priority. It takes MU with d_lock: the work
 * thread may hold it, preempted at idle priority.
 */
#include "daemon/daemon.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_CLIENTS 256

typedef struct client {
    int fd;
    bool hello;
    bool held;                   /* sent HOLD: counted in st->holds until it goes */
} client;

static void reply(int fd, const cn_rep *rep)
{
    char line[CN_PROTO_LINE];
    int n = cn_rep_format(rep, line);
    cn_err ignored = {0};
    if (n > 0)
        cn_line_write(fd, line, (size_t)n, &ignored);
}

static void refuse(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void refuse(int fd, const char *fmt, ...)
{
    cn_rep rep = {.kind = CN_REP_ERR};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rep.text, sizeof rep.text, fmt, ap);
    va_end(ap);
    reply(fd, &rep);
}

/* Queue ID under MU: 0 queued (or queued already), 1 at or below the newest
 * generation worked on, -1 out of memory. */
static int enqueue_locked(d_state *st, int64_t id, int level, int flush)
{
    if (id <= st->done)
        return 1;
    size_t i = 0;
    while (i < st->nqueue && st->queue[i].id < id)
        i++;
    if (i < st->nqueue && st->queue[i].id == id)
        return 0;
    if (st->nqueue == st->capqueue) {
        size_t cap = st->capqueue ? 2 * st->capqueue : 16;
        d_gen *q = realloc(st->queue, cap * sizeof *q);
        if (!q)
            return -1;
        st->queue = q, st->capqueue = cap;
    }
    memmove(&st->queue[i + 1], &st->queue[i], (st->nqueue - i) * sizeof *st->queue);
    st->queue[i] = (d_gen){id, level, flush, d_now()};
    st->nqueue++;
    return 0;
}

void d_enqueue(d_state *st, int64_t id, int level, int flush)
{
    d_lock(st);
    if (enqueue_locked(st, id, level, flush) < 0)
        cn_error("out of memory: generation %lld not queued", (long long)id);
    pthread_mutex_unlock(&st->mu);
}

/* A GEN at or below the newest generation worked on comes late (this node's
 * ranks were slow: the daemons agreed on the generation from the other nodes'
 * GENs and raised it already) or from a new timeline (a restart from an older
 * generation wrote a new one of that id). Only the generation on disk tells
 * them apart: it is done iff this node's manifest of it says it is at the
 * level asked for. A flush asked for is not checked here: refused. */
static bool at_level(const d_state *st, const cn_req *req)
{
    if (req->flush || req->level >= CAIRN_LEVEL_PFS || st->dirfd < 0)
        return false;
    char name[64];
    cn_gen_dirname(name, sizeof name, req->gen);
    cn_err err = {0};
    int fd = cn_dir_open(st->dirfd, name, false, &err);
    if (fd < 0)
        return false;
    uint8_t *buf = NULL;
    size_t len = 0;
    cn_manifest m;
    bool ok = cn_read_small(fd, CN_MANIFEST_NAME, 64u << 20, &buf, &len, &err) == 0 &&
              cn_manifest_decode(buf, len, &m, &err) == 0;
    close(fd);
    free(buf);
    if (!ok)
        return false;
    ok = (int)m.level >= req->level && m.generation == req->gen && strcmp(m.job, st->job) == 0;
    cn_manifest_free(&m);
    return ok;
}

/* GEN: queue it, or say why not. A GEN below queued ones means the job went
 * back (a restart from an older generation, a new run of the job): the newer
 * ones queued belong to the timeline it left, and are not worked on. */
static void gen(d_state *st, client *c, const cn_req *req)
{
    d_lock(st);
    size_t before = st->nqueue;
    while (st->nqueue && st->queue[st->nqueue - 1].id > req->gen)
        st->nqueue--;
    size_t dropped = before - st->nqueue;
    int64_t done = st->done;
    int rc = enqueue_locked(st, req->gen, req->level, req->flush);
    pthread_mutex_unlock(&st->mu);
    if (dropped)
        cn_info("generation %lld handed over again: %zu newer queued generation(s) dropped",
                (long long)req->gen, dropped);
    if (rc > 0 && at_level(st, req))
        reply(c->fd, &(cn_rep){.kind = CN_REP_OK, .pid = -1});
    else if (rc > 0)
        refuse(c->fd, "generation %lld is not above %lld, the newest one the daemons worked on: "
               "it is not queued", (long long)req->gen, (long long)done);
    else if (rc < 0)
        refuse(c->fd, "out of memory: generation %lld not queued", (long long)req->gen);
    else
        reply(c->fd, &(cn_rep){.kind = CN_REP_OK, .pid = -1});
}

/* Keep a dup of C's descriptor in *FDS (under MU) for the main thread to
 * answer; with HOLD, count C as holding. false: out of resources (refused). */
static bool wait_main(d_state *st, client *c, int **fds, size_t *n, bool hold)
{
    int fd = dup(c->fd);
    d_lock(st);
    int *v = fd >= 0 ? realloc(*fds, (*n + 1) * sizeof *v) : NULL;
    if (v) {
        *fds = v, v[(*n)++] = fd;
        if (hold && !c->held)
            c->held = true, st->holds++;
    }
    pthread_mutex_unlock(&st->mu);
    if (!v) {
        if (fd >= 0)
            close(fd);
        refuse(c->fd, "out of resources");
    }
    return v != NULL;
}

/* Client C goes: its HOLD with it. */
static void drop(d_state *st, client *c)
{
    if (c->held) {
        d_lock(st);
        st->holds--;
        pthread_mutex_unlock(&st->mu);
    }
    close(c->fd);
}

void d_hold_answer(d_state *st)
{
    char line[CN_PROTO_LINE];
    int n = cn_rep_format(&(cn_rep){.kind = CN_REP_OK, .pid = -1}, line);
    pthread_mutex_lock(&st->mu);
    for (size_t i = 0; i < st->nhold; i++) {
        cn_err ignored = {0};
        cn_line_write(st->hold_fds[i], line, (size_t)n, &ignored);
        close(st->hold_fds[i]);
    }
    st->nhold = 0;
    pthread_mutex_unlock(&st->mu);
}

static void hello(d_state *st, client *c, const cn_req *req)
{
    if (req->version != CN_PROTO_VERSION)
        refuse(c->fd, "protocol version %u, but this cairnd speaks version %d", req->version,
               CN_PROTO_VERSION);
    else if (strcmp(req->job, st->job) != 0)
        refuse(c->fd, "job %s, but this cairnd serves job %s", req->job, st->job);
    else if (strcmp(req->node, st->node) != 0)
        refuse(c->fd, "node %s, but this cairnd serves node %s", req->node, st->node);
    else if (req->key != st->key)
        refuse(c->fd, "the job's configuration differs from the daemon's (store.base, "
               "store.keep, erasure.* or pfs.*): start cairnd with the job's configuration");
    else
        c->hello = true, reply(c->fd, &(cn_rep){.kind = CN_REP_OK, .pid = getpid()});
}

/* One request from client C; false drops the client. */
static bool handle(d_state *st, client *c)
{
    char line[CN_PROTO_LINE];
    cn_err err = {0};
    int n = cn_line_read(c->fd, line, 1000, &err);
    if (n < 0)
        return false;
    cn_req req;
    if (cn_req_parse(line, (size_t)n, &req, &err) != 0) {
        refuse(c->fd, "%s", err.msg);
        return false;
    }
    cn_rep ok = {.kind = CN_REP_OK, .pid = -1};
    switch (req.kind) {
    case CN_REQ_HELLO:
        hello(st, c, &req);
        break;
    case CN_REQ_GEN:
        if (!c->hello) {
            refuse(c->fd, "GEN before a HELLO");
            return false;
        }
        gen(st, c, &req);
        break;
    case CN_REQ_FLUSH:
    case CN_REQ_STOP:
        d_lock(st);
        if (req.kind == CN_REQ_STOP)
            st->stop = 1;
        else if (!st->flush_asked++) /* the first since the last flush: its wait starts */
            st->flush_since = d_now();
        pthread_mutex_unlock(&st->mu);
        reply(c->fd, &ok);
        break;
    case CN_REQ_DRAIN:
        wait_main(st, c, &st->drain_fds, &st->ndrain, false);
        break;
    case CN_REQ_HOLD:
        wait_main(st, c, &st->hold_fds, &st->nhold, true);
        break;
    case CN_REQ_STATUS: {
        d_lock(st);
        cn_rep rep = {.kind = CN_REP_STATUS, .pid = getpid(), .queued = (int64_t)st->nqueue,
                      .busy = st->busy, .done = st->done, .flushed = st->flushed};
        pthread_mutex_unlock(&st->mu);
        reply(c->fd, &rep);
        break;
    }
    }
    return true;
}

static void *serve(void *arg)
{
    d_state *st = arg;
    client cl[MAX_CLIENTS];
    struct pollfd pf[MAX_CLIENTS + 2];
    int n = 0;
    for (;;) {
        pf[0] = (struct pollfd){.fd = st->wake[0], .events = POLLIN};
        pf[1] = (struct pollfd){.fd = st->listen_fd, .events = n < MAX_CLIENTS ? POLLIN : 0};
        for (int i = 0; i < n; i++)
            pf[i + 2] = (struct pollfd){.fd = cl[i].fd, .events = POLLIN};
        int ready = poll(pf, (nfds_t)n + 2, d_prio_poll_ms(st));
        if (ready < 0) {
            if (errno == EINTR)
                continue;
            cn_error("poll: %s", strerror(errno));
            break;
        }
        if (pf[0].revents)
            break;
        for (int i = n - 1; i >= 0; i--) {
            if (!pf[i + 2].revents)
                continue;
            if (!(pf[i + 2].revents & POLLIN) || !handle(st, &cl[i])) {
                drop(st, &cl[i]);
                cl[i] = cl[--n];
            }
        }
        if (pf[1].revents & POLLIN) {
            int fd = accept4(st->listen_fd, NULL, NULL, SOCK_CLOEXEC);
            if (fd >= 0 && !cn_sock_peer_ok(fd)) {
                cn_warn("refused a connection from another user");
                close(fd);
            } else if (fd >= 0) {
                cl[n++] = (client){fd, false, false};
            }
        }
        d_prio_update(st); /* the requests just handled, or a queue grown old, may change it */
        if (ready > 0)
            d_ask(st);
    }
    for (int i = 0; i < n; i++)
        drop(st, &cl[i]);
    return NULL;
}

int d_serve_start(d_state *st, int nodefd, cn_err *err)
{
    if (pipe2(st->wake, O_CLOEXEC) != 0)
        return cn_fail_errno(err, errno, "pipe");
    st->dirfd = openat(nodefd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (st->dirfd < 0)
        return cn_fail_errno(err, errno, "node directory");
    st->listen_fd = cn_sock_listen(nodefd, CN_SOCK_NAME, err);
    return st->listen_fd < 0 ? st->listen_fd : 0;
}

int d_serve_go(d_state *st, cn_err *err)
{
    if (pthread_create(&st->thread, NULL, serve, st) != 0)
        return cn_fail(err, CAIRN_ENOMEM, "cannot start the socket thread");
    st->serving = true;
    return 0;
}

void d_serve_stop(d_state *st, int nodefd)
{
    if (st->listen_fd >= 0)
        unlinkat(nodefd, CN_SOCK_NAME, 0); /* no new clients: they find no socket */
    if (!st->serving) {
        if (st->listen_fd >= 0)
            close(st->listen_fd);
        if (st->dirfd >= 0)
            close(st->dirfd);
        st->listen_fd = st->dirfd = -1;
        return;
    }
    char c = 0;
    if (write(st->wake[1], &c, 1) != 1)
        cn_warn("cannot wake the socket thread: %s", strerror(errno));
    pthread_join(st->thread, NULL);
    for (size_t i = 0; i < st->nhold; i++)
        close(st->hold_fds[i]);
    free(st->hold_fds);
    st->hold_fds = NULL, st->nhold = 0;
    close(st->listen_fd);
    close(st->dirfd);
    close(st->wake[0]);
    close(st->wake[1]);
    st->listen_fd = st->dirfd = -1;
    st->serving = false;
}
