/*
 * proto.c - the line protocol of the node daemon's socket (contract in
 * common.h): parse and format requests and replies, read and write one line.
 *
 * Parsing is strict and canonical (one space between words, no sign or
 * leading zero, exact word counts), so a parsed line formats back to the same
 * bytes; the parsers treat their input as hostile (a fuzz target). Nothing
 * here allocates: the caller owns every buffer.
 */
#include "common/common.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TEXT_MAX (CN_PROTO_LINE - 6) /* "ERR " + text + '\n' + NUL */
#define WORDS_MAX 8
/* Refuse the line; the public parsers put "daemon request: " etc. in front. */
#define REFUSE(cond, ...) CN_FAIL_IF(cond, err, CAIRN_EFORMAT, __VA_ARGS__)

typedef struct pword {
    const char *p;
    size_t n;
} pword;

static const char *const REQ_WORD[] = {"",       "HELLO", "GEN",  "FLUSH",
                                       "DRAIN",  "STATUS", "STOP", "HOLD"};
static const char *const REP_WORD[] = {"", "OK", "ERR", "DONE", "STATUS"};
static const char *const WHAT[] = {"", "flushed", "present", "none"};

static bool printable(char c) { return c >= 0x20 && c <= 0x7e; }

static bool is(pword w, const char *s) { return w.n == strlen(s) && memcmp(w.p, s, w.n) == 0; }

/* Index in NAMES[1..N) of W, 0 if none. */
static int lookup(pword w, const char *const *names, int n)
{
    for (int k = 1; k < n; k++)
        if (is(w, names[k]))
            return k;
    return 0;
}

/* W made printable and cut to 32 bytes, for messages. */
static const char *show(pword w, char out[40])
{
    size_t n = w.n < 32 ? w.n : 32;
    for (size_t i = 0; i < n; i++)
        out[i] = printable(w.p[i]) ? w.p[i] : '?';
    strcpy(out + n, w.n > 32 ? "..." : "");
    return out;
}

/* What every line must be, whatever its words. */
static int check_line(const char *line, size_t len, cn_err *err)
{
    REFUSE(len > CN_PROTO_LINE - 1, "line of %zu bytes is longer than %d", len, CN_PROTO_LINE - 1);
    REFUSE(len == 0, "empty line");
    REFUSE(memchr(line, '\0', len), "NUL byte in the line");
    REFUSE(memchr(line, '\n', len), "newline inside the line");
    return 0;
}

/* Split LINE into words separated by exactly one space: W gets the first
 * WORDS_MAX of them, *NW their total count. */
static int split(const char *line, size_t len, pword *w, int *nw, cn_err *err)
{
    REFUSE(line[0] == ' ', "leading space");
    REFUSE(line[len - 1] == ' ', "trailing space");
    *nw = 0;
    for (size_t i = 0, j; i < len; i = j + 1) {
        for (j = i; j < len && line[j] != ' ';)
            j++;
        REFUSE(j == i, "two spaces in a row at byte %zu", i);
        if (*nw < WORDS_MAX)
            w[*nw] = (pword){line + i, j - i};
        (*nw)++;
    }
    return 0;
}

/* Canonical unsigned decimal: digits only, no leading zero, fits 64 bits. */
static bool digits(pword w, uint64_t *v)
{
    uint64_t x = 0;
    if (w.n == 0 || (w.n > 1 && w.p[0] == '0'))
        return false;
    for (size_t i = 0; i < w.n; i++) {
        unsigned d = (unsigned)(w.p[i] - '0');
        if (w.p[i] < '0' || w.p[i] > '9' || x > (UINT64_MAX - d) / 10)
            return false;
        x = x * 10 + d;
    }
    *v = x;
    return true;
}

/* Field NAME: canonical decimal in MIN..MAX; MIN -1 allows "-1" (none). */
static int field(const char *name, pword w, int64_t min, int64_t max, int64_t *out, cn_err *err)
{
    char s[40];
    uint64_t v;
    if (min < 0 && is(w, "-1"))
        return *out = -1, 0;
    REFUSE(!digits(w, &v), "%s \"%s\" is not a canonical decimal%s", name, show(w, s),
           min < 0 ? " or -1" : "");
    REFUSE(v > (uint64_t)max || (int64_t)v < min, "%s %" PRIu64 " is not %" PRId64 "..%" PRId64,
           name, v, min, max);
    *out = (int64_t)v;
    return 0;
}

static int id(const char *name, pword w, char out[CN_JOB_MAX + 1], cn_err *err)
{
    char s[40];
    REFUSE(w.n > CN_JOB_MAX, "%s \"%s\" is longer than %d bytes", name, show(w, s), CN_JOB_MAX);
    memcpy(out, w.p, w.n);
    out[w.n] = '\0';
    REFUSE(!cn_id_ok(out), "%s \"%s\" is not a valid id", name, show(w, s));
    return 0;
}

static int req_parse(const char *line, size_t len, cn_req *out, cn_err *err)
{
    static const int nargs[] = {0, 4, 3, 0, 1, 0, 0, 0};
    pword w[WORDS_MAX];
    int nw, k;
    int64_t v;
    char s[40];
    CN_TRY(check_line(line, len, err));
    CN_TRY(split(line, len, w, &nw, err));
    REFUSE(!(k = lookup(w[0], REQ_WORD, 8)), "unknown word \"%s\"", show(w[0], s));
    REFUSE(nw - 1 != nargs[k], "%s takes %d arguments, got %d", REQ_WORD[k], nargs[k], nw - 1);
    out->kind = k;
    if (k == CN_REQ_HELLO) {
        CN_TRY(field("HELLO version", w[1], 1, UINT32_MAX, &v, err));
        out->version = (uint32_t)v;
        CN_TRY(id("HELLO job", w[2], out->job, err));
        CN_TRY(id("HELLO node", w[3], out->node, err));
        const char *hex = "0123456789abcdef", *d = NULL;
        for (size_t i = 0; i < 16; i++) {
            REFUSE(w[4].n != 16 || !w[4].p[i] || !(d = strchr(hex, w[4].p[i])),
                   "HELLO key \"%s\" is not 16 lower-case hex digits", show(w[4], s));
            out->key = out->key << 4 | (uint64_t)(d - hex);
        }
    } else if (k == CN_REQ_GEN) {
        CN_TRY(field("GEN id", w[1], 0, INT64_MAX, &out->gen, err));
        CN_TRY(field("GEN level", w[2], 1, 3, &v, err));
        out->level = (int)v;
        CN_TRY(field("GEN flush", w[3], 0, 1, &v, err));
        out->flush = (int)v;
    } else if (k == CN_REQ_DRAIN) {
        CN_TRY(field("DRAIN seconds", w[1], 1, 86400, &v, err));
        out->seconds = (uint32_t)v;
    }
    return 0;
}

int cn_req_parse(const char *line, size_t len, cn_req *out, cn_err *err)
{
    memset(out, 0, sizeof *out);
    int rc = req_parse(line, len, out, err);
    if (rc != 0) {
        memset(out, 0, sizeof *out);
        cn_err_prefix(err, "daemon request: ");
    }
    return rc;
}

static int rep_parse(const char *line, size_t len, cn_rep *out, cn_err *err)
{
    static const int lo[] = {0, 0, 0, 3, 5}, hi[] = {0, 1, 0, 3, 5};
    pword w[WORDS_MAX];
    int nw, k;
    int64_t v;
    char s[40];
    CN_TRY(check_line(line, len, err));
    if (len >= 3 && memcmp(line, "ERR", 3) == 0 && (len == 3 || line[3] == ' ')) {
        size_t n = len > 4 ? len - 4 : 0;
        REFUSE(n == 0, "ERR without text");
        REFUSE(n > TEXT_MAX, "ERR text of %zu bytes is longer than %d", n, TEXT_MAX);
        for (size_t i = 0; i < n; i++)
            REFUSE(!printable(line[4 + i]), "ERR text has the non-printable byte 0x%02x at %zu",
                   (unsigned char)line[4 + i], i);
        out->kind = CN_REP_ERR;
        memcpy(out->text, line + 4, n);
        return 0;
    }
    CN_TRY(split(line, len, w, &nw, err));
    REFUSE(!(k = lookup(w[0], REP_WORD, 5)), "unknown word \"%s\"", show(w[0], s));
    REFUSE(nw - 1 < lo[k] || nw - 1 > hi[k], "%s takes %d%s arguments, got %d", REP_WORD[k],
           hi[k], lo[k] < hi[k] ? " or fewer" : "", nw - 1);
    out->kind = k;
    if (k == CN_REP_OK && nw == 2) {
        CN_TRY(field("OK pid", w[1], 1, INT64_MAX, &out->pid, err));
    } else if (k == CN_REP_DONE) {
        CN_TRY(field("DONE gen", w[1], -1, INT64_MAX, &out->gen, err));
        int what = lookup(w[2], WHAT, 4);
        REFUSE(!what, "DONE what \"%s\" is not flushed, present or none", show(w[2], s));
        strcpy(out->what, WHAT[what]);
        REFUSE((out->gen == -1) != (what == 3), "DONE gen %" PRId64 " with %s (-1 goes with none)",
               out->gen, out->what);
        REFUSE(!digits(w[3], &out->bytes), "DONE bytes \"%s\" is not a canonical decimal",
               show(w[3], s));
    } else if (k == CN_REP_STATUS) {
        CN_TRY(field("STATUS pid", w[1], 1, INT64_MAX, &out->pid, err));
        CN_TRY(field("STATUS queued", w[2], 0, INT64_MAX, &out->queued, err));
        CN_TRY(field("STATUS busy", w[3], 0, 1, &v, err));
        out->busy = (int)v;
        CN_TRY(field("STATUS done", w[4], -1, INT64_MAX, &out->done, err));
        CN_TRY(field("STATUS flushed", w[5], -1, INT64_MAX, &out->flushed, err));
    }
    return 0;
}

static void rep_defaults(cn_rep *out)
{
    memset(out, 0, sizeof *out);
    out->pid = out->gen = out->done = out->flushed = -1;
}

int cn_rep_parse(const char *line, size_t len, cn_rep *out, cn_err *err)
{
    rep_defaults(out);
    int rc = rep_parse(line, len, out, err);
    if (rc != 0) {
        rep_defaults(out);
        cn_err_prefix(err, "daemon reply: ");
    }
    return rc;
}

#define PUT(...) snprintf(buf, CN_PROTO_LINE, __VA_ARGS__)

/* 0 or 1, as a flag field must be. */
static bool flag(int v) { return v == 0 || v == 1; }

int cn_req_format(const cn_req *r, char *buf)
{
    int k = r->kind;
    if (k == CN_REQ_HELLO && r->version >= 1 && cn_id_ok(r->job) && cn_id_ok(r->node))
        return PUT("HELLO %" PRIu32 " %s %s %016" PRIx64 "\n", r->version, r->job, r->node,
                   r->key);
    if (k == CN_REQ_GEN && r->gen >= 0 && r->level >= 1 && r->level <= 3 && flag(r->flush))
        return PUT("GEN %" PRId64 " %d %d\n", r->gen, r->level, r->flush);
    if (k == CN_REQ_DRAIN && r->seconds >= 1 && r->seconds <= 86400)
        return PUT("DRAIN %" PRIu32 "\n", r->seconds);
    if (k == CN_REQ_FLUSH || k == CN_REQ_STATUS || k == CN_REQ_STOP || k == CN_REQ_HOLD)
        return PUT("%s\n", REQ_WORD[k]);
    return -1;
}

int cn_rep_format(const cn_rep *r, char *buf)
{
    int k = r->kind, what = 0;
    for (int i = 1; i < 4; i++)
        what = strncmp(r->what, WHAT[i], sizeof r->what) == 0 ? i : what;
    if (k == CN_REP_OK && (r->pid == -1 || r->pid >= 1))
        return r->pid == -1 ? PUT("OK\n") : PUT("OK %" PRId64 "\n", r->pid);
    if (k == CN_REP_DONE && what && r->gen >= -1 && (r->gen == -1) == (what == 3))
        return PUT("DONE %" PRId64 " %s %" PRIu64 "\n", r->gen, WHAT[what], r->bytes);
    if (k == CN_REP_STATUS && r->pid >= 1 && r->queued >= 0 && flag(r->busy) && r->done >= -1 &&
        r->flushed >= -1)
        return PUT("STATUS %" PRId64 " %" PRId64 " %d %" PRId64 " %" PRId64 "\n", r->pid,
                   r->queued, r->busy, r->done, r->flushed);
    if (k != CN_REP_ERR)
        return -1;
    size_t n = strnlen(r->text, sizeof r->text);
    if (n == 0)
        return PUT("ERR error\n");
    n = n > TEXT_MAX ? TEXT_MAX : n;
    memcpy(buf, "ERR ", 4);
    for (size_t i = 0; i < n; i++)
        buf[4 + i] = printable(r->text[i]) ? r->text[i] : '?';
    memcpy(buf + 4 + n, "\n", 2);
    return (int)n + 5;
}

/* A socket error as CAIRN_EIO (not -errno) with strerror in the message. */
static int io_fail(cn_err *err, int e, const char *what)
{
    cn_fail_errno(err, e, "daemon socket: %s", what);
    if (err)
        err->code = CAIRN_EIO;
    return CAIRN_EIO;
}

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int cn_line_read(int fd, char *buf, int timeout_ms, cn_err *err)
{
    int64_t deadline = timeout_ms < 0 ? 0 : now_ms() + timeout_ms;
    size_t n = 0;
    CN_FAIL_IF(fd < 0, err, CAIRN_EIO, "daemon socket: not open");
    for (;;) {
        int wait = -1;
        if (timeout_ms >= 0) {
            int64_t left = deadline - now_ms();
            wait = left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int rc = poll(&p, 1, wait);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0)
            return io_fail(err, errno, "poll");
        CN_FAIL_IF(rc == 0, err, CAIRN_EIO, "no answer within %d ms", timeout_ms);
        char c;
        ssize_t got = read(fd, &c, 1);
        if (got < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
            continue;
        if (got < 0)
            return io_fail(err, errno, "read");
        CN_FAIL_IF(got == 0, err, CAIRN_EIO, "the peer closed the connection");
        if (c == '\n') {
            buf[n] = '\0';
            return (int)n;
        }
        CN_FAIL_IF(n == CN_PROTO_LINE - 1, err, CAIRN_EIO, "line longer than %d bytes",
                   CN_PROTO_LINE - 1);
        buf[n++] = c;
    }
}

int cn_line_write(int fd, const char *buf, size_t len, cn_err *err)
{
    for (size_t off = 0; off < len;) {
        ssize_t sent = send(fd, buf + off, len - off, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR)
            continue;
        if (sent <= 0)
            return io_fail(err, sent < 0 ? errno : EIO, "send");
        off += (size_t)sent;
    }
    return 0;
}
