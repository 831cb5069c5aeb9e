/*
 * t_need.c - the MPI test application for cairn_need_checkpoint, run by
 * tests/mpi/run_need.sh. Intervals come from the configuration (CAIRN_CKPT_*,
 * CAIRN_FAIL_MTBF_*, or the file T_CONFIG names, given to cairn_init; else
 * NULL, so CAIRN_CONFIG_FILE applies).
 *
 *   iters N     call cairn_need_checkpoint N times (iterations 1..N) and
 *               checkpoint at the level it returns (generation id = the
 *               iteration), except at the iterations of T_SKIP (a list);
 *               T_EXTRA "I:L ..." adds checkpoints at level L after the call
 *               of iteration I, unasked. Every non-zero answer is printed as
 *               "I:L" on the "levels:" line, which must equal T_EXPECT.
 *   time S      (ckpt.every_1 a time) call until it says 1, S seconds at
 *               least after the program started (measured before
 *               cairn_init); with T_RESET_AFTER = R, the first call past R
 *               seconds is followed by an unasked checkpoint at level 2, and
 *               the answer must then come S seconds at least after that.
 *               No earlier call may say anything but 0. Prints "due after E s".
 *   auto ROUNDS (ckpt.auto = on) the first call must say 1 (nothing
 *               measured yet); checkpoint, then call until it says 1 again,
 *               ROUNDS times; prints "auto round K: due E s after the
 *               checkpoint began" (E is at least the library's interval).
 *   null        rank 1 passes a NULL level: every rank must get CAIRN_EINVAL
 *               and the same message.
 *   init-fail C cairn_init must fail with code C (a name, e.g.
 *               CAIRN_ECONFIG); prints "init: C: message".
 * Every call's answer must be the same on every rank. Every iteration writes
 * the protected array as a function of (rank, iteration); at the end the
 * newest generation is restored and compared bit for bit (iters, time,
 * auto). Ranks agree on pass/fail; rank 0 prints "PASS mode" or "FAIL mode:
 * reason" and the exit status is 0 only on PASS. The loops that wait for a
 * time are bounded (120 s), never fixed sleeps.
 */
#include "cairn.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N_STATE 4096
#define WAIT_LIMIT 120.0

static int rank;
static char why[1024];
static double state[N_STATE];
static long last_ckpt = -1;

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
    char msg[sizeof why];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "rank %d: %s\n", rank, msg);
    if (!why[0])
        snprintf(why, sizeof why, "%s", msg);
    return 0;
}

static void compute(long it)
{
    for (size_t k = 0; k < N_STATE; k++)
        state[k] = (double)rank * 1e9 + (double)it * 1e4 + (double)k;
}

/* One call, checked to give every rank the same answer. */
static int need(cairn_ctx *ctx, int *level)
{
    int rc = cairn_need_checkpoint(ctx, level);
    if (rc != 0)
        return fail("need_checkpoint: %s: %s", cairn_strerror(rc), cairn_errmsg(ctx));
    int lo, hi;
    MPI_Allreduce(level, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(level, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (lo != hi)
        return fail("ranks got different levels: %d..%d", lo, hi);
    if (*level < 0 || *level > 4)
        return fail("level %d out of 0..4", *level);
    return 1;
}

static int checkpoint(cairn_ctx *ctx, long id, int level)
{
    int rc = cairn_checkpoint(ctx, id, level);
    if (rc != 0)
        return fail("checkpoint %ld at level %d: %s: %s", id, level, cairn_strerror(rc),
                    cairn_errmsg(ctx));
    last_ckpt = id;
    return 1;
}

/* The newest generation restores bit for bit what was saved with it. */
static int restored_exact(cairn_ctx *ctx)
{
    if (last_ckpt < 0)
        return fail("no checkpoint was taken");
    memset(state, 0, sizeof state);
    long got = -1;
    int rc = cairn_restart(ctx, CAIRN_LATEST, &got);
    if (rc != 0)
        return fail("restart: %s: %s", cairn_strerror(rc), cairn_errmsg(ctx));
    if (got != last_ckpt)
        return fail("restart restored generation %ld, not the newest one %ld", got, last_ckpt);
    static double want[N_STATE];
    memcpy(want, state, sizeof state);
    compute(last_ckpt);
    if (memcmp(want, state, sizeof state) != 0)
        return fail("generation %ld restored other bytes than were saved", last_ckpt);
    return 1;
}

/* Is " I:L " in the space-separated LIST? */
static int listed(const char *list, long i, int l)
{
    char item[64];
    if (!list)
        return 0;
    snprintf(item, sizeof item, " %ld:%d ", i, l);
    char padded[4096];
    snprintf(padded, sizeof padded, " %s ", list);
    return strstr(padded, item) != NULL;
}

/* The level of an unasked checkpoint after iteration I in T_EXTRA, else 0. */
static int extra(long i)
{
    for (int l = 1; l <= 4; l++)
        if (listed(getenv("T_EXTRA"), i, l))
            return l;
    return 0;
}

static int skipped(long i)
{
    char item[64], padded[4096];
    const char *list = getenv("T_SKIP");
    snprintf(item, sizeof item, " %ld ", i);
    snprintf(padded, sizeof padded, " %s ", list ? list : "");
    return strstr(padded, item) != NULL;
}

static int iters(cairn_ctx *ctx, long n)
{
    char seen[4096] = "";
    size_t len = 0;
    for (long i = 1; i <= n; i++) {
        compute(i);
        int level = 0;
        if (!need(ctx, &level))
            return 0;
        if (level) {
            len += (size_t)snprintf(seen + len, sizeof seen - len, "%s%ld:%d", len ? " " : "", i,
                                    level);
            if (len >= sizeof seen)
                return fail("too many checkpoints");
        }
        if (level && !skipped(i) && !checkpoint(ctx, i, level))
            return 0;
        int x = extra(i);
        if (x && !checkpoint(ctx, i, x))
            return 0;
    }
    if (rank == 0)
        printf("levels: %s\n", seen);
    const char *want = getenv("T_EXPECT");
    if (!want || strcmp(want, seen) != 0)
        return fail("levels '%s', expected '%s'", seen, want ? want : "(T_EXPECT unset)");
    return restored_exact(ctx);
}

/* Collective: has rank 0's clock passed SINCE + LIMIT? (Every rank takes
 * the same branch, so the calls of cairn_need_checkpoint stay matched.) */
static int passed(double since, double limit)
{
    int yes = MPI_Wtime() - since >= limit;
    MPI_Bcast(&yes, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return yes;
}

/* Call until a non-zero answer (at most WAIT_LIMIT seconds); *IT counts. */
static int until_due(cairn_ctx *ctx, long *it, int *level, double t_start)
{
    for (*level = 0; *level == 0;) {
        compute(++*it);
        if (!need(ctx, level))
            return 0;
        if (*level == 0 && passed(t_start, WAIT_LIMIT))
            return fail("nothing due after %.0f s", WAIT_LIMIT);
        if (*level == 0)
            usleep(1000); /* the application's work between two calls */
    }
    return 1;
}

static int timed(cairn_ctx *ctx, double t0, double s)
{
    const char *r = getenv("T_RESET_AFTER");
    double reset_after = r ? atof(r) : -1, t_reset = -1, t_after = -1;
    long it = 0;
    int level = 0;
    if (reset_after >= 0) {
        while (level == 0 && !passed(t0, reset_after)) {
            compute(++it);
            if (!need(ctx, &level))
                return 0;
            usleep(1000);
        }
        if (level)
            return fail("level %d due at iteration %ld, %.3f s after the start (< %g s)", level,
                        it, MPI_Wtime() - t0, reset_after);
        t_reset = MPI_Wtime();
        if (!checkpoint(ctx, it, CAIRN_LEVEL_PARTNER))
            return 0;
        t_after = MPI_Wtime();
    }
    if (!until_due(ctx, &it, &level, t0))
        return 0;
    double now = MPI_Wtime(), e = now - t0;
    if (rank == 0)
        printf("due after %.3f s (level %d, iteration %ld), %.3f s after the level-2 "
               "checkpoint returned\n", e, level, it, t_after >= 0 ? now - t_after : -1.0);
    /* Rank 0's clock is the one that decides: its verdict, for everyone. The
     * library restarts the clock as the checkpoint ends, between T_RESET and
     * T_AFTER: from T_RESET the interval must have passed; from T_AFTER all
     * but the few instructions after the restart (0.1 s allowed). */
    int early = rank == 0 && (e < s || (t_reset >= 0 && (now - t_reset < s ||
                                                         now - t_after < s - 0.1))),
        any = 0;
    MPI_Allreduce(&early, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (level != 1)
        return fail("level %d due, expected 1", level);
    if (any && t_reset < 0)
        return fail("level 1 due %.3f s after the start, before its interval %g s", e, s);
    if (any)
        return fail("level 1 due %.3f s after the start, %.3f s after the level-2 "
                    "checkpoint began and %.3f s after it returned: its clock was not "
                    "restarted (interval %g s)", e, now - t_reset, now - t_after, s);
    return checkpoint(ctx, it, 1) && restored_exact(ctx);
}

static int automatic(cairn_ctx *ctx, int rounds)
{
    long it = 1;
    int level = 0;
    compute(it);
    if (!need(ctx, &level))
        return 0;
    if (level != 1)
        return fail("first call in auto mode said %d, expected 1 (no cost measured yet)", level);
    for (int k = 1; k <= rounds; k++) {
        double began = MPI_Wtime();
        if (!checkpoint(ctx, it, 1))
            return 0;
        if (!until_due(ctx, &it, &level, began))
            return 0;
        if (rank == 0)
            printf("auto round %d: level %d due %.6f s after the checkpoint began\n", k, level,
                   MPI_Wtime() - began);
        if (level != 1)
            return fail("round %d: level %d due, expected 1", k, level);
    }
    return checkpoint(ctx, it, 1) && restored_exact(ctx);
}

static int null_level(cairn_ctx *ctx)
{
    int level = 7;
    int rc = cairn_need_checkpoint(ctx, rank == 1 ? NULL : &level);
    char msg[1024], first[1024];
    snprintf(msg, sizeof msg, "%s", cairn_errmsg(ctx));
    memcpy(first, msg, sizeof msg);
    MPI_Bcast(first, sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("null: %s: %s\n", cairn_strerror(rc), msg);
    if (rc != CAIRN_EINVAL)
        return fail("a NULL level on rank 1 gave %s here, not CAIRN_EINVAL", cairn_strerror(rc));
    if (strcmp(first, msg) != 0)
        return fail("message differs from rank 0's: '%s'", msg);
    /* and the next call works */
    return need(ctx, &level);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double t0 = MPI_Wtime();
    MPI_Bcast(&t0, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    const char *mode = argc > 1 ? argv[1] : "", *arg = argc > 2 ? argv[2] : "0";
    cairn_ctx *ctx = NULL;
    int ok = 0;
    int rc = cairn_init(MPI_COMM_WORLD, getenv("T_CONFIG"), &ctx);
    if (strcmp(mode, "init-fail") == 0) {
        if (rank == 0)
            printf("init: %s: %s\n", cairn_strerror(rc), cairn_errmsg(NULL));
#define T_X_NAME(name, value, msg) if (strcmp(arg, #name) == 0) ok = rc == name;
        CAIRN_ERROR_LIST(T_X_NAME)
#undef T_X_NAME
        if (!ok)
            fail("cairn_init returned %d (%s), expected %s", rc, cairn_strerror(rc), arg);
    } else if (rc != 0) {
        fail("init: %s: %s", cairn_strerror(rc), cairn_errmsg(NULL));
    } else if (cairn_protect(ctx, "state", state, CAIRN_DOUBLE, N_STATE, 0, NULL) != 0) {
        fail("protect: %s", cairn_errmsg(ctx));
    } else if (strcmp(mode, "iters") == 0) {
        ok = iters(ctx, strtol(arg, NULL, 10));
    } else if (strcmp(mode, "time") == 0) {
        ok = timed(ctx, t0, atof(arg));
    } else if (strcmp(mode, "auto") == 0) {
        ok = automatic(ctx, atoi(arg));
    } else if (strcmp(mode, "null") == 0) {
        ok = null_level(ctx);
    } else {
        fail("usage: t_need iters N | time S | auto ROUNDS | null | init-fail CODE (got '%s')",
             mode);
    }
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "PASS %s\n" : "FAIL %s: %s\n", mode, why);
    cairn_finalize(ctx);
    MPI_Finalize();
    return all ? 0 : 1;
}
