/*
 * cli_daemon.c - talking to a job's node daemons: finding them (one socket
 * per node directory), holding them (HOLD, as the library does before it
 * removes generation directories: `cairn prune`), `cairn status`, `cairn
 * drain` and `cairn flush`. `cairn start` and `cairn stop` are in
 * cli_start.c.
 *
 * Every verb here takes --job (else job.id / CAIRN_JOB, else SLURM_JOB_ID)
 * and --config, like the library, so it finds the same directories. On a
 * terminal, drain shows the bytes written to the job's PFS directory since
 * it asked (progress.c; the daemons do not report them as they go).
 */
#include "tools/tools.h"
#include "levels/pfs/pfs.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int cli_daemon_job(const char *verb, const char *job, const char *config, char out[CN_JOB_MAX + 1])
{
    cn_config cfg;
    cn_err err = {0};
    if (cn_config_load(&cfg, config, &err) < 0) {
        cli_error(verb, "%s", err.msg);
        return CLI_EXIT_ERROR;
    }
    const char *slurm = getenv("SLURM_JOB_ID");
    if (!job)
        job = cfg.job[0] ? cfg.job : slurm;
    if (!job)
        return cli_usage_error(verb, "which job? give --job ID (or set CAIRN_JOB)");
    if (!cn_id_ok(job))
        return cli_usage_error(verb, "'%.80s' is not a job id (1-63 of A-Z a-z 0-9 . _ -)", job);
    snprintf(out, CN_JOB_MAX + 1, "%s", job);
    return CLI_EXIT_OK;
}

/* What drain's progress line watches: the job's PFS directory (opened once it exists). */
typedef struct drain_watch {
    const char *pfs, *job;
    int jobfd;
    struct timespec since;
} drain_watch;

/* Wait (at most TIMEOUT_MS) for FD to have an answer, drawing P meanwhile:
 * the bytes written under W's PFS directory since the request. False if
 * none came in time. */
static bool wait_drawing(int fd, int timeout_ms, cli_progress *p, drain_watch *w)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        cn_err ignored = {0};
        if (w->jobfd < 0 && w->pfs[0])
            w->jobfd = lvl_pfs_open(w->pfs, w->job, false, &ignored);
        cli_progress_set(p, w->jobfd >= 0 ? cli_bytes_since(w->jobfd, &w->since, 1) : 0);
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        long spent = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (spent >= timeout_ms)
            return false;
        int n = poll(&pf, 1, 250);
        if (n > 0 || (n < 0 && errno != EINTR))
            return true; /* an answer, or an error cn_line_read reports */
    }
}

/* cli_daemon_ask, drawing P (if not NULL) with W while it waits. */
static int ask_drawing(int nodefd, const cn_req *req, cn_rep *rep, int timeout_ms,
                       cli_progress *p, drain_watch *w, cn_err *err)
{
    int fd = cn_sock_connect(nodefd, CN_SOCK_NAME, err);
    if (fd < 0)
        return fd;
    char line[CN_PROTO_LINE];
    int n = cn_req_format(req, line);
    int rc = n < 0 ? cn_fail(err, CAIRN_EINVAL, "request out of range")
                   : cn_line_write(fd, line, (size_t)n, err);
    if (rc == 0 && p && p->on && !wait_drawing(fd, timeout_ms, p, w))
        rc = cn_fail(err, CAIRN_EIO, "no answer within %d ms", timeout_ms);
    if (rc == 0)
        rc = n = cn_line_read(fd, line, timeout_ms, err);
    if (rc >= 0)
        rc = cn_rep_parse(line, (size_t)n, rep, err);
    close(fd);
    return rc;
}

int cli_daemon_ask(int nodefd, const cn_req *req, cn_rep *rep, int timeout_ms, cn_err *err)
{
    return ask_drawing(nodefd, req, rep, timeout_ms, NULL, NULL, err);
}

/* Has the peer of FD closed the connection (the daemon died)? */
static bool peer_gone(int fd)
{
    char c;
    ssize_t n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

void cli_daemon_release(int *fds, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (fds[i] >= 0)
            close(fds[i]);
        fds[i] = -1;
    }
}

int cli_daemon_hold(const char *verb, const cli_job *j, int timeout_ms, int *fds, size_t *held)
{
    *held = 0;
    for (size_t i = 0; i < j->nnodes; i++)
        fds[i] = -1;
    char line[CN_PROTO_LINE], reply[CN_PROTO_LINE];
    int len = cn_req_format(&(cn_req){.kind = CN_REQ_HOLD}, line);
    for (size_t i = 0; i < j->nnodes; i++) {
        cn_err err = {0};
        int fd = cn_sock_connect(j->node[i].fd, CN_SOCK_NAME, &err);
        if (fd < 0)
            continue; /* no daemon listens there: none can be at work on that node */
        int rc = cn_line_write(fd, line, (size_t)len, &err), n = 0;
        if (rc == 0)
            rc = n = cn_line_read(fd, reply, timeout_ms, &err);
        cn_rep rep = {0};
        if (rc >= 0)
            rc = cn_rep_parse(reply, (size_t)n, &rep, &err);
        if (rc == 0 && rep.kind == CN_REP_OK) {
            fds[i] = fd;
            (*held)++;
            continue;
        }
        bool gone = rc < 0 && peer_gone(fd);
        close(fd);
        if (gone) /* it died: nothing of it works on that node any more */
            continue;
        cli_daemon_release(fds, j->nnodes);
        *held = 0;
        if (rc == 0)
            cli_error(verb, "cairnd on node %s would not hold its work: %s", j->node[i].name,
                      rep.kind == CN_REP_ERR ? rep.text : "answered out of turn");
        else
            cli_error(verb, "cairnd on node %s did not pause its work within %d s (%s)",
                      j->node[i].name, timeout_ms / 1000, err.msg);
        return CLI_EXIT_ERROR;
    }
    return CLI_EXIT_OK;
}

int cli_daemons(const char *verb, const cli_job *j, cn_rep *status, size_t *alive)
{
    *alive = 0;
    for (size_t i = 0; i < j->nnodes; i++) {
        cn_err err = {0};
        cn_req req = {.kind = CN_REQ_STATUS};
        status[i] = (cn_rep){.kind = 0};
        if (cli_daemon_ask(j->node[i].fd, &req, &status[i], 5000, &err) == 0 &&
            status[i].kind == CN_REP_STATUS)
            (*alive)++;
        else
            status[i].kind = 0;
    }
    if (*alive == 0)
        cli_error(verb, "no cairnd serves job %s (start one with 'cairn start')", j->name);
    return *alive ? CLI_EXIT_OK : CLI_EXIT_MISSING;
}

#define HELP_SHOWN (-1)

/* The common options of status, drain and flush; opens the job. */
static int open_job(int argc, char **argv, cli_store *s, cli_job *j, int *timeout, bool *json)
{
    static const struct option opts[] = {{"job", required_argument, NULL, 'j'},
                                         {"config", required_argument, NULL, 'c'},
                                         {"timeout", required_argument, NULL, 't'},
                                         {"help", no_argument, NULL, 'h'},
                                         {"json", no_argument, NULL, 'J'},
                                         {NULL, 0, NULL, 0}};
    const char *verb = argv[0], *job = NULL, *config = NULL;
    memset(s, 0, sizeof *s);
    memset(j, 0, sizeof *j);
    s->fd = j->fd = -1;
    for (int c; (c = getopt_long(argc, argv, ":j:c:t:h", opts, NULL)) != -1;) {
        switch (c) {
        case 'j': job = optarg; break;
        case 'c': config = optarg; break;
        case 'J':
            if (!json)
                return cli_usage_error(verb, "unknown option '--json'");
            *json = true;
            break;
        case 't':
            *timeout = atoi(optarg);
            if (*timeout < 1 || *timeout > 86400)
                return cli_usage_error(verb, "--timeout takes 1..86400 seconds");
            break;
        case 'h': cli_help(verb); return HELP_SHOWN;
        default: return cli_getopt_fail(verb, c, argv);
        }
    }
    if (optind < argc)
        return cli_usage_error(verb, "unexpected argument '%s'", argv[optind]);
    char name[CN_JOB_MAX + 1];
    int rc = cli_daemon_job(verb, job, config, name);
    if (rc == CLI_EXIT_OK)
        rc = cli_store_open(verb, NULL, config, s);
    return rc == CLI_EXIT_OK ? cli_job_open(verb, s, name, j) : rc;
}

const char cli_status_usage[] =
    "Usage: cairn status [--job ID] [--config FILE]\n"
    "\n"
    "Ask every node daemon (cairnd) of the job what it is doing: generations queued,\n"
    "busy or idle, the newest generation it worked on and the newest it flushed to\n"
    "the PFS (-1: none). Exits 3 if no daemon answers.\n"
    "\n"
    "Options:\n"
    "  -j, --job ID        the job (default: job.id of --config, CAIRN_JOB, SLURM_JOB_ID)\n"
    "  -c, --config FILE   read store.base and job.id from this INI file\n"
    "      --json          print one JSON document instead (docs/json.md, cairn.status),\n"
    "                      every node down too when none answers (still exit 3)\n";

int cli_status(int argc, char **argv)
{
    cli_store s;
    cli_job j;
    bool json = false;
    int t = 0, rc = open_job(argc, argv, &s, &j, &t, &json);
    if (rc == HELP_SHOWN)
        return CLI_EXIT_OK;
    cn_rep *st = cli_alloc((j.nnodes ? j.nnodes : 1) * sizeof *st);
    size_t alive = 0;
    bool opened = rc == CLI_EXIT_OK;
    if (rc == CLI_EXIT_OK)
        rc = cli_daemons(argv[0], &j, st, &alive);
    if (json && opened) {
        json_t *d = cli_json_doc("cairn.status"), *nodes = json_array();
        json_object_set_new(d, "job", json_string(j.name));
        for (size_t i = 0; i < j.nnodes; i++) {
            json_t *o = json_object();
            bool up = st[i].kind != 0;
            json_object_set_new(o, "node", json_string(j.node[i].name));
            json_object_set_new(o, "state", json_string(!up ? "down" : st[i].busy ? "busy" : "idle"));
            json_object_set_new(o, "pid", cli_json_int_or_null(up, st[i].pid));
            json_object_set_new(o, "queued", cli_json_int_or_null(up, st[i].queued));
            json_object_set_new(o, "done", cli_json_int_or_null(up, st[i].done));
            json_object_set_new(o, "flushed", cli_json_int_or_null(up, st[i].flushed));
            json_array_append_new(nodes, o);
        }
        json_object_set_new(d, "nodes", nodes);
        json_object_set_new(d, "daemons", json_integer((json_int_t)alive));
        rc = cli_exit_worst(rc, cli_json_print(d));
    } else if (rc == CLI_EXIT_OK) {
        cli_table t2;
        cli_table_init(&t2, "lrrlrr");
        cli_table_add(&t2, "NODE"), cli_table_add(&t2, "PID"), cli_table_add(&t2, "QUEUED");
        cli_table_add(&t2, "STATE"), cli_table_add(&t2, "DONE"), cli_table_add(&t2, "FLUSHED");
        for (size_t i = 0; i < j.nnodes; i++) {
            cli_table_add(&t2, "%s", j.node[i].name);
            if (!st[i].kind) {
                for (int k = 0; k < 5; k++)
                    cli_table_add(&t2, k == 2 ? "down" : "-");
                continue;
            }
            cli_table_add(&t2, "%lld", (long long)st[i].pid);
            cli_table_add(&t2, "%lld", (long long)st[i].queued);
            cli_table_add(&t2, "%s", st[i].busy ? "busy" : "idle");
            cli_table_add(&t2, "%lld", (long long)st[i].done);
            cli_table_add(&t2, "%lld", (long long)st[i].flushed);
        }
        cli_table_print(&t2, stdout);
        cli_table_free(&t2);
    }
    free(st);
    cli_job_close(&j);
    cli_store_close(&s);
    return rc;
}

const char cli_drain_usage[] =
    "Usage: cairn drain [--job ID] [--config FILE] [--timeout SECONDS]\n"
    "\n"
    "For job epilogs: the job's daemons finish the generations queued to them, then\n"
    "flush the newest generation complete on every node to the PFS unless it is\n"
    "there already, and this waits for them (at most --timeout, default 300 s) and\n"
    "reports what was saved. Exits 0 when the newest generation is on the PFS, 3 if\n"
    "there is no daemon or no complete generation, 1 on failure or timeout. On a\n"
    "terminal, a progress line on stderr shows the bytes written to the job's PFS\n"
    "directory (pfs.dir of --config, else CAIRN_PFS_DIR) and the rate; piped, none.\n";

const char cli_flush_usage[] =
    "Usage: cairn flush [--job ID] [--config FILE]\n"
    "       cairn flush --node-only --gen G [--job ID] [--node NAME] [--config FILE]\n"
    "\n"
    "Ask the job's daemons to flush the newest generation complete on every node to\n"
    "the PFS (after the generations queued to them), and return at once. 'cairn\n"
    "status' shows when it is done; 'cairn drain' waits for it.\n"
    "\n"
    "--node-only: no daemon, no MPI (what the epilog runs, as the job's user, when\n"
    "the daemons are gone): write this node's ranks of generation G in full to\n"
    "<pfs>/cairn-<uid>/<job>/.part-gen-<G>/ (one file per rank) with this node's\n"
    "record node-<k>.done; the node that finds every node's record there checks\n"
    "them, writes the index and renames the part to gen-<G>. Run it on every node\n"
    "of the job (at the same time or one after another). Exit 0: generation G is\n"
    "complete on the PFS; 3: this node's part is written, another node's is not\n"
    "yet (the line names it); 1: it failed (nothing on node-local storage is\n"
    "touched). Runs cairnd --flush-node (CAIRN_DAEMON, else next to cairn).\n";

static int ask_one(int argc, char **argv, int kind)
{
    cli_store s;
    cli_job j;
    int timeout = 300, rc = open_job(argc, argv, &s, &j, &timeout, NULL);
    if (rc == HELP_SHOWN)
        return CLI_EXIT_OK;
    const char *verb = argv[0];
    cn_rep *st = cli_alloc((j.nnodes ? j.nnodes : 1) * sizeof *st), rep = {0};
    size_t alive = 0, first = 0;
    if (rc == CLI_EXIT_OK)
        rc = cli_daemons(verb, &j, st, &alive);
    while (rc == CLI_EXIT_OK && !st[first].kind)
        first++;
    cn_err err = {0};
    cn_req req = {.kind = kind, .seconds = (uint32_t)timeout};
    cli_progress p;
    drain_watch w = {.pfs = s.pfs, .job = j.name, .jobfd = -1};
    cli_progress_start(&p, verb, NULL, 0);
    p.on = p.on && kind == CN_REQ_DRAIN && rc == CLI_EXIT_OK;
    p.note = "the daemons flush";
    cli_progress_clock(&w.since);
    if (rc == CLI_EXIT_OK &&
        ask_drawing(j.node[first].fd, &req, &rep, timeout * 1000, &p, &w, &err) != 0) {
        cli_progress_end(&p);
        cli_error(verb, "%s%s", err.msg,
                  kind == CN_REQ_DRAIN ? "; the daemons go on with the flush" : "");
        rc = CLI_EXIT_ERROR;
    }
    cn_err ignored = {0};
    if (p.on && w.jobfd < 0 && w.pfs[0]) /* made by the flush just done */
        w.jobfd = lvl_pfs_open(w.pfs, w.job, false, &ignored);
    if (p.on && w.jobfd >= 0) /* the bytes of the flush, as it ended */
        p.done = cli_bytes_since(w.jobfd, &w.since, 1);
    cli_progress_end(&p);
    if (w.jobfd >= 0)
        close(w.jobfd);
    char size[32];
    if (rc != CLI_EXIT_OK) {
    } else if (rep.kind == CN_REP_ERR) {
        cli_error(verb, "%s", rep.text);
        rc = CLI_EXIT_ERROR;
    } else if (kind == CN_REQ_FLUSH) {
        printf("flush of job %s's newest complete generation asked of %zu daemon(s)\n", j.name,
               alive);
    } else if (rep.kind != CN_REP_DONE) {
        cli_error(verb, "cairnd answered out of turn");
        rc = CLI_EXIT_ERROR;
    } else if (rep.gen < 0) {
        printf("drained job %s: no generation is complete on every node; nothing to flush\n",
               j.name);
        rc = CLI_EXIT_MISSING;
    } else {
        printf("drained job %s: generation %lld %s the PFS (%s)\n", j.name, (long long)rep.gen,
               strcmp(rep.what, "flushed") == 0 ? "flushed to" : "is on",
               cli_human(rep.bytes, size, sizeof size));
    }
    free(st);
    cli_job_close(&j);
    cli_store_close(&s);
    return rc;
}

int cli_drain(int argc, char **argv) { return ask_one(argc, argv, CN_REQ_DRAIN); }
int cli_flush(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--node-only") == 0)
            return cli_flush_node(argc, argv);
    return ask_one(argc, argv, CN_REQ_FLUSH);
}
