/*
 * cli_start.c - `cairn start` and `cairn stop`: the node daemons of a job.
 *
 * start launches cairnd on N nodes through the MPI launcher
 * (CAIRN_DAEMON_LAUNCHER, default "mpirun"; run as LAUNCHER -n N cairnd ...),
 * detached from the terminal, its output appended to <job dir>/cairnd.log
 * and the launcher's pid in <job dir>/cairnd.pid; it returns once the
 * daemons serve: this node's answers on its socket, or, on a machine that is
 * not one of the job's nodes (a login node: the sockets are on the nodes'
 * own storage), their rank 0's "cairnd: ready" line reaches the log through
 * the launcher. With job.ranks_per_node set (emulated nodes on one machine)
 * daemon i serves node<i>. stop asks every daemon to
 * finish its queue and exit and returns once they are gone: no socket of the
 * job accepts a connection, no cairnd process of the job is left on this
 * machine, the launcher has exited (a cairn start right after it finds none);
 * stopping a job without daemons is not an error (epilogs may run twice).
 */
#include "tools/tools.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LOG_NAME "cairnd.log"
#define PID_NAME "cairnd.pid"

const char cli_start_usage[] =
    "Usage: cairn start --nodes N [--job ID] [--config FILE] [--timeout SECONDS]\n"
    "\n"
    "Start the node daemons (cairnd) of a job, one per node, through the MPI launcher\n"
    "CAIRN_DAEMON_LAUNCHER (default 'mpirun'; called as LAUNCHER -n N cairnd ...;\n"
    "CAIRN_DAEMON names the cairnd binary, default: next to cairn). With\n"
    "job.ranks_per_node set (emulated nodes), daemon i serves node<i>; otherwise each\n"
    "serves its node, named as 'cairn config --node' prints on it. Returns when they\n"
    "serve (they start together; at most --timeout, default 60 s). It may run on a\n"
    "machine that is not one of the job's nodes (a login node): it then learns that\n"
    "they serve from the launcher's output; status, drain and stop work on the nodes.\n"
    "The daemons log to <base>/cairn-<uid>/<job>/" LOG_NAME ". The job's ranks find\n"
    "them at cairn_init or their next checkpoint and hand levels 2-4 over. The\n"
    "daemons work at idle CPU and I/O priority (on the CPUs the ranks leave spare,\n"
    "if any; their session weighs daemon.share percent against a busy one), and at\n"
    "normal priority while a drain, a hold or a stop waits, once a generation\n"
    "has waited daemon.boost_after seconds in their queue, or while a flush spends\n"
    "the CPU time they earned (daemon.share of the host each second, up to\n"
    "daemon.burst seconds' worth): a flush beside busy ranks finishes in one burst\n"
    "when they saved enough, else goes on at their share once the savings are spent.\n";

const char cli_stop_usage[] =
    "Usage: cairn stop [--job ID] [--config FILE] [--timeout SECONDS]\n"
    "\n"
    "Ask the job's daemons to finish the generations queued to them and exit; wait\n"
    "until they are gone: no socket of the job answers, no cairnd of the job runs on\n"
    "this machine, the launcher has exited (at most --timeout, default 60 s; exit 1\n"
    "if they are still there). No daemon running is not an error.\n";

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct opts {
    const char *verb, *config;
    char job[CN_JOB_MAX + 1];
    int nodes, timeout;
} opts;

static int parse(int argc, char **argv, opts *o, bool start)
{
    static const struct option lo[] = {{"job", required_argument, NULL, 'j'},
                                       {"config", required_argument, NULL, 'c'},
                                       {"nodes", required_argument, NULL, 'n'},
                                       {"timeout", required_argument, NULL, 't'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
    const char *job = NULL;
    *o = (opts){.verb = argv[0], .timeout = 60};
    for (int c; (c = getopt_long(argc, argv, start ? ":j:c:n:t:h" : ":j:c:t:h", lo, NULL)) != -1;) {
        switch (c) {
        case 'j': job = optarg; break;
        case 'c': o->config = optarg; break;
        case 'n': o->nodes = atoi(optarg); break;
        case 't': o->timeout = atoi(optarg); break;
        case 'h': cli_help(o->verb); return -1;
        default: return cli_getopt_fail(o->verb, c, argv);
        }
    }
    if (optind < argc)
        return cli_usage_error(o->verb, "unexpected argument '%s'", argv[optind]);
    if (start && (o->nodes < 1 || o->nodes > 100000))
        return cli_usage_error(o->verb, "give --nodes N (1..100000): one daemon per node");
    if (o->timeout < 1 || o->timeout > 86400)
        return cli_usage_error(o->verb, "--timeout takes 1..86400 seconds");
    return cli_daemon_job(o->verb, job, o->config, o->job);
}

/* The job directory, created (0700) for start. */
static int job_dir(const opts *o, bool create, cn_config *cfg, int *fd)
{
    cn_err err = {0};
    if (cn_config_load(cfg, o->config, &err) < 0) {
        cli_error(o->verb, "%s", err.msg);
        return CLI_EXIT_ERROR;
    }
    char user[32];
    cn_user_dirname(user, sizeof user);
    int base = cn_dir_open_path(cfg->base, &err);
    int u = base < 0 ? base : cn_dir_open(base, user, create, &err);
    *fd = u < 0 ? u : cn_dir_open(u, o->job, create, &err);
    if (base >= 0)
        close(base);
    if (u >= 0)
        close(u);
    if (*fd < 0 && !create && *fd == -ENOENT)
        return CLI_EXIT_MISSING;
    if (*fd < 0)
        cli_error(o->verb, "%s: %s", cfg->base, err.msg);
    return *fd < 0 ? CLI_EXIT_ERROR : CLI_EXIT_OK;
}

/* Is NAME in NAMES? */
static bool named(const cli_names *names, const char *name)
{
    for (size_t i = 0; i < names->n; i++)
        if (strcmp(names->v[i], name) == 0)
            return true;
    return false;
}

/* Add a copy of NAME to NAMES. */
static void name_add(cli_names *names, const char *name)
{
    char **v = cli_alloc((names->n + 1) * sizeof *v);
    if (names->n)
        memcpy(v, names->v, names->n * sizeof *v);
    v[names->n] = cli_alloc(strlen(name) + 1);
    strcpy(v[names->n], name);
    free(names->v);
    names->v = v;
    names->n++;
}

/* Ask the daemon of every node directory of the job (STOP or STATUS) and
 * count those that answer. With SEEN, a node counts once over repeated calls:
 * SEEN keeps the names of those that answered (the caller frees it with
 * cli_names_free); a slow daemon asked again is not counted twice. */
static size_t answering(int jobfd, bool stop, cli_names *seen)
{
    cli_names names;
    cn_err err = {0};
    size_t alive = 0;
    if (cli_names_read(jobfd, &names, &err) < 0)
        return 0;
    for (size_t i = 0; i < names.n; i++) {
        int fd = cn_id_ok(names.v[i]) ? cn_dir_open(jobfd, names.v[i], false, &err) : -1;
        cn_req req = {.kind = stop ? CN_REQ_STOP : CN_REQ_STATUS};
        cn_rep rep;
        if (fd >= 0 && cli_daemon_ask(fd, &req, &rep, 5000, &err) == 0 &&
            rep.kind == (stop ? CN_REP_OK : CN_REP_STATUS) && !(seen && named(seen, names.v[i]))) {
            alive++;
            if (seen)
                name_add(seen, names.v[i]);
        }
        if (fd >= 0)
            close(fd);
    }
    cli_names_free(&names);
    return alive;
}

/* The launcher's argv: CAIRN_DAEMON_LAUNCHER's words, -n N, cairnd and its
 * arguments. Owns nothing: points into BUF and O. */
static void launch_argv(const opts *o, const cn_config *cfg, char *buf, size_t len, char *nodes,
                        char *cairnd, char **argv, size_t max)
{
    const char *l = getenv("CAIRN_DAEMON_LAUNCHER");
    snprintf(buf, len, "%s", l && *l ? l : "mpirun");
    size_t n = 0;
    for (char *w = strtok(buf, " "); w && n < max - 10; w = strtok(NULL, " "))
        argv[n++] = w;
    argv[n++] = "-n";
    argv[n++] = nodes;
    argv[n++] = cairnd;
    argv[n++] = "--job";
    argv[n++] = (char *)o->job;
    const char *named = getenv(CN_CONFIG_FILE_ENV); /* passed on: a remote node may not see it */
    if (o->config || (named && *named)) {
        argv[n++] = "--config";
        argv[n++] = (char *)(o->config ? o->config : named);
    }
    if (cfg->ranks_per_node > 0 && !cfg->node[0])
        argv[n++] = "--emulated";
    argv[n] = NULL;
}

void cli_daemon_path(char *out, size_t len)
{
    const char *env = getenv("CAIRN_DAEMON");
    if (env && *env) {
        snprintf(out, len, "%s", env);
        return;
    }
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    snprintf(out, len, "%s/cairnd", slash ? self : ".");
}

#define READY_MARK "cairnd: ready: "

/* N if the daemons' rank 0 wrote a whole line "cairnd: ready: N daemon(s) ..."
 * to the log at or after *POS, else 0. *POS starts where the log ended when
 * this start launched them and moves past the whole lines read, so each poll
 * reads only what is new, however much the daemons log. */
static int ready_in_log(int jobfd, off_t *pos)
{
    int fd = openat(jobfd, LOG_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0;
    static char buf[1 << 16];
    int ready = 0;
    for (;;) {
        ssize_t n = pread(fd, buf, sizeof buf - 1, *pos);
        if (n <= 0)
            break;
        buf[n] = '\0';
        const char *p = memmem(buf, (size_t)n, READY_MARK, strlen(READY_MARK));
        if (p && memchr(p, '\n', (size_t)(buf + n - p))) {
            ready = atoi(p + strlen(READY_MARK));
            break;
        }
        const char *nl = memrchr(buf, '\n', (size_t)n);
        if (nl)
            *pos += nl + 1 - buf; /* a partial last line is read again next time */
        else if ((size_t)n == sizeof buf - 1)
            *pos += n; /* a line longer than the buffer is not the one */
        if (!nl || (size_t)n < sizeof buf - 1)
            break;
    }
    close(fd);
    return ready;
}

static void show_log(int jobfd)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    cn_err err = {0};
    if (cn_read_small(jobfd, LOG_NAME, 1 << 20, &buf, &len, &err) == 0 && len) {
        size_t from = len > 2000 ? len - 2000 : 0;
        fprintf(stderr, "--- the end of %s ---\n%.*s", LOG_NAME, (int)(len - from),
                (const char *)buf + from);
    }
    free(buf);
}

int cli_start(int argc, char **argv)
{
    opts o;
    int rc = parse(argc, argv, &o, true), jobfd = -1;
    if (rc != CLI_EXIT_OK)
        return rc < 0 ? CLI_EXIT_OK : rc;
    cn_config cfg;
    if ((rc = job_dir(&o, true, &cfg, &jobfd)) != CLI_EXIT_OK)
        return rc;
    size_t alive = answering(jobfd, false, NULL);
    if (alive) {
        cli_error(o.verb, "%zu daemon(s) already serve job %s; 'cairn stop' them first", alive,
                  o.job);
        close(jobfd);
        return CLI_EXIT_ERROR;
    }
    char buf[4096], nodes[32], cairnd[4200], *av[64];
    snprintf(nodes, sizeof nodes, "%d", o.nodes);
    cli_daemon_path(cairnd, sizeof cairnd);
    launch_argv(&o, &cfg, buf, sizeof buf, nodes, cairnd, av, 64);
    int log = openat(jobfd, LOG_NAME, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (log < 0) {
        cli_error(o.verb, "cannot open %s: %s", LOG_NAME, strerror(errno));
        close(jobfd);
        return CLI_EXIT_ERROR;
    }
    off_t log_from = lseek(log, 0, SEEK_END);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) { /* the launcher, detached, quiet */
        setsid();
        char sid[32]; /* the daemons' session holds only them and the launcher (prio.c) */
        snprintf(sid, sizeof sid, "%d", (int)getpid());
        setenv("CAIRN_DAEMON_SID", sid, 1);
        int null = open("/dev/null", O_RDONLY);
        dup2(null, 0), dup2(log, 1), dup2(log, 2);
        setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0); /* idle daemons yield the core */
        execvp(av[0], av);
        fprintf(stderr, "cairn start: cannot run %s: %s\n", av[0], strerror(errno));
        _exit(127);
    }
    close(log);
    if (pid < 0) {
        cli_error(o.verb, "fork: %s", strerror(errno));
        close(jobfd);
        return CLI_EXIT_ERROR;
    }
    char pidtext[32];
    int plen = snprintf(pidtext, sizeof pidtext, "%d\n", (int)pid);
    cn_err err = {0};
    cn_write_atomic(jobfd, PID_NAME, pidtext, (size_t)plen, &err);
    double until = now() + o.timeout;
    int status = 0, ready = 0;
    /* The daemons open their sockets together (they agree on it), so one that
     * answers means all do; on a cluster only this node's is visible here, and
     * on a machine serving none, only their ready line in the log. */
    while ((alive = answering(jobfd, false, NULL)) == 0 &&
           (ready = ready_in_log(jobfd, &log_from)) == 0 && now() < until &&
           waitpid(pid, &status, WNOHANG) == 0)
        usleep(50000);
    if (alive == 0 && ready > 0) {
        printf("cairnd: %d daemon(s) serve job %s; none on this machine (it is not one of the "
               "job's nodes: run status, drain and stop there; launcher pid %d, log "
               "%s/cairn-%u/%s/%s)\n", ready, o.job, (int)pid, cfg.base, (unsigned)geteuid(),
               o.job, LOG_NAME);
        close(jobfd);
        return CLI_EXIT_OK;
    }
    if (alive == 0) {
        cli_error(o.verb, "no daemon of job %s answered within %d s, neither on this machine's "
                  "socket nor by a 'cairnd: ready' line in the log; stopping them", o.job,
                  o.timeout);
        kill(-pid, SIGTERM);
        show_log(jobfd);
        close(jobfd);
        return CLI_EXIT_ERROR;
    }
    printf("cairnd: %d daemon(s) serve job %s, %zu answering from this machine (launcher pid %d, "
           "log %s/cairn-%u/%s/%s)\n", o.nodes, o.job, alive, (int)pid, cfg.base, (unsigned)geteuid(), o.job, LOG_NAME);
    close(jobfd);
    return CLI_EXIT_OK;
}

/* How many sockets of the job in JOBFD accept a connection (a daemon
 * listens); their node names added to INTO unless NULL. */
static size_t connectable(int jobfd, cli_names *into)
{
    cli_names names;
    cn_err err = {0};
    size_t n = 0;
    if (cli_names_read(jobfd, &names, &err) < 0)
        return 0;
    for (size_t i = 0; i < names.n; i++) {
        int fd = cn_id_ok(names.v[i]) ? cn_dir_open(jobfd, names.v[i], false, &err) : -1;
        int s = fd >= 0 ? cn_sock_connect(fd, CN_SOCK_NAME, &err) : -1;
        n += s >= 0;
        if (s >= 0 && into && !named(into, names.v[i]))
            name_add(into, names.v[i]);
        if (s >= 0)
            close(s);
        if (fd >= 0)
            close(fd);
    }
    cli_names_free(&names);
    return n;
}

/* How many processes of this user on this machine are a cairnd of JOB (its
 * argv[0] ends in cairnd, "--job JOB" among its arguments)? */
static size_t local_daemons(const char *job)
{
    DIR *d = opendir("/proc");
    size_t n = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        char path[300], args[4096];
        struct stat st;
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%s", e->d_name);
        if (stat(path, &st) != 0 || st.st_uid != geteuid())
            continue;
        snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t len = fd >= 0 ? read(fd, args, sizeof args - 1) : -1;
        if (fd >= 0)
            close(fd);
        if (len <= 0)
            continue; /* gone, or a zombie: no longer at work */
        args[len] = '\0';
        const char *a0 = args, *slash = strrchr(a0, '/');
        if (strcmp(slash ? slash + 1 : a0, "cairnd") != 0)
            continue;
        for (const char *a = a0; a < args + len; a += strlen(a) + 1)
            if (strcmp(a, "--job") == 0 && a + strlen(a) + 1 < args + len &&
                strcmp(a + strlen(a) + 1, job) == 0) {
                n++;
                break;
            }
    }
    if (d)
        closedir(d);
    return n;
}

int cli_stop(int argc, char **argv)
{
    opts o;
    int rc = parse(argc, argv, &o, false), jobfd = -1;
    if (rc != CLI_EXIT_OK)
        return rc < 0 ? CLI_EXIT_OK : rc;
    cn_config cfg;
    rc = job_dir(&o, false, &cfg, &jobfd);
    /* The daemons listening now are those this stop ends: one STOP ends them
     * all (they agree on it), so a daemon may be gone before it is asked. */
    cli_names seen = {0}, listening = {0};
    if (rc == CLI_EXIT_OK)
        connectable(jobfd, &listening);
    size_t asked = rc == CLI_EXIT_OK ? answering(jobfd, true, &seen) : 0;
    if (rc == CLI_EXIT_MISSING ||
        (rc == CLI_EXIT_OK && !asked && !connectable(jobfd, NULL) && !local_daemons(o.job))) {
        printf("no cairnd serves job %s\n", o.job);
        cli_names_free(&seen);
        cli_names_free(&listening);
        if (jobfd >= 0)
            close(jobfd);
        return CLI_EXIT_OK;
    }
    if (rc != CLI_EXIT_OK)
        return rc;
    /* Gone means: no socket of the job accepts a connection, no cairnd of the
     * job runs on this machine, and the launcher (which exits after every
     * daemon has) is gone, where its pid is known here. A daemon that still
     * listens is asked again (one may have been too slow to answer). */
    uint8_t *buf = NULL;
    size_t len = 0;
    cn_err err = {0};
    long pid = 0;
    if (cn_read_small(jobfd, PID_NAME, 64, &buf, &len, &err) == 0) {
        char text[64] = {0};
        memcpy(text, buf, len < 63 ? len : 63);
        pid = atol(text);
    }
    free(buf);
    double until = now() + o.timeout;
    bool gone = false;
    while (!gone && now() < until) {
        if (connectable(jobfd, NULL))
            answering(jobfd, true, &seen); /* counted in SEEN */
        gone = connectable(jobfd, NULL) == 0 && local_daemons(o.job) == 0 &&
               (pid <= 0 || kill((pid_t)pid, 0) != 0);
        if (!gone)
            usleep(50000);
    }
    if (!gone) {
        cli_error(o.verb, "the daemons of job %s did not stop within %d s", o.job, o.timeout);
        cli_names_free(&seen);
        cli_names_free(&listening);
        close(jobfd);
        return CLI_EXIT_ERROR;
    }
    unlinkat(jobfd, PID_NAME, 0);
    for (size_t i = 0; i < listening.n; i++)
        if (!named(&seen, listening.v[i]))
            name_add(&seen, listening.v[i]);
    printf("stopped %zu daemon(s) of job %s\n", seen.n, o.job);
    cli_names_free(&seen);
    cli_names_free(&listening);
    close(jobfd);
    return CLI_EXIT_OK;
}
