/*
 * test_proto.c - the line protocol of the node daemon's socket (proto.c):
 * every request and reply kind formats and parses back to itself, a table of
 * non-canonical or out-of-range lines refused with a message naming the
 * fault, the formatters refusing what the parsers would refuse, and one line
 * read and written over a socketpair (peer gone, timeout, too long).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/common.h"

/* The structs as the parsers leave them before filling the fields in. */
static cn_req req(int kind)
{
    cn_req r;
    memset(&r, 0, sizeof r);
    r.kind = kind;
    return r;
}

static cn_rep rep(int kind)
{
    cn_rep r;
    memset(&r, 0, sizeof r);
    r.kind = kind;
    r.pid = r.gen = r.done = r.flushed = -1;
    return r;
}

static void req_equal(const cn_req *a, const cn_req *b)
{
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->version, b->version);
    assert_string_equal(a->job, b->job);
    assert_string_equal(a->node, b->node);
    assert_true(a->key == b->key);
    assert_int_equal(a->gen, b->gen);
    assert_int_equal(a->level, b->level);
    assert_int_equal(a->flush, b->flush);
    assert_int_equal(a->seconds, b->seconds);
}

static void rep_equal(const cn_rep *a, const cn_rep *b)
{
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->pid, b->pid);
    assert_string_equal(a->text, b->text);
    assert_int_equal(a->gen, b->gen);
    assert_string_equal(a->what, b->what);
    assert_true(a->bytes == b->bytes);
    assert_int_equal(a->queued, b->queued);
    assert_int_equal(a->busy, b->busy);
    assert_int_equal(a->done, b->done);
    assert_int_equal(a->flushed, b->flushed);
}

/* R formats to exactly LINE (with its '\n'); LINE parses back to R, which
 * formats to the same bytes again. */
static void req_round(cn_req r, const char *line)
{
    char buf[CN_PROTO_LINE], again[CN_PROTO_LINE];
    int n = cn_req_format(&r, buf);
    assert_int_equal(n, strlen(line));
    assert_string_equal(buf, line);
    cn_req back;
    cn_err err = {0};
    if (cn_req_parse(buf, (size_t)n - 1, &back, &err) != 0)
        fail_msg("'%s' refused: %s", line, err.msg);
    req_equal(&r, &back);
    assert_int_equal(cn_req_format(&back, again), n);
    assert_memory_equal(again, line, (size_t)n);
}

static void rep_round(cn_rep r, const char *line)
{
    char buf[CN_PROTO_LINE], again[CN_PROTO_LINE];
    int n = cn_rep_format(&r, buf);
    assert_int_equal(n, strlen(line));
    assert_string_equal(buf, line);
    cn_rep back;
    cn_err err = {0};
    if (cn_rep_parse(buf, (size_t)n - 1, &back, &err) != 0)
        fail_msg("'%s' refused: %s", line, err.msg);
    rep_equal(&r, &back);
    assert_int_equal(cn_rep_format(&back, again), n);
    assert_memory_equal(again, line, (size_t)n);
}

static void test_request_round_trip(void **state)
{
    (void)state;
    cn_req r = req(CN_REQ_HELLO);
    r.version = CN_PROTO_VERSION, r.key = 0x0123456789abcdefull;
    strcpy(r.job, "job-7"), strcpy(r.node, "n1");
    req_round(r, "HELLO 2 job-7 n1 0123456789abcdef\n");
    r.version = UINT32_MAX, r.key = 0;
    memset(r.job, 'j', CN_JOB_MAX), strcpy(r.node, "node_0.a");
    char line[CN_PROTO_LINE];
    snprintf(line, sizeof line, "HELLO 4294967295 %s node_0.a 0000000000000000\n", r.job);
    req_round(r, line);
    r.key = UINT64_MAX;
    snprintf(line, sizeof line, "HELLO 4294967295 %s node_0.a ffffffffffffffff\n", r.job);
    req_round(r, line);

    r = req(CN_REQ_GEN), r.gen = 0, r.level = 1, r.flush = 0;
    req_round(r, "GEN 0 1 0\n");
    r.gen = INT64_MAX, r.level = 3, r.flush = 1;
    req_round(r, "GEN 9223372036854775807 3 1\n");
    r = req(CN_REQ_DRAIN), r.seconds = 1;
    req_round(r, "DRAIN 1\n");
    r.seconds = 86400;
    req_round(r, "DRAIN 86400\n");
    req_round(req(CN_REQ_FLUSH), "FLUSH\n");
    req_round(req(CN_REQ_STATUS), "STATUS\n");
    req_round(req(CN_REQ_STOP), "STOP\n");
    req_round(req(CN_REQ_HOLD), "HOLD\n");
}

static void test_reply_round_trip(void **state)
{
    (void)state;
    rep_round(rep(CN_REP_OK), "OK\n");
    cn_rep r = rep(CN_REP_OK);
    r.pid = 4242;
    rep_round(r, "OK 4242\n");
    r.pid = 1;
    rep_round(r, "OK 1\n");

    r = rep(CN_REP_ERR);
    strcpy(r.text, "no such job: \"x\" ~ (tried  twice) ");
    rep_round(r, "ERR no such job: \"x\" ~ (tried  twice) \n");
    memset(r.text, 'e', CN_PROTO_LINE - 6); /* the longest text */
    char line[CN_PROTO_LINE + 8];
    snprintf(line, sizeof line, "ERR %s\n", r.text);
    assert_int_equal(strlen(line), CN_PROTO_LINE - 1);
    rep_round(r, line);

    r = rep(CN_REP_DONE), r.gen = 12, r.bytes = 1048576;
    strcpy(r.what, "flushed");
    rep_round(r, "DONE 12 flushed 1048576\n");
    r.gen = 0, r.bytes = 0, strcpy(r.what, "present");
    rep_round(r, "DONE 0 present 0\n");
    r.gen = -1, r.bytes = UINT64_MAX, strcpy(r.what, "none");
    rep_round(r, "DONE -1 none 18446744073709551615\n");

    r = rep(CN_REP_STATUS), r.pid = 100, r.queued = 3, r.busy = 1, r.done = 12, r.flushed = 11;
    rep_round(r, "STATUS 100 3 1 12 11\n");
    r.pid = 1, r.queued = 0, r.busy = 0, r.done = -1, r.flushed = -1;
    rep_round(r, "STATUS 1 0 0 -1 -1\n");
}

typedef struct bad {
    const char *line;
    size_t len;
    const char *why; /* part of the message */
} bad;
#define L(s) s, sizeof(s) - 1

static const char K[] = "0123456789abcdef";

static const bad bad_requests[] = {
    {L(""), "empty line"},
    {L("GEN  1 1 0"), "two spaces"},
    {L("GEN 1 1 0 "), "trailing space"},
    {L(" GEN 1 1 0"), "leading space"},
    {L("GEN 01 1 0"), "GEN id \"01\" is not a canonical decimal"},
    {L("GEN +1 1 0"), "GEN id \"+1\""},
    {L("GEN -1 1 0"), "GEN id \"-1\""},
    {L("GEN 1 0 0"), "GEN level 0 is not 1..3"},
    {L("GEN 1 4 0"), "GEN level 4 is not 1..3"},
    {L("GEN 1 7 0"), "GEN level 7 is not 1..3"},
    {L("GEN 1 1 2"), "GEN flush 2 is not 0..1"},
    {L("GEN 1 1 00"), "GEN flush \"00\""},
    {L("GEN 9223372036854775808 1 0"), "GEN id 9223372036854775808 is not"},
    {L("GEN 18446744073709551616 1 0"), "GEN id \"18446744073709551616\""},
    {L("GEN 1 1"), "GEN takes 3 arguments, got 2"},
    {L("GEN 1 1 0 0"), "GEN takes 3 arguments, got 4"},
    {L("HELLO 1 job n1 0123456789abcde"), "HELLO key"},
    {L("HELLO 1 job n1 0123456789ABCDEF"), "HELLO key \"0123456789ABCDEF\""},
    {L("HELLO 1 job n1 0123456789abcdef0"), "HELLO key"},
    {L("HELLO 1 job n1 0x23456789abcdef"), "HELLO key"},
    {L("HELLO 1 ../x n1 0123456789abcdef"), "HELLO job \"../x\" is not a valid id"},
    {L("HELLO 1 job .n 0123456789abcdef"), "HELLO node \".n\""},
    {L("HELLO 0 job n1 0123456789abcdef"), "HELLO version 0 is not 1..4294967295"},
    {L("HELLO 4294967296 job n1 0123456789abcdef"), "HELLO version 4294967296"},
    {L("HELLO 1 jjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjj n1 "
       "0123456789abcdef"),
     "is longer than 63 bytes"},
    {L("HELLO 1 job n1"), "HELLO takes 4 arguments, got 3"},
    {L("FLUSH now"), "FLUSH takes 0 arguments, got 1"},
    {L("STOP 1"), "STOP takes 0"},
    {L("STATUS x"), "STATUS takes 0"},
    {L("DRAIN 0"), "DRAIN seconds 0 is not 1..86400"},
    {L("DRAIN 86401"), "DRAIN seconds 86401"},
    {L("DRAIN -1"), "DRAIN seconds \"-1\""},
    {L("DRAIN"), "DRAIN takes 1 arguments, got 0"},
    {L("FOO"), "unknown word \"FOO\""},
    {L("gen 1 1 0"), "unknown word \"gen\""},
    {L("OK"), "unknown word \"OK\""},
    {L("GEN\t1 1 0"), "unknown word \"GEN?1\""},
    {L("GEN 1 1 0\0"), "NUL byte"},
    {L("GEN 1\0 1 0"), "NUL byte"},
    {L("GEN 1 1\n0"), "newline"},
    {L("GEN 1 1 0\r"), "GEN flush \"0?\""},
};

static const bad bad_replies[] = {
    {L(""), "empty line"},
    {L("OK 0"), "OK pid 0 is not 1..9223372036854775807"},
    {L("OK -1"), "OK pid \"-1\""},
    {L("OK 01"), "OK pid \"01\""},
    {L("OK 1 2"), "OK takes 1 or fewer arguments, got 2"},
    {L("OK  1"), "two spaces"},
    {L("OK "), "trailing space"},
    {L("ERR"), "ERR without text"},
    {L("ERR "), "ERR without text"},
    {L("ERR a\001b"), "non-printable byte 0x01 at 1"},
    {L("ERR caf\xc3\xa9"), "non-printable byte 0xc3 at 3"},
    {L("ERR a\0b"), "NUL byte"},
    {L(" ERR x"), "leading space"},
    {L("ERRx"), "unknown word \"ERRx\""},
    {L("DONE -1 flushed 0"), "DONE gen -1 with flushed"},
    {L("DONE 5 none 0"), "DONE gen 5 with none"},
    {L("DONE -2 none 0"), "DONE gen \"-2\""},
    {L("DONE 5 lost 0"), "DONE what \"lost\""},
    {L("DONE 5 Flushed 0"), "DONE what \"Flushed\""},
    {L("DONE 5 flushed -1"), "DONE bytes \"-1\""},
    {L("DONE 5 flushed 18446744073709551616"), "DONE bytes"},
    {L("DONE 5 flushed 007"), "DONE bytes \"007\""},
    {L("DONE 5 flushed"), "DONE takes 3 arguments, got 2"},
    {L("DONE 5 flushed 1 1"), "DONE takes 3 arguments, got 4"},
    {L("STATUS 0 0 0 -1 -1"), "STATUS pid 0"},
    {L("STATUS 1 -1 0 -1 -1"), "STATUS queued \"-1\""},
    {L("STATUS 1 0 2 -1 -1"), "STATUS busy 2 is not 0..1"},
    {L("STATUS 1 0 0 -2 -1"), "STATUS done \"-2\""},
    {L("STATUS 1 0 0 -1 -01"), "STATUS flushed \"-01\""},
    {L("STATUS 1 0 0 -1"), "STATUS takes 5 arguments, got 4"},
    {L("STATUS 1 0 0 -1 -1 -1"), "STATUS takes 5 arguments, got 6"},
    {L("FOO"), "unknown word \"FOO\""},
    {L("GEN 1 1 0"), "unknown word \"GEN\""},
};

/* LINE refused by the request (REQUEST) or reply parser, with WHY in its
 * message after the parser's prefix, and nothing left in the struct. */
static void refused(bool request, const char *line, size_t len, const char *why)
{
    cn_err err = {0};
    cn_req q;
    cn_rep p;
    int rc = request ? cn_req_parse(line, len, &q, &err) : cn_rep_parse(line, len, &p, &err);
    const char *prefix = request ? "daemon request: " : "daemon reply: ";
    if (rc != CAIRN_EFORMAT || err.code != CAIRN_EFORMAT || !strstr(err.msg, why) ||
        strncmp(err.msg, prefix, strlen(prefix)) != 0)
        fail_msg("'%.*s': expected '%s', got rc %d: %s", (int)len, line, why, rc, err.msg);
    for (const char *c = err.msg; *c; c++)
        assert_true(*c >= 0x20 && *c <= 0x7e);
    assert_int_equal(request ? q.kind : p.kind, 0);
}

static void test_bad_lines(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_requests / sizeof bad_requests[0]; i++)
        refused(true, bad_requests[i].line, bad_requests[i].len, bad_requests[i].why);
    for (size_t i = 0; i < sizeof bad_replies / sizeof bad_replies[0]; i++)
        refused(false, bad_replies[i].line, bad_replies[i].len, bad_replies[i].why);

    /* Too long; a long word is echoed cut short. */
    char line[700];
    memset(line, 'x', sizeof line);
    memcpy(line, "ERR ", 4);
    refused(false, line, 600, "line of 600 bytes is longer than 511");
    refused(false, line, CN_PROTO_LINE - 1, "ERR text of 507 bytes is longer than 506");
    memcpy(line, "STOP", 4);
    refused(true, line, 600, "line of 600 bytes is longer than 511");
    cn_req q;
    cn_err err = {0};
    assert_int_equal(cn_req_parse(line, 100, &q, &err), CAIRN_EFORMAT);
    char shown[64] = "unknown word \"STOP";
    memset(shown + strlen(shown), 'x', 28);
    strcat(shown, "...\"");
    assert_non_null(strstr(err.msg, shown));
    assert_true(strlen(err.msg) < 80);
    memcpy(line, "HELLO 1 j n ", 12);
    memcpy(line + 12, K, 16);
    assert_int_equal(cn_req_parse(line, 28, &q, &err), 0); /* line not NUL-terminated */
    assert_true(q.key == 0x0123456789abcdefull);
    assert_int_equal(cn_req_parse(line, 27, &q, &err), CAIRN_EFORMAT);
    assert_int_equal(cn_req_parse(line, 29, &q, &err), CAIRN_EFORMAT);
}

static void test_format_refuses_out_of_range(void **state)
{
    (void)state;
    char buf[CN_PROTO_LINE];
    cn_req q = req(CN_REQ_HELLO);
    q.version = 1, strcpy(q.job, "j"), strcpy(q.node, "n");
    assert_int_equal(cn_req_format(&q, buf), (int)strlen("HELLO 1 j n 0000000000000000\n"));
    q.version = 0;
    assert_int_equal(cn_req_format(&q, buf), -1);
    q.version = 1, strcpy(q.job, "../x");
    assert_int_equal(cn_req_format(&q, buf), -1);
    strcpy(q.job, "j"), q.node[0] = '\0';
    assert_int_equal(cn_req_format(&q, buf), -1);
    memset(q.node, 'n', sizeof q.node); /* no NUL */
    assert_int_equal(cn_req_format(&q, buf), -1);
    const struct { int64_t gen; int level, flush; } gens[] = {
        {-1, 1, 0}, {INT64_MIN, 1, 0}, {0, 0, 0}, {0, 4, 0}, {0, 1, 2}, {0, 1, -1}};
    for (size_t i = 0; i < sizeof gens / sizeof gens[0]; i++) {
        q = req(CN_REQ_GEN), q.gen = gens[i].gen, q.level = gens[i].level, q.flush = gens[i].flush;
        assert_int_equal(cn_req_format(&q, buf), -1);
    }
    q = req(CN_REQ_DRAIN);
    assert_int_equal(cn_req_format(&q, buf), -1);
    q.seconds = 86401;
    assert_int_equal(cn_req_format(&q, buf), -1);
    q = req(0);
    assert_int_equal(cn_req_format(&q, buf), -1);
    q = req(99);
    assert_int_equal(cn_req_format(&q, buf), -1);

    cn_rep r = rep(CN_REP_OK);
    r.pid = 0;
    assert_int_equal(cn_rep_format(&r, buf), -1);
    r.pid = -2;
    assert_int_equal(cn_rep_format(&r, buf), -1);
    const struct { int64_t gen; const char *what; } dones[] = {
        {3, "lost"}, {3, ""}, {-1, "flushed"}, {-1, "present"}, {3, "none"}, {-2, "none"},
        {-2, "flushed"}};
    for (size_t i = 0; i < sizeof dones / sizeof dones[0]; i++) {
        r = rep(CN_REP_DONE), r.gen = dones[i].gen, strcpy(r.what, dones[i].what);
        assert_int_equal(cn_rep_format(&r, buf), -1);
    }
    r = rep(CN_REP_DONE), r.gen = 3;
    memcpy(r.what, "flushedxxxxxxxxx", sizeof r.what); /* no NUL */
    assert_int_equal(cn_rep_format(&r, buf), -1);
    const int64_t st[][5] = {{0, 0, 0, -1, -1}, {1, -1, 0, -1, -1}, {1, 0, 2, -1, -1},
                             {1, 0, -1, -1, -1}, {1, 0, 0, -2, -1}, {1, 0, 0, -1, -2}};
    for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) {
        r = rep(CN_REP_STATUS), r.pid = st[i][0], r.queued = st[i][1], r.busy = (int)st[i][2];
        r.done = st[i][3], r.flushed = st[i][4];
        assert_int_equal(cn_rep_format(&r, buf), -1);
    }
    r = rep(0);
    assert_int_equal(cn_rep_format(&r, buf), -1);
    r = rep(CN_REP_ERR + 10);
    assert_int_equal(cn_rep_format(&r, buf), -1);
}

static void test_err_text_sanitized(void **state)
{
    (void)state;
    char buf[CN_PROTO_LINE];
    cn_rep r = rep(CN_REP_ERR), back;
    strcpy(r.text, "bad\tthing\n\x7f\xffz");
    assert_int_equal(cn_rep_format(&r, buf), (int)strlen("ERR bad?thing???z\n"));
    assert_string_equal(buf, "ERR bad?thing???z\n");
    r.text[0] = '\0';
    assert_int_equal(cn_rep_format(&r, buf), 10);
    assert_string_equal(buf, "ERR error\n");
    memset(r.text, 'a', sizeof r.text); /* no NUL: cut to fit */
    int n = cn_rep_format(&r, buf);
    assert_int_equal(n, CN_PROTO_LINE - 1);
    assert_int_equal(strlen(buf), (size_t)n);
    assert_int_equal(buf[n - 1], '\n');
    assert_int_equal(cn_rep_parse(buf, (size_t)n - 1, &back, NULL), 0);
    assert_int_equal(strlen(back.text), CN_PROTO_LINE - 6);
}

/* ---- line I/O over a socketpair --------------------------------------- */

static void pair(int sv[2]) { assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0); }

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void test_line_io(void **state)
{
    (void)state;
    int sv[2];
    char buf[CN_PROTO_LINE];
    cn_err err = {0};
    pair(sv);
    const char *hello = "HELLO 1 job-7 n1 0123456789abcdef\n";
    assert_int_equal(cn_line_write(sv[0], hello, strlen(hello), &err), 0);
    assert_int_equal(cn_line_read(sv[1], buf, 1000, &err), (int)strlen(hello) - 1);
    assert_memory_equal(buf, hello, strlen(hello) - 1);
    assert_int_equal(buf[strlen(hello) - 1], '\0');
    cn_req q;
    assert_int_equal(cn_req_parse(buf, strlen(buf), &q, &err), 0);
    assert_int_equal(q.kind, CN_REQ_HELLO);

    /* Two lines in one write come out one at a time; an empty line is 0. */
    const char *two = "STATUS\nSTOP\n\n";
    assert_int_equal(cn_line_write(sv[0], two, strlen(two), &err), 0);
    assert_int_equal(cn_line_read(sv[1], buf, -1, &err), 6);
    assert_string_equal(buf, "STATUS");
    assert_int_equal(cn_line_read(sv[1], buf, 1000, &err), 4);
    assert_string_equal(buf, "STOP");
    assert_int_equal(cn_line_read(sv[1], buf, 0, &err), 0);
    assert_string_equal(buf, "");

    /* The longest line fits; one byte more does not. */
    char big[700];
    memset(big, 'x', sizeof big);
    big[CN_PROTO_LINE - 1] = '\n';
    assert_int_equal(cn_line_write(sv[0], big, CN_PROTO_LINE, &err), 0);
    assert_int_equal(cn_line_read(sv[1], buf, 1000, &err), CN_PROTO_LINE - 1);
    assert_int_equal(strlen(buf), CN_PROTO_LINE - 1);
    big[CN_PROTO_LINE - 1] = 'x', big[599] = '\n';
    assert_int_equal(cn_line_write(sv[0], big, 600, &err), 0);
    assert_int_equal(cn_line_read(sv[1], buf, 1000, &err), CAIRN_EIO);
    assert_int_equal(err.code, CAIRN_EIO);
    assert_non_null(strstr(err.msg, "line longer than 511 bytes"));
    close(sv[0]), close(sv[1]);

    /* Nothing sent: a timeout after about 50 ms. */
    pair(sv);
    double t0 = now_s();
    assert_int_equal(cn_line_read(sv[1], buf, 50, &err), CAIRN_EIO);
    double dt = now_s() - t0;
    assert_true(dt >= 0.045 && dt < 2.0);
    assert_non_null(strstr(err.msg, "no answer within 50 ms"));
    /* A trickle of bytes does not extend the deadline past the total. */
    assert_int_equal(cn_line_write(sv[0], "ST", 2, &err), 0);
    assert_int_equal(cn_line_read(sv[1], buf, 30, &err), CAIRN_EIO);
    assert_non_null(strstr(err.msg, "no answer within 30 ms"));

    /* The peer closes half-way through a line. */
    assert_int_equal(cn_line_write(sv[0], "OK", 2, &err), 0);
    close(sv[0]);
    assert_int_equal(cn_line_read(sv[1], buf, 1000, &err), CAIRN_EIO);
    assert_non_null(strstr(err.msg, "closed the connection"));
    /* Writing to a closed peer: CAIRN_EIO, no SIGPIPE. */
    assert_int_equal(cn_line_write(sv[1], "STOP\n", 5, &err), CAIRN_EIO);
    assert_int_equal(err.code, CAIRN_EIO);
    assert_non_null(strstr(err.msg, "send"));
    close(sv[1]);

    /* A bad descriptor. */
    assert_int_equal(cn_line_read(-1, buf, 10, &err), CAIRN_EIO);
    assert_int_equal(err.code, CAIRN_EIO);
    assert_int_equal(cn_line_write(-1, "x", 1, &err), CAIRN_EIO);
    assert_int_equal(err.code, CAIRN_EIO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_round_trip),
        cmocka_unit_test(test_reply_round_trip),
        cmocka_unit_test(test_bad_lines),
        cmocka_unit_test(test_format_refuses_out_of_range),
        cmocka_unit_test(test_err_text_sanitized),
        cmocka_unit_test(test_line_io),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
