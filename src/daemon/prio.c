/*
 * prio.c - cairnd yields to the application. Its work (the main thread, and
 * the threads it starts: compressors, hashers) runs at the lowest CPU
 * priority (SCHED_IDLE) and in the idle I/O class, so that the ranks of its
 * node never wait for a core or a disk behind it; and it goes to the cores
 * the ranks of its host do not use, where there are any.
 *
 * Idle work could starve beside busy ranks (or any CPU hog) for ever, so the
 * work goes back to normal priority (SCHED_OTHER, the I/O class the nice
 * value gives) whenever someone waits for it: a drain (cairn drain, the
 * epilog), a HOLD (a checkpoint or a restart about to rewrite generation
 * directories), a stop or SIGTERM; and when the oldest generation queued, or
 * a FLUSH asked for, has waited daemon.boost_after seconds (0: always
 * normal). The process's autogroup, if the kernel has them, follows: while
 * the work is idle, the nice whose weight is daemon.share percent against a
 * busy session (SCHED_IDLE alone weighs nothing against another session's
 * ranks; nice 19 gave a flush 1.4% of a core beside them, so it waited for the
 * boost), 0 when boosted; each daemon is in a session of its own for that
 * (apply_group). Short work need not crawl: each daemon earns daemon.share of
 * its host's CPUs (split among the daemons there) each second and spends the
 * CPU time its process uses at any priority (bank), its savings kept within
 * daemon.burst seconds' worth either way; while it has a flush to do (under
 * way, queued or asked for) and savings, the work runs at normal priority
 * (the socket thread looks every 100 ms then). The burst ends where the
 * savings do: the rest of the flush goes on at the idle weight, which is the
 * share again. (A burst that went on on credit, as it once did, outran the
 * share over any stretch shorter than daemon.burst: in bench async's 4 s
 * runs on 2 cores the daemons took 1.33-1.70 s of CPU that way, 0.85-0.97 s
 * ending with the savings, and the ranks' compute slowed by 14-21%.)
 * A flush beside busy ranks is done at once when the application computed
 * long enough before it to pay for it; at any moment since the daemon
 * started it has taken no more than daemon.share of the host plus the
 * savings (beyond what the idle weight gives). Only
 * the flush bursts: the PFS copy is what a level-4 checkpoint waits for, and a
 * burst takes a core from a rank that its neighbours then wait for too, so
 * raising parity (every checkpoint, perhaps) stays at idle priority.
 * d_prio_update is called by the socket thread, and by the work thread as a
 * flush begins and ends. A drain is asked of one daemon, but all of them do it: each tick
 * of work.c's agreement tells every daemon whether one of them is waited on
 * (so the others follow from the next generation on). The socket thread, at
 * normal priority, decides: when a request comes, and once a second
 * (d_prio_update). A thread's priority can be set from another thread, so a
 * boost takes effect in the middle of a raise or a flush. The socket thread never waits for the work thread at idle priority:
 * it takes prio.mu only if free (else it tries again a second later), and if
 * it finds MU taken (d_lock) it lends the work thread normal priority until
 * its next d_prio_update, so a preempted holder cannot delay an answer.
 *
 * Whose priority: every thread of the process except those that existed
 * when d_prio_start ran, other than the main thread (the socket thread, the
 * MPI library's own): they answer clients and carry MPI's progress, and stay
 * as they are. Leaving SCHED_IDLE needs CAP_SYS_NICE or an RLIMIT_NICE of
 * 20; without either (d_prio_init tries it on a thread of its own) the work
 * keeps its CPU priority, with a warning, and only its I/O class changes.
 * d_prio_init comes before the socket thread starts, d_prio_start after.
 *
 * Placement (d_prio_place, collective, at each generation: the layout may
 * change): the daemons of a host add up the ranks of their nodes; if the
 * CPUs the daemon may use outnumber them, the work goes to the highest
 * numbered ones, as many as are spare (launchers bind ranks from the first
 * core up), else anywhere it may run.
 */
#include "daemon/daemon.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* linux/ioprio.h, which not every libc installs */
#define D_IOPRIO_WHO_PROCESS 1
#define D_IOPRIO_CLASS_IDLE 3
#define D_IOPRIO_CLASS_SHIFT 13
#define D_IOPRIO_IDLE (D_IOPRIO_CLASS_IDLE << D_IOPRIO_CLASS_SHIFT)
#define D_IOPRIO_NONE 0          /* the class and level the nice value gives */

#define REAPPLY_S 1.0            /* threads started since the last change get it too */

double d_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static pid_t tid_self(void)
{
    return (pid_t)syscall(SYS_gettid);
}

/* The threads of this process (ids into *TIDS, malloc'd); -errno. */
static int list_tids(pid_t **tids, size_t *n)
{
    *tids = NULL, *n = 0;
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -errno;
    size_t cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        long t = atol(e->d_name);
        if (t <= 0)
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            pid_t *v = realloc(*tids, cap * sizeof *v);
            if (!v) {
                closedir(d);
                return -ENOMEM;
            }
            *tids = v;
        }
        (*tids)[(*n)++] = (pid_t)t;
    }
    closedir(d);
    return 0;
}

static bool foreign(const d_state *st, pid_t tid)
{
    for (size_t i = 0; i < st->prio.nothers; i++)
        if (st->prio.others[i] == tid)
            return true;
    return false;
}

/* Can a thread leave SCHED_IDLE again? Tried on a thread of its own. */
static void *probe(void *arg)
{
    struct sched_param sp = {0};
    *(bool *)arg = sched_setscheduler(0, SCHED_IDLE, &sp) == 0 &&
                   sched_setscheduler(0, SCHED_OTHER, &sp) == 0;
    return NULL;
}

/*
 * The weight of this process's autogroup: idle_nice while idle, 0 otherwise.
 * With autogroups on (Linux's sched_autogroup_enabled, a default of many
 * distributions), each session shares the CPUs as one entity: a daemon in a
 * session apart from the ranks (cairn start's, or a launcher's) ranks its
 * threads' SCHED_IDLE only against each other, and the daemons took half
 * the cores from the application's session. The group is weighed only when
 * it holds no rank: the daemon leads a session of its own (d_prio_init tries
 * setsid, which a process group leader cannot), or it is in the session cairn
 * start made for the launcher and the daemons (CAIRN_DAEMON_SID, on the host
 * cairn start ran on); else the group is left as it is (a daemon launched in
 * the application's session would slow the ranks with it). Raising the group's nice is allowed to anyone; the
 * kernel takes at most ten changes a second from users (EAGAIN: the next
 * apply, within REAPPLY_S, tries again). No autogroups: nothing to do.
 */
static void apply_group(d_state *st, bool idle)
{
    if (!st->prio.own_group)
        return;
    int fd = open("/proc/self/autogroup", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return;
    char now[128] = "";
    ssize_t n = read(fd, now, sizeof now - 1);
    char want[8];
    snprintf(want, sizeof want, "%d", idle ? st->prio.idle_nice : 0);
    const char *at = n > 0 ? strstr(now, " nice ") : NULL;
    if (!at || atoi(at + 6) != atoi(want)) {
        if (write(fd, want, strlen(want)) < 0 && errno != EAGAIN && !st->prio.warned) {
            cn_warn("cannot set this daemon's autogroup to nice %s: %s", want, strerror(errno));
            st->prio.warned = true;
        }
    }
    close(fd);
}

/* Under prio.mu: every thread of ours to IDLE or normal priority. */
static void apply(d_state *st, bool idle)
{
    pid_t *tids;
    size_t n;
    int rc = list_tids(&tids, &n);
    if (rc < 0) { /* the work thread at least */
        tids = NULL, n = 0;
        if (!st->prio.warned)
            cn_warn("cannot list this daemon's threads: %s", strerror(-rc));
        st->prio.warned = true;
    }
    struct sched_param sp = {0};
    for (size_t i = 0; i <= n; i++) {
        pid_t t = i < n ? tids[i] : st->prio.work_tid;
        if ((i < n && (t == st->prio.work_tid || foreign(st, t))))
            continue;
        int err = 0;
        if (st->prio.cpu_idle &&
            sched_setscheduler(t, idle ? SCHED_IDLE : SCHED_OTHER, &sp) != 0)
            err = errno;
        if (syscall(SYS_ioprio_set, D_IOPRIO_WHO_PROCESS, t,
                    idle ? D_IOPRIO_IDLE : D_IOPRIO_NONE) != 0 && !err)
            err = errno;
        if (err && err != ESRCH && !st->prio.warned) { /* ESRCH: it ended meanwhile */
            cn_warn("cannot set the priority of thread %d: %s", (int)t, strerror(err));
            st->prio.warned = true;
        }
    }
    free(tids);
    if (st->prio.cpu_idle)
        apply_group(st, idle);
    st->prio.idle = idle ? 1 : 0;
    st->prio.applied = d_now();
}

/* The kernel's weight of nice 0..19 (sched_prio_to_weight). */
static const int nice_weight[20] = {1024, 820, 655, 526, 423, 335, 272, 215, 172, 137,
                                    110,  87,  70,  56,  45,  36,  29,  23,  18,  15};

int d_prio_share_nice(int share)
{
    if (share <= 0)
        return 19;
    if (share >= 50)
        return 0;
    double want = 1024.0 * share / (100.0 - share); /* w / (w + 1024) = share */
    int best = 19;
    for (int n = 19; n >= 0; n--) /* the nearest weight, by ratio */
        if (fabs(log(nice_weight[n] / want)) < fabs(log(nice_weight[best] / want)))
            best = n;
    return best;
}

/* The CPU time of the whole process, seconds. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Under prio.mu: the burst budget for NCPU CPUs shared by NDAEMONS daemons. */
static void budget(d_state *st, int ncpu, int ndaemons)
{
    st->prio.rate = st->prio.share * (ncpu > 0 ? ncpu : 1) / (ndaemons > 0 ? ndaemons : 1);
    st->prio.cap = st->prio.rate * st->prio.burst;
    if (st->prio.credit > st->prio.cap)
        st->prio.credit = st->prio.cap;
}

/* Under prio.mu: count the budget up to NOW: RATE earned each second, the
 * process's CPU time spent, whatever the priority it ran at (so that what
 * the idle weight gave it is not taken twice); between -CAP and CAP. */
static void bank(d_state *st, double now)
{
    double cpu = cpu_now(), c = st->prio.credit;
    c += st->prio.rate * (now - st->prio.banked) - (cpu - st->prio.banked_cpu);
    st->prio.credit = c > st->prio.cap ? st->prio.cap : c < -st->prio.cap ? -st->prio.cap : c;
    st->prio.banked = now, st->prio.banked_cpu = cpu;
}

int d_prio_poll_ms(const d_state *st)
{
    return st->prio.bursting ? 100 : 1000;
}

int d_prio_init(d_state *st, int boost_after, int share, int burst, int ndaemons, cn_err *err)
{
    st->prio.gather = malloc(2 * (size_t)ndaemons * sizeof *st->prio.gather);
    if (!st->prio.gather)
        return cn_fail(err, CAIRN_ENOMEM, "out of memory");
    pthread_mutex_init(&st->prio.mu, NULL);
    st->prio.boost_after = boost_after;
    st->prio.idle_nice = d_prio_share_nice(share);
    st->prio.work_tid = tid_self();
    if (getsid(0) != getpid())
        setsid(); /* fails for a process group leader (Open MPI's ranks are) */
    const char *sid = getenv("CAIRN_DAEMON_SID"); /* cairn start's session, daemons only */
    st->prio.own_group = getsid(0) == getpid() || (sid && atol(sid) > 0 && atol(sid) == getsid(0));
    st->prio.idle = -1;
    CPU_ZERO(&st->prio.cpus);
    if (sched_getaffinity(0, sizeof st->prio.cpus, &st->prio.cpus) != 0)
        CPU_ZERO(&st->prio.cpus); /* unknown: never pinned */
    st->prio.pinned = st->prio.cpus;
    struct rlimit rl; /* RLIMIT_NICE 20 lets a thread back to nice 0 from SCHED_IDLE */
    if (getrlimit(RLIMIT_NICE, &rl) == 0 && rl.rlim_cur < 20 && rl.rlim_max > rl.rlim_cur) {
        rl.rlim_cur = rl.rlim_max < 20 ? rl.rlim_max : 20;
        setrlimit(RLIMIT_NICE, &rl);
    }
    pthread_t t;
    bool ok = false;
    if (boost_after > 0 && pthread_create(&t, NULL, probe, &ok) == 0)
        pthread_join(t, NULL);
    st->prio.cpu_idle = ok;
    st->prio.share = share / 100.0, st->prio.burst = burst;
    budget(st, CPU_COUNT(&st->prio.cpus), ndaemons); /* all on this host, until placed */
    st->prio.credit = 0; /* earned from the start: a burst never exceeds the share since */
    st->prio.banked = d_now(), st->prio.banked_cpu = cpu_now();
    if (boost_after > 0 && !ok)
        cn_warn("the work cannot leave SCHED_IDLE again here (it needs CAP_SYS_NICE or "
                "RLIMIT_NICE 20): it keeps normal CPU priority, and only its I/O class is idle");
    return 0;
}

void d_prio_start(d_state *st)
{
    pid_t *tids;
    size_t n;
    pthread_mutex_lock(&st->prio.mu);
    if (list_tids(&tids, &n) == 0) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (tids[i] != st->prio.work_tid)
                tids[k++] = tids[i];
        st->prio.others = tids, st->prio.nothers = k;
    }
    st->prio.started = true;
    pthread_mutex_unlock(&st->prio.mu);
    d_prio_update(st);
}

void d_prio_free(d_state *st)
{
    free(st->prio.gather);
    free(st->prio.others);
    st->prio.gather = NULL, st->prio.others = NULL, st->prio.nothers = 0;
}

/* Under MU: does someone wait for the work (or has it waited long enough)? */
static bool waited_on(const d_state *st, double now)
{
    double after = st->prio.boost_after;
    return after <= 0 || st->stop || d_signalled || st->ndrain || st->holds || st->nhold ||
           st->waited ||
           (st->nqueue && now - st->queue[0].queued >= after) ||
           (st->flush_asked && now - st->flush_since >= after);
}

void d_lock(d_state *st)
{
    if (pthread_mutex_trylock(&st->mu) == 0)
        return;
    if (st->prio.cpu_idle && !atomic_exchange(&st->prio.lent, 1)) {
        struct sched_param sp = {0};
        sched_setscheduler(st->prio.work_tid, SCHED_OTHER, &sp); /* d_prio_update takes it back */
    }
    pthread_mutex_lock(&st->mu);
}

void d_prio_update(d_state *st)
{
    double now = d_now();
    d_lock(st);
    bool idle = !waited_on(st, now);
    bool work = st->flushing || st->flush_asked; /* a flush under way or owed */
    for (size_t i = 0; i < st->nqueue && !work; i++)
        work = st->queue[i].flush || st->queue[i].level == CAIRN_LEVEL_PFS;
    pthread_mutex_unlock(&st->mu);
    if (pthread_mutex_trylock(&st->prio.mu) != 0)
        return; /* the work thread places itself: the next call (a second at most) sees to it */
    bank(st, now);
    /* A burst runs on savings, and ends with them (never on credit). */
    bool burst = idle && work && st->prio.cpu_idle && st->prio.credit > 0;
    if (burst != st->prio.bursting)
        cn_debug("burst %s: %.3f s of CPU left", burst ? "begins" : "ends", st->prio.credit);
    st->prio.bursting = burst;
    idle = idle && !burst;
    if (atomic_exchange(&st->prio.lent, 0))
        st->prio.idle = -1; /* d_lock lent the work normal priority */
    bool changed = st->prio.started && st->prio.idle != (idle ? 1 : 0);
    if (changed || (st->prio.started && now - st->prio.applied >= REAPPLY_S))
        apply(st, idle);
    pthread_mutex_unlock(&st->prio.mu);
    if (changed)
        cn_debug("work at %s priority", idle ? "idle" : "normal");
}

/* A 64-bit FNV-1a hash of this host's name: daemons on one host share it. */
static int64_t host_hash(void)
{
    char name[256] = "";
    gethostname(name, sizeof name - 1);
    uint64_t h = 1469598103934665603ull;
    for (const char *p = name; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return (int64_t)(h >> 1);
}

int d_prio_place(d_state *st, cairn_ctx *ctx, int nlocal)
{
    int64_t mine[2] = {host_hash(), nlocal}, *all = st->prio.gather;
    if (MPI_Allgather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, ctx->comm) != MPI_SUCCESS)
        return CAIRN_EMPI;
    int64_t ranks = 0;
    int here = 0;
    bool known = true;
    for (int d = 0; d < ctx->size; d++)
        if (all[2 * d] == mine[0]) {
            known = known && all[2 * d + 1] >= 0;
            ranks += all[2 * d + 1];
            here++;
        }
    int ncpu = CPU_COUNT(&st->prio.cpus);
    pthread_mutex_lock(&st->prio.mu);
    budget(st, ncpu, here);
    /* the flush's codec model weighs CPU at what the daemon earns of it: a
     * codec that needs more would take it from the ranks, or starve */
    ctx->core_share = st->prio.rate > 1 ? 1 : st->prio.rate > 0.01 ? st->prio.rate : 0.01;
    pthread_mutex_unlock(&st->prio.mu);
    if (!known || ncpu == 0)
        return 0; /* a layout unknown here: leave the work where it is */
    cpu_set_t want = st->prio.cpus;
    int64_t spare = ncpu - ranks;
    if (spare > 0) { /* the highest SPARE cpus of the set */
        CPU_ZERO(&want);
        for (int c = CPU_SETSIZE - 1; c >= 0 && spare > 0; c--)
            if (CPU_ISSET(c, &st->prio.cpus))
                CPU_SET(c, &want), spare--;
    }
    pthread_mutex_lock(&st->prio.mu);
    bool same = CPU_EQUAL(&want, &st->prio.pinned);
    if (!same) {
        pid_t *tids;
        size_t n;
        if (list_tids(&tids, &n) != 0)
            tids = NULL, n = 0;
        for (size_t i = 0; i <= n; i++) {
            pid_t t = i < n ? tids[i] : st->prio.work_tid;
            if (i < n && (t == st->prio.work_tid || foreign(st, t)))
                continue;
            if (sched_setaffinity(t, sizeof want, &want) != 0 && i == n) /* the work thread */
                cn_warn("cannot pin the work to CPUs: %s", strerror(errno));
        }
        free(tids);
        st->prio.pinned = want;
    }
    pthread_mutex_unlock(&st->prio.mu);
    if (!same) {
        char list[256] = "";
        size_t len = 0;
        for (int c = 0; c < CPU_SETSIZE && len + 8 < sizeof list; c++)
            if (CPU_ISSET(c, &want))
                len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", len ? "," : "", c);
        cn_info("work on CPU(s) %s: %lld rank(s) of this host's nodes, %d CPU(s)", list,
                (long long)ranks, ncpu);
    }
    return 0;
}
