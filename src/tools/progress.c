/*
 * progress.c - the progress line of the CLI's long operations (verify,
 * drain, rebuild, drill): on a terminal only, so that scripts see exactly
 * the output they always saw.
 *
 * When stderr is a terminal (isatty), a verb's progress is one line on
 * stderr, redrawn in place ("\r" text "\033[K") at most every quarter of a
 * second (the first drawing at once):
 *   verify: 12 MiB of 48 MiB (25%), 150 MiB/s, 0:01 left
 *   drain: 3.0 MiB, 1.2 MiB/s, 0:02 (waiting for the daemons)     size unknown
 *   drill: 3 of 16 scenarios, 0:45, 3:15 left                     items
 * and cli_progress_end leaves its final form with a newline:
 *   verify: 48 MiB in 0:02 (24 MiB/s)
 *   drill: 16 of 16 scenarios in 4:02
 * A verb that prints to stdout while the line is drawn calls
 * cli_progress_hide first, which erases it (it comes back at the next
 * update). When stderr is not a terminal every function here does nothing.
 * cli_progress_run runs a program (mpirun cairn-rebuild, drill.sh) with its
 * output passed through line by line, so that the line is erased before
 * each of them; verbs call it only on a terminal, and exec the program as
 * before otherwise. The caller owns the cli_progress (no allocation); NOTE
 * is borrowed.
 */
#include "tools/tools.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REDRAW_S 0.25

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* "0:07", "12:34", "1:02:03". */
static const char *clock_str(double s, char *buf, size_t len)
{
    long t = s < 0 ? 0 : (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
    return buf;
}

void cli_progress_start(cli_progress *p, const char *what, const char *unit, uint64_t total)
{
    memset(p, 0, sizeof *p);
    p->what = what;
    p->unit = unit;
    p->total = total;
    p->on = isatty(STDERR_FILENO) == 1;
    p->t0 = now_s();
}

/* Draw the line: running (FINAL false) or its final form. */
static void draw(cli_progress *p, bool final)
{
    char line[320], a[32], b[32], r[32], t[32], left[32];
    double el = now_s() - p->t0, rate = (double)p->done / (el > 1e-3 ? el : 1e-3);
    int n = snprintf(line, sizeof line, "%s: ", p->what);
    size_t room = sizeof line - (size_t)n;
    if (p->unit && final) {
        n += snprintf(line + n, room, "%llu", (unsigned long long)p->done);
        if (p->total)
            n += snprintf(line + n, sizeof line - (size_t)n, " of %llu",
                          (unsigned long long)p->total);
        snprintf(line + n, sizeof line - (size_t)n, " %s in %s", p->unit,
                 clock_str(el, t, sizeof t));
    } else if (p->unit) {
        n += snprintf(line + n, room, "%llu", (unsigned long long)p->done);
        if (p->total)
            n += snprintf(line + n, sizeof line - (size_t)n, " of %llu",
                          (unsigned long long)p->total);
        n += snprintf(line + n, sizeof line - (size_t)n, " %s, %s", p->unit,
                      clock_str(el, t, sizeof t));
        if (p->total && p->done && p->done < p->total)
            snprintf(line + n, sizeof line - (size_t)n, ", %s left",
                     clock_str(el / (double)p->done * (double)(p->total - p->done), left,
                               sizeof left));
    } else if (final) {
        snprintf(line + n, room, "%s in %s (%s/s)", cli_human(p->done, a, sizeof a),
                 clock_str(el, t, sizeof t), cli_human((uint64_t)rate, r, sizeof r));
    } else if (p->total) {
        n += snprintf(line + n, room, "%s of %s (%d%%), %s/s", cli_human(p->done, a, sizeof a),
                      cli_human(p->total, b, sizeof b),
                      (int)(100.0 * (double)p->done / (double)p->total),
                      cli_human((uint64_t)rate, r, sizeof r));
        if (p->done && p->done < p->total)
            snprintf(line + n, sizeof line - (size_t)n, ", %s left",
                     clock_str((double)(p->total - p->done) / rate, left, sizeof left));
    } else {
        snprintf(line + n, room, "%s, %s/s, %s", cli_human(p->done, a, sizeof a),
                 cli_human((uint64_t)rate, r, sizeof r), clock_str(el, t, sizeof t));
    }
    size_t len = strlen(line);
    if (p->note && !final)
        snprintf(line + len, sizeof line - len, " (%s)", p->note);
    fprintf(stderr, "\r%s\033[K%s", line, final ? "\n" : "");
    fflush(stderr);
    p->drawn = !final;
    p->last = now_s();
}

void cli_progress_set(cli_progress *p, uint64_t done)
{
    p->done = done;
    if (p->on && (!p->last || now_s() - p->last >= REDRAW_S))
        draw(p, false);
}

void cli_progress_add(cli_progress *p, uint64_t n) { cli_progress_set(p, p->done + n); }

void cli_progress_hide(cli_progress *p)
{
    if (!p || !p->on || !p->drawn)
        return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    p->drawn = false;
    p->last = 0; /* redraw at the next update */
}

void cli_progress_end(cli_progress *p)
{
    if (p->on)
        draw(p, true);
    p->on = false;
}

void cli_progress_clock(struct timespec *t)
{
    clock_gettime(CLOCK_REALTIME, t);
    t->tv_nsec -= 20000000; /* file times lag the clock by up to a tick */
    if (t->tv_nsec < 0)
        t->tv_sec--, t->tv_nsec += 1000000000;
}

uint64_t cli_bytes_since(int dirfd, const struct timespec *since, int depth)
{
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    uint64_t sum = 0;
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        struct stat st;
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
            fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISDIR(st.st_mode) && depth > 0) {
            int sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) {
                sum += cli_bytes_since(sub, since, depth - 1);
                close(sub);
            }
        } else if (S_ISREG(st.st_mode) &&
                   (st.st_mtim.tv_sec > since->tv_sec ||
                    (st.st_mtim.tv_sec == since->tv_sec && st.st_mtim.tv_nsec >= since->tv_nsec))) {
            sum += (uint64_t)st.st_size;
        }
    }
    closedir(d);
    return sum;
}

/* A child's output stream passed through: bytes of a line not yet complete. */
typedef struct relay {
    int in, out; /* the pipe's read end (-1 at its end); where its lines go */
    char buf[4096];
    size_t n;
} relay;

/* Write LEN bytes of BUF to FD (whole, retrying short writes). */
static void write_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t w = write(fd, buf, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        buf += w, len -= (size_t)w;
    }
}

/* Pass on R's complete lines (all of it at the end, FLUSH), the progress
 * line erased first; TICK sees each line of the child's stdout. */
static void relay_lines(relay *r, bool flush, cli_progress *p, cli_progress_tick tick, void *arg)
{
    size_t start = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (r->buf[i] != '\n' && !(flush && i == r->n - 1) && !(i - start == sizeof r->buf - 2))
            continue;
        cli_progress_hide(p);
        write_all(r->out, r->buf + start, i + 1 - start);
        if (r->out == STDOUT_FILENO) {
            char line[sizeof r->buf];
            memcpy(line, r->buf + start, i + 1 - start);
            line[i + 1 - start - (r->buf[i] == '\n')] = '\0';
            tick(p, line, arg);
        }
        start = i + 1;
    }
    memmove(r->buf, r->buf + start, r->n - start);
    r->n -= start;
}

int cli_progress_run(char *const argv[], cli_progress *p, cli_progress_tick tick, void *arg)
{
    int out[2], err[2];
    if (pipe(out) != 0)
        return -1;
    if (pipe(err) != 0) {
        close(out[0]), close(out[1]);
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(out[0]), close(out[1]), close(err[0]), close(err[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(out[1], STDOUT_FILENO);
        dup2(err[1], STDERR_FILENO);
        close(out[0]), close(out[1]), close(err[0]), close(err[1]);
        execvp(argv[0], argv);
        dprintf(STDERR_FILENO, "cairn: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(out[1]), close(err[1]);
    relay r[2] = {{.in = out[0], .out = STDOUT_FILENO}, {.in = err[0], .out = STDERR_FILENO}};
    tick(p, NULL, arg);
    double ticked = now_s();
    while (r[0].in >= 0 || r[1].in >= 0) {
        struct pollfd fds[2] = {{.fd = r[0].in, .events = POLLIN}, {.fd = r[1].in, .events = POLLIN}};
        int n = poll(fds, 2, (int)(REDRAW_S * 1000));
        if (n < 0 && errno != EINTR)
            break;
        for (int i = 0; n > 0 && i < 2; i++) {
            if (r[i].in < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t got = read(r[i].in, r[i].buf + r[i].n, sizeof r[i].buf - 1 - r[i].n);
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0) {
                relay_lines(&r[i], true, p, tick, arg);
                close(r[i].in);
                r[i].in = -1;
                continue;
            }
            r[i].n += (size_t)got;
            relay_lines(&r[i], false, p, tick, arg);
        }
        if (now_s() - ticked >= REDRAW_S) {
            tick(p, NULL, arg);
            ticked = now_s();
        }
    }
    for (int i = 0; i < 2; i++)
        if (r[i].in >= 0)
            close(r[i].in);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}
